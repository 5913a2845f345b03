#!/usr/bin/env python3
"""Boot the qgpu guest under TCG, run a list of commands in it, check its kernel log.

Used by scripts/run-vm.sh (the command-line front end) and tests/harness.py
(the in-VM test suite). How it works:

* The base image (build/guest/initramfs.cpio.gz, scripts/build-initramfs.sh)
  gets a second, uncompressed cpio archive appended holding /run/config and
  /run/cmds; the kernel unpacks concatenated archives in order.
* /init (scripts/guest-init.sh) runs each command in its own process group
  with a guest-side timeout, printing @@RUN-BEGIN n@@ / @@RUN-END n rc=R@@ on
  the serial console and @@KMSG-BEGIN/END@@ into the kernel log, dumps dmesg
  between @@DMESG-BEGIN@@/@@DMESG-END@@ and powers off.
* The host streams the console to a log file and watches it: a guest that
  does not boot, or a command that outlives its timeout plus a grace period,
  gets QEMU killed by its PID and the command reported as failed; the
  commands after it run in a fresh boot.
* Kernel lines are taken from the dmesg dump and from the console (so a
  crashed guest is still checked), de-duplicated, and attributed to the
  command whose KMSG markers enclose their timestamp. A line matching
  BAD_PATTERNS fails that command unless one of its expected regexes (from
  the caller, or printed by the program itself as "IGT-Expect-Dmesg: REGEX")
  matches it.
"""

import argparse
import dataclasses
import datetime
import glob
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import List, Optional

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CACHE = os.environ.get("QGPU_CACHE", "/var/cache/qgpu")
BUILD = os.environ.get("QGPU_BUILD", os.path.join(ROOT, "build"))

# Kernel log lines that fail a run unless expected.
BAD_PATTERNS = [
    r"WARNING: CPU",
    r"------------\[ cut here \]------------",
    r"\bBUG[:\s]",
    r"\bOops\b",
    r"Call Trace",
    r"general protection fault",
    r"possible circular locking",
    r"possible recursive locking",
    r"inconsistent lock state",
    r"suspicious RCU usage",
    r"Kernel panic",
    r"UBSAN:",
    r"blocked for more than \d+ seconds",
    r"refcount_t: ",
    r"list_(add|del) corruption",
    # Debug-kernel checkers (make test KERNEL=debug; README "Debug kernel").
    # KASAN ("BUG: KASAN: ...") and "BUG: sleeping function called from
    # invalid context" are caught by BUG above; every lockdep report starts
    # with "WARNING: " (circular/recursive locking, bad unlock balance, held
    # lock freed, lock held when returning to user space, ...).
    r"^WARNING: ",
    r"^ODEBUG: ",
    r"unreferenced object 0x",
    r"kmemleak: \d+ new suspected memory leaks",
    r"Initramfs unpacking failed",
    r"qgpu.*(error|ERROR|fail)",
]
BAD_RE = re.compile("|".join("(?:%s)" % p for p in BAD_PATTERNS))
# Matches of BAD_PATTERNS that are normal: an out-of-tree module; the debug
# kernel's note of a new deepest stack at a process's exit (kernel/exit.c,
# CONFIG_DEBUG_STACK_USAGE), which names the process (qgpu_failslab).
BENIGN_RE = re.compile(r"module verification failed: signature and/or required key missing|"
                       r"^\S+ \(\d+\) used greatest stack depth: \d+ bytes left$")

KLINE_RE = re.compile(r"\[\s*(\d+\.\d+)\] (.*)$")
KMSG_BEGIN_RE = re.compile(r"^@@KMSG-BEGIN (\d+)@@")
KMSG_END_RE = re.compile(r"^@@KMSG-END (\d+) rc=(\d+)@@")
BEGIN_RE = re.compile(r"@@RUN-BEGIN (\d+)@@")
END_RE = re.compile(r"@@RUN-END (\d+) rc=(\d+)@@")
TIMEOUT_RE = re.compile(r"@@RUN-TIMEOUT (\d+)@@")
LOADFAIL_RE = re.compile(r"@@LOAD-FAILED (\S+) rc=(\d+)@@")
EXPECT_RE = re.compile(r"IGT-Expect-Dmesg: (.*?)\s*$", re.M)
MARKER_RE = re.compile(r"@@(RUN|KMSG|DMESG)-[A-Z]+[^@]*@@")

