#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# export.sh: `etwtop --replay FILE --export FORMAT -o OUT` writes the profile the hot functions
#   count, in every format, for the PerfView sample (Windows, .NET), the fixture trace (timer
#   and PMC samples, process names from its switches) and, where this machine can record, a
#   recording of an ELF program (build-ids): pprof decoded independently (protoc --decode of
#   src/export/profile.proto) sums per sample type to what --replay -b counts, names every
#   location's function and carries the ELF build-ids; the folded stacks and the speedscope
#   weights sum to -b's samples; each CSV (hot functions, modules, lines, context switches) has
#   its header and -b's rows. Where this machine can record, a workload that sleeps: pprof's
#   off-cpu sample type holds the off-CPU time -b says the threads blocked for, no more than
#   its context switches' Off-CPU. Then the output file's rules: 0600, nothing replaced without
#   --force and then only a regular file of ours, never a symlink, never over the input.
# export.sh files: the traces on file and the output file's rules (no session: this part runs
#   beside the other tests); export.sh live: the recordings made here (it takes the live tests'
#   lock); export.sh: both.
set -u
: "${ETWTOP:?}" "${ETL_FIXTURE:?}" "${ETWTOP_SAMPLES_UNPACKED:?}"
tmp=$(mktemp -d)
busy=
cleanup() {
        if [ -n "$busy" ]; then
                kill "$busy" 2>/dev/null
                wait "$busy" 2>/dev/null
        fi
        if [ -n "${KEEP_TMP:-}" ]; then echo "kept $tmp" >&2; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
. "$(dirname "$0")/../lib/check.sh"
part=$(test_part "${1-}" files live) || exit 2
proto_dir=$(cd "$(dirname "$0")/../../src/export" && pwd)

has_protoc=1
command -v protoc >/dev/null || has_protoc=0
has_python=1
[ -n "$PY" ] || has_python=0

# totals NAME: "SOURCE N" per source of -b's "Hot functions (SOURCE, N samples, by self)" lines
totals() { sed -n 's/^Hot functions (\(.*\), \([0-9]*\) samples, by self)$/\1 \2/p' "$tmp/$1.b"; }
# table_rows NAME TITLE: the rows of -b's table whose title line starts with TITLE
table_rows() {
        awk -v s="$2" 'index($0, s) == 1 {t = 1; getline; next}
                t && /^$/ {t = 0} t {n++} END {print n + 0}' "$tmp/$1.b"
}
# rows NAME SOURCE: the rows of -b's hot functions table of SOURCE
rows() { table_rows "$1" "Hot functions ($2,"; }
# rows_differ NAME SOURCE: on stderr, the Self, Module and Function of the rows that -b's hot
# functions table of SOURCE and the csv do not share (a failed count says which rows)
rows_differ() {
        awk -v s="$2," 'index($0, "Hot functions (" s) == 1 {t = 1; getline; next}
                t && /^$/ {t = 0} t {print $3, $5, $6}' "$tmp/$1.b" | sort >"$tmp/$1.b-rows"
        awk -F, -v s="$2" 'NR > 1 && $1 == s {print $4, $6, $7}' "$tmp/$1.csv" | tr -d '\r' |
                sort >"$tmp/$1.csv-rows"
        echo "rows of -b (<) and of the csv (>) that differ:" >&2
        diff "$tmp/$1.b-rows" "$tmp/$1.csv-rows" | grep '^[<>]' | head -20 >&2
}
# csv_rows FILE [SOURCE]: the data rows of a CSV file (of SOURCE, its first field)
csv_rows() {
        awk -F, -v s="${2-}" 'NR > 1 && (s == "" || $1 == s) {n++} END {print n + 0}' "$1"
}
# blocked NAME: "ROWS MS" of -b's "Where threads blocked" table, but for the row of the exited
# threads folded without a place (tid 4294967295): its rows and their Off-CPU ms summed
blocked() {
        awk 'index($0, "Where threads blocked") == 1 {t = 1; getline; next}
                t && /^$/ {t = 0} t && $3 != 4294967295 {n++; s += $2}
                END {printf "%d %.3f\n", n, s}' "$tmp/$1.b"
}
# switched NAME: "ROWS MS" of -b's context switches of threads: rows and Off-CPU ms summed
switched() {
        awk 'index($0, "Context switches (threads") == 1 {t = 1; getline; next}
                t && /^$/ {t = 0} t {n++; s += $3} END {printf "%d %.3f\n", n, s}' "$tmp/$1.b"
}
# main_source NAME: the source the folded stacks hold: Timer when it sampled, else the first
main_source() { totals "$1" | awk '$1 == "Timer" {t = 1} NR == 1 {f = $1} END {print t ? "Timer" : f}'; }

# pprof_check PROFILE.txt: protoc's text of a Profile, read without etwtop: prints
# "TYPE SUM" per sample type, then "unnamed N" (locations whose function has no name),
# "period N", "locations N", "mappings N", "buildid FILENAME BUILD_ID" per mapping, and
# "offcomm COMM SUM" per comm label of the off-cpu samples
pprof_check() {
        "$PY" - "$1" <<'EOF'
import re, sys
def parse(lines, i):
    msg = {}
    while i < len(lines):
        line = lines[i].strip()
        i += 1
        if not line:
            continue
        if line == "}":
            return msg, i
        if line.endswith("{"):
            sub, i = parse(lines, i)
            msg.setdefault(line[:-1].strip(), []).append(sub)
            continue
        key, _, value = line.partition(":")
        value = value.strip()
        if value.startswith('"'):
            value = bytes(value[1:-1], "latin-1").decode("unicode_escape").encode("latin-1").decode("utf-8")
        else:
            value = int(value) if re.fullmatch(r"-?\d+", value) else value
        msg.setdefault(key.strip(), []).append(value)
    return msg, i
p, _ = parse(open(sys.argv[1], encoding="utf-8").read().split("\n"), 0)
st = p.get("string_table", [])
def s(i):
    return st[i] if i < len(st) else None
types = p.get("sample_type", [])
sums = [0] * len(types)
for sm in p.get("sample", []):
    for k, v in enumerate(sm.get("value", [])):
        sums[k] += v
for k, t in enumerate(types):
    print(s(t.get("type", [0])[0]), sums[k])
fns = {f["id"][0]: s(f.get("name", [0])[0]) for f in p.get("function", [])}
unnamed = 0
for loc in p.get("location", []):
    lines = loc.get("line", [])
    if not lines or not all(fns.get(l.get("function_id", [0])[0]) for l in lines):
        unnamed += 1
print("unnamed", unnamed)
print("default", s(p.get("default_sample_type", [0])[0]))
print("period", p.get("period", [0])[0])
print("locations", len(p.get("location", [])))
maps = p.get("mapping", [])
print("mappings", len(maps))
for m in maps:
    print("buildid", s(m.get("filename", [0])[0]), s(m.get("build_id", [0])[0]) or "-")
off = [k for k, t in enumerate(types) if s(t.get("type", [0])[0]) == "off-cpu"]
comms = {}
for sm in p.get("sample", []):
    for k in off:
        comm = [s(l.get("str", [0])[0]) for l in sm.get("label", []) if s(l["key"][0]) == "comm"]
        c = comm[0] if comm else "-"
        comms[c] = comms.get(c, 0) + sm.get("value", [])[k]
for c, v in sorted(comms.items()):
    print("offcomm", c.replace(" ", "_"), v)
EOF
}

# exports NAME TRACE: every format of TRACE, checked against its --replay -b
exports() {
        local name=$1 trace=$2
        "$ETWTOP" --replay "$trace" -b --top 1000000 >"$tmp/$name.b" 2>"$tmp/$name.berr"
        check "$name: --replay -b exits 0" [ $? = 0 ]
        local f
        for f in pprof folded speedscope csv csv-modules csv-lines csv-switches; do
                "$ETWTOP" --replay "$trace" --export $f -o "$tmp/$name.$f" 2>"$tmp/$name.$f.err"
                check "$name: --export $f exits 0 ($(tail -1 "$tmp/$name.$f.err"))" [ $? = 0 ]
                check "$name: the $f file is 0600" [ "$(stat -c %a "$tmp/$name.$f" 2>&1)" = 600 ]
        done
        local main n nb ms
        main=$(main_source "$name")
        n=$(totals "$name" | awk -v s="$main" '$1 == s {print $2}')
        check "$name: -b counted samples" [ -n "$n" ]

        # folded: one line per stack, "comm;outer;...;inner count", counts summing to -b's
        check "$name: folded counts sum to $main's $n samples" \
                [ "$(awk '{s += $NF} END {print s + 0}' "$tmp/$name.folded")" = "$n" ]
        check "$name: folded lines are frames and a count" \
                awk '!/^[^;]+(;[^;]+)+ [0-9]+$/ {exit 1}' "$tmp/$name.folded"

        # csv: the header and every row of -b, per source
        check "$name: csv header" \
                [ "$(head -1 "$tmp/$name.csv")" = $'Source,Self%,Total%,Self,Total,Module,Function\r' ]
        local src cnt
        local in_csv in_b
        while read -r src cnt; do
                in_csv=$(awk -F, -v s="$src" 'NR > 1 && $1 == s {n++} END {print n + 0}' \
                        "$tmp/$name.csv")
                in_b=$(rows "$name" "$src")
                check "$name: csv has -b's $src rows ($in_csv, $in_b)" [ "$in_csv" = "$in_b" ]
                [ "$in_csv" = "$in_b" ] || rows_differ "$name" "$src"
        done < <(totals "$name")
        # the other tables: their headers, and -b's rows (hot modules and lines per source)
        check "$name: csv-modules header" [ "$(head -1 "$tmp/$name.csv-modules")" = \
                $'Source,Self%,Self,Module,Path,Symbols\r' ]
        check "$name: csv-lines header" [ "$(head -1 "$tmp/$name.csv-lines")" = \
                $'Source,Self%,Self,Module,File,Line,Function\r' ]
        check "$name: csv-switches header" [ "$(head -1 "$tmp/$name.csv-switches")" = \
                $'Switches,On-CPU ns,Off-CPU ns,CPU%,Readied,TID,PID,Top wait,Thread\r' ]
        while read -r src cnt; do
                check "$name: csv-modules has -b's $src rows" [ "$(csv_rows \
                        "$tmp/$name.csv-modules" "$src")" = "$(table_rows "$name" \
                        "Hot modules ($src)")" ]
                check "$name: csv-lines has -b's $src rows" [ "$(csv_rows \
                        "$tmp/$name.csv-lines" "$src")" = "$(table_rows "$name" \
                        "Hot lines ($src)")" ]
        done < <(totals "$name")
        check "$name: csv-switches has -b's thread rows" [ "$(csv_rows \
                "$tmp/$name.csv-switches")" = "$(switched "$name" | cut -d' ' -f1)" ]
        # its nanoseconds are -b's milliseconds, but for -b's rounding to the microsecond
        read -r nb ms < <(switched "$name")
        check "$name: csv-switches Off-CPU sums to -b's $ms ms" awk -F, -v ms="$ms" -v n="$nb" \
                'NR > 1 {s += $3} END {d = s - ms * 1e6; exit !(d <= 500 * n + 1 && -d <= 500 * n + 1)}' \
                "$tmp/$name.csv-switches"
        if [ $has_python = 1 ]; then
                check "$name: every csv reads as RFC 4180, each row as wide as its header" \
                        "$PY" -c 'import csv, sys
for f in sys.argv[1:]:
    raw = open(f, newline="", encoding="utf-8").read()
    assert raw.endswith("\r\n") and "\n" not in raw.replace("\r\n", "")
    rows = list(csv.reader(raw.splitlines(keepends=True)))
    assert all(len(r) == len(rows[0]) for r in rows), f' \
                        "$tmp/$name".csv{,-modules,-lines,-switches}
        fi

        # speedscope: valid JSON; each source's profile weighs what -b counted
        if [ $has_python = 1 ]; then
                check "$name: speedscope is valid JSON" "$PY" -m json.tool "$tmp/$name.speedscope" \
                        >/dev/null
                "$PY" -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert d["$schema"] == "https://www.speedscope.app/file-format-schema.json"
n = len(d["shared"]["frames"])
for p in d["profiles"]:
    assert p["type"] == "sampled" and len(p["samples"]) == len(p["weights"])
    assert all(0 <= i < n for s in p["samples"] for i in s)
    print(p["name"], sum(p["weights"]))' "$tmp/$name.speedscope" >"$tmp/$name.ss" 2>&1
                check "$name: speedscope weights sum to -b's samples per source" \
                        diff <(totals "$name") "$tmp/$name.ss"
        else
                skip "$name: speedscope: python3 is missing"
        fi

        # pprof: gzip'd Profile, decoded by protoc from the schema, not by etwtop
        if [ $has_protoc = 0 ] || [ $has_python = 0 ]; then
                skip "$name: pprof: protoc or python3 is missing (apt-get install protobuf-compiler)"
                return
        fi
        check "$name: pprof is gzip" gzip -t "$tmp/$name.pprof"
        gzip -dc "$tmp/$name.pprof" | protoc --decode perftools.profiles.Profile \
                -I "$proto_dir" "$proto_dir/profile.proto" >"$tmp/$name.pb.txt" 2>"$tmp/$name.pb.err"
        check "$name: protoc decodes the pprof file" [ $? = 0 ]
        pprof_check "$tmp/$name.pb.txt" >"$tmp/$name.pb" 2>&1
        check "$name: the decoded profile reads" [ $? = 0 ]
        while read -r src cnt; do
                if [ "$src" = Timer ]; then
                        check "$name: pprof samples/count sums to $cnt" grep -qx "samples $cnt" "$tmp/$name.pb"
                        check "$name: pprof cpu/nanoseconds is the samples times the period" \
                                awk -v n="$cnt" '$1 == "period" {p = $2} $1 == "cpu" {c = $2}
                                        END {exit !(p > 0 && c == n * p)}' "$tmp/$name.pb"
                else
                        check "$name: pprof $src sums to $cnt" grep -qx "$src $cnt" "$tmp/$name.pb"
                fi
        done < <(totals "$name")
        check "$name: every pprof location's function has a name" grep -qx "unnamed 0" "$tmp/$name.pb"
        # off-CPU time where the threads blocked: -b's "Where threads blocked", to the
        # nanosecond but for -b's rounding to the microsecond; a trace whose switches came
        # without stacks has none
        read -r nb ms < <(blocked "$name")
        if [ "$nb" -gt 0 ]; then
                check "$name: pprof off-cpu is the $ms ms threads blocked in -b's $nb rows" \
                        awk -v ms="$ms" -v n="$nb" '$1 == "off-cpu" {ok = $2 > 0 &&
                                $2 - ms * 1e6 <= 500 * n + 1 && ms * 1e6 - $2 <= 500 * n + 1}
                                END {exit !ok}' "$tmp/$name.pb"
        else
                check "$name: no off-cpu sample type without switch stacks" \
                        awk '$1 == "off-cpu" {exit 1}' "$tmp/$name.pb"
        fi
        # and pprof itself, where Go is installed (go tool pprof): the same totals
        if command -v go >/dev/null; then
                while read -r src cnt; do
                        [ "$src" = Timer ] && src=samples
                        HOME=$tmp GOFLAGS='' go tool pprof -top -nodecount=1 -sample_index="$src" \
                                "$tmp/$name.pprof" >"$tmp/$name.gopprof" 2>&1
                        check "$name: go tool pprof reads $cnt $src" \
                                grep -q "Total samples = $cnt\b" "$tmp/$name.gopprof"
                done < <(totals "$name")
        fi
        check "$name: pprof has locations" \
                awk '$1 == "locations" {ok = $2 > 0} END {exit !ok}' "$tmp/$name.pb"
}

