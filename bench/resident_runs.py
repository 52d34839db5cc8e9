#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# resident_runs.py: which pages of a process's anonymous memory are resident now, for
# mmap_sites.sh to say what of each table is resident (smaps says it per mapping of the kernel's,
# and the kernel merges glibc's adjacent blocks into one). Prints the time (CLOCK_MONOTONIC, the
# clock rss.sh records the mmap calls by), then each run of resident pages as "START_HEX PAGES".
# Reads /proc/PID/maps and /proc/PID/pagemap (root: a page's present bit, 63, or swapped, 62).
# Usage: bench/resident_runs.py PID >FILE
import os
import struct
import sys
import time

pid = int(sys.argv[1])
page = os.sysconf("SC_PAGE_SIZE")
out = ["time %.6f" % time.monotonic()]
with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/pagemap", "rb") as pm:
    for line in maps:
        f = line.split()
        # anonymous and writable: glibc's heap and its blocks of their own (no path, or [heap])
        if len(f) > 5 and f[5] != "[heap]":
            continue
        if not f[1].startswith("rw"):
            continue
        lo, hi = (int(x, 16) for x in f[0].split("-"))
        n = (hi - lo) // page
        pm.seek(lo // page * 8)
        data = pm.read(n * 8)
        start = None
        for i, (v,) in enumerate(struct.iter_unpack("<Q", data)):
            present = (v >> 63) & 1 or (v >> 62) & 1
            if present and start is None:
                start = i
            elif not present and start is not None:
                out.append("%x %d" % (lo + start * page, i - start))
                start = None
        if start is not None:
            out.append("%x %d" % (lo + start * page, len(data) // 8 - start))
print("\n".join(out))
