/* SPDX-License-Identifier: MIT */
/* test_kallsyms.c: kernel symbols (/proc/kallsyms, /proc/modules) and JIT perf maps, from
   bytes and from the real files. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "symbols/kallsyms.h"
#include "symbols/perf_map.h"
#include "symbols/sym_table.h"
#include "util/kallsyms_text.h"

/* ---- kallsyms ---- */

static const char core_text[] = "ffffffff81000000 T srso_alias_untrain_ret\n"
                                "ffffffff81000000 T _stext\n"
                                "ffffffff81000000 T _text\n"
                                "ffffffff81000010 t __pfx_read_tsc\n"
                                "ffffffff81000020 t read_tsc\n"
                                "ffffffff81000030 T memcpy\n"
                                "ffffffff81000030 T __memcpy\n"
                                "ffffffff81000030 t __pi_memcpy\n"
                                "ffffffff81000040 W arch_cpu_idle\n"
                                "ffffffff81000080 w weak_local_thing\n"
                                "ffffffff81000100 T schedule\n"
                                "ffffffff81000180 D data_in_text_order\n"
                                "ffffffff81000200 T last_core_function\n"
                                "ffffffff81000300 T _etext\n"
                                "ffffffff81400000 D __start_rodata\n"
                                "ffffffff81400100 d some_local_data\n"
                                "ffffffff81400200 R some_rodata\n"
                                "ffffffff81400300 r local_rodata\n"
                                "ffffffff81500000 B some_bss\n"
                                "ffffffff81500100 b local_bss\n"
                                "0000000000000000 A fixed_percpu_data\n"
                                "ffffffff81600000 T _sinittext\n"
                                "ffffffff81600040 t init_function\n"
                                "ffffffff81600080 T _einittext\n";

static struct kallsyms *parse_ok(const char *text, size_t len)
{
        struct kallsyms *ks = NULL;
        struct kallsyms_error err;
        int rc = kallsyms_parse_mem(text, len, &ks, &err);
        if (rc != 0)
                fprintf(stderr, "kallsyms_parse_mem: %d %s\n", rc, err.msg);
        assert_int_equal(rc, 0);
        assert_int_equal(err.nr_bad_lines, 0);
        assert_non_null(ks);
        return ks;
}

/* The symbol and module at addr, or NULL. */
static const char *sym_at(const struct kallsyms *ks, uint64_t addr, const char **module,
                          uint64_t *offset)
{
        struct kallsyms_hit hit;
        if (!kallsyms_lookup(ks, addr, &hit))
                return NULL;
        if (module)
                *module = hit.module;
        if (offset)
                *offset = hit.offset;
        assert_int_equal(hit.start + hit.offset, addr);
        return hit.name;
}

static void test_kallsyms_core(void **state)
{
        (void)state;
        struct kallsyms *ks = parse_ok(core_text, sizeof(core_text) - 1);
        const char *module = NULL;
        uint64_t offset = 99;

        /* text only: t T W w; data, rodata, bss and absolute symbols are dropped; one symbol
           per start */
        const struct sym_table *t = kallsyms_table(ks);
        assert_int_equal(sym_table_count(t), 12);
        for (uint32_t i = 0; i < sym_table_count(t); i++) {
                const char *name = sym_table_name(t, sym_table_at(t, i));
                assert_null(strstr(name, "data"));
                assert_null(strstr(name, "bss"));
        }

        /* exact starts, inside, the module; an address's last alias names it, as perf names
           it (its symbols__fixup_end leaves the others of one address no size, and
           choose_best_symbol takes the sized one), whatever their types */
        assert_string_equal(sym_at(ks, 0xffffffff81000000, &module, &offset), "_text");
        assert_string_equal(module, KALLSYMS_KERNEL_MODULE);
        assert_int_equal(offset, 0);
        assert_string_equal(sym_at(ks, 0xffffffff81000020, NULL, &offset), "read_tsc");
        assert_int_equal(offset, 0);
        assert_string_equal(sym_at(ks, 0xffffffff8100002f, NULL, &offset), "read_tsc");
        assert_int_equal(offset, 0xf);
        assert_string_equal(sym_at(ks, 0xffffffff81000038, NULL, &offset), "__pi_memcpy");
        assert_int_equal(offset, 0x8);
        assert_string_equal(sym_at(ks, 0xffffffff81000041, NULL, NULL), "arch_cpu_idle");
        assert_string_equal(sym_at(ks, 0xffffffff810000ff, NULL, NULL), "weak_local_thing");
        /* the dropped data symbol does not end schedule */
        assert_string_equal(sym_at(ks, 0xffffffff810001ff, NULL, &offset), "schedule");
        assert_int_equal(offset, 0xff);
        /* the last core function ends at _etext, not 1 MiB later in the rodata */
        assert_string_equal(sym_at(ks, 0xffffffff810002ff, NULL, NULL), "last_core_function");
        assert_string_equal(sym_at(ks, 0xffffffff81000300, NULL, NULL), "_etext");
        assert_null(sym_at(ks, 0xffffffff81000301, NULL, NULL));
        assert_null(sym_at(ks, 0xffffffff81400100, NULL, NULL));
        /* init text, ended by _einittext */
        assert_string_equal(sym_at(ks, 0xffffffff8160007f, NULL, NULL), "init_function");
        assert_null(sym_at(ks, 0xffffffff81600081, NULL, NULL));
        /* before the first */
        assert_null(sym_at(ks, 0xffffffff80ffffff, NULL, NULL));
        assert_null(sym_at(ks, 0, NULL, NULL));

        uint64_t start = 0, end = 0;
        assert_true(kallsyms_kernel_text(ks, &start, &end));
        assert_int_equal(start, 0xffffffff81000000);
        assert_int_equal(end, 0xffffffff81000300);
        kallsyms_free(ks);
        kallsyms_free(NULL);
}

static const char module_text[] =
        "ffffffff81000000 T _stext\n"
        "ffffffff81000100 T schedule\n"
        "ffffffff81000200 T _etext\n"
        "ffffffffc0201000 t ftrace_trampoline\t[__builtin__ftrace]\n"
        "ffffffffc0a00000 t ext4_get_block\t[ext4]\n"
        "ffffffffc0a00100 T ext4_read_folio\t[ext4]\n"
        "ffffffffc0a10000 d ext4_data\t[ext4]\n"
        "ffffffffc0a00200 t ext4_last\t[ext4]\n"
        "ffffffffc0b00000 t bpf_prog_6deef7357e7b4530_sd_fw_egress\t[bpf]\n"
        "ffffffffc0c00000 T xfs_iread\t[xfs]\n"
        "ffffffffc0c00080 t xfs_inline\t[xfs]\n"
        "ffffffffc0b10000 t bpf_prog_aaaa_second\t[bpf]\n"
        "ffffffffc0a00300 t ext4_init\t[ext4]\n";

