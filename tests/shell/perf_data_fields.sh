#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# perf_data_fields.sh: perf.data files recorded here with the optional parts of a sample that
# the other tests' files do not ask for, read by etwtop as perf reads them: the user and
# interrupt register copies (--user-regs, --intr-regs), the data address, its physical address
# and both page sizes (-d --phys-data --data-page-size --code-page-size), the cgroup and the
# namespaces records (--all-cgroups --namespaces), raw and per-thread counts (-R -s
# --sample-cpu), times of other clocks (-k), a group's values read at its leader's samples
# ({...}:S), context-switch records beside the samples (--switch-events), and a recording
# written to a pipe (-o -, read from its file). A field read wrong shifts every field after it
# (the stack, the CPU, the time): each file's timer samples in the replay's title against `perf
# script`, and its hottest function's samples against perf report's; with another clock, the
# trace's start within the recording's wall time. Then a record of a type no perf here knows,
# passed over. Skips without perf, or where perf cannot record a kind here.
set -u
: "${ETWTOP:?}"
. "$(dirname "$0")/../lib/check.sh"
. "$(dirname "$0")/../lib/perf_rec.sh"
perf_test_start
perf_home

record() { # NAME OPTIONS...: cpu-clock at 1 kHz with call chains over a short pipe ping-pong
        local name=$1
        shift
        perf_record "$tmp/$name.data" "$tmp/$name.rec.err" -e cpu-clock -F 1000 -g "$@" -- \
                perf bench sched pipe -l 20000
}
check_file() { # NAME: the replay of $tmp/NAME.data against perf's reading of it
        local d=$tmp/$1.data want got
        "$ETWTOP" --replay "$d" -b -n 5 >"$tmp/$1.txt" 2>"$tmp/$1.err"
        check "$1: replay exits 0" [ $? = 0 ]
        if ! perf script -i "$d" -F event >"$d.events" 2>/dev/null; then
                skip "$1: perf script cannot read the recording"
                return
        fi
        want=$(grep -c '^ *cpu-clock:' "$d.events")
        got=$(title_count "$tmp/$1.txt" Timer)
        check "$1: the timer's samples (${got:-none}), perf script's ($want)" \
                [ "$want" -gt 0 -a "${got:-x}" = "$want" ]
        got=$(hottest_samples "$tmp/$1.txt" Timer)
        want=$(perf_hottest_samples "$d" cpu-clock)
        check "$1: the hottest function's samples (${got:-none}), perf report's (${want:-none})" \
                [ -n "$want" -a "${got:-x}" = "$want" ]
}
in_range() { [ -n "$1" ] && [ "$1" -ge "$2" ] && [ "$1" -le "$3" ]; } # N LOW HIGH
kind() { # NAME OPTIONS...
        local name=$1
        shift
        if record "$name" "$@"; then
                check_file "$name"
        else
                skip "$name: perf record $* failed: $(head -c 200 "$tmp/$name.rec.err")"
        fi
}

kind regs --user-regs=ip,sp,bp --intr-regs=ip,sp
kind addrs -d --phys-data --data-page-size --code-page-size
kind cgroups --all-cgroups --namespaces
kind counts -R -s --sample-cpu
kind switches --switch-events

# no times at all (--no-timestamp: the samples and the side-band records have none; a FORK's and
# an EXIT's own times are the only ones): the samples as above, and the trace spans 0 s, as perf
# report's sample duration is 0 (it spanned the uptime, the forks' times against 0)
if record untimed --no-timestamp; then
        check_file untimed
        check "untimed: the trace spans 0 s ($(grep -o '[0-9.]* s, [0-9]* events' "$tmp/untimed.txt"))" \
                grep -q ', 0\.000 s, [0-9]* events' "$tmp/untimed.txt"
else
        skip "untimed: perf record --no-timestamp failed: $(head -c 200 "$tmp/untimed.rec.err")"
fi

