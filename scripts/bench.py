#!/usr/bin/env python3
"""The whole benchmark (`make bench`): every figure beside its limit, measured
in the same run.

* Paging: for each size (BENCH_SIZES, default 64M and 1G when the host has
  the memory), the host's memcpy and memset of that size (libc's, as QEMU's
  device code calls them) measured just before and just after one VM boot
  that runs `qgpu-bench -s SIZE -H HOST_MEMCPY paging` on a device large
  enough for it (BENCH_PROPS). QEMU runs with the device's trace event
  qgpu_job_done, which gives every paging command's time in the device, from
  its start to its completion: the device's bandwidth for each move, without
  the guest kernel's part. Each figure (TRANSFER system -> VRAM, VRAM ->
  system, VRAM -> VRAM, FILL) is reported three ways: the device's
  bandwidth, the guest's (ioctl to completion) and their ratios to the
  host's memcpy of the same size (host_memcpy_ratio = device / host memcpy);
  FILL also against the host's memset. BENCH_REPEAT runs the paging part
  that many times (each run its own host measurements and boot); the
  figures are then the medians over the runs of each run's figures and
  ratios.
* The other parts: the bench groups of tests/vm/tests.list (their device
  properties, extra devices and modules, and qgpu-bench arguments, paging
  left out), one boot each. The latency part runs with a virtio-gpu device
  beside qgpu (group bench): NOP submission against a bare ioctl, the
  device's floor (PING) and virtio-gpu's fenced round trip, interleaved;
  its ratios (floor_ratio, virtio_gpu_ratio, p99_ratio) go into the table
  and results.json ("latency").
* VRAM given back to the host (scripts/bench_memory.py, BENCH_MEMORY_SIZE,
  default 1G): the QEMU process's resident memory idle, with a working set
  of that size in VRAM and after it was freed; rss_ratio = after / idle
  ("memory" in results.json).
* The monitor during paging (scripts/bench_monitor.py): QMP query-status
  round trips, back to back, while the guest is idle and while it pages
  512 MiB at a time; median and p99 of each and busy / idle ("monitor").

Output: `bench:` lines on stdout (and in build/bench/bench.txt), a Markdown
table (build/bench/results.md), the numbers (build/bench/results.json), a
plot (build/bench/paging.png, python3-matplotlib from Debian) and the logs
(build/bench/logs-DATE/: console logs, QEMU traces). A benchmark, never a
test: it fails only when something does not run or a result is wrong.
"""

import argparse
import ctypes
import ctypes.util
import datetime
import glob
import json
import mmap
import os
import re
import shlex
import shutil
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import vmrun  # noqa: E402
import bench_memory  # noqa: E402
import bench_monitor  # noqa: E402

MIB = 1 << 20
TESTS_LIST = os.path.join(ROOT, "tests", "vm", "tests.list")
DEFAULT_PROPS = "vram-size=4G,visible-vram-size=2G,host-aperture-size=32M"
OPS = ["to_vram", "from_vram", "vram_to_vram", "fill"]
OP_TITLES = {"to_vram": "TRANSFER system -> VRAM", "from_vram": "TRANSFER VRAM -> system",
             "vram_to_vram": "TRANSFER VRAM -> VRAM", "fill": "FILL (VRAM)"}
JOB_RE = re.compile(r"qgpu_job_done engine (\d+) (\S+) flags 0x([0-9a-f]+) size 0x([0-9a-f]+) "
                    r"src 0x([0-9a-f]+) dst 0x([0-9a-f]+) rounds (\d+) pieces (\d+) ns (-?\d+)"
                    r"(?: cpu_ns (-?\d+))?")
XFER_SRC_PAGELIST, XFER_DST_PAGELIST = 1, 2


def log(msg):
    print("[bench] " + msg, file=sys.stderr, flush=True)


def parse_size(s):
    m = re.fullmatch(r"(\d+)([KMGT]?)", s.strip().upper())
    if not m:
        raise SystemExit("bench: bad size %r" % s)
    return int(m.group(1)) << {"": 0, "K": 10, "M": 20, "G": 30, "T": 40}[m.group(2)]


def size_name(n):
    return "%dG" % (n >> 30) if n % (1 << 30) == 0 else "%dM" % (n >> 20)


