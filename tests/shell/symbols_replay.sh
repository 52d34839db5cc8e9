#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# symbols_replay.sh: `etwtop --replay FILE -b` names what was sampled.
#   1. A recording of the symbol fixture (PIE program and shared library) replays with its
#      functions named, on this machine, and after its binaries moved away, through
#      --symbol-path; without the path they degrade to module+offset, never a wrong name.
#   2. The Windows sample traces show module names for their sampled addresses.
#   3. Processes started during a recording: a C++ program's names demangled, the libc code of
#      a program exec'd on another CPU than its shell's named.
set -u
: "${ETWTOP:?}" "${SYM_FIXTURE:?}" "${SYM_FIXLIB:?}"
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../lib/check.sh"
. "$(dirname "$0")/../lib/build_id.sh"
# the self count of a function in a replay's first table (0 when absent)
self_of() { awk -v f="$2" -v m="$3" '/^Hot functions/ {t++} t == 1 && $NF == f && $5 == m {print $3; exit}' "$1"; }
has_row() { awk -v m="$2" -v f="$3" '/^Hot functions/ {t++} t == 1 && $5 == m && $NF == f {n++} END {exit n ? 0 : 1}' "$1"; }

# 2. Windows traces: no privilege needed
net=${ETWTOP_SAMPLES_UNPACKED:-}/net.4.5.2.x64.etl
if [ -f "$net" ]; then
        "$ETWTOP" --replay "$net" -b --top 20 >"$tmp/net.txt" 2>"$tmp/net.err"
        check "windows: replay exits 0" [ $? = 0 ]
        check "windows: ntoskrnl.exe is the top module" \
                bash -c "awk '/^Hot modules/ {t=1; getline; getline; print \$3; exit}' '$tmp/net.txt' | grep -qx ntoskrnl.exe"
        check "windows: module+offset frames" grep -q 'hal\.dll+0x[0-9a-f]*$' "$tmp/net.txt"
        check "windows: clr.dll among the modules" grep -q ' clr\.dll ' "$tmp/net.txt"
        check "windows: PDB name and signature from DbgID" \
                grep -Eq 'ntoskrnl\.exe +PDB ntkrnlmp\.pdb [0-9A-F]{33}' "$tmp/net.txt"
else
        echo "SKIP: $net not unpacked" >&2
        nr_skip=$((nr_skip + 1))
fi
gc=${ETWTOP_SAMPLES_UNPACKED:-}/gcevents/PerfViewData.etl
if [ -f "$gc" ]; then
        "$ETWTOP" --replay "$gc" -b >"$tmp/gc.txt" 2>&1
        check "windows: the gcevents sample replays" [ $? = 0 ]
fi

# 1. A recording of the fixture
if ! "$ETWTOP" --record "$tmp/probe.etl" --duration 0.2 --on PROC_THREAD 2>"$tmp/probe.err"; then
        echo "SKIP: etwtop --record cannot run here: $(cat "$tmp/probe.err")" >&2
        echo "$nr_pass passed, $nr_fail failed, $((nr_skip + 1)) skipped"
        [ $nr_fail = 0 ]
        exit
fi
# the binaries run from a directory that is gone at replay time
run=$tmp/run
mkdir -p "$run" "$tmp/moved"
# a name and a build-id of its own: another sym_fixture running on the machine must not answer
# for it (another suite's copy for this test, under the same name, named its rows after this
# one's had moved; one with the fixture's build-id is one module with it)
fxn=symfix_run_$$
own_copy "$SYM_FIXTURE" "$run/$fxn" || exit 1
cp "$SYM_FIXLIB" "$run/libsymfix.so"
# it spins until the recording is done (however long a loaded machine takes to start it), with
# its library mapped before the session starts
LD_LIBRARY_PATH=$run "$run/$fxn" spin 120000 &
fix=$!
wait_until 60 has_mapped $fix libsymfix.so
"$ETWTOP" --record "$tmp/fix.etl" --duration 2 2>"$tmp/rec.err"
check "fixture: recorded" [ $? = 0 ]
kill $fix
wait $fix 2>/dev/null

