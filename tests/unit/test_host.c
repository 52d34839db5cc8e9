/* SPDX-License-Identifier: MIT */
/* test_host.c: cmocka tests of the session host (issue 14): its protocol parsed from bytes, and
   sessions across processes: found by name from another process, listed by QueryAllTraces,
   consumed by two real-time consumers at once, a slow consumer losing buffers while a fast one
   loses none, a consumer, a starter and the host killed, an unprivileged user refused, malformed
   messages survived, two hosts never on one directory, a session bound to its starter, the
   systemd unit verified; what the host does for a client it could not do itself (capabilities
   dropped, no_new_privs, other mount and pid namespaces) refused, and no client holding it up
   (trickled requests, consumers that never read) or taking its memory (MaximumBuffers, kept
   windows, every session's queues). The other processes are this program again ("helper" mode);
   every host runs on a private runtime directory of this test. Live kernel sessions skip without
   perf privileges. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "etw/etwtop_ext.h"
#include "etw/evntrace.h"
#include "host.h"
#include "host_proto.h"
#include "live_source.h"
#include "rt_props.h"
#include "fifo_permitted.h"
#include "live_nice.h"

/* ---- shared helpers ----------------------------------------------------------------------- */

static char tmp_dir[64];  /* files */
static char host_dir[64]; /* the runtime directory */
static char self_exe[PATH_MAX];

/* rt_props_init, with file (when given) as the log file's name. */
static void props_init(struct rt_props *pr, ULONG mode, const char *file)
{
        rt_props_init(pr, mode);
        if (file)
                snprintf(pr->log_file_name, sizeof(pr->log_file_name), "%.1000s", file);
}

static void sleep_ms(long ms)
{
        struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
        nanosleep(&ts, NULL);
}

static void tmp_path(char *out, size_t size, const char *name)
{
        snprintf(out, size, "%.60s/%.50s", tmp_dir, name);
}

/* A kernel logger of its own name (EVENT_TRACE_SYSTEM_LOGGER_MODE): profile, context switches,
   small buffers so that many complete. file NULL: real time only. */
static ULONG start_kernel_sized(CONTROLTRACE_ID *h, const char *name, const char *file,
                                ULONG max_buffers, ULONG buffer_kb);

static ULONG start_kernel(CONTROLTRACE_ID *h, const char *name, const char *file, ULONG max_buffers)
{
        return start_kernel_sized(h, name, file, max_buffers, 64);
}

/* start_kernel with buffers of buffer_kb KB */
static ULONG start_kernel_sized(CONTROLTRACE_ID *h, const char *name, const char *file,
                                ULONG max_buffers, ULONG buffer_kb)
{
        struct rt_props pr;
        ULONG mode = EVENT_TRACE_SYSTEM_LOGGER_MODE | EVENT_TRACE_REAL_TIME_MODE;
        if (file)
                mode |= EVENT_TRACE_FILE_MODE_SEQUENTIAL;
        props_init(&pr, mode, file);
        /* no context switches: the rate then depends on this test's load, not the machine's */
        pr.p.EnableFlags = EVENT_TRACE_FLAG_PROCESS | EVENT_TRACE_FLAG_THREAD |
                           EVENT_TRACE_FLAG_IMAGE_LOAD | EVENT_TRACE_FLAG_PROFILE;
        /* 64 KB: a drain of the perf rings (4096 records at most under the session's lock)
           fills about 9 buffers, well inside a consumer's queue */
        pr.p.BufferSize = buffer_kb;
        pr.p.MaximumBuffers = max_buffers;
        pr.p.FlushTimer = 1;
        return StartTraceA(h, name, &pr.p);
}

/* The global sampling interval back to 1 ms (10,000 x 100 ns). Only once the session that
   start_fast started has stopped: the interval is the host's too, and set while that session
   runs it slows it to a kHz. */
static void interval_usual(void)
{
        TRACE_PROFILE_INTERVAL usual = {0, 10000};
        TraceSetInformation(0, TraceSampledProfileIntervalInfo, &usual, sizeof(usual));
}

/* start_kernel on buffers of buffer_kb KB (16 fill four times sooner than 64), with timer
   samples at 8 kHz (1221 x 100 ns): a test that waits for buffers waits seconds, not a minute.
   The interval stays until interval_usual (at once where the start failed). */
static ULONG start_fast(CONTROLTRACE_ID *h, const char *name, ULONG max_buffers, ULONG buffer_kb)
{
        TRACE_PROFILE_INTERVAL fastest = {0, 1221};
        TraceSetInformation(0, TraceSampledProfileIntervalInfo, &fastest, sizeof(fastest));
        ULONG rc = start_kernel_sized(h, name, NULL, max_buffers, buffer_kb);
        if (rc != ERROR_SUCCESS)
                interval_usual();
        return rc;
}

/* A skip where perf_event_open is not permitted; else the start succeeded. */
static void need_started(ULONG rc)
{
        if (rc == ERROR_ACCESS_DENIED || rc == ERROR_NOT_SUPPORTED) {
                print_message("skipped: the live source is not permitted here\n");
                skip();
        }
        assert_int_equal(rc, ERROR_SUCCESS);
}

/* A session that needs no privilege: real time, no provider, its own GUID. */
static ULONG start_plain(CONTROLTRACE_ID *h, const char *name, const char *file)
{
        struct rt_props pr;
        props_init(&pr, file ? EVENT_TRACE_FILE_MODE_SEQUENTIAL : EVENT_TRACE_REAL_TIME_MODE, file);
        return StartTraceA(h, name, &pr.p);
}

static ULONG control(CONTROLTRACE_ID h, const char *name, struct rt_props *q, ULONG code)
{
        props_init(q, 0, NULL);
        return ControlTraceA(h, name, &q->p, code);
}

/* The kernel logger on buffers of buffer_kb KB, or a skip where perf_event_open is not
   permitted. */
static void start_sized_or_skip(CONTROLTRACE_ID *h, const char *name, const char *file,
                                ULONG max_buffers, ULONG buffer_kb)
{
        ULONG rc = start_kernel_sized(h, name, file, max_buffers, buffer_kb);
        if (rc == ERROR_ACCESS_DENIED || rc == ERROR_NOT_SUPPORTED) {
                print_message("skipped: the live source is not permitted here: %s\n",
                              etw_last_error_text());
                skip();
        }
        if (rc != ERROR_SUCCESS)
                print_error("StartTrace(%s): %u: %s\n", name, rc, etw_last_error_text());
        assert_int_equal(rc, ERROR_SUCCESS);
}

static void start_kernel_or_skip(CONTROLTRACE_ID *h, const char *name, const char *file,
                                 ULONG max_buffers)
{
        start_sized_or_skip(h, name, file, max_buffers, 64);
}

/* Busy threads for ms: samples on every CPU, so that buffers complete. */
static atomic_bool burn_stop;

static void *burn_thread(void *arg)
{
        unsigned long x = 0;
        while (!atomic_load(&burn_stop))
                x = x * 31 + (unsigned long)arg;
        return (void *)(uintptr_t)x;
}

static pthread_t burn_th[4];
static int nr_burn_th;

/* n busy threads until burn_end. */
static void burn_begin(int n)
{
        atomic_store(&burn_stop, false);
        for (nr_burn_th = 0; nr_burn_th < n && nr_burn_th < 4; nr_burn_th++)
                pthread_create(&burn_th[nr_burn_th], NULL, burn_thread,
                               (void *)(uintptr_t)(nr_burn_th + 1));
}

static void burn_end(void)
{
        atomic_store(&burn_stop, true);
        for (int i = 0; i < nr_burn_th; i++)
                pthread_join(burn_th[i], NULL);
        nr_burn_th = 0;
}

static void burn_n(long ms, int n)
{
        burn_begin(n);
        sleep_ms(ms);
        burn_end();
}

/* One busy thread: a CPU stays free for the host and the consumers. */
static void burn(long ms)
{
        burn_n(ms, 1);
}

/* ---- helper processes --------------------------------------------------------------------- */

/* Starts this program in helper mode with args, stdout and stderr to out (a path). */
static pid_t helper_start(const char *out, const char *const *args)
{
        const char *argv[16] = {self_exe, "helper"};
        int n = 2;
        for (int i = 0; args[i] && n < 15; i++)
                argv[n++] = args[i];
        argv[n] = NULL;
        fflush(stdout);
        fflush(stderr);
        pid_t pid = fork();
        if (pid == 0) {
                int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
                if (fd >= 0) {
                        dup2(fd, 1);
                        dup2(fd, 2);
                }
                execv(self_exe, (char *const *)argv);
                _exit(127);
        }
        assert_true(pid > 0);
        return pid;
}

/* Waits for a helper (at most timeout_ms); its exit status, or -1 (killed after the wait). */
static int helper_wait(pid_t pid, long timeout_ms)
{
        int st = 0;
        for (long waited = 0; waited <= timeout_ms; waited += 20) {
                pid_t r = waitpid(pid, &st, WNOHANG);
                if (r == pid)
                        return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
                sleep_ms(20);
        }
        kill(pid, SIGKILL);
        waitpid(pid, &st, 0);
        return -1;
}

/* Runs a helper to its end; its output in text. */
static int helper_run(const char *const *args, char *text, size_t size)
{
        char out[PATH_MAX];
        static int seq;
        snprintf(out, sizeof(out), "%s/helper-%d.out", tmp_dir, ++seq);
        int rc = helper_wait(helper_start(out, args), 60000);
        FILE *f = fopen(out, "r");
        size_t n = f ? fread(text, 1, size - 1, f) : 0;
        text[n] = '\0';
        if (f)
                fclose(f);
        return rc;
}

static void read_text(const char *path, char *text, size_t size)
{
        FILE *f = fopen(path, "r");
        size_t n = f ? fread(text, 1, size - 1, f) : 0;
        text[n] = '\0';
        if (f)
                fclose(f);
}

/* The unsigned value after the word "key=" in text (the last line that has one), or
   ULLONG_MAX. */
static unsigned long long field(const char *text, const char *key)
{
        char k[64];
        snprintf(k, sizeof(k), "%s=", key);
        const char *found = NULL;
        for (const char *p = text; (p = strstr(p, k)); p++)
                if (p == text || p[-1] == ' ' || p[-1] == '\n')
                        found = p;
        return found ? strtoull(found + strlen(k), NULL, 0) : ULLONG_MAX;
}

/* Waits until a helper's output holds needle (at most ms). */
static bool wait_output(const char *path, const char *needle, long ms)
{
        char text[4096];
        for (long waited = 0; waited <= ms; waited += 20) {
                read_text(path, text, sizeof(text));
                if (strstr(text, needle))
                        return true;
                sleep_ms(20);
        }
        return false;
}

/* The host's process, from its lock file; 0 if none is named. */
static pid_t host_pid(void)
{
        char path[PATH_MAX], text[64];
        snprintf(path, sizeof(path), "%s/host.lock", host_dir);
        read_text(path, text, sizeof(text));
        return (pid_t)atoi(text);
}

static bool process_alive(pid_t pid)
{
        return pid > 0 && kill(pid, 0) == 0;
}

/* Counts what a file replays. */
struct replay {
        atomic_ulong nr_events;
        atomic_ulong nr_stacks;
        TRACE_LOGFILE_HEADER header;
};

static VOID WINAPI count_event(PEVENT_RECORD er)
{
        struct replay *r = er->UserContext;
        atomic_fetch_add(&r->nr_events, 1);
        if (IsEqualGUID(&er->EventHeader.ProviderId, &StackWalkGuid))
                atomic_fetch_add(&r->nr_stacks, 1);
}

static ULONG replay_file(const char *path, struct replay *r)
{
        EVENT_TRACE_LOGFILEA lf;
        memset(&lf, 0, sizeof(lf));
        lf.LogFileName = (LPSTR)path;
        lf.ProcessTraceMode = PROCESS_TRACE_MODE_EVENT_RECORD;
        lf.EventRecordCallback = count_event;
        lf.Context = r;
        PROCESSTRACE_HANDLE h = OpenTraceA(&lf);
        if (h == INVALID_PROCESSTRACE_HANDLE)
                return GetLastError();
        r->header = lf.LogfileHeader;
        ULONG rc = ProcessTrace(&h, 1, NULL, NULL);
        CloseTrace(h);
        return rc;
}

/* One busy thread until the session's file holds more than n events in more than nr_buffers
   buffers its header counts (a busy machine may take seconds to fill one): the state a test's
   checks need, not a time; false after a minute without it. */
static bool burn_until_events(const char *file, unsigned long n, ULONG nr_buffers)
{
        burn_begin(1);
        bool is_filled = false;
        for (int i = 0; i < 1200 && !is_filled; i++) {
                struct replay seen = {0};
                is_filled = replay_file(file, &seen) == ERROR_SUCCESS &&
                            seen.header.BuffersWritten > nr_buffers &&
                            atomic_load(&seen.nr_events) > n;
                if (!is_filled)
                        sleep_ms(50);
        }
        burn_end();
        return is_filled;
}

/* ---- helper mode -------------------------------------------------------------------------- */

static long sleep_per_buffer_ms, nr_slow_buffers;
static const char *go_file; /* the slow consumer waits for it after its first buffer */
static PROCESSTRACE_HANDLE helper_handle;

static ULONG WINAPI helper_on_buffer(PEVENT_TRACE_LOGFILEA lf)
{
        static ULONG64 last_lost;
        ULONG64 read = 0, lost = 0;
        if (getenv("HELPER_DEBUG") && etw_realtime_get_stats(helper_handle, &read, &lost) == 0 &&
            lost != last_lost) {
                struct timespec ts;
                clock_gettime(CLOCK_MONOTONIC, &ts);
                printf("lost %llu at buffer %lu at %ld.%03ld\n", (unsigned long long)lost,
                       (unsigned long)lf->BuffersRead, (long)ts.tv_sec, ts.tv_nsec / 1000000);
                last_lost = lost;
        }
        if (sleep_per_buffer_ms && lf->BuffersRead <= (ULONG)nr_slow_buffers)
                sleep_ms(sleep_per_buffer_ms);
        /* a consumer that reads nothing until told */
        for (int i = 0; go_file && lf->BuffersRead == 1 && access(go_file, F_OK) != 0 && i < 1200;
             i++)
                sleep_ms(50);
        return TRUE;
}

static VOID WINAPI helper_on_event(PEVENT_RECORD er)
{
        atomic_fetch_add((atomic_ulong *)er->UserContext, 1);
}

/* helper start NAME FILE|- exit|pause|bind: starts a kernel logger, prints its handle.
   helper plain NAME: starts a session that needs no privilege, and exits.
   helper consume NAME SLEEP_MS N [GO]: a real-time consumer until the session ends, SLEEP_MS in
   the callback of each of its first N buffers; with GO, its first callback waits until the file
   GO exists (at most 60 s).
   helper query|stop NAME: ControlTrace by name. helper host: etw_host_run in the foreground.
   helper raw SOCKET: a PING over a raw connection, the host's answer printed. helper prestart:
   etw_host_prestart. */
