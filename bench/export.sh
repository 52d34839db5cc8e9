#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# export.sh: the export benchmark: `etwtop --replay FILE --export pprof` (replay, symbols and
# the gzip'd profile) against `perf report --stdio` on a perf.data with as many samples.
#
# Usage: bench/export.sh [BUILD_DIR [FILE.etl]]   (defaults: ./build and the PerfView sample
# BUILD_DIR/samples/net.4.5.2.x64.etl; builds nothing: build etwtop first)
#
# Measures, mean of $BENCH_RUNS (default 10) wall-clock runs each after a warm-up run:
#   (a) etwtop --replay FILE --export pprof -o OUT --force;
#   (b) perf report -i perf.data --stdio > /dev/null, on a perf.data recorded once on this
#       machine (perf record -e cpu-clock -F 4000 -g -- a busy loop per CPU) with about as many
#       samples as FILE's timer samples (--replay -b's count), cached in
#       BUILD_DIR/bench/export-perf.data (delete it and export-perf.count to record again);
# and prints samples/s of each and the ratio. Needs bash, awk, perf.
set -euo pipefail
export LC_ALL=C

die() {
        echo "export.sh: $*" >&2
        exit 1
}

build=${1:-./build}
[ -d "$build" ] || die "no build directory: $build"
build=$(cd "$build" && pwd)
etwtop=$build/src/etwtop
[ -x "$etwtop" ] || die "$etwtop not built (cmake --build $build --target etwtop)"
etl=${2:-$build/samples/net.4.5.2.x64.etl}
[ -f "$etl" ] || die "no $etl (configure the build with its tests to unpack the samples)"
command -v perf >/dev/null || die "perf not found (apt-get install linux-perf)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

runs=${BENCH_RUNS:-10}
mean_of_runs() {
        local t0 t1 i sum=0
        "$@" >/dev/null 2>&1 || die "failed: $*"
        for ((i = 0; i < runs; i++)); do
                t0=$EPOCHREALTIME
                "$@" >/dev/null 2>&1 || die "failed: $*"
                t1=$EPOCHREALTIME
                sum=$(awk -v s="$sum" -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", s + b - a }')
        done
        awk -v s="$sum" -v n="$runs" 'BEGIN { printf "%.6f", s / n }'
}

# the trace's timer samples, as --replay -b counts them (what the export writes)
samples=$("$etwtop" --replay "$etl" -b --top 1 2>/dev/null |
        sed -n 's/^Hot functions (Timer, \([0-9]*\) samples.*/\1/p')
[ -n "$samples" ] && [ "$samples" -gt 0 ] || die "$etl has no timer samples"

perf_data=$build/bench/export-perf.data
perf_count=$build/bench/export-perf.count
freq=4000
ncpu=$(nproc)
mkdir -p "$build/bench"

count_samples() {
        perf script -i "$1" -F tid 2>/dev/null | wc -l
}

# perf record of a busy loop per CPU (the command's children are recorded with it)
record_perf_data() {
        local seconds=$1
        perf record -q -e cpu-clock -F "$freq" -g -o "$perf_data.tmp" -- \
                bash -c 'for ((i = 0; i < $1; i++)); do
                        timeout "$2" awk "BEGIN { while (1) x++ }" & done; wait' _ "$ncpu" "$seconds" \
                >/dev/null 2>&1 || die "perf record failed"
}

if [ ! -f "$perf_data" ] || [ ! -f "$perf_count" ]; then
        echo "recording $perf_data (~$samples samples, once) ..." >&2
        seconds=$(awk -v n="$samples" -v f="$freq" -v c="$ncpu" 'BEGIN { printf "%.1f", n / (f * c) }')
        for _ in 1 2 3; do
                record_perf_data "$seconds"
                n=$(count_samples "$perf_data.tmp")
                echo "  ${seconds}s: $n samples" >&2
                if awk -v n="$n" -v t="$samples" 'BEGIN { d = n / t - 1; exit !(d < 0.05 && d > -0.05) }'; then
                        break
                fi
                [ "$n" -gt 0 ] || die "perf record wrote no samples"
                seconds=$(awk -v s="$seconds" -v n="$n" -v t="$samples" 'BEGIN { printf "%.1f", s * t / n }')
        done
        mv "$perf_data.tmp" "$perf_data"
        echo "$n" >"$perf_count"
fi
perf_samples=$(cat "$perf_count")

echo "measuring (mean of $runs wall-clock runs each) ..." >&2
t_export=$(mean_of_runs "$etwtop" --replay "$etl" --export pprof -o "$tmp/out.pb.gz" --force)
t_perf=$(mean_of_runs perf report -i "$perf_data" --stdio)
out_bytes=$(stat -c %s "$tmp/out.pb.gz")

awk -v etl="$etl" -v perf_data="$perf_data" -v samples="$samples" -v perf_samples="$perf_samples" \
        -v t_export="$t_export" -v t_perf="$t_perf" -v runs="$runs" -v out_bytes="$out_bytes" '
BEGIN {
        printf "export benchmark: %s (%d timer samples)\n", etl, samples
        printf "              vs: %s (%d samples with call chains, cpu-clock)\n", perf_data,
               perf_samples
        printf "wall time, mean of %d runs\n\n", runs
        printf "%-44s %8s %9s %12s\n", "tool", "samples", "seconds", "samples/s"
        printf "%-44s %8d %9.4f %12.0f\n", "etwtop --replay --export pprof", samples, t_export,
               samples / t_export
        printf "%-44s %8d %9.4f %12.0f\n", "perf report --stdio", perf_samples, t_perf,
               perf_samples / t_perf
        printf "\nratio (samples/s, etwtop / perf report): %.2fx\n",
               (samples / t_export) / (perf_samples / t_perf)
        printf "the profile written: %.1f KB gzip'\''d\n", out_bytes / 1024
}'
