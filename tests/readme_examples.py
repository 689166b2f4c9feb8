#!/usr/bin/env python3
"""The README's and the guides' example output, checked against what the commands print now.

    readme_examples.py README.md [GUIDE.md ...] BINDIR MPIEXEC [MPIEXEC FLAGS ...]

The Markdown files come first (every argument ending in .md); the first is
the README at the top of the repository.  In each, every fenced block right
after a line <!-- example: checked --> is a transcript: lines "$ COMMAND"
(a trailing backslash continues one), each followed by the output lines the
file shows.  The test runs each command from the top of the repository, the
README's folder, whichever guide shows it (build/bin/ replaced by BINDIR,
mpiexec by MPIEXEC and its flags) and every shown line must be one the command printed
(stdout or stderr), compared up to " | ": what follows it on a line is
wall time, and so are the numbers of the "summary" lines, whose words
must match a printed line's (each number standing for any number).  A line "..." stands for lines left out.

Before running anything it checks the links of every file given: each
relative link [text](PATH) names an existing file or folder, and each
anchor (PATH#ANCHOR or #ANCHOR) is a heading of the Markdown file it
points into (GitHub's anchors: lower case, punctuation dropped, spaces as
hyphens).  At least one file must hold a checked example.
"""
import os
import re
import subprocess
import sys

MARKER = "<!-- example: checked -->"
TIMES = re.compile(r": summary: ")


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


LINK = re.compile(r"\]\(([^)\s]+)\)")


def anchors(path):
    """GitHub's anchors of the headings of a Markdown file (outside fences)."""
    out = set()
    fence = False
    for line in open(path).read().split("\n"):
        if line.startswith("```"):
            fence = not fence
        elif not fence and re.match(r"#+ ", line):
            text = line.lstrip("#").strip().lower()
            out.add(re.sub(r"[^\w\- ]", "", text).replace(" ", "-"))
    return out


def broken_links(path):
    """['line N: target (why)', ...] of the relative links of a Markdown file."""
    bad = []
    fence = False
    for n, line in enumerate(open(path).read().split("\n"), 1):
        if line.startswith("```"):
            fence = not fence
            continue
        if fence:
            continue
        for target in LINK.findall(line):
            if re.match(r"[a-z]+:", target):
                continue  # https:, mailto:
            name, _, anchor = target.partition("#")
            where = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(path)), name)) if name else os.path.abspath(path)
            if not os.path.exists(where):
                bad.append("line %d: %s (no such file)" % (n, target))
            elif anchor and where.endswith(".md") and anchor not in anchors(where):
                bad.append("line %d: %s (no heading with that anchor)" % (n, target))
    return bad


def compared(line):
    return line.split(" | ")[0].rstrip()


NUMBER = re.compile(r"(?<![A-Za-z0-9_.])-?[0-9]+(\.[0-9]+)?(e[-+]?[0-9]+)?")


def form(line):
    """A shown line of timings as a pattern: its words, any numbers."""
    parts = NUMBER.split(line)[::3]
    return re.compile("".join(re.escape(p) + ("-?[0-9.e+-]+" if i < len(parts) - 1 else "") for i, p in enumerate(parts)) + "$")


def main():
    args = sys.argv[1:]
    files = []
    while args and args[0].endswith(".md"):
        files.append(args.pop(0))
    if not files or not args:
        sys.exit("usage: readme_examples.py README.md [GUIDE.md ...] BINDIR MPIEXEC [MPIEXEC FLAGS ...]")
    bindir, mpiexec = args[0], args[1:]
    root = os.path.dirname(os.path.abspath(files[0]))
    links = 0
    for f in files:
        for b in broken_links(f):
            print("%s: broken link, %s" % (os.path.relpath(f, root), b))
            links += 1
    examples = []
    for f in files:
        mine = transcripts(f)
        print("%s: %d checked commands" % (os.path.relpath(f, root), len(mine)))
        examples += [(os.path.relpath(f, root), cmd, shown) for cmd, shown in mine]
    if not examples:
        sys.exit("readme_examples.py: no file holds a block marked %s" % MARKER)
    if links:
        print("FAILED: %d broken links" % links)
        return 1
    bad = 0
    for where, cmd, shown in examples:
        words = cmd.split()
        words = [w.replace("build/bin/", bindir.rstrip("/") + "/") for w in words]
        if words[0] == "mpiexec":
            words = mpiexec + words[1:]
        p = subprocess.run(words, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        printed = {compared(x) for x in p.stdout.split("\n")}
        missing = [s for s in shown if (compared(s) not in printed if not TIMES.search(s) else not any(form(s).match(x) for x in printed))]
        print("%s: %s: %d lines shown, %s" % (where, cmd, len(shown), "all printed" if not missing else "%d not printed" % len(missing)))
        for s in missing:
            print("  shown:   %s" % s)
        if missing:
            bad += 1
            print("  printed:\n    " + "\n    ".join(p.stdout.rstrip().split("\n")[-8:]))
    if bad:
        print("FAILED: %d of %d examples print something else" % (bad, len(examples)))
        return 1
    print("README examples check passed (%d commands in %d files, links of %d files)" % (len(examples), len([f for f in files if transcripts(f)]), len(files)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
