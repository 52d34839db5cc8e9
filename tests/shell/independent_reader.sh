#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# independent_reader.sh: the files etwtop writes, read by an independent .etl reader (fox-it's
# dissect.etl, a Python parser that knows nothing of etwtop): a --record file, a StartTrace file
# session (the seed 002 example), the screen's save and --merge's conversion of each shared
# perf.data, and a full session's recording (samples with stacks, context switches, ready
# threads, images). Every Process record must decode through the reader's manifest, every other
# record the reader has a manifest for must decode without an error (but StackWalk/Stack, which
# the reader's fixed-length template fails on for Windows' own traces too: PerfView's
# net.4.5.2.x64.etl, 250 of 252), and the logfile header must carry a CpuSpeedInMHz (the reader
# divides by it for CPU-clock traces). Windows' own traces, rewritten by --merge, read as the
# originals do, event type by event type.
# The reader is used where it is importable (pip install dissect.etl, or its source on
# $ETWTOP_DISSECT_PATH); elsewhere the test skips and says so.
set -u
: "${ETWTOP:?}"
seed002=${1:-}
. "$(dirname "$0")/../lib/check.sh" # (its PY: the python3 the tests run)
# exit 77: ctest counts the test as skipped (SKIP_RETURN_CODE)
[ -n "$PY" ] || { echo "SKIP: no python3"; echo "0 passed, 0 failed, 1 skipped"; exit 77; }
export PYTHONPATH=${ETWTOP_DISSECT_PATH:+$ETWTOP_DISSECT_PATH:}${PYTHONPATH:-}
if ! "$PY" -c 'import dissect.etl' 2>/dev/null; then
        echo "SKIP: dissect.etl is not installed here (pip install dissect.etl, or set ETWTOP_DISSECT_PATH to its sources: tests/README.md, 'The independent reader'); no other independent ETL reader is packaged for Debian"
        echo "0 passed, 0 failed, 1 skipped"
        exit 77
fi
tmp=$(mktemp -d)
sock=etwtop-reader-$$
trap 'tmux -L "$sock" kill-server 2>/dev/null; rm -rf "$tmp"' EXIT

cat >"$tmp/read.py" <<'PY'
import sys
from uuid import UUID
from dissect.etl.etl import ETL

PROCESS = UUID("3d6fa8d0-fe05-11d0-9dda-00c04fd7ba7c")
STACKWALK = UUID("def2fe46-7bd6-4b80-bd94-f57fe20d0ce3")
path = sys.argv[1]
with open(path, "rb") as fh:
    etl = ETL(fh)
    mhz = etl.logfile_header.cpu_speed_in_MHz
    nr_buffers = etl.logfile_header.buffers_written
    nr = nr_process = bad = nr_decoded = bad_other = 0
    for rec in etl:
        nr += 1
        h = rec.header
        if h.provider_id != PROCESS:
            # any other event the reader has a manifest for decodes without an error
            if h.provider_id == STACKWALK and getattr(h, "opcode", None) == 32:
                continue
            try:
                nr_decoded += rec.event._struct is not None
            except Exception as e:
                bad_other += 1
                if bad_other == 1:
                    print(f"{path}: a record the reader cannot decode: {h.provider_id} opcode "
                          f"{getattr(h, 'opcode', None)} version {getattr(h, 'version', None)}: "
                          f"{e!r}")
            continue
        nr_process += 1
        try:
            # the reader's manifest decodes the payload: the SID, the name, the command line
            s = rec.event._struct
            if s is None or getattr(s, "ImageFileName", None) is None:
                bad += 1
        except Exception as e:
            bad += 1
            if bad == 1:
                print(f"{path}: a Process record the reader cannot decode: {e!r}")
print(f"{path}: {nr} records, {nr_process} Process, {bad} undecoded, {nr_decoded} others "
      f"decoded, {bad_other} not, CpuSpeedInMHz {mhz}, BuffersWritten {nr_buffers}")
sys.exit(0 if nr_process > 0 and bad == 0 and bad_other == 0 and mhz > 0 else 1)
PY

read_ok() { "$PY" "$tmp/read.py" "$1"; }

