#!/usr/bin/env python3
"""Take files out of a guest's console log.

usage: scripts/vm-fetch.py LOG... -o DIR

The guest prints a file with `qgpu-trace cat FILE`:

    @@QGPU-FILE-BEGIN NAME@@
    @@ first line
    @@ ...
    @@QGPU-FILE-END lines=N bytes=M@@

Each such block is written to DIR/NAME, after checking its line and byte
counts (a console line the kernel wrote between two lines of the block is
skipped; one it wrote into the middle of a line, "[  12.345678] ...", is
taken out again when the counts say so; anything else that makes the
counts differ has the file refused). Prints the path of each file
written; exits 1 if a block was incomplete or damaged, or none was found.
"""
import argparse
import os
import re
import sys

BEGIN = re.compile(r"@@QGPU-FILE-BEGIN (\S+)@@")
END = re.compile(r"@@QGPU-FILE-END lines=(\d+) bytes=(\d+)@@")
KMSG = re.compile(r"\[ *\d+\.\d+\] .*$")


def fetch(logs, outdir):
    got, bad = [], 0
    for log in logs:
        name, lines = None, []
        with open(log, "rb") as f:
            for raw in f:
                line = raw.decode("utf-8", "replace").rstrip("\r\n")
                m = BEGIN.search(line)
                if m:
                    name, lines = os.path.basename(m.group(1)), []
                    continue
                if name is None:
                    continue
                m = END.search(line)
                if m:
                    data = "".join(l + "\n" for l in lines)
                    if len(lines) == int(m.group(1)) and len(data.encode()) != int(m.group(2)):
                        # a kernel message printed into the middle of a line
                        data = "".join(KMSG.sub("", l) + "\n" for l in lines)
                    if len(lines) != int(m.group(1)) or len(data.encode()) != int(m.group(2)):
                        print("%s: %s: damaged on the console (%d lines, %d bytes; %s expected)"
                              % (log, name, len(lines), len(data.encode()), m.group(0)), file=sys.stderr)
                        bad += 1
                    else:
                        path = os.path.join(outdir, name)
                        with open(path, "w") as o:
                            o.write(data)
                        got.append(path)
                        print(path)
                    name = None
                    continue
                if line.startswith("@@ "):
                    lines.append(line[3:])
                elif line == "@@":
                    lines.append("")
        if name is not None:
            print("%s: %s: no end marker" % (log, name), file=sys.stderr)
            bad += 1
    return got, bad


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("logs", nargs="+")
    ap.add_argument("-o", "--out", required=True)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    got, bad = fetch(a.logs, a.out)
    return 1 if bad or not got else 0


if __name__ == "__main__":
    sys.exit(main())
