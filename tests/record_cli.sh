#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# record_cli.sh: `etwtop --record` end to end: a known workload recorded and dumped; signals,
# kill -9 and a full disk leave valid files; existing files are kept; missing hardware and
# missing privileges get messages that say what to do.
set -u
: "${ETWTOP:?}"
tmp=$(mktemp -d)
. "$(dirname "$0")/check.sh"
cleanup() {
        mountpoint -q "$tmp/full" 2>/dev/null && umount "$tmp/full"
        rm -rf "$tmp"
}
trap cleanup EXIT

count() { awk -v e="$2" '/^Totals per event type/ {t=1} t && $3 == e {n += $1} END {print n + 0}' "$1"; }
total() { awk '/events in all/ {print $1}' "$1"; }

# A probe: can this machine record at all (root, or a low perf_event_paranoid)?
if ! "$ETWTOP" --record "$tmp/probe.etl" --duration 0.2 --on PROC_THREAD 2>"$tmp/probe.err"; then
        echo "SKIP: etwtop --record cannot run here: $(cat "$tmp/probe.err")" >&2
        echo "0 passed, 0 failed, 1 skipped"
        exit 0
fi

# 0. Wait reasons from where a thread slept: a process that sleeps 20 times in nanosleep
"${SYM_FIXTURE:?}" sleep 20 50 &
sleeper=$!
# perf counts the C-states entered meanwhile (power:cpu_idle), when it can
idle_states=
if command -v perf >/dev/null; then
        perf stat -a -x, -e power:cpu_idle --filter 'state != 4294967295' -o "$tmp/idle.csv" \
                sleep 1.5 2>/dev/null &
        perf_pid=$!
fi
"$ETWTOP" --record "$tmp/w.etl" --duration 1.5 2>/dev/null
wait "$sleeper"
if [ -n "${perf_pid:-}" ] && wait "$perf_pid"; then
        idle_states=$(awk -F, '/power:cpu_idle/ {print $1 + 0}' "$tmp/idle.csv")
fi
"$ETWTOP" --dump "$tmp/w.etl" >"$tmp/w.txt" 2>&1
"$ETWTOP" --replay "$tmp/w.etl" -b --top 100 >"$tmp/w-replay.txt" 2>&1
check "wait reasons: the sleeps' switches say where they slept" \
        grep -q "Thread/CSwitch .*old_tid=$sleeper .*old_state=Waiting wait_reason=DelayExecution" "$tmp/w.txt"
check "wait reasons: replay -b lists the waits by reason" \
        grep -Eq '^ +[0-9]+ +[0-9.]+  Waiting/DelayExecution$' "$tmp/w-replay.txt"
check "replay -b: busy and idle time per CPU, idle by C-state" \
        grep -Eq '^ +0 +[0-9]+ +[0-9.]+ +[0-9.]+ +[0-9.]+%(  C[0-9] [0-9]+%)*$' "$tmp/w-replay.txt"
# PreviousCState: the CPUs that idled in a C-state (perf saw them enter one) say so
if [ "${idle_states:-0}" -ge 10 ]; then
        check "CSwitch from idle: PreviousCState from power:cpu_idle" \
                grep -Eq "Thread/CSwitch .* old_tid=0 .* prev_cstate=[1-9]" "$tmp/w.txt"
else
        echo "note: fewer than 10 C-states entered during the recording (perf: '${idle_states:-not run}'): PreviousCState not checked" >&2
fi
check "wait reasons: replay -b lists the sleeper's switches" \
        grep -Eq "^ +[0-9]+ .* $sleeper +$sleeper +Waiting/DelayExecution +sym_fixture/sym_fixture\$" "$tmp/w-replay.txt"
# where it blocked: the switch-out stacks, past the scheduler, say do_nanosleep (most of its 20
# sleeps: it started with the recording)
check "replay -b: where the sleeper blocked" awk -v tid="$sleeper" '
        $3 == tid && $4 == "sym_fixture/sym_fixture" &&
        $NF ~ /^\[kernel\.kallsyms\]!do_nanosleep\+0x[0-9a-f]+$/ && $1 >= 10 {ok = 1}
        END {exit ok ? 0 : 1}' "$tmp/w-replay.txt"

