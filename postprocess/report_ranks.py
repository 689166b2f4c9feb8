"""The per-rank values of amr2d/amr3d reports: the one reader of the side file.

A report record (one JSON line per cycle) carries each per-rank quantity's
reductions, "key": {"min", "mean", "max", "argmax"}; every rank's own value
is in the record's block of the side file REPORT.ranks, named by the
record's "ranks_file" and "ranks_offset" (src/app/FORMATS.md, "The per-rank
side file").  A block is a 64-byte header, a table of its fields (name,
numpy type) and one row per rank:

    import report_ranks
    recs = report_ranks.records("run.jsonl")          # each with rec["per_rank"]
    recs[0]["per_rank"]["rank_time"]                  # numpy array, one per rank
    recs[0]["per_rank"]["phases.solve.own_cpu"]

A field of a nested object is named by its path ("phases.NAME.KEY").
As a program it prints one record's per-rank values, a line per field:

    python3 postprocess/report_ranks.py REPORT.jsonl [CYCLE]
"""
import argparse
import json
import os
import sys

import numpy as np

HEADER = np.dtype([("magic", "S8"), ("version", "<i4"), ("nfields", "<i4"), ("cycle", "<i8"), ("ranks", "<i8"),
                   ("bytes", "<i8"), ("run_id", "S8"), ("reserved", "V16")])
ENTRY = np.dtype([("name", "S56"), ("type", "S8")])


def block(path, offset):
    """The block at offset of the side file path: (header, {field: array over ranks})."""
    with open(path, "rb") as f:
        f.seek(offset)
        raw = f.read(HEADER.itemsize)
        if len(raw) < HEADER.itemsize:
            raise ValueError("%s: no block at offset %d (the file has %d bytes)" % (path, offset, os.path.getsize(path)))
        head = np.frombuffer(raw, HEADER)[0]
        if head["magic"] != b"AMRRANKS" or head["version"] != 1:
            raise ValueError("%s: no block at offset %d (magic %r, version %d)" % (path, offset, head["magic"], head["version"]))
        table = np.frombuffer(f.read(ENTRY.itemsize * int(head["nfields"])), ENTRY)
        row = np.dtype([(e["name"].decode(), e["type"].decode()) for e in table])
        rows = np.frombuffer(f.read(row.itemsize * int(head["ranks"])), row, count=int(head["ranks"]))
    return head, {name: rows[name] for name in row.names}


def of_record(rec, report):
    """The per-rank arrays of record rec of the report file report ({} when it names no block)."""
    if rec.get("ranks_file") is None:
        return {}
    head, fields = block(os.path.join(os.path.dirname(report), rec["ranks_file"]), rec["ranks_offset"])
    if head["cycle"] != rec["cycle"] or head["ranks"] != rec["ranks"] or head["run_id"].decode() != rec["run_id"]:
        raise ValueError("%s: the block at %d is of cycle %d, %d ranks, run %s; the record of cycle %d, %d ranks, run %s"
                         % (rec["ranks_file"], rec["ranks_offset"], head["cycle"], head["ranks"], head["run_id"].decode(),
                            rec["cycle"], rec["ranks"], rec["run_id"]))
    return fields


def values(rec, name):
    """The per-rank values of rec's field name (its side-file name, e.g.
    "phases.solve.own_cpu") as a list, one per rank; None when its block
    has no such field (the record's is null)."""
    a = rec["per_rank"].get(name)
    return None if a is None else a.tolist()


def records(report):
    """The report's records, each with "per_rank": its per-rank arrays."""
    with open(report) as f:
        recs = [json.loads(line) for line in f if line.strip()]
    for r in recs:
        r["per_rank"] = of_record(r, report)
    return recs


def write_block(f, cycle, run_id, ranks, fields):
    """Append a block to the side file open as f, as the app writes it (for
    made-up reports): fields {name: values, one per rank}, integers as
    int64, the rest float64.  Returns its offset, the record's ranks_offset."""
    row = np.dtype([(k, "<i8" if np.asarray(v).dtype.kind in "iu" else "<f8") for k, v in fields.items()])
    table = np.zeros(len(fields), ENTRY)
    table["name"] = [k.encode() for k in row.names]
    table["type"] = [row.fields[k][0].str.encode() for k in row.names]
    rows = np.zeros(ranks, row)
    for k, v in fields.items():
        rows[k] = v
    head = np.zeros(1, HEADER)
    head[0] = (b"AMRRANKS", 1, len(fields), cycle, ranks, HEADER.itemsize + table.nbytes + rows.nbytes, run_id.encode(), b"")
    at = f.tell()
    f.write(head.tobytes() + table.tobytes() + rows.tobytes())
    return at


def main(argv):
    ap = argparse.ArgumentParser(description="Print a report record's per-rank values from its side file, one line per field.")
    ap.add_argument("report", help="the report, REPORT.jsonl (its side file REPORT.jsonl.ranks beside it)")
    ap.add_argument("cycle", type=int, nargs="?", help="the record's cycle (default: the last)")
    a = ap.parse_args(argv)
    recs = records(a.report)
    rec = recs[-1] if a.cycle is None else next((r for r in recs if r["cycle"] == a.cycle), None)
    if rec is None or not rec["per_rank"]:
        sys.exit("report_ranks.py: %s: no record%s with a side-file block" % (a.report, "" if a.cycle is None else " of cycle %d" % a.cycle))
    for name, v in rec["per_rank"].items():
        print("%-32s %s" % (name, " ".join("%.6g" % x for x in v)))


if __name__ == "__main__":
    main(sys.argv[1:])
