#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# unwind.sh: DWARF user-stack unwinding (issue 17) against perf's on a busy machine: one
# `unwind_fixture busy` per CPU (built without frame pointers; its hot leaves are callbacks of
# libc's qsort and bsearch, ten frames and more from the thread start), 4 kHz timer samples per
# CPU, 8 KiB of user stack copied per sample, system-wide.
#   live:   `etwtop -b` (--stackwalk-mode dwarf, unwinding as samples arrive) against `perf top
#           --call-graph dwarf --stdio`, the same seconds: CPU seconds (user + system, from
#           /usr/bin/time) and events lost; budget etwtop / perf top <= 0.2.
#   record: `etwtop --record --stackwalk-mode dwarf` (writes the unwound stacks, never the stack
#           copies) against `perf record --call-graph dwarf -a` (writes the copies): file sizes,
#           CPU seconds, events lost; budget etwtop / perf <= 0.1 in size. Then `perf report
#           --stdio` over perf's file, where perf unwinds them: its CPU seconds, and etwtop -b's
#           against perf record's and report's together (perf top 6.1 copies the stacks but
#           shows no caller past the leaf: the script says so, from run_busy's Children%).
# Usage: bench/unwind.sh [BUILD_DIR] [SECONDS] [ROUNDS]   (default ./build, 30 s, 1 round;
#        needs root, perf and the build's tests/unwind_fixture). The tools take turns, who goes
#        first alternating; CPU seconds and lost events are summed over the rounds, file sizes
#        are the last round's.
set -u
build=${1:-./build}
secs=${2:-30}
rounds=${3:-1}
etwtop=$build/src/etwtop
fixture=$build/tests/unwind_fixture
die() { echo "unwind.sh: $*" >&2; exit 1; }
[ -x "$etwtop" ] || die "$etwtop not built"
[ -x "$fixture" ] || die "$fixture not built (the tests' unwind_fixture target)"
command -v perf >/dev/null || die "perf not found (Debian: linux-perf)"
[ -x /usr/bin/time ] || die "/usr/bin/time not found (Debian: time)"
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$tmp"' EXIT
ncpu=$(nproc)
export ETWTOP_NO_HOST=1 # the session in-process: its CPU is etwtop's, a child of time(1)

# the same session for both tools: cpu-clock at 4 kHz (etwtop: 2500 x 100 ns) on every CPU,
# user stacks unwound from 8 KiB copies (etwtop's default and perf's), the process/thread/image
# side band; no context switches
etwtop_session="--set-prof-int 2500 --on PROC_THREAD+LOADER+PROFILE --stackwalk Profile --stackwalk-mode dwarf"
perf_session="-e cpu-clock -F 4000 --call-graph dwarf,8192"
"$etwtop" --record "$tmp/probe.etl" --force --duration 0.2 $etwtop_session 2>"$tmp/probe.err" ||
        die "etwtop --record $etwtop_session fails: $(head -2 "$tmp/probe.err")"

# a spinning fixture per CPU, for the turn's seconds and a margin
load() {
        for ((i = 0; i < ncpu; i++)); do
                "$fixture" busy $((secs + 3)) &
        done
        sleep 1
}
# CPU seconds (user + system) from /usr/bin/time -f "%U %S" (its last line: a command that
# exits non-zero gets a line before it)
cpu_of() { tail -1 "$1" | awk '{printf "%.3f", $1 + $2}'; }
sum() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", a + b}'; }

live_etwtop() {
        load
        /usr/bin/time -f "%U %S" -o "$tmp/le.time" "$etwtop" -b -n "$secs" -d 1 --top 30 \
                $etwtop_session >"$tmp/le.txt" 2>"$tmp/le.err" ||
                die "etwtop -b failed: $(head -2 "$tmp/le.err")"
        wait
}
live_perf() {
        load
        # perf top --stdio reads keys from its stdin (at EOF it loops on its help): a pipe
        # that stays open and silent; SIGINT after the seconds ends it as q would
        /usr/bin/time -f "%U %S" -o "$tmp/lp.time" timeout -s INT "$secs" \
                perf top $perf_session --stdio -d 1 >"$tmp/lp.txt" 2>"$tmp/lp.err" \
                < <(sleep $((secs + 2)))
        [ -s "$tmp/lp.txt" ] || die "perf top printed nothing: $(head -2 "$tmp/lp.err")"
        wait
}
record_etwtop() {
        load
        /usr/bin/time -f "%U %S" -o "$tmp/re.time" "$etwtop" --record "$tmp/e.etl" --force \
                --duration "$secs" $etwtop_session 2>"$tmp/re.err" ||
                die "etwtop --record failed: $(head -2 "$tmp/re.err")"
        wait
}
# perf report over perf record's file: where perf unwinds what it recorded (its default
# report, callers of each function, unwound with its libdw or libunwind)
report_perf() {
        /usr/bin/time -f "%U %S" -o "$tmp/rr.time" perf report -i "$tmp/p.data" --stdio \
                >"$tmp/rr.txt" 2>"$tmp/rr.err" || die "perf report failed: $(head -2 "$tmp/rr.err")"
}
record_perf() {
        rm -f "$tmp/p.data" "$tmp/p.data.old"
        load
        # -B -N: perf 6.1's build-id pass crashes on this kernel (bench/record.sh)
        /usr/bin/time -f "%U %S" -o "$tmp/rp.time" perf record -B -N -o "$tmp/p.data" -a \
                $perf_session -- sleep "$secs" 2>"$tmp/rp.err" ||
                die "perf record failed: $(head -2 "$tmp/rp.err")"
        wait
}

