#!/usr/bin/env python3
"""Checks a p4est VTK output as ParaView reads it: the .pvtu is well-formed
XML naming one .vtu per rank, every piece parses, the pieces hold the
expected total number of cells, and the named cell fields are present.
Usage: check_vtk.py PREFIX.pvtu NCELLS FIELD..."""
import os
import sys
import xml.etree.ElementTree as ET

pvtu, want, fields = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
root = ET.parse(pvtu).getroot()
pieces = [p.get("Source") for p in root.iter("Piece")]
assert pieces, "no pieces in %s" % pvtu
total = 0
for src in pieces:
    piece = ET.parse(os.path.join(os.path.dirname(pvtu), src)).getroot().find(".//Piece")
    total += int(piece.get("NumberOfCells"))
    names = {a.get("Name") for a in piece.find("CellData")}
    missing = set(fields) - names
    assert not missing, "%s lacks cell fields %s (has %s)" % (src, missing, names)
assert total == want, "%s: %d cells, expected %d" % (pvtu, total, want)
print("%s: %d pieces, %d cells, fields %s" % (pvtu, len(pieces), total, " ".join(fields)))
