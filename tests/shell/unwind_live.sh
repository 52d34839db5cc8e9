#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# unwind_live.sh: DWARF user-stack unwinding (issue 17) on a live process: the unwind fixture
# built without frame pointers spins in two callbacks that libc calls (unwind_fixture busy:
# main -> run_busy -> sort_round -> qsort -> msort_with_tmp... -> compare_keys, and
# main -> run_busy -> search_round -> bsearch -> compare_probe). etwtop records it at 4 kHz with
# --stackwalk-mode dwarf and its folded export must hold those whole chains, from the thread
# start down; with --stackwalk-mode fp it must not (the check can fail); perf record
# --call-graph dwarf on the same process must find the same caller chains; the live screen's
# batch mode and the replay's `Stack walk:` line must say the stacks were unwound; a copy of the
# fixture deleted while it runs is still unwound and named on the live screen.
# Usage: UNWIND_FIXTURE=path ETWTOP=path tests/shell/unwind_live.sh   (root; exits 77 when etwtop
#        cannot record here)
set -u
: "${ETWTOP:?}" "${UNWIND_FIXTURE:?}"
tmp=$(mktemp -d)
fixture_pid=
cleanup() {
        [ -n "$fixture_pid" ] && kill "$fixture_pid" 2>/dev/null && kill -CONT "$fixture_pid" 2>/dev/null
        rm -rf "$tmp"
}
trap cleanup EXIT
. "$(dirname "$0")/../lib/check.sh"
secs=2 # each recording's (about 8,000 samples at 4 kHz: the checks want 100)

if ! "$ETWTOP" --record "$tmp/probe.etl" --duration 0.2 --on PROC_THREAD 2>"$tmp/probe.err"; then
        skip "etwtop --record cannot run here: $(cat "$tmp/probe.err")"
        echo "$nr_pass passed, $nr_fail failed, $nr_skip skipped"
        exit 77
fi

# One fixture for every part; it outlives them all and is ended at exit.
"$UNWIND_FIXTURE" busy 120 &
fixture_pid=$!
# started once it has mapped its file (a loaded machine takes longer than a fixed 0.3 s to exec it)
wait_until 60 eval "has_mapped $fixture_pid unwind_fixture || ! kill -0 $fixture_pid 2>/dev/null"
kill -0 "$fixture_pid" 2>/dev/null || {
        echo "FAIL: unwind_fixture busy did not start" >&2
        exit 1
}

# The fixture runs only while it is recorded: stopped between (replays, exports, perf script),
# it leaves the CPU to them and to the suite's other tests (it spun through all of this test
# before: a CPU for 50 s on a loaded 2-CPU machine)
fixture_run() { kill -CONT "$fixture_pid" 2>/dev/null; }
fixture_pause() { kill -STOP "$fixture_pid" 2>/dev/null; }

# --stackwalk-mode: the lead's option; a build without it fails every DWARF check, loudly.
has_mode=true
if ! "$ETWTOP" --record "$tmp/mode.etl" --duration 0.2 --on PROC_THREAD+PROFILE \
        --stackwalk Profile --stackwalk-mode dwarf -p "$fixture_pid" 2>"$tmp/mode.err"; then
        has_mode=false
        check "etwtop accepts --stackwalk-mode dwarf: $(head -2 "$tmp/mode.err")" false
fi
fixture_pause

# record MODE OUT: $secs seconds of the fixture at 4 kHz with stacks, unwound by MODE ("" for
# etwtop's default)
record() {
        local rc
        fixture_run
        "$ETWTOP" --record "$2" --duration "$secs" --set-prof-int 2500 \
                --on PROC_THREAD+LOADER+PROFILE --stackwalk Profile ${1:+--stackwalk-mode "$1"} \
                -p "$fixture_pid" 2>"$2.err"
        rc=$?
        fixture_pause
        return $rc
}

