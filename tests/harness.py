#!/usr/bin/env python3
"""qgpu test harness: runs the test suites and totals their results.

Suites (in this order):
  unit        host unit tests: build/tests/unit/NAME for each tests/unit/NAME.c,
              and tests/unit/NAME.py under Debian's /usr/bin/python3
  checkpatch  scripts/checkpatch.sh on kernel/, include/ and kmod/ (one test)
  qtest       build/qemu/tests/qtest/qgpu-test --tap (one result per TAP line)
  vm          in-VM test programs listed in tests/vm/tests.list
  igt         the `make igt` harness's self-test (tests/igt-selftest/selftest.py)

Programs print IGT-style lines ("Subtest NAME: SUCCESS|FAIL|SKIP|CRASH") and
exit 0 (pass), 77 (skip) or 98 (fail); every subtest counts. A program that
crashes, times out, exits otherwise or (in the VM) leaves an unexpected
WARN/BUG/Oops/lockdep/KASAN/ODEBUG/kmemleak/"qgpu ... error" line in the
kernel log (scripts/vmrun.py's BAD_PATTERNS) adds a failure.

Selection: -t PATTERN[,PATTERN...]. A test's id is SUITE/NAME (unit/NAME,
checkpatch, qtest, vm/GROUP/PROGRAM). A pattern is a shell glob matched against
the id, the id's last part or a suite name; PATTERN:SUBTEST also runs only
that subtest (--run-subtest for our programs, -p for the qtest).

The last line printed is "N passed, N failed"; the exit status is 1 if
anything failed or nothing ran.
"""

import argparse
import concurrent.futures
import fnmatch
import glob
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import vmrun  # noqa: E402

BUILD = vmrun.BUILD
SUITES = ["unit", "checkpatch", "qtest", "vm", "igt"]
SUBTEST_RE = re.compile(r"Subtest (\S+): (SUCCESS|FAIL|SKIP|CRASH|TIMEOUT)\b")
UNIT_TIMEOUT = 300
QTEST_TIMEOUT = 900


class Results:
    def __init__(self, logdir):
        self.passed, self.failed, self.skipped = [], [], []
        self.logdir = logdir

    def add(self, status, name, why="", log=None):
        line = name + (": " + why if why else "")
        if status == "PASS":
            self.passed.append(name)
        elif status == "SKIP":
            self.skipped.append(name)
        else:
            self.failed.append((line, log))
        print("%-4s %s" % (status, line), flush=True)


def count_program(res, name, output, rc, extra_failure="", log=None):
    """Turn one IGT-style program run into results."""
    subs = SUBTEST_RE.findall(output)
    any_fail = False
    for sub, st in subs:
        if st == "SUCCESS":
            res.add("PASS", "%s/%s" % (name, sub))
        elif st == "SKIP":
            res.add("SKIP", "%s/%s" % (name, sub))
        else:
            any_fail = True
            res.add("FAIL", "%s/%s" % (name, sub), st.lower(), log)
    if extra_failure:
        res.add("FAIL", name, extra_failure, log)
    elif rc is None:
        res.add("FAIL", name, "did not finish", log)
    elif not subs:
        if rc == 0:
            res.add("PASS", name)
        elif rc == 77:
            res.add("SKIP", name)
        else:
            res.add("FAIL", name, describe_rc(rc), log)
    elif rc not in (0, 77) and not (rc == 98 and any_fail):
        res.add("FAIL", name, describe_rc(rc), log)


def describe_rc(rc):
    if rc < 0:
        return "killed by signal %d" % -rc
    if rc > 128:
        return "exit %d (signal %d?)" % (rc, rc - 128)
    return "exit %d" % rc


class Selector:
    def __init__(self, spec):
        self.pats = []
        for p in (spec or "").split(","):
            p = p.strip()
            if p:
                pat, _, sub = p.partition(":")
                self.pats.append((pat, sub))

    def match(self, tid):
        """None if not selected, else the subtest filter ('' = all)."""
        if not self.pats:
            return ""
        parts = tid.split("/")
        for pat, sub in self.pats:
            if (fnmatch.fnmatchcase(tid, pat) or fnmatch.fnmatchcase(parts[-1], pat)
                    or fnmatch.fnmatchcase(parts[0], pat) or tid.startswith(pat + "/")):
                return sub
        return None


