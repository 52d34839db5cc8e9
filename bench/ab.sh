#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ab.sh: two builds of the live screen side by side, for telling whether a change costs or
# saves CPU. Both screens run at once (the settings of top.sh) on a machine kept busy the way
# top.sh keeps it busy, and both processes' CPU is read over the same seconds, so both see the
# same load; run one after the other, the load moves more between runs than most changes
# move the CPU. Prints each one's CPU milliseconds per second, what each header says was
# lost, and B/A. The screen started second may read cheaper or dearer for being second, so
# each pair runs in both orders (A started first, then B first) and the B/A printed last is
# the geometric mean of all runs' (the order's share taken out; the share itself printed too).
# The same build twice read 0.97-1.03 a run on quiet days; on 2026-12-04 single runs read 0.84
# to 1.18 and four (PAIRS=2) 1.02: take PAIRS=4 or more where a change is a few percent.
# PAIRS=N: N pairs of each order, all in the mean.
# HOST=1: each screen with a session host of its own (its own ETWTOP_RUNTIME_DIR), the host's
# CPU counted with its screen's: the delivery over the socket is then in the figures.
# MODE=samples: top.sh's samples settings (timer samples with call chains only) rather than the
# full ones.
# ENV_A="VAR=value ...", ENV_B=...: each screen's own environment (one build twice, two ways:
# e.g. ENV_A=ETWTOP_RT_RING=copy HOST=1 bench/ab.sh build-gcc build-gcc).
# Usage: [HOST=1] [MODE=samples] [PAIRS=N] bench/ab.sh BUILD_A BUILD_B [SECONDS]   (default
# 10 s, 1 pair: 2 runs; needs root, perf, tmux)
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
[ "$etwtop_a" != "$etwtop_b" ] || [ "${ENV_A:-}" != "${ENV_B:-}" ] ||
        die "the two builds are the same, and so are ENV_A and ENV_B"
cmd_b=${cmd_a/#$etwtop_a/$etwtop_b}

# each screen's session in its own process: two screens would otherwise meet in one session
# host, where the second StartTrace of "NT Kernel Logger" gets ERROR_ALREADY_EXISTS; the
# host's share is bench/attach.sh's
has_host=${HOST:-0}
[ "$has_host" = 1 ] || export ETWTOP_NO_HOST=1
pairs=${PAIRS:-1}
# CPU nanoseconds of the processes' threads (schedstat's first field: time on a CPU), read at
# both ends of the same seconds; /proc/PID/stat's ticks are 10 ms, 4% of a 15 s window here
cpu_ns() { local p; for p in $1; do cat /proc/"$p"/task/*/schedstat; done | awk '{t += $1} END {printf "%.0f", t}'; }

# One run: both screens under the load, first started first; prints "ms/s_A ms/s_B lost_A|lost_B".
run() {
        local first=$1 n=$2 cmd_x cmd_y
        local rt_a=$tmp/rt-a-$n rt_b=$tmp/rt-b-$n ca="${ENV_A:-} $cmd_a" cb="${ENV_B:-} $cmd_b"
        if [ "$has_host" = 1 ]; then
                mkdir -p "$rt_a" "$rt_b" && chmod 700 "$rt_a" "$rt_b"
                ca="ETWTOP_RUNTIME_DIR=$rt_a $ca"
                cb="ETWTOP_RUNTIME_DIR=$rt_b $cb"
        fi
        if [ "$first" = a ]; then cmd_x=$ca cmd_y=$cb; else cmd_x=$cb cmd_y=$ca; fi
        for ((i = 0; i < ncpu; i++)); do
                (end=$((SECONDS + secs + 6)); while [ $SECONDS -lt $end ]; do :; done) &
        done
        timeout $((secs + 6)) perf bench sched pipe -l 100000000 >/dev/null 2>&1 &
        tmux -L "$sock" new-session -d -s "$first" -x 160 -y 50 "$cmd_x; sleep $((secs + 10))"
        local second=b
        [ "$first" = a ] || second=a
        tmux -L "$sock" new-session -d -s "$second" -x 160 -y 50 "$cmd_y; sleep $((secs + 10))"
        sleep 3
        # the screens are the panes' children (a host is a fork of its screen, with the same
        # command line); "=a:": the session of that name (a bare "b" named session a's pane once
        # b was made first)
        local pid_a pid_b
        pid_a=$(pgrep -P "$(tmux -L "$sock" display -p -t =a: '#{pane_pid}')" -f "^$etwtop_a " | head -1)
        pid_b=$(pgrep -P "$(tmux -L "$sock" display -p -t =b: '#{pane_pid}')" -f "^$etwtop_b " | head -1)
        [ -n "$pid_a" ] && [ -n "$pid_b" ] || die "a screen exited early"
        if [ "$has_host" = 1 ]; then
                pid_a="$pid_a $(cat "$rt_a/host.lock")"
                pid_b="$pid_b $(cat "$rt_b/host.lock")"
        fi
        local a0 a1 b0 b1 lost_a lost_b
        a0=$(cpu_ns "$pid_a") b0=$(cpu_ns "$pid_b")
        sleep "$secs"
        a1=$(cpu_ns "$pid_a") b1=$(cpu_ns "$pid_b")
        lost_a=$(tmux -L "$sock" capture-pane -t =a: -p | head -1 | grep -o 'lost [0-9]*.*')
        lost_b=$(tmux -L "$sock" capture-pane -t =b: -p | head -1 | grep -o 'lost [0-9]*.*')
        tmux -L "$sock" kill-server 2>/dev/null
        # the hosts end with their last screen; the load with its own clock
        for p in $pid_a $pid_b; do
                for ((w = 0; w < 100; w++)); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
        done
        wait
        awk -v a0="$a0" -v a1="$a1" -v b0="$b0" -v b1="$b1" -v s="$secs" \
                'BEGIN {printf "%.3f %.3f", (a1 - a0) / 1e6 / s, (b1 - b0) / 1e6 / s}'
        echo " ${lost_a:-lost ?}|${lost_b:-lost ?}"
}

log=$tmp/runs
: >"$log"
for ((n = 1; n <= pairs; n++)); do
        for first in a b; do
                read -r a b lost <<<"$(run "$first" "$n$first")"
                [ -n "$b" ] || exit 1 # run said why
                echo "$first $a $b" >>"$log"
                printf '%s first: A %.1f ms/s (%s), B %.1f ms/s (%s), B/A %.2f\n' \
                        "$(tr a-b A-B <<<"$first")" "$a" "${lost%%|*}" "$b" "${lost##*|}" \
                        "$(awk -v a="$a" -v b="$b" 'BEGIN {print (a > 0 ? b / a : 0)}')"
        done
done
# B/A = r * x with A first and r / x with B first, x the second screen's share: r the
# geometric mean over both orders, x the square root of their quotient
awk '$2 > 0 && $3 > 0 {l = log($3 / $2); if ($1 == "a") {sa += l; na++} else {sb += l; nb++}}
END {
        if (!na || !nb) {print "B/A: no runs to tell"; exit 1}
        ma = sa / na; mb = sb / nb
        printf "the screen started second reads %.2f of itself\n", exp((ma - mb) / 2)
        printf "B/A %.2f (both orders, %d runs)\n", exp((ma + mb) / 2), na + nb
}' "$log"
