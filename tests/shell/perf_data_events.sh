#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# perf_data_events.sh: perf.data files recorded here with events perf report counts apart, read
# by etwtop as perf reads them: cpu-clock and task-clock both (the Timer and a source named
# task-clock, not one table of both), tracepoints that are no kernel event of ETW's (a source
# each, named by the tracepoint, at the places it fired), and sched_waking beside sched_wakeup
# (one ReadyThread a wake-up). Each event's samples in its table's title against `perf script`,
# and each table's hottest function's samples against perf report's for that event. Skips
# without perf, or where perf cannot record the events here.
set -u
: "${ETWTOP:?}"
. "$(dirname "$0")/../lib/check.sh"
. "$(dirname "$0")/../lib/perf_rec.sh"
perf_test_start
perf_home

record() { # NAME OPTIONS...: a short pipe ping-pong
        local name=$1
        shift
        perf_record "$tmp/$name.data" "$tmp/$name.rec.err" "$@" -- perf bench sched pipe -l 20000
}
# perf script's events of the file, one a line; false where perf cannot read its own file
# (Debian's perf 6.1 sometimes aborts on an assertion in util/build-id.c)
perf_events() { perf script -i "$1" -F event >"$1.events" 2>/dev/null; }
compare() { # NAME PERF_EVENT ETW_NAME
        local d=$tmp/$1.data want got
        if ! { [ -s "$d.events" ] || perf_events "$d"; }; then
                skip "$1: perf script cannot read the recording"
                return
        fi
        want=$(awk -v e="$2:" '$1 == e' "$d.events" | wc -l)
        got=$(title_count "$tmp/$1.txt" "$3")
        check "$1: $2's samples in the table of $3 (${got:-none}), perf script's ($want)" \
                [ "$want" -gt 0 -a "${got:-x}" = "$want" ]
        got=$(hottest_samples "$tmp/$1.txt" "$3")
        want=$(perf_hottest_samples "$d" "$2")
        check "$1: $2's hottest function's samples (${got:-none}), perf report's (${want:-none})" \
                [ -n "$want" -a "${got:-x}" = "$want" ]
}
replay() { # NAME
        "$ETWTOP" --replay "$tmp/$1.data" -b -n 5 >"$tmp/$1.txt" 2>"$tmp/$1.err"
        check "$1: replay exits 0" [ $? = 0 ]
}

if record timers -e cpu-clock -e task-clock -F 1000; then
        replay timers
        compare timers cpu-clock Timer
        compare timers task-clock task-clock
else
        skip "timers: perf record failed: $(head -c 200 "$tmp/timers.rec.err")"
fi

if record tps -g -e syscalls:sys_enter_write -e kmem:kfree -c 1; then
        replay tps
        compare tps syscalls:sys_enter_write syscalls:sys_enter_write
        compare tps kmem:kfree kmem:kfree
else
        skip "tracepoints: perf record failed: $(head -c 200 "$tmp/tps.rec.err")"
fi

if record wake -a -e sched:sched_switch -e sched:sched_waking -e sched:sched_wakeup; then
        d=$tmp/wake.data
        if perf_events "$d"; then
                waking=$(grep -c '^ *sched:sched_waking:' "$d.events")
                ready=$("$ETWTOP" --dump "$d" 2>"$tmp/wake.err" |
                        awk '$5 ~ /^Thread\/ReadyThread/' | wc -l)
                check "wake: one ReadyThread a wake-up ($ready), sched_waking's ($waking)" \
                        [ "$waking" -gt 0 -a "$ready" = "$waking" ]
        else
                skip "wake: perf script cannot read the recording"
        fi
        replay wake
        compare wake sched:sched_wakeup sched:sched_wakeup
else
        skip "wake-ups: perf record failed: $(head -c 200 "$tmp/wake.rec.err")"
fi