static void test_kallsyms_modules(void **state)
{
        (void)state;
        struct kallsyms *ks = parse_ok(module_text, sizeof(module_text) - 1);
        const char *module = NULL;
        uint64_t offset = 0;

        assert_string_equal(sym_at(ks, 0xffffffff81000180, &module, NULL), "schedule");
        assert_string_equal(module, "[kernel.kallsyms]");
        assert_string_equal(sym_at(ks, 0xffffffffc0201008, &module, NULL), "ftrace_trampoline");
        assert_string_equal(module, "[__builtin__ftrace]");
        assert_string_equal(sym_at(ks, 0xffffffffc0a00000, &module, &offset), "ext4_get_block");
        assert_string_equal(module, "[ext4]");
        assert_int_equal(offset, 0);
        assert_string_equal(sym_at(ks, 0xffffffffc0a00110, &module, &offset), "ext4_read_folio");
        assert_string_equal(module, "[ext4]");
        assert_int_equal(offset, 0x10);
        /* out of order in the input: ext4_init after the other modules */
        assert_string_equal(sym_at(ks, 0xffffffffc0a00301, &module, NULL), "ext4_init");
        assert_string_equal(module, "[ext4]");
        assert_string_equal(sym_at(ks, 0xffffffffc0b00010, &module, NULL),
                            "bpf_prog_6deef7357e7b4530_sd_fw_egress");
        assert_string_equal(module, "[bpf]");
        assert_string_equal(sym_at(ks, 0xffffffffc0b10000, &module, NULL), "bpf_prog_aaaa_second");
        assert_string_equal(module, "[bpf]");
        assert_string_equal(sym_at(ks, 0xffffffffc0c00000, &module, NULL), "xfs_iread");
        assert_string_equal(module, "[xfs]");
        assert_string_equal(sym_at(ks, 0xffffffffc0c000ff, &module, NULL), "xfs_inline");
        assert_string_equal(module, "[xfs]");
        /* the data symbol of ext4 is dropped: ext4_init runs on to the next symbol */
        assert_string_equal(sym_at(ks, 0xffffffffc0a10000, &module, NULL), "ext4_init");
        /* past the end of the last symbol: its inferred size is capped at 1 MiB */
        assert_string_equal(
                sym_at(ks, 0xffffffffc0c00080 + KALLSYMS_MAX_SYMBOL_SIZE - 1, &module, NULL),
                "xfs_inline");
        assert_null(sym_at(ks, 0xffffffffc0c00080 + KALLSYMS_MAX_SYMBOL_SIZE, NULL, NULL));
        assert_null(sym_at(ks, UINT64_MAX, NULL, NULL));
        kallsyms_free(ks);
}

static void test_kallsyms_restricted(void **state)
{
        (void)state;
        static const char hidden[] = "0000000000000000 T _stext\n"
                                     "0000000000000000 T schedule\n"
                                     "0000000000000000 D some_data\n"
                                     "0000000000000000 t ext4_get_block\t[ext4]\n";
        struct kallsyms *ks = (struct kallsyms *)1;
        struct kallsyms_error err;
        assert_int_equal(kallsyms_parse_mem(hidden, sizeof(hidden) - 1, &ks, &err), -EPERM);
        assert_null(ks);
        assert_non_null(strstr(err.msg, "kptr_restrict"));
        assert_non_null(strstr(err.msg, "root"));

        /* an empty input is not restricted, just empty */
        assert_int_equal(kallsyms_parse_mem("", 0, &ks, &err), 0);
        assert_int_equal(sym_table_count(kallsyms_table(ks)), 0);
        assert_false(kallsyms_lookup(ks, 0x1000, &(struct kallsyms_hit){0}));
        kallsyms_free(ks);
}

static void test_kallsyms_bad_lines(void **state)
{
        (void)state;
        /* one buffer, parsed only up to len: the bytes after it must not be read */
        static const char text[] = "ffffffff81000000 T _stext\r\n"
                                   "\n"
                                   "zzzz T not_hex\n"
                                   " ffffffff81000000 T leading_space\n"
                                   "ffffffff81000040 T\n"
                                   "ffffffff81000080 TT two_letters\n"
                                   "ffffffff810000c0 t no_module\t\n"
                                   "ffffffff81000100 t empty_module\t[]\n"
                                   "11112222333344445 T too_many_digits\n"
                                   "ffffffff81000200 t good\n"
                                   "ffffffff81000300 t cut_sh"
                                   "ort_here_at_len 0123\n";
        size_t len = strlen(text) - strlen("ort_here_at_len 0123\n");
        struct kallsyms *ks = NULL;
        struct kallsyms_error err;
        assert_int_equal(kallsyms_parse_mem(text, len, &ks, &err), 0);
        assert_int_equal(err.nr_bad_lines, 7);
        assert_int_equal(err.offset, strlen("ffffffff81000000 T _stext\r\n\n"));
        assert_non_null(strstr(err.msg, "hexadecimal"));
        const struct sym_table *t = kallsyms_table(ks);
        assert_int_equal(sym_table_count(t), 3);
        assert_string_equal(sym_at(ks, 0xffffffff81000000, NULL, NULL), "_stext"); /* no \r */
        assert_string_equal(sym_at(ks, 0xffffffff81000200, NULL, NULL), "good");
        assert_string_equal(sym_at(ks, 0xffffffff81000300, NULL, NULL), "cut_sh");
        kallsyms_free(ks);

        /* a NULL error struct is fine */
        assert_int_equal(kallsyms_parse_mem(text, len, &ks, NULL), 0);
        kallsyms_free(ks);
}

/* The real file of this machine: readable and not restricted when run as root. */
static void test_kallsyms_real(void **state)
{
        (void)state;
        FILE *f = fopen("/proc/kallsyms", "re");
        if (!f) {
                fprintf(stderr, "skipped: /proc/kallsyms is not readable\n");
                skip();
        }
        uint64_t stext = 0;
        char line[512];
        while (!stext && fgets(line, sizeof(line), f)) {
                if (strstr(line, " T _stext\n"))
                        stext = strtoull(line, NULL, 16);
        }
        fclose(f);
        if (!stext) {
                fprintf(stderr, "skipped: /proc/kallsyms hides addresses (kptr_restrict; run as "
                                "root)\n");
                skip();
        }

        struct kallsyms *ks = NULL;
        struct kallsyms_error err;
        int rc = kallsyms_read(NULL, &ks, &err);
        if (rc != 0)
                fprintf(stderr, "kallsyms_read: %d %s\n", rc, err.msg);
        assert_int_equal(rc, 0);
        assert_int_equal(err.nr_bad_lines, 0);
        assert_true(sym_table_count(kallsyms_table(ks)) > 1000);

        struct kallsyms_hit hit;
        assert_true(kallsyms_lookup(ks, stext, &hit));
        assert_int_equal(hit.start, stext);
        assert_int_equal(hit.offset, 0);
        assert_string_equal(hit.module, KALLSYMS_KERNEL_MODULE);
        assert_true(kallsyms_lookup(ks, stext + 1, &hit));

        uint64_t start = 0, end = 0;
        assert_true(kallsyms_kernel_text(ks, &start, &end));
        assert_int_equal(start, stext);
        assert_true(end > start);
        /* the middle of the kernel's text is in some function */
        assert_true(kallsyms_lookup(ks, start + (end - start) / 2, &hit));
        assert_string_equal(hit.module, KALLSYMS_KERNEL_MODULE);
        kallsyms_free(ks);
}

/* ---- /proc/modules ---- */

