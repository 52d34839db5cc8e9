/* SPDX-License-Identifier: MIT */
/* fuzz_symtext.c: the text symbol parsers (/proc/kallsyms, /proc/modules, perf maps) from bytes,
   and the decoders of the kallsyms parse's cached form and of a symbol table's kept form
   (symtab_cache.h). The first byte picks the parser: 'K', 'M', 'P', 'C' (the cached form), 'S'
   (a kept table), else its value modulo 3. A kallsyms parse and a perf map's table are also
   encoded and decoded again (every answer the same), then decoded once more with one byte
   changed (at a place the input's last bytes choose), so that the decoders meet forms whole but
   for one field. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/kallsyms.h"
#include "symbols/perf_map.h"
#include "symbols/sym_table.h"
#include "symtab_cache.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Lookups at every symbol's edges and at a few fixed addresses. */
static void probe(const struct sym_table *t, const struct kallsyms *ks)
{
        static const uint64_t fixed[] = {0, 1, 0x1000, 0xffffffff81000000, UINT64_MAX};
        struct kallsyms_hit hit;
        uint32_t n = sym_table_count(t);
        for (uint32_t i = 0; i < n && i < 256; i++) {
                const struct sym_entry *e = sym_table_at(t, i);
                uint64_t addrs[] = {e->start, e->start + e->size - 1, e->start + e->size};
                for (size_t k = 0; k < sizeof(addrs) / sizeof(addrs[0]); k++) {
                        const struct sym_entry *f = sym_table_find(t, addrs[k]);
                        if (f && sym_table_name(t, f)[0] == '\n')
                                abort(); /* names are sanitized */
                        if (ks && kallsyms_lookup(ks, addrs[k], &hit) &&
                            (!hit.module || hit.module[0] != '['))
                                abort();
                }
        }
        for (size_t k = 0; k < sizeof(fixed) / sizeof(fixed[0]); k++) {
                sym_table_find(t, fixed[k]);
                if (ks)
                        kallsyms_lookup(ks, fixed[k], &hit);
        }
}

/* a and b give the same answers at every symbol's edges; abort otherwise. */
static void same(const struct kallsyms *a, const struct kallsyms *b)
{
        const struct sym_table *ta = kallsyms_table(a), *tb = kallsyms_table(b);
        uint32_t n = sym_table_count(ta);
        if (sym_table_count(tb) != n)
                abort();
        uint64_t sa = 0, ea = 0, sb = 0, eb = 0;
        if (kallsyms_kernel_text(a, &sa, &ea) != kallsyms_kernel_text(b, &sb, &eb) || sa != sb ||
            ea != eb)
                abort();
        for (uint32_t i = 0; i < n; i++) {
                const struct sym_entry *e = sym_table_at(ta, i);
                uint64_t addrs[] = {e->start - 1, e->start, e->start + e->size - 1,
                                    e->start + e->size};
                for (size_t k = 0; k < sizeof(addrs) / sizeof(addrs[0]); k++) {
                        struct kallsyms_hit x, y;
                        bool hx = kallsyms_lookup(a, addrs[k], &x);
                        if (kallsyms_lookup(b, addrs[k], &y) != hx)
                                abort();
                        if (hx && (strcmp(x.name, y.name) != 0 || strcmp(x.module, y.module) != 0 ||
                                   x.start != y.start))
                                abort();
                }
        }
}

/* One byte of form[0..len) changed where and how the input's last 4 bytes say; false where the
   input is shorter. */
static bool change_one_byte(uint8_t *form, size_t len, const uint8_t *data, size_t size)
{
        if (size < 4 || !len)
                return false;
        uint32_t pick;
        memcpy(&pick, data + size - 4, 4);
        form[(pick >> 8) % len] ^= (uint8_t)(pick | 1);
        return true;
}

/* A kept table's form of bytes (copied: 8-byte aligned, as mapped): a table read from it
   answers lookups (its entries are checked where read: any order, any name offset), and every
   name it gives is one sym_table_add could have left. */
static void decode_table(const uint8_t *bytes, size_t len)
{
        uint64_t *copy = malloc(len + 8);
        if (!copy)
                return;
        memcpy(copy, bytes, len);
        struct sym_table *t = symtab_cache_decode(copy, len);
        if (t) {
                uint32_t n = sym_table_count(t);
                for (uint32_t i = 0; i < n; i++) {
                        for (const char *c = sym_table_name(t, sym_table_at(t, i)); *c; c++)
                                if ((unsigned char)*c < 0x20 || *c == 0x7f)
                                        abort(); /* names are sanitized */
                }
                probe(t, NULL);
        }
        sym_table_free(t);
        free(copy);
}

