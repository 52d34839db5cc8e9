#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# debuginfod.sh: symbols come from debuginfod, by build-id, when the user opts in.
#   A recording of the stripped symbol fixture replays with module+offset rows when
#   DEBUGINFOD_URLS is unset, and with its functions named when DEBUGINFOD_URLS names a local
#   debuginfod server that indexes the fixture's debug file (fetched into DEBUGINFOD_CACHE_PATH);
#   with the server gone, the replay degrades to module+offset again, never a wrong name.
set -u
: "${ETWTOP:?}" "${SYM_FIXTURE:?}" "${SYM_FIXLIB:?}" "${SYM_FIXTURE_VARIANTS:?}"
# the server is local: no proxy between it and the client (libcurl reads these)
export no_proxy=127.0.0.1 NO_PROXY=127.0.0.1
tmp=$(mktemp -d)
server=
cleanup() {
        [ -n "${fix:-}" ] && kill "$fix" 2>/dev/null
        if [ -n "$server" ]; then
                kill "$server" 2>/dev/null
                wait "$server" 2>/dev/null
        fi
        rm -rf "$tmp"
}
trap cleanup EXIT
. "$(dirname "$0")/../lib/check.sh"
skip_all() {
        echo "SKIP: $*" >&2
        nr_skip=$((nr_skip + 1))
        finish
}
has_row() { awk -v m="$2" -v f="$3" '/^Hot functions/ {t++} t == 1 && $5 == m && $NF == f {n++} END {exit n ? 0 : 1}' "$1"; }
# the replay's environment: none of the caller's debuginfod settings (a distribution's
# /etc/profile.d may set DEBUGINFOD_URLS), a bounded wait for the server
replay() {
        local out=$1
        shift
        env -u DEBUGINFOD_URLS -u DEBUGINFOD_CACHE_PATH -u DEBUGINFOD_PROGRESS \
                DEBUGINFOD_TIMEOUT=10 "$@" "$ETWTOP" --replay "$tmp/fix.etl" -b --top 5000 \
                >"$out.txt" 2>"$out.err"
}