DEFAULT_TIMEOUT = 120      # seconds per command (guest side)
# A slower guest kernel (make test KERNEL=debug: KASAN, lockdep) has every
# timeout below and every command's own multiplied by $QGPU_TIMEOUT_FACTOR
# (default 1), and guests get at least $QGPU_MIN_MEM of memory (default: none).
TIMEOUT_FACTOR = float(os.environ.get("QGPU_TIMEOUT_FACTOR") or 1)
MIN_MEM = os.environ.get("QGPU_MIN_MEM", "")
# Extra kernel command line for every boot (make test KERNEL=debug: a longer
# RCU stall timeout, since a TCG guest on a busy host can be starved of CPU).
EXTRA_APPEND = os.environ.get("QGPU_KERNEL_APPEND", "")
GRACE = int(30 * TIMEOUT_FACTOR)             # host waits this much longer before killing QEMU
BOOT_TIMEOUT = int(180 * TIMEOUT_FACTOR)     # from QEMU start to @@RUN-READY@@
SHUTDOWN_TIMEOUT = int(120 * TIMEOUT_FACTOR)  # from the last command to QEMU's exit


@dataclass
class Cmd:
    command: str
    name: str = ""
    timeout: int = DEFAULT_TIMEOUT
    expect: List[str] = field(default_factory=list)

    def __post_init__(self):
        if not self.name:
            self.name = self.command


@dataclass
class CmdResult:
    cmd: Cmd
    rc: Optional[int] = None           # exit status; None if it never finished
    timed_out: bool = False            # killed by the guest-side timeout
    vm_failure: str = ""               # the VM hung/crashed/never booted during it
    output: str = ""                   # console text between its markers
    kernel_problems: List[str] = field(default_factory=list)
    boot: int = 0
    log: str = ""

    @property
    def ok(self):
        return (self.rc == 0 and not self.timed_out and not self.vm_failure
                and not self.kernel_problems)

    def reason(self):
        r = []
        if self.vm_failure:
            r.append(self.vm_failure)
        elif self.timed_out:
            r.append("timed out after %ds" % self.cmd.timeout)
        elif self.rc is None:
            r.append("did not finish")
        elif self.rc != 0:
            r.append("exit %d" % self.rc + (" (signal %d)" % (self.rc - 128)
                                               if self.rc > 128 else ""))
        if self.kernel_problems:
            r.append("%d unexpected kernel log line(s)" % len(self.kernel_problems))
        return "; ".join(r)


@dataclass
class VmConfig:
    props: str = ""                    # qgpu device properties; "none" = no device
    modparams: str = ""                # qgpu.ko parameters
    load: bool = True                  # insmod the modules at boot
    devices: List[str] = field(default_factory=list)   # more QEMU -device arguments
    modprobe: List[str] = field(default_factory=list)  # modules /init modprobes at boot
    smp: int = 1
    mem: str = "1G"
    append: str = ""                   # extra kernel command line
    boot_expect: List[str] = field(default_factory=list)
    image: str = ""                    # default: $QGPU_IMAGE or build/guest/initramfs.cpio.gz
    qemu: str = ""
    kernel: str = ""                   # default: $QGPU_KERNEL or the cached stock kernel

    def fill(self):
        self.image = (self.image or os.environ.get("QGPU_IMAGE") or
                      os.path.join(BUILD, "guest", "initramfs.cpio.gz"))
        self.qemu = self.qemu or os.path.join(BUILD, "qemu", "qemu-system-x86_64")
        self.kernel = (self.kernel or os.environ.get("QGPU_KERNEL") or
                       os.path.join(CACHE, "kernel-" + guest_kver(), "vmlinuz"))
        if MIN_MEM and mem_bytes(self.mem) < mem_bytes(MIN_MEM):
            self.mem = MIN_MEM
        for what, p in (("guest image", self.image), ("QEMU", self.qemu),
                        ("guest kernel", self.kernel)):
            if not os.path.exists(p):
                raise SystemExit("[qgpu] error: %s missing: %s (run `make setup`)" % (what, p))


