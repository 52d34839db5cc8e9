/* SPDX-License-Identifier: MIT */
/* test_etl_flush.c: the flusher's batches through O_DIRECT (backend/etl/etl_flush.c): which
   batches go that way, the bytes they leave in the file, and the descriptor's life. Whether a
   batch went through O_DIRECT shows in the page cache: such a write leaves no page of the file
   there, a write through the page cache leaves every one (mincore of a mapping of the file). */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "etl_flush.h"
#include "log_file.h"

#define BUF   8192u
#define NBUFS 4u

static char dir[64];
static bool has_direct;                  /* this directory's file system takes O_DIRECT */
static struct etl_flush_bufs *fill_bufs; /* fill's aligned buffers */

static int setup(void **state)
{
        (void)state;
        strcpy(dir, "/tmp/etwtop-flush-XXXXXX");
        if (!mkdtemp(dir))
                return -1;
        char probe[128];
        snprintf(probe, sizeof(probe), "%s/probe", dir);
        int fd = open(probe, O_WRONLY | O_CREAT | O_DIRECT, 0600);
        has_direct = fd >= 0;
        if (fd >= 0)
                close(fd);
        unlink(probe);
        return 0;
}

static int teardown(void **state)
{
        (void)state;
        etl_flush_bufs_free(fill_bufs);
        char cmd[128];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        return system(cmd) == 0 ? 0 : -1;
}

static int new_file(const char *name)
{
        char path[128];
        snprintf(path, sizeof(path), "%s/%s", dir, name);
        int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
        assert_true(fd >= 0);
        return fd;
}

/* NBUFS buffers filled with 'a', 'b', ... (plus seed); aligned ones from the flusher's own
   allocation, or each one byte past an aligned block (a buffer O_DIRECT cannot take). */
static void fill(uint8_t *bufs[NBUFS], uint8_t *mem[NBUFS], bool is_aligned, int seed)
{
        if (!fill_bufs)
                fill_bufs = etl_flush_bufs_new(BUF + ETL_FLUSH_DIRECT_ALIGN);
        assert_non_null(fill_bufs);
        for (uint32_t i = 0; i < NBUFS; i++) {
                mem[i] = etl_flush_bufs_take(fill_bufs);
                assert_non_null(mem[i]);
                assert_int_equal((uintptr_t)mem[i] % ETL_FLUSH_DIRECT_ALIGN, 0);
                bufs[i] = is_aligned ? mem[i] : mem[i] + 1;
                memset(bufs[i], 'a' + seed + (int)i, BUF);
        }
}

static void unfill(uint8_t *mem[NBUFS])
{
        for (uint32_t i = 0; i < NBUFS; i++)
                etl_flush_bufs_give(fill_bufs, mem[i]);
}

/* The pages of fd's first len bytes that the page cache holds. */
static uint32_t nr_cached(int fd, size_t len)
{
        void *m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
        assert_true(m != MAP_FAILED);
        size_t pages = (len + 4095) / 4096;
        unsigned char *vec = calloc(pages, 1);
        assert_non_null(vec);
        assert_int_equal(mincore(m, len, vec), 0);
        uint32_t n = 0;
        for (size_t i = 0; i < pages; i++)
                n += vec[i] & 1;
        free(vec);
        munmap(m, len);
        return n;
}

/* Buffers first.. of the file each hold their letter (plus seed). */
static void check_bytes(int fd, uint64_t first, int seed)
{
        uint8_t *b = malloc(BUF);
        assert_non_null(b);
        for (uint32_t i = 0; i < NBUFS; i++) {
                assert_int_equal(pread(fd, b, BUF, (off_t)((first + i) * BUF)), (ssize_t)BUF);
                for (uint32_t j = 0; j < BUF; j += 511)
                        assert_int_equal(b[j], (uint8_t)('a' + seed + (int)i));
                assert_int_equal(b[BUF - 1], (uint8_t)('a' + seed + (int)i));
        }
        free(b);
}