# The caller chains of the two comparators, from etwtop's folded export (FILE) or from perf
# script's text (stdin), one "CHAIN<TAB>COUNT" per distinct chain: the functions from the root
# down to the comparator, root first, and frames above it (the kernel's, at an interrupt) cut.
# folded_chains FILE 1 (and perf_chains always) normalize the names to compare the two tools:
# the aliases that name one address (perf: __GI___qsort_r, __libc_start_main@@GLIBC_2.34;
# etwtop: __qsort_r) lose their __GI_ prefix, symbol version and leading underscores, and a
# frame with no symbol (perf: [unknown]; etwtop: 0xADDR or module+0xOFFSET) is [unknown].
chains_awk='
function norm(f) {
        if (!norm_names) return f
        sub(/@.*/, "", f); sub(/^__GI_/, "", f); sub(/^_+/, "", f)
        if (f ~ /^0x[0-9a-f]+$/ || f ~ /\+0x[0-9a-f]+$/ || f == "[unknown]") f = "[unknown]"
        return f
}
# frames fr[1..n], root first, with count c
function add(n, c,   i, s) {
        for (i = 1; i <= n; i++) {
                s = (i > 1 ? s ";" : "") norm(fr[i])
                if (fr[i] == "compare_keys" || fr[i] == "compare_probe") {
                        chains[s] += c
                        return
                }
        }
}
END {for (s in chains) printf "%s\t%d\n", s, chains[s]}'
folded_chains() {
        awk -v norm_names="${2:-0}" '{
                c = $NF; line = $0; sub(/ [0-9]+$/, "", line)
                n = split(line, f, ";")
                for (i = 2; i <= n; i++) fr[i - 1] = f[i]  # f[1]: the process name
                add(n - 1, c)
        }'"$chains_awk" "$1"
}
# perf script -F comm,ip,sym: a sample's header line, then its frames "ADDR SYM", leaf first
perf_chains() {
        awk -v norm_names=1 '
                function flush(   i) {
                        for (i = 1; i <= n; i++) fr[i] = st[n + 1 - i]
                        if (n) add(n, 1)
                        n = 0
                }
                /^[ \t]+[0-9a-f]+ / {sub(/^[ \t]+[0-9a-f]+ /, ""); st[++n] = $0; next}
                {flush()}
                END {flush()}'"$chains_awk"
}

# compare_chains LEAF ETWTOP_CHAINS PERF_CHAINS: the chains of LEAF that break the rule of (c)
# below, "etwtop only" or "perf only"; nothing when they agree
compare_chains() {
        awk -F '\t' -v leaf="$1" '
                {
                        n = split($1, f, ";")
                        if (f[n] != leaf) next
                }
                FNR == NR {e[$1] = $2; et += $2; ne++; next}
                {p[$1] = $2; pt += $2; np++}
                END {
                        for (s in e)
                                if (e[s] >= 0.01 * et && !(s in p))
                                        print "etwtop only (" e[s] " of " et "): " s
                        for (s in p)
                                if (p[s] >= 0.01 * pt && s ~ /^(start;)?libc_start/ && !(s in e))
                                        print "perf only (" p[s] " of " pt "): " s
                        printf "%s: etwtop %d samples in %d chains, perf %d in %d\n", leaf, et, ne, pt, np > "/dev/stderr"
                        if (et < 100 || pt < 100)
                                print "too few samples"
                }' "$2" "$3"
}
# whole LEAF CALLER LIBFN CHAINS_FILE: prints "whole total" for LEAF's chains: the whole ones
# are the thread start (_start, __libc_start_main...), main, run_busy, CALLER, then one or more
# libc frames (named, none of the fixture's functions), the first of them LIBFN, then LEAF
whole() {
        awk -F '\t' -v leaf="$1" -v caller="$2" -v libfn="$3" '
                {
                        n = split($1, f, ";")
                        if (f[n] != leaf) next
                        total += $2
                        i = 1
                        if (f[i] == "_start") i++
                        if (f[i] !~ /libc_start/) next
                        while (f[i] ~ /libc_start/) i++
                        if (f[i] != "main" || f[i + 1] != "run_busy" || f[i + 2] != caller) next
                        i += 3
                        if (i >= n || f[i] !~ libfn) next
                        for (; i < n; i++)
                                if (f[i] ~ /^(0x[0-9a-f]+|\[unknown\]|main|run_busy|sort_round|search_round|compare_keys|compare_probe)$/)
                                        next
                        ok += $2
                }
                END {print ok + 0, total + 0}' "$4"
}
# mostly_whole WHAT FILE LEAF CALLER LIBFN: checks that 90% or more of LEAF's samples have the
# whole chain (perf's own DWARF unwinding gets all of them on this fixture)
mostly_whole() {
        local r
        r=$(whole "$3" "$4" "$5" "$2")
        echo "$1: $3: ${r% *} of ${r#* } samples with the whole chain" >&2
        check "$1: 90% of $3's samples have the chain from the thread start through main, run_busy, $4, $5 (${r% *} of ${r#* })" \
                awk -v ok="${r% *}" -v n="${r#* }" 'BEGIN {exit n >= 100 && ok >= 0.9 * n ? 0 : 1}'
}
# the most frequent chains of a CHAINS_FILE, on a failed check of (a) or (b)
show_chains() {
        echo "its most frequent chains:"
        sort -t "$(printf '\t')" -k2,2nr "$1" | head -8
}

