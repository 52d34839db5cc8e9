/* SPDX-License-Identifier: MIT */
/* fuzz_elf.c: libFuzzer target for the symbol store's reading of hostile ELF and DWARF files
   (elf_module.c over libdwfl), through the public API only: the input is written to a memory
   file, mapped as an image at /proc/self/fd/N, and looked up at a spread of addresses (function,
   text, source lines and inline frames). Corpus: tests/corpus/elf/ (small PIE executables and
   a library, gcc -Os -Wl,-z,noseparate-code: stripped, DWARF 4 and 5, compressed debug sections,
   MiniDebugInfo; a separate debug file; relocatable objects, 64- and 32-bit; a truncated file;
   clang-dwarf5-noaranges, clang 14's default DWARF 5 without .debug_aranges;
   and what the fuzzer found: getscopes-leak.debug, inline DIEs that make libdw's
   dwarf_getscopes leak; hostile-bias-object, symbol addresses that overflow a signed bias). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "symbols/symbols.h"

#define MAX_INPUT_BYTES (1u << 20) /* larger inputs are ignored: the CI run stays fast */
#define PID             4242
#define BASE            0x555500000000ull
#define LIB_BASE        0x7f0000000000ull
#define LIB_OFFSET      0x1000ull /* a second mapping at a file offset, as ld.so maps text */
#define NR_SPREAD       512
#define MAX_FRAMES      8

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Keeps the compiler from dropping the reads that ASan checks. */
static volatile size_t fuzz_sink;
static int first_fd = -1;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
        (void)argc;
        (void)argv;
        /* hermetic: libdwfl must not ask a debuginfod server about the fuzzed build-ids */
        unsetenv("DEBUGINFOD_URLS");
        /* no inflated DWARF kept between inputs, nor written into $HOME */
        setenv("ETWTOP_DWARF_CACHE", "off", 1);
        return 0;
}

static void on_log(void *ctx, const char *message)
{
        (void)ctx;
        fuzz_sink += strlen(message);
}

static void touch(const char *str)
{
        if (!str)
                abort(); /* the API hands out "" rather than NULL */
        fuzz_sink += strlen(str);
}

/* Every lookup on one address; checks the answers' promises. */
static void probe(struct sym_store *s, uint64_t addr)
{
        struct sym_loc loc = sym_locate(s, PID, addr);
        struct sym_frame f;
        sym_resolve(s, loc, &f);
        if (f.state == SYM_RESOLVED && (!f.function || !*sym_name(s, f.function)))
                abort();
        if (f.state != SYM_RESOLVED && f.function)
                abort();
        touch(sym_name(s, f.function));

        char buf[256];
        size_t n = sym_format(s, loc, buf, sizeof(buf));
        if (n < sizeof(buf) && strlen(buf) != n)
                abort();
        char tiny[8];
        sym_format(s, loc, tiny, sizeof(tiny));
        if (!memchr(tiny, 0, sizeof(tiny)))
                abort();

        /* the line table read alone (symbols/elf_lines.c) says what libdw's innermost frame
           says */
        uint32_t file = 0, line = 0;
        bool has_line = sym_srcline_line(s, loc, &file, &line);
        struct sym_srcframe fr[MAX_FRAMES];
        uint32_t nr = sym_srcline(s, loc, fr, MAX_FRAMES);
        if (nr > MAX_FRAMES)
                abort();
        if (has_line &&
            (!nr || fr[0].line != line || strcmp(sym_name(s, fr[0].file), sym_name(s, file)) != 0))
                abort();
        for (uint32_t i = 0; i < nr; i++) {
                touch(sym_name(s, fr[i].function));
                touch(sym_name(s, fr[i].file));
        }
        /* the cached answers are the same */
        struct sym_frame again;
        sym_resolve(s, loc, &again);
        if (again.state != f.state || again.module != f.module || again.function != f.function ||
            again.offset != f.offset || sym_srcline(s, loc, fr, MAX_FRAMES) != nr)
                abort();
}

/* The 64-bit ELF header's entry point, when the input has one (an address the fuzzer steers). */
static uint64_t entry_of(const uint8_t *data, size_t size)
{
        uint64_t entry = 0;
        if (size >= 32 && memcmp(data, "\177ELF", 4) == 0 && data[4] == 2)
                memcpy(&entry, data + 24, sizeof(entry));
        return entry;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size > MAX_INPUT_BYTES)
                return 0;
        int fd = memfd_create("fuzz_elf", MFD_CLOEXEC);
        if (fd < 0)
                abort();
        if (first_fd < 0)
                first_fd = fd;
        if (fd > first_fd + 16)
                abort(); /* descriptors leak: libdwfl's or ours were not closed */
        for (size_t done = 0; done < size;) {
                ssize_t w = write(fd, data + done, size - done);
                if (w <= 0)
                        abort();
                done += (size_t)w;
        }
        char path[64];
        snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);

        struct sym_options o = {.is_synchronous = true, .log = on_log};
        struct sym_store *s = NULL;
        if (sym_store_new(&s, &o) != 0)
                abort();
        uint64_t span = ((uint64_t)size + 0xfff) & ~0xfffull;
        if (!span)
                span = 0x1000;
        /* the whole file at offset 0, as a program's first mapping; then the same module again
           from a file offset, as ld.so maps a library's text */
        struct sym_image im = {PID, BASE, span, 0, path, NULL, 0, 0, 0};
        sym_process_start(s, PID);
        sym_image_load(s, &im);
        if (span > LIB_OFFSET) {
                struct sym_image lib = {PID, LIB_BASE, span - LIB_OFFSET, LIB_OFFSET, path, NULL, 0,
                                        0,   0};
                sym_image_load(s, &lib);
        }

        for (uint32_t i = 0; i < NR_SPREAD; i++)
                probe(s, BASE + span * i / NR_SPREAD + (i & 7));
        probe(s, BASE + span - 1);
        probe(s, BASE + entry_of(data, size) % span);
        probe(s, LIB_BASE);
        probe(s, LIB_BASE + span / 3);
        probe(s, BASE - 1); /* outside every mapping */

        struct sym_loc loc = sym_locate(s, PID, BASE);
        struct sym_module_info info;
        if (!sym_module_info(s, loc.module, &info))
                abort();
        touch(info.name);
        touch(info.path);
        touch(info.file_used);
        touch(info.note);
        touch(info.pdb_name);
        if (info.build_id_size > sizeof(info.build_id) || !info.is_loaded != !*info.file_used)
                abort();
        struct sym_stats st;
        sym_store_get_stats(s, &st);
        if (st.nr_modules < 2)
                abort();

        sym_store_free(s);
        close(fd);
        return 0;
}
