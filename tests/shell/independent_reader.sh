#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# independent_reader.sh: the files etwtop writes, read by an independent .etl reader (fox-it's
# dissect.etl, a Python parser that knows nothing of etwtop): a --record file, a StartTrace file
# session (the seed 002 example), the screen's save and --merge's conversion of each shared
# perf.data. Every Process record must decode
# through the reader's manifest, and the logfile header must carry a CpuSpeedInMHz (the reader
# divides by it for CPU-clock traces) and as many buffers as the file holds.
# The reader is used where it is importable (pip install dissect.etl, or its source on
# $ETWTOP_DISSECT_PATH); elsewhere the test skips and says so.
set -u
: "${ETWTOP:?}"
seed002=${1:-}
# exit 77: ctest counts the test as skipped (SKIP_RETURN_CODE)
py=$(command -v /usr/bin/python3 || command -v python3) || { echo "SKIP: no python3"; echo "0 passed, 0 failed, 1 skipped"; exit 77; }
export PYTHONPATH=${ETWTOP_DISSECT_PATH:+$ETWTOP_DISSECT_PATH:}${PYTHONPATH:-}
if ! "$py" -c 'import dissect.etl' 2>/dev/null; then
        echo "SKIP: dissect.etl is not installed here (pip install dissect.etl, or set ETWTOP_DISSECT_PATH to its source); no other independent ETL reader is packaged for Debian"
        echo "0 passed, 0 failed, 1 skipped"
        exit 77
fi
tmp=$(mktemp -d)
sock=etwtop-reader-$$
trap 'tmux -L "$sock" kill-server 2>/dev/null; rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../lib/check.sh"

cat >"$tmp/read.py" <<'PY'
import sys
from uuid import UUID
from dissect.etl.etl import ETL

PROCESS = UUID("3d6fa8d0-fe05-11d0-9dda-00c04fd7ba7c")
path = sys.argv[1]
with open(path, "rb") as fh:
    etl = ETL(fh)
    mhz = etl.logfile_header.cpu_speed_in_MHz
    nr_buffers = etl.logfile_header.buffers_written
    nr = nr_process = bad = 0
    for rec in etl:
        nr += 1
        if rec.header.provider_id != PROCESS:
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
print(f"{path}: {nr} records, {nr_process} Process, {bad} undecoded, CpuSpeedInMHz {mhz}, "
      f"BuffersWritten {nr_buffers}")
sys.exit(0 if nr_process > 0 and bad == 0 and mhz > 0 else 1)
PY

read_ok() { "$py" "$tmp/read.py" "$1"; }

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

if command -v tmux >/dev/null; then
        tmux -L "$sock" new-session -d -s s -x 160 -y 40 "cd $tmp && $ETWTOP; sleep 5"
        sleep 3
        tmux -L "$sock" send-keys -t s W
        for ((i = 0; i < 50; i++)); do
                saved=$(ls "$tmp"/etwtop-*.etl 2>/dev/null | head -1)
                [ -n "$saved" ] && break
                sleep 0.2
        done
        sleep 1
        tmux -L "$sock" send-keys -t s q
        check "the screen's save: read by dissect.etl" read_ok "${saved:-$tmp/none.etl}"
fi
echo "$nr_pass passed, $nr_fail failed, 0 skipped"
[ "$nr_fail" = 0 ]
