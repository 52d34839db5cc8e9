#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rss.sh: memory over a long run. The live screen and perf top (same settings: 4 kHz samples
# with call chains, context switches) run side by side on a busy machine for SECONDS; their
# resident set sizes are sampled every 10 s. Prints both series, each tool's growth from the
# first minute to the end, and the ratio of the growths. The budget (DESIGN.md): etwtop's memory
# is bounded by its settings, not by run time, i.e. flat.
# Usage: bench/rss.sh [BUILD_DIR] [SECONDS]   (default ./build, 300 s; needs root, perf, tmux)
set -u
build=${1:-./build}
secs=${2:-300}
etwtop=$(realpath "$build/src/etwtop")
die() { echo "rss.sh: $*" >&2; exit 1; }
[ -x "$etwtop" ] || die "$etwtop not built"
command -v perf >/dev/null || die "perf not found (Debian: linux-perf)"
command -v tmux >/dev/null || die "tmux not found"
sock=etwtop-rss-$$
tmp=$(mktemp -d)
trap 'tmux -L $sock kill-server 2>/dev/null; kill $(jobs -p) 2>/dev/null; rm -rf "$tmp"' EXIT
ncpu=$(nproc)
for ((i = 0; i < ncpu; i++)); do
        (end=$((SECONDS + secs + 10)); while [ $SECONDS -lt $end ]; do :; done) &
done
timeout $((secs + 10)) perf bench sched pipe -l 1000000000 >/dev/null 2>&1 &
tmux -L "$sock" new-session -d -s e -x 160 -y 50 "$etwtop -d 1 --set-prof-int 2500; sleep 600"
tmux -L "$sock" new-session -d -s p -x 160 -y 50 "perf top -F 4000 -g -d 1 -e cpu-clock -e sched:sched_switch; sleep 600"
sleep 2
epid=$(pgrep -n -f "^$etwtop -d 1")
ppid=$(pgrep -n -f "^perf top -F 4000")
[ -n "$epid" ] && [ -n "$ppid" ] || die "a tool did not start"
rss() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null; }
printf "%8s %14s %14s\n" seconds "etwtop KB" "perf top KB"
e_first="" p_first=""
for ((t = 10; t <= secs; t += 10)); do
        sleep 10
        e=$(rss "$epid") p=$(rss "$ppid")
        [ -n "$e" ] && [ -n "$p" ] || die "a tool exited at ${t} s"
        printf "%8d %14d %14d\n" "$t" "$e" "$p"
        if [ $t = 60 ] || { [ $secs -lt 60 ] && [ -z "$e_first" ]; }; then e_first=$e p_first=$p; fi
        e_last=$e p_last=$p
done
awk -v ef="$e_first" -v el="$e_last" -v pf="$p_first" -v pl="$p_last" 'BEGIN {
        eg = el - ef; pg = pl - pf
        printf "\ngrowth after the first minute: etwtop %+d KB, perf top %+d KB\n", eg, pg
        if (pg > 0) printf "ratio (etwtop / perf top growth): %.2f\n", eg / pg
}'