if [ "$part" != live ]; then
# the PerfView sample: .NET methods named from the trace's CLR events, no process names
u=$ETWTOP_SAMPLES_UNPACKED
if [ -f "$u/net.4.5.2.x64.etl" ]; then
        exports net "$u/net.4.5.2.x64.etl"
        check "net: folded names the .NET Main, with -b's total 4912" [ "$(awk \
                '/;Test\.Program\.Main\(class System\.String\[\]\)(;| [0-9]+$)/ {s += $NF} END {print s + 0}' \
                "$tmp/net.folded")" = 4912 ]
        # no context switches in this trace: the processes' names come from its process events
        check "net: its processes named (Test.x64.exe's Main)" \
                grep -q '^Test\.x64\.exe;.*Test\.Program\.Main' "$tmp/net.folded"
else
        skip "net: $u/net.4.5.2.x64.etl is missing (the samples are not unpacked)"
fi
# -p: one process, as the screen's t counts it
if [ -f "$u/net.4.5.2.x64.etl" ]; then
        "$ETWTOP" --replay "$u/net.4.5.2.x64.etl" --export folded -p 3676 -o "$tmp/net.p.folded" 2>/dev/null
        check "net -p 3676: only Test.x64.exe's stacks" \
                [ "$(cut -d';' -f1 "$tmp/net.p.folded" | sort -u)" = Test.x64.exe ]
        check "net -p 3676: Main's total still 4912" [ "$(awk \
                '/;Test\.Program\.Main\(class System\.String\[\]\)(;| [0-9]+$)/ {s += $NF} END {print s + 0}' \
                "$tmp/net.p.folded")" = 4912 ]
