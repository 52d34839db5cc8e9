#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ends.sh: what a live screen costs once, its start and its quit, for one build or two in turn.
# Each round runs the screen (top.sh's settings, MODE=samples: its samples-only ones) in tmux
# for SECONDS under top.sh's load (a busy loop a CPU and a pipe ping-pong), types q, and reads
# the CPU of everything the round ran in its cgroup (v2: the screen and its session host, every
# thread, those that exited too) once both processes are gone: the start, SECONDS of the steady
# state and the quit. top.sh counts neither tool's quit (it reads its count before it ends
# them); with a short SECONDS the start and the quit are most of this. The rounds take the builds
# in turn (A, B, A, B...), each with a runtime directory of its own kept over its rounds and
# filled by an unmeasured round first (warm caches: the kernel's symbols, as in top.sh's
# WARM=1). COLD=1: a new runtime directory for every round and no unmeasured round (cold caches,
# as top.sh's rounds start: the kernel's symbols read from /proc/kallsyms, parsed and kept).
# Prints each round's milliseconds, each build's mean, and B/A. No ratio against perf: top.sh
# compares with perf top.
# Usage: [MODE=samples|full] [COLD=1] bench/ends.sh BUILD_A [BUILD_B] [ROUNDS] [SECONDS]
#        (default 5 rounds of 3 s; needs root, cgroup v2, perf, tmux)
set -u
build_a=${1:?usage: bench/ends.sh BUILD_A [BUILD_B] [ROUNDS] [SECONDS]}
build_b=${2:-}
rounds=${3:-5}
secs=${4:-3}
name=ends.sh
MODE=${MODE:-samples}
build=$build_a
. "$(dirname "$0")/screen_common.sh"
[ -n "$cg_root" ] || die "no cgroup v2 to count a round's processes in"
builds=("$build_a")
[ -n "$build_b" ] && builds+=("$build_b")

load() { busy_load $((secs + 4)); }

# round B K: build number B's round K; prints its CPU milliseconds (nothing where it failed)
round() {
        local b=$1 k=$2 e rt cg cg0 pane pids
        e=$(realpath "${builds[$b]}/src/etwtop")
        rt=$tmp/rt-$b
        [ "${COLD:-0}" = 1 ] && rt=$tmp/rt-$b-$k
        mkdir -p "$rt" && chmod 700 "$rt"
        cg=$(cg_make "$b-$k")
        [ -n "$cg" ] || return 0
        cg0=$(cg_seconds "$cg")
        load
        sleep 1
        # the screen's command line is top.sh's (screen_common.sh), with this build's program
        tmux -L "$sock" new-session -d -s "r$b$k" -x 160 -y 50 \
                "echo \$\$ > $cg/cgroup.procs; ETWTOP_RUNTIME_DIR=$rt exec ${etwtop_cmd/#$etwtop/$e}"
        sleep "$secs"
        pane=$(tmux -L "$sock" display -p -t "r$b$k" '#{pane_pid}' 2>/dev/null)
        tmux -L "$sock" send-keys -t "r$b$k" q
        # both gone: the screen, and the host it forked (its lock file names it)
        local host
        host=$(cat "$rt/host.lock" 2>/dev/null)
        for ((i = 0; i < 200; i++)); do
                pids=$(cat "$cg/cgroup.procs" 2>/dev/null)
                [ -z "$pids" ] && break
                sleep 0.1
        done
        wait
        [ -z "$pids" ] || die "round $k of ${builds[$b]}: still running after its quit (pids $pids, screen $pane, host $host)"
        awk -v s="$cg0" '/^usage_usec/ {printf "%.2f", ($2 / 1e6 - s) * 1000}' "$cg/cpu.stat"
}

caches=warm
[ "${COLD:-0}" = 1 ] && caches=cold
echo "ends: ${#builds[@]} build(s), $rounds rounds of $secs s each, MODE=$MODE, $caches caches, $ncpu CPUs busy; the CPU a round (ms): start, $secs s, quit"
# an unmeasured round of each build first: its runtime directory's caches made (COLD=1: none)
if [ "${COLD:-0}" != 1 ]; then
        for b in "${!builds[@]}"; do
                round "$b" 0 >/dev/null
        done
fi
declare -a sum
for ((k = 1; k <= rounds; k++)); do
        for b in "${!builds[@]}"; do
                ms=$(round "$b" "$k")
                [ -n "$ms" ] || die "round $k of ${builds[$b]} measured nothing"
                echo "round $k, ${builds[$b]}: $ms ms"
                sum[b]=$(awk -v a="${sum[b]:-0}" -v m="$ms" 'BEGIN {printf "%.2f", a + m}')
        done
done
for b in "${!builds[@]}"; do
        echo "mean, ${builds[$b]}: $(awk -v s="${sum[b]}" -v n="$rounds" 'BEGIN {printf "%.2f", s / n}') ms"
done
if [ -n "$build_b" ]; then
        awk -v a="${sum[0]}" -v b="${sum[1]}" 'BEGIN {printf "B/A %.3f\n", b / a}'
fi