def run_host(argv, timeout, env=None, logpath=None):
    """Run a host program in its own process group; returns (rc, output, timed_out)."""
    with open(logpath, "w") as logf:
        p = subprocess.Popen(argv, stdout=logf, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                             env=env, cwd=ROOT, start_new_session=True)
        timed_out = False
        try:
            p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
        finally:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
    with open(logpath, errors="replace") as f:
        return p.returncode, f.read(), timed_out


# --- suites -------------------------------------------------------------------

def suite_unit(res, sel):
    # C programs built into build/tests/unit/; Python ones run under Debian's
    # python3 (its python3-matplotlib)
    srcs = sorted(glob.glob(os.path.join(ROOT, "tests", "unit", "*.c")) +
                  glob.glob(os.path.join(ROOT, "tests", "unit", "*.py")))
    c_env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:abort_on_error=0",
                 UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1")
    ran = 0
    for src in srcs:
        name = os.path.splitext(os.path.basename(src))[0]
        tid = "unit/" + name
        sub = sel.match(tid)
        if sub is None:
            continue
        ran += 1
        if src.endswith(".py"):
            argv, env = ["/usr/bin/python3", src], None
        else:
            exe = os.path.join(BUILD, "tests", "unit", name)
            if not os.path.exists(exe):
                res.add("FAIL", tid, "not built (make unit)")
                continue
            argv, env = [exe], c_env
        log = os.path.join(res.logdir, "unit-%s.log" % name)
        argv += ["--run-subtest", sub] if sub else []
        rc, out, to = run_host(argv, UNIT_TIMEOUT, env, log)
        count_program(res, tid, out, rc, "timed out after %ds" % UNIT_TIMEOUT if to else "", log)
    if not ran and not sel.pats:
        print("     (no tests in tests/unit/)")


def suite_checkpatch(res, sel):
    if sel.match("checkpatch") is None:
        return
    files = sorted(glob.glob(os.path.join(ROOT, "kernel", "*.[ch]")))
    if not files:
        res.add("SKIP", "checkpatch", "no kernel/*.c or *.h")
        return
    log = os.path.join(res.logdir, "checkpatch.log")
    rc, out, to = run_host([os.path.join(ROOT, "scripts", "checkpatch.sh")], 600, None, log)
    if rc == 0 and not out.strip():
        res.add("PASS", "checkpatch")
    else:
        n = len([l for l in out.splitlines() if re.match(r"\S+:\d+: ", l)])
        res.add("FAIL", "checkpatch", "%d problem(s)" % n if n else describe_rc(rc), log)


def suite_qtest(res, sel):
    sub = sel.match("qtest")
    if sub is None:
        return
    exe = os.path.join(BUILD, "qemu", "tests", "qtest", "qgpu-test")
    qemu = os.path.join(BUILD, "qemu", "qemu-system-x86_64")
    if not os.path.exists(exe) or not os.path.exists(qemu):
        res.add("FAIL", "qtest", "not built (scripts/build-qemu.sh)")
        return
    log = os.path.join(res.logdir, "qtest.log")
    env = dict(os.environ, QTEST_QEMU_BINARY=qemu)
    argv = [exe, "--tap", "-k"] + (["-p", sub] if sub else [])
    rc, out, to = run_host(argv, QTEST_TIMEOUT, env, log)
    plan = None
    seen = 0
    failed = 0
    for line in out.splitlines():
        m = re.match(r"^1\.\.(\d+)", line)
        if m:
            plan = int(m.group(1))
            continue
        m = re.match(r"^(not ok|ok)\b\s*(\d+)?\s*(?:- )?(.*)$", line)
        if not m:
            continue
        seen += 1
        desc = m.group(3).strip()
        directive = ""
        if "#" in desc:
            desc, _, directive = desc.partition("#")
            desc, directive = desc.strip(), directive.strip().upper()
        name = "qtest/" + (desc or m.group(2) or str(seen)).lstrip("/")
        if directive.startswith("SKIP"):
            res.add("SKIP", name)
        elif m.group(1) == "ok" or directive.startswith("TODO"):
            res.add("PASS", name)
        else:
            failed += 1
            res.add("FAIL", name, "", log)
    if to:
        res.add("FAIL", "qtest", "timed out after %ds" % QTEST_TIMEOUT, log)
    elif plan is not None and seen < plan:
        res.add("FAIL", "qtest", "%d of %d planned tests did not report (%s)"
                % (plan - seen, plan, describe_rc(rc)), log)
    elif seen == 0:
        res.add("FAIL", "qtest", "no TAP results (%s)" % describe_rc(rc), log)
    elif rc != 0 and not failed:
        res.add("FAIL", "qtest", describe_rc(rc), log)