static void batch(int fd, uint8_t *bufs[NBUFS], uint64_t first, struct etl_flush_ahead *ahead)
{
        uint32_t done = 0;
        int full = -1;
        uint64_t avail = 0;
        assert_int_equal(
                etl_flush_batch(fd, bufs, NBUFS, BUF, first, 0, ahead, &done, &full, &avail), 0);
        assert_int_equal(done, NBUFS);
        assert_int_equal(full, LOG_FILE_ROOM);
}

/* Ends the test as skipped (cmocka's skip leaves it) where the directory's file system refuses
   O_DIRECT: there is nothing direct to see. */
static void skip_without_direct(void)
{
        if (!has_direct) {
                fprintf(stderr, "skipped: %s's file system refuses O_DIRECT\n", dir);
                skip();
        }
}

/* Aligned buffers at an aligned place go through O_DIRECT: none of their pages in the page
   cache, every byte in the file, the descriptor kept for the next batch and closed by the
   release. */
static void test_direct_batch(void **state)
{
        (void)state;
        skip_without_direct();
        int fd = new_file("direct.etl");
        uint8_t *bufs[NBUFS], *mem[NBUFS];
        fill(bufs, mem, true, 0);
        struct etl_flush_ahead ahead = {0};
        batch(fd, bufs, 1, &ahead);
        assert_int_equal(ahead.direct_error, 0);
        assert_true(ahead.direct_fd1 > 0);
        int d = ahead.direct_fd1 - 1;
        assert_int_equal(nr_cached(fd, (1 + NBUFS) * BUF), 0);
        /* the next batch through the same descriptor */
        batch(fd, bufs, 1 + NBUFS, &ahead);
        assert_int_equal(ahead.direct_fd1, d + 1);
        assert_int_equal(nr_cached(fd, (1 + 2 * NBUFS) * BUF), 0);
        check_bytes(fd, 1, 0);
        check_bytes(fd, 1 + NBUFS, 0);
        struct stat st;
        assert_int_equal(fstat(fd, &st), 0);
        assert_int_equal(st.st_size, (1 + 2 * NBUFS) * BUF);
        assert_int_equal(etl_flush_release_ahead(fd, &ahead), 0);
        assert_int_equal(ahead.direct_fd1, 0);
        assert_int_equal(fcntl(d, F_GETFD), -1); /* closed */
        unfill(mem);
        close(fd);
}

/* What O_DIRECT cannot take goes through the page cache, every page of it there: buffers off
   the alignment, a place off it (a buffer size that is not a multiple of a page), and any batch
   while the flusher is behind. */
static void test_buffered_batches(void **state)
{
        (void)state;
        uint8_t *bufs[NBUFS], *mem[NBUFS];
        uint32_t pages = NBUFS * BUF / 4096;

        int fd = new_file("unaligned.etl");
        fill(bufs, mem, false, 0);
        struct etl_flush_ahead ahead = {0};
        batch(fd, bufs, 0, &ahead);
        assert_int_equal(ahead.direct_fd1, 0);
        assert_int_equal(nr_cached(fd, NBUFS * BUF), pages);
        check_bytes(fd, 0, 0);
        etl_flush_release_ahead(fd, &ahead);
        unfill(mem);
        close(fd);

        fd = new_file("behind.etl");
        fill(bufs, mem, true, 1);
        ahead = (struct etl_flush_ahead){.is_behind = true};
        batch(fd, bufs, 0, &ahead);
        assert_int_equal(ahead.direct_fd1, 0);
        assert_int_equal(nr_cached(fd, NBUFS * BUF), pages);
        check_bytes(fd, 0, 1);
        /* caught up: the next batch goes directly again (where it can) */
        ahead.is_behind = false;
        batch(fd, bufs, NBUFS, &ahead);
        assert_int_equal(ahead.direct_fd1 > 0, has_direct);
        check_bytes(fd, NBUFS, 1);
        etl_flush_release_ahead(fd, &ahead);
        unfill(mem);
        close(fd);

        /* an odd place: 4 KiB buffers from buffer 1 of a file of 6 KiB ones would be; here
           2 KiB past an aligned block */
        fd = new_file("odd.etl");
        fill(bufs, mem, true, 2);
        uint8_t *one[1] = {bufs[0]};
        uint32_t done = 0;
        int full = 0;
        uint64_t avail = 0;
        ahead = (struct etl_flush_ahead){0};
        assert_int_equal(etl_flush_batch(fd, one, 1, 6144, 1, 0, &ahead, &done, &full, &avail), 0);
        assert_int_equal(done, 1);
        assert_int_equal(ahead.direct_fd1, 0);
        uint8_t back[6144];
        assert_int_equal(pread(fd, back, sizeof(back), 6144), (ssize_t)sizeof(back));
        assert_int_equal(memcmp(back, bufs[0], sizeof(back)), 0);
        etl_flush_release_ahead(fd, &ahead);
        unfill(mem);
        close(fd);
}