# --- the host's side ----------------------------------------------------------

class HostMem:
    """libc memcpy/memset over two page-aligned buffers, faulted in."""

    def __init__(self, size):
        self.size = size
        self.libc = ctypes.CDLL(ctypes.util.find_library("c"))
        self.libc.memcpy.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
        self.libc.memcpy.restype = ctypes.c_void_p
        self.libc.memset.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t]
        self.libc.memset.restype = ctypes.c_void_p
        # private anonymous memory, as malloc() gives for these sizes
        flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS
        self.maps = [mmap.mmap(-1, size, flags=flags), mmap.mmap(-1, size, flags=flags)]
        self.refs = [ctypes.c_char.from_buffer(m) for m in self.maps]
        self.src, self.dst = (ctypes.addressof(r) for r in self.refs)
        self.libc.memset(self.src, 1, size)
        self.libc.memset(self.dst, 2, size)

    def close(self):
        del self.refs
        for m in self.maps:
            m.close()

    def _time(self, fn):
        """MiB/s of @fn by the clock and by this thread's CPU time"""
        t0, c0 = time.perf_counter_ns(), time.thread_time_ns()
        fn()
        t1, c1 = time.perf_counter_ns(), time.thread_time_ns()
        return (self.size / MIB / ((t1 - t0) / 1e9),
                self.size / MIB / (max(c1 - c0, 1) / 1e9))

    def measure(self, runs):
        """Medians (MiB/s) of @runs memcpy and memset, interleaved (and the
        memcpy by CPU time)."""
        cp, st, cpu = [], [], []
        self.libc.memcpy(self.dst, self.src, self.size)      # warm-up
        for _ in range(runs):
            w, c = self._time(lambda: self.libc.memcpy(self.dst, self.src, self.size))
            cp.append(w)
            cpu.append(c)
            st.append(self._time(lambda: self.libc.memset(self.dst, 0, self.size))[0])
        return {"memcpy": statistics.median(cp), "memset": statistics.median(st),
                "memcpy_cpu": statistics.median(cpu), "memcpy_runs": cp, "memset_runs": st,
                "memcpy_cpu_runs": cpu}


def mem_available():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) << 10
    return 0


# --- the guest's side ---------------------------------------------------------

def parse_bench_lines(text):
    """[(name, {key: value})] of the `bench: NAME k=v ...` lines in @text."""
    out = []
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("bench: "):
            continue
        try:
            words = shlex.split(line[len("bench: "):])
        except ValueError:
            words = line[len("bench: "):].split()
        name, kv = words[0] if words else "", {}
        for w in words[1:]:
            k, sep, v = w.partition("=")
            if sep:
                kv[k] = v
        out.append((name, kv))
    return out


QEMU = ""     # --qemu: another QEMU binary (default: build/qemu's)


def boot(cmds, props, mem, logdir, trace=None, timeout=1200, devices=(), modprobe=()):
    """Run @cmds in one VM (vmrun); with @trace, QEMU logs qgpu_job_done there.
    @devices: more QEMU -device arguments, @modprobe: guest modules to load."""
    orig = vmrun.qemu_argv

    def argv(cfg, initrd, serial):
        a = orig(cfg, initrd, serial)
        return a + ["-trace", "qgpu_job_done", "-D", trace] if trace else a
    vmrun.qemu_argv = argv
    try:
        cfg = vmrun.VmConfig(props=props, mem=mem, qemu=QEMU, devices=list(devices),
                             modprobe=list(modprobe))
        res, problems, _ = vmrun.run_commands([vmrun.Cmd(c, timeout=timeout) for c in cmds],
                                              cfg, logdir=logdir, resume=False)
    finally:
        vmrun.qemu_argv = orig
    return res, problems


