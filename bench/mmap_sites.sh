#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# mmap_sites.sh: where a process's mapped memory comes from, by the code that asked for it. Reads
# a perf.data of the process's mmap, munmap and mremap system calls with their user stacks
# (what rss.sh records with RSS_SITES=1), follows each anonymous mapping from its mmap to its
# munmap (mremap moves it), and prints the megabytes mapped at each of the given seconds after
# the first call, by the first frames of etwtop that asked (glibc maps each block of 1 MiB or
# more apart, util/mem_policy.c: each large table is a mapping of its own, so its site is its
# table). Mapped, not resident; with SITES_RESIDENT, what of it was resident too.
# The stacks are unwound by etwtop's converter (perf script's DWARF unwinding stops in libc on
# Debian's perf 6.1) and named by addr2line.
# Usage: bench/mmap_sites.sh PERF_DATA ETWTOP [SECONDS...]   (default: 60 300 600 900 1200 1800)
# SITES_RESIDENT="FILE...": bench/resident_runs.py's readings of the process's resident pages
# (the calls recorded by CLOCK_MONOTONIC, perf record -k monotonic, the readings' clock): the
# megabytes resident at each reading by the same sites, and those of no mapping traced (glibc's
# heap: the blocks under 1 MiB)
set -u
data=${1:?perf.data}
etwtop=${2:?the etwtop binary}
shift 2
times=${*:-60 300 600 900 1200 1800}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for t in perf addr2line; do
        command -v $t >/dev/null || { echo "mmap_sites.sh: $t not found" >&2; exit 1; }
done
# the calls, in order: thread, time, event, its fields
perf script -i "$data" -F tid,time,event,trace 2>/dev/null >"$tmp/calls"
# their stacks, in the same order, and where etwtop's image lay
"$etwtop" --dump "$data" 2>/dev/null >"$tmp/dump"
grep 'StackWalk/Stack ' "$tmp/dump" >"$tmp/stacks"
image=$(awk -v bin="$(basename "$etwtop")" '/etwtop\/ImageIdentity / && $0 ~ "/" bin "\"$" {
                for (i = 1; i <= NF; i++) {
                        if ($i ~ /^base=/) b = substr($i, 6)
                        if ($i ~ /^size=/) s = substr($i, 6)
                        if ($i ~ /^file_offset=/) o = substr($i, 13)
                }
                print b, s, o; exit }' "$tmp/dump")
[ -n "$image" ] || { echo "mmap_sites.sh: no image of $etwtop in $data" >&2; exit 1; }
read -r base size off <<<"$image"
# hex(s): a hexadecimal address as a number (mawk has no strtonum; addresses fit a double)
hexfn='function hex(s,   i, n) { sub(/^0x/, "", s); n = 0
        for (i = 1; i <= length(s); i++) n = n * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
        return n }'
# etwtop's return addresses in the stacks, as file offsets for addr2line (less one: the call)
awk -v base="$base" -v size="$size" -v off="$off" "$hexfn"'
        BEGIN { b = hex(base); e = b + hex(size); o = hex(off) }
        { for (i = 1; i <= NF; i++) if ($i ~ /^0x/) { a = hex($i)
                  if (a >= b && a < e && !($i in seen)) { seen[$i]; printf "%s 0x%x\n", $i, a - b + o - 1 } } }
' "$tmp/stacks" >"$tmp/addrs"
cut -d' ' -f2 "$tmp/addrs" | addr2line -f -e "$etwtop" | awk 'NR % 2' |
        paste -d' ' <(cut -d' ' -f1 "$tmp/addrs") - >"$tmp/names"