def mem_bytes(size):
    """QEMU's -m syntax (512M, 1G, plain MiB) in bytes."""
    m = re.fullmatch(r"(\d+)([KMGT]?)B?", size.strip().upper())
    if not m:
        raise SystemExit("[qgpu] error: bad memory size %r" % size)
    return int(m.group(1)) << {"K": 10, "": 20, "M": 20, "G": 30, "T": 40}[m.group(2)]


def guest_kver():
    """The guest kernel release: the Makefile's KVER or the build set-up chose
    in its place (scripts/kver.sh)."""
    env = dict(os.environ, QGPU_CACHE=CACHE)
    out = subprocess.run([os.path.join(ROOT, "scripts", "kver.sh")], env=env,
                         stdout=subprocess.PIPE, check=True, text=True)
    return out.stdout.strip()


def _newc_entry(name, data, mode, ino):
    hdr = "070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X" % (
        ino, mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(name) + 1, 0)
    out = hdr.encode() + name.encode() + b"\0"
    out += b"\0" * (-len(out) % 4)
    out += data
    out += b"\0" * (-len(out) % 4)
    return out


def make_cpio(files):
    """An uncompressed newc archive of {path: bytes} (plus directories)."""
    out = b""
    ino = 1
    dirs = sorted({os.path.dirname(p) for p in files if os.path.dirname(p)})
    for d in dirs:
        out += _newc_entry(d, b"", 0o40755, ino)
        ino += 1
    for p, data in files.items():
        out += _newc_entry(p, data, 0o100644, ino)
        ino += 1
    out += _newc_entry("TRAILER!!!", b"", 0, 0)
    out += b"\0" * (-len(out) % 512)
    return out


# Under TCG on a busy host the guest's clocks jump: calibrating and then
# switching to the TSC can look like a long RCU stall, and the IO-APIC timer
# check can fail and panic. Neither says anything about qgpu, so the guest
# keeps the HPET and skips that check (both are for real hardware).
TCG_CLOCK_ARGS = "tsc=unstable no_timer_check "


def qemu_argv(cfg, initrd, serial):
    append = "console=ttyS0 panic=-1 printk.time=1 %s%s %s" % (TCG_CLOCK_ARGS, EXTRA_APPEND,
                                                             cfg.append)
    argv = [cfg.qemu, "-accel", "tcg", "-m", cfg.mem, "-smp", str(cfg.smp),
            "-nodefaults", "-no-user-config", "-display", "none",
            "-no-reboot", "-nic", "none", "-serial", serial,
            "-kernel", cfg.kernel, "-initrd", initrd, "-append", append.strip()]
    if cfg.props != "none":
        argv += ["-device", "qgpu" + ("," + cfg.props if cfg.props else "")]
    for d in cfg.devices:
        argv += ["-device", d]
    return argv


def build_initrd(cfg, path, cmds, mode):
    conf = "QGPU_MODE=%s\nQGPU_LOAD=%d\nQGPU_MODPARAMS=%s\nQGPU_MODPROBE=%s\n" % (
        mode, 1 if cfg.load else 0, shlex.quote(cfg.modparams),
        shlex.quote(" ".join(cfg.modprobe)))
    lines = "".join("%d %s\n" % (c.timeout, c.command.replace("\n", " ")) for c in cmds)
    with open(cfg.image, "rb") as f:
        base = f.read()
    with open(path, "wb") as f:
        f.write(base)
        # the kernel only looks for an uncompressed archive at a 4-byte
        # aligned offset; zero padding between archives is skipped
        f.write(b"\0" * (-len(base) % 512))
        f.write(make_cpio({"run/config": conf.encode(), "run/cmds": lines.encode()}))


_LIVE = set()              # running QEMU processes (killed on exit)
_LIVE_LOCK = threading.Lock()


_STOPPING = threading.Event()


def kill_all():
    """Kill every QEMU this process started (each by its PID); start no more."""
    _STOPPING.set()
    with _LIVE_LOCK:
        procs = list(_LIVE)
    for p in procs:
        if p.poll() is None:
            p.kill()


