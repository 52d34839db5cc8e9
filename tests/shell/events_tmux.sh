#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# events_tmux.sh: the events view on the screen, driven in tmux: a user-mode provider's trace
# (no samples, no switches) opens on it; Enter on a type lists its events with their fields in
# columns; / finds a field's value (and says when none holds it); Enter on an event shows its
# fields; Esc goes back; p groups by process then by thread; 5 and Tab reach it from the others.
set -u
: "${ETWTOP:?}" "${ETWTOP_SAMPLES:?}"
command -v tmux >/dev/null || { echo "SKIP: tmux not installed"; exit 0; }
sock=etwtop-events-$$
tm() { tmux -L "$sock" "$@"; }
tmp=$(mktemp -d)
cleanup() {
        tm kill-server 2>/dev/null
        rm -rf "$tmp"
}
trap cleanup EXIT
. "$(dirname "$0")/../lib/check.sh"
on_fail() {
        echo "--- screen:"
        cat "$tmp/screen"
}
. "$(dirname "$0")/../lib/tmux_screen.sh"

f="$ETWTOP_SAMPLES/krabsetw_powershell.etl"
[ -f "$f" ] || { echo "SKIP: $f not found"; exit 0; }
tm_new -d -s s -x 120 -y 30 -c "$tmp" "$ETWTOP --replay '$f'; sleep 30"
check "opens on the events view (no samples, no switches)" wait_for 'Event type (Enter: its events)' 20
check "the types with their counts, by Id (not by opcode: four types share opcode 20)" has '^ *101 .*PowerShell/CommandLifecycle'
check "the logfile header's type" has '^ *1 .*EventTrace/Header'

# Enter on EventTrace/Header (found by /): its event, its fields in columns
tm send-keys -t s -l '/EventTrace/Header'
tm send-keys -t s Enter
wait_gone 'Search: ' 10
tm send-keys -t s Enter
check "Enter: the type's events, its fields as columns" wait_for 'Time (s) .*logger .*file' 10
check "the field's value in its column" has '^0\.000000000 .*usermode_trace'
check "the status names the type" has 'EventTrace/Header: its recent events'

# / says when no event holds a value; then finds a field's value (the message goes)
tm send-keys -t s / n o - s u c h - v a l u e Enter
check "/ says when no row holds it" wait_for 'Search: no row holds "no-such-value"' 10
tm send-keys -t s / u s e r m o d e _ t r a c e Enter
check "/ finds a field's value" wait_gone 'Search: ' 10

# Enter on the event: its fields, whole
tm send-keys -t s Enter
check "Enter on an event: its fields" wait_for 'logger=usermode_trace file=C:.*output1\.etl' 10

# Esc: back to the types
tm send-keys -t s Escape
check "Esc: back to the types" wait_for 'Event type (Enter: its events)' 10

# p: by process, then by thread
tm send-keys -t s p
check "p: by process" wait_for 'Events  *Share  *PID Process  *Event type' 10
check "p: the provider's events in process 16040, by type" has '^ *13 .* 16040 .*PowerShell/CommandLifecycle'
tm send-keys -t s p
check "p again: by thread" wait_for 'Events  *Share  *PID  *TID Process  *Event type' 10

# the views: 1 leaves it, 5 comes back, the tab is there
tm send-keys -t s 1
check "1: the hot functions" wait_gone 'Event type (Enter' 10
check "the fifth tab" has '5 Events'
tm send-keys -t s 5
check "5: the events view again" wait_for 'Event type (Enter: its events)' 10
tm send-keys -t s q
check "q quits" wait_gone 'Event type (Enter' 10

# a trace with samples still opens on the hot functions
u="${ETWTOP_SAMPLES_UNPACKED:-}/net.4.5.2.x64.etl"
if [ -f "$u" ]; then
        tm respawn-pane -k -t s "$ETWTOP --replay '$u'; sleep 30"
        check "a trace with samples opens on the hot functions" wait_for 'ntoskrnl\.exe' 30
        check "not on the events view" wait_gone 'Event type (Enter' 10
fi

echo "events_tmux: $nr_pass passed, $nr_fail failed, $nr_skip skipped"
[ "$nr_fail" -eq 0 ]
