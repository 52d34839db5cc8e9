#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# perf_data_tmux.sh: the screen opens a perf.data file as it opens an .etl, driven in tmux: its
# hot functions are the same rows and counts as --replay -b's, its samples in the header, the
# branch edges of its LBR records in view 2; its header says what the file sampled (events with
# their frequency or period from its attrs) and which samples carry branch stacks. The samples
# of such a file carry no stack, so they wait in the model for one until the trace's end: the
# screen (not only -b) must end the trace there, or it shows no sample at all (perf_b.data's 150
# samples, system-wide busy's 628).
set -u
: "${ETWTOP:?}" "${ETWTOP_SAMPLES:?}"
command -v tmux >/dev/null || { echo "SKIP: tmux not installed"; exit 0; }
sock=etwtop-perfdata-$$
tm() { tmux -L "$sock" "$@"; }
tmp=$(mktemp -d)
cleanup() {
        tm kill-server 2>/dev/null
        rm -rf "$tmp"
}
trap cleanup EXIT
. "$(dirname "$0")/../lib/check.sh"
on_fail() {
        echo "--- screen:"
        cat "$tmp/screen"
}
. "$(dirname "$0")/../lib/tmux_screen.sh"

f="$ETWTOP_SAMPLES/perf/perf_b.data"
[ -f "$f" ] || { echo "SKIP: $f not found"; exit 0; }
# the first row of -b's first table: its module+offset and its samples
"$ETWTOP" --replay "$f" -b --top 3 >"$tmp/b.txt" 2>/dev/null
read -r self fn < <(awk '/^Hot functions/ {t = 1; next} t && /^ *[0-9.]+%/ {print $3, $6; exit}' "$tmp/b.txt")
total=$(awk '/^Hot functions/ {for (i = 1; i <= NF; i++) if ($i == "samples,") {print $(i - 1); exit}}' "$tmp/b.txt")
has_row() { [ -n "$fn" ] && [ "${self:-0}" -gt 0 ]; }
check "-b: perf_b.data's first table has rows ($fn, $self of $total)" has_row

tm_new -d -s s -x 150 -y 30 -c "$tmp" "$ETWTOP --replay '$f'; sleep 60"
check "the screen: -b's first row, with its count" wait_for " $self  *$self .* $fn\$" 30
check "the screen: the header counts the file's samples ($total)" has "   $total samples of TotalCycles"
# what the file has, from its attrs: the event and its frequency, the samples that carry LBR
check "the header: sampled by cycles:HG at 4000 Hz (not the timer)" \
        has '   Sampling: cycles:HG (4000 Hz)   '
check "the header: LBR on the cycles samples (150 branch stacks)" \
        has '   LBR: on TotalCycles samples, 150 branch stacks\( \|$\)'
check "the header: no stack walk of this command line's" wait_gone 'Stack walk:' 5
tm send-keys -t s 2
no_ipc() { ! has 'Total  *IPC'; }
check "no IPC column: the file samples cycles alone" no_ipc
check "view 2: the LBR records' edges" wait_for 'Share% .*Count .*Mispred%' 10
check "view 2: an edge of the program" has ' elf+0x[0-9a-f]* .*elf+0x'
tm send-keys -t s q
tm kill-session -t s 2>/dev/null

# the timeline and every key of every view on a perf.data: each view (1 to 5) takes each key of
# the help screen's lists (a prompt's keys answered: / and \ a text, Enter), and the screen is
# still there after each, the file's 150 samples in its header; a range chosen on the timeline
# counts what -b --from --to counts
alive() { tm capture-pane -p -t s | { ! grep -q '^etwtop ended'; }; }
tm_new -d -s s -x 150 -y 30 -c "$tmp" "$ETWTOP --replay '$f'; echo etwtop ended \$?; sleep 60"
check "timeline: drawn under a perf.data's header" wait_for '^Time  ' 30
nr_keys=0 dead=
for v in 1 2 3 4 5; do
        for k in Enter + - '*' c p Tab BTab Up Down PPage NPage Home End Left Right F6 '<' '>' \
                I Space Z z m S d D '[' ']' '{' '}' '(' ')' '=' '#' t; do
                tm send-keys -t s "$v"
                tm send-keys -t s "$k"
                nr_keys=$((nr_keys + 1))
                alive || { dead="view $v, key $k"; break 2; }
        done
        for k in / '\\'; do
                tm send-keys -t s "$v" "$k"
                tm send-keys -t s -l elf
                tm send-keys -t s Enter n Escape
                alive || { dead="view $v, key $k"; break 2; }
        done
