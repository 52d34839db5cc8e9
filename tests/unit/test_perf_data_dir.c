/* SPDX-License-Identifier: MIT */
/* test_perf_data_dir.c: perf.data directories (perf record --threads; perf_data_dir.c) built by
   hand: the header's file data, then each data.N's records, by N; the conversion's records in
   time order across the files; what is refused (a data.N that is a symbolic link or a FIFO, a
   directory without data) with a message naming the file, and a data.N cut short read up to
   its damage with the file and the offset said. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "etl_reader.h"
#include "etw/ntwmi.h"
#include "perf_data.h"
#include "perf_fb.h"
#include "perf_data_conv.h"

#define SAMPLE_SIZE (8u + 5u * 8u)
#define DIR_FORMAT  24u /* HEADER_DIR_FORMAT */

/* A cpu-clock sample of id 7 at ip, at time t: IDENTIFIER|IP|TID|TIME|PERIOD. */
static void fb_sample(struct fb *f, uint64_t ip, uint64_t t)
{
        fb_u32(f, PERF_RECORD_SAMPLE);
        fb_u16(f, PERF_RECORD_MISC_USER);
        fb_u16(f, SAMPLE_SIZE);
        fb_u64(f, 7);
        fb_u64(f, ip);
        fb_u32(f, 42);
        fb_u32(f, 43);
        fb_u64(f, t);
        fb_u64(f, 10000);
}

/* The data file: the header, one cpu-clock attr (id 7), the samples of ips[0..nr) at times
   times[0..nr), and the DIR_FORMAT feature (version 1), as perf record --threads writes it. */
static void build_header_file(struct fb *f, const uint64_t *ips, const uint64_t *times, uint32_t nr)
{
        memset(f, 0, sizeof(*f));
        const uint32_t attr_size = 112;
        fb_put(f, "PERFILE2", 8);
        fb_u64(f, 104);
        fb_u64(f, attr_size + 16);
        uint32_t sections = f->n;
        f->n = 104;
        uint32_t ids = f->n;
        fb_u64(f, 7);
        uint32_t attrs = f->n;
        uint8_t a[112] = {0};
        uint32_t type = PERF_TYPE_SOFTWARE;
        uint64_t config = PERF_COUNT_SW_CPU_CLOCK, period = 10000,
                 st = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                      PERF_SAMPLE_PERIOD,
                 flags = 1ull << 18 | 1ull << 20; /* sample_id_all, exclude_guest */
        memcpy(a + 0, &type, 4);
        memcpy(a + 4, &attr_size, 4);
        memcpy(a + 8, &config, 8);
        memcpy(a + 16, &period, 8);
        memcpy(a + 24, &st, 8);
        memcpy(a + 40, &flags, 8);
        fb_put(f, a, attr_size);
        fb_u64(f, ids);
        fb_u64(f, 8);
        uint32_t data = f->n;
        for (uint32_t i = 0; i < nr; i++)
                fb_sample(f, ips[i], times[i]);
        uint32_t data_end = f->n;
        /* the feature bitmap (DIR_FORMAT's bit), then its section and its u64 version */
        uint64_t bits = 1ull << DIR_FORMAT;
        memcpy(f->b + 72, &bits, 8);
        uint32_t section = f->n;
        fb_u64(f, section + 16);
        fb_u64(f, 8);
        fb_u64(f, 1);
        fb_u64_at(f, sections, attrs);
        fb_u64_at(f, sections + 8, attr_size + 16);
        fb_u64_at(f, sections + 16, data);
        fb_u64_at(f, sections + 24, data_end - data);
}

static void write_file(const char *dir, const char *name, const void *p, size_t n)
{
        char path[512];
        snprintf(path, sizeof(path), "%s/%s", dir, name);
        FILE *fp = fopen(path, "wb");
        assert_non_null(fp);
        assert_int_equal(fwrite(p, 1, n, fp), n);
        assert_int_equal(fclose(fp), 0);
}

