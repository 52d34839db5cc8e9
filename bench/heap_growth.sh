#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# heap_growth.sh: what a process tracked by heaptrack allocated and still held when it ended,
# by the code that asked for it: the three innermost frames of etwtop's own above the allocator
# and its wrappers (xmalloc, xrealloc, ...), largest first, in MB. Attached to a running screen
# and the screen killed at the end (bench/rss.sh RSS_HEAP=SECONDS), that is what its heap grew
# by from the attach on, less what it gave back.
# usage: bench/heap_growth.sh HEAPTRACK_FILE [ROWS]   (ROWS: 20)
set -u
f=${1:?usage: heap_growth.sh HEAPTRACK_FILE [ROWS]}
rows=${2:-20}
command -v heaptrack_print >/dev/null || { echo "heap_growth: heaptrack_print not found (Debian: heaptrack)" >&2; exit 2; }
stacks=$(mktemp)
trap 'rm -f "$stacks"' EXIT
heaptrack_print -f "$f" --print-peaks 0 --print-allocators 0 --print-temporary 0 \
        --flamegraph-cost-type leaked -F "$stacks" >/dev/null 2>&1 ||
        { echo "heap_growth: heaptrack_print could not read $f" >&2; exit 1; }
# a line: frames from the root to the leaf, ';' between (a trailing one), a space, the bytes
awk -v rows="$rows" '
function clean(s) {
        sub(/ \(.*\)$/, "", s)
        gsub(/\.(lto_priv|isra|part|constprop|cold)\.[0-9]+/, "", s)
        return s
}
{
        bytes = $NF
        line = $0
        sub(/;? [0-9]+$/, "", line)
        n = split(line, f, ";")
        # the allocator and the wrappers that only pass a size on
        while (n > 0 && clean(f[n]) ~ /^(malloc|calloc|realloc|reallocarray|free|posix_memalign|aligned_alloc|memalign|strdup|strndup|x[a-z]*alloc[a-z]*|xstrn?dup|xmemdup|__libc_[a-z_]+|operator new.*)$/)
                n--
        site = ""
        for (k = 0; k < 3 && n - k >= 1; k++)
                site = site (k ? " < " : "") clean(f[n - k])
        if (site == "")
                site = "(no frame of its own)"
        by[site] += bytes
        total += bytes
}
END {
        if (!total) {
                print "    nothing held: the process freed all it allocated after the attach"
                exit
        }
        m = 0
        for (s in by) order[++m] = s
        for (i = 1; i <= m; i++)
                for (j = i + 1; j <= m; j++)
                        if (by[order[j]] > by[order[i]]) { t = order[i]; order[i] = order[j]; order[j] = t }
        for (i = 1; i <= m && i <= rows; i++)
                printf "%8.2f MB  %s\n", by[order[i]] / 1048576, order[i]
        for (i = rows + 1; i <= m; i++) rest += by[order[i]]
        if (m > rows)
                printf "%8.2f MB  (%d sites more)\n", rest / 1048576, m - rows
        printf "%8.2f MB  in all\n", total / 1048576
}' "$stacks"
