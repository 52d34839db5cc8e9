/* SPDX-License-Identifier: MIT */
/* test_controller.c: cmocka conformance tests for the controller API (StartTraceA, ControlTraceA
   and its wrappers, TraceSetInformation, TraceQueryInformation, TraceConfigureLastBranchRecord,
   StartKernelTrace) and real-time delivery: every documented error of seeds 000-004 and the
   Windows documentation, then live kernel sessions (skipped without perf privileges). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "etw/KernelTraceControl.h"
#include "etw/etwtop_ext.h"
#include "etw/evntrace.h"
#include "etw/ntwmi.h"
#include "etl_reader.h"
#include "live_source.h"
#include "session_api.h"
#include "fifo_permitted.h"
#include "thread_state.h"
#include "live_nice.h"

/* EVENT_TRACE_PROPERTIES followed by the two names, as the seeds lay them out. */
struct props {
        EVENT_TRACE_PROPERTIES p;
        char logger_name[1024];
        char log_file_name[1024];
};

static char tmp_dir[512];

static int group_setup(void **state)
{
        (void)state;
        const char *base = getenv("TMPDIR");
        snprintf(tmp_dir, sizeof(tmp_dir), "%.400s/test_controller.XXXXXX", base ? base : "/tmp");
        return mkdtemp(tmp_dir) ? 0 : -1;
}

static int group_teardown(void **state)
{
        (void)state;
        char cmd[PATH_MAX + 16];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp_dir);
        return system(cmd) == 0 ? 0 : -1;
}

/* A path in the test directory. */
static void tmp_path(char *out, size_t size, const char *name)
{
        snprintf(out, size, "%.400s/%.100s", tmp_dir, name);
}

/* Properties for a session with the given mode and log file (NULL: none). */
static void props_init(struct props *pr, ULONG mode, const char *file)
{
        memset(pr, 0, sizeof(*pr));
        pr->p.Wnode.BufferSize = sizeof(*pr);
        pr->p.Wnode.Flags = WNODE_FLAG_TRACED_GUID;
        pr->p.LogFileMode = mode;
        pr->p.LoggerNameOffset = offsetof(struct props, logger_name);
        if (file) {
                pr->p.LogFileNameOffset = offsetof(struct props, log_file_name);
                snprintf(pr->log_file_name, sizeof(pr->log_file_name), "%.1000s", file);
        }
}

/* Properties for a QUERY/STOP/UPDATE: only the size and the offsets. */
static void props_query(struct props *pr)
{
        props_init(pr, 0, NULL);
        pr->p.LogFileNameOffset = offsetof(struct props, log_file_name);
}

static void stop_by_handle(CONTROLTRACE_ID h)
{
        struct props q;
        props_query(&q);
        assert_int_equal(ControlTraceA(h, NULL, &q.p, EVENT_TRACE_CONTROL_STOP), ERROR_SUCCESS);
}

static void sleep_ms(long ms)
{
        struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
        nanosleep(&ts, NULL);
}

/* Starts a kernel logger, or skips the test when perf_event_open is not permitted here. */
static ULONG start_kernel_or_skip(CONTROLTRACE_ID *h, const char *name, struct props *pr)
{
        ULONG rc = StartTraceA(h, name, &pr->p);
        if (rc == ERROR_ACCESS_DENIED) {
                print_message("skipped: the live source is not permitted here: %s\n",
                              etw_last_error_text());
                skip();
        }
        if (rc != ERROR_SUCCESS)
                print_message("StartTrace(%s): %u: %s\n", name, rc, etw_last_error_text());
        return rc;
}

/* How often needle occurs in text. */
static int count_substr(const char *text, const char *needle)
{
        int n = 0;
        for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
                n++;
        return n;
}

/* What ProcessTrace delivered. */
struct tally {
        atomic_ulong nr_events;
        atomic_ulong nr_header;
        ULONG buffers_read;
        int64_t min_ts, max_ts;
        GUID first_guid[2]; /* of the first two events */
        UCHAR first_opcode[2];
};

static VOID WINAPI count_event(PEVENT_RECORD er)
{
        struct tally *t = er->UserContext;
        unsigned long n = atomic_fetch_add(&t->nr_events, 1);
        if (n < 2) {
                t->first_guid[n] = er->EventHeader.ProviderId;
                t->first_opcode[n] = er->EventHeader.EventDescriptor.Opcode;
        }
        if (IsEqualGUID(&er->EventHeader.ProviderId, &EventTraceGuid) &&
            er->EventHeader.EventDescriptor.Opcode == 0)
                atomic_fetch_add(&t->nr_header, 1);
        int64_t ts = er->EventHeader.TimeStamp.QuadPart;
        if (n == 0 || ts < t->min_ts)
                t->min_ts = ts;
        if (ts > t->max_ts)
                t->max_ts = ts;
}

/* Reads a whole file back; returns its header in *hdr. */
static ULONG read_back(const char *path, struct tally *t, TRACE_LOGFILE_HEADER *hdr)
{
        EVENT_TRACE_LOGFILEA lf;
        memset(&lf, 0, sizeof(lf));
        lf.LogFileName = (LPSTR)path;
        lf.ProcessTraceMode = PROCESS_TRACE_MODE_EVENT_RECORD;
        lf.EventRecordCallback = count_event;
        lf.Context = t;
        PROCESSTRACE_HANDLE h = OpenTraceA(&lf);
        if (h == INVALID_PROCESSTRACE_HANDLE)
                return GetLastError();
        *hdr = lf.LogfileHeader;
        ULONG rc = ProcessTrace(&h, 1, NULL, NULL);
        t->buffers_read = lf.BuffersRead;
        CloseTrace(h);
        return rc;
}

/* Whether the kernel tells this machine's CPU speed (/proc/cpuinfo "cpu MHz", or cpufreq), so
   that a logfile header's CpuSpeedInMHz can be expected non-zero. */
static bool machine_tells_mhz(void)
{
        FILE *f = fopen("/proc/cpuinfo", "r");
        char line[256];
        double mhz = 0;
        while (f && fgets(line, sizeof(line), f))
                if (sscanf(line, "cpu MHz : %lf", &mhz) == 1)
                        break;
        if (f)
                fclose(f);
        return mhz >= 1 ||
               access("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", R_OK) == 0;
}

/* Issue 13 item 15: what a file's header says of the machine and of itself. */
static void check_header_names_file(const char *path)
{
        struct etl_reader *r = NULL;
        struct etl_error err;
        assert_int_equal(etl_reader_open_file(&r, path, &err), 0);
        const struct etl_logfile *lf = etl_reader_logfile(r);
        assert_string_equal(lf->log_file_name, path);
        if (machine_tells_mhz())
                assert_true(lf->header.CpuSpeedInMHz > 0);
        else
                print_message("note: the kernel tells no CPU speed here: CpuSpeedInMHz not "
                              "checked\n");
        etl_reader_close(r);
}

/* ---- StartTrace: parameter checks --------------------------------------------------------- */

static void test_start_null_arguments(void **state)
{
        (void)state;
        struct props pr;
        CONTROLTRACE_ID h = 123;
        props_init(&pr, EVENT_TRACE_REAL_TIME_MODE, NULL);
        assert_int_equal(StartTraceA(NULL, "ctl-null", &pr.p), ERROR_INVALID_PARAMETER);
        assert_int_equal(StartTraceA(&h, "ctl-null", NULL), ERROR_INVALID_PARAMETER);
        assert_int_equal(h, 0);
        assert_int_equal(StartTraceA(&h, NULL, &pr.p), ERROR_INVALID_PARAMETER);
        assert_int_equal(StartTraceA(&h, "", &pr.p), ERROR_INVALID_PARAMETER);
        assert_int_equal(GetLastError(), ERROR_INVALID_PARAMETER);
        assert_true(etw_last_error_text()[0] != '\0');
}

static void test_start_buffer_size(void **state)
{
        (void)state;
        struct props pr;
        CONTROLTRACE_ID h;
        props_init(&pr, EVENT_TRACE_REAL_TIME_MODE, NULL);
        pr.p.Wnode.BufferSize = sizeof(EVENT_TRACE_PROPERTIES) - 1;
        assert_int_equal(StartTraceA(&h, "ctl-size", &pr.p), ERROR_BAD_LENGTH);
        /* room for the structure but not for the name at the offset */
        props_init(&pr, EVENT_TRACE_REAL_TIME_MODE, NULL);
        pr.p.LoggerNameOffset = sizeof(EVENT_TRACE_PROPERTIES);
        pr.p.Wnode.BufferSize = sizeof(EVENT_TRACE_PROPERTIES) + 4;
        assert_int_equal(StartTraceA(&h, "ctl-size", &pr.p), ERROR_BAD_LENGTH);
        pr.p.Wnode.BufferSize = sizeof(EVENT_TRACE_PROPERTIES) + 9; /* "ctl-size" + NUL */
        assert_int_equal(StartTraceA(&h, "ctl-size", &pr.p), ERROR_SUCCESS);
        assert_string_equal((char *)&pr.p + pr.p.LoggerNameOffset, "ctl-size");
        stop_by_handle(h);
}

static void test_start_needs_traced_guid(void **state)
{
        (void)state;
        struct props pr;
        CONTROLTRACE_ID h;
        props_init(&pr, EVENT_TRACE_REAL_TIME_MODE, NULL);
        pr.p.Wnode.Flags = 0;
        assert_int_equal(StartTraceA(&h, "ctl-guid", &pr.p), ERROR_INVALID_PARAMETER);
        assert_non_null(strstr(etw_last_error_text(), "WNODE_FLAG_TRACED_GUID"));
}

static void test_start_name_offsets(void **state)
{
        (void)state;
        struct props pr;
        CONTROLTRACE_ID h;
        char path[PATH_MAX];
        tmp_path(path, sizeof(path), "offsets.etl");
        static const ULONG bad_logger[] = {0, 8, sizeof(EVENT_TRACE_PROPERTIES) - 1,
                                           sizeof(struct props)};
        for (size_t i = 0; i < sizeof(bad_logger) / sizeof(bad_logger[0]); i++) {
                props_init(&pr, EVENT_TRACE_FILE_MODE_SEQUENTIAL, path);
                pr.p.LoggerNameOffset = bad_logger[i];
                assert_int_equal(StartTraceA(&h, "ctl-off", &pr.p), ERROR_INVALID_PARAMETER);
        }
        /* the file name outside the buffer, inside the structure, or before the logger name */
        static const ULONG bad_file[] = {16, sizeof(struct props) + 8,
                                         sizeof(EVENT_TRACE_PROPERTIES)};
        for (size_t i = 0; i < sizeof(bad_file) / sizeof(bad_file[0]); i++) {
                props_init(&pr, EVENT_TRACE_FILE_MODE_SEQUENTIAL, path);
                pr.p.LogFileNameOffset = bad_file[i];
                assert_int_equal(StartTraceA(&h, "ctl-off", &pr.p), ERROR_INVALID_PARAMETER);
        }
        /* a file name with no NUL inside the buffer */
        props_init(&pr, EVENT_TRACE_FILE_MODE_SEQUENTIAL, path);
        memset(pr.log_file_name, 'x', sizeof(pr.log_file_name));
        assert_int_equal(StartTraceA(&h, "ctl-off", &pr.p), ERROR_BAD_LENGTH);
        assert_int_equal(access(path, F_OK), -1);
}

static void test_start_client_context(void **state)
{
        (void)state;
        struct props pr;
        CONTROLTRACE_ID h;
        props_init(&pr, EVENT_TRACE_REAL_TIME_MODE, NULL);
        pr.p.Wnode.ClientContext = 4;
        assert_int_equal(StartTraceA(&h, "ctl-clock", &pr.p), ERROR_INVALID_PARAMETER);
        static const ULONG in[] = {0, 1, 2, 3}, out[] = {1, 1, 2, 3};
        for (int i = 0; i < 4; i++) {
                props_init(&pr, EVENT_TRACE_REAL_TIME_MODE, NULL);
                pr.p.Wnode.ClientContext = in[i];
                assert_int_equal(StartTraceA(&h, "ctl-clock", &pr.p), ERROR_SUCCESS);
                assert_int_equal(pr.p.Wnode.ClientContext, out[i]);
                struct props q;
                props_query(&q);
                assert_int_equal(QueryTraceA(h, NULL, &q.p), ERROR_SUCCESS);
                assert_int_equal(q.p.Wnode.ClientContext, out[i]);
                stop_by_handle(h);
        }
}

static void test_start_log_file_modes(void **state)
{
        (void)state;
        char path[PATH_MAX], newfile[PATH_MAX];
        tmp_path(path, sizeof(path), "modes.etl");
        tmp_path(newfile, sizeof(newfile), "modes_%d.etl");
        static const struct {
                ULONG mode;
                ULONG max_file_size;
                bool has_file;
                bool is_newfile_name;
        } invalid[] = {
                {EVENT_TRACE_FILE_MODE_SEQUENTIAL | EVENT_TRACE_FILE_MODE_CIRCULAR, 1, true, false},
                {EVENT_TRACE_FILE_MODE_SEQUENTIAL | EVENT_TRACE_FILE_MODE_NEWFILE, 1, true, true},
                {EVENT_TRACE_FILE_MODE_CIRCULAR | EVENT_TRACE_FILE_MODE_APPEND, 1, true, false},
                {EVENT_TRACE_FILE_MODE_CIRCULAR | EVENT_TRACE_FILE_MODE_NEWFILE, 1, true, true},
                {EVENT_TRACE_FILE_MODE_NEWFILE | EVENT_TRACE_FILE_MODE_APPEND, 1, true, true},
                {EVENT_TRACE_FILE_MODE_CIRCULAR, 0, true, false},
                {EVENT_TRACE_FILE_MODE_NEWFILE, 1, true, false}, /* no %d */
                {EVENT_TRACE_FILE_MODE_NEWFILE, 0, true, true},
                {EVENT_TRACE_FILE_MODE_SEQUENTIAL | EVENT_TRACE_FILE_MODE_PREALLOCATE, 0, true,
                 false},
                {EVENT_TRACE_FILE_MODE_APPEND | EVENT_TRACE_PRIVATE_LOGGER_MODE, 0, true, false},
                {EVENT_TRACE_BUFFERING_MODE | EVENT_TRACE_REAL_TIME_MODE, 0, false, false},
                {EVENT_TRACE_BUFFERING_MODE, 0, true, false},
                {EVENT_TRACE_BUFFERING_MODE | EVENT_TRACE_FILE_MODE_SEQUENTIAL, 0, true, false},
                {EVENT_TRACE_PRIVATE_LOGGER_MODE | EVENT_TRACE_SYSTEM_LOGGER_MODE |
                         EVENT_TRACE_REAL_TIME_MODE,
                 0, false, false},
                {EVENT_TRACE_RELOG_MODE | EVENT_TRACE_REAL_TIME_MODE, 0, false, false},
                {EVENT_TRACE_MODE_RESERVED | EVENT_TRACE_REAL_TIME_MODE, 0, false, false},
                {EVENT_TRACE_FILE_MODE_SEQUENTIAL, 0, false, false}, /* a file mode, no file */
                {EVENT_TRACE_FILE_MODE_NONE, 0, false, false},       /* nowhere to log */
        };
        for (size_t i = 0; i < sizeof(invalid) / sizeof(invalid[0]); i++) {
                struct props pr;
                CONTROLTRACE_ID h = 1;
                props_init(&pr, invalid[i].mode,
                           invalid[i].has_file ? (invalid[i].is_newfile_name ? newfile : path)
                                               : NULL);
                pr.p.MaximumFileSize = invalid[i].max_file_size;
                ULONG rc = StartTraceA(&h, "ctl-mode", &pr.p);
                if (rc != ERROR_INVALID_PARAMETER)
                        print_message("mode 0x%x: %u %s\n", invalid[i].mode, rc,
                                      etw_last_error_text());
                assert_int_equal(rc, ERROR_INVALID_PARAMETER);
                assert_int_equal(h, 0);
        }
        assert_int_equal(access(path, F_OK), -1);
        /* a valid NEWFILE request: validated, then not supported here */
        struct props pr;
        CONTROLTRACE_ID h;
        props_init(&pr, EVENT_TRACE_FILE_MODE_NEWFILE, newfile);
        pr.p.MaximumFileSize = 1;
        assert_int_equal(StartTraceA(&h, "ctl-mode", &pr.p), ERROR_NOT_SUPPORTED);
        /* LogFileMode 0 with a file name: a sequential file (seed 004) */
        props_init(&pr, 0, path);
        assert_int_equal(StartTraceA(&h, "ctl-mode", &pr.p), ERROR_SUCCESS);
        assert_true(pr.p.LogFileMode & EVENT_TRACE_FILE_MODE_SEQUENTIAL);
        stop_by_handle(h);
        unlink(path);
        /* real-time only, with a file name: a sequential file too */
        props_init(&pr, EVENT_TRACE_REAL_TIME_MODE, path);
        assert_int_equal(StartTraceA(&h, "ctl-mode", &pr.p), ERROR_SUCCESS);
        assert_int_equal(pr.p.LogFileMode,
                         EVENT_TRACE_REAL_TIME_MODE | EVENT_TRACE_FILE_MODE_SEQUENTIAL);
        assert_int_equal(access(path, F_OK), 0);
        stop_by_handle(h);
        unlink(path);
}

