# SPDX-License-Identifier: MIT
# build_id.sh: sourced by tests/fixtures/make_variants.sh and the shell tests.
# build_id FILE: FILE's GNU build-id in hex (readelf -n), empty when it has none
build_id() { readelf -n "$1" 2>/dev/null | awk '/Build ID:/ {print $3; exit}'; }
# build_id_rewrite FILE HEX8: FILE's build-id with its first 4 bytes made HEX8 (8 hex digits), in
# place: the same code, another build as far as a build-id tells (the note's descriptor starts 16
# bytes into its section, after namesz, descsz, type and "GNU\0"). False where FILE has no
# .note.gnu.build-id section.
build_id_rewrite() {
        local off
        off=$(readelf -SW "$1" | awk '$2 == ".note.gnu.build-id" {print $5; exit}
                $3 == ".note.gnu.build-id" {print $6; exit}')
        [ -n "$off" ] || return 1
        printf "\\x${2:0:2}\\x${2:2:2}\\x${2:4:2}\\x${2:6:2}" |
                dd of="$1" bs=1 seek=$((16#$off + 16)) conv=notrunc status=none
}
# own_copy SRC DEST: SRC copied to DEST with a build-id of this run's own (its first 4 bytes
# from the shell's pid and $RANDOM), so that another copy of SRC running on the machine (another
# suite's tests) is not one module with it; says so and fails where SRC has no build-id note
own_copy() {
        cp "$1" "$2" &&
                build_id_rewrite "$2" "$(printf '%08x' $(((($$ & 0xffff) << 16) | (RANDOM & 0xffff))))" ||
                { echo "$(basename "$0"): $1 has no .note.gnu.build-id" >&2; return 1; }
}
