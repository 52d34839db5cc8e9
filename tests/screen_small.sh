#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# screen_small.sh: the screen on small and dumb terminals, from a replay (no privilege needed):
# at 80x24 the switches view keeps its thread names and the functions view its names (columns
# drop by priority), Left/Right scroll sideways, below 40x8 it says the terminal is too small,
# and TERM=dumb gets text frames with a note instead of a garbled screen.
set -u
: "${ETWTOP:?}"
command -v tmux >/dev/null || { echo "SKIP: tmux not installed"; echo "0 passed, 0 failed, 1 skipped"; exit 77; }
. "$(dirname "$0")/check.sh"
sock=etwtop-small-$$
tm() { tmux -L "$sock" "$@"; }
tmp=$(mktemp -d)
trap 'tm kill-server 2>/dev/null; rm -rf "$tmp"' EXIT
[ -n "${ETL_FIXTURE:-}" ] && "$ETL_FIXTURE" "$tmp/fix.etl" >/dev/null 2>&1 ||
        { echo "SKIP: no etl_fixture"; echo "0 passed, 0 failed, 1 skipped"; exit 77; }
snap() { tm capture-pane -t s -p -S -500 >"$tmp/screen"; }
wait_for() {
        local i
        for ((i = 0; i < ${2:-10} * 5; i++)); do
                snap
                grep -q -- "$1" "$tmp/screen" && return 0
                sleep 0.2
        done
        return 1
}
on_fail() { echo "--- screen:"; cat "$tmp/screen"; }

tm new-session -d -s s -x 80 -y 24 "$ETWTOP --replay '$tmp/fix.etl'; sleep 30"
check "80x24: the replay draws" wait_for 'Self%' 10
tm send-keys -t s 3
check "80x24 switches: the thread column is there" wait_for ' Thread *$' 5
check "80x24 switches: thread names shown" wait_for 'work\.exe/worker' 5
check "80x24 switches: the wait column whole" grep -q 'Top wait (state/reason)' "$tmp/screen"
tm send-keys -t s Right
check "Right: the rows scroll sideways" wait_for '^ *Off-CPU\|^[^S]*Top wait' 5
tm send-keys -t s Left
check "Left: back" wait_for '^ *Switches' 5
tm resize-window -t s -x 30 -y 6
check "30x6: terminal too small" wait_for 'terminal too small' 5
tm resize-window -t s -x 80 -y 24
check "80x24 again: draws" wait_for ' Thread *$' 5
tm send-keys -t s q
sleep 0.5

tm kill-server 2>/dev/null
sleep 0.3
tm new-session -d -s s -x 120 -y 40 "TERM=dumb $ETWTOP --replay '$tmp/fix.etl'; echo exit=\$?; sleep 30"
check "TERM=dumb: says why it prints text" wait_for 'cannot draw the screen (no cursor addressing)' 10
check "TERM=dumb: text frames" wait_for '^Hot functions' 10
check "TERM=dumb: ends 0" wait_for 'exit=0' 10
echo "$nr_pass passed, $nr_fail failed, 0 skipped"
[ "$nr_fail" = 0 ]