def suite_igt(res, sel):
    """scripts/igt.py run on build/igt-fake, both sides; one result per check."""
    if sel.match("igt/selftest") is None:
        return
    log = os.path.join(res.logdir, "igt-selftest.log")
    argv = [sys.executable, os.path.join(ROOT, "tests", "igt-selftest", "selftest.py"),
            "--log-dir", os.path.join(res.logdir, "igt-selftest")]
    rc, out, to = run_host(argv, 900, None, log)
    count_program(res, "igt/selftest", out, rc, "timed out after 900s" if to else "", log)


def parse_tests_list(path):
    """tests/vm/tests.list -> [group dict]; see the file's header for the format."""
    groups = []
    cur = None
    last = None
    for no, raw in enumerate(open(path), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        kw, _, rest = line.partition(" ")
        rest = rest.strip()
        where = "%s:%d" % (os.path.relpath(path, ROOT), no)
        if kw == "group":
            toks = shlex.split(rest)
            if not toks:
                raise SystemExit("%s: group needs a name" % where)
            cur = {"name": toks[0], "props": "", "modparams": "", "smp": 1, "mem": "1G",
                   "load": True, "alone": False, "timeout": vmrun.DEFAULT_TIMEOUT, "expect": [],
                   "device": [], "modprobe": [], "append": "", "tests": [], "where": where}
            for t in toks[1:]:
                k, eq, v = t.partition("=")
                if not eq or k not in ("props", "modparams", "smp", "mem", "load", "alone",
                                       "timeout", "device", "modprobe", "append"):
                    raise SystemExit("%s: unknown group option %r" % (where, t))
                if k == "device":
                    cur[k].append(v)
                elif k == "modprobe":
                    cur[k] += [m for m in v.split(",") if m]
                else:
                    cur[k] = (int(v) if k in ("smp", "timeout") else
                              v != "0" if k in ("load", "alone") else v)
            groups.append(cur)
            last = cur
        elif kw == "test":
            if cur is None:
                raise SystemExit("%s: test before any group" % where)
            argv = shlex.split(rest)
            if not argv:
                raise SystemExit("%s: test needs a program" % where)
            name = argv[0]
            if name.startswith("name="):
                name = argv.pop(0)[5:]
                if not argv or not name:
                    raise SystemExit("%s: test name=NAME needs a program" % where)
            names = {t["name"] for t in cur["tests"]}
            if name in names:
                name = "-".join([name] + [re.sub(r"[^\w.=-]", "_", a) for a in argv[1:]])
            if name in names:
                raise SystemExit("%s: duplicate test %s in group %s" % (where, name, cur["name"]))
            last = {"name": name, "argv": argv, "timeout": cur["timeout"], "expect": []}
            cur["tests"].append(last)
        elif kw == "timeout":
            if last is None:
                raise SystemExit("%s: timeout before any group or test" % where)
            last["timeout"] = int(rest)
        elif kw == "expect":
            if last is None:
                raise SystemExit("%s: expect before any group or test" % where)
            try:
                re.compile(rest)
            except re.error as e:
                raise SystemExit("%s: bad regex %r: %s" % (where, rest, e))
            last["expect"].append(rest)
        else:
            raise SystemExit("%s: unknown keyword %r" % (where, kw))
    return groups


class Recorder:
    """Collects one VM group's results while it runs (groups run in parallel)."""

    def __init__(self, logdir):
        self.items = []
        self.logdir = logdir

    def add(self, status, name, why="", log=None):
        self.items.append((status, name, why, log))


def run_group(g, picked, logdir):
    cfg = vmrun.VmConfig(props=g["props"], modparams=g["modparams"], load=g["load"],
                         smp=g["smp"], mem=g["mem"], boot_expect=list(g["expect"]),
                         devices=list(g["device"]), modprobe=list(g["modprobe"]),
                         append=g["append"])
    rec = Recorder(logdir)
    t0 = time.monotonic()
    results, boot_problems, _ = vmrun.run_commands(picked, cfg, logdir)
    for r in results:
        out_log = os.path.join(logdir, re.sub(r"[^\w.-]", "_", r.cmd.name) + ".out")
        with open(out_log, "w") as f:
            f.write(r.output)
            if r.kernel_problems:
                f.write("\n-- unexpected kernel log lines:\n" + "\n".join(r.kernel_problems) + "\n")
            f.write("\n-- console log: %s\n" % r.log)
        extra = ""
        if r.vm_failure:
            extra = r.vm_failure
        elif r.timed_out:
            extra = "timed out after %ds" % r.cmd.timeout
        count_program(rec, r.cmd.name, r.output, r.rc, extra, out_log)
        if r.kernel_problems:
            rec.add("FAIL", r.cmd.name + " (kernel log)", "; ".join(r.kernel_problems[:2]) +
                    (" ..." if len(r.kernel_problems) > 2 else ""), out_log)
    for p in boot_problems:
        rec.add("FAIL", "vm/%s (boot)" % g["name"], p, os.path.join(logdir, "boot-1.log"))
    return rec, time.monotonic() - t0


def suite_vm(res, sel, tests_list, jobs):
    if not os.path.exists(tests_list):
        print("     (no %s)" % os.path.relpath(tests_list, ROOT))
        return
    groups = parse_tests_list(tests_list)
    listed = {t["argv"][0] for g in groups for t in g["tests"]}
    for src in sorted(glob.glob(os.path.join(ROOT, "tests", "vm", "*.c"))):
        prog = os.path.splitext(os.path.basename(src))[0]
        if prog not in listed and not sel.pats:
            print("     note: tests/vm/%s.c is not in %s" % (prog, os.path.relpath(tests_list, ROOT)))
    work = []
    for g in groups:
        picked = []
        for t in g["tests"]:
            tid = "vm/%s/%s" % (g["name"], t["name"])
            sub = sel.match(tid)
            if sub is None:
                continue
            argv = t["argv"] + (["--run-subtest", sub] if sub else [])
            picked.append(vmrun.Cmd(" ".join(shlex.quote(a) for a in argv), name=tid,
                                    timeout=t["timeout"], expect=list(t["expect"])))
        if picked:
            work.append((g, picked))

    def header(g, picked):
        return "---- vm group %s (%s; %d program(s))" % (
            g["name"], g["props"] or "default device", len(picked))

    def report(g, picked, rec, secs):
        print(header(g, picked))
        for item in rec.items:
            res.add(*item)
        print("     group %s took %.0fs" % (g["name"], secs), flush=True)

    # Longest group first (durations of earlier runs), so the slowest one does
    # not start last; groups never timed count as longest.
    # (kept beside the run's log directory: build/logs by default, so a run
    # on another kernel with --log-dir elsewhere keeps its own timings)
    times_file = os.path.join(os.path.dirname(os.path.abspath(res.logdir)),
                              "vm-group-seconds.json")
    try:
        with open(times_file) as f:
            times = json.load(f)
    except (OSError, ValueError):
        times = {}
    work.sort(key=lambda w: -times.get(w[0]["name"], 1e9))
    # Groups marked alone=1 (benchmarks) run by themselves, after the others.
    shared = [w for w in work if not w[0]["alone"]]
    alone = [w for w in work if w[0]["alone"]]
    jobs = max(1, jobs)
    if shared:
        print("     %d group(s), %d at a time" % (len(shared), min(jobs, len(shared))), flush=True)
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futs = {pool.submit(run_group, g, picked, os.path.join(res.logdir, "vm-" + g["name"])):
                (g, picked) for g, picked in shared}
        for f in concurrent.futures.as_completed(futs):
            g, picked = futs[f]
            try:
                rec, secs = f.result()
            except Exception as e:          # a harness error fails the group, not the run
                rec, secs = Recorder(None), 0
                rec.add("FAIL", "vm/%s" % g["name"], "harness error: %r" % e)
            report(g, picked, rec, secs)
            times[g["name"]] = round(secs, 1)
    for g, picked in alone:
        print(header(g, picked) + " (alone)", flush=True)
        rec, secs = run_group(g, picked, os.path.join(res.logdir, "vm-" + g["name"]))
        for item in rec.items:
            res.add(*item)
        print("     group %s took %.0fs" % (g["name"], secs), flush=True)
        times[g["name"]] = round(secs, 1)
    if not sel.pats:               # only whole groups tell how long they take
        with open(times_file, "w") as f:
            json.dump(times, f, indent=1, sort_keys=True)


def tail(path, n=25):
    try:
        with open(path, errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    return lines[-n:]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-t", "--tests", default="",
                    help="PATTERN[,PATTERN...] (see tests/harness.py)")
    ap.add_argument("--list", default=os.path.join(ROOT, "tests", "vm", "tests.list"),
                    help="in-VM test list (default tests/vm/tests.list)")
    ap.add_argument("--log-dir", help="default: build/logs/test-DATE-PID, "
                    "with build/logs/test pointing to the latest")
    ap.add_argument("-j", "--jobs", type=int,
                    default=int(os.environ.get("QGPU_VM_JOBS", os.cpu_count() or 1)),
                    help="VM groups booted at once (default $QGPU_VM_JOBS or the CPU count)")
    ap.add_argument("suites", nargs="*", metavar="SUITE",
                    help="suites to run: %s (default: all)" % " ".join(SUITES))
    a = ap.parse_args()
    for s in a.suites:
        if s not in SUITES:
            ap.error("unknown suite %r (choose from %s)" % (s, " ".join(SUITES)))
    def stop(signum, frame):
        vmrun.kill_all()           # the VM threads then finish at once
        sys.exit(128 + signum)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, stop)
    sel = Selector(a.tests)
    suites = a.suites or SUITES
    if not a.log_dir:
        # One directory per run, so runs from the same checkout never clash;
        # build/logs/test points to the latest, the 5 most recent are kept.
        logs = os.path.join(BUILD, "logs")
        os.makedirs(logs, exist_ok=True)
        a.log_dir = os.path.join(logs, time.strftime("test-%Y%m%d-%H%M%S-") + str(os.getpid()))
        old = sorted(glob.glob(os.path.join(logs, "test-*-*")), key=os.path.getmtime)
        for d in old[:-4]:
            subprocess.run(["rm", "-rf", d])
        link = os.path.join(logs, "test")
        if os.path.isdir(link) and not os.path.islink(link):
            subprocess.run(["rm", "-rf", link])
        tmp = link + ".%d" % os.getpid()
        os.symlink(os.path.basename(a.log_dir), tmp)
        os.replace(tmp, link)
    os.makedirs(a.log_dir, exist_ok=True)
    res = Results(a.log_dir)
    t0 = time.monotonic()
    for s in SUITES:
        if s not in suites:
            continue
        print("==== %s" % s, flush=True)
        ts = time.monotonic()
        if s == "vm":
            suite_vm(res, sel, a.list, a.jobs)
        else:
            globals()["suite_" + s](res, sel)
        print("     (%s: %.0fs)" % (s, time.monotonic() - ts), flush=True)
    print()
    print("==== summary (logs in %s, %.0fs)" % (os.path.relpath(a.log_dir, ROOT),
                                                  time.monotonic() - t0))
    shown = set()
    for line, log in res.failed:
        print("FAIL " + line)
        if log and log not in shown:
            shown.add(log)
            for l in tail(log):
                print("   | " + l)
            print("   | (full log: %s)" % os.path.relpath(log, ROOT))
    total = len(res.passed) + len(res.failed)
    if not total and not res.skipped:
        print("no test ran" + (" (nothing matches %r)" % a.tests if a.tests else ""))
    if res.skipped:
        print("%d skipped" % len(res.skipped))
    print("%d passed, %d failed" % (len(res.passed), len(res.failed)))
    return 1 if res.failed or not total else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    finally:
        vmrun.kill_all()
