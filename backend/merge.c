/* SPDX-License-Identifier: MIT */
/* merge.c: owns CreateMergedTraceFile, the API's edge of the merge (backend/etl/etl_merge.c):
   its arguments, its inputs (.etl or perf.data files), its Win32 codes and messages. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "etl_merge.h"
#include "etw/KernelTraceControl.h"
#include "etw/etwtop_ext.h"
#include "etw_error.h"
#include "perf_data_conv.h"

static ETW_CODEVIEW_LOOKUP codeview_lookup;
static PVOID codeview_ctx;

/* etw_merge_get_damage's line: the calling thread's last merge */
static _Thread_local char merge_damage[512];

ULONG etw_merge_set_codeview_lookup(ETW_CODEVIEW_LOOKUP Lookup, PVOID Context)
{
        codeview_lookup = Lookup;
        codeview_ctx = Context;
        etw_set_error(ERROR_SUCCESS, NULL);
        return ERROR_SUCCESS;
}

ULONG etw_merge_get_damage(char *Text, ULONG Size)
{
        if (!Text || !Size) {
                etw_set_error(ERROR_INVALID_PARAMETER,
                              "etw_merge_get_damage: no room for the text");
                return ERROR_INVALID_PARAMETER;
        }
        snprintf(Text, Size, "%s", merge_damage);
        etw_set_error(ERROR_SUCCESS, NULL);
        return ERROR_SUCCESS;
}

/* The line of what the inputs' reading skipped (merge_damage): the first damaged input's
   problem, and the count of the others. perf_warn[i]: input i's conversion stopped at its
   damage (a perf.data's), its message in perf_err[i]. */
static void note_damage(struct etl_reader *const *in, LPCSTR *paths, ULONG n,
                        const struct etl_error *perf_err, const bool *perf_warn)
{
        merge_damage[0] = 0;
        ULONG nr_damaged = 0;
        for (ULONG i = 0; i < n; i++) {
                struct etl_reader_stats st;
                etl_reader_get_stats(in[i], &st);
                if (!perf_warn[i] && !st.nr_buffers_damaged)
                        continue;
                if (nr_damaged++)
                        continue;
                const struct etl_error *w =
                        perf_warn[i] ? &perf_err[i] : etl_reader_last_warning(in[i]);
                if (perf_warn[i])
                        snprintf(merge_damage, sizeof(merge_damage),
                                 "%s: read up to its damage: %.300s (byte offset %llu)", paths[i],
                                 w->msg, (unsigned long long)w->offset);
                else
                        snprintf(merge_damage, sizeof(merge_damage),
                                 "%s: %u damaged buffer%s skipped in whole or in part; the last: "
                                 "%.300s (byte offset %llu)",
                                 paths[i], (unsigned)st.nr_buffers_damaged,
                                 st.nr_buffers_damaged == 1 ? "" : "s", w->msg,
                                 (unsigned long long)w->offset);
        }
        if (nr_damaged > 1) {
                size_t len = strlen(merge_damage);
                snprintf(merge_damage + len, sizeof(merge_damage) - len,
                         "; %lu more input%s damaged", (unsigned long)(nr_damaged - 1),
                         nr_damaged == 2 ? "" : "s");
        }
}

/* Sets the last error and its message, and gives the code back. */
#define FAIL(code, ...) (etw_set_error((code), __VA_ARGS__), (ULONG)(code))

ULONG WINAPI CreateMergedTraceFileA(LPCSTR wszMergedFileName, LPCSTR wszTraceFileNames[],
                                    ULONG cTraceFileNames, DWORD dwExtendedDataFlags)
{
        struct etl_reader *in[ETL_MERGE_MAX_FILES] = {0};
        struct etl_error err;
        struct etl_error perf_err[ETL_MERGE_MAX_FILES];
        bool perf_warn[ETL_MERGE_MAX_FILES] = {0};
        ULONG status = ERROR_SUCCESS;
        ULONG n = 0;

        merge_damage[0] = 0;
        if (!wszMergedFileName || !wszTraceFileNames || cTraceFileNames == 0)
                return FAIL(ERROR_INVALID_PARAMETER,
                            "CreateMergedTraceFile: no output or no input files");
        if (cTraceFileNames > ETL_MERGE_MAX_FILES)
                return FAIL(ERROR_BAD_LENGTH, "CreateMergedTraceFile: more than 64 input files");
        for (n = 0; n < cTraceFileNames; n++) {
                const char *path = wszTraceFileNames[n];
                int rc = path ? perf_data_etl_reader_open(&in[n], path, &err) : -EINVAL;
                /* opened with a message: a perf.data converted up to its damage (one read
                   whole, with a problem, lost nothing) */
                perf_warn[n] = rc == 0 && err.msg[0] &&
                               strncmp(err.msg, ETW_READ_WHOLE, strlen(ETW_READ_WHOLE)) != 0;
                if (perf_warn[n])
                        perf_err[n] = err;
                if (rc < 0) {
                        status = FAIL(rc == -ENOENT ? ERROR_FILE_NOT_FOUND : ERROR_BAD_FORMAT,
                                      "CreateMergedTraceFile: %s (byte offset %llu)",
                                      path ? err.msg : "an input name is NULL",
                                      path ? (unsigned long long)err.offset : 0ull);
                        goto out;
                }
        }

        struct etl_merge_options opts = {
                .add_image_ids =
                        (dwExtendedDataFlags & EVENT_TRACE_MERGE_EXTENDED_DATA_IMAGEID) != 0,
                .codeview_lookup = codeview_lookup,
                .codeview_ctx = codeview_ctx,
        };
        enum etl_merge_stage stage = ETL_MERGE_WRITE;
        int rc = etl_merge(in, n, wszMergedFileName, &opts, &stage, &err);
        if (rc == 0) {
                note_damage(in, wszTraceFileNames, n, perf_err, perf_warn);
                etw_set_error(ERROR_SUCCESS, NULL);
        } else if (stage == ETL_MERGE_NEW_WRITER)
                status = FAIL(ERROR_NOT_ENOUGH_MEMORY, "CreateMergedTraceFile: out of memory");
        else if (stage == ETL_MERGE_OPEN_OUTPUT)
                status = FAIL(rc == -EEXIST ? ERROR_ALREADY_EXISTS : etw_error_from_errno(rc),
                              "CreateMergedTraceFile: %s", err.msg);
        else
                status = FAIL(etw_error_from_errno(rc), "CreateMergedTraceFile: writing %s: %s",
                              wszMergedFileName, strerror(-rc));
out:
        for (ULONG i = 0; i < n; i++)
                etl_reader_close(in[i]);
        return status;
}
