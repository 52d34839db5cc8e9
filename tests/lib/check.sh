# SPDX-License-Identifier: MIT
# check.sh: sourced by the shell tests: their pass/fail/skip counts and the check that keeps
# them. A test may define on_fail (run after a failed check's message, to stderr) to show more.
nr_pass=0 nr_fail=0 nr_skip=0
# A live test (ETWTOP_LIVE_TEST=1, set by tests/CMakeLists.txt for the tests that take the live
# lock) runs at nice ETWTOP_LIVE_NICE (-5), its sessions, screens and workloads with it: the live
# tests, one after another, are the suite's longest path, and the tests beside them have no
# clock to keep (tests/README.md, "How long the suite takes"); under_load.sh sets 0
if [ "${ETWTOP_LIVE_TEST:-0}" = 1 ] && [ "${ETWTOP_LIVE_NICE:--5}" != 0 ]; then
        renice -n "${ETWTOP_LIVE_NICE:--5}" -p $$ >/dev/null 2>&1 || true
fi
# PY: the python3 the tests run, Debian's (/usr/bin/python3, whose modules setup.sh installs)
# before another on PATH (a version manager's shim there ran several shells a call: 0.36 s of
# CPU against 0.02 s, a hundred calls a suite); empty where there is none
PY=$(command -v /usr/bin/python3 || command -v python3 || true)
# check DESCRIPTION COMMAND...: counts COMMAND's outcome; says FAIL: DESCRIPTION when it fails
# (ETWTOP_CHECK_TIMES=FILE: each check's seconds appended to FILE, to find where a slow run's
# time went)
check() {
        local what=$1 t0=$SECONDS
        shift
        if "$@"; then
                nr_pass=$((nr_pass + 1))
        else
                nr_fail=$((nr_fail + 1))
                echo "FAIL: $what" >&2
                if declare -F on_fail >/dev/null; then on_fail >&2; fi
        fi
        [ -z "${ETWTOP_CHECK_TIMES:-}" ] || echo "$((SECONDS - t0)) $what" >>"$ETWTOP_CHECK_TIMES"
}
skip() {
        nr_skip=$((nr_skip + 1))
        echo "SKIP: $*" >&2
}
# finish: the counts said, and the test's end: its status is whether no check failed
finish() {
        echo "$nr_pass passed, $nr_fail failed, $nr_skip skipped"
        [ $nr_fail = 0 ]
        exit
}
# wait_until SECONDS COMMAND...: runs COMMAND every 0.1 s until it succeeds (returns 0) or SECONDS
# have passed (returns 1): a test waits for the state it checks, with a generous bound, not for
# a fixed time (the suite runs on loaded machines: tests/under_load.sh)
wait_until() {
        local end=$((SECONDS + $1))
        shift
        until "$@"; do
                [ "$SECONDS" -ge "$end" ] && return 1
                sleep 0.1
        done
}
# recording_started FILE PID: waits, up to 60 s, for etwtop --record FILE (process PID) to have
# started its session (the file holds its first buffer) or ended; false if neither came
recording_started() {
        wait_until 60 eval "[ -s '$1' ] || ! kill -0 $2 2>/dev/null"
}
# header_buffers FILE: the BuffersWritten of a recording's header (written as it goes: a killed
# recorder's file says what it held), empty while the file has none
header_buffers() {
        "$ETWTOP" --dump --totals "$1" 2>/dev/null |
                awk 'index($0, "Buffers written:") == 1 {sub(/^[^:]*: */, ""); print $1; exit}'
}
# recording_written FILE PID: waits, up to 120 s, for etwtop --record FILE (process PID) to have
# written a buffer past its header buffer and counted it in its header (its session runs and is
# bound to it: a kill -9 now leaves a file of events), or ended; false if neither came
recording_written() {
        wait_until 120 eval "[ \"\$(header_buffers '$1')\" -gt 1 ] 2>/dev/null || ! kill -0 $2 2>/dev/null"
}
# frames_begun FILE PATTERN: how many frames of etwtop -b's output in FILE have begun (lines
# matching PATTERN, the first table's title)
frames_begun() { grep -c -- "$2" "$1" 2>/dev/null; }
# wait_frames FILE PATTERN N PID: waits, up to 3 minutes, until frame N of etwtop -b (process
# PID, writing FILE) has begun, so that frame N-1 is whole; false if it did not come or the
# process ended
wait_frames() {
        wait_until 180 eval "[ \"\$(frames_begun '$1' '$2')\" -ge $3 ] || ! kill -0 $4 2>/dev/null" &&
                [ "$(frames_begun "$1" "$2")" -ge "$3" ]
}
# has_mapped PID TEXT: whether process PID has a mapping whose path holds TEXT
has_mapped() { grep -q -- "$2" "/proc/$1/maps" 2>/dev/null; }
# tm_new ARGS...: `tm new-session ARGS` (tm: the test's tmux on its own socket), again after a
# pause where it fails: tmux's server has exited as it started ("server exited unexpectedly")
# twice in runs of the whole suite, never alone; the tests check etwtop, not tmux's start.
# The pane stays when its command ends (remain-on-exit), with how it ended (#{pane_dead_status},
# #{pane_dead_signal}) and what it wrote last: a session gone at once under load (stop 98) said
# nothing of why
tm_new() {
        local i
        for ((i = 1; i <= 3; i++)); do
                tm set-option -g remain-on-exit on \; new-session "$@" && return 0
                echo "tmux new-session failed (try $i of 3)" >&2
                tm kill-server 2>/dev/null
                sleep 1
        done
        echo "FAIL: tmux new-session $*: tmux's server did not start in 3 tries" >&2
        exit 1
}
# test_part ARG PART...: the part of a test its argument names (ARG; none: "all"), on stdout;
# with a usage message on stderr and false for another (part=$(test_part "${1-}" a b) || exit 2)
test_part() {
        local arg=${1:-all} p
        shift
        for p in all "$@"; do
                [ "$arg" = "$p" ] && echo "$arg" && return 0
        done
        echo "usage: $(basename "$0") [$(IFS='|' && echo "$*")]" >&2
        return 1
}
