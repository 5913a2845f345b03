#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Plots of a qgpu trace (docs/trace-format.md), PNG and SVG.

usage: tools/replay/plots.py [-o DIR] [--replay BIN] TRACE...

For each TRACE, into DIR (default build/plots), named after the trace:

  NAME-timeline    residency timeline (x: the memory manager's events in
                   order): one row per allocation (in order of
                   creation), coloured by the segment it is in (CPU-visible
                   VRAM, non-visible VRAM, aperture; system memory left
                   blank), evictions marked (x: a victim, +: evicted on
                   request or for CPU access), split points (a portion that
                   starts at a SplitOffset) as dotted vertical lines
  NAME-occupancy   bytes of allocations in each segment over time, against
                   each segment's size
  NAME-paging      bytes paged into and out of VRAM per victim policy
                   (qgpu-replay --csv) against the lower bound (Belady's MIN
                   at page granularity), the whole-allocation schedule and
                   the oracle (the memory manager knowing the whole future)

--data: also NAME-data.json, the numbers each plot drew (the timeline's
rows, spans, eviction marks and split points; each segment's occupancy
steps; the paging bars, bounds and oracle), for checking a picture
against its trace (tests/unit/plots.py).

Prints the path of every file written. Needs Debian's python3-matplotlib
(scripts/plots.sh runs it under /usr/bin/python3).
"""
import argparse
import json
import os
import subprocess
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

SEGS = {1: ("CPU-visible VRAM", "#1f77b4"), 2: ("non-visible VRAM", "#2ca02c"),
        3: ("aperture", "#ff7f0e")}
MIB = 1024.0 * 1024.0


def human(b):
    return "%.1f MiB" % (b / MIB) if b >= MIB else "%d KiB" % (b // 1024)


def fields(parts):
    out = {}
    for p in parts:
        if "=" in p:
            k, v = p.split("=", 1)
            out[k] = v
    return out


def num(v):
    try:
        return int(v, 0)
    except (TypeError, ValueError):
        return 0


class Trace:
    """What the plots need from a trace: allocations, their residency
    intervals, evictions, split points, segment sizes."""

    def __init__(self, path):
        self.path = path
        self.name = os.path.splitext(os.path.basename(path))[0]
        self.command = ""
        self.seg_size = {}
        self.size = {}        # id -> bytes
        self.order = []       # ids in order of first sight
        self.where = {}       # id -> (segment, since)
        self.spans = {}       # id -> [(start, end, segment)]
        self.evictions = []   # (t, id, why)
        self.splits = []      # t
        self.occ = {s: [(0, 0)] for s in SEGS}
        self.t_end = 0
        self.nev = 0
        self.snapshots = 0
        self.load()

    def see(self, i, size=None):
        if i not in self.size:
            self.order.append(i)
            self.size[i] = size or 0
            self.spans[i] = []
        elif size:
            self.size[i] = size

    def occupy(self, t, seg, delta):
        if seg in self.occ:
            last = self.occ[seg][-1][1]
            self.occ[seg].append((t, last + delta))

    def leave(self, t, i):
        seg, since = self.where.pop(i, (0, t))
        if seg:
            self.spans[i].append((since, t, seg))
            self.occupy(t, seg, -self.size.get(i, 0))

    def enter(self, t, i, seg):
        if seg:
            self.where[i] = (seg, t)
            self.occupy(t, seg, self.size.get(i, 0))

    def load(self):
        with open(self.path) as f:
            first = f.readline()
            if not first.startswith("qgpu-trace "):
                raise SystemExit("%s: not a qgpu trace" % self.path)
            for line in f:
                parts = line.split()
                if not parts or parts[0].startswith("#"):
                    continue
                if parts[0] == "segment":
                    kv = fields(parts[1:])
                    self.seg_size[num(kv.get("id"))] = num(kv.get("size"))
                    continue
                if parts[0] == "command":
                    self.command = " ".join(parts[1:])
                    continue
                if len(parts) < 2 or not parts[0].isdigit():
                    continue
                # the memory manager's own clock: its events, in order
                # (wall-clock time would hide fast paging between idle gaps)
                self.nev += 1
                t = self.nev
                ev, kv = parts[1], fields(parts[2:])
                self.t_end = max(self.t_end, t)
                i = num(kv.get("id"))
                if ev == "snap-seg":
                    self.seg_size.setdefault(num(kv.get("seg")), num(kv.get("size")))
                elif ev == "snap-bo" and self.snapshots == 0:
                    self.see(i, num(kv.get("size")))
                    self.enter(t, i, num(kv.get("seg")))
                elif ev == "snap-end":
                    self.snapshots += 1
                elif ev == "create":
                    self.see(i, num(kv.get("size")))
                elif ev == "move":
                    self.see(i, num(kv.get("bytes")))
                    self.leave(t, i)
                    self.enter(t, i, num(kv.get("to")))
                elif ev == "evict":
                    self.see(i)
                    self.evictions.append((t, i, kv.get("why", "")))
                    if kv.get("dead") == "1":
                        self.leave(t, i)
                elif ev in ("reap",) or (ev == "destroy" and kv.get("deferred") == "0"):
                    if i in self.where:
                        self.leave(t, i)
                elif ev == "portion" and num(kv.get("index")) > 0:
                    self.splits.append(t)
        for i in list(self.where):
            self.leave(self.t_end, i)


def save(fig, outdir, name, written):
    for ext in ("png", "svg"):
        p = os.path.join(outdir, "%s.%s" % (name, ext))
        fig.savefig(p, dpi=110 if ext == "png" else None, bbox_inches="tight")
        written.append(p)
    plt.close(fig)


def timeline(tr, outdir, written):
    n = len(tr.order)
    row = {i: k for k, i in enumerate(tr.order)}
    fig, ax = plt.subplots(figsize=(12, max(3.0, min(14.0, 1.2 + 0.12 * n))))
    end = max(tr.t_end, 1e-3)
    for i in tr.order:
        for seg in SEGS:
            bars = [(s, max(e - s, end / 2000.0)) for s, e, g in tr.spans[i] if g == seg]
            if bars:
                ax.broken_barh(bars, (row[i] - 0.4, 0.8), facecolors=SEGS[seg][1],
                               linewidth=0)
    for t in tr.splits:
        ax.axvline(t, color="#555555", linestyle=":", linewidth=0.8)
    vx = [(t, row[i]) for t, i, w in tr.evictions if w == "victim" and i in row]
    rx = [(t, row[i]) for t, i, w in tr.evictions if w != "victim" and i in row]
    if vx:
        ax.scatter([a for a, _ in vx], [b for _, b in vx], marker="x", color="#d62728",
                   s=18, linewidths=1, zorder=3)
    if rx:
        ax.scatter([a for a, _ in rx], [b for _, b in rx], marker="+", color="#9467bd",
                   s=24, linewidths=1, zorder=3)
    ax.set_xlim(0, end)
    ax.set_ylim(-1, max(n, 1))
    ax.invert_yaxis()
    ax.set_xlabel("memory-manager events, in order")
    ax.set_ylabel("allocation (in order of creation)")
    if n <= 40:
        ax.set_yticks(range(n))
        ax.set_yticklabels(["id %d (%s)" % (i, human(tr.size[i])) for i in tr.order],
                           fontsize=7)
    handles = [Patch(color=SEGS[s][1], label=SEGS[s][0]) for s in SEGS]
    handles += [Line2D([], [], marker="x", color="#d62728", linestyle="", label="evicted (victim)"),
                Line2D([], [], marker="+", color="#9467bd", linestyle="",
                       label="evicted (request, CPU)"),
                Line2D([], [], color="#555555", linestyle=":", label="split point")]
    ax.legend(handles=handles, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=6,
              fontsize=8, frameon=False)
    ax.set_title("%s: residency of %d allocations (%s)" % (tr.name, n, tr.command or "?"),
                 fontsize=10, pad=24)
    save(fig, outdir, tr.name + "-timeline", written)
    return {"rows": tr.order, "sizes": [tr.size[i] for i in tr.order],
            "spans": {str(i): tr.spans[i] for i in tr.order},
            "victims": vx, "requests": rx, "splits": tr.splits}


def occupancy(tr, outdir, written):
    fig, ax = plt.subplots(figsize=(12, 4))
    data = {}
    for seg, (label, color) in SEGS.items():
        pts = tr.occ[seg]
        if seg not in tr.seg_size:
            continue
        data[str(seg)] = {"size": tr.seg_size[seg], "steps": pts}
        xs = [p[0] for p in pts] + [tr.t_end]
        ys = [p[1] / MIB for p in pts] + [pts[-1][1] / MIB]
        ax.step(xs, ys, where="post", color=color, label=label)
        # the aperture's size only when it is nearly reached
        if seg != 3 or tr.seg_size[seg] <= 4 * max(ys) * MIB:
            ax.axhline(tr.seg_size[seg] / MIB, color=color, linestyle="--", linewidth=0.8)
    ax.set_xlabel("memory-manager events, in order")
    ax.set_ylabel("MiB of allocations")
    ax.set_xlim(0, max(tr.t_end, 1e-3))
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=8, loc="upper right")
    ax.set_title("%s: segment occupancy (dashed: segment size; a dip is an eviction before "
                 "the placement it made room for)" % tr.name, fontsize=10)
    save(fig, outdir, tr.name + "-occupancy", written)
    return data


def paging(tr, replay, outdir, written):
    try:
        out = subprocess.run([replay, "--csv", tr.path], capture_output=True, text=True,
                             check=False).stdout
    except OSError as e:
        raise SystemExit("%s: %s" % (replay, e))
    pol, bound, kernel, best = [], {}, None, None
    for line in out.splitlines():
        p = line.split(",")
        if p[0] == "policy":
            pol.append((p[1], int(p[2]), int(p[3]), int(p[8]), p[9]))
        elif p[0] == "bound":
            bound[p[1]] = (int(p[2]), int(p[3]))
        elif p[0] == "reference":
            bound[p[1]] = (int(p[2]), int(p[3]))
        elif p[0] == "kernel":
            kernel = p[1]
        elif p[0] == "summary":
            best = line.rsplit("best=", 1)[-1]
    if not pol or "min" not in bound:
        raise SystemExit("%s: qgpu-replay gave no figures" % tr.path)
    fig, ax = plt.subplots(figsize=(max(6, 1.4 * len(pol) + 3), 4.5))
    xs = range(len(pol))
    w = 0.38
    ax.bar([x - w / 2 for x in xs], [p[1] / MIB for p in pol], w, color="#1f77b4",
           label="paged in")
    ax.bar([x + w / 2 for x in xs], [p[2] / MIB for p in pol], w, color="#aec7e8",
           label="paged out")
    for x, p in zip(xs, pol):
        ax.annotate(p[4], (x - w / 2, p[1] / MIB), ha="center", va="bottom", fontsize=8)
    ax.axhline(bound["min"][0] / MIB, color="#d62728", linestyle="--",
               label="MIN (page granularity, whole allocations per segment): lower bound on paged in")
    pooled = bound.get("min-pooled")
    if pooled and pooled[0] != bound["min"][0]:
        ax.axhline(pooled[0] / MIB, color="#bcbd22", linestyle="--",
                   label="MIN with every VRAM segment pooled into one")
    free = bound.get("min-requests-ignored")
    if free and free[0] != bound["min"][0]:
        ax.axhline(free[0] / MIB, color="#7f7f7f", linestyle="--",
                   label="MIN with eviction requests and Lock2s ignored")
    if "fnu" in bound:
        ax.axhline(bound["fnu"][0] / MIB, color="#ff9896", linestyle=":",
                   label="whole-allocation furthest next use")
    if "oracle" in bound:
        ax.axhline(bound["oracle"][0] / MIB, color="#9467bd", linestyle="-.",
                   label="oracle: this memory manager knowing the whole future")
    ax.set_xticks(list(xs))
    ax.set_xticklabels([p[0] + (" (kernel)" if p[0] == kernel else "") +
                        (" [%s failed]" % p[3] if p[3] else "") for p in pol], fontsize=8)
    ax.set_ylabel("MiB")
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=2,
              frameon=False)
    ax.set_title("%s: bytes paged per victim policy (ratio to the bound on top; best=%s)"
                 % (tr.name, best), fontsize=10)
    save(fig, outdir, tr.name + "-paging", written)
    return {"policies": [{"name": p[0], "in": p[1], "out": p[2], "failed": p[3],
                          "ratio": p[4]} for p in pol],
            "bound": {k: {"in": v[0], "out": v[1]} for k, v in bound.items()},
            "kernel": kernel, "best": best}


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("traces", nargs="+")
    ap.add_argument("-o", "--out", default="build/plots")
    ap.add_argument("--replay", default="build/bin/qgpu-replay")
    ap.add_argument("--data", action="store_true",
                    help="also write NAME-data.json, the numbers behind the plots")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    written = []
    for path in a.traces:
        tr = Trace(path)
        data = {"trace": path, "events": tr.nev,
                "timeline": timeline(tr, a.out, written),
                "occupancy": occupancy(tr, a.out, written),
                "paging": paging(tr, a.replay, a.out, written)}
        if a.data:
            p = os.path.join(a.out, tr.name + "-data.json")
            with open(p, "w") as f:
                json.dump(data, f)
            written.append(p)
    for p in written:
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
