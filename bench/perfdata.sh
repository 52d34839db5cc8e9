#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# perfdata.sh: reading a perf.data to a symbolized table, etwtop against perf: `etwtop --replay
# FILE -b` (the file converted through the live source's converter, replayed into the model,
# the hot functions named) and `perf report --stdio -i FILE`, side by side on the same file:
# wall clock and CPU time (user + system, perf stat's task-clock) of the whole process, the run
# with the least CPU of N; prints both and the ratios (target: etwtop at least 5x faster).
#
#   bench/perfdata.sh [-n RUNS] [-r SECONDS] [FILE...]
#
# With no FILE: the largest perf.data of $ETWTOP_SAMPLES/perf (default ../shared/samples beside the repository),
# and one recorded here for -r SECONDS (default 30): `perf record -F 20000 -g -e cpu-clock -a`
# of `xz -T2` compressing zeros, kept in $PERFDATA_DIR (default /tmp) and reused when it is there.
set -u
here=$(cd "$(dirname "$0")" && pwd)
etwtop=${ETWTOP:-$here/../build-gcc/src/etwtop}
runs=1 seconds=30
while getopts n:r: o; do
        case $o in
        n) runs=$OPTARG ;;
        r) seconds=$OPTARG ;;
        *) echo "usage: $0 [-n RUNS] [-r SECONDS] [FILE...]" >&2; exit 2 ;;
        esac
done
shift $((OPTIND - 1))
die() { echo "perfdata.sh: $*" >&2; exit 1; }
[ -x "$etwtop" ] || die "no etwtop at $etwtop (build it, or set ETWTOP)"
command -v perf >/dev/null || die "perf is not installed"

files=("$@")
if [ ${#files[@]} = 0 ]; then
        samples=${ETWTOP_SAMPLES:-$(cd "$(dirname "$0")/../.." && pwd)/shared/samples}/perf
        largest=$(ls -S "$samples"/*data* 2>/dev/null | while read -r f; do
                [ "$(head -c 8 "$f" | tr -d '\0')" = PERFILE2 ] && echo "$f"; done | head -1)
        [ -n "$largest" ] && files+=("$largest")
        rec=${PERFDATA_DIR:-/tmp}/etwtop-bench-perfdata.data
        if [ ! -s "$rec" ]; then
                echo "recording $rec: perf record -F 20000 -g -e cpu-clock -a, ${seconds} s of xz -T2" >&2
                # --no-buildid: perf 6.1 aborts collecting build-ids on this VM (build-id.c:1010)
                perf record -q -F 20000 -g -e cpu-clock --no-buildid -a -o "$rec.tmp" -- \
                        timeout "$seconds" sh -c 'head -c 8G /dev/zero | xz -6 -T2 >/dev/null' \
                        >/dev/null 2>&1
                [ -s "$rec.tmp" ] || die "perf record failed"
                mv "$rec.tmp" "$rec"
        fi
        files+=("$rec")
fi

# best COMMAND...: "wall cpu" milliseconds of the run with the least CPU time of $runs runs,
# as perf stat counts them (duration_time; task-clock: every thread's CPU, user and system, to
# the microsecond: bash's time has 1 ms steps, a tenth of a small file's run); CPU time is what
# a loaded machine does not inflate
best() {
        local b="" bw="" out w c
        for _ in $(seq "$runs"); do
                out=$(perf stat -x, -e task-clock,duration_time "$@" 2>&1 >/dev/null)
                c=$(echo "$out" | awk -F, '$3 == "task-clock" {print $1}')
                w=$(echo "$out" | awk -F, '$3 == "duration_time" {printf "%.3f", $1 / 1e6}')
                [ -n "$c" ] && [ -n "$w" ] || continue
                if [ -z "$b" ] || [ "$(echo "$c < $b" | bc)" = 1 ]; then b=$c bw=$w; fi
        done
        echo "${bw:-0} ${b:-0}"
}

echo "(milliseconds; the run with the least CPU of $runs; ratios perf / etwtop)"
printf '%-30s %7s %9s | %9s %9s | %9s %9s | %6s %6s\n' file MB samples etw_wall etw_cpu \
        perf_wall perf_cpu wall_x cpu_x
for f in "${files[@]}"; do
        [ -f "$f" ] || { echo "perfdata.sh: no $f" >&2; continue; }
        mb=$(awk -v b="$(stat -c %s "$f")" 'BEGIN { printf "%.1f", b / 1e6 }')
        nr=$(perf report -D -i "$f" 2>/dev/null | awk '/^ *SAMPLE events:/ {print $3; exit}')
        # the recording must hold at least 1 M samples (the issue's measure): say so otherwise
        [ "$f" = "${rec:-}" ] && [ "${nr:-0}" -lt 1000000 ] &&
                echo "perfdata.sh: $f has ${nr:-no} samples, under 1 M: remove it and record longer (-r)" >&2
        # Debian's perf 6.1 aborts in its build-id code (util/build-id.c:1010) on some recordings
        # made on newer kernels (a sealed memfd mapped while recording): no ratio then
        if ! perf report --stdio -i "$f" >/dev/null 2>&1; then
                echo "perfdata.sh: perf report cannot read $(basename "$f") ($(perf report \
                        --stdio -i "$f" 2>&1 >/dev/null | sort -u | head -1)): skipped" >&2
                continue
        fi
        read -r ew ec <<<"$(best "$etwtop" --replay "$f" -b --top 40)"
        read -r pw pc <<<"$(best perf report --stdio -i "$f")"
        printf '%-30s %7s %9s | %9.1f %9.1f | %9.1f %9.1f | %5.1fx %5.1fx\n' "$(basename "$f")" \
                "$mb" "${nr:-?}" "$ew" "$ec" "$pw" "$pc" "$(echo "$pw / $ew" | bc -l)" \
                "$(echo "$pc / $ec" | bc -l)"
done