# perf stat record's file: counts, no samples. What no event of etwtop's stands for is named,
# by record type and count as perf's own dump counts them, and what reads it
if perf stat record -o "$tmp/stat.data" -e task-clock,context-switches -- \
        perf bench sched pipe -l 2000 >/dev/null 2>"$tmp/stat.rec.err"; then
        want=$(perf report -D -i "$tmp/stat.data" 2>/dev/null | awk '/^ *STAT events:/ {print $3}' | tail -1)
        "$ETWTOP" --replay "$tmp/stat.data" -b >"$tmp/stat.txt" 2>"$tmp/stat.err"
        check "stat: replay exits 0" [ $? = 0 ]
        check "stat: the header says its events counted, not sampled" \
                grep -q "events: task-clock (counted, not sampled), context-switches (counted, not sampled);" "$tmp/stat.txt"
        check "stat: the header names the STAT records (perf report -D: ${want:-none})" \
                grep -qE "^Not shown: the perf.data's( [0-9]+ [A-Z_]+,)* ${want:-x} STAT(,| ).*perf stat report reads them" "$tmp/stat.txt"
        got=$("$ETWTOP" --dump "$tmp/stat.data" 2>/dev/null |
                sed -n 's/.*etwtop\/RecordsNotShown type=76 count=\([0-9]*\) name="STAT"$/\1/p')
        check "stat: --dump's RecordsNotShown event of STAT (${got:-none}), perf's (${want:-none})" \
                [ -n "$want" -a "${got:-x}" = "$want" ]
else
        skip "stat: perf stat record failed: $(head -c 200 "$tmp/stat.rec.err")"
fi

# --sort comm,sym: the processes of one name one row per function, as perf report's comm key
# merges them (two processes named dd and their parent sh): each of the top rows' samples as
# perf report -n --sort comm,sym's for that process name and function
if perf_record "$tmp/comm.data" "$tmp/comm.rec.err" -e cpu-clock -F 2000 -- sh -c \
        'dd if=/dev/zero of=/dev/null bs=1 count=300000 2>/dev/null &
         dd if=/dev/zero of=/dev/null bs=1 count=300000 2>/dev/null; wait'; then
        "$ETWTOP" --replay "$tmp/comm.data" -b -s comm,sym --top 3 >"$tmp/comm.txt" 2>/dev/null
        check "comm: replay exits 0" [ $? = 0 ]
        # perf's side, where perf 6.1 can read its own file (it sometimes aborts on an assertion
        # in util/build-id.c, as it records)
        if perf script -i "$tmp/comm.data" -F comm,pid >"$tmp/comm.pids" 2>/dev/null &&
                perf report -i "$tmp/comm.data" -n --sort comm,sym --stdio -g none \
                        >"$tmp/comm.report" 2>/dev/null; then
                nr_pids=$(awk '$1 == "dd" {print $2}' "$tmp/comm.pids" | sort -u | wc -l)
                # etwtop's rows: samples, process, function (a symbol or module+0x...)
                sed -n '/^Hot functions (Timer/,/^$/p' "$tmp/comm.txt" |
                        awk 'NF >= 7 && $3 ~ /^[0-9]+$/ {print $3, $6, $7}' >"$tmp/comm.etw"
                awk '/^ +[0-9.]+%/ {n = $2; c = $3; s = $NF; print n, c, s}' "$tmp/comm.report" \
                        >"$tmp/comm.perf"
                nr=0
                while read -r n c fn; do
                        sym=${fn##*+}
                        # perf's symbol, or its [.] 0x... where etwtop says module+0x...
                        want=$(awk -v c="$c" -v s="$fn" -v o="$sym" '$2 == c && ($3 == s ||
                                ($3 ~ /^0x/ && sprintf("0x%x", strtonum($3)) == o)) {print $1; exit}' \
                                "$tmp/comm.perf")
                        check "comm: $c $fn: $n samples, perf report's (${want:-none})" \
                                [ "${want:-x}" = "$n" ]
                        nr=$((nr + 1))
                done <"$tmp/comm.etw"
                check "comm: two processes named dd ($nr_pids), the top rows compared ($nr)" \
                        [ "$nr_pids" -ge 2 -a "$nr" -ge 1 ]
        else
                skip "comm: perf cannot read the recording"
        fi
        check "comm: no process name twice for a function" \
                eval "[ -z \"\$(sed -n '/^Hot functions (Timer/,/^\$/p' '$tmp/comm.txt' |
                        awk 'NF >= 7 && \$3 ~ /^[0-9]+\$/ {print \$6, \$7}' | sort | uniq -d)\" ]"
else
        skip "comm: perf record failed: $(head -c 200 "$tmp/comm.rec.err")"
