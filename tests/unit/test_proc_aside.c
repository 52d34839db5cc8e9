/* SPDX-License-Identifier: MIT */
/* test_proc_aside.c: the reads of /proc that a fork or an exec asks for, made on the reader
   thread of backend/linux/proc_aside.h: an answer in time is handed over; a read that blocks
   (a process's mmap_lock held by a thread that waits for a CPU) costs the drain one bounded
   wait, then nothing while the reader is still on it, and its late answer is never handed over
   as another question's. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "live_int.h"
#include "proc_aside.h"

/* The fake reader: answers "cmd PID" and uid PID + 1000; blocks on a pipe for the pids asked
   to block, until the test writes to it. */
static int gate[2] = {-1, -1};
static _Atomic uint32_t blocking_pid;
static atomic_int nr_reads;

static void fake_read(uint32_t pid, char *cmdline, size_t size, uint32_t *uid)
{
        atomic_fetch_add(&nr_reads, 1);
        if (pid == blocking_pid) {
                char c;
                while (read(gate[0], &c, 1) < 0) {
                }
        }
        snprintf(cmdline, size, "cmd %u", pid);
        *uid = pid + 1000;
}

static int setup(void **state)
{
        (void)state;
        assert_int_equal(pipe(gate), 0);
        blocking_pid = 0;
        atomic_store(&nr_reads, 0);
        return 0;
}

static int teardown(void **state)
{
        (void)state;
        close(gate[0]);
        close(gate[1]);
        return 0;
}

/* Has the reader block on pid: the drain's question for it goes unanswered after the wait, and
   the reader is on it (its read has begun) when this returns. */
static void block_reader_on(struct proc_aside *a, uint32_t pid)
{
        blocking_pid = pid;
        char buf[64] = "untouched";
        uint32_t uid = 99;
        assert_false(proc_aside_ask(a, pid, buf, sizeof(buf), &uid));
        assert_string_equal(buf, "untouched");
        assert_int_equal(uid, 99);
        while (atomic_load(&nr_reads) == 0)
                poll(NULL, 0, 1);
}

static void test_answer_in_time(void **state)
{
        (void)state;
        struct proc_aside *a;
        /* a long wait: on a loaded machine an ordinary reader thread may wait for a CPU */
        assert_int_equal(proc_aside_new(&a, fake_read, 60u * 1000 * 1000), 0);
        char buf[64];
        uint32_t uid = 0;
        assert_true(proc_aside_ask(a, 42, buf, sizeof(buf), &uid));
        assert_string_equal(buf, "cmd 42");
        assert_int_equal(uid, 1042);
        /* clipped to the caller's buffer */
        char small[4];
        assert_true(proc_aside_ask(a, 12345, small, sizeof(small), &uid));
        assert_string_equal(small, "cmd");
        assert_int_equal(uid, 13345);
        assert_int_equal(proc_aside_nr_late(a), 0);
        assert_int_equal(proc_aside_nr_busy(a), 0);
        proc_aside_free(a);
}

static void test_blocked_read_is_waited_for_once(void **state)
{
        (void)state;
        struct proc_aside *a;
        assert_int_equal(proc_aside_new(&a, fake_read, 2000), 0);
        /* the reader blocks: the drain waits 2 ms, then goes on without an answer */
        block_reader_on(a, 7);
        assert_int_equal(proc_aside_nr_late(a), 1);
        /* the reader is still on it: no wait, no question */
        char buf[64];
        uint32_t uid;
        assert_false(proc_aside_ask(a, 8, buf, sizeof(buf), &uid));
        assert_false(proc_aside_ask(a, 9, buf, sizeof(buf), &uid));
        assert_int_equal(proc_aside_nr_busy(a), 2);
        assert_int_equal(atomic_load(&nr_reads), 1);
        /* the lock is let go: the late answer (pid 7's) is dropped, the next question answered */
        assert_int_equal(write(gate[1], "x", 1), 1);
        blocking_pid = 0;
        bool is_answered = false;
        for (int i = 0; i < 60000 && !is_answered; i++) {
                is_answered = proc_aside_ask(a, 10, buf, sizeof(buf), &uid);
                if (!is_answered)
                        poll(NULL, 0, 1); /* the reader is still on pid 7, or answers late */
        }
        assert_true(is_answered);
        assert_string_equal(buf, "cmd 10");
        assert_int_equal(uid, 1010);
        proc_aside_free(a);
}

/* Stopped while its reader is blocked: the stop waits for the read, then the thread ends. */
static void test_free_while_blocked(void **state)
{
        (void)state;
        struct proc_aside *a;
        assert_int_equal(proc_aside_new(&a, fake_read, 1000), 0);
        block_reader_on(a, 5);
        assert_int_equal(write(gate[1], "x", 1), 1);
        proc_aside_free(a);
        assert_int_equal(atomic_load(&nr_reads), 1);
}

/* The live source's reader: this process's command line and owner. */
static void test_reads_proc(void **state)
{
        (void)state;
        char buf[4097];
        uint32_t uid = 0;
        proc_read_both((uint32_t)getpid(), buf, sizeof(buf), &uid);
        assert_non_null(strstr(buf, "test_proc_aside"));
        assert_int_equal(uid, (uint32_t)geteuid());
        /* a process that is gone: nothing known */
        proc_read_both(0x7FFFFFF0u, buf, sizeof(buf), &uid);
        assert_string_equal(buf, "");
        assert_int_equal(uid, PERF_CONV_NO_UID);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_answer_in_time, setup, teardown),
                cmocka_unit_test_setup_teardown(test_blocked_read_is_waited_for_once, setup,
                                                teardown),
                cmocka_unit_test_setup_teardown(test_free_while_blocked, setup, teardown),
                cmocka_unit_test(test_reads_proc),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
