#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# unprivileged.sh: etwtop as an ordinary user (setpriv to nobody): --record -p of the user's own
# process works where perf record -p works, with the default flags (the sched tracepoints this
# user cannot read are left out, saying so); a system-wide screen refuses with one message that
# names the fix, not the API's name twice.
set -u
: "${ETWTOP:?}"
. "$(dirname "$0")/check.sh"
command -v setpriv >/dev/null || { echo "SKIP: setpriv not installed"; echo "0 passed, 0 failed, 1 skipped"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root to become nobody"; echo "0 passed, 0 failed, 1 skipped"; exit 77; }
tmp=$(mktemp -d)
chmod 777 "$tmp"
trap 'rm -rf "$tmp"' EXIT
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups env ETWTOP_RUNTIME_DIR="$tmp/rt" "$@"; }
if command -v perf >/dev/null && ! as_nobody bash -c 'sleep 3 & perf record -q -o /dev/null -p $! -- sleep 0.2' >/dev/null 2>&1; then
        echo "SKIP: perf record -p does not work for nobody here (perf_event_paranoid $(cat /proc/sys/kernel/perf_event_paranoid))"
        echo "0 passed, 0 failed, 1 skipped"
        exit 77
fi
as_nobody bash -c "sleep 4 & p=\$!; '$ETWTOP' --record '$tmp/own.etl' -p \$p --duration 1 >'$tmp/rec.out' 2>'$tmp/rec.err'; echo \$? >'$tmp/rec.rc'"
check "--record -p own process as nobody: exit 0 ($(cat "$tmp/rec.err"))" [ "$(cat "$tmp/rec.rc")" = 0 ]
check "--record -p: the file reads" bash -c "'$ETWTOP' --dump --totals '$tmp/own.etl' >/dev/null"
if ! as_nobody test -r /sys/kernel/tracing/events/sched/sched_switch/format; then
        check "--record -p: says what it left out" grep -q 'context switches need the sched tracepoints' "$tmp/rec.err"
fi
as_nobody "$ETWTOP" -b -n 1 >/dev/null 2>"$tmp/screen.err"
check "system-wide as nobody: refused" [ -s "$tmp/screen.err" ]
check "system-wide as nobody: the API's name once ($(head -c 200 "$tmp/screen.err"))" \
        bash -c "! grep -q 'StartTrace: StartTrace' '$tmp/screen.err'"
check "system-wide as nobody: names the fix" grep -qE 'root|CAP_PERFMON|perf_event_paranoid' "$tmp/screen.err"
echo "$nr_pass passed, $nr_fail failed, 0 skipped"
[ "$nr_fail" = 0 ]
