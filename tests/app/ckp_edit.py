#!/usr/bin/env python3
"""Edit one entry of a checkpoint's state record as a writer's bug or a
hand would, its checksums made to match again (so that only the restart's
checks of the contents can catch it):

  ckp_edit.py PREFIX NAME INT[,INT...]

An integer entry takes the one value, a byte entry (cycle.rank_cells) the
values as 8-byte integers.  The state file and the manifest's checksums
of it are rewritten in place (src/app/FORMATS.md: the checkpoint)."""
import re
import struct
import sys
import zlib


def entries(buf):
    """(name, type, value offset, value length) of every entry."""
    assert buf[:8] == b"AMRDLBST", "not a state record"
    count, o, out = struct.unpack_from("<I", buf, 12)[0], 16, []
    for _ in range(count):
        nl = struct.unpack_from("<I", buf, o)[0]
        name = buf[o + 4:o + 4 + nl].decode()
        o += 4 + nl
        typ, vl = struct.unpack_from("<IQ", buf, o)
        out.append((name, typ, o + 12, vl, o))
        o += 12 + vl
    return out


def edit(prefix, name, values):
    manifest = open(prefix + ".manifest").read()
    seq = int(re.search(r"^sequence (\d+)$", manifest, re.M).group(1))
    path = "%s.%d.state" % (prefix, seq)
    buf = bytearray(open(path, "rb").read())
    e = next(e for e in entries(buf) if e[0] == name)
    _, typ, at, vl, head = e
    value = struct.pack("<%dq" % len(values), *values)
    if typ == 1:
        assert len(values) == 1, "an integer entry takes one value"
    else:
        struct.pack_into("<Q", buf, head + 4, len(value))
    buf[at:at + vl] = value
    open(path, "wb").write(bytes(buf))
    # the state's line of the manifest: size, block, blocks, then checksums
    m = re.search(r"^file state (\d+) (\d+) (\d+)(( [0-9a-f]{8})*)$", manifest, re.M)
    block = int(m.group(2))
    crcs = ["%08x" % zlib.crc32(bytes(buf[k:k + block])) for k in range(0, len(buf), block)]
    line = "file state %d %d %d %s" % (len(buf), block, len(crcs), " ".join(crcs))
    manifest = manifest[:m.start()] + line + manifest[m.end():]
    body = manifest[:manifest.rindex("crc32 ")]
    open(prefix + ".manifest", "w").write(body + "crc32 %08x\n" % zlib.crc32(body.encode()))


if __name__ == "__main__":
    edit(sys.argv[1], sys.argv[2], [int(v) for v in sys.argv[3].split(",")])