# (a) and (e): a recording unwound by DWARF, its folded export and its replay's Stack walk line
if $has_mode; then
        record dwarf "$tmp/dwarf.etl"
        rc=$?
        check "dwarf: --record exits 0 ($(tail -1 "$tmp/dwarf.etl.err"))" [ $rc = 0 ]
        "$ETWTOP" --replay "$tmp/dwarf.etl" --export folded -o "$tmp/dwarf.folded" 2>"$tmp/dwarf.export.err"
        check "dwarf: folded export ($(cat "$tmp/dwarf.export.err"))" [ -s "$tmp/dwarf.folded" ]
        folded_chains "$tmp/dwarf.folded" >"$tmp/dwarf.chains"
        on_fail() { show_chains "$tmp/dwarf.chains"; }
        mostly_whole "dwarf" "$tmp/dwarf.chains" compare_keys sort_round qsort
        mostly_whole "dwarf" "$tmp/dwarf.chains" compare_probe search_round bsearch
        unset -f on_fail

        "$ETWTOP" --replay "$tmp/dwarf.etl" -b --top 100000 >"$tmp/dwarf.txt" 2>&1
        samples=$(awk '/^Samples with stacks:/ {print $4}' "$tmp/dwarf.txt")
        walk=$(grep -m1 '^Stack walk:' "$tmp/dwarf.txt")
        echo "dwarf: replay: $samples samples with stacks; ${walk:-no Stack walk line}" >&2
        # "Stack walk: dwarf, 8192-byte stack copies: N user stacks unwound: W to the thread
        # start, C cut (stack end E, no CFI F)", without the cut when none was
        w_n=$(sed -nE 's/.* ([0-9]+) user stacks unwound.*/\1/p' <<<"$walk")
        w_whole=$(sed -nE 's/.* ([0-9]+) to the thread start.*/\1/p' <<<"$walk")
        w_cut=$(sed -nE 's/.* ([0-9]+) cut.*/\1/p' <<<"$walk")
        w_cut=${w_cut:-0}
        # each function's Total% at most 100, and libc's recursive merge sort not over the
        # qsort that calls it (counted once per stack, whatever its call sites); every row, as
        # in (d) below: sort_round has few samples of its own
        on_fail() {
                echo "the replay's hot functions:"
                awk '/^Hot functions/ {t = 1} /^$/ {t = 0} t' "$tmp/dwarf.txt" | head -30
        }
        check "dwarf: replay -b: no Total% over 100%, msort's total at most sort_round's" \
                awk '/^Hot functions/ {t = 1; next} /^$/ {t = 0}
                     t && $2 ~ /%$/ {if ($2 + 0 > 100.0) bad = 1
                                     if ($6 ~ /^msort_with_tmp/) m = $4; if ($6 == "sort_round") r = $4}
                     END {exit !bad && m > 0 && m <= r ? 0 : 1}' "$tmp/dwarf.txt"
        # the same rows, every replay: libc's names load while the replay counts (the busy
        # fixture holds both CPUs); a module settled between asking for a name and asking
        # whether its names are settled once left a place unnamed for good, its function
        # counted twice on a stack (2 replays in 40 on this machine)
        hot_rows() { awk '/^Hot functions/ {t = 1} /^$/ {t = 0} t' "$1"; }
        hot_rows "$tmp/dwarf.txt" >"$tmp/dwarf.rows"
        nr_same=0
        for i in 1 2 3 4 5 6 7 8; do
                "$ETWTOP" --replay "$tmp/dwarf.etl" -b --top 100000 >"$tmp/again.txt" 2>&1
                if hot_rows "$tmp/again.txt" | cmp -s - "$tmp/dwarf.rows"; then
                        nr_same=$((nr_same + 1))
                else
                        hot_rows "$tmp/again.txt" | diff "$tmp/dwarf.rows" - | head -8 >&2
                fi
        done
        check "dwarf: replay -b: 8 more replays give the same hot functions ($nr_same did)" [ $nr_same = 8 ]
        unset -f on_fail
        check "dwarf: replay -b says 'Stack walk: dwarf, 8192-byte stack copies: ...'" \
                grep -Eq '^Stack walk: dwarf, 8192-byte stack copies: ' <<<"$walk"
        check "dwarf: replay -b: a user stack unwound for 90% of the samples (${w_n:-?} of ${samples:-?})" \
                awk -v n="${w_n:-0}" -v s="${samples:-0}" 'BEGIN {exit s >= 100 && n >= 0.9 * s ? 0 : 1}'
        check "dwarf: replay -b: 95% of them to the thread start, 5% or fewer cut (${w_whole:-?} whole, ${w_cut:-?} cut)" \
                awk -v n="${w_n:-0}" -v w="${w_whole:-0}" -v c="${w_cut:-0}" \
                'BEGIN {exit n > 0 && w >= 0.95 * n && c <= 0.05 * n ? 0 : 1}'