awk -v times="$times" -v resident="${SITES_RESIDENT:-}" "$hexfn"'
        # the site: the first three frames of etwtop, past its allocation wrappers
        function site(line,   i, n, a, k, out, f) {
                n = split(line, f, " "); k = 0; out = ""
                for (i = 1; i <= n && k < 3; i++) {
                        if (f[i] !~ /^0x/ || !(f[i] in name)) continue
                        a = name[f[i]]; sub(/\..*/, "", a)
                        if (a ~ /^x(malloc|calloc|realloc|zalloc_table|strdup)$/) continue
                        out = out (k++ ? " < " : "") a
                }
                return out == "" ? "(libraries)" : out
        }
        # a field as its text, and an address as a key (mawk prints a number past 2^31 as
        # 1.4e+14: the keys are the addresses in hexadecimal, their values in addr[])
        function text(s, k,   i, v) {
                i = index(s, k ": "); if (!i) return ""
                v = substr(s, i + length(k) + 2); sub(/[, ].*/, "", v)
                return v
        }
        function num(v) { return v ~ /^0x/ ? hex(v) : v + 0 }
        function key(v) { sub(/^0x0*/, "", v); return v }
        function snap(t,   a, s) {
                for (s in mb) mb[s] = 0
                for (a in len) mb[at[a]] += len[a]
                shown[++nshown] = t "s"
                for (s in mb) { v[s, nshown] = mb[s]; tot[nshown] += mb[s]; if (mb[s] > top[s]) top[s] = mb[s] }
        }
        # a table: a column a reading (label lab[k], n of them), a row a site whose highest
        # (top) is 1 MiB or more, the highest first, its megabytes val[site, k]; then all[k]
        function table(top, val, lab, n, all, what,   s, i, k, m, order, x) {
                for (k = 1; k <= n; k++) printf "%7s", lab[k]
                print "   MB " what ", by the site that asked"
                m = 0
                for (s in top) if (top[s] >= 1048576) order[++m] = s
                for (i = 1; i <= m; i++) for (k = i + 1; k <= m; k++)
                        if (top[order[k]] > top[order[i]]) { x = order[i]; order[i] = order[k]; order[k] = x }
                for (i = 1; i <= m; i++) {
                        for (k = 1; k <= n; k++) printf "%7.1f", val[order[i], k] / 1048576
                        print "   " order[i]
                }
                for (k = 1; k <= n; k++) printf "%7.1f", all[k] / 1048576
                print "   in all (anonymous, " what ")"
        }
        # the resident pages of reading k at its time: the share of each mapping, by its site
        function rsnap(k,   a, i, lo, hi, s, o, b, e, all) {
                rshown[k] = int(rt[k] - t0 + 0.5) "s"
                for (i = 1; i <= rn[k]; i++) all += rlen[k, i]
                rtot[k] = all
                for (a in len) {
                        lo = addr[a]; hi = lo + len[a]; o = 0
                        for (i = 1; i <= rn[k]; i++) {
                                b = rlo[k, i]; e = b + rlen[k, i]
                                if (e > lo && b < hi) o += (e < hi ? e : hi) - (b > lo ? b : lo)
                        }
                        rv[at[a], k] += o; all -= o
                        if (rv[at[a], k] > rtop[at[a]]) rtop[at[a]] = rv[at[a], k]
                }
                rv["(no mapping traced: the heap, blocks under 1 MiB)", k] = all
                rtop["(no mapping traced: the heap, blocks under 1 MiB)"] = 1e18
        }
        BEGIN {
                ntimes = split(times, tt, " ")
                nres = split(resident, rf, " ")
                for (k = 1; k <= nres; k++) {
                        rn[k] = 0
                        while ((getline line < rf[k]) > 0) {
                                split(line, w, " ")
                                if (w[1] == "time") { rt[k] = w[2] + 0; continue }
                                rn[k]++; rlo[k, rn[k]] = hex(w[1]); rlen[k, rn[k]] = w[2] * 4096
                        }
                        close(rf[k])
                }
                nr = 0
        }
        FILENAME == ARGV[1] { name[$1] = $2; next }
        FILENAME == ARGV[2] { st[++nst] = $0; stt[nst] = $1 + 0; next }
        {
                # "TID TIME: syscalls:EVENT: FIELDS"
                tid = $1; t = $2 + 0; ev = $3; sub(/:$/, "", ev); sub(/^syscalls:/, "", ev)
                rest = $0; sub(/^[^:]*: +syscalls:[a-z_]+: */, "", rest)
                if (!started) { started = 1; t0 = t; d0 = t - stt[1] }
                # the stack of this call: the next one at its time (2 us: perf script prints us)
                while (j < nst && stt[j + 1] + d0 < t - 0.000002) j++
                stack = (j < nst && stt[j + 1] + d0 <= t + 0.000002) ? st[++j] : ""
                while (nt < ntimes && t - t0 >= tt[nt + 1]) snap(tt[++nt])
                while (nr < nres && t >= rt[nr + 1]) rsnap(++nr)
                if (ev == "sys_enter_mmap") {
                        plen[tid] = num(text(rest, "len")); psite[tid] = site(stack)
                        pfd[tid] = text(rest, "fd")
                } else if (ev == "sys_exit_mmap") {
                        r = key(rest)
                        if ((tid in plen) && hex(r) > 4096 && pfd[tid] ~ /^(0xffffffff(ffffffff)?|-1)$/) {
                                len[r] = plen[tid]; at[r] = psite[tid]; addr[r] = hex(r)
                        }
                        delete plen[tid]
                } else if (ev == "sys_enter_munmap") {
                        a = num(text(rest, "addr")); l = num(text(rest, "len"))
                        for (m in len) {
                                m0 = addr[m]
                                if (m0 >= a && m0 < a + l) { delete len[m]; delete at[m]; delete addr[m] }
                                else if (m0 < a && a < m0 + len[m]) len[m] = a - m0
                        }
                } else if (ev == "sys_enter_mremap") {
                        pold[tid] = key(text(rest, "addr")); pnew[tid] = num(text(rest, "new_len"))
                        psite[tid] = site(stack)
                } else if (ev == "sys_exit_mremap") {
                        r = key(rest)
                        if ((tid in pnew) && hex(r) > 4096) {
                                o = pold[tid]; s = (o in at) ? at[o] : psite[tid]
                                delete len[o]; delete at[o]; delete addr[o]
                                len[r] = pnew[tid]; at[r] = s; addr[r] = hex(r)
                        }
                        delete pnew[tid]
                }
        }
        END {
                while (nt < ntimes) snap(tt[++nt])
                table(top, v, shown, nshown, tot, "mapped")
                while (nr < nres) rsnap(++nr)
                if (!nres) exit
                print ""
                table(rtop, rv, rshown, nres, rtot, "resident")
        }' "$tmp/names" "$tmp/stacks" "$tmp/calls"
