#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# pgo_export.sh: `--export bolt` and `--export profgen`, the profiles of the optimizers, from
#   the shared LBR recordings (propeller_sample_1, perf_b) and from perf.data files written for
#   a run of tests/fixtures/pgo_prog.c (tests/lib/pgo_mkperf.py: no machine of ours has LBR).
#   bolt: the taken branches perf2bolt finds in the same file, edge for edge and count for
#   count (perf2bolt adds the fall-throughs it finds by disassembling); llvm-bolt-16 -data
#   applies it and the optimized program prints what the original prints; without LBR, the
#   no_lbr lines perf2bolt -nl writes. profgen: llvm-profgen-14 makes the same profile from it
#   as from `perf script -F ip,brstack --show-mmap-events` of the file. Each tool's checks are
#   skipped, with a message, where it is missing (Debian: bolt-16, llvm-14, linux-perf).
set -u
: "${ETWTOP:?}" "${ETWTOP_SAMPLES:?}"
tmp=$(mktemp -d)
cleanup() { if [ -n "${KEEP_TMP:-}" ]; then echo "kept $tmp" >&2; else rm -rf "$tmp"; fi; }
trap cleanup EXIT
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/lib/check.sh"
S=$ETWTOP_SAMPLES/perf

have() { command -v "$1" >/dev/null 2>&1; }
PERF2BOLT=/usr/lib/llvm-16/bin/perf2bolt # Debian's perf2bolt-16 is a link llvm-bolt does not
# take for perf2bolt (it goes by its own name): the one under llvm-16/bin does
BOLT=llvm-bolt-16
PROFGEN=llvm-profgen-14
PROFDATA=llvm-profdata-14
has_bolt=0 has_perf2bolt=0 has_profgen=0 has_perf=0
have $BOLT && has_bolt=1
[ -x $PERF2BOLT ] && has_perf2bolt=1
have $PROFGEN && have $PROFDATA && has_profgen=1
have perf && perf version >/dev/null 2>&1 && has_perf=1
[ $has_bolt = 1 ] || skip "$BOLT missing (apt-get install bolt-16): the profiles are not applied"
[ $has_perf2bolt = 1 ] || skip "$PERF2BOLT missing: no comparison with perf2bolt"
[ $has_profgen = 1 ] || skip "$PROFGEN or $PROFDATA missing (llvm-14): profgen not compared"
[ $has_perf = 1 ] || skip "perf missing (linux-perf): profgen not compared with perf script"

# taken FDATA: fdata's branch lines, sorted (a no_lbr header aside)

# frames rel|abs SCRIPT: the call-stack lines of a perf script text ("\t%16x") as perf 6.1
# prints a user frame (rel: its offset in its mapping's file, address - start + pgoff, for a
# frame in a mapping the text showed), or back at its address (abs: the one mapping its offset
# falls in; a text of one mapping); the rest as it is.
# frames same PERF OURS: whether the texts (MMAP lines aside, flags aside) are the same, a frame
# of ours printed by perf at its address or relative to a mapping (the text does not say
# whose process a sample is, perf finds the process's own)
frames() {
        "$PY" - "$@" <<'PY'
import re, sys
mode, maps = sys.argv[1], []
if mode == 'same':
    def text(path):
        return [re.sub(r'/[PM-]/-/-/[0-9]+/ *', ' ', l).rstrip() for l in open(path)
                if not l.startswith('PERF_RECORD_MMAP')]
    mm = re.compile(r'^PERF_RECORD_MMAP2? \d+/\d+: \[0x([0-9a-f]+)\(0x([0-9a-f]+)\) @ (0x[0-9a-f]+|0)')
    for line in open(sys.argv[3]):
        m = mm.match(line)
        if m:
            maps.append((int(m.group(1), 16), int(m.group(2), 16), int(m.group(3), 16)))
    theirs, ours = text(sys.argv[2]), text(sys.argv[3])
    if len(theirs) != len(ours):
        sys.exit('%d lines, ours %d' % (len(theirs), len(ours)))
    for n, (t, o) in enumerate(zip(theirs, ours)):
        if t == o:
            continue
        if t.startswith('\t') and o.startswith('\t'):
            a, want = int(o.strip(), 16), int(t.strip(), 16)
            if any(s <= a < s + z and a - s + p == want for s, z, p in maps):
                continue
        sys.exit('line %d: %r, ours %r' % (n + 1, t, o))
    sys.exit(0)
mm = re.compile(r'^PERF_RECORD_MMAP2? \d+/\d+: \[0x([0-9a-f]+)\(0x([0-9a-f]+)\) @ (0x[0-9a-f]+|0)')
for line in open(sys.argv[2]):
    m = mm.match(line)
    if m:
        maps.append((int(m.group(1), 16), int(m.group(2), 16), int(m.group(3), 16)))
    elif line.startswith('\t') and len(line.strip()) <= 16:
        a = int(line.strip(), 16)
        for start, size, pgoff in reversed(maps):
            if mode == 'rel' and start <= a < start + size and a < 1 << 47:
                a = a - start + pgoff
                break
            if mode == 'abs' and pgoff <= a < pgoff + size:
                a = a - pgoff + start
                break
        line = '\t%16x\n' % a
    sys.stdout.write(line)
PY
}
lines() { grep -v '^no_lbr' "$1" | sort; }