fi

# (b) the same with frame pointers: the fixture has none (nor has libc), so the kernel's chains
# stop at the leaf: the checks above must fail here, or they prove nothing
record "$($has_mode && echo fp)" "$tmp/fp.etl"
rc=$?
check "fp: --record exits 0 ($(tail -1 "$tmp/fp.etl.err"))" [ $rc = 0 ]
"$ETWTOP" --replay "$tmp/fp.etl" --export folded -o "$tmp/fp.folded" 2>/dev/null
folded_chains "$tmp/fp.folded" >"$tmp/fp.chains"
on_fail() { show_chains "$tmp/fp.chains"; }
for leaf in "compare_keys sort_round qsort" "compare_probe search_round bsearch"; do
        set -- $leaf
        r=$(whole "$1" "$2" "$3" "$tmp/fp.chains")
        echo "fp: $1: ${r% *} of ${r#* } samples with the whole chain" >&2
        check "fp: frame pointers do not give $1's whole chain (${r% *} of ${r#* } samples have it; if most do, the DWARF check proves nothing)" \
                awk -v ok="${r% *}" -v n="${r#* }" 'BEGIN {exit n >= 100 && ok < 0.5 * n ? 0 : 1}'
done
unset -f on_fail

# (c) perf record --call-graph dwarf on the same process: the same caller chains. Both tools
# sample the same loop at different instants, so a chain that one of them saw a few times may
# be missing from the other by chance; one that holds 1% or more of a tool's samples of its
# comparator (80 of about 8000 for compare_keys in 3 s) is missed by the other, which takes as
# many, with a probability near (1 - 0.01)^8000 = e^-80.
# Hence: every chain with 1% of etwtop's samples must be among perf's chains, and every chain
# with 1% of perf's that reaches the thread start among etwtop's. perf's chains that stop short
# are perf's failures (its unwinder gives up), which etwtop need not repeat; etwtop's that
# stop short count against it, as they are not among perf's. The chains keep msort_with_tmp's
# recursion: its depth, 1 to 10 levels for 1024 keys, must be the same in both.
if ! command -v perf >/dev/null; then
        skip "perf not found: etwtop's chains not compared with perf's"