def device_moves(trace, vram_size, size):
    """Per paging op, the device's moves of @size bytes, in order: each
    {ns, cpu_ns, pieces, rounds}; a move is one or more consecutive commands of
    that op (the driver splits page lists) adding up to @size. A command
    seen again in the move being summed (same source and destination: the
    driver reset a hung engine and ran its paging buffer again) replaces
    the first run of it and of what followed it."""
    moves = {op: [] for op in OPS}
    acc = {op: [] for op in OPS}
    with open(trace, errors="replace") as f:
        for line in f:
            m = JOB_RE.search(line)
            if not m or m.group(1) != "0":
                continue
            kind = m.group(2)
            flags, n, src, dst = (int(m.group(i), 16) for i in (3, 4, 5, 6))
            rounds, pieces, ns = int(m.group(7)), int(m.group(8)), int(m.group(9))
            cpu = int(m.group(10) or 0)
            op = None
            if kind == "copy":
                if flags == XFER_SRC_PAGELIST and dst < vram_size:
                    op = "to_vram"
                elif flags == XFER_DST_PAGELIST and src < vram_size:
                    op = "from_vram"
                elif flags == 0 and src < vram_size and dst < vram_size:
                    op = "vram_to_vram"
            elif kind == "fill" and flags == 0 and dst < vram_size:
                op = "fill"
            if op is None or n < MIB or n > size:
                continue
            a = acc[op]
            again = [i for i, c in enumerate(a) if (c["src"], c["dst"]) == (src, dst)]
            if again:
                del a[again[0]:]
            a.append({"src": src, "dst": dst, "bytes": n, "ns": ns, "cpu_ns": cpu,
                      "pieces": pieces, "rounds": rounds})
            total = sum(c["bytes"] for c in a)
            if total > size:
                del a[:-1]
                total = n
            if total == size:
                moves[op].append({k: sum(c[k] for c in a)
                                  for k in ("ns", "cpu_ns", "pieces", "rounds")})
                del a[:]
    return moves


def paging_run(size, args, logdir, tag):
    """One paging run of @size: host before, the VM, host after."""
    host = HostMem(size)
    try:
        log("%s: host memcpy/memset of %s (before)" % (tag, size_name(size)))
        before = host.measure(args.host_runs)
        trace = os.path.join(logdir, "trace-%s.log" % tag)
        cmd = "qgpu-bench -r %d -s %d -H %.0f paging" % (args.runs, size, before["memcpy"])
        log("%s: VM (%s, %s): %s" % (tag, args.props, args.mem, cmd))
        res, problems = boot([cmd], args.props, args.mem, os.path.join(logdir, "vm-" + tag),
                             trace=trace)
        log("%s: host memcpy/memset of %s (after)" % (tag, size_name(size)))
        after = host.measure(args.host_runs)
    finally:
        host.close()
    r = res[0]
    lines = parse_bench_lines(r.output)
    resets = 0
    if r.log and os.path.exists(r.log):
        with open(r.log, errors="replace") as f:
            # each kernel line shows twice (console and the dmesg dump)
            resets = len({l for l in f if "paging engine hang" in l})
    run = {"size": size, "host_before": before, "host_after": after, "ops": {},
           "engine_resets": resets,
           "ok": r.ok and not problems, "reason": "; ".join([r.reason()] + problems).strip("; "),
           "bench_lines": [l for l in r.output.splitlines() if l.startswith("bench: ")]}
    vram = 0
    for name, kv in lines:
        if name == "device":
            vram = int(float(kv.get("vram_mib", 0))) * MIB
    moves = device_moves(trace, vram, size) if vram and os.path.exists(trace) else {}
    limit_cp = statistics.median(before["memcpy_runs"] + after["memcpy_runs"])
    limit_cpu = statistics.median(before["memcpy_cpu_runs"] + after["memcpy_cpu_runs"])
    limit_st = statistics.median(before["memset_runs"] + after["memset_runs"])
    for name, kv in lines:
        op = kv.get("op")
        if name != "paging" or op not in OPS or "mib_s" not in kv:
            continue
        n = int(kv.get("runs", 0))
        mv = moves.get(op, [])[-n:] if n else []
        dev = [size / MIB / (m["ns"] / 1e9) for m in mv if m["ns"] > 0]
        dcpu = [size / MIB / (m["cpu_ns"] / 1e9) for m in mv if m["cpu_ns"] > 0]
        o = {"guest_mib_s": float(kv["mib_s"]), "runs": n, "device_moves": len(dev),
             "device_mib_s": statistics.median(dev) if dev else 0,
             "device_runs": dev,
             "device_cpu_mib_s": statistics.median(dcpu) if dcpu else 0,
             "host_memcpy_cpu": limit_cpu,
             "pieces_per_move": statistics.median([m["pieces"] for m in mv]) if mv else 0,
             "rounds_per_move": statistics.median([m["rounds"] for m in mv]) if mv else 0,
             "host_memcpy_before": before["memcpy"], "host_memcpy_after": after["memcpy"],
             "host_memcpy": limit_cp, "host_memset_before": before["memset"],
             "host_memset_after": after["memset"], "host_memset": limit_st}
        o["host_memcpy_ratio"] = o["device_mib_s"] / limit_cp if limit_cp else 0
        o["guest_host_memcpy_ratio"] = o["guest_mib_s"] / limit_cp if limit_cp else 0
        o["host_memset_ratio"] = o["device_mib_s"] / limit_st if limit_st else 0
        o["host_memcpy_cpu_ratio"] = (o["device_cpu_mib_s"] / limit_cpu
                                      if limit_cpu and o["device_cpu_mib_s"] else 0)
        if len(dev) < n:
            o["note"] = "%d of %d moves found in the trace" % (len(dev), n)
        run["ops"][op] = o
    return run