static void test_modules_parse(void **state)
{
        (void)state;
        static const char text[] =
                "ext4 1028096 1 - Live 0xffffffffc0a00000\n"
                "mbcache 16384 1 ext4, Live 0xffffffffc0900000\n"
                "jbd2 196608 1 ext4,mbcache, Live 0xffffffffc0800000\r\n"
                "nvidia 56004608 10 nvidia_uvm,nvidia_modeset, Live 0xffffffffc2000000 (POE)\n"
                "\n"
                "broken 123\n"
                "badsize 12x 1 - Live 0xffffffffc0700000\n"
                "badaddr 4096 1 - Live 0xzz\n"
                "loading 4096 0 - Loading 0xffffffffc0600000";
        struct kallsyms_module *mods = NULL;
        uint32_t nr = 0;
        struct kallsyms_error err;
        assert_int_equal(kallsyms_modules_parse_mem(text, sizeof(text) - 1, &mods, &nr, &err), 0);
        assert_int_equal(nr, 5);
        assert_int_equal(err.nr_bad_lines, 3);
        assert_int_equal(err.offset, (uint64_t)(strstr(text, "broken") - text));
        assert_string_equal(mods[0].name, "ext4");
        assert_int_equal(mods[0].base, 0xffffffffc0a00000);
        assert_int_equal(mods[0].size, 1028096);
        assert_string_equal(mods[1].name, "mbcache");
        assert_string_equal(mods[2].name, "jbd2");
        assert_int_equal(mods[2].base, 0xffffffffc0800000);
        assert_string_equal(mods[3].name, "nvidia");
        assert_int_equal(mods[3].size, 56004608);
        assert_int_equal(mods[3].base, 0xffffffffc2000000);
        assert_string_equal(mods[4].name, "loading");
        free(mods);

        static const char hidden[] = "ext4 1028096 1 - Live 0x0000000000000000\n"
                                     "jbd2 196608 1 ext4, Live 0x0000000000000000\n";
        assert_int_equal(kallsyms_modules_parse_mem(hidden, sizeof(hidden) - 1, &mods, &nr, &err),
                         -EPERM);
        assert_null(mods);
        assert_int_equal(nr, 0);
        assert_non_null(strstr(err.msg, "kptr_restrict"));

        assert_int_equal(kallsyms_modules_parse_mem("", 0, &mods, &nr, &err), 0);
        assert_null(mods);
        assert_int_equal(nr, 0);
}

static void test_modules_real(void **state)
{
        (void)state;
        struct kallsyms_module *mods = NULL;
        uint32_t nr = 0;
        struct kallsyms_error err;
        int rc = kallsyms_modules_read(NULL, &mods, &nr, &err);
        if (rc == -ENOENT) {
                fprintf(stderr, "skipped: no /proc/modules (a kernel without modules)\n");
                skip();
        }
        if (rc == -EPERM || rc == -EACCES) {
                fprintf(stderr, "skipped: %s\n", err.msg);
                skip();
        }
        assert_int_equal(rc, 0);
        assert_int_equal(err.nr_bad_lines, 0);
        for (uint32_t i = 0; i < nr; i++) {
                assert_true(mods[i].name[0] != 0);
                assert_true(mods[i].base != 0);
        }
        free(mods);
}

/* ---- perf maps ---- */

static const char *jit_at(const struct sym_table *t, uint64_t addr)
{
        const struct sym_entry *e = sym_table_find(t, addr);
        return e ? sym_table_name(t, e) : NULL;
}

static struct sym_table *map_ok(const char *text, uint32_t nr_bad_lines)
{
        struct sym_table *t = sym_table_new();
        struct perf_map_error err;
        assert_int_equal(perf_map_parse_mem(text, strlen(text), t, &err), 0);
        assert_int_equal(err.nr_bad_lines, nr_bad_lines);
        sym_table_finish(t, PERF_MAP_MAX_INFERRED_SIZE);
        return t;
}

static void test_perf_map_plain(void **state)
{
        (void)state;
        /* as V8, LuaJIT and older JVM agents write it */
        struct sym_table *t = map_ok("7f1200001000 40 LazyCompile:~main /app/index.js:1\n"
                                     "7f1200001040 20 Builtin:ArgumentsAdaptorTrampoline\n"
                                     "7F12000010A0 10 upper_case_hex\n",
                                     0);
        assert_int_equal(sym_table_count(t), 3);
        assert_string_equal(jit_at(t, 0x7f1200001000), "LazyCompile:~main /app/index.js:1");
        assert_string_equal(jit_at(t, 0x7f120000103f), "LazyCompile:~main /app/index.js:1");
        assert_string_equal(jit_at(t, 0x7f1200001040), "Builtin:ArgumentsAdaptorTrampoline");
        assert_null(jit_at(t, 0x7f1200001060)); /* a gap: sizes are given */
        assert_string_equal(jit_at(t, 0x7f12000010af), "upper_case_hex");
        assert_null(jit_at(t, 0x7f12000010b0)); /* past the end of the last */
        assert_null(jit_at(t, 0x7f1200000fff));
        sym_table_free(t);
}

static void test_perf_map_0x(void **state)
{
        (void)state;
        /* as the JDK (25) writes it: 0x on both numbers, names with spaces and signatures */
        struct sym_table *t = map_ok(
                "0x00007f3a6c4a1000 0x0000000000000180 Interpreter\n"
                "0x00007f3a6c4a2000 0x0000000000000060 LambdaForm$MH/0x000000080100c400.invoke"
                "(Ljava/lang/Object;)Ljava/lang/Object;\n"
                "0X00007f3a6c4a3000 0X40 void Foo::bar(int, char const*)  \n"
                "0x00007f3a6c4a4000 40 mixed prefixes\n",
                0);
        assert_int_equal(sym_table_count(t), 4);
        assert_string_equal(jit_at(t, 0x7f3a6c4a117f), "Interpreter");
        assert_null(jit_at(t, 0x7f3a6c4a1180));
        assert_string_equal(jit_at(t, 0x7f3a6c4a2000), "LambdaForm$MH/0x000000080100c400.invoke"
                                                       "(Ljava/lang/Object;)Ljava/lang/Object;");
        /* the rest of the line, trailing spaces too */
        assert_string_equal(jit_at(t, 0x7f3a6c4a3010), "void Foo::bar(int, char const*)  ");
        assert_string_equal(jit_at(t, 0x7f3a6c4a403f), "mixed prefixes");
        sym_table_free(t);
}

static void test_perf_map_bad_lines(void **state)
{
        (void)state;
        static const char text[] = "1000 10 good_one\r\n"
                                   "\n"
                                   "   \n"
                                   "zz 10 not_hex\n"
                                   "2000 10\n"
                                   "2000 10 \n"
                                   "2000\n"
                                   "2000 yy bad_size\n"
                                   "2000x 10 glued\n"
                                   "11112222333344445 10 too_many_digits\n"
                                   "ffffffffffffff00 200 wraps\n"
                                   "ffffffffffffff00 100 ends_at_the_top\n"
                                   "\t3000\t10\ttabs\n"
                                   "4000 10 good_two";
        struct sym_table *t = sym_table_new();
        struct perf_map_error err;
        assert_int_equal(perf_map_parse_mem(text, sizeof(text) - 1, t, &err), 0);
        assert_int_equal(err.nr_bad_lines, 8);
        assert_int_equal(err.offset, (uint64_t)(strstr(text, "zz") - text));
        assert_non_null(strstr(err.msg, "hexadecimal"));
        sym_table_finish(t, PERF_MAP_MAX_INFERRED_SIZE);
        assert_int_equal(sym_table_count(t), 4);
        assert_string_equal(jit_at(t, 0x1000), "good_one"); /* no \r */
        assert_string_equal(jit_at(t, 0xffffffffffffffff), "ends_at_the_top");
        assert_string_equal(jit_at(t, 0x300f), "tabs");
        assert_string_equal(jit_at(t, 0x400f), "good_two"); /* no newline at the end */
        sym_table_free(t);

        /* only len bytes are read: the line is cut inside its name */
        t = sym_table_new();
        assert_int_equal(perf_map_parse_mem("5000 10 cut_here_not_there", 12, t, NULL), 0);
        sym_table_finish(t, 0);
        assert_string_equal(jit_at(t, 0x5000), "cut_");
        sym_table_free(t);
}