elif ! $has_mode; then
        skip "no --stackwalk-mode: etwtop's DWARF chains not compared with perf's"
elif ! fixture_run || ! perf record -q -e cpu-clock -F 4000 --call-graph dwarf -p "$fixture_pid" \
        -o "$tmp/perf.data" -- sleep "$secs" 2>"$tmp/perf.err"; then
        fixture_pause
        skip "perf record --call-graph dwarf failed: $(head -2 "$tmp/perf.err")"
else
        fixture_pause
        perf script -i "$tmp/perf.data" --no-inline -F comm,ip,sym 2>/dev/null | perf_chains \
                >"$tmp/perf.chains"
        folded_chains "$tmp/dwarf.folded" 1 >"$tmp/dwarf.norm.chains"
        for leaf in compare_keys compare_probe; do
                compare_chains "$leaf" "$tmp/dwarf.norm.chains" "$tmp/perf.chains" >"$tmp/diff.$leaf"
                on_fail() { head -20 "$tmp/diff.$leaf"; }
                check "perf: $leaf's caller chains with 1% of the samples are the same in etwtop and perf" \
                        [ ! -s "$tmp/diff.$leaf" ]
                unset -f on_fail
        done
fi

# (d) live: the screen's batch mode over the running fixture. Its hot functions have no
# callers, but their Total column counts the samples a function is on the stack of: with the
# stacks unwound, sort_round and a qsort frame hold compare_keys's samples, search_round and
# bsearch compare_probe's, main nearly all; with frame pointers they hold none of them. Every
# row: main and run_busy have no samples of their own, so they come after every function that
# has some, and on a busy machine the kernel's functions met in the fixture's context (softirqs,
# RCU callbacks run on its time) numbered more than 60 (a CI run on an AMD VM, stop 91).
if $has_mode; then
        fixture_run
        "$ETWTOP" -b -n 4 -d 1 --top 100000 -p "$fixture_pid" --set-prof-int 2500 --stackwalk Profile \
                --stackwalk-mode dwarf >"$tmp/live.txt" 2>"$tmp/live.err"
        rc=$?
        fixture_pause
        check "live: etwtop -b --stackwalk-mode dwarf exits 0 ($(head -1 "$tmp/live.err"))" [ $rc = 0 ]
        # the last frame: its header and its hot functions
        awk '/^etwtop - live/ {delete rows; k = 0; h = $0} /Stack walk:/ {w = $0}
             /^Hot functions/ {t = 1; next} /^$/ {t = 0} t {rows[k++] = $0}
             END {print h; print w; for (i = 0; i < k; i++) print rows[i]}' "$tmp/live.txt" \
                >"$tmp/last.txt"
        # self|total FUNCTION (regex): the largest of the rows whose function matches (libc's
        # qsort, a wrapper, may have a row of its own beside __qsort_r's)
        col() {
                awk -v c="$1" -v fn="$2" 'NR > 2 && $6 ~ "^(" fn ")$" {v = c == "self" ? $3 : $4; if (v + 0 > m + 0) m = v}
                        END {if (m != "") print m}' "$tmp/last.txt"
        }
        samples=$(sed -nE '1s/.* ([0-9]+) samples .*/\1/p' "$tmp/last.txt")
        keys=$(col self compare_keys) probe=$(col self compare_probe)
        echo "live: last frame: ${samples:-?} samples; compare_keys ${keys:-?}, compare_probe ${probe:-?} self;" \
                "totals: main $(col total main), run_busy $(col total run_busy), sort_round $(col total sort_round)," \
                "qsort $(col total '(__GI_)?(__)?qsort(_r)?'), search_round $(col total search_round), bsearch $(col total bsearch)" >&2
        on_fail() { head -24 "$tmp/last.txt"; }
        # at_least A B: A >= 0.9 B, B a fair number of samples
        at_least() { awk -v a="${1:-0}" -v b="${2:-0}" 'BEGIN {exit b >= 100 && a >= 0.9 * b ? 0 : 1}'; }
        check "live: main is on 90% of the stacks" at_least "$(col total main)" "$samples"
        check "live: run_busy is on 90% of the stacks" at_least "$(col total run_busy)" "$samples"
        check "live: sort_round under compare_keys's samples" at_least "$(col total sort_round)" "$keys"
        check "live: qsort under compare_keys's samples" at_least "$(col total '(__GI_)?(__)?qsort(_r)?')" "$keys"
        check "live: search_round under compare_probe's samples" at_least "$(col total search_round)" "$probe"
        check "live: bsearch under compare_probe's samples" at_least "$(col total bsearch)" "$probe"
        # a function is counted once per stack however often it recurses: libc's merge sort
        # calls itself from two call sites, and its places are many on one stack
        msort=$(col total 'msort_with_tmp.*')
        check "live: no function's total is over the samples, msort's not over qsort's (msort ${msort:-?})" \
                awk -v m="${msort:-0}" -v q="$(col total '(__GI_)?(__)?qsort(_r)?')" -v s="${samples:-0}" \
                'NR > 2 && $4 + 0 > s + 0 {bad = 1} END {exit !bad && m > 0 && m <= q ? 0 : 1}' "$tmp/last.txt"
        check "live: the header says 'Stack walk: dwarf ...' with stacks unwound" \
                grep -Eq 'Stack walk: dwarf, [0-9]+-byte stack copies: [1-9][0-9]* user stacks unwound' \
                "$tmp/last.txt"
        unset -f on_fail