static int helper_main(int argc, char **argv)
{
        setvbuf(stdout, NULL, _IONBF, 0);
        const char *what = argv[2];
        if (!strcmp(what, "start") && argc >= 6) {
                CONTROLTRACE_ID h = 0;
                ULONG rc = start_kernel(&h, argv[3], strcmp(argv[4], "-") ? argv[4] : NULL, 0);
                printf("start rc=%lu handle=0x%llx msg=%s\n", (unsigned long)rc,
                       (unsigned long long)h, etw_last_error_text());
                if (rc == ERROR_SUCCESS && !strcmp(argv[5], "bind")) {
                        rc = etw_bind_session(h);
                        printf("bind rc=%lu msg=%s\n", (unsigned long)rc, etw_last_error_text());
                }
                printf("ready\n");
                if (strcmp(argv[5], "exit") != 0)
                        for (;;)
                                pause();
                return rc == ERROR_SUCCESS ? 0 : 1;
        }
        if (!strcmp(what, "prestart")) {
                ULONG rc = etw_host_prestart();
                printf("prestart rc=%lu msg=%s\n", (unsigned long)rc, etw_last_error_text());
                return 0;
        }
        if (!strcmp(what, "plain") && argc >= 4) {
                CONTROLTRACE_ID h = 0;
                ULONG rc = start_plain(&h, argv[3], NULL);
                printf("plain rc=%lu handle=0x%llx msg=%s\n", (unsigned long)rc,
                       (unsigned long long)h, etw_last_error_text());
                return 0;
        }
        if (!strcmp(what, "consume") && argc >= 6) {
                sleep_per_buffer_ms = atol(argv[4]);
                nr_slow_buffers = atol(argv[5]);
                go_file = argc > 6 ? argv[6] : NULL;
                static atomic_ulong nr_events;
                EVENT_TRACE_LOGFILEA lf;
                memset(&lf, 0, sizeof(lf));
                lf.LoggerName = argv[3];
                lf.ProcessTraceMode =
                        PROCESS_TRACE_MODE_REAL_TIME | PROCESS_TRACE_MODE_EVENT_RECORD;
                lf.EventRecordCallback = helper_on_event;
                lf.BufferCallback = helper_on_buffer;
                lf.Context = &nr_events;
                PROCESSTRACE_HANDLE h = OpenTraceA(&lf);
                helper_handle = h;
                printf("open rc=%lu msg=%s\n",
                       (unsigned long)(h == INVALID_PROCESSTRACE_HANDLE ? GetLastError()
                                                                        : ERROR_SUCCESS),
                       etw_last_error_text());
                if (h == INVALID_PROCESSTRACE_HANDLE)
                        return 1;
                printf("consuming\n");
                ULONG rc = ProcessTrace(&h, 1, NULL, NULL);
                ULONG64 read = 0, lost = 0;
                etw_realtime_get_stats(h, &read, &lost);
                struct rusage ru;
                getrusage(RUSAGE_SELF, &ru);
                printf("done rc=%lu buffers=%llu lost=%llu events=%lu cpu_ms=%ld msg=%s\n",
                       (unsigned long)rc, (unsigned long long)read, (unsigned long long)lost,
                       atomic_load(&nr_events),
                       (long)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000 +
                               (long)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000,
                       rc ? etw_last_error_text() : "");
                CloseTrace(h);
                return 0;
        }
        if ((!strcmp(what, "query") || !strcmp(what, "stop")) && argc >= 4) {
                struct rt_props q;
                ULONG rc = control(0, argv[3], &q,
                                   !strcmp(what, "stop") ? EVENT_TRACE_CONTROL_STOP
                                                         : EVENT_TRACE_CONTROL_QUERY);
                printf("%s rc=%lu buffers=%lu file=%s msg=%s\n", what, (unsigned long)rc,
                       (unsigned long)q.p.BuffersWritten, q.log_file_name, etw_last_error_text());
                return 0;
        }
        if (!strcmp(what, "host")) {
                ULONG rc = etw_host_run(ETW_HOST_PERSISTENT);
                printf("host rc=%lu msg=%s\n", (unsigned long)rc, etw_last_error_text());
                return 0;
        }
        if (!strcmp(what, "raw") && argc >= 4) {
                int fd = socket(AF_UNIX, SOCK_STREAM, 0);
                struct sockaddr_un sa = {.sun_family = AF_UNIX};
                snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", argv[3]);
                if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
                        printf("raw connect errno=%d\n", errno);
                        return 0;
                }
                /* silent: sends nothing, and waits 5 s at most for the host to answer */
                bool is_silent = argc > 4 && !strcmp(argv[4], "silent");
                if (!is_silent) {
                        struct host_request rq = {.type = HOST_REQ_PING};
                        struct host_msg m = {0};
                        host_msg_request(&m, &rq);
                        /* the host may have refused and hung up already: read its answer */
                        send(fd, m.data, m.size, MSG_NOSIGNAL);
                        host_msg_free(&m);
                }
                static uint8_t buf[1 << 16];
                ssize_t n = 0, k;
                struct pollfd pfd = {.fd = fd, .events = POLLIN};
                while (poll(&pfd, 1, 5000) > 0 &&
                       (k = read(fd, buf + n, sizeof(buf) - (size_t)n)) > 0)
                        n += k;
                struct host_reply rp;
                char why[256];
                int rc = host_proto_decode_reply(buf, (size_t)n, &rp, why, sizeof(why));
                printf("raw decode=%d code=%u msg=%s\n", rc, rp.code, rp.msg);
                return 0;
        }
        if (!strcmp(what, "startpid") && argc >= 4) {
                /* a kernel logger of this process only (its pid as it sees it) */
                LONG self = (LONG)getpid();
                TraceSetInformation(0, ETWTOP_TRACE_PROCESS_INFO, &self, sizeof(self));
                CONTROLTRACE_ID h = 0;
                ULONG rc = start_kernel(&h, argv[3], NULL, 0);
                printf("startpid pid=%ld rc=%lu msg=%s\n", (long)self, (unsigned long)rc,
                       etw_last_error_text());
                struct rt_props q;
                if (rc == ERROR_SUCCESS)
                        control(h, NULL, &q, EVENT_TRACE_CONTROL_STOP);
                return 0;
        }
        if (!strcmp(what, "plainfile") && argc >= 5) {
                CONTROLTRACE_ID h = 0;
                ULONG rc = start_plain(&h, argv[3], argv[4]);
                printf("plainfile rc=%lu msg=%s\n", (unsigned long)rc, etw_last_error_text());
                struct rt_props q;
                if (rc == ERROR_SUCCESS)
                        control(h, NULL, &q, EVENT_TRACE_CONTROL_STOP);
                return 0;
        }
        if (!strcmp(what, "save") && argc >= 5) {
                /* a flight recorder saved over an existing file (force) */
                struct rt_props pr;
                props_init(&pr, EVENT_TRACE_BUFFERING_MODE, NULL);
                CONTROLTRACE_ID h = 0;
                ULONG rc = StartTraceA(&h, argv[3], &pr.p);
                if (rc == ERROR_SUCCESS) {
                        rc = etw_save_window(h, argv[4], TRUE);
                        printf("save rc=%lu msg=%s\n", (unsigned long)rc, etw_last_error_text());
                        struct rt_props q;
                        control(h, NULL, &q, EVENT_TRACE_CONTROL_STOP);
                } else {
                        printf("start rc=%lu msg=%s\n", (unsigned long)rc, etw_last_error_text());
                }
                return 0;
        }
        fprintf(stderr, "helper: what is %s?\n", what);
        return 2;
}

/* ---- the protocol from bytes ---------------------------------------------------------------- */

static void test_proto_roundtrip(void **state)
{
        (void)state;
        struct rt_props pr;
        props_init(&pr, EVENT_TRACE_REAL_TIME_MODE, "/tmp/x.etl");
        struct host_request *rq = calloc(1, sizeof(*rq)), *back = calloc(1, sizeof(*back));
        rq->type = HOST_REQ_START;
        rq->flags = HOST_FLAG_HAS_DEFAULTS;
        snprintf(rq->name, sizeof(rq->name), "a session");
        snprintf(rq->path, sizeof(rq->path), "/abs/file.etl");
        rq->data = (const uint8_t *)&pr;
        rq->data_size = sizeof(pr);
        rq->defaults.pid = 1234;
        rq->defaults.nr_sources = 1;
        rq->defaults.sources[0] = 25;
        rq->defaults.nr_intervals = 1;
        rq->defaults.intervals[0].source = 0;
        rq->defaults.intervals[0].interval = 5000;
        struct host_msg m = {0};
        host_msg_request(&m, rq);
        char why[256];
        assert_int_equal(host_proto_decode_request(m.data, m.size, back, why, sizeof(why)), 0);
        assert_int_equal(back->type, HOST_REQ_START);
        assert_string_equal(back->name, "a session");
        assert_string_equal(back->path, "/abs/file.etl");
        assert_int_equal(back->data_size, sizeof(pr));
        assert_memory_equal(back->data, &pr, sizeof(pr));
        assert_int_equal(back->defaults.pid, 1234);
        assert_int_equal(back->defaults.sources[0], 25);
        assert_int_equal(back->defaults.intervals[0].interval, 5000);

        /* every truncation is refused, never read past */
        for (size_t n = 0; n < m.size; n++) {
                uint8_t *cut = malloc(n ? n : 1);
                memcpy(cut, m.data, n);
                assert_true(host_proto_decode_request(cut, n, back, why, sizeof(why)) < 0);
                free(cut);
        }
        /* a length that lies: the body says more than there is */
        uint8_t *bad = malloc(m.size);
        memcpy(bad, m.data, m.size);
        uint32_t body = (uint32_t)(m.size - HOST_HEADER_SIZE) + 1;
        memcpy(bad + 8, &body, 4);
        assert_true(host_proto_decode_request(bad, m.size, back, why, sizeof(why)) < 0);
        /* oversized: refused from the header alone */
        body = HOST_MAX_BODY + 1;
        memcpy(bad + 8, &body, 4);
        uint16_t type;
        uint32_t size;
        assert_int_equal(
                host_proto_check_header(bad, HOST_HEADER_SIZE, &type, &size, why, sizeof(why)),
                -EMSGSIZE);
        /* another version */
        memcpy(bad, m.data, m.size);
        bad[4] = 99;
        assert_int_equal(host_proto_decode_request(bad, m.size, back, why, sizeof(why)), -EPROTO);
        assert_non_null(strstr(why, "version"));
        free(bad);

        /* the properties must be whole and say their own size */
        pr.p.Wnode.BufferSize = 100;
        host_msg_request(&m, rq);
        assert_int_equal(host_proto_decode_request(m.data, m.size, back, why, sizeof(why)),
                         -EBADMSG);
        assert_non_null(strstr(why, "BufferSize"));
        pr.p.Wnode.BufferSize = sizeof(pr);
        /* a relative path is refused */
        snprintf(rq->path, sizeof(rq->path), "rel.etl");
        host_msg_request(&m, rq);
        assert_int_equal(host_proto_decode_request(m.data, m.size, back, why, sizeof(why)),
                         -EBADMSG);

        /* a reply and a real-time buffer */
        struct host_reply rp = {.code = 183, .handle = 0x100000001ull, .length = 7};
        snprintf(rp.msg, sizeof(rp.msg), "already");
        host_msg_reply(&m, &rp);
        struct host_reply rb;
        assert_int_equal(host_proto_decode_reply(m.data, m.size, &rb, why, sizeof(why)), 0);
        assert_int_equal(rb.code, 183);
        assert_int_equal(rb.handle, 0x100000001ull);
        assert_string_equal(rb.msg, "already");
        uint8_t buffer[4096] = {1, 2, 3};
        host_msg_rt_buffer(&m, 5, buffer, sizeof(buffer));
        struct host_rt_msg rt;
        assert_int_equal(host_proto_decode_rt(m.data, m.size, &rt, why, sizeof(why)), 0);
        assert_int_equal(rt.size, sizeof(buffer));
        assert_int_equal(rt.nr_lost, 5);
        assert_ptr_equal(rt.data, m.data + HOST_RT_DATA_OFFSET);
        m.data[HOST_RT_DATA_OFFSET - 4] = 1; /* padding */
        assert_true(host_proto_decode_rt(m.data, m.size, &rt, why, sizeof(why)) < 0);
        host_msg_free(&m);
        free(rq);
        free(back);
}

/* Reads what waits on fd (nonblocking) into got at *at. */
static void drain_into(int fd, uint8_t *got, size_t cap, size_t *at)
{
        for (;;) {
                ssize_t n = recv(fd, got + *at, cap - *at, MSG_DONTWAIT);
                if (n <= 0)
                        break;
                *at += (size_t)n;
        }
}

/* What a reader thread of test_read_msg_parts sends: the message in pieces, a pause between
   them (the reader has read what was there and waits), then optionally an early close. */
struct sender {
        int fd;
        const uint8_t *msg;
        size_t size;
        const size_t *cuts; /* the ends of the pieces, the last one the size sent */
        size_t nr_cuts;
};

static void *sender_main(void *arg)
{
        struct sender *s = arg;
        size_t at = 0;
        for (size_t i = 0; i < s->nr_cuts; i++) {
                struct timespec pause = {0, 20000000};
                nanosleep(&pause, NULL);
                while (at < s->cuts[i]) {
                        ssize_t n = send(s->fd, s->msg + at, s->cuts[i] - at, MSG_NOSIGNAL);
                        if (n <= 0)
                                return NULL;
                        at += (size_t)n;
                }
        }
        shutdown(s->fd, SHUT_WR);
        return NULL;
}

/* host_io_read_msg takes what has arrived without waiting for it first, and waits for the rest:
   a message already there is read with no wait allowed; a message in pieces (the header's
   middle, the body's) is read whole; a peer that closes mid-header or mid-body is -EBADMSG, one
   that closes between messages -ECONNRESET, and nothing there within first_ms -EAGAIN. */
static void test_read_msg_parts(void **state)
{
        (void)state;
        enum { SIZE = 65536 };
        uint8_t *buf = malloc(SIZE);
        for (size_t i = 0; i < SIZE; i++)
                buf[i] = (uint8_t)(i * 13 + i / 509);
        struct host_msg m = {0};
        host_msg_rt_buffer(&m, 3, buf, SIZE);
        char why[256];
        uint8_t *got;
        size_t size;
        int sv[2];
        /* two messages already there, nothing after them */
        assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
        int big = 4 * (int)m.size;
        setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
        for (int k = 0; k < 2; k++)
                assert_int_equal(host_io_write(sv[0], m.data, m.size, 1000, NULL), 0);
        for (int k = 0; k < 2; k++) {
                assert_int_equal(host_io_read_msg(sv[1], 0, 1000, &got, &size, why, sizeof(why)),
                                 0);
                assert_int_equal(size, m.size);
                assert_memory_equal(got, m.data, m.size);
                free(got);
        }
        assert_int_equal(host_io_read_msg(sv[1], 0, 1000, &got, &size, why, sizeof(why)), -EAGAIN);
        close(sv[0]);
        assert_int_equal(host_io_read_msg(sv[1], 0, 1000, &got, &size, why, sizeof(why)),
                         -ECONNRESET);
        close(sv[1]);
        /* in pieces; then cut short in the header, and in the body */
        const size_t whole[] = {5, HOST_HEADER_SIZE + 3, 30000, m.size};
        const size_t in_header[] = {5};
        const size_t in_body[] = {HOST_HEADER_SIZE + 100};
        const struct {
                const size_t *cuts;
                size_t nr;
                int rc;
        } cases[] = {{whole, 4, 0}, {in_header, 1, -EBADMSG}, {in_body, 1, -EBADMSG}};
        for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
                assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
                struct sender snd = {sv[0], m.data, m.size, cases[c].cuts, cases[c].nr};
                pthread_t th;
                assert_int_equal(pthread_create(&th, NULL, sender_main, &snd), 0);
                int rc = host_io_read_msg(sv[1], 5000, 5000, &got, &size, why, sizeof(why));
                pthread_join(th, NULL);
                assert_int_equal(rc, cases[c].rc);
                if (rc == 0) {
                        assert_int_equal(size, m.size);
                        assert_memory_equal(got, m.data, m.size);
                        free(got);
                }
                close(sv[0]);
                close(sv[1]);
        }
        host_msg_free(&m);
        free(buf);
}

/* host_io_read_msg_kept reads a stream of buffers into one allocation: the first message makes
   it, the same size and smaller ones reuse it (no allocation between them), a larger one makes
   it larger; each read gives that message's bytes; a message cut short or no message at all
   leaves the buffer the caller's (freed once at the end, which ASan checks). */
