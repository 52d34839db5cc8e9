#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# dlopen.sh: what loading each library etwtop loads at its first use costs (util/dl_lazy.h):
# expat (a trace's EventSource manifests; libxml2, which read them before, beside it),
# capstone (annotate), libcurl (symbol servers),
# libdeflate (compressed DWARF), libLLVM (a PDB's C++ names), each loaded by a new process of
# its own as etwtop's first use does, with RTLD_NOW (every function of it and of what it needs
# bound at the load) and with RTLD_LAZY (bound at their first call, as a linked library's are:
# what dl_open_lazy does). Prints the mean of RUNS processes a mode, the modes alternated.
# Usage: [RUNS=9] bench/dlopen.sh   (needs a C compiler; a library not installed is skipped)
set -euo pipefail
runs=${RUNS:-9}
cc=${CC:-cc}
command -v "$cc" >/dev/null || {
        echo "dlopen.sh: no C compiler ($cc)" >&2
        exit 1
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/load.c" <<'C'
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
int main(int argc, char **argv)
{
        struct timespec a, b;
        if (argc != 3)
                return 2;
        int mode = strcmp(argv[1], "lazy") == 0 ? RTLD_LAZY : RTLD_NOW;
        clock_gettime(CLOCK_MONOTONIC, &a);
        void *h = dlopen(argv[2], mode | RTLD_LOCAL);
        clock_gettime(CLOCK_MONOTONIC, &b);
        if (!h)
                return 1;
        printf("%.3f\n", (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6);
        return 0;
}
C
"$cc" -O2 -o "$tmp/load" "$tmp/load.c" -ldl
printf "%-20s %12s %12s %8s\n" library "RTLD_NOW ms" "RTLD_LAZY ms" "lazy/now"
for lib in libexpat.so.1 libxml2.so.2 libcapstone.so.4 libcurl.so.4 libdeflate.so.0 libLLVM-14.so.1 libLLVM-15.so.1; do
        "$tmp/load" now "$lib" >/dev/null 2>&1 || continue
        now=0 lazy=0
        for ((i = 0; i < runs; i++)); do
                now=$(awk -v s="$now" -v t="$("$tmp/load" now "$lib")" 'BEGIN { print s + t }')
                lazy=$(awk -v s="$lazy" -v t="$("$tmp/load" lazy "$lib")" 'BEGIN { print s + t }')
        done
        awk -v l="$lib" -v a="$now" -v b="$lazy" -v n="$runs" \
                'BEGIN { printf "%-20s %12.2f %12.2f %8.2f\n", l, a / n, b / n, b / a }'
done
