/* SPDX-License-Identifier: MIT */
/* test_symbols.c: the symbol store against fixture programs built at test time (PIE, non-PIE, a
   shared library mapped at a non-zero file offset, inline functions, stripped with a debug file
   in a build-id directory, MiniDebugInfo, moved, changed; C++ and Rust names, demangled, and the
   kernel's padding symbols, never chosen), and against synthetic image events (replacement,
   unload, pid reuse, events out of time order, the kernel, Windows modules, hostile files). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "symbols/kallsyms.h"
#include "symbols/kernel_running.h"
#include "symbols/module_name.h"
#include "symbols/symbols.h"
#include "util/kallsyms_text.h"

#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PID 4242

struct fixture_map {
        uint64_t start, end, pgoff;
        char path[512];
};

struct fixture_run {
        uint64_t leaf, outer, lib_work, lib_static, main_fn;
        struct fixture_map maps[64];
        uint32_t nr_maps;
};

static const char *env(const char *name)
{
        const char *v = getenv(name);
        if (!v) {
                fprintf(stderr, "%s is not set (run the test through ctest)\n", name);
                abort();
        }
        return v;
}

/* Runs `binary addr` and reads the addresses and the executable mappings it prints. */
static void run_fixture(const char *binary, struct fixture_run *r)
{
        char cmd[1024];
        memset(r, 0, sizeof(*r));
        snprintf(cmd, sizeof(cmd), "'%s' addr", binary);
        FILE *p = popen(cmd, "r");
        assert_non_null(p);
        char line[1024];
        while (fgets(line, sizeof(line), p)) {
                char name[64], perms[8], path[512] = "";
                uint64_t a, b, off;
                if (sscanf(line, "%63s 0x%" SCNx64, name, &a) == 2 && !strchr(name, '-')) {
                        if (!strcmp(name, "fixture_leaf"))
                                r->leaf = a;
                        else if (!strcmp(name, "fixture_inline_outer"))
                                r->outer = a;
                        else if (!strcmp(name, "fixlib_work"))
                                r->lib_work = a;
                        else if (!strcmp(name, "fixlib_static"))
                                r->lib_static = a;
                        else if (!strcmp(name, "main"))
                                r->main_fn = a;
                        continue;
                }
                if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*s %511[^\n]", &a,
                           &b, perms, &off, path) == 5 &&
                    perms[2] == 'x' && path[0] == '/' && r->nr_maps < 64) {
                        r->maps[r->nr_maps++] = (struct fixture_map){a, b, off, ""};
                        snprintf(r->maps[r->nr_maps - 1].path, 512, "%s", path);
                }
        }
        assert_int_equal(pclose(p), 0);
        assert_true(r->leaf && r->outer && r->lib_work && r->lib_static && r->main_fn);
        assert_true(r->nr_maps >= 2);
}

static uint32_t build_id_of(const char *path, uint8_t *id)
{
        int fd = open(path, O_RDONLY);
        if (fd < 0)
                return 0;
        elf_version(EV_CURRENT);
        Elf *e = elf_begin(fd, ELF_C_READ, NULL);
        const void *p = NULL;
        ssize_t n = e ? dwelf_elf_gnu_build_id(e, &p) : -1;
        uint32_t got = 0;
        if (n > 0 && n <= 20) {
                memcpy(id, p, (size_t)n);
                got = (uint32_t)n;
        }
        if (e)
                elf_end(e);
        close(fd);
        return got;
}

/* Feeds the run's mappings as image events; recorded_path renames the main binary's (NULL:
   as mapped), with_build_id attaches the build-id read from the mapped file. */
static void feed(struct sym_store *s, const struct fixture_run *r, const char *binary,
                 const char *recorded_path, bool with_build_id)
{
        char real[4096];
        if (!realpath(binary, real))
                snprintf(real, sizeof(real), "%s", binary);
        sym_process_start(s, PID);
        for (uint32_t i = 0; i < r->nr_maps; i++) {
                const struct fixture_map *m = &r->maps[i];
                uint8_t id[20];
                uint32_t n = with_build_id ? build_id_of(m->path, id) : 0;
                bool is_main = strcmp(m->path, real) == 0;
                struct sym_image im = {PID,
                                       m->start,
                                       m->end - m->start,
                                       m->pgoff,
                                       is_main && recorded_path ? recorded_path : m->path,
                                       id,
                                       n,
                                       0,
                                       0};
                sym_image_load(s, &im);
        }
}

static struct sym_store *store_new(const char *const *dirs, uint32_t nr, bool is_sync)
{
        struct sym_options o = {
                .symbol_path = dirs, .nr_symbol_path = nr, .is_synchronous = is_sync};
        struct sym_store *s = NULL;
        assert_int_equal(sym_store_new(&s, &o), 0);
        return s;
}

static struct sym_frame resolve(struct sym_store *s, uint64_t addr)
{
        struct sym_frame f;
        sym_resolve(s, sym_locate(s, PID, addr), &f);
        return f;
}

/* Loads n images three times (in order, in reverse, in order; each pass in a process of its
   own), with a build-id each or (!has_id) a path each, and checks that each image finds the
   module it found the first time and that the images' modules differ. */
static void load_passes(struct sym_store *s, uint32_t n, bool has_id, uint32_t *first)
{
        for (uint32_t pass = 0; pass < 3; pass++) {
                for (uint32_t k = 0; k < n; k++) {
                        uint32_t i = pass == 1 ? n - 1 - k : k;
                        uint8_t id[20] = {0};
                        memcpy(id, &i, sizeof(i));
                        id[19] = 0xb1;
                        char path[64];
                        if (has_id)
                                snprintf(path, sizeof(path), "/nonexistent/p%u/lib%u.so", pass, i);
                        else
                                snprintf(path, sizeof(path), "/nonexistent/lib%u.so", i);
                        uint32_t pid = PID + 1 + pass;
                        uint64_t base = 0x10000000ull + (uint64_t)i * 0x10000;
                        struct sym_image im = {
                                pid, base, 0x1000, 0, path, has_id ? id : NULL, has_id ? 20 : 0,
                                0,   0};
                        sym_image_load(s, &im);
                        uint32_t mod = sym_locate(s, pid, base + 8).module;
                        assert_int_not_equal(mod, 0);
                        if (pass == 0)
                                first[i] = mod;
                        else
                                assert_int_equal(mod, first[i]);
                }
        }
        for (uint32_t i = 1; i < n; i++)
                assert_int_not_equal(first[i], first[i - 1]);
}

/* Images are one module per build-id, whatever their path, and build-ids that share a slot of
   the store's build-id cache (600 of them in its 256 slots) stay apart, in any order. */
static void test_build_id_modules(void **state)
{
        (void)state;
        struct sym_store *s = store_new(NULL, 0, true);
        enum { N = 600 };
        uint32_t first[N];
        load_passes(s, N, true, first);
        sym_store_free(s);
}

/* Images without a build-id (a perf.data's) are one module per path: a path met before finds
   its module without its key's text (one keyed look-up per path, not per load), and paths that
   share a slot of the store's path cache (600 in its 256) stay apart, in any order. */
static void test_path_modules(void **state)
{
        (void)state;
        struct sym_store *s = store_new(NULL, 0, true);
        enum { N = 600 };
        uint32_t first[N];
        load_passes(s, N, false, first);
        /* one path loaded by 100 processes: keyed once */
        struct sym_stats st0, st1;
        sym_store_get_stats(s, &st0);
        for (uint32_t pid = 1000; pid < 1100; pid++) {
                struct sym_image im = {
                        pid, 0x20000000ull, 0x1000, 0, "/nonexistent/libone.so", NULL, 0, 0, 0};
                sym_image_load(s, &im);
        }
        sym_store_get_stats(s, &st1);
        assert_int_equal(st1.nr_keyed - st0.nr_keyed, 1);
        sym_store_free(s);
}

/* A mapping laid over the middle of another splits it (the right piece appended, the maps put
   in order again); mappings that cut nothing go in their place: every address finds the
   module and offset of the mapping that holds it last, in any order of loads. */
static void test_mapping_order(void **state)
{
        (void)state;
        struct sym_store *s = store_new(NULL, 0, true);
        struct sym_image a = {PID, 0x10000, 0x80000, 0, "/nonexistent/liba.so", NULL, 0, 0, 0};
        struct sym_image b = {PID, 0x30000, 0x10000, 0, "/nonexistent/libb.so", NULL, 0, 0, 0};
        struct sym_image c = {PID, 0x5000, 0x3000, 0, "/nonexistent/libc0.so", NULL, 0, 0, 0};
        struct sym_image d = {PID, 0xa0000, 0x1000, 0, "/nonexistent/libd.so", NULL, 0, 0, 0};
        sym_image_load(s, &d);
        sym_image_load(s, &a);
        sym_image_load(s, &b);
        sym_image_load(s, &c);
        uint32_t ma = sym_locate(s, PID, 0x10000).module, mb = sym_locate(s, PID, 0x30000).module,
                 mc = sym_locate(s, PID, 0x5000).module, md = sym_locate(s, PID, 0xa0000).module;
        assert_true(ma && mb && mc && md && ma != mb && mb != mc && mc != md && ma != md);
        static const struct {
                uint64_t addr, rel;
                int which;
        } want[] = {{0x5010, 0x10, 2},     {0x10010, 0x10, 0},   {0x2fff0, 0x1fff0, 0},
                    {0x30010, 0x10, 1},    {0x3fff0, 0xfff0, 1}, {0x40010, 0x30010, 0},
                    {0x8fff0, 0x7fff0, 0}, {0xa0010, 0x10, 3}};
        const uint32_t mods[] = {ma, mb, mc, md};
        for (uint32_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
                struct sym_loc loc = sym_locate(s, PID, want[i].addr);
                assert_int_equal(loc.module, mods[want[i].which]);
                assert_int_equal(loc.rel, want[i].rel);
        }
        assert_int_equal(sym_locate(s, PID, 0x9000).module, 0);
        assert_int_equal(sym_locate(s, PID, 0x90010).module, 0);
        sym_store_free(s);
}

/* Loads over and beside each other (adjacent, inside, across, apart: a seeded sequence over 64
   pages) place every page where the last load that holds it says, as a byte map of the pages
   does: the cut of the mappings a load covers, and the loads that cover none (the common case,
   which skips the pass over the process's maps). */
static void test_mapping_cuts(void **state)
{
        (void)state;
        struct sym_store *s = store_new(NULL, 0, true);
        enum { PAGES = 64, LOADS = 300 };
        int32_t owner[PAGES];
        uint32_t first[PAGES], module[LOADS];
        for (uint32_t p = 0; p < PAGES; p++)
                owner[p] = -1;
        uint32_t seed = 12345;
        for (uint32_t i = 0; i < LOADS; i++) {
                seed = seed * 1103515245u + 12345u;
                uint32_t at = (seed >> 8) % PAGES, len = 1 + (seed >> 20) % 8;
                if (at + len > PAGES)
                        len = PAGES - at;
                char path[64];
                snprintf(path, sizeof(path), "/nonexistent/cut%u.so", i);
                struct sym_image im = {PID,
                                       0x100000 + (uint64_t)at * 0x1000,
                                       (uint64_t)len * 0x1000,
                                       0,
                                       path,
                                       NULL,
                                       0,
                                       0,
                                       0};
                sym_image_load(s, &im);
                module[i] = sym_locate(s, PID, im.base).module;
                assert_int_not_equal(module[i], 0);
                for (uint32_t p = at; p < at + len; p++) {
                        owner[p] = (int32_t)i;
                        first[p] = at;
                }
                for (uint32_t p = 0; p < PAGES; p++) {
                        struct sym_loc loc =
                                sym_locate(s, PID, 0x100000 + (uint64_t)p * 0x1000 + 0x10);
                        if (owner[p] < 0) {
                                assert_int_equal(loc.module, 0);
                                continue;
                        }
                        assert_int_equal(loc.module, module[owner[p]]);
                        assert_int_equal(loc.rel, (uint64_t)(p - first[p]) * 0x1000 + 0x10);
                }
        }
        sym_store_free(s);
}

/* Mappings of no file (the vvar page, an anon inode) place nothing; anonymous memory, /dev/zero,
   a heap or a stack, executable in a recording, are the process's JIT code as perf report has
   them ("[JIT] tid PID", the address itself looked up in /tmp/perf-PID.map); files place their
   own module whatever their first bytes (the quick test of a path's first two bytes). A memfd's map
   (or a named anonymous one, "[anon:v8]") is a recording's module, named as perf report names it (a
   driver's generated code: ".glXXXXXX (deleted)"); live it places nothing, its code looked up
   as JIT code (perf-PID.map: .NET maps its code twice through "memfd:doublemapper"). */
