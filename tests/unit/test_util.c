/* SPDX-License-Identifier: MIT */
/* test_util.c: util's toolbox: UTF-8 and UTF-16LE both ways (strict: every invalid form is
   U+FFFD, whichever way it is read), the error message's first-cause rule, the k-way heap's
   order and its ties, the mixers and FNV-1a, the ELF build-id reader (notes, sections,
   segments). */
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <unistd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "util/elf_build_id.h"
#include "util/err.h"
#include "util/hash.h"
#include "util/kheap.h"
#include "util/utf.h"

/* UTF-8 -> UTF-16LE -> UTF-8 gives s back when s is valid */
static void round_trip(const char *s)
{
        uint8_t w[256];
        char back[256];
        uint32_t n = utf8_to_utf16le(w, s);

        assert_true(n >= 2 && n % 2 == 0);
        assert_int_equal(w[n - 2] | w[n - 1], 0);
        assert_int_equal(utf16le_to_utf8(w, n / 2, back, sizeof(back)), n / 2);
        assert_string_equal(back, s);
}

static void test_utf_round_trip(void **state)
{
        (void)state;
        round_trip("");
        round_trip("notepad.exe");
        round_trip("C:\\Users\\J\xC3\xBCrgen\\\xE2\x82\xAC.txt"); /* ü, € */
        round_trip("\xF0\x9F\x98\x80 smile");                     /* U+1F600: a surrogate pair */
        round_trip("\xEF\xBF\xBD");                               /* U+FFFD itself */
        /* ASCII runs of 8 and 16 and more (widened 16 or 8 at a time) beside the others, at
           each offset, and the ASCII tails after them */
        round_trip("/usr/lib/x86_64-linux-gnu/libc.so.6");
        for (int at = 0; at <= 21; at++) {
                for (int tail = 0; tail <= 40; tail++) {
                        char s[72];
                        memset(s, 'a' + (at + tail) % 26, sizeof(s));
                        memcpy(s + at, "\xC3\xBC", 2);
                        s[at + 2 + tail] = '\0';
                        round_trip(s);
                }
        }
}

/* what UTF-16LE units s becomes */
static size_t units_of(const char *s, uint16_t *u)
{
        uint8_t w[64];
        uint32_t n = utf8_to_utf16le(w, s);

        for (uint32_t i = 0; i < n / 2; i++)
                u[i] = (uint16_t)(w[2 * i] | w[2 * i + 1] << 8);
        return n / 2 - 1;
}

static void test_utf8_invalid_is_replacement(void **state)
{
        static const char *const bad[] = {
                "\xC0\xAF",         /* overlong '/' */
                "\xE0\x80\xAF",     /* overlong, 3 bytes */
                "\xED\xA0\x80",     /* a surrogate, encoded */
                "\xF4\x90\x80\x80", /* past U+10FFFF */
                "\xF5",             /* starts nothing */
                "\xFF",             /* starts nothing */
                "\x80",             /* a lone continuation */
                "\xE2\x82",         /* cut short */
        };
        /* after a run of 8 ASCII bytes, the bad byte still one U+FFFD */
        uint16_t u9[16];
        assert_int_equal(units_of("abcdefgh\xFFi", u9), 10);
        assert_int_equal(u9[7], 'h');
        assert_int_equal(u9[8], 0xFFFD);
        assert_int_equal(u9[9], 'i');
        (void)state;
        for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
                uint16_t u[16];
                size_t n = units_of(bad[k], u);

                assert_true(n >= 1);
                for (size_t i = 0; i < n; i++)
                        assert_int_equal(u[i], 0xFFFD);
        }
        /* an invalid byte costs one character, the valid text around it stays */
        uint16_t u[16];
        assert_int_equal(units_of("a\xFF"
                                  "b",
                                  u),
                         3);
        assert_int_equal(u[0], 'a');
        assert_int_equal(u[1], 0xFFFD);
        assert_int_equal(u[2], 'b');
}