static void test_read_msg_kept(void **state)
{
        (void)state;
        enum { SIZE = 65536 };
        /* each message's bytes start k bytes in: room for the largest at 3 */
        uint8_t *buf = malloc(2 * SIZE + 4);
        for (size_t i = 0; i < 2 * SIZE + 4; i++)
                buf[i] = (uint8_t)(i * 11 + i / 331);
        struct host_msg ms[4] = {{0}};
        const uint32_t sizes[] = {SIZE, SIZE, SIZE / 2, 2 * SIZE};
        for (int k = 0; k < 4; k++)
                host_msg_rt_buffer(&ms[k], (uint64_t)k, buf + k, sizes[k]);
        char why[256];
        int sv[2];
        assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
        int big = 8 * SIZE;
        setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
        uint8_t *kept = NULL, *first = NULL;
        size_t cap = 0, size;
        for (int k = 0; k < 4; k++) {
                assert_int_equal(host_io_write(sv[0], ms[k].data, ms[k].size, 1000, NULL), 0);
                assert_int_equal(
                        host_io_read_msg_kept(sv[1], 0, 1000, &kept, &cap, &size, why, sizeof(why)),
                        0);
                assert_int_equal(size, ms[k].size);
                assert_memory_equal(kept, ms[k].data, ms[k].size);
                assert_true(cap >= size);
                if (k == 0)
                        first = kept;
                if (k < 3) /* the first message's room serves the next two */
                        assert_ptr_equal(kept, first);
                if (k == 0)
                        assert_int_equal(cap, ms[0].size);
        }
        assert_int_equal(cap, ms[3].size);
        /* nothing there, then a message cut short in its body, then the peer gone */
        assert_int_equal(
                host_io_read_msg_kept(sv[1], 0, 1000, &kept, &cap, &size, why, sizeof(why)),
                -EAGAIN);
        assert_int_equal(send(sv[0], ms[1].data, HOST_HEADER_SIZE + 100, MSG_NOSIGNAL),
                         HOST_HEADER_SIZE + 100);
        shutdown(sv[0], SHUT_WR);
        assert_int_equal(
                host_io_read_msg_kept(sv[1], 0, 1000, &kept, &cap, &size, why, sizeof(why)),
                -EBADMSG);
        assert_int_equal(
                host_io_read_msg_kept(sv[1], 0, 1000, &kept, &cap, &size, why, sizeof(why)),
                -ECONNRESET);
        assert_non_null(kept);
        assert_int_equal(cap, ms[3].size);
        free(kept);
        close(sv[0]);
        close(sv[1]);
        for (int k = 0; k < 4; k++)
                host_msg_free(&ms[k]);
        free(buf);
}

/* A real-time buffer goes as its header and the buffer itself in one send, not copied into a
   message: the bytes are host_msg_rt_buffer's, whatever the socket takes at a time; and when
   the sender must release the buffer mid-message (a stopped session's consumer given up on),
   the rest copied at any point, header or buffer, is what was left to send. */
static void test_rt_parts(void **state)
{
        (void)state;
        enum { SIZE = 65536 };
        uint8_t *buf = malloc(SIZE), *want, *got = malloc(HOST_RT_DATA_OFFSET + SIZE);
        for (size_t i = 0; i < SIZE; i++)
                buf[i] = (uint8_t)(i * 7 + i / 251);
        struct host_msg m = {0};
        host_msg_rt_buffer(&m, 9, buf, SIZE);
        want = m.data;
        assert_int_equal(m.size, HOST_RT_DATA_OFFSET + SIZE);
        uint8_t head[HOST_RT_DATA_OFFSET];
        host_msg_rt_buffer_head(head, 9, SIZE);
        assert_memory_equal(head, want, HOST_RT_DATA_OFFSET);
        /* the first r bytes gone already (the header's middle, its end, the buffer's middle);
           then the rest by host_io_send_rest, or copied by host_io_copy_rest and the buffer
           and the header overwritten (released) before the copy goes */
        const size_t sent_before[] = {0, 5, HOST_RT_DATA_OFFSET, 20000};
        size_t total = HOST_RT_DATA_OFFSET + SIZE;
        for (size_t k = 0; k < 2 * sizeof(sent_before) / sizeof(sent_before[0]); k++) {
                size_t r = sent_before[k / 2];
                bool is_released = k % 2;
                int sv[2];
                assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
                int small = 4096;
                setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
                uint8_t *copy = malloc(SIZE);
                memcpy(copy, buf, SIZE);
                host_msg_rt_buffer_head(head, 9, SIZE);
                struct iovec parts[2] = {{.iov_base = head, .iov_len = sizeof(head)},
                                         {.iov_base = copy, .iov_len = SIZE}};
                size_t done = 0, at = 0;
                while (done < r) {
                        ssize_t n = send(sv[0], want + done, r - done, MSG_DONTWAIT);
                        if (n > 0)
                                done += (size_t)n;
                        drain_into(sv[1], got, total, &at);
                }
                if (!is_released) {
                        int nr_sends = 0;
                        while (done < total) {
                                ssize_t n = host_io_send_rest(sv[0], parts, 2, done);
                                assert_true(n >= 0);
                                done += (size_t)n;
                                nr_sends += n > 0;
                                drain_into(sv[1], got, total, &at);
                        }
                        assert_true(nr_sends > 1); /* the socket took it in parts */
                        assert_int_equal(host_io_send_rest(sv[0], parts, 2, done), 0);
                } else {
                        uint8_t *rest = malloc(total);
                        size_t left = host_io_copy_rest(parts, 2, done, rest);
                        assert_int_equal(left, total - done);
                        memset(copy, 0xee, SIZE);
                        memset(head, 0xee, sizeof(head));
                        size_t sent = 0;
                        while (sent < left) {
                                ssize_t n = send(sv[0], rest + sent, left - sent, MSG_DONTWAIT);
                                if (n > 0)
                                        sent += (size_t)n;
                                drain_into(sv[1], got, total, &at);
                        }
                        free(rest);
                }
                drain_into(sv[1], got, total, &at);
                assert_int_equal(at, total);
                assert_memory_equal(got, want, total);
                free(copy);
                close(sv[0]);
                close(sv[1]);
        }
        host_msg_free(&m);
        free(buf);
        free(got);
}

/* A wake-up's batch of real-time buffers, each its header and the buffer, goes in one send of
   2 x 16 parts: one send carries several messages, the bytes are each buffer's
   host_msg_rt_buffer in order, and more parts than HOST_IO_MAX_PARTS are refused. */
/* The shared ring's messages: encoded, decoded, and every field checked (a ring too large, a
   slot too small, no slots, a release of another type); the ring's flag on any request but
   RT_ATTACH is refused. */
static void test_ring_messages(void **state)
{
        (void)state;
        char why[256];
        struct host_rt_msg rt;
        struct host_msg m = {0};
        host_msg_rt_ring(&m, 32, 65536);
        assert_int_equal(host_proto_decode_rt(m.data, m.size, &rt, why, sizeof(why)), 0);
        assert_int_equal(rt.type, HOST_RT_RING);
        assert_int_equal(rt.nr_slots, 32);
        assert_int_equal(rt.size, 65536);
        host_msg_free(&m);
        host_msg_rt_ring(&m, 0, 0); /* no ring: the buffers through the socket */
        assert_int_equal(host_proto_decode_rt(m.data, m.size, &rt, why, sizeof(why)), 0);
        assert_int_equal(rt.nr_slots, 0);
        host_msg_free(&m);
        host_msg_rt_ring(&m, HOST_RT_MAX_SLOTS + 1, 65536);
        assert_int_equal(host_proto_decode_rt(m.data, m.size, &rt, why, sizeof(why)), -EBADMSG);
        assert_non_null(strstr(why, "slots"));
        host_msg_free(&m);
        host_msg_rt_ring(&m, 4, 32);
        assert_int_equal(host_proto_decode_rt(m.data, m.size, &rt, why, sizeof(why)), -EBADMSG);
        host_msg_free(&m);
        host_msg_rt_slots(&m, 7, 40, 16, 65536);
        assert_int_equal(host_proto_decode_rt(m.data, m.size, &rt, why, sizeof(why)), 0);
        assert_int_equal(rt.type, HOST_RT_SLOTS);
        assert_int_equal(rt.nr_lost, 7);
        assert_int_equal(rt.seq, 40);
        assert_int_equal(rt.nr_slots, 16);
        assert_int_equal(rt.size, 65536);
        /* cut short by a byte */
        assert_int_equal(host_proto_decode_rt(m.data, m.size - 1, &rt, why, sizeof(why)), -EBADMSG);
        host_msg_free(&m);
        host_msg_rt_slots(&m, 0, 0, 0, 65536);
        assert_int_equal(host_proto_decode_rt(m.data, m.size, &rt, why, sizeof(why)), -EBADMSG);
        host_msg_free(&m);
        /* in place: the pool's shape, then places by index */
        host_msg_rt_pool(&m, 17408, 65536);
        assert_int_equal(host_proto_decode_rt(m.data, m.size, &rt, why, sizeof(why)), 0);
        assert_int_equal(rt.type, HOST_RT_POOL);
        assert_int_equal(rt.nr_slots, 17408);
        assert_int_equal(rt.size, 65536);
        host_msg_free(&m);
        host_msg_rt_pool(&m, 0, 65536);
        assert_int_equal(host_proto_decode_rt(m.data, m.size, &rt, why, sizeof(why)), -EBADMSG);
        host_msg_free(&m);
        host_msg_rt_pool(&m, HOST_RT_MAX_POOL + 1, 65536);
        assert_int_equal(host_proto_decode_rt(m.data, m.size, &rt, why, sizeof(why)), -EBADMSG);
        assert_non_null(strstr(why, "pool"));
        host_msg_free(&m);
        uint32_t idx[3] = {5, 17000, 9};
        host_msg_rt_places(&m, 2, 30, idx, 3, 65536);
        assert_int_equal(host_proto_decode_rt(m.data, m.size, &rt, why, sizeof(why)), 0);
        assert_int_equal(rt.type, HOST_RT_PLACES);
        assert_int_equal(rt.nr_lost, 2);
        assert_int_equal(rt.seq, 30);
        assert_int_equal(rt.nr_slots, 3);
        uint32_t second;
        memcpy(&second, rt.places + 4, 4);
        assert_int_equal(second, 17000);
        /* an index cut short, or one more than the count says */
        assert_int_equal(host_proto_decode_rt(m.data, m.size - 1, &rt, why, sizeof(why)), -EBADMSG);
        host_msg_free(&m);
        host_msg_rt_places(&m, 2, 30, idx, 2, 65536);
        m.data[32] = 3; /* the count (after the header, lost and seq): 3 where two follow */
        assert_int_equal(host_proto_decode_rt(m.data, m.size, &rt, why, sizeof(why)), -EBADMSG);
        assert_non_null(strstr(why, "indexes"));
        host_msg_free(&m);
        host_msg_rt_places(&m, 0, 0, idx, 0, 65536);
        assert_int_equal(host_proto_decode_rt(m.data, m.size, &rt, why, sizeof(why)), -EBADMSG);
        host_msg_free(&m);
        /* the session's state: every field back, a generation of 0 and a cut message refused */
        host_msg_rt_state(&m, 41, 5000000000ull, 77, 3, 1024, 200);
        assert_int_equal(host_proto_decode_rt(m.data, m.size, &rt, why, sizeof(why)), 0);
        assert_int_equal(rt.type, HOST_RT_STATE);
        assert_int_equal(rt.settings_gen, 41);
        assert_true(rt.nr_events_lost == 5000000000ull);
        assert_int_equal(rt.nr_buffers_written, 77);
        assert_int_equal(rt.nr_rt_buffers_lost, 3);
        assert_int_equal(rt.buffer_size_kb, 1024);
        assert_int_equal(rt.max_file_mb, 200);
        assert_int_equal(host_proto_decode_rt(m.data, m.size - 4, &rt, why, sizeof(why)), -EBADMSG);
        host_msg_free(&m);
        host_msg_rt_state(&m, 0, 0, 0, 0, 64, 0);
        assert_int_equal(host_proto_decode_rt(m.data, m.size, &rt, why, sizeof(why)), -EBADMSG);
        assert_non_null(strstr(why, "generation"));
        host_msg_free(&m);
        uint64_t seq = 1;
        host_msg_rt_release(&m, 123);
        assert_int_equal(host_proto_decode_release(m.data, m.size, &seq, why, sizeof(why)), 0);
        assert_int_equal(seq, 123);
        /* a release is none of a consumer's stream, an end no release */
        assert_int_equal(host_proto_decode_rt(m.data, m.size, &rt, why, sizeof(why)), -EBADMSG);
        host_msg_free(&m);
        host_msg_rt_end(&m, 0, 0);
        assert_int_equal(host_proto_decode_release(m.data, m.size, &seq, why, sizeof(why)),
                         -EBADMSG);
        host_msg_free(&m);
        struct host_request *rq = calloc(1, sizeof(*rq)), *back = calloc(1, sizeof(*back));
        rq->type = HOST_REQ_RT_ATTACH;
        rq->flags = HOST_FLAG_RT_RING;
        snprintf(rq->name, sizeof(rq->name), "s");
        host_msg_request(&m, rq);
        assert_int_equal(host_proto_decode_request(m.data, m.size, back, why, sizeof(why)), 0);
        assert_int_equal(back->flags, HOST_FLAG_RT_RING);
        host_msg_free(&m);
        rq->type = HOST_REQ_RT_HEADER;
        host_msg_request(&m, rq);
        assert_int_equal(host_proto_decode_request(m.data, m.size, back, why, sizeof(why)),
                         -EBADMSG);
        assert_non_null(strstr(why, "ring"));
        host_msg_free(&m);
        /* in place only with a ring, only to attach */
        rq->type = HOST_REQ_RT_ATTACH;
        rq->flags = HOST_FLAG_RT_POOL;
        host_msg_request(&m, rq);
        assert_int_equal(host_proto_decode_request(m.data, m.size, back, why, sizeof(why)),
                         -EBADMSG);
        host_msg_free(&m);
        rq->flags = HOST_FLAG_RT_RING | HOST_FLAG_RT_POOL;
        host_msg_request(&m, rq);
        assert_int_equal(host_proto_decode_request(m.data, m.size, back, why, sizeof(why)), 0);
        host_msg_free(&m);
        free(rq);
        free(back);
}

static void test_rt_batch_parts(void **state)
{
        (void)state;
        enum { SIZE = 65536, N = HOST_IO_MAX_PARTS / 2 };
        size_t one = HOST_RT_DATA_OFFSET + SIZE, total = N * one;
        uint8_t *bufs = malloc((size_t)N * SIZE), *want = malloc(total), *got = malloc(total);
        uint8_t heads[N][HOST_RT_DATA_OFFSET];
        struct iovec parts[HOST_IO_MAX_PARTS + 1];
        for (int k = 0; k < N; k++) {
                uint8_t *b = bufs + (size_t)k * SIZE;
                for (size_t i = 0; i < SIZE; i++)
                        b[i] = (uint8_t)(i * 7 + i / 251 + (size_t)k * 13);
                struct host_msg m = {0};
                host_msg_rt_buffer(&m, 7, b, SIZE);
                assert_int_equal(m.size, one);
                memcpy(want + (size_t)k * one, m.data, one);
                host_msg_free(&m);
                host_msg_rt_buffer_head(heads[k], 7, SIZE);
                parts[2 * k] = (struct iovec){heads[k], HOST_RT_DATA_OFFSET};
                parts[2 * k + 1] = (struct iovec){b, SIZE};
        }
        parts[HOST_IO_MAX_PARTS] = parts[0];
        int sv[2];
        assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
        int sndbuf = 8 * (int)one;
        setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
        assert_int_equal(host_io_send_rest(sv[0], parts, HOST_IO_MAX_PARTS + 1, 0), -EINVAL);
        size_t done = 0, at = 0, first = 0;
        while (done < total) {
                ssize_t n = host_io_send_rest(sv[0], parts, HOST_IO_MAX_PARTS, done);
                assert_true(n >= 0);
                if (!first)
                        first = (size_t)n;
                done += (size_t)n;
                drain_into(sv[1], got, total, &at);
        }
        drain_into(sv[1], got, total, &at);
        assert_true(first > one); /* the first send took more than one buffer's message */
        assert_int_equal(at, total);
        assert_memory_equal(got, want, total);
        close(sv[0]);
        close(sv[1]);
        free(bufs);
        free(want);
        free(got);
}

/* ---- sessions across processes ------------------------------------------------------------ */

/* A session started here is found by name from another process (ALREADY_EXISTS, QUERY, STOP);
   the host is another process and ends after its grace period once no session is left, taking
   its socket with it. The host serves at the real-time priority below the drain's where that is
   permitted (its connections' threads inherit it): an ordinary thread there waited seconds for
   a CPU on a busy machine. */
