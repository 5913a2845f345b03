"""The monitor part of `make bench` (README "Benchmarks"): does a large
transfer stall QEMU's monitor?

One boot (BENCH_PROPS-like device, a 1.5 GiB guest) with a QMP socket runs
`sleep 4` (idle) and then `qgpu-bench -s SIZE -r RUNS paging` (busy: TRANSFERs
of SIZE between system memory and VRAM, back to back). A host thread sends
QMP `query-status` commands one after the other all along and times each
answer, tagged with the phase the guest is in. The `bench: monitor` line
gives the median and p99 answer time idle and busy and their ratios
(busy / idle): a device that works in QEMU's main loop holds every command
up for as long as a piece of work runs there.
"""

import json
import os
import socket
import statistics
import threading
import time

import vmrun

MIB = 1 << 20
PROPS = "vram-size=1G,visible-vram-size=512M,host-aperture-size=32M"


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int((len(v) - 1) * p))]


class Prober(threading.Thread):
    """QMP query-status round trips, as fast as they are answered."""

    def __init__(self, path):
        super().__init__(daemon=True)
        self.path = path
        self.phase = "boot"
        self.samples = []          # (phase, seconds)
        self.stop = threading.Event()
        self.error = ""

    def connect(self):
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not self.stop.is_set():
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                s.connect(self.path)
                return s
            except OSError:
                s.close()
                time.sleep(0.05)
        return None

    def run(self):
        s = self.connect()
        if not s:
            self.error = "no QMP socket"
            return
        f = s.makefile("rw")
        try:
            f.readline()                                   # the greeting
            f.write(json.dumps({"execute": "qmp_capabilities"}) + "\n")
            f.flush()
            f.readline()
            while not self.stop.is_set():
                t0 = time.monotonic()
                f.write(json.dumps({"execute": "query-status"}) + "\n")
                f.flush()
                while True:
                    line = f.readline()
                    if not line:
                        return
                    if '"return"' in line:
                        break                              # events are skipped
                self.samples.append((self.phase, time.monotonic() - t0))
                self.stop.wait(0.002)
        except OSError:
            pass
        finally:
            s.close()

    def on_output(self, what, cmd, _res):
        self.phase = "%s:%s" % (what, cmd.name or cmd.command)


def run(qemu, logdir, size=512 * MIB, runs=5, props=PROPS, mem="1536M"):
    """Returns (bench lines, results dict, failure or "")."""
    os.makedirs(logdir, exist_ok=True)
    sock = os.path.join(logdir, "qmp-%d.sock" % os.getpid())
    orig = vmrun.qemu_argv

    def argv(cfg, initrd, serial):
        return orig(cfg, initrd, serial) + ["-qmp", "unix:%s,server=on,wait=off" % sock]

    cmds = [vmrun.Cmd("sleep 4", name="idle"),
            vmrun.Cmd("qgpu-bench -s %d -r %d paging" % (size // MIB, runs), name="busy",
                      timeout=600)]
    cfg = vmrun.VmConfig(props=props, mem=mem, qemu=qemu)
    p = Prober(sock)
    vmrun.qemu_argv = argv
    p.start()
    try:
        res, problems, _ = vmrun.run_commands(cmds, cfg, logdir=logdir, resume=False,
                                              on_output=p.on_output)
    finally:
        vmrun.qemu_argv = orig
        p.stop.set()
        p.join()
        try:
            os.unlink(sock)
        except OSError:
            pass
    bad = ["%s: %s" % (r.cmd.command, r.reason()) for r in res if not r.ok] + problems
    idle = [t for ph, t in p.samples if ph == "begin:idle"]
    busy = [t for ph, t in p.samples if ph == "begin:busy"]
    if len(idle) < 10 or len(busy) < 10:
        return [], {}, bad[0] if bad else (p.error or "too few monitor samples")
    out = {"idle_median_us": statistics.median(idle) * 1e6, "idle_p99_us": pct(idle, 0.99) * 1e6,
           "busy_median_us": statistics.median(busy) * 1e6, "busy_p99_us": pct(busy, 0.99) * 1e6,
           "busy_max_us": max(busy) * 1e6, "idle_n": len(idle), "busy_n": len(busy)}
    out["median_ratio"] = out["busy_median_us"] / out["idle_median_us"]
    out["p99_ratio"] = out["busy_p99_us"] / out["idle_p99_us"]
    line = ("bench: monitor size_mib=%d idle_median_us=%.0f idle_p99_us=%.0f busy_median_us=%.0f "
            "busy_p99_us=%.0f busy_max_us=%.0f median_ratio=%.2f p99_ratio=%.2f idle_n=%d "
            "busy_n=%d" % (size // MIB, out["idle_median_us"], out["idle_p99_us"],
                           out["busy_median_us"], out["busy_p99_us"], out["busy_max_us"],
                           out["median_ratio"], out["p99_ratio"], len(idle), len(busy)))
    lines = [line] + [l for r in res for l in r.output.splitlines()
                      if l.startswith("bench: paging op=")]
    return lines, out, bad[0] if bad else ""


if __name__ == "__main__":
    import sys
    q = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else ""
    d = os.path.join(vmrun.BUILD, "bench", "monitor-%d" % os.getpid())
    ls, _, why = run(q, d)
    print("\n".join(ls))
    if why:
        print("bench: FAILED monitor: %s" % why)
        sys.exit(1)
