#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# top.sh: the live screen against perf top with the same settings on a busy machine: 4 kHz
# timer samples per CPU with call chains, every context switch and wake-up with its call chain
# (etwtop: CSWITCH and DISPATCHER, stacks on Profile, CSwitch and ReadyThread; perf top:
# sched:sched_switch and sched:sched_waking with -c 1, since its -F would sample them at 4 kHz
# too, and cpu-clock with a 250 us period), both drawing in a terminal (tmux) with a 1 s
# refresh. Prints both tools' CPU seconds (user + system: each tool's processes in a cgroup of
# their own, counted to the microsecond; where no cgroup v2 can be made, from /proc/PID/stat's
# 10 ms ticks, each round's beside; etwtop's are its screen's and its session host's) and what each
# screen says was lost, and the ratio; the budget (DESIGN.md) is etwtop <= 1/10 of perf top.
# The pipe ping-pong's rate, and with it both tools' load, moves from one run to the next: the
# tools take turns for ROUNDS rounds and their CPU seconds are summed. What each tool took in its
# first 3 seconds (the start: etwtop's kernel symbols, session and host) is printed apart, with
# the ratio of the rest alone (the budget is on the totals).
# MODE=samples: timer samples with call chains only (etwtop: PROC_THREAD+LOADER+PROFILE, stacks
# on Profile; perf top: the one cpu-clock event, so no event chooser): perf 6.1 here sits at
# "0 irqs/sec" or aborts with the three events of the full settings, and runs with one.
# Each of etwtop's rounds starts cold: a new runtime directory, so no cache of the kernel's
# symbols (kallsyms.cache, kallsyms.table, the host's index) from an earlier start. WARM=1: one
# runtime directory for all rounds, filled by an unmeasured etwtop round first, as a machine where
# etwtop ran since the last boot or module load has them in /run/etwtop.
# Usage: [MODE=samples] [WARM=1] bench/top.sh [BUILD_DIR] [SECONDS] [ROUNDS]
#        (default ./build, 20 s, 3 rounds; needs root, perf, tmux)
set -u
build=${1:-./build}
secs=${2:-20}
rounds=${3:-3}
name=top.sh
. "$(dirname "$0")/screen_common.sh"
hz=$(getconf CLK_TCK)
mode=${MODE:-full} # samples: screen_common.sh's command lines of the samples-only settings

load() { busy_load $((secs + 4)); }
# run NAME COMMAND...: the tool in tmux for secs seconds; prints "cpu_seconds"
run() {
        local name=$1 rt=${warm_rt:-$tmp/run-$round}
        shift
        # etwtop's session runs in its host (etwtop-host): one of this turn's own, whose CPU
        # counts with the screen's
        mkdir -p "$rt" && chmod 700 "$rt"
        local cg cg0=0
        cg=$(cg_make "$name-$round")
        [ -z "$cg" ] || cg0=$(cg_seconds "$cg")
        [ -n "$cg" ] || touch "$tmp/by-ticks" # the summary says which count it took
        tmux -L "$sock" new-session -d -s "$name" -x 160 -y 50 \
                "${cg:+echo \$\$ > $cg/cgroup.procs; }ETWTOP_RUNTIME_DIR=$rt $*; sleep $((secs + 5))"
        sleep 1
        # the tool is the pane's shell's child: etwtop's host is a fork of the screen with the
        # same command line (and started after it), so a match on the command line finds the
        # host, not the screen
        # (looked for again for up to 10 s: a pane's shell can start its command late)
        local pid i
        for ((i = 0; i < 100; i++)); do
                pid=$(pgrep -P "$(tmux -L "$sock" display -p -t "$name" '#{pane_pid}' 2>/dev/null)" \
                        -f "^$1" | head -1)
                [ -n "$pid" ] && break
                sleep 0.1
        done
        # perf top with two events opens on an event chooser: Enter takes the first (cpu-clock),
        # so it draws its histogram browser as etwtop draws its list
        [ "$name" = perf ] && [ "$mode" != samples ] && tmux -L "$sock" send-keys -t "$name" Enter
        # the CPU of the tool's first 3 seconds (its start, which etwtop's screen takes from
        # about 1 s to 2 s: the kernel's symbols, its session, its host), apart from the rest
        local first h0=
        sleep 2
        [ "$name" = etwtop ] && h0=$(cat "$rt/host.lock" 2>/dev/null)
        if [ -n "$cg" ]; then
                first=$(cg_since "$cg" "$cg0")
        else
                first=$(cat "/proc/$pid/stat" ${h0:+"/proc/$h0/stat"} 2>/dev/null |
                        awk -v hz="$hz" '{t += $14 + $15} END {printf "%.3f", t / hz}')
        fi
        sleep $((secs > 2 ? secs - 2 : 0))
        tmux -L "$sock" capture-pane -t "$name" -p >"$tmp/$name.screen" 2>/dev/null
        [ -n "$pid" ] && [ -r "/proc/$pid/stat" ] || die "$name exited early: $(cat "$tmp/$name.screen" 2>/dev/null | grep -v '^$' | tail -3)"
        # utime + stime of the tool's process, and of etwtop's host
        local hpid=
        [ "$name" = etwtop ] && hpid=$(cat "$rt/host.lock" 2>/dev/null)
        [ "$name" != etwtop ] || [ -r "/proc/$hpid/stat" ] || die "etwtop's host not found in $rt"
        [ "$pid" != "$hpid" ] || die "etwtop's screen not found (the host's pid, $pid, came instead)"
        # and the ticks (the figure before the cgroup's, printed beside it)
        local ticks
        ticks=$(cat "/proc/$pid/stat" ${hpid:+"/proc/$hpid/stat"} |
                awk -v hz="$hz" '{t += $14 + $15} END {printf "%.3f", t / hz}')
        if [ -n "$cg" ]; then
                echo "$(cg_since "$cg" "$cg0") ${first:-0} $ticks"
        else
                echo "$ticks ${first:-0} $ticks"
        fi
        tmux -L "$sock" kill-session -t "$name"
        # a kept runtime directory's host must not serve the next round (its CPU is counted
        # from its start): ended here, its caches stay
        if [ -n "$warm_rt" ] && [ -n "$hpid" ]; then
                kill "$hpid" 2>/dev/null
                for ((i = 0; i < 100 && $(kill -0 "$hpid" 2>/dev/null && echo 1 || echo 0); i++)); do
                        sleep 0.1
                done
        fi
}