static void test_anonymous_paths(void **state)
{
        (void)state;
        static const char *const anon[] = {"", "[vvar]", "anon_inode:[perf]"};
        static const char *const jit[] = {"//anon", "[heap]", "[stack]", "/dev/zero (deleted)"};
        /* a memfd's map and a name given to anonymous memory: a recording's modules, live none */
        static const struct {
                const char *path;
                uint64_t base, addr;
                const char *shown;
        } named[] = {{"/memfd:/.glXXXXXX (deleted)", 0x4151a000, 0x4151bf7e,
                      ".glXXXXXX (deleted)+0x1f7e"},
                     {"[anon:v8]", 0x1000000, 0x1000010, "[anon:v8]+0x10"}};
        for (int is_live = 0; is_live < 2; is_live++) {
                for (uint32_t i = 0; i < sizeof(named) / sizeof(named[0]); i++) {
                        struct sym_options o = {.is_synchronous = true, .is_live = is_live};
                        struct sym_store *m = NULL;
                        assert_int_equal(sym_store_new(&m, &o), 0);
                        struct sym_image im = {
                                PID, named[i].base, 0x2000, 0, named[i].path, NULL, 0, 0, 0};
                        sym_image_load(m, &im);
                        struct sym_loc loc = sym_locate(m, PID, named[i].addr);
                        if (is_live) {
                                assert_int_equal(loc.module, 0);
                        } else {
                                char buf[128];
                                sym_format(m, loc, buf, sizeof(buf));
                                assert_string_equal(buf, named[i].shown);
                        }
                        sym_store_free(m);
                }
        }
        static const char *const file[] = {"/usr/lib/libx.so", "/dev/shm/libjit.so", "/mnt/libm.so",
                                           "relative/libr.so", "/d"};
        struct sym_store *s = store_new(NULL, 0, true);
        uint64_t base = 0x100000;
        for (uint32_t i = 0; i < sizeof(anon) / sizeof(anon[0]); i++, base += 0x100000) {
                struct sym_image im = {PID, base, 0x1000, 0, anon[i], NULL, 0, 0, 0};
                sym_image_load(s, &im);
                assert_int_equal(sym_locate(s, PID, base + 16).module, 0);
        }
        /* a pid past the kernel's largest pid_max (2^22): no process's /tmp/perf-PID.map */
        const uint32_t jit_pid = (1u << 22) + 1;
        uint32_t jit_module = 0;
        for (uint32_t i = 0; i < sizeof(jit) / sizeof(jit[0]); i++, base += 0x100000) {
                struct sym_image im = {jit_pid, base, 0x1000, 0, jit[i], NULL, 0, 0, 0};
                sym_image_load(s, &im);
                struct sym_loc loc = sym_locate(s, jit_pid, base + 16);
                assert_int_not_equal(loc.module, 0);
                assert_int_equal(loc.rel, base + 16);
                if (!jit_module)
                        jit_module = loc.module;
                assert_int_equal(loc.module, jit_module); /* one a process */
                char buf[64], want[64];
                sym_format(s, loc, buf, sizeof(buf));
                snprintf(want, sizeof(want), "[JIT] tid %u+0x%" PRIx64, jit_pid, base + 16);
                assert_string_equal(buf, want);
        }
        for (int is_live = 0; is_live < 2; is_live++) {
                /* a map of the kernel's (pid 0) is no JIT's; live, the lookup finds the map file
                   itself (test_jit_map) */
                struct sym_options o = {.is_synchronous = true, .is_live = is_live};
                struct sym_store *k = NULL;
                assert_int_equal(sym_store_new(&k, &o), 0);
                struct sym_image im = {
                        is_live ? PID : 0, 0x5000000, 0x1000, 0, "//anon", NULL, 0, 0, 0};
                sym_image_load(k, &im);
                assert_int_equal(sym_locate(k, im.pid, 0x5000010).module, 0);
                sym_store_free(k);
        }
        for (uint32_t i = 0; i < sizeof(file) / sizeof(file[0]); i++, base += 0x100000) {
                struct sym_image im = {PID, base, 0x1000, 0, file[i], NULL, 0, 0, 0};
                sym_image_load(s, &im);
                assert_int_not_equal(sym_locate(s, PID, base + 16).module, 0);
        }
        /* an anonymous map over a page of a library's (dlclose()d, its place reused for code a
           driver generates: a public perf 6.x recording's libdrm_amdgpu) takes that page from
           it, in time order: the pages around it stay the library's; an older anonymous map
           takes nothing from a newer library's */
        struct sym_image lib = {PID,  base, 0xe000, 0, "/usr/lib64/libdrm_amdgpu.so.1",
                                NULL, 0,    0,      0};
        sym_image_load_at(s, &lib, 100);
        struct sym_image gen = {PID, base + 0x4000, 0x1000, base + 0x4000, "//anon", NULL, 0, 0, 0};
        sym_image_load_at(s, &gen, 200);
        uint32_t lib_module = sym_locate(s, PID, base + 0x10).module;
        assert_int_not_equal(lib_module, 0);
        uint32_t gen_module = sym_locate(s, PID, base + 0x4006).module;
        assert_int_not_equal(gen_module, 0); /* PID's JIT code */
        assert_int_not_equal(gen_module, lib_module);
        assert_int_not_equal(gen_module, jit_module);
        assert_int_equal(sym_locate(s, PID, base + 0x5006).module, lib_module);
        assert_int_equal(sym_locate(s, PID, base + 0x5006).rel, 0x5006);
        struct sym_image old = {PID, base + 0x8000, 0x1000, 0, "//anon", NULL, 0, 0, 0};
        sym_image_load_at(s, &old, 50);
        assert_int_equal(sym_locate(s, PID, base + 0x8006).module, lib_module);
        sym_store_free(s);
}

static void expect_name(struct sym_store *s, uint64_t addr, const char *name, uint64_t off)
{
        struct sym_frame f = resolve(s, addr);
        if (f.state != SYM_RESOLVED) {
                char buf[256];
                sym_format(s, sym_locate(s, PID, addr), buf, sizeof(buf));
                fail_msg("0x%" PRIx64 " (%s): state %d, %s expected", addr, buf, f.state, name);
        }
        assert_string_equal(sym_name(s, f.function), name);
        assert_int_equal(f.offset, off);
}

static void check_names(const char *binary, bool is_pie)
{
        struct fixture_run r;
        run_fixture(binary, &r);
        struct sym_store *s = store_new(NULL, 0, true);
        feed(s, &r, binary, NULL, true);
        expect_name(s, r.leaf, "fixture_leaf", 0);
        expect_name(s, r.leaf + 5, "fixture_leaf", 5);
        expect_name(s, r.outer + 2, "fixture_inline_outer", 2);
        /* a non-PIE program's function pointer to a library function is its PLT stub */
        if (is_pie)
                expect_name(s, r.lib_work, "fixlib_work", 0);
        else
                expect_name(s, r.lib_work + 4, "fixlib_work@plt", 4);
        expect_name(s, r.lib_static + 3, "fixlib_static", 3);
        expect_name(s, r.main_fn + 1, "main", 1);

        char buf[256];
        sym_format(s, sym_locate(s, PID, r.leaf + 0x5), buf, sizeof(buf));
        const char *base = strrchr(binary, '/');
        char want[256];
        snprintf(want, sizeof(want), "%s!fixture_leaf+0x5", base ? base + 1 : binary);
        assert_string_equal(buf, want);
        sym_format(s, sym_locate(s, PID, r.lib_static), buf, sizeof(buf));
        assert_string_equal(buf, "libsymfix.so!fixlib_static");

        /* the library's code is mapped at a non-zero file offset */
        bool has_offset_map = false;
        for (uint32_t i = 0; i < r.nr_maps; i++)
                if (strstr(r.maps[i].path, "libsymfix.so") && r.maps[i].pgoff != 0 &&
                    r.lib_static >= r.maps[i].start && r.lib_static < r.maps[i].end)
                        has_offset_map = true;
        assert_true(has_offset_map);

        /* an address outside every mapping */
        struct sym_frame f = resolve(s, 0x1000);
        assert_int_equal(f.state, SYM_NO_MODULE);
        sym_store_free(s);
}

static void test_pie(void **state)
{
        (void)state;
        check_names(env("SYM_FIXTURE"), true);
}

static void test_non_pie(void **state)
{
        (void)state;
        struct fixture_run r;
        run_fixture(env("SYM_FIXTURE_NOPIE"), &r);
        assert_true(r.leaf < 0x10000000); /* a fixed, low address: ET_EXEC */
        check_names(env("SYM_FIXTURE_NOPIE"), false);
}

/* The line of the fixture's source that holds marker. */
static uint32_t marker_line(const char *marker)
{
        FILE *f = fopen(env("SYM_FIXTURE_SOURCE"), "r");
        assert_non_null(f);
        char line[512];
        uint32_t n = 0, found = 0;
        while (fgets(line, sizeof(line), f)) {
                n++;
                if (strstr(line, marker) && !strstr(line, "marker comments"))
                        found = n;
        }
        fclose(f);
        assert_true(found > 0);
        return found;
}

static void test_inline_chain_and_lines(void **state)
{
        (void)state;
        struct fixture_run r;
        run_fixture(env("SYM_FIXTURE"), &r);
        struct sym_store *s = store_new(NULL, 0, true);
        feed(s, &r, env("SYM_FIXTURE"), NULL, true);
        uint32_t inner = marker_line("MARK_INNER"), mid = marker_line("MARK_MID_CALL"),
                 outer = marker_line("MARK_OUTER_CALL");

        /* somewhere in fixture_inline_outer the code is inl_inner, inlined into inl_mid,
           inlined into fixture_inline_outer */
        bool is_seen = false;
        for (uint64_t a = r.outer; a < r.outer + 512 && !is_seen; a++) {
                struct sym_frame f = resolve(s, a);
                if (f.state != SYM_RESOLVED ||
                    strcmp(sym_name(s, f.function), "fixture_inline_outer") != 0)
                        break;
                struct sym_srcframe fr[8];
                uint32_t n = sym_srcline(s, sym_locate(s, PID, a), fr, 8);
                /* compilers place some of the inlined code on the caller's lines: look for an
                   address of inl_inner's own line */
                if (n < 3 || strcmp(sym_name(s, fr[0].function), "inl_inner") != 0 ||
                    fr[0].line != inner)
                        continue;
                assert_int_equal(n, 3);
                assert_string_equal(sym_name(s, fr[1].function), "inl_mid");
                assert_string_equal(sym_name(s, fr[2].function), "fixture_inline_outer");
                assert_int_equal(fr[0].line, inner);
                assert_int_equal(fr[1].line, mid);
                assert_int_equal(fr[2].line, outer);
                for (int i = 0; i < 3; i++)
                        assert_non_null(strstr(sym_name(s, fr[i].file), "sym_fixture.c"));
                is_seen = true;
        }
        assert_true(is_seen);

        /* a function without inlining: one frame, its own line range */
        struct sym_srcframe fr[8];
        uint32_t n = sym_srcline(s, sym_locate(s, PID, r.leaf), fr, 8);
        assert_int_equal(n, 1);
        assert_string_equal(sym_name(s, fr[0].function), "fixture_leaf");
        assert_true(fr[0].line > outer);
        /* cached: the same answer again */
        struct sym_srcframe again[8];
        assert_int_equal(sym_srcline(s, sym_locate(s, PID, r.leaf), again, 8), 1);
        assert_int_equal(again[0].line, fr[0].line);
        sym_store_free(s);
}

/* The line table alone (sym_srcline_line, what the Hot lines count by) says what sym_srcline's
   innermost frame says at every address, asked first or after the frames. */
static void test_line_only_matches_frames(void **state)
{
        (void)state;
        struct fixture_run r;
        run_fixture(env("SYM_FIXTURE"), &r);
        struct sym_store *lines = store_new(NULL, 0, true), *frames = store_new(NULL, 0, true);
        feed(lines, &r, env("SYM_FIXTURE"), NULL, true);
        feed(frames, &r, env("SYM_FIXTURE"), NULL, true);
        resolve(lines, r.outer);
        resolve(frames, r.outer);
        uint32_t nr_lines = 0;
        for (uint64_t a = r.outer; a < r.outer + 512; a++) {
                struct sym_loc loc = sym_locate(frames, PID, a);
                struct sym_srcframe fr[8];
                uint32_t n = sym_srcline(frames, loc, fr, 8);
                uint32_t file = 0, line = 0;
                bool has = sym_srcline_line(lines, sym_locate(lines, PID, a), &file, &line);
                assert_int_equal(has, n > 0 && fr[0].line > 0);
                if (!has)
                        continue;
                nr_lines++;
                assert_int_equal(line, fr[0].line);
                assert_string_equal(sym_name(lines, file), sym_name(frames, fr[0].file));
                /* the same store: frames after the line, the line after the frames */
                struct sym_srcframe again[8];
                assert_int_equal(sym_srcline(lines, sym_locate(lines, PID, a), again, 8), n);
                assert_int_equal(again[0].file, file);
                assert_int_equal(again[0].line, line);
                uint32_t file2 = 0, line2 = 0;
                assert_true(sym_srcline_line(frames, loc, &file2, &line2));
                assert_int_equal(file2, fr[0].file);
                assert_int_equal(line2, fr[0].line);
        }
        assert_true(nr_lines > 0);
        sym_store_free(lines);
        sym_store_free(frames);
}

/* A live store gives back the symbols of a module once no running process maps it (two sweeps
   in a row), keeps the names it gave, and loads the module again when a lookup needs it. */
/* A function's addresses take its name from the store's memo of the ELF symbol (by module and
   start) after the first: its symbol's text is interned and demangled once, not once per
   address; the names are the same. */
static void test_function_names_once(void **state)
{
        (void)state;
        struct fixture_run r;
        run_fixture(env("SYM_FIXTURE"), &r);
        struct sym_store *s = store_new(NULL, 0, true);
        feed(s, &r, env("SYM_FIXTURE"), NULL, true);
        struct sym_stats st0, st1;
        expect_name(s, r.leaf, "fixture_leaf", 0);
        sym_store_get_stats(s, &st0);
        uint32_t function = resolve(s, r.leaf).function;
        for (uint64_t k = 1; k <= 8; k++) { /* its first bytes (a loop of 1,000 rounds) */
                struct sym_frame f = resolve(s, r.leaf + k);
                assert_int_equal(f.state, SYM_RESOLVED);
                assert_int_equal(f.function, function);
                assert_int_equal(f.offset, k);
        }
        sym_store_get_stats(s, &st1);
        assert_true(st1.nr_lookups - st0.nr_lookups >= 8);
        assert_int_equal(st1.nr_names, st0.nr_names);
        sym_store_free(s);
}