fi

# the kernel's functions named as perf report names them: an address of several kallsyms
# names (memcpy, __memcpy, __pi_memcpy) is its last one's (perf's symbols__fixup_end leaves the
# others no size); every kernel function's samples in -b as perf report --sort sym's
if [ -f "$tmp/comm.data" ] &&
        perf report -i "$tmp/comm.data" --no-children -n --sort sym --stdio -g none \
                >"$tmp/ksym.report" 2>/dev/null &&
        grep -q '\[k\] [a-z_]' "$tmp/ksym.report"; then
        awk '$3 == "[k]" && $2 > 0 {print $4, $2}' "$tmp/ksym.report" | sort >"$tmp/ksym.perf"
        "$ETWTOP" --replay "$tmp/comm.data" -b --top 100000 2>/dev/null |
                sed -n '/^Hot functions (Timer/,/^$/p' |
                awk '$5 == "[kernel.kallsyms]" && $3 > 0 {print $6, $3}' | sort >"$tmp/ksym.etw"
        check "kernel: every function's samples as perf report's ($(wc -l <"$tmp/ksym.perf") functions; $(comm -3 "$tmp/ksym.perf" "$tmp/ksym.etw" | head -4 | tr '\n\t' '  '))" \
                cmp -s "$tmp/ksym.perf" "$tmp/ksym.etw"
else
        skip "kernel: no recording, or perf names no kernel function (kptr_restrict?)"
fi

# perf's comm is the sampled thread's name as the sample came: threads that named themselves
# (prctl PR_SET_NAME) are rows of their own, a process's samples before its exec are under its
# old name. Each comm's samples in -b -s comm,sym (all rows), and in --export csv -s comm,sym,
# as perf script's comm of each sample (perf report --sort comm's) counts them (etwtop counted every thread under its process's
# name, and the exec'd name for the samples before the exec)
if ! command -v python3 >/dev/null; then
        skip "threads: no python3 to name threads"
elif py=$(python3 -c 'import sys; print(sys.executable)') &&
        perf_record "$tmp/thr.data" "$tmp/thr.rec.err" -e cpu-clock -F 2000 -- sh -c \
        "'$py'"' -c "