/* The descriptor is of one file: when the flusher's descriptor number is another file's later
   (closed, and the number given again), the batch goes to that file, never to the first one
   through the descriptor kept. */
static void test_direct_other_file(void **state)
{
        (void)state;
        skip_without_direct();
        uint8_t *bufs[NBUFS], *mem[NBUFS];
        fill(bufs, mem, true, 0);
        int fd = new_file("first.etl");
        struct etl_flush_ahead ahead = {0};
        batch(fd, bufs, 0, &ahead);
        assert_true(ahead.direct_fd1 > 0);
        /* the same number, another file */
        int other = new_file("second.etl");
        assert_int_equal(dup2(other, fd), fd);
        close(other);
        unfill(mem);
        fill(bufs, mem, true, 4);
        batch(fd, bufs, 0, &ahead);
        check_bytes(fd, 0, 4);
        char path[128];
        snprintf(path, sizeof(path), "%s/first.etl", dir);
        int first = open(path, O_RDONLY);
        assert_true(first >= 0);
        check_bytes(first, 0, 0); /* as the first batch left it */
        close(first);
        etl_flush_release_ahead(fd, &ahead);
        unfill(mem);
        close(fd);
}

/* The writer's buffers: aligned for O_DIRECT, cut from 2 MiB-aligned chunks (a huge page's
   place), none overlapping another, across chunks; one given back is the next taken; odd sizes
   rounded up to the alignment, and sizes past a chunk's each in a chunk of their own. */
static void test_bufs(void **state)
{
        (void)state;
        static const uint32_t sizes[] = {65536, 8192 + 8, 3u << 20};
        for (uint32_t z = 0; z < sizeof(sizes) / sizeof(sizes[0]); z++) {
                uint32_t size = sizes[z];
                struct etl_flush_bufs *b = etl_flush_bufs_new(size);
                assert_non_null(b);
                enum { N = 80 };
                /* 65536: more than two chunks' 32; past a chunk: three chunks */
                uint32_t n = size > (2u << 20) ? 3 : N;
                uint8_t *p[N];
                for (uint32_t i = 0; i < n; i++) {
                        p[i] = etl_flush_bufs_take(b);
                        assert_non_null(p[i]);
                        assert_int_equal((uintptr_t)p[i] % ETL_FLUSH_DIRECT_ALIGN, 0);
                        memset(p[i], (int)i + 1, size); /* every byte of it is there */
                        for (uint32_t k = 0; k < i; k++)
                                assert_true(p[i] + size <= p[k] || p[k] + size <= p[i]);
                }
                assert_int_equal((uintptr_t)p[0] % (2u << 20), 0);
                for (uint32_t i = 0; i < n; i++) /* none written over by another */
                        assert_int_equal(p[i][size - 1], (uint8_t)(i + 1));
                etl_flush_bufs_give(b, p[n - 1]);
                etl_flush_bufs_give(b, p[1]);
                assert_ptr_equal(etl_flush_bufs_take(b), p[1]);
                assert_ptr_equal(etl_flush_bufs_take(b), p[n - 1]);
                uint8_t *q = etl_flush_bufs_take(b); /* a new one */
                assert_non_null(q);
                for (uint32_t i = 0; i < n; i++)
                        assert_true(q + size <= p[i] || p[i] + size <= q);
                etl_flush_bufs_free(b);
        }
        etl_flush_bufs_free(NULL);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_direct_batch),
                cmocka_unit_test(test_buffered_batches),
                cmocka_unit_test(test_direct_other_file),
                cmocka_unit_test(test_bufs),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
