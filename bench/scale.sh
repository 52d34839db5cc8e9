#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# scale.sh: etwtop's cost per event as the busy CPUs grow: for 1, 2, 4, 8, 16 CPUs (those this
# machine has), the load of record.sh (a spinning shell per CPU and a pipe ping-pong) held to
# that many CPUs with taskset, and under it etwtop --record, the screen in batch mode (-b) and
# a replay of the recording, each held to the same CPUs: CPU seconds (user + system) and CPU
# seconds per million events, per mode and CPU count. Flat figures per million events as the
# CPUs grow say the merge of the CPUs' rings and the rest scale; rising ones say where not.
# Usage: bench/scale.sh [BUILD_DIR] [SECONDS] [CPU_COUNTS]
#        (default ./build, 10 s, "1 2 4 8 16" cut to nproc; needs root, perf for the load)
# Settings: record.sh's and top.sh's: 4 kHz timer samples with stacks on every CPU, every
# context switch and wake-up with its stack, frame pointers (--stackwalk-mode fp). The session
# runs in the measured process (ETWTOP_NO_HOST=1): time(1) does not see a session host.
set -u
build=${1:-./build}
secs=${2:-10}
counts=${3:-"1 2 4 8 16"}
etwtop=$build/src/etwtop
die() { echo "scale.sh: $*" >&2; exit 1; }
[ -x "$etwtop" ] || die "$etwtop not built"
command -v perf >/dev/null || die "perf not found (Debian: linux-perf), for perf bench sched pipe"
command -v taskset >/dev/null || die "taskset not found (util-linux)"
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$tmp"' EXIT
nproc=$(nproc)
settings=(--set-prof-int 2500 --on PROC_THREAD+LOADER+PROFILE+CSWITCH+DISPATCHER
        --stackwalk Profile+CSwitch+ReadyThread --stackwalk-mode fp)

# load N LIST: a spinner per CPU of LIST and a ping-pong, all held to LIST, for secs + 4 s
load() {
        local n=$1 list=$2
        for ((i = 0; i < n; i++)); do
                taskset -c "$list" bash -c "end=\$((SECONDS + $secs + 4)); while [ \$SECONDS -lt \$end ]; do :; done" &
        done
        taskset -c "$list" timeout $((secs + 4)) perf bench sched pipe -l 100000000 >/dev/null 2>&1 &
}
cpu_of() { awk '{printf "%.3f", $1 + $2}' "$1"; }
per_m() { awk -v c="$1" -v e="$2" 'BEGIN {x = e > 0 ? c * 1e6 / e : 0; printf "%.3f", x}'; }

printf "scale benchmark: %d s a mode, 4 kHz samples with stacks, switches and wake-ups with stacks\n" "$secs"
printf "(the load and etwtop held to the first N CPUs; CPU: user + system of etwtop's process)\n\n"
printf "%5s  %-8s %9s %11s %12s %8s\n" CPUs mode "CPU s" events "CPU s/M ev" lost
for n in $counts; do
        [ "$n" -le "$nproc" ] || continue
        list=0-$((n - 1))

        # record
        load "$n" "$list"
        sleep 1
        ETWTOP_NO_HOST=1 /usr/bin/time -f "%U %S" -o "$tmp/rec.time" taskset -c "$list" \
                "$etwtop" --record "$tmp/s.etl" --force --duration "$secs" "${settings[@]}" \
                2>"$tmp/rec.err" || die "etwtop --record failed: $(tail -3 "$tmp/rec.err")"
        wait
        "$etwtop" --dump --totals "$tmp/s.etl" >"$tmp/totals" || die "--dump --totals failed"
        ev=$(awk '/events in all/ {print $1}' "$tmp/totals")
        lost=$(awk '/^Events lost:/ {n = $3} END {print n + 0}' "$tmp/totals")
        c=$(cpu_of "$tmp/rec.time")
        printf "%5d  %-8s %9s %11d %12s %8s\n" "$n" record "$c" "$ev" "$(per_m "$c" "$ev")" "$lost"

        # replay of that recording, to the screen's model in batch mode
        /usr/bin/time -f "%U %S" -o "$tmp/rep.time" taskset -c "$list" \
                "$etwtop" --replay "$tmp/s.etl" -b --top 20 >/dev/null 2>"$tmp/rep.err" ||
                die "etwtop --replay failed: $(tail -3 "$tmp/rep.err")"
        c=$(cpu_of "$tmp/rep.time")
        printf "%5d  %-8s %9s %11d %12s %8s\n" "$n" replay "$c" "$ev" "$(per_m "$c" "$ev")" -

        # the screen, batch mode: a frame a second; its events are the frames' rates
        load "$n" "$list"
        sleep 1
        ETWTOP_NO_HOST=1 /usr/bin/time -f "%U %S" -o "$tmp/scr.time" taskset -c "$list" \
                "$etwtop" -b -n "$secs" -d 1 --top 5 "${settings[@]}" >"$tmp/scr.out" \
                2>"$tmp/scr.err" || die "etwtop -b failed: $(tail -3 "$tmp/scr.err")"
        wait
        ev=$(grep -o '[0-9]* events/s' "$tmp/scr.out" | awk '{n += $1} END {print n + 0}')
        lost=$(grep -o 'lost [0-9]*' "$tmp/scr.out" | tail -1 | awk '{print $2 + 0}')
        c=$(cpu_of "$tmp/scr.time")
        printf "%5d  %-8s %9s %11d %12s %8s\n" "$n" "screen" "$c" "$ev" "$(per_m "$c" "$ev")" "${lost:-?}"
done
