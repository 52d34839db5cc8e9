#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# startup_loss.sh: the events a live session loses in its first second when it starts on a busy
# machine with many threads for its rundown to walk: the screen (`-b`, 4 kHz timer samples with
# stacks on Profile, CSwitch and ReadyThread, --stackwalk-mode fp) started while startup_load
# (tests/unit/startup_load.c) keeps every CPU busy, switches threads through pipe ping-pongs, and
# holds idle processes of many threads. Prints, per run, the "lost" (records the kernel dropped)
# and the "buffers lost" (real-time buffers the delivery to the screen dropped) of the frames at
# 0.5 s and 1 s, and their sums over the runs; with a second build, both builds take turns.
# Usage: bench/startup_loss.sh [BUILD_DIR [OLD_BUILD_DIR]]   (default ./build; needs root)
# Environment: RUNS (5), PAGES (512: the 2 MiB ring a CPU of a 16-CPU machine has, set through
# ETWTOP_RING_PAGES), PROCS THREADS HOGS PAIRS (1 3000 nproc nproc: startup_load's arguments),
# EXTRA_PROCS EXTRA_THREADS (200 10: more idle processes for the rundown), BUILD_LOOPS (0: that
# many loops compiling startup_load.c with cc -O2 beside the load all along, a build's CPU,
# forks and execs: what a busy developer machine runs).
set -u
build=${1:-./build}
old=${2:-}
runs=${RUNS:-5}
pages=${PAGES:-512}
ncpu=$(nproc)
procs=${PROCS:-1} threads=${THREADS:-3000} hogs=${HOGS:-$ncpu} pairs=${PAIRS:-$ncpu}
extra_procs=${EXTRA_PROCS:-200} extra_threads=${EXTRA_THREADS:-10}
build_loops=${BUILD_LOOPS:-0}
die() {
        echo "startup_loss: $*" >&2
        exit 1
}
load_bin=$build/tests/startup_load
[ -x "$build/src/etwtop" ] || die "no $build/src/etwtop (build it first)"
[ -x "$load_bin" ] || die "no $load_bin (build the tests: it is tests/unit/startup_load.c)"
[ -z "$old" ] || [ -x "$old/src/etwtop" ] || die "no $old/src/etwtop"
tmp=$(mktemp -d)
load_pids=()
build_pids=()
cleanup() {
        local p
        for p in "${build_pids[@]}"; do pkill -P "$p" 2>/dev/null; done
        for p in "${load_pids[@]}" "${build_pids[@]}"; do kill "$p" 2>/dev/null; done
        rm -rf "$tmp"
}
trap cleanup EXIT

args=(-b -n 2 -d 0.5 --set-prof-int 2500 --stackwalk-mode fp --top 1)
echo "command: ETWTOP_RING_PAGES=$pages etwtop ${args[*]}"
echo "load: startup_load $procs $threads $hogs $pairs + startup_load $extra_procs $extra_threads 0 0" \
        "(idle threads for the rundown, $hogs busy loops, $pairs pipe ping-pongs) on $ncpu CPUs" \
        "+ $build_loops build loops"
src=$(dirname "$0")/../tests/unit/startup_load.c
if [ "$build_loops" -gt 0 ]; then
        command -v cc >/dev/null || die "BUILD_LOOPS needs cc"
        for ((i = 0; i < build_loops; i++)); do
                (while :; do cc -O2 -c "$src" -o /dev/null 2>/dev/null || exit; done) &
                build_pids+=($!)
        done
fi

# start NAME ARGS...: startup_load ARGS in the background, its output in $tmp/NAME.out, once
# it says it is ready; its pid in load_pids
start() {
        local name=$1
        shift
        "$load_bin" "$@" >"$tmp/$name.out" 2>&1 &
        load_pids+=($!)
        local i
        for ((i = 0; i < 1200; i++)); do
                grep -qs ready "$tmp/$name.out" && return
                kill -0 "${load_pids[-1]}" 2>/dev/null || die "startup_load $*: $(cat "$tmp/$name.out")"
                sleep 0.05
        done
        die "startup_load $* was not ready in a minute"
}

# one BIN: prints "LOST_AT_0.5S LOST_AT_1S PINGPONG_ROUNDS_PER_S"
one() {
        local bin=$1 rt
        rt=$(mktemp -d "$tmp/rt.XXXXXX")
        start extra "$extra_procs" "$extra_threads" 0 0
        start load "$procs" "$threads" "$hogs" "$pairs"
        ETWTOP_RUNTIME_DIR=$rt ETWTOP_RING_PAGES=$pages "$bin" "${args[@]}" >"$tmp/out" 2>&1
        local p
        for p in "${load_pids[@]}"; do kill "$p" 2>/dev/null; done
        for p in "${load_pids[@]}"; do wait "$p" 2>/dev/null; done
        load_pids=()
        rm -rf "$rt"
        local rate
        rate=$(sed -n 's/pingpong_rounds=\([0-9]*\) seconds=\([0-9.]*\)/\1 \2/p' "$tmp/load.out" |
                awk '{printf "%d", ($2 > 0 ? $1 / $2 : 0)}')
        # each frame's header: "lost N" (the records the kernel dropped), and "buffers lost N"
        # when the real-time delivery lost buffers (its queue full: the consumer, or the host's
        # sender, fell behind); the two counted apart
        set -- $(grep '^etwtop - live' "$tmp/out" | awk '{
                lost = 0; bufs = 0
                for (i = 1; i < NF; i++) {
                        if ($i == "lost" && $(i - 1) == "buffers") bufs = $(i + 1)
                        else if ($i == "lost") lost = $(i + 1)
                }
                printf "%s %s ", lost, bufs }')
        [ $# -ge 4 ] || die "$bin printed no frames: $(tail -3 "$tmp/out")"
        echo "$1 $3 $2 $4 ${rate:-0}"
}

declare -A sum bufs nr_lossy
names=(new)
[ -n "$old" ] && names=(old new)
for name in "${names[@]}"; do
        sum[$name]=0
        bufs[$name]=0
        nr_lossy[$name]=0
done
for ((r = 1; r <= runs; r++)); do
        for name in "${names[@]}"; do
                bin=$build/src/etwtop
                [ "$name" = old ] && bin=$old/src/etwtop
                set -- $(one "$bin")
                printf '%s run %d: lost %s at 0.5 s, %s at 1 s; buffers lost %s, %s (ping-pong %s rounds/s)\n' \
                        "$name" "$r" "$1" "$2" "$3" "$4" "$5"
                sum[$name]=$((sum[$name] + $2))
                bufs[$name]=$((bufs[$name] + $4))
                [ "$2" -gt 0 ] || [ "$4" -gt 0 ] && nr_lossy[$name]=$((nr_lossy[$name] + 1))
        done
done
for name in "${names[@]}"; do
        b=$build
        [ "$name" = old ] && b=$old
        printf '%s (%s): %d events and %d real-time buffers lost in the first second over %d runs, %d runs with a loss\n' \
                "$name" "$b" "${sum[$name]}" "${bufs[$name]}" "$runs" "${nr_lossy[$name]}"
done