class Boot:
    """One QEMU process running a list of commands, watched by the host."""

    def __init__(self, cfg, cmds, logdir, number, on_output=None, verbose=False):
        self.cfg, self.cmds, self.number = cfg, cmds, number
        self.log = os.path.join(logdir, "boot-%d.log" % number)
        self.errlog = os.path.join(logdir, "qemu-%d.err" % number)
        self.initrd = os.path.join(logdir, "initrd-%d.img" % number)
        self.on_output = on_output
        self.verbose = verbose
        self.killed = ""           # why the host killed QEMU
        self.exit_status = None

    def run(self):
        if _STOPPING.is_set():
            raise SystemExit("[qgpu] interrupted")
        build_initrd(self.cfg, self.initrd, self.cmds, "run")
        argv = qemu_argv(self.cfg, self.initrd, "file:" + self.log)
        open(self.log, "w").close()
        with _LIVE_LOCK, open(self.errlog, "w") as err:
            if _STOPPING.is_set():
                raise SystemExit("[qgpu] interrupted")
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=err,
                                    stderr=subprocess.STDOUT)
            _LIVE.add(proc)
        try:
            self._watch(proc)
        finally:
            if proc.poll() is None:
                proc.kill()        # by PID, never by name
            proc.wait()
            with _LIVE_LOCK:
                _LIVE.discard(proc)
            self.exit_status = proc.returncode
            try:
                os.unlink(self.initrd)
            except OSError:
                pass
        with open(self.log, "r", errors="replace") as f:
            return f.read()

    def _watch(self, proc):
        start = time.monotonic()
        deadline = start + BOOT_TIMEOUT
        pos = 0
        text = ""
        printed_upto = 0
        cur = None            # index (1-based) of the running command
        done = set()
        ready = False
        while True:
            exited = proc.poll() is not None
            try:
                with open(self.log, "r", errors="replace") as f:
                    f.seek(pos)
                    chunk = f.read()
                    pos = f.tell()
            except FileNotFoundError:
                proc.kill()
                raise RuntimeError("console log %s vanished (another run removed it?)" % self.log)
            if chunk:
                if self.verbose:
                    sys.stdout.write(chunk)
                    sys.stdout.flush()
                text += chunk
                # markers are handled line by line, complete lines only
                upto = text.rfind("\n") + 1
                for line in text[printed_upto:upto].splitlines():
                    now = time.monotonic()
                    if "@@RUN-READY@@" in line and not ready:
                        ready = True
                        deadline = now + SHUTDOWN_TIMEOUT if not self.cmds else deadline
                    m = BEGIN_RE.search(line)
                    if m:
                        cur = int(m.group(1))
                        if 1 <= cur <= len(self.cmds):
                            deadline = now + self.cmds[cur - 1].timeout + GRACE
                            if self.on_output:
                                self.on_output("begin", self.cmds[cur - 1], None)
                    m = END_RE.search(line)
                    if m:
                        n = int(m.group(1))
                        done.add(n)
                        if n == len(self.cmds):
                            deadline = now + SHUTDOWN_TIMEOUT
                        if self.on_output and 1 <= n <= len(self.cmds):
                            self.on_output("end", self.cmds[n - 1],
                                           section(text[:upto], n))
                        cur = None
                printed_upto = upto
            if exited:
                return
            if time.monotonic() > deadline:
                if not ready:
                    self.killed = "guest did not boot within %ds" % BOOT_TIMEOUT
                elif cur is not None:
                    self.killed = "guest hung in command %d (no exit %ds after its %ds timeout)" % (
                        cur, GRACE, self.cmds[cur - 1].timeout)
                else:
                    self.killed = "guest did not power off"
                proc.kill()
                return
            time.sleep(0.2)


def section(text, n):
    """Console text of command n (from its BEGIN marker to END or the log end)."""
    b = re.search(r"@@RUN-BEGIN %d@@[^\n]*\n" % n, text)
    if not b:
        return ""
    e = re.search(r"@@RUN-END %d rc=\d+@@" % n, text[b.end():])
    body = text[b.end(): b.end() + e.start() if e else len(text)]
    if not e:
        d = body.find("@@DMESG-BEGIN@@")
        body = body if d < 0 else body[:d]
    return body.replace("\r", "")


