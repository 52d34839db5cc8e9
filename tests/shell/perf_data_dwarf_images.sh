#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# perf_data_dwarf_images.sh: a program recorded with DWARF stacks (perf record --call-graph
# dwarf; built without frame pointers, so that only its CFI walks it), its stacks walked by the
# replay through the program's file wherever it is now, as the symbols find it and as perf report
# does with --symfs or its build-id cache: at the recorded path; moved away, in a --symbol-path
# directory (not without it); rebuilt in place (another build-id), in perf's build-id cache, the
# copy perf record kept (not the new build). The replay's "Stack walk:" line counts the walks
# that reached the thread's start, and the program's entry is on as many stacks as perf report
# finds it. Skips without perf or a C compiler, or where perf cannot record here.
set -u
: "${ETWTOP:?}"
. "$(dirname "$0")/../lib/check.sh"
. "$(dirname "$0")/../lib/perf_rec.sh"
perf_test_start
perf_cc

build() { # VARIANT: main -> walk_outer -> walk_inner (spinning), each not inlined
        cat >"$tmp/walk.c" <<C
#include <stdlib.h>
volatile unsigned long sink;
__attribute__((noinline)) void walk_inner_$1(unsigned long n)
{
        for (unsigned long i = 0; i < n; i++)
                sink += i * $2;
}
__attribute__((noinline)) void walk_outer_$1(unsigned long n)
{
        walk_inner_$1(n);
        sink++;
}
int main(int argc, char **argv)
{
        walk_outer_$1(argc > 1 ? strtoul(argv[1], NULL, 10) : 200000000ul);
        return 0;
}
C
        "$cc" -O1 -g -fomit-frame-pointer -Wl,--build-id -o "$tmp/walk" "$tmp/walk.c" \
                2>"$tmp/cc.err"
}
# walked FILE: "N M", the user stacks walked and those that reached the thread's start
walked() {
        sed -n 's/^Stack walk: dwarf.*: \([0-9]*\) user stacks unwound: \([0-9]*\) to the thread start.*/\1 \2/p' "$1"
}
# total FILE NAME: the function's Total (samples on whose stacks it is)
total() {
        awk -v f="$2" '/^Hot functions/ {t++; next} t == 1 && $NF == f {print $4; exit}' "$1"
}

perf_home
unset PERF_BUILDID_DIR
if ! build one 3; then
        echo "SKIP: the program does not build: $(head -c 200 "$tmp/cc.err")"
        echo "0 passed, 0 failed, 1 skipped"
        exit 77
fi
PERF_RECORD_BUILDIDS=1 perf_record "$tmp/walk.data" "$tmp/rec.err" -e cpu-clock -F 1000 \
        --call-graph dwarf,16384 -- "$tmp/walk" ||
        { echo "SKIP: perf record cannot record here: $(head -c 200 "$tmp/rec.err")"
          echo "0 passed, 0 failed, 1 skipped"; exit 77; }
$perf_rec_mmap_ids && perf buildid-cache -a "$tmp/walk" 2>>"$tmp/rec.err"
# perf's samples with main on their stack (perf script walks the DWARF stacks too)
theirs=$(perf script -i "$tmp/walk.data" -F ip,sym 2>/dev/null |
        awk '/^$/ {if (m) n++; m = 0; next} $2 == "main" {m = 1} END {if (m) n++; print n + 0}')
replay() { # OUT [ARGS...]
        local out=$1
        shift
        "$ETWTOP" --replay "$tmp/walk.data" -b --top 100 "$@" >"$out" 2>"$out.err"
}

# at the recorded path
replay "$tmp/here.txt"
read -r n reached <<<"$(walked "$tmp/here.txt")"
check "recorded path: stacks walked (${n:-none})" [ "${n:-0}" -gt 10 ]
check "recorded path: every one to the thread's start ($reached of $n)" [ "${reached:-0}" = "$n" ]
check "recorded path: main on perf report's count of stacks ($(total "$tmp/here.txt" main), perf ${theirs:-?})" \
        [ "$(total "$tmp/here.txt" main)" = "$theirs" ]
check "recorded path: walk_outer_one on as many" \
        [ "$(total "$tmp/here.txt" walk_outer_one)" = "$(total "$tmp/here.txt" main)" ]

# moved away (and perf's cache of it too): the walks need the program's CFI, which
# --symbol-path finds
mkdir -p "$tmp/elsewhere"
mv "$tmp/walk" "$tmp/elsewhere/walk"
mv "$HOME/.debug" "$tmp/cache-aside"
replay "$tmp/gone.txt"
read -r n2 reached2 <<<"$(walked "$tmp/gone.txt")"
check "moved away, no --symbol-path: the walks cut ($reached2 of $n2 reached the start)" \
        [ "${reached2:-0}" -lt "${n2:-0}" ]
replay "$tmp/path.txt" --symbol-path "$tmp/elsewhere"
read -r n3 reached3 <<<"$(walked "$tmp/path.txt")"
check "moved away, --symbol-path DIR: every walk to the thread's start ($reached3 of $n3)" \
        [ "${reached3:-0}" = "$n" ]
check "moved away, --symbol-path DIR: main on as many stacks as before" \
        [ "$(total "$tmp/path.txt" main)" = "$(total "$tmp/here.txt" main)" ]

# rebuilt in place: perf's build-id cache holds the recorded build
mv "$tmp/elsewhere/walk" "$tmp/walk"
mv "$tmp/cache-aside" "$HOME/.debug"
build one 5
replay "$tmp/cache.txt"
read -r n4 reached4 <<<"$(walked "$tmp/cache.txt")"
check "rebuilt: every walk to the thread's start through perf's cache ($reached4 of $n4)" \
        [ "${reached4:-0}" = "$n" ]
check "rebuilt: main on as many stacks as before" \
        [ "$(total "$tmp/cache.txt" main)" = "$(total "$tmp/here.txt" main)" ]

echo "$nr_pass passed, $nr_fail failed, $nr_skip skipped"
[ $nr_fail = 0 ]
