#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# pdb_server.sh: `etwtop --replay T -b` of a synthetic trace whose Image and DbgID_RSDS events
# name the PDB fixture (tests/shell/pdb_fixture.sh; etl_fixture --pdb-image), and its screen:
#   1. the PDB on --symbol-path: the fixture's functions named;
#   2. a PDB of another age: refused with a message, frames show pdbfix.exe+0x...;
#   3. a symbol server on localhost (python3 -m http.server on a free port) serving a
#      symbol-store directory, through _NT_SYMBOL_PATH=srv*CACHE*URL: the PDB fetched into the
#      empty cache (atomically: no temporary file left), the names shown; a server without
#      the file: its URL and HTTP 404 said;
#   4. the same replay with the server stopped and an empty cache: the URL and that nothing
#      answered said, frames show pdbfix.exe+0x...;
#   5. the replay screen (tmux) while the server holds the PDB: the header says "loading names"
#      until it comes, then the rows name its functions.
# Exits 77 (skipped) with the reason without the fixtures or python3.
set -u
: "${ETWTOP:?}" "${ETL_FIXTURE:?}"
fx=${PDB_FIXTURE_DIR:-}
if [ ! -f "$fx/pdbfix.pdb" ]; then
        echo "SKIP: no PDB fixtures in '$fx' (pdb_fixture.sh builds them with clang, lld-link" \
                "and llvm-pdbutil)"
        exit 77
