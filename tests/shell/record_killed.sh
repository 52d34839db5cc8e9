#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# record_killed.sh: a recording killed with kill -9 leaves a file whose header says what it
# holds (issue 13 item 20): BuffersWritten is the number of whole buffers in the file, so that a
# reader that reads exactly BuffersWritten buffers (as dissect.etl does) sees every one, and
# EndTime is set. The header is rewritten after each batch of buffers reaches the file (never
# before): a kill that falls between a batch's write and the header's leaves the header one
# batch (16 buffers at most, the writer's FLUSH_BATCH) behind the file, never ahead of it.
set -u
: "${ETWTOP:?}"
tmp=$(mktemp -d)
. "$(dirname "$0")/../lib/check.sh"
trap 'rm -rf "$tmp"' EXIT

field() { awk -v f="$2" 'index($0, f) == 1 {sub(/^[^:]*: */, ""); print $1; exit}' "$1"; }
total() { awk '/events in all/ {print $1}' "$1"; }

if ! "$ETWTOP" --record "$tmp/probe.etl" --duration 0.2 --on PROC_THREAD >/dev/null 2>"$tmp/probe.err"; then
        echo "SKIP: etwtop --record cannot run here: $(cat "$tmp/probe.err")" >&2
        echo "0 passed, 0 failed, 1 skipped"
        exit 0
fi

# Small buffers (many written between two flushes) and the default 64 KiB ones. stdout is not
# a terminal, so that --record runs without the screen whatever runs this script.
for kb in 4 64; do
        f=$tmp/killed-$kb.etl
        "$ETWTOP" --record "$f" --buffer-size "$kb" >/dev/null 2>/dev/null &
        pid=$!
        recording_written "$f" "$pid"
        # and its events: the first buffer written may be a quiet CPU's, a few events (the
        # check below failed so once, on a busy machine); what is checked is that the ones
        # written before the kill read back
        wait_until 120 eval "[ \"\$(\"\$ETWTOP\" --dump --totals '$f' 2>/dev/null |
                awk '/events in all/ {print \$1}')\" -gt 10 ] 2>/dev/null || ! kill -0 $pid 2>/dev/null"
        kill -9 "$pid"
        wait "$pid" 2>/dev/null
        "$ETWTOP" --dump --totals "$f" >"$tmp/$kb.txt" 2>&1
        check "kill -9 ($kb KB buffers): the file reads" [ $? = 0 ]
        in_header=$(field "$tmp/$kb.txt" "Buffers written:")
        read_back=$(field "$tmp/$kb.txt" "Buffers:")
        size=$(stat -c %s "$f")
        whole=$((size / (kb * 1024)))
        on_fail() { echo "header BuffersWritten=$in_header, buffers read=$read_back, whole buffers in the file=$whole ($size bytes)"; }
        check "kill -9 ($kb KB buffers): more than the header buffer" [ "${in_header:-0}" -gt 1 ]
        check "kill -9 ($kb KB buffers): the reader reads every whole buffer" [ "$read_back" = "$whole" ]
        check "kill -9 ($kb KB buffers): BuffersWritten counts no buffer the file lacks" \
                [ "${in_header:-0}" -le "$whole" ]
        check "kill -9 ($kb KB buffers): BuffersWritten is the file's buffers, or one batch behind" \
                [ $((whole - ${in_header:-0})) -le 16 ]
        unset -f on_fail
        check "kill -9 ($kb KB buffers): EndTime set" bash -c "! grep -q '^End time: *0$' '$tmp/$kb.txt'"
        check "kill -9 ($kb KB buffers): events" [ "$(total "$tmp/$kb.txt")" -gt 10 ]
done

# The flush timer (FlushTimer, once a second) hands the buffers to the kernel, whose page cache a
# killed recorder does not take with it (the checks above), and syncs nothing, as perf record
# syncs nothing: the kernel writes the pages back, and the close syncs the file once.
if command -v strace >/dev/null; then
        # LeakSanitizer does not run under ptrace (a sanitizer build's leak check is off here)
        export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
        ETWTOP_NO_HOST=1 strace -f -qq -e trace=fsync,fdatasync -o "$tmp/sync.trace" \
                "$ETWTOP" --record "$tmp/synced.etl" --duration 3.5 >/dev/null 2>"$tmp/synced.err"
        "$ETWTOP" --dump --totals "$tmp/synced.etl" >"$tmp/synced.txt" 2>&1
        check "under strace: the recording reads" [ $? = 0 ]
        nr_datasync=$(grep -c 'fdatasync(' "$tmp/sync.trace")
        nr_fsync=$(grep -c 'fsync(' "$tmp/sync.trace")
        on_fail() { echo "fdatasync: $nr_datasync, fsync: $nr_fsync"; cat "$tmp/sync.trace"; }
        check "the flushes of a 3.5 s recording sync nothing" [ "$nr_datasync" = 0 ]
        check "the close syncs the file" [ "$nr_fsync" -ge 1 ]
        unset -f on_fail
else
        skip "strace missing: the flushes' syncs not counted"
fi

echo "$nr_pass passed, $nr_fail failed, $nr_skip skipped"
[ "$nr_fail" = 0 ]