static void test_utf16_unpaired_and_cut(void **state)
{
        /* 'A', a lone high surrogate, 'B', a lone low surrogate, NUL, 'C' */
        static const uint8_t w[] = {'A', 0, 0x3D, 0xD8, 'B', 0, 0x00, 0xDE, 0, 0, 'C', 0};
        char out[32];
        (void)state;
        assert_int_equal(utf16le_to_utf8(w, 6, out, sizeof(out)), 5);
        assert_string_equal(out, "A\xEF\xBF\xBD"
                                 "B\xEF\xBF\xBD");
        /* no room for the whole: cut at a whole character, still reads to the NUL */
        assert_int_equal(utf16le_to_utf8(w, 6, out, 3), 5);
        assert_string_equal(out, "A");
        /* no NUL within max_units */
        assert_int_equal(utf16le_to_utf8(w, 1, out, sizeof(out)), 1);
        assert_string_equal(out, "A");
}

static void test_err_first_cause(void **state)
{
        struct err_msg e;
        (void)state;
        err_reset(&e);
        assert_false(err_is_set(&e));
        assert_int_equal(err_set(&e, 0x40, EINVAL, "record %d: size %u", 3, 7u), -EINVAL);
        assert_int_equal(err_set(&e, 0x80, EIO, "outer"), -EIO);
        assert_true(err_is_set(&e));
        assert_string_equal(e.msg, "record 3: size 7");
        assert_int_equal(e.offset, 0x40);
        assert_int_equal(err_set(NULL, 0, ENOMEM, "x"), -ENOMEM);
}

static void test_kheap_merges_in_order(void **state)
{
        struct kheap h;
        /* three sources, each time-ordered */
        static const uint64_t src[3][4] = {{1, 4, 9, 12}, {2, 4, 5, 30}, {3, 3, 10, 11}};
        uint32_t pos[3] = {0, 0, 0};
        uint64_t last = 0, last_src = 0;
        (void)state;

        assert_int_equal(kheap_init(&h, 3), 0);
        for (uint32_t s = 0; s < 3; s++)
                kheap_push(&h, src[s][0], s);
        for (int n = 0; n < 12; n++) {
                struct kheap_item it = kheap_top(&h);

                assert_true(it.key >= last);
                if (it.key == last)
                        assert_true(it.src >= last_src); /* ties: the lower source first */
                last = it.key;
                last_src = it.src;
                if (++pos[it.src] < 4)
                        kheap_replace_top(&h, src[it.src][pos[it.src]]);
                else
                        kheap_pop(&h);
        }
        assert_true(kheap_empty(&h));
        kheap_free(&h);
        kheap_free(&h); /* freed, and a zeroed heap: nothing to free */
        struct kheap z = {NULL, 0, 0};
        kheap_free(&z);
}

/* The run a merge may take from the least source: up to the next source's key, that key too
   when the least source is the lower (ties go to it), and everything when it is alone; the
   merge through it gives the same order as one record a sift. */
static void test_kheap_run_limit(void **state)
{
        struct kheap h;
        (void)state;

        kheap_xinit(&h, 4);
        kheap_push(&h, 5, 2);
        assert_true(kheap_run_limit(&h) == UINT64_MAX); /* alone */
        kheap_push(&h, 9, 0);
        kheap_push(&h, 7, 3);
        assert_true(kheap_run_limit(&h) == 7); /* source 2 before 3 at 7 */
        kheap_push(&h, 7, 1);
        assert_true(kheap_run_limit(&h) == 6); /* source 1 before 2 at 7 */
        kheap_pop(&h);
        assert_int_equal(kheap_top(&h).src, 1);
        assert_true(kheap_run_limit(&h) == 7); /* 1 before 3 at 7 */
        kheap_free(&h);

        /* runs against one record a step, over sources with many equal keys */
        static const uint64_t src[4][6] = {
                {1, 1, 2, 4, 4, 9}, {1, 2, 2, 2, 5, 9}, {0, 4, 4, 4, 4, 4}, {3, 3, 3, 9, 9, 9}};
        uint32_t order_step[24], order_run[24], n_step = 0, n_run = 0;
        uint32_t pos[4] = {0};
        kheap_xinit(&h, 4);
        for (uint32_t s = 0; s < 4; s++)
                kheap_push(&h, src[s][0], s);
        while (!kheap_empty(&h)) {
                uint32_t s = kheap_top(&h).src;
                order_step[n_step++] = s;
                if (++pos[s] < 6)
                        kheap_replace_top(&h, src[s][pos[s]]);
                else
                        kheap_pop(&h);
        }
        memset(pos, 0, sizeof(pos));
        for (uint32_t s = 0; s < 4; s++)
                kheap_push(&h, src[s][0], s);
        while (!kheap_empty(&h)) {
                uint32_t s = kheap_top(&h).src;
                uint64_t limit = kheap_run_limit(&h);
                do
                        order_run[n_run++] = s;
                while (++pos[s] < 6 && src[s][pos[s]] <= limit);
                if (pos[s] < 6)
                        kheap_replace_top(&h, src[s][pos[s]]);
                else
                        kheap_pop(&h);
        }
        assert_int_equal(n_step, 24);
        assert_int_equal(n_run, 24);
        assert_memory_equal(order_step, order_run, sizeof(order_step));
        kheap_free(&h);
}

