#!/usr/bin/env python3
"""Self-test of the `make igt` harness (scripts/igt.py), suite "igt" of `make test`.

Runs the harness, as `make igt` does, on build/igt-fake (`make igt-fake`: the
programs of tests/igt-selftest/ laid out like an IGT build, with their
libigt.so) and checks what it reports against what the programs are known to
do (each program's comment says what it does):

  run 1, tests/igt-selftest/tests.list (all programs and one missing name):
    exit status 1 (qgpu fails), the missing test reported, the overlay image
    holding the tests and libigt.so.0, the exact pass/fail/skip counts per
    test and side (table and summary.json), dynamic subtests named
    PARENT@NAME, the crash attributed to fake_crash's segv subtest with the
    next program still run in the same boot, the kernel-log line attributed
    to fake_kmsg, the subtest qgpu fails and virtio-gpu passes, and each side
    booted as promised (fake_env: which driver and modules).
  run 2, IGT_TESTS="fake_subtests fake_env" (all pass): exit status 0.
  run 3, no IGT_DIR: one line saying how to give one, exit status 0.

Prints one IGT-style line per check ("Subtest NAME: SUCCESS|FAIL") and exits
0, or 98 if a check failed.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BUILD = os.environ.get("QGPU_BUILD", os.path.join(ROOT, "build"))
FAKE = os.path.join(BUILD, "igt-fake")
IGT = os.path.join(ROOT, "scripts", "igt.sh")

# (pass, fail, skip) per test, the same on both sides.
EXPECTED = {
    "fake_subtests": (5, 0, 1),
    "fake_driver": (1, 1, 0),
    "fake_crash": (1, 1, 0),
    "fake_env": (2, 0, 0),
    "fake_kmsg": (1, 1, 0),
}
EXPECTED_TOTAL = (10, 3, 1)
SIDES = ("qgpu", "virtio-gpu")

failed = 0


def check(name, ok, why=""):
    global failed
    print("Starting subtest: %s" % name)
    if not ok:
        failed += 1
        print("  %s" % why)
    print("Subtest %s: %s" % (name, "SUCCESS" if ok else "FAIL"), flush=True)


def run(args, logdir, extra_env=None):
    env = dict(os.environ)
    env.pop("IGT_DIR", None)
    env.pop("IGT_TESTS", None)
    env.update(extra_env or {})
    argv = [IGT] + args + (["--log-dir", logdir] if logdir else [])
    if logdir:
        shutil.rmtree(logdir, ignore_errors=True)    # no results of an earlier run
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       env=env, cwd=ROOT, stdin=subprocess.DEVNULL)
    print("$ %s  (exit %d)" % (" ".join(argv[1:]), p.returncode))
    for line in p.stdout.splitlines():
        print("| " + line)
    summary = None
    if logdir and os.path.exists(os.path.join(logdir, "summary.json")):
        with open(os.path.join(logdir, "summary.json")) as f:
            summary = json.load(f)
    return p.returncode, p.stdout, summary


def out_of(logdir, side, test):
    try:
        with open(os.path.join(logdir, side, test + ".out"), errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--log-dir", default=os.path.join(BUILD, "logs", "igt-selftest"))
    a = ap.parse_args()
    os.makedirs(a.log_dir, exist_ok=True)
    if not os.path.exists(os.path.join(FAKE, "lib", "libigt.so.0.1")):
        print("build/igt-fake not built (make igt-fake)")
        return 98

    # --- run 1: everything, with a missing name ---------------------------
    log1 = os.path.join(a.log_dir, "all")
    rc, out, s = run(["--igt-dir", FAKE, "--list", os.path.join(HERE, "tests.list"),
                      "--timeout", "60"], log1)
    check("exit-status-failing", rc == 1 and out.rstrip().endswith("igt: FAIL"),
          "exit %d, expected 1 and a last line 'igt: FAIL'" % rc)
    if s is None:
        check("summary", False, "no summary.json in %s" % log1)
        return 98
    res = s["results"]
    check("missing-reported",
          s["missing"] == ["fake_missing"] and "fake_missing" not in s["tests"] and
          re.search(r"^fake_missing\s+\(not in IGT_DIR\)", out, re.M) is not None,
          "missing: %s" % s["missing"])

    listing = subprocess.run("gzip -dc %s | cpio -t --quiet" %
                             os.path.join(BUILD, "igt", "overlay.cpio.gz"), shell=True,
                             stdout=subprocess.PIPE, text=True).stdout.split()
    want = ["usr/local/igt/lib/libigt.so.0"] + ["usr/local/igt/tests/" + t for t in EXPECTED]
    lost = [w for w in want if w not in listing]
    loader_errors = [(side, t) for side in SIDES for t in EXPECTED
                     if "error while loading shared libraries" in out_of(log1, side, t)]
    check("copy-and-libraries", not lost and not loader_errors,
          "not in the overlay: %s; loader errors: %s" % (lost, loader_errors))

    bad = []
    for side in SIDES:
        for t, exp in EXPECTED.items():
            c = res.get(side, {}).get(t)
            got = (c["pass"], c["fail"], c["skip"]) if c else None
            if got != exp:
                bad.append("%s %s: %s, expected %s" % (side, t, got, exp))
    check("counts", not bad, "; ".join(bad))
    rows = [r"^%s\s+%d/%d/%d\s+%d/%d/%d\s*$" % ((t,) + e + e) for t, e in EXPECTED.items()]
    rows.append(r"^total\s+%d/%d/%d\s+%d/%d/%d\s*$" % (EXPECTED_TOTAL + EXPECTED_TOTAL))
    check("table", all(re.search(r, out, re.M) for r in rows),
          "rows not found: %s" % [r for r in rows if not re.search(r, out, re.M)])

    subs = res.get("qgpu", {}).get("fake_subtests", {}).get("subtests", {})
    check("dynamic-subtests",
          subs.get("dynamic@one") == "SUCCESS" and subs.get("dynamic@two") == "SUCCESS" and
          subs.get("dynamic") == "SUCCESS" and subs.get("skipped") == "SKIP",
          "fake_subtests on qgpu: %s" % subs)

    bad = []
    for side in SIDES:
        crash = res.get(side, {}).get("fake_crash", {})
        problems = [p for p in crash.get("problems", [])
                    if side == "qgpu" or not p.startswith("kernel log:")]
        if crash.get("subtests") != {"before": "SUCCESS", "segv": "CRASH"} or problems:
            bad.append("%s fake_crash: %s" % (side, crash))
        for t in ("fake_env", "fake_kmsg"):
            if "Subtest" not in out_of(log1, side, t) and t == "fake_env":
                bad.append("%s: %s did not run after the crash" % (side, t))
        boot2 = os.path.join(log1, side, "boot-2.log")
        if os.path.exists(boot2):
            bad.append("%s: a second boot (%s): a user-space crash must not need one" % (side, boot2))
    check("crash-attribution", not bad, "; ".join(bad))

    # The virtio-gpu side is Debian's driver, not ours: its own warnings
    # (6.12's virtio_gpu_queue_fenced_ctrl_buffer() WARNs now and then under
    # TCG) are reported there and never counted against qgpu, so on that side
    # only fake_kmsg's line is required.
    bad = []
    for side in SIDES:
        for t, c in res.get(side, {}).items():
            klog = [p for p in c["problems"] if p.startswith("kernel log:")]
            if side != "qgpu" and t != "fake_kmsg":
                continue
            if (t == "fake_kmsg") != bool(klog) or (klog and "fake_kmsg" not in klog[0]):
                bad.append("%s %s: %s" % (side, t, c["problems"]))
    check("kernel-log", not bad and any(f.startswith("fake_kmsg: kernel log") for f in
                                        s["qgpu_failures"]), "; ".join(bad))

    check("worse-than-virtio", s["worse_than_virtio"] == ["fake_driver/is-virtio-gpu"] and
          "qgpu fails, virtio-gpu passes: fake_driver/is-virtio-gpu" in out,
          "worse_than_virtio: %s" % s["worse_than_virtio"])

    # Boot problems: qgpu's must be none; the reference side's are its own.
    q, v = out_of(log1, "qgpu", "fake_env"), out_of(log1, "virtio-gpu", "fake_env")
    check("both-sides",
          "fake_env: driver qgpu (qgpu.ko loaded, virtio_gpu.ko not loaded)" in q and
          "fake_env: driver virtio_gpu (qgpu.ko not loaded, virtio_gpu.ko loaded)" in v and
          not s["boot_problems"]["qgpu"],
          "qgpu side: %r; virtio-gpu side: %r; boot problems: %s" % (
              q[:300], v[:300], s["boot_problems"]))

    # --- run 2: only passing tests ----------------------------------------
    log2 = os.path.join(a.log_dir, "clean")
    rc, out, s = run(["--igt-dir", FAKE, "--timeout", "60"], log2,
                     {"IGT_TESTS": "fake_subtests fake_env"})
    check("exit-status-clean", rc == 0 and out.rstrip().endswith("igt: PASS") and s is not None
          and s["tests"] == ["fake_subtests", "fake_env"],
          "exit %d, expected 0 and 'igt: PASS' for fake_subtests fake_env" % rc)

    # --- run 3: no IGT_DIR --------------------------------------------------
    rc, out, _ = run([], None)
    check("no-igt-dir", rc == 0 and len(out.strip().splitlines()) == 1 and "IGT_DIR=" in out,
          "exit %d, output %r" % (rc, out))
    return 98 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