/* t (finished) in its kept form and back: the same entries and names; then the form with one
   byte changed as round_trip changes it. */
static void table_round_trip(const struct sym_table *t, const uint8_t *data, size_t size)
{
        size_t len = 0;
        uint8_t *form = symtab_cache_encode(t, &len);
        if (!form)
                return;
        struct sym_table *back = symtab_cache_decode(form, len);
        if (!back || sym_table_count(back) != sym_table_count(t))
                abort(); /* what the encoder writes, the decoder reads */
        for (uint32_t i = 0; i < sym_table_count(t); i++) {
                const struct sym_entry *x = sym_table_at(t, i), *y = sym_table_at(back, i);
                if (x->start != y->start || x->size != y->size || x->flags != y->flags ||
                    strcmp(sym_table_name(t, x), sym_table_name(back, y)) != 0)
                        abort();
        }
        sym_table_free(back);
        if (change_one_byte(form, len, data, size))
                decode_table(form, len);
        free(form);
}

/* The cached form of bytes (copied: the decoder wants them 8-byte aligned, as mapped). */
static void decode(const uint8_t *bytes, size_t len)
{
        uint64_t *copy = malloc(len + 8);
        if (!copy)
                return;
        memcpy(copy, bytes, len);
        struct kallsyms *ks = NULL;
        if (kallsyms_parsed_open_mem(copy, len, &ks) == 0) {
                if (!kallsyms_is_mapped(ks))
                        abort();
                probe(kallsyms_table(ks), ks);
                uint64_t start, end;
                kallsyms_kernel_text(ks, &start, &end);
        } else if (ks) {
                abort();
        }
        kallsyms_free(ks);
        free(copy);
}

/* The parse ks encoded, decoded (the same answers), and decoded with one byte of it changed:
   pick (the input's last 4 bytes, when it has them) chooses which and how. */
static void round_trip(const struct kallsyms *ks, const uint8_t *data, size_t size)
{
        size_t len = 0;
        uint8_t *form = kallsyms_parsed_encode(ks, &len);
        struct kallsyms *back = NULL;
        if (kallsyms_parsed_open_mem(form, len, &back) != 0)
                abort(); /* what the encoder writes, the decoder reads */
        same(ks, back);
        kallsyms_free(back);
        if (change_one_byte(form, len, data, size))
                decode(form, len);
        free(form);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size < 1)
                return 0;
        int which = data[0] == 'K'   ? 0
                    : data[0] == 'M' ? 1
                    : data[0] == 'P' ? 2
                    : data[0] == 'C' ? 3
                    : data[0] == 'S' ? 4
                                     : data[0] % 3;
        const char *text = (const char *)data + 1;
        size_t len = size - 1;

        if (which == 0) {
                struct kallsyms *ks = NULL;
                struct kallsyms_error err;
                if (kallsyms_parse_mem(text, len, &ks, &err) == 0) {
                        probe(kallsyms_table(ks), ks);
                        uint64_t start, end;
                        kallsyms_kernel_text(ks, &start, &end);
                        round_trip(ks, data, size);
                } else if (ks) {
                        abort(); /* a failure leaves nothing behind */
                }
                kallsyms_free(ks);
        } else if (which == 1) {
                struct kallsyms_module *mods = NULL;
                uint32_t nr = 0;
                struct kallsyms_error err;
                if (kallsyms_modules_parse_mem(text, len, &mods, &nr, &err) == 0) {
                        for (uint32_t i = 0; i < nr; i++) {
                                if (!mods[i].base || !mods[i].name[0])
                                        abort();
                        }
                }
                free(mods);
        } else if (which == 3) {
                decode(data + 1, size - 1);
        } else if (which == 4) {
                decode_table(data + 1, size - 1);
        } else {
                struct sym_table *t = sym_table_new();
                struct perf_map_error err;
                perf_map_parse_mem(text, len, t, &err);
                sym_table_finish(t, PERF_MAP_MAX_INFERRED_SIZE);
                probe(t, NULL);
                table_round_trip(t, data, size);
                sym_table_free(t);
        }
        return 0;
}