def summarize(runs):
    """Per op, the medians over the runs of each run's figures."""
    out = {}
    for op in OPS:
        rs = [r["ops"][op] for r in runs if op in r["ops"]]
        if not rs:
            continue
        o = {}
        for k in ("guest_mib_s", "device_mib_s", "pieces_per_move", "rounds_per_move",
                  "host_memcpy_before", "host_memcpy_after", "host_memcpy",
                  "host_memset_before", "host_memset_after", "host_memset",
                  "host_memcpy_ratio", "guest_host_memcpy_ratio", "host_memset_ratio",
                  "device_cpu_mib_s", "host_memcpy_cpu", "host_memcpy_cpu_ratio"):
            o[k] = statistics.median([r[k] for r in rs])
        o["runs"] = rs[0]["runs"]
        o["repeats"] = len(rs)
        o["ratio_runs"] = [r["host_memcpy_ratio"] for r in rs]
        notes = [r["note"] for r in rs if r.get("note")]
        if notes:
            o["note"] = notes[0]
        out[op] = o
    return out


def limit_line(op, size, o):
    s = ("bench: paging-limit op=%s size_mib=%d runs=%d repeats=%d device_mib_s=%.0f "
         "guest_mib_s=%.0f host_memcpy_mib_s_before=%.0f host_memcpy_mib_s_after=%.0f "
         "host_memcpy_ratio=%.3f guest_host_memcpy_ratio=%.3f pieces_per_move=%.0f "
         "rounds_per_move=%.0f device_cpu_mib_s=%.0f host_memcpy_cpu_mib_s=%.0f "
         "host_memcpy_cpu_ratio=%.3f" % (
             op, size // MIB, o["runs"], o["repeats"], o["device_mib_s"], o["guest_mib_s"],
             o["host_memcpy_before"], o["host_memcpy_after"], o["host_memcpy_ratio"],
             o["guest_host_memcpy_ratio"], o["pieces_per_move"], o["rounds_per_move"],
             o["device_cpu_mib_s"], o["host_memcpy_cpu"], o["host_memcpy_cpu_ratio"]))
    if op == "fill":
        s += " host_memset_mib_s_before=%.0f host_memset_mib_s_after=%.0f host_memset_ratio=%.3f" % (
            o["host_memset_before"], o["host_memset_after"], o["host_memset_ratio"])
    if o["repeats"] > 1:
        s += " ratio_runs=" + ",".join("%.3f" % r for r in o["ratio_runs"])
    if o.get("note"):
        s += ' note="%s"' % o["note"]
    return s


# --- the other parts ------------------------------------------------------------