static void test_unmapped_module_evicted_and_reloaded(void **state)
{
        (void)state;
        struct fixture_run r;
        run_fixture(env("SYM_FIXTURE"), &r);
        struct sym_options o = {.is_synchronous = true, .is_live = true};
        struct sym_store *s = NULL;
        assert_int_equal(sym_store_new(&s, &o), 0);
        feed(s, &r, env("SYM_FIXTURE"), NULL, true);
        expect_name(s, r.leaf, "fixture_leaf", 0);
        uint32_t module = sym_locate(s, PID, r.leaf).module;
        struct sym_stats loaded;
        sym_store_get_stats(s, &loaded);
        struct sym_module_info info;
        assert_true(sym_module_info(s, module, &info));
        assert_true(info.is_loaded);
        uint32_t nr_symbols = info.nr_symbols;
        assert_true(nr_symbols > 0);

        /* mapped by a running process: kept, however many sweeps */
        for (int i = 0; i < 4; i++)
                assert_int_equal(sym_store_evict_unmapped(s), 0);
        /* its images unloaded (the process runs on): freed at the second sweep; mapped again,
           the next lookup that misses the caches loads it again */
        for (uint32_t i = 0; i < r.nr_maps; i++)
                sym_image_unload(s, PID, r.maps[i].start);
        assert_int_equal(sym_store_evict_unmapped(s), 0);
        assert_true(sym_store_evict_unmapped(s) > 0);
        feed(s, &r, env("SYM_FIXTURE"), NULL, true);
        expect_name(s, r.outer, "fixture_inline_outer", 0);
        assert_true(sym_module_info(s, module, &info));
        assert_true(info.is_loaded);
        assert_int_equal(info.nr_symbols, nr_symbols);
        /* its process ended: freed at the second sweep */
        sym_process_end(s, PID);
        assert_int_equal(sym_store_evict_unmapped(s), 0);
        assert_true(sym_store_evict_unmapped(s) > 0);
        struct sym_stats evicted;
        sym_store_get_stats(s, &evicted);
        assert_true(evicted.nr_evicted > 0);
        assert_true(evicted.memory_bytes < loaded.memory_bytes);
        /* its row still says what it had */
        assert_true(sym_module_info(s, module, &info));
        assert_true(info.is_loaded);
        assert_int_equal(info.nr_symbols, nr_symbols);
        /* the names given stay without the table; a new lookup loads it again */
        expect_name(s, r.leaf, "fixture_leaf", 0);
        expect_name(s, r.main_fn, "main", 0);
        struct sym_stats again;
        sym_store_get_stats(s, &again);
        assert_true(again.memory_bytes > evicted.memory_bytes);
        assert_int_equal(sym_store_evict_unmapped(s), 0); /* the count starts over */
        sym_store_free(s);
}

static void variant_path(char *buf, size_t size, const char *which)
{
        snprintf(buf, size, "%s/%s/sym_fixture", env("SYM_FIXTURE_VARIANTS"), which);
}

static void test_stripped_with_debug_dir(void **state)
{
        (void)state;
        char bin[1024], dir[1024];
        variant_path(bin, sizeof(bin), "stripped");
        snprintf(dir, sizeof(dir), "%s/debugdir", env("SYM_FIXTURE_VARIANTS"));
        struct fixture_run r;
        run_fixture(bin, &r);

        /* no debug file: the stripped binary has no symbol for it; module+offset, no name */
        struct sym_store *s = store_new(NULL, 0, true);
        feed(s, &r, bin, NULL, true);
        struct sym_frame f = resolve(s, r.leaf);
        assert_int_equal(f.state, SYM_NO_SYMBOL);
        char buf[256];
        sym_format(s, sym_locate(s, PID, r.leaf), buf, sizeof(buf));
        assert_non_null(strstr(buf, "sym_fixture+0x"));
        sym_store_free(s);

        /* the debug file in DIR/.build-id/xx/rest.debug names it */
        const char *dirs[] = {dir};
        s = store_new(dirs, 1, true);
        feed(s, &r, bin, NULL, true);
        expect_name(s, r.leaf + 3, "fixture_leaf", 3);
        expect_name(s, r.outer, "fixture_inline_outer", 0);
        sym_store_free(s);
}

static void test_minidebuginfo(void **state)
{
        (void)state;
        char bin[1024];
        variant_path(bin, sizeof(bin), "mini");
        struct fixture_run r;
        run_fixture(bin, &r);
        struct sym_store *s = store_new(NULL, 0, true);
        feed(s, &r, bin, NULL, true);
        expect_name(s, r.leaf + 1, "fixture_leaf", 1);
        expect_name(s, r.outer, "fixture_inline_outer", 0);
        sym_store_free(s);
}

/* A module without DWARF (MiniDebugInfo: symbols, no lines) has no source line at any address,
   and the store keeps nothing per address for it; the fixture's lines are kept, one per
   address asked. */
static void test_no_lines_kept_without_dwarf(void **state)
{
        (void)state;
        char bin[1024];
        variant_path(bin, sizeof(bin), "mini");
        struct fixture_run r;
        run_fixture(bin, &r);
        struct sym_store *s = store_new(NULL, 0, true);
        feed(s, &r, bin, NULL, true);
        expect_name(s, r.leaf + 1, "fixture_leaf", 1);
        for (uint64_t a = r.outer; a < r.outer + 64; a++) {
                uint32_t file = 0, line = 0;
                struct sym_srcframe fr[8];
                assert_false(sym_srcline_line(s, sym_locate(s, PID, a), &file, &line));
                assert_int_equal(sym_srcline(s, sym_locate(s, PID, a), fr, 8), 0);
        }
        struct sym_stats st;
        sym_store_get_stats(s, &st);
        assert_int_equal(st.nr_src_kept, 0);
        sym_store_free(s);

        run_fixture(env("SYM_FIXTURE"), &r);
        s = store_new(NULL, 0, true);
        feed(s, &r, env("SYM_FIXTURE"), NULL, true);
        resolve(s, r.outer);
        uint32_t nr_lines = 0;
        for (uint64_t a = r.outer; a < r.outer + 64; a++) {
                uint32_t file = 0, line = 0;
                nr_lines += sym_srcline_line(s, sym_locate(s, PID, a), &file, &line);
        }
        sym_store_get_stats(s, &st);
        assert_true(nr_lines > 0);
        assert_int_equal(st.nr_src_kept, 64);
        sym_store_free(s);
}

static void test_moved_to_symbol_path(void **state)
{
        (void)state;
        char dir[1024];
        snprintf(dir, sizeof(dir), "%s/moved", env("SYM_FIXTURE_VARIANTS"));
        struct fixture_run r;
        run_fixture(env("SYM_FIXTURE"), &r);
        /* the recording names a path that does not exist here */
        const char *dirs[] = {"/nonexistent-dir", dir};
        struct sym_store *s = store_new(dirs, 2, true);
        feed(s, &r, env("SYM_FIXTURE"), "/build/elsewhere/sym_fixture", true);
        expect_name(s, r.leaf + 7, "fixture_leaf", 7);
        struct sym_module_info info;
        assert_true(sym_module_info(s, sym_locate(s, PID, r.leaf).module, &info));
        assert_true(info.is_loaded);
        assert_non_null(strstr(info.file_used, "/moved/sym_fixture"));
        assert_string_equal(info.path, "/build/elsewhere/sym_fixture");
        sym_store_free(s);

        /* without the symbol path: not found, module+offset */
        s = store_new(NULL, 0, true);
        feed(s, &r, env("SYM_FIXTURE"), "/build/elsewhere/sym_fixture", true);
        struct sym_frame f = resolve(s, r.leaf);
        assert_int_equal(f.state, SYM_UNUSABLE);
        sym_store_free(s);
}

static void test_changed_file_is_refused(void **state)
{
        (void)state;
        char changed[1024];
        variant_path(changed, sizeof(changed), "changed");
        struct fixture_run r;
        run_fixture(env("SYM_FIXTURE"), &r);
        /* recorded with the real build-id, at the path of a file that was rebuilt since */
        struct sym_store *s = store_new(NULL, 0, true);
        feed(s, &r, env("SYM_FIXTURE"), changed, true);
        struct sym_frame f = resolve(s, r.leaf);
        assert_int_equal(f.state, SYM_UNUSABLE);
        struct sym_module_info info;
        assert_true(sym_module_info(s, f.module, &info));
        assert_non_null(strstr(info.note, "changed since the recording"));
        char buf[256];
        sym_format(s, sym_locate(s, PID, r.leaf), buf, sizeof(buf));
        assert_null(strstr(buf, "!")); /* never a name from the wrong file */
        sym_store_free(s);
}

static void test_address_space_events(void **state)
{
        (void)state;
        const char *bin = env("SYM_FIXTURE");
        struct fixture_run r;
        run_fixture(bin, &r);
        const struct fixture_map *exe = NULL;
        for (uint32_t i = 0; i < r.nr_maps; i++)
                if (r.leaf >= r.maps[i].start && r.leaf < r.maps[i].end)
                        exe = &r.maps[i];
        assert_non_null(exe);
        uint64_t rel = r.leaf - exe->start; /* fixture_leaf within the mapping */
        struct sym_store *s = store_new(NULL, 0, true);
        struct sym_image im = {7, 0x100000, exe->end - exe->start, exe->pgoff, exe->path, NULL, 0,
                               0, 0};
        sym_image_load(s, &im);
        struct sym_frame f;
        sym_resolve(s, sym_locate(s, 7, 0x100000 + rel), &f);
        assert_int_equal(f.state, SYM_RESOLVED);
        assert_string_equal(sym_name(s, f.function), "fixture_leaf");

        /* a later mapping over the same range replaces it */
        struct sym_image other = {7,    0x100000, 0x1000, 0, "/nonexistent/libother.so",
                                  NULL, 0,        0,      0};
        sym_image_load(s, &other);
        char buf[256];
        sym_format(s, sym_locate(s, 7, 0x100010), buf, sizeof(buf));
        assert_string_equal(buf, "libother.so+0x10");
        /* the part of the old mapping past the new one is still the fixture's */
        if (rel >= 0x1000) {
                sym_resolve(s, sym_locate(s, 7, 0x100000 + rel), &f);
                assert_string_equal(sym_name(s, f.function), "fixture_leaf");
        }
        /* unload */
        sym_image_unload(s, 7, 0x100000);
        sym_resolve(s, sym_locate(s, 7, 0x100010), &f);
        assert_int_equal(f.state, SYM_NO_MODULE);

        /* another process keeps its own maps; an exited process keeps its maps until the pid
           is reused */
        im.pid = 8;
        sym_image_load(s, &im);
        sym_resolve(s, sym_locate(s, 8, 0x100000 + rel), &f);
        assert_int_equal(f.state, SYM_RESOLVED);
        sym_process_start(s, 8); /* pid reuse, or exec */
        sym_resolve(s, sym_locate(s, 8, 0x100000 + rel), &f);
        assert_int_equal(f.state, SYM_NO_MODULE);

        /* two processes mapping one file share one module */
        im.pid = 9;
        sym_image_load(s, &im);
        im.pid = 10;
        im.base = 0x200000;
        sym_image_load(s, &im);
        assert_int_equal(sym_locate(s, 9, 0x100000 + rel).module,
                         sym_locate(s, 10, 0x200000 + rel).module);
        assert_int_equal(sym_locate(s, 9, 0x100000 + rel).rel,
                         sym_locate(s, 10, 0x200000 + rel).rel);

        /* ended processes keep their maps for their late events, the last 4096 of them: a
           process storm does not grow the store without end */
        sym_process_end(s, 9);
        sym_resolve(s, sym_locate(s, 9, 0x100000 + rel), &f);
        assert_int_equal(f.state, SYM_RESOLVED);
        struct sym_stats st0, st;
        sym_store_get_stats(s, &st0);
        for (uint32_t pid = 1000; pid < 1000 + 10000; pid++) {
                im.pid = pid;
                sym_image_load(s, &im);
                sym_process_end(s, pid);
                if (pid == 1000)
                        sym_process_end(s, 10);
                if (pid == 1100) {
                        /* pid 10 used again: its old end, still in the ring, must not take
                           the new process's maps when it leaves the ring */
                        sym_process_start(s, 10);
                        struct sym_image again = im;
                        again.pid = 10;
                        again.base = 0x300000;
                        sym_image_load(s, &again);
                }
        }
        sym_store_get_stats(s, &st);
        assert_true(st.nr_spaces <= st0.nr_spaces + 4096);
        sym_resolve(s, sym_locate(s, 9, 0x100000 + rel), &f);
        assert_int_equal(f.state, SYM_NO_MODULE); /* ended long ago: forgotten */
        sym_resolve(s, sym_locate(s, 1000 + 9999, 0x200000 + rel), &f);
        assert_int_equal(f.state, SYM_RESOLVED); /* ended just now: kept */
        sym_resolve(s, sym_locate(s, 10, 0x300000 + rel), &f);
        assert_int_equal(f.state, SYM_RESOLVED);
        sym_store_free(s);
}

static void test_recorded_kernel_symbols(void **state)
{
        (void)state;
        struct sym_store *s = store_new(NULL, 0, true);
        struct sym_image k = {
                0, 0xffffffff81000000ull, 0x1000000, 0, "[kernel.kallsyms]", NULL, 0, 0, 0};
        sym_image_load(s, &k);
        struct sym_frame f;
        /* before the symbols arrive: module+offset */
        sym_resolve(s, sym_locate(s, 1234, 0xffffffff81000123ull), &f);
        assert_int_not_equal(f.state, SYM_RESOLVED);
        /* the answers stand while no symbol comes: an epoch, 0 from a symbol to the next lookup */
        uint32_t kernel = sym_locate(s, 1234, 0xffffffff81000123ull).module;
        uint32_t epoch = sym_answers_epoch(s, kernel);
        assert_int_not_equal(epoch, 0);
        assert_int_equal(sym_answers_epoch(s, kernel), epoch);
        sym_kernel_symbol(s, 0xffffffff81000100ull, 0x80, "schedule", "");
        assert_int_equal(sym_answers_epoch(s, kernel), 0);
        sym_kernel_symbol(s, 0xffffffffc0100000ull, 0x200, "ext4_file_write_iter", "ext4");
        sym_resolve(s, sym_locate(s, 1234, 0xffffffff81000123ull), &f);
        assert_int_not_equal(sym_answers_epoch(s, kernel), 0);
        assert_int_not_equal(sym_answers_epoch(s, kernel), epoch);
        assert_int_equal(f.state, SYM_RESOLVED);
        assert_string_equal(sym_name(s, f.function), "schedule");
        assert_int_equal(f.offset, 0x23);
        /* a module's code lies outside the kernel image */
        sym_resolve(s, sym_locate(s, 1234, 0xffffffffc0100010ull), &f);
        assert_int_equal(f.state, SYM_RESOLVED);
        assert_string_equal(sym_name(s, f.function), "ext4_file_write_iter [ext4]");
        char buf[256];
        sym_format(s, sym_locate(s, 1234, 0xffffffff81000100ull), buf, sizeof(buf));
        assert_string_equal(buf, "[kernel.kallsyms]!schedule");
        sym_store_free(s);
}