fi

# pprof's default sample type: the timer's CPU time where there is a timer; else the source
# the views show first, a perf.data's first event (perf report's): busy's cycles, not the
# cache-references it sampled first
busy=${ETWTOP_SAMPLES:-}/perf/perf.data.busy.0-3.4
if [ -n "${ETWTOP_SAMPLES:-}" ] && [ -f "$busy" ] && [ $has_protoc = 1 ] && [ $has_python = 1 ]; then
        "$ETWTOP" --replay "$busy" --export pprof -o "$tmp/busy.pprof" 2>/dev/null
        gzip -dc "$tmp/busy.pprof" | protoc --decode perftools.profiles.Profile \
                -I "$proto_dir" "$proto_dir/profile.proto" >"$tmp/busy.pb.txt" 2>/dev/null
        pprof_check "$tmp/busy.pb.txt" >"$tmp/busy.pb" 2>&1
        check "busy: pprof's default sample type is the first event's ($(grep '^default' "$tmp/busy.pb"))" \
                grep -qx "default TotalCycles" "$tmp/busy.pb"
        # speedscope: a profile per source in -b's order of its tables (the first one opens)
        "$ETWTOP" --replay "$busy" --export speedscope -o "$tmp/busy.speedscope" 2>/dev/null
        "$ETWTOP" --replay "$busy" -b --top 1 2>/dev/null |
                sed -n 's/^Hot functions (\([^,]*\),.*/\1/p' >"$tmp/busy.b-order"
        "$PY" -c 'import json, sys