def kernel_lines(text):
    """(timestamp, message) for every kernel line in the console log, de-duplicated.

    The dmesg dump is clean (the console can interleave kernel and user output
    within a line), so where it exists it wins; console lines fill in what it
    lacks: a guest that never dumped, a ring buffer that overflowed, and
    messages after the dump."""
    text = text.replace("\r", "")
    d0 = text.find("@@DMESG-BEGIN@@")
    d1 = text.find("@@DMESG-END@@", d0 + 1) if d0 >= 0 else -1
    if d0 >= 0 and d1 > d0:
        dump = _klines(text[d0:d1])
        if dump:
            lo, hi = dump[0][0], dump[-1][0]
            rest = [k for k in _klines(text[:d0] + "\n" + text[d1:])
                    if k[0] < lo or k[0] > hi]
            return sorted(_dedup(dump + rest), key=lambda x: x[0])
    return sorted(_dedup(_klines(text)), key=lambda x: x[0])


def _dedup(lines):
    seen = set()
    out = []
    for k in lines:
        if k not in seen:
            seen.add(k)
            out.append(k)
    return out


def _klines(text):
    out = []
    for raw in text.split("\n"):
        m = KLINE_RE.search(raw)
        if m:
            out.append((float(m.group(1)), m.group(2).rstrip()))
    return out


def analyze(text, cmds, cfg, boot_no, logpath):
    """Per-command results plus boot-level problems for one boot's console log."""
    results = [CmdResult(cmd=c, boot=boot_no, log=logpath) for c in cmds]
    boot_problems = []
    for m in LOADFAIL_RE.finditer(text):
        boot_problems.append("insmod %s failed (rc=%s)" % (m.group(1), m.group(2)))
    started = set()
    for i, r in enumerate(results, 1):
        if re.search(r"@@RUN-BEGIN %d@@" % i, text):
            started.add(i)
            r.output = section(text, i)
        m = re.search(r"@@RUN-END %d rc=(\d+)@@" % i, text)
        if m:
            r.rc = int(m.group(1))
        if re.search(r"@@RUN-TIMEOUT %d@@" % i, text):
            r.timed_out = True
    klines = kernel_lines(text)
    begin_ts, end_ts = {}, {}
    for ts, msg in klines:
        m = KMSG_BEGIN_RE.match(msg)
        if m:
            begin_ts.setdefault(int(m.group(1)), ts)
        m = KMSG_END_RE.match(msg)
        if m:
            n = int(m.group(1))
            end_ts.setdefault(n, ts)
            if 1 <= n <= len(results) and results[n - 1].rc is None:
                results[n - 1].rc = int(m.group(2))
    expects = []
    for r in results:
        pats = list(r.cmd.expect) + [m.group(1) for m in EXPECT_RE.finditer(r.output)]
        expects.append([re.compile(p) for p in pats if p])
    boot_expect = [re.compile(p) for p in cfg.boot_expect]
    for ts, msg in klines:
        if MARKER_RE.search(msg) or not BAD_RE.search(msg) or BENIGN_RE.search(msg):
            continue
        owner = None
        for n, b in begin_ts.items():
            if b <= ts <= end_ts.get(n, float("inf")) and 1 <= n <= len(results):
                owner = n
        allowed = expects[owner - 1] if owner else boot_expect
        if any(p.search(msg) for p in allowed):
            continue
        line = "[%12.6f] %s" % (ts, msg)
        if owner:
            results[owner - 1].kernel_problems.append(line)
        else:
            boot_problems.append("kernel: " + line)
    return results, boot_problems, started