/* A 32-bit kernel (an i686 or armv7 perf.data: its text at 0x81000000, ARM's modules below
   0x80000000): its addresses are the kernel's in every process, as perf places them by the
   sample's mode, and named by its recorded symbols; a user address of no image stays of none.
   A 64-bit perf 3.4's kernel map starts at 0: no user address is the kernel's there. */
static void test_kernel32(void **state)
{
        (void)state;
        struct sym_store *s = store_new(NULL, 0, true);
        struct sym_image k = {0, 0x81000000ull, 0x70000000, 0, "[kernel.kallsyms]", NULL, 0, 0, 0};
        struct sym_image mod = {0, 0x7f000000ull, 0x6000, 0, "/lib/modules/joydev.ko", NULL, 0, 0,
                                0};
        struct sym_image libc = {1234, 0x40000000ull, 0x100000, 0, "/lib/libc.so.6", NULL, 0, 0, 0};
        sym_image_load(s, &k);
        sym_image_load(s, &mod);
        sym_image_load(s, &libc);
        sym_kernel_symbol(s, 0x81000100ull, 0x80, "schedule", "");
        uint32_t kernel = sym_locate(s, 0, 0x81000100ull).module;
        assert_int_not_equal(kernel, 0);
        assert_int_equal(sym_locate(s, 1234, 0x81000123ull).module, kernel);
        struct sym_frame f;
        sym_resolve(s, sym_locate(s, 1234, 0x81000123ull), &f);
        assert_int_equal(f.state, SYM_RESOLVED);
        assert_string_equal(sym_name(s, f.function), "schedule");
        assert_int_equal(sym_locate(s, 1234, 0x7f000010ull).module,
                         sym_locate(s, 0, 0x7f000010ull).module);
        assert_int_not_equal(sym_locate(s, 1234, 0x7f000010ull).module, 0);
        assert_int_not_equal(sym_locate(s, 1234, 0x40000010ull).module, kernel);
        assert_int_equal(sym_locate(s, 1234, 0x10000ull).module, 0);
        sym_store_free(s);

        s = store_new(NULL, 0, true);
        struct sym_image k64 = {
                0, 0, 0xffffffff9fffffffull, 0xffffffff81000000ull, "[kernel.kallsyms]", NULL, 0,
                0, 0};
        sym_image_load(s, &k64);
        assert_int_equal(sym_locate(s, 1234, 0x400000ull).module, 0);
        sym_store_free(s);
}

/* A module's short name: the file's name; a Linux kernel module's as perf report has it, its
   extension and compression gone, its dashes underscores, in brackets; a clipped buffer stays
   a string. */
static void test_module_short_name(void **state)
{
        (void)state;
        char buf[64];
        module_short_name(buf, sizeof(buf), "/usr/lib/x86_64-linux-gnu/libc.so.6");
        assert_string_equal(buf, "libc.so.6");
        module_short_name(buf, sizeof(buf), "\\Windows\\System32\\ntdll.dll");
        assert_string_equal(buf, "ntdll.dll");
        module_short_name(buf, sizeof(buf), "/lib/modules/5.15/kernel/drivers/usb/xhci-pci.ko.xz");
        assert_string_equal(buf, "[xhci_pci]");
        module_short_name(buf, sizeof(buf), "/lib/modules/6.6/kernel/fs/ext4/ext4.ko.zst");
        assert_string_equal(buf, "[ext4]");
        module_short_name(buf, sizeof(buf), "nvidia-uvm.ko");
        assert_string_equal(buf, "[nvidia_uvm]");
        module_short_name(buf, sizeof(buf), "[ccp]");
        assert_string_equal(buf, "[ccp]");
        module_short_name(buf, sizeof(buf), "/tmp/.ko");
        assert_string_equal(buf, ".ko");
        module_short_name(buf, sizeof(buf), "/tmp/notes.kobj");
        assert_string_equal(buf, "notes.kobj");
        assert_int_equal(module_short_name(buf, 4, "/lib/modules/a-b-c.ko"), 7);
        assert_string_equal(buf, "[a_");
}

/* A BPF program (a KernelSymbol of the "bpf" module): a module of its own named as its symbol,
   as perf report's dso, before the kernel's image whose map spans it; one loaded later at its
   address takes its place; told twice, one module. */
static void test_bpf_programs(void **state)
{
        (void)state;
        struct sym_store *s = store_new(NULL, 0, true);
        struct sym_image k = {
                0, 0xffffffff81000000ull, 0x7e000000ull, 0, "[kernel.kallsyms]", NULL, 0, 0, 0};
        sym_image_load(s, &k);
        uint32_t kernel = sym_locate(s, 0, 0xffffffff81000100ull).module;
        sym_kernel_symbol(s, 0xffffffffc0026e9cull, 0x100, "bpf_prog_44170d3d_probe", "bpf");
        sym_kernel_symbol(s, 0xffffffffc0026e9cull, 0x100, "bpf_prog_44170d3d_probe", "bpf");
        sym_kernel_symbol(s, 0xffffffffc0010000ull, 0x40, "bpf_prog_aa_first", "bpf");
        struct sym_loc loc = sym_locate(s, 1234, 0xffffffffc0026ea0ull);
        assert_int_not_equal(loc.module, kernel);
        assert_int_equal(loc.rel, 4);
        struct sym_module_info info;
        assert_true(sym_module_info(s, loc.module, &info));
        assert_string_equal(info.name, "bpf_prog_44170d3d_probe");
        struct sym_frame f;
        sym_resolve(s, loc, &f);
        assert_int_equal(f.state, SYM_RESOLVED);
        assert_string_equal(sym_name(s, f.function), "bpf_prog_44170d3d_probe");
        assert_int_equal(f.offset, 4);
        assert_int_equal(sym_locate(s, 0, 0xffffffffc0026e9cull + 0x100).module, kernel);
        uint32_t first = sym_locate(s, 0, 0xffffffffc0010010ull).module;
        assert_int_not_equal(first, kernel);
        assert_int_not_equal(first, loc.module);
        sym_kernel_symbol(s, 0xffffffffc0026e9cull, 0x80, "bpf_prog_55_later", "bpf");
        assert_true(sym_module_info(s, sym_locate(s, 0, 0xffffffffc0026ea0ull).module, &info));
        assert_string_equal(info.name, "bpf_prog_55_later");
        assert_int_equal(sym_locate(s, 0, 0xffffffffc0026e9cull + 0x90).module, kernel);
        assert_int_equal(sym_locate(s, 0, 0xffffffffc0010010ull).module, first);
        sym_store_free(s);
}

/* A kernel address outside every described kernel image: the kernel's where only the kernel's
   own image was described (its modules named by its symbols); unknown where its modules were
   described too (a perf.data's maps, as perf report has such a sample: [unknown]), unless
   the kernel's symbols are there to name it. */
static void test_kernel_outside_images(void **state)
{
        (void)state;
        struct sym_image k = {
                0, 0xffffffff81000000ull, 0x2000000, 0, "[kernel.kallsyms]", NULL, 0, 0, 0};
        struct sym_image ext4 = {
                0, 0xffffffffc0600000ull, 0x10000, 0, "/lib/modules/ext4.ko", NULL, 0, 0, 0};
        const uint64_t stray = 0xffffffffc0170564ull;
        struct sym_store *s = store_new(NULL, 0, true);
        sym_image_load(s, &k);
        uint32_t kernel = sym_locate(s, 0, 0xffffffff81000100ull).module;
        assert_int_not_equal(kernel, 0);
        assert_int_equal(sym_locate(s, 1234, stray).module, kernel);
        sym_image_load(s, &ext4);
        uint32_t m = sym_locate(s, 1234, 0xffffffffc0600010ull).module;
        assert_int_not_equal(m, 0);
        assert_int_not_equal(m, kernel);
        /* named as perf report names a kernel module: [ext4], not ext4.ko */
        struct sym_module_info info;
        assert_true(sym_module_info(s, m, &info));
        assert_string_equal(info.name, "[ext4]");
        assert_int_equal(sym_locate(s, 1234, stray).module, 0);
        assert_int_equal(sym_locate(s, 0, stray).module, 0);
        sym_kernel_symbol(s, 0xffffffffc0170000ull, 0x1000, "jbd2_journal_start", "jbd2");
        assert_int_equal(sym_locate(s, 1234, stray).module, kernel);
        sym_store_free(s);
}

/* An arm64 kernel of Linux before 5.4 (48-bit: its image at 0xffff000010080000, its modules
   below it at 0xffff000008e80000): its addresses are the kernel's in every process, as
   x86-64's upper half is, not a process's addresses of no image. */
static void test_arm64_kernel_half(void **state)
{
        (void)state;
        struct sym_image k = {
                0, 0xffff000010080000ull, 0xffffeff7ffffull, 0, "[kernel.kallsyms]", NULL, 0, 0, 0};
        struct sym_image ccp = {0, 0xffff000008e80000ull, 0x15000, 0, "[ccp]", NULL, 0, 0, 0};
        struct sym_image prog = {1234, 0xaaaab0000000ull, 0x10000, 0, "/usr/bin/prog", NULL, 0, 0,
                                 0};
        struct sym_store *s = store_new(NULL, 0, true);
        sym_image_load(s, &k);
        sym_image_load(s, &ccp);
        sym_image_load(s, &prog);
        uint32_t kernel = sym_locate(s, 0, 0xffff000010239c28ull).module;
        assert_int_not_equal(kernel, 0);
        assert_int_equal(sym_locate(s, 1234, 0xffff000010239c28ull).module, kernel);
        uint32_t m = sym_locate(s, 1234, 0xffff000008e80100ull).module;
        assert_int_not_equal(m, 0);
        assert_int_not_equal(m, kernel);
        assert_true(sym_is_kernel_address(0xffff000010239c28ull));
        assert_false(sym_is_kernel_address(0x0000ffffb7e41000ull)); /* arm64's user top */
        assert_int_not_equal(sym_locate(s, 1234, 0xaaaab0000010ull).module, kernel);
        sym_store_free(s);
}

/* writes len bytes of data to a new file in dir; its path in out */
static void write_temp(const char *dir, const char *name, const void *data, size_t len, char *out,
                       size_t size)
{
        snprintf(out, size, "%s/%s", dir, name);
        FILE *fp = fopen(out, "wb");
        assert_non_null(fp);
        assert_int_equal(fwrite(data, 1, len, fp), len);
        fclose(fp);
}

/* The kernel address addr of process 1234 resolved in s, named name. */
static void assert_kernel_named(struct sym_store *s, uint64_t addr, const char *name)
{
        struct sym_frame f;
        sym_resolve(s, sym_locate(s, 1234, addr), &f);
        assert_int_equal(f.state, SYM_RESOLVED);
        assert_string_equal(sym_name(s, f.function), name);
}

/* A recording cut short has no kernel symbols: the running kernel's (its /proc/kallsyms) name
   its kernel frames when its build-id (/sys/kernel/notes) is the recording's, never another
   kernel's. */
static void test_kernel_symbols_from_running(void **state)
{
        (void)state;
        char dir[] = "/tmp/etwtop_krun_XXXXXX";
        assert_non_null(mkdtemp(dir));
        /* an ELF note (namesz 4, descsz 20, NT_GNU_BUILD_ID "GNU"), after another note */
        uint8_t notes[12 + 8 + 12 + 4 + 20] = {0};
        uint32_t other[3] = {4, 4, 1}, gnu[3] = {4, 20, 3};
        memcpy(notes, other, 12);
        memcpy(notes + 12, "Xen\0\1\2\3\4", 8);
        memcpy(notes + 20, gnu, 12);
        memcpy(notes + 32, "GNU", 4);
        uint8_t id[20];
        for (int i = 0; i < 20; i++)
                id[i] = (uint8_t)(0xa0 + i);
        memcpy(notes + 36, id, 20);
        uint8_t got[20];
        uint32_t got_size = 0;
        assert_int_equal(kallsyms_notes_build_id(notes, sizeof(notes), got, &got_size), 0);
        assert_int_equal(got_size, 20);
        assert_memory_equal(got, id, 20);
        assert_int_equal(kallsyms_notes_build_id(notes, 30, got, &got_size), -ENOENT);

        char notes_path[64], ksyms_path[64];
        write_temp(dir, "notes", notes, sizeof(notes), notes_path, sizeof(notes_path));
        static const char ksyms[] = "ffffffff81000000 T _stext\n"
                                    "ffffffff81000100 T schedule\n"
                                    "ffffffff81000180 T __pfx_io_schedule\n"
                                    "ffffffff81000190 T io_schedule\n"
                                    "ffffffff81000200 T _etext\n"
                                    "ffffffffc0100000 t ext4_file_write_iter\t[ext4]\n"
                                    "ffffffffc0300000 t xfs_file_read_iter\t[xfs]\n"
                                    "ffffffffc0300200 t __pfx_xfs_vn_update_time\t[xfs]\n"
                                    "ffffffffc0300210 t xfs_vn_update_time\t[xfs]\n";
        write_temp(dir, "kallsyms", ksyms, sizeof(ksyms) - 1, ksyms_path, sizeof(ksyms_path));

        struct sym_image k = {
                0, 0xffffffff81000000ull, 0x1000000, 0, "[kernel.kallsyms]", NULL, 0, 0, 0};
        /* another kernel: nothing taken */
        struct sym_store *s = store_new(NULL, 0, true);
        sym_image_load(s, &k);
        uint8_t other_id[20];
        memcpy(other_id, id, 20);
        other_id[19] ^= 1;
        assert_int_equal(sym_kernel_running(s, other_id, 20, notes_path, ksyms_path), 0);
        struct sym_frame f;
        sym_resolve(s, sym_locate(s, 1234, 0xffffffff81000123ull), &f);
        assert_int_not_equal(f.state, SYM_RESOLVED);
        sym_store_free(s);

        /* the same kernel: its symbols, the kernel's and a module's */
        s = store_new(NULL, 0, true);
        sym_image_load(s, &k);
        assert_true(sym_kernel_running(s, id, 20, notes_path, ksyms_path) > 0);
        assert_kernel_named(s, 0xffffffff81000123ull, "schedule");
        assert_kernel_named(s, 0xffffffff81000184ull, "schedule"); /* its padding after it */
        assert_kernel_named(s, 0xffffffffc0100010ull, "ext4_file_write_iter [ext4]");
        /* each module's symbols named with their module, a padding's run to its function */
        assert_kernel_named(s, 0xffffffffc0300010ull, "xfs_file_read_iter [xfs]");
        assert_kernel_named(s, 0xffffffffc0300218ull, "xfs_vn_update_time [xfs]");
        assert_kernel_named(s, 0xffffffffc0300204ull, "xfs_file_read_iter [xfs]");
        /* a symbol recorded as well (a second file of the same replay): both kept, the table
           taken whole merged with it */
        sym_kernel_symbol(s, 0xffffffffc0200000ull, 0x100, "late_fn", "late");
        assert_kernel_named(s, 0xffffffffc0200010ull, "late_fn [late]");
        assert_kernel_named(s, 0xffffffff81000184ull, "schedule");
        assert_kernel_named(s, 0xffffffffc0100010ull, "ext4_file_write_iter [ext4]");
        sym_store_free(s);

        /* the other order: recorded symbols first, then the running kernel's */
        s = store_new(NULL, 0, true);
        sym_image_load(s, &k);
        sym_kernel_symbol(s, 0xffffffffc0200000ull, 0x100, "late_fn", "late");
        assert_true(sym_kernel_running(s, id, 20, notes_path, ksyms_path) > 0);
        sym_resolve(s, sym_locate(s, 1234, 0xffffffffc0200010ull), &f);
        assert_string_equal(sym_name(s, f.function), "late_fn [late]");
        sym_resolve(s, sym_locate(s, 1234, 0xffffffff81000123ull), &f);
        assert_string_equal(sym_name(s, f.function), "schedule");
        sym_store_free(s);
        unlink(notes_path);
        unlink(ksyms_path);
        rmdir(dir);
}