static void test_perf_map_replaced(void **state)
{
        (void)state;
        /* JIT code is replaced in place: the later line of a start wins */
        struct sym_table *t = map_ok("1000 100 old_version\n"
                                     "2000 0 unsized_old\n"
                                     "1000 80 new_version\n"
                                     "3000 10 other\n"
                                     "2000 40 sized_new\n"
                                     "1000 20 newest_version\n"
                                     "5000 0 unsized_last\n",
                                     0);
        assert_int_equal(sym_table_count(t), 4);
        assert_string_equal(jit_at(t, 0x1000), "newest_version");
        assert_string_equal(jit_at(t, 0x101f), "newest_version");
        assert_null(jit_at(t, 0x1020)); /* the old, longer versions are gone */
        assert_string_equal(jit_at(t, 0x203f), "sized_new");
        assert_null(jit_at(t, 0x2040));
        /* size 0: runs to the next, at most PERF_MAP_MAX_INFERRED_SIZE */
        assert_string_equal(jit_at(t, 0x5000 + PERF_MAP_MAX_INFERRED_SIZE - 1), "unsized_last");
        assert_null(jit_at(t, 0x5000 + PERF_MAP_MAX_INFERRED_SIZE));
        sym_table_free(t);

        /* a second map added to the same table loses at equal starts */
        t = sym_table_new();
        assert_int_equal(perf_map_parse_mem("1000 10 first_map\n", 18, t, NULL), 0);
        assert_int_equal(
                perf_map_parse_mem("1000 10 second_map\n2000 10 only_second\n", 39, t, NULL), 0);
        sym_table_finish(t, 0);
        assert_string_equal(jit_at(t, 0x1000), "first_map");
        assert_string_equal(jit_at(t, 0x2000), "only_second");
        sym_table_free(t);
}

static void write_file(const char *path, const char *text)
{
        FILE *f = fopen(path, "we");
        assert_non_null(f);
        assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
        assert_int_equal(fclose(f), 0);
}

static void test_perf_map_files(void **state)
{
        (void)state;
        char dir[] = "/tmp/test_kallsyms.XXXXXX";
        assert_non_null(mkdtemp(dir));
        char path[128];

        /* a file whose last line is still being written: that line is ignored */
        snprintf(path, sizeof(path), "%s/perf-1.map", dir);
        write_file(path, "0x1000 0x10 done\n0x2000 0x10 being_wri");
        struct sym_table *t = NULL;
        struct perf_map_error err;
        assert_int_equal(perf_map_read_file(path, &t, &err), 0);
        assert_int_equal(err.nr_bad_lines, 0);
        assert_int_equal(sym_table_count(t), 1);
        assert_string_equal(jit_at(t, 0x100f), "done");
        assert_null(jit_at(t, 0x2000));
        sym_table_free(t);
        unlink(path);

        /* missing */
        assert_int_equal(perf_map_read_file(path, &t, &err), -ENOENT);
        assert_null(t);
        assert_non_null(strstr(err.msg, path));

        /* a FIFO is refused without blocking */
        assert_int_equal(mkfifo(path, 0600), 0);
        assert_int_equal(perf_map_read_file(path, &t, &err), -EINVAL);
        assert_null(t);
        unlink(path);

        /* this process's own map, by pid */
        snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
        write_file(path, "7f0000000000 100 jitted by me\n");
        assert_int_equal(perf_map_read(getpid(), &t, &err), 0);
        assert_string_equal(jit_at(t, 0x7f0000000080), "jitted by me");
        sym_table_free(t);
        unlink(path);
        assert_int_equal(perf_map_read(getpid(), &t, &err), -ENOENT);
        rmdir(dir);
}

/* Rewrites the last strlen(tail) bytes of the file at path with tail, in place. */
static void rewrite_tail(const char *path, const char *tail)
{
        FILE *f = fopen(path, "r+");
        assert_non_null(f);
        assert_int_equal(fseek(f, -(long)strlen(tail), SEEK_END), 0);
        fputs(tail, f);
        fclose(f);
}

/* The reads of /proc/kallsyms: a second reader gets a copy of the first read while the kernel's
   state stays (a refcount in /proc/modules is no change), the file again when a module comes
   or after kallsyms_text_forget; kallsyms_read(NULL) is such a reader. The cache on disk serves
   another process (here: the one after forget) in the same state, and is ignored when damaged
   or written in another state. */
static void test_kallsyms_text_reuse(void **state)
{
        (void)state;
        char dir[] = "/tmp/etwtop-ktext-XXXXXX", ks_path[64], mod_path[64], cache[80];
        assert_non_null(mkdtemp(dir));
        snprintf(ks_path, sizeof(ks_path), "%s/kallsyms", dir);
        snprintf(mod_path, sizeof(mod_path), "%s/modules", dir);
        snprintf(cache, sizeof(cache), "%s/cache/kallsyms.cache", dir);
        char cache_dir[64];
        snprintf(cache_dir, sizeof(cache_dir), "%s/cache", dir);
        write_file(ks_path, "ffffffff81000000 T _stext\nffffffff81000100 T first_read\n");
        write_file(mod_path, "ext4 1 0 - Live 0xffffffffc0000000\n");
        kallsyms_text_set_paths(ks_path, mod_path, NULL, true);
        size_t len = 0;
        char *a = kallsyms_text_read(&len, NULL, NULL);
        assert_non_null(a);
        assert_int_equal(len, strlen(a));
        assert_non_null(strstr(a, "first_read"));
        /* the file changes, the modules do not (a refcount is no change): the first read */
        write_file(ks_path, "ffffffff81000000 T _stext\nffffffff81000100 T second_read\n");
        write_file(mod_path, "ext4 1 3 jbd2, Live 0xffffffffc0000000\n");
        char *b = kallsyms_text_read(&len, NULL, NULL);
        assert_string_equal(b, a);
        struct kallsyms *ks = NULL;
        assert_int_equal(kallsyms_read(NULL, &ks, NULL), 0);
        struct kallsyms_hit hit;
        assert_true(kallsyms_lookup(ks, 0xffffffff81000104, &hit));
        assert_string_equal(hit.name, "first_read");
        kallsyms_free(ks);
        /* a module comes: the file again */
        write_file(mod_path, "ext4 1 3 jbd2, Live 0xffffffffc0000000\n"
                             "nfs 1 0 - Live 0xffffffffc1000000\n");
        char *c = kallsyms_text_read(&len, NULL, NULL);
        assert_non_null(strstr(c, "second_read"));
        /* forgotten, no cache on disk: the file again */
        write_file(ks_path, "ffffffff81000000 T _stext\nffffffff81000100 T third_read\n");
        kallsyms_text_forget();
        char *d = kallsyms_text_read(&len, NULL, NULL);
        assert_non_null(strstr(d, "third_read"));

        /* the cache on disk: written by a read (its directory made), taken by the next process
           in the same state, a 0600 file of this user */
        kallsyms_text_set_paths(ks_path, mod_path, cache_dir, true);
        char *e = kallsyms_text_read(&len, NULL, NULL);
        assert_non_null(strstr(e, "third_read"));
        struct stat st;
        assert_int_equal(stat(cache, &st), 0);
        assert_int_equal(st.st_mode & 0777, 0600);
        /* a read whose text reached the cache file keeps no copy of its own: the next read in
           the same state takes the file (here rewritten in place, its header the same) */
        rewrite_tail(cache, "third_reaE\n");
        char *e2 = kallsyms_text_read(&len, NULL, NULL);
        assert_non_null(strstr(e2, "third_reaE"));
        free(e2);
        rewrite_tail(cache, "third_read\n");
        write_file(ks_path, "ffffffff81000000 T _stext\nffffffff81000100 T fourth_read\n");
        kallsyms_text_forget();
        char *f = kallsyms_text_read(&len, NULL, NULL);
        assert_string_equal(f, e);
        assert_int_equal(len, strlen(e));
        /* the cache file's text is not kept a second time in the process: the next read in the
           same state reads the file again (here rewritten in place, its header the same) */
        rewrite_tail(cache, "third_reaD\n");
        char *f2 = kallsyms_text_read(&len, NULL, NULL);
        assert_non_null(strstr(f2, "third_reaD"));
        assert_int_equal(len, strlen(e));
        free(f2);
        /* damaged (cut in its header): ignored, the file read and the cache written again */
        FILE *cf = fopen(cache, "r+");
        assert_non_null(cf);
        assert_int_equal(ftruncate(fileno(cf), 10), 0);
        fclose(cf);
        kallsyms_text_forget();
        char *g = kallsyms_text_read(&len, NULL, NULL);
        assert_non_null(strstr(g, "fourth_read"));
        /* another state (a module went): the file, not the cache */
        write_file(mod_path, "ext4 1 3 jbd2, Live 0xffffffffc0000000\n");
        write_file(ks_path, "ffffffff81000000 T _stext\nffffffff81000100 T fifth_read\n");
        kallsyms_text_forget();
        char *h = kallsyms_text_read(&len, NULL, NULL);
        assert_non_null(strstr(h, "fifth_read"));
        free(a);
        free(b);
        free(c);
        free(d);
        free(e);
        free(f);
        free(g);
        free(h);
        /* no file: NULL and errno */
        unlink(ks_path);
        kallsyms_text_set_paths(ks_path, mod_path, NULL, true);
        errno = 0;
        assert_null(kallsyms_text_read(&len, NULL, NULL));
        assert_int_equal(errno, ENOENT);
        kallsyms_text_set_paths(NULL, NULL, NULL, false);
        unlink(cache);
        rmdir(cache_dir);
        unlink(mod_path);
        rmdir(dir);
}