done
check "every key of every view ($nr_keys): the screen still runs${dead:+ (not after $dead)}" [ -z "$dead" ]
tm send-keys -t s Escape 1 '#'
check "after every key: the header and the file's samples" wait_for ' 150 samples of TotalCycles' 20
tm send-keys -t s h
check "h: the help screen" wait_for '^etwtop keys' 10
tm send-keys -t s x
check "any key: back from help" wait_for '^Time  ' 10
for ((i = 0; i < 10; i++)); do tm send-keys -t s '}'; done
tm send-keys -t s '('
check "timeline: ( starts a range" wait_for '^range from [0-9.]* s' 10
for ((i = 0; i < 40; i++)); do tm send-keys -t s '}'; done
tm send-keys -t s ')'
check "timeline: ) ends it" wait_for '^range [0-9.]* s - [0-9.]* s (' 10
read -r from to < <(sed -n 's/^range \([0-9.]*\) s - \([0-9.]*\) s (.*/\1 \2/p' "$tmp/screen")
prev=
until_steady() {
        cur=$(sed -n 's/.* \([0-9]*\) samples of TotalCycles.*/\1/p' "$tmp/screen" | head -1)
        [ -n "$cur" ] && [ "$cur" = "$prev" ] && ! grep -q 'loading' "$tmp/screen" && return 0
        prev=$cur
        return 1
}
until_screen 20 until_steady
n_b=$("$ETWTOP" --replay "$f" -b --from "$from" --to "$to" 2>/dev/null |
        sed -n 's/^Hot functions (TotalCycles, \([0-9]*\) samples.*/\1/p' | head -1)
check "timeline: the range's samples ($cur) as -b --from $from --to $to counts them (${n_b:-none})" \
        [ "${cur:-x}" = "${n_b:-0}" ]
tm send-keys -t s q
tm kill-session -t s 2>/dev/null

