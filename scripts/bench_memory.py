"""The VRAM memory part of `make bench` (README "Benchmarks"): how much of the
host's memory the device gives back when a working set in VRAM is freed.

One boot (a VRAM larger than the working set, and guest memory for the
allocations' system backing pages) runs `qgpu-bench -s SIZE vram-memory`
(VRAM-only allocations written by the GPU, held 3 s, destroyed, then the
wait for the driver's discards) twice, with a `sleep` before the second and
after it. Meanwhile a thread samples the QEMU process's resident memory
(VmRSS in /proc/PID/status) every 50 ms. The first run is a warm-up: every
allocation also has backing pages in guest memory, which the guest touches
and the host keeps once they are touched (no balloon), so the idle figure is
taken after it, with those pages already counted. Idle is the last sample
of the first sleep, peak the largest while the second run runs, after the
last sample of the final sleep. The `bench: vram-memory-host`
line gives the three in MiB, the growth and what was given back, and
rss_ratio = after / idle (the issue's goal: at most 1.1 for a 1 GiB working
set), beside the device's own count of committed VRAM from the guest.
"""

import os
import threading
import time

import vmrun

MIB = 1 << 20
PROPS = "vram-size=1536M,visible-vram-size=512M,host-aperture-size=32M"


def rss_of(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


class Sampler(threading.Thread):
    """VmRSS of the running QEMU (vmrun's live process), with the phase the
    guest is in (the command running) at each sample."""

    def __init__(self):
        super().__init__(daemon=True)
        self.phase = "boot"
        self.samples = []          # (time, phase, rss)
        self.stop = threading.Event()

    def run(self):
        while not self.stop.is_set():
            with vmrun._LIVE_LOCK:
                procs = list(vmrun._LIVE)
            for p in procs:
                r = rss_of(p.pid)
                if r is not None:
                    self.samples.append((time.monotonic(), self.phase, r))
            self.stop.wait(0.05)

    def on_output(self, what, cmd, _res):
        self.phase = "%s:%s" % (what, cmd.name or cmd.command)


def run(size, qemu, logdir, props=PROPS, mem=None):
    """Returns (bench lines, results dict, failure or "")."""
    mem = mem or "%dM" % (2 * size // MIB + 1024)
    cmds = [vmrun.Cmd("qgpu-bench -s %d vram-memory" % (size // MIB), name="warm",
                      timeout=600),
            vmrun.Cmd("sleep 3", name="idle"),
            vmrun.Cmd("qgpu-bench -s %d vram-memory" % (size // MIB), name="work",
                      timeout=600),
            vmrun.Cmd("sleep 3", name="after")]
    cfg = vmrun.VmConfig(props=props, mem=mem, qemu=qemu)
    s = Sampler()
    s.start()
    try:
        res, problems, _ = vmrun.run_commands(cmds, cfg, logdir=logdir, resume=False,
                                              on_output=s.on_output)
    finally:
        s.stop.set()
        s.join()
    lines = [l for r in res[1:] for l in r.output.splitlines() if l.startswith("bench: ")]
    bad = ["%s: %s" % (r.cmd.command, r.reason()) for r in res if not r.ok] + problems
    idle = [r for _, ph, r in s.samples if ph == "begin:idle"]
    work = [r for _, ph, r in s.samples if ph in ("begin:work", "end:work")]
    after = [r for _, ph, r in s.samples if ph == "begin:after"]
    if not (idle and work and after):
        return lines, {}, bad[0] if bad else "no memory samples in every phase"
    i, p, a = idle[-1], max(work), after[-1]
    out = {"size_mib": size // MIB, "idle_mib": i / MIB, "peak_mib": p / MIB,
           "after_mib": a / MIB, "rss_ratio": a / i,
           "given_back": (p - a) / (p - i) if p > i else 0.0}
    lines.append("bench: vram-memory-host size_mib=%d qemu_rss_idle_mib=%.0f "
                 "qemu_rss_peak_mib=%.0f qemu_rss_after_mib=%.0f growth_mib=%.0f "
                 "given_back=%.3f rss_ratio=%.3f samples=%d" % (
                     size // MIB, out["idle_mib"], out["peak_mib"], out["after_mib"],
                     (p - i) / MIB, out["given_back"], out["rss_ratio"], len(s.samples)))
    return lines, out, bad[0] if bad else ""


def table(m):
    """Markdown lines for results.md."""
    if not m:
        return []
    return ["## VRAM given back to the host", "",
            "| working set | QEMU RSS idle | peak | after freeing | after / idle | "
            "share of the growth given back |",
            "|---|---|---|---|---|---|",
            "| %d MiB | %.0f MiB | %.0f MiB | %.0f MiB | %.3f | %.3f |" % (
                m["size_mib"], m["idle_mib"], m["peak_mib"], m["after_mib"],
                m["rss_ratio"], m["given_back"]), ""]


if __name__ == "__main__":
    import sys
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1024
    d = os.path.join(vmrun.BUILD, "bench", "memory-%d" % os.getpid())
    os.makedirs(d, exist_ok=True)
    ls, _, why = run(n * MIB, "", d)
    print("\n".join(ls))
    if why:
        print("bench: FAILED vram-memory: %s" % why)
        sys.exit(1)