print("\n".join(p["name"] for p in json.load(open(sys.argv[1]))["profiles"]))' \
                "$tmp/busy.speedscope" >"$tmp/busy.ss-order" 2>&1
        check "busy: speedscope's profiles in -b's order ($(tr '\n' ' ' <"$tmp/busy.b-order"))" \
                cmp -s "$tmp/busy.b-order" "$tmp/busy.ss-order"
        # folded: one source, -b's first (cycles: 67 samples)
        first=$("$ETWTOP" --replay "$busy" -b --top 1 2>/dev/null |
                sed -n 's/^Hot functions ([^,]*, \([0-9]*\) samples.*/\1/p' | head -1)
        "$ETWTOP" --replay "$busy" --export folded -o "$tmp/busy.folded" 2>/dev/null
        got=$(awk '{n += $NF} END {print n + 0}' "$tmp/busy.folded")
        check "busy: folded holds -b's first source ($first samples; $got)" [ "${first:-x}" = "$got" ]
else
        skip "busy: pprof's default sample type not checked (no shared perf samples, protoc or python3)"
fi

# the fixture: timer and PMC samples, a stack, the process named by its switches
"$ETL_FIXTURE" "$tmp/fix.etl" >/dev/null
check "fixture written" [ -s "$tmp/fix.etl" ]
exports fix "$tmp/fix.etl"
[ -s "$tmp/fix.pb" ] && check "fix: pprof's default sample type is the timer's CPU time" \
        grep -qx "default cpu" "$tmp/fix.pb"