g="$ETWTOP_SAMPLES/perf/perf.data.busy.0-3.4"
if [ -f "$g" ]; then
        "$ETWTOP" --replay "$g" -b --top 3 >"$tmp/g.txt" 2>/dev/null
        read -r gself gfn < <(awk '/^Hot functions/ {t = 1; next} t && /^ *[0-9.]+%/ {print $3, $6; exit}' "$tmp/g.txt")
        tm_new -d -s s -x 250 -y 30 -c "$tmp" "$ETWTOP --replay '$g'; sleep 60"
        check "the screen, six PMC events system-wide: rows" wait_for '^ *[0-9.]*%  *[0-9.]*%  *[0-9]*  *[0-9]*  *[0-9.]* \[kernel' 30
        check "the header: the six events at 1000 Hz, no LBR" \
                has 'Sampling: cycles (1000 Hz), instructions (1000 Hz), cache-references (1000 Hz), cache-misses (1000 Hz), branches (1000 Hz), branch-misses (1000 Hz)   LBR: off   '
        # S: the next source, in the file's order of its events (perf report's), named in the
        # header
        check "the header names the source shown first (TotalCycles, perf report's first)" \
                has ' 67 samples of TotalCycles'
        tm send-keys -t s S
        check "S: the instructions' samples, named in the header" \
                wait_for ' 127 samples of InstructionRetired' 10
        check "S: the status says which of the six" \
                has "InstructionRetired's samples (2 of 6 sources)"
        for _ in 1 2 3 4; do tm send-keys -t s S; done
        check "S five times: the branch misses' (the sixth)" \
                wait_for ' 106 samples of BranchMispredictions' 10
        tm send-keys -t s S
        check "S again: back to the first" wait_for ' 67 samples of TotalCycles' 10
        tm kill-session -t s 2>/dev/null
        [ -n "$gfn" ] || skip "-b printed no row for busy"

        # IPC: cycles and instructions both sampled: a column of the functions view, each
        # function's (each module's by module) as -b's IPC tables give it
        "$ETWTOP" --replay "$g" -b --top 1000 >"$tmp/gall.txt" 2>/dev/null
        read -r mipc mname < <(awk '/^IPC per module/ {t = 1; next} t && /^ *[0-9]+\.[0-9]+ / {print $1, $4; exit}' "$tmp/gall.txt")
        read -r fipc fmod fname < <(awk '/^IPC per function/ {t = 1; next} t && /^$/ {t = 0} t && /^ *[0-9]+\.[0-9]+ / && $1 != "0.00" {print $1, $4, $5; exit}' "$tmp/gall.txt")
        check "-b: busy's IPC per module and function ($mname $mipc, $fname $fipc)" [ -n "$mipc" -a -n "$fipc" ]
        tm_new -d -s s -x 250 -y 60 -c "$tmp" "$ETWTOP --replay '$g' --source cycles; sleep 60"
        check "IPC: a column of the functions view" wait_for '^  Self%  Total%     Self    Total    IPC Module ' 30
        check "IPC: $fname's, as -b's ($fipc)" wait_for "  $fipc ${fmod//[/\\[}  *${fname//[/\\[}\$" 10
        tm send-keys -t s p p p
        check "IPC by module: $mname's, as -b's ($mipc)" wait_for "  $mipc ${mname//[/\\[}  *+ \[" 10
        tm kill-session -t s 2>/dev/null

        # --source (perf's name or ETW's): -b prints that source's tables alone; the screen
        # opens on it, its first row -b's
        "$ETWTOP" --replay "$g" -b --top 3 --source instructions >"$tmp/gi.txt" 2>/dev/null
        titles=$(grep -c '^Hot functions' "$tmp/gi.txt")
        check "-b --source instructions: one source's table ($titles)" [ "$titles" = 1 ]
        check "-b --source instructions: InstructionRetired's" \
                grep -q '^Hot functions (InstructionRetired, 127 samples' "$tmp/gi.txt"
        read -r iself ifn < <(awk '/^Hot functions/ {t = 1; next} t && /^ *[0-9.]+%/ {print $3, $6; exit}' "$tmp/gi.txt")
        "$ETWTOP" --replay "$g" -b --top 3 --source nosuch >"$tmp/gn.txt" 2>/dev/null
        check "-b --source nosuch: says which the trace has" \
                grep -q '^No nosuch samples: the trace samples TotalCycles, InstructionRetired, .*BranchMispredictions\.$' "$tmp/gn.txt"
        tm_new -d -s s -x 250 -y 30 -c "$tmp" "$ETWTOP --replay '$g' --source InstructionRetired; sleep 60"
        check "the screen --source InstructionRetired: its samples" wait_for ' 127 samples of InstructionRetired' 30
        check "the screen --source InstructionRetired: -b's first row ($ifn)" \
                wait_for " $iself  *$iself .* ${ifn//[/\\[}\$" 10
        tm kill-session -t s 2>/dev/null
fi
# what the file holds that the screen does not show, said once it is read: propeller's
# throttling, as perf report -D counts it
p="$ETWTOP_SAMPLES/perf/propeller_sample_1.perfdata1"
nt=
[ -f "$p" ] && command -v perf >/dev/null &&
        nt=$(perf report -D -i "$p" 2>/dev/null | awk '/^ *THROTTLE events:/ {print $3; exit}')
[ -n "$nt" ] || skip "no perf to count propeller's THROTTLE records: the status's count not checked"
if [ -n "$nt" ]; then
        tm_new -d -s s -x 200 -y 30 -c "$tmp" "$ETWTOP --replay '$p'; sleep 60"
        check "the status names what is not shown: $nt THROTTLE (perf report -D)" \
                wait_for "^Not shown: the perf.data's $nt THROTTLE, $nt UNTHROTTLE records (the kernel throttled" 30
        tm kill-session -t s 2>/dev/null
fi
echo "$nr_pass passed, $nr_fail failed, $nr_skip skipped"
[ "$nr_fail" = 0 ]