command -v debuginfod >/dev/null || skip_all "debuginfod is not installed (apt-get install debuginfod)"
# libdw dlopens the client library when DEBUGINFOD_URLS is set
if ! /sbin/ldconfig -p 2>/dev/null | grep -q 'libdebuginfod\.so\.1 ' &&
        ! ls /usr/lib/*/libdebuginfod.so.1 /usr/lib64/libdebuginfod.so.1 >/dev/null 2>&1; then
        skip_all "libdw cannot fetch: libdebuginfod.so.1 is missing (apt-get install libdebuginfod1)"
fi
stripped=$SYM_FIXTURE_VARIANTS/stripped/sym_fixture
id=$(readelf -n "$SYM_FIXTURE" | awk '/Build ID:/ {print $3}')
debug=$SYM_FIXTURE_VARIANTS/debugdir/.build-id/${id:0:2}/${id:2}.debug
if [ -z "$id" ] || [ ! -f "$stripped" ] || [ ! -f "$debug" ]; then
        skip_all "the fixture variants are not built (sym_fixture_variants)"
fi
if ! "$ETWTOP" --record "$tmp/probe.etl" --duration 0.2 --on PROC_THREAD 2>"$tmp/probe.err"; then
        skip_all "etwtop --record cannot run here: $(cat "$tmp/probe.err")"
fi

# the server: indexes a directory holding the debug file alone (no image, no symbols besides)
mkdir -p "$tmp/srv" "$tmp/run" "$tmp/cache" "$tmp/cache-empty"
cp "$debug" "$tmp/srv/sym_fixture.debug"
served() {
        if command -v curl >/dev/null; then
                curl -sf -o /dev/null "http://127.0.0.1:$1/buildid/$id/debuginfo"
        else # debuginfod-find caches misses: a fresh cache per try
                local c
                c=$(mktemp -d -p "$tmp")
                DEBUGINFOD_URLS=http://127.0.0.1:$1 DEBUGINFOD_CACHE_PATH=$c DEBUGINFOD_TIMEOUT=2 \
                        debuginfod-find debuginfo "$id" >/dev/null 2>&1
        fi
}
port=
for _ in 1 2 3 4 5; do
        p=$((20000 + RANDOM % 40000))
        debuginfod -p "$p" -d "$tmp/db-$p.sqlite" -F -t 0 -g 0 -c 1 "$tmp/srv" \
                >"$tmp/debuginfod-$p.log" 2>&1 &
        server=$!
        # scanned and answering: the debug file is served (a few hundred ms here)
        for _ in $(seq 50); do
                kill -0 "$server" 2>/dev/null || break
                if served "$p"; then
                        port=$p
                        break
                fi
                sleep 0.1
        done
        [ -n "$port" ] && break
        kill "$server" 2>/dev/null
        wait "$server" 2>/dev/null
        server=
done
if [ -z "$port" ]; then
        cat "$tmp"/debuginfod-*.log >&2
        check "debuginfod: the server starts and serves the debug file" false
        finish
fi

# the stripped program and its library, run from a temporary directory
# a name of its own: another sym_fixture running on the machine must not answer for it
cp "$stripped" "$tmp/run/symfix_dbgd"
cp "$SYM_FIXLIB" "$tmp/run/libsymfix.so"
# it spins until the recording is done, however long a loaded machine takes to start it; the
# replays list every function sampled (--top 5000: on a loaded machine the fixture's smaller
# functions are not among the recording's top 100)
LD_LIBRARY_PATH=$tmp/run "$tmp/run/symfix_dbgd" spin 120000 &
fix=$!
wait_until 60 has_mapped $fix libsymfix.so
"$ETWTOP" --record "$tmp/fix.etl" --duration 2 2>"$tmp/rec.err"
check "recorded" [ $? = 0 ]
kill $fix
wait $fix 2>/dev/null

# (a) not opted in: no names for the stripped program
replay "$tmp/off"
check "no DEBUGINFOD_URLS: replay exits 0" [ $? = 0 ]
check "no DEBUGINFOD_URLS: module+offset rows" grep -q 'symfix_dbgd+0x' "$tmp/off.txt"
check "no DEBUGINFOD_URLS: fixture_leaf not named" \
        bash -c "! grep -Eq 'symfix_dbgd +fixture_' '$tmp/off.txt'"

# (b) opted in: the debug file comes from the server, by build-id
start=$(date +%s%N)
replay "$tmp/on" DEBUGINFOD_URLS="http://127.0.0.1:$port" DEBUGINFOD_CACHE_PATH="$tmp/cache"
check "DEBUGINFOD_URLS: replay exits 0" [ $? = 0 ]
check "DEBUGINFOD_URLS: fixture_leaf named in symfix_dbgd" has_row "$tmp/on.txt" symfix_dbgd fixture_leaf
check "DEBUGINFOD_URLS: fixture_inline_outer named" \
        has_row "$tmp/on.txt" symfix_dbgd fixture_inline_outer
check "DEBUGINFOD_URLS: the debug file is in the client cache" \
        cmp -s "$debug" "$tmp/cache/$id/debuginfo"
echo "replay with debuginfod: $((($(date +%s%N) - start) / 1000000)) ms"

# (c) opted in, the server gone: module+offset again, no wrong name
kill "$server" 2>/dev/null
wait "$server" 2>/dev/null
server=
replay "$tmp/gone" DEBUGINFOD_URLS="http://127.0.0.1:$port" DEBUGINFOD_CACHE_PATH="$tmp/cache-empty"
check "server gone: replay exits 0" [ $? = 0 ]
check "server gone: module+offset rows" grep -q 'symfix_dbgd+0x' "$tmp/gone.txt"
check "server gone: fixture_leaf not named" \
        bash -c "! grep -Eq 'symfix_dbgd +fixture_' '$tmp/gone.txt'"

finish
