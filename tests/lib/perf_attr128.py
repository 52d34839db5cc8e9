#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""perf_attr128.py IN OUT: a perf.data file (file mode) whose attributes are larger than 128
bytes (perf 6.3 and later write 136, perf 6.14 and later 144) rewritten with 128-byte attributes,
so that Debian's perf 6.1, which refuses them ("file uses a more recent and unsupported ABI"),
reads it as the reference of perf_data_counts.sh. The fields past 128 bytes (config3 and later)
must be zero: a file that uses them is refused. A file whose attributes are 128 bytes or less is
copied as it is. etwtop reads both forms; only perf 6.1 needs this.

Sweep a folder of such files: put the rewritten copies in DIR/perf and run
ETWTOP=build/src/etwtop ETWTOP_SAMPLES=DIR bash tests/shell/perf_data_counts.sh."""
import struct
import sys


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    src, dst = sys.argv[1], sys.argv[2]
    b = bytearray(open(src, "rb").read())
    if b[:8] != b"PERFILE2" or len(b) < 104:
        sys.exit(f"{src}: not a perf.data file in file mode")
    attr_size = struct.unpack_from("<Q", b, 16)[0]  # the attr and its ids' file section
    aoff, asz = struct.unpack_from("<QQ", b, 24)
    size = attr_size - 16
    if size <= 128:
        open(dst, "wb").write(b)
        return
    if attr_size == 0 or aoff + asz > len(b) or asz % attr_size:
        sys.exit(f"{src}: the attrs section at byte {aoff} does not hold whole attributes")
    out = bytearray()
    for i in range(asz // attr_size):
        e = b[aoff + i * attr_size: aoff + (i + 1) * attr_size]
        attr, ids = bytearray(e[:size]), e[size:]
        if any(attr[128:]):
            sys.exit(f"{src}: attribute {i} uses fields past 128 bytes: {attr[128:].hex()}")
        attr = attr[:128]
        struct.pack_into("<I", attr, 4, 128)
        out += attr + ids
    b[aoff:aoff + len(out)] = out
    b[aoff + len(out):aoff + asz] = bytes(asz - len(out))
    struct.pack_into("<Q", b, 16, 128 + 16)
    struct.pack_into("<QQ", b, 24, aoff, len(out))
    open(dst, "wb").write(b)


if __name__ == "__main__":
    main()
