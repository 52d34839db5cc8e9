#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# screen_threads.sh: where the live screen's steady CPU goes, thread by thread: the screen and
# its session host under top.sh's load (a busy loop a CPU and a pipe ping-pong), in top.sh's
# settings (MODE=samples: timer samples with fp call chains, the default; MODE=full: switches and
# wake-ups with their stacks too), a 160x50 terminal. After a 3 s start, each thread's CPU
# (/proc's schedstat, nanoseconds) and voluntary switches over SECONDS; the samples the screen's
# header counted meanwhile, and the CPU a sample (all threads; the screen's main thread; at -d 1
# only: the header counts as of its last refresh). No ratio: top.sh compares with perf top.
# DELAY: the screen's -d (1 s, as top.sh; 10 shows what the refreshes cost, by difference).
# Usage: [MODE=samples|full] [DELAY=1] bench/screen_threads.sh [BUILD_DIR] [SECONDS]
#        (default ./build, 15 s; needs root, perf, tmux)
set -u
build=${1:-./build}
secs=${2:-15}
name=screen_threads.sh
MODE=${MODE:-samples}
. "$(dirname "$0")/screen_common.sh"
delay=${DELAY:-1}
# top.sh's command line (screen_common.sh), its refresh DELAY
cmd=${etwtop_cmd/ -d 1 / -d $delay }
rt=$tmp/run
mkdir -p "$rt" && chmod 700 "$rt"
for ((i = 0; i < ncpu; i++)); do
        (end=$((SECONDS + secs + 8)); while [ $SECONDS -lt $end ]; do :; done) &
done
timeout $((secs + 8)) perf bench sched pipe -l 100000000 >/dev/null 2>&1 &
sleep 1
tmux -L "$sock" new-session -d -s s -x 160 -y 50 "ETWTOP_RUNTIME_DIR=$rt $cmd; sleep $((secs + 30))"
sleep 3
spid=$(pgrep -P "$(tmux -L "$sock" display -p -t s '#{pane_pid}')" -f "^$etwtop" | head -1)
hpid=$(cat "$rt/host.lock" 2>/dev/null)
[ -n "$spid" ] && [ -n "$hpid" ] && [ "$spid" != "$hpid" ] || die "the screen or its host not found"
# each thread: tid comm ns switches
snap() {
        local t
        for t in /proc/$spid/task/* /proc/$hpid/task/*; do
                echo "$(basename "$t") $(cat "$t/comm") $(cut -d' ' -f1 "$t/schedstat")" \
                        "$(awk '/^voluntary_ctxt/ {print $2}' "$t/status")"
        done | sort
}
samples() {
        tmux -L "$sock" capture-pane -t s -p | head -1 | grep -oE '[0-9]+ samples' | grep -oE '[0-9]+'
}
s0=$(samples)
snap >"$tmp/a"
sleep "$secs"
snap >"$tmp/b"
s1=$(samples)
tmux -L "$sock" capture-pane -t s -p | head -1
kill "$hpid" 2>/dev/null
n=$(( ${s1:-0} - ${s0:-0} ))
[ "$delay" = 1 ] || n=0
echo "screen_threads: $secs s, -d $delay, MODE=$MODE, $ncpu CPUs busy; ${n/#0/no} samples counted"
printf "%-8s %-16s %10s %8s %12s\n" tid thread "CPU ms" "ms/s" "switches/s"
join "$tmp/a" "$tmp/b" | awk -v s="$secs" -v n="$n" '
        {d = ($6 - $3) / 1e6; t += d; if ($2 == "etwtop") m += d
         printf "%-8s %-16s %10.1f %8.2f %12.1f\n", $1, $2, d, d / s, ($7 - $4) / s}
        END {printf "all threads: %.1f ms, %.2f ms/s", t, t / s
             if (n > 0) printf "; %.0f ns a sample (the main thread %.0f)", t * 1e6 / n, m * 1e6 / n
             print ""}'