static void test_start_fills_properties(void **state)
{
        (void)state;
        struct props pr;
        CONTROLTRACE_ID h;
        props_init(&pr, EVENT_TRACE_REAL_TIME_MODE, NULL);
        pr.p.MinimumBuffers = 1;
        pr.p.MaximumBuffers = 0;
        assert_int_equal(StartTraceA(&h, "ctl-fill", &pr.p), ERROR_SUCCESS);
        assert_true(h != 0);
        assert_int_equal(pr.p.Wnode.HistoricalContext, h);
        assert_string_equal(pr.logger_name, "ctl-fill");
        assert_int_equal(pr.p.BufferSize, 64); /* KB, the default */
        assert_int_equal(pr.p.FlushTimer, 1);
        assert_true(pr.p.MinimumBuffers >= 2);
        assert_true(pr.p.MaximumBuffers >= pr.p.MinimumBuffers);
        assert_true(pr.p.LoggerThreadId != 0);
        assert_true(pr.p.LoggerThreadId != (HANDLE)(uintptr_t)gettid());
        static const GUID zero;
        assert_false(IsEqualGUID(&pr.p.Wnode.Guid, &zero));
        assert_int_equal(pr.p.EnableFlags, 0); /* not a kernel logger */
        stop_by_handle(h);
        /* BufferSize is clamped to 1 MB */
        props_init(&pr, EVENT_TRACE_REAL_TIME_MODE, NULL);
        pr.p.BufferSize = 4096;
        assert_int_equal(StartTraceA(&h, "ctl-fill", &pr.p), ERROR_SUCCESS);
        assert_int_equal(pr.p.BufferSize, 1024);
        stop_by_handle(h);
}

static void test_start_already_exists(void **state)
{
        (void)state;
        struct props pr;
        CONTROLTRACE_ID h, h2 = 7;
        props_init(&pr, EVENT_TRACE_REAL_TIME_MODE, NULL);
        assert_int_equal(StartTraceA(&h, "Ctl-Exists", &pr.p), ERROR_SUCCESS);
        props_init(&pr, EVENT_TRACE_REAL_TIME_MODE, NULL);
        assert_int_equal(StartTraceA(&h2, "CTL-EXISTS", &pr.p), ERROR_ALREADY_EXISTS);
        assert_int_equal(h2, 0);
        /* the same session GUID under another name */
        struct props q;
        props_query(&q);
        assert_int_equal(QueryTraceA(h, NULL, &q.p), ERROR_SUCCESS);
        props_init(&pr, EVENT_TRACE_REAL_TIME_MODE, NULL);
        pr.p.Wnode.Guid = q.p.Wnode.Guid;
        assert_int_equal(StartTraceA(&h2, "ctl-other", &pr.p), ERROR_ALREADY_EXISTS);
        stop_by_handle(h);
        /* the name is free again */
        props_init(&pr, EVENT_TRACE_REAL_TIME_MODE, NULL);
        assert_int_equal(StartTraceA(&h2, "ctl-exists", &pr.p), ERROR_SUCCESS);
        assert_true(h2 != h);
        stop_by_handle(h2);
}

static void test_start_kernel_guid_and_flags(void **state)
{
        (void)state;
        struct props pr;
        CONTROLTRACE_ID h;
        props_init(&pr, EVENT_TRACE_REAL_TIME_MODE, NULL);
        pr.p.Wnode.Guid = SystemTraceControlGuid;
        assert_int_equal(StartTraceA(&h, "ctl-not-kernel", &pr.p), ERROR_INVALID_PARAMETER);
        props_init(&pr, EVENT_TRACE_REAL_TIME_MODE, NULL);
        pr.p.EnableFlags = 0x08000000;
        assert_int_equal(StartTraceA(&h, KERNEL_LOGGER_NAMEA, &pr.p), ERROR_INVALID_FLAGS);
        pr.p.EnableFlags = EVENT_TRACE_FLAG_EXTENSION | 0x00ff0488;
        assert_int_equal(StartTraceA(&h, "nt kernel logger", &pr.p), ERROR_INVALID_FLAGS);
        assert_non_null(strstr(etw_last_error_text(), "TraceSystemTraceEnableFlagsInfo"));
        props_init(&pr, EVENT_TRACE_REAL_TIME_MODE | EVENT_TRACE_SYSTEM_LOGGER_MODE, NULL);
        pr.p.EnableFlags = 0x08000000;
        assert_int_equal(StartTraceA(&h, "ctl-system", &pr.p), ERROR_INVALID_FLAGS);
}

static void test_start_files(void **state)
{
        (void)state;
        char path[PATH_MAX], missing[PATH_MAX], link[PATH_MAX], target[PATH_MAX];
        tmp_path(path, sizeof(path), "plain.etl");
        tmp_path(missing, sizeof(missing), "no/such/dir/x.etl");
        tmp_path(link, sizeof(link), "link.etl");
        tmp_path(target, sizeof(target), "target.etl");
        struct props pr;
        CONTROLTRACE_ID h, h2;
        props_init(&pr, EVENT_TRACE_FILE_MODE_SEQUENTIAL, path);
        assert_int_equal(StartTraceA(&h, "ctl-file", &pr.p), ERROR_SUCCESS);
        struct stat st;
        assert_int_equal(stat(path, &st), 0);
        assert_int_equal(st.st_mode & 0777, 0600);
        /* another session may not write the same file */
        props_init(&pr, EVENT_TRACE_FILE_MODE_SEQUENTIAL, path);
        assert_int_equal(StartTraceA(&h2, "ctl-file2", &pr.p), ERROR_BAD_PATHNAME);
        stop_by_handle(h);
        /* a plain session writes a file that reads back: its header, no events */
        struct tally t = {0};
        TRACE_LOGFILE_HEADER hdr;
        assert_int_equal(read_back(path, &t, &hdr), ERROR_SUCCESS);
        assert_int_equal(hdr.BufferSize, 64 * 1024);
        assert_int_equal(hdr.PointerSize, 8);
        assert_true(hdr.EndTime.QuadPart >= hdr.StartTime.QuadPart);
        assert_int_equal(hdr.PerfFreq.QuadPart, 1000000000);
        assert_int_equal(t.nr_header, 1);
        check_header_names_file(path);
        /* an existing file is never replaced */
        props_init(&pr, EVENT_TRACE_FILE_MODE_SEQUENTIAL, path);
        assert_int_equal(StartTraceA(&h, "ctl-file", &pr.p), ERROR_FILE_EXISTS);
        assert_non_null(strstr(etw_last_error_text(), "plain.etl"));
        props_init(&pr, EVENT_TRACE_FILE_MODE_APPEND, path);
        assert_int_equal(StartTraceA(&h, "ctl-file", &pr.p), ERROR_NOT_SUPPORTED);
        assert_int_equal(stat(path, &st), 0);
        assert_true(st.st_size > 0);
        /* APPEND to a file that does not exist creates it */
        unlink(path);
        props_init(&pr, EVENT_TRACE_FILE_MODE_APPEND, path);
        assert_int_equal(StartTraceA(&h, "ctl-file", &pr.p), ERROR_SUCCESS);
        stop_by_handle(h);
        unlink(path);
        /* a missing directory, a symlink */
        props_init(&pr, EVENT_TRACE_FILE_MODE_SEQUENTIAL, missing);
        assert_int_equal(StartTraceA(&h, "ctl-file", &pr.p), ERROR_PATH_NOT_FOUND);
        assert_int_equal(symlink(target, link), 0);
        props_init(&pr, EVENT_TRACE_FILE_MODE_SEQUENTIAL, link);
        ULONG rc = StartTraceA(&h, "ctl-file", &pr.p);
        assert_true(rc == ERROR_FILE_EXISTS || rc == ERROR_ACCESS_DENIED);
        assert_int_equal(access(target, F_OK), -1);
        unlink(link);
}

static void test_start_too_many_sessions(void **state)
{
        (void)state;
        CONTROLTRACE_ID h[65];
        int n = 0;
        ULONG rc = ERROR_SUCCESS;
        for (; n < 65; n++) {
                struct props pr;
                char name[32];
                snprintf(name, sizeof(name), "ctl-many-%d", n);
                props_init(&pr, EVENT_TRACE_REAL_TIME_MODE, NULL);
                rc = StartTraceA(&h[n], name, &pr.p);
                if (rc != ERROR_SUCCESS)
                        break;
        }
        assert_int_equal(rc, ERROR_NO_SYSTEM_RESOURCES);
        assert_true(n <= 64);
        for (int i = 0; i < n; i++)
                stop_by_handle(h[i]);
}

/* ---- ControlTrace ------------------------------------------------------------------------- */

static void test_control_errors(void **state)
{
        (void)state;
        struct props pr, q;
        CONTROLTRACE_ID h;
        props_init(&pr, EVENT_TRACE_REAL_TIME_MODE, NULL);
        assert_int_equal(StartTraceA(&h, "ctl-control", &pr.p), ERROR_SUCCESS);
        props_query(&q);
        assert_int_equal(ControlTraceA(h, NULL, NULL, EVENT_TRACE_CONTROL_QUERY),
                         ERROR_INVALID_PARAMETER);
        assert_int_equal(ControlTraceA(h, NULL, &q.p, 9), ERROR_INVALID_PARAMETER);
        assert_int_equal(ControlTraceA(h, NULL, &q.p, EVENT_TRACE_CONTROL_INCREMENT_FILE),
                         ERROR_NOT_SUPPORTED);
        assert_int_equal(ControlTraceA(h, NULL, &q.p, EVENT_TRACE_CONTROL_CONVERT_TO_REALTIME),
                         ERROR_NOT_SUPPORTED);
        assert_int_equal(ControlTraceA(0, NULL, &q.p, EVENT_TRACE_CONTROL_QUERY),
                         ERROR_INVALID_PARAMETER);
        assert_int_equal(ControlTraceA(0, "", &q.p, EVENT_TRACE_CONTROL_QUERY),
                         ERROR_INVALID_PARAMETER);
        q.p.Wnode.BufferSize = sizeof(EVENT_TRACE_PROPERTIES) - 8;
        assert_int_equal(ControlTraceA(h, NULL, &q.p, EVENT_TRACE_CONTROL_QUERY), ERROR_BAD_LENGTH);
        props_query(&q);
        q.p.LoggerNameOffset = 12;
        assert_int_equal(ControlTraceA(h, NULL, &q.p, EVENT_TRACE_CONTROL_QUERY),
                         ERROR_INVALID_PARAMETER);
        props_query(&q);
        q.p.LogFileNameOffset = sizeof(q) + 1;
        assert_int_equal(ControlTraceA(h, NULL, &q.p, EVENT_TRACE_CONTROL_QUERY),
                         ERROR_INVALID_PARAMETER);
        props_query(&q);
        assert_int_equal(ControlTraceA(h ^ (1ull << 40), NULL, &q.p, EVENT_TRACE_CONTROL_QUERY),
                         ERROR_WMI_INSTANCE_NOT_FOUND);
        assert_int_equal(ControlTraceA(0, "ctl-no-such-session", &q.p, EVENT_TRACE_CONTROL_QUERY),
                         ERROR_WMI_INSTANCE_NOT_FOUND);
        assert_non_null(strstr(etw_last_error_text(), "ctl-no-such-session"));
        /* by name, case-insensitively, and by handle */
        assert_int_equal(QueryTraceA(0, "CTL-CONTROL", &q.p), ERROR_SUCCESS);
        assert_string_equal(q.logger_name, "ctl-control");
        assert_string_equal(q.log_file_name, "");
        assert_int_equal(q.p.Wnode.HistoricalContext, h);
        assert_int_equal(FlushTraceA(h, NULL, &q.p), ERROR_SUCCESS);
        /* names that do not fit: ERROR_MORE_DATA, the statistics still filled */
        memset(&q, 0, sizeof(q));
        q.p.Wnode.BufferSize = sizeof(EVENT_TRACE_PROPERTIES) + 4;
        q.p.LoggerNameOffset = sizeof(EVENT_TRACE_PROPERTIES);
        assert_int_equal(QueryTraceA(h, NULL, &q.p), ERROR_MORE_DATA);
        assert_int_equal(q.p.Wnode.HistoricalContext, h);
        assert_true(q.p.LoggerThreadId != 0);
        /* STOP with names that do not fit still stops */
        assert_int_equal(StopTraceA(h, NULL, &q.p), ERROR_MORE_DATA);
        props_query(&q);
        assert_int_equal(StopTraceA(h, NULL, &q.p), ERROR_WMI_INSTANCE_NOT_FOUND);
        assert_int_equal(QueryTraceA(0, "ctl-control", &q.p), ERROR_WMI_INSTANCE_NOT_FOUND);
}

static void test_control_update_plain(void **state)
{
        (void)state;
        struct props pr, q;
        CONTROLTRACE_ID h;
        props_init(&pr, EVENT_TRACE_REAL_TIME_MODE, NULL);
        pr.p.MaximumBuffers = 64;
        assert_int_equal(StartTraceA(&h, "ctl-update", &pr.p), ERROR_SUCCESS);
        props_query(&q);
        q.p.FlushTimer = 3;
        q.p.MaximumBuffers = 80;
        q.p.EnableFlags = EVENT_TRACE_FLAG_PROCESS; /* ignored: not a kernel logger */
        assert_int_equal(UpdateTraceA(0, "ctl-update", &q.p), ERROR_SUCCESS);
        assert_int_equal(q.p.FlushTimer, 3);
        assert_int_equal(q.p.MaximumBuffers, 80);
        assert_int_equal(q.p.EnableFlags, 0);
        /* zero keeps the values */
        props_query(&q);
        assert_int_equal(UpdateTraceA(h, NULL, &q.p), ERROR_SUCCESS);
        assert_int_equal(q.p.FlushTimer, 3);
        assert_int_equal(q.p.MaximumBuffers, 80);
        /* a real-time-only session cannot switch to a file */
        props_query(&q);
        snprintf(q.log_file_name, sizeof(q.log_file_name), "%.900s/update.etl", tmp_dir);
        assert_int_equal(UpdateTraceA(h, NULL, &q.p), ERROR_INVALID_PARAMETER);
        stop_by_handle(h);
}

