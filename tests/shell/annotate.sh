#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# annotate.sh: `etwtop --replay FILE -b --annotate FUNCTION` prints a sampled function's
# instructions with their samples, source lines and branch targets.
#   1. A recording of the symbol fixture spinning in fixture_leaf: its instructions are those
#      objdump -d finds (addresses and mnemonics), the hottest one is inside its loop, the loop's
#      lines of tests/fixtures/sym_fixture.c are its hottest, the percentages sum to 100; the
#      inlined functions of fixture_inline_outer are named.
#   2. A name no sampled function has: exit status 1, saying so.
#   3. The recorded binary replaced by another ELF file, or gone: no instructions, the reason
#      said in one line.
set -u
: "${ETWTOP:?}" "${SYM_FIXTURE:?}"
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../lib/check.sh"
. "$(dirname "$0")/../lib/build_id.sh"
source_file=$(dirname "$0")/../fixtures/sym_fixture.c

if ! "$ETWTOP" --record "$tmp/probe.etl" --duration 0.2 --on PROC_THREAD 2>"$tmp/probe.err"; then
        skip "etwtop --record cannot run here: $(cat "$tmp/probe.err")"
        echo "$nr_pass passed, $nr_fail failed, $nr_skip skipped"
        [ $nr_fail = 0 ]
        exit
fi

# a name and a build-id of its own: another sym_fixture running on the machine (another suite's
# tests) must not answer for it. With the fixture's build-id, the recording's images of both were
# one module, named by the other's path, whose file stayed when this one was replaced: this
# test's module was annotated "in sym_fixture", and again once its file was another build's.
# With the same name (another suite's copy for this test), 'symfix_ann!fixture_leaf' named the
# other's module, whose file stayed
run=$tmp/run
ann=symfix_ann_$$
mkdir -p "$run"
own_copy "$SYM_FIXTURE" "$run/$ann" || exit 1
check "the fixture's copy: a build-id of its own ($(build_id "$run/$ann"))" \
        [ "$(build_id "$run/$ann")" != "$(build_id "$SYM_FIXTURE")" ]
# (it spins until the recording is done, however long a loaded machine takes to start it)
"$run/$ann" spin 120000 &
fix=$!
wait_until 60 has_mapped $fix $ann
# recorded until the fixture has run 2 s of CPU in it (ticks of /proc's utime and stime), not for
# 2 s: a busy machine gives it a part of each second, and its samples with it
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
"$ETWTOP" --record "$tmp/fix.etl" --duration 300 2>"$tmp/rec.err" &
rec=$!
recording_started "$tmp/fix.etl" $rec
ticks0=$(cpu_ticks $fix)
wait_until 280 eval "[ \$((\$(cpu_ticks $fix) - $ticks0)) -ge $((2 * $(getconf CLK_TCK))) ] || ! kill -0 $rec 2>/dev/null"
kill -INT $rec 2>/dev/null
wait $rec
rc=$?
check "recorded ($(tail -1 "$tmp/rec.err"))" [ $rc = 0 ]
kill $fix
wait $fix 2>/dev/null

# 1. fixture_leaf (with its module: another suite's spinning fixture may be the hotter one; the
# LBR trace below, the fixture's alone, has the name by itself)
"$ETWTOP" --replay "$tmp/fix.etl" -b --annotate "$ann!fixture_leaf" >"$tmp/leaf.txt" 2>"$tmp/leaf.err"
check "fixture_leaf: exits 0 ($(head -c 300 "$tmp/leaf.err"))" [ $? = 0 ]
on_fail() { sed -n '/^Annotate/,$p' "$tmp/leaf.txt" | head -60; }
check "fixture_leaf: annotated in $ann" grep -q "^Annotate fixture_leaf in $ann (" "$tmp/leaf.txt"
# the listing's instructions, address and mnemonic: percent, samples and address fill 30
# columns, then ":  " and the instruction
awk '/^Annotate fixture_leaf/ {a = 1; next} a && (/^Annotate/ || /^ *Hottest lines/) {exit}
     a && substr($0, 31, 3) == ":  " {n = split(substr($0, 1, 30), f, " "); split(substr($0, 34), m, " ")
        print f[n], m[1]}' "$tmp/leaf.txt" >"$tmp/leaf.insns"
