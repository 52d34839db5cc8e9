#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# screen_tmux.sh: the etwtop screen driven for real: tmux runs it, send-keys types,
# capture-pane reads the screen. Live (needs root): a known workload's hot functions show; the
# session panel turns CSWITCH off and the header says so; turning the Profile stack hook off
# makes the profile flat (total = self); the LBR controls say why they are unavailable; the
# help lists the keys; resizing, tiny terminals and monochrome do not break it; q quits.
# Replay: the PerfView sample's top module shows; a trace's lost events show.
set -u
: "${ETWTOP:?}" "${SYM_FIXTURE:?}"
command -v tmux >/dev/null || { echo "SKIP: tmux not installed"; exit 0; }
sock=etwtop-test-$$
tm() { tmux -L "$sock" "$@"; }
tmp=$(mktemp -d)
cleanup() {
        tm kill-server 2>/dev/null
        kill $(jobs -p) 2>/dev/null
        rm -rf "$tmp"
}
trap cleanup EXIT
. "$(dirname "$0")/check.sh"
on_fail() {
        echo "--- screen:"
        cat "$tmp/screen"
}
# the screen once it holds still: a capture can fall in the middle of a frame being drawn (a
# line inserted and not yet written), so two captures 0.1 s apart must agree
snap() {
        local i
        tm capture-pane -t s -p >"$tmp/screen"
        for ((i = 0; i < 20; i++)); do
                sleep 0.1
                tm capture-pane -t s -p >"$tmp/screen.next"
                cmp -s "$tmp/screen" "$tmp/screen.next" && return 0
                mv "$tmp/screen.next" "$tmp/screen"
        done
}
has() { grep -q -- "$1" "$tmp/screen"; }
# waits up to $2 seconds for text $1 on the screen
wait_for() {
        local i
        for ((i = 0; i < ${2:-10} * 5; i++)); do
                snap
                has "$1" && return 0
                sleep 0.2
        done
        return 1
}
alive() { tm has-session -t s 2>/dev/null; }
# a fresh server for the next part: the old one must be gone before a new one takes the socket
restart() {
        tm kill-server 2>/dev/null
        local i
        for ((i = 0; i < 50; i++)); do
                tm has-session 2>/dev/null || break
                sleep 0.1
        done
        sleep 0.2
        tm new-session -d -s s "$@"
}

# -- replay: no privilege needed
net=${ETWTOP_SAMPLES_UNPACKED:-}/net.4.5.2.x64.etl
if [ -f "$net" ]; then
        tm new-session -d -s s -x 120 -y 30 "$ETWTOP --replay '$net'; sleep 30"
        check "replay: the PerfView sample's top module" wait_for 'ntoskrnl\.exe' 10
        check "replay: the header names the file" has 'replay .*net\.4\.5\.2\.x64\.etl'
        tm send-keys -t s 3
        sleep 0.5
        snap
        check "replay: view 3 is the switches view" has '3 Context switches'
        # [ answers "still loading" until the file is read (slow under the sanitizers)
        for ((i = 0; i < 20; i++)); do
                tm send-keys -t s '['
                wait_for 'time window [0-9.]* s - [0-9.]* s of' 1 && break
        done
        check "replay: [ moves a time window" has 'time window [0-9.]* s - [0-9.]* s of'
        tm send-keys -t s q
        sleep 1
fi
# LBR and PMC events this machine cannot produce: a trace built per the format
if [ -n "${ETL_FIXTURE:-}" ] && "$ETL_FIXTURE" "$tmp/lbr.etl" >/dev/null 2>&1; then
        restart -x 200 -y 30 "$ETWTOP --replay '$tmp/lbr.etl'; sleep 30"
        tm send-keys -t s 2
        check "replay: branch edges from LBR" wait_for 'work.0x1250  *work.0x1200' 10
        check "replay: an edge's share" has '33.33%'
        tm send-keys -t s g
        check "replay: edges by function pair" wait_for 'by function pair' 5
        tm send-keys -t s 3
        check "replay: switches per thread, named" wait_for 'work.exe/worker' 10
        # two rings overflowed, 5 and 7 events, and no exact total at the stop
        check "replay: the header says what was lost" has 'replay .* lost 12'
        # a thread opened: the PMC counters of its timeslices, from the CSwitch events
        tm send-keys -t s / w o r k . e x e / m a i n Enter
        sleep 0.5
        tm send-keys -t s Enter
        check "replay: a thread's counters (CSwitch PMC)" \
                wait_for 'PMC in its timeslices: BranchInstructions 1.00 K, LLCRef' 5
        tm send-keys -t s q
        sleep 1
        check "replay -b: the events lost" bash -c \
                "'$ETWTOP' --replay '$tmp/lbr.etl' -b -n 1 2>/dev/null | head -1 | grep -q ', 12 lost\$'"