/* The name sym_kernel_running gives the kernel address addr in a new store (kernel image k). */
static void running_name(const struct sym_image *k, const uint8_t *id, const char *notes_path,
                         uint64_t addr, char *out, size_t size)
{
        struct sym_store *s = store_new(NULL, 0, true);
        sym_image_load(s, k);
        assert_true(sym_kernel_running(s, id, 20, notes_path, NULL) > 0);
        struct sym_frame f;
        sym_resolve(s, sym_locate(s, 1234, addr), &f);
        assert_int_equal(f.state, SYM_RESOLVED);
        snprintf(out, size, "%s", sym_name(s, f.function));
        sym_store_free(s);
}

/* The byte at offset at of the first place in the file at path where needle (n bytes) stands,
   xored with x, in place. */
static void file_patch(const char *path, const char *needle, size_t n, size_t at, uint8_t x)
{
        FILE *fp = fopen(path, "r+b");
        assert_non_null(fp);
        struct stat st;
        assert_int_equal(fstat(fileno(fp), &st), 0);
        char *bytes = malloc((size_t)st.st_size);
        assert_non_null(bytes);
        assert_int_equal(fread(bytes, 1, (size_t)st.st_size, fp), (size_t)st.st_size);
        char *found = memmem(bytes, (size_t)st.st_size, needle, n);
        assert_non_null(found);
        assert_int_equal(fseek(fp, found + at - bytes, SEEK_SET), 0);
        assert_int_equal(fputc((unsigned char)found[at] ^ x, fp), (unsigned char)found[at] ^ x);
        assert_int_equal(fclose(fp), 0);
        free(bytes);
}

/* The running kernel's table, as a replay makes it, kept in root's cache beside kallsyms'
   parse (kallsyms.names) and mapped by the next replay in the same state of kallsyms: the same
   names; a name changed in the file shows (it is what is read); a damaged file is refused, the
   table made again and kept anew; another state (a module loaded) makes its own. */
/* A kernel's state in dir: its kallsyms text and its modules' lines (64-byte paths out). */
static void write_kernel_state(const char *dir, const char *ksyms, const char *modules,
                               char *ks_path, char *mod_path)
{
        write_temp(dir, "kallsyms", ksyms, strlen(ksyms), ks_path, 64);
        write_temp(dir, "modules", modules, strlen(modules), mod_path, 64);
}

static void test_kernel_symbols_running_kept(void **state)
{
        (void)state;
        char dir[] = "/tmp/etwtop_kkept_XXXXXX";
        assert_non_null(mkdtemp(dir));
        uint8_t notes[12 + 4 + 20] = {0};
        uint32_t gnu[3] = {4, 20, 3};
        memcpy(notes, gnu, 12);
        memcpy(notes + 12, "GNU", 4);
        uint8_t id[20];
        for (int i = 0; i < 20; i++)
                id[i] = (uint8_t)(0x30 + i);
        memcpy(notes + 16, id, 20);
        char notes_path[64], ks_path[64], mod_path[64], cache_dir[64], kept[96];
        write_temp(dir, "notes", notes, sizeof(notes), notes_path, sizeof(notes_path));
        static const char ksyms[] = "ffffffff81000000 T _stext\n"
                                    "ffffffff81000100 T schedule\n"
                                    "ffffffff81000200 T _etext\n"
                                    "ffffffffc0100000 t ext4_file_write_iter\t[ext4]\n";
        write_kernel_state(dir, ksyms, "ext4 1 0 - Live 0xffffffffc0100000\n", ks_path, mod_path);
        snprintf(cache_dir, sizeof(cache_dir), "%s/cache", dir);
        assert_int_equal(mkdir(cache_dir, 0700), 0);
        snprintf(kept, sizeof(kept), "%s/kallsyms.names", cache_dir);
        kallsyms_text_set_paths(ks_path, mod_path, cache_dir, true);
        struct sym_image k = {
                0, 0xffffffff81000000ull, 0x1000000, 0, "[kernel.kallsyms]", NULL, 0, 0, 0};
        char name[256];

        /* made and kept, then mapped: the same names */
        running_name(&k, id, notes_path, 0xffffffff81000123ull, name, sizeof(name));
        assert_string_equal(name, "schedule");
        struct stat st;
        assert_int_equal(stat(kept, &st), 0);
        assert_int_equal(st.st_mode & 0777, 0600);
        running_name(&k, id, notes_path, 0xffffffff81000123ull, name, sizeof(name));
        assert_string_equal(name, "schedule");
        running_name(&k, id, notes_path, 0xffffffffc0100010ull, name, sizeof(name));
        assert_string_equal(name, "ext4_file_write_iter [ext4]");

        /* the kept file is what is read: a name changed there shows */
        file_patch(kept, "\0schedule\0", 10, 1, 0x20); /* 's' -> 'S' */
        running_name(&k, id, notes_path, 0xffffffff81000123ull, name, sizeof(name));
        assert_string_equal(name, "Schedule");

        /* cut short: refused, made again (the right name), kept whole again */
        assert_int_equal(truncate(kept, st.st_size - 3), 0);
        running_name(&k, id, notes_path, 0xffffffff81000123ull, name, sizeof(name));
        assert_string_equal(name, "schedule");
        struct stat st2;
        assert_int_equal(stat(kept, &st2), 0);
        assert_int_equal(st2.st_size, st.st_size);

        /* made by another build of etwtop (its build-id after the magic): not used, made again
           and kept anew, the name right */
        file_patch(kept, "knames1", 8, 8, 0x55);
        /* and a name of it changed, which a use of the file would show */
        file_patch(kept, "\0schedule\0", 10, 1, 0x20);
        running_name(&k, id, notes_path, 0xffffffff81000123ull, name, sizeof(name));
        assert_string_equal(name, "schedule");
        running_name(&k, id, notes_path, 0xffffffff81000123ull, name, sizeof(name));
        assert_string_equal(name, "schedule");

        /* another state: a module loaded elsewhere; its own table */
        static const char ksyms2[] = "ffffffff81000000 T _stext\n"
                                     "ffffffff81000100 T schedule_new\n"
                                     "ffffffff81000200 T _etext\n"
                                     "ffffffffc0200000 t xfs_file_read_iter\t[xfs]\n";
        write_kernel_state(dir, ksyms2, "xfs 1 0 - Live 0xffffffffc0200000\n", ks_path, mod_path);
        kallsyms_text_forget();
        running_name(&k, id, notes_path, 0xffffffff81000123ull, name, sizeof(name));
        assert_string_equal(name, "schedule_new");
        running_name(&k, id, notes_path, 0xffffffffc0200010ull, name, sizeof(name));
        assert_string_equal(name, "xfs_file_read_iter [xfs]");

        kallsyms_text_set_paths(NULL, NULL, NULL, false);
        char cmd[128];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        assert_int_equal(system(cmd), 0);
}

/* A recording of another kernel (another boot): its symbols from the copy perf record kept in
   its build-id cache, ~/.debug/[kernel.kallsyms]/HEX/kallsyms ($PERF_BUILDID_DIR first); only a
   regular file there is read. */
static void test_kernel_symbols_from_perf_cache(void **state)
{
        (void)state;
        char dir[] = "/tmp/etwtop_kcache_XXXXXX";
        assert_non_null(mkdtemp(dir));
        uint8_t id[20];
        char hex[41], path[512], cmd[600];
        for (int i = 0; i < 20; i++) {
                id[i] = (uint8_t)(0x50 + i);
                snprintf(hex + 2 * i, 3, "%02x", id[i]);
        }
        snprintf(path, sizeof(path), "%s/.debug/[kernel.kallsyms]/%s", dir, hex);
        snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", path);
        assert_int_equal(system(cmd), 0);
        static const char ksyms[] = "ffffffff81000000 T _stext\n"
                                    "ffffffff81000100 T cached_schedule\n"
                                    "ffffffff81000200 T _etext\n";
        char file[600];
        snprintf(file, sizeof(file), "%s/kallsyms", path);
        FILE *fp = fopen(file, "w");
        assert_non_null(fp);
        fputs(ksyms, fp);
        fclose(fp);
        char *old_home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
        char *old_dir = getenv("PERF_BUILDID_DIR") ? strdup(getenv("PERF_BUILDID_DIR")) : NULL;
        setenv("HOME", dir, 1);
        unsetenv("PERF_BUILDID_DIR");
        struct sym_image k = {
                0, 0xffffffff81000000ull, 0x1000000, 0, "[kernel.kallsyms]", NULL, 0, 0, 0};
        struct sym_frame f;
        /* another build-id: nothing */
        struct sym_store *s = store_new(NULL, 0, true);
        sym_image_load(s, &k);
        uint8_t other[20];
        memcpy(other, id, 20);
        other[0] ^= 1;
        assert_int_equal(sym_kernel_cached(s, other, 20), 0);
        sym_resolve(s, sym_locate(s, 1234, 0xffffffff81000123ull), &f);
        assert_int_not_equal(f.state, SYM_RESOLVED);
        sym_store_free(s);
        /* its own: named from the cache */
        s = store_new(NULL, 0, true);
        sym_image_load(s, &k);
        assert_true(sym_kernel_cached(s, id, 20) > 0);
        sym_resolve(s, sym_locate(s, 1234, 0xffffffff81000123ull), &f);
        assert_int_equal(f.state, SYM_RESOLVED);
        assert_string_equal(sym_name(s, f.function), "cached_schedule");
        sym_store_free(s);
        /* PERF_BUILDID_DIR first: an empty one holds nothing */
        setenv("PERF_BUILDID_DIR", dir, 1);
        s = store_new(NULL, 0, true);
        sym_image_load(s, &k);
        assert_int_equal(sym_kernel_cached(s, id, 20), 0);
        sym_store_free(s);
        unsetenv("PERF_BUILDID_DIR");
        /* a symbolic link at the name: not followed */
        char moved[640];
        snprintf(moved, sizeof(moved), "%s/moved", dir);
        assert_int_equal(rename(file, moved), 0);
        assert_int_equal(symlink(moved, file), 0);
        s = store_new(NULL, 0, true);
        sym_image_load(s, &k);
        assert_int_equal(sym_kernel_cached(s, id, 20), 0);
        sym_store_free(s);
        if (old_home)
                setenv("HOME", old_home, 1);
        if (old_dir)
                setenv("PERF_BUILDID_DIR", old_dir, 1);
        free(old_home);
        free(old_dir);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        assert_int_equal(system(cmd), 0);
}

static void test_background_loading(void **state)
{
        (void)state;
        struct fixture_run r;
        run_fixture(env("SYM_FIXTURE"), &r);
        struct sym_store *s = store_new(NULL, 0, false);
        feed(s, &r, env("SYM_FIXTURE"), NULL, true);
        struct sym_frame f = resolve(s, r.leaf);
        resolve(s, r.lib_work); /* both modules are asked for before the wait */
        /* the loader may already be done; if not, the answer is pending, with module+offset. The
           loader may also finish between the two calls: then the name, not an error */
        if (f.state == SYM_PENDING) {
                char buf[256];
                sym_format(s, sym_locate(s, PID, r.leaf), buf, sizeof(buf));
                assert_true(strstr(buf, "sym_fixture+0x") != NULL ||
                            strstr(buf, "sym_fixture!fixture_leaf") != NULL);
        }
        sym_store_wait(s);
        /* loaded, and no poll has said so yet: not settled (a lookup before the poll may have
           been pending); said: settled */
        assert_false(sym_store_is_settled(s));
        assert_true(sym_store_poll(s) >= 1);
        assert_true(sym_store_is_settled(s));
        expect_name(s, r.leaf, "fixture_leaf", 0);
        expect_name(s, r.lib_work + 1, "fixlib_work", 1);
        struct sym_stats st;
        sym_store_get_stats(s, &st);
        assert_true(st.nr_loaded >= 1);
        /* the second lookup of an address comes from the cache */
        expect_name(s, r.leaf, "fixture_leaf", 0);
        sym_store_get_stats(s, &st);
        assert_true(st.nr_cache_hits >= 1);
        sym_store_free(s);
}

