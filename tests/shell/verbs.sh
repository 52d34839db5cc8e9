#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# verbs.sh: xperf's session verbs (issue 14) in a private runtime directory: --start to a file
# returns and the session runs on; --loggers lists it with its flags, stacks and consumers;
# --update changes it from another process; --attach -b consumes it and leaves it running;
# --stop -d writes the file with image identity merged; a flight recorder's --flush -o is a
# self-contained snapshot while it runs on; the errors of a missing, doubled or wrongly
# asked-for session; an ordinary user neither sees nor stops root's session.
set -u
: "${ETWTOP:?}"
. "$(dirname "$0")/../lib/check.sh"
[ "$(id -u)" = 0 ] || { echo "SKIP: kernel sessions need root"; echo "0 passed, 0 failed, 1 skipped"; exit 77; }
tmp=$(mktemp -d)
chmod 1777 "$tmp"
# a host per user, as /run/etwtop and $XDG_RUNTIME_DIR/etwtop are
export ETWTOP_RUNTIME_DIR="$tmp/rt-%u" ETWTOP_HOST_GRACE_MS=300
unset ETWTOP_NO_HOST
trap 'kill $(jobs -p) 2>/dev/null; "$ETWTOP" --stop >/dev/null 2>&1; "$ETWTOP" --stop etwtop_fr >/dev/null 2>&1; rm -rf "$tmp"' EXIT
on_fail() { echo "--- last output:"; cat "$tmp/out" "$tmp/err" 2>/dev/null | head -40; }
run() { "$ETWTOP" "$@" >"$tmp/out" 2>"$tmp/err"; }
# the value of a field of the session named $1 in --loggers' output
field() { awk -v n="\"$1\"" -v f="$2:" '$1 == n || index($0, n " (") == 1 {s = 1; next} /^"/ {s = 0}
        s && $1 == f {sub(/^ *[a-z]+: */, ""); print; exit}' "$tmp/out"; }

# No session yet
run --loggers
check "--loggers, nothing running: 0 sessions" grep -q '^0 sessions$' "$tmp/out"
run --stop
check "--stop of no session: exit 1" [ $? = 1 ]
check "--stop of no session: says so" grep -q 'no session named "NT Kernel Logger" is running' "$tmp/err"
run --start
check "--start without -f or --buffering: exit 2, says what it needs" \
        bash -c "[ $? = 2 ] && grep -q 'needs -f OUT.etl' '$tmp/err'"
run --start -f "$tmp/x.etl" --buffering
check "--start -f with --buffering: refused" [ $? = 2 ]
run --stop -o "$tmp/x.etl"
check "--stop -o: refused (-d names its file)" bash -c "[ $? = 2 ] && grep -q 'does not take -o' '$tmp/err'"

# A file session that outlives its starter
run --start -f "$tmp/s.etl" --stackwalk Profile
check "--start -f: exit 0 and returns" [ $? = 0 ]
check "--start: says what it started" grep -q '^started "NT Kernel Logger" .*PROC_THREAD+LOADER+PROFILE+CSWITCH+DISPATCHER, to '"$tmp/s.etl" "$tmp/out"
run --start -f "$tmp/s2.etl"
check "a second --start of the same name: ERROR_ALREADY_EXISTS (183)" \
        bash -c "[ $? = 1 ] && grep -q 'Win32 error 183' '$tmp/err'"
check "...and it wrote no file" [ ! -e "$tmp/s2.etl" ]
run --loggers
check "--loggers: one session" grep -q '^1 session$' "$tmp/out"
check "--loggers: its file" [ "$(field 'NT Kernel Logger' file)" = "$tmp/s.etl" ]
check "--loggers: its flags" [ "$(field 'NT Kernel Logger' flags)" = "PROC_THREAD+LOADER+PROFILE+CSWITCH+DISPATCHER" ]
check "--loggers: its stacks" [ "$(field 'NT Kernel Logger' stackwalk)" = "Profile" ]
check "--loggers: no consumer" [ "$(field 'NT Kernel Logger' consumers)" = "0 real-time" ]

# --update from another process: only what is given changes
run --update --stackwalk Profile+CSwitch
check "--update: exit 0" [ $? = 0 ]
run --loggers
check "--update --stackwalk: the stacks changed" [ "$(field 'NT Kernel Logger' stackwalk)" = "Profile+CSwitch" ]
check "--update --stackwalk: the flags did not" [ "$(field 'NT Kernel Logger' flags)" = "PROC_THREAD+LOADER+PROFILE+CSWITCH+DISPATCHER" ]
run --update --on PROC_THREAD+LOADER+PROFILE --set-prof-int 5000
run --loggers
check "--update --on: the flags changed" [ "$(field 'NT Kernel Logger' flags)" = "PROC_THREAD+LOADER+PROFILE" ]
check "--update --set-prof-int: the interval changed" [ "$(field 'NT Kernel Logger' interval)" = "5000 (100 ns)" ]
check "--update: the stacks stayed" [ "$(field 'NT Kernel Logger' stackwalk)" = "Profile+CSwitch" ]
run --update --on PROC_THREAD+LOADER+PROFILE+CSWITCH+DISPATCHER --set-prof-int 10000
run --update --on NO_SUCH_FLAG
check "--update with a flag xperf does not know: exit 1, named" \
        bash -c "[ $? != 0 ] && grep -q 'NO_SUCH_FLAG' '$tmp/err'"

# --attach: a real-time consumer in yet another process; the session runs on after it
# The attached screen runs until the test has seen what it checks (its frames until SIGTERM: a
# loaded machine's --loggers, seconds each, saw none of a 2-frame screen's life), the workload
# until the screen is done (a fixed time can end before a slow start of it)
( while :; do :; done ) &
spin=$!
"$ETWTOP" --attach -b -d 1 --top 200 >"$tmp/attach.txt" 2>"$tmp/attach.err" &
att=$!
consumer_is() {
        "$ETWTOP" --loggers >"$tmp/out" 2>/dev/null
        [ "$(field 'NT Kernel Logger' consumers)" = "$1" ]
}
wait_until 120 eval "consumer_is '1 real-time' || ! kill -0 $att 2>/dev/null"
on_fail() {
        # (whether the attached screen still ran, and what it said: once under load it was no
        # consumer by the wait's end, nothing of it kept)
        if kill -0 "$att" 2>/dev/null; then
                echo "the attached screen runs"
        else
                wait "$att"
                echo "the attached screen is gone, exit status $?"
        fi
        echo "its stderr:"
        tail -5 "$tmp/attach.err"
        echo "its last lines:"
        tail -5 "$tmp/attach.txt"
}
check "--loggers: the attached screen counts as a consumer" consumer_is '1 real-time'
unset -f on_fail
# the samples the latest frame counts (its header is written whole)
attach_samples() {
        awk '/samples/ {for (i = 1; i < NF; i++) if ($(i + 1) == "samples") n = $i} END {print n + 0}' \
                "$tmp/attach.txt"
}
# 2 frames at least, until one counts the workload's samples and switches, 3 minutes at most
attach_seen() {
        [ "$(frames_begun "$tmp/attach.txt" '^etwtop - live')" -ge 2 ] &&
                [ "$(attach_samples)" -gt 100 ] && grep -q 'Ready/WrPreempted\|Waiting/' "$tmp/attach.txt"
}
wait_until 180 eval "attach_seen || ! kill -0 $att 2>/dev/null"
kill -TERM "$att" 2>/dev/null
wait "$att"
rc=$?
kill "$spin" 2>/dev/null
wait "$spin" 2>/dev/null
check "--attach -b: exit 0 ($(head -c 300 "$tmp/attach.err"))" [ $rc = 0 ]
check "--attach -b: frames of the running session" grep -q '^etwtop - live NT Kernel Logger' "$tmp/attach.txt"
check "--attach -b: its settings read back" grep -q 'Groups: PROC_THREAD+LOADER+PROFILE+CSWITCH+DISPATCHER *Stacks: Profile+CSwitch ' "$tmp/attach.txt"
check "--attach -b: samples of the workload ($(attach_samples))" [ "$(attach_samples)" -gt 100 ]
check "--attach -b: switches of the workload" grep -q 'Ready/WrPreempted\|Waiting/' "$tmp/attach.txt"
run --loggers
check "after --attach: the session still runs" grep -q '^1 session$' "$tmp/out"
wait_until 60 consumer_is '0 real-time'
check "after --attach: its consumer is gone" consumer_is '0 real-time'
run --attach nosuch -b -n 1
check "--attach of no session: exit 1, says so" \
        bash -c "[ $? = 1 ] && grep -q 'no session named \"nosuch\"' '$tmp/err'"

# An ordinary user neither sees nor stops root's session (the host checks who asks)
if command -v setpriv >/dev/null; then
        as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups env "$@"; }
        as_nobody "$ETWTOP" --stop >"$tmp/out" 2>"$tmp/err"
        rc=$?
        check "nobody's --stop: root's session is not nobody's to stop ($(head -c 200 "$tmp/err"))" \
                bash -c "[ $rc = 1 ] && grep -q 'no session named' '$tmp/err'"
        as_nobody "$ETWTOP" --loggers >"$tmp/out" 2>"$tmp/err"
        check "nobody's --loggers: root's session not listed" grep -q '^0 sessions$' "$tmp/out"
        as_nobody ETWTOP_RUNTIME_DIR="$tmp/rt-0" "$ETWTOP" --stop >"$tmp/out" 2>"$tmp/err"
        rc=$?
        check "nobody's --stop through root's host directory: access denied, said" \
                bash -c "[ $rc = 1 ] && grep -q 'belongs to uid 0, not to you.*Win32 error 5' '$tmp/err'"
        run --loggers
        check "...and root's session still runs" grep -q '^1 session$' "$tmp/out"