static void test_control_update_switches_file(void **state)
{
        (void)state;
        char a[PATH_MAX], b[PATH_MAX];
        tmp_path(a, sizeof(a), "switch_a.etl");
        tmp_path(b, sizeof(b), "switch_b.etl");
        struct props pr, q;
        CONTROLTRACE_ID h;
        props_init(&pr, EVENT_TRACE_FILE_MODE_SEQUENTIAL, a);
        assert_int_equal(StartTraceA(&h, "ctl-switch", &pr.p), ERROR_SUCCESS);
        props_query(&q);
        snprintf(q.log_file_name, sizeof(q.log_file_name), "%.1000s", a); /* the same: no switch */
        assert_int_equal(UpdateTraceA(h, NULL, &q.p), ERROR_SUCCESS);
        props_query(&q);
        snprintf(q.log_file_name, sizeof(q.log_file_name), "%.1000s", b);
        assert_int_equal(UpdateTraceA(h, NULL, &q.p), ERROR_SUCCESS);
        assert_string_equal(q.log_file_name, b);
        stop_by_handle(h);
        struct tally t = {0};
        TRACE_LOGFILE_HEADER hdr;
        assert_int_equal(read_back(a, &t, &hdr), ERROR_SUCCESS);
        memset(&t, 0, sizeof(t));
        assert_int_equal(read_back(b, &t, &hdr), ERROR_SUCCESS);
        unlink(a);
        unlink(b);
}

/* ---- TraceSetInformation / TraceQueryInformation: sizes and handles ----------------------- */

static void test_set_stack_tracing_sizes(void **state)
{
        (void)state;
        CLASSIC_EVENT_ID ids[257];
        memset(ids, 0, sizeof(ids));
        for (int i = 0; i < 257; i++) {
                ids[i].EventGuid = ThreadGuid;
                ids[i].Type = 36;
        }
        CONTROLTRACE_ID bogus = 0x7777000000000005ull;
        assert_int_equal(TraceSetInformation(bogus, TraceStackTracingInfo, ids, 25),
                         ERROR_INCORRECT_SIZE);
        assert_int_equal(TraceSetInformation(bogus, TraceStackTracingInfo, ids, sizeof(ids)),
                         ERROR_INCORRECT_SIZE);
        assert_int_equal(TraceSetInformation(bogus, TraceStackTracingInfo, ids, 0),
                         ERROR_INVALID_PARAMETER);
        assert_int_equal(TraceSetInformation(bogus, TraceStackTracingInfo, NULL, 24),
                         ERROR_INVALID_PARAMETER);
        assert_int_equal(TraceSetInformation(bogus, TraceStackTracingInfo, ids, 256 * 24),
                         ERROR_WMI_INSTANCE_NOT_FOUND);
        assert_int_equal(TraceSetInformation(0, TraceStackTracingInfo, ids, 24),
                         ERROR_INVALID_PARAMETER);
        /* a session that is not a kernel logger */
        struct props pr;
        CONTROLTRACE_ID h;
        props_init(&pr, EVENT_TRACE_REAL_TIME_MODE, NULL);
        assert_int_equal(StartTraceA(&h, "ctl-stack", &pr.p), ERROR_SUCCESS);
        assert_int_equal(TraceSetInformation(h, TraceStackTracingInfo, ids, 24),
                         ERROR_INVALID_PARAMETER);
        ULONG ret = 0;
        assert_int_equal(TraceQueryInformation(h, TraceStackTracingInfo, ids, sizeof(ids), &ret),
                         ERROR_INVALID_PARAMETER);
        stop_by_handle(h);
}

static void test_set_group_mask_sizes(void **state)
{
        (void)state;
        PERFINFO_GROUPMASK gm[2];
        memset(gm, 0, sizeof(gm));
        CONTROLTRACE_ID bogus = 0x7777000000000005ull;
        assert_int_equal(TraceSetInformation(bogus, TraceSystemTraceEnableFlagsInfo, gm, 6),
                         ERROR_INVALID_PARAMETER);
        assert_int_equal(TraceSetInformation(bogus, TraceSystemTraceEnableFlagsInfo, gm, 36),
                         ERROR_INVALID_PARAMETER);
        assert_int_equal(TraceSetInformation(bogus, TraceSystemTraceEnableFlagsInfo, NULL, 4),
                         ERROR_INVALID_PARAMETER);
        assert_int_equal(TraceSetInformation(bogus, TraceSystemTraceEnableFlagsInfo, gm, 32),
                         ERROR_WMI_INSTANCE_NOT_FOUND);
}

static void test_profile_interval(void **state)
{
        (void)state;
        TRACE_PROFILE_INTERVAL tpi = {ProfileTime, 5000};
        uint8_t big[9] = {0};
        assert_int_equal(TraceSetInformation(1, TraceSampledProfileIntervalInfo, &tpi, 8),
                         ERROR_INVALID_PARAMETER);
        assert_int_equal(TraceSetInformation(0, TraceSampledProfileIntervalInfo, &tpi, 7),
                         ERROR_BAD_LENGTH);
        assert_int_equal(TraceSetInformation(0, TraceSampledProfileIntervalInfo, big, 9),
                         ERROR_BAD_LENGTH);
        assert_int_equal(TraceSetInformation(0, TraceSampledProfileIntervalInfo, NULL, 8),
                         ERROR_INVALID_PARAMETER);
        TRACE_PROFILE_INTERVAL bad = {999, 5000};
        assert_int_equal(TraceSetInformation(0, TraceSampledProfileIntervalInfo, &bad, 8),
                         ERROR_INVALID_PARAMETER);
        assert_int_equal(TraceSetInformation(0, TraceSampledProfileIntervalInfo, &tpi, 8),
                         ERROR_SUCCESS);
        TRACE_PROFILE_INTERVAL q = {ProfileTime, 0};
        ULONG ret = 0;
        assert_int_equal(TraceQueryInformation(0, TraceSampledProfileIntervalInfo, &q, 8, &ret),
                         ERROR_SUCCESS);
        assert_int_equal(q.Interval, 5000);
        assert_int_equal(ret, 8);
        assert_int_equal(TraceQueryInformation(5, TraceSampledProfileIntervalInfo, &q, 8, &ret),
                         ERROR_INVALID_PARAMETER);
        assert_int_equal(TraceQueryInformation(0, TraceSampledProfileIntervalInfo, &q, 4, &ret),
                         ERROR_BAD_LENGTH);
        assert_int_equal(ret, 8);
        /* clamped to the timer's range (1221 .. 1000000) */
        tpi.Interval = 10;
        assert_int_equal(TraceSetInformation(0, TraceSampledProfileIntervalInfo, &tpi, 8),
                         ERROR_SUCCESS);
        q.Interval = 0;
        assert_int_equal(TraceQueryInformation(0, TraceSampledProfileIntervalInfo, &q, 8, NULL),
                         ERROR_SUCCESS);
        assert_int_equal(q.Interval, 1221);
        /* a PMC source keeps its own interval */
        TRACE_PROFILE_INTERVAL pmc = {ProfileBranchInstructions, 65536};
        assert_int_equal(TraceSetInformation(0, TraceSampledProfileIntervalInfo, &pmc, 8),
                         ERROR_SUCCESS);
        tpi.Interval = 10000;
        assert_int_equal(TraceSetInformation(0, TraceSampledProfileIntervalInfo, &tpi, 8),
                         ERROR_SUCCESS);
        q = (TRACE_PROFILE_INTERVAL){ProfileBranchInstructions, 0};
        assert_int_equal(TraceQueryInformation(0, TraceSampledProfileIntervalInfo, &q, 8, NULL),
                         ERROR_SUCCESS);
        assert_int_equal(q.Interval, 65536);
}

static void test_profile_source_config(void **state)
{
        (void)state;
        ULONG src[5] = {ProfileTime, ProfileTime, ProfileTime, ProfileTime, ProfileTime};
        assert_int_equal(TraceSetInformation(0, TraceProfileSourceConfigInfo, src, 6),
                         ERROR_INCORRECT_SIZE);
        assert_int_equal(TraceSetInformation(0, TraceProfileSourceConfigInfo, src, 20),
                         ERROR_INCORRECT_SIZE);
        assert_int_equal(TraceSetInformation(0, TraceProfileSourceConfigInfo, src, 0),
                         ERROR_INVALID_PARAMETER);
        assert_int_equal(TraceSetInformation(0, TraceProfileSourceConfigInfo, NULL, 4),
                         ERROR_INVALID_PARAMETER);
        ULONG one = ProfileBranchInstructions;
        assert_int_equal(TraceSetInformation(0, TraceProfileSourceConfigInfo, &one, 4),
                         ERROR_SUCCESS);
        ULONG got[4] = {0}, ret = 0;
        assert_int_equal(
                TraceQueryInformation(0, TraceProfileSourceConfigInfo, got, sizeof(got), &ret),
                ERROR_SUCCESS);
        assert_int_equal(ret, 4);
        assert_int_equal(got[0], ProfileBranchInstructions);
        assert_int_equal(
                TraceSetInformation(0x7777000000000005ull, TraceProfileSourceConfigInfo, &one, 4),
                ERROR_WMI_INSTANCE_NOT_FOUND);
        one = ProfileTime;
        assert_int_equal(TraceSetInformation(0, TraceProfileSourceConfigInfo, &one, 4),
                         ERROR_SUCCESS);
}

static void test_pmc_list_sizes(void **state)
{
        (void)state;
        CLASSIC_EVENT_ID ids[5];
        memset(ids, 0, sizeof(ids));
        CONTROLTRACE_ID bogus = 0x7777000000000005ull;
        assert_int_equal(TraceSetInformation(bogus, TracePmcEventListInfo, ids, sizeof(ids)),
                         ERROR_INCORRECT_SIZE);
        assert_int_equal(TraceSetInformation(bogus, TracePmcEventListInfo, ids, 30),
                         ERROR_INCORRECT_SIZE);
        assert_int_equal(TraceSetInformation(bogus, TracePmcEventListInfo, ids, 0),
                         ERROR_INVALID_PARAMETER);
        assert_int_equal(TraceSetInformation(bogus, TracePmcEventListInfo, NULL, 0),
                         ERROR_WMI_INSTANCE_NOT_FOUND);
        ULONG counters[5] = {ProfileTotalIssues};
        assert_int_equal(TraceSetInformation(bogus, TracePmcCounterListInfo, counters, 20),
                         ERROR_INCORRECT_SIZE);
        assert_int_equal(TraceSetInformation(bogus, TracePmcCounterListInfo, counters, 3),
                         ERROR_INCORRECT_SIZE);
        assert_int_equal(TraceSetInformation(bogus, TracePmcCounterListInfo, counters, 0),
                         ERROR_INVALID_PARAMETER);
        assert_int_equal(TraceSetInformation(bogus, TracePmcCounterListInfo, NULL, 4),
                         ERROR_INVALID_PARAMETER);
        assert_int_equal(TraceSetInformation(bogus, TracePmcCounterListInfo, counters, 4),
                         ERROR_WMI_INSTANCE_NOT_FOUND);
}

static void test_unsupported_classes(void **state)
{
        (void)state;
        ULONG v = 0, ret;
        assert_int_equal(TraceSetInformation(0, TraceSetDisallowList, &v, 4), ERROR_NOT_SUPPORTED);
        assert_int_equal(TraceSetInformation(0, TraceGuidQueryList, &v, 4), ERROR_NOT_SUPPORTED);
        assert_int_equal(TraceSetInformation(0, (TRACE_INFO_CLASS)99, &v, 4), ERROR_NOT_SUPPORTED);
        assert_int_equal(TraceSetInformation(0, TraceVersionInfo, &v, 4), ERROR_NOT_SUPPORTED);
        assert_int_equal(TraceQueryInformation(0, TraceGuidQueryList, &v, 4, &ret),
                         ERROR_NOT_SUPPORTED);
        assert_int_equal(TraceQueryInformation(0, TraceStackCachingInfo, &v, 4, &ret),
                         ERROR_NOT_SUPPORTED);
        assert_int_equal(TraceQueryInformation(0, TraceVersionInfo, NULL, 8, &ret),
                         ERROR_INVALID_PARAMETER);
}

static void test_query_machine_classes(void **state)
{
        (void)state;
        TRACE_VERSION_INFO ver;
        ULONG ret = 0;
        assert_int_equal(TraceQueryInformation(0, TraceVersionInfo, &ver, 4, &ret),
                         ERROR_BAD_LENGTH);
        assert_int_equal(ret, sizeof(ver));
        assert_int_equal(TraceQueryInformation(0, TraceVersionInfo, &ver, sizeof(ver), &ret),
                         ERROR_SUCCESS);
        assert_true(ver.EtwTraceProcessingVersion >= 1);
        ULONG max_loggers = 0;
        assert_int_equal(TraceQueryInformation(0, TraceMaxLoggersQuery, &max_loggers, 4, NULL),
                         ERROR_SUCCESS);
        assert_int_equal(max_loggers, 64);

        /* the source list: a size probe, then the chain; the timer is always there */
        assert_int_equal(TraceQueryInformation(0, TraceProfileSourceListInfo, NULL, 0, &ret),
                         ERROR_BAD_LENGTH);
        assert_true(ret >= sizeof(PROFILE_SOURCE_INFO));
        uint8_t *buf = calloc(1, ret);
        assert_non_null(buf);
        ULONG size = ret;
        assert_int_equal(TraceQueryInformation(0, TraceProfileSourceListInfo, buf, size, &ret),
                         ERROR_SUCCESS);
        int nr_sources = 0;
        bool has_timer = false;
        for (ULONG off = 0;;) {
                assert_true(off + sizeof(PROFILE_SOURCE_INFO) <= size);
                PROFILE_SOURCE_INFO *psi = (PROFILE_SOURCE_INFO *)(buf + off);
                nr_sources++;
                if (psi->Source == ProfileTime) {
                        char name[16] = {0};
                        for (int i = 0; i < 15 && psi->Description[i]; i++)
                                name[i] = (char)psi->Description[i];
                        assert_string_equal(name, "Timer");
                        assert_int_equal(psi->MinInterval, 1221);
                        assert_int_equal(psi->MaxInterval, 1000000);
                        has_timer = true;
                }
                if (!psi->NextEntryOffset)
                        break;
                off += psi->NextEntryOffset;
        }
        free(buf);
        assert_true(has_timer);
        ULONG max_pmc = 99;
        assert_int_equal(TraceQueryInformation(0, TraceMaxPmcCounterQuery, &max_pmc, 4, NULL),
                         ERROR_SUCCESS);
        /* hardware sources are listed exactly when there are PMC counters */
        assert_int_equal(nr_sources > 1, max_pmc > 0);
}

static void test_lbr_parameter_checks(void **state)
{
        (void)state;
        CLASSIC_EVENT_ID ev[5];
        memset(ev, 0, sizeof(ev));
        for (int i = 0; i < 5; i++) {
                ev[i].EventGuid = PerfInfoGuid;
                ev[i].Type = 0x2f;
        }
        CONTROLTRACE_ID bogus = 0x7777000000000005ull;
        assert_int_equal(
                TraceConfigureLastBranchRecord(bogus, (TRACE_LBR_CONFIGURATION)0x800, ev, 1),
                ERROR_INVALID_PARAMETER);
        assert_int_equal(TraceConfigureLastBranchRecord(bogus, TRACE_LBR_CONFIGURATION_NONE, ev, 5),
                         ERROR_INVALID_PARAMETER);
        assert_int_equal(
                TraceConfigureLastBranchRecord(bogus, TRACE_LBR_CONFIGURATION_NONE, NULL, 1),
                ERROR_INVALID_PARAMETER);
        assert_int_equal(TraceConfigureLastBranchRecord(bogus, TRACE_LBR_CONFIGURATION_NONE, ev, 4),
                         ERROR_WMI_INSTANCE_NOT_FOUND);
        assert_int_equal(TraceConfigureLastBranchRecord(0, TRACE_LBR_CONFIGURATION_NONE, ev, 1),
                         ERROR_INVALID_PARAMETER);
        ULONG flags = EVNTRACE_LBR_FILTER_KERNEL;
        assert_int_equal(TraceSetInformation(bogus, TraceLbrConfigurationInfo, &flags, 3),
                         ERROR_BAD_LENGTH);
        assert_int_equal(TraceSetInformation(bogus, TraceLbrConfigurationInfo, NULL, 4),
                         ERROR_INVALID_PARAMETER);
        flags = 0x1000;
        assert_int_equal(TraceSetInformation(bogus, TraceLbrConfigurationInfo, &flags, 4),
                         ERROR_INVALID_PARAMETER);
        assert_int_equal(TraceSetInformation(bogus, TraceLbrEventListInfo, ev, sizeof(ev)),
                         ERROR_INCORRECT_SIZE);
        assert_int_equal(TraceSetInformation(bogus, TraceLbrEventListInfo, ev, 0),
                         ERROR_INVALID_PARAMETER);
}

