#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# sixteen.sh: issue 25's checks on a many-CPU machine lent for a few minutes, as one script with
# a time budget, from a folder made by bench/pack.sh (etwtop, perf, GNU time, tmux and their
# libraries: such a machine may have none of them). In order, each step under its own time
# limit and skipped once the budget is spent, every line also written to LOG:
#   probe     kernel, CPUs, glibc; whether perf_event_open and the sched tracepoints work
#   loss      item 1: the four runs of the issue's table: samples only and the full session
#             with the load already running (record.sh, with perf record beside; item 2: also
#             both recorders at once on the same load, MODE=together), the full
#             session with the load started 2 s after etwtop, and the screen (-b -n 10 -d 0.5)
#             started on the loaded machine (its frames' lost counts)
#   scale     item 6: bench/scale.sh at 2, 4, 8, 16 CPUs
#   top       item 3: bench/top.sh in the modes of TOP_MODES (when tmux runs)
#   profile   item 3: where the in-process screen's CPU goes (perf record -g, by function)
#   precord   item 2: where the recorder's CPU goes (samples only and the full session)
#   startup   item 1: bench/startup_loss.sh (thousands of idle threads for the rundown)
#   reader    items 5 and 6: bench/replay.sh (the reader against perf script) and
#             bench/reader_threads.sh (the XPRESS decompression on 0, 1, 2, 4, 8 and 15 workers)
# Usage: bench/sixteen.sh PACK_DIR [BUDGET_S [LOG]]   (as root; default budget 420 s)
# Environment: SECS (8: each run's seconds), STEPS (probe loss scale top profile startup; also
# precord: where the recorder's CPU goes; reader: the reader's), TOP_MODES
# (full samples), STARTUP_RUNS (3), WRAP=1
# (the packed programs through the pack's loader even where the machine's glibc would do).
set -u
fn=
if [ "${1:-}" = --fn ]; then # one step's function, run under timeout by step()
        fn=$2
        shift 2
fi
pack=$(realpath "${1:?usage: sixteen.sh PACK_DIR [BUDGET_S [LOG]]}")
budget=${2:-420}
log=${3:-/dev/null}
secs=${SECS:-8}
steps=${STEPS:-"probe loss scale top profile startup"}
here=$(cd "$(dirname "$0")" && pwd)
start=$SECONDS
say() { echo "$*" | tee -a "$log"; }
left() { echo $((budget - (SECONDS - start))); }
[ "$(id -u)" = 0 ] || { say "sixteen.sh: needs root"; exit 1; }

# the tools: the pack's, after the machine's own; GNU time where the scripts look for it
export PATH=$PATH:$pack/bin
export TERMINFO_DIRS=$pack/terminfo:/usr/share/terminfo:/lib/terminfo
[ -x /usr/bin/time ] || cp "$pack/bin/time" /usr/bin/time
build=$pack/build
# a glibc older than the pack's: every packed program through the pack's own loader
have=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}')
need=$(ls "$pack"/glibc/libc.so.6 >/dev/null 2>&1 && strings "$pack/glibc/libc.so.6" |
        sed -n 's/^GNU C Library.*version \([0-9][0-9.]*[0-9]\).*/\1/p' | head -1)
wrapped=0
if [ "${WRAP:-0}" = 1 ] || { [ -n "$need" ] && [ "$(printf '%s\n%s\n' "${have:-0}" "$need" | sort -V | head -1)" != "$need" ]; }; then
        wrapped=1
        for f in "$build/src/etwtop" "$build/tests/startup_load" "$pack"/bin/*; do
                case "$f" in *.real) continue ;; esac
                [ -e "$f.real" ] || mv "$f" "$f.real"
                printf '#!/bin/sh\nexec "%s" --library-path "%s:%s" "%s" "$@"\n' \
                        "$(ls "$pack"/glibc/ld-linux-*.so.* | head -1)" "$pack/glibc" "$pack/lib" \
                        "$f.real" >"$f"
                chmod +x "$f"
        done
fi
for d in /sys/kernel/tracing /sys/kernel/debug; do
        [ -d "$d" ] || continue
        case "$d" in
        */tracing) [ -e "$d/events" ] || mount -t tracefs nodev "$d" 2>/dev/null ;;
        */debug) [ -e "$d/tracing" ] || mount -t debugfs nodev "$d" 2>/dev/null ;;
        esac
done

step() { # NAME LIMIT_S COMMAND...: runs COMMAND under LIMIT_S (cut to what is left)
        local name=$1 limit=$2 l
        shift 2
        l=$(left)
        if [ "$l" -lt 20 ]; then
                say "== $name: skipped, ${l} s of the budget left"
                return
        fi
        [ "$limit" -le "$l" ] || limit=$l
        say "== $name ($(date -u +%H:%M:%S), limit ${limit} s)"
        if declare -F "$1" >/dev/null; then
                timeout -k 5 "$limit" bash "$0" --fn "$1" "$pack" "$budget" 2>&1 | tee -a "$log"
        else
                timeout -k 5 "$limit" "$@" 2>&1 | tee -a "$log"
        fi
        say "== $name: exit ${PIPESTATUS[0]} after $((SECONDS - start)) s"
}

