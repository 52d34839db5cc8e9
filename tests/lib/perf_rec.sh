# SPDX-License-Identifier: MIT
# perf_rec.sh: sourced by the shell tests that record with perf (perf_data_threads,
# perf_data_events, perf_data_buildid_cache), after check.sh and once $tmp exists.
# perf_needed: exits 77 (skipped), saying why, where perf is not installed.
perf_needed() {
        command -v perf >/dev/null && perf version >/dev/null 2>&1 && return 0
        echo "SKIP: perf is not installed"
        echo "0 passed, 0 failed, 1 skipped"
        exit 77
}
# perf_home: perf's build-id cache (~/.debug) of the test's own, under $tmp: two perf record at
# once writing one cache can abort, and the suite runs tests side by side
perf_home() {
        export HOME=$tmp/home
        mkdir -p "$HOME"
}
# perf_record OUT ERR PERF_RECORD_ARGS...: perf record -q -o OUT ARGS..., its messages in ERR.
# Debian's perf 6.1 at times aborts on an assertion in util/build-id.c at the end of a
# recording while other programs run: tried three times. False when all three failed.
perf_record() {
        local out=$1 err=$2 try
        shift 2
        for try in 1 2 3; do
                rm -rf "$out"
                perf record -q -o "$out" "$@" >/dev/null 2>"$err" && return 0
        done
        return 1
}