/* ---- StartKernelTrace: parameter checks --------------------------------------------------- */

static void test_start_kernel_trace_checks(void **state)
{
        (void)state;
        struct props pr;
        TRACEHANDLE h = 5;
        props_init(&pr, EVENT_TRACE_REAL_TIME_MODE, NULL);
        pr.p.Wnode.Guid = SystemTraceControlGuid;
        assert_int_equal(StartKernelTrace(NULL, &pr.p, NULL, 0), ERROR_INVALID_PARAMETER);
        assert_int_equal(StartKernelTrace(&h, NULL, NULL, 0), ERROR_INVALID_PARAMETER);
        assert_int_equal(h, 0);
        assert_int_equal(StartKernelTrace(&h, &pr.p, NULL, 2), ERROR_INVALID_PARAMETER);
        pr.p.Wnode.Guid = ProcessGuid;
        assert_int_equal(StartKernelTrace(&h, &pr.p, NULL, 0), ERROR_INVALID_PARAMETER);
        assert_non_null(strstr(etw_last_error_text(), "SystemTraceControlGuid"));
        /* KernelRundownGuid needs a logger name */
        pr.p.Wnode.Guid = KernelRundownGuid;
        assert_int_equal(StartKernelTrace(&h, &pr.p, NULL, 0), ERROR_INVALID_PARAMETER);
        pr.p.Wnode.Guid = SystemTraceControlGuid;
        pr.p.EnableFlags = EVENT_TRACE_FLAG_PROCESS | 0x08000000;
        assert_int_equal(StartKernelTrace(&h, &pr.p, NULL, 0), ERROR_INVALID_FLAGS);
        pr.p.EnableFlags = EVENT_TRACE_FLAG_PROCESS;
        pr.p.Wnode.Flags = 0;
        assert_int_equal(StartKernelTrace(&h, &pr.p, NULL, 0), ERROR_INVALID_PARAMETER);
}

/* ---- live kernel sessions ----------------------------------------------------------------- */

static const CLASSIC_EVENT_ID seed002_stack_ids[] = {
        {{0xce1dbfb4, 0x137e, 0x4da6, {0x87, 0xb0, 0x3f, 0x59, 0xaa, 0x10, 0x2c, 0xbc}}, 46, {0}},
        {{0x3d6fa8d1, 0xfe05, 0x11d0, {0x9d, 0xda, 0x00, 0xc0, 0x4f, 0xd7, 0xba, 0x7c}}, 36, {0}},
        {{0x3d6fa8d1, 0xfe05, 0x11d0, {0x9d, 0xda, 0x00, 0xc0, 0x4f, 0xd7, 0xba, 0x7c}}, 50, {0}},
};

static void test_kernel_session_lifecycle(void **state)
{
        (void)state;
        char path[PATH_MAX];
        tmp_path(path, sizeof(path), "kernel.etl");
        struct props pr;
        CONTROLTRACE_ID h;
        props_init(&pr, EVENT_TRACE_FILE_MODE_SEQUENTIAL, path);
        pr.p.Wnode.Guid = SystemTraceControlGuid;
        pr.p.EnableFlags = EVENT_TRACE_FLAG_PROCESS | EVENT_TRACE_FLAG_THREAD |
                           EVENT_TRACE_FLAG_IMAGE_LOAD | EVENT_TRACE_FLAG_CSWITCH;
        assert_int_equal(start_kernel_or_skip(&h, KERNEL_LOGGER_NAMEA, &pr), ERROR_SUCCESS);
        assert_true(IsEqualGUID(&pr.p.Wnode.Guid, &SystemTraceControlGuid));
        assert_int_equal(pr.p.EnableFlags, 0x17);
        assert_true(pr.p.LoggerThreadId != 0);

        /* seed 002: a second start says ALREADY_EXISTS; UPDATE by name then applies the flags */
        struct props pr2;
        CONTROLTRACE_ID h2 = 9;
        char path2[PATH_MAX];
        tmp_path(path2, sizeof(path2), "kernel2.etl");
        props_init(&pr2, EVENT_TRACE_FILE_MODE_SEQUENTIAL, path2);
        pr2.p.Wnode.Guid = SystemTraceControlGuid;
        pr2.p.EnableFlags = EVENT_TRACE_FLAG_PROCESS | EVENT_TRACE_FLAG_THREAD |
                            EVENT_TRACE_FLAG_IMAGE_LOAD | EVENT_TRACE_FLAG_CSWITCH |
                            EVENT_TRACE_FLAG_DISPATCHER;
        assert_int_equal(StartTraceA(&h2, KERNEL_LOGGER_NAMEA, &pr2.p), ERROR_ALREADY_EXISTS);
        assert_int_equal(h2, 0);
        assert_int_equal(access(path2, F_OK), -1);
        snprintf(pr2.log_file_name, sizeof(pr2.log_file_name), "%.1000s", path); /* keep the file */
        assert_int_equal(ControlTraceA(0, KERNEL_LOGGER_NAMEA, &pr2.p, EVENT_TRACE_CONTROL_UPDATE),
                         ERROR_SUCCESS);
        assert_int_equal(pr2.p.EnableFlags, 0x817);
        assert_int_equal(pr2.p.Wnode.HistoricalContext, h);

        /* stack walking on Profile, CSwitch and ReadyThread, read back */
        assert_int_equal(TraceSetInformation(h, TraceStackTracingInfo, (PVOID)seed002_stack_ids,
                                             sizeof(seed002_stack_ids)),
                         ERROR_SUCCESS);
        CLASSIC_EVENT_ID got[8];
        ULONG ret = 0;
        assert_int_equal(TraceQueryInformation(h, TraceStackTracingInfo, got, sizeof(got), &ret),
                         ERROR_SUCCESS);
        assert_int_equal(ret, sizeof(seed002_stack_ids));
        for (int i = 0; i < 3; i++) {
                assert_true(IsEqualGUID(&got[i].EventGuid, &seed002_stack_ids[i].EventGuid));
                assert_int_equal(got[i].Type, seed002_stack_ids[i].Type);
        }
        assert_int_equal(TraceQueryInformation(h, TraceStackTracingInfo, got, 24, &ret),
                         ERROR_BAD_LENGTH);
        assert_int_equal(ret, sizeof(seed002_stack_ids));
        /* unknown GUIDs are ignored */
        CLASSIC_EVENT_ID odd[2] = {seed002_stack_ids[1]};
        odd[1].EventGuid = KernelRundownGuid;
        assert_int_equal(TraceSetInformation(h, TraceStackTracingInfo, odd, sizeof(odd)),
                         ERROR_SUCCESS);
        assert_int_equal(TraceQueryInformation(h, TraceStackTracingInfo, got, sizeof(got), &ret),
                         ERROR_SUCCESS);
        assert_int_equal(ret, sizeof(CLASSIC_EVENT_ID));
        /* NULL with zero length clears */
        assert_int_equal(TraceSetInformation(h, TraceStackTracingInfo, NULL, 0), ERROR_SUCCESS);
        assert_int_equal(TraceQueryInformation(h, TraceStackTracingInfo, got, sizeof(got), &ret),
                         ERROR_SUCCESS);
        assert_int_equal(ret, 0);

        /* the group masks: EnableFlags is Masks[0]; the CSwitch flag shows in Masks[1] */
        PERFINFO_GROUPMASK gm;
        assert_int_equal(
                TraceQueryInformation(h, TraceSystemTraceEnableFlagsInfo, &gm, sizeof(gm), &ret),
                ERROR_SUCCESS);
        assert_int_equal(gm.Masks[0], 0x817);
        assert_true(gm.Masks[1] & (PERF_CONTEXT_SWITCH & PERF_MASK_GROUP));
        /* setting the masks changes EnableFlags */
        gm.Masks[0] |= EVENT_TRACE_FLAG_PROFILE;
        assert_int_equal(TraceSetInformation(h, TraceSystemTraceEnableFlagsInfo, &gm, 4),
                         ERROR_SUCCESS);
        struct props q;
        props_query(&q);
        assert_int_equal(QueryTraceA(h, NULL, &q.p), ERROR_SUCCESS);
        assert_int_equal(q.p.EnableFlags, 0x01000817);

        /* let it record, then QUERY the statistics */
        for (int i = 0; i < 15; i++) {
                sleep_ms(100);
                assert_int_equal(FlushTraceA(h, NULL, &q.p), ERROR_SUCCESS);
        }
        props_query(&q);
        assert_int_equal(QueryTraceA(0, "nt kernel logger", &q.p), ERROR_SUCCESS);
        assert_string_equal(q.logger_name, KERNEL_LOGGER_NAMEA);
        assert_string_equal(q.log_file_name, path);
        assert_true(q.p.BuffersWritten > 0);
        assert_true(q.p.NumberOfBuffers > 0);
        assert_int_equal(q.p.LogBuffersLost, 0);
        assert_int_equal(q.p.LoggerThreadId, pr.p.LoggerThreadId);
        assert_true(q.p.LogFileMode & EVENT_TRACE_FILE_MODE_SEQUENTIAL);

        /* STOP finalizes the file */
        props_query(&q);
        assert_int_equal(ControlTraceA(h, NULL, &q.p, EVENT_TRACE_CONTROL_STOP), ERROR_SUCCESS);
        ULONG buffers_written = q.p.BuffersWritten;
        assert_true(buffers_written > 0);
        assert_int_equal(QueryTraceA(h, NULL, &q.p), ERROR_WMI_INSTANCE_NOT_FOUND);

        struct tally t = {0};
        TRACE_LOGFILE_HEADER hdr;
        assert_int_equal(read_back(path, &t, &hdr), ERROR_SUCCESS);
        assert_int_equal(hdr.BuffersWritten, buffers_written); /* the header buffer included */
        assert_true(hdr.EndTime.QuadPart > hdr.StartTime.QuadPart);
        assert_int_equal(hdr.PerfFreq.QuadPart, 1000000000);
        assert_true(hdr.NumberOfProcessors >= 1);
        assert_true(hdr.LogFileMode & EVENT_TRACE_FILE_MODE_SEQUENTIAL);
        assert_int_equal(t.nr_header, 1);
        assert_true(t.nr_events > 10);
        assert_true(t.min_ts >= hdr.StartTime.QuadPart);
        assert_true(t.max_ts <= hdr.EndTime.QuadPart + 10000000);
        unlink(path);
}

static void test_start_kernel_trace_live(void **state)
{
        (void)state;
        char path[PATH_MAX];
        tmp_path(path, sizeof(path), "skt.etl");
        struct props pr;
        TRACEHANDLE h;
        props_init(&pr, EVENT_TRACE_FILE_MODE_SEQUENTIAL, path);
        pr.p.Wnode.Guid = SystemTraceControlGuid;
        pr.p.EnableFlags = EVENT_TRACE_FLAG_CSWITCH | EVENT_TRACE_FLAG_PROCESS;
        snprintf(pr.logger_name, sizeof(pr.logger_name), "ignored");
        STACK_TRACING_EVENT_ID ids[3];
        memcpy(ids, seed002_stack_ids, sizeof(ids));
        ULONG rc = StartKernelTrace(&h, &pr.p, ids, 3);
        if (rc == ERROR_ACCESS_DENIED) {
                print_message("skipped: %s\n", etw_last_error_text());
                skip();
        }
        assert_int_equal(rc, ERROR_SUCCESS);
        assert_string_equal(pr.logger_name, KERNEL_LOGGER_NAMEA);
        /* only CSwitch is enabled: Profile and ReadyThread are ignored */
        CLASSIC_EVENT_ID got[4];
        ULONG ret = 0;
        assert_int_equal(TraceQueryInformation(h, TraceStackTracingInfo, got, sizeof(got), &ret),
                         ERROR_SUCCESS);
        assert_int_equal(ret, sizeof(CLASSIC_EVENT_ID));
        assert_int_equal(got[0].Type, 36);
        /* StartKernelTrace again: the kernel logger exists */
        TRACEHANDLE h2;
        struct props pr2;
        props_init(&pr2, EVENT_TRACE_REAL_TIME_MODE, NULL);
        pr2.p.Wnode.Guid = SystemTraceControlGuid;
        assert_int_equal(StartKernelTrace(&h2, &pr2.p, NULL, 0), ERROR_ALREADY_EXISTS);
        stop_by_handle(h);
        unlink(path);
}

static void test_kernel_hardware_classes(void **state)
{
        (void)state;
        ULONG max_pmc = 0;
        assert_int_equal(TraceQueryInformation(0, TraceMaxPmcCounterQuery, &max_pmc, 4, NULL),
                         ERROR_SUCCESS);
        ULONG src = ProfileBranchInstructions;
        assert_int_equal(TraceSetInformation(0, TraceProfileSourceConfigInfo, &src, 4),
                         ERROR_SUCCESS);
        struct props pr;
        CONTROLTRACE_ID h;
        props_init(&pr, EVENT_TRACE_REAL_TIME_MODE | EVENT_TRACE_SYSTEM_LOGGER_MODE, NULL);
        pr.p.EnableFlags = EVENT_TRACE_FLAG_PROCESS | EVENT_TRACE_FLAG_THREAD;
        /* the PMC source is configured, not yet sampled: the start works everywhere (seed 000) */
        ULONG rc = StartTraceA(&h, "ctl-hw", &pr.p);
        if (rc == ERROR_ACCESS_DENIED) {
                src = ProfileTime;
                TraceSetInformation(0, TraceProfileSourceConfigInfo, &src, 4);
                print_message("skipped: the live source is not permitted here: %s\n",
                              etw_last_error_text());
                skip();
        }
        assert_int_equal(rc, ERROR_SUCCESS);
        ULONG got[4], ret;
        assert_int_equal(
                TraceQueryInformation(h, TraceProfileSourceConfigInfo, got, sizeof(got), &ret),
                ERROR_SUCCESS);
        assert_int_equal(ret, 4);
        assert_int_equal(got[0], ProfileBranchInstructions);
        CLASSIC_EVENT_ID ev = {PerfInfoGuid, 0x2f, {0}};
        rc = TraceConfigureLastBranchRecord(h, TRACE_LBR_CONFIGURATION_NONE, &ev, 1);
        if (rc == ERROR_NOT_SUPPORTED)
                assert_non_null(strstr(etw_last_error_text(), "LBR"));
        else
                assert_int_equal(rc, ERROR_SUCCESS);
        /* EventCount 0 disables, wherever */
        assert_int_equal(TraceConfigureLastBranchRecord(h, TRACE_LBR_CONFIGURATION_NONE, NULL, 0),
                         ERROR_SUCCESS);
        assert_int_equal(TraceSetInformation(h, TraceLbrEventListInfo, NULL, 0), ERROR_SUCCESS);
        ULONG lbr = 1;
        assert_int_equal(TraceQueryInformation(h, TraceLbrConfigurationInfo, &lbr, 4, &ret),
                         ERROR_SUCCESS);
        assert_int_equal(lbr, 0);
        /* PMC sampling: PERF_PMC_PROFILE in Masks[1] (seed 000) */
        PERFINFO_GROUPMASK gm = {{EVENT_TRACE_FLAG_PROCESS | EVENT_TRACE_FLAG_THREAD,
                                  PERF_PMC_PROFILE & PERF_MASK_GROUP}};
        rc = TraceSetInformation(h, TraceSystemTraceEnableFlagsInfo, &gm, sizeof(gm));
        ULONG counters[1] = {ProfileTotalIssues};
        ULONG rc2 = TraceSetInformation(h, TracePmcCounterListInfo, counters, 4);
        if (max_pmc == 0) {
                assert_int_equal(rc, ERROR_NOT_SUPPORTED);
                assert_int_equal(rc2, ERROR_NOT_SUPPORTED);
                assert_true(etw_last_error_text()[0] != '\0');
        } else {
                assert_int_equal(rc, ERROR_SUCCESS);
                assert_int_equal(rc2, ERROR_SUCCESS);
        }
        stop_by_handle(h);
        src = ProfileTime;
        assert_int_equal(TraceSetInformation(0, TraceProfileSourceConfigInfo, &src, 4),
                         ERROR_SUCCESS);
}

