#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# caps_live.sh: the live view folds the places of processes that ended (the caps' upkeep,
# profile_upkeep) between its refreshes and while the screen is paused, not only at a refresh.
# Folded only at a refresh, at a slow refresh (-d 45 under a process storm, bench/README.md
# stop 99) or on a paused screen they filled the places' table and 22% of the samples after them
# went to the other row, "samples past the caps" (test_hot_fold's test_upkeep_folds_without_decay
# shows the table kept from filling). Here, under a light storm of short processes (/bin/true,
# about 50 a second) with 4 kHz samples:
#   - `etwtop -b -n 1 -d 12`: its one frame is built before its first refresh, and its caps'
#     line already counts the storm's unplaced addresses folded (before, none: nothing folded
#     before that refresh) (app_run_batch's loop);
#   - the screen in tmux (run_screen's loop), paused through 12 s of the storm: S rebuilds its
#     rows while it stays paused, and the caps' line counts more folded than when it paused
#     (before, the same: nothing folded while paused).
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
export ETWTOP_RUNTIME_DIR=$tmp/rt # a host of its own, gone with $tmp
# storm SECONDS: short processes, about 50 a second, for SECONDS
storm() {
        (end=$((SECONDS + $1)); while [ $SECONDS -lt "$end" ]; do /bin/true; sleep 0.02; done) &
        storm_pid=$!
}
# the number of unplaced addresses folded that the caps' line of FILE says (0: none said)
# (the list's "N unplaced addresses" is followed by " folded", or by the unnamed addresses' count)
folded() { sed -n 's/^Caps: .*[^0-9]\([0-9][0-9]*\) unplaced addresses[, ].*/\1/p; s/^Caps: \([0-9][0-9]*\) unplaced addresses[, ].*/\1/p' "$1" | head -1 | grep . || echo 0; }
on_fail() { echo "--- frame:"; sed -n 1,8p "$tmp/frame"; }

# -- -b: one frame after 12 s, built before its first refresh
storm 14
"$ETWTOP" -b -n 1 -d 12 --top 5 --set-prof-int 2500 --stackwalk-mode fp >"$tmp/frame" 2>"$tmp/err"
check "-b: runs" [ $? = 0 ]
wait "$storm_pid" 2>/dev/null
storm_pid=""
check "-b: the storm's unplaced addresses folded before the first refresh ($(folded "$tmp/frame"))" \
        [ "$(folded "$tmp/frame")" -gt 0 ]

# -- the screen, paused through the storm
if ! command -v tmux >/dev/null; then
        echo "SKIP: the paused screen: tmux not installed"
        nr_skip=$((nr_skip + 1))
        finish
fi
unset -f on_fail
. "$(dirname "$0")/../lib/tmux_screen.sh"
on_fail() { echo "--- screen:"; cat "$tmp/screen"; }
tm_new -d -s s -x 200 -y 40 -c "$tmp" "'$ETWTOP' -d 0.5 --set-prof-int 2500 --stackwalk-mode fp; sleep 60"
check "screen: live" wait_for 'Self%' 30
tm send-keys -t s Space
check "screen: paused" wait_for '^etwtop - live .*   \[paused\]' 10
before=$(folded "$tmp/screen")
storm 12
wait "$storm_pid" 2>/dev/null
storm_pid=""
# S (the next source: the timer's alone here) builds the rows again, the display still paused
tm send-keys -t s S
more() { [ "$(folded "$tmp/screen")" -gt "$before" ]; }
check "screen: the storm's unplaced addresses folded while paused ($before before)" until_screen 10 more
check "screen: still paused" has '\[paused\]'
tm send-keys -t s Space q
finish
