#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# start_libs.sh: what etwtop loads at start. libcurl (symbol servers only: symbols/curl_lazy.c),
# expat (EventSource manifests only: backend/decode/xml_lazy.c) and capstone (annotate's
# disassembly only: src/capstone_lazy.c) are loaded at their first use, not at start: linked,
# libcurl and its thirty libraries made every start, a --dump or a -b of a small file too,
# spend half of its time in the dynamic loader; capstone 77,000 relocations, nine tenths of what
# the loader did. (libxml2, which read the manifests before expat, brought ICU's 30 MB of data,
# libstdc++ and liblzma: none of them is loaded, at start or by a manifest.)
#   1. None of them is a library the binary needs (readelf -d).
#   2. After --help, and after a replay of a perf.data (-b), none of them is mapped (LD_DEBUG).
#   3. A trace with EventSource manifests loads expat (not libxml2, ICU or libstdc++), and its
#      events are decoded by them.
#   4. --annotate loads capstone and disassembles.
# Usage: start_libs.sh ETWTOP (ETWTOP_SAMPLES, ETWTOP_SAMPLES_UNPACKED, ETL_FIXTURE and
# SYM_FIXTURE from the environment, for 3 and 4)
set -u
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../lib/check.sh"
lazy="libcurl libexpat libxml2 libcapstone"

# 1. the binary's needed libraries
if command -v readelf >/dev/null; then
        needed=$(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
        echo "needed: $(paste -sd' ' <<<"$needed")"
        for lib in $lazy; do
                check "$bin does not need $lib at start" bash -c "! grep -q '^$lib' <<<'$needed'"
        done
else
        skip "readelf is missing (binutils): the needed libraries are not read"
fi

# loaded NAME...: the files the dynamic loader opened for the run (LD_DEBUG=files) into
# $tmp/NAME.files, the run's output in $tmp/NAME.out; mapped NAME LIB: whether LIB was opened
loaded() {
        local name=$1
        shift
        LD_DEBUG=files LD_DEBUG_OUTPUT="$tmp/$name.ld" "$bin" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
        cat "$tmp/$name.ld".* 2>/dev/null | grep -o 'file=[^ ]*' | sort -u >"$tmp/$name.files"
}
mapped() { grep -q "^file=\(.*/\)\?$2" "$tmp/$1.files"; }
unmapped() { ! mapped "$@"; }
on_fail() { echo "loaded: $(paste -sd' ' "$tmp/$name.files" 2>/dev/null)"; }

# 2. --help, and a replay of a perf.data
loaded help --help
name=help
check "--help: ran, the loader said what it opened" [ -s "$tmp/help.files" ]
for lib in $lazy libicu libstdc++; do
        check "--help: $lib is not loaded" unmapped help "$lib"
done
perf_data=${ETWTOP_SAMPLES:-}/perf/propeller_sample_1.perfdata1
if [ -r "$perf_data" ]; then
        loaded perf --replay "$perf_data" -b --top 40
        name=perf
        check "--replay perf.data -b: a table ($(head -c 300 "$tmp/perf.err"))" \
                grep -q '^Hot functions' "$tmp/perf.out"
        for lib in $lazy libicu libstdc++; do
                check "--replay perf.data -b: $lib is not loaded" unmapped perf "$lib"
        done
else
        skip "no $perf_data: the perf.data replay is not checked"
fi
unset -f on_fail

# 3. EventSource manifests (ManifestData events of PerfView, TplEventSource and
# FrameworkEventSource): expat loaded at the first, their events decoded by them
net=${ETWTOP_SAMPLES_UNPACKED:-}/net.4.5.2.x64.etl
if [ -r "$net" ]; then
        loaded net --dump "$net"
        name=net
        check "manifests: expat is loaded" mapped net libexpat
        for lib in libxml2 libicu libstdc++; do
                check "manifests: $lib is not loaded" unmapped net "$lib"
        done
        check "manifests: PerfView's event decoded by its manifest" grep -q \
                ' PerfView/SessionParameters sessionName="NT Kernel Logger" sessionFileName="net.4.5.2.x64.kernel.etl" bufferSizeMB=256 circularBuffSizeMB=500$' \
                "$tmp/net.out"
        check "manifests: TplEventSource's event decoded by its manifest" grep -q \
                ' System.Threading.Tasks.TplEventSource/TaskScheduled/Send OriginatingTaskSchedulerID=1 OriginatingTaskID=5 TaskID=6 CreatingTaskID=0 TaskCreationOptions=8192$' \
                "$tmp/net.out"
        check "manifests: no warning ($(head -c 300 "$tmp/net.err"))" [ ! -s "$tmp/net.err" ]
else
        skip "no $net: the manifests' library is not checked"
fi

# 4. annotate: a trace of LBR samples in the symbol fixture's fixture_leaf (etl_fixture
# --lbr-image: file offsets as addresses)
if [ -n "${ETL_FIXTURE:-}" ] && [ -n "${SYM_FIXTURE:-}" ] && command -v readelf >/dev/null; then
        cp "$SYM_FIXTURE" "$tmp/symfix_libs"
        leaf=$(readelf -sW "$tmp/symfix_libs" | awk '$8 == "fixture_leaf" {print $2; exit}')
        # its file offset, by the LOAD segment holding it
        off=$(readelf -lW "$tmp/symfix_libs" | awk '$1 == "LOAD" {print $2, $3, $6}' |
                while read -r o v z; do
                        if [ $((0x$leaf)) -ge $((v)) ] && [ $((0x$leaf)) -lt $((v + z)) ]; then
                                printf '%x\n' $((0x$leaf - v + o))
                                break
                        fi
                done)
        "$ETL_FIXTURE" --lbr-image "$tmp/symfix_libs" "$tmp/lbr.etl" "$off:$off:5" >/dev/null 2>&1
        loaded ann --replay "$tmp/lbr.etl" -b --annotate fixture_leaf
        name=ann
        check "annotate: capstone is loaded" mapped ann libcapstone
        check "annotate: fixture_leaf disassembled ($(head -c 300 "$tmp/ann.err"))" \
                grep -Eq "^ +100\.00 +5 +$off:  [a-z]+" "$tmp/ann.out"
else
        skip "no ETL_FIXTURE, SYM_FIXTURE or readelf: annotate's library is not checked"
fi

echo "$nr_pass passed, $nr_fail failed, $nr_skip skipped"
[ $nr_fail = 0 ]