/* A data.N file: samples of ips from ip0, nr of them, the first at t0, every step ns. */
static void write_part(const char *dir, const char *name, uint64_t ip0, uint32_t nr, uint64_t t0,
                       uint64_t step)
{
        struct fb *f = calloc(1, sizeof(*f));
        for (uint32_t i = 0; i < nr; i++)
                fb_sample(f, ip0 + i, t0 + i * step);
        write_file(dir, name, f->b, f->n);
        free(f);
}

/* A directory: data with 3 samples (ips 0x100..), and data.N for the N of parts, made in that
   order (neither N's order nor its reverse, which tmpfs lists; ext4 lists by hash), with 2
   samples each (ips 0x1000 + N * 0x10 ..), all interleaved in time; and names perf does not
   read (data.x, data.01, other). */
static const uint32_t parts[] = {5, 0, 11, 3, 8, 1, 10, 2};
#define NR_PARTS (sizeof(parts) / sizeof(parts[0]))
static void build_dir(char *dir)
{
        assert_non_null(mkdtemp(dir));
        struct fb *f = calloc(1, sizeof(*f));
        uint64_t ips[] = {0x100, 0x101, 0x102}, times[] = {1000, 1040, 1080};
        build_header_file(f, ips, times, 3);
        write_file(dir, "data", f->b, f->n);
        free(f);
        for (uint32_t k = 0; k < NR_PARTS; k++) {
                char name[16];
                snprintf(name, sizeof(name), "data.%u", parts[k]);
                write_part(dir, name, 0x1000 + parts[k] * 0x10, 2, 1001 + parts[k], 50);
        }
        write_file(dir, "data.x", "junk", 4);
        write_file(dir, "data.01", "junk", 4);
        write_file(dir, "other", "junk", 4);
}

static void remove_dir(const char *dir)
{
        char cmd[600];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        assert_int_equal(system(cmd), 0);
}

/* The samples' ips in reader order. */
static uint32_t read_ips(struct perf_data *pd, uint64_t *ips, uint32_t cap, int *rc_end,
                         struct err_msg *err)
{
        struct perf_data_record rec;
        uint32_t n = 0;
        int rc;
        while ((rc = perf_data_next(pd, &rec, err)) == 1)
                if (rec.type == PERF_RECORD_SAMPLE && n < cap) {
                        memcpy(&ips[n], rec.data + 16, 8);
                        n++;
                }
        *rc_end = rc;
        return n;
}

static void test_dir_records_by_part(void **state)
{
        (void)state;
        char dir[] = "/tmp/test-perf-dir-XXXXXX";
        build_dir(dir);
        assert_true(perf_data_path_is_perf_data(dir));
        struct perf_data *pd = NULL;
        struct err_msg err;
        assert_int_equal(perf_data_open_file(&pd, dir, &err), 0);
        assert_true(perf_data_info(pd)->features[0] >> DIR_FORMAT & 1);
        uint64_t ips[32];
        int rc;
        uint32_t n = read_ips(pd, ips, 32, &rc, &err);
        assert_int_equal(rc, 0);
        /* data's, then each data.N's by N */
        uint64_t want[32];
        uint32_t nr_want = 0;
        for (uint32_t i = 0; i < 3; i++)
                want[nr_want++] = 0x100 + i;
        for (uint32_t number = 0; number < 12; number++)
                for (uint32_t k = 0; k < NR_PARTS; k++)
                        if (parts[k] == number) {
                                want[nr_want++] = 0x1000 + number * 0x10;
                                want[nr_want++] = 0x1000 + number * 0x10 + 1;
                        }
        assert_int_equal(n, nr_want);
        for (uint32_t i = 0; i < n; i++)
                if (ips[i] != want[i])
                        fail_msg("record %u: ip 0x%llx, 0x%llx expected", i,
                                 (unsigned long long)ips[i], (unsigned long long)want[i]);
        /* again from the start: the data file's records first */
        perf_data_rewind(pd);
        assert_int_equal(read_ips(pd, ips, 32, &rc, &err), n);
        assert_int_equal(ips[0], 0x100);
        assert_int_equal(ips[n - 1], 0x10b1);
        perf_data_close(pd);
        remove_dir(dir);
}