check "fixture_leaf: instructions listed" [ -s "$tmp/leaf.insns" ]
if command -v objdump >/dev/null; then
        # objdump's AT&T mnemonics leave out the size suffix where the operands say it
        # (mov, not movl); capstone writes it: compare without it
        # address, mnemonic and first operand (a prefix such as cs or notrack: the next word)
        objdump -d --no-show-raw-insn "$run/$ann" |
                awk '/^[0-9a-f]+ <fixture_leaf>:$/ {a = 1; next} a && /^$/ {exit}
                     a && /^ +[0-9a-f]+:\t/ {sub(":", "", $1); i = 2
                        while ($i ~ /^(cs|ds|es|ss|data16|notrack|bnd|lock)$/) i++
                        print $1, $i, $(i + 1)}' >"$tmp/objdump.insns"
        nr=$(wc -l <"$tmp/leaf.insns")
        check "fixture_leaf: same addresses as objdump -d" \
                diff <(cut -d' ' -f1 "$tmp/leaf.insns") <(head -n "$nr" "$tmp/objdump.insns" | cut -d' ' -f1)
        # objdump's AT&T mnemonics leave out the size suffix where the operands give the size
        # (mov, not movl); capstone always writes it
        check "fixture_leaf: same mnemonics as objdump -d (size suffixes aside)" \
                awk 'NR == FNR {m[FNR] = $2; next}
                     {o = $2; c = m[FNR]; if (c != o && !(substr(c, 1, length(c) - 1) == o && c ~ /[bwlq]$/)) {
                        print "differ at " $1 ": " c " vs objdump " o; bad = 1}}
                     END {exit bad}' "$tmp/leaf.insns" <(head -n "$nr" "$tmp/objdump.insns")
        # the loop: from the target of its backward branch to the branch
        loop=$(awk '$2 ~ /^j/ && $3 ~ /^[0-9a-f]+$/ {print $3, $1}' "$tmp/objdump.insns" |
                while read -r to from; do
                        if [ $((0x$to)) -lt $((0x$from)) ]; then
                                echo "$to $from"
                                break
                        fi
                done)
        # LBR: a trace whose records take the loop's backward branch shows it on the branch and
        # on its target (etl_fixture --lbr-image: the file mapped whole, offsets as addresses)
        if [ -n "${ETL_FIXTURE:-}" ] && [ -n "$loop" ]; then
                set -- $loop
                to_v=$((0x$1)) from_v=$((0x$2))
                off_of() { # a file-vaddr -> its file offset, by the LOAD segment holding it
                        readelf -lW "$run/$ann" | awk '$1 == "LOAD" {print $2, $3, $6}' |
                                while read -r o v z; do
                                        if [ "$1" -ge $((v)) ] && [ "$1" -lt $((v + z)) ]; then
                                                printf '%x\n' $(($1 - v + o))
                                                break
                                        fi
                                done
                }
                "$ETL_FIXTURE" --lbr-image "$run/$ann" "$tmp/lbr.etl" \
                        "$(off_of $from_v):$(off_of $to_v):20" >/dev/null 2>&1
                "$ETWTOP" --replay "$tmp/lbr.etl" -b --annotate fixture_leaf >"$tmp/lbr.txt" 2>&1
                check "LBR: the loop's branch taken 20 times, to its target" \
                        awk -v a="$(printf '%x' $from_v)" -v t="$(printf '%x' $to_v)" '
                        !/LBR:/ {for (i = 1; i <= 3; i++) if ($i ~ /^[0-9a-f]+:$/) {cur = $i; sub(":", "", cur)}}
                        /LBR: taken 20 times to / && cur == a {ok = 1}
                        END {exit ok ? 0 : 1}' "$tmp/lbr.txt"
                check "LBR: its target reached 20 times from the branch" \
                        grep -q "LBR: reached 20 times from $ann!fixture_leaf+0x" "$tmp/lbr.txt"
        fi
        hot=$(awk '/<-- hottest$/ {print substr($0, 1, 30); exit}' "$tmp/leaf.txt" | awk '{print $NF}')
        check "fixture_leaf: the hottest instruction (${hot:-none}) is inside the loop (${loop:-none})" \
                bash -c "[ -n '$loop' ] && [ -n '$hot' ] && set -- $loop && [ \$((0x$hot)) -ge \$((0x\$1)) ] && [ \$((0x$hot)) -le \$((0x\$2)) ]"
else
        skip "no objdump: the disassembly is not compared"