fi

# (f) a program whose file is gone since it started (a package upgrade replaces files under
# running programs; their mappings say "(deleted)"): the live screen still unwinds and names it,
# through /proc/PID/map_files
if $has_mode; then
        cp "$UNWIND_FIXTURE" "$tmp/gone_fixture"
        "$tmp/gone_fixture" busy 20 &
        gone_pid=$!
        # removed once it runs from it (removed before its exec, it never started)
        wait_until 60 eval "has_mapped $gone_pid gone_fixture || ! kill -0 $gone_pid 2>/dev/null"
        rm -f "$tmp/gone_fixture"
        # every row, as in (d): run_busy has no samples of its own
        "$ETWTOP" -b -n 3 -d 1 --top 100000 -p "$gone_pid" --set-prof-int 2500 --stackwalk Profile \
                --stackwalk-mode dwarf >"$tmp/gone.txt" 2>"$tmp/gone.err"
        kill "$gone_pid" 2>/dev/null
        awk '/^etwtop - live/ {delete rows; k = 0; h = $0} /^Hot functions/ {t = 1; next} /^$/ {t = 0}
             t {rows[k++] = $0} END {print h; for (i = 0; i < k; i++) print rows[i]}' "$tmp/gone.txt" \
                >"$tmp/gone.last"
        on_fail() { head -12 "$tmp/gone.last"; cat "$tmp/gone.err"; }
        samples=$(sed -nE '1s/.* ([0-9]+) samples .*/\1/p' "$tmp/gone.last")
        run_total=$(awk '/gone_fixture \(deleted\)/ && $NF == "run_busy" {print $4; exit}' "$tmp/gone.last")
        check "deleted file: its module shown as '(deleted)', its functions named (compare_keys)" \
                grep -Eq 'gone_fixture \(deleted\) +compare_keys' "$tmp/gone.last"
        check "deleted file: run_busy on 90% of the stacks (${run_total:-none} of ${samples:-?})" \
                awk -v a="${run_total:-0}" -v b="${samples:-0}" 'BEGIN {exit b >= 100 && a >= 0.9 * b ? 0 : 1}'
        unset -f on_fail