static void test_session_is_the_systems(void **state)
{
        (void)state;
        CONTROLTRACE_ID h = 0;
        assert_int_equal(start_plain(&h, "host-plain", NULL), ERROR_SUCCESS);
        assert_true(h != 0);
        pid_t pid = host_pid();
        assert_true(process_alive(pid));
        assert_true(pid != getpid());
        struct sched_param sp = {0};
        int policy = sched_getscheduler(pid);
        assert_int_equal(sched_getparam(pid, &sp), 0);
        bool is_fifo = fifo_permitted();
        print_message("host %d: policy %d priority %d (SCHED_FIFO permitted: %d)\n", (int)pid,
                      policy, sp.sched_priority, is_fifo);
        assert_int_equal(policy, is_fifo ? SCHED_FIFO : SCHED_OTHER);
        if (is_fifo)
                assert_int_equal(sp.sched_priority, LIVE_RT_PRIORITY_ASIDE);
        char text[4096];
        const char *again[] = {"plain", "host-plain", NULL};
        assert_int_equal(helper_run(again, text, sizeof(text)), 0);
        assert_int_equal(field(text, "rc"), ERROR_ALREADY_EXISTS);
        const char *query[] = {"query", "HOST-PLAIN", NULL}; /* names ignore case */
        assert_int_equal(helper_run(query, text, sizeof(text)), 0);
        assert_int_equal(field(text, "rc"), ERROR_SUCCESS);
        /* the handle is the same in every process */
        struct rt_props q;
        assert_int_equal(control(h, NULL, &q, EVENT_TRACE_CONTROL_QUERY), ERROR_SUCCESS);
        assert_int_equal(q.p.Wnode.HistoricalContext, h);
        assert_string_equal(q.logger_name, "host-plain");
        const char *stop[] = {"stop", "host-plain", NULL};
        assert_int_equal(helper_run(stop, text, sizeof(text)), 0);
        assert_int_equal(field(text, "rc"), ERROR_SUCCESS);
        assert_int_equal(control(h, NULL, &q, EVENT_TRACE_CONTROL_QUERY),
                         ERROR_WMI_INSTANCE_NOT_FOUND);
        /* the grace period (ETWTOP_HOST_GRACE_MS=300) and the host is gone, its socket too */
        for (int i = 0; i < 1200 && process_alive(pid); i++)
                sleep_ms(50);
        assert_false(process_alive(pid));
        char sock[PATH_MAX];
        snprintf(sock, sizeof(sock), "%s/host.sock", host_dir);
        assert_int_not_equal(access(sock, F_OK), 0);
        /* no host: nothing runs, nothing is started by a query */
        assert_int_equal(control(0, "host-plain", &q, EVENT_TRACE_CONTROL_QUERY),
                         ERROR_WMI_INSTANCE_NOT_FOUND);
        assert_non_null(strstr(etw_last_error_text(), "no session named"));
        assert_int_equal(host_pid() == 0 || !process_alive(host_pid()), true);
}

/* The host's threads of pid named etwtop-conn (one a connection being served). */
static int conn_threads(pid_t pid)
{
        char dir[64];
        snprintf(dir, sizeof(dir), "/proc/%d/task", (int)pid);
        DIR *d = opendir(dir);
        if (!d)
                return -1;
        int n = 0;
        for (struct dirent *e; (e = readdir(d));) {
                if (e->d_name[0] == '.')
                        continue;
                char path[128], comm[32] = "";
                snprintf(path, sizeof(path), "%s/%.20s/comm", dir, e->d_name);
                FILE *f = fopen(path, "r");
                if (f && fgets(comm, sizeof(comm), f) && strncmp(comm, "etwtop-conn", 11) == 0)
                        n++;
                if (f)
                        fclose(f);
        }
        closedir(d);
        return n;
}

/* A client's short requests (a screen's query at each refresh) go on one connection, which the
   host keeps for it: after many queries one connection thread serves it, idle between them;
   another process's requests are served meanwhile; the session's stop (on that connection)
   ends it; and a query after the host has gone finds the connection closed, opens another and
   is answered as it would be. */
static void test_kept_connection(void **state)
{
        (void)state;
        CONTROLTRACE_ID h = 0;
        assert_int_equal(start_plain(&h, "host-kept", NULL), ERROR_SUCCESS);
        pid_t pid = host_pid();
        assert_true(process_alive(pid));
        struct rt_props q;
        for (int i = 0; i < 50; i++) {
                assert_int_equal(control(h, NULL, &q, EVENT_TRACE_CONTROL_QUERY), ERROR_SUCCESS);
                assert_string_equal(q.logger_name, "host-kept");
        }
        /* the one kept connection's thread waits for the next request (other connections'
           threads end as their replies go) */
        int n = -1;
        for (int i = 0; i < 500 && (n = conn_threads(pid)) != 1; i++)
                sleep_ms(10);
        assert_int_equal(n, 1);
        char text[4096];
        const char *query[] = {"query", "host-kept", NULL};
        assert_int_equal(helper_run(query, text, sizeof(text)), 0);
        assert_int_equal(field(text, "rc"), ERROR_SUCCESS);
        assert_int_equal(control(h, NULL, &q, EVENT_TRACE_CONTROL_QUERY), ERROR_SUCCESS);
        assert_int_equal(control(h, NULL, &q, EVENT_TRACE_CONTROL_STOP), ERROR_SUCCESS);
        /* no session left: the kept connection ends, and with it the host */
        for (int i = 0; i < 1200 && process_alive(pid); i++)
                sleep_ms(50);
        assert_false(process_alive(pid));
        assert_int_equal(control(h, NULL, &q, EVENT_TRACE_CONTROL_QUERY),
                         ERROR_WMI_INSTANCE_NOT_FOUND);
        assert_non_null(strstr(etw_last_error_text(), "no session has handle"));
        /* a new host: the next query goes on a new connection */
        assert_int_equal(start_plain(&h, "host-kept-2", NULL), ERROR_SUCCESS);
        assert_int_equal(control(h, NULL, &q, EVENT_TRACE_CONTROL_QUERY), ERROR_SUCCESS);
        assert_string_equal(q.logger_name, "host-kept-2");
        assert_int_equal(control(h, NULL, &q, EVENT_TRACE_CONTROL_STOP), ERROR_SUCCESS);
}

/* QueryAllTraces fills every session's properties, as QUERY does, and says how many run. */
static void test_query_all_traces(void **state)
{
        (void)state;
        char file[PATH_MAX];
        tmp_path(file, sizeof(file), "all.etl");
        CONTROLTRACE_ID a = 0, b = 0;
        assert_int_equal(start_plain(&a, "all-one", NULL), ERROR_SUCCESS);
        assert_int_equal(start_plain(&b, "all-two", file), ERROR_SUCCESS);
        struct rt_props pr[3];
        PEVENT_TRACE_PROPERTIES arr[3];
        for (int i = 0; i < 3; i++) {
                props_init(&pr[i], 0, NULL);
                arr[i] = &pr[i].p;
        }
        ULONG n = 0;
        assert_int_equal(QueryAllTracesA(arr, 1, &n), ERROR_MORE_DATA);
        assert_int_equal(n, 2);
        assert_int_equal(QueryAllTracesA(arr, 3, &n), ERROR_SUCCESS);
        assert_int_equal(n, 2);
        bool seen_one = false, seen_two = false;
        for (ULONG i = 0; i < n; i++) {
                if (!strcmp(pr[i].logger_name, "all-one")) {
                        seen_one = true;
                        assert_int_equal(pr[i].p.Wnode.HistoricalContext, a);
                        assert_true(pr[i].p.LogFileMode & EVENT_TRACE_REAL_TIME_MODE);
                }
                if (!strcmp(pr[i].logger_name, "all-two")) {
                        seen_two = true;
                        assert_string_equal(pr[i].log_file_name, file);
                }
        }
        assert_true(seen_one && seen_two);
        assert_int_equal(QueryAllTracesA(arr, 0, &n), ERROR_INVALID_PARAMETER);
        assert_int_equal(QueryAllTracesA(NULL, 3, &n), ERROR_INVALID_PARAMETER);
        struct rt_props q;
        assert_int_equal(control(a, NULL, &q, EVENT_TRACE_CONTROL_STOP), ERROR_SUCCESS);
        assert_int_equal(control(b, NULL, &q, EVENT_TRACE_CONTROL_STOP), ERROR_SUCCESS);
}

/* A relative log file name is the starter's: made absolute against its directory. */
static void test_relative_file_name(void **state)
{
        (void)state;
        char cwd[PATH_MAX];
        assert_non_null(getcwd(cwd, sizeof(cwd)));
        assert_int_equal(chdir(tmp_dir), 0);
        CONTROLTRACE_ID h = 0;
        ULONG rc = start_plain(&h, "relative", "relative.etl");
        assert_int_equal(chdir(cwd), 0);
        assert_int_equal(rc, ERROR_SUCCESS);
        struct rt_props q;
        assert_int_equal(control(h, NULL, &q, EVENT_TRACE_CONTROL_STOP), ERROR_SUCCESS);
        char want[PATH_MAX];
        tmp_path(want, sizeof(want), "relative.etl");
        assert_string_equal(q.log_file_name, want);
        assert_int_equal(access(want, R_OK), 0);
}

/* The starter killed: the session goes on, another process stops it, the file is whole. */
static void test_starter_killed(void **state)
{
        (void)state;
        char file[PATH_MAX], out[PATH_MAX];
        tmp_path(file, sizeof(file), "starter.etl");
        tmp_path(out, sizeof(out), "starter.out");
        const char *args[] = {"start", "host-starter", file, "pause", NULL};
        pid_t pid = helper_start(out, args);
        assert_true(wait_output(out, "ready", 20000));
        char text[4096];
        read_text(out, text, sizeof(text));
        if (field(text, "rc") == ERROR_ACCESS_DENIED) {
                helper_wait(pid, 0);
                print_message("skipped: %s", text);
                skip();
        }
        assert_int_equal(field(text, "rc"), ERROR_SUCCESS);
        kill(pid, SIGKILL);
        helper_wait(pid, 5000);
        struct rt_props q;
        assert_int_equal(control(0, "host-starter", &q, EVENT_TRACE_CONTROL_QUERY), ERROR_SUCCESS);
        ULONG before = q.p.BuffersWritten;
        assert_true(burn_until_events(file, 100, before));
        assert_int_equal(control(0, "host-starter", &q, EVENT_TRACE_CONTROL_QUERY), ERROR_SUCCESS);
        assert_true(q.p.BuffersWritten > before);
        assert_int_equal(control(0, "host-starter", &q, EVENT_TRACE_CONTROL_STOP), ERROR_SUCCESS);
        struct replay r = {0};
        assert_int_equal(replay_file(file, &r), ERROR_SUCCESS);
        assert_true(atomic_load(&r.nr_events) > 100);
        assert_true(r.header.EndTime.QuadPart > r.header.StartTime.QuadPart);
        assert_int_equal(r.header.BuffersWritten, q.p.BuffersWritten);
}

/* etwtop's binding: a session bound to its starter stops when the starter is killed, its file
   finalized as by a STOP. */
static void test_bound_session_ends_with_starter(void **state)
{
        (void)state;
        char file[PATH_MAX], out[PATH_MAX];
        tmp_path(file, sizeof(file), "bound.etl");
        tmp_path(out, sizeof(out), "bound.out");
        const char *args[] = {"start", "host-bound", file, "bind", NULL};
        pid_t pid = helper_start(out, args);
        assert_true(wait_output(out, "ready", 20000));
        char text[4096];
        read_text(out, text, sizeof(text));
        if (field(text, "rc") == ERROR_ACCESS_DENIED) {
                helper_wait(pid, 0);
                skip();
        }
        assert_non_null(strstr(text, "bind rc=0"));
        struct rt_props q;
        assert_int_equal(control(0, "host-bound", &q, EVENT_TRACE_CONTROL_QUERY), ERROR_SUCCESS);
        burn(500);
        kill(pid, SIGKILL);
        helper_wait(pid, 5000);
        ULONG rc = ERROR_SUCCESS;
        for (int i = 0; i < 1200 && rc == ERROR_SUCCESS; i++) {
                sleep_ms(50);
                rc = control(0, "host-bound", &q, EVENT_TRACE_CONTROL_QUERY);
        }
        assert_int_equal(rc, ERROR_WMI_INSTANCE_NOT_FOUND);
        struct replay r = {0};
        assert_int_equal(replay_file(file, &r), ERROR_SUCCESS);
        assert_true(atomic_load(&r.nr_events) > 100);
        assert_true(r.header.EndTime.QuadPart > r.header.StartTime.QuadPart);
}

/* Two consumers in two processes at once; a slow one loses buffers (counted for it and in the
   session's RealTimeBuffersLost), the fast one loses none; then a consumer killed changes
   nothing for the session, and a new consumer still reads it. A consumer's queue holds 120
   buffers of 64 KB (7.5 MB: more than a drain of the perf rings writes at once, which can be a
   quarter of each CPU's 8 MB ring); the slow consumer reads nothing after its first buffer until
   the session has stopped, while busy threads sampled at 8 kHz make the session complete more
   buffers than its queue holds. */
static void test_consumers(void **state)
{
        (void)state;
        TRACE_PROFILE_INTERVAL fastest = {0, 1221}, usual = {0, 10000};
        assert_int_equal(
                TraceSetInformation(0, TraceSampledProfileIntervalInfo, &fastest, sizeof(fastest)),
                ERROR_SUCCESS);
        enum { QUEUE = 120 };
        CONTROLTRACE_ID h = 0;
        /* buffers of 16 KB: the QUEUE + ring + 40 buffers it waits for (the slow consumer's
           ring full, then its queue, then some lost) come four times sooner than of 64 KB; a
           drain of the rings (4096 records at most) fills about 36, well inside the fast
           consumers' rings and queues */
        start_sized_or_skip(&h, "host-rt", NULL, QUEUE, 16);
        char fast_out[PATH_MAX], slow_out[PATH_MAX], killed_out[PATH_MAX], go[PATH_MAX];
        tmp_path(fast_out, sizeof(fast_out), "fast.out");
        tmp_path(slow_out, sizeof(slow_out), "slow.out");
        tmp_path(killed_out, sizeof(killed_out), "killed.out");
        tmp_path(go, sizeof(go), "slow.go");
        const char *fast_args[] = {"consume", "host-rt", "0", "0", NULL};
        const char *slow_args[] = {"consume", "host-rt", "0", "0", go, NULL};
        pid_t fast = helper_start(fast_out, fast_args);
        assert_true(wait_output(fast_out, "consuming", 10000));
        pid_t slow = helper_start(slow_out, slow_args);
        assert_true(wait_output(slow_out, "consuming", 10000));
        /* the buffers the session completes from here on are the slow consumer's to lose */
        struct rt_props q0;
        assert_int_equal(control(h, NULL, &q0, EVENT_TRACE_CONTROL_QUERY), ERROR_SUCCESS);
        ULONG written_before = q0.p.BuffersWritten;
        pid_t killed = helper_start(killed_out, fast_args);
        assert_true(wait_output(killed_out, "consuming", 10000));
        burn_n(1000, 2);
        kill(killed, SIGKILL);
        helper_wait(killed, 5000);
        /* a consumer that comes after the killed one reads the session still */
        char late_out[PATH_MAX];
        tmp_path(late_out, sizeof(late_out), "late.out");
        pid_t late = helper_start(late_out, fast_args);
        assert_true(wait_output(late_out, "consuming", 10000));
        struct rt_props q;
        for (int i = 0; i < 150; i++) {
                burn_n(500, 2);
                assert_int_equal(control(h, NULL, &q, EVENT_TRACE_CONTROL_QUERY), ERROR_SUCCESS);
                if (q.p.BuffersWritten > written_before + QUEUE + HOST_RT_RING_MAX_SLOTS + 40)
                        break;
        }
        ULONG rt_lost_running = q.p.RealTimeBuffersLost;
        assert_int_equal(control(h, NULL, &q, EVENT_TRACE_CONTROL_STOP), ERROR_SUCCESS);
        TraceSetInformation(0, TraceSampledProfileIntervalInfo, &usual, sizeof(usual));
        int fd = open(go, O_WRONLY | O_CREAT, 0600);
        if (fd >= 0)
                close(fd);
        assert_int_equal(helper_wait(fast, 20000), 0);
        assert_int_equal(helper_wait(late, 20000), 0);
        assert_int_equal(helper_wait(slow, 30000), 0);
        char fast_text[4096], slow_text[4096], late_text[4096];
        read_text(fast_out, fast_text, sizeof(fast_text));
        read_text(slow_out, slow_text, sizeof(slow_text));
        read_text(late_out, late_text, sizeof(late_text));
        if (getenv("HELPER_DEBUG"))
                print_message("fast:\n%s\nlate:\n%s\n", fast_text, late_text);
        print_message("fast: %s", strstr(fast_text, "done") ? strstr(fast_text, "done") : "?");
        print_message("slow: %s", strstr(slow_text, "done") ? strstr(slow_text, "done") : "?");
        print_message("late: %s", strstr(late_text, "done") ? strstr(late_text, "done") : "?");
        print_message("session: BuffersWritten %lu, RealTimeBuffersLost %lu (%lu while running)\n",
                      (unsigned long)q.p.BuffersWritten, (unsigned long)q.p.RealTimeBuffersLost,
                      (unsigned long)rt_lost_running);
        assert_true(q.p.BuffersWritten > written_before + QUEUE + HOST_RT_RING_MAX_SLOTS + 40);
        assert_int_equal(field(fast_text, "rc"), ERROR_SUCCESS);
        assert_int_equal(field(slow_text, "rc"), ERROR_SUCCESS);
        assert_int_equal(field(late_text, "rc"), ERROR_SUCCESS);
        assert_true(field(late_text, "buffers") > 3);
        assert_int_equal(field(fast_text, "lost"), 0);
        assert_true(field(slow_text, "lost") > 0);
        assert_true(field(slow_text, "buffers") < field(fast_text, "buffers"));
        assert_true(q.p.RealTimeBuffersLost >= field(slow_text, "lost"));
        /* every buffer the session completed reached the fast consumer, and the header */
        assert_true(field(fast_text, "buffers") >= q.p.BuffersWritten);
}