# turn NAME COMMAND...: one tool's turn of a round under a fresh load; prints its CPU seconds
# and keeps its last screen as NAME.ROUND.screen
turn() {
        local name=$1 cpu
        shift
        load
        sleep 1
        cpu=$(run "$name" "$@")
        wait
        [ -n "$cpu" ] || exit 1
        cp "$tmp/$name.screen" "$tmp/$name.$round.screen"
        echo "$cpu"
}

e_cpu=0 p_cpu=0
e_first=0 p_first=0
warm_rt=
if [ "${WARM:-0}" = 1 ]; then
        warm_rt=$tmp/run-warm
        round=0
        turn etwtop $etwtop_cmd >/dev/null || exit 1
        rm -f "$tmp/etwtop.0.screen" # not counted: its losses neither
        echo "warm-up round: etwtop's caches in $warm_rt" >&2
fi
for ((round = 1; round <= rounds; round++)); do
        read -r e ef et <<<"$(turn etwtop $etwtop_cmd)" || exit 1
        read -r p pf pt <<<"$(turn perf $perf_top_cmd)" || exit 1
        [ -n "$e" ] && [ -n "$p" ] || exit 1
        echo "round $round: etwtop $e s ($ef s in its first 3 s), perf top $p s ($pf s in its first 3 s): $(awk -v e="$e" -v p="$p" 'BEGIN {printf "%.3f", (p > 0 ? e / p : 0)}') (by /proc/PID/stat's ticks: $et s, $pt s)" >&2
        e_cpu=$(awk -v a="$e_cpu" -v b="$e" 'BEGIN {printf "%.3f", a + b}')
        p_cpu=$(awk -v a="$p_cpu" -v b="$p" 'BEGIN {printf "%.3f", a + b}')
        e_first=$(awk -v a="$e_first" -v b="$ef" 'BEGIN {printf "%.3f", a + b}')
        p_first=$(awk -v a="$p_first" -v b="$pf" 'BEGIN {printf "%.3f", a + b}')
done
# what each screen said last, per round, summed
# etwtop's header: "lost N" events, and "buffers lost B" when its consumer fell behind
e_lost=$(cat "$tmp"/etwtop.*.screen | grep -o '[0-9]* samples   lost [0-9]*' |
        awk '{n += $4} END {print n + 0}')
e_buffers=$(cat "$tmp"/etwtop.*.screen | grep -o 'buffers lost [0-9]*' | awk '{n += $3} END {print n + 0}')
[ "$e_buffers" != 0 ] && e_lost="$e_lost (+$e_buffers buffers)"
p_lost=$(cat "$tmp"/perf.*.screen | grep -o 'lost: [0-9]*/[0-9]*' | sed 's/lost: //' |
        awk -F/ '{l += $1; t += $2} END {print l "/" t}')
echo "top benchmark: $rounds rounds of $secs s per tool, $ncpu CPUs busy (spinners and a pipe"
if [ "$mode" = samples ]; then
        echo "ping-pong), 4 kHz timer samples with call chains (MODE=samples: no switch events);"
        echo "both on a 160x50 terminal, 1 s refresh"
else
        echo "ping-pong), 4 kHz samples with call chains, every context switch and wake-up with its"
        echo "call chain; both on a 160x50 terminal, 1 s refresh"
fi
if [ ! -e "$tmp/by-ticks" ]; then
        echo "CPU: each tool's cgroup (cpu.stat, every thread of the tool and of etwtop's host)"
else
        echo "CPU: /proc/PID/stat (10 ms ticks, utime and stime each floored; no cgroup v2 to be made here)"
fi
echo
printf "%-12s %10s %14s\n" tool "CPU s" "lost"
printf "%-12s %10s %14s\n" etwtop "$e_cpu" "${e_lost:-?}"
printf "%-12s %10s %14s\n" "perf top" "$p_cpu" "${p_lost:-?}"
awk -v e="$e_cpu" -v p="$p_cpu" -v ef="$e_first" -v pf="$p_first" 'BEGIN {
        r = p > 0 ? e / p : 0
        printf "\nCPU: etwtop / perf top = %.3f (target <= 0.1): %s\n", r, r <= 0.1 ? "PASS" : "MISS"
        # what the start weighs: the first 3 seconds of each tool against the rest
        rs = p - pf > 0 ? (e - ef) / (p - pf) : 0
        printf "  of it the first 3 s: etwtop %.2f s, perf top %.2f s; the rest alone: %.3f\n", ef, pf, rs
}'
case "$e_lost" in
0) echo "lost: etwtop lost no events (target: none): PASS" ;;
*) echo "lost: etwtop lost $e_lost (target: none): MISS" ;;
esac
