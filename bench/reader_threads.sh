#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# reader_threads.sh: the reader with its XPRESS buffers decompressed ahead on worker threads
# against the reading thread alone (ETWTOP_READER_THREADS=N against 0), in alternated rounds;
# prints the medians of wall and CPU time per pass, each count's ratio to the thread alone, and
# the share of the compressed buffers that the reading thread still decompressed itself.
#
#   [WORKERS="0 1 ..."] bench/reader_threads.sh BUILD_DIR [ROUNDS] [PASSES]
#
# WORKERS: the worker counts compared (default: 0, 1, and the reader's own choice where it is
# more than one: one a processor beside the reading thread's, 8 at most, `nproc` here).
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
auto=$(($(nproc) - 1))
[ "$auto" -le 8 ] || auto=8
workers="0 1"
[ "$auto" -le 1 ] || workers="$workers $auto"
workers=${WORKERS:-$workers}
for ((r = 0; r < rounds; r++)); do
        for t in $workers; do
                ETWTOP_READER_THREADS=$t perf stat -x, -e task-clock,duration_time \
                        "$bench" "$sample" "$passes" 2>&1 >/dev/null |
                        awk -F, -v t="$t" -v n="$passes" '
                                $3 == "task-clock" { c = $1 }
                                $3 == "duration_time" { w = $1 / 1e6 }
                                /^inflate_workers=/ {
                                        split($0, kv, /[ =]/); a = kv[4]; h = kv[6]
                                }
                                END { print t, c / n, w / n, (a + h > 0 ? h / (a + h) : 0) }'
        done
done | sort -k1,1 -k3,3n | awk -v rounds="$rounds" -v passes="$passes" -v workers="$workers" \
        -v ncpu="$(nproc)" '
        { cpu[$1, ++n[$1]] = $2; wall[$1, n[$1]] = $3; here[$1, n[$1]] = $4 }
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
                printf "bench_replay, %d pass(es) a process, %d alternated rounds, %d CPUs; ms a pass, medians\n", passes, rounds, ncpu
                w0 = median_of(wall, 0); c0 = median_of(cpu, 0)
                nt = split(workers, ts, " ")
                for (i = 1; i <= nt; i++) {
                        t = ts[i]
                        w = median_of(wall, t); c = median_of(cpu, t)
                        what = t == 0 ? "reading thread alone" : t == 1 ? "one worker ahead" : t " workers ahead"
                        printf "%-22s (ETWTOP_READER_THREADS=%-2s)  wall %7.2f   CPU %7.2f", what, t, w, c
                        if (t != 0 && w0 > 0)
                                printf "   against alone: wall %.3f, CPU %.3f", w / w0, c / c0
                        # the share of the XPRESS buffers the reading thread decompressed itself
                        # (no worker had started it, or it helped them: etw_trace_get_stats)
                        if (t != 0)
                                printf "   by the reading thread %.0f%%", 100 * median_of(here, t)
                        printf "\n"
                }
        }'
