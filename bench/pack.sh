#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# pack.sh: one folder that runs the benchmarks on a machine that has none of their tools (a lent
# 16-CPU machine without perf, tmux, GNU time or etwtop's libraries): a Release build of etwtop,
# tests/startup_load and bench/bench_replay with its sample, perf, GNU time, tmux and pgrep, each
# with the shared libraries it
# loads, found beside it through an $ORIGIN run path (no LD_LIBRARY_PATH, which the target's own
# tools would inherit), glibc apart in glibc/ for a target whose own is older, and the terminfo
# entries tmux and the screen use. bench/sixteen.sh runs the checks from that folder.
# Usage: bench/pack.sh BUILD_DIR OUT_DIR   (needs patchelf; OUT_DIR is made afresh)
set -eu
build=${1:?usage: pack.sh BUILD_DIR OUT_DIR}
out=${2:?usage: pack.sh BUILD_DIR OUT_DIR}
die() { echo "pack.sh: $*" >&2; exit 1; }
command -v patchelf >/dev/null || die "patchelf not found (Debian: patchelf)"
[ -x "$build/src/etwtop" ] || die "$build/src/etwtop not built"
[ -x "$build/tests/startup_load" ] || die "$build/tests/startup_load not built (build the tests)"
perf_bin=$(command -v perf) || die "perf not found (Debian: linux-perf)"
# Debian's /usr/bin/perf may be a script choosing perf_<version> by the running kernel
if head -c 2 "$perf_bin" | grep -q '#!'; then
        perf_bin=$(ls /usr/bin/perf_* 2>/dev/null | sort -V | tail -1)
fi
[ -n "$perf_bin" ] || die "no perf executable found"
rm -rf "$out"
mkdir -p "$out/build/src" "$out/build/tests" "$out/bin" "$out/lib" "$out/glibc" "$out/terminfo"

# glibc's own libraries stay apart: they must match the loader that runs them
is_glibc() {
        case "$1" in
        libc.so.* | libm.so.* | libpthread.so.* | libdl.so.* | librt.so.* | libresolv.so.* | \
                ld-linux-*.so.* | libutil.so.* | libanl.so.* | libcrypt.so.*) return 0 ;;
        esac
        return 1
}
# add FILE DEST_DIR RPATH: FILE copied into DEST_DIR, its libraries into lib/ and glibc/
add() {
        local file=$1 dest=$2 rpath=$3 name lib
        name=$(basename "$file")
        cp -L "$file" "$dest/$name"
        chmod u+w "$dest/$name"
        patchelf --force-rpath --set-rpath "$rpath" "$dest/$name"
        ldd "$file" | awk '/=> \// {print $3} /^\t\/lib/ {print $1}' | while read -r lib; do
                if is_glibc "$(basename "$lib")"; then
                        cp -nL "$lib" "$out/glibc/"
                else
                        cp -nL "$lib" "$out/lib/"
                fi
        done
}
add "$build/src/etwtop" "$out/build/src" '$ORIGIN/../../lib'
add "$build/tests/startup_load" "$out/build/tests" '$ORIGIN/../../lib'
# the reader's benchmark and its sample (sixteen.sh's reader step), where they were built
if [ -x "$build/bench/bench_replay" ] && [ -f "$build/samples/net.4.5.2.x64.etl" ]; then
        mkdir -p "$out/build/bench" "$out/build/samples"
        add "$build/bench/bench_replay" "$out/build/bench" '$ORIGIN/../../lib'
        cp "$build/samples/net.4.5.2.x64.etl" "$out/build/samples/"
fi
add "$perf_bin" "$out/bin" '$ORIGIN/../lib'
[ "$(basename "$perf_bin")" = perf ] || mv "$out/bin/$(basename "$perf_bin")" "$out/bin/perf"
for t in /usr/bin/time tmux pgrep pkill taskset; do
        p=$(command -v "$t") || die "$t not found"
        add "$p" "$out/bin" '$ORIGIN/../lib'
done
# the libraries' own run paths, so that each finds its neighbours whatever loaded it
for l in "$out"/lib/*; do
        chmod u+w "$l"
        patchelf --force-rpath --set-rpath '$ORIGIN' "$l" 2>/dev/null || true
done
for d in /lib/terminfo /usr/share/terminfo; do
        for e in s/screen s/screen-256color t/tmux t/tmux-256color x/xterm x/xterm-256color d/dumb; do
                [ -f "$d/$e" ] || continue
                mkdir -p "$out/terminfo/${e%/*}"
                cp -nL "$d/$e" "$out/terminfo/$e"
        done
done
git -C "$(dirname "$0")" rev-parse --short HEAD >"$out/REVISION" 2>/dev/null || true
du -sh "$out" | awk '{print "pack.sh: " $2 ": " $1}'