/* The cache's directory must be this user's and no one else's to write, itself, not a link:
   else its files are neither read nor written (ETWTOP_RUNTIME_DIR=/tmp would let any user put a
   text there, or a name there that the cache's rename replaces). */
static void test_kallsyms_cache_dir_not_private(void **state)
{
        (void)state;
        char dir[] = "/tmp/etwtop-kdir-XXXXXX", ks_path[64], mod_path[64], priv[64], link[64];
        char open_dir[64], cache[96];
        assert_non_null(mkdtemp(dir));
        snprintf(ks_path, sizeof(ks_path), "%s/kallsyms", dir);
        snprintf(mod_path, sizeof(mod_path), "%s/modules", dir);
        snprintf(priv, sizeof(priv), "%s/private", dir);
        snprintf(link, sizeof(link), "%s/link", dir);
        snprintf(open_dir, sizeof(open_dir), "%s/open", dir);
        write_file(ks_path, "ffffffff81000000 T _stext\nffffffff81000100 T from_the_file\n");
        write_file(mod_path, "ext4 1 0 - Live 0xffffffffc0000000\n");
        /* a private directory: the cache written there, and read back */
        assert_int_equal(mkdir(priv, 0700), 0);
        kallsyms_text_set_paths(ks_path, mod_path, priv, true);
        size_t len = 0;
        char *a = kallsyms_text_read(&len, NULL, NULL);
        assert_non_null(strstr(a, "from_the_file"));
        snprintf(cache, sizeof(cache), "%s/kallsyms.cache", priv);
        struct stat st;
        assert_int_equal(lstat(cache, &st), 0);
        rewrite_tail(cache, "from_the_filE\n");
        kallsyms_text_forget();
        char *b = kallsyms_text_read(&len, NULL, NULL);
        assert_non_null(strstr(b, "from_the_filE"));
        /* the same directory through a symbolic link: neither read nor written */
        assert_int_equal(symlink(priv, link), 0);
        kallsyms_text_set_paths(ks_path, mod_path, link, true);
        char *c = kallsyms_text_read(&len, NULL, NULL);
        assert_non_null(strstr(c, "from_the_file"));
        /* the same directory, others may write it: neither read nor written */
        assert_int_equal(chmod(priv, 0777), 0);
        kallsyms_text_set_paths(ks_path, mod_path, priv, true);
        char *d = kallsyms_text_read(&len, NULL, NULL);
        assert_non_null(strstr(d, "from_the_file"));
        assert_int_equal(chmod(priv, 01733), 0); /* sticky, as /tmp: the same */
        kallsyms_text_forget();
        char *e = kallsyms_text_read(&len, NULL, NULL);
        assert_non_null(strstr(e, "from_the_file"));
        /* another user's (root may read and write it): the same */
        assert_int_equal(chmod(priv, 0700), 0);
        if (geteuid() == 0) {
                assert_int_equal(chown(priv, 1, 1), 0);
                kallsyms_text_forget();
                char *f = kallsyms_text_read(&len, NULL, NULL);
                assert_non_null(strstr(f, "from_the_file"));
                free(f);
                assert_int_equal(chown(priv, 0, 0), 0);
        }
        /* the cache file itself is still the one the private directory held */
        kallsyms_text_set_paths(ks_path, mod_path, priv, true);
        kallsyms_text_forget();
        char *g = kallsyms_text_read(&len, NULL, NULL);
        assert_non_null(strstr(g, "from_the_filE"));
        /* a directory others may write, made by the test: no cache file appears in it */
        assert_int_equal(mkdir(open_dir, 0700), 0);
        assert_int_equal(chmod(open_dir, 0777), 0);
        kallsyms_text_set_paths(ks_path, mod_path, open_dir, true);
        kallsyms_text_forget();
        char *h = kallsyms_text_read(&len, NULL, NULL);
        assert_non_null(strstr(h, "from_the_file"));
        char open_cache[96];
        snprintf(open_cache, sizeof(open_cache), "%s/kallsyms.cache", open_dir);
        assert_int_equal(lstat(open_cache, &st), -1);
        assert_int_equal(errno, ENOENT);
        kallsyms_text_set_paths(NULL, NULL, NULL, false);
        free(a);
        free(b);
        free(c);
        free(d);
        free(e);
        free(g);
        free(h);
        unlink(cache);
        unlink(link);
        rmdir(priv);
        rmdir(open_dir);
        unlink(ks_path);
        unlink(mod_path);
        rmdir(dir);
}

/* ---- the parse in root's cache ---- */

/* A kallsyms text of n kernel functions (aliases, padding, data, _stext and _etext among them),
   then modules out of address order, BPF programs between them and a module's weak symbol. */
static char *big_text(uint32_t n)
{
        size_t cap = (size_t)n * 160 + 4096, o = 0;
        char *t = malloc(cap);
        assert_non_null(t);
        o += (size_t)snprintf(t + o, cap - o, "ffffffff81000000 T _stext\n");
        for (uint32_t i = 0; i < n; i++) {
                uint64_t a = 0xffffffff81000000 + (uint64_t)i * 0x40;
                o += (size_t)snprintf(t + o, cap - o, "%016llx t __pfx_fn_%u\n",
                                      (unsigned long long)(a - 0x10), i);
                o += (size_t)snprintf(t + o, cap - o, "%016llx %c fn_%u\n", (unsigned long long)a,
                                      i % 3 ? 'T' : 't', i);
                if (i % 7 == 0)
                        o += (size_t)snprintf(t + o, cap - o, "%016llx W alias_%u\n",
                                              (unsigned long long)a, i);
                if (i % 11 == 0)
                        o += (size_t)snprintf(t + o, cap - o, "%016llx D data_%u\n",
                                              (unsigned long long)(a + 0x20), i);
        }
        o += (size_t)snprintf(t + o, cap - o, "%016llx T _etext\n",
                              (unsigned long long)(0xffffffff81000000 + (uint64_t)n * 0x40));
        static const char *const mods[] = {"ext4", "xfs", "nfs"};
        static const uint64_t bases[] = {0xffffffffc0a00000, 0xffffffffc0200000,
                                         0xffffffffc0600000};
        for (int m = 0; m < 3; m++) {
                for (uint32_t i = 0; i < 50; i++)
                        o += (size_t)snprintf(t + o, cap - o, "%016llx %c %s_fn_%u\t[%s]\n",
                                              (unsigned long long)(bases[m] + i * 0x100),
                                              i == 7 ? 'w' : 't', mods[m], i, mods[m]);
                o += (size_t)snprintf(t + o, cap - o, "%016llx t bpf_prog_%d_x\t[bpf]\n",
                                      (unsigned long long)(bases[m] + 0x100000), m);
        }
        return t;
}