# ---- the shared recordings ----
# perf.data.callgraph_and_branch: call stacks and LBR (perf record -g -b -a): profgen-cs writes
# what perf script prints of its 923 samples (their binaries are not here: no profile made)
cg=$S/perf.data.callgraph_and_branch-3.4
if [ -f "$cg" ]; then
        "$ETWTOP" --replay "$cg" --export profgen-cs -o "$tmp/cg.script" 2>"$tmp/cg.err"
        check "callgraph_and_branch: --export profgen-cs succeeds" [ $? = 0 ]
        check "callgraph_and_branch: its 923 samples" [ "$(grep -c '^ 0x' "$tmp/cg.script")" = 923 ]
        check "callgraph_and_branch: ... each with its stack (none said to lack it)" \
                [ ! -s "$tmp/cg.err" ]
        if [ $has_perf = 1 ]; then
                perf script -F ip,brstack --show-mmap-events -i "$cg" >"$tmp/cg.perf" 2>/dev/null
                check "callgraph_and_branch: profgen-cs's text is perf script's (flags aside)" \
                        frames same "$tmp/cg.perf" "$tmp/cg.script"
        fi
fi
# propeller_sample_1: its binary was recorded as propeller_sample_1.bin.gen, with perf's
# BUILD_ID feature padding lld's 8-byte build-id to 20 bytes
if [ -f "$S/propeller_sample_1.perfdata1" ] && [ -f "$S/propeller_sample_1.bin" ]; then
        mkdir -p "$tmp/p1"
        cp "$S/propeller_sample_1.bin" "$tmp/p1/propeller_sample_1.bin.gen"
        "$ETWTOP" --replay "$S/propeller_sample_1.perfdata1" --export bolt -o "$tmp/p1.fdata" \
                --symbol-path "$tmp/p1" 2>"$tmp/p1.err"
        check "propeller: --export bolt succeeds" [ $? = 0 ]
        check "propeller: the edges of the binary's functions (the padded build-id matches)" \
                grep -q '^1 main 47 1 compute_flag 0 0 [0-9]' "$tmp/p1.fdata"
        # a --symbol-path relative to the working directory: the same (the binary's symbols
        # came from "p1/propeller_sample_1.bin.gen", a path all the same)
        (cd "$tmp" && "$ETWTOP" --replay "$S/propeller_sample_1.perfdata1" --export bolt \
                -o p1.rel.fdata --symbol-path p1 2>/dev/null)
        check "propeller: --symbol-path DIR relative: the same profile" \
                cmp -s "$tmp/p1.fdata" "$tmp/p1.rel.fdata"
        # perf2bolt-16 finds no function of this binary (its text at file offset 0x740, vaddr
        # 0x1740: the base it takes from the mapping is off by a page); the edges are checked
        # against the LBR records themselves: main+0x47 -> compute_flag is the call at
        # 0x5629ec742967 (vaddr 0x1967 = main 0x1920 + 0x47) to 0x5629ec7428d0
        n_call=$("$ETWTOP" --dump "$S/propeller_sample_1.perfdata1" 2>/dev/null |
                grep -o '0x5629ec742967->0x5629ec7428d0' | wc -l)
        check "propeller: the call's count is the LBR records'" \
                grep -q "^1 main 47 1 compute_flag 0 0 $n_call\$" "$tmp/p1.fdata"
        if [ $has_bolt = 1 ]; then
                $BOLT "$tmp/p1/propeller_sample_1.bin.gen" -o "$tmp/p1.bolt" \
                        -data="$tmp/p1.fdata" -reorder-blocks=ext-tsp >"$tmp/p1.bolt.log" 2>&1
                check "propeller: llvm-bolt applies the profile" \
                        grep -q 'BOLT-INFO: [1-9][0-9]* out of .* functions .* have non-empty execution profile' \
                        "$tmp/p1.bolt.log"
        fi
        "$ETWTOP" --replay "$S/propeller_sample_1.perfdata1" --export profgen -o "$tmp/p1.script" \
                2>"$tmp/p1.err"
        check "propeller: --export profgen succeeds" [ $? = 0 ]
        # the converter sorted samples by the field after their TIME: the mappings came last
        first=$(grep -n -m1 '^PERF_RECORD_MMAP2 .*propeller_sample_1.bin.gen$' "$tmp/p1.script" | cut -d: -f1)
        sample=$(grep -n -m1 ' 0x5629ec7' "$tmp/p1.script" | cut -d: -f1)
        mapped_first() { [ -n "$first" ] && [ -n "$sample" ] && [ "$first" -lt "$sample" ]; }
        check "propeller: the binary's mapping before its first branches" mapped_first
        check "propeller: one line per sample" [ "$(grep -vc '^PERF_RECORD' "$tmp/p1.script")" = 3740 ]
        if [ $has_profgen = 1 ] && [ $has_perf = 1 ]; then
                perf script -F ip,brstack --show-mmap-events -i "$S/propeller_sample_1.perfdata1" \
                        >"$tmp/p1.perf" 2>/dev/null
                # llvm-profgen-14 names no function of this binary (its base, as perf2bolt's):
                # the unsymbolized profile (ranges and branches with their counts) is compared
                for s in p1.script p1.perf; do
                        (cd "$tmp/p1" && $PROFGEN --binary=propeller_sample_1.bin.gen \
                                --perfscript="$tmp/$s" --skip-symbolization --output="$tmp/$s.up" \
                                >/dev/null 2>&1)
                done
                check "propeller: llvm-profgen's profile of it is perf script's" \
                        cmp -s "$tmp/p1.script.up" "$tmp/p1.perf.up"
                check "propeller: ... and holds branches" [ -s "$tmp/p1.perf.up" ]
        fi
