#!/usr/bin/env python3
"""Run the user's own IGT build against qgpu and against QEMU's virtio-gpu.

    scripts/igt.sh --igt-dir DIR [--tests "NAME ..."] [--list FILE]
    make igt IGT_DIR=DIR [IGT_TESTS="NAME ..."]

The project carries no IGT source and never fetches or builds IGT: DIR is a
build directory of IGT GPU Tools the user made (its tests in DIR/tests/NAME,
its libraries, e.g. libigt.so, in DIR/lib or found through the tests' rpath).

* Tests: the names in tests/igt/tests.list (or --list FILE, or --tests),
  run in that order. A listed test missing from DIR/tests is reported, not
  fatal.
* Image: the normal guest image (build/guest/initramfs.cpio.gz, untouched)
  plus an overlay archive, build/igt/initramfs-igt.cpio.gz, holding the
  tests in /usr/local/igt/tests and every shared library they load (found
  with ldd, with DIR's lib folders on LD_LIBRARY_PATH): libraries under DIR
  at /usr/local/igt/<their path in DIR>, the others at their host path.
* Two sides, each one VM boot (a fresh one after a test that hangs or
  crashes the guest, see scripts/vmrun.py):
    qgpu        -device qgpu,$IGT_PROPS; qgpu.ko loaded; modprobe sw_sync
    virtio-gpu  -device virtio-gpu-pci, no qgpu device, qgpu.ko not loaded;
                modprobe virtio_gpu sw_sync
  Each test is a VM command of its own (timeout --timeout, default 300 s),
  so a crash, a hang or a kernel-log problem is attributed to that test.
* Counting: every "Subtest NAME: RESULT" and "Dynamic subtest NAME: RESULT"
  line (RESULT: SUCCESS, SKIP, or FAIL/CRASH/TIMEOUT = fail); a dynamic
  subtest is named PARENT@NAME. A test without subtests counts once by its
  exit status (0 pass, 77 skip, other fail). One more failure is counted for
  a test that exits in a way its subtest lines do not explain (a signal
  without a CRASH line, a timeout, a guest crash or hang) and for one that
  leaves an unexpected kernel-log line (vmrun's analysis: WARNING, BUG,
  Oops, lockdep, ...).
* Output: one table (test, pass/fail/skip on qgpu, on virtio-gpu, totals),
  the qgpu failures, and build/logs/igt-DATE-PID/summary.json (console logs
  and per-test output per side next to it; build/logs/igt is the latest).
* Exit status: 1 if qgpu fails anything (a subtest, a test, a kernel-log
  line, a module that does not load), in particular a subtest virtio-gpu
  passes, or if none of the listed tests exists; else 0. Failures on the
  virtio-gpu side are shown, never fatal: it is the reference.
"""

import argparse
import concurrent.futures
import glob
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import vmrun  # noqa: E402

BUILD = vmrun.BUILD
GUEST_DIR = "/usr/local/igt"
DEFAULT_LIST = os.path.join(ROOT, "tests", "igt", "tests.list")
SUBTEST_RE = re.compile(r"(Dynamic subtest|Subtest|Starting subtest:) ([^\s:]+)"
                        r"(?:: (SUCCESS|FAIL|SKIP|CRASH|TIMEOUT)\b)?")
FAILED = ("FAIL", "CRASH", "TIMEOUT")
IGT_EXIT = {"SKIP": 77, "TIMEOUT": 78, "FAIL": 98}


def log(msg):
    print("[qgpu] " + msg, file=sys.stderr, flush=True)


def die(msg):
    log("error: " + msg)
    sys.exit(1)


def sides(props):
    """(name, VmConfig) of both sides."""
    return [
        ("qgpu", vmrun.VmConfig(props=props, load=True, modprobe=["sw_sync"])),
        ("virtio-gpu", vmrun.VmConfig(props="none", load=False, devices=["virtio-gpu-pci"],
                                      modprobe=["virtio_gpu", "sw_sync"])),
    ]


def read_list(path):
    """Test names from a list file: one or more per line, # starts a comment."""
    names = []
    for line in open(path):
        names += line.split("#", 1)[0].split()
    return names


def lib_dirs(igt_dir):
    """DIR's library folders, for LD_LIBRARY_PATH (host and guest)."""
    cands = ["lib", "lib64"] + [os.path.relpath(d, igt_dir) for d in
                                sorted(glob.glob(os.path.join(igt_dir, "lib*", "*-linux-gnu")))]
    return [d for d in cands if os.path.isdir(os.path.join(igt_dir, d))]