fi
. "$(dirname "$0")/../lib/check.sh"
tmp=$(mktemp -d)
server=
stop_server() {
        if [ -n "$server" ]; then
                kill "$server" 2>/dev/null
                wait "$server" 2>/dev/null
                server=
        fi
}
trap 'stop_server; [ -z "${sock-}" ] || tmux -L "$sock" kill-server 2>/dev/null; rm -rf "$tmp"' EXIT
# what each run said, and what the server logged (a failure on a loaded CI machine showed nothing)
on_fail() {
        local f
        ls -la "$tmp"
        for f in "$tmp"/*.err "$tmp/http.log" "$tmp/screen"; do
                [ -f "$f" ] || continue
                echo "== $f"
                tail -5 "$f"
        done
}

rva() { awk -F'\t' -v f="$1" '$1 == f {print $2}' "$fx/pdbfix.procs.tsv"; }
# a row of the first table: module and function
has_row() { awk -v m="$2" -v f="$3" '/^Hot functions/ {t++} t == 1 && $5 == m && $NF == f {n++} END {exit n ? 0 : 1}' "$1"; }
leaf=$(rva c_leaf) area=$(rva fix::Shape::area) main=$(rva main)
leaf1=$(printf '%x' $((0x$leaf + 1)))
"$ETL_FIXTURE" --pdb-image "$fx/pdbfix.exe" "$tmp/t.etl" "$leaf1:30" "$area:20" "$main:10"
check "the trace is written" [ $? = 0 ]
key=$(cat "$fx/pdbfix.key")

# 1. a directory on --symbol-path
"$ETWTOP" --replay "$tmp/t.etl" -b --symbol-path "$fx" >"$tmp/dir.txt" 2>"$tmp/dir.err"
check "dir: replay exits 0" [ $? = 0 ]
check "dir: c_leaf named" has_row "$tmp/dir.txt" pdbfix.exe c_leaf
check "dir: fix::Shape::area named" has_row "$tmp/dir.txt" pdbfix.exe fix::Shape::area
check "dir: main named" has_row "$tmp/dir.txt" pdbfix.exe main
check "dir: the module's symbols from pdbfix.pdb" grep -q "pdbfix\.exe .* from $fx/pdbfix\.pdb" "$tmp/dir.txt"
check "dir: nothing to say" [ ! -s "$tmp/dir.err" ]
# the source lines from the PDB: the line llvm-pdbutil gives the sampled address (the last line
# that starts at or before it)
line_of() { awk -F'\t' -v a="$1" 'function hex(s,   i, v) { v = 0; s = tolower(s)
                for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
                return v }
        {r = hex($1)} r <= hex(a) && r >= best {best = r; line = $2} END {print line}' "$fx/pdbfix.lines.tsv"; }
leaf_line=$(line_of "$leaf1")
check "dir: c_leaf's hot line from the PDB, as llvm-pdbutil reads it (line $leaf_line)" \
        grep -qE "^ +[0-9.]+% +30  pdbfix\.exe +.*pdb_fixture\.cpp:$leaf_line  c_leaf\$" "$tmp/dir.txt"

# 2. another age
"$ETWTOP" --replay "$tmp/t.etl" -b --symbol-path "$fx/wrongage" >"$tmp/age.txt" 2>"$tmp/age.err"
check "age: replay exits 0" [ $? = 0 ]
check "age: refused with a message" grep -q "wrongage/pdbfix\.pdb: another build: age 7, the trace's 1" "$tmp/age.err"
check "age: module+offset" has_row "$tmp/age.txt" pdbfix.exe "pdbfix.exe+0x$leaf1"
check "age: no name" bash -c "! grep -qE 'pdbfix\.exe +(c_leaf|main)$' '$tmp/age.txt'"

# 2b. xperf -merge's DbgID_RSDS (issue 15, section 3): a kernel trace without image identity,
# merged with the image on --symbol-path, gets the ImageID and the DbgID_RSDS the image's
# CodeView record gives, equal to the ones the fixture writes itself; and names from the PDB
"$ETL_FIXTURE" --pdb-image-raw "$fx/pdbfix.exe" "$tmp/raw.etl" "$leaf1:30" "$area:20" "$main:10"
check "raw: the trace is written" [ $? = 0 ]
dbgid() { "$ETWTOP" --dump "$1" | awk '$5 ~ /^KernelTraceControl\/(ImageID|DbgID_RSDS)$/ {$1 = $2 = $3 = $4 = ""; print}'; }
check "raw: no image identity before the merge" [ -z "$(dbgid "$tmp/raw.etl")" ]
"$ETWTOP" --merge -o "$tmp/merged.etl" --symbol-path "$fx" "$tmp/raw.etl" 2>"$tmp/merge.err"
check "merge: exit 0 ($(head -c 200 "$tmp/merge.err"))" [ $? = 0 ]
check "merge: ImageID and DbgID_RSDS as the fixture writes them ($(dbgid "$tmp/merged.etl" | tr '\n' ' '))" \
        [ -n "$(dbgid "$tmp/t.etl")" -a "$(dbgid "$tmp/merged.etl")" = "$(dbgid "$tmp/t.etl")" ]
"$ETWTOP" --replay "$tmp/merged.etl" -b --symbol-path "$fx" >"$tmp/merged.txt" 2>"$tmp/merged.err"
check "merge: its replay names c_leaf from the PDB" has_row "$tmp/merged.txt" pdbfix.exe c_leaf
# an image store layout (name/TTTTTTTTSSSS/name) serves it too
read -r t z < <("$ETWTOP" --dump "$tmp/t.etl" | awk '$5 == "KernelTraceControl/ImageID" {
        for (i = 6; i <= NF; i++) {if ($i ~ /^timestamp=/) t = substr($i, 11); if ($i ~ /^size=/) z = substr($i, 6)}
        print t, z; exit}')
stamp=$(printf '%08X%X' "$t" "$z" 2>/dev/null)
check "merge: the image's stamp and size read from the dump ($stamp)" [ -n "$t" -a -n "$z" ]
if [ -n "$t" ] && [ -n "$z" ]; then
        mkdir -p "$tmp/store/pdbfix.exe/$stamp"
        cp "$fx/pdbfix.exe" "$tmp/store/pdbfix.exe/$stamp/"
        "$ETWTOP" --merge --force -o "$tmp/merged2.etl" --symbol-path "$tmp/store" "$tmp/raw.etl"
        check "merge: the image from a symbol store ($stamp)" \
                [ "$(dbgid "$tmp/merged2.etl")" = "$(dbgid "$tmp/t.etl")" ]
fi
# without the image: the ImageID, no DbgID_RSDS (nothing to read it from)
"$ETWTOP" --merge --force -o "$tmp/merged3.etl" --symbol-path "$tmp/empty-dir" "$tmp/raw.etl"
check "merge without the image: ImageID only" \
        bash -c "dump=\$('$ETWTOP' --dump '$tmp/merged3.etl'); grep -q KernelTraceControl/ImageID <<<\"\$dump\" && ! grep -q DbgID_RSDS <<<\"\$dump\""

# 3. a symbol server on localhost
if [ -z "$PY" ]; then
        skip "no python3 for the HTTP server"
        echo "$nr_pass passed, $nr_fail failed, $nr_skip skipped"
        [ $nr_fail = 0 ]
        exit
fi
start_server() { # DIR [GATE]: serves it on a free port of 127.0.0.1; sets port. With GATE, each
        # answer held until the file GATE exists ($tmp/held.py, part 5)
        # the log emptied here, before the fork: the child's own truncation came after this
        # shell had read the stopped server's port from it, on a loaded machine (CI: "Failed
        # to connect to 127.0.0.1 port N", the first server's port, and an empty log)
        : >"$tmp/http.log"
        if [ -n "${2-}" ]; then
                "$PY" -u "$tmp/held.py" "$1" "$2" >>"$tmp/http.log" 2>&1 &
        else
                "$PY" -u -m http.server 0 --bind 127.0.0.1 --directory "$1" >>"$tmp/http.log" 2>&1 &
        fi
        server=$!
        port=
        for _ in $(seq 200); do
                port=$(sed -n 's/.* port \([0-9][0-9]*\) .*/\1/p' "$tmp/http.log" | head -1)
                [ -n "$port" ] && break
                sleep 0.05
        done
        [ -n "$port" ]
}
check "server: starts" start_server "$fx/store"
url=http://127.0.0.1:$port
_NT_SYMBOL_PATH="srv*$tmp/cache*$url" "$ETWTOP" --replay "$tmp/t.etl" -b >"$tmp/srv.txt" 2>"$tmp/srv.err"
check "server: replay exits 0" [ $? = 0 ]
check "server: c_leaf named" has_row "$tmp/srv.txt" pdbfix.exe c_leaf
check "server: main named" has_row "$tmp/srv.txt" pdbfix.exe main
check "server: the PDB is in the cache" cmp -s "$fx/pdbfix.pdb" "$tmp/cache/pdbfix.pdb/$key/pdbfix.pdb"
check "server: no temporary file left" bash -c "! find '$tmp/cache' -name '.download-*' | grep -q ."
check "server: asked for it by its key" grep -q "GET /pdbfix.pdb/$key/pdbfix.pdb HTTP/1.1\" 200" "$tmp/http.log"
check "server: says what it fetched" grep -q "fetched $url/pdbfix.pdb/$key/pdbfix.pdb" "$tmp/srv.err"
# from the cache now, whatever the server
"$ETWTOP" --replay "$tmp/t.etl" -b --symbol-path "$tmp/cache" >"$tmp/cached.txt" 2>"$tmp/cached.err"
check "cache: a store for --symbol-path" has_row "$tmp/cached.txt" pdbfix.exe c_leaf
stop_server