else
        skip "propeller_sample_1 not in $S"
fi

if [ -f "$S/perf_b.data" ] && [ -f "$S/perf_b.elf" ]; then
        mkdir -p "$tmp/b"
        cp "$S/perf_b.elf" "$tmp/b/elf" # recorded as /elf
        "$ETWTOP" --replay "$S/perf_b.data" --export bolt -o "$tmp/b.fdata" \
                --symbol-path "$tmp/b" 2>"$tmp/b.err"
        check "perf_b: --export bolt succeeds" [ $? = 0 ]
        check "perf_b: CalledFunc's return into GlobalFunc" \
                grep -q '^1 CalledFunc 14 1 GlobalFunc 16 0 [1-9]' "$tmp/b.fdata"
        "$ETWTOP" --replay "$S/perf_b.data" --export bolt --binary libc-2.19.so \
                -o "$tmp/b.libc.fdata" 2>"$tmp/b.libc.err"
        check "perf_b: --binary of a binary no branch touches: refused" [ $? != 0 ]
        check "perf_b: ... with the binaries it could be" grep -q '/elf' "$tmp/b.libc.err"
        check "perf_b: ... and no file left" [ ! -e "$tmp/b.libc.fdata" ]
        "$ETWTOP" --replay "$S/perf_b.data" --export bolt -o "$tmp/b.nosym.fdata" 2>"$tmp/b.nosym.err"
        check "perf_b: the binary not found: refused" [ $? != 0 ]
        check "perf_b: ... saying what to give" grep -q 'no symbols of /elf .*--symbol-path' "$tmp/b.nosym.err"
        check "perf_b: ... and no file left" [ ! -e "$tmp/b.nosym.fdata" ]
        "$ETWTOP" --replay "$S/perf_b.data" --export bolt --binary /elf -o "$tmp/b2.fdata" \
                --symbol-path "$tmp/b" 2>/dev/null
        check "perf_b: --binary /elf: the same profile" cmp -s "$tmp/b.fdata" "$tmp/b2.fdata"
        if [ $has_bolt = 1 ]; then
                $BOLT "$tmp/b/elf" -o "$tmp/b.bolt" -data="$tmp/b.fdata" >"$tmp/b.bolt.log" 2>&1
                check "perf_b: llvm-bolt applies the profile" \
                        grep -q 'BOLT-INFO: [1-9][0-9]* out of .* functions .* have non-empty execution profile' \
                        "$tmp/b.bolt.log"
        fi
        "$ETWTOP" --replay "$S/perf_b.data" --export profgen -o "$tmp/b.script" 2>/dev/null
        check "perf_b: --export profgen succeeds" [ $? = 0 ]
        if [ $has_profgen = 1 ] && [ $has_perf = 1 ]; then
                perf script -F ip,brstack --show-mmap-events -i "$S/perf_b.data" \
                        >"$tmp/b.perf" 2>/dev/null
                for s in b.script b.perf; do
                        (cd "$tmp/b" && $PROFGEN --binary=elf --perfscript="$tmp/$s" \
                                --skip-symbolization --output="$tmp/$s.up" >/dev/null 2>&1)
                done
                check "perf_b: llvm-profgen's profile of it is perf script's" \
                        cmp -s "$tmp/b.script.up" "$tmp/b.perf.up"
                check "perf_b: ... and holds branches" [ -s "$tmp/b.perf.up" ]
        fi
