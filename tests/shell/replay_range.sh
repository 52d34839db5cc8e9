#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# replay_range.sh: what a replay says is true of the fixture trace (tests/unit/etl_fixture.c: a
#   process work.exe with threads main and worker named at 1-2 ms, /usr/bin/work mapped at 1 ms,
#   timer samples from 20 to 420 ms). A time range (--from/--to, in --replay -b, --export and the
#   replay screen's text frames) counts its own events only but knows the processes, threads and
#   images the trace described before it, and its header says the range's span; --from past the
#   trace's end fails and says the trace's span. -s comm,sym, tid,sym and dso group -b's hot
#   functions as the screen's p does (and --export csv's: a Process or Thread column). Names with escape sequences (etl_fixture --hostile) reach
#   no output raw. Options that cannot go together are refused (exit 2), and -n counts the text
#   frames of a terminal that cannot draw the screen. Where this machine can record: a range of a
#   recording that ends before its end names the kernel frames (their symbols are written at the
#   end), and a recording killed before its end names them from the running kernel, the same.
set -u
: "${ETWTOP:?}" "${ETL_FIXTURE:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../lib/check.sh"
on_fail() { [ -f "$tmp/last" ] && sed -n 1,40p "$tmp/last" | cat -v; }

"$ETL_FIXTURE" "$tmp/fx.etl" || exit 1
"$ETL_FIXTURE" --hostile "$tmp/hostile.etl" || exit 1

# run NAME ARGS...: etwtop's stdout and stderr in $tmp/NAME (and $tmp/last), its status in rc
run() {
        local name=$1
        shift
        timeout 120 "$ETWTOP" "$@" >"$tmp/$name" 2>"$tmp/$name.err"
        rc=$?
        cat "$tmp/$name" "$tmp/$name.err" >"$tmp/last"
}
has() { grep -q -- "$2" "$tmp/$1"; }
hasnt() { ! grep -q -- "$2" "$tmp/$1"; }

# --- a range knows what the trace built before it ---
run range --replay "$tmp/fx.etl" -b --from 0.1 --to 0.2 --top 5
check "-b --from 0.1 --to 0.2: exit 0" [ "$rc" = 0 ]
check "the range's header: 0.100 s, its 200 events" \
        has range '^etwtop replay of .*, 2 CPUs, 0\.100 s, 200 events,'
check "the range's functions in the module mapped before it" has range '  work  .*work+0x10'
check "no [unknown] module in the range" hasnt range '\[unknown\]'
check "the range's threads named by the rundown before it" has range 'work.exe/main$'
check "and the other one" has range 'work.exe/worker$'

run whole --replay "$tmp/fx.etl" -b --top 5
run from0 --replay "$tmp/fx.etl" -b --from 0 --top 5
check "--from 0 says what the whole replay says (but the range line)" \
        diff <(grep -v '^Time range' "$tmp/from0") "$tmp/whole"

run past --replay "$tmp/fx.etl" -b --from 100
check "--from past the end: exit non-zero" [ "$rc" != 0 ]
check "--from past the end: says the trace's span" has past.err 'spans 0 to 0\.431 s'
run past_export --replay "$tmp/fx.etl" --export folded -o "$tmp/past.folded" --from 100
check "--export --from past the end: exit non-zero" [ "$rc" != 0 ]

run export --replay "$tmp/fx.etl" --export folded -o "$tmp/range.folded" --from 0.1 --to 0.2
check "--export folded of a range: exit 0" [ "$rc" = 0 ]
check "--export of a range: the process named" grep -q '^work.exe;work+0x10' "$tmp/range.folded"
check "--export of a range: its 200 samples" \
        [ "$(awk '{n += $NF} END {print n}' "$tmp/range.folded")" = 200 ]

# the replay screen (its text frames on a terminal that cannot draw it) takes --from/--to
TERM=dumb timeout 60 "$ETWTOP" --replay "$tmp/fx.etl" --from 0.1 --to 0.2 >"$tmp/screen" 2>&1
cp "$tmp/screen" "$tmp/last"
check "the replay screen: --from/--to choose its range (200 events)" \
        grep -q 'replay .*  200 events  *200 samples' "$tmp/screen"
check "the replay screen's range: the module named" grep -q ' work  *work+0x10' "$tmp/screen"
check "the replay screen's range: the threads named by the rundown before it" \
        grep -q '  work.exe/worker$' "$tmp/screen"
check "the replay screen's range: CPU% of the range's time (both threads ran all of it)" \
        [ "$(grep -c ' 100\.00%  *work.exe/' "$tmp/screen")" = 2 ]