fi

# a damaged file: the screen says what it skipped once the file is read
shutdown=${ETWTOP_SAMPLES:-}/etlparser_ShutdownPerfDiagLogger.etl
if [ -f "$shutdown" ]; then
        head -c 100000 "$shutdown" >"$tmp/truncated.etl"
        restart -x 140 -y 30 "$ETWTOP --replay '$tmp/truncated.etl'; sleep 30"
        check "replay: a damaged buffer named, with its offset" \
                wait_for 'damaged buffer skipped in part or whole, the last at byte offset 65536: .*truncated' 10
        # no samples: the empty call tree turns top-down and opens, and the screen stays
        tm send-keys -t s c
        check "replay: an empty call tree turns top-down" wait_for 'call tree: top-down' 5
        tm send-keys -t s '*' 3 2 1
        sleep 1
        snap
        check "replay: an empty trace's views all draw" has 'Self%  Total%'
        tm send-keys -t s q
        sleep 1
fi

# -- live
if ! "$ETWTOP" --record "$tmp/probe.etl" --duration 0.2 --on PROC_THREAD 2>"$tmp/probe.err"; then
        echo "SKIP: live tests: $(cat "$tmp/probe.err")" >&2
        echo "$nr_pass passed, $nr_fail failed, 1 skipped"
        [ $nr_fail = 0 ]
        exit
fi
"$SYM_FIXTURE" spin 30000 &
fixture=$!
# -p: the views count that process only; what this machine cannot do stops the start, saying why
"$ETWTOP" -b -n 2 -d 1 --top 15 -p "$fixture" >"$tmp/p.txt" 2>"$tmp/p.err"
check "-p: runs" [ $? = 0 ]
check "-p: the header names the process" grep -q "lost [0-9]*   \[process $fixture\]" "$tmp/p.txt"
check "-p: its hot function" grep -q 'sym_fixture  *fixture_leaf$' "$tmp/p.txt"
check "-p: only its functions" awk '
        /Self%  Total%/ {t = 1; next} /^$/ {t = 0}
        t && $5 !~ /^(sym_fixture|libsymfix\.so|\[vdso\]|\[kernel\.kallsyms\]|libc\.so\.6|ld-linux)/ {
                print "not its function: " $0 >"/dev/stderr"; bad++}
        END {exit bad ? 1 : 0}' "$tmp/p.txt"
"$ETWTOP" -b -n 1 -p 999999999 >/dev/null 2>"$tmp/p.err"
check "-p: a process that is not there" grep -q 'no such process' "$tmp/p.err"
if ! grep -q '^cpu' <(ls /sys/bus/event_source/devices 2>/dev/null); then
        "$ETWTOP" -b -n 1 --pmc-profile TotalCycles >/dev/null 2>"$tmp/pmc.err"
        check "--pmc-profile without a PMU: refused, saying why" \
                grep -q -- '--pmc-profile: .*no hardware PMU.*(Win32 error 50)' "$tmp/pmc.err"
        "$ETWTOP" -b -n 1 --pmc TotalCycles+InstructionRetired >/dev/null 2>"$tmp/pmcc.err"
        check "--pmc (counters on CSwitch) without a PMU: refused, saying why" \
                grep -q -- '--pmc: TraceSetInformation(TracePmcCounterListInfo): .*no hardware PMU.*(Win32 error 50)' "$tmp/pmcc.err"
        "$ETWTOP" -b -n 1 --lastbranch Profile >/dev/null 2>"$tmp/lbr.err"
        check "--lastbranch without LBR: refused, saying why" \
                grep -q -- '--lastbranch: .*no LBR.*(Win32 error 50)' "$tmp/lbr.err"
fi
restart -x 120 -y 40 "cd $tmp && $ETWTOP -d 0.5; echo exit=\$? >$tmp/exit; sleep 30"
check "live: the workload's hot function shows" wait_for 'fixture_leaf' 15
check "live: the header" has 'live NT Kernel Logger'
check "live: CSWITCH on at start" has 'Groups: .*CSWITCH'
check "live: what this machine cannot do" has 'Not on this machine'