/* Every answer of b as a's: the table entry by entry, the kernel's text, and the lookups at
   each symbol's edges and at a few fixed addresses. */
static void assert_same(const struct kallsyms *a, const struct kallsyms *b)
{
        const struct sym_table *ta = kallsyms_table(a), *tb = kallsyms_table(b);
        uint32_t n = sym_table_count(ta);
        assert_int_equal(sym_table_count(tb), n);
        /* an empty parse keeps the pool it began with; a mapped table holds only its own */
        if (n)
                assert_int_equal(sym_table_memory(tb), sym_table_memory(ta));
        uint64_t sa = 0, ea = 0, sb = 0, eb = 0;
        assert_int_equal(kallsyms_kernel_text(a, &sa, &ea), kallsyms_kernel_text(b, &sb, &eb));
        assert_int_equal(sa, sb);
        assert_int_equal(ea, eb);
        static const uint64_t fixed[] = {0, 1, 0xffffffff81000000, UINT64_MAX};
        for (uint32_t i = 0; i < n + 4; i++) {
                uint64_t addrs[4];
                size_t nr = 1;
                if (i < n) {
                        const struct sym_entry *x = sym_table_at(ta, i), *y = sym_table_at(tb, i);
                        assert_int_equal(x->start, y->start);
                        assert_int_equal(x->size, y->size);
                        assert_int_equal(x->flags, y->flags);
                        assert_string_equal(sym_table_name(ta, x), sym_table_name(tb, y));
                        addrs[0] = x->start - 1;
                        addrs[1] = x->start;
                        addrs[2] = x->start + x->size - 1;
                        addrs[3] = x->start + x->size;
                        nr = 4;
                } else {
                        addrs[0] = fixed[i - n];
                }
                for (size_t k = 0; k < nr; k++) {
                        struct kallsyms_hit x, y;
                        bool hx = kallsyms_lookup(a, addrs[k], &x);
                        assert_int_equal(kallsyms_lookup(b, addrs[k], &y), hx);
                        if (!hx)
                                continue;
                        assert_string_equal(x.name, y.name);
                        assert_string_equal(x.module, y.module);
                        assert_int_equal(x.start, y.start);
                        assert_int_equal(x.offset, y.offset);
                }
        }
}

/* The parsed form's bytes of the big text, in a buffer of their own (malloc's: 8-aligned). */
static void *encoded(const struct kallsyms *ks, size_t *len)
{
        void *data = kallsyms_parsed_encode(ks, len);
        assert_non_null(data);
        assert_true(*len > 56);
        return data;
}

/* A copy of the parsed form with one change made by damage(); -EINVAL and nothing made. */
static void assert_refused(const void *data, size_t len, ptrdiff_t cut,
                           void (*damage)(uint8_t *body, size_t len))
{
        /* what lies past the end looks like a module name: a name offset past the end must be
           refused for being there, not for what it finds */
        uint8_t *copy = malloc(len + 16);
        memcpy(copy, data, len);
        memset(copy + len, '[', 16);
        if (damage)
                damage(copy, len);
        struct kallsyms *ks = (struct kallsyms *)1;
        assert_int_equal(kallsyms_parsed_open_mem(copy, (size_t)((ptrdiff_t)len - cut), &ks),
                         -EINVAL);
        assert_null(ks);
        free(copy);
}

/* The parsed form's layout (kallsyms.c): a 56-byte header, the 24-byte entries, the 16-byte
   runs, the 4-byte module name offsets, the pool, the module names. */
static uint32_t head_u32(const uint8_t *b, size_t at)
{
        uint32_t v;
        memcpy(&v, b + at, sizeof(v));
        return v;
}
static uint64_t head_u64(const uint8_t *b, size_t at)
{
        uint64_t v;
        memcpy(&v, b + at, sizeof(v));
        return v;
}
static void put_u32(uint8_t *b, size_t at, uint32_t v)
{
        memcpy(b + at, &v, sizeof(v));
}
static void put_u64(uint8_t *b, size_t at, uint64_t v)
{
        memcpy(b + at, &v, sizeof(v));
}
#define NR_ENTRIES(b)  head_u32(b, 24)
#define NR_RUNS(b)     head_u32(b, 28)
#define NR_MODULES(b)  head_u32(b, 32)
#define POOL_LEN(b)    head_u64(b, 40)
#define ENTRY(b, i)    (56 + (size_t)(i)*24)
#define RUN(b, i)      (ENTRY(b, NR_ENTRIES(b)) + (size_t)(i)*16)
#define NAME_OFF(b, m) (RUN(b, NR_RUNS(b)) + (size_t)(m)*4)

static void bad_magic(uint8_t *b, size_t len)
{
        (void)len;
        b[0] ^= 1;
}
static void more_entries(uint8_t *b, size_t len)
{
        (void)len;
        put_u32(b, 24, NR_ENTRIES(b) + 1);
}
static void huge_entries(uint8_t *b, size_t len)
{
        (void)len;
        put_u32(b, 24, UINT32_MAX);
}
static void more_runs(uint8_t *b, size_t len)
{
        (void)len;
        put_u32(b, 28, NR_RUNS(b) + 1);
}
static void more_modules(uint8_t *b, size_t len)
{
        (void)len;
        put_u32(b, 32, NR_MODULES(b) + 1);
}
static void longer_pool(uint8_t *b, size_t len)
{
        (void)len;
        put_u64(b, 40, POOL_LEN(b) + 1);
}
static void huge_pool(uint8_t *b, size_t len)
{
        (void)len;
        put_u64(b, 40, UINT64_MAX - 8);
}
static void name_past_pool(uint8_t *b, size_t len)
{
        (void)len;
        put_u32(b, ENTRY(b, 5) + 16, (uint32_t)POOL_LEN(b));
}
/* Swaps the n bytes at b + x and b + y (n at most 24: an entry, a run). */
static void swap_records(uint8_t *b, size_t x, size_t y, size_t n)
{
        uint8_t t[24];
        memcpy(t, b + x, n);
        memcpy(b + x, b + y, n);
        memcpy(b + y, t, n);
}
static void entries_unsorted(uint8_t *b, size_t len)
{
        (void)len;
        swap_records(b, ENTRY(b, 3), ENTRY(b, 4), 24);
}
static void name_control_byte(uint8_t *b, size_t len)
{
        (void)len;
        uint32_t off = head_u32(b, ENTRY(b, 5) + 16);
        size_t pool = NAME_OFF(b, NR_MODULES(b));
        b[pool + off] = 0x1b; /* an escape where the fifth symbol's name begins */
}
/* A copy of the parsed form with one entry damaged by damage(): it opens (the entries are
   checked where they are read), every lookup stays inside it (ASan's build checks the reads),
   each symbol but the damaged one reads as before (where the entries keep their order), and the
   damaged one's name reads "" where it names nothing a parse could leave. */