static void write_file(const char *path, const void *data, size_t size)
{
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        assert_int_equal(fwrite(data, 1, size, f), size);
        fclose(f);
}

static void test_hostile_files(void **state)
{
        (void)state;
        char dir[] = "/tmp/etwtop-sym-XXXXXX";
        assert_non_null(mkdtemp(dir));
        char garbage[512], truncated[512];
        snprintf(garbage, sizeof(garbage), "%s/garbage.so", dir);
        snprintf(truncated, sizeof(truncated), "%s/truncated.so", dir);
        uint8_t junk[4096];
        for (size_t i = 0; i < sizeof(junk); i++)
                junk[i] = (uint8_t)(i * 7 + 3);
        write_file(garbage, junk, sizeof(junk));
        /* the first bytes of a real ELF file, cut short */
        FILE *f = fopen(env("SYM_FIXLIB"), "rb");
        assert_non_null(f);
        uint8_t head[300];
        assert_int_equal(fread(head, 1, sizeof(head), f), sizeof(head));
        fclose(f);
        write_file(truncated, head, sizeof(head));

        struct sym_store *s = store_new(NULL, 0, true);
        struct sym_image a = {5, 0x400000, 0x10000, 0, garbage, NULL, 0, 0, 0};
        struct sym_image b = {5, 0x500000, 0x10000, 0x1000, truncated, NULL, 0, 0, 0};
        sym_image_load(s, &a);
        sym_image_load(s, &b);
        char buf[256];
        struct sym_frame fr;
        sym_resolve(s, sym_locate(s, 5, 0x400010), &fr);
        assert_int_equal(fr.state, SYM_UNUSABLE);
        sym_format(s, sym_locate(s, 5, 0x400010), buf, sizeof(buf));
        assert_string_equal(buf, "garbage.so+0x10");
        sym_format(s, sym_locate(s, 5, 0x500010), buf, sizeof(buf));
        assert_string_equal(buf, "truncated.so+0x1010");
        struct sym_srcframe src[4];
        assert_int_equal(sym_srcline(s, sym_locate(s, 5, 0x500010), src, 4), 0);
        sym_store_free(s);
        unlink(garbage);
        unlink(truncated);
        rmdir(dir);
}

static void test_windows_modules(void **state)
{
        (void)state;
        struct sym_store *s = store_new(NULL, 0, true);
        struct sym_image nt = {1200,
                               0x7ffb10000000ull,
                               0x1f8000,
                               0,
                               "\\Device\\HarddiskVolume3\\Windows\\System32\\ntdll.dll",
                               NULL,
                               0,
                               0x5e8f1c2a,
                               0};
        sym_image_load(s, &nt);
        struct sym_image drv = {0,
                                0xfffff80412340000ull,
                                0x100000,
                                0,
                                "\\SystemRoot\\system32\\drivers\\tcpip.sys",
                                NULL,
                                0,
                                1,
                                0};
        sym_image_load(s, &drv);
        char buf[256];
        sym_format(s, sym_locate(s, 1200, 0x7ffb10001a2bull), buf, sizeof(buf));
        assert_string_equal(buf, "ntdll.dll+0x1a2b");
        /* kernel-mode images are in process 0's list, whatever process the sample was in */
        sym_format(s, sym_locate(s, 1200, 0xfffff80412340010ull), buf, sizeof(buf));
        assert_string_equal(buf, "tcpip.sys+0x10");

        const uint8_t guid[16] = {0x78, 0x56, 0x34, 0x12, 0xbc, 0x9a, 0xf0, 0xde,
                                  0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef};
        sym_image_pdb(s, 1200, 0x7ffb10000000ull, guid, 2, "ntdll.pdb");
        struct sym_module_info info;
        assert_true(sym_module_info(s, sym_locate(s, 1200, 0x7ffb10001a2bull).module, &info));
        assert_string_equal(info.name, "ntdll.dll");
        assert_true(info.has_pdb);
        assert_string_equal(info.pdb_name, "ntdll.pdb");
        assert_string_equal(info.pdb_signature, "123456789ABCDEF00123456789ABCDEF2");
        sym_store_free(s);
}

/* .NET code named from the CLR's method events: per process, per .NET module, a method
   before its module's event, code outside every image only, a new program in the pid. */
static void test_clr_methods(void **state)
{
        (void)state;
        struct sym_store *s = store_new(NULL, 0, true);
        char buf[256];
        struct sym_image clr = {3676,
                                0x7ffb20000000ull,
                                0x100000,
                                0,
                                "\\Device\\HarddiskVolume2\\Windows\\clr.dll",
                                NULL,
                                0,
                                7,
                                0};
        sym_image_load(s, &clr);
        /* a method whose module is not described yet */
        sym_clr_method(s, 3676, 0x1000, 0x7f95eb10090ull, 0x279,
                       "System.AppDomain.SetupDomain(bool)");
        sym_format(s, sym_locate(s, 3676, 0x7f95eb100a0ull), buf, sizeof(buf));
        assert_string_equal(buf, "[managed]!System.AppDomain.SetupDomain(bool)+0x10");
        sym_clr_module(s, 3676, 0x1000,
                       "C:\\Windows\\Microsoft.Net\\assembly\\GAC_64\\mscorlib\\mscorlib.dll");
        sym_clr_method(s, 3676, 0x1000, 0x7f95eb00000ull, 0x40, "System.String.Concat()");
        sym_clr_module(s, 3676, 0x2000, "Z:\\Test.x64.exe");
        sym_clr_method(s, 3676, 0x2000, 0x7f95eb20000ull, 0x100, "Test.Program.Main()");
        sym_format(s, sym_locate(s, 3676, 0x7f95eb10090ull), buf, sizeof(buf));
        assert_string_equal(buf, "mscorlib.dll!System.AppDomain.SetupDomain(bool)");
        sym_format(s, sym_locate(s, 3676, 0x7f95eb0003full), buf, sizeof(buf));
        assert_string_equal(buf, "mscorlib.dll!System.String.Concat()+0x3f");
        sym_format(s, sym_locate(s, 3676, 0x7f95eb200ffull), buf, sizeof(buf));
        assert_string_equal(buf, "Test.x64.exe!Test.Program.Main()+0xff");
        /* past a method's end, in another process, in an image: not a method */
        sym_format(s, sym_locate(s, 3676, 0x7f95eb00040ull), buf, sizeof(buf));
        assert_string_equal(buf, "0x7f95eb00040");
        assert_int_equal(sym_locate(s, 4000, 0x7f95eb10090ull).module, 0);
        sym_clr_method(s, 3676, 0x1000, 0x7ffb20001000ull, 0x10, "NotThere()");
        sym_format(s, sym_locate(s, 3676, 0x7ffb20001000ull), buf, sizeof(buf));
        assert_string_equal(buf, "clr.dll+0x1000");
        struct sym_module_info info;
        assert_true(sym_module_info(s, sym_locate(s, 3676, 0x7f95eb10090ull).module, &info));
        assert_string_equal(info.name, "mscorlib.dll");
        assert_true(info.is_loaded);
        assert_int_equal(info.nr_symbols, 3);
        /* a new program in the pid: its methods are gone */
        sym_process_start(s, 3676);
        assert_int_equal(sym_locate(s, 3676, 0x7f95eb10090ull).module, 0);
        /* bad input changes nothing */
        sym_clr_method(s, 3676, 0x1000, 0x5000, 0, "Empty()");
        sym_clr_method(s, 3676, 0x1000, UINT64_MAX - 4, 0x10, "Wraps()");
        sym_clr_method(s, 3676, 0x1000, 0x6000, 0x10, "");
        assert_int_equal(sym_locate(s, 3676, 0x5000).module, 0);
        assert_int_equal(sym_locate(s, 3676, 0x6000).module, 0);
        sym_store_free(s);
}

/* Many .NET modules described by their module events alone (a damaged trace's ids): each makes a
   module, past the store's first room for them, which moves its table while the event's module
   is looked up (a byte-flip sweep's find: the table was read where it had been). */
static void test_clr_modules_past_the_table(void **state)
{
        (void)state;
        struct sym_store *s = store_new(NULL, 0, true);
        char path[64];
        for (uint64_t i = 1; i <= 300; i++) {
                snprintf(path, sizeof(path), "Z:\\m%u.dll", (unsigned)i);
                sym_clr_module(s, 3676, 0x1000 * i, path);
        }
        sym_clr_method(s, 3676, 0x1000 * 300, 0x7f95eb20000ull, 0x100, "M.Last()");
        char buf[256];
        sym_format(s, sym_locate(s, 3676, 0x7f95eb20010ull), buf, sizeof(buf));
        assert_string_equal(buf, "m300.dll!M.Last()+0x10");
        sym_store_free(s);
}

/* A Windows image named through its export table, from the file on the symbol path; another
   build of the same name is refused. */
static void test_windows_exports(void **state)
{
        (void)state;
        const char *dirs[] = {env("SYM_PE_DIR")};
        struct sym_store *s = store_new(dirs, 1, true);
        struct sym_image dll = {300,
                                0x180000000ull,
                                0x4000,
                                0,
                                "\\Device\\HarddiskVolume2\\tools\\LLD-X64.DLL",
                                NULL,
                                0,
                                0xc723e6e6,
                                0};
        sym_image_load(s, &dll);
        char buf[256];
        sym_format(s, sym_locate(s, 300, 0x180001004ull), buf, sizeof(buf));
        assert_string_equal(buf, "LLD-X64.DLL!alpha+0x4");
        sym_format(s, sym_locate(s, 300, 0x180001010ull), buf, sizeof(buf));
        assert_string_equal(buf, "LLD-X64.DLL!beta");
        struct sym_module_info info;
        assert_true(sym_module_info(s, sym_locate(s, 300, 0x180001010ull).module, &info));
        assert_non_null(strstr(info.file_used, "lld-x64.dll"));

        /* the recorded image has another TimeDateStamp: refused, module+offset */
        struct sym_image other = dll;
        other.pid = 301;
        other.time_date_stamp = 0x12345678;
        sym_image_load(s, &other);
        sym_format(s, sym_locate(s, 301, 0x180001004ull), buf, sizeof(buf));
        assert_string_equal(buf, "LLD-X64.DLL+0x1004");
        assert_true(sym_module_info(s, sym_locate(s, 301, 0x180001004ull).module, &info));
        assert_non_null(strstr(info.note, "another build"));
        sym_store_free(s);
}

/* Live: the running kernel from /proc/kallsyms, this process's vdso from its memory. */
static void test_live_kernel_and_vdso(void **state)
{
        (void)state;
        struct kallsyms *ks = NULL;
        struct kallsyms_error kerr;
        if (kallsyms_read(NULL, &ks, &kerr) < 0)
                skip(); /* restricted here: nothing to compare with */
        uint64_t stext = 0, etext = 0;
        assert_true(kallsyms_kernel_text(ks, &stext, &etext));
        /* a function well inside the kernel, as kallsyms itself names it */
        struct kallsyms_hit hit;
        uint64_t probe = stext + (etext - stext) / 2;
        assert_true(kallsyms_lookup(ks, probe, &hit));
        char want[512];
        snprintf(want, sizeof(want), "[kernel.kallsyms]!%s+0x%" PRIx64, hit.name, hit.offset);
        if (!hit.offset)
                snprintf(want, sizeof(want), "[kernel.kallsyms]!%s", hit.name);
        kallsyms_free(ks);

        struct sym_options o = {.is_live = true, .is_synchronous = true};
        struct sym_store *s = NULL;
        assert_int_equal(sym_store_new(&s, &o), 0);
        char buf[256];
        sym_format(s, sym_locate(s, getpid(), probe), buf, sizeof(buf));
        assert_string_equal(buf, want);

        FILE *f = fopen("/proc/self/maps", "r");
        assert_non_null(f);
        char line[512];
        uint64_t vstart = 0, vend = 0;
        while (fgets(line, sizeof(line), f))
                if (strstr(line, "[vdso]"))
                        sscanf(line, "%" SCNx64 "-%" SCNx64, &vstart, &vend);
        fclose(f);
        if (!vstart) {
                sym_store_free(s);
                skip();
        }
        struct sym_image v = {getpid(), vstart, vend - vstart, 0, "[vdso]", NULL, 0, 0, 0};
        sym_image_load(s, &v);
        bool is_named = false;
        for (uint64_t a = vstart; a < vend && !is_named; a += 4) {
                struct sym_frame fr;
                sym_resolve(s, sym_locate(s, getpid(), a), &fr);
                if (fr.state == SYM_RESOLVED) {
                        const char *n = sym_name(s, fr.function);
                        assert_true(strstr(n, "vdso") || strstr(n, "time") || strstr(n, "cpu"));
                        is_named = true;
                }
        }
        assert_true(is_named);
        sym_store_free(s);
}

/* The address cache is bounded: 32 MB for a trace's store, 8 MB for a live one (whose distinct
   addresses only accumulate), starting over when full; an answer is the same after. */
static void test_cache_bounded(void **state)
{
        (void)state;
        size_t mem[2];
        for (int live = 0; live < 2; live++) {
                struct sym_options o = {.is_synchronous = true, .is_live = live == 1};
                struct sym_store *s = NULL;
                assert_int_equal(sym_store_new(&s, &o), 0);
                struct sym_image drv = {0,
                                        0xfffff80412340000ull,
                                        64u << 20,
                                        0,
                                        "\\SystemRoot\\system32\\drivers\\nosuch.sys",
                                        NULL,
                                        0,
                                        1,
                                        0};
                sym_image_load(s, &drv);
                struct sym_loc loc = sym_locate(s, 0, drv.base);
                assert_int_not_equal(loc.module, 0);
                struct sym_frame first, again;
                sym_resolve(s, loc, &first);
                for (uint32_t i = 1; i < 700000; i++)
                        sym_resolve(s, (struct sym_loc){loc.module, (uint64_t)i * 16}, &again);
                sym_resolve(s, loc, &again);
                assert_int_equal(again.state, first.state);
                assert_int_equal(again.function, first.function);
                struct sym_stats st;
                sym_store_get_stats(s, &st);
                mem[live] = st.memory_bytes;
                sym_store_free(s);
        }
        assert_true(mem[0] >= (size_t)32 << 20); /* a trace's: 700,000 addresses, 1M slots */
        assert_true(mem[1] <= (size_t)9 << 20);  /* live: 256K slots of 32 bytes, and the rest */
}