def resolve_libs(exes, igt_dir, dirs):
    """Shared libraries the programs load, as ldd finds them: (paths, missing)."""
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = ":".join([os.path.join(igt_dir, d) for d in dirs] +
                                      ([env["LD_LIBRARY_PATH"]] if env.get("LD_LIBRARY_PATH")
                                       else []))
    libs, missing = set(), {}
    for exe in exes:
        out = subprocess.run(["ldd", exe], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True).stdout
        for line in out.splitlines():
            m = re.match(r"\s*(\S+) => not found", line)
            if m:
                missing.setdefault(os.path.basename(exe), []).append(m.group(1))
                continue
            m = re.match(r"\s*\S+ => (/\S+) \(", line) or re.match(r"\s*(/\S+) \(", line)
            if m:
                libs.add(m.group(1))
    return sorted(libs), missing


def guest_path(host_path, igt_dir):
    """Where a host file goes in the guest: under GUEST_DIR if it is in DIR.
    The file keeps its name (a library's soname link is not resolved)."""
    name = os.path.basename(host_path)
    for f, d in ((os.path.abspath(host_path), os.path.abspath(igt_dir)),
                 (os.path.join(os.path.realpath(os.path.dirname(host_path)), name),
                  os.path.realpath(igt_dir))):
        rel = os.path.relpath(f, d)
        if rel != ".." and not rel.startswith(".." + os.sep):
            return os.path.join(GUEST_DIR, rel)
    return host_path


