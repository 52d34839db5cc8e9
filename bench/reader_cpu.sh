#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# reader_cpu.sh: the reader's benchmark by CPU time, before and after a change, against perf
# script, in alternated rounds (the machine is shared: the three side by side in each round).
#
#   bench/reader_cpu.sh BASE_BUILD NEW_BUILD PERF_DATA [ROUNDS]
#
# Per round, `perf stat -e task-clock -r 5` of `bench_replay SAMPLE 10` (ten replays a run) of
# each build, then of `perf script -i PERF_DATA -F tid,cpu,time,event,ip`; prints the CPU ms of
# one replay and of one perf script run, and events per second against perf script's
# (records: 179,474 in the sample; PERF_DATA's samples counted once by perf script).
set -u
base=${1:?usage: reader_cpu.sh BASE_BUILD NEW_BUILD PERF_DATA [ROUNDS]}
new=${2:?usage: reader_cpu.sh BASE_BUILD NEW_BUILD PERF_DATA [ROUNDS]}
data=${3:?usage: reader_cpu.sh BASE_BUILD NEW_BUILD PERF_DATA [ROUNDS]}
rounds=${4:-3}
sample=$new/samples/net.4.5.2.x64.etl
[ -f "$sample" ] || { echo "reader_cpu.sh: no $sample (configure with the samples)" >&2; exit 2; }
records=179474
samples=$(perf script -i "$data" -F event 2>/dev/null | wc -l)
# task-clock ms of COMMAND..., the mean of 5 runs
cpu_ms() { perf stat -e task-clock -r 5 -x, "$@" 2>&1 >/dev/null | awk -F, '/task-clock/ {print $1}'; }
echo "perf script's samples: $samples; load: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$rounds"); do
        b=$(cpu_ms "$base/bench/bench_replay" "$sample" 10)
        n=$(cpu_ms "$new/bench/bench_replay" "$sample" 10)
        p=$(cpu_ms perf script -i "$data" -F tid,cpu,time,event,ip)
        awk -v r="$r" -v b="$b" -v n="$n" -v p="$p" -v e="$records" -v s="$samples" \
                -v l="$(cut -d' ' -f1 /proc/loadavg)" 'BEGIN {
                pe = s / (p / 1000)
                printf "round %d (load %s): before %.1f ms, after %.1f ms a replay, perf script %.0f ms: %.1fx -> %.1fx\n",
                       r, l, b / 10, n / 10, p, e / (b / 10000) / pe, e / (n / 10000) / pe }'
done
