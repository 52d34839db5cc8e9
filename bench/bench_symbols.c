/* SPDX-License-Identifier: MIT */
/* bench_symbols.c: address -> function lookups through etwtop's symbol store against libdwfl's
   dwfl_module_addrinfo, on one shared library, for the same random addresses inside its
   functions. Prints lookups per second for first-time lookups (the table built, the address
   cache cold), cached lookups (the same addresses again) and dwfl_module_addrinfo, the time
   to build the table, and how many names differ between the two.
   Usage: bench_symbols LIBRARY [ADDRESSES] [DWFL_ADDRESSES] */
#include "symbols/symbols.h"

#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BASE 0x7f1000000000ull

static double now_s(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const Dwfl_Callbacks callbacks = {
        .find_elf = dwfl_build_id_find_elf,
        .find_debuginfo = dwfl_standard_find_debuginfo,
        .section_address = dwfl_offline_section_address,
};

static uint64_t rng = 88172645463325252ull;
static uint64_t next_rand(void)
{
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        return rng;
}

int main(int argc, char **argv)
{
        if (argc < 2) {
                fprintf(stderr, "usage: %s LIBRARY [ADDRESSES] [DWFL_ADDRESSES]\n", argv[0]);
                return 2;
        }
        const char *lib = argv[1];
        uint32_t nr = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 10) : 100000;
        uint32_t nr_dwfl = argc > 3 ? (uint32_t)strtoul(argv[3], NULL, 10) : 2000;

        /* the library at BASE in a libdwfl session: the reference */
        Dwfl *dwfl = dwfl_begin(&callbacks);
        dwfl_report_begin(dwfl);
        Dwfl_Module *mod = dwfl_report_elf(dwfl, "lib", lib, -1, BASE, false);
        dwfl_report_end(dwfl, NULL, NULL);
        if (!mod) {
                fprintf(stderr, "bench_symbols: %s: %s\n", lib, dwfl_errmsg(-1));
                return 1;
        }
        GElf_Addr bias;
        Elf *elf = dwfl_module_getelf(mod, &bias);
        /* random addresses inside sized functions */
        int nsym = dwfl_module_getsymtab(mod);
        uint64_t *starts = calloc((size_t)nsym + 1, sizeof(*starts));
        uint64_t *sizes = calloc((size_t)nsym + 1, sizeof(*sizes));
        uint32_t nf = 0;
        for (int i = 1; i < nsym; i++) {
                GElf_Sym sym;
                GElf_Addr addr;
                GElf_Word shndx;
                Elf *e;
                Dwarf_Addr b;
                const char *n = dwfl_module_getsym_info(mod, i, &sym, &addr, &shndx, &e, &b);
                if (n && GELF_ST_TYPE(sym.st_info) == STT_FUNC && sym.st_size &&
                    shndx != SHN_UNDEF) {
                        starts[nf] = addr;
                        sizes[nf++] = sym.st_size;
                }
        }
        if (!nf) {
                fprintf(stderr, "bench_symbols: %s has no sized functions\n", lib);
                return 1;
        }
        uint64_t *addrs = calloc(nr, sizeof(*addrs));
        for (uint32_t i = 0; i < nr; i++) {
                uint32_t f = (uint32_t)(next_rand() % nf);
                addrs[i] = starts[f] + next_rand() % sizes[f];
        }

        /* the same mappings for etwtop: one per PT_LOAD, as a process would have them */
        struct sym_options o = {.is_synchronous = true};
        struct sym_store *s;
        sym_store_new(&s, &o);
        size_t nph = 0;
        elf_getphdrnum(elf, &nph);
        uint64_t lo = UINT64_MAX;
        for (size_t i = 0; i < nph; i++) {
                GElf_Phdr ph;
                if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && ph.p_vaddr < lo)
                        lo = ph.p_vaddr & ~0xfffull;
        }
        for (size_t i = 0; i < nph; i++) {
                GElf_Phdr ph;
                if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
                        continue;
                uint64_t start = BASE - lo + (ph.p_vaddr & ~0xfffull);
                uint64_t end = BASE - lo + ph.p_vaddr + ph.p_memsz;
                struct sym_image im = {1, start, end - start, ph.p_offset & ~0xfffull, lib, NULL, 0,
                                       0, 0};
                sym_image_load(s, &im);
        }

        struct sym_frame fr;
        double t0 = now_s();
        sym_resolve(s, sym_locate(s, 1, addrs[0]), &fr); /* loads the module */
        double t_load = now_s() - t0;

        t0 = now_s();
        for (uint32_t i = 0; i < nr; i++)
                sym_resolve(s, sym_locate(s, 1, addrs[i]), &fr);
        double t_first = now_s() - t0;

        uint32_t rounds = 10;
        t0 = now_s();
        for (uint32_t r = 0; r < rounds; r++)
                for (uint32_t i = 0; i < nr; i++)
                        sym_resolve(s, sym_locate(s, 1, addrs[i]), &fr);
        double t_cached = now_s() - t0;

        /* dwfl_module_addrinfo on the first nr_dwfl addresses (it scans: fewer suffice) */
        if (nr_dwfl > nr)
                nr_dwfl = nr;
        uint32_t nr_diff = 0, nr_unnamed = 0;
        dwfl_module_getsymtab(mod); /* its table read before the clock starts */
        t0 = now_s();
        for (uint32_t i = 0; i < nr_dwfl; i++) {
                GElf_Off off;
                GElf_Sym sym;
                const char *n = dwfl_module_addrinfo(mod, addrs[i], &off, &sym, NULL, NULL, NULL);
                (void)n;
        }
        double t_dwfl = now_s() - t0;
        for (uint32_t i = 0; i < nr_dwfl; i++) {
                GElf_Off off;
                GElf_Sym sym;
                const char *n = dwfl_module_addrinfo(mod, addrs[i], &off, &sym, NULL, NULL, NULL);
                sym_resolve(s, sym_locate(s, 1, addrs[i]), &fr);
                if (fr.state != SYM_RESOLVED) {
                        nr_unnamed++;
                        continue;
                }
                /* aliases at one address may be named differently: compare the start */
                if (!n || fr.offset != off)
                        nr_diff++;
        }

        struct sym_module_info info;
        sym_module_info(s, sym_locate(s, 1, addrs[0]).module, &info);
        double first_rate = nr / t_first, cached_rate = (double)nr * rounds / t_cached;
        double dwfl_rate = nr_dwfl / t_dwfl;
        printf("library: %s (%u functions in etwtop's table, %u sized functions sampled)\n", lib,
               info.nr_symbols, nf);
        printf("table build (first lookup): %.2f ms\n", t_load * 1e3);
        printf("%-36s %14s %12s\n", "lookup", "lookups/s", "ns/lookup");
        printf("%-36s %14.0f %12.1f\n", "etwtop first-time (cache cold)", first_rate,
               1e9 / first_rate);
        printf("%-36s %14.0f %12.1f\n", "etwtop cached", cached_rate, 1e9 / cached_rate);
        printf("%-36s %14.0f %12.1f\n", "dwfl_module_addrinfo", dwfl_rate, 1e9 / dwfl_rate);
        printf("ratio first-time / dwfl_module_addrinfo: %.0fx\n", first_rate / dwfl_rate);
        printf("ratio cached / dwfl_module_addrinfo:     %.0fx\n", cached_rate / dwfl_rate);
        printf("agreement on %u addresses: %u differ, %u unnamed by etwtop\n", nr_dwfl, nr_diff,
               nr_unnamed);
        sym_store_free(s);
        dwfl_end(dwfl);
        free(starts);
        free(sizes);
        free(addrs);
        return nr_diff || nr_unnamed ? 3 : 0;
}