le_cpu=0 lp_cpu=0 re_cpu=0 rp_cpu=0 rr_cpu=0 le_lost=0 lp_lost=0 lp_drop=0 re_lost=0 rp_lost=0
le_samples=0 lp_samples=0
for ((r = 1; r <= rounds; r++)); do
        if ((r % 2)); then
                live_etwtop; live_perf; record_etwtop; record_perf
        else
                live_perf; live_etwtop; record_perf; record_etwtop
        fi
        report_perf
        # etwtop -b's last frame: "... N samples   lost L ..." and its Stack walk line
        le_s=$(grep -o '[0-9]* samples   lost [0-9]*' "$tmp/le.txt" | tail -1)
        le_l=$(awk '{print $4 + 0}' <<<"$le_s")
        le_walk=$(grep 'Stack walk:' "$tmp/le.txt" | tail -1 | sed 's/   .*//')
        # perf top's last header: "lost: L/T drop: D/T"; samples: irqs/sec summed over its frames
        lp_l=$(grep -ao 'lost: [0-9]*/[0-9]*' "$tmp/lp.txt" | tail -1 | sed 's/lost: //; s,/.*,,')
        lp_d=$(grep -ao 'drop: [0-9]*/[0-9]*' "$tmp/lp.txt" | tail -1 | sed 's/drop: //; s,/.*,,')
        lp_n=$(grep -ao 'PerfTop: *[0-9]* irqs/sec' "$tmp/lp.txt" | awk '{n += $2} END {print n + 0}')
        # did perf top unwind? run_busy is on every stack of the fixture: its Children% (the
        # first column, the largest of its frames) is near 100/ncpu when it did, its Self%
        # (about 0) when it did not
        lp_children=$(awk '$NF == "run_busy" && $1 + 0 >= m {m = $1 + 0; f = 1}
                END {if (f) printf "%.2f%%", m; else print "absent"}' "$tmp/lp.txt")
        # etwtop --record: the last progress line's "L lost", and the header's count
        re_l=$("$etwtop" --dump --totals "$tmp/e.etl" | awk '/^Events lost:/ {n = $3} END {print n + 0}')
        re_progress=$(grep -o '[0-9]* lost' "$tmp/re.err" | tail -1)
        re_walk=$("$etwtop" --replay "$tmp/e.etl" -b --top 1 2>/dev/null | grep -m1 '^Stack walk:')
        # perf record: LOST records (perf report --stats) and its own "lost" warnings
        rp_l=$(perf report -i "$tmp/p.data" --stats 2>/dev/null | awk '/LOST/ {n += $NF} END {print n + 0}')
        rp_warn=$(grep -i 'lost' "$tmp/rp.err" | head -2 | tr '\n' ' ')
        printf "round %d live: etwtop -b %.3f s CPU, %s lost (%s); perf top %.3f s CPU, lost %s, drop %s, run_busy's Children: %s\n" \
                "$r" "$(cpu_of "$tmp/le.time")" "${le_l:-?}" "${le_s:-no header}" "$(cpu_of "$tmp/lp.time")" \
                "${lp_l:-?}" "${lp_d:-?}" "$lp_children"
        printf "round %d record: etwtop %.3f s CPU, %.2f MB, %s lost (stderr: %s); perf record %.3f s CPU, %.2f MB, %s lost %s; perf report %.3f s CPU\n" \
                "$r" "$(cpu_of "$tmp/re.time")" "$(stat -c %s "$tmp/e.etl" | awk '{print $1 / 1e6}')" "$re_l" \
                "${re_progress:-none}" "$(cpu_of "$tmp/rp.time")" \
                "$(stat -c %s "$tmp/p.data" | awk '{print $1 / 1e6}')" "$rp_l" "${rp_warn:+($rp_warn)}" \
                "$(cpu_of "$tmp/rr.time")"
        echo "round $r: etwtop -b: ${le_walk:-no Stack walk line}; --record: ${re_walk:-no Stack walk line}"
        le_cpu=$(sum "$le_cpu" "$(cpu_of "$tmp/le.time")")
        lp_cpu=$(sum "$lp_cpu" "$(cpu_of "$tmp/lp.time")")
        re_cpu=$(sum "$re_cpu" "$(cpu_of "$tmp/re.time")")
        rp_cpu=$(sum "$rp_cpu" "$(cpu_of "$tmp/rp.time")")
        rr_cpu=$(sum "$rr_cpu" "$(cpu_of "$tmp/rr.time")")
        le_lost=$((le_lost + ${le_l:-0})) lp_lost=$((lp_lost + ${lp_l:-0})) lp_drop=$((lp_drop + ${lp_d:-0}))
        re_lost=$((re_lost + re_l)) rp_lost=$((rp_lost + rp_l))
        le_samples=$((le_samples + $(awk '{print $1 + 0}' <<<"$le_s"))) lp_samples=$((lp_samples + lp_n))
done
e_size=$(stat -c %s "$tmp/e.etl")
p_size=$(stat -c %s "$tmp/p.data")
echo

awk -v secs="$secs" -v rounds="$rounds" -v ncpu="$ncpu" -v le_cpu="$le_cpu" -v lp_cpu="$lp_cpu" \
        -v re_cpu="$re_cpu" -v rp_cpu="$rp_cpu" -v e_size="$e_size" -v p_size="$p_size" \
        -v le_lost="$le_lost" -v lp_lost="$lp_lost" -v lp_drop="$lp_drop" -v re_lost="$re_lost" \
        -v rp_lost="$rp_lost" -v le_samples="$le_samples" -v lp_samples="$lp_samples" \
        -v lp_children="$lp_children" -v rr_cpu="$rr_cpu" 'BEGIN {
        printf "unwind benchmark: %d rounds of %d s per tool, %d CPUs busy (unwind_fixture busy), 4 kHz\n", rounds, secs, ncpu
        printf "cpu-clock samples with user stacks unwound by DWARF from 8 KiB copies (CPU, lost: sums\n"
        printf "over the rounds; file sizes: the last round)\n\n"
        printf "%-18s %10s %12s %10s\n", "tool", "CPU s", "file MB", "lost"
        printf "%-18s %10.3f %12s %10d\n", "etwtop -b", le_cpu, "-", le_lost
        printf "%-18s %10.3f %12s %10s\n", "perf top --stdio", lp_cpu, "-", lp_lost " (+" lp_drop " dropped)"
        printf "%-18s %10.3f %12.2f %10d\n", "etwtop --record", re_cpu, e_size / 1e6, re_lost
        printf "%-18s %10.3f %12.2f %10d\n", "perf record", rp_cpu, p_size / 1e6, rp_lost
        printf "%-18s %10.3f %12s %10s\n", "perf report", rr_cpu, "-", "-"
        live = lp_cpu > 0 ? le_cpu / lp_cpu : 0
        rec = rp_cpu > 0 ? re_cpu / rp_cpu : 0
        size = p_size > 0 ? e_size / p_size : 0
        printf "\n%-36s %8s %8s %s\n", "ratio", "value", "target", "result"
        printf "%-36s %7.3fx %8s %s\n", "live CPU: etwtop -b / perf top", live, "<= 0.2x", live <= 0.2 ? "PASS" : "MISS"
        printf "%-36s %7.3fx %8s %s\n", "file size: etwtop / perf record", size, "<= 0.1x", size <= 0.1 ? "PASS" : "MISS"
        printf "%-36s %7.3fx %8s\n", "record CPU: etwtop / perf record", rec, "-"
        unwound = rp_cpu + rr_cpu > 0 ? le_cpu / (rp_cpu + rr_cpu) : 0
        printf "%-36s %7.3fx %8s\n", "etwtop -b / perf record + report", unwound, "-"
        printf "\nsamples the screens counted: etwtop -b %d, perf top %d (its irqs/sec summed over its frames)\n", le_samples, lp_samples
        if (lp_children + 0 < 10)
                printf "perf top did not unwind past the leaves: run_busy, on every stack of the fixture, is\n%s on its last screen (Children%%); its CPU is for copying and reading the stacks, not\nfor unwinding them: the last ratio sets etwtop -b against perf unwinding the same stacks\n", lp_children == "absent" ? "absent" : "at " lp_children
        printf "perf record unwinds nothing while it records: it copies the stacks into its file, and\n"
        printf "perf report unwinds them later (the last row); etwtop --record unwinds as it records.\n"
}'
