#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rt_ring.sh: what a live screen and its session host cost with the real-time buffers handed over
# through the host's shared ring (the default) against the socket (ETWTOP_RT_SOCKET=1), both
# at once on the same busy machine, so that both see the same events: two batch screens
# (`-b -d 1`, each with its own runtime directory and so its own host), timer samples with stacks
# at 4 kHz, context switches and wake-ups with stacks (MODE=samples: the samples alone), the
# record.sh load (a spinning shell per CPU and a pipe ping-pong). Each round counts the CPU of
# every thread of each screen and its host (/proc/PID/task/*/schedstat, nanoseconds) over the
# middle of the run (from 3 s, for SECONDS - 4 s); the two sides swap places every round.
# Prints each round and the ratio ring / socket of the sums.
# Usage: [MODE=samples] bench/rt_ring.sh [BUILD_DIR] [SECONDS] [ROUNDS]   (default ./build, 16 s,
#        4 rounds; needs root: the sessions are the kernel's)
set -u
build=${1:-./build}
secs=${2:-16}
rounds=${3:-4}
etwtop=$build/src/etwtop
die() { echo "rt_ring.sh: $*" >&2; exit 1; }
[ -x "$etwtop" ] || die "$etwtop not built"
command -v perf >/dev/null || die "perf not found (Debian: linux-perf): the load's pipe ping-pong"
[ "$secs" -ge 8 ] || die "SECONDS is 8 at least"
args=(--set-prof-int 2500 --on PROC_THREAD+LOADER+PROFILE+CSWITCH+DISPATCHER
        --stackwalk Profile+CSwitch+ReadyThread --stackwalk-mode fp)
[ "${MODE:-full}" = samples ] &&
        args=(--set-prof-int 2500 --on PROC_THREAD+LOADER+PROFILE --stackwalk Profile --stackwalk-mode fp)
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$tmp"' EXIT
ncpu=$(nproc)

# the CPU ms of every thread of the processes named
cpu_ms() {
        local p
        for p in "$@"; do cat /proc/"$p"/task/*/schedstat 2>/dev/null; done |
                awk '{t += $1} END {printf "%d", t / 1000000}'
}

# round N: prints "RING_MS SOCKET_MS"
round() {
        local r=$1 i side pids=() hosts=() t0=() t1=()
        for ((i = 0; i < ncpu; i++)); do
                (end=$((SECONDS + secs + 6)); while [ $SECONDS -lt $end ]; do :; done) &
        done
        timeout $((secs + 6)) perf bench sched pipe -l 1000000000 >/dev/null 2>&1 &
        sleep 1
        for side in 0 1; do
                mkdir -p "$tmp/$r.$side" && chmod 700 "$tmp/$r.$side"
                # odd rounds: side 0 the socket; even rounds: side 1
                local sock=$(((r + side) % 2))
                env ETWTOP_RUNTIME_DIR="$tmp/$r.$side" ETWTOP_RT_SOCKET=$sock "$etwtop" -b -n "$secs" \
                        -d 1 --top 5 "${args[@]}" >"$tmp/$r.$side.out" 2>&1 &
                pids[side]=$!
        done
        sleep 3
        for side in 0 1; do
                hosts[side]=$(cat "$tmp/$r.$side/host.lock" 2>/dev/null)
                [ -n "${hosts[side]}" ] || die "round $r: no session host in $tmp/$r.$side"
                t0[side]=$(cpu_ms "${pids[side]}" "${hosts[side]}")
        done
        sleep $((secs - 4))
        for side in 0 1; do t1[side]=$(cpu_ms "${pids[side]}" "${hosts[side]}"); done
        wait "${pids[@]}"
        local lost
        lost=$(cat "$tmp/$r.0.out" "$tmp/$r.1.out" | grep -o 'lost [0-9]*' | awk '{n += $2} END {print n + 0}')
        [ "$lost" = 0 ] || echo "round $r: $lost events lost" >&2
        local a=$((t1[0] - t0[0])) b=$((t1[1] - t0[1]))
        if (((r + 0) % 2)); then echo "$b $a"; else echo "$a $b"; fi
        wait
}

sum_ring=0 sum_sock=0
for r in $(seq "$rounds"); do
        read -r ring sock < <(round "$r")
        printf "round %d: ring %d ms, socket %d ms (%.3f)\n" "$r" "$ring" "$sock" \
                "$(awk -v a="$ring" -v b="$sock" 'BEGIN {print (b > 0 ? a / b : 0)}')"
        sum_ring=$((sum_ring + ring))
        sum_sock=$((sum_sock + sock))
done
echo "rt_ring benchmark: $rounds rounds, ${MODE:-full} settings, $ncpu CPUs busy; screen and host CPU over $((secs - 4)) s of each"
awk -v a="$sum_ring" -v b="$sum_sock" 'BEGIN {printf "CPU: ring %d ms / socket %d ms = %.3f\n", a, b, (b > 0 ? a / b : 0)}'