check "fix: the stack folded outermost first, under its process" \
        grep -qx 'work\.exe;work+0xf00;work+0x1100;work+0x1234 1' "$tmp/fix.folded"
check "fix: a sample without a stack is its address" grep -qx 'work\.exe;0x8048123 1' "$tmp/fix.folded"
# csv-branches: the branch view's edges, as --replay -b lists them
"$ETWTOP" --replay "$tmp/fix.etl" --export csv-branches -o "$tmp/fix.branches.csv" 2>/dev/null
check "fix: csv-branches' header" [ "$(head -1 "$tmp/fix.branches.csv" | tr -d '\r')" = "Share%,Taken,From,To,Mispredicted,PredictionKnown,AvgCycles" ]
check "fix: csv-branches has the LBR edges -b shows" \
        grep -q '^33\.33,1,work+0x1250,work+0x1200' "$tmp/fix.branches.csv"
check "fix: as many edges as -b's branch table ($(($(wc -l <"$tmp/fix.branches.csv") - 1)))" \
        [ "$(($(wc -l <"$tmp/fix.branches.csv") - 1))" = \
          "$("$ETWTOP" --replay "$tmp/fix.etl" -b --top 1000 2>/dev/null | awk '/^Hot branch edges \(/ {t = 1; getline; next} t && /^$/ {t = 0} t' | wc -l)" ]