/* JIT code: /tmp/perf-PID.map names addresses no image holds, live. */
static void test_jit_map(void **state)
{
        (void)state;
        char path[64];
        snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fprintf(f, "10000000 40 jit_compiled_loop\n0x10000040 0x20 Lambda::run(int)\n");
        fclose(f);
        struct sym_options o = {.is_live = true, .is_synchronous = true};
        struct sym_store *s = NULL;
        assert_int_equal(sym_store_new(&s, &o), 0);
        char buf[256];
        char want[128];
        sym_format(s, sym_locate(s, (uint32_t)getpid(), 0x10000010), buf, sizeof(buf));
        snprintf(want, sizeof(want), "perf-%d.map!jit_compiled_loop+0x10", (int)getpid());
        assert_string_equal(buf, want);
        sym_format(s, sym_locate(s, (uint32_t)getpid(), 0x10000044), buf, sizeof(buf));
        snprintf(want, sizeof(want), "perf-%d.map!Lambda::run(int)+0x4", (int)getpid());
        assert_string_equal(buf, want);
        sym_store_free(s);
        unlink(path);

        /* no map file: no module (processes by the thousand have none), the raw address */
        assert_int_equal(sym_store_new(&s, &o), 0);
        struct sym_loc loc = sym_locate(s, (uint32_t)getpid(), 0x10000010);
        assert_int_equal(loc.module, 0);
        sym_format(s, loc, buf, sizeof(buf));
        assert_string_equal(buf, "0x10000010");
        struct sym_stats st;
        sym_store_get_stats(s, &st);
        uint32_t nr_modules = st.nr_modules;
        for (uint32_t pid = 50000; pid < 50100; pid++)
                sym_locate(s, pid, 0x10000010);
        sym_store_get_stats(s, &st);
        assert_int_equal(st.nr_modules, nr_modules);
        sym_store_free(s);
}

/* ---- programs built at test time: C++, Rust, and C with other languages' symbol names ---- */

/* What `program addr` printed: "name address" lines, then its executable mappings. */
struct prog_run {
        char names[16][64];
        uint64_t addrs[16];
        uint32_t nr;
        struct fixture_map maps[64];
        uint32_t nr_maps;
};

static void run_program(const char *binary, struct prog_run *r)
{
        char cmd[1024];
        memset(r, 0, sizeof(*r));
        snprintf(cmd, sizeof(cmd), "'%s' addr", binary);
        FILE *p = popen(cmd, "r");
        assert_non_null(p);
        char line[1024];
        while (fgets(line, sizeof(line), p)) {
                char name[64], perms[8], path[512] = "";
                uint64_t a, b, off;
                if (sscanf(line, "%63s 0x%" SCNx64, name, &a) == 2 && !strchr(name, '-')) {
                        if (r->nr < 16) {
                                snprintf(r->names[r->nr], sizeof(r->names[0]), "%s", name);
                                r->addrs[r->nr++] = a;
                        }
                        continue;
                }
                if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*s %511[^\n]", &a,
                           &b, perms, &off, path) == 5 &&
                    perms[2] == 'x' && path[0] == '/' && r->nr_maps < 64) {
                        r->maps[r->nr_maps++] = (struct fixture_map){a, b, off, ""};
                        snprintf(r->maps[r->nr_maps - 1].path, 512, "%s", path);
                }
        }
        assert_int_equal(pclose(p), 0);
        assert_true(r->nr > 0 && r->nr_maps > 0);
}

static uint64_t prog_addr(const struct prog_run *r, const char *name)
{
        for (uint32_t i = 0; i < r->nr; i++)
                if (strcmp(r->names[i], name) == 0)
                        return r->addrs[i];
        fail_msg("the program printed no address for %s", name);
        return 0;
}

static void feed_prog(struct sym_store *s, const struct prog_run *r)
{
        sym_process_start(s, PID);
        for (uint32_t i = 0; i < r->nr_maps; i++) {
                const struct fixture_map *m = &r->maps[i];
                struct sym_image im = {PID, m->start, m->end - m->start, m->pgoff, m->path, NULL, 0,
                                       0,   0};
                sym_image_load(s, &im);
        }
}

/* The first of names found as an executable in PATH (then in extra, a directory, when not
   NULL), its full path in out. */
static bool find_tool(const char *const *names, const char *extra, char *out, size_t size)
{
        const char *path = getenv("PATH");
        char dirs[8192];
        snprintf(dirs, sizeof(dirs), "%s:%s", path ? path : "/usr/bin:/bin", extra ? extra : "");
        for (const char *const *n = names; *n; n++) {
                char *save = NULL, copy[8192];
                snprintf(copy, sizeof(copy), "%s", dirs);
                for (char *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
                        snprintf(out, size, "%s/%s", d, *n);
                        if (access(out, X_OK) == 0)
                                return true;
                }
        }
        return false;
}

/* The fixtures' source directory. */
static void fixtures_dir(char *out, size_t size)
{
        snprintf(out, size, "%s", env("SYM_FIXTURE_SOURCE"));
        char *slash = strrchr(out, '/');
        if (slash)
                *slash = 0;
}

/* Runs a compiler's command line (its output to log); true when it succeeded. */
static bool build(const char *cmd, const char *log)
{
        char full[4096];
        snprintf(full, sizeof(full), "%s >'%s' 2>&1", cmd, log);
        if (system(full) == 0)
                return true;
        fprintf(stderr, "failed: %s\n", cmd);
        char text[2048] = "";
        FILE *f = fopen(log, "r");
        if (f) {
                size_t n = fread(text, 1, sizeof(text) - 1, f);
                text[n] = 0;
                fclose(f);
        }
        fprintf(stderr, "%s\n", text);
        return false;
}

static void make_tmpdir(char *dir, size_t size)
{
        snprintf(dir, size, "/tmp/etwtop-symtest-XXXXXX");
        assert_non_null(mkdtemp(dir));
}

static void remove_tmpdir(const char *dir)
{
        char cmd[PATH_MAX + 16];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        if (system(cmd) != 0)
                fprintf(stderr, "could not remove %s\n", dir);
}

/* sym_names.c built with the C compiler into dir/sym_names; false (skipped) without one. */
static bool build_names(const char *dir, char *binary, size_t size)
{
        static const char *const compilers[] = {"cc", "gcc", "clang", NULL};
        char cc[PATH_MAX], src[PATH_MAX], cmd[3 * PATH_MAX + 64], log[PATH_MAX + 16];
        if (!find_tool(compilers, NULL, cc, sizeof(cc))) {
                fprintf(stderr, "no C compiler (cc, gcc, clang) in PATH\n");
                return false;
        }
        fixtures_dir(src, sizeof(src));
        snprintf(binary, size, "%s/sym_names", dir);
        snprintf(log, sizeof(log), "%s/cc.log", dir);
        snprintf(cmd, sizeof(cmd), "'%s' -O1 -g -o '%s' '%s/sym_names.c'", cc, binary, src);
        assert_true(build(cmd, log));
        return true;
}

static struct sym_store *store_no_demangle(void)
{
        struct sym_options o = {.is_synchronous = true, .is_no_demangle = true};
        struct sym_store *s = NULL;
        assert_int_equal(sym_store_new(&s, &o), 0);
        return s;
}

/* C++ and Rust (legacy and v0) names as perf shows them, from a program whose symbols carry
   them (asm labels: no C++ or Rust compiler needed); as spelled with is_no_demangle. */
static void test_demangled_names(void **state)
{
        (void)state;
        char dir[64], bin[PATH_MAX];
        make_tmpdir(dir, sizeof(dir));
        if (!build_names(dir, bin, sizeof(bin))) {
                remove_tmpdir(dir);
                skip();
        }
        struct prog_run r;
        run_program(bin, &r);
        struct sym_store *s = store_new(NULL, 0, true);
        feed_prog(s, &r);
        expect_name(s, prog_addr(&r, "cxx_bitmap_set_bit"), "bitmap_set_bit(bitmap_head*, int)", 0);
        expect_name(s, prog_addr(&r, "rust_v0_norm"), "<rs::Point>::norm", 0);
        expect_name(s, prog_addr(&r, "rust_v0_spin_work") + 1, "rs::inner::spin_work", 1);
        expect_name(s, prog_addr(&r, "rust_legacy_norm"), "rs::Point::norm", 0);
        expect_name(s, prog_addr(&r, "main"), "main", 0);
        char buf[256];
        sym_format(s, sym_locate(s, PID, prog_addr(&r, "cxx_bitmap_set_bit") + 2), buf,
                   sizeof(buf));
        assert_string_equal(buf, "sym_names!bitmap_set_bit(bitmap_head*, int)+0x2");

        /* a recorded kernel module's Rust function keeps its module after the name */
        sym_kernel_symbol(s, 0xffffffffc0200000ull, 0x100,
                          "_RNvNtCsbFYJioi4cCO_2rs5inner9spin_work", "rust_mod");
        struct sym_frame f;
        sym_resolve(s, sym_locate(s, PID, 0xffffffffc0200010ull), &f);
        assert_int_equal(f.state, SYM_RESOLVED);
        assert_string_equal(sym_name(s, f.function), "rs::inner::spin_work [rust_mod]");
        sym_store_free(s);

        /* --no-demangle: the symbols' own spelling */
        s = store_no_demangle();
        feed_prog(s, &r);
        expect_name(s, prog_addr(&r, "cxx_bitmap_set_bit"), "_Z14bitmap_set_bitP11bitmap_headi", 0);
        expect_name(s, prog_addr(&r, "rust_v0_norm"), "_RNvMCsbFYJioi4cCO_2rsNtB2_5Point4norm", 0);
        sym_store_free(s);
        remove_tmpdir(dir);
}

/* A JIT's map (and a symbol version, a PLT stub) with mangled names: demangled, the suffix
   kept. */
static void test_demangled_jit_and_suffixes(void **state)
{
        (void)state;
        char path[64];
        snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fprintf(f, "20000000 40 _ZN7fixture3BoxIlE5twiceEl\n"
                   "20000040 20 _Z14bitmap_set_bitP11bitmap_headi@@VERS_1.0\n"
                   "20000060 10 _Z14bitmap_set_bitP11bitmap_headi@plt\n"
                   "20000070 10 _Znot_really_mangled\n");
        fclose(f);
        struct sym_options o = {.is_live = true, .is_synchronous = true};
        struct sym_store *s = NULL;
        assert_int_equal(sym_store_new(&s, &o), 0);
        static const struct {
                uint64_t addr;
                const char *name;
        } want[] = {
                {0x20000004, "fixture::Box<long>::twice(long)"},
                {0x20000044, "bitmap_set_bit(bitmap_head*, int)@@VERS_1.0"},
                {0x20000064, "bitmap_set_bit(bitmap_head*, int)@plt"},
                {0x20000074, "_Znot_really_mangled"},
        };
        for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
                struct sym_frame fr;
                sym_resolve(s, sym_locate(s, (uint32_t)getpid(), want[i].addr), &fr);
                assert_int_equal(fr.state, SYM_RESOLVED);
                assert_string_equal(sym_name(s, fr.function), want[i].name);
        }
        sym_store_free(s);
        unlink(path);
}

/* A C++ program built at test time (where a C++ compiler is): its functions and the last frame
   of their source lines, demangled. */
static void test_demangled_cxx(void **state)
{
        (void)state;
        static const char *const compilers[] = {"c++", "g++", "clang++", NULL};
        char cxx[PATH_MAX];
        const char *from_env = getenv("CXX");
        if (from_env && *from_env && access(from_env, X_OK) == 0)
                snprintf(cxx, sizeof(cxx), "%s", from_env);
        else if (!find_tool(compilers, NULL, cxx, sizeof(cxx))) {
                fprintf(stderr, "no C++ compiler (c++, g++, clang++) in PATH: skipped\n");
                skip();
        }
        char dir[64], src[PATH_MAX], bin[PATH_MAX], log[PATH_MAX], cmd[4 * PATH_MAX];
        make_tmpdir(dir, sizeof(dir));
        fixtures_dir(src, sizeof(src));
        snprintf(bin, sizeof(bin), "%s/sym_cxx", dir);
        snprintf(log, sizeof(log), "%s/cxx.log", dir);
        /* DWARF 4 with aranges: what libdw 0.188 reads of clang's output (see tests/CMakeLists) */
        snprintf(cmd, sizeof(cmd), "'%s' -O1 -g -gdwarf-4 %s -o '%s' '%s/sym_cxx.cpp'", cxx,
                 strstr(cxx, "clang") ? "-gdwarf-aranges" : "", bin, src);
        assert_true(build(cmd, log));
        struct prog_run r;
        run_program(bin, &r);
        struct sym_store *s = store_new(NULL, 0, true);
        feed_prog(s, &r);
        uint64_t set_bit = prog_addr(&r, "bitmap_set_bit");
        expect_name(s, set_bit, "bitmap_set_bit(bitmap_head*, int)", 0);
        expect_name(s, prog_addr(&r, "box_twice") + 1, "fixture::Box<long>::twice(long)", 1);
        expect_name(s, prog_addr(&r, "cxx_plain_c"), "cxx_plain_c", 0);
        /* the function of the source lines, as the function column says it */
        struct sym_srcframe src_frames[8];
        uint32_t n = sym_srcline(s, sym_locate(s, PID, set_bit + 4), src_frames, 8);
        assert_true(n > 0);
        assert_string_equal(sym_name(s, src_frames[n - 1].function),
                            "bitmap_set_bit(bitmap_head*, int)");
        sym_store_free(s);

        s = store_no_demangle();
        feed_prog(s, &r);
        expect_name(s, set_bit, "_Z14bitmap_set_bitP11bitmap_headi", 0);
        n = sym_srcline(s, sym_locate(s, PID, set_bit + 4), src_frames, 8);
        assert_true(n > 0);
        assert_string_equal(sym_name(s, src_frames[n - 1].function),
                            "_Z14bitmap_set_bitP11bitmap_headi");
        sym_store_free(s);
        remove_tmpdir(dir);
}