fi
sum=$(awk '/^Annotate fixture_leaf/ {a = 1; next} a && /Hottest lines/ {exit}
           a && /^ +[0-9]+\.[0-9][0-9] +[0-9]+ +[0-9a-f]+:  / {s += $1} END {printf "%.2f", s}' "$tmp/leaf.txt")
check "fixture_leaf: the instructions' percentages sum to 100 ($sum)" \
        awk -v s="$sum" 'BEGIN {exit !(s >= 99.5 && s <= 100.5)}'
check "fixture_leaf: the backward branch names its target" \
        grep -Eq ':  j[a-z]+ +0x[0-9a-f]+ <fixture_leaf\+0x[0-9a-f]+>$' "$tmp/leaf.txt"
check "fixture_leaf: the load of fixture_sink names it" grep -q '# 0x[0-9a-f]* <fixture_sink>' "$tmp/leaf.txt"
# the loop's lines, as numbered in the source
body=$(grep -n 'y = y \* 1103515245 + 12345 + fixture_sink;' "$source_file" | cut -d: -f1)
for_line=$((body - 1))
check "fixture_leaf: its source line $body above its instructions" \
        grep -q "^ \{33\}sym_fixture\.c:$body  y = y \* 1103515245 + 12345 + fixture_sink;" "$tmp/leaf.txt"
top=$(awk '/Hottest lines of fixture_leaf/ {getline; getline; print $3; exit}' "$tmp/leaf.txt")
check "fixture_leaf: its hottest line is one of the loop's ($top: tests/fixtures/sym_fixture.c:$for_line or :$body)" \
        bash -c "[[ '$top' == */tests/fixtures/sym_fixture.c:$for_line || '$top' == */tests/fixtures/sym_fixture.c:$body ]]"
check "fixture_leaf: the hottest line marked" grep -q "sym_fixture\.c:\($for_line\|$body\) .*<-- hottest line$" "$tmp/leaf.txt"
unset -f on_fail

# module!function, and the inline frames of fixture_inline_outer
"$ETWTOP" --replay "$tmp/fix.etl" -b --annotate "$ann!fixture_inline_outer" >"$tmp/outer.txt" 2>"$tmp/outer.err"
rc=$?
if grep -q 'no sampled function' "$tmp/outer.err"; then
        skip "fixture_inline_outer has no samples in this recording"
else
        check "module!function: exits 0" [ $rc = 0 ]
        check "module!function: annotated" grep -q "^Annotate fixture_inline_outer in $ann (" "$tmp/outer.txt"
        check "inline frames named" \
                grep -q 'sym_fixture\.c:[0-9]* (in inl_inner, inlined from inl_mid at sym_fixture\.c:[0-9]*, from fixture_inline_outer at sym_fixture\.c:[0-9]*)' "$tmp/outer.txt"
fi

# 2. a function not in the trace
"$ETWTOP" --replay "$tmp/fix.etl" -b --annotate no_such_function_here >"$tmp/none.txt" 2>"$tmp/none.err"
check "no such function: exit status 1" [ $? = 1 ]
check "no such function: says so ($(head -c 300 "$tmp/none.err"))" \
        grep -q 'annotate no_such_function_here: no sampled function has that name' "$tmp/none.err"
check "no such function: the report is still printed" grep -q '^Hot functions' "$tmp/none.txt"

# 3. the binary replaced by another ELF file: its names are refused, and so its code (the
# recording is system-wide: another program that ran meanwhile, its file gone since, may be
# named in the same line before it)
cp "$(type -P true)" "$run/$ann"
# (named with its module: another process that ran the fixture's functions meanwhile, another
# suite's, has a fixture_leaf of its own, which the name alone would annotate)
"$ETWTOP" --replay "$tmp/fix.etl" -b --annotate "$ann!fixture_leaf" >"$tmp/chg.txt" 2>"$tmp/chg.err"
check "another build: exit status 1" [ $? = 1 ]
check "another build: says why in one line ($(tail -1 "$tmp/chg.err" | head -c 400))" \
        grep -q "annotate $ann!fixture_leaf: no sampled function has that name;\(.*;\)\? no names from $ann: .*$ann changed since the recording: its build-id is [0-9a-f]\{40\}, the recording's [0-9a-f]\{40\}" "$tmp/chg.err"
check "another build: no instructions" bash -c "! grep -q '^Annotate' '$tmp/chg.txt'"
rm "$run/$ann"
"$ETWTOP" --replay "$tmp/fix.etl" -b --annotate "$ann!fixture_leaf" >"$tmp/gone.txt" 2>"$tmp/gone.err"
check "gone: exit status 1" [ $? = 1 ]
check "gone: says the file is missing ($(tail -1 "$tmp/gone.err" | head -c 300))" \
        grep -q "annotate $ann!fixture_leaf: no sampled function has that name;\(.*;\)\? no names from $ann: .*$ann: not found" "$tmp/gone.err"
check "gone: no instructions" bash -c "! grep -q '^Annotate' '$tmp/gone.txt'"

echo "$nr_pass passed, $nr_fail failed, $nr_skip skipped"
[ $nr_fail = 0 ]
