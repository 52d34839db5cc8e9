#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# setup.sh: on Debian 12 (as root), installs what etwtop needs, builds it, and runs etwtop's
# main job (`./setup.sh run [etwtop options]`) or every test (`./setup.sh test`).
set -euo pipefail
cd "$(dirname "$0")"
mode=${1:-run}
[ $# -gt 0 ] && shift

# libcurl4-openssl-dev: symbol servers; lld-14, llvm-14 (lld-link, llvm-pdbutil) and python3
# (a local symbol server): the PDB tests' fixtures, which skip without them; protobuf-c and
# zlib: pprof export (protoc: its test's independent decoder); capstone: annotate; expat: the
# manifests Windows traces carry; zstd: perf.data files recorded with perf record -z; libdeflate:
# the compressed debug sections of source lines; bolt-16:
# the BOLT round trip of --export bolt (llvm-profgen-14, in llvm-14, checks --export profgen);
# python3-defusedxml: what dissect.etl imports, for the independent reader's test where its
# sources are given (tests/README.md, "The independent reader"); ninja-build: the builds' tool
# (a build of the sanitizer tree takes 0.8 of make's time: tests/README.md)
packages=(build-essential cmake ninja-build pkg-config clang clang-format libclang-rt-14-dev
          libncurses-dev libelf-dev libdw-dev libiberty-dev libcmocka-dev tmux linux-perf xz-utils
          debuginfod libcurl4-openssl-dev lld-14 llvm-14 python3
          libprotobuf-c-dev protobuf-c-compiler protobuf-compiler zlib1g-dev libcapstone-dev
          libexpat1-dev libzstd-dev libdeflate-dev bolt-16 python3-defusedxml)
missing=()
for p in "${packages[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
        echo "setup: installing ${missing[*]}" >&2
        if [ "$(id -u)" -ne 0 ]; then
                echo "setup: installing packages needs root: run as root, or apt-get install ${missing[*]}" >&2
                exit 1
        fi
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

samples=${ETWTOP_SAMPLES_DIR:-$(cd .. && pwd)/shared/samples}
jobs=$(nproc 2>/dev/null || echo 2)
# generator DIR: Ninja for a new build folder; one made before keeps the generator it has
# (cmake refuses another)
generator() {
        [ -f "$1/CMakeCache.txt" ] || ! command -v ninja >/dev/null || echo "-GNinja"
}

case "$mode" in
run)
        cmake $(generator build) -S . -B build -DCMAKE_BUILD_TYPE=Release \
              -DETWTOP_SAMPLES_DIR="$samples" >/dev/null
        cmake --build build -j "$jobs" >/dev/null
        if [ $# -gt 0 ]; then
                exec ./build/src/etwtop "$@"
        fi
        # The main job: the live screen (in a terminal), or the same as text frames (when the
        # output is not a terminal). Without the privilege for a live session, a bundled trace.
        etwtop=./build/src/etwtop
        probe=$(mktemp -u /tmp/etwtop-probe-XXXXXX.etl)
        if "$etwtop" --record "$probe" --duration 0.1 --on PROC_THREAD 2>"$probe.err"; then
                rm -f "$probe" "$probe.err"
                if [ -t 0 ] && [ -t 1 ]; then
                        exec "$etwtop"
                fi
                exec "$etwtop" -b -n 5 -d 1 --top 20
        fi
        echo "setup: the live session cannot start here: $(cat "$probe.err")" >&2
        rm -f "$probe" "$probe.err"
        echo "setup: dumping a bundled trace instead" >&2
        exec "$etwtop" --dump --totals "$samples/etlparser_ShutdownPerfDiagLogger.etl"
        ;;
test)
        # The tests run in the clang build (its warnings are errors) with AddressSanitizer,
        # UndefinedBehaviorSanitizer and the libFuzzer targets; gcc's warnings, as errors too,
        # are a test of that suite (warnings_gcc: the program and the benchmarks built with gcc
        # -Werror, at the idle scheduling class, beside the other tests, whose live ones mostly
        # wait on the clock; tests/README.md)
        cmake $(generator build-asan) -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug \
              -DCMAKE_C_COMPILER=clang -DCMAKE_C_FLAGS=-Werror -DETWTOP_SANITIZE=ON -DETWTOP_FUZZ=ON \
              -DETWTOP_SAMPLES_DIR="$samples" >/dev/null
        # what the live tests run (the suite's longest path: they start first); the rest is built
        # by the suite's first test, build_tests, beside them
        cmake --build build-asan -j "$jobs" --target etwtop_live_deps >/dev/null
        cd build-asan
        # two tests more than the cores: warnings_gcc's compile holds one slot for most of the
        # run; the live tests (one at a time, by their lock) mostly wait on the clock, and the
        # other slot keeps the cores busy meanwhile (the suite passes under 2 x nproc busy
        # loops: tests/under_load.sh)
        exec ctest --output-on-failure -j "$((jobs + 2))"
        ;;
*)
        echo "usage: ./setup.sh run [etwtop options] | ./setup.sh test" >&2
        exit 2
        ;;
esac