/* Converted (as a replay reads it): every sample, in time order across the files. */
static void test_dir_converted_in_time_order(void **state)
{
        (void)state;
        char dir[] = "/tmp/test-perf-dir-XXXXXX";
        build_dir(dir);
        struct etl_reader *r = NULL;
        struct etl_error err;
        int rc = perf_data_etl_reader_open(&r, dir, &err);
        if (rc < 0)
                fail_msg("%s", err.msg);
        struct etl_record rec;
        uint32_t n = 0;
        uint64_t prev = 0;
        while (etl_reader_next(r, &rec) == 1) {
                if (rec.hook_id != PERFINFO_LOG_TYPE_SAMPLED_PROFILE)
                        continue;
                uint64_t ip;
                memcpy(&ip, rec.payload, 8);
                assert_true((ip >= 0x100 && ip < 0x103) || (ip >= 0x1000 && ip < 0x10c0));
                assert_true(rec.timestamp >= prev);
                prev = rec.timestamp;
                n++;
        }
        etl_reader_close(r);
        assert_int_equal(n, 3 + 2 * NR_PARTS);
        remove_dir(dir);
}

static void expect_refused(const char *dir, const char *what)
{
        struct perf_data *pd = NULL;
        struct err_msg err;
        assert_true(perf_data_open_file(&pd, dir, &err) < 0);
        assert_null(pd);
        if (!strstr(err.msg, what))
                fail_msg("the message \"%s\" does not say \"%s\"", err.msg, what);
}

static void test_dir_refusals(void **state)
{
        (void)state;
        char dir[] = "/tmp/test-perf-dir-XXXXXX";
        build_dir(dir);
        char path[600], target[600];
        /* a data.N that is a symbolic link (to a regular file): not followed */
        snprintf(path, sizeof(path), "%s/data.4", dir);
        snprintf(target, sizeof(target), "%s/data.0", dir);
        assert_int_equal(symlink(target, path), 0);
        expect_refused(dir, "data.4: not a regular file");
        unlink(path);
        /* a FIFO: refused without opening it (the open would not return without a writer) */
        assert_int_equal(mkfifo(path, 0600), 0);
        expect_refused(dir, "data.4: not a regular file");
        unlink(path);
        /* the header's file a symbolic link */
        snprintf(path, sizeof(path), "%s/data", dir);
        snprintf(target, sizeof(target), "%s/data.moved", dir);
        assert_int_equal(rename(path, target), 0);
        assert_int_equal(symlink(target, path), 0);
        assert_false(perf_data_path_is_perf_data(dir));
        expect_refused(dir, "not a regular file");
        unlink(path);
        /* no data */
        assert_false(perf_data_path_is_perf_data(dir));
        expect_refused(dir, "its file data");
        expect_refused(dir, "is missing");
        remove_dir(dir);
}

/* A data.N cut short: the records before the damage, then the file and the offset said. */
static void test_dir_part_cut_short(void **state)
{
        (void)state;
        char dir[] = "/tmp/test-perf-dir-XXXXXX";
        build_dir(dir);
        char path[600];
        snprintf(path, sizeof(path), "%s/data.3", dir);
        assert_int_equal(truncate(path, SAMPLE_SIZE + 20), 0);
        struct perf_data *pd = NULL;
        struct err_msg err;
        assert_int_equal(perf_data_open_file(&pd, dir, &err), 0);
        uint64_t ips[32];
        int rc;
        uint32_t n = read_ips(pd, ips, 32, &rc, &err);
        assert_int_equal(rc, -EBADMSG);
        assert_int_equal(n, 3 + 2 + 2 + 2 + 1); /* data, data.0, .1, .2, data.3's first */
        assert_int_equal(ips[n - 1], 0x1030);
        assert_int_equal(err.offset, SAMPLE_SIZE);
        if (!strstr(err.msg, "data.3: ") || !strstr(err.msg, "at 48"))
                fail_msg("the message \"%s\" does not name data.3 and offset 48", err.msg);
        perf_data_close(pd);
        remove_dir(dir);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_dir_records_by_part),
                cmocka_unit_test(test_dir_converted_in_time_order),
                cmocka_unit_test(test_dir_refusals),
                cmocka_unit_test(test_dir_part_cut_short),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