if [ $has_python = 1 ]; then
        check "fix: speedscope has a profile per source" \
                [ "$("$PY" -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["profiles"]))' \
                        "$tmp/fix.speedscope")" = 2 ]
fi
if [ -f "$tmp/fix.pb.txt" ]; then
        check "fix: pprof labels the process name" "$PY" -c '
import sys
t = open(sys.argv[1]).read()
sys.exit(0 if "\"work.exe\"" in t and "\"comm\"" in t and "\"pid\"" in t and "\"tid\"" in t else 1)' \
                "$tmp/fix.pb.txt"
fi

fi

if [ "$part" != files ]; then
# an ELF program recorded here: its mapping carries its build-id
if ! "$ETWTOP" --record "$tmp/probe.etl" --duration 0.2 --on PROC_THREAD 2>"$tmp/probe.err"; then
        skip "elf: etwtop --record cannot run here: $(tail -1 "$tmp/probe.err")"
else
        can_record=1
        if [ -n "${SYM_FIXTURE:-}" ] && [ -x "$SYM_FIXTURE" ]; then
                prog=$SYM_FIXTURE
                # (it outlives the recording however long its start takes; ended after it)
                "$prog" spin 120000 >/dev/null &
        else
                prog=$(readlink -f /bin/sh)
                /bin/sh -c 'i=0; while :; do i=$((i + 1)); done' &
        fi
        busy=$!
        sleep 0.3
        "$ETWTOP" --record "$tmp/elf.etl" --duration 1.5 -p "$busy" \
                --on PROC_THREAD+LOADER+PROFILE --stackwalk Profile 2>"$tmp/elf.rec.err"
        check "elf: recorded" [ $? = 0 ]
        kill "$busy" 2>/dev/null
        wait "$busy" 2>/dev/null
        busy=
        exports elf "$tmp/elf.etl"
        id=$(readelf -n "$prog" 2>/dev/null | awk '/Build ID:/ {print $3}')
        if [ -z "$id" ]; then
                skip "elf: $prog has no build-id"
        elif [ -f "$tmp/elf.pb" ]; then
                check "elf: the mapping of $prog carries its build-id $id" \
                        grep -qx "buildid $prog $id" "$tmp/elf.pb"
                check "elf: every mapping of a file carries a build-id" \
                        awk '$1 == "buildid" && $2 ~ /^\// && $3 == "-" {bad = 1} END {exit bad}' "$tmp/elf.pb"
        fi
fi

# a workload that sleeps, recorded here with the default events (context switches with their
# stacks): pprof's off-CPU time
if [ -z "${can_record:-}" ]; then
        skip "offcpu: etwtop --record cannot run here"