# on this machine, binaries in place. --top 5000: every function sampled; on a loaded machine
# the fixture's smaller functions are not among the recording's top 100 (the busy processes'
# are)
"$ETWTOP" --replay "$tmp/fix.etl" -b --top 5000 >"$tmp/here.txt" 2>"$tmp/here.err"
check "fixture: replay exits 0" [ $? = 0 ]
check "fixture: fixture_leaf named in $fxn" has_row "$tmp/here.txt" $fxn fixture_leaf
check "fixture: fixture_inline_outer named" has_row "$tmp/here.txt" $fxn fixture_inline_outer
check "fixture: the library's functions named" \
        bash -c "grep -Eq 'libsymfix\.so +fixlib_(helper|static|work)$' '$tmp/here.txt'"
leaf=$(self_of "$tmp/here.txt" fixture_leaf $fxn)
check "fixture: fixture_leaf has samples" [ "${leaf:-0}" -gt 10 ]
# (on failure: the rows of kernel addresses left unnamed, and the recording's kernel symbols)
# An address outside every recorded symbol's span cannot be named (perf says [unknown]): a
# kernel call chain's stray entry, 0xffffffff00000008 once in CI, is no symbol's
kernel_named() {
        grep -q 'kernel.kallsyms' "$tmp/here.txt" || return 0
        grep -q '\[kernel.kallsyms\] ' "$tmp/here.txt" || return 1
        local lo hi a bad=0
        read -r lo hi < <("$ETWTOP" --dump "$tmp/fix.etl" 2>/dev/null | sed -nE \
                's/.*KernelSymbol addr=0x([0-9a-f]+) size=0x([0-9a-f]+) .*/\1 \2/p' | {
                lo= hi=
                while read -r a sz; do
                        a=$((16#$a)) sz=$((16#$sz))
                        [ -z "$lo" ] || [ "$a" -lt "$lo" ] && lo=$a
                        [ -z "$hi" ] || [ $((a + sz)) -gt "$hi" ] && hi=$((a + sz))
                done
                echo "$lo $hi"
        })
        for a in $(sed -nE 's/.*\[kernel\.kallsyms\]\+0x([0-9a-f]+).*/\1/p' "$tmp/here.txt"); do
                a=$((16#$a))
                if [ -n "$lo" ] && [ "$a" -ge "$lo" ] && [ "$a" -lt "$hi" ]; then
                        bad=1
                fi
        done
        [ "$bad" = 0 ] && return 0
        grep '\[kernel.kallsyms\]+0x' "$tmp/here.txt" | head -5
        echo "KernelSymbol events: $("$ETWTOP" --dump "$tmp/fix.etl" 2>/dev/null | grep -c KernelSymbol)"
        return 1
}
check "fixture: kernel frames named from the recorded kernel symbols" kernel_named

# moved: the run directory is gone, the binaries are on the symbol path
mv "$run/$fxn" "$run/libsymfix.so" "$tmp/moved/"
rmdir "$run"
"$ETWTOP" --replay "$tmp/fix.etl" -b --top 5000 >"$tmp/gone.txt" 2>"$tmp/gone.err"
check "moved, no path: replay exits 0" [ $? = 0 ]
check "moved, no path: no fixture names" bash -c "! grep -Eq '$fxn +fixture_' '$tmp/gone.txt'"
check "moved, no path: module+offset instead" grep -q "$fxn+0x" "$tmp/gone.txt"
check "moved, no path: says the file is missing" grep -q "$fxn: not found" "$tmp/gone.err"
"$ETWTOP" --replay "$tmp/fix.etl" -b --top 5000 --symbol-path "$tmp/moved" >"$tmp/moved.txt" \
        2>"$tmp/moved.err"
check "moved, --symbol-path: replay exits 0" [ $? = 0 ]
check "moved, --symbol-path: fixture_leaf named" has_row "$tmp/moved.txt" $fxn fixture_leaf
check "moved, --symbol-path: the library named" \
        bash -c "grep -Eq 'libsymfix\.so +fixlib_(helper|static|work)$' '$tmp/moved.txt'"
check "moved, --symbol-path: same count as in place" \
        [ "$(self_of "$tmp/moved.txt" fixture_leaf $fxn)" = "$leaf" ]

# changed: another file with the recorded name and path is refused, not misread
printf 'not the recorded program' >"$tmp/moved/$fxn"
"$ETWTOP" --replay "$tmp/fix.etl" -b --top 5000 --symbol-path "$tmp/moved" >"$tmp/chg.txt" \
        2>"$tmp/chg.err"
check "changed: replay exits 0" [ $? = 0 ]
check "changed: no names from the wrong file" bash -c "! grep -Eq '$fxn +fixture_' '$tmp/chg.txt'"
check "changed: module+offset instead" grep -q "$fxn+0x" "$tmp/chg.txt"
# the message the README promises: the file is refused, saying why (a non-ELF has no build-id)
check "changed: the file refused, saying why ($(head -c 300 "$tmp/chg.err"))" \
        grep -q "$fxn changed since the recording: its build-id is missing, the recording's [0-9a-f]\{40\}" "$tmp/chg.err"
# an ELF file of another build (another program under the recorded name)
cp "$(type -P true)" "$tmp/moved/$fxn"
"$ETWTOP" --replay "$tmp/fix.etl" -b --top 5000 --symbol-path "$tmp/moved" >"$tmp/chg2.txt" \
        2>"$tmp/chg2.err"
check "another build: no names from it" bash -c "! grep -Eq '$fxn +fixture_' '$tmp/chg2.txt'"
check "another build: refused with both build-ids ($(head -c 300 "$tmp/chg2.err"))" \
        grep -q "$fxn changed since the recording: its build-id is [0-9a-f]\{40\}, the recording's [0-9a-f]\{40\}" "$tmp/chg2.err"

# 3. started during the recording: C++ names, libc code
cxx=""
for c in "${CXX:-}" c++ g++ clang++; do
        if [ -n "$c" ] && command -v "$c" >/dev/null; then
                cxx=$c
                break
        fi
done
has_cxx=false
if [ -z "$cxx" ]; then
        skip "no C++ compiler (c++, g++, clang++): C++ names not checked in a replay"
elif "$cxx" -O1 -g -o "$tmp/sym_cxx" "$(dirname "$0")/../fixtures/sym_cxx.cpp" 2>"$tmp/cxx.err"; then
        has_cxx=true
else
        check "C++ fixture builds with $cxx: $(head -3 "$tmp/cxx.err")" false
fi
"$ETWTOP" --record "$tmp/late.etl" --duration 3 2>"$tmp/late.err" &
rec=$!
# the programs start once the session runs, and run until it ends
check "late: the recording started" recording_started "$tmp/late.etl" $rec
late=()
if $has_cxx; then
        "$tmp/sym_cxx" spin 120000 &
        late+=($!)
fi
if [ "$(nproc 2>/dev/null || echo 1)" -ge 2 ] && command -v taskset >/dev/null; then
        taskset -c 1 bash -c 'exec taskset -c 0 "$1" libc 120000' _ "$SYM_FIXTURE" &
else
        "$SYM_FIXTURE" libc 120000 &
fi
late+=($!)
wait "$rec"
check "late: recorded" [ $? = 0 ]
kill "${late[@]}" 2>/dev/null
wait
"$ETWTOP" --replay "$tmp/late.etl" -b --top 5000 >"$tmp/late.txt" 2>"$tmp/late.rep.err"
check "late: replay exits 0" [ $? = 0 ]
check "late: libc's memfrob named" grep -qE 'libc\.so\.6 +memfrob$' "$tmp/late.txt"
if $has_cxx; then
        check "late: C++ function demangled" \
                grep -qE 'sym_cxx +bitmap_set_bit\(bitmap_head\*, int\)$' "$tmp/late.txt"
        check "late: C++ template demangled" \
                grep -qE 'sym_cxx +fixture::Box<long>::twice\(long\)$' "$tmp/late.txt"
        check "late: no mangled name of the C++ program" \
                bash -c "! grep -E 'sym_cxx +_Z' '$tmp/late.txt'"
fi

echo "$nr_pass passed, $nr_fail failed, $nr_skip skipped"
[ $nr_fail = 0 ]