static void test_hash(void **state)
{
        uint64_t a[] = {1, 2, 3}, b[] = {3, 2, 1};
        (void)state;
        assert_int_not_equal(hash_mix64(1), hash_mix64(2));
        assert_int_equal(hash_words(a, 3, 0), hash_words(a, 3, 0));
        assert_int_not_equal(hash_words(a, 3, 0), hash_words(b, 3, 0));
        assert_int_not_equal(hash_words(a, 2, 0), hash_words(a, 3, 0));
        assert_int_not_equal(hash_str("ab"), hash_str("ba"));
        /* a stack's frames: equal runs alike; the order within either chain, the order of the
           chains (a frame moved to the other), the length and the last frame all count */
        const uint64_t f[] = {0x401000, 0x402000, 0x403000, 0x404000, 0x405000};
        const uint64_t g[] = {0x403000, 0x402000, 0x401000, 0x404000, 0x405000};
        const uint64_t s[] = {0x402000, 0x401000, 0x403000, 0x404000, 0x405000};
        const uint64_t z[] = {0, 0};
        assert_true(hash_frames(f, 5) == hash_frames(f, 5));
        assert_true(hash_frames(f, 5) != hash_frames(g, 5));
        assert_true(hash_frames(f, 5) != hash_frames(s, 5));
        assert_true(hash_frames(f, 5) != hash_frames(f, 4));
        assert_true(hash_frames(f, 4) != hash_frames(f, 3));
        assert_true(hash_frames(z, 1) != hash_frames(z, 2));
        assert_true(hash_frames(z, 0) != hash_frames(z, 1));
        /* FNV-1a's published vectors, and hash_str built on it */
        assert_true(hash_fnv1a("", 0, HASH_FNV_OFFSET) == 0xcbf29ce484222325ull);
        assert_true(hash_fnv1a("a", 1, HASH_FNV_OFFSET) == 0xaf63dc4c8601ec8cull);
        assert_true(hash_fnv1a_str("foobar", HASH_FNV_OFFSET) == 0x85944171f73967e8ull);
        assert_true(hash_str("foobar") == hash_mix64(0x85944171f73967e8ull));
        /* the half mixer is hash_mix64's first round */
        uint64_t x = 0x123456789abcdefull;
        uint64_t h = hash_mix64_half(x);
        h *= 0xc4ceb9fe1a85ec53ull;
        assert_true((h ^ (h >> 33)) == hash_mix64(x));
}

/* A note: name "GNU", type t, desc of n bytes 0xA0, 0xA1, ... at p; its size. */
static size_t put_note(uint8_t *p, uint32_t t, uint32_t n)
{
        uint32_t hdr[3] = {4, n, t};

        memcpy(p, hdr, 12);
        memcpy(p + 12, "GNU", 4);
        for (uint32_t i = 0; i < n; i++)
                p[16 + i] = (uint8_t)(0xA0 + i);
        return 16 + ((n + 3u) & ~3u);
}

static void test_build_id_notes(void **state)
{
        uint8_t notes[128], id[32];
        size_t len = 0;
        (void)state;

        len += put_note(notes + len, 1, 16); /* NT_GNU_ABI_TAG: not it */
        len += put_note(notes + len, 3, 0);  /* an empty build-id: not it */
        size_t at = len;
        len += put_note(notes + len, 3, 20); /* the build-id */
        assert_int_equal(elf_build_id_from_notes(notes, len, id, sizeof(id)), 20);
        assert_int_equal(id[0], 0xA0);
        assert_int_equal(id[19], 0xB3);
        assert_int_equal(elf_build_id_from_notes(notes, len, id, 8), 8); /* cut to max */
        /* a note that runs past the area ends the search */
        assert_int_equal(elf_build_id_from_notes(notes, at + 30, id, sizeof(id)), 0);
        assert_int_equal(elf_build_id_from_notes(notes, 0, id, sizeof(id)), 0);
}

