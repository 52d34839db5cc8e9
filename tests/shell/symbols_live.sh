#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# symbols_live.sh: the live view (`etwtop -b`, the screen's frames as text) names the libc code
# of processes that start after the session did, and shows C++ names demangled. Such a process execs on one CPU and its loader
# maps libc.so.6 on another, and a live session's buffers come one CPU after another, not in
# time order: the store must not let the exec that comes late drop the mappings made after it.
# The workloads are started through a shell pinned to one CPU, execing on the other, several
# times, so that both orders of the CPUs' buffers occur.
set -u
: "${ETWTOP:?}" "${SYM_FIXTURE:?}"
tmp=$(mktemp -d)
pids=()
cleanup() {
        for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
        rm -rf "$tmp"
}
trap cleanup EXIT
. "$(dirname "$0")/../lib/check.sh"

if ! "$ETWTOP" --record "$tmp/probe.etl" --duration 0.2 --on PROC_THREAD 2>"$tmp/probe.err"; then
        skip "etwtop --record cannot run here: $(cat "$tmp/probe.err")"
        echo "$nr_pass passed, $nr_fail failed, $nr_skip skipped"
        exit 0
fi
nr_cpus=$(nproc 2>/dev/null || echo 1)
has_taskset=false
if [ "$nr_cpus" -ge 2 ] && command -v taskset >/dev/null; then
        has_taskset=true
else
        skip "one CPU (or no taskset): no exec across CPUs, the order cannot be wrong here"
fi

# a C++ program, where a C++ compiler is
cxx=""
for c in "${CXX:-}" c++ g++ clang++; do
        if [ -n "$c" ] && command -v "$c" >/dev/null; then
                cxx=$c
                break
        fi
done
has_cxx=false
if [ -z "$cxx" ]; then
        skip "no C++ compiler (c++, g++, clang++): C++ names not checked live"
elif "$cxx" -O1 -g -o "$tmp/sym_cxx" "$(dirname "$0")/../fixtures/sym_cxx.cpp" 2>"$tmp/cxx.err"; then
        has_cxx=true
else
        check "C++ fixture builds with $cxx: $(head -3 "$tmp/cxx.err")" false
fi

# Frames 1 s apart; the workloads start after the first frame, and the frame checked is the
# second to begin after they have all ended (more than a flush, 1 s, after): waiting for frames,
# not for a number of seconds, keeps the test right on a busy machine. --top 5000: every
# function sampled (the machine's own, on a busy one, could push the workloads' past 60 rows).
"$ETWTOP" -b -n 1000 -d 1 --top 5000 >"$tmp/live.txt" 2>"$tmp/live.err" &
live=$!
pids+=("$live")
nr_frames() { frames_begun "$tmp/live.txt" '^Hot functions'; }
wait_frames "$tmp/live.txt" '^Hot functions' 1 "$live"
work=()
if $has_cxx; then
        "$tmp/sym_cxx" spin 4500 &
        work+=($!)
fi
run=0
for from in 1 0 1 0; do
        to=$((1 - from))
        # a shell on one CPU starts the fixture on the other (taskset execs it in place: the
        # pid written is the fixture's)
        if $has_taskset; then
                taskset -c "$from" bash -c 'taskset -c "$1" "$2" libc 2500 & echo $! >"$3"; wait' \
                        _ "$to" "$SYM_FIXTURE" "$tmp/pid.$run" &
        else
                bash -c '"$1" libc 2500 & echo $! >"$2"; wait' _ "$SYM_FIXTURE" "$tmp/pid.$run" &
        fi
        pids+=($!)
        work+=($!)
        # where its libc code is, while it runs (it runs 2.5 s), once taskset has exec'd it
        fixture=$(readlink -f "$SYM_FIXTURE")
        for _ in $(seq 200); do
                p=$(cat "$tmp/pid.$run" 2>/dev/null)
                [ -n "$p" ] && [ "$(readlink "/proc/$p/exe" 2>/dev/null)" = "$fixture" ] && break
                sleep 0.05
        done
        # where its libc code is, while it runs
        p=$(cat "$tmp/pid.$run" 2>/dev/null)
        [ -n "$p" ] && awk '$2 ~ /x/ && $NF ~ /libc\.so\.6$/ {print $1}' "/proc/$p/maps" \
                >>"$tmp/libc_ranges" 2>/dev/null
        run=$((run + 1))
        sleep 0.8
done
wait "${work[@]}"
first=$(($(nr_frames) + 2))
wait_frames "$tmp/live.txt" '^Hot functions' $((first + 1)) "$live"
check "live: etwtop -b still runs after frame $first" kill -0 "$live"
kill -INT "$live"
wait "$live"
check "live: etwtop -b exits 0 on SIGINT" [ $? = 0 ]

# the hot functions of the frame checked
awk -v want="$first" '/^Hot functions/ {n++; next} n == want && /^Hot modules/ {exit}
     n == want {print}' "$tmp/live.txt" >"$tmp/last.txt"
memfrob=$(awk '$5 == "libc.so.6" && $6 == "memfrob" {print $3; exit}' "$tmp/last.txt")
on_fail() {
        echo "the last frame:"
        head -30 "$tmp/last.txt"
}
check "live: libc's memfrob named in the processes started after the session" \
        [ "${memfrob:-0}" -gt 50 ]
# an [unknown] frame inside one of the fixtures' libc mappings: libc code left unnamed
unnamed=0
if [ -s "$tmp/libc_ranges" ]; then
        while read -r count addr; do
                a=$((addr))
                while IFS=- read -r lo hi; do
                        if [ "$a" -ge $((16#$lo)) ] && [ "$a" -lt $((16#$hi)) ]; then
                                unnamed=$((unnamed + count))
                                break
                        fi
                done <"$tmp/libc_ranges"
        done < <(awk '$5 == "[unknown]" && $6 ~ /^0x[0-9a-f]+$/ {print $3, $6}' "$tmp/last.txt")
else
        skip "the fixtures' libc mappings were not read"
fi
on_fail() {
        echo "memfrob: ${memfrob:-none}, unnamed libc samples: $unnamed, in:"
        cat "$tmp/libc_ranges"
        grep -E 'libc\.so\.6|\[unknown\]' "$tmp/last.txt" | head -20
}
check "live: no libc frame of theirs left [unknown] ($unnamed samples)" [ "$unnamed" -le 2 ]
unset -f on_fail

if $has_cxx; then
        on_fail() {
                echo "the last frame:"
                head -30 "$tmp/last.txt"
                # what the symbol loader said of the program (a failed load, a changed file)
                echo "etwtop's messages of sym_cxx:"
                grep -i 'sym_cxx' "$tmp/live.err" | head -5
                ls -l "$tmp/sym_cxx"
        }
        check "live: C++ function demangled" \
                grep -qE 'sym_cxx +bitmap_set_bit\(bitmap_head\*, int\)$' "$tmp/last.txt"
        check "live: C++ template demangled" \
                grep -qE 'sym_cxx +fixture::Box<long>::twice\(long\)$' "$tmp/last.txt"
        check "live: no mangled name of the C++ program" \
                bash -c "! grep -E 'sym_cxx +_Z' '$tmp/last.txt'"
        unset -f on_fail
fi

echo "$nr_pass passed, $nr_fail failed, $nr_skip skipped"
[ $nr_fail = 0 ]
