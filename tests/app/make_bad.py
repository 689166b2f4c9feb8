#!/usr/bin/env python3
"""Damaged copies of the checkpoint set DIR/good (one checkpoint of
sequence 1) for the bad-input tests of -restart:
  DIR/truncated  the forest file cut in half
  DIR/corrupted  one byte of the state file changed
  DIR/noforest   the forest file missing
  DIR/version    the manifest of format version 1 (before the ranks file)
(DIR/none has no files at all).  With --clean first: an empty DIR for
the run that writes DIR/good.  For the outputs a restart continues and
those that cannot be written:
  DIR/out.trace   the trace of the run of checkpoint DIR/out, cut in half
  DIR/cut.jsonl   its report, cut inside the record of cycle 1
  DIR/vtkfull/o_0000/o_0000_0000.vtu, DIR/devfull.1.forest   links to /dev/full"""
import os
import shutil
import sys

d = sys.argv[-1]
if sys.argv[1] == "--clean":
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    sys.exit(0)
good = os.path.join(d, "good")
files = {"manifest": good + ".manifest", "forest": good + ".1.forest", "state": good + ".1.state", "ranks": good + ".1.ranks"}
for f in files.values():
    if not os.path.exists(f):
        sys.exit("missing %s: the fixture run did not write checkpoint 1" % f)


def copy(name):
    p = os.path.join(d, name)
    shutil.copy(files["manifest"], p + ".manifest")
    shutil.copy(files["forest"], p + ".1.forest")
    shutil.copy(files["state"], p + ".1.state")
    shutil.copy(files["ranks"], p + ".1.ranks")
    return p


p = copy("truncated")
data = open(p + ".1.forest", "rb").read()
open(p + ".1.forest", "wb").write(data[: len(data) // 2])
p = copy("corrupted")
data = bytearray(open(p + ".1.state", "rb").read())
data[len(data) // 2] ^= 0x10
open(p + ".1.state", "wb").write(bytes(data))
p = copy("noforest")
os.remove(p + ".1.forest")
p = copy("version")
text = open(p + ".manifest").read()
open(p + ".manifest", "w").write(text.replace("amrdlb-checkpoint 2\n", "amrdlb-checkpoint 1\n", 1))
trace = os.path.join(d, "out.trace")
data = open(trace, "rb").read()
open(trace, "wb").write(data[: len(data) // 2])
text = open(os.path.join(d, "out.jsonl")).read()
cut = text.index('"cycle":1')
open(os.path.join(d, "cut.jsonl"), "w").write(text[: cut + 20])
os.makedirs(os.path.join(d, "vtkfull", "o_0000"), exist_ok=True)
for link in (os.path.join(d, "vtkfull", "o_0000", "o_0000_0000.vtu"), os.path.join(d, "devfull.1.forest")):
    if not os.path.islink(link):
        os.symlink("/dev/full", link)
print("damaged copies of %s written" % good)