/* What dl_iterate_phdr finds in this program's own PT_NOTE segments, mapped. */
static int self_build_id(struct dl_phdr_info *info, size_t size, void *data)
{
        uint8_t *id = data;
        (void)size;
        if (info->dlpi_name && info->dlpi_name[0])
                return 0; /* the main program only */
        for (int i = 0; i < info->dlpi_phnum; i++) {
                const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
                if (ph->p_type != PT_NOTE)
                        continue;
                uint32_t n = elf_build_id_from_notes((const void *)(info->dlpi_addr + ph->p_vaddr),
                                                     ph->p_filesz, id + 1, 20);
                if (n) {
                        id[0] = (uint8_t)n;
                        return 1;
                }
        }
        return 0;
}

static void test_build_id_files(void **state)
{
        uint8_t want[21] = {0}, got[20];
        (void)state;

        /* this program's file (its sections) against its mapped segments */
        dl_iterate_phdr(self_build_id, want);
        if (!want[0])
                skip(); /* linked without --build-id: nothing to compare */
        assert_int_equal(elf_build_id_read("/proc/self/exe", got, sizeof(got)), want[0]);
        assert_memory_equal(got, want + 1, want[0]);

        /* an ELF64 file with program headers and no section headers: its PT_NOTE */
        char path[] = "/tmp/test_util_elfXXXXXX";
        int fd = mkstemp(path);
        assert_true(fd >= 0);
        uint8_t f[256] = {0};
        memcpy(f, "\177ELF", 4);
        f[4] = 2; /* ELFCLASS64 */
        f[5] = 1; /* little-endian */
        uint64_t phoff = 64;
        memcpy(f + 32, &phoff, 8);
        uint16_t phentsize = 56, phnum = 1;
        memcpy(f + 54, &phentsize, 2);
        memcpy(f + 56, &phnum, 2);
        uint32_t pt_note = 4;
        uint64_t off = 120, filesz = put_note(f + 120, 3, 20);
        memcpy(f + 64, &pt_note, 4);
        memcpy(f + 64 + 8, &off, 8);
        memcpy(f + 64 + 32, &filesz, 8);
        assert_int_equal(write(fd, f, sizeof(f)), (int)sizeof(f));
        assert_int_equal(elf_build_id_read_fd(fd, got, sizeof(got)), 20);
        assert_int_equal(got[0], 0xA0);
        /* the same note in a SHT_NOTE section of a file without program headers */
        memset(f, 0, sizeof(f));
        memcpy(f, "\177ELF", 4);
        f[4] = 2;
        f[5] = 1;
        uint64_t shoff = 64;
        uint16_t shentsize = 64, shnum = 2;
        memcpy(f + 40, &shoff, 8);
        memcpy(f + 58, &shentsize, 2);
        memcpy(f + 60, &shnum, 2);
        uint32_t sht_note = 7;
        off = 192;
        filesz = put_note(f + 192, 3, 20);
        memcpy(f + 128 + 4, &sht_note, 4); /* section 1; section 0 stays SHT_NULL */
        memcpy(f + 128 + 24, &off, 8);
        memcpy(f + 128 + 32, &filesz, 8);
        assert_int_equal(pwrite(fd, f, sizeof(f), 0), (int)sizeof(f));
        memset(got, 0, sizeof(got));
        assert_int_equal(elf_build_id_read_fd(fd, got, sizeof(got)), 20);
        assert_int_equal(got[19], 0xB3);
        /* not ELF, and not a regular file */
        f[0] = 0;
        assert_int_equal(pwrite(fd, f, 4, 0), 4);
        assert_int_equal(elf_build_id_read_fd(fd, got, sizeof(got)), 0);
        close(fd);
        unlink(path);
        assert_int_equal(elf_build_id_read("/dev/null", got, sizeof(got)), 0);
        assert_int_equal(elf_build_id_read("/nonexistent/x", got, sizeof(got)), 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_utf_round_trip),
                cmocka_unit_test(test_utf8_invalid_is_replacement),
                cmocka_unit_test(test_utf16_unpaired_and_cut),
                cmocka_unit_test(test_err_first_cause),
                cmocka_unit_test(test_kheap_merges_in_order),
                cmocka_unit_test(test_kheap_run_limit),
                cmocka_unit_test(test_hash),
                cmocka_unit_test(test_build_id_notes),
                cmocka_unit_test(test_build_id_files),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
