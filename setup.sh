#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# setup.sh: on Debian 12 (as root), installs what etwtop needs, builds it, and runs etwtop's
# main job (`./setup.sh run [etwtop options]`) or every test (`./setup.sh test`).
set -euo pipefail
cd "$(dirname "$0")"
mode=${1:-run}
[ $# -gt 0 ] && shift

packages=(build-essential cmake pkg-config clang clang-format libclang-rt-14-dev
          libncurses-dev libelf-dev libdw-dev libcmocka-dev tmux linux-perf xz-utils debuginfod)
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

case "$mode" in
run)
        cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DETWTOP_SAMPLES_DIR="$samples" >/dev/null
        cmake --build build -j "$jobs" >/dev/null
        if [ $# -gt 0 ]; then
                exec ./build/src/etwtop "$@"
        fi
        # The main job until the live screen lands: record this machine's kernel events for
        # 5 seconds (the xperf-style default session) and print the recording's totals.
        out=$(mktemp -u /tmp/etwtop-XXXXXX.etl)
        if ./build/src/etwtop --record "$out" --duration 5; then
                ./build/src/etwtop --dump --totals "$out"
                echo "the recording is $out: etwtop --dump $out shows every event"
        else
                echo "setup: recording needs root or CAP_PERFMON; dumping a bundled trace instead" >&2
                exec ./build/src/etwtop --dump "$samples/etlparser_ShutdownPerfDiagLogger.etl"
        fi
        ;;
test)
        # Warnings are errors in a plain gcc build; the tests run in the clang build with
        # AddressSanitizer, UndefinedBehaviorSanitizer and the libFuzzer targets.
        cmake -S . -B build-gcc -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=gcc \
              -DCMAKE_C_FLAGS=-Werror -DETWTOP_SAMPLES_DIR="$samples" >/dev/null
        cmake --build build-gcc -j "$jobs" >/dev/null
        cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=clang \
              -DETWTOP_SANITIZE=ON -DETWTOP_FUZZ=ON -DETWTOP_SAMPLES_DIR="$samples" >/dev/null
        cmake --build build-asan -j "$jobs" >/dev/null
        cd build-asan
        exec ctest --output-on-failure -j "$jobs"
        ;;
*)
        echo "usage: ./setup.sh run [etwtop options] | ./setup.sh test" >&2
        exit 2
        ;;
esac
