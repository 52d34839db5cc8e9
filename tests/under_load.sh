#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# under_load.sh: runs the test suite while 2 x nproc busy loops hold every core, to show that no
# test depends on timing; the load always stops, and the failures are listed at the end.
# usage: [RUNS=N] [LOAD_LOOPS=N] tests/under_load.sh [BUILD_DIR [ctest options...]]
#        (default: build-asan, -j nproc, one run; RUNS=3: the suite three times under the load)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build-asan}
[ $# -gt 0 ] && shift
cores=$(nproc 2>/dev/null || echo 2)
loops=${LOAD_LOOPS:-$((2 * cores))}
if [ ! -f "$build/CTestTestfile.cmake" ]; then
        echo "under_load: $build is not a configured build folder (see tests/README.md)" >&2
        exit 2
fi
if [ $# -eq 0 ]; then
        set -- -j "$cores"
fi
# the live tests at the busy loops' priority: the point is a suite starved of CPU
export ETWTOP_LIVE_NICE=0
# warnings_gcc compiles the tree at the idle scheduling class, which busy loops never leave it:
# a compile has no timing to test, so it is left out here
set -- "$@" -E '^warnings_gcc$'

pids=()
stop_load() {
        local p
        for p in "${pids[@]}"; do
                kill "$p" 2>/dev/null
        done
        for p in "${pids[@]}"; do
                wait "$p" 2>/dev/null
        done
        pids=()
}
trap stop_load EXIT
trap 'stop_load; exit 130' INT TERM
for _ in $(seq "$loops"); do
        (while :; do :; done) &
        pids+=($!)
done
echo "under_load: $loops busy loops on $cores cores; ctest $* in $build" >&2

runs=${RUNS:-1}
rc=0
for ((run = 1; run <= runs; run++)); do
        log=$(mktemp /tmp/etwtop-under-load-XXXXXX.log)
        start=$(date +%s)
        (cd "$build" && ctest --output-on-failure "$@") 2>&1 | tee "$log"
        run_rc=${PIPESTATUS[0]}
        end=$(date +%s)
        [ "$run_rc" != 0 ] && rc=$run_rc
        echo "under_load: run $run of $runs: ctest exit $run_rc after $((end - start)) s under $loops busy loops; log: $log"
        if grep -q 'The following tests FAILED' "$log"; then
                sed -n '/The following tests FAILED/,$p' "$log"
        fi
done
stop_load
exit "$rc"
