#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# startup_loss.sh: a live session started on a busy machine loses no event while its rundown
# walks thousands of threads. The screen (`-b`, 4 kHz timer samples with stacks on Profile,
# CSwitch and ReadyThread, frame pointers) starts while startup_load keeps every CPU busy,
# switches threads through pipe ping-pongs and holds 5,000 idle threads, with rings of 256 KiB
# a CPU (ETWTOP_RING_PAGES=64, tens of milliseconds of this load). The rundown used to run on
# the host's server thread, which alone emptied the rings, between processes: starved of a CPU
# in the middle of a process of 3,000 threads, it let them overflow (tens of thousands of
# events lost in the first frame, in half the runs; bench/README.md). Now the rings are drained
# from the moment they are enabled: the first second loses nothing.
set -u
: "${ETWTOP:?}" "${STARTUP_LOAD:?}"
tmp=$(mktemp -d)
pids=()
cleanup() {
        local p
        for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
        for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
        rm -rf "$tmp"
}
trap cleanup EXIT
. "$(dirname "$0")/check.sh"
finish() {
        echo "$nr_pass passed, $nr_fail failed, $nr_skip skipped"
        [ $nr_fail = 0 ]
        exit
}

export ETWTOP_RUNTIME_DIR=$tmp/rt
mkdir -m 700 "$ETWTOP_RUNTIME_DIR"
if ! "$ETWTOP" --record "$tmp/probe.etl" --duration 0.2 --on PROC_THREAD+CSWITCH \
        2>"$tmp/probe.err"; then
        skip "etwtop --record cannot run here: $(cat "$tmp/probe.err")"
        finish
fi

# load NAME ARGS...: startup_load ARGS, once it says it is ready (every thread made)
load() {
        local name=$1
        shift
        "$STARTUP_LOAD" "$@" >"$tmp/$name.out" 2>&1 &
        pids+=($!)
        if ! wait_until 60 eval "grep -q ready '$tmp/$name.out' || ! kill -0 ${pids[-1]}" ||
                ! grep -q ready "$tmp/$name.out"; then
                echo "startup_load $* did not get ready: $(cat "$tmp/$name.out")" >&2
                return 1
        fi
}
ncpu=$(nproc)
if ! load idle 200 10 0 0 || ! load busy 1 3000 "$ncpu" "$ncpu"; then
        skip "the load could not be started (threads-max, pid_max or memory)"
        finish
fi

ETWTOP_RING_PAGES=64 "$ETWTOP" -b -n 2 -d 0.5 --set-prof-int 2500 --stackwalk-mode fp --top 1 \
        >"$tmp/frames" 2>&1
rc=$?
for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
pids=()
lost=$(grep -o 'lost [0-9]*' "$tmp/frames" | awk '{printf "%s ", $2}')
echo "lost at 0.5 s and 1 s: $lost($(sed -n 's/pingpong_rounds=\([0-9]*\) seconds=\([0-9.]*\)/\1 ping-pong rounds in \2 s/p' "$tmp/busy.out"))"
set -- $lost
if [ $rc -ne 0 ] || [ $# -lt 2 ]; then
        check "etwtop -b exited $rc with $# frames: $(tail -5 "$tmp/frames")" false
        finish
fi
check "no event lost in the first second (lost $2)" [ "$2" -eq 0 ]
finish
