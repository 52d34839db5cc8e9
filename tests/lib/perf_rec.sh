# SPDX-License-Identifier: MIT
# perf_rec.sh: sourced by the shell tests that record with perf (perf_data_threads,
# perf_data_events, perf_data_fields, perf_data_buildid_cache), after check.sh: their start
# (perf_test_start), perf found, its build-id cache, a recording tried again where perf aborts,
# and the counts a replay's table and perf report give, to set side by side.
# perf_test_start: what each of them starts with: $tmp, a folder of its own removed at its exit;
# a skip where perf is missing (perf_needed); on a failed check, the last lines of each *.err
# under $tmp (check.sh's on_fail).
perf_test_start() {
        tmp=$(mktemp -d)
        # shellcheck disable=SC2064
        trap "rm -rf '$tmp'" EXIT
        perf_needed
        on_fail() { tail -3 "$tmp"/*.err 2>/dev/null; }
}
# perf_needed: exits 77 (skipped), saying why, where perf is not installed.
perf_needed() {
        command -v perf >/dev/null && perf version >/dev/null 2>&1 && return 0
        echo "SKIP: perf is not installed"
        echo "0 passed, 0 failed, 1 skipped"
        exit 77
}
# perf_cc: $cc, the C compiler the tests that build a program use; exits 77 (skipped) without one.
perf_cc() {
        cc=$(command -v cc || command -v gcc || command -v clang) && return 0
        echo "SKIP: no C compiler"
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
# recording while other programs run (perf record --threads more often): tried three times,
# then once without build-ids (-B, which never aborts so; the kernel's symbols then come as
# for perf record -z's files). With PERF_RECORD_BUILDIDS=1 (a test of the build-ids), the last
# try is --buildid-mmap instead (the build-ids in the MMAP2 records, from the kernel: no
# post-processing either, and no build-id cache filled), and perf_rec_mmap_ids is then true: the
# caller adds what it needs in the cache (perf buildid-cache -a). False when every try failed.
perf_rec_mmap_ids=false
perf_record() {
        local out=$1 err=$2 try
        shift 2
        perf_rec_mmap_ids=false
        for try in 1 2 3 4; do
                rm -rf "$out"
                if [ $try = 4 ] && [ "${PERF_RECORD_BUILDIDS:-0}" = 1 ]; then
                        perf record -q --buildid-mmap -o "$out" "$@" >/dev/null 2>"$err" ||
                                return 1
                        perf_rec_mmap_ids=true
                        return 0
                fi
                if [ $try = 4 ]; then
                        perf record -q -B -o "$out" "$@" >/dev/null 2>"$err"
                        return
                fi
                perf record -q -o "$out" "$@" >/dev/null 2>"$err" && return 0
        done
        return 1
}

# title_count FILE NAME: the samples in the title of a replay's table of NAME ("Hot functions
# (NAME, N samples"; NAME is ETW's for a timer: Timer)
title_count() {
        grep -oE "^Hot functions \($2, [0-9]+ samples" "$1" | grep -oE '[0-9]+ samples' |
                grep -oE '[0-9]+'
}
# hottest_samples FILE NAME: the samples of the hottest function of a replay's table of NAME
hottest_samples() {
        awk -v n="Hot functions ($2, " 'index($0, n) == 1 {t = 1; next} /^Hot functions/ {t = 0}
                t && /^ +[0-9.]+%/ {print $3; exit}' "$1"
}
# perf_hottest_samples DATA EVENT: perf report's hottest symbol's samples for event EVENT
perf_hottest_samples() {
        perf report -i "$1" --stdio --no-children -g none -F sample,sym 2>/dev/null |
                awk -v e="of event '$2'" 'index($0, e) {t = 1; next} /^# Samples/ {t = 0}
                        t && /^ +[0-9]+ / {print $1; exit}'
}
