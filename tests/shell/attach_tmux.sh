#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# attach_tmux.sh: etwtop --attach in tmux (issue 14): the screen consumes a session --start left
# running; a change another program makes (--update) shows in its header; the session panel's
# CSWITCH key and its user-stack rows update that session, which --loggers in another shell
# shows; F2 saves from the host's ring; q leaves the session running, its consumer gone.
set -u
: "${ETWTOP:?}"
command -v tmux >/dev/null || { echo "SKIP: tmux not installed"; echo "0 passed, 0 failed, 1 skipped"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "SKIP: kernel sessions need root"; echo "0 passed, 0 failed, 1 skipped"; exit 77; }
sock=etwtop-attach-$$
tm() { tmux -L "$sock" "$@"; }
tmp=$(mktemp -d)
export ETWTOP_RUNTIME_DIR=$tmp/rt ETWTOP_HOST_GRACE_MS=300
unset ETWTOP_NO_HOST
cleanup() {
        tm kill-server 2>/dev/null
        "$ETWTOP" --stop >/dev/null 2>&1
        kill $(jobs -p) 2>/dev/null
        rm -rf "$tmp"
}
trap cleanup EXIT
. "$(dirname "$0")/../lib/check.sh"
on_fail() {
        echo "--- screen:"
        cat "$tmp/screen"
        echo "--- loggers:"
        cat "$tmp/loggers" 2>/dev/null
}
. "$(dirname "$0")/../lib/tmux_screen.sh"
# waits up to $2 seconds for --loggers to print a line matching $1
loggers_wait() {
        local i
        for ((i = 0; i < ${2:-10} * 5; i++)); do
                "$ETWTOP" --loggers >"$tmp/loggers" 2>&1
                grep -q -- "$1" "$tmp/loggers" && return 0
                sleep 0.2
        done
        return 1
}

"$ETWTOP" --start -f "$tmp/s.etl" >"$tmp/start.out" 2>&1
check "--start: exit 0 ($(cat "$tmp/start.out"))" grep -q '^started' "$tmp/start.out"
( end=$((SECONDS + 30)); while [ $SECONDS -lt $end ]; do :; done ) &

tm_new -d -s s -x 150 -y 40 -c "$tmp" "$ETWTOP --attach -d 0.5; echo exit=\$? >'$tmp/exit'; sleep 30"
check "--attach: the screen over the running session" wait_for '^etwtop - live NT Kernel Logger' 15
check "--attach: its groups read back" wait_for 'Groups: PROC_THREAD+LOADER+PROFILE+CSWITCH+DISPATCHER' 5
check "--attach: samples arrive" wait_for '[1-9][0-9]* samples' 10
check "--loggers: the screen is a consumer" loggers_wait '^  consumers: *1 real-time$' 10

# another program changes the session: the header shows it at the next refresh
"$ETWTOP" --update --stackwalk Profile >/dev/null 2>&1
check "a change from another program shows in the header (Stacks: Profile)" \
        wait_for 'Stacks: Profile  *Interval' 5

# the panel's key updates the session itself: --loggers in another shell sees it
tm send-keys -t s 4
check "panel: shown" wait_for 'What it does, or why it is unavailable' 5
tm send-keys -t s Down Down Down Enter
check "panel: CSWITCH off applied" wait_for 'CSWITCH off: applied to the running session' 5
check "--loggers in another shell: CSWITCH off" \
        loggers_wait '^  flags: *PROC_THREAD+LOADER+PROFILE+DISPATCHER$' 5
tm send-keys -t s Enter
check "panel: CSWITCH on again" wait_for 'CSWITCH on: applied to the running session' 5
check "--loggers: CSWITCH on again" loggers_wait '^  flags: *PROC_THREAD+LOADER+PROFILE+CSWITCH+DISPATCHER$' 5
# the user-stack rows: DWARF walks on the running session (ETWTOP_TRACE_STACKWALK_INFO), the
# header counts them as the session's UnwindStats events come; then frame pointers again
tm send-keys -t s Down Down Down Down Down Down Down Enter
check "panel: user stacks: DWARF applied" wait_for 'user stacks: DWARF on: applied to the running session' 5
check "--loggers: user stacks dwarf" loggers_wait '^  user stacks: dwarf, 8192-byte stack copies$' 5
check "header: DWARF walks counted" \
        wait_for 'Stack walk: dwarf, 8192-byte stack copies: [1-9][0-9]* user stacks unwound' 10
tm send-keys -t s Up Enter
check "panel: user stacks: frame pointers applied" \
        wait_for 'user stacks: frame pointers on: applied to the running session' 5
check "--loggers: user stacks fp" loggers_wait '^  user stacks: fp$' 5

# F2: the recent events, from the host's ring
tm send-keys -t s 1 F2
check "F2: saved from the host's ring" wait_for '^saved the recent events to etwtop-' 10
saved=$(ls "$tmp"/etwtop-*.etl 2>/dev/null | head -1)
check "F2: the file exists" [ -n "$saved" ]
if [ -n "$saved" ]; then
        "$ETWTOP" --dump --totals "$saved" >"$tmp/saved.txt" 2>&1
        check "F2: the saved file reads, with samples" grep -q 'PerfInfo/SampledProfile' "$tmp/saved.txt"
fi

# q: the screen ends, the session runs on
tm send-keys -t s q
for _ in $(seq 1 300); do [ -s "$tmp/exit" ] && break; sleep 0.1; done
check "q: exit 0" grep -q 'exit=0' "$tmp/exit"
check "q: the session still runs" loggers_wait '^"NT Kernel Logger" ' 5
check "q: its consumer gone" loggers_wait '^  consumers: *0 real-time$' 10
"$ETWTOP" --stop >/dev/null 2>&1
check "--stop after: the file reads" bash -c "'$ETWTOP' --dump --totals '$tmp/s.etl' | grep -q '^Damaged buffers: *0$'"

echo "$nr_pass passed, $nr_fail failed, $nr_skip skipped"
[ "$nr_fail" = 0 ]