import ctypes, threading
libc = ctypes.CDLL(None)
def work(n):
    libc.prctl(15, (\"worker-%d\" % n).encode())
    x = 0
    for i in range(1500000):
        x += i
ts = [threading.Thread(target=work, args=(i,)) for i in range(2)]
[t.start() for t in ts]
[t.join() for t in ts]
"; exec dd if=/dev/zero of=/dev/null bs=1 count=200000 2>/dev/null' &&
        perf script -i "$tmp/thr.data" -F comm >"$tmp/thr.script" 2>/dev/null; then
        sed 's/^ *//; s/ *$//' "$tmp/thr.script" | sort | uniq -c | awk '{print $2, $1}' |
                sort >"$tmp/thr.perf"
        "$ETWTOP" --replay "$tmp/thr.data" -b -s comm,sym --top 100000 2>/dev/null |
                sed -n '/^Hot functions (Timer/,/^$/p' |
                awk 'NF >= 7 && $3 ~ /^[0-9]+$/ {n[$6] += $3} END {for (c in n) print c, n[c]}' |
                sort >"$tmp/thr.etw"
        check "threads: each comm's samples as perf script's ($(tr '\n' ' ' <"$tmp/thr.perf"))" \
                cmp -s "$tmp/thr.perf" "$tmp/thr.etw"
        check "threads: the named threads are comms of their own" grep -q '^worker-1 ' "$tmp/thr.etw"
        "$ETWTOP" --replay "$tmp/thr.data" --export csv -s comm,sym -o "$tmp/thr.csv" 2>/dev/null
        awk -F, '$1 == "Timer" {n[$7] += $4} END {for (c in n) print c, n[c]}' "$tmp/thr.csv" |
                sort >"$tmp/thr.csvcomm"
        check "threads: --export csv -s comm,sym counts them so" \
                cmp -s "$tmp/thr.perf" "$tmp/thr.csvcomm"
        # the folded stacks' first frame is perf script's comm (stackcollapse-perf's)
        "$ETWTOP" --replay "$tmp/thr.data" --export folded -o "$tmp/thr.folded" 2>/dev/null
        awk '{c = $0; sub(/;.*/, "", c); n[c] += $NF} END {for (c in n) print c, n[c]}' \
                "$tmp/thr.folded" | sort >"$tmp/thr.foldcomm"
        check "threads: the folded stacks' first frames count them so" \
                cmp -s "$tmp/thr.perf" "$tmp/thr.foldcomm"
else
        skip "threads: perf record or perf script failed: $(head -c 200 "$tmp/thr.rec.err")"
fi

# system-wide: the idle threads' comm is perf's swapper (a Windows trace's Idle): its samples
# in the CSV export as perf script's. (Not every comm: the machine's other processes, the
# suite's among them, may rename a thread as it is sampled, a sample perf and etwtop order
# apart from the rename at one time.)
if perf_record "$tmp/all.data" "$tmp/all.rec.err" -a -e cpu-clock -F 1000 -- sleep 0.5 &&
        perf script -i "$tmp/all.data" -F comm >"$tmp/all.script" 2>/dev/null; then
        sed 's/^ *//; s/ *$//' "$tmp/all.script" | sort | uniq -c |
                awk '{c = $0; sub(/^ *[0-9]+ /, "", c); print c "," $1}' | sort >"$tmp/all.perf"
        "$ETWTOP" --replay "$tmp/all.data" --export csv -s comm,sym -o "$tmp/all.csv" 2>/dev/null
        awk -F, '$1 == "Timer" {n[$7] += $4} END {for (c in n) print c "," n[c]}' "$tmp/all.csv" |
                sort >"$tmp/all.etw"
        want=$(grep '^swapper,' "$tmp/all.perf")
        if [ -n "$want" ]; then
                check "system-wide: swapper's samples as perf script's ($want; $(grep -E '^(swapper|Idle),' "$tmp/all.etw" | tr '\n' ' '))" \
                        grep -qx "$want" "$tmp/all.etw"
        else
                skip "system-wide: no idle samples (every CPU was busy)"
        fi
else
        skip "system-wide: perf record -a or perf script failed: $(head -c 200 "$tmp/all.rec.err")"
fi

# a BPF program's samples: its symbol from the file's KSYMBOL record (bpf_prog_TAG_NAME, as
# perf report names it; the name was read 8 bytes late, "_TAG_NAME"), a module of its own of
# that name as perf report's dso (it was under [kernel.kallsyms]). The program: 2,000 additions
# run by BPF_PROG_TEST_RUN.
cat >"$tmp/bpf.py" <<'PY'
import ctypes, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
nr = {"x86_64": 321, "aarch64": 280}.get(__import__("platform").machine())
if nr is None:
    sys.exit(3)
op = lambda code, imm: struct.pack("<BBhi", code, 0, 0, imm)
insns = op(0xB7, 0) + op(0x07, 1) * 2000 + op(0x95, 0)
ibuf, lic = ctypes.create_string_buffer(insns), ctypes.create_string_buffer(b"GPL")
attr = ctypes.create_string_buffer(128)
struct.pack_into("<IIQQIIQII16s", attr, 0, 1, len(insns) // 8, ctypes.addressof(ibuf),
                 ctypes.addressof(lic), 0, 0, 0, 0, 0, b"etwtop_probe")
fd = libc.syscall(nr, 5, attr, 128)
if fd < 0:
    sys.exit(3)
data, run = ctypes.create_string_buffer(64), ctypes.create_string_buffer(128)
struct.pack_into("<IIIIQQII", run, 0, fd, 0, 64, 0, ctypes.addressof(data), 0, int(sys.argv[1]), 0)
sys.exit(0 if libc.syscall(nr, 10, run, 128) == 0 else 3)
PY
if ! command -v python3 >/dev/null; then
        skip "bpf: no python3 to load a BPF program"
elif ! python3 "$tmp/bpf.py" 1 2>/dev/null; then
        skip "bpf: no BPF program can be loaded and run here (not root, or no bpf(2))"
elif perf_record "$tmp/bpf.data" "$tmp/bpf.rec.err" -e cpu-clock -F 2000 -g -- \
        python3 "$tmp/bpf.py" 400000 &&
        perf report -i "$tmp/bpf.data" --no-children -n --sort dso,sym --stdio -g none \
                >"$tmp/bpf.report" 2>/dev/null &&
        want=$(awk '$5 ~ /^bpf_prog_[0-9a-f]+_etwtop_probe$/ {print $3, $5, $2; exit}' \
                "$tmp/bpf.report") && [ -n "$want" ]; then
        "$ETWTOP" --replay "$tmp/bpf.data" -b --top 100000 2>"$tmp/bpf.err" |
                sed -n '/^Hot functions (Timer/,/^$/p' >"$tmp/bpf.txt"
        got=$(awk '$6 ~ /^bpf_prog_/ {print $5, $6, $3; exit}' "$tmp/bpf.txt")
        check "bpf: the program's module, name and samples (${got:-none}) as perf report's ($want)" \
                [ "$got" = "$want" ]
else
        skip "bpf: perf recorded no sample in the BPF program (no JIT, or kallsyms hides it)"
fi

# JIT code: a recording's executable anonymous map is perf report's "[JIT] tid PID", its
# functions named by /tmp/perf-PID.map (the JIT's, as node --perf-basic-prof writes it) where
# that file is; etwtop named them [unknown] and their raw addresses. The JIT: a spin loop
# written into anonymous executable memory and called (x86-64 code).
cat >"$tmp/jit.py" <<'PY'
import ctypes, mmap, os, sys
n = int(sys.argv[1])
code = b"\xb9" + n.to_bytes(4, "little") + b"\xff\xc9\x75\xfc\xc3"  # mov ecx,n; dec; jnz; ret
m = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
m.write(code)
addr = ctypes.addressof(ctypes.c_char.from_buffer(m))
with open("/tmp/perf-%d.map" % os.getpid(), "w") as f:
    f.write("%x %x etwtop_jitted_spin\n" % (addr, len(code)))
print(os.getpid(), flush=True)
fn = ctypes.CFUNCTYPE(None)(addr)
for i in range(int(sys.argv[2])):
    fn()
PY
if ! command -v python3 >/dev/null || [ "$(uname -m)" != x86_64 ]; then
        skip "jit: no python3, or not x86-64 (the JIT's code is x86-64's)"
elif perf_record "$tmp/jit.data" "$tmp/jit.rec.err" -e cpu-clock -F 2000 -- \
        sh -c "python3 '$tmp/jit.py' 50000000 6 >'$tmp/jit.pid'" &&
        jpid=$(cat "$tmp/jit.pid") && [ -n "$jpid" ] &&
        perf report -i "$tmp/jit.data" --no-children -n --sort dso,sym --stdio -g none \
                >"$tmp/jit.report" 2>/dev/null &&
        want=$(awk '$7 == "etwtop_jitted_spin" {print $3, $4, $5, $7, $2; exit}' \
                "$tmp/jit.report") && [ -n "$want" ]; then
        "$ETWTOP" --replay "$tmp/jit.data" -b --top 100000 2>"$tmp/jit.err" |
                sed -n '/^Hot functions (Timer/,/^$/p' >"$tmp/jit.txt"
        got=$(awk '$8 == "etwtop_jitted_spin" {print $5, $6, $7, $8, $3; exit}' "$tmp/jit.txt")
        check "jit: the JIT's function, its module and samples (${got:-none}) as perf report's ($want)" \
                [ "$got" = "$want" ]
        rm -f "/tmp/perf-$jpid.map"
        "$ETWTOP" --replay "$tmp/jit.data" -b --top 100000 2>"$tmp/jit2.err" |
                sed -n '/^Hot modules (Timer/,/^$/p' >"$tmp/jit2.txt"
        check "jit: without the map file, still the JIT's module, and no message of it" \
                sh -c "grep -q '\[JIT\] tid $jpid' '$tmp/jit2.txt' && ! grep -q 'perf-$jpid' '$tmp/jit2.err'"
else
        rm -f "/tmp/perf-$(cat "$tmp/jit.pid" 2>/dev/null).map"
        skip "jit: perf recorded no sample in the JIT's map: $(head -c 200 "$tmp/jit.rec.err")"
fi

echo "$nr_pass passed, $nr_fail failed, $nr_skip skipped"
[ $nr_fail = 0 ]