fi

# (g) etwtop's default, auto: the samples' stacks unwound (whole chains without asking), the
# context switches' left to the kernel's chain (a stack copy per switch overflows the kernel's
# buffers at a hundred thousand switches a second). A second busy fixture, not traced, takes the
# CPUs from the first: its threads switch out where they run, with user registers to walk. With
# dwarf the same recording walks more stacks than it has samples: the check can fail.
if $has_mode; then
        "$UNWIND_FIXTURE" busy $((secs * 2 + 4)) &
        hog_pid=$!
        # record_walks MODE OUT: a recording with stacks on samples and switches; prints "WALKED
        # SAMPLES", the user stacks walked (by DWARF or kept frame-pointer chains) and the samples
        record_walks() {
                fixture_run
                "$ETWTOP" --record "$2" --duration "$secs" --set-prof-int 2500 \
                        --on PROC_THREAD+LOADER+PROFILE+CSWITCH+DISPATCHER \
                        --stackwalk Profile+CSwitch+ReadyThread ${1:+--stackwalk-mode "$1"} \
                        -p "$fixture_pid" 2>"$2.err"
                fixture_pause
                "$ETWTOP" --replay "$2" -b --top 5 >"$2.txt" 2>&1
                awk '/^Stack walk:/ {
                                if (match($0, /[0-9]+ user stacks unwound/)) w += substr($0, RSTART, RLENGTH) + 0
                                if (match($0, /[0-9]+ by frame pointers/)) w += substr($0, RSTART, RLENGTH) + 0
                        }
                        /^Samples with stacks:/ {s = $4}
                        END {print w + 0, s + 0}' "$2.txt"
        }
        r=$(record_walks "" "$tmp/auto.etl")
        check "default: the replay says 'Stack walk: auto, ...' ($(grep -m1 '^Stack walk:' "$tmp/auto.etl.txt"))" \
                grep -Eq '^Stack walk: auto, 8192-byte stack copies: [1-9]' "$tmp/auto.etl.txt"
        check "default: the samples' stacks walked, no switch's (${r% *} walked, ${r#* } samples)" \
                awk -v w="${r% *}" -v s="${r#* }" 'BEGIN {exit s >= 100 && w >= 0.9 * s && w <= s ? 0 : 1}'
        "$ETWTOP" --replay "$tmp/auto.etl" --export folded -o "$tmp/auto.folded" 2>/dev/null
        folded_chains "$tmp/auto.folded" >"$tmp/auto.chains"
        on_fail() { show_chains "$tmp/auto.chains"; }
        mostly_whole "default" "$tmp/auto.chains" compare_keys sort_round qsort
        unset -f on_fail
        r=$(record_walks dwarf "$tmp/dwarf_all.etl")
        echo "dwarf, stacks on switches too: ${r% *} stacks walked, ${r#* } samples" >&2
        check "dwarf: the switches' stacks walked too (${r% *} walked, ${r#* } samples)" \
                awk -v w="${r% *}" -v s="${r#* }" 'BEGIN {exit s >= 100 && w > s ? 0 : 1}'
        kill "$hog_pid" 2>/dev/null
fi