/* kill -9 of the host: a consumer's ProcessTrace and the controller say so, the file session's
   complete buffers read, and the next start replaces the stale socket. */
static void test_host_killed(void **state)
{
        (void)state;
        char file[PATH_MAX], out[PATH_MAX];
        tmp_path(file, sizeof(file), "host-killed.etl");
        tmp_path(out, sizeof(out), "host-killed.out");
        CONTROLTRACE_ID h = 0;
        start_kernel_or_skip(&h, "host-killed", file, 0);
        const char *args[] = {"consume", "host-killed", "0", "0", NULL};
        pid_t consumer = helper_start(out, args);
        assert_true(wait_output(out, "consuming", 10000));
        assert_true(burn_until_events(file, 100, 1));
        pid_t pid = host_pid();
        assert_true(process_alive(pid));
        assert_int_equal(kill(pid, SIGKILL), 0);
        for (int i = 0; i < 1500 && process_alive(pid); i++)
                sleep_ms(20);
        assert_int_equal(helper_wait(consumer, 10000), 0);
        char text[4096];
        read_text(out, text, sizeof(text));
        print_message("consumer: %s", strstr(text, "done") ? strstr(text, "done") : text);
        assert_int_equal(field(text, "rc"), ERROR_BROKEN_PIPE);
        assert_non_null(strstr(text, "killed?"));
        struct rt_props q;
        assert_int_equal(control(h, NULL, &q, EVENT_TRACE_CONTROL_QUERY),
                         ERROR_WMI_INSTANCE_NOT_FOUND);
        print_message("QUERY: %s\n", etw_last_error_text());
        assert_non_null(strstr(etw_last_error_text(), "is gone"));
        /* the file: every complete buffer reads, and its header says how many */
        struct replay r = {0};
        assert_int_equal(replay_file(file, &r), ERROR_SUCCESS);
        struct stat st;
        assert_int_equal(stat(file, &st), 0);
        assert_true(r.header.BuffersWritten > 1);
        /* the header is rewritten after each batch of buffers reaches the file, never before: a
           kill between the two leaves it a batch (16 buffers at most) behind, never ahead
           (tests/shell/record_killed.sh) */
        assert_true((off_t)r.header.BuffersWritten * 65536 <= st.st_size);
        assert_true(st.st_size / 65536 - (off_t)r.header.BuffersWritten <= 16);
        assert_true(atomic_load(&r.nr_events) > 100);
        /* the socket it left is stale; the next start replaces it */
        char sock[PATH_MAX];
        snprintf(sock, sizeof(sock), "%s/host.sock", host_dir);
        assert_int_equal(access(sock, F_OK), 0);
        assert_int_equal(start_plain(&h, "after-kill", NULL), ERROR_SUCCESS);
        assert_true(process_alive(host_pid()));
        assert_int_not_equal(host_pid(), pid);
        assert_int_equal(control(h, NULL, &q, EVENT_TRACE_CONTROL_STOP), ERROR_SUCCESS);
}

/* An unprivileged user neither sees nor stops root's session: the directory is root's (the
   client says so), and the host itself refuses another uid even when it can reach the socket. */
static void test_unprivileged_denied(void **state)
{
        (void)state;
        if (geteuid() != 0) {
                print_message("skipped: needs root to start a session another user is denied\n");
                skip();
        }
        if (system("command -v setpriv >/dev/null 2>&1") != 0) {
                print_message("skipped: setpriv (util-linux) is not installed\n");
                skip();
        }
        CONTROLTRACE_ID h = 0;
        assert_int_equal(start_plain(&h, "root-only", NULL), ERROR_SUCCESS);
        char cmd[4 * PATH_MAX], out[PATH_MAX], text[4096];
        tmp_path(out, sizeof(out), "nobody.out");
        assert_int_equal(chmod(tmp_dir, 0777), 0);
        snprintf(cmd, sizeof(cmd),
                 "setpriv --reuid=65534 --regid=65534 --clear-groups '%s' helper stop root-only "
                 ">'%s' 2>&1",
                 self_exe, out);
        int rc = system(cmd);
        read_text(out, text, sizeof(text));
        print_message("nobody: %s", text);
        if (rc != 0 || !strstr(text, "stop rc=")) {
                chmod(tmp_dir, 0700);
                struct rt_props q;
                control(h, NULL, &q, EVENT_TRACE_CONTROL_STOP);
                print_message("skipped: nobody cannot run this test program here\n");
                skip();
        }
        assert_int_equal(field(text, "rc"), ERROR_ACCESS_DENIED);
        assert_non_null(strstr(text, "belongs to uid 0"));
        /* nor consume it */
        snprintf(cmd, sizeof(cmd),
                 "setpriv --reuid=65534 --regid=65534 --clear-groups '%s' helper consume "
                 "root-only 0 0 >'%s' 2>&1",
                 self_exe, out);
        rc = system(cmd);
        read_text(out, text, sizeof(text));
        print_message("nobody, consumer: %s", text);
        assert_int_equal(field(text, "rc"), ERROR_ACCESS_DENIED);
        assert_non_null(strstr(text, "belongs to uid 0"));
        /* the socket opened to everyone: the host's own check of the peer still refuses */
        char sock[PATH_MAX];
        snprintf(sock, sizeof(sock), "%s/host.sock", host_dir);
        assert_int_equal(chmod(host_dir, 0755), 0);
        assert_int_equal(chmod(sock, 0666), 0);
        snprintf(cmd, sizeof(cmd),
                 "setpriv --reuid=65534 --regid=65534 --clear-groups '%s' helper raw '%s' >'%s' "
                 "2>&1",
                 self_exe, sock, out);
        rc = system(cmd);
        read_text(out, text, sizeof(text));
        print_message("nobody, raw: %s", text);
        assert_int_equal(field(text, "code"), ERROR_ACCESS_DENIED);
        assert_non_null(strstr(text, "refuses uid 65534"));
        /* refused before anything of it is read: a peer that sends nothing hears it at once */
        snprintf(cmd, sizeof(cmd),
                 "setpriv --reuid=65534 --regid=65534 --clear-groups '%s' helper raw '%s' silent "
                 ">'%s' 2>&1",
                 self_exe, sock, out);
        rc = system(cmd);
        chmod(sock, 0600);
        chmod(host_dir, 0700);
        chmod(tmp_dir, 0700);
        read_text(out, text, sizeof(text));
        print_message("nobody, raw, silent: %s", text);
        assert_int_equal(field(text, "code"), ERROR_ACCESS_DENIED);
        struct rt_props q;
        assert_int_equal(control(h, NULL, &q, EVENT_TRACE_CONTROL_QUERY), ERROR_SUCCESS);
        assert_int_equal(control(h, NULL, &q, EVENT_TRACE_CONTROL_STOP), ERROR_SUCCESS);
}

/* A raw connection to the host. */
static int raw_connect(void)
{
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%.60s/host.sock", host_dir);
        assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
        return fd;
}

/* Sends bytes and reads whatever comes back until the host closes (at most 15 s). */
static size_t raw_exchange(const void *bytes, size_t n, uint8_t *reply, size_t size)
{
        int fd = raw_connect();
        if (n)
                assert_int_equal(send(fd, bytes, n, MSG_NOSIGNAL), (ssize_t)n);
        shutdown(fd, SHUT_WR);
        size_t got = 0;
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        while (got < size && poll(&pfd, 1, 15000) > 0) {
                ssize_t k = read(fd, reply + got, size - got);
                if (k <= 0)
                        break;
                got += (size_t)k;
        }
        close(fd);
        return got;
}

/* Malformed, truncated, oversized and interleaved messages, and a client that stalls mid-request:
   the host answers or hangs up, and goes on serving. */
static void test_malformed_messages(void **state)
{
        (void)state;
        CONTROLTRACE_ID h = 0;
        assert_int_equal(start_plain(&h, "host-robust", NULL), ERROR_SUCCESS);
        pid_t pid = host_pid();
        static uint8_t reply[1 << 16];
        char why[256];
        struct host_reply rp;

        /* garbage */
        uint8_t junk[64];
        for (size_t i = 0; i < sizeof(junk); i++)
                junk[i] = (uint8_t)(i * 37 + 11);
        size_t n = raw_exchange(junk, sizeof(junk), reply, sizeof(reply));
        assert_int_equal(host_proto_decode_reply(reply, n, &rp, why, sizeof(why)), 0);
        assert_int_equal(rp.code, ERROR_INVALID_DATA);

        /* a header that announces 2 GB */
        struct host_request *rq = calloc(1, sizeof(*rq));
        rq->type = HOST_REQ_PING;
        struct host_msg m = {0};
        host_msg_request(&m, rq);
        uint8_t big[HOST_HEADER_SIZE];
        memcpy(big, m.data, sizeof(big));
        uint32_t huge = 0x80000000u;
        memcpy(big + 8, &huge, 4);
        n = raw_exchange(big, sizeof(big), reply, sizeof(reply));
        assert_int_equal(host_proto_decode_reply(reply, n, &rp, why, sizeof(why)), 0);
        assert_int_equal(rp.code, ERROR_BAD_LENGTH);

        /* truncated: every prefix of a START, then the connection closed */
        struct rt_props pr;
        props_init(&pr, EVENT_TRACE_REAL_TIME_MODE, NULL);
        rq->type = HOST_REQ_START;
        snprintf(rq->name, sizeof(rq->name), "never-started");
        rq->data = (const uint8_t *)&pr;
        rq->data_size = sizeof(pr);
        host_msg_request(&m, rq);
        for (size_t cut = 0; cut < m.size; cut += 97)
                raw_exchange(m.data, cut, reply, sizeof(reply));
        /* a body whose inner length lies */
        uint8_t *lie = malloc(m.size);
        memcpy(lie, m.data, m.size);
        uint32_t name_len = 0xFFFFFF00u;
        memcpy(lie + HOST_HEADER_SIZE + 4 + 8 + 4 + 4 + 8, &name_len, 4);
        n = raw_exchange(lie, m.size, reply, sizeof(reply));
        assert_int_equal(host_proto_decode_reply(reply, n, &rp, why, sizeof(why)), 0);
        assert_int_equal(rp.code, ERROR_INVALID_PARAMETER);
        assert_non_null(strstr(rp.msg, "malformed"));
        free(lie);

        /* a client that stalls after half a header: others are served meanwhile */
        int stalled = raw_connect();
        assert_int_equal(send(stalled, m.data, 7, MSG_NOSIGNAL), 7);
        /* two clients interleaving their requests byte by byte */
        rq->type = HOST_REQ_PING;
        host_msg_request(&m, rq);
        int a = raw_connect(), b = raw_connect();
        for (size_t i = 0; i < m.size; i++) {
                assert_int_equal(send(a, m.data + i, 1, MSG_NOSIGNAL), 1);
                assert_int_equal(send(b, m.data + i, 1, MSG_NOSIGNAL), 1);
        }
        int fds[2] = {a, b};
        for (int i = 0; i < 2; i++) {
                size_t got = 0;
                struct pollfd pfd = {.fd = fds[i], .events = POLLIN};
                while (poll(&pfd, 1, 5000) > 0) {
                        ssize_t k = read(fds[i], reply + got, sizeof(reply) - got);
                        if (k <= 0)
                                break;
                        got += (size_t)k;
                }
                assert_int_equal(host_proto_decode_reply(reply, got, &rp, why, sizeof(why)), 0);
                assert_int_equal(rp.code, ERROR_SUCCESS);
                assert_int_equal(rp.handle, (uint64_t)pid);
                close(fds[i]);
        }
        struct rt_props q;
        assert_int_equal(control(h, NULL, &q, EVENT_TRACE_CONTROL_QUERY), ERROR_SUCCESS);
        close(stalled);
        assert_int_equal(control(0, "never-started", &q, EVENT_TRACE_CONTROL_QUERY),
                         ERROR_WMI_INSTANCE_NOT_FOUND);
        assert_int_equal(host_pid(), pid);
        assert_true(process_alive(pid));
        assert_int_equal(control(h, NULL, &q, EVENT_TRACE_CONTROL_STOP), ERROR_SUCCESS);
        host_msg_free(&m);
        free(rq);
}

/* ---- what the host does for whom, and how much ------------------------------------------------
 */

/* Waits until no host serves host_dir (at most 10 s); whether none does. */
static bool wait_host_gone(void)
{
        for (int i = 0; i < 1500 && process_alive(host_pid()); i++)
                sleep_ms(20);
        return !process_alive(host_pid());
}

/* A real-time consumer that attaches over a raw connection and never reads. */
static int raw_attach(const char *name)
{
        int fd = raw_connect();
        struct host_request *rq = calloc(1, sizeof(*rq));
        rq->type = HOST_REQ_RT_ATTACH;
        snprintf(rq->name, sizeof(rq->name), "%s", name);
        struct host_msg m = {0};
        host_msg_request(&m, rq);
        assert_int_equal(send(fd, m.data, m.size, MSG_NOSIGNAL), (ssize_t)m.size);
        host_msg_free(&m);
        free(rq);
        return fd;
}

/* Sends a byte to each connection every 100 ms until told to stop. */
struct trickle {
        int fds[128];
        int nr_fds;
        atomic_bool is_done;
};