# the screen with --from past the trace's end says its span (tmux, where there is one)
if command -v tmux >/dev/null; then
        sock=etwtop_replay_range_$$
        tmux -L "$sock" -f /dev/null new-session -d -s s -x 140 -y 30 \
                "TERM=xterm-256color '$ETWTOP' --replay '$tmp/fx.etl' --from 100"
        for _ in $(seq 300); do # at most 30 s
                tmux -L "$sock" capture-pane -p -t s >"$tmp/last" 2>/dev/null
                grep -q "past the trace's end" "$tmp/last" && break
                sleep 0.1
        done
        check "the screen: --from past the end says the trace's span" \
                grep -q "range starts past the trace's end: it spans 0 to 0\.431 s" "$tmp/last"
        tmux -L "$sock" kill-server 2>/dev/null
        # ] twice: the second tenth of the trace (43-86 ms: samples, no switches in it); the
        # switches view names the threads the rundown before it named, and counts their time
        sock=etwtop_replay_range_w$$
        tmux -L "$sock" -f /dev/null new-session -d -s s -x 160 -y 30 \
                "TERM=xterm-256color '$ETWTOP' --replay '$tmp/fx.etl'"
        # wait_pane PATTERN: until the screen shows PATTERN (at most 30 s)
        wait_pane() {
                for _ in $(seq 300); do
                        tmux -L "$sock" capture-pane -p -t s >"$tmp/last" 2>/dev/null
                        grep -q -- "$1" "$tmp/last" && return 0
                        sleep 0.1
                done
                return 1
        }
        # key KEY PATTERN: KEY, then wait for PATTERN and for the file read again (the
        # header's "loading N%" gone: the next ] is taken)
        key() {
                tmux -L "$sock" send-keys -t s "$1"
                wait_pane "$2" || return 1
                for _ in $(seq 300); do
                        tmux -L "$sock" capture-pane -p -t s >"$tmp/last" 2>/dev/null
                        grep -q 'loading  *[0-9]*%' "$tmp/last" || return 0
                        sleep 0.1
                done
                return 1
        }
        wait_pane ' 821 events' # the file read whole: ] is taken
        key ']' 'time window 0\.000 s - 0\.043 s'
        check "the screen: ] ] shows the second tenth" key ']' 'time window 0\.043 s - 0\.086 s'
        check "the screen's window: the switches view names the threads" key 3 'work.exe/main'
        check "the screen's window: the thread's on-CPU time in it" \
                grep -q '  43\.1 ms .* work.exe/worker' "$tmp/last"
        tmux -L "$sock" kill-server 2>/dev/null
else
        skip "the screen with --from past the end: no tmux"
fi

# --- -s groups -b's hot functions ---
run comm --replay "$tmp/fx.etl" -b --top 3 -s comm,sym
check "-s comm,sym: a row per process and function" \
        has comm '^Hot functions (Timer, 802 samples, by self, a row per process and function)$'
check "-s comm,sym: the Process column" has comm '  Module  *Process  *Function$'
check "-s comm,sym: the process's name" has comm ' work  *work.exe  *work+0x'
run tid --replay "$tmp/fx.etl" -b --top 3 -s tid,sym
check "-s tid,sym: the thread's name and id" has tid ' work  *work.exe/main (4243)  *work+0x'
run pid --replay "$tmp/fx.etl" -b --top 3 -s pid,sym
check "-s pid,sym: as tid,sym (perf's pid key is a thread's)" cmp -s "$tmp/pid" "$tmp/tid"
run process --replay "$tmp/fx.etl" -b --top 3 -s process,sym
check "-s process,sym: a Windows trace's comm is its process name, as -s comm,sym" \
        cmp -s "$tmp/process" "$tmp/comm"
run dso --replay "$tmp/fx.etl" -b --top 3 -s dso
check "-s dso: the module's row" has dso '  work  *\[[0-9]* functions\]$'
check "-s dso: its functions under it" has dso '^ .*      1    work  *work+0x'
# the CSV export's hot functions grouped as -b's: a Process or Thread column
run csvcomm --replay "$tmp/fx.etl" --export csv -s comm,sym -o "$tmp/comm.csv"
check "--export csv -s comm,sym: the Process column" \
        grep -q '^Source,Self%,Total%,Self,Total,Module,Process,Function' "$tmp/comm.csv"
check "--export csv -s comm,sym: the process's row as -b's" \
        grep -q "^Timer,.*,work,work.exe,work+0x" "$tmp/comm.csv"
run csvtid --replay "$tmp/fx.etl" --export csv -s tid,sym -o "$tmp/tid.csv"
check "--export csv -s tid,sym: the thread's name and id" \
        grep -q '^Timer,.*,work,work.exe/main (4243),work+0x' "$tmp/tid.csv"
run sym --replay "$tmp/fx.etl" -b --top 3 -s sym
run plain --replay "$tmp/fx.etl" -b --top 3
check "-s sym: as without -s" cmp -s "$tmp/sym" "$tmp/plain"