# 1. The default session on a known workload: a busy loop in a named shell process.
( exec -a etwtop_spin bash -c 'end=$((SECONDS + 3)); while [ $SECONDS -lt $end ]; do :; done' ) &
spin=$!
"$ETWTOP" --record "$tmp/a.etl" --duration 2 2>"$tmp/a.err"
rc=$?
wait "$spin"
check "record: exit 0" [ $rc = 0 ]
check "record: progress on stderr (ControlTrace QUERY)" grep -q 'recording: [0-9]* buffers, .* MB, 0 lost' "$tmp/a.err"
check "record: file is 0600" [ "$(stat -c %a "$tmp/a.etl")" = 600 ]
"$ETWTOP" --dump "$tmp/a.etl" >"$tmp/a.txt" 2>&1
check "record: dumps" [ $? = 0 ]
f=$tmp/a.txt
check "record: kernel logger header" grep -q '^Logger name: *NT Kernel Logger' "$f"
check "record: 1 GHz session clock" grep -q '^Clock: *QPC (1), frequency 1000000000 Hz' "$f"
check "record: end time set" bash -c "! grep -q '^End time: *0$' '$f'"
check "record: samples" [ "$(count "$f" PerfInfo/SampledProfile)" -gt 100 ]
check "record: a stack per sample (and per switch and wake)" \
        [ "$(count "$f" StackWalk/Stack)" -ge "$(count "$f" PerfInfo/SampledProfile)" ]
check "record: context switches" [ "$(count "$f" Thread/CSwitch)" -gt 10 ]
check "record: ready threads" [ "$(count "$f" Thread/ReadyThread)" -gt 10 ]
check "record: process rundown" [ "$(count "$f" Process/DCStart)" -gt 3 ]
check "record: image rundown" [ "$(count "$f" Image/DCStart)" -gt 3 ]
check "record: the workload sampled by name" grep -q 'Process/DCStart .*image="etwtop_spin"\|Process/DCStart .*image="bash"' "$f"
check "record: no damaged buffer" grep -q '^Damaged buffers: *0$' "$f"
check "record: events in time order" \
        bash -c "awk '/^ *time cpu/ {t=1; next} /^\$/ {t=0} t && \$1+0 < last {bad=1} t {last=\$1+0} END {exit bad}' '$f'"
hdr_buffers=$(awk '/^Buffers written:/ {print $3}' "$f")
size=$(stat -c %s "$tmp/a.etl")
check "record: BuffersWritten matches the file size" [ $((size / 65536)) = "$hdr_buffers" ]

# 1b. -p: that process and its threads only (ETWTOP_TRACE_PROCESS_INFO through the API).
( exec -a etwtop_spin bash -c 'end=$((SECONDS + 3)); while [ $SECONDS -lt $end ]; do :; done' ) &
spin=$!
"$ETWTOP" --record "$tmp/p.etl" -p "$spin" --duration 1.5 2>/dev/null
check "record -p: exit 0" [ $? = 0 ]
wait "$spin"
"$ETWTOP" --dump "$tmp/p.etl" >"$tmp/p.txt" 2>&1
check "record -p: the process sampled" \
        [ "$(awk -v p="$spin" '$5 == "PerfInfo/SampledProfile" && $3 == p' "$tmp/p.txt" | wc -l)" -gt 100 ]
check "record -p: no other process sampled" \
        [ "$(awk -v p="$spin" '$5 == "PerfInfo/SampledProfile" && $3 != p' "$tmp/p.txt" | wc -l)" = 0 ]
check "record -p: the rundown is that process's" \
        [ "$(awk '$5 == "Process/DCStart"' "$tmp/p.txt" | wc -l)" = 1 ]
"$ETWTOP" --record "$tmp/nopid.etl" -p 999999999 --duration 0.2 2>"$tmp/nopid.err"
check "record -p: no such process fails, naming it" \
        bash -c "grep -q 999999999 '$tmp/nopid.err' && [ ! -e '$tmp/nopid.etl' ]"

# 2. An existing file is kept; --force replaces it.
"$ETWTOP" --record "$tmp/a.etl" --duration 0.2 2>"$tmp/exists.err"
check "record: existing file refused" [ $? = 1 ]
check "record: message says --force" grep -q 'force' "$tmp/exists.err"
check "record: existing file unchanged" [ "$(stat -c %s "$tmp/a.etl")" = "$size" ]
"$ETWTOP" --record "$tmp/a.etl" --duration 0.2 --force 2>/dev/null
check "record: --force replaces" [ $? = 0 ]
ln -s "$tmp/target" "$tmp/link.etl"
"$ETWTOP" --record "$tmp/link.etl" --duration 0.2 2>/dev/null
check "record: never through a symlink" [ ! -e "$tmp/target" ]