else
        skip "setpriv not installed: the ordinary user is not tried"
fi

# --stop -d: stopped from another process, its file finalized, image identity merged
run --stop -d "$tmp/d.etl"
check "--stop -d: exit 0" [ $? = 0 ]
check "--stop: says what it wrote" grep -q "^wrote $tmp/d.etl" "$tmp/out"
"$ETWTOP" --dump "$tmp/s.etl" >"$tmp/s.txt" 2>&1
check "the session's file: end time set" bash -c "! grep -q '^End time: *0$' '$tmp/s.txt'"
check "the session's file: buffers written in the header" bash -c "! grep -q '^Buffers written: *0$' '$tmp/s.txt'"
check "the session's file: no damaged buffer" grep -q '^Damaged buffers: *0$' "$tmp/s.txt"
check "the session's file: the stop rundown (Process/DCEnd)" grep -q 'Process/DCEnd' "$tmp/s.txt"
check "the session's file: the CSwitch stacks --update turned on" bash -c "awk '
        \$5 == \"Thread/CSwitch\" {t = \$1; next}
        \$5 == \"StackWalk/Stack\" && t != \"\" && \$6 == \"event_time=\" t {n++}
        {t = \"\"} END {exit n >= 5 ? 0 : 1}' '$tmp/s.txt'"
"$ETWTOP" --dump "$tmp/d.etl" >"$tmp/d.txt" 2>&1
check "--stop -d: the merged file reads" [ $? = 0 ]
check "--stop -d: image identity merged (ImageId/DbgID_RSDS or etwtop/ImageIdentity)" \
        grep -q 'ImageId\|ImageIdentity' "$tmp/d.txt"
"$ETWTOP" --replay "$tmp/d.etl" -b --top 5 >"$tmp/d-replay.txt" 2>&1
check "--stop -d: the merged file replays" grep -q 'Self%' "$tmp/d-replay.txt"
run --loggers
check "after --stop: no session" grep -q '^0 sessions$' "$tmp/out"

# A flight recorder: its ring in memory; --flush -o snapshots it while it runs on
run --start etwtop_fr --buffering --max-buffers 32 --on PROC_THREAD+LOADER+PROFILE --stackwalk Profile
check "--start --buffering: exit 0" [ $? = 0 ]
check "--start --buffering: a flight recorder of 32 buffers" grep -q 'a flight recorder of 32 x 64 KB' "$tmp/out"
run --loggers
check "--loggers: the flight recorder's mode" grep -q '^"etwtop_fr" (handle 0x[0-9a-f]*): flight-recorder$' "$tmp/out"
# a workload the ring holds samples of: it has run once it has used a second of CPU time (the
# session runs since --start returned)
( while :; do :; done ) &
spin=$!
cpu_s() { awk '{print int(($14 + $15) / 100)}' "/proc/$spin/stat" 2>/dev/null; }
wait_until 120 eval '[ "$(cpu_s)" -ge 1 ]'
kill "$spin" 2>/dev/null
wait "$spin" 2>/dev/null
run --flush etwtop_fr -o "$tmp/snap.etl"
check "--flush -o: exit 0" [ $? = 0 ]
check "--flush -o: it keeps running" grep -q 'keeps running' "$tmp/out"
run --flush etwtop_fr -o "$tmp/snap.etl"
check "--flush -o onto an existing file: refused without --force" \
        bash -c "[ $? = 1 ] && grep -q 'exists: not overwritten (use --force)' '$tmp/err'"
"$ETWTOP" --dump "$tmp/snap.etl" >"$tmp/snap.txt" 2>&1
check "the snapshot reads" [ $? = 0 ]
check "the snapshot: samples with stacks" bash -c "grep -q PerfInfo/SampledProfile '$tmp/snap.txt' && grep -q StackWalk/Stack '$tmp/snap.txt'"
# self-contained: the flush's own rundown (DCEnd of what runs, its images), written at the flush,
# the newest buffers; the start's (DCStart) leaves a ring that a busy machine fills (a loaded
# run's snapshot had none)
check "the snapshot: self-contained (process and image rundown)" \
        bash -c "grep -q 'Process/DCEnd' '$tmp/snap.txt' && grep -q 'Image/DCEnd' '$tmp/snap.txt'"
run --loggers
check "after --flush: the flight recorder still runs" grep -q '"etwtop_fr"' "$tmp/out"
run --attach etwtop_fr -b -n 1
check "--attach of a flight recorder: refused, says how to read it" \
        bash -c "[ $? = 1 ] && grep -q 'flight recorder' '$tmp/err'"
run --stop etwtop_fr -d "$tmp/fr.etl"
check "--stop -d of a flight recorder: exit 0" [ $? = 0 ]
"$ETWTOP" --dump --totals "$tmp/fr.etl" >"$tmp/fr.txt" 2>&1
check "--stop -d of a flight recorder: its ring replays" bash -c "grep -q 'PerfInfo/SampledProfile' '$tmp/fr.txt' && grep -q '^Damaged buffers: *0$' '$tmp/fr.txt'"
run --loggers
check "after --stop: no session" grep -q '^0 sessions$' "$tmp/out"

# A real-time session without a file: for consumers only
run --start etwtop_rt --realtime --on PROC_THREAD+LOADER+PROFILE
check "--start --realtime: exit 0, in real time" grep -q '^started "etwtop_rt" .*, in real time$' "$tmp/out"
run --loggers
check "--loggers: real-time, no file" bash -c "grep -q '^\"etwtop_rt\" (handle 0x[0-9a-f]*): real-time\$' '$tmp/out' && ! grep -q '^  file:' '$tmp/out'"
"$ETWTOP" --attach etwtop_rt -b -n 1 -d 1 >"$tmp/rt.txt" 2>&1
check "--attach of a real-time session: frames" grep -q '^etwtop - live etwtop_rt' "$tmp/rt.txt"
run --stop etwtop_rt -d "$tmp/rt.etl"
check "--stop -d of a session without a file: exit 1, says so" \
        bash -c "[ $? = 1 ] && grep -q 'has no file and no ring' '$tmp/err'"
run --loggers
check "...before stopping it" grep -q '"etwtop_rt"' "$tmp/out"
# the KiB of the host's perf rings (data and control pages), all CPUs together
ring_kib() {
        local host
        host=$(cat "$tmp/rt-0/host.lock" 2>/dev/null)
        awk '/perf_event/ {split($1, a, "-"); print a[1], a[2]}' "/proc/${host:-0}/maps" 2>/dev/null |
                while read -r lo hi; do echo $(((0x$hi - 0x$lo) / 1024)); done |
                awk '{t += $1} END {print t + 0}'
}
default_kib=$(ring_kib)
run --stop etwtop_rt
run --loggers
check "--stop: stopped" grep -q '^0 sessions$' "$tmp/out"

# --min-buffers (xperf's -MinBuffers): the session keeps that many buffers at least, and its
# rings hold at least that many of its buffers' size, all CPUs together (128 MiB here: more
# than the default rings of any number of CPUs, 32 MiB at most)
run --start etwtop_rt --realtime --on PROC_THREAD+LOADER+PROFILE --min-buffers 2048
check "--start --min-buffers 2048: exit 0" [ $? = 0 ]
run --loggers
check "--loggers: 2048 buffers at least ($(field etwtop_rt buffers))" \
        eval '[ "$(field etwtop_rt buffers | awk "{print \$1}")" -ge 2048 ]'
big_kib=$(ring_kib)
echo "rings: $default_kib KiB by default, $big_kib KiB with --min-buffers 2048"
check "the rings: at least 2048 x 64 KB in all ($big_kib KiB; $default_kib by default)" \
        eval '[ "$big_kib" -ge $((2048 * 64)) ] && [ "$default_kib" -gt 0 ] && [ "$default_kib" -lt $((2048 * 64)) ]'
run --stop etwtop_rt
run --start etwtop_rt --realtime --min-buffers 1
check "--min-buffers 1: refused (2 .. 65536)" bash -c "[ $? = 2 ] && grep -q 'min-buffers takes 2' '$tmp/err'"

# A host whose socket is taken away ends (orphaned: nobody can reach its sessions), stopping its
# sessions: its watch on the socket's folder wakes it at once (else a look every 10 s)
orph="$tmp/rt-orphan"
ETWTOP_RUNTIME_DIR="$orph" "$ETWTOP" --start etwtop_orphan --buffering >"$tmp/out" 2>"$tmp/err"
check "--start in a folder of its own: exit 0" [ $? = 0 ]
ohost=$(cat "$orph/host.lock" 2>/dev/null)
host_gone() { [ ! -d "/proc/$ohost" ] || grep -q '^State:[[:space:]]*Z' "/proc/$ohost/status"; }
check "its host runs (${ohost:-none})" eval '[ -n "$ohost" ] && ! host_gone'
rm -f "$orph/host.sock"
t_rm=$SECONDS
wait_until 60 host_gone
check "its socket removed: the host ends ($((SECONDS - t_rm)) s)" host_gone

echo "$nr_pass passed, $nr_fail failed, $nr_skip skipped"
[ "$nr_fail" = 0 ]
