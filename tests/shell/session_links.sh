#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# session_links.sh: the link arrows of the session folders (issue 23), from the built archives:
# the session core calls nothing defined in the host or the API edge, and the host nothing
# defined in the API edge, so the cycle session <-> host client <-> host server cannot come back.
# Usage: session_links.sh CORE.a HOST.a API.a
set -u
core=$1 host=$2 api=$3
if ! command -v nm >/dev/null; then
        echo "SKIP: nm is missing (binutils)"
        exit 0
fi
defined() { nm --defined-only -g "$1" 2>/dev/null | awk 'NF == 3 && $2 ~ /[TDBRC]/ {print $3}' | sort -u; }
undefined() { nm -u -g "$1" 2>/dev/null | awk '{print $NF}' | sort -u; }
nr_fail=0
check() { # what user.a provider.a
        local hits
        hits=$(comm -12 <(undefined "$2") <(defined "$3") | paste -sd' ')
        if [ -n "$hits" ]; then
                echo "FAIL: $1: $hits" >&2
                nr_fail=$((nr_fail + 1))
        else
                echo "ok: $1"
        fi
}
check "the session core calls the host" "$core" "$host"
check "the session core calls the API edge" "$core" "$api"
check "the host calls the API edge" "$host" "$api"
[ "$nr_fail" = 0 ]
