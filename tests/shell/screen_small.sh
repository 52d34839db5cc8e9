#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# screen_small.sh: the screen on small and dumb terminals, from a replay (no privilege needed):
# at 80x24 the switches view keeps its thread names and the functions view its names (columns
# drop by priority), Left/Right scroll sideways to the end of the longest row and no further,
# the help scrolls, below 40x8 it says the terminal is too small, and TERM=dumb gets text
# frames with a note instead of a garbled screen.
set -u
: "${ETWTOP:?}"
command -v tmux >/dev/null || { echo "SKIP: tmux not installed"; echo "0 passed, 0 failed, 1 skipped"; exit 77; }
. "$(dirname "$0")/../lib/check.sh"
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

tm_new -d -s s -x 80 -y 24 "$ETWTOP --replay '$tmp/fix.etl'; sleep 30"
check "80x24: the replay draws" wait_for 'Self%' 10
tm send-keys -t s 3
check "80x24 switches: the thread column is there" wait_for ' Thread *$' 5
check "80x24 switches: thread names shown" wait_for 'work\.exe/worker' 5
check "80x24 switches: the wait column whole" grep -q 'Top wait (state/reason)' "$tmp/screen"
# the threads' details run past the edge: Right shows their ends, and goes no further than the
# longest row needs (the table never scrolls to blank)
tm send-keys -t s '*'
check "80x24 switches: the details, cut at the edge" wait_for 'readied by work\.exe/mai' 5
tm send-keys -t s Right
check "Right: the rows scroll sideways" wait_for '^ *Off-CPU\|^[^S]*Top wait' 5
for i in $(seq 40); do tm send-keys -t s Right; done
# (the 40 keys' end: the longest row at the edge, where the scrolling stops; the rows read to
# their ends a few keys before it)
check "Right: the longest row ends at the edge (not scrolled blank)" \
        wait_for 'PMC in its timeslices: BranchInstructions 1\.00 K, LLCReference 1\.50 K$' 5
check "Right: a readier's row read to its end" \
        grep -q '^ *readied by work\.exe/main from (no stack) *$' "$tmp/screen"
# and no further: the keys left (a busy machine's screen may be behind) do not scroll it on
sleep 1
snap
check "Right: still at the edge once the keys are read" \
        grep -q 'PMC in its timeslices: BranchInstructions 1\.00 K, LLCReference 1\.50 K$' "$tmp/screen"
check "Right: the title row still there" grep -q ' Thread *$' "$tmp/screen"
for i in $(seq 40); do tm send-keys -t s Left; done
check "Left: back" wait_for '^ *Switches' 5
# the help at 80x24: more lines than fit, it scrolls; any other key returns
tm send-keys -t s F1
check "80x24 help: says it scrolls" wait_for 'lines 1-[0-9]* of [0-9]* --' 5
tm send-keys -t s End
check "80x24 help: End shows its last line" wait_for 'lines [0-9]*-\([0-9][0-9]*\) of \1 --' 5
check "80x24 help: a long help wrapped under itself, not cut" grep -q '^ \{15\}[^ ]' "$tmp/screen"
tm send-keys -t s Home
check "80x24 help: Home: its top" wait_for 'lines 1-[0-9]* of [0-9]* --' 5
tm send-keys -t s x
check "80x24 help: another key leaves it" wait_for ' Thread *$' 5
tm resize-window -t s -x 30 -y 6
check "30x6: terminal too small" wait_for 'terminal too small' 5
tm resize-window -t s -x 80 -y 24
check "80x24 again: draws" wait_for ' Thread *$' 5
tm send-keys -t s q
sleep 0.5

tm kill-server 2>/dev/null
sleep 0.3
tm_new -d -s s -x 120 -y 40 "TERM=dumb $ETWTOP --replay '$tmp/fix.etl'; echo exit=\$?; sleep 30"
check "TERM=dumb: says why it prints text" wait_for 'cannot draw the screen (no cursor addressing)' 10
check "TERM=dumb: text frames" wait_for '^Hot functions' 10
check "TERM=dumb: ends 0" wait_for 'exit=0' 10
echo "$nr_pass passed, $nr_fail failed, 0 skipped"
[ "$nr_fail" = 0 ]