else
        skip "perf_b not in $S"
fi

# ---- a program built here, its LBR recording written by pgo_mkperf.py ----
if have clang-14 && have objdump && [ -n "$PY" ]; then
        prog=$tmp/pgo_prog
        clang-14 -O2 -g -fno-pie -no-pie -Wl,--emit-relocs "$here/fixtures/pgo_prog.c" -o "$prog"
        "$PY" "$here/lib/pgo_mkperf.py" "$prog" "$tmp/lbr.data" lbr &&
                "$PY" "$here/lib/pgo_mkperf.py" "$prog" "$tmp/nolbr.data" nolbr
        check "pgo_prog: its perf.data files written" [ $? = 0 ]
        "$ETWTOP" --replay "$tmp/lbr.data" --export bolt -o "$tmp/prog.fdata" 2>/dev/null
        check "pgo_prog: --export bolt succeeds" [ $? = 0 ]
        check "pgo_prog: the call of work, a static function: work/1" grep -q '^1 loop a 1 work/1 0 0 [1-9]' "$tmp/prog.fdata"
        if [ $has_perf2bolt = 1 ] && [ $has_perf = 1 ]; then
                (cd "$tmp" && $PERF2BOLT -p "$tmp/lbr.data" -o "$tmp/prog.p2b" "$prog" \
                        >"$tmp/p2b.log" 2>&1)
                # perf2bolt's lines are ours and the fall-throughs it adds (mispredictions 0,
                # forward in one function)
                lines "$tmp/prog.fdata" >"$tmp/ours"
                lines "$tmp/prog.p2b" >"$tmp/theirs"
                check "pgo_prog: perf2bolt wrote branches" [ -s "$tmp/theirs" ]
                check "pgo_prog: every edge and count of ours is perf2bolt's" \
                        [ -z "$(comm -23 "$tmp/ours" "$tmp/theirs")" ]
                only_fallthroughs() {
                        local a fn from b tn to mis n
                        while read -r a fn from b tn to mis n; do
                                [ "$fn" = "$tn" ] && [ "$mis" = 0 ] &&
                                        [ $((16#$to)) -gt $((16#$from)) ] || return 1
                        done < <(comm -13 "$tmp/ours" "$tmp/theirs")
                }
                check "pgo_prog: perf2bolt's others are fall-throughs" only_fallthroughs
                "$ETWTOP" --replay "$tmp/nolbr.data" --export bolt -o "$tmp/nolbr.fdata" 2>/dev/null
                check "pgo_prog: without LBR, --export bolt writes no_lbr" \
                        grep -q '^no_lbr ' "$tmp/nolbr.fdata"
                (cd "$tmp" && $PERF2BOLT -nl -p "$tmp/nolbr.data" -o "$tmp/nolbr.p2b" "$prog" \
                        >/dev/null 2>&1)
                check "pgo_prog: its samples are perf2bolt -nl's" \
                        cmp -s <(lines "$tmp/nolbr.fdata") <(lines "$tmp/nolbr.p2b")
        fi
        if [ $has_bolt = 1 ]; then
                for f in prog nolbr; do
                        $BOLT "$prog" -o "$tmp/$f.bolt" -data="$tmp/$f.fdata" \
                                -reorder-blocks=ext-tsp -reorder-functions=hfsort \
                                >"$tmp/$f.bolt.log" 2>&1
                        check "pgo_prog ($f): llvm-bolt applies the profile" \
                                grep -q 'BOLT-INFO: 2 out of .* functions .* have non-empty execution profile' \
                                "$tmp/$f.bolt.log"
                        check "pgo_prog ($f): the optimized program prints what the original prints" \
                                [ "$("$tmp/$f.bolt" 1000 2>&1)" = "$("$prog" 1000)" ]
                done
        fi
        "$ETWTOP" --replay "$tmp/lbr.data" --export profgen -o "$tmp/prog.script" 2>/dev/null
        check "pgo_prog: --export profgen succeeds" [ $? = 0 ]
        # an .etl with LBR (the one --merge converts the perf.data into): the same profiles
        "$ETWTOP" --merge -o "$tmp/lbr.etl" "$tmp/lbr.data" >/dev/null 2>&1
        "$ETWTOP" --replay "$tmp/lbr.etl" --export bolt -o "$tmp/etl.fdata" 2>/dev/null
        check "pgo_prog: bolt of the .etl made of it: the same" cmp -s "$tmp/etl.fdata" "$tmp/prog.fdata"
        "$ETWTOP" --replay "$tmp/lbr.etl" --export profgen -o "$tmp/etl.script" 2>/dev/null
        check "pgo_prog: profgen of the .etl: the same" cmp -s "$tmp/etl.script" "$tmp/prog.script"
        if [ $has_perf = 1 ]; then
                # perf script's own text, byte for byte: its mappings, each sample's ip and
                # its branches with their flags (the mispredicted back edges: M)
                perf script -F ip,brstack --show-mmap-events -i "$tmp/lbr.data" \
                        >"$tmp/prog.perf.text" 2>/dev/null
                check "pgo_prog: profgen's text is perf script's, flags and all" \
                        cmp -s "$tmp/prog.perf.text" "$tmp/prog.script"
                check "pgo_prog: ... mispredicted branches among them" grep -q '/M/-/-/0/ ' "$tmp/prog.script"
        fi
        "$ETWTOP" --replay "$tmp/nolbr.data" --export profgen -o "$tmp/nolbr.script" \
                2>"$tmp/nolbr.err"
        check "pgo_prog: profgen without LBR: refused" [ $? != 0 ]
        check "pgo_prog: ... saying why" grep -q 'no LBR records' "$tmp/nolbr.err"
        check "pgo_prog: ... and no file left" [ ! -e "$tmp/nolbr.script" ]
        if [ $has_profgen = 1 ] && [ $has_perf = 1 ]; then
                perf script -F ip,brstack --show-mmap-events -i "$tmp/lbr.data" \
                        >"$tmp/prog.perf" 2>/dev/null
                for s in prog.script prog.perf; do
                        $PROFGEN --binary="$prog" --perfscript="$tmp/$s" --format=text \
                                --output="$tmp/$s.prof" >/dev/null 2>&1
                        $PROFDATA show --sample --all-functions "$tmp/$s.prof" >"$tmp/$s.show"
                done
                check "pgo_prog: llvm-profgen names loop and work" \
                        grep -q '^Function: work: [1-9]' "$tmp/prog.perf.show"
                check "pgo_prog: llvm-profgen's profile of it is perf script's, function by function" \
                        cmp -s "$tmp/prog.script.show" "$tmp/prog.perf.show"
        fi
        # profgen-cs: the samples with their call stacks (perf record -g -b), for llvm-profgen's
        # context-sensitive profile (CSSPGO)
        "$PY" "$here/lib/pgo_mkperf.py" "$prog" "$tmp/cs.data" lbr-cs 2000
        "$ETWTOP" --replay "$tmp/cs.data" --export profgen-cs -o "$tmp/cs.script" 2>"$tmp/cs.err"
        check "pgo_prog: --export profgen-cs succeeds" [ $? = 0 ]
        check "pgo_prog: profgen-cs: every sample with its stack" \
                [ "$(grep -c '^$' "$tmp/cs.script")" = "$(grep -c '^ 0x' "$tmp/cs.script")" ]
        check "pgo_prog: profgen-cs: ... none said to lack it" [ ! -s "$tmp/cs.err" ]
        if [ $has_perf = 1 ]; then
                perf script -F ip,brstack --show-mmap-events -i "$tmp/cs.data" \
                        >"$tmp/cs.perf.text" 2>/dev/null
                check "pgo_prog: profgen-cs's text is perf script's (flags aside; perf's user frames file-relative)" \
                        frames same "$tmp/cs.perf.text" "$tmp/cs.script"
        fi
        if [ $has_profgen = 1 ] && [ $has_perf = 1 ]; then
                perf script -F ip,brstack --show-mmap-events -i "$tmp/cs.data" \
                        >"$tmp/cs.perf.raw" 2>/dev/null
                frames abs "$tmp/cs.perf.raw" >"$tmp/cs.perf"
                for s in cs.script cs.perf; do
                        $PROFGEN --binary="$prog" --perfscript="$tmp/$s" --format=text \
                                --output="$tmp/$s.prof" >/dev/null 2>&1
                done
                check "pgo_prog: llvm-profgen's profile of profgen-cs is context-sensitive (loop @ work)" \
                        grep -q '^\[loop:[0-9]* @ work\]:[1-9]' "$tmp/cs.script.prof"
                check "pgo_prog: ... and it is the one of perf script's (its frames at their addresses)" \
                        cmp -s "$tmp/cs.script.prof" "$tmp/cs.perf.prof"
        fi
        # the binary stripped (and no debug file): nothing for BOLT, and no file
        cp "$prog" "$prog.full" && strip -s "$prog"
        "$ETWTOP" --replay "$tmp/lbr.data" --export bolt -o "$tmp/stripped.fdata" 2>"$tmp/stripped.err"
        check "pgo_prog stripped: refused" [ $? != 0 ]
        check "pgo_prog stripped: ... saying why" grep -q 'none of the branches lies in a function' "$tmp/stripped.err"
        check "pgo_prog stripped: ... and no file left" [ ! -e "$tmp/stripped.fdata" ]
        mv "$prog.full" "$prog"
else
        skip "clang-14, objdump or python3 missing: pgo_prog not built"
fi

echo "$nr_pass passed, $nr_fail failed, $nr_skip skipped"
[ $nr_fail = 0 ] || exit 1
[ $nr_pass -gt 0 ] || exit 77
