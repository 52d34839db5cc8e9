#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# pdb_fixture.sh OUT: builds the PDB tests' fixtures into OUT (the ctest fixture "pdb"):
#   pdbfix.exe + pdbfix.pdb (x86-64) and pdbfix32.exe + pdbfix32.pdb (x86), by clang for
#   *-pc-windows-msvc and lld-link /debug from tests/fixtures/pdb_fixture.cpp;
#   what llvm-pdbutil (the independent reader) says of them: NAME.publics.tsv (name, flags,
#   segment, offset, RVA), NAME.procs.tsv (name, RVA, code size), NAME.lines.tsv (RVA, line),
#   NAME.key (the symbol-store key: GUID and age);
#   wrongage/pdbfix.pdb: pdbfix.pdb with another age (llvm-pdbutil pdb2yaml, yaml2pdb);
#   store/pdbfix.pdb/KEY/pdbfix.pdb: a symbol-store layout.
# Exits 77 (skipped) with the reason when a tool is missing: apt-get install clang lld-14 llvm-14.
set -u
out=${1:?usage: pdb_fixture.sh OUT}
src=$(cd "$(dirname "$0")/.." && pwd)/fixtures/pdb_fixture.cpp

tool() {
        for t in "$@"; do
                command -v "$t" >/dev/null 2>&1 && { command -v "$t"; return 0; }
        done
        return 1
}
clang=$(tool clang clang-14) || { echo "SKIP: no clang (apt-get install clang)"; exit 77; }
lld_link=$(tool lld-link lld-link-14) || { echo "SKIP: no lld-link (apt-get install lld-14)"; exit 77; }
pdbutil=$(tool llvm-pdbutil llvm-pdbutil-14) || {
        echo "SKIP: no llvm-pdbutil (apt-get install llvm-14)"
        exit 77
}

rm -rf "$out"
mkdir -p "$out/wrongage" "$out/store"
cd "$out" || exit 1

build() { # NAME TARGET LINK-OPTIONS...
        local name=$1 target=$2
        shift 2
        "$clang" --target="$target" -g -gcodeview -O1 -fno-exceptions -fno-rtti -c "$src" \
                -o "$name.obj" || return 1
        "$lld_link" /debug /out:"$name.exe" /pdb:"$name.pdb" /entry:main /subsystem:console \
                /nodefaultlib "$@" "$name.obj" >/dev/null || return 1
}
echo 'int main() { return 0; }' >probe.c
if ! "$clang" --target=x86_64-pc-windows-msvc -c probe.c -o probe.obj 2>/dev/null; then
        echo "SKIP: clang cannot compile for x86_64-pc-windows-msvc here"
        exit 77
fi
build pdbfix x86_64-pc-windows-msvc || exit 1
build pdbfix32 i686-pc-windows-msvc /machine:x86 /safeseh:no || exit 1

# llvm-pdbutil's view, as tab-separated lines (mawk has no strtonum: hex() reads hex digits)
hex='function hex(s,  i, v) {
        v = 0; s = toupper(s)
        for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789ABCDEF", substr(s, i, 1)) - 1
        return v }'
for name in pdbfix pdbfix32; do
        "$pdbutil" dump -section-headers "$name.pdb" >"$name.sections.txt" || exit 1
        "$pdbutil" dump -publics "$name.pdb" >"$name.publics.txt" || exit 1
        "$pdbutil" dump -symbols "$name.pdb" >"$name.symbols.txt" || exit 1
        "$pdbutil" dump -l "$name.pdb" >"$name.lines.txt" || exit 1
        "$pdbutil" dump -summary "$name.pdb" >"$name.summary.txt" || exit 1
        # section virtual addresses, by number
        awk '/SECTION HEADER #/ {n = substr($3, 2)} / virtual address$/ {print n "\t" $1}' \
                "$name.sections.txt" >"$name.va.tsv"
        awk -F'\t' "$hex"'
                NR == FNR {va[$1] = hex($2); next}
                /S_PUB32/ {match($0, /`.*`/); nm = substr($0, RSTART + 1, RLENGTH - 2); next}
                /flags = .*addr = / && nm != "" {
                        match($0, /flags = [^,]*(, [^,=]*)*, addr/); fl = substr($0, RSTART + 8, RLENGTH - 14)
                        match($0, /addr = [0-9A-F]+:[0-9]+/); a = substr($0, RSTART + 7, RLENGTH - 7)
                        split(a, p, ":"); seg = p[1] + 0; off = p[2] + 0
                        printf "%s\t%s\t%d\t%d\t%x\n", nm, fl, seg, off, va[seg] + off; nm = ""}' \
                "$name.va.tsv" "$name.publics.txt" >"$name.publics.tsv"
        awk -F'\t' "$hex"'
                NR == FNR {va[$1] = hex($2); next}
                /S_[GL]PROC32/ {match($0, /`.*`/); nm = substr($0, RSTART + 1, RLENGTH - 2); next}
                /addr = .*code size = / && nm != "" {
                        match($0, /addr = [0-9A-F]+:[0-9]+/); a = substr($0, RSTART + 7, RLENGTH - 7)
                        split(a, p, ":")
                        match($0, /code size = [0-9]+/); sz = substr($0, RSTART + 12, RLENGTH - 12)
                        printf "%s\t%x\t%d\n", nm, va[p[1] + 0] + p[2], sz; nm = ""}' \
                "$name.va.tsv" "$name.symbols.txt" >"$name.procs.tsv"
        # "  0001:00000040-0000008E, line/addr entries = 8" then "    15 00000040 !   18 ..."
        awk -F'\t' "$hex"'
                NR == FNR {va[$1] = hex($2); next}
                /line\/addr entries/ {split($1, p, ":"); seg = p[1] + 0; next}
                seg && /^ +[0-9]+ [0-9A-F]+ / {
                        n = split($0, w, " ")
                        for (i = 1; i + 1 <= n; i++)
                                if (w[i] ~ /^[0-9]+$/ && w[i + 1] ~ /^[0-9A-F]+$/ &&
                                    length(w[i + 1]) == 8)
                                        printf "%x\t%d\n", va[seg] + hex(w[i + 1]), w[i]}' \
                "$name.va.tsv" "$name.lines.txt" >"$name.lines.tsv"
        guid=$(awk '/GUID:/ {gsub(/[{}-]/, "", $2); print $2}' "$name.summary.txt")
        age=$(awk '/^ *Age:/ {print $2; exit}' "$name.summary.txt")
        printf '%s%X\n' "$guid" "$age" >"$name.key"
        [ -s "$name.publics.tsv" ] && [ -s "$name.procs.tsv" ] && [ -s "$name.lines.tsv" ] || {
                echo "pdb_fixture: llvm-pdbutil's output of $name.pdb was not understood" >&2
                exit 1
        }
done

# the same PDB with another age
"$pdbutil" pdb2yaml -all pdbfix.pdb >pdbfix.yaml || exit 1
awk '/^PdbStream:/ {s = 1} s && /^  Age:/ {sub(/[0-9]+$/, "7"); s = 0} {print}' pdbfix.yaml \
        >wrongage.yaml
"$pdbutil" yaml2pdb -pdb=wrongage/pdbfix.pdb wrongage.yaml || exit 1

key=$(cat pdbfix.key)
mkdir -p "store/pdbfix.pdb/$key"
cp pdbfix.pdb "store/pdbfix.pdb/$key/pdbfix.pdb"
echo "pdb_fixture: built in $out (key $key)"
