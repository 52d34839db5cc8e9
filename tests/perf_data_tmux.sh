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
. "$(dirname "$0")/check.sh"
on_fail() {
        echo "--- screen:"
        cat "$tmp/screen"
}
. "$(dirname "$0")/tmux_screen.sh"

f="$ETWTOP_SAMPLES/perf/perf_b.data"
[ -f "$f" ] || { echo "SKIP: $f not found"; exit 0; }
# the first row of -b's first table: its module+offset and its samples
"$ETWTOP" --replay "$f" -b --top 3 >"$tmp/b.txt" 2>/dev/null
read -r self fn < <(awk '/^Hot functions/ {t = 1; next} t && /^ *[0-9.]+%/ {print $3, $6; exit}' "$tmp/b.txt")
total=$(awk '/^Hot functions/ {for (i = 1; i <= NF; i++) if ($i == "samples,") {print $(i - 1); exit}}' "$tmp/b.txt")
has_row() { [ -n "$fn" ] && [ "${self:-0}" -gt 0 ]; }
check "-b: perf_b.data's first table has rows ($fn, $self of $total)" has_row

tm new-session -d -s s -x 150 -y 30 -c "$tmp" "$ETWTOP --replay '$f'; sleep 60"
check "the screen: -b's first row, with its count" wait_for " $self  *$self .* $fn\$" 30
check "the screen: the header counts the file's samples ($total)" has "   $total samples of TotalCycles"
# what the file has, from its attrs: the event and its frequency, the samples that carry LBR
check "the header: sampled by cycles:HG at 4000 Hz (not the timer)" \
        has '   Sampling: cycles:HG (4000 Hz)   '
check "the header: LBR on the cycles samples (150 branch stacks)" \
        has '   LBR: on TotalCycles samples, 150 branch stacks\( \|$\)'
check "the header: no stack walk of this command line's" wait_gone 'Stack walk:' 5
tm send-keys -t s 2
check "view 2: the LBR records' edges" wait_for 'Share% .*Count .*Mispred%' 10
check "view 2: an edge of the program" has ' elf+0x[0-9a-f]* .*elf+0x'
tm send-keys -t s q
tm kill-session -t s 2>/dev/null

g="$ETWTOP_SAMPLES/perf/perf.data.busy.0-3.4"
if [ -f "$g" ]; then
        "$ETWTOP" --replay "$g" -b --top 3 >"$tmp/g.txt" 2>/dev/null
        read -r gself gfn < <(awk '/^Hot functions/ {t = 1; next} t && /^ *[0-9.]+%/ {print $3, $6; exit}' "$tmp/g.txt")
        tm new-session -d -s s -x 250 -y 30 -c "$tmp" "$ETWTOP --replay '$g'; sleep 60"
        check "the screen, six PMC events system-wide: rows" wait_for '^ *[0-9.]*%  *[0-9.]*%  *[0-9]*  *[0-9]* \[kernel' 30
        check "the header: the six events at 1000 Hz, no LBR" \
                has 'Sampling: cycles (1000 Hz), instructions (1000 Hz), cache-references (1000 Hz), cache-misses (1000 Hz), branches (1000 Hz), branch-misses (1000 Hz)   LBR: off   '
        tm kill-session -t s 2>/dev/null
        [ -n "$gfn" ] || skip "-b printed no row for busy"
fi
echo "$nr_pass passed, $nr_fail failed, $nr_skip skipped"
[ "$nr_fail" = 0 ]
