#!/usr/bin/env python3
"""An option given with an empty value ends in one error line.

usage: empty_value_check.py OPTION REGEX -- COMMAND...

Runs COMMAND OPTION '' (the empty argument a shell passes for -t_final '',
which CMake's lists cannot hold) and checks a non-zero exit and exactly
one output line holding "error:", matching REGEX.  Prints the line and
"empty value check passed", or what differed and exit 1."""
import re
import subprocess
import sys


def main(argv):
    if "--" not in argv or argv.index("--") != 3:
        print(__doc__)
        return 2
    option, regex, cmd = argv[1], argv[2], argv[4:]
    run = subprocess.run(cmd + [option, ""], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
    errors = [l for l in run.stdout.splitlines() if "error:" in l]
    print("exit %d, error lines: %s" % (run.returncode, errors))
    ok = run.returncode != 0 and len(errors) == 1 and re.search(regex, errors[0])
    print("empty value check %s" % ("passed" if ok else "failed"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
