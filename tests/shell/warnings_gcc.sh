#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# warnings_gcc.sh SOURCE_DIR BUILD_DIR SAMPLES_DIR TARGET...: the program and the benchmarks
# (TARGET...: everything they are built from) compile with gcc and its warnings as errors, as the
# Release build without link-time optimization. `./setup.sh test` builds the sanitizer tree,
# tests and all, with clang and -Werror; gcc's warnings are not clang's (format truncation,
# maybe-uninitialized and string overflows at -O3). The compile runs as a test beside the
# others, at the idle scheduling class: the live tests mostly wait on the clock, and the compile
# takes the CPU they leave (tests/README.md, "How long the suite takes"). A second run builds
# only what changed.
set -u
src=${1:?source dir} out=${2:?build dir} samples=${3?samples dir}
shift 3
[ $# -gt 0 ] || { echo "usage: warnings_gcc.sh SOURCE_DIR BUILD_DIR SAMPLES_DIR TARGET..." >&2; exit 2; }
command -v gcc >/dev/null || { echo "SKIP: gcc is not installed"; exit 77; }
jobs=$(nproc 2>/dev/null || echo 2)
idle=()
if command -v chrt >/dev/null && chrt -i 0 true 2>/dev/null; then
        idle=(chrt -i 0)
else
        idle=(nice -n 19)
fi
log=$out.log
generator=()
[ -f "$out/CMakeCache.txt" ] || ! command -v ninja >/dev/null || generator=(-G Ninja)
if ! cmake "${generator[@]}" -S "$src" -B "$out" -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=gcc \
        -DCMAKE_C_FLAGS=-Werror -DETWTOP_LTO=OFF -DETWTOP_FUZZ=OFF -DETWTOP_SANITIZE=OFF \
        ${samples:+-DETWTOP_SAMPLES_DIR="$samples"} >"$log" 2>&1; then
        echo "FAIL: configuring the gcc build in $out:"
        tail -30 "$log"
        exit 1
fi
if ! "${idle[@]}" cmake --build "$out" -j "$jobs" --target "$@" >>"$log" 2>&1; then
        echo "FAIL: gcc -Werror: the warnings and errors (all of it in $log):"
        grep -E -A6 'error|warning' "$log" | head -120
        exit 1
fi
echo "gcc -Werror: $* build clean in $out (${idle[*]})"
