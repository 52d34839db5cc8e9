#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# record_cli.sh: `etwtop --record` end to end: a known workload recorded and dumped; signals,
# kill -9 and a full disk leave valid files; existing files are kept; missing hardware and
# missing privileges get messages that say what to do.
set -u
: "${ETWTOP:?}"
tmp=$(mktemp -d)
. "$(dirname "$0")/../lib/check.sh"
# Session hosts of its own, in $tmp (sessions belong to a host, and a kernel logger is one per
# host: another test's or user's must not be in the way), ended at exit. A host's directory is
# its user's: nobody's runs use another one.
export ETWTOP_RUNTIME_DIR=$tmp/rt
# The hosts of directory $1 ($tmp/rt...): the processes with it in their environment, this
# shell and its subshells aside. Ended by their ids (a session left running ends with them).
end_hosts() {
        local p
        for p in /proc/[0-9]*; do
                p=${p#/proc/}
                [ "$p" = $$ ] || [ "$p" = "$BASHPID" ] && continue
                grep -qz "^ETWTOP_RUNTIME_DIR=$1\$" "/proc/$p/environ" 2>/dev/null && kill "$p" 2>/dev/null
        done
        return 0
}
cleanup() {
        local d
        for d in "$tmp"/rt*; do [ -d "$d" ] && end_hosts "$d"; done
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

# 0. Wait reasons from where a thread slept: a process that sleeps in nanosleep, 50 ms at a
# time, for as long as the 2 s recording runs however late that starts (a sanitizer build
# beside the suite's fuzzers started past most of a 2 s sleeper, and saw fewer than 10 sleeps);
# it is ended once the recording is
"${SYM_FIXTURE:?}" sleep 1200 50 &
sleeper=$!
"$ETWTOP" --record "$tmp/w.etl" --duration 2 2>/dev/null &
rec=$!
# perf counts the C-states entered meanwhile (power:cpu_idle), when it can: for half a second
# once the session runs, inside the recording (counted from before it, a slow start, as a
# sanitizer build's beside the suite's fuzzers, left perf's C-states outside the trace)
idle_states=
if command -v perf >/dev/null && recording_started "$tmp/w.etl" $rec && kill -0 $rec 2>/dev/null; then
        perf stat -a -x, -e power:cpu_idle --filter 'state != 4294967295' -o "$tmp/idle.csv" \
                sleep 0.5 2>/dev/null &
        perf_pid=$!
fi
# perf's half second counted only where the recording ran past it
if [ -n "${perf_pid:-}" ] && wait "$perf_pid" && kill -0 $rec 2>/dev/null; then
        idle_states=$(awk -F, '/power:cpu_idle/ {print $1 + 0}' "$tmp/idle.csv")
fi
wait $rec
kill "$sleeper" 2>/dev/null
wait "$sleeper" 2>/dev/null
"$ETWTOP" --dump "$tmp/w.etl" >"$tmp/w.txt" 2>&1
"$ETWTOP" --replay "$tmp/w.etl" -b --top 100 >"$tmp/w-replay.txt" 2>&1
check "wait reasons: the sleeps' switches say where they slept" \
        grep -q "Thread/CSwitch .*old_tid=$sleeper .*old_state=Waiting wait_reason=DelayExecution" "$tmp/w.txt"
check "wait reasons: replay -b lists the waits by reason" \
        grep -Eq '^ +[0-9]+ +[0-9.]+  Waiting/DelayExecution$' "$tmp/w-replay.txt"
# (the states one space apart: "C0 2% C1 98%" where a CPU idled in two; the check allowed one,
# and failed a fresh-clone CI run that way)
cpu_rows_ok() {
        grep -Eq '^ +0 +[0-9]+ +[0-9.]+ +[0-9.]+ +[0-9.]+%(  C[0-9] [0-9]+%( C[0-9] [0-9]+%)*|  unknown \(no C-state data\))?$' "$tmp/w-replay.txt" ||
                { grep -A4 '^CPUs (time' "$tmp/w-replay.txt" >&2; return 1; }
}
check "replay -b: busy and idle time per CPU, idle by C-state" cpu_rows_ok
# PreviousCState: the CPUs that idled in a C-state (perf saw them enter one) say so
if [ "${idle_states:-0}" -ge 10 ]; then
        check "CSwitch from idle: PreviousCState from power:cpu_idle" \
                grep -Eq "Thread/CSwitch .* old_tid=0 .* prev_cstate=[1-9]" "$tmp/w.txt"
else
        echo "note: fewer than 10 C-states entered during the recording (perf: '${idle_states:-not run}'): PreviousCState not checked" >&2
fi
check "wait reasons: replay -b lists the sleeper's switches" \
        grep -Eq "^ +[0-9]+ .* $sleeper +$sleeper +Waiting/DelayExecution +sym_fixture(/sym_fixture)?\$" "$tmp/w-replay.txt"
# issue 13, item 17: a CSwitch's stack is the new thread's, as Windows writes it (where that
# thread had left the CPU), so that a reader of NewThreadStack finds it: every StackWalk that
# follows a CSwitch at its time names the CSwitch's new thread
check "CSwitch stacks: StackThread is the new thread (Windows), never the old one" awk '
        $5 == "Thread/CSwitch" {t = $1; nt = $6; sub("new_tid=", "", nt); next}
        $5 == "StackWalk/Stack" && t != "" && $6 == "event_time=" t {
                if ($4 == nt) ok++; else bad++
        }
        {t = ""}
        END {printf "%d CSwitch stacks of the new thread, %d of another\n", ok, bad > "/dev/stderr"
             exit (ok >= 10 && bad == 0) ? 0 : 1}' "$tmp/w.txt"
check "CSwitch stacks: the sleeper's switch-ins carry where it slept" awk -v tid="$sleeper" '
        $5 == "Thread/CSwitch" && $6 == "new_tid=" tid {t = $1; next}
        $5 == "StackWalk/Stack" && t != "" && $4 == tid && $6 == "event_time=" t {n++}
        {t = ""}
        END {exit n >= 10 ? 0 : 1}' "$tmp/w.txt"
# where it blocked: the switch-out stacks, past the scheduler, say do_nanosleep (10 or more of
# the recording's 30 sleeps)
check "replay -b: where the sleeper blocked" awk -v tid="$sleeper" '
        $3 == tid && ($4 == "sym_fixture" || $4 == "sym_fixture/sym_fixture") &&
        $NF ~ /^\[kernel\.kallsyms\]!do_nanosleep\+0x[0-9a-f]+$/ && $1 >= 10 {ok = 1}
        END {exit ok ? 0 : 1}' "$tmp/w-replay.txt"

# 1. The default session on a known workload: a busy loop in a named shell process.
( exec -a etwtop_spin bash -c 'end=$((SECONDS + 3)); while [ $SECONDS -lt $end ]; do :; done' ) &
spin=$!
"$ETWTOP" --record "$tmp/a.etl" --duration 2 2>"$tmp/a.err"
rc=$?
wait "$spin"
check "record: exit 0" [ $rc = 0 ]
# (events lost or not: a sanitizer build on a loaded machine loses some, and says how many)
check "record: progress on stderr (ControlTrace QUERY)" grep -q 'recording: [0-9]* buffers, .* MB, [0-9]* lost' "$tmp/a.err"
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

# 1b. -p: that process and its threads only (ETWTOP_TRACE_PROCESS_INFO through the API). The
# process outlives the recording however long its start takes; ended after it.
( exec -a etwtop_spin bash -c 'end=$((SECONDS + 120)); while [ $SECONDS -lt $end ]; do :; done' ) &
spin=$!
"$ETWTOP" --record "$tmp/p.etl" -p "$spin" --duration 1.5 2>/dev/null
check "record -p: exit 0" [ $? = 0 ]
kill "$spin"
wait "$spin" 2>/dev/null
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

# issue 13: workloads compiled here: a spinner, a sched_yield loop, a nanosleep loop, a pipe
# ping-pong (the parent writes and waits for the echo of its child)
cat >"$tmp/wl.c" <<'EOF'
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
static double now(void)
{
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        return t.tv_sec + t.tv_nsec / 1e9;
}
int main(int argc, char **argv)
{
        double end = now() + (argc > 2 ? atof(argv[2]) : 1);
        volatile unsigned long x = 0;
        if (argc < 2)
                return 2;
        if (strcmp(argv[1], "spin") == 0) {
                while (now() < end)
                        for (int i = 0; i < 100000; i++)
                                x++;
        } else if (strcmp(argv[1], "yield") == 0) {
                while (now() < end)
                        sched_yield();
        } else if (strcmp(argv[1], "sleep") == 0) {
                struct timespec d = {0, 20000000};
                while (now() < end)
                        nanosleep(&d, NULL);
        } else if (strcmp(argv[1], "pingpong") == 0) {
                int a[2], b[2];
                char c = 'x';
                if (pipe(a) || pipe(b))
                        return 1;
                if (fork() == 0) {
                        close(a[1]);
                        close(b[0]);
                        while (read(a[0], &c, 1) == 1 && write(b[1], &c, 1) == 1)
                                ;
                        _exit(0);
                }
                close(a[0]);
                close(b[1]);
                while (now() < end)
                        if (write(a[1], &c, 1) != 1 || read(b[0], &c, 1) != 1)
                                return 1;
                close(a[1]);
                wait(NULL);
        }
        return 0;
}
EOF
wl=
if command -v cc >/dev/null && cc -O2 -o "$tmp/wl" "$tmp/wl.c" 2>"$tmp/wl.err"; then
        wl=$tmp/wl
else
        skip "no C compiler here for the issue 13 workloads: $(cat "$tmp/wl.err" 2>/dev/null)"
fi
ctxt() { awk -v k="$2" '$1 == k ":" {print $2}' "/proc/$1/status"; }

if [ -n "$wl" ]; then
        # Item 2: preempted or yielding, and a sleep's reason in the CSwitch record itself: the
        # CSwitch stacks are off (--stackwalk Profile), the reasons come from the kernel's
        # callchain all the same. Two spinners share one CPU (preempted at the tick: no
        # voluntary switches, /proc says); a sched_yield loop shares another with a third.
        ncpu=$(nproc)
        c0=0 c1=$((ncpu > 1 ? 1 : 0))
        taskset -c "$c1" "$wl" spin 3 & spin1=$!
        taskset -c "$c1" "$wl" spin 3 & spin2=$!
        taskset -c "$c0" "$wl" yield 3 & yielder=$!
        taskset -c "$c0" "$wl" spin 3 & spin3=$!
        "$wl" sleep 3 & sleeper2=$!
        # the spinner's switches counted from once it spins (its user time past a tick): its
        # start (the exec, the loader's reads of its pages) may wait, the more on a busy machine
        wait_until 30 eval "[ \"\$(awk '{print \$14}' /proc/$spin1/stat 2>/dev/null)\" -ge 1 ] 2>/dev/null"
        vol0=$(ctxt "$spin1" voluntary_ctxt_switches)
        invol0=$(ctxt "$spin1" nonvoluntary_ctxt_switches)
        "$ETWTOP" --record "$tmp/r.etl" --stackwalk Profile --duration 1.5 2>"$tmp/r.err" &
        rec=$!
        # read again once it was preempted five times more (or it ended, or the recording did)
        wait_until 30 eval "[ \$((\$(ctxt $spin1 nonvoluntary_ctxt_switches) - ${invol0:-0})) -ge 5 ] 2>/dev/null || ! kill -0 $spin1 2>/dev/null || ! kill -0 $rec 2>/dev/null"
        vol=$(ctxt "$spin1" voluntary_ctxt_switches)
        invol=$(ctxt "$spin1" nonvoluntary_ctxt_switches)
        vol=$((${vol:-1} - ${vol0:-0})) invol=$((${invol:-0} - ${invol0:-0}))
        wait "$rec"
        rc=$?
        wait "$spin1" "$spin2" "$yielder" "$spin3" "$sleeper2"
        check "preemption: record exits 0" [ $rc = 0 ]
        "$ETWTOP" --dump "$tmp/r.etl" >"$tmp/r.txt" 2>&1
        # a thread's switch-outs by wait reason: "reason=count ..."
        reasons() {
                awk -v tid="$1" '$5 == "Thread/CSwitch" && $8 == "old_tid=" tid {
                        for (i = 9; i <= NF; i++) if ($i ~ /^wait_reason=/) n[substr($i, 13)]++ }
                        END {for (r in n) printf "%s=%d ", r, n[r]}' "$tmp/r.txt"
        }
        echo "spinner $spin1: /proc says $vol voluntary, $invol involuntary switches once it spun; the trace: $(reasons "$spin1")" >&2
        echo "yielder $yielder: $(reasons "$yielder"); sleeper $sleeper2: $(reasons "$sleeper2")" >&2
        check "preemption: the spinner is preempted (/proc: involuntary switches, hardly a voluntary one)" \
                [ "${invol:-0}" -ge 5 -a "${vol:-1}" -le 2 ]
        check "preemption: its switches say Ready/WrPreempted, never WrYieldExecution" awk -v tid="$spin1" '
                $5 == "Thread/CSwitch" && $8 == "old_tid=" tid {
                        if ($0 ~ /old_state=Ready wait_reason=WrPreempted /) p++
                        else if ($0 ~ /WrYieldExecution/) y++ }
                END {exit (p >= 5 && y == 0) ? 0 : 1}' "$tmp/r.txt"
        check "yield: the sched_yield loop's switches say WrYieldExecution (do_sched_yield)" awk -v tid="$yielder" '
                $5 == "Thread/CSwitch" && $8 == "old_tid=" tid {
                        n++; if ($0 ~ /old_state=Ready wait_reason=WrYieldExecution /) y++ }
                END {exit (y >= 5 && y * 2 > n) ? 0 : 1}' "$tmp/r.txt"
        # (its other switch-outs are preemptions while it ran: under a busy machine's load, 3 of
        # 74 in one run, where this once allowed 2 of anything; and its exit, once, where a
        # loaded machine started the recording late enough for its 3 s to end inside it: CI,
        # stop 54, "WrTerminated=1 WrPreempted=1 DelayExecution=67"; and, once under 4 busy
        # loops, one wait that no blocking function names (Executive), allowed beside its exit
        # only, where the kernel may wait for its own (stop 60, "WrTerminated=1 Executive=1
        # WrPreempted=1 DelayExecution=113"); and once, in a fresh clone's CI with the suite's
        # fuzzers beside it, one such wait with no exit (stop 96, "Executive=1
        # DelayExecution=73"); and twice, under 4 busy loops and -j3 (stop 98, "Executive=2
        # DelayExecution=92"): an uninterruptible wait in the kernel (sched_switch's D: a page
        # of the program read in, a lock of the kernel's) is Executive, as Windows names a wait
        # of the kernel's own, and a loaded machine has more of them; so such waits are allowed
        # up to a tenth of the sleeps, and still none of any other reason)
        check "nanosleep: DelayExecution in the CSwitch record, without CSwitch stacks; its other switches preemptions" awk -v tid="$sleeper2" '
                $5 == "Thread/CSwitch" && $8 == "old_tid=" tid {
                        n++
                        if ($0 ~ /old_state=Waiting wait_reason=DelayExecution /) d++
                        else if ($0 ~ /old_state=Ready wait_reason=WrPreempted /) p++
                        else if ($0 ~ /wait_reason=WrTerminated /) t++
                        else if ($0 ~ /old_state=Waiting wait_reason=Executive /) e++ }
                END {exit (d >= 10 && t <= 1 && e * 10 <= d && d + p + t + e == n) ? 0 : 1}' "$tmp/r.txt"
        check "nanosleep: no CSwitch stack written when they are off" awk '
                $5 == "Thread/CSwitch" {t = $1; next}
                $5 == "StackWalk/Stack" && t != "" && $6 == "event_time=" t {f = 1}
                {t = ""}
                END {exit f ? 1 : 0}' "$tmp/r.txt"
        # Item 18: TimerResolution is the kernel's tick (1 / CONFIG_HZ), and NewThreadWaitTime
        # counts ticks of it: a preempted spinner's wait, from its switch-out to its switch-in,
        # is that many ticks, give or take one
        res=$(awk '/^Timer resolution:/ {print $3}' "$tmp/r.txt")
        hz=$( (cat "/boot/config-$(uname -r)" || zcat /proc/config.gz) 2>/dev/null |
                sed -n 's/^CONFIG_HZ=//p')
        if [ -n "$hz" ]; then
                check "TimerResolution $res is the kernel's tick (CONFIG_HZ=$hz)" \
                        [ "$res" = $(((10000000 + hz / 2) / hz)) ]
        else
                skip "CONFIG_HZ not found (no /boot/config-$(uname -r), no /proc/config.gz): TimerResolution $res not compared"
        fi
        check "NewThreadWaitTime: the preempted spinner's waits in ticks of TimerResolution" awk -v tid="$spin1" -v res="${res:-10000}" '
                $5 == "Thread/CSwitch" && $8 == "old_tid=" tid {out = $1; next}
                $5 == "Thread/CSwitch" && $6 == "new_tid=" tid && out != "" {
                        w = $0; sub(/.*new_wait_time=/, "", w); sub(/ .*/, "", w)
                        d = ($1 - out) * 1e7 / res
                        n++; if (w > 0) nz++; if (w - d <= 1.01 && d - w <= 1.01) ok++
                        out = "" }
                END {printf "%d waits of the spinner, %d not 0, %d within a tick\n", n, nz, ok > "/dev/stderr"
                     exit (n >= 5 && nz >= 2 && ok * 10 >= n * 9) ? 0 : 1}' "$tmp/r.txt"

        # Items 2 and 6: -p of a ping-pong's parent, both on one CPU: its child (another
        # process) appears only as the other side of the parent's switches; as the old side
        # its state is what its switch-out record says (blocked in read: Waiting/UserRequest),
        # not Executive.
        # (it outlives the recording however long its start takes; ended after it: its child
        # then reads the end of its pipe and exits)
        taskset -c "$c0" "$wl" pingpong 120 & pp=$!
        wait_until 30 eval "[ -n \"\$(cat /proc/$pp/task/$pp/children 2>/dev/null)\" ]"
        ppchild=$(awk '{print $1}' "/proc/$pp/task/$pp/children" 2>/dev/null)
        "$ETWTOP" --record "$tmp/pp.etl" -p "$pp" --duration 1 2>/dev/null
        check "record -p ping-pong: exit 0" [ $? = 0 ]
        kill "$pp"
        wait "$pp" 2>/dev/null
        "$ETWTOP" --dump "$tmp/pp.etl" >"$tmp/pp.txt" 2>&1
        # a switch whose switch-out record the kernel dropped (its ring full: the sanitizers'
        # build drains slower than 100 000 switches a second) has no state to tell; none may
        # go without one in a trace that lost nothing
        check "record -p: another process's thread waiting on a pipe is UserRequest, not Executive" awk -v p="$pp" -v c="$ppchild" '
                /^Events lost:/ {lost = $3}
                $5 == "Thread/CSwitch" && $6 == "new_tid=" p && $8 == "old_tid=" c {
                        n++; if ($0 ~ /old_state=Waiting wait_reason=UserRequest /) u++
                        else if ($0 ~ /old_state=Ready wait_reason=WrPreempted /) r++ }
                END {printf "%d switches from the child to the parent: %d UserRequest (blocked in read), %d WrPreempted (by the parent it woke), %d else; %d events lost\n", n, u, r, n - u - r, lost > "/dev/stderr"
                     e = n - u - r
                     exit (n >= 10 && u >= 5 && (lost ? e * 100 <= n : e == 0)) ? 0 : 1}' "$tmp/pp.txt"
        check "record -p: the ping-pong's own switch-outs are not yields" \
                bash -c "! grep -q 'old_tid=$pp .*WrYieldExecution' '$tmp/pp.txt'"
        # item 6 in the replay: the file says which process it traced (SessionCpu), and the
        # switches view has rows for that process's threads only, not for its child's
        check "record -p: SessionCpu names the traced process" grep -q "etwtop/SessionCpu .* traced_pid=$pp\$" "$tmp/pp.txt"
        "$ETWTOP" --replay "$tmp/pp.etl" -b >"$tmp/pp-replay.txt" 2>&1
        check "record -p: replay says it was recorded with -p" grep -q "^Recorded with -p: process $pp only" "$tmp/pp-replay.txt"
        check "record -p: replay's switch rows are the traced process's threads only" awk -v p="$pp" '
                /^Context switches \(threads/ {t = 1; getline; next}
                t && /^$/ {t = 0}
                t && $1 ~ /^[0-9]+$/ {n++; if ($6 != p) bad++}
                END {printf "%d rows, %d of another process\n", n, bad > "/dev/stderr"
                     exit (n >= 1 && bad == 0) ? 0 : 1}' "$tmp/pp-replay.txt"
fi

# Item 6: -p means that process's threads: a shell loop that starts /bin/true; its children
# (other processes) are not recorded, and every switch recorded is one of its threads'.
# (it outlives the recording however long its start takes; ended after it)
( exec -a etwtop_forker bash -c 'end=$((SECONDS + 120)); while [ $SECONDS -lt $end ]; do /bin/true; done' ) &
forker=$!
sleep 0.2
"$ETWTOP" --record "$tmp/f.etl" -p "$forker" --duration 1 2>/dev/null
check "record -p forker: exit 0" [ $? = 0 ]
kill "$forker"
wait "$forker" 2>/dev/null
"$ETWTOP" --dump "$tmp/f.etl" >"$tmp/f.txt" 2>&1
check "record -p: no other process (its children) in Process events" \
        [ "$(awk -v p="$forker" '$5 ~ /^Process\// && $6 != "pid=" p' "$tmp/f.txt" | wc -l)" = 0 ]
check "record -p: no other process's threads in Thread events" \
        [ "$(awk -v p="$forker" '$5 ~ /^Thread\/(Start|End|DCStart|DCEnd|SetName)/ && $6 != "pid=" p' "$tmp/f.txt" | wc -l)" = 0 ]
check "record -p: every CSwitch is one of its threads' (others only as the other side)" awk -v p="$forker" '
        $5 == "Thread/CSwitch" {n++; if ($7 != "new_pid=" p && $9 != "old_pid=" p) bad++}
        END {printf "%d CSwitch, %d of other processes only\n", n, bad > "/dev/stderr"
             exit (n >= 10 && bad == 0) ? 0 : 1}' "$tmp/f.txt"
check "record -p: no sample of another process" \
        [ "$(awk -v p="$forker" '$5 == "PerfInfo/SampledProfile" && $3 != p' "$tmp/f.txt" | wc -l)" = 0 ]

# Item 16: every Process event carries its owner's SID, S-1-22-1-<uid>, in the TOKEN_USER
# layout Windows writes (the bytes are checked by test_perf_convert)
check "Process events: every one has a SID: the owner's S-1-22-1-<uid> (S-1-0-0: gone unread)" awk '
        $5 ~ /^Process\// {n++; if ($0 ~ / sid="S-1-22-1-[0-9]+" /) s++; else if ($0 ~ / sid="S-1-0-0" /) z++}
        $5 == "Process/DCStart" {r++; if ($0 ~ / sid="S-1-22-1-[0-9]+" /) rs++}
        END {printf "%d Process events: %d with the owner SID, %d the Null SID (processes gone before they were read); the rundown: %d of %d\n", n, s, z, rs, r > "/dev/stderr"
             exit (n > 3 && s + z == n && rs * 100 >= r * 99) ? 0 : 1}' "$tmp/a.txt"
check "Process events: this shell's SID is its uid's" \
        grep -q "Process/DCStart pid=$$ .* sid=\"S-1-22-1-$(id -u)\"" "$tmp/a.txt"

# Items 1, 7, 16: the records of all CPUs are converted in time order. A process that execs
# on one CPU what another CPU had exec'd just before (taskset -> bash -> taskset -> prog, one
# pid) ends the trace with its own name and images; converted one ring after the other, the
# exec on CPU 0 came before the earlier ones on CPU 1, and the end rundown named it taskset,
# with taskset's images (a saved window's libc frames were then [unknown]). Short processes
# started meanwhile, on alternating CPUs, each get their owner's SID (an exec converted before
# its fork gave the Null SID to about 10% of them).
if [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null; then
        cp /bin/sleep "$tmp/etwprog"
        "$ETWTOP" --record "$tmp/o.etl" --on PROC_THREAD+LOADER 2>"$tmp/o.err" &
        rec=$!
        # until the session runs, its rundown in the file past the header buffer (a sanitizer
        # build's start on a busy machine can take seconds): the processes below start in it
        wait_until 120 eval "[ \"\$(stat -c %s '$tmp/o.etl' 2>/dev/null)\" -gt 65536 ] 2>/dev/null ||
                ! kill -0 $rec 2>/dev/null"
        # bash forks the one on CPU 0 (the "; :" keeps bash from exec'ing it in place); it
        # outlives the recording, which ends after the short ones below
        taskset -c 1 bash -c "taskset -c 0 '$tmp/etwprog' 600; :" & chain=$!
        for i in 1 2 3 4 5 6 7 8; do
                taskset -c $((i % 2)) bash -c "taskset -c $(((i + 1) % 2)) sleep 0.15; :"
        done &
        loop=$!
        prog=
        for i in $(seq 30); do # the chain may wait for a CPU on a busy machine
                sleep 0.1
                prog=$(pgrep -f "^$tmp/etwprog 600" | head -1)
                [ -n "$prog" ] && break
        done
        wait "$loop"
        kill -TERM "$rec" 2>/dev/null
        wait "$rec"
        check "order: record exits 0" [ $? = 0 ]
        "$ETWTOP" --dump "$tmp/o.etl" >"$tmp/o.txt" 2>&1
        pkill -f "^$tmp/etwprog 600" 2>/dev/null
        kill "$chain" 2>/dev/null
        wait "$chain" 2>/dev/null
        echo "etwprog pid ${prog:-none}: $(grep "Process/DCEnd pid=${prog:-x} " "$tmp/o.txt" | sed 's/.*image=/image=/')" >&2
        check "order: the exec'd program's end rundown names it (Process/DCEnd)" \
                grep -q "Process/DCEnd pid=${prog:-x} .* image=\"etwprog\"" "$tmp/o.txt"
        check "order: its Image/DCEnd are its own: etwprog and libc, not taskset's or bash's" awk -v p="${prog:-x}" '
                $5 == "Image/DCEnd" && $0 ~ " pid=" p " " {
                        n++; if ($0 ~ /etwprog"/) e++; if ($0 ~ /libc[.]so/) l++
                        if ($0 ~ /(taskset|bash)"/) o++ }
                END {printf "%d Image/DCEnd of etwprog: %d etwprog, %d libc, %d of taskset or bash\n", n, e, l, o > "/dev/stderr"
                     exit (e == 1 && l == 1 && o == 0) ? 0 : 1}' "$tmp/o.txt"
        check "order: no Null SID for a process that lived over 100 ms" awk '
                $5 ~ /^Process\// { p = $0; sub(/.* pid=/, "", p); sub(/ .*/, "", p) }
                $5 == "Process/Start" && !(p in start) {start[p] = $1}
                $5 == "Process/End" {end[p] = $1}
                $5 ~ /^Process\// && $0 ~ / sid="S-1-0-0" / {null[p] = 1}
                $1 ~ /^[0-9]+[.][0-9]+$/ && NF >= 5 {last = $1}
                END {for (p in start) {
                        t = (p in end ? end[p] : last) - start[p]
                        if (t > 0.1) {n++; if (p in null) z++} }
                     printf "%d processes started in the trace lived over 100 ms, %d with the Null SID\n", n, z > "/dev/stderr"
                     exit (n >= 4 && z == 0) ? 0 : 1}' "$tmp/o.txt"
else
        skip "one CPU or no taskset: the order of records across CPUs is not tested live"
fi

# Item 13: as an ordinary user, --record -p of one's own process works where perf record -p
# does: the rings fit kernel.perf_event_mlock_kb as perf's do; CSwitch/ReadyThread, which need
# tracefs, say so when this user cannot read it.
if [ "$(id -u)" = 0 ] && [ -n "$wl" ] && command -v setpriv >/dev/null; then
        nobody="setpriv --reuid=nobody --regid=nogroup --clear-groups env ETWTOP_RUNTIME_DIR=$tmp/rt-nobody"
        chmod 0777 "$tmp"
        $nobody "$wl" spin 10 &
        nbspin=$!
        sleep 0.2
        paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 2)
        if command -v perf >/dev/null; then
                $nobody perf record -q -o "$tmp/nobody.data" -p "$nbspin" -- sleep 0.3 >/dev/null 2>&1
                perf_ok=$?
        else
                perf_ok=$([ "$paranoid" -le 2 ] && echo 0 || echo 1)
        fi
        if [ "$perf_ok" = 0 ]; then
                $nobody "$ETWTOP" --record "$tmp/nb.etl" -p "$nbspin" --on PROC_THREAD+LOADER+PROFILE \
                        --duration 0.5 2>"$tmp/nb.err"
                rc=$?
                check "unprivileged --record -p own process: exit 0 ($(tail -1 "$tmp/nb.err"))" [ $rc = 0 ]
                "$ETWTOP" --dump "$tmp/nb.etl" >"$tmp/nb.txt" 2>&1
                check "unprivileged --record -p: its samples" \
                        [ "$(awk -v p="$nbspin" '$5 == "PerfInfo/SampledProfile" && $3 == p' "$tmp/nb.txt" | wc -l)" -gt 20 ]
                check "unprivileged --record -p: the process's SID is nobody's" \
                        grep -q "Process/DCStart pid=$nbspin .* sid=\"S-1-22-1-$(id -u nobody)\"" "$tmp/nb.txt"
                tracefs=$(awk '$3 == "tracefs" {print $2; exit}' /proc/mounts)
                if [ -n "$tracefs" ] && ! $nobody test -r "$tracefs/events"; then
                        $nobody "$ETWTOP" --record "$tmp/nb2.etl" -p "$nbspin" --on PROC_THREAD+CSWITCH \
                                --duration 0.3 2>"$tmp/nb2.err"
                        check "unprivileged CSwitch: fails" [ $? = 1 ]
                        check "unprivileged CSwitch: 'tracefs is not readable by this user', not 'mount'" \
                                bash -c "grep -q 'tracefs ($tracefs) is not readable by this user' '$tmp/nb2.err' && ! grep -q 'mount -t tracefs' '$tmp/nb2.err'"
                else
                        skip "tracefs is not mounted, or nobody can read it: the tracefs message is not tested"
                fi
        else
                skip "perf record -p of its own process fails for nobody here (perf_event_paranoid=$paranoid): the unprivileged --record -p is not tested"
        fi
        kill "$nbspin" 2>/dev/null
        wait "$nbspin" 2>/dev/null
else
        skip "not root, no workload or no setpriv: the unprivileged --record -p is not tested"
fi

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

# 3. Ctrl-C, SIGTERM, SIGHUP end cleanly with a finalized file: three recorders at once, each
# signalled once its file holds buffers (it is then past its start, writing)
declare -A sig_pid
for sig in INT TERM HUP; do
        "$ETWTOP" --record "$tmp/$sig.etl" 2>"$tmp/$sig.err" &
        sig_pid[$sig]=$!
done
for sig in INT TERM HUP; do
        recording_written "$tmp/$sig.etl" "${sig_pid[$sig]}"
done
for sig in INT TERM HUP; do
        pid=${sig_pid[$sig]}
        kill -"$sig" "$pid"
        wait "$pid"
        rc=$?
        check "record: SIG$sig exits 0" [ $rc = 0 ]
        "$ETWTOP" --dump --totals "$tmp/$sig.etl" >"$tmp/$sig.txt" 2>&1
        check "record: SIG$sig leaves a readable file" [ $? = 0 ]
        check "record: SIG$sig file finalized" bash -c "! grep -q '^End time: *0$' '$tmp/$sig.txt'"
        check "record: SIG$sig says why it stopped" grep -q 'recording stopped' "$tmp/$sig.err"
done

# 3b. A recorder stopped (SIGSTOP) for longer than its progress step still ends at --duration:
# its next step came out in the past, and poll waited forever with a negative timeout.
"$ETWTOP" --record "$tmp/stopped.etl" --duration 3 --on PROC_THREAD 2>"$tmp/stopped.err" &
pid=$!
recording_started "$tmp/stopped.etl" "$pid"
kill -STOP "$pid"
sleep 2.5 # the condition itself: stopped past a progress step
kill -CONT "$pid"
if ! wait_until 60 eval "! kill -0 $pid 2>/dev/null"; then
        check "record: stopped past a progress step, it still ends at --duration" false
        kill -TERM "$pid"
fi
wait "$pid"
check "record: stopped past a progress step, it exits 0 at --duration" [ $? = 0 ]

# 4. kill -9: every complete buffer still reads. (In a host of its own: the session may outlive
# the recorder, as a Windows kernel logger outlives xperf; that host is ended after.)
ETWTOP_RUNTIME_DIR=$tmp/rt-killed "$ETWTOP" --record "$tmp/killed.etl" --buffer-size 4 2>/dev/null &
pid=$!
recording_written "$tmp/killed.etl" "$pid"
kill -9 "$pid"
wait "$pid" 2>/dev/null
"$ETWTOP" --dump --totals "$tmp/killed.etl" >"$tmp/killed.txt" 2>&1
check "record: kill -9 leaves a readable file" [ $? = 0 ]
check "record: kill -9 file has events" [ "$(total "$tmp/killed.txt")" -gt 10 ]
end_hosts "$tmp/rt-killed"

# 5. A full disk ends the recording with a valid file, before the file system's last blocks
# for users are gone (root's reserved blocks stay free; tmpfs has none, so some stay free).
mkdir -p "$tmp/full"
if mount -t tmpfs -o size=160k tmpfs "$tmp/full" 2>/dev/null; then
        "$ETWTOP" --record "$tmp/full/f.etl" --buffer-size 16 --duration 20 2>"$tmp/full.err"
        rc=$?
        check "record: full disk reported" grep -q 'left for users: stopped before the blocks reserved for root' "$tmp/full.err"
        check "record: full disk leaves space for users" [ "$(stat -f -c %a "$tmp/full")" -gt 0 ]
        check "record: full disk exits non-zero" [ $rc = 1 ]
        "$ETWTOP" --dump --totals "$tmp/full/f.etl" >"$tmp/full.txt" 2>&1
        rc=$?
        check "record: full disk leaves a readable file" [ $rc = 0 ]
        # (failed once in CI, tests/README.md, "Known failures under load": what it said)
        [ $rc = 0 ] || {
                echo "--- the dump of $(stat -c %s "$tmp/full/f.etl" 2>/dev/null) bytes:"
                head -20 "$tmp/full.txt"
                echo "--- the recording's stderr:"
                cat "$tmp/full.err"
        } >&2
        check "record: full disk file holds events" [ "$(total "$tmp/full.txt")" -gt 10 ]
        umount "$tmp/full"
else
        skip "no tmpfs mount here for the full-disk test"
fi

# 5b. --max-file-size: the file stops there (EVENT_TRACE_FILE_MODE_SEQUENTIAL at MaximumFileSize),
# the recording ends with a complete file and says why; the progress says the limit. A busy
# loop and 8 kHz sampling make 1 MB within seconds; --duration is only the upper bound.
( while :; do :; done ) &
busy=$!
"$ETWTOP" --record "$tmp/max.etl" --max-file-size 1 --buffer-size 16 --set-prof-int 1221 \
        --duration 120 2>"$tmp/max.err"
rc=$?
kill "$busy"
wait "$busy" 2>/dev/null
check "record --max-file-size: exits 0" [ $rc = 0 ]
check "record --max-file-size: says why it stopped" \
        grep -q "reached its maximum size, 1 MB (MaximumFileSize) (--max-file-size); $tmp/max.etl is complete" "$tmp/max.err"
# (the limit right after the counts: where events were lost, the advice on it comes after)
says_limit() { grep -q 'lost, 1 MiB at most' "$tmp/max.err" || { tr '\r' '\n' <"$tmp/max.err" | tail -3 >&2; false; }; }
check "record --max-file-size: the progress says the limit" says_limit
check "record --max-file-size: the file is no larger" [ "$(stat -c %s "$tmp/max.etl")" -le 1048576 ]
"$ETWTOP" --dump --totals "$tmp/max.etl" >"$tmp/max.txt" 2>&1
check "record --max-file-size: the file reads" [ $? = 0 ]
check "record --max-file-size: the file holds events" [ "$(total "$tmp/max.txt")" -gt 1000 ]
"$ETWTOP" --record "$tmp/bad.etl" --max-file-size 1x 2>"$tmp/bad.err"
check "record --max-file-size 1x: refused" [ $? = 2 ]
check "record --max-file-size 1x: says what it takes" grep -q 'takes MB, 0 for none' "$tmp/bad.err"

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
                env ETWTOP_RUNTIME_DIR="$tmp/rt-65534" \
                "$ETWTOP" --record "$tmp/nobody.etl" --duration 0.2 2>"$tmp/nobody.err"
        check "record: unprivileged fails" [ $? = 1 ]
        check "record: unprivileged message names the fix" \
                grep -q 'root\|CAP_PERFMON\|perf_event_paranoid' "$tmp/nobody.err"
else
        skip "cannot drop to an unprivileged user here"
fi

echo "$nr_pass passed, $nr_fail failed, $nr_skip skipped"
[ "$nr_fail" = 0 ]
