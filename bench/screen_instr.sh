#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# screen_instr.sh: the instructions the screen spends a sample, counted by callgrind on one fixed
# recording, so that two builds compare without the load's noise (a change of 3% to the samples'
# work is under the spread of bench/ab.sh and screen_threads.sh on a busy VM, not under this).
# Records top.sh's samples-only settings (MODE=full: its full ones, switches and wake-ups with
# their stacks, into screen_instr_full.etl: a few seconds are millions of events) for SECONDS
# under top.sh's load into BUILD_DIR/bench/screen_instr.etl (ETL, when given, is used as it is),
# then replays it in the screen (the interactive one, in tmux: the call tree counted, as live)
# under valgrind's callgrind, and prints, a sample and an event: the feed's drain (reading,
# decoding, the model), the samples' model work (hot functions and call tree), and the whole
# process. Instructions, not time: what waits on memory is not in them (screen_threads.sh). No
# ratio: top.sh compares with perf top. Run it for two builds on the same ETL.
# CALLGRIND_KEEP=FILE keeps callgrind's profile (callgrind_annotate FILE: where they go).
# Usage: [MODE=full] bench/screen_instr.sh [BUILD_DIR] [ETL | SECONDS]   (default ./build, 20 s;
#        needs root for the recording, valgrind, tmux; builds with symbols name the functions: -g)
set -u
build=${1:-./build}
arg=${2:-20}
name=screen_instr.sh
MODE=${MODE:-samples}
. "$(dirname "$0")/screen_common.sh"
command -v valgrind >/dev/null || die "valgrind not found (Debian: valgrind)"
command -v callgrind_annotate >/dev/null || die "callgrind_annotate not found (Debian: valgrind)"
if [ -f "$arg" ]; then
        etl=$arg
else
        secs=$arg
        mkdir -p "$build/bench" || die "cannot write $build/bench"
        # MODE=full: a file of its own, so that both recordings stay
        etl_name=screen_instr.etl
        [ "$MODE" = samples ] || etl_name=screen_instr_$MODE.etl
        etl=$(realpath "$build/bench")/$etl_name
        # the screen's settings of MODE (screen_common.sh), recorded instead of shown
        rec=${etwtop_cmd#"$etwtop" }
        rec=${rec/-d 1 /}
        for ((i = 0; i < ncpu; i++)); do
                (end=$((SECONDS + secs + 4)); while [ $SECONDS -lt $end ]; do :; done) &
        done
        timeout $((secs + 4)) perf bench sched pipe -l 100000000 >/dev/null 2>&1 &
        sleep 1
        # shellcheck disable=SC2086 # the options, word by word
        "$etwtop" --record "$etl" --force --duration "$secs" $rec >/dev/null 2>&1 ||
                die "the recording failed"
        wait
        echo "recorded $etl ($secs s): pass it as ETL to compare another build on it" >&2
fi
out=$tmp/callgrind.out
tmux -L "$sock" new-session -d -s c -x 160 -y 50 \
        "valgrind --tool=callgrind --callgrind-out-file=$out $etwtop --replay $etl 2>/dev/null; sleep 600"
# the whole recording counted: the header says "loading" until then, and the rows are drawn
n=
for ((i = 0; i < 600; i++)); do
        sleep 1
        screen=$(tmux -L "$sock" capture-pane -t c -p)
        header=$(echo "$screen" | head -1)
        if echo "$screen" | grep -q "Self%" && ! echo "$header" | grep -q loading; then
                n=$(echo "$header" | grep -oE '[0-9]+ samples' | grep -oE '[0-9]+')
                ne=$(echo "$header" | grep -oE '[0-9]+ events' | grep -oE '[0-9]+')
                break
        fi
done
[ -n "$n" ] && [ "$n" -gt 0 ] || die "the replay showed no samples"
sleep 3
tmux -L "$sock" send-keys -t c q
for ((i = 0; i < 120; i++)); do
        [ -s "$out" ] && break
        sleep 1
done
sleep 2
[ -s "$out" ] || die "callgrind wrote nothing"
# CALLGRIND_KEEP=FILE: the profile kept, for callgrind_annotate by function
[ -z "${CALLGRIND_KEEP:-}" ] || cp "$out" "$CALLGRIND_KEEP" || die "cannot write $CALLGRIND_KEEP"
# a sample's (MODE=samples: a sample and its stack are nearly every event) and an event's (MODE=full:
# the switches and wake-ups with their stacks are most of them)
callgrind_annotate --inclusive=yes "$out" 2>/dev/null | awk -v n="$n" -v ne="${ne:-0}" -v etl="$etl" '
        function count(s) { gsub(",", "", s); return s + 0 }
        /PROGRAM TOTALS/ { total = count($1) }
        /feed_drain/ && $0 ~ /\[/ && !drain { drain = count($1) }
        /to_samples/ && $0 ~ /\[/ && !model { model = count($1) }
        END {
                printf "screen_instr: %s, %d samples, %d events; instructions\n", etl, n, ne
                printf "%-46s %10s %10s\n", "", "a sample", "an event"
                printf "  %-44s %10.0f %10.1f\n", "the feed drained (read, decoded, the model)", drain / n, ne ? drain / ne : 0
                printf "  %-44s %10.0f %10.1f\n", "the samples in the model (hot, call tree)", model / n, ne ? model / ne : 0
                printf "  %-44s %10.0f %10.1f\n", "the whole process", total / n, ne ? total / ne : 0
        }'