def run_commands(cmds, cfg, logdir=None, resume=True, on_output=None, verbose=False):
    """Run cmds in as few boots as possible. Returns (results, boot_problems, logdir)."""
    cfg.fill()
    if TIMEOUT_FACTOR != 1:
        cmds = [dataclasses.replace(c, timeout=int(c.timeout * TIMEOUT_FACTOR)) for c in cmds]
    if logdir is None:
        logs = os.path.join(BUILD, "logs")
        os.makedirs(logs, exist_ok=True)
        for d in sorted(glob.glob(os.path.join(logs, "vm-*")), key=os.path.getmtime)[:-9]:
            shutil.rmtree(d, ignore_errors=True)      # keep the 10 most recent
        logdir = os.path.join(logs, "vm-" + datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
                              + "-%d" % os.getpid())
    os.makedirs(logdir, exist_ok=True)
    results = []
    boot_problems = []
    remaining = list(cmds)
    boot_no = 0
    while True:
        boot_no += 1
        boot = Boot(cfg, remaining, logdir, boot_no, on_output, verbose)
        text = boot.run()
        res, probs, started = analyze(text, remaining, cfg, boot_no, boot.log)
        boot_problems += ["boot %d: %s" % (boot_no, p) for p in probs]
        last = max(started) if started else 0
        vm_gone = boot.killed or "the guest stopped unexpectedly (crash or panic?)"
        if last == 0:
            # never reached the first command: nothing more to try
            why = boot.killed or ("QEMU exited with status %s before running any command"
                                  % boot.exit_status)
            err = open(boot.errlog, errors="replace").read().strip()
            if err:
                why += ": " + err.splitlines()[-1]
            if remaining:
                for r in res:
                    r.vm_failure = "not run: " + why
            else:
                if boot.killed or "@@RUN-DONE@@" not in text:
                    boot_problems.append("boot %d: %s" % (boot_no, why))
            results += res
            break
        results += res[:last - 1]
        cur = res[last - 1]
        if cur.rc is None:
            cur.vm_failure = vm_gone
        elif boot.killed or "@@RUN-DONE@@" not in text:
            if last == len(remaining):
                boot_problems.append("boot %d: after the last command: %s" % (boot_no, vm_gone))
        results.append(cur)
        rest = remaining[last:]
        if not rest:
            break
        if not resume:
            for r in res[last:]:
                r.vm_failure = "not run: " + vm_gone
            results += res[last:]
            break
        remaining = rest
    with open(os.path.join(logdir, "results.json"), "w") as f:
        json.dump({"boot_problems": boot_problems,
                   "results": [{"name": r.cmd.name, "command": r.cmd.command,
                                "rc": r.rc, "ok": r.ok, "reason": r.reason(),
                                "timed_out": r.timed_out, "vm_failure": r.vm_failure,
                                "kernel_problems": r.kernel_problems,
                                "boot": r.boot} for r in results]}, f, indent=1)
    return results, boot_problems, logdir


def shell(cfg):
    """Interactive guest: serial console on this terminal (Ctrl-A X quits QEMU)."""
    cfg.fill()
    d = os.path.join(BUILD, "logs")
    os.makedirs(d, exist_ok=True)
    for f in glob.glob(os.path.join(d, "shell-initrd*.img")):
        if time.time() - os.path.getmtime(f) > 3600:
            os.unlink(f)
    initrd = os.path.join(d, "shell-initrd-%d.img" % os.getpid())
    build_initrd(cfg, initrd, [], "shell")
    argv = qemu_argv(cfg, initrd, "mon:stdio")
    print("[qgpu] booting the guest shell (Ctrl-A X quits QEMU, `exit` powers off)",
          file=sys.stderr)
    os.execv(argv[0], argv)


def _sigterm(signum, frame):
    kill_all()
    raise SystemExit(128 + signum)


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="run-vm.sh",
        description="Boot the qgpu guest under TCG and run commands in it.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="""Each COMMAND is one shell command line run by the guest's /init.
Command file format (-f): one command per line, options before it:
    [timeout=SECONDS] [name=NAME] [expect=REGEX]... -- COMMAND LINE
