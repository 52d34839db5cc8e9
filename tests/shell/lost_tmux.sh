#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# lost_tmux.sh: the live screen when the kernel loses events (its rings full), as perf top warns
# "LOST N chunks": the header counts them, and the status line says so once, with what to do
# (--min-buffers). The rings are made one page a CPU (ETWTOP_RING_PAGES=1, in a host of the
# test's own) and a busy loop is sampled with its stacks, so the kernel cannot keep up.
set -u
: "${ETWTOP:?}"
command -v tmux >/dev/null || { echo "SKIP: tmux not installed"; echo "0 passed, 0 failed, 1 skipped"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "SKIP: kernel sessions need root"; echo "0 passed, 0 failed, 1 skipped"; exit 77; }
. "$(dirname "$0")/../lib/check.sh"
sock=etwtop-lost-$$
tm() { tmux -L "$sock" "$@"; }
tmp=$(mktemp -d)
spin=
trap 'tm kill-server 2>/dev/null; [ -n "$spin" ] && kill "$spin" 2>/dev/null; rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../lib/tmux_screen.sh"
on_fail() { echo "--- screen:"; cat "$tmp/screen"; }

(while :; do :; done) &
spin=$!
tm_new -d -s s -x 160 -y 40 "ETWTOP_RUNTIME_DIR='$tmp/rt' ETWTOP_RING_PAGES=1 \
        '$ETWTOP' -d 0.5 --on PROC_THREAD+LOADER+PROFILE --stackwalk Profile --stackwalk-mode dwarf \
        2>'$tmp/err'; sleep 60"
check "the screen runs ($(head -c 300 "$tmp/err" 2>/dev/null))" wait_for '^etwtop - live' 30
check "the header counts the events lost" wait_for '^etwtop - live.*   lost [1-9]' 30
check "the status line says events were lost, and what to do" \
        wait_for 'events lost: the kernel.s buffers were full.*--min-buffers N makes them larger' 30
echo "$nr_pass passed, $nr_fail failed, $nr_skip skipped"
[ "$nr_fail" = 0 ]
