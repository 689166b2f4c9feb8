#!/usr/bin/env python3
"""Edit one entry of a checkpoint's state record as a writer's bug or a
hand would, its checksums made to match again (so that only the restart's
checks of the contents can catch it):

  ckp_edit.py PREFIX NAME INT[,INT...] [RANK]

Without RANK the entry is in the shared record (PREFIX.S.state), with it
in that rank's own part of PREFIX.S.ranks (cycle.cells, lb.phase_expect).
An integer entry takes the one value, a byte entry the values as 8-byte
integers.  The file, its checksums (the manifest's of the state file; the
part's index entry in the ranks file, the later parts' offsets and the
manifest's size of it) are rewritten in place (src/app/FORMATS.md: the
checkpoint)."""
import re
import struct
import sys
import zlib

HEAD, ENTRY = 24, 24  # the ranks file's header and index entry


def entries(buf):
    """(name, type, value offset, value length, entry offset) of every entry."""
    assert buf[:8] == b"AMRDLBST", "not a state record"
    count, o, out = struct.unpack_from("<I", buf, 12)[0], 16, []
    for _ in range(count):
        nl = struct.unpack_from("<I", buf, o)[0]
        name = buf[o + 4:o + 4 + nl].decode()
        head = o + 4 + nl
        typ, vl = struct.unpack_from("<IQ", buf, head)
        out.append((name, typ, head + 12, vl, head))
        o = head + 12 + vl
    return out


def edited(record, name, values):
    """The record's bytes with entry name set to values."""
    buf = bytearray(record)
    _, typ, at, vl, head = next(e for e in entries(buf) if e[0] == name)
    value = struct.pack("<%dq" % len(values), *values)
    if typ == 1:
        assert len(values) == 1, "an integer entry takes one value"
    else:
        struct.pack_into("<Q", buf, head + 4, len(value))
    buf[at:at + vl] = value
    return bytes(buf)


def index_entry(off, n, crc):
    e = struct.pack("<QQI", off, n, crc)
    return e + struct.pack("<I", zlib.crc32(e))


def edit_part(path, rank, name, values):
    """Rank's part of the ranks file at path edited; the file's new size."""
    buf = open(path, "rb").read()
    assert buf[:8] == b"AMRDLBRK", "not a checkpoint's ranks file"
    parts = struct.unpack_from("<Q", buf, 16)[0]
    index = [struct.unpack_from("<QQ", buf, HEAD + ENTRY * r) for r in range(parts)]
    records = [buf[o:o + n] for o, n in index]
    records[rank] = edited(records[rank], name, values)
    out, off = bytearray(buf[:HEAD]), HEAD + ENTRY * parts
    for rec in records:
        out += index_entry(off, len(rec), zlib.crc32(rec))
        off += len(rec)
    out += b"".join(records)
    open(path, "wb").write(bytes(out))
    return len(out)


def edit(prefix, name, values, rank=None):
    manifest = open(prefix + ".manifest").read()
    seq = int(re.search(r"^sequence (\d+)$", manifest, re.M).group(1))
    if rank is None:
        path = "%s.%d.state" % (prefix, seq)
        buf = edited(open(path, "rb").read(), name, values)
        open(path, "wb").write(buf)
        # the state's line of the manifest: size, block, blocks, then checksums
        m = re.search(r"^file state (\d+) (\d+) (\d+)(( [0-9a-f]{8})*)$", manifest, re.M)
        block = int(m.group(2))
        crcs = ["%08x" % zlib.crc32(buf[k:k + block]) for k in range(0, len(buf), block)]
        line = "file state %d %d %d %s" % (len(buf), block, len(crcs), " ".join(crcs))
    else:
        size = edit_part("%s.%d.ranks" % (prefix, seq), rank, name, values)
        m = re.search(r"^file ranks (\d+) (\d+)$", manifest, re.M)
        line = "file ranks %d %s" % (size, m.group(2))
    manifest = manifest[:m.start()] + line + manifest[m.end():]
    body = manifest[:manifest.rindex("crc32 ")]
    open(prefix + ".manifest", "w").write(body + "crc32 %08x\n" % zlib.crc32(body.encode()))


if __name__ == "__main__":
    edit(sys.argv[1], sys.argv[2], [int(v) for v in sys.argv[3].split(",")], int(sys.argv[4]) if len(sys.argv) > 4 else None)