static void assert_read_safely(const struct kallsyms *p, const void *data, size_t len,
                               void (*damage)(uint8_t *body, size_t len), uint32_t damaged,
                               bool is_ordered)
{
        uint8_t *copy = malloc(len);
        memcpy(copy, data, len);
        damage(copy, len);
        struct kallsyms *m = NULL;
        assert_int_equal(kallsyms_parsed_open_mem(copy, len, &m), 0);
        const struct sym_table *tp = kallsyms_table(p), *tm = kallsyms_table(m);
        uint32_t n = sym_table_count(tm);
        assert_int_equal(n, sym_table_count(tp));
        for (uint32_t i = 0; i < n; i++) {
                const struct sym_entry *x = sym_table_at(tp, i), *y = sym_table_at(tm, i);
                const char *name = sym_table_name(tm, y);
                for (const char *c = name; *c; c++)
                        assert_true((unsigned char)*c >= 0x20 && *c != 0x7f);
                struct kallsyms_hit hit;
                for (uint64_t a = y->start - 1; a != y->start + 2; a++)
                        (void)kallsyms_lookup(m, a, &hit);
                if (i == damaged && is_ordered)
                        assert_string_equal(name, "");
                else if (is_ordered)
                        assert_string_equal(name, sym_table_name(tp, x));
        }
        kallsyms_free(m);
        free(copy);
}
static void run_module_out_of_range(uint8_t *b, size_t len)
{
        (void)len;
        put_u32(b, RUN(b, 1) + 8, NR_MODULES(b));
}
static void runs_unsorted(uint8_t *b, size_t len)
{
        (void)len;
        swap_records(b, RUN(b, 1), RUN(b, 2), 16);
}
static void first_run_not_first_entry(uint8_t *b, size_t len)
{
        (void)len;
        put_u64(b, RUN(b, 0), head_u64(b, RUN(b, 0)) - 1);
}
static void module_name_past_names(uint8_t *b, size_t len)
{
        put_u32(b, NAME_OFF(b, 1), (uint32_t)(len - NAME_OFF(b, NR_MODULES(b)) - POOL_LEN(b)));
}
static void names_not_ended(uint8_t *b, size_t len)
{
        b[len - 1] = 'x';
}
static void module_name_control_byte(uint8_t *b, size_t len)
{
        b[len - 2] = '\n';
}
static void nonzero_padding(uint8_t *b, size_t len)
{
        (void)len;
        put_u32(b, 36, 1);
}

/* The decoder of the parsed form trusts no byte: each damage of its header, runs or module names
   is refused on its own, a damaged symbol entry is read safely, and the form undamaged gives
   every answer the parse gave. */
static void test_kallsyms_parsed_damaged(void **state)
{
        (void)state;
        char *text = big_text(2000);
        struct kallsyms *p = parse_ok(text, strlen(text));
        size_t len = 0;
        uint8_t *data = encoded(p, &len);
        assert_true(NR_RUNS(data) >= 7); /* the kernel, three modules, three [bpf] */
        struct kallsyms *m = NULL;
        assert_int_equal(kallsyms_parsed_open_mem(data, len, &m), 0);
        assert_true(kallsyms_is_mapped(m));
        assert_false(kallsyms_is_mapped(p));
        assert_same(p, m);
        kallsyms_free(m);

        assert_refused(data, len, 1, NULL);        /* cut short */
        assert_refused(data, len, -1, NULL);       /* a byte past its end */
        assert_refused(data, len, len - 55, NULL); /* less than the header */
        assert_refused(data, len, 0, bad_magic);
        assert_refused(data, len, 0, more_entries);
        assert_refused(data, len, 0, huge_entries);
        assert_refused(data, len, 0, more_runs);
        assert_refused(data, len, 0, more_modules);
        assert_refused(data, len, 0, longer_pool);
        assert_refused(data, len, 0, huge_pool);
        /* read where used, not refused: a name past the pool or with a control byte, entries
           out of order */
        assert_read_safely(p, data, len, name_past_pool, 5, true);
        assert_read_safely(p, data, len, name_control_byte, 5, true);
        assert_read_safely(p, data, len, entries_unsorted, 3, false);
        assert_refused(data, len, 0, run_module_out_of_range);
        assert_refused(data, len, 0, runs_unsorted);
        assert_refused(data, len, 0, first_run_not_first_entry);
        assert_refused(data, len, 0, module_name_past_names);
        assert_refused(data, len, 0, names_not_ended);
        assert_refused(data, len, 0, module_name_control_byte);
        assert_refused(data, len, 0, nonzero_padding);
        /* not 8-byte aligned: the entries would be read unaligned */
        uint8_t *odd = malloc(len + 8);
        memcpy(odd + 4, data, len);
        assert_int_equal(kallsyms_parsed_open_mem(odd + 4, len, &m), -EINVAL);
        free(odd);

        /* an empty parse round-trips too */
        struct kallsyms *e = parse_ok("", 0);
        free(data);
        data = kallsyms_parsed_encode(e, &len);
        assert_int_equal(kallsyms_parsed_open_mem(data, len, &m), 0);
        assert_same(e, m);
        kallsyms_free(m);
        kallsyms_free(e);
        free(data);
        kallsyms_free(p);
        free(text);
}

/* Reads with kallsyms_read(NULL) in the test's cache directory; whether the table was mapped. */
static struct kallsyms *read_live(bool is_mapped)
{
        kallsyms_text_forget(); /* as another process would */
        struct kallsyms *ks = NULL;
        struct kallsyms_error err;
        assert_int_equal(kallsyms_read(NULL, &ks, &err), 0);
        assert_non_null(ks);
        assert_int_equal(kallsyms_is_mapped(ks), is_mapped);
        return ks;
}

/* The file's parsed form begins after the header of the state: at its magic. */
static long body_at(const char *path)
{
        FILE *f = fopen(path, "re");
        assert_non_null(f);
        char buf[8192];
        size_t n = fread(buf, 1, sizeof(buf), f);
        fclose(f);
        for (size_t i = 0; i + 8 <= n; i++) {
                if (memcmp(buf + i, "kstable2", 8) == 0)
                        return (long)i;
        }
        fail();
        return -1;
}

/* A test's directory: a kallsyms and a modules file, and a cache directory with its files. */
struct ktmp {
        char dir[40], ks_path[64], mod_path[64], cache_dir[64], table[96], text_cache[96];
};

static void ktmp_make(struct ktmp *k, const char *name)
{
        snprintf(k->dir, sizeof(k->dir), "/tmp/etwtop-%s-XXXXXX", name);
        assert_non_null(mkdtemp(k->dir));
        snprintf(k->ks_path, sizeof(k->ks_path), "%s/kallsyms", k->dir);
        snprintf(k->mod_path, sizeof(k->mod_path), "%s/modules", k->dir);
        snprintf(k->cache_dir, sizeof(k->cache_dir), "%s/cache", k->dir);
        snprintf(k->table, sizeof(k->table), "%s/kallsyms.table", k->cache_dir);
        snprintf(k->text_cache, sizeof(k->text_cache), "%s/kallsyms.cache", k->cache_dir);
}

static void ktmp_remove(const struct ktmp *k)
{
        kallsyms_text_set_paths(NULL, NULL, NULL, false);
        unlink(k->table);
        unlink(k->text_cache);
        rmdir(k->cache_dir);
        unlink(k->ks_path);
        unlink(k->mod_path);
        rmdir(k->dir);
}