/* The reason for missing hardware is the probe's sentence, said once. */
static void test_missing_hardware_said_once(void **state)
{
        (void)state;
        ULONG max_pmc = 0;
        assert_int_equal(TraceQueryInformation(0, TraceMaxPmcCounterQuery, &max_pmc, 4, NULL),
                         ERROR_SUCCESS);
        if (max_pmc > 0) {
                print_message("skipped: this machine has a hardware PMU, so no reason for a "
                              "missing one can be shown\n");
                skip();
        }
        struct props pr;
        CONTROLTRACE_ID h;
        props_init(&pr, EVENT_TRACE_REAL_TIME_MODE | EVENT_TRACE_SYSTEM_LOGGER_MODE, NULL);
        pr.p.EnableFlags = EVENT_TRACE_FLAG_PROCESS;
        assert_int_equal(start_kernel_or_skip(&h, "ctl-nopmu", &pr), ERROR_SUCCESS);
        ULONG counters[1] = {ProfileTotalIssues};
        assert_int_equal(TraceSetInformation(h, TracePmcCounterListInfo, counters, 4),
                         ERROR_NOT_SUPPORTED);
        const char *text = etw_last_error_text();
        if (count_substr(text, "no hardware PMU") != 1)
                print_error("%s\n", text);
        assert_int_equal(count_substr(text, "no hardware PMU"), 1);
        CLASSIC_EVENT_ID ev = {PerfInfoGuid, 0x2f, {0}};
        assert_int_equal(TraceConfigureLastBranchRecord(h, TRACE_LBR_CONFIGURATION_NONE, &ev, 1),
                         ERROR_NOT_SUPPORTED);
        text = etw_last_error_text();
        if (count_substr(text, "no LBR") + count_substr(text, "no Last Branch Record") != 1)
                print_error("%s\n", text);
        assert_int_equal(count_substr(text, "no LBR") + count_substr(text, "no Last Branch Record"),
                         1);
        stop_by_handle(h);
}

/* Context switches on demand: pairs of threads passing a byte back and forth. */
struct ping {
        int to_pong[2], to_ping[2];
        atomic_bool *is_done;
};

static void *pong(void *arg)
{
        struct ping *p = arg;
        char b;
        while (read(p->to_pong[0], &b, 1) == 1)
                if (write(p->to_ping[1], &b, 1) != 1)
                        break;
        return NULL;
}

static void *ping(void *arg)
{
        struct ping *p = arg;
        char b = 'x';
        while (!atomic_load(p->is_done))
                if (write(p->to_pong[1], &b, 1) != 1 || read(p->to_ping[0], &b, 1) != 1)
                        break;
        close(p->to_pong[1]); /* pong reads end of file */
        return NULL;
}

/* Runs nr_pairs ping-pong pairs for ms. With is_starving the threads run SCHED_FIFO above the
   session's logger thread (SCHED_FIFO 2, or SCHED_OTHER), so that it hardly runs and the perf
   rings overflow: events are lost. Returns whether the threads got SCHED_FIFO. */
static bool make_load(int nr_pairs, long ms, bool is_starving)
{
        enum { MAX_PAIRS = 8 };
        struct ping p[MAX_PAIRS];
        pthread_t th[2 * MAX_PAIRS];
        atomic_bool is_done;
        atomic_init(&is_done, false);
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        bool is_fifo = false;
        if (is_starving) {
                struct sched_param sp = {.sched_priority = 10};
                is_fifo = pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED) == 0 &&
                          pthread_attr_setschedpolicy(&attr, SCHED_FIFO) == 0 &&
                          pthread_attr_setschedparam(&attr, &sp) == 0;
        }
        int n = 0;
        for (int i = 0; i < nr_pairs && i < MAX_PAIRS; i++) {
                p[i].is_done = &is_done;
                assert_int_equal(pipe(p[i].to_pong), 0);
                assert_int_equal(pipe(p[i].to_ping), 0);
                for (int k = 0; k < 2; k++) {
                        void *(*fn)(void *) = k ? ping : pong;
                        int rc = pthread_create(&th[n], is_fifo ? &attr : NULL, fn, &p[i]);
                        if (rc == EPERM && is_fifo) {
                                is_fifo = false; /* not permitted here: plain threads */
                                rc = pthread_create(&th[n], NULL, fn, &p[i]);
                        }
                        assert_int_equal(rc, 0);
                        n++;
                }
        }
        pthread_attr_destroy(&attr);
        sleep_ms(ms);
        atomic_store(&is_done, true);
        for (int i = 0; i < n; i++)
                assert_int_equal(pthread_join(th[i], NULL), 0);
        for (int i = 0; i < n / 2; i++) {
                close(p[i].to_pong[0]);
                close(p[i].to_ping[0]);
                close(p[i].to_ping[1]);
        }
        return is_fifo;
}

/* A live session's logger thread drains the kernel's rings at the drain's real-time priority
   where permitted (LIVE_RT_PRIORITY_DRAIN, above the session's work beside it: else as a normal
   thread); a session without a live source keeps a normal logger. LoggerThreadId names it. */
static void test_logger_thread_priority(void **state)
{
        (void)state;
        struct props pr;
        CONTROLTRACE_ID h;
        props_init(&pr, EVENT_TRACE_REAL_TIME_MODE | EVENT_TRACE_SYSTEM_LOGGER_MODE, NULL);
        pr.p.EnableFlags = EVENT_TRACE_FLAG_PROCESS;
        assert_int_equal(start_kernel_or_skip(&h, "ctl-prio", &pr), ERROR_SUCCESS);
        bool is_permitted = fifo_permitted();
        struct props q;
        props_query(&q);
        assert_int_equal(QueryTraceA(h, NULL, &q.p), ERROR_SUCCESS);
        pid_t tid = (pid_t)(uintptr_t)q.p.LoggerThreadId;
        assert_true(tid > 0);
        int policy = sched_getscheduler(tid);
        struct sched_param sp;
        assert_int_equal(sched_getparam(tid, &sp), 0);
        print_message("logger thread %d: policy %d priority %d (SCHED_FIFO permitted: %d)\n",
                      (int)tid, policy, sp.sched_priority, is_permitted);
        if (is_permitted) {
                assert_int_equal(policy, SCHED_FIFO);
                assert_int_equal(sp.sched_priority, LIVE_RT_PRIORITY_DRAIN);
                assert_true(LIVE_RT_PRIORITY_DRAIN > LIVE_RT_PRIORITY_ASIDE);
        } else {
                assert_int_equal(policy, SCHED_OTHER);
        }
        stop_by_handle(h);

        /* a private session has no rings to drain */
        props_init(&pr, EVENT_TRACE_REAL_TIME_MODE, NULL);
        pr.p.Wnode.Guid = (GUID){0x7f3ba1c2, 0x11d4, 0x4e2a, {1, 2, 3, 4, 5, 6, 7, 8}};
        assert_int_equal(StartTraceA(&h, "ctl-prio-private", &pr.p), ERROR_SUCCESS);
        props_query(&q);
        assert_int_equal(QueryTraceA(h, NULL, &q.p), ERROR_SUCCESS);
        tid = (pid_t)(uintptr_t)q.p.LoggerThreadId;
        if (tid > 0)
                assert_int_equal(sched_getscheduler(tid), SCHED_OTHER);
        stop_by_handle(h);
}

static void check_buffer_pool(const struct props *q, ULONG min, ULONG max)
{
        assert_true(q->p.NumberOfBuffers >= min);
        assert_true(q->p.NumberOfBuffers <= max);
        assert_true(q->p.FreeBuffers <= q->p.NumberOfBuffers);
}

/* QUERY's statistics are live; STOP's final ones are the file header's. */
static void test_kernel_live_statistics(void **state)
{
        (void)state;
        char path[PATH_MAX];
        tmp_path(path, sizeof(path), "stats.etl");
        struct props pr;
        CONTROLTRACE_ID h;
        /* a system logger of its own name: a failure here leaves no "NT Kernel Logger" */
        props_init(&pr, EVENT_TRACE_FILE_MODE_SEQUENTIAL | EVENT_TRACE_SYSTEM_LOGGER_MODE, path);
        pr.p.EnableFlags =
                EVENT_TRACE_FLAG_PROCESS | EVENT_TRACE_FLAG_THREAD | EVENT_TRACE_FLAG_CSWITCH;
        pr.p.BufferSize = 4;
        assert_int_equal(start_kernel_or_skip(&h, "ctl-stats", &pr), ERROR_SUCCESS);
        ULONG min = pr.p.MinimumBuffers, max = pr.p.MaximumBuffers;
        check_buffer_pool(&pr, min, max);

        struct props q1, q2, st;
        make_load(1, 300, false);
        props_query(&q1);
        assert_int_equal(QueryTraceA(h, NULL, &q1.p), ERROR_SUCCESS);
        /* then a load that starves the logger thread, where permitted: events are lost, and
           the exact count must reach QUERY, STOP and the file header alike */
        bool is_starving = make_load(4, 300, true);
        if (!is_starving)
                print_message("SCHED_FIFO not permitted: no events lost on purpose\n");
        /* the starved logger catches up: until its buffers reach the file (a busy machine
           may hold its threads off for a while) */
        for (int i = 0; i < 600; i++) {
                props_query(&q2);
                assert_int_equal(QueryTraceA(h, NULL, &q2.p), ERROR_SUCCESS);
                if (q2.p.BuffersWritten > q1.p.BuffersWritten)
                        break;
                sleep_ms(100);
        }
        print_message("QUERY: BuffersWritten %u then %u, EventsLost %u then %u, buffers %u "
                      "(%u free) then %u (%u free)\n",
                      q1.p.BuffersWritten, q2.p.BuffersWritten, q1.p.EventsLost, q2.p.EventsLost,
                      q1.p.NumberOfBuffers, q1.p.FreeBuffers, q2.p.NumberOfBuffers,
                      q2.p.FreeBuffers);
        assert_true(q1.p.BuffersWritten > 1); /* the header buffer and data */
        assert_true(q2.p.BuffersWritten > q1.p.BuffersWritten);
        assert_true(q2.p.EventsLost >= q1.p.EventsLost);
        check_buffer_pool(&q1, min, max);
        check_buffer_pool(&q2, min, max);

        props_query(&st);
        assert_int_equal(ControlTraceA(h, NULL, &st.p, EVENT_TRACE_CONTROL_STOP), ERROR_SUCCESS);
        assert_true(st.p.BuffersWritten >= q2.p.BuffersWritten);
        assert_true(st.p.EventsLost >= q2.p.EventsLost);
        check_buffer_pool(&st, min, max);

        struct tally t = {0};
        TRACE_LOGFILE_HEADER hdr;
        assert_int_equal(read_back(path, &t, &hdr), ERROR_SUCCESS);
        print_message("STOP: BuffersWritten %u, EventsLost %u; file header: %u, %u\n",
                      st.p.BuffersWritten, st.p.EventsLost, hdr.BuffersWritten, hdr.EventsLost);
        assert_int_equal(st.p.BuffersWritten, hdr.BuffersWritten);
        assert_int_equal(st.p.EventsLost, hdr.EventsLost);
        if (is_starving && hdr.EventsLost == 0)
                print_message("the starved logger lost no events: EventsLost is checked at 0\n");
        assert_int_equal(st.p.LogBuffersLost, hdr.BuffersLost);
        assert_int_equal(t.buffers_read, hdr.BuffersWritten);
        struct stat sb;
        assert_int_equal(stat(path, &sb), 0);
        assert_int_equal(sb.st_size, (off_t)hdr.BuffersWritten * 4096);
        unlink(path);
}

/* What a file holds of one process: its samples and rundown, and everyone else's. */
struct pid_tally {
        ULONG pid;
        unsigned long nr_samples, nr_other_samples;
        unsigned long nr_dcstart, nr_other_dcstart;
};

/* The id at payload offset 8: SampledProfile's ThreadId (the child has one thread, its pid)
   and Process DCStart's ProcessId (after the 64-bit UniqueProcessKey); PerfInfo headers carry
   no process id. */
static VOID WINAPI count_pid_event(PEVENT_RECORD er)
{
        struct pid_tally *t = er->UserContext;
        const EVENT_HEADER *h = &er->EventHeader;
        ULONG id = 0;
        if (er->UserDataLength >= 12)
                memcpy(&id, (const uint8_t *)er->UserData + 8, sizeof(id));
        bool is_mine = id == t->pid;
        if (IsEqualGUID(&h->ProviderId, &PerfInfoGuid) && h->EventDescriptor.Opcode == 46) {
                t->nr_samples += is_mine;
                t->nr_other_samples += !is_mine;
        } else if (IsEqualGUID(&h->ProviderId, &ProcessGuid) && h->EventDescriptor.Opcode == 3) {
                t->nr_dcstart += is_mine;
                t->nr_other_dcstart += !is_mine;
        }
}

/* A child that spins for ms milliseconds, then exits. */
static pid_t spin_child(long ms)
{
        pid_t pid = fork();
        if (pid == 0) {
                struct timespec t0, t;
                clock_gettime(CLOCK_MONOTONIC, &t0);
                do
                        clock_gettime(CLOCK_MONOTONIC, &t);
                while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
                _exit(0);
        }
        return pid;
}

/* ETWTOP_TRACE_SETTINGS_INFO (etw/etwtop_ext.h): a kernel logger's settings and counters in one
   query, equal to what the single classes and ControlTrace(QUERY) say; its checks. */
/* The public hook <-> CLASSIC_EVENT_ID pair round-trips every hook the stack-walk names give,
   the image load (0x030A, ImageLoadGuid Type 10) included: it came back as 0x140A. Windows'
   0x140A names the same event, and reads back as etwtop's 0x030A. */
static void test_hook_event_id_round_trip(void **state)
{
        static const USHORT hooks[] = {0x030A, 0x0301, 0x0302, 0x0501, 0x0524, 0x0532,
                                       0x0F2E, 0x0F2F, 0x0A10, 0x0420, 0x1002};
        (void)state;
        for (size_t i = 0; i < sizeof(hooks) / sizeof(hooks[0]); i++) {
                CLASSIC_EVENT_ID id;
                USHORT back = 0;

                assert_int_equal(etw_event_id_of_hook(hooks[i], &id), ERROR_SUCCESS);
                assert_int_equal(etw_hook_of_event_id(&id, &back), ERROR_SUCCESS);
                assert_int_equal(back, hooks[i]);
        }
        CLASSIC_EVENT_ID image;
        USHORT back = 0;
        assert_int_equal(etw_event_id_of_hook(0x140A, &image), ERROR_SUCCESS);
        assert_int_equal(etw_hook_of_event_id(&image, &back), ERROR_SUCCESS);
        assert_int_equal(back, 0x030A);
}