ncpu=$(nproc)
load_pids=()
load() { # the record.sh load: a spinner per CPU and a pipe ping-pong, for $1 s
        local i
        for ((i = 0; i < ncpu; i++)); do
                (end=$((SECONDS + $1)); while [ $SECONDS -lt $end ]; do :; done) &
                load_pids+=($!)
        done
        timeout "$1" perf bench sched pipe -l 1000000000 >/dev/null 2>&1 &
        load_pids+=($!)
}
unload() {
        kill "${load_pids[@]}" 2>/dev/null
        wait "${load_pids[@]}" 2>/dev/null
        load_pids=()
}
full=(--set-prof-int 2500 --on PROC_THREAD+LOADER+PROFILE+CSWITCH+DISPATCHER
        --stackwalk Profile+CSwitch+ReadyThread --stackwalk-mode fp)

probe() {
        echo "revision $(cat "$pack/REVISION" 2>/dev/null), kernel $(uname -r), $ncpu CPUs," \
                "glibc ${have:-?} (pack ${need:-?}, through its loader: $wrapped)"
        grep -m1 'model name' /proc/cpuinfo
        echo "perf_event_paranoid $(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null)," \
                "tracefs $(ls -d /sys/kernel/tracing/events/sched 2>/dev/null || echo none)"
        # what bounds startup_load's thousands of threads
        echo "threads-max $(cat /proc/sys/kernel/threads-max 2>/dev/null), pid_max" \
                "$(cat /proc/sys/kernel/pid_max 2>/dev/null), ulimit -u $(ulimit -u), pids.max" \
                "$(cat /sys/fs/cgroup/pids.max 2>/dev/null || echo -), threads now" \
                "$(ls -d /proc/[0-9]*/task/* 2>/dev/null | wc -l)"
        perf stat -e cpu-clock,context-switches -a -- sleep 0.2 2>&1 | grep -E 'cpu-clock|switches'
        local t
        t=$(mktemp -d)
        ETWTOP_NO_HOST=1 "$build/src/etwtop" --record "$t/p.etl" --force --duration 1 "${full[@]}" ||
                echo "probe: etwtop --record failed"
        "$build/src/etwtop" --dump --totals "$t/p.etl" | grep -E "events in all|lost|CSwitch|SampledProfile|ReadyThread"
        rm -rf "$t"
}

# item 1, run 2: the full session with the load started 2 s after etwtop; run 4: the screen
# started on the loaded machine, a frame every 0.5 s
late_load() {
        local t
        t=$(mktemp -d)
        (sleep 2; load $((secs + 2)); wait) &
        local lp=$!
        ETWTOP_NO_HOST=1 /usr/bin/time -f "%U %S" -o "$t/time" "$build/src/etwtop" --record "$t/l.etl" \
                --force --duration "$secs" "${full[@]}" 2>"$t/err" || cat "$t/err"
        wait $lp
        "$build/src/etwtop" --dump --totals "$t/l.etl" >"$t/totals"
        echo "load started 2 s after etwtop: CPU $(awk '{print $1 + $2}' "$t/time") s," \
                "$(awk '/events in all/ {print $1}' "$t/totals") events," \
                "lost $(awk '/^Events lost:/ {n = $3} END {print n + 0}' "$t/totals")"
        rm -rf "$t"
}
lost_by_frame() { grep -o 'lost [0-9]*' "$1" | awk '{printf "%s ", $2}'; }
screen_loaded() {
        local t
        t=$(mktemp -d)
        load $((secs + 6))
        sleep 1
        ETWTOP_NO_HOST=1 /usr/bin/time -f "%U %S" -o "$t/time" "$build/src/etwtop" -b -n 10 -d 0.5 \
                --top 3 "${full[@]}" >"$t/out" 2>&1
        unload
        echo "the screen started on the loaded machine (-b -n 10 -d 0.5): CPU $(awk '{print $1 + $2}' "$t/time") s;" \
                "lost by frame: $(lost_by_frame "$t/out")"
        grep -m2 -E 'events/s|lost' "$t/out"
        rm -rf "$t"
}