# a server without the file
mkdir -p "$tmp/empty"
check "server: starts on an empty store" start_server "$tmp/empty"
url=http://127.0.0.1:$port
_NT_SYMBOL_PATH="srv*$tmp/cache404*$url" "$ETWTOP" --replay "$tmp/t.etl" -b >"$tmp/404.txt" 2>"$tmp/404.err"
check "404: replay exits 0" [ $? = 0 ]
check "404: the URL and its status said" grep -q "$url/pdbfix.pdb/$key/pdbfix.pdb: HTTP 404" "$tmp/404.err"
check "404: module+offset" has_row "$tmp/404.txt" pdbfix.exe "pdbfix.exe+0x$leaf1"
stop_server

# 4. no network: the port is closed now
_NT_SYMBOL_PATH="srv*$tmp/cache2*$url" "$ETWTOP" --replay "$tmp/t.etl" -b >"$tmp/off.txt" 2>"$tmp/off.err"
check "offline: replay exits 0" [ $? = 0 ]
check "offline: the URL and that nothing answered said" grep -q "$url/pdbfix.pdb/$key/pdbfix.pdb: no answer" "$tmp/off.err"
check "offline: module+offset" has_row "$tmp/off.txt" pdbfix.exe "pdbfix.exe+0x$leaf1"
check "offline: no name" bash -c "! grep -qE 'pdbfix\.exe +(c_leaf|main)$' '$tmp/off.txt'"
check "offline: nothing left in the cache" bash -c "! find '$tmp/cache2' -type f 2>/dev/null | grep -q ."

# 5. the replay screen while the server holds its answer: the file read, the header says
# "loading names" and the rows show pdbfix.exe+0x... for as long as the fetch takes; once it
# answers, "loading" goes and the rows name the PDB's functions (a screen that dropped
# "loading" with the file read had rows that changed after it: screen_tmux_keys' cursor)
if ! command -v tmux >/dev/null; then
        skip "screen: tmux not installed"
else
        cat >"$tmp/held.py" <<'PYEOF'
import functools, http.server, os, sys, time
gate = sys.argv[2]
class Held(http.server.SimpleHTTPRequestHandler):
    def do_GET(self):
        end = time.time() + 300
        while not os.path.exists(gate) and time.time() < end:
            time.sleep(0.05)
        super().do_GET()
srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                      functools.partial(Held, directory=sys.argv[1]))
print("Serving HTTP on 127.0.0.1 port %d (held)" % srv.server_address[1], flush=True)
srv.serve_forever()
PYEOF
        check "screen: the held server starts" start_server "$fx/store" "$tmp/gate"
        sock=etwtop-test-pdb-$$
        tm() { tmux -L "$sock" "$@"; }
        . "$(dirname "$0")/../lib/tmux_screen.sh"
        tm_new -d -s s -x 160 -y 40 "_NT_SYMBOL_PATH='srv*$tmp/cache_held*http://127.0.0.1:$port' ETWTOP_NO_HOST=1 '$ETWTOP' --replay '$tmp/t.etl' 2>'$tmp/held.err'; sleep 60"
        check "screen: read, its names loading while the server holds the PDB" \
                wait_for '^etwtop - replay .*loading names' 30
        check "screen: meanwhile the rows show module+offset" has "pdbfix\.exe .*pdbfix\.exe+0x$leaf1"
        check "screen: and no function of the PDB" bash -c "! grep -qE ' (c_leaf|main)\$' '$tmp/screen'"
        touch "$tmp/gate"
        check "screen: the PDB fetched, 'loading' gone" wait_gone '^etwtop - replay .*loading' 30
        check "screen: then the rows name c_leaf" has ' c_leaf$'
        check "screen: and main" has ' main$'
        tm kill-server 2>/dev/null
        stop_server
fi

echo "$nr_pass passed, $nr_fail failed, $nr_skip skipped"
[ $nr_fail = 0 ]