static void test_settings_class(void **state)
{
        (void)state;
        const TRACE_INFO_CLASS c = ETWTOP_TRACE_SETTINGS_INFO;
        struct etw_session_settings ss;
        ULONG ret = 0;
        assert_int_equal(TraceQueryInformation(0, c, &ss, sizeof(ss), &ret),
                         ERROR_INVALID_PARAMETER);
        assert_int_equal(TraceQueryInformation(0x7777, c, &ss, sizeof(ss), &ret),
                         ERROR_WMI_INSTANCE_NOT_FOUND);
        struct props pr;
        CONTROLTRACE_ID h;
        props_init(&pr, EVENT_TRACE_REAL_TIME_MODE, NULL);
        assert_int_equal(StartTraceA(&h, "ctl-settings-user", &pr.p), ERROR_SUCCESS);
        assert_int_equal(TraceQueryInformation(h, c, &ss, sizeof(ss), &ret),
                         ERROR_INVALID_PARAMETER);
        stop_by_handle(h);

        props_init(&pr, EVENT_TRACE_REAL_TIME_MODE | EVENT_TRACE_SYSTEM_LOGGER_MODE, NULL);
        pr.p.EnableFlags =
                EVENT_TRACE_FLAG_PROCESS | EVENT_TRACE_FLAG_THREAD | EVENT_TRACE_FLAG_PROFILE;
        assert_int_equal(start_kernel_or_skip(&h, "ctl-settings", &pr), ERROR_SUCCESS);
        CLASSIC_EVENT_ID ids[1];
        memset(ids, 0, sizeof(ids));
        ids[0].EventGuid = PerfInfoGuid;
        ids[0].Type = 46; /* SampledProfile */
        assert_int_equal(TraceSetInformation(h, TraceStackTracingInfo, ids, sizeof(ids)),
                         ERROR_SUCCESS);
        assert_int_equal(TraceQueryInformation(h, c, &ss, sizeof(ss) - 1, &ret), ERROR_BAD_LENGTH);
        assert_int_equal(ret, sizeof(ss));
        memset(&ss, 0xA5, sizeof(ss));
        assert_int_equal(TraceQueryInformation(h, c, &ss, sizeof(ss), &ret), ERROR_SUCCESS);
        assert_int_equal(ret, sizeof(ss));

        /* the same as the single classes */
        ULONG masks[8];
        assert_int_equal(TraceQueryInformation(h, TraceSystemTraceEnableFlagsInfo, masks,
                                               sizeof(masks), &ret),
                         ERROR_SUCCESS);
        assert_memory_equal(ss.GroupMasks, masks, sizeof(masks));
        CLASSIC_EVENT_ID got[8];
        assert_int_equal(TraceQueryInformation(h, TraceStackTracingInfo, got, sizeof(got), &ret),
                         ERROR_SUCCESS);
        assert_int_equal(ss.NumberOfStackEvents, ret / sizeof(got[0]));
        assert_memory_equal(ss.StackEvents, got, ret);
        TRACE_PROFILE_INTERVAL iv = {0, 0};
        assert_int_equal(
                TraceQueryInformation(0, TraceSampledProfileIntervalInfo, &iv, sizeof(iv), &ret),
                ERROR_SUCCESS);
        assert_int_equal(ss.ProfileInterval, iv.Interval);
        LONG pid = 0;
        assert_int_equal(
                TraceQueryInformation(h, ETWTOP_TRACE_PROCESS_INFO, &pid, sizeof(pid), &ret),
                ERROR_SUCCESS);
        assert_int_equal(ss.ProcessId, pid);
        struct etw_stackwalk_info w;
        assert_int_equal(TraceQueryInformation(h, ETWTOP_TRACE_STACKWALK_INFO, &w, sizeof(w), &ret),
                         ERROR_SUCCESS);
        assert_memory_equal(&ss.StackWalk, &w, sizeof(w));
        ULONG lbr = 0;
        assert_int_equal(
                TraceQueryInformation(h, TraceLbrConfigurationInfo, &lbr, sizeof(lbr), &ret),
                ERROR_SUCCESS);
        assert_int_equal(ss.LbrFilters, lbr);
        assert_int_equal(ss.NumberOfLbrEvents, 0);
        assert_int_equal(ss.NumberOfPmcEvents, 0);
        struct props k;
        props_init(&k, 0, NULL);
        assert_int_equal(ControlTraceA(h, NULL, &k.p, EVENT_TRACE_CONTROL_QUERY), ERROR_SUCCESS);
        assert_int_equal(ss.BufferSize, k.p.BufferSize);
        assert_int_equal(ss.MaximumFileSize, k.p.MaximumFileSize);
        assert_true(ss.EventsLost <= k.p.EventsLost);
        assert_true(ss.BuffersWritten <= k.p.BuffersWritten);
        stop_by_handle(h);
        assert_int_equal(TraceQueryInformation(h, c, &ss, sizeof(ss), &ret),
                         ERROR_WMI_INSTANCE_NOT_FOUND);
}

/* ETWTOP_TRACE_PROCESS_INFO (etw/etwtop_ext.h): checks, the value for the next kernel loggers
   (handle 0), a session's read back and fixed, and a file that holds that process only. */
static void test_process_class(void **state)
{
        (void)state;
        const TRACE_INFO_CLASS c = ETWTOP_TRACE_PROCESS_INFO;
        LONG pid = 0;
        ULONG ret = 0;
        /* the default: the whole system */
        assert_int_equal(TraceQueryInformation(0, c, &pid, sizeof(pid), &ret), ERROR_SUCCESS);
        assert_int_equal(pid, -1);
        assert_int_equal(ret, sizeof(LONG));
        assert_int_equal(TraceQueryInformation(0, c, NULL, 0, &ret), ERROR_BAD_LENGTH);
        assert_int_equal(ret, sizeof(LONG));
        assert_int_equal(TraceSetInformation(0, c, &pid, 2), ERROR_BAD_LENGTH);
        assert_int_equal(TraceSetInformation(0, c, NULL, sizeof(pid)), ERROR_INVALID_PARAMETER);
        LONG bad[2] = {0, -2};
        for (int i = 0; i < 2; i++)
                assert_int_equal(TraceSetInformation(0, c, &bad[i], sizeof(LONG)),
                                 ERROR_INVALID_PARAMETER);
        assert_int_equal(TraceQueryInformation(0x7777, c, &pid, sizeof(pid), &ret),
                         ERROR_WMI_INSTANCE_NOT_FOUND);
        /* not a kernel logger */
        struct props pr;
        CONTROLTRACE_ID h;
        props_init(&pr, EVENT_TRACE_REAL_TIME_MODE, NULL);
        assert_int_equal(StartTraceA(&h, "ctl-proc-user", &pr.p), ERROR_SUCCESS);
        assert_int_equal(TraceQueryInformation(h, c, &pid, sizeof(pid), &ret),
                         ERROR_INVALID_PARAMETER);
        stop_by_handle(h);

        /* a process that does not exist fails the start, and leaves no file */
        char path[PATH_MAX];
        tmp_path(path, sizeof(path), "proc.etl");
        LONG gone = 999999999;
        assert_int_equal(TraceSetInformation(0, c, &gone, sizeof(gone)), ERROR_SUCCESS);
        props_init(&pr, EVENT_TRACE_FILE_MODE_SEQUENTIAL | EVENT_TRACE_SYSTEM_LOGGER_MODE, path);
        pr.p.EnableFlags = EVENT_TRACE_FLAG_PROCESS | EVENT_TRACE_FLAG_THREAD;
        ULONG rc = StartTraceA(&h, "ctl-proc", &pr.p);
        assert_int_equal(rc, ERROR_WMI_INSTANCE_NOT_FOUND);
        assert_non_null(strstr(etw_last_error_text(), "999999999"));
        assert_int_equal(access(path, F_OK), -1);

        /* the process of the next kernel logger, taken at its start and kept */
        pid_t child = spin_child(800);
        assert_true(child > 0);
        LONG want = child;
        assert_int_equal(TraceSetInformation(0, c, &want, sizeof(want)), ERROR_SUCCESS);
        props_init(&pr, EVENT_TRACE_FILE_MODE_SEQUENTIAL | EVENT_TRACE_SYSTEM_LOGGER_MODE, path);
        pr.p.EnableFlags =
                EVENT_TRACE_FLAG_PROCESS | EVENT_TRACE_FLAG_THREAD | EVENT_TRACE_FLAG_PROFILE;
        rc = StartTraceA(&h, "ctl-proc", &pr.p);
        LONG all = -1;
        assert_int_equal(TraceQueryInformation(0, c, &pid, sizeof(pid), &ret), ERROR_SUCCESS);
        assert_int_equal(pid, want); /* it stays until set again */
        assert_int_equal(TraceSetInformation(0, c, &all, sizeof(all)), ERROR_SUCCESS);
        if (rc != ERROR_SUCCESS) {
                kill(child, SIGKILL);
                waitpid(child, NULL, 0);
                print_message("skipped: StartTrace: %u: %s\n", rc, etw_last_error_text());
                skip();
        }
        assert_int_equal(TraceQueryInformation(h, c, &pid, sizeof(pid), &ret), ERROR_SUCCESS);
        assert_int_equal(pid, want);
        /* a running session's process cannot change; its own value is accepted */
        assert_int_equal(TraceSetInformation(h, c, &all, sizeof(all)), ERROR_NOT_SUPPORTED);
        assert_int_equal(TraceSetInformation(h, c, &want, sizeof(want)), ERROR_SUCCESS);
        waitpid(child, NULL, 0);
        stop_by_handle(h);

        struct pid_tally t = {.pid = (ULONG)child};
        EVENT_TRACE_LOGFILEA lf;
        memset(&lf, 0, sizeof(lf));
        lf.LogFileName = path;
        lf.ProcessTraceMode = PROCESS_TRACE_MODE_EVENT_RECORD;
        lf.EventRecordCallback = count_pid_event;
        lf.Context = &t;
        PROCESSTRACE_HANDLE ph = OpenTraceA(&lf);
        assert_true(ph != INVALID_PROCESSTRACE_HANDLE);
        assert_int_equal(ProcessTrace(&ph, 1, NULL, NULL), ERROR_SUCCESS);
        CloseTrace(ph);
        print_message("process %d: %lu samples, %lu of others; DCStart %lu, %lu of others\n",
                      (int)child, t.nr_samples, t.nr_other_samples, t.nr_dcstart,
                      t.nr_other_dcstart);
        assert_true(t.nr_samples > 10);
        assert_int_equal(t.nr_other_samples, 0);
        assert_int_equal(t.nr_dcstart, 1);
        assert_int_equal(t.nr_other_dcstart, 0);
        unlink(path);
}

/* Waits (60 s at most) until the session h stops itself: QUERY then says it is gone, and why. */
static ULONG wait_stopped_itself(CONTROLTRACE_ID h)
{
        ULONG rc = ERROR_SUCCESS;
        for (int i = 0; i < 600 && rc == ERROR_SUCCESS; i++) {
                struct props q;
                props_query(&q);
                rc = QueryTraceA(h, NULL, &q.p);
                if (rc == ERROR_SUCCESS)
                        sleep_ms(100);
        }
        return rc;
}

/* A file session whose file stopped taking buffers (a write error, its maximum size, its file
   system's space) stops itself, as Windows stops a logger: later calls say why, the name is
   free again, and the file is finalized with what it holds. */
static void check_stopped_itself(CONTROLTRACE_ID h, const char *name, const char *path,
                                 const char *why, off_t max_bytes)
{
        assert_int_equal(wait_stopped_itself(h), ERROR_WMI_INSTANCE_NOT_FOUND);
        print_message("%s: %s\n", name, etw_last_error_text());
        assert_non_null(strstr(etw_last_error_text(), "stopped itself"));
        assert_non_null(strstr(etw_last_error_text(), why));
        struct props q;
        props_query(&q);
        assert_int_equal(ControlTraceA(h, NULL, &q.p, EVENT_TRACE_CONTROL_STOP),
                         ERROR_WMI_INSTANCE_NOT_FOUND);
        assert_non_null(strstr(etw_last_error_text(), why));
        PERFINFO_GROUPMASK gm;
        ULONG ret;
        assert_int_equal(
                TraceQueryInformation(h, TraceSystemTraceEnableFlagsInfo, &gm, sizeof(gm), &ret),
                ERROR_WMI_INSTANCE_NOT_FOUND);
        props_query(&q);
        assert_int_equal(QueryTraceA(0, name, &q.p), ERROR_WMI_INSTANCE_NOT_FOUND);

        struct tally t = {0};
        TRACE_LOGFILE_HEADER hdr;
        assert_int_equal(read_back(path, &t, &hdr), ERROR_SUCCESS);
        struct stat sb;
        assert_int_equal(stat(path, &sb), 0);
        assert_true(hdr.EndTime.QuadPart > hdr.StartTime.QuadPart);
        assert_int_equal((off_t)hdr.BuffersWritten * 4096, sb.st_size);
        if (max_bytes)
                assert_true(sb.st_size <= max_bytes);
        assert_true(t.nr_events > 10);
}

static ULONG start_file_session(CONTROLTRACE_ID *h, const char *name, const char *path,
                                ULONG extra_mode, ULONG max_file_size)
{
        struct props pr;
        props_init(&pr,
                   EVENT_TRACE_FILE_MODE_SEQUENTIAL | EVENT_TRACE_SYSTEM_LOGGER_MODE | extra_mode,
                   path);
        pr.p.EnableFlags = EVENT_TRACE_FLAG_PROCESS | EVENT_TRACE_FLAG_THREAD |
                           EVENT_TRACE_FLAG_IMAGE_LOAD | EVENT_TRACE_FLAG_PROFILE |
                           EVENT_TRACE_FLAG_CSWITCH;
        pr.p.BufferSize = 4;
        pr.p.MaximumFileSize = max_file_size;
        ULONG rc = StartTraceA(h, name, &pr.p);
        if (rc != ERROR_SUCCESS)
                print_message("skipped: StartTrace(%s): %u: %s\n", name, rc, etw_last_error_text());
        return rc;
}

/* MaximumFileSize of a sequential file (EVENT_TRACE_FILE_MODE_SEQUENTIAL: "stops when the file
   reaches its maximum size"): the session stops itself there, the file no larger. Here 64 KB
   (EVENT_TRACE_USE_KBYTES_FOR_SIZE): the start's rundown alone is more. */
static void test_max_file_size_stops_session(void **state)
{
        (void)state;
        char path[PATH_MAX];
        tmp_path(path, sizeof(path), "max.etl");
        CONTROLTRACE_ID h;
        if (start_file_session(&h, "ctl-max", path, EVENT_TRACE_USE_KBYTES_FOR_SIZE, 64) !=
            ERROR_SUCCESS)
                skip();
        check_stopped_itself(h, "ctl-max", path, "reached its maximum size, 64 KB", 64 * 1024);
        unlink(path);
}

/* A circular file whose ring is larger than its file system's space for users: STOP writes the
   newest buffers that fit, keeps the last blocks free and says so. */
