#!/usr/bin/env python3
"""The README's example output, checked against what the commands print now.

    readme_examples.py README.md BINDIR MPIEXEC [MPIEXEC FLAGS ...]

Every fenced block right after a line <!-- example: checked --> is a
transcript: lines "$ COMMAND" (a trailing backslash continues one), each
followed by the output lines the README shows.  The test runs each command
from the README's folder (build/bin/ replaced by BINDIR, mpiexec by
MPIEXEC and its flags) and every shown line must be one the command printed
(stdout or stderr), compared up to " | ": what follows it on a line is
wall time, and so are the "phases (max over ranks)" and "summary (" lines,
which are not compared.  A line "..." stands for lines left out.
"""
import argparse
import os
import re
import subprocess
import sys

MARKER = "<!-- example: checked -->"
TIMES = re.compile(r"phases \(max over ranks\)|summary \(")


def transcripts(readme):
    """[(command, [shown line, ...]), ...] of the marked blocks."""
    lines = open(readme).read().split("\n")
    out = []
    for i, line in enumerate(lines):
        if line.strip() != MARKER:
            continue
        if i + 1 >= len(lines) or not lines[i + 1].startswith("```"):
            sys.exit("readme_examples.py: %s line %d: %s is not followed by a fenced block" % (readme, i + 1, MARKER))
        k = i + 2
        cmd = None
        while k < len(lines) and not lines[k].startswith("```"):
            text = lines[k]
            if text.startswith("$ "):
                cmd = text[2:]
                while cmd.endswith("\\"):
                    k += 1
                    cmd = cmd[:-1] + lines[k].strip()
                out.append((cmd, []))
            elif cmd is None:
                sys.exit("readme_examples.py: %s line %d: a checked block begins with '$ COMMAND'" % (readme, k + 1))
            elif text.strip() and text.strip() != "...":
                out[-1][1].append(text)
            k += 1
    return out


def compared(line):
    return line.split(" | ")[0].rstrip()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("readme")
    ap.add_argument("bindir")
    ap.add_argument("mpiexec", nargs=argparse.REMAINDER, help="the MPI launcher and its flags")
    a = ap.parse_args()
    examples = transcripts(a.readme)
    if not examples:
        sys.exit("readme_examples.py: %s has no block marked %s" % (a.readme, MARKER))
    bad = 0
    for cmd, shown in examples:
        words = cmd.split()
        words = [w.replace("build/bin/", a.bindir.rstrip("/") + "/") for w in words]
        if words[0] == "mpiexec":
            words = a.mpiexec + words[1:]
        p = subprocess.run(words, cwd=os.path.dirname(os.path.abspath(a.readme)), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        printed = {compared(x) for x in p.stdout.split("\n")}
        missing = [s for s in shown if not TIMES.search(s) and compared(s) not in printed]
        print("%s: %d lines shown, %s" % (cmd, len(shown), "all printed" if not missing else "%d not printed" % len(missing)))
        for s in missing:
            print("  README:  %s" % s)
        if missing:
            bad += 1
            print("  printed:\n    " + "\n    ".join(p.stdout.rstrip().split("\n")[-8:]))
    if bad:
        print("FAILED: %d of %d README examples print something else" % (bad, len(examples)))
        return 1
    print("README examples check passed (%d commands)" % len(examples))
    return 0


if __name__ == "__main__":
    sys.exit(main())