else
        sh -c 'while :; do sleep 0.01; done' &
        busy=$!
        sleep 0.2
        "$ETWTOP" --record "$tmp/offcpu.etl" --duration 2 2>"$tmp/offcpu.rec.err"
        check "offcpu: recorded" [ $? = 0 ]
        kill "$busy" 2>/dev/null
        wait "$busy" 2>/dev/null
        busy=
        exports offcpu "$tmp/offcpu.etl"
        read -r nb ms < <(blocked offcpu)
        check "offcpu: -b says where threads blocked" [ "$nb" -gt 0 ]
        if [ -f "$tmp/offcpu.pb" ]; then
                # the time where they blocked is at most their whole off-CPU time (some came
                # without a stack: the waits under way at the start, the folded exited threads')
                read -r nb ms < <(switched offcpu)
                check "offcpu: pprof off-cpu is at most the threads' $ms ms off CPU" \
                        awk -v ms="$ms" -v n="$nb" '$1 == "off-cpu" {ok = $2 > 0 &&
                                $2 <= ms * 1e6 + 500 * n + 1} END {exit !ok}' "$tmp/offcpu.pb"
                check "offcpu: the sleep processes' off-CPU time is there" \
                        awk '$1 == "offcomm" && $2 == "sleep" && $3 > 0 {ok = 1} END {exit !ok}' \
                        "$tmp/offcpu.pb"
                if command -v go >/dev/null; then
                        HOME=$tmp GOFLAGS='' go tool pprof -top -nodecount=1 -sample_index=off-cpu \
                                "$tmp/offcpu.pprof" >"$tmp/offcpu.gopprof" 2>&1
                        check "offcpu: go tool pprof reads the off-cpu type" \
                                grep -q '^Type: off-cpu' "$tmp/offcpu.gopprof"
                fi
        fi
fi

fi

if [ "$part" != live ]; then
# the output file's rules
t=$tmp/fix.etl
echo keep >"$tmp/exists"
"$ETWTOP" --replay "$t" --export csv -o "$tmp/exists" 2>"$tmp/err"
check "an existing file: refused" [ $? != 0 ]
check "an existing file: the message says so" grep -q 'exists: not overwritten (use --force)' "$tmp/err"
check "an existing file: kept" [ "$(cat "$tmp/exists")" = keep ]
"$ETWTOP" --replay "$t" --export csv -o "$tmp/exists" --force 2>"$tmp/err"
check "--force replaces it" grep -q '^Source,' "$tmp/exists"
echo target >"$tmp/target"
ln -s "$tmp/target" "$tmp/link"
"$ETWTOP" --replay "$t" --export folded -o "$tmp/link" 2>"$tmp/err"
check "a symlink: refused" [ $? != 0 ]
"$ETWTOP" --replay "$t" --export folded -o "$tmp/link" --force 2>"$tmp/err"
check "a symlink, --force: refused (only a regular file is replaced)" [ $? != 0 ]
kept() { [ "$(cat "$tmp/target")" = target ] && [ -L "$tmp/link" ]; }
check "a symlink, --force: the link and its target kept" kept
cp "$t" "$tmp/in.etl"
"$ETWTOP" --replay "$tmp/in.etl" --export pprof -o "$tmp/in.etl" --force 2>"$tmp/err"
check "the input as the output: refused" [ $? != 0 ]
check "the input as the output: kept" cmp -s "$t" "$tmp/in.etl"
"$ETWTOP" --replay "$tmp/none.etl" --export pprof -o "$tmp/none.pprof" 2>"$tmp/err"
check "a missing input: fails" [ $? != 0 ]
check "a missing input: no output left" [ ! -e "$tmp/none.pprof" ]
"$ETWTOP" --replay "$t" --export xml -o "$tmp/x" 2>"$tmp/err"
check "an unknown format: refused" [ $? != 0 ]
fi

echo "$nr_pass passed, $nr_fail failed, $nr_skip skipped"
[ $nr_fail = 0 ] || exit 1
[ $nr_pass -gt 0 ] || exit 77
