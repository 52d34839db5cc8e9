/* SPDX-License-Identifier: MIT */
/* test_proc_aside.c: the reads of /proc that a fork or an exec asks for, made on the reader
   thread of backend/linux/proc_aside.h: an answer in time is handed over; a read that blocks
   (a process's mmap_lock held by a thread that waits for a CPU) costs the drain one bounded
   wait, then nothing while the reader is still on it, and its late answer is never handed over
   as another question's; a round's processes named ahead are read on one wake-up and their
   questions answered without a wait, for that round only. */
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
#include "thread_state.h"

/* The fake reader: answers "cmd PID" and uid PID + 1000; blocks on a pipe for the pids asked
   to block, until the test writes to it. */
static int gate[2] = {-1, -1};
static _Atomic uint32_t blocking_pid;
static atomic_int nr_reads;
static atomic_int reader_tid; /* the reader thread's, once it has read */

static void fake_read(uint32_t pid, char *cmdline, size_t size, uint32_t *uid)
{
        atomic_store(&reader_tid, (int)gettid());
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

/* Waits (at most a minute) until the reader has made n reads. */
static void wait_reads(int n)
{
        for (int i = 0; i < 60000 && atomic_load(&nr_reads) < n; i++)
                poll(NULL, 0, 1);
        assert_int_equal(atomic_load(&nr_reads), n);
}

/* A round's new processes named ahead: each read once, and the round's questions (twice for
   one, as a fork then its exec asks) take those answers without waiting. */
static void test_prefetch_answers_without_wait(void **state)
{
        (void)state;
        struct proc_aside *a;
        assert_int_equal(proc_aside_new(&a, fake_read, 60u * 1000 * 1000), 0);
        const uint32_t pids[] = {31, 32, 33, 32};
        proc_aside_prefetch(a, pids, 4);
        wait_reads(3);
        /* and the third answer handed over: the reader counts a read as it begins, and sleeps
           again only once the round's answers are out */
        bool has_slept = false;
        for (int i = 0; i < 60000 && !(has_slept = thread_sleeps(atomic_load(&reader_tid))); i++)
                poll(NULL, 0, 1);
        /* seen asleep once: a second look may find it awake on a busy machine */
        assert_true(has_slept);
        char buf[64];
        uint32_t uid = 0;
        for (uint32_t pid = 31; pid <= 33; pid++) {
                assert_true(proc_aside_ask(a, pid, buf, sizeof(buf), &uid));
                char want[16];
                snprintf(want, sizeof(want), "cmd %u", pid);
                assert_string_equal(buf, want);
                assert_int_equal(uid, pid + 1000);
        }
        assert_true(proc_aside_ask(a, 32, buf, sizeof(buf), &uid));
        assert_string_equal(buf, "cmd 32");
        assert_int_equal(proc_aside_nr_waits(a), 0);
        assert_int_equal(atomic_load(&nr_reads), 3);
        /* the next round reads again: the process may have exec'd since */
        proc_aside_forget(a);
        assert_true(proc_aside_ask(a, 32, buf, sizeof(buf), &uid));
        assert_string_equal(buf, "cmd 32");
        assert_int_equal(atomic_load(&nr_reads), 4);
        assert_int_equal(proc_aside_nr_late(a), 0);
        assert_int_equal(proc_aside_nr_busy(a), 0);
        proc_aside_free(a);
}

/* More processes than the queue holds: those named past its room are asked for as their
   records come, every one answered with its own command line. */
static void test_prefetch_past_the_queue(void **state)
{
        (void)state;
        struct proc_aside *a;
        assert_int_equal(proc_aside_new(&a, fake_read, 60u * 1000 * 1000), 0);
        uint32_t pids[PROC_ASIDE_QUEUE + 20];
        for (uint32_t i = 0; i < PROC_ASIDE_QUEUE + 20; i++)
                pids[i] = 100 + i;
        proc_aside_prefetch(a, pids, PROC_ASIDE_QUEUE + 20);
        for (uint32_t i = 0; i < PROC_ASIDE_QUEUE + 20; i++) {
                char buf[64], want[16];
                uint32_t uid = 0;
                assert_true(proc_aside_ask(a, pids[i], buf, sizeof(buf), &uid));
                snprintf(want, sizeof(want), "cmd %u", pids[i]);
                assert_string_equal(buf, want);
                assert_int_equal(uid, pids[i] + 1000);
        }
        proc_aside_free(a);
}

/* A read-ahead keeps the answers held for the drain: with one held and the reader then on a
   read that blocks, a read-ahead of a full queue's processes puts in what fits beside it, and
   the drain's question for the held one is still answered (a read-ahead that dropped it to put
   in one more left the queue full of unanswered questions: that question found no room, as
   test_prefetch_past_the_queue did once in a fresh clone's suite). */
static void test_prefetch_keeps_held_answers(void **state)
{
        (void)state;
        struct proc_aside *a;
        assert_int_equal(proc_aside_new(&a, fake_read, 60u * 1000 * 1000), 0);
        char buf[64];
        uint32_t uid = 0;
        assert_true(proc_aside_ask(a, 1, buf, sizeof(buf), &uid));
        /* the first read ahead blocks: the reader answers nothing more meanwhile */
        blocking_pid = 500;
        uint32_t pids[PROC_ASIDE_QUEUE];
        for (uint32_t i = 0; i < PROC_ASIDE_QUEUE; i++)
                pids[i] = 500 + i;
        proc_aside_prefetch(a, pids, PROC_ASIDE_QUEUE);
        while (atomic_load(&nr_reads) < 2)
                poll(NULL, 0, 1);
        assert_true(proc_aside_ask(a, 1, buf, sizeof(buf), &uid));
        assert_string_equal(buf, "cmd 1");
        assert_int_equal(uid, 1001);
        assert_int_equal(proc_aside_nr_busy(a), 0);
        assert_int_equal(write(gate[1], "x", 1), 1);
        proc_aside_free(a);
}

/* A question dropped at a round's end while the reader is still on it keeps its entry until
   the reader is done: the next rounds' questions fill the rest of the queue, and every answer
   is its own pid's. */
static void test_forgotten_question_keeps_its_entry(void **state)
{
        (void)state;
        struct proc_aside *a;
        assert_int_equal(proc_aside_new(&a, fake_read, 60u * 1000 * 1000), 0);
        blocking_pid = 500;
        const uint32_t first = 500;
        proc_aside_prefetch(a, &first, 1);
        wait_reads(1);
        proc_aside_forget(a);
        uint32_t pids[PROC_ASIDE_QUEUE];
        for (uint32_t i = 0; i < PROC_ASIDE_QUEUE; i++)
                pids[i] = 600 + i;
        /* one entry is the reader's: all but the last fit */
        proc_aside_prefetch(a, pids, PROC_ASIDE_QUEUE);
        assert_int_equal(write(gate[1], "x", 1), 1);
        wait_reads(PROC_ASIDE_QUEUE);
        blocking_pid = 0;
        for (uint32_t i = 0; i < PROC_ASIDE_QUEUE - 1; i++) {
                char buf[64], want[16];
                uint32_t uid = 0;
                assert_true(proc_aside_ask(a, pids[i], buf, sizeof(buf), &uid));
                snprintf(want, sizeof(want), "cmd %u", pids[i]);
                assert_string_equal(buf, want);
        }
        /* the last was not put in: read when asked */
        assert_int_equal(atomic_load(&nr_reads), PROC_ASIDE_QUEUE);
        char buf[64];
        uint32_t uid = 0;
        assert_true(proc_aside_ask(a, pids[PROC_ASIDE_QUEUE - 1], buf, sizeof(buf), &uid));
        assert_int_equal(atomic_load(&nr_reads), PROC_ASIDE_QUEUE + 1);
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
                cmocka_unit_test_setup_teardown(test_prefetch_answers_without_wait, setup,
                                                teardown),
                cmocka_unit_test_setup_teardown(test_prefetch_past_the_queue, setup, teardown),
                cmocka_unit_test_setup_teardown(test_prefetch_keeps_held_answers, setup, teardown),
                cmocka_unit_test_setup_teardown(test_forgotten_question_keeps_its_entry, setup,
                                                teardown),
                cmocka_unit_test(test_reads_proc),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