# census.py FILE: the reader's view of each event type of FILE, a line each, sorted: provider,
# opcode, version, records, decoded, failing (KernelTraceControl's, which a merge adds, left out)
cat >"$tmp/census.py" <<'PY'
import collections, sys
from dissect.etl.etl import ETL

KTC = "b3e675d7-2554-4f18-830b-2762732560de"
nr, ok, bad = collections.Counter(), collections.Counter(), collections.Counter()
with open(sys.argv[1], "rb") as fh:
    for rec in ETL(fh):
        h = rec.header
        k = (str(h.provider_id), getattr(h, "opcode", None), getattr(h, "version", None))
        if k[0] == KTC:
            continue
        nr[k] += 1
        try:
            ok[k] += rec.event._struct is not None
        except Exception:
            bad[k] += 1
for k in sorted(nr, key=str):
    print(k, nr[k], ok[k], bad[k])
PY
# same_census IN OUT: the reader sees the same records, decoded and failing alike, in both
same_census() {
        "$PY" "$tmp/census.py" "$1" >"$tmp/census.in" && "$PY" "$tmp/census.py" "$2" >"$tmp/census.out" &&
                [ -s "$tmp/census.in" ] && cmp -s "$tmp/census.in" "$tmp/census.out"
}

"$ETWTOP" --record "$tmp/rec.etl" --duration 1 2>/dev/null
check "--record: read by dissect.etl, every Process record decoded" read_ok "$tmp/rec.etl"

if [ -n "$seed002" ] && [ -x "$seed002" ]; then
        (cd "$tmp" && "$seed002" seed002.etl 1 >/dev/null 2>&1)
        check "a StartTrace file session: read by dissect.etl" read_ok "$tmp/seed002.etl"
fi

# --merge -o out.etl in.data: every shared perf.data converted, read back (issue 24)
for f in "${ETWTOP_SAMPLES:-/nonexistent}"/perf/*; do
        [ "$(head -c 8 "$f" 2>/dev/null | tr -d '\0')" = PERFILE2 ] || continue
        "$ETWTOP" --merge -o "$tmp/perf.etl" "$f" >/dev/null 2>&1
        check "--merge of $(basename "$f"): read by dissect.etl" read_ok "$tmp/perf.etl"
        rm -f "$tmp/perf.etl"
done

# Windows' traces rewritten by --merge (uncompressed, ImageID events added): the reader sees each
# event type of the original alike, record for record, decoded or failing as in the original
for f in "${ETWTOP_SAMPLES:-/nonexistent}"/*.etl "${ETWTOP_SAMPLES_UNPACKED:-/nonexistent}"/gcevents/*.etl; do
        [ -f "$f" ] || continue
        "$ETWTOP" --merge -o "$tmp/win.etl" "$f" >/dev/null 2>&1
        check "--merge of $(basename "$f"): the reader sees its events as in the original" \
                same_census "$f" "$tmp/win.etl"
        rm -f "$tmp/win.etl"
done

# a full session: samples with stacks, context switches and ready threads with theirs, images;
# a load runs until the recording is done
timeout 300 bash -c 'while :; do :; done' &
spin=$!
"$ETWTOP" --record "$tmp/full.etl" --on PROC_THREAD+LOADER+PROFILE+CSWITCH+DISPATCHER \
        --stackwalk Profile+CSwitch+ReadyThread --duration 1 2>/dev/null
kill "$spin" 2>/dev/null
wait "$spin" 2>/dev/null
check "--record with stacks and switches: read by dissect.etl, every record decoded" \
        read_ok "$tmp/full.etl"

if command -v tmux >/dev/null; then
        tm() { tmux -L "$sock" "$@"; }
        . "$(dirname "$0")/../lib/tmux_screen.sh"
        tm_new -d -s s -x 160 -y 40 "cd $tmp && $ETWTOP; sleep 60"
        # the save once the screen runs, its file once the status names it
        wait_for 'Self%  *Total%' 20
        tm send-keys -t s W
        wait_for 'saved the recent events to etwtop-' 20
        saved=$(grep -o 'etwtop-[0-9-]*\.etl' "$tmp/screen" | head -1)
        tm send-keys -t s q
        check "the screen's save: read by dissect.etl" read_ok "$tmp/${saved:-none.etl}"
fi
echo "$nr_pass passed, $nr_fail failed, 0 skipped"
[ "$nr_fail" = 0 ]