def build_image(igt_dir, tests, out_dir):
    """The base image plus an overlay with the tests and their libraries."""
    base = os.path.join(BUILD, "guest", "initramfs.cpio.gz")
    if not os.path.exists(base):
        die("guest image missing: %s (run `make image`)" % base)
    exes = [os.path.join(igt_dir, "tests", t) for t in tests]
    dirs = lib_dirs(igt_dir)
    libs, missing = resolve_libs(exes, igt_dir, dirs)
    for exe, names in sorted(missing.items()):
        log("warning: %s needs %s, not found on the host (with LD_LIBRARY_PATH=%s)"
            % (exe, " ".join(names), ":".join(dirs) or "-"))
    os.makedirs(out_dir, exist_ok=True)
    stage = os.path.join(out_dir, "root")
    shutil.rmtree(stage, ignore_errors=True)
    for f in exes + libs:
        dest = stage + guest_path(f, igt_dir)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copy(f, dest)       # follows symlinks: the file under the name ldd gave
    overlay = os.path.join(out_dir, "overlay.cpio.gz")
    files = subprocess.run("cd %s && find . -mindepth 1 | LC_ALL=C sort" % shlex.quote(stage),
                           shell=True, check=True, stdout=subprocess.PIPE).stdout
    with open(overlay, "wb") as f:
        cpio = subprocess.Popen(["cpio", "-o", "-H", "newc", "-R", "0:0", "--quiet"], cwd=stage,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        gz = subprocess.Popen(["gzip", "-1"], stdin=cpio.stdout, stdout=f)
        cpio.stdout.close()
        cpio.communicate(files)
        if cpio.wait() or gz.wait():
            die("could not pack %s" % overlay)
    image = os.path.join(out_dir, "initramfs-igt.cpio.gz")
    with open(image + ".tmp", "wb") as f:
        with open(base, "rb") as b:
            data = b.read()
        f.write(data)
        f.write(b"\0" * (-len(data) % 512))     # zeros between archives are skipped
        with open(overlay, "rb") as o:
            f.write(o.read())
    os.replace(image + ".tmp", image)
    shutil.rmtree(stage, ignore_errors=True)
    # DIR's lib folders and every other folder of DIR a library came from
    # (found by an rpath that may name host paths)
    ld = [os.path.join(GUEST_DIR, d) for d in dirs]
    for lib in libs:
        d = os.path.dirname(guest_path(lib, igt_dir))
        if d.startswith(GUEST_DIR + "/") and d not in ld:
            ld.append(d)
    guest_ld = ":".join(ld)
    log("IGT image: %s (%d test(s), %d librar%s, %.1f MB)" % (
        os.path.relpath(image, ROOT), len(tests), len(libs), "y" if len(libs) == 1 else "ies",
        os.path.getsize(image) / 1e6))
    return image, guest_ld


def count(output, rc, failure):
    """One test's results on one side: {"subtests", "pass", "fail", "skip", "problems"}.

    failure: why the run itself failed (guest hang/crash, timeout), or ""."""
    subs = {}
    parent = ""
    for kind, name, st in SUBTEST_RE.findall(output):
        if kind == "Starting subtest:":
            parent = name
        elif st and kind == "Subtest":
            subs[name] = st
        elif st:
            subs["%s@%s" % (parent, name) if parent else name] = st
    r = {"subtests": subs, "pass": 0, "fail": 0, "skip": 0, "problems": []}
    for st in subs.values():
        r["pass" if st == "SUCCESS" else "skip" if st == "SKIP" else "fail"] += 1
    if failure:
        r["problems"].append(failure)
    elif rc is None:
        r["problems"].append("did not finish")
    elif not subs:
        if rc == 0:
            r["pass"] += 1
        elif rc == IGT_EXIT["SKIP"]:
            r["skip"] += 1
        else:
            r["problems"].append(describe_rc(rc))
    elif rc not in (0, IGT_EXIT["SKIP"]):
        # a non-zero exit its subtest lines explain is not counted twice
        explained = ((rc == IGT_EXIT["FAIL"] and r["fail"]) or
                     (rc == IGT_EXIT["TIMEOUT"] and "TIMEOUT" in subs.values()) or
                     (rc > 128 and "CRASH" in subs.values()))
        if not explained:
            r["problems"].append(describe_rc(rc))
    r["fail"] += len(r["problems"])
    return r


def describe_rc(rc):
    if rc > 128:
        return "exit %d (signal %d)" % (rc, rc - 128)
    return "exit %d" % rc


def run_side(name, cfg, tests, timeout, guest_ld, logdir):
    """Runs the tests on one side; returns ({test: counts}, boot_problems)."""
    env = "LD_LIBRARY_PATH=%s " % shlex.quote(guest_ld) if guest_ld else ""
    cmds = [vmrun.Cmd("cd %s/tests && %s./%s" % (GUEST_DIR, env, shlex.quote(t)),
                      name=t, timeout=timeout) for t in tests]
    results, boot_problems, _ = vmrun.run_commands(cmds, cfg, logdir)
    out = {}
    for r in results:
        failure = r.vm_failure or ("timed out after %ds" % timeout if r.timed_out else "")
        c = count(r.output, r.rc, failure)
        if r.kernel_problems:
            c["problems"].append("kernel log: " + r.kernel_problems[0] +
                                 (" (+%d more)" % (len(r.kernel_problems) - 1)
                                  if len(r.kernel_problems) > 1 else ""))
            c["fail"] += 1
        c["log"] = os.path.join(logdir, r.cmd.name + ".out")
        with open(c["log"], "w") as f:
            f.write(r.output)
            for k in r.kernel_problems:
                f.write("\n-- unexpected kernel log line: " + k)
            f.write("\n-- console log: %s\n" % r.log)
        out[r.cmd.name] = c
    return out, boot_problems


def verdict(res, boot):
    """(exit status, qgpu failures, subtests qgpu fails and virtio-gpu passes)."""
    q, v = res["qgpu"], res["virtio-gpu"]
    failures, worse = [], []
    for t, c in q.items():
        for sub, st in c["subtests"].items():
            if st in FAILED:
                vst = v.get(t, {}).get("subtests", {}).get(sub, "-")
                failures.append("%s/%s: %s (virtio-gpu: %s)" % (t, sub, st, vst))
                if vst == "SUCCESS":
                    worse.append("%s/%s" % (t, sub))
        for p in c["problems"]:
            failures.append("%s: %s" % (t, p))
    failures += ["boot: " + p for p in boot["qgpu"]]
    return (1 if failures or worse else 0), failures, worse


def table(tests, res, missing):
    w = max([len(t) for t in tests + missing] + [len("total")])
    head = "%-*s  %-16s  %-16s" % (w, "test", "qgpu pass/fail/skip", "virtio-gpu pass/fail/skip")
    lines = [head, "-" * len(head)]
    tot = {s: [0, 0, 0] for s in res}

    def cell(c):
        return "%d/%d/%d" % (c["pass"], c["fail"], c["skip"])
    for t in tests:
        row = []
        for s in ("qgpu", "virtio-gpu"):
            c = res[s].get(t)
            if c is None:
                row.append("-")
                continue
            row.append(cell(c))
            for i, k in enumerate(("pass", "fail", "skip")):
                tot[s][i] += c[k]
        lines.append("%-*s  %-19s  %s" % (w, t, row[0], row[1]))
    for t in missing:
        lines.append("%-*s  %-19s  %s" % (w, t, "(not in IGT_DIR)", ""))
    lines.append("-" * len(head))
    lines.append("%-*s  %-19s  %s" % (w, "total", "%d/%d/%d" % tuple(tot["qgpu"]),
                                      "%d/%d/%d" % tuple(tot["virtio-gpu"])))
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--igt-dir", default=os.environ.get("IGT_DIR", ""),
                    help="the user's IGT build directory (has tests/NAME)")
    ap.add_argument("--tests", default=os.environ.get("IGT_TESTS", ""),
                    help="test names (spaces or commas) instead of the list file")
    ap.add_argument("--list", default=DEFAULT_LIST, help="list file (default tests/igt/tests.list)")
    ap.add_argument("--props", default=os.environ.get("IGT_PROPS", ""),
                    help="qgpu device properties (default: the device's defaults)")
    ap.add_argument("--timeout", type=int, default=int(os.environ.get("IGT_TIMEOUT", "300")),
                    help="seconds per test (default $IGT_TIMEOUT or 300)")
    ap.add_argument("-j", "--jobs", type=int,
                    default=int(os.environ.get("QGPU_VM_JOBS", os.cpu_count() or 1)),
                    help="sides booted at once (default $QGPU_VM_JOBS or the CPU count)")
    ap.add_argument("--log-dir", help="default build/logs/igt-DATE-PID (build/logs/igt: latest)")
    a = ap.parse_args()
    if not a.igt_dir:
        print("make igt: give your IGT build directory: make igt IGT_DIR=/path/to/igt/build "
              "[IGT_TESTS=\"core_auth ...\"] (see README, section IGT)")
        return 0
    igt_dir = os.path.abspath(a.igt_dir)
    if not os.path.isdir(os.path.join(igt_dir, "tests")):
        die("%s has no tests/ directory: IGT_DIR must be an IGT build directory" % igt_dir)
    wanted = a.tests.replace(",", " ").split() if a.tests else read_list(a.list)
    tests = [t for t in wanted if os.path.isfile(os.path.join(igt_dir, "tests", t))
             and os.access(os.path.join(igt_dir, "tests", t), os.X_OK)]
    missing = [t for t in wanted if t not in tests]
    if missing:
        log("not in %s/tests (skipped): %s" % (igt_dir, " ".join(missing)))
    if not tests:
        die("none of the listed tests is in %s/tests" % igt_dir)

    if not a.log_dir:
        logs = os.path.join(BUILD, "logs")
        os.makedirs(logs, exist_ok=True)
        for d in sorted(glob.glob(os.path.join(logs, "igt-*-*")), key=os.path.getmtime)[:-4]:
            shutil.rmtree(d, ignore_errors=True)
        a.log_dir = os.path.join(logs, time.strftime("igt-%Y%m%d-%H%M%S-") + str(os.getpid()))
        link = os.path.join(logs, "igt")
        tmp = link + ".%d" % os.getpid()
        os.symlink(os.path.basename(a.log_dir), tmp)
        os.replace(tmp, link)
    os.makedirs(a.log_dir, exist_ok=True)

    def stop(signum, frame):
        vmrun.kill_all()
        sys.exit(128 + signum)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, stop)

    image, guest_ld = build_image(igt_dir, tests, os.path.join(BUILD, "igt"))
    res, boot = {}, {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, min(2, a.jobs))) as pool:
        futs = {}
        for name, cfg in sides(a.props):
            cfg.image = image
            log("%s: %d test(s), one VM command each" % (name, len(tests)))
            futs[name] = pool.submit(run_side, name, cfg, tests, a.timeout, guest_ld,
                                     os.path.join(a.log_dir, name))
        for name, f in futs.items():
            res[name], boot[name] = f.result()

    rc, failures, worse = verdict(res, boot)
    print()
    print("IGT %s (logs in %s)" % (igt_dir, os.path.relpath(a.log_dir, ROOT)))
    for line in table(tests, res, missing):
        print(line)
    for s in ("qgpu", "virtio-gpu"):
        for p in boot[s]:
            print("%s: %s" % (s, p))
    if failures:
        print("qgpu failures:")
        for f in failures:
            print("  " + f)
    if worse:
        print("qgpu fails, virtio-gpu passes: " + " ".join(worse))
    with open(os.path.join(a.log_dir, "summary.json"), "w") as f:
        json.dump({"igt_dir": igt_dir, "tests": tests, "missing": missing, "results": res,
                   "boot_problems": boot, "qgpu_failures": failures, "worse_than_virtio": worse,
                   "exit": rc}, f, indent=1)
    print("igt: %s" % ("FAIL" if rc else "PASS"))
    return rc


if __name__ == "__main__":
    try:
        sys.exit(main())
    finally:
        vmrun.kill_all()