def bench_groups():
    """The bench groups of tests.list: [(name, props, mem, [commands], {"device": [...],
    "modprobe": [...]})]."""
    groups, cur = [], None
    for line in open(TESTS_LIST):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        w = shlex.split(line)
        if w[0] == "group":
            opts = dict(x.partition("=")[::2] for x in w[2:])
            extra = {"device": [x.partition("=")[2] for x in w[2:] if x.startswith("device=")],
                     "modprobe": [m for x in w[2:] if x.startswith("modprobe=")
                                  for m in x.partition("=")[2].split(",") if m]}
            cur = (w[1], opts.get("props", ""), opts.get("mem", "1G"), [], extra) \
                if w[1].startswith("bench") else None
            if cur:
                groups.append(cur)
        elif w[0] == "test" and cur is not None:
            prog = [x for x in w[1:] if not x.startswith("name=")]
            if prog and prog[0] == "qgpu-bench":
                # paging is measured above, at full size
                prog = [x for x in prog if x != "paging"]
                if not any(not x.startswith("-") and not re.fullmatch(r"[0-9.]+[KMG]?", x)
                           for x in prog[1:]):
                    continue
            cur[3].append(" ".join(shlex.quote(x) for x in prog))
    return groups


# --- output ---------------------------------------------------------------------

def table(summary, host_info):
    rows = ["| operation | size | device MiB/s | host memcpy MiB/s (before / after) | "
            "device / host memcpy | guest MiB/s (ioctl to completion) | guest / host memcpy | "
            "pieces per move | by CPU time: device / host memcpy |",
            "|---|---|---|---|---|---|---|---|---|"]
    for size, ops in summary:
        for op in OPS:
            o = ops.get(op)
            if not o:
                continue
            extra = ""
            if op == "fill":
                extra = " (memset %.0f / %.0f: %.3f)" % (o["host_memset_before"],
                                                         o["host_memset_after"],
                                                         o["host_memset_ratio"])
            rows.append("| %s | %s | %.0f | %.0f / %.0f | **%.3f**%s | %.0f | %.3f | %.0f | "
                        "%.3f |" % (
                            OP_TITLES[op], size_name(size), o["device_mib_s"],
                            o["host_memcpy_before"], o["host_memcpy_after"],
                            o["host_memcpy_ratio"], extra, o["guest_mib_s"],
                            o["guest_host_memcpy_ratio"], o["pieces_per_move"],
                            o["host_memcpy_cpu_ratio"]))
    return "\n".join(rows)


LAT_KINDS = [("nop_submit_signal", "NOP submit -> signal"), ("ping", "device floor (PING)"),
             ("virtio_gpu", "virtio-gpu RESOURCE_CREATE + WAIT"), ("query_ioctl", "bare ioctl (QUERY)")]


def latency_table(lat):
    """Markdown lines for the latency part: each round trip's median and p99, and
    the ratios qgpu-bench took within the run."""
    if not lat:
        return []
    out = ["## Submission latency", "",
           "| group | round trip | median us | p99 us |", "|---|---|---|---|"]
    for kv in lat:
        for key, title in LAT_KINDS:
            if key + "_median_us" in kv:
                out.append("| %s | %s | %s | %s |" % (kv["group"], title,
                                                      kv[key + "_median_us"],
                                                      kv.get(key + "_p99_us", "-")))
    out.append("")
    for kv in lat:
        out.append("%s: floor_ratio=%s (target <= 2), virtio_gpu_ratio=%s (target < 1), "
                   "p99_ratio=%s (target <= 3); %s runs, interleaved." % (
                       kv["group"], kv.get("floor_ratio", "-"),
                       kv.get("virtio_gpu_ratio", "-"), kv.get("p99_ratio", "-"),
                       kv.get("runs", "?")))
    return out + [""]


