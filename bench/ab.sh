#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ab.sh: two builds of the live screen side by side, for telling whether a change costs or
# saves CPU. Both screens run at once (the settings of top.sh) on a machine kept busy the way
# top.sh keeps it busy, and both processes' CPU is read over the same seconds, so both see the
# same load; run one after the other, the load moves more between runs than most changes
# move the CPU. Prints each one's CPU milliseconds per second, what each header says was
# lost, and B/A. Run it twice with the builds swapped: the same build twice reads 0.97-1.03.
# HOST=1: each screen with a session host of its own (its own ETWTOP_RUNTIME_DIR), the host's
# CPU counted with its screen's: the delivery over the socket is then in the figures.
# MODE=samples: top.sh's samples settings (timer samples with call chains only) rather than the
# full ones.
# Usage: [HOST=1] [MODE=samples] bench/ab.sh BUILD_A BUILD_B [SECONDS]   (default 10 s; needs
# root, perf, tmux)
set -u
[ $# -ge 2 ] || {
        echo "usage: bench/ab.sh BUILD_A BUILD_B [SECONDS]" >&2
        exit 2
}
build_b=$2
secs=${3:-10}
build=$1
name=ab.sh
. "$(dirname "$0")/screen_common.sh"
if [ "${MODE:-full}" = samples ]; then
        etwtop_cmd="$etwtop -d 1 --set-prof-int 2500 --on PROC_THREAD+LOADER+PROFILE --stackwalk Profile --stackwalk-mode fp"
fi
etwtop_a=$etwtop
cmd_a=$etwtop_cmd
etwtop_b=$(realpath "$build_b/src/etwtop")
[ -x "$etwtop_b" ] || die "$etwtop_b not built"
[ "$etwtop_a" != "$etwtop_b" ] || die "the two builds are the same"
cmd_b=${cmd_a/#$etwtop_a/$etwtop_b}

# each screen's session in its own process: two screens would otherwise meet in one session
# host, where the second StartTrace of "NT Kernel Logger" gets ERROR_ALREADY_EXISTS; the
# host's share is bench/attach.sh's
has_host=${HOST:-0}
if [ "$has_host" = 1 ]; then
        mkdir -p "$tmp/rt-a" "$tmp/rt-b" && chmod 700 "$tmp/rt-a" "$tmp/rt-b"
        cmd_a="ETWTOP_RUNTIME_DIR=$tmp/rt-a $cmd_a"
        cmd_b="ETWTOP_RUNTIME_DIR=$tmp/rt-b $cmd_b"
else
        export ETWTOP_NO_HOST=1
fi
for ((i = 0; i < ncpu; i++)); do
        (end=$((SECONDS + secs + 6)); while [ $SECONDS -lt $end ]; do :; done) &
done
timeout $((secs + 6)) perf bench sched pipe -l 100000000 >/dev/null 2>&1 &
tmux -L "$sock" new-session -d -s a -x 160 -y 50 "$cmd_a; sleep $((secs + 10))"
tmux -L "$sock" new-session -d -s b -x 160 -y 50 "$cmd_b; sleep $((secs + 10))"
sleep 3
# the screens are the panes' children (a host is a fork of its screen, with the same command line)
pid_a=$(pgrep -P "$(tmux -L "$sock" display -p -t a '#{pane_pid}')" -f "^$etwtop_a " | head -1)
pid_b=$(pgrep -P "$(tmux -L "$sock" display -p -t b '#{pane_pid}')" -f "^$etwtop_b " | head -1)
[ -n "$pid_a" ] && [ -n "$pid_b" ] || die "a screen exited early"
if [ "$has_host" = 1 ]; then
        pid_a="$pid_a $(cat "$tmp/rt-a/host.lock")"
        pid_b="$pid_b $(cat "$tmp/rt-b/host.lock")"
fi
# CPU nanoseconds of the processes' threads (schedstat's first field: time on a CPU), read at
# both ends of the same seconds; /proc/PID/stat's ticks are 10 ms, 4% of a 15 s window here
cpu_ns() { local p; for p in $1; do cat /proc/"$p"/task/*/schedstat; done | awk '{t += $1} END {printf "%.0f", t}'; }
a0=$(cpu_ns "$pid_a") b0=$(cpu_ns "$pid_b")
sleep "$secs"
a1=$(cpu_ns "$pid_a") b1=$(cpu_ns "$pid_b")
lost_a=$(tmux -L "$sock" capture-pane -t a -p | head -1 | grep -o 'lost [0-9]*.*')
lost_b=$(tmux -L "$sock" capture-pane -t b -p | head -1 | grep -o 'lost [0-9]*.*')
awk -v a0="$a0" -v a1="$a1" -v b0="$b0" -v b1="$b1" -v s="$secs" \
        -v la="$lost_a" -v lb="$lost_b" 'BEGIN {
        a = (a1 - a0) / 1e6 / s; b = (b1 - b0) / 1e6 / s
        printf "A %.1f ms/s (%s)\nB %.1f ms/s (%s)\nB/A %.2f\n", a, la, b, lb, (a > 0 ? b / a : 0)
}'