# the call tree: the function's callers open under it; c turns the tree top-down
tm send-keys -t s / f i x t u r e _ l e a f Enter
sleep 0.5
tm send-keys -t s Enter
check "tree: fixture_leaf opens" wait_for '- fixture_leaf' 5
check "tree: a caller under it, indented" awk '
        /- fixture_leaf/ {getline; exit ($0 ~ /   [^ ]/) ? 0 : 1} END {}' "$tmp/screen"
tm send-keys -t s c
check "tree: top-down" wait_for 'call tree: top-down' 5
check "tree: top-down roots are expandable" has '+ '
tm send-keys -t s c

# the switches view counts while CSWITCH is on
tm send-keys -t s 3
check "switches: threads switching" wait_for 'Waiting/' 10
# t: only the process of the thread under the cursor
tm send-keys -t s / s y m _ f i x t u r e Enter
sleep 0.5
# Enter opens the thread: where its time went (its waits, who readied it, its CPUs)
tm send-keys -t s Enter
check "switches: a thread opens" wait_for '- sym_fixture/sym_fixture' 5
check "switches: the CPUs it ran on, under it" awk '
        /- sym_fixture\/sym_fixture/ {t = 1; next} t && /^ .*  ran on CPU [0-9]+ *$/ {ok = 1}
        t && /[+-] [^ ]/ {t = 0} END {exit ok ? 0 : 1}' "$tmp/screen"
check "switches: where it was switched out from (its switch stacks), under it" awk '
        /- sym_fixture\/sym_fixture/ {t = 1; next} t && /  blocked in [^ ]/ {ok = 1}
        t && /[+-] [^ ]/ {t = 0} END {exit ok ? 0 : 1}' "$tmp/screen"
tm send-keys -t s Enter
check "switches: and closes" wait_for '+ sym_fixture/sym_fixture' 5
tm send-keys -t s t
check "zoom: one process" wait_for '\[process [0-9]*\]' 5
tm send-keys -t s 1
sleep 2
snap
check "zoom: only its functions" awk '
        /Self%  Total%/ {t = 1; next}
        t && NF >= 6 && $1 ~ /%$/ && $3 ~ /^[0-9]+$/ && $5 !~ /^(sym_fixture|libsymfix\.so|\[vdso\]|\[kernel\.kallsyms\]|libc\.so\.6|ld-linux)/ {bad++}
        END {exit bad ? 1 : 0}' "$tmp/screen"
tm send-keys -t s t
check "zoom: every process again" wait_for 'every process again' 5
# g: the switches by process (threads under each), by CPU, by wait reason, and by thread again
tm send-keys -t s 3 g
check "switches by process" wait_for 'sym_fixture (1 thread)' 5
tm send-keys -t s g
check "switches by CPU: busy and idle" wait_for 'CPU [0-9]: busy [0-9.]*%, idle' 5
tm send-keys -t s g
check "switches by wait reason" wait_for ' Waiting/[A-Za-z]* *all threads' 5
tm send-keys -t s g
check "switches by thread again" wait_for 'context switches by thread' 5
# z: the counts start again, the threads keep the names the session's start gave them
tm send-keys -t s z
check "switches: zeroed, the threads still named" wait_for ' sym_fixture/sym_fixture$' 10
tm send-keys -t s 1
# the save key: the recent events as an .etl that replays with the same top row
sleep 1
snap
top_live=$(awk '/Self%  Total%/ {getline; print $NF; exit}' "$tmp/screen")
tm send-keys -t s W
check "save: the file named" wait_for 'saved the recent events to etwtop-' 10
saved=$(grep -o 'etwtop-[0-9-]*\.etl' "$tmp/screen" | head -1)
check "save: the file is there, 0600" [ "$(stat -c %a "$tmp/$saved" 2>/dev/null)" = 600 ]
"$ETWTOP" --replay "$tmp/$saved" -b --top 10 >"$tmp/saved.txt" 2>/dev/null
# the saved window holds the whole session so far, the view what came since its last reset (the
# idle CPU's share moves with the machine's load): the view's top row is among the file's top rows
top_saved=$(awk '/^Hot functions/ {t = 1; getline; next} t && n < 10 {print $NF; n++}' "$tmp/saved.txt" |
        tr '\n' ' ')
check "save: replays with the view's top row ($top_live in: $top_saved)" \
        bash -c "[ -n '$top_live' ] && echo ' $top_saved' | grep -q ' $top_live '"