def plot(summary, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log("no matplotlib (Debian's python3-matplotlib; scripts/host-deps.sh --bench): no plot")
        return False
    labels, dev, guest, limit, ratio = [], [], [], [], []
    for size, ops in summary:
        for op in OPS:
            o = ops.get(op)
            if not o:
                continue
            labels.append("%s\n%s" % (op.replace("_", " "), size_name(size)))
            dev.append(o["device_mib_s"])
            guest.append(o["guest_mib_s"])
            limit.append(o["host_memcpy"])
            ratio.append(o["host_memcpy_ratio"])
    if not labels:
        return False
    fig, (a, b) = plt.subplots(2, 1, figsize=(max(6, 1.3 * len(labels)), 8))
    x = range(len(labels))
    w = 0.27
    a.bar([i - w for i in x], limit, w, label="host memcpy (same size, same run)", color="0.6")
    a.bar(list(x), dev, w, label="device (QEMU trace)", color="tab:blue")
    a.bar([i + w for i in x], guest, w, label="guest (ioctl to completion)", color="tab:orange")
    a.set_ylabel("MiB/s")
    a.set_xticks(list(x))
    a.set_xticklabels(labels, fontsize=8)
    a.legend(fontsize=8)
    a.set_title("qgpu paging bandwidth")
    b.bar(list(x), ratio, 0.5, color="tab:blue")
    b.axhline(0.9, color="tab:red", linestyle="--", label="0.9")
    b.axhline(1.0, color="0.5", linestyle=":")
    b.set_ylabel("device / host memcpy")
    b.set_xticks(list(x))
    b.set_xticklabels(labels, fontsize=8)
    b.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    return True


def main():
    ap = argparse.ArgumentParser(description="qgpu's benchmark (make bench)")
    ap.add_argument("--sizes", default=os.environ.get("BENCH_SIZES", "64M,1G"),
                    help="paging sizes (comma-separated; default 64M,1G)")
    ap.add_argument("--runs", type=int, default=int(os.environ.get("BENCH_RUNS", "5")),
                    help="timed moves per paging figure in the guest (default 5)")
    ap.add_argument("--repeat", type=int, default=int(os.environ.get("BENCH_REPEAT", "1")),
                    help="paging runs (boots), figures are medians over them (default 1)")
    ap.add_argument("--host-runs", type=int, default=7,
                    help="host memcpy/memset runs before and after each boot (default 7)")
    ap.add_argument("--props", default=os.environ.get("BENCH_PROPS", DEFAULT_PROPS),
                    help="device properties of the paging boot (default %s)" % DEFAULT_PROPS)
    ap.add_argument("--mem", default=os.environ.get("BENCH_MEM", "3G"),
                    help="guest memory of the paging boot (default 3G)")
    ap.add_argument("--paging-only", action="store_true", help="skip the other parts")
    ap.add_argument("--memory-size", default=os.environ.get("BENCH_MEMORY_SIZE", "1G"),
                    help="the working set whose VRAM must go back to the host (default 1G; "
                    "0 skips that part)")
    ap.add_argument("--qemu", default=os.environ.get("BENCH_QEMU", ""),
                    help="the QEMU binary to measure (default build/qemu/qemu-system-x86_64; "
                    "keep another build's binary in the same build directory, where it "
                    "finds its firmware)")
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "bench"))
    a = ap.parse_args()
    global QEMU
    QEMU = os.path.abspath(a.qemu) if a.qemu else ""

    os.makedirs(a.out, exist_ok=True)
    for d in sorted(glob.glob(os.path.join(a.out, "logs-*")), key=os.path.getmtime)[:-4]:
        shutil.rmtree(d, ignore_errors=True)          # keep the 5 most recent
    logdir = os.path.join(a.out, "logs-" + datetime.datetime.now().strftime("%Y%m%d-%H%M%S"))
    os.makedirs(logdir)
    lines, failed, summary, results = [], [], [], {"paging": [], "parts": [], "latency": [],
                                                   "memory": {}, "monitor": {}}

    def emit(s):
        print(s, flush=True)
        lines.append(s)

    guest_mem = vmrun.mem_bytes(a.mem)
    for size in [parse_size(s) for s in a.sizes.split(",") if s.strip()]:
        need = 2 * size + guest_mem + 2 * size      # host buffers, the guest, VRAM touched
        if 2 * size + 512 * MIB > guest_mem or mem_available() < need:
            emit('bench: paging-limit size_mib=%d note="skipped: needs %d MiB of guest memory '
                 'and %d MiB free on the host"' % (size // MIB, (2 * size + 512 * MIB) // MIB,
                                                   need // MIB))
            continue
        runs = []
        for i in range(a.repeat):
            tag = "%s-%d" % (size_name(size), i + 1)
            run = paging_run(size, a, logdir, tag)
            runs.append(run)
            for l in run["bench_lines"]:
                emit(l)
            h0, h1 = run["host_before"], run["host_after"]
            emit("bench: paging-host size_mib=%d run=%d memcpy_mib_s_before=%.0f "
                 "memcpy_mib_s_after=%.0f memset_mib_s_before=%.0f memset_mib_s_after=%.0f "
                 "runs=%d paging_engine_resets=%d" % (
                     size // MIB, i + 1, h0["memcpy"], h1["memcpy"], h0["memset"],
                     h1["memset"], a.host_runs, run["engine_resets"]))
            if not run["ok"]:
                failed.append("paging %s: %s" % (tag, run["reason"]))
        ops = summarize(runs)
        summary.append((size, ops))
        for op in OPS:
            if op in ops:
                emit(limit_line(op, size, ops[op]))
        results["paging"].append({"size": size, "runs": runs, "summary": ops})

    msize = parse_size(a.memory_size) if a.memory_size not in ("", "0") else 0
    if not a.paging_only and msize:
        if mem_available() < 3 * msize + 1024 * MIB:
            emit('bench: vram-memory-host size_mib=%d note="skipped: needs %d MiB free on '
                 'the host"' % (msize // MIB, (3 * msize + 1024 * MIB) // MIB))
        else:
            log("vram-memory: VM (%s): the host's memory for a %d MiB working set in VRAM"
                % (bench_memory.PROPS, msize // MIB))
            mlines, results["memory"], why = bench_memory.run(
                msize, QEMU, os.path.join(logdir, "vm-memory"))
            for l in mlines:
                emit(l)
            if why:
                failed.append("vram-memory: %s" % why)

    if not a.paging_only:
        log("monitor: VM (%s): QMP round trips, idle and during paging" % bench_monitor.PROPS)
        mlines, results["monitor"], why = bench_monitor.run(QEMU, os.path.join(logdir,
                                                                               "vm-monitor"))
        for l in mlines[:1]:
            emit(l)
        if why:
            failed.append("monitor: %s" % why)

    if not a.paging_only:
        for name, props, mem, cmds, extra in bench_groups():
            if not cmds:
                continue
            log("%s: VM (%s%s): %s" % (name, props or "defaults",
                                       "".join(" + " + d for d in extra["device"]),
                                       "; ".join(cmds)))
            res, problems = boot(cmds, props, mem, os.path.join(logdir, "vm-" + name),
                                 timeout=600, devices=extra["device"],
                                 modprobe=extra["modprobe"])
            for r in res:
                for l in r.output.splitlines():
                    if l.startswith("bench: "):
                        emit(l)
                for n, kv in parse_bench_lines(r.output):
                    if n == "latency" and "nop_submit_signal_median_us" in kv:
                        results["latency"].append(dict(kv, group=name,
                                                       devices=extra["device"]))
                if not r.ok:
                    failed.append("%s: %s: %s" % (name, r.cmd.command, r.reason()))
                results["parts"].append({"group": name, "props": props, "command": r.cmd.command,
                                         "ok": r.ok, "output": r.output})
            failed += ["%s: %s" % (name, p) for p in problems]

    md = ["# qgpu benchmark, %s" % datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), "",
          "Host: %s, %d CPUs. QEMU: %s. Paging device: `%s`, guest memory %s, %d timed "
          "moves per figure, %d run(s) (medians over the runs; ratios taken within each "
          "run)." % (os.uname().release, os.cpu_count(), QEMU or "build/qemu", a.props, a.mem,
                     a.runs, a.repeat), "",
          table(summary, None), "",
          "Device: each move's time in the device (trace event qgpu_job_done, start to "
          "completion of its paging commands). Guest: qgpu-bench's time from the ioctl to the "
          "move's completion, the guest kernel's part included. Host memcpy/memset: libc, "
          "same size, medians of %d runs just before and just after the boot. By CPU time: "
          "the same bytes over the CPU time the device's thread spent on the move and the "
          "host's memcpy took (less sensitive to other work on the machine)." % a.host_runs,
          ""] + latency_table(results["latency"]) + bench_memory.table(results["memory"]) + [
          "## All bench lines", "", "```"] + lines + ["```", ""]
    with open(os.path.join(a.out, "results.md"), "w") as f:
        f.write("\n".join(md))
    with open(os.path.join(a.out, "bench.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(a.out, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    png = os.path.join(a.out, "paging.png")
    if plot(summary, png):
        log("plot: %s" % os.path.relpath(png, ROOT))
    log("table: %s, logs: %s" % (os.path.relpath(os.path.join(a.out, "results.md"), ROOT),
                                 os.path.relpath(logdir, ROOT)))
    for f in failed:
        print("bench: FAILED %s" % f, flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