/* A Rust program built at test time (where rustc is), with the legacy and the v0 mangling. */
static void test_demangled_rust(void **state)
{
        (void)state;
        static const char *const names[] = {"rustc", NULL};
        char rustc[PATH_MAX], cargo_bin[PATH_MAX] = "";
        const char *home = getenv("HOME");
        if (home)
                snprintf(cargo_bin, sizeof(cargo_bin), "%s/.cargo/bin", home);
        if (!find_tool(names, cargo_bin, rustc, sizeof(rustc))) {
                fprintf(stderr, "no rustc in PATH or ~/.cargo/bin: skipped (Rust names are "
                                "tested from hand-made symbols in test_demangled_names)\n");
                skip();
        }
        char dir[64], src[PATH_MAX], bin[PATH_MAX], log[PATH_MAX], cmd[4 * PATH_MAX];
        make_tmpdir(dir, sizeof(dir));
        fixtures_dir(src, sizeof(src));
        /* rustc's default mangling (legacy, for now; v0 names the method's impl <..>), then v0 */
        static const struct {
                const char *flags, *norm, *norm_v0;
        } manglings[] = {
                {"", "symfix_rs::Point::norm", "<symfix_rs::Point>::norm"},
                {"-C symbol-mangling-version=v0", "<symfix_rs::Point>::norm", NULL},
        };
        for (size_t i = 0; i < 2; i++) {
                snprintf(bin, sizeof(bin), "%s/sym_rust%zu", dir, i);
                snprintf(log, sizeof(log), "%s/rustc%zu.log", dir, i);
                snprintf(cmd, sizeof(cmd),
                         "'%s' -C opt-level=1 -g %s --crate-name symfix_rs -o '%s' "
                         "'%s/sym_rust.rs'",
                         rustc, manglings[i].flags, bin, src);
                assert_true(build(cmd, log));
                struct prog_run r;
                run_program(bin, &r);
                struct sym_store *s = store_new(NULL, 0, true);
                feed_prog(s, &r);
                expect_name(s, prog_addr(&r, "spin_work"), "symfix_rs::inner::spin_work", 0);
                struct sym_frame f = resolve(s, prog_addr(&r, "norm"));
                assert_int_equal(f.state, SYM_RESOLVED);
                const char *norm = sym_name(s, f.function);
                if (strcmp(norm, manglings[i].norm) != 0 &&
                    (!manglings[i].norm_v0 || strcmp(norm, manglings[i].norm_v0) != 0))
                        fail_msg("%s: \"%s\" for Point::norm", manglings[i].flags, norm);
                sym_store_free(s);
        }
        remove_tmpdir(dir);
}

/* __pfx_ and __cfi_ padding before kernel functions is never a frame's function: not in an ELF
   file's symbols, not in kallsyms text, not in a recording's kernel symbols, not in the running
   kernel. */
static void test_padding_never_chosen(void **state)
{
        (void)state;
        struct sym_frame f;
#if defined(__x86_64__)
        char dir[64], bin[PATH_MAX];
        make_tmpdir(dir, sizeof(dir));
        if (build_names(dir, bin, sizeof(bin))) {
                struct prog_run r;
                run_program(bin, &r);
                struct sym_store *s = store_new(NULL, 0, true);
                feed_prog(s, &r);
                uint64_t padded = prog_addr(&r, "fixture_padded"),
                         cfi = prog_addr(&r, "fixture_cfi");
                for (uint64_t a = padded - 16; a < padded; a++) {
                        f = resolve(s, a);
                        assert_true(f.state != SYM_RESOLVED ||
                                    strncmp(sym_name(s, f.function), "__pfx_", 6) != 0);
                }
                for (uint64_t a = cfi - 16; a < cfi; a++) {
                        f = resolve(s, a);
                        assert_true(f.state != SYM_RESOLVED ||
                                    strncmp(sym_name(s, f.function), "__cfi_", 6) != 0);
                }
                /* sized ELF symbols: the padding is nobody's, as in perf */
                assert_int_equal(resolve(s, padded - 8).state, SYM_NO_SYMBOL);
                expect_name(s, padded, "fixture_padded", 0);
                expect_name(s, cfi + 1, "fixture_cfi", 1);
                expect_name(s, prog_addr(&r, "fixture_before_padding"), "fixture_before_padding",
                            0);
                sym_store_free(s);
        }
        remove_tmpdir(dir);
#endif
        /* kallsyms: unsized, the function before runs over the next one's padding */
        static const char text[] = "ffffffff81000000 T before_pad\n"
                                   "ffffffff81000030 t __pfx_after_pad\n"
                                   "ffffffff81000040 T after_pad\n"
                                   "ffffffff81000070 t __cfi_third\n"
                                   "ffffffff81000080 T third\n"
                                   "ffffffff81000100 T _etext\n";
        struct kallsyms *ks = NULL;
        struct kallsyms_error kerr;
        assert_int_equal(kallsyms_parse_mem(text, sizeof(text) - 1, &ks, &kerr), 0);
        struct kallsyms_hit hit;
        assert_true(kallsyms_lookup(ks, 0xffffffff81000035ull, &hit));
        assert_string_equal(hit.name, "before_pad");
        assert_int_equal(hit.offset, 0x35);
        assert_true(kallsyms_lookup(ks, 0xffffffff81000040ull, &hit));
        assert_string_equal(hit.name, "after_pad");
        assert_true(kallsyms_lookup(ks, 0xffffffff81000075ull, &hit));
        assert_string_equal(hit.name, "after_pad");
        kallsyms_free(ks);

        /* a recording's kernel symbols */
        struct sym_store *s = store_new(NULL, 0, true);
        sym_kernel_symbol(s, 0xffffffff81000000ull, 0x30, "before_pad", "");
        sym_kernel_symbol(s, 0xffffffff81000030ull, 0x10, "__pfx_after_pad", "");
        sym_kernel_symbol(s, 0xffffffff81000040ull, 0x30, "after_pad", "");
        sym_resolve(s, sym_locate(s, PID, 0xffffffff81000035ull), &f);
        assert_true(f.state != SYM_RESOLVED || strncmp(sym_name(s, f.function), "__pfx_", 6) != 0);
        sym_resolve(s, sym_locate(s, PID, 0xffffffff81000041ull), &f);
        assert_int_equal(f.state, SYM_RESOLVED);
        assert_string_equal(sym_name(s, f.function), "after_pad");
        sym_store_free(s);

        /* the running kernel, where it has such symbols and shows their addresses */
        FILE *kf = fopen("/proc/kallsyms", "r");
        char line[512];
        uint64_t pfx = 0;
        while (kf && fgets(line, sizeof(line), kf)) {
                uint64_t a;
                char type, name[256];
                if (sscanf(line, "%" SCNx64 " %c %255s", &a, &type, name) == 3 && a &&
                    strncmp(name, "__pfx_", 6) == 0 && !strchr(line, '\t')) {
                        pfx = a;
                        break;
                }
        }
        if (kf)
                fclose(kf);
        if (!pfx) {
                fprintf(stderr, "the running kernel shows no __pfx_ symbol (or hides its "
                                "addresses): checked on fixtures only\n");
                return;
        }
        struct sym_options o = {.is_live = true, .is_synchronous = true};
        assert_int_equal(sym_store_new(&s, &o), 0);
        for (uint64_t a = pfx; a < pfx + 16; a += 3) {
                sym_resolve(s, sym_locate(s, PID, a), &f);
                assert_true(f.state != SYM_RESOLVED ||
                            strncmp(sym_name(s, f.function), "__pfx_", 6) != 0);
        }
        sym_store_free(s);
}

/* A live session's events come one CPU's buffer after another: an exec's mappings may come
   before the fork and the exec they follow. With the events' times the store keeps what the
   events say in time order. */
static void test_events_out_of_time_order(void **state)
{
        (void)state;
        struct fixture_run r;
        run_fixture(env("SYM_FIXTURE"), &r);
        const struct fixture_map *lib = NULL;
        for (uint32_t i = 0; i < r.nr_maps; i++)
                if (r.lib_static >= r.maps[i].start && r.lib_static < r.maps[i].end)
                        lib = &r.maps[i];
        assert_non_null(lib);
        struct sym_store *s = store_new(NULL, 0, true);
        /* the CPU that ran the new program came first: its exec (t 300) and mappings */
        sym_process_start_at(s, PID, 300);
        for (uint32_t i = 0; i < r.nr_maps; i++) {
                const struct fixture_map *m = &r.maps[i];
                struct sym_image im = {PID, m->start, m->end - m->start, m->pgoff, m->path, NULL, 0,
                                       0,   0};
                sym_image_load_at(s, &im, 301 + i);
        }
        /* then the other CPU: the fork (t 100), a copy of the shell's mappings, one where the
           library is now, and the exec of a program in between (t 200) with its own */
        sym_process_start_at(s, PID, 100);
        struct sym_image shell = {
                PID, lib->start, lib->end - lib->start, 0, "/nonexistent/bash", NULL, 0, 0, 0};
        sym_image_load_at(s, &shell, 100);
        sym_process_start_at(s, PID, 200);
        struct sym_image taskset = {PID,  0x10000000, 0x10000, 0, "/nonexistent/taskset",
                                    NULL, 0,          0,       0};
        sym_image_load_at(s, &taskset, 200);
        expect_name(s, r.leaf, "fixture_leaf", 0);
        expect_name(s, r.lib_static + 3, "fixlib_static", 3);
        assert_int_equal(resolve(s, 0x10000010).state, SYM_NO_MODULE);
        /* the shell's image identity (its build-id) is not the newer mapping's */
        uint32_t module = sym_locate(s, PID, r.lib_static).module;
        static const uint8_t other_id[20] = {0xde, 0xad, 0xbe, 0xef};
        sym_image_identity_at(s, PID, lib->start, 0, other_id, 20, 100);
        assert_int_equal(sym_locate(s, PID, r.lib_static).module, module);
        /* an unload older than the mapping, the end of an older program: nothing changes */
        sym_image_unload_at(s, PID, lib->start, 250);
        sym_process_end_at(s, PID, 150);
        expect_name(s, r.lib_static + 3, "fixlib_static", 3);
        /* its own end keeps its mappings for late events; a later exec drops them */
        sym_process_end_at(s, PID, 500);
        expect_name(s, r.leaf, "fixture_leaf", 0);
        sym_process_start_at(s, PID, 600);
        assert_int_equal(resolve(s, r.leaf).state, SYM_NO_MODULE);

        /* overlapping mappings: the newer wins, whatever the order they come in */
        struct sym_image a = {77, 0x400000, 0x3000, 0, "/nonexistent/liba.so", NULL, 0, 0, 0};
        struct sym_image b = {77, 0x401000, 0x1000, 0, "/nonexistent/libb.so", NULL, 0, 0, 0};
        struct sym_image c = {77, 0x400000, 0x3000, 0, "/nonexistent/libc_.so", NULL, 0, 0, 0};
        sym_image_load_at(s, &a, 10);
        sym_image_load_at(s, &b, 30);
        sym_image_load_at(s, &c, 20);
        char buf[128];
        sym_format(s, sym_locate(s, 77, 0x400010), buf, sizeof(buf));
        assert_string_equal(buf, "libc_.so+0x10");
        sym_format(s, sym_locate(s, 77, 0x401010), buf, sizeof(buf));
        assert_string_equal(buf, "libb.so+0x10");
        sym_format(s, sym_locate(s, 77, 0x402010), buf, sizeof(buf));
        assert_string_equal(buf, "libc_.so+0x2010");
        /* and without times, as they come (replays, in time order) */
        sym_image_load(s, &a);
        sym_format(s, sym_locate(s, 77, 0x401010), buf, sizeof(buf));
        assert_string_equal(buf, "liba.so+0x1010");
        sym_store_free(s);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_kernel32),
                cmocka_unit_test(test_module_short_name),
                cmocka_unit_test(test_bpf_programs),
                cmocka_unit_test(test_kernel_outside_images),
                cmocka_unit_test(test_arm64_kernel_half),
                cmocka_unit_test(test_anonymous_paths),
                cmocka_unit_test(test_mapping_order),
                cmocka_unit_test(test_mapping_cuts),
                cmocka_unit_test(test_build_id_modules),
                cmocka_unit_test(test_path_modules),
                cmocka_unit_test(test_pie),
                cmocka_unit_test(test_non_pie),
                cmocka_unit_test(test_inline_chain_and_lines),
                cmocka_unit_test(test_line_only_matches_frames),
                cmocka_unit_test(test_function_names_once),
                cmocka_unit_test(test_unmapped_module_evicted_and_reloaded),
                cmocka_unit_test(test_stripped_with_debug_dir),
                cmocka_unit_test(test_no_lines_kept_without_dwarf),
                cmocka_unit_test(test_minidebuginfo),
                cmocka_unit_test(test_moved_to_symbol_path),
                cmocka_unit_test(test_changed_file_is_refused),
                cmocka_unit_test(test_address_space_events),
                cmocka_unit_test(test_recorded_kernel_symbols),
                cmocka_unit_test(test_kernel_symbols_from_running),
                cmocka_unit_test(test_kernel_symbols_running_kept),
                cmocka_unit_test(test_kernel_symbols_from_perf_cache),
                cmocka_unit_test(test_background_loading),
                cmocka_unit_test(test_hostile_files),
                cmocka_unit_test(test_windows_modules),
                cmocka_unit_test(test_windows_exports),
                cmocka_unit_test(test_clr_methods),
                cmocka_unit_test(test_clr_modules_past_the_table),
                cmocka_unit_test(test_live_kernel_and_vdso),
                cmocka_unit_test(test_cache_bounded),
                cmocka_unit_test(test_jit_map),
                cmocka_unit_test(test_demangled_names),
                cmocka_unit_test(test_demangled_jit_and_suffixes),
                cmocka_unit_test(test_demangled_cxx),
                cmocka_unit_test(test_demangled_rust),
                cmocka_unit_test(test_padding_never_chosen),
                cmocka_unit_test(test_events_out_of_time_order),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