# the session panel: CSWITCH is the 4th row
tm send-keys -t s 4
check "panel: shown" wait_for 'What it does, or why it is unavailable' 5
tm send-keys -t s Down Down Down Enter
check "panel: CSWITCH off applied" wait_for 'CSWITCH off: applied to the running session' 5
check "panel: the header follows" bash -c "grep 'Groups:' '$tmp/screen' | grep -vq CSWITCH"
# the switch counters stop: the Switches column sums the same twice, 2 s apart
sum_switches() { awk '/Switches +On-CPU/ {t = 1; next} t && $1 ~ /^[0-9]+$/ {n += $1} END {print n + 0}' "$tmp/screen"; }
tm send-keys -t s 3
sleep 2.5 # what was in flight arrives
snap
s1=$(sum_switches)
sleep 2
snap
s2=$(sum_switches)
check "switches: counted before CSWITCH went off" [ "$s1" -gt 0 ]
check "switches: the counters stopped ($s1 then $s2)" [ "$s1" = "$s2" ]
tm send-keys -t s 4
sleep 0.5
snap
# LBR: unavailable, with the reason, and the API's answer when asked anyway
check "panel: LBR rows say why" has 'LBR filter: KERNEL .*no LBR'
tm send-keys -t s End Up Up Up Up Up Enter
check "panel: LBR refused with a reason" wait_for 'LBR on Profile: no LBR' 5

# the Profile stack hook off, counts zeroed: every sample is its own whole stack
tm send-keys -t s Home Down Down Down Down Down Enter
check "panel: Profile stacks off" wait_for 'stack: Profile off: applied' 5
sleep 2 # events from before the change still arrive for a flush interval
tm send-keys -t s 1 z
sleep 3
snap
check "live: flat profile (total = self)" awk '
        /Self%  Total%/ {t = 1; next}
        t && NF >= 6 && $3 ~ /^[0-9]+$/ {n++; if ($3 != $4) bad++}
        END {exit (n > 0 && bad == 0) ? 0 : 1}' "$tmp/screen"

# help: generated from the key table
tm send-keys -t s h
check "help: shown" wait_for 'etwtop keys' 5
# every labelled key of the key table (ui/screen.c), each on a row of its own
labels=$(perl -ne 'if (/^\s*\{\s*(?:KEY_\w+(?:\(\d+\))?|\x27(?:[^\x27\\]|\\.)+\x27)\s*,\s*"((?:[^"\\]|\\.)*)"/) {
        my $l = $1; $l =~ s/\\(.)/$1/g; print "$l\n" }' "$(dirname "$0")/../ui/screen.c")
check "help: the key table read ($(echo "$labels" | wc -l) labels)" [ "$(echo "$labels" | wc -l)" -ge 20 ]
while IFS= read -r k; do
        check "help: lists $k" env K="$k" awk \
                'index($0, "  " ENVIRON["K"] "  ") == 1 {f = 1} END {exit f ? 0 : 1}' "$tmp/screen"
done <<<"$labels"
tm send-keys -t s x

# sorting, search, filter keep working
tm send-keys -t s '\' f i x t u r e Enter
sleep 1
snap
check "filter: only matching rows" awk '/Self%  Total%/ {t = 1; next} t && NF >= 6 && $3 ~ /^[0-9]+$/ && !/fixture/ {bad++} END {exit bad ? 1 : 0}' "$tmp/screen"
tm send-keys -t s Escape
tm send-keys -t s F6
sleep 0.5
snap
check "sort: the column marked" has 'Total%v'

# resize, down to a tiny terminal, and back
tm resize-window -t s -x 60 -y 15
sleep 1
snap
check "resize: smaller still draws" has 'etwtop'
tm resize-window -t s -x 12 -y 4
sleep 1
tm resize-window -t s -x 120 -y 40
sleep 1
snap
check "resize: survives a tiny terminal" alive
check "resize: draws again" has 'Self%'

tm send-keys -t s q
sleep 1.5
check "q: exits 0" grep -q 'exit=0' "$tmp/exit"

# monochrome
restart -x 100 -y 30 "NO_COLOR=1 $ETWTOP --no-color; sleep 5"
check "mono: runs" wait_for 'Self%' 20
tm send-keys -t s q

echo "$nr_pass passed, $nr_fail failed, 0 skipped"
[ $nr_fail = 0 ]
