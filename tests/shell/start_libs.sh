#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# start_libs.sh: what etwtop loads at start. libcurl (symbol servers only, loaded at its first
# use by symbols/curl_lazy.c) is not among the libraries the binary needs: linked, it and the
# thirty libraries it needs made every start, a --dump or a -b of a small file too, spend half
# of its time in the dynamic loader.
# Usage: start_libs.sh ETWTOP
set -u
bin=$1
if ! command -v readelf >/dev/null; then
        echo "SKIP: readelf is missing (binutils)"
        exit 0
fi
needed=$(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
nr_fail=0
for lib in libcurl; do
        if grep -q "^$lib" <<<"$needed"; then
                echo "FAIL: $bin needs $lib at start: $(paste -sd' ' <<<"$needed")" >&2
                nr_fail=$((nr_fail + 1))
        else
                echo "ok: $lib is not loaded at start"
        fi
done
echo "needed: $(paste -sd' ' <<<"$needed")"
[ "$nr_fail" = 0 ]