# two timer events (cpu-clock and task-clock; cpu-clock:u and cpu-clock:k): the first is ETW's
# Timer, the second a source of its own, and --source takes each by perf's name for it (it took
# the Timer for task-clock, nothing for cpu-clock:u)
for evs in cpu-clock,task-clock cpu-clock:u,cpu-clock:k; do
        n=timers_${evs//[,:]/_}
        if perf_record "$tmp/$n.data" "$tmp/$n.rec.err" -e "$evs" -F 1000 -- \
                perf bench sched pipe -l 20000 &&
                perf script -i "$tmp/$n.data" -F event >"$tmp/$n.events" 2>/dev/null; then
                for ev in ${evs//,/ }; do
                        want=$(grep -c "^ *$ev: *\$" "$tmp/$n.events")
                        got=$("$ETWTOP" --replay "$tmp/$n.data" -b -n 1 --source "$ev" 2>/dev/null |
                                sed -n 's/^Hot functions (.*, \([0-9]*\) samples, by self.*/\1/p' |
                                tr '\n' ' ')
                        check "$n: --source $ev: its table alone (${got:-none}), perf script's ($want)" \
                                [ "$want" -gt 0 -a "$got" = "$want " ]
                done
        else
                skip "$n: perf record or perf script failed: $(head -c 200 "$tmp/$n.rec.err")"
        fi
done

# hundreds of events (`-e 'syscalls:sys_enter_*'`: past the 256 the converter took, it converted
# none, and the views counted 16 sources apart, the rest as the 16th): each sampled event's
# table with perf script's count; read from standard input, the same tables (a forked child's
# samples taken before its exec were of no image there: its exec's mappings came before them)
if perf_record "$tmp/many.data" "$tmp/many.rec.err" -e 'syscalls:sys_enter_*' -- \
        sh -c 'ls -la /usr/lib >/dev/null; cat /etc/hostname >/dev/null; date >/dev/null' &&
        perf script -i "$tmp/many.data" -F event >"$tmp/many.events" 2>/dev/null; then
        "$ETWTOP" --replay "$tmp/many.data" -b -n 1 >"$tmp/many.txt" 2>/dev/null
        sed 's/^ *//; s/: *$//' "$tmp/many.events" | sort | uniq -c |
                awk '{ print $2, $1 }' >"$tmp/many.want"
        sed -n 's/^Hot functions (\(.*\), \([0-9]*\) samples, by self.*/\1 \2/p' "$tmp/many.txt" |
                sort >"$tmp/many.got"
        check "many: more than 16 events sampled ($(wc -l <"$tmp/many.want"))" \
                [ "$(wc -l <"$tmp/many.want")" -gt 16 ]
        check "many: each event's table, as perf script counts it ($(wc -l <"$tmp/many.got") tables)" \
                cmp -s "$tmp/many.want" "$tmp/many.got"
        "$ETWTOP" --replay - -b -n 1 <"$tmp/many.data" 2>/dev/null >"$tmp/many.stdin"
        check "many: read from standard input, the same tables" \
                cmp -s <(tail -n +2 "$tmp/many.txt") <(tail -n +2 "$tmp/many.stdin")
else
        skip "many: perf record -e 'syscalls:sys_enter_*' failed: $(head -c 200 "$tmp/many.rec.err")"
fi

# a forked child's samples taken before its exec, with no stacks (a tracepoint's, fired where
# the child blocks its signals): placed in the parent's libc the child runs until its exec, in
# the replay and in the exports (the exports placed a sample whose stack never came when the
# next sample came, after the exec's mappings: 3 of 9 in no image)
if perf_record "$tmp/forked.data" "$tmp/forked.rec.err" -e syscalls:sys_enter_rt_sigprocmask -- \
        sh -c 'ls /usr >/dev/null; cat /etc/hostname >/dev/null; date >/dev/null' &&
        perf script -i "$tmp/forked.data" -F ip,sym >"$tmp/forked.perf" 2>/dev/null; then
        want=$(grep -c '\[unknown\]' "$tmp/forked.perf")
        all=$(grep -c . "$tmp/forked.perf")
        "$ETWTOP" --replay "$tmp/forked.data" --export folded -o "$tmp/forked.folded" 2>/dev/null
        got=$(awk '{ n = $NF; sub(/ [0-9]+$/, ""); k = split($0, f, ";") }
                   f[k] ~ /^0x[0-9a-f]+$/ { u += n } END { print u + 0 }' "$tmp/forked.folded")
        check "forked: the folded export's samples in no function ($got), perf script's ($want of $all)" \
                [ "$all" -gt 0 -a "$got" = "$want" ]
        "$ETWTOP" --replay - --export folded -o "$tmp/forked.stdin.folded" <"$tmp/forked.data" \
                2>/dev/null
        check "forked: read from standard input, the same folded stacks" \
                cmp -s <(sort "$tmp/forked.folded") <(sort "$tmp/forked.stdin.folded")
else
        skip "forked: perf record -e syscalls:sys_enter_rt_sigprocmask failed: $(head -c 200 "$tmp/forked.rec.err")"
fi

# the other clocks a recording may take its times from (-k: the header's clock data maps them to
# the wall clock): the samples as above, and the trace's start within the recording's wall time
for clk in mono realtime boottime; do
        t0=$(date +%s)
        if record "clock_$clk" -k "$clk"; then
                t1=$(date +%s)
                check_file "clock_$clk"
                start=$("$ETWTOP" --dump "$tmp/clock_$clk.data" 2>/dev/null |
                        sed -n 's/^Start time: *\(.*\) UTC$/\1/p' | head -1)
                s=$(date -u -d "$start" +%s 2>/dev/null)
                check "clock_$clk: the trace starts ($start) while it was recorded ($t0 to $t1)" \
                        in_range "$s" $((t0 - 1)) $((t1 + 1))
        else
                skip "clock_$clk: perf record -k $clk failed: $(head -c 200 "$tmp/clock_$clk.rec.err")"
        fi
done

# leader sampling (a group's values read at each of its leader's samples: PERF_SAMPLE_READ in
# the group's format, ahead of the stack): the leader's samples, and each member's where its
# count moved since its last read, as perf script delivers them (perf report shows the group as
# one event, so no hottest function to compare)
if perf_record "$tmp/group.data" "$tmp/group.rec.err" -e '{cpu-clock,task-clock,page-faults}:S' \
        -F 1000 -g -- perf bench sched pipe -l 20000; then
        "$ETWTOP" --replay "$tmp/group.data" -b -n 5 >"$tmp/group.txt" 2>"$tmp/group.err"
        check "group: replay exits 0" [ $? = 0 ]
        if perf script -i "$tmp/group.data" -F event >"$tmp/group.events" 2>/dev/null; then
                want=$(grep -c '^ *cpu-clock:' "$tmp/group.events")
                got=$(title_count "$tmp/group.txt" Timer)
                check "group: the leader's samples (${got:-none}), perf script's ($want)" \
                        [ "$want" -gt 0 -a "${got:-x}" = "$want" ]
                for m in task-clock page-faults; do
                        want=$(grep -c "^ *$m:" "$tmp/group.events")
                        got=$(title_count "$tmp/group.txt" "$m")
                        check "group: member $m's samples (${got:-none}), perf script's ($want)" \
                                [ "$want" -gt 0 -a "${got:-x}" = "$want" ]
                done
                check "group: the header says the members are read at the leader's samples" \
                        grep -q "task-clock (read at cpu-clock's samples), page-faults (read at cpu-clock's samples)" \
                        "$tmp/group.txt"
        else
                skip "group: perf script cannot read the recording"
        fi
else
        skip "group: perf record failed: $(head -c 200 "$tmp/group.rec.err")"
fi

# a pipe's stream (no header's sections: the attrs and features come as records), kept as a
# file; tried as perf_record tries (three times, then without build-ids)
is_piped=false
for try in 1 2 3 4; do
        b=
        [ $try = 4 ] && b=-B
        if perf record -q $b -e cpu-clock -F 1000 -g -o - -- perf bench sched pipe -l 20000 \
                >"$tmp/pipe.data" 2>"$tmp/pipe.rec.err" && [ -s "$tmp/pipe.data" ]; then
                is_piped=true
                break
        fi
done
if $is_piped; then
        check_file pipe
else
        skip "pipe: perf record -o - failed: $(head -c 200 "$tmp/pipe.rec.err")"
fi

# a record of a type no perf here knows (a newer perf's, or a newer kernel's): the first COMM of
# the switches file made type 90, passed over by its size, every sample still read
if [ -s "$tmp/switches.data" ] && [ -n "$PY" ]; then
        "$PY" - "$tmp/switches.data" "$tmp/unknown.data" <<'PYEOF'
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
off, size = struct.unpack_from("<QQ", b, 40)  # the header's data section
p = off
while p + 8 <= off + size:
    kind, misc, n = struct.unpack_from("<IHH", b, p)
    if n < 8:
        break
    if kind == 3:  # PERF_RECORD_COMM
        struct.pack_into("<I", b, p, 90)
        break
    p += n
open(sys.argv[2], "wb").write(b)
PYEOF
        "$ETWTOP" --replay "$tmp/unknown.data" -b -n 5 >"$tmp/unknown.txt" 2>"$tmp/unknown.err"
        check "unknown: replay exits 0" [ $? = 0 ]
        got=$(title_count "$tmp/unknown.txt" Timer)
        want=$(title_count "$tmp/switches.txt" Timer)
        check "unknown: a record of type 90 passed over, the samples all read (${got:-none} of ${want:-none})" \
                [ -n "$want" -a "${got:-x}" = "$want" ]
        cmp -s "$tmp/switches.data" "$tmp/unknown.data"
        check "unknown: the file has the record of type 90" [ $? != 0 ]
else
        skip "unknown: no switches file, or no python3"
fi

echo "$nr_pass passed, $nr_fail failed, $nr_skip skipped"
[ $nr_fail = 0 ]
