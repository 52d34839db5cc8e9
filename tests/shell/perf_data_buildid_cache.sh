#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# perf_data_buildid_cache.sh: a program perf recorded, then rebuilt (another build-id at the same
# path): its samples are named from the copy perf record kept in its build-id cache (~/.debug;
# $PERF_BUILDID_DIR, as perf --buildid-dir exports it to its scripts), as perf report names them;
# with no copy there, the replay says the file changed since the recording and shows
# module+offset frames. Skips without perf
# or a C compiler, or where perf cannot record here.
set -u
: "${ETWTOP:?}"
. "$(dirname "$0")/../lib/check.sh"
. "$(dirname "$0")/../lib/perf_rec.sh"
perf_test_start
perf_cc

build() { # VARIANT: the spinning program, its code a little different for each variant
        cat >"$tmp/spin.c" <<C
#include <stdlib.h>
volatile unsigned long sink;
__attribute__((noinline)) void cache_spin_$1(unsigned long n)
{
        for (unsigned long i = 0; i < n; i++)
                sink += i * $2;
}
int main(int argc, char **argv)
{
        cache_spin_$1(argc > 1 ? strtoul(argv[1], NULL, 10) : 300000000ul);
        return 0;
}
C
        "$cc" -O1 -g -Wl,--build-id -o "$tmp/spin" "$tmp/spin.c" 2>"$tmp/cc.err"
}
hottest() { awk '/^Hot functions/ {t++; next} t == 1 && /^ +[0-9.]+%/ {print $NF; exit}' "$1"; }

# perf's cache and etwtop's look under this HOME
perf_home
unset PERF_BUILDID_DIR
if ! build one 3; then
        echo "SKIP: the program does not build: $(head -c 200 "$tmp/cc.err")"
        echo "0 passed, 0 failed, 1 skipped"
        exit 77
fi
recorded=false
PERF_RECORD_BUILDIDS=1 perf_record "$tmp/spin.data" "$tmp/rec.err" -e cpu-clock -F 2000 -- \
        "$tmp/spin" && recorded=true
if ! $recorded; then
        echo "SKIP: perf record cannot record here: $(head -c 200 "$tmp/rec.err")"
        echo "0 passed, 0 failed, 1 skipped"
        exit 77
fi
# recorded with --buildid-mmap (perf record aborted on its build-ids three times): the program
# put in the cache as perf record would have
if $perf_rec_mmap_ids; then
        echo "perf record aborted three times: recorded with --buildid-mmap," \
                "the program cached by perf buildid-cache -a" >&2
        perf buildid-cache -a "$tmp/spin" 2>>"$tmp/rec.err"
fi
check "perf kept the program in its cache" \
        bash -c "find '$HOME/.debug' -name elf -path '*spin*' | grep -q ."
"$ETWTOP" --replay "$tmp/spin.data" -b >"$tmp/before.txt" 2>"$tmp/before.err"
check "before the rebuild: the program's function named ($(hottest "$tmp/before.txt"))" \
        [ "$(hottest "$tmp/before.txt")" = cache_spin_one ]

# rebuilt: the recorded path now holds another build
id_before=$(readelf -n "$tmp/spin" 2>/dev/null | awk '/Build ID/ {print $3}')
build two 5
id_after=$(readelf -n "$tmp/spin" 2>/dev/null | awk '/Build ID/ {print $3}')
check "the rebuild changed the build-id ($id_before, $id_after)" \
        [ -n "$id_before" -a -n "$id_after" -a "$id_before" != "$id_after" ]
"$ETWTOP" --replay "$tmp/spin.data" -b >"$tmp/after.txt" 2>"$tmp/after.err"
check "rebuilt: named from perf's cache ($(hottest "$tmp/after.txt"))" \
        [ "$(hottest "$tmp/after.txt")" = cache_spin_one ]
theirs=$(perf report -i "$tmp/spin.data" --stdio --no-children -g none --sort sym 2>/dev/null |
        awk '/^ +[0-9.]+%/ {print $NF; exit}')
check "perf report names it so too ($theirs)" [ "$theirs" = cache_spin_one ]

# the cache elsewhere, as perf --buildid-dir DIR exports it: PERF_BUILDID_DIR
mv "$HOME/.debug" "$tmp/elsewhere"
PERF_BUILDID_DIR=$tmp/elsewhere "$ETWTOP" --replay "$tmp/spin.data" -b >"$tmp/dir.txt" \
        2>"$tmp/dir.err"
check "PERF_BUILDID_DIR: named from the cache there ($(hottest "$tmp/dir.txt"))" \
        [ "$(hottest "$tmp/dir.txt")" = cache_spin_one ]

# no copy in the cache: the change said, module+offset frames
"$ETWTOP" --replay "$tmp/spin.data" -b >"$tmp/none.txt" 2>"$tmp/none.err"
check "no cache: the change said" grep -q "spin changed since the recording" "$tmp/none.err"
check "no cache: module+offset ($(hottest "$tmp/none.txt"))" \
        bash -c "hottest() { awk '/^Hot functions/ {t++; next} t == 1 && /^ +[0-9.]+%/ {print \$NF; exit}' \"\$1\"; }; hottest '$tmp/none.txt' | grep -q '^spin+0x'"

echo "$nr_pass passed, $nr_fail failed, $nr_skip skipped"
[ $nr_fail = 0 ]