# where the screen's CPU goes at this many CPUs: perf record -g of the in-process screen in
# batch mode under the load (item 3)
profile_screen() {
        local t
        t=$(mktemp -d)
        load $((secs + 4))
        sleep 1
        ETWTOP_NO_HOST=1 perf record -q -F 2000 -g -o "$t/p.data" -- "$build/src/etwtop" -b -n "$secs" \
                -d 1 --top 3 "${full[@]}" >"$t/out" 2>&1
        unload
        echo "the screen under perf record -g: lost by frame $(lost_by_frame "$t/out")"
        perf report -i "$t/p.data" --stdio --no-children --comm etwtop --sort dso,sym -g none \
                --percent-limit 0.8 2>/dev/null | grep -v '^#' | grep . | head -45
        rm -rf "$t"
}

# where the recorder's CPU goes at this many CPUs (item 2): perf record of etwtop --record under
# the load, the samples-only session and the full one, by function (self), kernel included
profile_record() {
        local t m
        t=$(mktemp -d)
        load $((2 * secs + 8))
        sleep 1
        for m in samples full; do
                if [ $m = samples ]; then
                        set -- --set-prof-int 2500 --on PROC_THREAD+LOADER+PROFILE --stackwalk Profile \
                                --stackwalk-mode fp
                else
                        set -- "${full[@]}"
                fi
                ETWTOP_NO_HOST=1 perf record -q -F 4000 -e cpu-clock -g -o "$t/$m.data" -- \
                        /usr/bin/time -f "%U %S" -o "$t/time" "$build/src/etwtop" --record "$t/r.etl" \
                        --force --duration "$secs" "$@" >"$t/out" 2>&1
                echo "the recorder ($m) under perf record: CPU $(awk '{print $1 + $2 " s (user " $1 ", sys " $2 ")"}' "$t/time");" \
                        "$("$build/src/etwtop" --dump --totals "$t/r.etl" | awk '/events in all/ {e = $1} /^Events lost:/ {n = $3} END {print e " events, lost " n + 0}')"
                perf report -i "$t/$m.data" --stdio --no-children --comm etwtop --sort dso,sym -g none \
                        --percent-limit 0.7 2>/dev/null | grep -v '^#' | grep . | head -40
                rm -f "$t/r.etl"
        done
        unload
        rm -rf "$t"
}

# how long startup_load takes to be ready here (startup_loss.sh waits for it twice a run)
load_ready() {
        local t0=$SECONDS out
        out=$(mktemp)
        "$build/tests/startup_load" 1 3000 "$ncpu" "$ncpu" >"$out" 2>&1 &
        local p=$!
        while ! grep -q ready "$out" && kill -0 $p 2>/dev/null && [ $((SECONDS - t0)) -lt 40 ]; do
                sleep 0.2
        done
        echo "startup_load 1 3000 $ncpu $ncpu: $(grep -q ready "$out" && echo ready || echo 'NOT ready')" \
                "after $((SECONDS - t0)) s, $(ls /proc/$p/task 2>/dev/null | wc -l) threads in its process;" \
                "$(head -c 300 "$out" | grep -v ready)"
        kill $p 2>/dev/null
        wait $p 2>/dev/null
        rm -f "$out"
}

if [ -n "$fn" ]; then
        "$fn"
        exit
fi
for s in $steps; do
        case "$s" in
        probe) step probe 40 probe ;;
        loss)
                step "record.sh samples" 90 env MODE=samples bash "$here/record.sh" "$build" "$secs" 1
                step "record.sh switches" 150 bash "$here/record.sh" "$build" "$secs" 1
                step "record.sh together" 150 env MODE=together bash "$here/record.sh" "$build" "$secs" 1
                step "load started late" 60 late_load
                step "screen on a loaded machine" 60 screen_loaded
                ;;
        profile) step "profile of the screen" 40 profile_screen ;;
        precord) step "profile of the recorder" 60 profile_record ;;
        startup)
                step "startup_load ready" 50 load_ready
                step startup_loss.sh 120 env RUNS="${STARTUP_RUNS:-3}" bash "$here/startup_loss.sh" "$build" ;;
        scale) step scale.sh 200 bash "$here/scale.sh" "$build" 5 "2 4 8 16" ;;
        reader)
                if [ -x "$build/bench/bench_replay" ]; then
                        step replay.sh 90 bash "$here/replay.sh" "$build"
                        step reader_threads.sh 90 env WORKERS="0 1 2 4 8 15" \
                                bash "$here/reader_threads.sh" "$build" 5
                else
                        say "== reader: skipped (no bench_replay in the pack: build it before pack.sh)"
                fi
                ;;
        top)
                if [ "$wrapped" = 1 ]; then
                        say "== top.sh: skipped (programs through the pack's loader: top.sh finds them by command line)"
                else
                        for m in ${TOP_MODES:-full samples}; do
                                step "top.sh $m" 60 env MODE="$m" bash "$here/top.sh" "$build" 10 1
                        done
                fi
                ;;
        *) say "sixteen.sh: no step $s" ;;
        esac
done
say "sixteen.sh: done in $((SECONDS - start)) s"