static void circular_on_small_disk(const char *path, const char *dir)
{
        struct props pr;
        CONTROLTRACE_ID h;
        props_init(&pr, EVENT_TRACE_FILE_MODE_CIRCULAR | EVENT_TRACE_SYSTEM_LOGGER_MODE, path);
        pr.p.MaximumFileSize = 2; /* MB: 511 buffers of 4 KB, four times the tmpfs */
        pr.p.BufferSize = 4;
        pr.p.EnableFlags = EVENT_TRACE_FLAG_PROCESS | EVENT_TRACE_FLAG_THREAD |
                           EVENT_TRACE_FLAG_IMAGE_LOAD | EVENT_TRACE_FLAG_PROFILE |
                           EVENT_TRACE_FLAG_CSWITCH;
        assert_int_equal(StartTraceA(&h, "ctl-circ-full", &pr.p), ERROR_SUCCESS);
        struct props q;
        for (int i = 0; i < 600; i++) {
                props_query(&q);
                assert_int_equal(QueryTraceA(h, NULL, &q.p), ERROR_SUCCESS);
                if (q.p.BuffersWritten > 200)
                        break;
                sleep_ms(100);
        }
        assert_true(q.p.BuffersWritten > 200);
        props_query(&q);
        assert_int_equal(ControlTraceA(h, NULL, &q.p, EVENT_TRACE_CONTROL_STOP), ERROR_DISK_FULL);
        print_message("circular STOP: %s\n", etw_last_error_text());
        assert_non_null(strstr(etw_last_error_text(), "stopped before the blocks reserved"));
        struct statvfs sv;
        assert_int_equal(statvfs(dir, &sv), 0);
        assert_true(sv.f_bavail > 0);
        struct tally t = {0};
        TRACE_LOGFILE_HEADER hdr;
        assert_int_equal(read_back(path, &t, &hdr), ERROR_SUCCESS);
        struct stat sb;
        assert_int_equal(stat(path, &sb), 0);
        assert_int_equal((off_t)hdr.BuffersWritten * 4096, sb.st_size);
        assert_true(hdr.BuffersWritten > 50);
        assert_true(t.nr_events > 10);
}

/* A file never takes its file system's last blocks for users: the session stops itself before
   f_bavail reaches 0, even as root (whose reserved blocks stay free), and says so. A small
   tmpfs (root only). */
static void test_disk_space_stops_session(void **state)
{
        (void)state;
        char dir[PATH_MAX], cmd[PATH_MAX + 64], path[PATH_MAX];
        tmp_path(dir, sizeof(dir), "full");
        assert_int_equal(mkdir(dir, 0700), 0);
        snprintf(cmd, sizeof(cmd), "mount -t tmpfs -o size=512k tmpfs '%s' 2>/dev/null", dir);
        if (system(cmd) != 0) {
                rmdir(dir);
                print_message("skipped: cannot mount a small tmpfs here (not root)\n");
                skip();
        }
        snprintf(path, sizeof(path), "%.4000s/f.etl", dir);
        /* timer samples at 8 kHz, so that the buffers fill the file system in a few seconds
           rather than twenty (set back once the sessions are gone: the interval is global,
           and a running session's host would take it) */
        TRACE_PROFILE_INTERVAL fastest = {0, 1221}, usual = {0, 10000};
        TraceSetInformation(0, TraceSampledProfileIntervalInfo, &fastest, sizeof(fastest));
        /* and every CPU busy meanwhile: an idle one gave few samples (15 s for both files on a
           quiet machine); the 30 s they spin at most are never waited for */
        long nr_cpus = sysconf(_SC_NPROCESSORS_ONLN);
        pid_t spinners[64];
        int nr_spinners = 0;
        for (; nr_spinners < nr_cpus && nr_spinners < 64; nr_spinners++)
                spinners[nr_spinners] = spin_child(30000);
        CONTROLTRACE_ID h;
        if (start_file_session(&h, "ctl-full", path, 0, 0) == ERROR_SUCCESS) {
                check_stopped_itself(h, "ctl-full", path, "stopped before the blocks reserved", 0);
                struct statvfs sv;
                assert_int_equal(statvfs(dir, &sv), 0);
                assert_true(sv.f_bavail > 0);
                unlink(path);
                circular_on_small_disk(path, dir);
        }
        for (int i = 0; i < nr_spinners; i++) {
                kill(spinners[i], SIGKILL);
                waitpid(spinners[i], NULL, 0);
        }
        TraceSetInformation(0, TraceSampledProfileIntervalInfo, &usual, sizeof(usual));
        snprintf(cmd, sizeof(cmd), "umount '%s'", dir);
        assert_int_equal(system(cmd), 0);
}

/* A file that cannot be written (here past RLIMIT_FSIZE: EFBIG) stops the session as a full disk
   does on Windows (STATUS_DISK_FULL). In this process's sessions only (ETWTOP_NO_HOST). */
static void test_write_error_stops_session(void **state)
{
        (void)state;
        if (!getenv("ETWTOP_NO_HOST")) {
                print_message("skipped: RLIMIT_FSIZE reaches only this process's sessions\n");
                skip();
        }
        char path[PATH_MAX];
        tmp_path(path, sizeof(path), "fsize.etl");
        struct rlimit old, lim;
        assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
        lim = old;
        lim.rlim_cur = 128 * 1024;
        signal(SIGXFSZ, SIG_IGN);
        assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
        CONTROLTRACE_ID h;
        ULONG rc = start_file_session(&h, "ctl-fsize", path, 0, 0);
        if (rc == ERROR_SUCCESS)
                assert_int_equal(wait_stopped_itself(h), ERROR_WMI_INSTANCE_NOT_FOUND);
        assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
        signal(SIGXFSZ, SIG_DFL);
        if (rc != ERROR_SUCCESS)
                skip();
        check_stopped_itself(h, "ctl-fsize", path, "File too large", 128 * 1024);
        unlink(path);
}

/* Issue 13 item 4: a window saved after the session ran a while (etw_save_window, the screen's
   save) is framed by the events it holds: its StartTime is its first event's time (within a
   buffer's span, which FlushTimer bounds to a second), every event, the save's rundown
   included, lies between StartTime and EndTime; its header names the file and the CPU speed. */
static void test_saved_window_frames_its_events(void **state)
{
        (void)state;
        char path[PATH_MAX];
        tmp_path(path, sizeof(path), "window.etl");
        struct props pr;
        CONTROLTRACE_ID h;
        props_init(&pr, EVENT_TRACE_BUFFERING_MODE | EVENT_TRACE_SYSTEM_LOGGER_MODE, NULL);
        pr.p.EnableFlags = EVENT_TRACE_FLAG_PROCESS | EVENT_TRACE_FLAG_THREAD |
                           EVENT_TRACE_FLAG_PROFILE | EVENT_TRACE_FLAG_CSWITCH;
        pr.p.BufferSize = 4;      /* KB */
        pr.p.MaximumBuffers = 16; /* the ring: 64 KB */
        struct timespec t0;
        clock_gettime(CLOCK_REALTIME, &t0);
        int64_t start_ft = 116444736000000000ll + t0.tv_sec * 10000000ll + t0.tv_nsec / 100;
        assert_int_equal(start_kernel_or_skip(&h, "ctl-window", &pr), ERROR_SUCCESS);
        /* until the ring has been filled over several times, and for 3 s at least */
        ULONG written = 0;
        for (int i = 0; i < 150 && (i < 30 || written < 3 * 16); i++) {
                sleep_ms(100);
                struct props q;
                props_query(&q);
                assert_int_equal(QueryTraceA(h, NULL, &q.p), ERROR_SUCCESS);
                written = q.p.BuffersWritten;
        }
        assert_int_equal(etw_save_window(h, path, FALSE), ERROR_SUCCESS);
        stop_by_handle(h);

        struct etl_reader *r = NULL;
        struct etl_error err;
        assert_int_equal(etl_reader_open_file(&r, path, &err), 0);
        const struct etl_logfile *lf = etl_reader_logfile(r);
        int64_t start = lf->header.StartTime.QuadPart, end = lf->header.EndTime.QuadPart;
        uint64_t first = UINT64_MAX, last = 0, first_mask = UINT64_MAX;
        const struct etl_record *e;
        while ((e = etl_reader_next_ref(r))) {
                if (e->is_header)
                        continue;
                if (e->hook_id == WMI_LOG_TYPE_HEADER_EXTENSION) {
                        /* the header buffer's group masks: checked apart, below */
                        first_mask = e->timestamp < first_mask ? e->timestamp : first_mask;
                        continue;
                }
                first = e->timestamp < first ? e->timestamp : first;
                last = e->timestamp > last ? e->timestamp : last;
        }
        assert_true(first != UINT64_MAX);
        int64_t first_ft = etl_reader_to_filetime(r, first);
        int64_t last_ft = etl_reader_to_filetime(r, last);
        /* the test means something: older events left the ring */
        assert_true(lf->header.BuffersWritten < written);
        assert_true(first_ft - start_ft > 15000000);
        assert_true(lf->start_timestamp <= first);
        assert_true(start <= first_ft);
        assert_true(first_ft - start <= 10000000);
        assert_true(end >= last_ft);
        assert_true(end - last_ft <= 10000000);
        /* the group masks hold from the file's start on: not stamped before it */
        assert_true(first_mask != UINT64_MAX && first_mask >= lf->start_timestamp);
        etl_reader_close(r);
        check_header_names_file(path);
        unlink(path);
}

static void test_buffering_and_circular(void **state)
{
        (void)state;
        char ring[PATH_MAX], circ[PATH_MAX];
        tmp_path(ring, sizeof(ring), "ring.etl");
        tmp_path(circ, sizeof(circ), "circular.etl");
        struct props pr;
        CONTROLTRACE_ID h;
        props_init(&pr, EVENT_TRACE_BUFFERING_MODE | EVENT_TRACE_SYSTEM_LOGGER_MODE, NULL);
        pr.p.EnableFlags =
                EVENT_TRACE_FLAG_PROCESS | EVENT_TRACE_FLAG_THREAD | EVENT_TRACE_FLAG_CSWITCH;
        assert_int_equal(start_kernel_or_skip(&h, "ctl-ring", &pr), ERROR_SUCCESS);
        sleep_ms(300);
        struct etl_error err;
        assert_int_equal(etw_session_ops()->save_window(h, ring, false, &err), 0);
        stop_by_handle(h);
        struct tally t = {0};
        TRACE_LOGFILE_HEADER hdr;
        assert_int_equal(read_back(ring, &t, &hdr), ERROR_SUCCESS);
        assert_true(t.nr_events > 1);
        /* a session without a ring */
        props_init(&pr, EVENT_TRACE_REAL_TIME_MODE, NULL);
        assert_int_equal(StartTraceA(&h, "ctl-noring", &pr.p), ERROR_SUCCESS);
        assert_int_equal(etw_session_ops()->save_window(h, ring, true, &err), -EINVAL);
        stop_by_handle(h);
        assert_int_equal(etw_session_ops()->save_window(h, ring, true, &err), -ESRCH);

        /* circular file: the name is reserved at start, the file written at STOP */
        props_init(&pr, EVENT_TRACE_FILE_MODE_CIRCULAR | EVENT_TRACE_SYSTEM_LOGGER_MODE, circ);
        pr.p.MaximumFileSize = 1;
        pr.p.EnableFlags = EVENT_TRACE_FLAG_PROCESS | EVENT_TRACE_FLAG_CSWITCH;
        assert_int_equal(start_kernel_or_skip(&h, "ctl-circular", &pr), ERROR_SUCCESS);
        struct stat st;
        assert_int_equal(stat(circ, &st), 0);
        assert_int_equal(st.st_mode & 0777, 0600);
        sleep_ms(300);
        stop_by_handle(h);
        memset(&t, 0, sizeof(t));
        assert_int_equal(read_back(circ, &t, &hdr), ERROR_SUCCESS);
        assert_true(t.nr_events > 1);
        assert_true(hdr.LogFileMode & EVENT_TRACE_FILE_MODE_CIRCULAR);
        unlink(ring);
        unlink(circ);
}

/* A circular file is written at STOP to the file created at start, through the descriptor kept
   since: a directory swapped for a symlink meanwhile (a user's, under a root session) leaves the
   file it now points at untouched, and STOP says the name no longer holds the trace. */
static void test_circular_stop_keeps_to_its_file(void **state)
{
        (void)state;
        char user_dir[PATH_MAX], moved_dir[PATH_MAX], victim_dir[PATH_MAX];
        char path[PATH_MAX], victim[PATH_MAX], moved[PATH_MAX];
        tmp_path(user_dir, sizeof(user_dir), "user");
        tmp_path(moved_dir, sizeof(moved_dir), "user.old");
        tmp_path(victim_dir, sizeof(victim_dir), "root");
        assert_int_equal(mkdir(user_dir, 0777), 0);
        assert_int_equal(mkdir(victim_dir, 0700), 0);
        snprintf(path, sizeof(path), "%.4000s/c.etl", user_dir);
        snprintf(victim, sizeof(victim), "%.4000s/c.etl", victim_dir);
        snprintf(moved, sizeof(moved), "%.4000s/c.etl", moved_dir);
        FILE *f = fopen(victim, "w");
        assert_non_null(f);
        fputs("precious", f);
        fclose(f);

        struct props pr;
        CONTROLTRACE_ID h;
        props_init(&pr, EVENT_TRACE_FILE_MODE_CIRCULAR | EVENT_TRACE_SYSTEM_LOGGER_MODE, path);
        pr.p.MaximumFileSize = 1;
        pr.p.EnableFlags = EVENT_TRACE_FLAG_PROCESS | EVENT_TRACE_FLAG_CSWITCH;
        assert_int_equal(start_kernel_or_skip(&h, "ctl-circ-swap", &pr), ERROR_SUCCESS);
        /* the user swaps her directory for a symlink to root's */
        assert_int_equal(rename(user_dir, moved_dir), 0);
        assert_int_equal(symlink(victim_dir, user_dir), 0);
        struct props q;
        props_query(&q);
        ULONG rc = ControlTraceA(h, NULL, &q.p, EVENT_TRACE_CONTROL_STOP);
        print_message("STOP: %u: %s\n", rc, etw_last_error_text());
        assert_int_not_equal(rc, ERROR_SUCCESS);
        assert_non_null(strstr(etw_last_error_text(), "no longer names the file"));
        char buf[32] = "";
        f = fopen(victim, "r");
        assert_non_null(f);
        assert_non_null(fgets(buf, sizeof(buf), f));
        fclose(f);
        assert_string_equal(buf, "precious");
        /* the trace is in the file made at start */
        struct tally t = {0};
        TRACE_LOGFILE_HEADER hdr;
        assert_int_equal(read_back(moved, &t, &hdr), ERROR_SUCCESS);
        assert_true(t.nr_events > 1);
        unlink(user_dir);
        unlink(moved);
        rmdir(moved_dir);
        unlink(victim);
        rmdir(victim_dir);
}

/* ---- real-time consumers ------------------------------------------------------------------ */

struct consumer {
        const char *name;
        ULONG extra_mode;                              /* PROCESS_TRACE_MODE_RAW_TIMESTAMP */
        PEVENT_TRACE_BUFFER_CALLBACKA buffer_callback; /* NULL: none */
        struct tally t;
        ULONG rc;
        ULONG buffers_read;
        TRACE_LOGFILE_HEADER hdr; /* as OpenTrace filled it */
        ULONG is_kernel_trace;
        char logger_name[64]; /* hdr.LoggerName, valid only until CloseTrace */
};

static void *consumer_thread(void *arg)
{
        struct consumer *c = arg;
        EVENT_TRACE_LOGFILEA lf;
        memset(&lf, 0, sizeof(lf));
        lf.LoggerName = (LPSTR)c->name;
        lf.ProcessTraceMode =
                PROCESS_TRACE_MODE_REAL_TIME | PROCESS_TRACE_MODE_EVENT_RECORD | c->extra_mode;
        lf.EventRecordCallback = count_event;
        lf.BufferCallback = c->buffer_callback;
        lf.Context = &c->t;
        PROCESSTRACE_HANDLE h = OpenTraceA(&lf);
        if (h == INVALID_PROCESSTRACE_HANDLE) {
                c->rc = GetLastError();
                return NULL;
        }
        c->hdr = lf.LogfileHeader;
        c->is_kernel_trace = lf.IsKernelTrace;
        for (size_t i = 0; lf.LogfileHeader.LoggerName && i + 1 < sizeof(c->logger_name) &&
                           lf.LogfileHeader.LoggerName[i];
             i++)
                c->logger_name[i] = (char)lf.LogfileHeader.LoggerName[i];
        c->rc = ProcessTrace(&h, 1, NULL, NULL);
        c->buffers_read = lf.BuffersRead;
        CloseTrace(h);
        return NULL;
}

