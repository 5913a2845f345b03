#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Host test of the trace plots (tools/replay/plots.py): the numbers behind
each picture, checked against the trace it was drawn from.

For every trace of traces/ (recorded from real runs), plots.py --data draws
the three plots and writes the numbers it drew; each is then checked
against what the trace itself says, read here independently:

  timeline   one row per allocation the trace knows (created, or in VRAM at
             the start), a mark for every eviction, spans that never
             overlap, in VRAM segments only
  occupancy  never above a segment's room (its size less its reservation),
             and equal to the kernel's own books (the snapshots' used
             bytes) at the opening and the closing snapshot
  paging     a bar per policy, equal to qgpu-replay --csv's figures; the
             kernel's policy's bar equal to the kernel's own counters (the
             two snapshots' difference; unless the run changed policy);
             the bound below every bar; the oracle drawn
  replay-log-moves  qgpu-replay --check --log writes the trace's own moves;
             --log alone is refused

Run by tests/harness.py (unit suite) under Debian's python3, whose
python3-matplotlib draws the plots. IGT-style output; --run-subtest NAME.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REPLAY = os.path.join(ROOT, "build", "bin", "qgpu-replay")
PLOTS = os.path.join(ROOT, "tools", "replay", "plots.py")
TRACES = os.path.join(ROOT, "traces")


def fields(parts):
    return dict(p.split("=", 1) for p in parts if "=" in p)


def num(v):
    return int(v, 0)


class Facts:
    """What a trace says, read without plots.py: its allocations, its
    eviction events, and the kernel's books at each snapshot (the event
    index of its snap-begin, the counters, each segment's used and
    reserved bytes)."""

    def __init__(self, path):
        self.ids = set()
        self.evictions = 0
        self.policy_changes = 0
        self.snaps = []
        self.segs = {}
        idx = 0
        snapshot = None
        with open(path) as f:
            f.readline()
            for line in f:
                parts = line.split()
                if len(parts) < 2 or not parts[0].isdigit():
                    continue
                idx += 1
                ev, kv = parts[1], fields(parts[2:])
                if ev == "snap-begin":
                    snapshot = {"t": idx, "counters": kv, "segs": {}}
                    self.snaps.append(snapshot)
                elif ev == "snap-seg" and snapshot is not None:
                    seg = num(kv["seg"])
                    snapshot["segs"][seg] = (num(kv["used"]), num(kv["reserved"]))
                    self.segs.setdefault(seg, (num(kv["size"]), num(kv["reserved"])))
                elif ev == "snap-bo" and len(self.snaps) == 1:
                    self.ids.add(num(kv["id"]))
                elif ev == "create":
                    self.ids.add(num(kv["id"]))
                elif ev == "evict":
                    self.evictions += 1
                elif ev == "policy":
                    self.policy_changes += 1


def at(steps, t):
    """The occupancy a step plot shows at event @t."""
    v = 0
    for st, val in steps:
        if st > t:
            break
        v = val
    return v


def check(cond, msg):
    if not cond:
        raise AssertionError(msg)


def draw(path, out):
    r = subprocess.run(["/usr/bin/python3", PLOTS, "--data", "--replay", REPLAY, "-o", out,
                        path], capture_output=True, text=True, check=False)
    check(r.returncode == 0, "plots.py %s: %s" % (path, r.stderr.strip()))
    files = r.stdout.split()
    name = os.path.splitext(os.path.basename(path))[0]
    for kind in ("timeline", "occupancy", "paging"):
        for ext in ("png", "svg"):
            p = os.path.join(out, "%s-%s.%s" % (name, kind, ext))
            check(p in files and os.path.getsize(p) > 1000, "%s not written" % p)
    with open(os.path.join(out, name + "-data.json")) as f:
        return json.load(f)


def timeline(path, data, facts):
    tl = data["timeline"]
    check(set(tl["rows"]) == facts.ids and len(tl["rows"]) == len(facts.ids),
          "%s: rows %d, the trace knows %d allocations" % (path, len(tl["rows"]),
                                                           len(facts.ids)))
    marks = len(tl["victims"]) + len(tl["requests"])
    check(marks == facts.evictions, "%s: %d eviction marks, %d evictions in the trace"
          % (path, marks, facts.evictions))
    for i, spans in tl["spans"].items():
        last = 0
        for s, e, seg in spans:
            check(seg in (1, 2, 3), "%s: id %s drawn in segment %d" % (path, i, seg))
            check(last <= s <= e, "%s: id %s: spans overlap or run backwards" % (path, i))
            last = e


