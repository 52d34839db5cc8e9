#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# unprivileged.sh: etwtop as an ordinary user (setpriv to nobody): --record -p of the user's own
# process works where perf record -p works, with the default flags (the sched tracepoints this
# user cannot read are left out, saying so); a system-wide screen refuses with one message that
# names the fix, not the API's name twice.
set -u
: "${ETWTOP:?}"
. "$(dirname "$0")/../lib/check.sh"
command -v setpriv >/dev/null || { echo "SKIP: setpriv not installed"; echo "0 passed, 0 failed, 1 skipped"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root to become nobody"; echo "0 passed, 0 failed, 1 skipped"; exit 77; }
tmp=$(mktemp -d)
chmod 777 "$tmp"
trap 'rm -rf "$tmp"' EXIT
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups env ETWTOP_RUNTIME_DIR="$tmp/rt" "$@"; }
# nobody's own default runtime directory: neither XDG_RUNTIME_DIR nor ETWTOP_RUNTIME_DIR
as_nobody_bare() { setpriv --reuid=nobody --regid=nogroup --clear-groups env -u XDG_RUNTIME_DIR -u ETWTOP_RUNTIME_DIR "$@"; }

# Without XDG_RUNTIME_DIR: /tmp/etwtop-UID taken first by another user is refused with what to
# do; /run/user/UID, which only root can make, is used when it exists.
nobody_uid=$(id -u nobody)
squat=/tmp/etwtop-$nobody_uid run_user=/run/user/$nobody_uid
made_squat= made_run_user= host_pid=
cleanup_dirs() {
        [ -n "$host_pid" ] && kill "$host_pid" 2>/dev/null && wait "$host_pid" 2>/dev/null
        [ -n "$made_run_user" ] && rm -rf "$run_user"
        [ -n "$made_squat" ] && rm -rf "$squat"
}
trap 'cleanup_dirs; rm -rf "$tmp"' EXIT
if [ -e "$squat" ] || [ -e "$run_user" ]; then
        echo "not tested: $squat or $run_user exists already"
else
        mkdir -m 0700 "$squat" && chown daemon "$squat" && made_squat=1
        as_nobody_bare "$ETWTOP" --host >"$tmp/squat.out" 2>"$tmp/squat.err"
        check "/tmp/etwtop-UID taken by another user: refused ($(head -c 300 "$tmp/squat.err"))" \
                grep -q "belongs to uid $(id -u daemon)" "$tmp/squat.err"
        check "/tmp/etwtop-UID taken: says what to do" \
                bash -c "grep -q 'set XDG_RUNTIME_DIR (or ETWTOP_RUNTIME_DIR)' '$tmp/squat.err'"
        if [ -d /run/user ] && mkdir -m 0700 "$run_user" 2>/dev/null; then
                made_run_user=1
                chown nobody:nogroup "$run_user"
                as_nobody_bare "$ETWTOP" --host >"$tmp/run_user.out" 2>"$tmp/run_user.err" &
                host_pid=$!
                for _ in $(seq 200); do
                        [ -S "$run_user/etwtop/host.sock" ] && break
                        kill -0 "$host_pid" 2>/dev/null || break
                        sleep 0.05
                done
                check "/run/user/UID exists: the host serves $run_user/etwtop ($(head -c 300 "$tmp/run_user.err"))" \
                        [ -S "$run_user/etwtop/host.sock" ]
                kill "$host_pid" 2>/dev/null
                wait "$host_pid" 2>/dev/null
                host_pid=
        else
                echo "not tested: /run/user/$nobody_uid cannot be made here"
        fi
        cleanup_dirs
        made_squat= made_run_user=
fi

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