# 3. Ctrl-C, SIGTERM, SIGHUP end cleanly with a finalized file.
for sig in INT TERM HUP; do
        "$ETWTOP" --record "$tmp/$sig.etl" 2>"$tmp/$sig.err" &
        pid=$!
        sleep 1.5
        kill -"$sig" "$pid"
        wait "$pid"
        rc=$?
        check "record: SIG$sig exits 0" [ $rc = 0 ]
        "$ETWTOP" --dump --totals "$tmp/$sig.etl" >"$tmp/$sig.txt" 2>&1
        check "record: SIG$sig leaves a readable file" [ $? = 0 ]
        check "record: SIG$sig file finalized" bash -c "! grep -q '^End time: *0$' '$tmp/$sig.txt'"
        check "record: SIG$sig says why it stopped" grep -q 'recording stopped' "$tmp/$sig.err"
done

# 4. kill -9: every complete buffer still reads.
"$ETWTOP" --record "$tmp/killed.etl" --buffer-size 4 2>/dev/null &
pid=$!
sleep 2
kill -9 "$pid"
wait "$pid" 2>/dev/null
"$ETWTOP" --dump --totals "$tmp/killed.etl" >"$tmp/killed.txt" 2>&1
check "record: kill -9 leaves a readable file" [ $? = 0 ]
check "record: kill -9 file has events" [ "$(total "$tmp/killed.txt")" -gt 10 ]

# 5. A full disk ends the recording with a valid file.
mkdir -p "$tmp/full"
if mount -t tmpfs -o size=160k tmpfs "$tmp/full" 2>/dev/null; then
        "$ETWTOP" --record "$tmp/full/f.etl" --buffer-size 16 --duration 20 2>"$tmp/full.err"
        rc=$?
        check "record: full disk reported" grep -q 'No space left' "$tmp/full.err"
        check "record: full disk exits non-zero" [ $rc = 1 ]
        "$ETWTOP" --dump --totals "$tmp/full/f.etl" >"$tmp/full.txt" 2>&1
        check "record: full disk leaves a readable file" [ $? = 0 ]
        check "record: full disk file holds events" [ "$(total "$tmp/full.txt")" -gt 10 ]
        umount "$tmp/full"
else
        skip "no tmpfs mount here for the full-disk test"
fi

# 6. Hardware this machine may lack: PMC sampling and LBR say what is missing.
if [ -e /sys/bus/event_source/devices/cpu ] || [ -e /sys/bus/event_source/devices/cpu_core ]; then
        skip "this machine has a PMU: the no-PMU messages are not tested"
else
        "$ETWTOP" --record "$tmp/pmc.etl" --pmc-profile BranchMispredictions --duration 0.2 2>"$tmp/pmc.err"
        check "record: --pmc-profile without a PMU fails" [ $? = 1 ]
        check "record: it names the missing PMU" grep -qi 'no hardware PMU' "$tmp/pmc.err"
        "$ETWTOP" --record "$tmp/pmcc.etl" --pmc TotalCycles+InstructionRetired --duration 0.2 \
                2>"$tmp/pmcc.err"
        check "record: --pmc (counters on CSwitch) without a PMU fails" [ $? = 1 ]
        check "record: ... naming the missing PMU, and nothing written" \
                bash -c "grep -qi 'no hardware PMU' '$tmp/pmcc.err' && [ ! -e '$tmp/pmcc.etl' ]"
        check "record: no file left behind" [ ! -e "$tmp/pmc.etl" ]
        "$ETWTOP" --record "$tmp/lbr.etl" --lastbranch Profile --duration 0.2 2>"$tmp/lbr.err"
        check "record: --lastbranch without LBR fails" [ $? = 1 ]
        check "record: it names the missing LBR" grep -qi 'LBR\|last branch' "$tmp/lbr.err"
fi

# 7. Bad options are named.
"$ETWTOP" --record "$tmp/bad.etl" --on PROC_THREAD+NOPE 2>"$tmp/bad.err"
check "record: unknown flag exits 2" [ $? = 2 ]
check "record: unknown flag named" grep -q 'NOPE' "$tmp/bad.err"
"$ETWTOP" --record "$tmp/bad.etl" --stackwalk Profile+Nope 2>"$tmp/bad2.err"
check "record: unknown stack event named" grep -q 'Nope' "$tmp/bad2.err"

# 8. A missing privilege gets the fix in the message.
paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 2)
if [ "$(id -u)" = 0 ] && [ "$paranoid" -ge 1 ] && command -v setpriv >/dev/null; then
        chmod 0777 "$tmp"
        setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
                "$ETWTOP" --record "$tmp/nobody.etl" --duration 0.2 2>"$tmp/nobody.err"
        check "record: unprivileged fails" [ $? = 1 ]
        check "record: unprivileged message names the fix" \
                grep -q 'root\|CAP_PERFMON\|perf_event_paranoid' "$tmp/nobody.err"
else
        skip "cannot drop to an unprivileged user here"
fi

echo "$nr_pass passed, $nr_fail failed, $nr_skip skipped"
[ "$nr_fail" = 0 ]
