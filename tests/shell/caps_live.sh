#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# caps_live.sh: the live view's caps keep up with processes that come and go whatever the
# refresh interval, and while the screen is paused. The places of a process that ended are
# folded by the model's upkeep (profile_upkeep), at least once a second; they were folded only at
# a refresh, so that at a slow refresh (-d 45 under a process storm, bench/README.md stop 99) or
# on a paused screen they filled the table and 22% of the samples after them went to the other
# row, "samples past the caps". The places' cap is made small here (ETWTOP_MAX_FUNCTIONS=8192)
# so that a light storm of short processes (/bin/true, about 50 a second) fills it within a
# refresh of 12 s when nothing folds; with the upkeep, nothing is past the caps.
#   - `etwtop -b -n 1 -d 12`: one frame after 12 s of the storm (app_run_batch's loop);
#   - the screen in tmux (run_screen's loop), paused (Space) through 12 s of the storm, then
#     resumed: its header's caps.
set -u
: "${ETWTOP:?}"
tmp=$(mktemp -d)
sock=etwtop-caps-$$
tm() { tmux -L "$sock" "$@"; }
storm_pid=""
cleanup() {
        [ -n "$storm_pid" ] && kill "$storm_pid" 2>/dev/null
        command -v tmux >/dev/null && tm kill-server 2>/dev/null
        rm -rf "$tmp"
}
trap cleanup EXIT
. "$(dirname "$0")/../lib/check.sh"
if ! "$ETWTOP" --record "$tmp/probe.etl" --duration 0.2 --on PROC_THREAD 2>"$tmp/probe.err"; then
        echo "SKIP: live tests: $(cat "$tmp/probe.err")"
        nr_skip=1
        finish
fi
export ETWTOP_MAX_FUNCTIONS=8192 ETWTOP_RUNTIME_DIR=$tmp/rt # a host of its own, gone with $tmp
# storm SECONDS: short processes, about 50 a second, for SECONDS (a bounded rate: a machine with
# more CPUs makes no more of them, so the upkeep's second holds fewer than the cap)
storm() {
        (end=$((SECONDS + $1)); while [ $SECONDS -lt "$end" ]; do /bin/true; sleep 0.02; done) &
        storm_pid=$!
}
# the caps' line of a frame or screen in FILE ("" when none)
caps_line() { grep -m1 '^Caps:' "$1"; }
on_fail() { echo "--- frame:"; sed -n 1,12p "$tmp/frame"; }

# -- -b: one frame after 12 s
storm 14
"$ETWTOP" -b -n 1 -d 12 --top 5 --stackwalk-mode fp >"$tmp/frame" 2>"$tmp/err"
check "-b: runs" [ $? = 0 ]
wait "$storm_pid" 2>/dev/null
storm_pid=""
check "-b: the storm's processes folded as they ended ($(caps_line "$tmp/frame"))" \
        grep -q '^Caps: .*[0-9] exited threads\|^Caps: .*[0-9] unplaced addresses folded' "$tmp/frame"
check "-b: no sample past the caps at a 12 s refresh ($(caps_line "$tmp/frame"))" \
        bash -c "! grep -q 'samples past the caps' '$tmp/frame'"
check "-b: no [other] row" bash -c "! grep -q '\\[other\\]\$' '$tmp/frame'"

# -- the screen, paused through the storm
if ! command -v tmux >/dev/null; then
        echo "SKIP: the paused screen: tmux not installed"
        nr_skip=$((nr_skip + 1))
        finish
fi
unset -f on_fail
. "$(dirname "$0")/../lib/tmux_screen.sh"
on_fail() { echo "--- screen:"; cat "$tmp/screen"; }
tm_new -d -s s -x 200 -y 40 -c "$tmp" "'$ETWTOP' -d 0.5 --stackwalk-mode fp; sleep 60"
check "screen: live" wait_for 'Self%' 30
tm send-keys -t s Space
check "screen: paused" wait_for '^etwtop - live .*   \[paused\]' 10
storm 12
wait "$storm_pid" 2>/dev/null
storm_pid=""
tm send-keys -t s Space
check "screen: resumed" wait_gone '\[paused\]' 10
# the header's caps of a frame built after the storm
check "screen: the storm's processes folded" wait_for '^Caps: .*exited threads\|^Caps: .*unplaced addresses folded' 10
check "screen: no sample past the caps through 12 s paused" bash -c "! grep -q 'samples past the caps' '$tmp/screen'"
tm send-keys -t s q
finish