/* The parse of kallsyms_read(NULL) is stored in root's cache and mapped by the next reader in
   the same state, with every answer the same; a damaged file, one of another state or another
   user, or one that others may write, is not used (the text parsed as before, the answers
   right) and the next store replaces it. */
static void test_kallsyms_parsed_cache(void **state)
{
        (void)state;
        struct ktmp k;
        ktmp_make(&k, "ktable");
        const char *ks_path = k.ks_path, *mod_path = k.mod_path, *cache_dir = k.cache_dir;
        const char *table = k.table;
        char *text = big_text(3000);
        write_file(ks_path, text);
        write_file(mod_path, "ext4 1 0 - Live 0xffffffffc0a00000\n");
        struct kallsyms *p = parse_ok(text, strlen(text));
        kallsyms_text_set_paths(ks_path, mod_path, cache_dir, true);

        /* the first read parses and stores, the second maps */
        struct kallsyms *a = read_live(false);
        struct stat st;
        assert_int_equal(stat(table, &st), 0);
        assert_int_equal(st.st_mode & 0777, 0600);
        struct kallsyms *b = read_live(true);
        assert_same(p, a);
        assert_same(p, b);
        kallsyms_free(a);
        kallsyms_free(b);

        /* cut short: parsed, right, and stored again whole */
        assert_int_equal(truncate(table, st.st_size - 1), 0);
        a = read_live(false);
        assert_same(p, a);
        kallsyms_free(a);
        b = read_live(true);
        kallsyms_free(b);

        /* a count too big in the file: the same */
        long body = body_at(table);
        int fd = open(table, O_RDWR | O_CLOEXEC);
        assert_true(fd >= 0);
        uint32_t nr = 0;
        assert_int_equal(pread(fd, &nr, 4, body + 24), 4);
        nr++;
        assert_int_equal(pwrite(fd, &nr, 4, body + 24), 4);
        close(fd);
        a = read_live(false);
        assert_same(p, a);
        kallsyms_free(a);
        b = read_live(true);
        kallsyms_free(b);

        /* another user's file, or one that others may write: not used (the rule of every cache
           file), and replaced */
        assert_int_equal(chown(table, 1, 1), 0);
        a = read_live(false);
        assert_same(p, a);
        kallsyms_free(a);
        assert_int_equal(stat(table, &st), 0);
        assert_int_equal(st.st_uid, geteuid());
        assert_int_equal(chmod(table, 0620), 0);
        a = read_live(false);
        kallsyms_free(a);
        b = read_live(true);
        kallsyms_free(b);

        /* another state (a module loaded again elsewhere; its header as long as the old one's,
           so that only the state tells them apart): the new text, parsed, stored in its state */
        char *text2 = big_text(1000);
        write_file(ks_path, text2);
        write_file(mod_path, "ext4 1 0 - Live 0xffffffffc0b00000\n");
        struct kallsyms *p2 = parse_ok(text2, strlen(text2));
        a = read_live(false);
        assert_same(p2, a);
        kallsyms_free(a);
        b = read_live(true);
        assert_same(p2, b);
        kallsyms_free(b);

        /* a path given: never the cache */
        struct kallsyms *c = NULL;
        assert_int_equal(kallsyms_read(ks_path, &c, NULL), 0);
        assert_false(kallsyms_is_mapped(c));
        kallsyms_free(c);

        ktmp_remove(&k);
        kallsyms_free(p);
        kallsyms_free(p2);
        free(text);
        free(text2);
}

/* The running kernel's symbols: parsed then mapped from a cache of the test's own, the same. */
/* The text another reader kept (a live session's host, which reads kallsyms first), with no
   parsed form yet: parsed where it lies in the cache (mapped), not read from kallsyms again;
   another user's text is not taken. */
static void test_kallsyms_text_kept(void **state)
{
        (void)state;
        struct ktmp k;
        ktmp_make(&k, "ktext");
        const char *ks_path = k.ks_path, *table = k.table, *text_cache = k.text_cache;
        char *text = big_text(3000), *other = big_text(1000);
        write_file(ks_path, text);
        write_file(k.mod_path, "ext4 1 0 - Live 0xffffffffc0a00000\n");
        struct kallsyms *p = parse_ok(text, strlen(text)), *q = parse_ok(other, strlen(other));
        kallsyms_text_set_paths(ks_path, k.mod_path, k.cache_dir, true);
        size_t len = 0;
        free(kallsyms_text_read(&len, NULL, NULL)); /* as the host does: the text kept */
        assert_int_equal(len, strlen(text));
        struct stat st;
        assert_int_equal(stat(text_cache, &st), 0);
        assert_int_not_equal(stat(table, &st), 0);

        /* kallsyms changed behind the cache's back (its state the same): the kept text is
           what is parsed, and the parse is stored */
        write_file(ks_path, other);
        struct kallsyms *a = read_live(false);
        assert_same(p, a);
        kallsyms_free(a);
        assert_int_equal(stat(table, &st), 0);
        a = read_live(true);
        assert_same(p, a);
        kallsyms_free(a);

        /* another user's kept text: not taken, kallsyms read */
        assert_int_equal(unlink(table), 0);
        assert_int_equal(chown(text_cache, 1, 1), 0);
        a = read_live(false);
        assert_same(q, a);
        kallsyms_free(a);

        ktmp_remove(&k);
        kallsyms_free(p);
        kallsyms_free(q);
        free(text);
        free(other);
}

static void test_kallsyms_parsed_real(void **state)
{
        (void)state;
        struct kallsyms *p = NULL;
        if (kallsyms_read("/proc/kallsyms", &p, NULL) != 0 ||
            !kallsyms_kernel_text(p, &(uint64_t){0}, &(uint64_t){0})) {
                kallsyms_free(p);
                fprintf(stderr, "skipped: /proc/kallsyms is not readable or hides addresses\n");
                skip();
        }
        char dir[] = "/tmp/etwtop-ktable-XXXXXX", path[96];
        assert_non_null(mkdtemp(dir));
        kallsyms_text_set_paths(NULL, NULL, dir, true);
        struct kallsyms *a = read_live(false);
        struct kallsyms *b = read_live(true);
        assert_same(a, b);
        kallsyms_free(a);
        kallsyms_free(b);
        kallsyms_free(p);
        kallsyms_text_set_paths(NULL, NULL, NULL, false);
        snprintf(path, sizeof(path), "%s/kallsyms.table", dir);
        unlink(path);
        snprintf(path, sizeof(path), "%s/kallsyms.cache", dir);
        unlink(path);
        rmdir(dir);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_kallsyms_core),
                cmocka_unit_test(test_kallsyms_modules),
                cmocka_unit_test(test_kallsyms_restricted),
                cmocka_unit_test(test_kallsyms_bad_lines),
                cmocka_unit_test(test_kallsyms_real),
                cmocka_unit_test(test_modules_parse),
                cmocka_unit_test(test_modules_real),
                cmocka_unit_test(test_perf_map_plain),
                cmocka_unit_test(test_perf_map_0x),
                cmocka_unit_test(test_perf_map_bad_lines),
                cmocka_unit_test(test_perf_map_replaced),
                cmocka_unit_test(test_perf_map_files),
                cmocka_unit_test(test_kallsyms_text_reuse),
                cmocka_unit_test(test_kallsyms_cache_dir_not_private),
                cmocka_unit_test(test_kallsyms_parsed_damaged),
                cmocka_unit_test(test_kallsyms_parsed_cache),
                cmocka_unit_test(test_kallsyms_parsed_real),
                cmocka_unit_test(test_kallsyms_text_kept),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
