#!/usr/bin/python3
"""calls_check.py NM LIB...: no two object files of a static library call
each other (src/README.md, "One cycle": each of the app's files calls the
files below it and none calls back, so a file can be read, and replaced,
with only what it calls in mind).

For every pair of members A, B of each library: fail when A uses a symbol
B defines and B uses one A defines.  Prints the calls between files it
found, so that a library whose members no longer link to each other (a
broken nm, an empty archive) fails too."""
import collections
import subprocess
import sys


def members(nm, lib):
    """{member: (defined symbols, undefined symbols)} of a static library."""
    out = subprocess.run([nm, "-A", lib], check=True, capture_output=True, text=True).stdout
    found = collections.defaultdict(lambda: (set(), set()))
    for line in out.splitlines():
        # "lib.a:member.o:0000 T name" or "lib.a:member.o:         U name"
        head, _, rest = line.rpartition(":")
        parts = rest.split()
        if len(parts) < 2:
            continue
        member = head.rsplit(":", 1)[-1]
        kind, name = parts[-2], parts[-1]
        if kind == "U":
            found[member][1].add(name)
        elif kind in "TDRBC":
            found[member][0].add(name)
    return found


def main():
    nm, libs = sys.argv[1], sys.argv[2:]
    bad, calls, files = [], 0, 0
    for lib in libs:
        m = members(nm, lib)
        files += len(m)
        uses = {a: {b for b in m if b != a and m[a][1] & m[b][0]} for a in m}
        calls += sum(len(u) for u in uses.values())
        for a in sorted(m):
            for b in sorted(uses[a]):
                if a < b and a in uses[b]:
                    bad.append(f"{lib}: {a} -> {b} ({', '.join(sorted(m[a][1] & m[b][0]))}) and back "
                               f"({', '.join(sorted(m[b][1] & m[a][0]))})")
    for b in bad:
        print("calls both ways:", b)
    if bad or calls == 0:
        print(f"calls check failed: {len(bad)} pairs of files call each other, {calls} calls between files")
        return 1
    print(f"calls check passed: {files} files, {calls} calls between files, none both ways")
    return 0


if __name__ == "__main__":
    sys.exit(main())
