#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rss.sh: memory over a long run. The live screen and perf top (the settings of top.sh: 4 kHz
# samples with call chains, every context switch and wake-up) run side by side on a busy
# machine for SECONDS; their resident set sizes are sampled every 10 s. The machine is busy the
# way that grows a profiler's tables: spinning shells, a pipe ping-pong, clang compiling in a
# loop (many functions, many stacks) and a process storm (/bin/true in a loop: hundreds of
# processes and threads a second, each with its images). Prints both series, each tool's
# growth from the first minute to the end and over the second half of the run. The budget
# (DESIGN.md): etwtop's memory is bounded by its settings, not by run time, i.e. flat once its
# capped tables have filled.
# Usage: bench/rss.sh [BUILD_DIR] [SECONDS]   (default ./build, 300 s; needs root, perf, tmux)
set -u
build=${1:-./build}
secs=${2:-300}
name=rss.sh
. "$(dirname "$0")/screen_common.sh"
for ((i = 0; i < ncpu; i++)); do
        (end=$((SECONDS + secs + 10)); while [ $SECONDS -lt $end ]; do :; done) &
done
timeout $((secs + 10)) perf bench sched pipe -l 1000000000 >/dev/null 2>&1 &
{
        for i in $(seq 1 200); do
                echo "static int f$i(int x) { int y = x; for (int k = 0; k < 10 + $i % 7; k++) y = y * 31 + k; return y; }"
        done
        echo "int main(int c, char **v) { int s = 0;"
        for i in $(seq 1 200); do echo "s += f$i(c);"; done
        echo "return s; }"
} >"$tmp/work.c"
if command -v clang >/dev/null; then
        (end=$((SECONDS + secs + 10)); while [ $SECONDS -lt $end ]; do
                clang -O2 -c "$tmp/work.c" -o "$tmp/work.o" 2>/dev/null; done) &
fi
(end=$((SECONDS + secs + 10)); while [ $SECONDS -lt $end ]; do /bin/true; done) &
tmux -L "$sock" new-session -d -s e -x 160 -y 50 "$etwtop_cmd; sleep $((secs + 60))"
tmux -L "$sock" new-session -d -s p -x 160 -y 50 "$perf_top_cmd; sleep $((secs + 60))"
sleep 1
tmux -L "$sock" send-keys -t p Enter # perf top's event chooser: the first event's browser
sleep 1
epid=$(pgrep -n -f "^$etwtop -d 1")
ppid=$(pgrep -n -f "^perf top -g -d 1")
[ -n "$epid" ] && [ -n "$ppid" ] || die "a tool did not start"
rss() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null; }
printf "%8s %14s %14s\n" seconds "etwtop KB" "perf top KB"
e_first="" p_first=""
for ((t = 10; t <= secs; t += 10)); do
        sleep 10
        e=$(rss "$epid") p=$(rss "$ppid")
        [ -n "$e" ] || die "etwtop exited at ${t} s: $(tmux -L "$sock" capture-pane -t e -p | grep -v '^$' | tail -3)"
        if [ -z "$p" ] && [ -z "${p_gone:-}" ]; then
                # perf top's own end (it has crashed here): etwtop's series goes on alone
                p_gone=$t
                echo "perf top exited at ${t} s: $(tmux -L "$sock" capture-pane -t p -p | grep -v '^$' | tail -2)"
        fi
        if [ -n "${p_gone:-}" ]; then
                printf "%8d %14d %14s\n" "$t" "$e" -
                p=$p_last
        else
                printf "%8d %14d %14d\n" "$t" "$e" "$p"
        fi
        if [ $t = 60 ] || { [ $secs -lt 60 ] && [ -z "$e_first" ]; }; then e_first=$e p_first=$p; fi
        if [ $t = $(((secs / 2) / 10 * 10)) ]; then e_half=$e p_half=$p; fi
        e_last=$e p_last=$p
done
awk -v ef="$e_first" -v el="$e_last" -v pf="$p_first" -v pl="$p_last" \
        -v eh="${e_half:-$e_first}" -v ph="${p_half:-$p_first}" 'BEGIN {
        eg = el - ef; pg = pl - pf
        printf "\ngrowth after the first minute: etwtop %+d KB, perf top %+d KB\n", eg, pg
        printf "growth over the second half:  etwtop %+d KB (%+.1f%%), perf top %+d KB (%+.1f%%)\n",
               el - eh, 100 * (el - eh) / eh, pl - ph, 100 * (pl - ph) / ph
        if (pg > 0) printf "ratio (etwtop / perf top growth after the first minute): %.2f\n", eg / pg
}'