static void test_realtime_not_running(void **state)
{
        (void)state;
        struct consumer c = {.name = "ctl-rt-nobody"};
        consumer_thread(&c);
        assert_int_equal(c.rc, ERROR_WMI_INSTANCE_NOT_FOUND);
        /* a session without EVENT_TRACE_REAL_TIME_MODE */
        char path[PATH_MAX];
        tmp_path(path, sizeof(path), "notrt.etl");
        struct props pr;
        CONTROLTRACE_ID h;
        props_init(&pr, EVENT_TRACE_FILE_MODE_SEQUENTIAL, path);
        assert_int_equal(StartTraceA(&h, "ctl-rt-file", &pr.p), ERROR_SUCCESS);
        c = (struct consumer){.name = "ctl-rt-file"};
        consumer_thread(&c);
        assert_int_equal(c.rc, ERROR_WMI_INSTANCE_NOT_FOUND);
        stop_by_handle(h);
        unlink(path);
}

/* A consumer blocked in ProcessTrace on a quiet session; CloseTrace from another thread. */
struct closer {
        PROCESSTRACE_HANDLE h;
        atomic_bool is_open;
        atomic_bool is_done; /* ProcessTrace returned */
        atomic_int tid;      /* its thread's */
        ULONG rc;
        char why[256]; /* the last error's text where ProcessTrace failed */
};

static void *blocked_consumer(void *arg)
{
        struct closer *c = arg;
        atomic_store(&c->tid, (int)gettid());
        EVENT_TRACE_LOGFILEA lf;
        memset(&lf, 0, sizeof(lf));
        lf.LoggerName = (LPSTR) "ctl-rt-close";
        lf.ProcessTraceMode = PROCESS_TRACE_MODE_REAL_TIME | PROCESS_TRACE_MODE_EVENT_RECORD;
        lf.EventRecordCallback = count_event;
        struct tally t = {0};
        lf.Context = &t;
        c->h = OpenTraceA(&lf);
        atomic_store(&c->is_open, true);
        c->rc = ProcessTrace(&c->h, 1, NULL, NULL);
        if (c->rc != ERROR_SUCCESS)
                snprintf(c->why, sizeof(c->why), "%s", etw_last_error_text());
        atomic_store(&c->is_done, true);
        return NULL;
}

static void test_realtime_close_trace(void **state)
{
        (void)state;
        struct props pr;
        CONTROLTRACE_ID h;
        /* a session of the name an earlier run left in the host when it failed (a host lives
           while it holds sessions): stopped first */
        struct props left;
        props_query(&left);
        ControlTraceA(0, "ctl-rt-close", &left.p, EVENT_TRACE_CONTROL_STOP);
        props_init(&pr, EVENT_TRACE_REAL_TIME_MODE, NULL);
        assert_int_equal(StartTraceA(&h, "ctl-rt-close", &pr.p), ERROR_SUCCESS);
        struct closer c = {.rc = 99};
        pthread_t th;
        assert_int_equal(pthread_create(&th, NULL, blocked_consumer, &c), 0);
        while (!atomic_load(&c.is_open))
                sleep_ms(10);
        /* inside ProcessTrace: once open, the consumer sleeps nowhere else (ProcessTrace marks
           its handle as processing before it waits); a close before that would release the
           handle, and ProcessTrace would fail on it */
        bool has_slept = false;
        for (int i = 0; i < 60000 && !atomic_load(&c.is_done); i++) {
                if ((has_slept = thread_sleeps(atomic_load(&c.tid))))
                        break;
                sleep_ms(1);
        }
        if (atomic_load(&c.is_done))
                print_message("ProcessTrace returned before the close: %lu: %s\n",
                              (unsigned long)c.rc, c.why);
        assert_false(atomic_load(&c.is_done));
        /* seen asleep once is enough: it is inside ProcessTrace from then on (a second look
           failed under load, the consumer awake for its own look at the quiet session) */
        assert_true(has_slept);
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        ULONG rc = CloseTrace(c.h);
        assert_true(rc == ERROR_CTX_CLOSE_PENDING || rc == ERROR_SUCCESS);
        assert_int_equal(pthread_join(th, NULL), 0);
        assert_int_equal(c.rc, ERROR_SUCCESS);
        /* the close woke the reader's wait: it did not wait for its own next look (RT_WAIT_MS,
           2 s, the only other end of a quiet session's wait), with the whole of that to spare
           for a busy machine's scheduling */
        clock_gettime(CLOCK_MONOTONIC, &t1);
        int64_t waited_ms =
                (int64_t)(t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
        print_message("ProcessTrace returned %lld ms after CloseTrace\n", (long long)waited_ms);
        assert_true(waited_ms < 1000);
        /* the session still runs */
        struct props q;
        props_query(&q);
        assert_int_equal(QueryTraceA(h, NULL, &q.p), ERROR_SUCCESS);
        stop_by_handle(h);
}

static void test_realtime_consumer(void **state)
{
        (void)state;
        struct props pr;
        CONTROLTRACE_ID h;
        props_init(&pr, EVENT_TRACE_REAL_TIME_MODE, NULL);
        pr.p.Wnode.Guid = SystemTraceControlGuid;
        pr.p.EnableFlags =
                EVENT_TRACE_FLAG_PROCESS | EVENT_TRACE_FLAG_THREAD | EVENT_TRACE_FLAG_CSWITCH;
        assert_int_equal(start_kernel_or_skip(&h, KERNEL_LOGGER_NAMEA, &pr), ERROR_SUCCESS);
        struct consumer c = {.name = "NT Kernel Logger"};
        pthread_t th;
        assert_int_equal(pthread_create(&th, NULL, consumer_thread, &c), 0);
        struct props q;
        for (int i = 0; i < 100 && atomic_load(&c.t.nr_events) < 10; i++) {
                sleep_ms(50);
                props_query(&q);
                assert_int_equal(FlushTraceA(h, NULL, &q.p), ERROR_SUCCESS);
        }
        unsigned long seen = atomic_load(&c.t.nr_events);
        /* the main thread stops the session: ProcessTrace returns ERROR_SUCCESS */
        props_query(&q);
        assert_int_equal(StopTraceA(h, NULL, &q.p), ERROR_SUCCESS);
        assert_int_equal(pthread_join(th, NULL), 0);
        assert_int_equal(c.rc, ERROR_SUCCESS);
        assert_true(seen >= 10);
        assert_true(c.buffers_read >= 1);
        assert_true(atomic_load(&c.t.nr_events) >= seen);
        /* OpenTrace told the session's header, as a kernel trace */
        assert_int_equal(c.is_kernel_trace, 1);
        assert_string_equal(c.logger_name, KERNEL_LOGGER_NAMEA);
        assert_int_equal(c.hdr.BufferSize, pr.p.BufferSize * 1024);
        assert_int_equal(c.hdr.PointerSize, 8);
        assert_int_equal(c.hdr.PerfFreq.QuadPart, 1000000000);
        assert_int_equal(c.hdr.ReservedFlags, EVENT_TRACE_CLOCK_PERFCOUNTER);
        assert_true(c.hdr.NumberOfProcessors >= 1);
        assert_true(c.hdr.LogFileMode & EVENT_TRACE_REAL_TIME_MODE);
        assert_true(c.hdr.StartTime.QuadPart > 0);
        /* the header event first, then the kernel logger's group masks (0x0005) */
        assert_int_equal(c.t.nr_header, 1);
        assert_true(IsEqualGUID(&c.t.first_guid[0], &EventTraceGuid));
        assert_int_equal(c.t.first_opcode[0], 0);
        assert_true(IsEqualGUID(&c.t.first_guid[1], &EventTraceGuid));
        assert_int_equal(c.t.first_opcode[1], WMI_LOG_TYPE_HEADER_EXTENSION & 0xFF);
        assert_int_equal(c.t.min_ts, c.hdr.StartTime.QuadPart);
        /* timestamps are FILETIME, near now */
        int64_t now = 116444736000000000ll + (int64_t)time(NULL) * 10000000ll;
        assert_true(c.t.max_ts > now - 600ll * 10000000);
        assert_true(c.t.max_ts < now + 600ll * 10000000);
}

static void test_realtime_lost_buffers(void **state)
{
        (void)state;
        struct props pr, q;
        CONTROLTRACE_ID h;
        props_init(&pr, EVENT_TRACE_REAL_TIME_MODE | EVENT_TRACE_SYSTEM_LOGGER_MODE, NULL);
        pr.p.EnableFlags =
                EVENT_TRACE_FLAG_PROCESS | EVENT_TRACE_FLAG_THREAD | EVENT_TRACE_FLAG_CSWITCH;
        pr.p.MinimumBuffers = 1;
        pr.p.MaximumBuffers = 1; /* raised to MinimumBuffers: a short queue */
        pr.p.BufferSize = 4;
        assert_int_equal(start_kernel_or_skip(&h, "ctl-rt-lost", &pr), ERROR_SUCCESS);
        ULONG max = pr.p.MaximumBuffers;
        /* nobody reads: completed buffers beyond MaximumBuffers are lost */
        for (int i = 0; i < 100; i++) {
                sleep_ms(20);
                props_query(&q);
                assert_int_equal(FlushTraceA(h, NULL, &q.p), ERROR_SUCCESS);
                if (q.p.RealTimeBuffersLost > 0 && q.p.BuffersWritten > max)
                        break;
        }
        assert_true(q.p.BuffersWritten > max);
        assert_true(q.p.RealTimeBuffersLost > 0);
        /* a consumer that attaches now gets what was kept, then the rest until STOP */
        struct consumer c = {.name = "ctl-rt-lost"};
        pthread_t th;
        assert_int_equal(pthread_create(&th, NULL, consumer_thread, &c), 0);
        /* until it has taken events: a STOP before its OpenTrace would leave it nothing */
        for (int i = 0; i < 600 && atomic_load(&c.t.nr_events) == 0; i++)
                sleep_ms(50);
        assert_true(atomic_load(&c.t.nr_events) > 0);
        props_query(&q);
        assert_int_equal(StopTraceA(0, "ctl-rt-lost", &q.p), ERROR_SUCCESS);
        assert_true(q.p.RealTimeBuffersLost > 0);
        assert_int_equal(pthread_join(th, NULL), 0);
        assert_int_equal(c.rc, ERROR_SUCCESS);
        assert_true(c.buffers_read >= 1);
        assert_true(c.buffers_read <= q.p.BuffersWritten + 1); /* + the header buffer */
        assert_int_equal(c.t.nr_header, 1);
}

/* BufferCallback once per delivered buffer, BuffersRead counting up; FALSE ends ProcessTrace
   with ERROR_CANCELLED. Raw timestamps are the session clock (CLOCK_MONOTONIC ns). */
static atomic_ulong nr_buffer_calls, nr_bad_buffers_read;

static ULONG WINAPI cancel_at_third(PEVENT_TRACE_LOGFILEA lf)
{
        unsigned long n = atomic_fetch_add(&nr_buffer_calls, 1) + 1;
        if (lf->BuffersRead != n)
                atomic_fetch_add(&nr_bad_buffers_read, 1);
        return n < 3;
}

static int64_t monotonic_ns(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void test_realtime_buffer_callback(void **state)
{
        (void)state;
        struct props pr, q;
        CONTROLTRACE_ID h;
        props_init(&pr, EVENT_TRACE_REAL_TIME_MODE | EVENT_TRACE_SYSTEM_LOGGER_MODE, NULL);
        pr.p.EnableFlags =
                EVENT_TRACE_FLAG_PROCESS | EVENT_TRACE_FLAG_THREAD | EVENT_TRACE_FLAG_CSWITCH;
        pr.p.BufferSize = 4;
        int64_t before = monotonic_ns();
        assert_int_equal(start_kernel_or_skip(&h, "ctl-rt-cb", &pr), ERROR_SUCCESS);
        atomic_store(&nr_buffer_calls, 0);
        atomic_store(&nr_bad_buffers_read, 0);
        struct consumer c = {.name = "ctl-rt-cb",
                             .extra_mode = PROCESS_TRACE_MODE_RAW_TIMESTAMP,
                             .buffer_callback = cancel_at_third,
                             .rc = 99};
        pthread_t th;
        assert_int_equal(pthread_create(&th, NULL, consumer_thread, &c), 0);
        for (int i = 0; i < 200 && atomic_load(&nr_buffer_calls) < 3; i++) {
                sleep_ms(20);
                props_query(&q);
                assert_int_equal(FlushTraceA(h, NULL, &q.p), ERROR_SUCCESS);
        }
        bool is_stopped = atomic_load(&nr_buffer_calls) < 3;
        if (is_stopped)
                stop_by_handle(h); /* ProcessTrace would wait for it */
        assert_int_equal(pthread_join(th, NULL), 0);
        int64_t after = monotonic_ns();
        assert_int_equal(c.rc, ERROR_CANCELLED);
        assert_int_equal(atomic_load(&nr_buffer_calls), 3);
        assert_int_equal(atomic_load(&nr_bad_buffers_read), 0);
        assert_int_equal(c.buffers_read, 3);
        assert_int_equal(c.t.nr_header, 1);
        assert_true(c.t.nr_events > 2);
        /* raw: the session clock, not FILETIME */
        assert_true(c.t.min_ts >= before);
        assert_true(c.t.max_ts <= after);
        assert_false(is_stopped);
        stop_by_handle(h);
}

int main(void)
{
        live_nice();
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_settings_class),
                cmocka_unit_test(test_hook_event_id_round_trip),
                cmocka_unit_test(test_start_null_arguments),
                cmocka_unit_test(test_start_buffer_size),
                cmocka_unit_test(test_start_needs_traced_guid),
                cmocka_unit_test(test_start_name_offsets),
                cmocka_unit_test(test_start_client_context),
                cmocka_unit_test(test_start_log_file_modes),
                cmocka_unit_test(test_start_fills_properties),
                cmocka_unit_test(test_start_already_exists),
                cmocka_unit_test(test_start_kernel_guid_and_flags),
                cmocka_unit_test(test_start_files),
                cmocka_unit_test(test_start_too_many_sessions),
                cmocka_unit_test(test_control_errors),
                cmocka_unit_test(test_control_update_plain),
                cmocka_unit_test(test_control_update_switches_file),
                cmocka_unit_test(test_set_stack_tracing_sizes),
                cmocka_unit_test(test_set_group_mask_sizes),
                cmocka_unit_test(test_profile_interval),
                cmocka_unit_test(test_profile_source_config),
                cmocka_unit_test(test_pmc_list_sizes),
                cmocka_unit_test(test_unsupported_classes),
                cmocka_unit_test(test_query_machine_classes),
                cmocka_unit_test(test_lbr_parameter_checks),
                cmocka_unit_test(test_start_kernel_trace_checks),
                cmocka_unit_test(test_kernel_session_lifecycle),
                cmocka_unit_test(test_start_kernel_trace_live),
                cmocka_unit_test(test_kernel_hardware_classes),
                cmocka_unit_test(test_missing_hardware_said_once),
                cmocka_unit_test(test_kernel_live_statistics),
                cmocka_unit_test(test_logger_thread_priority),
                cmocka_unit_test(test_process_class),
                cmocka_unit_test(test_write_error_stops_session),
                cmocka_unit_test(test_max_file_size_stops_session),
                cmocka_unit_test(test_disk_space_stops_session),
                cmocka_unit_test(test_buffering_and_circular),
                cmocka_unit_test(test_circular_stop_keeps_to_its_file),
                cmocka_unit_test(test_saved_window_frames_its_events),
                cmocka_unit_test(test_realtime_not_running),
                cmocka_unit_test(test_realtime_close_trace),
                cmocka_unit_test(test_realtime_consumer),
                cmocka_unit_test(test_realtime_lost_buffers),
                cmocka_unit_test(test_realtime_buffer_callback),
        };
        return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
