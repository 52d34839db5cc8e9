#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# replay_ab.sh: two etwtop binaries' `--replay FILE -b -n 1` alternated, for telling whether a
# change to the replay costs or saves CPU: run one after the other in blocks, this VM's speed
# moves more between minutes than most changes move a replay. Each run's CPU is its own process's
# (perf stat's task-clock; GNU time's %U + %S where perf is missing, to 10 ms), with its page
# faults; prints each binary's median and mean, and B/A of the medians. The same binary twice
# read 0.95-1.05 over 15-30 runs on the 2-vCPU VM (2026-12-04): a change under 5% needs
# several runs of it, at several hours.
# Usage: bench/replay_ab.sh ETWTOP_A ETWTOP_B [RUNS] [FILE]   (default 20 runs each, and
# build-gcc/bench/replay-report/e.etl, which `REPLAY_REPORT=1 bench/replay.sh build-gcc` records)
set -u
[ $# -ge 2 ] || {
        echo "usage: bench/replay_ab.sh ETWTOP_A ETWTOP_B [RUNS] [FILE]" >&2
        exit 2
}
a=$1 b=$2 runs=${3:-20}
file=${4:-$(dirname "$0")/../build-gcc/bench/replay-report/e.etl}
for x in "$a" "$b"; do
        [ -x "$x" ] || {
                echo "replay_ab.sh: $x is not an executable" >&2
                exit 2
        }
done
[ -f "$file" ] || {
        echo "replay_ab.sh: no trace at $file (record one: REPLAY_REPORT=1 bench/replay.sh build-gcc)" >&2
        exit 2
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# one run: "MS FAULTS"
one() {
        if command -v perf >/dev/null && perf stat -x, -e task-clock,page-faults -o "$tmp/stat" \
                "$1" --replay "$file" -b -n 1 >/dev/null 2>&1; then
                awk -F, '/task-clock/ {ms = $1} /page-faults/ {pf = $1} END {printf "%.1f %d\n", ms, pf}' "$tmp/stat"
        else
                /usr/bin/time -f '%U %S %R' -o "$tmp/time" "$1" --replay "$file" -b -n 1 >/dev/null 2>&1
                awk '{printf "%.1f %d\n", ($1 + $2) * 1000, $3}' "$tmp/time"
        fi
}
for ((i = 0; i < runs; i++)); do
        echo "A $(one "$a")" >>"$tmp/runs"
        echo "B $(one "$b")" >>"$tmp/runs"
done
stats() { # A|B -> "median mean faults"
        awk -v k="$1" '$1 == k {print $2, $3}' "$tmp/runs" | sort -n |
                awk '{v[NR] = $1; s += $1; f += $2} END {printf "%.1f %.1f %.0f\n", v[int((NR + 1) / 2)], s / NR, f / NR}'
}
read -r ma ea fa <<<"$(stats A)"
read -r mb eb fb <<<"$(stats B)"
echo "replay_ab.sh: $runs alternating runs each of --replay $(basename "$file") -b -n 1"
printf '%-4s %-60s %10s %10s %10s\n' "" binary "median ms" "mean ms" faults
printf '%-4s %-60s %10s %10s %10s\n' A "$a" "$ma" "$ea" "$fa"
printf '%-4s %-60s %10s %10s %10s\n' B "$b" "$mb" "$eb" "$fb"
awk -v a="$ma" -v b="$mb" 'BEGIN {printf "B/A (medians): %.3f\n", b / a}'
