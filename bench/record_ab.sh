#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# record_ab.sh: two builds of the recorder side by side, for telling whether a change to the
# live drain or the converter costs or saves CPU. Both `etwtop --record` run at once on the
# same busy machine (record.sh's switch-heavy session and load: a spinning shell per CPU and a
# pipe ping-pong), so that both see the same switches; run one after the other, the load moves
# more between runs than most changes move the recorder. Each recorder's CPU is its own
# process's (perf stat's task-clock around it), divided by the samples, switches and wake-ups
# it wrote (`--dump --totals`): the CPU per million like events, whose B/A is printed a run.
# Each pair runs in both orders (A started first, then B first); the B/A printed last is the
# geometric mean of all runs' and the order's share is printed beside it.
# Usage: [PAIRS=N] [MODE=samples] bench/record_ab.sh BUILD_A BUILD_B [SECONDS]   (default 10 s,
#        2 pairs: 4 runs; needs root and perf). MODE=samples: timer samples with stacks only.
set -u
[ $# -ge 2 ] || {
        echo "usage: bench/record_ab.sh BUILD_A BUILD_B [SECONDS]" >&2
        exit 2
}
build_a=$1 build_b=$2 secs=${3:-10} pairs=${PAIRS:-2}
die() { echo "record_ab.sh: $*" >&2; exit 1; }
for b in "$build_a" "$build_b"; do
        [ -x "$b/src/etwtop" ] || die "$b/src/etwtop not built"
done
command -v perf >/dev/null || die "perf not found (Debian: linux-perf)"
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$tmp"' EXIT
ncpu=$(nproc)
case "${MODE:-switches}" in
switches) e_on=PROC_THREAD+LOADER+PROFILE+CSWITCH+DISPATCHER e_walk=Profile+CSwitch+ReadyThread ;;
samples) e_on=PROC_THREAD+LOADER+PROFILE e_walk=Profile ;;
*) die "MODE is switches or samples, not $MODE" ;;
esac

load() {
        for ((i = 0; i < ncpu; i++)); do
                (end=$((SECONDS + secs + 4)); while [ $SECONDS -lt $end ]; do :; done) &
        done
        timeout $((secs + 4)) perf bench sched pipe -l 100000000 >/dev/null 2>&1 &
}
rec() { # name build
        ETWTOP_NO_HOST=1 perf stat -x, -e task-clock -o "$tmp/$1.stat" -- \
                "$2/src/etwtop" --record "$tmp/$1.etl" --force --duration "$secs" \
                --set-prof-int 2500 --on "$e_on" --stackwalk "$e_walk" --stackwalk-mode fp \
                2>"$tmp/$1.err" || die "$2/src/etwtop --record failed: $(cat "$tmp/$1.err")"
}
# the recorder's CPU ms per million like events, its like events, its lost events
per_m() { # name build
        "$2/src/etwtop" --dump --totals "$tmp/$1.etl" >"$tmp/$1.totals" ||
                die "$2/src/etwtop --dump --totals failed"
        local ms like lost
        ms=$(awk -F, '/task-clock/ {printf "%.3f", $1}' "$tmp/$1.stat")
        like=$(awk '/ (PerfInfo\/SampledProfile|Thread\/CSwitch|Thread\/ReadyThread) / {n += $1}
                END {print n + 0}' "$tmp/$1.totals")
        lost=$(awk '/^Events lost:/ {n=$3} END {print n+0}' "$tmp/$1.totals")
        [ "$like" -gt 0 ] || die "$1 wrote no samples, switches or wake-ups"
        awk -v ms="$ms" -v n="$like" -v l="$lost" 'BEGIN {printf "%.1f %d %d %.1f", ms * 1e6 / n, n, l, ms}'
}

ratios=()
run() { # first second: the names in start order
        load
        sleep 1
        (rec "$1" "$(eval echo "\$build_$1")") &
        local p1=$!
        (rec "$2" "$(eval echo "\$build_$2")") &
        local p2=$!
        wait $p1 || exit 1
        wait $p2 || exit 1
        wait
        read -r a_pm a_n a_l a_ms <<<"$(per_m a "$build_a")"
        read -r b_pm b_n b_l b_ms <<<"$(per_m b "$build_b")"
        r=$(awk -v a="$a_pm" -v b="$b_pm" 'BEGIN {printf "%.3f", b / a}')
        printf "%s first: A %7.1f ms (%8d like, %d lost) %6.1f ms/M   B %7.1f ms (%8d like, %d lost) %6.1f ms/M   B/A %s\n" \
                "$1" "$a_ms" "$a_n" "$a_l" "$a_pm" "$b_ms" "$b_n" "$b_l" "$b_pm" "$r"
        ratios+=("$1 $r")
}

echo "record_ab: A=$build_a B=$build_b, ${MODE:-switches} settings, $secs s runs, $pairs pair(s) each order, $ncpu CPUs"
for ((p = 0; p < pairs; p++)); do
        run a b
        run b a
done
printf '%s\n' "${ratios[@]}" | awk '
        {l = log($2); all += l; n++; if ($1 == "a") {af += l; na++} else {bf += l; nb++}}
        END {
                printf "B/A, CPU per like event, geometric mean of %d runs: %.3f", n, exp(all / n)
                printf " (A first %.3f, B first %.3f: the order'"'"'s share %.3f)\n",
                        exp(af / na), exp(bf / nb), sqrt(exp(af / na) / exp(bf / nb))
        }'