def occupancy(path, data, facts):
    occ = data["occupancy"]
    for seg, (size, reserved) in facts.segs.items():
        if str(seg) not in occ:
            continue
        steps = occ[str(seg)]["steps"]
        top = max(v for _, v in steps)
        check(0 <= min(v for _, v in steps) and top <= size - reserved,
              "%s: segment %d drawn at %d bytes, room %d" % (path, seg, top, size - reserved))
        for snap in facts.snaps:
            used, res = snap["segs"].get(seg, (0, 0))
            shown = at(steps, snap["t"])
            check(shown == used - res,
                  "%s: segment %d at the snapshot of event %d: drawn %d, the kernel's books %d"
                  % (path, seg, snap["t"], shown, used - res))


def paging(path, data, facts):
    pg = data["paging"]
    r = subprocess.run([REPLAY, "--csv", path], capture_output=True, text=True, check=False)
    csv = [line.split(",") for line in r.stdout.splitlines()]
    pol = {p[1]: (int(p[2]), int(p[3])) for p in csv if p[0] == "policy"}
    drawn = {p["name"]: (p["in"], p["out"]) for p in pg["policies"]}
    check(drawn == pol, "%s: bars %s, qgpu-replay %s" % (path, drawn, pol))
    b, e = facts.snaps[0]["counters"], facts.snaps[-1]["counters"]
    kin = sum(num(e[k]) - num(b[k]) for k in ("to_vram", "filled"))
    kout = num(e["from_vram"]) - num(b["from_vram"])
    # a run that changed policy is no one policy's bar
    check(pg["kernel"] in drawn and
          (facts.policy_changes or drawn[pg["kernel"]] == (kin, kout)),
          "%s: the kernel's policy %s drawn at %s, its counters (%d, %d)"
          % (path, pg["kernel"], drawn.get(pg["kernel"]), kin, kout))
    check(all(pg["bound"]["min"]["in"] <= v[0] for v in drawn.values()),
          "%s: the bound is drawn above a bar" % path)
    check("oracle" in pg["bound"] and "fnu" in pg["bound"], "%s: no oracle or fnu line" % path)
    bounds = {p[1]: int(p[2]) for p in csv if p[0] == "bound"}
    check("min-pooled" in pg["bound"] and
          pg["bound"]["min-pooled"]["in"] == bounds.get("min-pooled") and
          pg["bound"]["min-pooled"]["in"] <= pg["bound"]["min"]["in"],
          "%s: pooled MIN drawn at %s, qgpu-replay %s, MIN %s"
          % (path, pg["bound"].get("min-pooled"), bounds.get("min-pooled"),
             pg["bound"]["min"]["in"]))


def replay_log(path, data, facts):
    """qgpu-replay --log: refused without --check (exit 2, no file);
    with it, one line per move of the kernel's, the trace's own moves in
    order (allocation, from, to, offset)."""
    with tempfile.TemporaryDirectory() as d:
        log = os.path.join(d, "moves")
        r = subprocess.run([REPLAY, "--log", log, path], capture_output=True, text=True)
        check(r.returncode == 2 and not os.path.exists(log),
              "%s: --log without --check: exit %d, file %s" % (path, r.returncode,
                                                              os.path.exists(log)))
        r = subprocess.run([REPLAY, "--check", "--log", log, path], capture_output=True,
                           text=True)
        check(r.returncode == 0, "%s: --check --log: exit %d" % (path, r.returncode))
        with open(log) as f:
            got = [fields(line.split()) for line in f]
    want = []
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) > 1 and parts[1] == "move":
                want.append(fields(parts))
    keys = ("id", "from", "to", "offset")
    check([tuple(m[k] for k in keys) for m in got] ==
          [tuple(m[k] for k in keys) for m in want],
          "%s: the log's %d moves are not the trace's %d" % (path, len(got), len(want)))


SUBTESTS = [("suite-timeline", timeline), ("suite-occupancy", occupancy),
            ("suite-paging", paging), ("replay-log-moves", replay_log)]


def main():
    only = None
    if len(sys.argv) == 3 and sys.argv[1] == "--run-subtest":
        only = sys.argv[2]
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("Test requirement not met: Debian's python3-matplotlib")
        return 77
    traces = sorted(os.path.join(TRACES, f) for f in os.listdir(TRACES) if f.endswith(".qtr"))
    failed = False
    with tempfile.TemporaryDirectory() as out:
        drawn = {}
        for name, fn in SUBTESTS:
            if only and only != name:
                continue
            print("Starting subtest: %s" % name, flush=True)
            t0 = time.monotonic()
            try:
                check(traces and os.path.exists(REPLAY), "no traces or no qgpu-replay")
                for path in traces:
                    if path not in drawn:
                        drawn[path] = (draw(path, out), Facts(path))
                    fn(path, *drawn[path])
                status = "SUCCESS"
            except AssertionError as e:
                print(str(e), flush=True)
                status = "FAIL"
                failed = True
            print("Subtest %s: %s (%.3fs)" % (name, status, time.monotonic() - t0), flush=True)
    return 98 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
