#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# symbols.sh: symbol lookups and whole-recording symbolization, side by side with the peers.
#   1. bench_symbols on libLLVM (46k symbols) and libc: first-time and cached lookups per second
#      against dwfl_module_addrinfo, on the same random addresses.
#   2. The same workload recorded by etwtop --record and by perf record at once (4 kHz timer
#      samples with call chains on every CPU, while clang compiles in a loop: many functions in a
#      big library, and the kernel), then symbolized whole: `etwtop --replay FILE -b -n 1` (load,
#      symbolize, print the hot functions with self and total) against `perf report --stdio`
#      (its default report of a -g recording: children and self, with call chains; the
#      issue's target is 10x) and against the lighter `perf report --stdio --no-children
#      --sort dso,sym`, as ratios of samples symbolized per second.
# Usage: bench/symbols.sh [BUILD_DIR] [SECONDS]   (default ./build, 5 s; part 2 needs root and perf)
set -u
. "$(dirname "$0")/work_c.sh"
build=${1:-./build}
secs=${2:-5}
etwtop=$build/src/etwtop
bench=$build/bench/bench_symbols
die() { echo "symbols.sh: $*" >&2; exit 1; }
[ -x "$etwtop" ] && [ -x "$bench" ] || die "build $build first (etwtop, bench_symbols)"
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$tmp"' EXIT

echo "== 1. lookups"
for lib in /usr/lib/x86_64-linux-gnu/libLLVM-14.so.1 /lib/x86_64-linux-gnu/libc.so.6; do
        [ -f "$lib" ] || continue
        "$bench" "$lib" 100000 1000
        echo
done

echo "== 2. symbolizing a recording"
command -v perf >/dev/null || die "perf not found (Debian: linux-perf)"
command -v clang >/dev/null || die "clang not found"
# a C file big enough to keep clang's optimizer busy
write_work_c "$tmp/work.c"
load() {
        (end=$((SECONDS + secs + 2)); while [ $SECONDS -lt $end ]; do
                clang -O2 -c "$tmp/work.c" -o "$tmp/work.o" 2>/dev/null; done) &
        (end=$((SECONDS + secs + 2)); while [ $SECONDS -lt $end ]; do
                clang -O2 -c "$tmp/work.c" -o "$tmp/work2.o" 2>/dev/null; done) &
}
# both recorders at once, on the same seconds of the same workload: the same events, each
# tool's own way (perf record's -F 4000 and etwtop's 250 us interval are both 4 kHz timers)
load
sleep 1
"$etwtop" --record "$tmp/e.etl" --duration "$secs" --set-prof-int 2500 --on PROC_THREAD+LOADER+PROFILE \
        --stackwalk Profile 2>"$tmp/e.err" &
erec=$!
perf record -q -B -N -o "$tmp/p.data" -a -g -F 4000 -e cpu-clock -- sleep "$secs" 2>"$tmp/p.err" ||
        die "perf record failed: $(cat "$tmp/p.err")"
wait "$erec" || die "etwtop --record failed: $(cat "$tmp/e.err")"
wait

# best of 3 runs each, wall clock of the whole process
best() {
        local best=999999 t
        for _ in 1 2 3; do
                local t0 t1
                t0=$(date +%s.%N)
                "$@" >/dev/null 2>&1
                t1=$(date +%s.%N)
                t=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.4f", b - a}')
                best=$(awk -v a="$best" -v b="$t" 'BEGIN {print (b < a) ? b : a}')
        done
        echo "$best"
}
e_samples=$("$etwtop" --replay "$tmp/e.etl" -b --top 1 2>/dev/null | awk '/^Hot functions/ {gsub(/[(,]/, " "); print $4; exit}')
p_samples=$(perf report -i "$tmp/p.data" --stats 2>/dev/null | awk '/SAMPLE events:/ {print $3; exit}')
e_time=$(best "$etwtop" --replay "$tmp/e.etl" -b -n 1)
p_time=$(best perf report -i "$tmp/p.data" --stdio)
q_time=$(best perf report -i "$tmp/p.data" --stdio --no-children --sort dso,sym)
"$etwtop" --replay "$tmp/e.etl" -b --top 8 2>/dev/null | sed -n '/^Hot functions/,/^$/p' | head -11
awk -v es="$e_samples" -v ps="$p_samples" -v et="$e_time" -v pt="$p_time" -v qt="$q_time" 'BEGIN {
        printf "\n%-52s %9s %9s %12s\n", "tool", "samples", "seconds", "samples/s"
        printf "%-52s %9d %9.3f %12.0f\n", "etwtop --replay FILE -b -n 1", es, et, es / et
        printf "%-52s %9d %9.3f %12.0f\n", "perf report --stdio", ps, pt, ps / pt
        printf "%-52s %9d %9.3f %12.0f\n", "perf report --stdio --no-children --sort dso,sym", ps,
               qt, ps / qt
        r = (es / et) / (ps / pt)
        q = (es / et) / (ps / qt)
        printf "\nratio against perf report --stdio (samples symbolized per second): %.1fx " \
               "(target >= 10x): %s\n", r, (r >= 10 ? "PASS" : "MISS")
        printf "ratio against the lighter perf report: %.1fx\n", q
}'