static void *trickle_thread(void *arg)
{
        struct trickle *t = arg;
        while (!atomic_load(&t->is_done)) {
                for (int i = 0; i < t->nr_fds; i++)
                        if (t->fds[i] >= 0)
                                send(t->fds[i], "E", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
                sleep_ms(100);
        }
        return NULL;
}

/* 128 connections that trickle a byte every 100 ms lock nobody out: a request must arrive whole
   within ETWTOP_HOST_IDLE_MS (1500 here), and a client that finds the host full waits its turn
   rather than being turned away. */
static void test_trickling_clients(void **state)
{
        (void)state;
        CONTROLTRACE_ID h = 0;
        assert_int_equal(start_plain(&h, "host-trickled", NULL), ERROR_SUCCESS);
        static struct trickle t;
        t.nr_fds = 0;
        atomic_store(&t.is_done, false);
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%.60s/host.sock", host_dir);
        /* connected in turn: each is accepted, or waits in the listen queue (65 long) */
        for (int i = 0; i < 128; i++) {
                int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
                assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
                send(fd, "E", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
                t.fds[t.nr_fds++] = fd;
        }
        print_message("%d trickling connections\n", t.nr_fds);
        pthread_t th;
        pthread_create(&th, NULL, trickle_thread, &t);
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        struct rt_props q;
        ULONG rc = control(h, NULL, &q, EVENT_TRACE_CONTROL_QUERY);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        print_message("QUERY among them: %lu after %ld ms: %s\n", (unsigned long)rc,
                      (long)((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000),
                      etw_last_error_text());
        atomic_store(&t.is_done, true);
        pthread_join(th, NULL);
        for (int i = 0; i < t.nr_fds; i++)
                close(t.fds[i]);
        assert_int_equal(rc, ERROR_SUCCESS);
        assert_int_equal(control(h, NULL, &q, EVENT_TRACE_CONTROL_STOP), ERROR_SUCCESS);
}

/* A raw RT_ATTACH of the session name with flags (a shared ring, in place): the reply checked,
   then the ring's or the pool's message in *rt, its memory file in *memfd; the connection. */
static int attach_shared(const char *name, uint32_t flags, struct host_rt_msg *rt, int *memfd)
{
        int fd = raw_connect();
        struct host_request *rq = calloc(1, sizeof(*rq));
        rq->type = HOST_REQ_RT_ATTACH;
        rq->flags = flags;
        snprintf(rq->name, sizeof(rq->name), "%s", name);
        struct host_msg m = {0};
        host_msg_request(&m, rq);
        free(rq);
        assert_int_equal(send(fd, m.data, m.size, MSG_NOSIGNAL), (ssize_t)m.size);
        host_msg_free(&m);
        char why[256];
        uint8_t *msg = NULL;
        size_t size = 0;
        struct host_reply rp;
        assert_int_equal(host_io_read_msg(fd, 30000, 30000, &msg, &size, why, sizeof(why)), 0);
        assert_int_equal(host_proto_decode_reply(msg, size, &rp, why, sizeof(why)), 0);
        assert_int_equal(rp.rc, 0);
        free(msg);
        assert_int_equal(host_io_read_msg_fd(fd, 30000, &msg, &size, memfd, why, sizeof(why)), 0);
        assert_int_equal(host_proto_decode_rt(msg, size, rt, why, sizeof(why)), 0);
        free(msg);
        return fd;
}

/* The host's memory file of bytes is sealed: no writable mapping, no write, no resize. */
static void check_sealed(int memfd, size_t bytes)
{
        assert_true(mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0) == MAP_FAILED);
        assert_int_equal(pwrite(memfd, "x", 1, 0), -1);
        assert_int_equal(ftruncate(memfd, 4096), -1);
        assert_int_equal(ftruncate(memfd, (off_t)bytes * 2), -1);
}

/* Whether the host hangs up fd within 30 s (what it sent before is read and dropped). */
static bool is_hung_up(int fd)
{
        for (int i = 0; i < 300; i++) {
                uint8_t drain[4096];
                struct pollfd pfd = {.fd = fd, .events = POLLIN | POLLRDHUP};
                if (poll(&pfd, 1, 100) > 0 && recv(fd, drain, sizeof(drain), MSG_DONTWAIT) == 0)
                        return true;
        }
        return false;
}

/* A release of buffers never handed over (next of them were): the host ends this stream (it
   hangs up fd, closed here) and goes on. */
static void end_by_bad_release(int fd, uint64_t next)
{
        struct host_msg m = {0};
        host_msg_rt_release(&m, next + 1000);
        assert_int_equal(send(fd, m.data, m.size, MSG_NOSIGNAL), (ssize_t)m.size);
        host_msg_free(&m);
        assert_true(is_hung_up(fd));
        close(fd);
}

/* A real-time consumer that never reads: once its session has stopped it is dropped within
   ETWTOP_HOST_DRAIN_MS (1500 here), its thread and queue freed, and the host can end. */
/* A consumer of a shared ring (HOST_FLAG_RT_RING): the ring's memory comes sealed, so that it
   can be mapped only to read (no writable mapping, no write, no resize); the slots each
   RT_SLOTS names hold the session's buffers (the first its log file header); releasing them
   lets more come; a release of slots never handed over ends that consumer's stream and
   nothing else: the host answers the next request. */
static void test_ring_consumer(void **state)
{
        (void)state;
        /* the fastest samples into 4 KB buffers: the ring goes round twice in a second or two */
        CONTROLTRACE_ID h = 0;
        need_started(start_fast(&h, "ring-read", 64, 4));
        int memfd = -1;
        struct host_rt_msg rt;
        int fd = attach_shared("ring-read", HOST_FLAG_RT_RING, &rt, &memfd);
        struct host_msg m = {0};
        char why[256];
        uint8_t *msg = NULL;
        size_t size = 0;
        assert_int_equal(rt.type, HOST_RT_RING);
        assert_true(rt.nr_slots >= 4);
        assert_int_equal(rt.size, 4 * 1024);
        assert_true(memfd >= 0);
        uint32_t nr_slots = rt.nr_slots, slot_size = rt.size;
        size_t bytes = (size_t)nr_slots * slot_size;
        check_sealed(memfd, bytes);
        const uint8_t *ring = mmap(NULL, bytes, PROT_READ, MAP_SHARED, memfd, 0);
        assert_true(ring != MAP_FAILED);
        assert_int_equal(mprotect((void *)ring, bytes, PROT_READ | PROT_WRITE), -1);
        close(memfd);
        /* the session's buffers, slot after slot: more than the ring holds, so that slots are
           given back and used again */
        uint64_t next = 0;
        for (int tries = 0; next < 2 * nr_slots && tries < 600; tries++) {
                burn_n(50, 2);
                int rc = host_io_read_msg(fd, 0, 30000, &msg, &size, why, sizeof(why));
                if (rc == -EAGAIN)
                        continue;
                assert_int_equal(rc, 0);
                assert_int_equal(host_proto_decode_rt(msg, size, &rt, why, sizeof(why)), 0);
                free(msg);
                assert_int_equal(rt.type, HOST_RT_SLOTS);
                assert_int_equal(rt.seq, next);
                assert_int_equal(rt.size, slot_size);
                assert_true(rt.nr_slots <= nr_slots);
                for (uint32_t i = 0; i < rt.nr_slots; i++) {
                        const uint8_t *b = ring + ((next + i) % nr_slots) * slot_size;
                        /* WMI_BUFFER_HEADER: BufferSize at 0, SavedOffset at 4 */
                        uint32_t buffer_size, saved;
                        memcpy(&buffer_size, b, 4);
                        memcpy(&saved, b + 4, 4);
                        assert_int_equal(buffer_size, slot_size);
                        assert_true(saved >= 72 && saved <= slot_size);
                }
                next += rt.nr_slots;
                host_msg_rt_release(&m, next);
                assert_int_equal(send(fd, m.data, m.size, MSG_NOSIGNAL), (ssize_t)m.size);
                host_msg_free(&m);
        }
        print_message("%llu buffers through a ring of %u slots\n", (unsigned long long)next,
                      nr_slots);
        assert_true(next >= 2 * nr_slots);
        end_by_bad_release(fd, next);
        munmap((void *)ring, bytes);
        struct rt_props q;
        assert_int_equal(control(h, NULL, &q, EVENT_TRACE_CONTROL_QUERY), ERROR_SUCCESS);
        assert_int_equal(control(h, NULL, &q, EVENT_TRACE_CONTROL_STOP), ERROR_SUCCESS);
        interval_usual();
}

/* Reads the next real-time message of fd, as rt: false when none came (the caller makes more
   events and asks again). */
static bool pool_read(int fd, struct host_rt_msg *rt, uint8_t **msg)
{
        char why[256];
        size_t size = 0;
        int rc = host_io_read_msg(fd, 0, 30000, msg, &size, why, sizeof(why));
        if (rc == -EAGAIN)
                return false;
        assert_int_equal(rc, 0);
        assert_int_equal(host_proto_decode_rt(*msg, size, rt, why, sizeof(why)), 0);
        return true;
}

/* A consumer in place (HOST_FLAG_RT_POOL) of a session that keeps a window: the pool comes
   sealed (no writable mapping, no write, no resize); each RT_PLACES names buffers of the pool,
   the first the log file header; a buffer handed out is not written again while the consumer
   holds it, though the window (16 buffers) goes round several times meanwhile: every one reads
   as it did when it came, and no two held share a place; once released, more come; a release
   of buffers never handed over ends that stream and nothing else. */
static void test_pool_consumer(void **state)
{
        (void)state;
        enum { HELD = 96, SIZE = 4096, MOST = HOST_RT_MAX_SLOTS };
        CONTROLTRACE_ID h = 0;
        need_started(start_fast(&h, "pool-read", 64, 4));
        assert_int_equal(etw_keep_window(h, 16 * SIZE), ERROR_SUCCESS);
        int memfd = -1;
        struct host_rt_msg rt;
        int fd = attach_shared("pool-read", HOST_FLAG_RT_RING | HOST_FLAG_RT_POOL, &rt, &memfd);
        struct host_msg m = {0};
        uint8_t *msg = NULL;
        assert_int_equal(rt.type, HOST_RT_POOL);
        assert_int_equal(rt.size, SIZE);
        assert_true(memfd >= 0);
        uint32_t nr_pool = rt.nr_slots;
        size_t bytes = (size_t)nr_pool * SIZE;
        check_sealed(memfd, bytes);
        const uint8_t *pool = mmap(NULL, bytes, PROT_READ, MAP_SHARED, memfd, 0);
        assert_true(pool != MAP_FAILED);
        close(memfd);
        /* HELD buffers or more taken and none given back: each copied as it came */
        uint8_t *seen = malloc((size_t)MOST * SIZE);
        uint32_t at[MOST];
        uint64_t next = 0;
        for (int tries = 0; next < HELD && tries < 600; tries++) {
                burn_n(50, 2);
                if (!pool_read(fd, &rt, &msg))
                        continue;
                assert_int_equal(rt.type, HOST_RT_PLACES);
                assert_int_equal(rt.seq, next);
                assert_int_equal(rt.size, SIZE);
                assert_true(next + rt.nr_slots <= MOST); /* never more than it may hold */
                for (uint32_t i = 0; i < rt.nr_slots; i++, next++) {
                        memcpy(&at[next], rt.places + 4 * i, 4);
                        assert_true(at[next] < nr_pool);
                        const uint8_t *b = pool + (size_t)at[next] * SIZE;
                        uint32_t buffer_size, saved;
                        memcpy(&buffer_size, b, 4);
                        memcpy(&saved, b + 4, 4);
                        assert_int_equal(buffer_size, SIZE);
                        assert_true(saved >= 72 && saved <= SIZE);
                        memcpy(seen + next * SIZE, b, SIZE);
                }
                free(msg);
        }
        assert_true(next >= HELD);
        /* the window went round meanwhile (HELD buffers of 16): what is held stayed as it was */
        for (uint64_t i = 0; i < next; i++) {
                assert_memory_equal(pool + (size_t)at[i] * SIZE, seen + i * SIZE, SIZE);
                for (uint64_t j = 0; j < i; j++)
                        assert_int_not_equal(at[i], at[j]);
        }
        free(seen);
        /* given back, more come, and go back */
        uint64_t upto = next + 3 * HELD;
        for (int tries = 0; next < upto && tries < 600; tries++) {
                host_msg_rt_release(&m, next);
                assert_int_equal(send(fd, m.data, m.size, MSG_NOSIGNAL), (ssize_t)m.size);
                host_msg_free(&m);
                burn_n(50, 2);
                while (next < upto && pool_read(fd, &rt, &msg)) {
                        assert_int_equal(rt.type, HOST_RT_PLACES);
                        assert_int_equal(rt.seq, next);
                        next += rt.nr_slots;
                        free(msg);
                }
        }
        print_message("%llu buffers read in place from a pool of %u\n", (unsigned long long)next,
                      nr_pool);
        assert_true(next >= upto);
        end_by_bad_release(fd, next);
        munmap((void *)pool, bytes);
        struct rt_props q;
        assert_int_equal(control(h, NULL, &q, EVENT_TRACE_CONTROL_QUERY), ERROR_SUCCESS);
        assert_int_equal(control(h, NULL, &q, EVENT_TRACE_CONTROL_STOP), ERROR_SUCCESS);
        interval_usual();
}

/* ---- held buffers (etw_realtime_set_held_buffer_callback) ---- */

enum { HELD_MAX = 1 << 14, HELD_LAG = 8 };

/* What a consumer holding the host's buffers saw. */
static struct {
        pthread_mutex_t lock;
        const uint8_t *buf[HELD_MAX];
        uint64_t id[HELD_MAX];
        uint64_t sum[HELD_MAX];
        ULONG size[HELD_MAX];
        uint32_t nr;          /* handed over */
        uint32_t nr_released; /* of them, given back */
        uint32_t nr_bad_ids;  /* not the one after the last */
        PROCESSTRACE_HANDLE h;
        ULONG rc;
        atomic_bool is_returned;
} g_held = {.lock = PTHREAD_MUTEX_INITIALIZER};

static uint64_t bytes_sum(const uint8_t *b, size_t n)
{
        uint64_t x = 1469598103934665603ull;
        for (size_t i = 0; i < n; i++)
                x = (x ^ b[i]) * 1099511628211ull;
        return x;
}

static VOID WINAPI on_held_buffer(PVOID ctx, const VOID *buf, ULONG size, ULONG64 id)
{
        (void)ctx;
        pthread_mutex_lock(&g_held.lock);
        uint32_t n = g_held.nr;
        if (id != (n ? g_held.id[n - 1] + 1 : id) || id == 0)
                g_held.nr_bad_ids++;
        if (n < HELD_MAX) {
                g_held.buf[n] = buf;
                g_held.id[n] = id;
                g_held.size[n] = size;
                g_held.sum[n] = bytes_sum(buf, size);
                g_held.nr++;
        }
        pthread_mutex_unlock(&g_held.lock);
}

static void *held_process(void *arg)
{
        (void)arg;
        g_held.rc = ProcessTrace(&g_held.h, 1, NULL, NULL);
        atomic_store(&g_held.is_returned, true);
        return NULL;
}

/* Gives back the buffers held but the newest keep, each checked first: its bytes are those it
   was handed over with (the host wrote nothing into its slot meanwhile). */
static void held_release(uint32_t keep)
{
        pthread_mutex_lock(&g_held.lock);
        uint32_t n = g_held.nr;
        pthread_mutex_unlock(&g_held.lock);
        for (; g_held.nr_released + keep < n; g_held.nr_released++) {
                uint32_t i = g_held.nr_released;
                assert_int_equal(bytes_sum(g_held.buf[i], g_held.size[i]), g_held.sum[i]);
                assert_int_equal(etw_realtime_release_buffers(g_held.h, g_held.id[i]),
                                 ERROR_SUCCESS);
        }
}

static pthread_t held_open(const char *name)
{
        pthread_mutex_lock(&g_held.lock);
        g_held.nr = g_held.nr_released = g_held.nr_bad_ids = 0;
        pthread_mutex_unlock(&g_held.lock);
        atomic_store(&g_held.is_returned, false);
        EVENT_TRACE_LOGFILEA lf;
        memset(&lf, 0, sizeof(lf));
        lf.LoggerName = (LPSTR)name;
        lf.ProcessTraceMode = PROCESS_TRACE_MODE_REAL_TIME | PROCESS_TRACE_MODE_EVENT_RECORD |
                              PROCESS_TRACE_MODE_RAW_TIMESTAMP;
        g_held.h = OpenTraceA(&lf);
        assert_int_not_equal(g_held.h, INVALID_PROCESSTRACE_HANDLE);
        assert_int_equal(etw_realtime_set_held_buffer_callback(g_held.h, on_held_buffer),
                         ERROR_SUCCESS);
        pthread_t th;
        assert_int_equal(pthread_create(&th, NULL, held_process, NULL), 0);
        return th;
}

/* A consumer of the host's ring holds its buffers where the host put them: each stays as it was
   until given back, the ring goes round many times without a loss, and ProcessTrace returns only
   once the last ones are given back (CloseTrace ends it at once). */
static void test_held_buffers(void **state)
{
        (void)state;
        CONTROLTRACE_ID h = 0;
        need_started(start_fast(&h, "held", 256, 4));
        pthread_t th = held_open("held");
        /* 400 buffers of 4 KB: round the ring (128 slots at most) three times */
        for (int tries = 0; tries < 600; tries++) {
                burn_n(50, 2);
                held_release(HELD_LAG);
                pthread_mutex_lock(&g_held.lock);
                uint32_t n = g_held.nr;
                pthread_mutex_unlock(&g_held.lock);
                if (n >= 400)
                        break;
        }
        held_release(HELD_LAG);
        assert_true(g_held.nr >= 400);
        assert_false(atomic_load(&g_held.is_returned));
        /* stopped with buffers held: ProcessTrace waits for them */
        struct rt_props q;
        assert_int_equal(control(h, NULL, &q, EVENT_TRACE_CONTROL_STOP), ERROR_SUCCESS);
        interval_usual();
        for (int i = 0; i < 100; i++) {
                held_release(HELD_LAG);
                sleep_ms(20);
        }
        assert_false(atomic_load(&g_held.is_returned));
        held_release(0);
        assert_int_equal(pthread_join(th, NULL), 0);
        assert_int_equal(g_held.rc, ERROR_SUCCESS);
        ULONG64 read = 0, lost = 0;
        assert_int_equal(etw_realtime_get_stats(g_held.h, &read, &lost), ERROR_SUCCESS);
        print_message("%u buffers held and given back, %llu lost\n", g_held.nr,
                      (unsigned long long)lost);
        assert_int_equal(g_held.nr_bad_ids, 0);
        assert_int_equal(lost, 0);
        assert_int_equal(read, g_held.nr);
        assert_int_equal(CloseTrace(g_held.h), ERROR_SUCCESS);
        assert_int_equal(etw_realtime_release_buffers(g_held.h, 1), ERROR_INVALID_HANDLE);

        /* CloseTrace while buffers are held: ProcessTrace returns */
        need_started(start_fast(&h, "held-close", 256, 4));
        th = held_open("held-close");
        for (int tries = 0; tries < 600; tries++) {
                burn_n(50, 2);
                pthread_mutex_lock(&g_held.lock);
                uint32_t n = g_held.nr;
                pthread_mutex_unlock(&g_held.lock);
                if (n >= 2)
                        break;
        }
        assert_true(g_held.nr >= 2);
        /* (ProcessTrace runs: the handle goes once it returns) */
        assert_int_equal(CloseTrace(g_held.h), ERROR_CTX_CLOSE_PENDING);
        assert_int_equal(pthread_join(th, NULL), 0);
        assert_true(atomic_load(&g_held.is_returned));
        assert_int_equal(control(h, NULL, &q, EVENT_TRACE_CONTROL_STOP), ERROR_SUCCESS);
        interval_usual();
}

/* The consumers the host counts for a session (ETWTOP_TRACE_CONSUMERS_INFO). */
static ULONG nr_consumers(CONTROLTRACE_ID h)
{
        ULONG nr = 99, len = 0;
        assert_int_equal(
                TraceQueryInformation(h, ETWTOP_TRACE_CONSUMERS_INFO, &nr, sizeof(nr), &len),
                ERROR_SUCCESS);
        return nr;
}

/* A consumer's CloseTrace returns once the host has detached its stream (which wakes when the
   consumer's socket hangs up, not at the session's next buffers, seconds later where they come
   slowly): a QUERY right after counts no consumer, and a STOP sent next finds nobody to write
   the session's end for (a screen's quit). Through the ring (no window), in place (a window's
   pool) and through the socket (ETWTOP_RT_SOCKET=1). */
static void test_closed_consumer_detached(void **state)
{
        (void)state;
        static const char *const names[] = {"closed-ring", "closed-pool", "closed-socket"};
        for (int way = 0; way < 3; way++) {
                /* a session without events: its stream waits for buffers that do not come */
                const char *name = names[way];
                CONTROLTRACE_ID h = 0;
                assert_int_equal(start_plain(&h, name, NULL), ERROR_SUCCESS);
                if (way == 1)
                        assert_int_equal(etw_keep_window(h, 64 * 4096), ERROR_SUCCESS);
                if (way == 2)
                        setenv("ETWTOP_RT_SOCKET", "1", 1);
                pthread_t th = held_open(name);
                for (int tries = 0; tries < 500 && nr_consumers(h) == 0; tries++)
                        sleep_ms(20);
                assert_int_equal(nr_consumers(h), 1);
                unsetenv("ETWTOP_RT_SOCKET"); /* read when the stream attached */
                /* (ProcessTrace runs: the handle goes once it returns) */
                assert_int_equal(CloseTrace(g_held.h), ERROR_CTX_CLOSE_PENDING);
                assert_int_equal(pthread_join(th, NULL), 0);
                assert_int_equal(nr_consumers(h), 0);
                struct rt_props q;
                assert_int_equal(control(h, NULL, &q, EVENT_TRACE_CONTROL_STOP), ERROR_SUCCESS);
        }
}

/* The state a consumer of the host's ring gets with its buffers (HOST_FLAG_RT_STATE,
   etw_realtime_get_session_state), what a screen would otherwise ask the host at each refresh:
   ControlTrace(QUERY)'s counters as of a recent buffer, and the settings' generation, the same
   as ETWTOP_TRACE_SETTINGS_INFO's while nothing changes and another once the settings do (the
   interval here); none once ProcessTrace returned, none of a handle that is not one. */
static void test_held_state(void **state)
{
        (void)state;
        CONTROLTRACE_ID h = 0;
        need_started(start_fast(&h, "held-state", 256, 4));
        struct etw_realtime_session_state s0, s1;
        pthread_t th = held_open("held-state");
        bool has_state = false;
        for (int tries = 0; tries < 600 && !has_state; tries++) {
                burn_n(50, 2);
                held_release(HELD_LAG);
                has_state = etw_realtime_get_session_state(g_held.h, &s0) == ERROR_SUCCESS;
        }
        assert_true(has_state);
        struct etw_session_settings *ss = calloc(1, sizeof(*ss));
        ULONG len = 0;
        assert_int_equal(
                TraceQueryInformation(h, ETWTOP_TRACE_SETTINGS_INFO, ss, sizeof(*ss), &len),
                ERROR_SUCCESS);
        struct rt_props q;
        assert_int_equal(control(h, NULL, &q, EVENT_TRACE_CONTROL_QUERY), ERROR_SUCCESS);
        print_message("state %llu: generation %llu (the query's %llu), %llu buffers written (%lu "
                      "now), %llu events lost\n",
                      (unsigned long long)s0.Sequence, (unsigned long long)s0.SettingsGeneration,
                      (unsigned long long)ss->SettingsGeneration,
                      (unsigned long long)s0.BuffersWritten, (unsigned long)q.p.BuffersWritten,
                      (unsigned long long)s0.EventsLost);
        assert_true(s0.Sequence > 0);
        assert_true(s0.SettingsGeneration > 0);
        assert_true(s0.SettingsGeneration == ss->SettingsGeneration);
        assert_int_equal(s0.BufferSize, q.p.BufferSize);
        assert_int_equal(s0.MaximumFileSize, q.p.MaximumFileSize);
        assert_true(s0.BuffersWritten >= 1 && s0.BuffersWritten <= q.p.BuffersWritten);
        assert_true(s0.EventsLost <= q.p.EventsLost);
        /* the settings change: a later state says so */
        TRACE_PROFILE_INTERVAL slower = {0, 2441};
        assert_int_equal(
                TraceSetInformation(0, TraceSampledProfileIntervalInfo, &slower, sizeof(slower)),
                ERROR_SUCCESS);
        bool is_moved = false;
        for (int tries = 0; tries < 600 && !is_moved; tries++) {
                burn_n(50, 2);
                held_release(HELD_LAG);
                is_moved = etw_realtime_get_session_state(g_held.h, &s1) == ERROR_SUCCESS &&
                           s1.Sequence > s0.Sequence &&
                           s1.SettingsGeneration != s0.SettingsGeneration;
        }
        assert_true(is_moved);
        assert_int_equal(
                TraceQueryInformation(h, ETWTOP_TRACE_SETTINGS_INFO, ss, sizeof(*ss), &len),
                ERROR_SUCCESS);
        assert_true(ss->SettingsGeneration != s0.SettingsGeneration);
        assert_int_equal(ss->ProfileInterval, 2441);
        free(ss);
        assert_int_equal(etw_realtime_get_session_state(g_held.h, NULL), ERROR_INVALID_PARAMETER);
        assert_int_equal(etw_realtime_get_session_state(g_held.h + 12345, &s1),
                         ERROR_INVALID_HANDLE);
        assert_int_equal(control(h, NULL, &q, EVENT_TRACE_CONTROL_STOP), ERROR_SUCCESS);
        interval_usual();
        held_release(0);
        for (int i = 0; i < 600 && !atomic_load(&g_held.is_returned); i++) {
                held_release(0);
                sleep_ms(20);
        }
        assert_int_equal(pthread_join(th, NULL), 0);
        assert_int_equal(etw_realtime_get_session_state(g_held.h, &s1), ERROR_NOT_SUPPORTED);
        assert_int_equal(CloseTrace(g_held.h), ERROR_SUCCESS);
}

static void test_consumer_dropped_after_stop(void **state)
{
        (void)state;
        CONTROLTRACE_ID h = 0;
        /* 40 buffers (640 KB) are more than the socket holds */
        need_started(start_fast(&h, "never-read", 64, 16));
        int fd = raw_attach("never-read");
        struct rt_props q;
        for (int i = 0; i < 100; i++) {
                burn(300);
                assert_int_equal(control(h, NULL, &q, EVENT_TRACE_CONTROL_QUERY), ERROR_SUCCESS);
                if (q.p.BuffersWritten > 40)
                        break;
        }
        pid_t pid = host_pid();
        assert_int_equal(control(h, NULL, &q, EVENT_TRACE_CONTROL_STOP), ERROR_SUCCESS);
        interval_usual();
        assert_true(q.p.BuffersWritten > 40);
        /* the host hangs up on it (what it holds is never read) */
        struct pollfd pfd = {.fd = fd, .events = POLLRDHUP};
        bool is_gone = false;
        for (int i = 0; i < 200 && !is_gone; i++)
                is_gone = poll(&pfd, 1, 100) > 0 && (pfd.revents & (POLLHUP | POLLRDHUP));
        close(fd);
        assert_true(is_gone);
        /* nothing holds the host now: it ends after its grace period */
        assert_true(wait_host_gone());
        assert_false(process_alive(pid));
}

/* MaximumBuffers is clamped to 1 GiB of buffers per session (and QUERY says so); a kept window
   over 1 GiB is refused. */
static void test_session_memory_caps(void **state)
{
        (void)state;
        struct rt_props pr;
        props_init(&pr, EVENT_TRACE_REAL_TIME_MODE, NULL);
        pr.p.BufferSize = 1024;
        pr.p.MaximumBuffers = 4000000;
        CONTROLTRACE_ID h = 0;
        assert_int_equal(StartTraceA(&h, "host-huge", &pr.p), ERROR_SUCCESS);
        print_message("MaximumBuffers asked 4000000 of 1 MB: %lu\n",
                      (unsigned long)pr.p.MaximumBuffers);
        struct rt_props q;
        assert_int_equal(control(h, NULL, &q, EVENT_TRACE_CONTROL_QUERY), ERROR_SUCCESS);
        assert_int_equal(q.p.MaximumBuffers, 1024);
        /* an UPDATE is clamped as well */
        props_init(&q, 0, NULL);
        q.p.MaximumBuffers = 3000000;
        assert_int_equal(ControlTraceA(h, NULL, &q.p, EVENT_TRACE_CONTROL_UPDATE), ERROR_SUCCESS);
        assert_int_equal(control(h, NULL, &q, EVENT_TRACE_CONTROL_QUERY), ERROR_SUCCESS);
        assert_int_equal(q.p.MaximumBuffers, 1024);
        ULONG rc = etw_keep_window(h, 4ull << 40);
        print_message("keep 4 TiB: %lu: %s\n", (unsigned long)rc, etw_last_error_text());
        assert_int_equal(rc, ERROR_INVALID_PARAMETER);
        assert_non_null(strstr(etw_last_error_text(), "at most 1024 MB"));
        assert_int_equal(etw_keep_window(h, 8u << 20), ERROR_SUCCESS);
        assert_int_equal(control(h, NULL, &q, EVENT_TRACE_CONTROL_STOP), ERROR_SUCCESS);
}

/* The real-time queues of every session of a host hold ETWTOP_HOST_MAX_MB together at most: a
   consumer that never reads loses buffers once they are full, long before its own queue
   (MaximumBuffers 200) is. Once the session has stopped and the consumer has taken nothing for
   ETWTOP_HOST_DRAIN_MS, its queue is freed, and when it reads again it gets the end of the
   trace with what it lost. */
static void test_host_memory_budget(void **state)
{
        (void)state;
        assert_true(wait_host_gone());
        /* 64 buffers of 16 KB (the smallest budget, and buffers that fill four times sooner
           than the usual 64 KB) */
        setenv("ETWTOP_HOST_MAX_MB", "1", 1);
        CONTROLTRACE_ID h = 0;
        ULONG rc = start_fast(&h, "host-budget", 400, 16);
        unsetenv("ETWTOP_HOST_MAX_MB"); /* the host started with it; later ones do not */
        need_started(rc);
        int fd = raw_attach("host-budget");
        struct rt_props q;
        /* until 200 buffers came (the state checked), for two minutes at most: how fast they
           come depends on the machine (a quiet one wrote 76 of 64 KB in the 36 s of a fixed
           count) */
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (;;) {
                burn_n(300, 2);
                assert_int_equal(control(h, NULL, &q, EVENT_TRACE_CONTROL_QUERY), ERROR_SUCCESS);
                clock_gettime(CLOCK_MONOTONIC, &t1);
                if (q.p.BuffersWritten >= 200 || t1.tv_sec - t0.tv_sec > 120)
                        break;
        }
        print_message("BuffersWritten %lu, RealTimeBuffersLost %lu, in %ld s\n",
                      (unsigned long)q.p.BuffersWritten, (unsigned long)q.p.RealTimeBuffersLost,
                      (long)(t1.tv_sec - t0.tv_sec));
        assert_int_equal(control(h, NULL, &q, EVENT_TRACE_CONTROL_STOP), ERROR_SUCCESS);
        interval_usual();
        assert_true(q.p.BuffersWritten >= 200);
        /* 64 buffers in the queue, some in the socket and in hand; the rest lost */
        assert_true(q.p.RealTimeBuffersLost + 110 >= q.p.BuffersWritten);

        /* the session stopped and the consumer takes nothing: after ETWTOP_HOST_DRAIN_MS its
           queue is freed (the budget can be had again) ... */
        CONTROLTRACE_ID probe = 0;
        assert_int_equal(start_plain(&probe, "budget-probe", NULL), ERROR_SUCCESS);
        rc = ERROR_NOT_ENOUGH_MEMORY;
        for (int i = 0; i < 1000 && rc == ERROR_NOT_ENOUGH_MEMORY; i++) {
                rc = etw_keep_window(probe, 768u << 10);
                if (rc == ERROR_NOT_ENOUGH_MEMORY)
                        sleep_ms(20);
        }
        print_message("a 768 KB window once the consumer was given up on: %lu %s\n",
                      (unsigned long)rc, etw_last_error_text());
        assert_int_equal(rc, ERROR_SUCCESS);
        /* ... and, reading again, it gets what it was sent and the end, its losses counted */
        static uint8_t stream[8 << 20];
        size_t got = 0;
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        while (got < sizeof(stream) && poll(&pfd, 1, 5000) > 0) {
                ssize_t k = read(fd, stream + got, sizeof(stream) - got);
                if (k <= 0)
                        break;
                got += (size_t)k;
        }
        close(fd);
        uint16_t type = 0, last = 0;
        size_t at = 0, last_at = 0;
        uint32_t body = 0;
        char why[256];
        int nr_msgs = 0;
        while (at + HOST_HEADER_SIZE <= got &&
               host_proto_check_header(stream + at, HOST_HEADER_SIZE, &type, &body, why,
                                       sizeof(why)) == 0 &&
               at + HOST_HEADER_SIZE + body <= got) {
                last = type;
                last_at = at;
                at += HOST_HEADER_SIZE + body;
                nr_msgs++;
        }
        print_message("the consumer read %zu bytes, %d messages, the last of type 0x%x\n", got,
                      nr_msgs, last);
        assert_int_equal(at, got);
        assert_int_equal(last, HOST_RT_END);
        struct host_rt_msg end;
        assert_int_equal(
                host_proto_decode_rt(stream + last_at, got - last_at, &end, why, sizeof(why)), 0);
        print_message("its end: %llu buffers lost\n", (unsigned long long)end.nr_lost);
        assert_true(end.nr_lost >= 90);
        assert_int_equal(control(probe, NULL, &q, EVENT_TRACE_CONTROL_STOP), ERROR_SUCCESS);
        assert_true(wait_host_gone());
}

/* Runs a shell command line; its output in text. */
static int run_cmd(const char *cmd, char *text, size_t size)
{
        char out[PATH_MAX], line[8 * PATH_MAX];
        tmp_path(out, sizeof(out), "cmd.out");
        snprintf(line, sizeof(line), "%s >'%s' 2>&1", cmd, out);
        int rc = system(line);
        read_text(out, text, size);
        return rc;
}

static int perf_paranoid(void)
{
        char text[32];
        read_text("/proc/sys/kernel/perf_event_paranoid", text, sizeof(text));
        return text[0] ? atoi(text) : 2;
}

/* A root client with capabilities dropped, or in a mount or pid namespace of its own, gets no
   more through the host than it could do itself: no CPU-wide perf events without CAP_PERFMON
   or CAP_SYS_ADMIN, no file replaced in a directory it cannot write, no file written in the
   host's namespace, no process traced that its pid names only in the host's. */
static void test_client_capabilities(void **state)
{
        (void)state;
        if (geteuid() != 0 || system("command -v capsh >/dev/null && command -v unshare "
                                     ">/dev/null") != 0) {
                print_message("skipped: needs root, capsh and unshare\n");
                skip();
        }
        CONTROLTRACE_ID h = 0;
        struct rt_props q;
        char cmd[4 * PATH_MAX], text[4096];
        /* the host runs, with every capability */
        assert_int_equal(start_plain(&h, "caps-anchor", NULL), ERROR_SUCCESS);

        /* a file it cannot replace itself: in a directory of another user, as root without
           CAP_DAC_OVERRIDE */
        char dir[PATH_MAX], victim[PATH_MAX];
        tmp_path(dir, sizeof(dir), "nobodys");
        assert_int_equal(mkdir(dir, 0755), 0);
        snprintf(victim, sizeof(victim), "%.200s/victim.etl", dir);
        FILE *f = fopen(victim, "w");
        assert_non_null(f);
        fputs("victim", f);
        fclose(f);
        assert_int_equal(chown(victim, 65534, 65534), 0);
        assert_int_equal(chown(dir, 65534, 65534), 0);
        snprintf(cmd, sizeof(cmd),
                 "capsh --drop=cap_dac_override,cap_dac_read_search,cap_fowner -- -c \"exec '%s' "
                 "helper save caps-save '%s'\"",
                 self_exe, victim);
        run_cmd(cmd, text, sizeof(text));
        print_message("save without CAP_DAC_OVERRIDE: %s", text);
        read_text(victim, cmd, sizeof(cmd));
        assert_string_equal(cmd, "victim");
        assert_non_null(strstr(text, "save rc="));
        assert_int_equal(field(text, "rc"), ERROR_ACCESS_DENIED);

        /* a mount namespace of its own: its names are not the host's files */
        char ns_file[PATH_MAX];
        tmp_path(ns_file, sizeof(ns_file), "other-ns.etl");
        snprintf(cmd, sizeof(cmd), "unshare -m '%s' helper plainfile caps-ns '%s'", self_exe,
                 ns_file);
        run_cmd(cmd, text, sizeof(text));
        print_message("unshare -m: %s", text);
        assert_int_equal(field(text, "rc"), ERROR_ACCESS_DENIED);
        assert_non_null(strstr(text, "mount namespace"));
        assert_int_not_equal(access(ns_file, F_OK), 0);

        /* a pid namespace of its own: its process 1 is not the host's */
        snprintf(cmd, sizeof(cmd), "unshare -p -f '%s' helper startpid caps-pidns", self_exe);
        run_cmd(cmd, text, sizeof(text));
        print_message("unshare -p: %s", text);
        assert_non_null(strstr(text, "startpid pid=1 "));
        assert_int_equal(field(text, "rc"), ERROR_ACCESS_DENIED);
        assert_non_null(strstr(text, "pid namespace"));

        /* CPU-wide perf events without CAP_PERFMON and CAP_SYS_ADMIN */
        if (perf_paranoid() <= 0) {
                print_message("perf_event_paranoid %d lets anyone open CPU-wide events: not "
                              "tested\n",
                              perf_paranoid());
        } else {
                CONTROLTRACE_ID k = 0;
                start_kernel_or_skip(&k, "caps-kernel", NULL, 0);
                assert_int_equal(control(k, NULL, &q, EVENT_TRACE_CONTROL_STOP), ERROR_SUCCESS);
                snprintf(cmd, sizeof(cmd),
                         "capsh --drop=cap_perfmon,cap_sys_admin -- -c \"exec '%s' helper start "
                         "caps-nocap - exit\"",
                         self_exe);
                run_cmd(cmd, text, sizeof(text));
                print_message("kernel logger without CAP_PERFMON: %s", text);
                if (field(text, "rc") == ERROR_SUCCESS)
                        control(0, "caps-nocap", &q, EVENT_TRACE_CONTROL_STOP);
                assert_int_equal(field(text, "rc"), ERROR_ACCESS_DENIED);
        }
        assert_int_equal(control(h, NULL, &q, EVENT_TRACE_CONTROL_STOP), ERROR_SUCCESS);
}

/* A user's host that holds CAP_PERFMON (here as an ambient capability, as a setcap'd binary
   gives it) opens no CPU-wide events for a client of that user under no_new_privs, which could
   not open them itself. */
static void test_no_new_privs_client(void **state)
{
        (void)state;
        if (geteuid() != 0 || system("command -v setpriv >/dev/null") != 0) {
                print_message("skipped: needs root and setpriv\n");
                skip();
        }
        if (perf_paranoid() <= 0) {
                print_message("skipped: perf_event_paranoid %d lets anyone open CPU-wide events\n",
                              perf_paranoid());
                skip();
        }
        char dir[64] = "/tmp/test_host_nnp.XXXXXX", cmd[4 * PATH_MAX], text[4096];
        assert_non_null(mkdtemp(dir));
        assert_int_equal(chown(dir, 65534, 65534), 0);
        assert_int_equal(chmod(tmp_dir, 0777), 0);
        snprintf(cmd, sizeof(cmd),
                 "setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=+perfmon "
                 "--ambient-caps=+perfmon env ETWTOP_RUNTIME_DIR='%s' '%s' helper host "
                 ">'%s/nnp-host.out' 2>&1 &",
                 dir, self_exe, tmp_dir);
        assert_int_equal(system(cmd), 0);
        char sock[PATH_MAX], lock[PATH_MAX], status[PATH_MAX];
        snprintf(sock, sizeof(sock), "%s/host.sock", dir);
        snprintf(lock, sizeof(lock), "%s/host.lock", dir);
        for (int i = 0; i < 1500 && access(sock, F_OK) != 0; i++)
                sleep_ms(20);
        read_text(lock, text, sizeof(text));
        pid_t pid = (pid_t)atoi(text);
        snprintf(status, sizeof(status), "/proc/%d/status", (int)pid);
        read_text(status, text, sizeof(text));
        const char *eff = strstr(text, "CapEff:");
        unsigned long long caps = eff ? strtoull(eff + 7, NULL, 16) : 0;
        if (pid <= 0 || !((caps >> 38) & 1)) {
                if (pid > 0)
                        kill(pid, SIGTERM);
                chmod(tmp_dir, 0700);
                print_message("skipped: no host of nobody with CAP_PERFMON (pid %d, CapEff %llx)\n",
                              (int)pid, caps);
                skip();
        }
        snprintf(cmd, sizeof(cmd),
                 "setpriv --reuid=65534 --regid=65534 --clear-groups --no-new-privs env "
                 "ETWTOP_RUNTIME_DIR='%s' '%s' helper start nnp-kernel - exit",
                 dir, self_exe);
        run_cmd(cmd, text, sizeof(text));
        print_message("no_new_privs client of a CAP_PERFMON host: %s", text);
        kill(pid, SIGTERM); /* stops what it runs */
        for (int i = 0; i < 1500 && process_alive(pid); i++)
                sleep_ms(20);
        chmod(tmp_dir, 0700);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        assert_int_equal(system(cmd), 0);
        assert_int_equal(field(text, "rc"), ERROR_ACCESS_DENIED);
}

/* Two hosts never serve one directory; a host run in the foreground ends on SIGTERM. */
static void test_one_host_per_directory(void **state)
{
        (void)state;
        /* wait out a host left from the tests before (no session, grace 300 ms) */
        for (int i = 0; i < 1200 && process_alive(host_pid()); i++)
                sleep_ms(50);
        char out1[PATH_MAX], text[4096];
        tmp_path(out1, sizeof(out1), "host1.out");
        const char *args[] = {"host", NULL};
        pid_t first = helper_start(out1, args);
        for (int i = 0; i < 1200 && host_pid() != first; i++)
                sleep_ms(50);
        assert_int_equal(host_pid(), first);
        sleep_ms(200);
        assert_int_equal(helper_run(args, text, sizeof(text)), 0);
        assert_int_equal(field(text, "rc"), ERROR_ALREADY_EXISTS);
        /* persistent: it stays without a session */
        sleep_ms(600);
        assert_true(process_alive(first));
        CONTROLTRACE_ID h;
        assert_int_equal(start_plain(&h, "on-the-first", NULL), ERROR_SUCCESS);
        assert_int_equal(host_pid(), first);
        kill(first, SIGTERM);
        assert_int_equal(helper_wait(first, 10000), 0);
        read_text(out1, text, sizeof(text));
        assert_int_equal(field(text, "rc"), ERROR_SUCCESS);
        /* its session was stopped with it */
        struct rt_props q;
        assert_int_equal(control(h, NULL, &q, EVENT_TRACE_CONTROL_QUERY),
                         ERROR_WMI_INSTANCE_NOT_FOUND);
}

/* The systemd unit of the repository passes systemd-analyze verify (with ExecStart pointed at a
   program that exists here). */
static void test_systemd_unit(void **state)
{
        (void)state;
        const char *unit = getenv("ETWTOP_HOST_UNIT");
        if (!unit || access(unit, R_OK) != 0) {
                print_message("skipped: ETWTOP_HOST_UNIT does not name dist/etwtop-host.service\n");
                skip();
        }
        if (system("command -v systemd-analyze >/dev/null 2>&1") != 0) {
                print_message("skipped: systemd-analyze is not installed\n");
                skip();
        }
        char copy[PATH_MAX], cmd[4 * PATH_MAX], out[PATH_MAX], text[4096];
        tmp_path(copy, sizeof(copy), "etwtop-host.service");
        tmp_path(out, sizeof(out), "verify.out");
        const char *etwtop = getenv("ETWTOP");
        snprintf(cmd, sizeof(cmd), "sed 's|^ExecStart=[^ ]*|ExecStart=%s|' '%s' >'%s'",
                 etwtop && *etwtop ? etwtop : "/bin/true", unit, copy);
        assert_int_equal(system(cmd), 0);
        snprintf(cmd, sizeof(cmd), "systemd-analyze verify '%s' >'%s' 2>&1", copy, out);
        int rc = system(cmd);
        read_text(out, text, sizeof(text));
        if (rc != 0)
                print_error("%s", text);
        assert_int_equal(rc, 0);
        /* what verify says about the unit itself, not about the machine's other units */
        assert_null(strstr(text, "etwtop-host.service:"));
}

/* etw_host_prestart: a host where none runs, the same one when one does, the one the next
   session runs in; none with ETWTOP_NO_HOST. */
static void test_prestart(void **state)
{
        (void)state;
        assert_true(wait_host_gone());
        /* the prestarted host waits long enough for the session below, however busy the
           machine (it reads the grace from the environment it is forked with) */
        setenv("ETWTOP_HOST_GRACE_MS", "60000", 1);
        assert_int_equal(etw_host_prestart(), ERROR_SUCCESS);
        setenv("ETWTOP_HOST_GRACE_MS", "300", 1);
        pid_t first = host_pid();
        assert_true(process_alive(first));
        assert_int_equal(etw_host_prestart(), ERROR_SUCCESS);
        assert_int_equal(host_pid(), first);
        CONTROLTRACE_ID h;
        assert_int_equal(start_plain(&h, "prestarted", NULL), ERROR_SUCCESS);
        assert_int_equal(host_pid(), first);
        struct rt_props q;
        assert_int_equal(control(h, NULL, &q, EVENT_TRACE_CONTROL_STOP), ERROR_SUCCESS);
        kill(first, SIGTERM);
        assert_true(wait_host_gone());
        /* in-process sessions: nothing to start */
        char out[PATH_MAX], cmd[4 * PATH_MAX], text[4096];
        tmp_path(out, sizeof(out), "prestart.out");
        snprintf(cmd, sizeof(cmd), "ETWTOP_NO_HOST=1 '%s' helper prestart >'%s' 2>&1", self_exe,
                 out);
        assert_int_equal(system(cmd), 0);
        read_text(out, text, sizeof(text));
        assert_int_equal(field(text, "rc"), ERROR_SUCCESS);
        assert_false(process_alive(host_pid()));
}

/* ETWTOP_NO_HOST: a session stays inside its process; the host never sees it. */
static void test_no_host_escape_hatch(void **state)
{
        (void)state;
        char out[PATH_MAX], cmd[4 * PATH_MAX], text[4096];
        tmp_path(out, sizeof(out), "nohost.out");
        snprintf(cmd, sizeof(cmd), "ETWTOP_NO_HOST=1 '%s' helper plain in-process >'%s' 2>&1",
                 self_exe, out);
        assert_int_equal(system(cmd), 0);
        read_text(out, text, sizeof(text));
        assert_int_equal(field(text, "rc"), ERROR_SUCCESS);
        struct rt_props q;
        assert_int_equal(control(0, "in-process", &q, EVENT_TRACE_CONTROL_QUERY),
                         ERROR_WMI_INSTANCE_NOT_FOUND);
}

static int group_setup(void **state)
{
        (void)state;
        snprintf(tmp_dir, sizeof(tmp_dir), "/tmp/test_host.XXXXXX");
        snprintf(host_dir, sizeof(host_dir), "/tmp/test_host_rt.XXXXXX");
        if (!mkdtemp(tmp_dir) || !mkdtemp(host_dir))
                return -1;
        setenv("ETWTOP_RUNTIME_DIR", host_dir, 1);
        setenv("ETWTOP_HOST_GRACE_MS", "300", 1);
        setenv("ETWTOP_HOST_IDLE_MS", "1500", 1);
        setenv("ETWTOP_HOST_DRAIN_MS", "1500", 1);
        /* the host's look at its socket once in 10 minutes: a host that ends in a test's wait
           for it (a minute at most) ended at its grace, woken when its last session stopped */
        setenv("ETWTOP_HOST_CHECK_MS", "600000", 1);
        unsetenv("ETWTOP_NO_HOST");
        return 0;
}

static int group_teardown(void **state)
{
        (void)state;
        /* a host left running ends once its socket is gone */
        char cmd[PATH_MAX + 64];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s'", tmp_dir, host_dir);
        return system(cmd) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
        live_nice();
        ssize_t n = readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1);
        if (n <= 0)
                return 1;
        self_exe[n] = '\0';
        if (argc > 2 && !strcmp(argv[1], "helper"))
                return helper_main(argc, argv);
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_proto_roundtrip),
                cmocka_unit_test(test_rt_parts),
                cmocka_unit_test(test_rt_batch_parts),
                cmocka_unit_test(test_ring_messages),
                cmocka_unit_test(test_read_msg_parts),
                cmocka_unit_test(test_read_msg_kept),
                cmocka_unit_test(test_session_is_the_systems),
                cmocka_unit_test(test_kept_connection),
                cmocka_unit_test(test_query_all_traces),
                cmocka_unit_test(test_relative_file_name),
                cmocka_unit_test(test_no_host_escape_hatch),
                cmocka_unit_test(test_prestart),
                cmocka_unit_test(test_malformed_messages),
                cmocka_unit_test(test_unprivileged_denied),
                cmocka_unit_test(test_trickling_clients),
                cmocka_unit_test(test_session_memory_caps),
                cmocka_unit_test(test_client_capabilities),
                cmocka_unit_test(test_no_new_privs_client),
                cmocka_unit_test(test_starter_killed),
                cmocka_unit_test(test_bound_session_ends_with_starter),
                cmocka_unit_test(test_consumers),
                cmocka_unit_test(test_host_killed),
                cmocka_unit_test(test_ring_consumer),
                cmocka_unit_test(test_pool_consumer),
                cmocka_unit_test(test_held_buffers),
                cmocka_unit_test(test_held_state),
                cmocka_unit_test(test_closed_consumer_detached),
                cmocka_unit_test(test_consumer_dropped_after_stop),
                cmocka_unit_test(test_host_memory_budget),
                cmocka_unit_test(test_one_host_per_directory),
                cmocka_unit_test(test_systemd_unit),
        };
        return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