or just a command line. Lines starting with # are ignored.
Exit status: 0 when every command exited 0 with a clean kernel log.""")
    ap.add_argument("-p", "--props", default=os.environ.get("QGPU_PROPS", ""),
                    help='qgpu device properties, e.g. "vram-size=256M,visible-vram-size=64M"; '
                    '"none" boots without the device (default: $QGPU_PROPS or device defaults)')
    ap.add_argument("-m", "--modparams", default=os.environ.get("QGPU_MODPARAMS", ""),
                    help="qgpu.ko module parameters")
    ap.add_argument("--no-load", action="store_true", help="do not insmod any module at boot")
    ap.add_argument("--modprobe", action="append", default=[], metavar="MODULE",
                    help="modprobe this module at every boot, after the boot-time modules "
                    "(repeatable; e.g. virtio_gpu, sw_sync)")
    ap.add_argument("--device", action="append", default=[], metavar="DEVICE",
                    help='one more QEMU -device argument, e.g. "virtio-gpu-pci" (repeatable)')
    ap.add_argument("--virtio-gpu", action="store_true",
                    help="boot a virtio-gpu device beside qgpu and load its driver "
                    "(--device virtio-gpu-pci --modprobe virtio_gpu); qgpu's tools find "
                    "qgpu's nodes by driver name")
    ap.add_argument("-t", "--timeout", type=int, default=DEFAULT_TIMEOUT,
                    help="per-command timeout in seconds (default %(default)s)")
    ap.add_argument("-e", "--expect", action="append", default=[],
                    help="regex of an expected kernel line, for every command (repeatable)")
    ap.add_argument("--boot-expect", action="append", default=[],
                    help="regex of an expected kernel line outside the commands")
    ap.add_argument("-f", "--file", help="read commands from this file")
    ap.add_argument("--smp", type=int, default=int(os.environ.get("QGPU_SMP", "1")))
    ap.add_argument("--mem", default=os.environ.get("QGPU_MEM", "1G"))
    ap.add_argument("--append", default="", help="extra kernel command line")
    ap.add_argument("--image", default="", help="base initramfs (default build/guest/initramfs.cpio.gz)")
    ap.add_argument("--log-dir", help="where to keep console logs (default build/logs/vm-DATE-PID)")
    ap.add_argument("--no-resume", action="store_true",
                    help="after a hang or crash, do not reboot for the remaining commands")
    ap.add_argument("-v", "--verbose", action="store_true", help="stream the whole serial console")
    ap.add_argument("--shell", action="store_true", help="interactive shell on the serial console")
    ap.add_argument("commands", nargs="*", metavar="COMMAND")
    a = ap.parse_args(argv)
    if a.virtio_gpu:
        a.device.append("virtio-gpu-pci")
        a.modprobe.append("virtio_gpu")

    cfg = VmConfig(props=a.props, modparams=a.modparams, load=not a.no_load, smp=a.smp,
                   devices=a.device, modprobe=a.modprobe, mem=a.mem, append=a.append, boot_expect=a.boot_expect, image=a.image)
    if a.shell:
        shell(cfg)
    cmds = [Cmd(c, timeout=a.timeout, expect=list(a.expect)) for c in a.commands]
    if a.file:
        for line in open(a.file):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            c = Cmd(line, timeout=a.timeout, expect=list(a.expect))
            opts, sep, command = (" " + line).partition(" -- ")
            if sep:
                try:
                    parsed = [o.partition("=") for o in shlex.split(opts)]
                except ValueError:
                    parsed = None
                if parsed is not None and all(k in ("timeout", "name", "expect") and s
                                              for k, s, _ in parsed):
                    for k, _, v in parsed:
                        if k == "timeout":
                            c.timeout = int(v)
                        elif k == "name":
                            c.name = v
                        else:
                            c.expect.append(v)
                    c.command = command.strip()
                    c.name = c.name if c.name != line else c.command
            cmds.append(c)
    if not cmds:
        ap.error("no command given (use --shell for an interactive guest)")
    signal.signal(signal.SIGTERM, _sigterm)
    signal.signal(signal.SIGHUP, _sigterm)
    signal.signal(signal.SIGINT, _sigterm)

    def show(ev, cmd, out):
        if ev == "begin":
            print("=== %s" % cmd.name, flush=True)
        else:
            sys.stdout.write(MARKER_RE.sub("", out) if out else "")
            sys.stdout.flush()

    results, boot_problems, logdir = run_commands(
        cmds, cfg, a.log_dir, resume=not a.no_resume,
        on_output=None if a.verbose else show, verbose=a.verbose)
    print()
    print("=== results (console logs in %s)" % os.path.relpath(logdir))
    bad = 0
    for r in results:
        print("%-4s %s%s" % ("ok" if r.ok else "FAIL", r.cmd.name,
                             "" if r.ok else ": " + r.reason()))
        for k in r.kernel_problems:
            print("       " + k)
        bad += not r.ok
    for p in boot_problems:
        print("FAIL %s" % p)
    bad += len(boot_problems)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
