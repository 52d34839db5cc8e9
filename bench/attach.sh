#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# attach.sh: the live screen attached to a session in the host (--start --realtime, then
# --attach) against the same screen with its session in-process (ETWTOP_NO_HOST=1) and with its
# own session in the host (the default), and perf top beside them, on the same load and
# settings as top.sh (4 kHz samples with call chains, every context switch and wake-up, a 1 s
# refresh, a 160x50 tmux pane). etwtop's CPU is the screen's plus, where there is one, its
# host's (etwtop-host, in a runtime directory of this run's own: its pid is in host.lock), from
# /proc/PID/stat; lost is what the header says (events and real-time buffers). Modes take turns
# for ROUNDS rounds, each under a fresh load, and their CPU seconds are summed. The target
# (issue 14): attached <= 1.2 x in-process CPU, nothing lost.
# Usage: bench/attach.sh [BUILD_DIR] [SECONDS] [ROUNDS]
#        (default ./build, 20 s, 3 rounds; needs root, perf, tmux)
set -u
build=${1:-./build}
secs=${2:-20}
rounds=${3:-3}
name=attach.sh
. "$(dirname "$0")/screen_common.sh"
hz=$(getconf CLK_TCK)
settings="--set-prof-int 2500 --on PROC_THREAD+LOADER+PROFILE+CSWITCH+DISPATCHER --stackwalk Profile+CSwitch+ReadyThread --stackwalk-mode fp"

load() {
        for ((i = 0; i < ncpu; i++)); do
                (end=$((SECONDS + secs + 4)); while [ $SECONDS -lt $end ]; do :; done) &
        done
        timeout $((secs + 4)) perf bench sched pipe -l 100000000 >/dev/null 2>&1 &
}
cpu_of() { awk -v hz="$hz" '{printf "%.2f", ($14 + $15) / hz}' "/proc/$1/stat" 2>/dev/null; }

# turn MODE: one mode's turn under a fresh load; prints its CPU seconds, keeps its last screen
turn() {
        local mode=$1 rt=$tmp/run-$1-$round cmd
        mkdir -p "$rt" && chmod 700 "$rt"
        load
        sleep 1
        case $mode in
        in-process) cmd="ETWTOP_NO_HOST=1 $etwtop -d 1 $settings" ;;
        hosted) cmd="ETWTOP_RUNTIME_DIR=$rt $etwtop -d 1 $settings" ;;
        attached)
                ETWTOP_RUNTIME_DIR=$rt "$etwtop" --start --realtime $settings >/dev/null ||
                        die "--start failed"
                cmd="ETWTOP_RUNTIME_DIR=$rt $etwtop --attach -d 1"
                ;;
        perf) cmd=$perf_top_cmd ;;
        esac
        tmux -L "$sock" new-session -d -s "$mode" -x 160 -y 50 "$cmd; sleep $((secs + 5))"
        sleep 1
        local shell pid hpid
        shell=$(tmux -L "$sock" display -p -t "$mode" '#{pane_pid}')
        pid=$(pgrep -P "$shell" | head -1)
        [ "$mode" = perf ] && tmux -L "$sock" send-keys -t "$mode" Enter
        sleep "$secs"
        tmux -L "$sock" capture-pane -t "$mode" -p >"$tmp/$mode.$round.screen" 2>/dev/null
        [ -n "$pid" ] && [ -r "/proc/$pid/stat" ] ||
                die "$mode exited early: $(grep -v '^$' "$tmp/$mode.$round.screen" | tail -3)"
        local cpu host_cpu=0
        cpu=$(cpu_of "$pid")
        hpid=$(cat "$rt/host.lock" 2>/dev/null)
        if [ "$mode" = hosted ] || [ "$mode" = attached ]; then
                [ -n "$hpid" ] && [ -r "/proc/$hpid/stat" ] || die "$mode: no host in $rt"
                host_cpu=$(cpu_of "$hpid")
        fi
        tmux -L "$sock" kill-session -t "$mode"
        [ "$mode" = attached ] && ETWTOP_RUNTIME_DIR=$rt "$etwtop" --stop >/dev/null 2>&1
        wait
        awk -v a="$cpu" -v b="$host_cpu" 'BEGIN {printf "%.2f %.2f\n", a + b, b}'
}

declare -A total host
modes="in-process hosted attached perf"
for m in $modes; do total[$m]=0 host[$m]=0; done
for ((round = 1; round <= rounds; round++)); do
        line="round $round:"
        for m in $modes; do
                r=$(turn "$m") || exit 1
                total[$m]=$(awk -v a="${total[$m]}" -v b="${r% *}" 'BEGIN {printf "%.2f", a + b}')
                host[$m]=$(awk -v a="${host[$m]}" -v b="${r#* }" 'BEGIN {printf "%.2f", a + b}')
                line="$line $m ${r% *} s"
        done
        echo "$line" >&2
done
lost_of() {
        local e b
        e=$(cat "$tmp"/"$1".*.screen | grep -o '[0-9]* samples   lost [0-9]*' | awk '{n += $4} END {print n + 0}')
        b=$(cat "$tmp"/"$1".*.screen | grep -o 'buffers lost [0-9]*' | awk '{n += $3} END {print n + 0}')
        [ "$b" != 0 ] && e="$e (+$b buffers)"
        echo "$e"
}
echo "attach benchmark: $rounds rounds of $secs s per mode, $ncpu CPUs busy (spinners and a pipe"
echo "ping-pong), 4 kHz samples with call chains, every context switch and wake-up with its call"
echo "chain; each on a 160x50 terminal, 1 s refresh"
echo
printf "%-28s %10s %12s %14s\n" mode "CPU s" "of it host" "lost"
printf "%-28s %10s %12s %14s\n" "etwtop, session in-process" "${total[in-process]}" - "$(lost_of in-process)"
printf "%-28s %10s %12s %14s\n" "etwtop, session in the host" "${total[hosted]}" "${host[hosted]}" "$(lost_of hosted)"
printf "%-28s %10s %12s %14s\n" "etwtop --attach" "${total[attached]}" "${host[attached]}" "$(lost_of attached)"
printf "%-28s %10s %12s %14s\n" "perf top" "${total[perf]}" - \
        "$(cat "$tmp"/perf.*.screen | grep -o 'lost: [0-9]*/[0-9]*' | sed 's/lost: //' | awk -F/ '{l += $1; t += $2} END {print l "/" t}')"
awk -v a="${total[attached]}" -v i="${total[in-process]}" -v h="${total[hosted]}" -v p="${total[perf]}" 'BEGIN {
        r = i > 0 ? a / i : 0
        printf "\nCPU: attached / in-process = %.3f (target <= 1.2): %s\n", r, r <= 1.2 ? "PASS" : "MISS"
        hi = i > 0 ? h / i : 0
        ap = p > 0 ? a / p : 0
        printf "CPU: hosted / in-process = %.3f; attached / perf top = %.3f\n", hi, ap
}'
case "$(lost_of attached)" in
0) echo "lost: attached lost nothing (target: none): PASS" ;;
*) echo "lost: attached lost $(lost_of attached) (target: none): MISS" ;;
esac
