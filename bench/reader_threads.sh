#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# reader_threads.sh: the reader with its XPRESS buffers decompressed ahead on a second thread
# against the reading thread alone (ETWTOP_READER_THREADS=1 against 0), in alternated rounds;
# prints the medians of wall and CPU time per pass.
#
#   bench/reader_threads.sh BUILD_DIR [ROUNDS] [PASSES]
#
# Per round, `perf stat -e task-clock,duration_time` of `bench_replay SAMPLE PASSES` once each
# way (PASSES 1: a process per pass, as a replay is; more: the passes after the process's first).
set -euo pipefail
build=${1:?usage: reader_threads.sh BUILD_DIR [ROUNDS] [PASSES]}
rounds=${2:-10}
passes=${3:-1}
bench=$build/bench/bench_replay
sample=$build/samples/net.4.5.2.x64.etl
[ -x "$bench" ] || { echo "reader_threads.sh: no $bench" >&2; exit 2; }
[ -f "$sample" ] || { echo "reader_threads.sh: no $sample (configure with the samples)" >&2; exit 2; }
command -v perf >/dev/null || { echo "reader_threads.sh: perf not found" >&2; exit 2; }
for ((r = 0; r < rounds; r++)); do
        for t in 0 1; do
                ETWTOP_READER_THREADS=$t perf stat -x, -e task-clock,duration_time \
                        "$bench" "$sample" "$passes" 2>&1 >/dev/null |
                        awk -F, -v t="$t" -v n="$passes" '
                                $3 == "task-clock" { c = $1 }
                                $3 == "duration_time" { w = $1 / 1e6 }
                                END { print t, c / n, w / n }'
        done
done | sort -k1,1 -k3,3n | awk -v rounds="$rounds" -v passes="$passes" '
        { cpu[$1, ++n[$1]] = $2; wall[$1, n[$1]] = $3 }
        function median_of(a, t, k, i, j, v, m, x) {
                m = n[t]
                for (i = 1; i <= m; i++) x[i] = a[t, i]
                for (i = 2; i <= m; i++) {           # insertion sort: a few dozen values
                        v = x[i]
                        for (j = i - 1; j >= 1 && x[j] > v; j--) x[j + 1] = x[j]
                        x[j + 1] = v
                }
                return m % 2 ? x[(m + 1) / 2] : (x[m / 2] + x[m / 2 + 1]) / 2
        }
        END {
                printf "bench_replay, %d pass(es) a process, %d alternated rounds; ms a pass, medians\n", passes, rounds
                w0 = median_of(wall, 0); w1 = median_of(wall, 1)
                c0 = median_of(cpu, 0); c1 = median_of(cpu, 1)
                printf "reading thread alone (ETWTOP_READER_THREADS=0)   wall %7.2f   CPU %7.2f\n", w0, c0
                printf "decompressed ahead   (ETWTOP_READER_THREADS=1)   wall %7.2f   CPU %7.2f\n", w1, c1
                printf "ahead / alone                                    wall %7.3f   CPU %7.3f\n", w1 / w0, c1 / c0
        }'