# (h) the live screen keeps up: every CPU busy, sampled at 8 kHz with stacks walked by frame
# pointers (small records: a ring's watermark, a quarter of it, takes seconds to reach), the
# frames count the samples as they come, nproc x 8190 a second (cpu-clock samples idle CPUs
# too). A flush that drained 4096 records a second showed about that many a frame, then the rest
# in one burst when a watermark woke the logger, seconds late. The median frame: the frames and
# the flushes, both a second apart, beat (a frame may get two flushes' samples, the next none).
hogs=()
for ((i = 0; i < $(nproc); i++)); do
        "$UNWIND_FIXTURE" busy 12 &
        hogs+=($!)
done
"$ETWTOP" -b -n 7 -d 1 --top 1 --set-prof-int 1221 --on PROC_THREAD+LOADER+PROFILE \
        --stackwalk Profile $($has_mode && echo --stackwalk-mode fp) >"$tmp/steady.txt" 2>&1
kill "${hogs[@]}" 2>/dev/null
# each frame's new samples, the first two left out (the start's rundown and the first second)
deltas=$(awk '/^etwtop - live/ {n = $0; sub(/ samples.*/, "", n); sub(/.* /, "", n)
                              if (k++ >= 2) printf "%d ", n - last; last = n}' "$tmp/steady.txt")
echo "live, 8 kHz: each frame's new samples: ${deltas:-none}" >&2
check "live: the frames keep up with $(nproc) x 8190 samples a second (each frame's: ${deltas:-none})" \
        awk -v d="$deltas" -v want="$(($(nproc) * 8190))" 'BEGIN {
                n = split(d, v, " "); if (n < 4) exit 1
                for (i = 1; i <= n; i++) s[i] = v[i] + 0
                for (i = 2; i <= n; i++)
                        for (j = i; j > 1 && s[j - 1] > s[j]; j--) {t = s[j]; s[j] = s[j - 1]; s[j - 1] = t}
                exit s[int((n + 1) / 2)] >= 0.6 * want ? 0 : 1
        }'

# -b alone prints one frame a second in: the session is flushed for it, so it has that second's
# samples (it had none when the frame came before the FlushTimer's first tick). The flush
# finishes the start's rundown (the samples wait until its records are written) and the frame
# waits until it has read every buffer the flush delivered: on a loaded machine, where the
# rundown took seconds, it had 33 of 2,000 samples. What a loaded machine drops (the kernel's
# rings, or the consumer's queue: the header's "lost" and "buffers lost") no frame can show: then
# some samples at least. The timer's samples alone (CSWITCH on a loaded machine is most of the
# events); with --duration and no -n, frames until it ends
"$ETWTOP" -b --top 1 --on PROC_THREAD+LOADER+PROFILE >"$tmp/one.txt" 2>&1
head1=$(grep -m1 '^etwtop - live' "$tmp/one.txt")
one=$(sed -nE 's/.* ([0-9]+) samples .*/\1/p' <<<"$head1")
lost=$(sed -nE 's/.* lost ([0-9]+).*/\1/p' <<<"$head1")
# (at least a tenth of that second's: the old frame had none; under a load of 2 x nproc busy
# loops it had 532 of 2,000, which 30% asked too much of)
want=$(($(nproc) * 100))
[ "${lost:-0}" -gt 0 ] && want=1
check "-b: its one frame has its second's samples (${one:-none}, lost ${lost:-0}; 1 kHz on $(nproc) CPUs: $want at least)" \
        [ "${one:-0}" -ge "$want" ]
"$ETWTOP" -b --duration 3 --top 1 >"$tmp/dur.txt" 2>&1
frames=$(grep -c '^etwtop - live' "$tmp/dur.txt")
check "-b --duration 3: a frame a second until it ends ($frames frames)" [ "$frames" -ge 2 -a "$frames" -le 4 ]

echo "$nr_pass passed, $nr_fail failed, $nr_skip skipped"
[ "$nr_fail" = 0 ]
