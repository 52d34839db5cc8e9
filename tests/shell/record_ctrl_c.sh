#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# record_ctrl_c.sh: Ctrl-C typed on a terminal during `etwtop --record` (the live screen runs
# too) ends it as SIGINT does without a terminal (issue 13 item 14): exit 0, the summary on
# stderr, and a finalized file. tmux gives it the terminal; send-keys types Ctrl-C, which the
# terminal turns into SIGINT for the foreground process group.
set -u
: "${ETWTOP:?}"
command -v tmux >/dev/null || {
        echo "SKIP: tmux not installed"
        echo "0 passed, 0 failed, 1 skipped"
        exit 0
}
sock=etwtop-ctrlc-$$
tm() { tmux -L "$sock" "$@"; }
tmp=$(mktemp -d)
trap 'tm kill-server 2>/dev/null; rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../lib/check.sh"

if ! "$ETWTOP" --record "$tmp/probe.etl" --duration 0.2 --on PROC_THREAD >/dev/null 2>"$tmp/probe.err"; then
        echo "SKIP: etwtop --record cannot run here: $(cat "$tmp/probe.err")" >&2
        echo "0 passed, 0 failed, 1 skipped"
        exit 0
fi

f=$tmp/c.etl
tm_new -d -s s -x 100 -y 30 \
        "'$ETWTOP' --record '$f' 2>'$tmp/err'; echo \$? >'$tmp/rc'; sleep 600"
# until the recording has written more than its header buffer (at most 120 s: a sanitizer
# build's start under a busy machine)
deadline=$((SECONDS + 120))
while ((SECONDS < deadline)); do
        [ -s "$f" ] && [ "$(stat -c %s "$f")" -gt 65536 ] && break
        sleep 0.1
done
tm send-keys -t s C-c
# until it has ended (at most 180 s: the stop drains the rings, writes its rundown and finalizes
# the file, which took over 15 s at a load average of 50)
deadline=$((SECONDS + 180))
while ((SECONDS < deadline)); do
        [ -s "$tmp/rc" ] && break
        sleep 0.1
done
on_fail() { echo "exit: $(cat "$tmp/rc" 2>/dev/null); stderr: $(cat "$tmp/err" 2>/dev/null)"; }
check "Ctrl-C on a terminal: --record ends" [ -s "$tmp/rc" ]
check "Ctrl-C on a terminal: exit 0" [ "$(cat "$tmp/rc" 2>/dev/null)" = 0 ]
check "Ctrl-C on a terminal: the summary" grep -q 'recording: [0-9]* buffers' "$tmp/err"
check "Ctrl-C on a terminal: says why it stopped" grep -q 'recording stopped: interrupted' "$tmp/err"
unset -f on_fail
"$ETWTOP" --dump --totals "$f" >"$tmp/c.txt" 2>&1
check "Ctrl-C on a terminal: the file reads" [ $? = 0 ]
# the stop's rundown (DCEnd) is written only when the session is stopped, not killed
check "Ctrl-C on a terminal: the session was stopped (its DCEnd rundown)" \
        grep -q 'Process/DCEnd' "$tmp/c.txt"

echo "$nr_pass passed, $nr_fail failed, $nr_skip skipped"
[ "$nr_fail" = 0 ]