# --- names from the trace reach no output raw ---
esc=$'\x1b'
for s in sym comm,sym tid,sym dso; do
        run hostile --replay "$tmp/hostile.etl" -b -s "$s"
        check "-b -s $s: no escape from the trace's names" hasnt last "$esc"
done
check "-b: the names are there, made safe" has hostile '?\]0;pwned??\[31mwork.exe'

# --- options that do not go together ---
run rec_replay --record "$tmp/out.etl" --replay "$tmp/fx.etl" -b
check "--record with --replay: refused (exit 2)" [ "$rc" = 2 ]
check "--record with --replay: says why" has rec_replay.err '--record .* not with --replay'
check "--record with --replay: nothing recorded" [ ! -e "$tmp/out.etl" ]
run rec_dump --record "$tmp/out.etl" --dump "$tmp/fx.etl"
check "--record with --dump: refused (exit 2)" [ "$rc" = 2 ]
run dump_replay --dump --replay "$tmp/fx.etl" "$tmp/fx.etl"
check "--dump with --replay: refused (exit 2)" [ "$rc" = 2 ]
check "--dump with --replay: says why" has dump_replay.err '--dump and --replay'

# -n with TERM=dumb: the text frames stop after n (a live session, where this machine can)
if [ "$(id -u)" = 0 ] || [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -le 0 ]; then
        TERM=dumb timeout 60 "$ETWTOP" -n 2 -d 0.2 --on PROC_THREAD+PROFILE >"$tmp/dumb" 2>&1
        rc=$?
        cp "$tmp/dumb" "$tmp/last"
        if grep -q 'Hot functions' "$tmp/dumb"; then
                check "TERM=dumb -n 2: exits by itself" [ "$rc" = 0 ]
                check "TERM=dumb -n 2: two frames" [ "$(grep -c '^Hot functions' "$tmp/dumb")" = 2 ]
        else
                skip "TERM=dumb -n: no live session here: $(head -c 200 "$tmp/dumb")"
        fi
else
        skip "TERM=dumb -n: a live session needs root or perf_event_paranoid <= 0"
fi

# --- kernel frames of recordings made here ---
# kernel_rows NAME: -b's hot functions rows of [kernel.kallsyms]; kernel_named: those named
krow='^ *[0-9.]*% *[0-9.]*% .*  \[kernel\.kallsyms\]  ' # Self% Total% ... Module
kernel_rows() { grep -c "$krow" "$tmp/$1"; }
kernel_named() { grep "$krow" "$tmp/$1" | grep -vc 'kallsyms\]+0x'; }
if "$ETWTOP" --record "$tmp/probe.etl" --duration 0.2 --on PROC_THREAD >/dev/null 2>"$tmp/probe.err"; then
        # a workload in the kernel (reads of /proc), for kernel samples
        (
                end=$((SECONDS + 90))
                while [ $SECONDS -lt $end ]; do cat /proc/self/status >/dev/null; done
        ) &
        busy=$!
        trap 'kill $busy 2>/dev/null; rm -rf "$tmp"' EXIT
        # a whole recording: a range that ends before the kernel symbols written at its end
        "$ETWTOP" --record "$tmp/whole.etl" --duration 2 >/dev/null 2>&1
        run krange --replay "$tmp/whole.etl" -b --from 0 --to 1 --top 40
        if [ "$(kernel_rows krange)" -gt 0 ] 2>/dev/null; then
                check "--from 0 --to 1 of a recording: its kernel frames named" \
                        [ "$(kernel_named krange)" -gt 0 ]
        else
                skip "--from 0 --to 1: no kernel samples in the recording's first second"
        fi
        # killed before its end (no kernel symbols in it): the running kernel's, same build-id
        "$ETWTOP" --record "$tmp/killed.etl" >/dev/null 2>&1 &
        rec=$!
        for _ in $(seq 600); do # until it holds samples: 4 MB (at most a minute)
                [ "$(stat -c %s "$tmp/killed.etl" 2>/dev/null || echo 0)" -ge 4000000 ] && break
                sleep 0.1
        done
        kill -9 "$rec"
        wait "$rec" 2>/dev/null
        run killed --replay "$tmp/killed.etl" -b --top 40
        if [ "$(kernel_rows killed)" -gt 0 ] 2>/dev/null; then
                check "a recording killed before its end: no kernel symbols in it" \
                        bash -c "! '$ETWTOP' --dump --totals '$tmp/killed.etl' | grep -q KernelSymbol"
                check "a recording killed before its end: kernel frames named (same kernel)" \
                        [ "$(kernel_named killed)" -gt 0 ]
        else
                skip "killed recording: no kernel samples in it"
        fi
        kill $busy 2>/dev/null
        wait $busy 2>/dev/null
else
        skip "recordings: etwtop --record cannot run here: $(head -c 200 "$tmp/probe.err")"
fi

echo "replay_range: $nr_pass passed, $nr_fail failed, $nr_skip skipped"
[ "$nr_fail" = 0 ]
