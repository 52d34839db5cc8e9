/* SPDX-License-Identifier: MIT */
/* merge.c: owns CreateMergedTraceFile, the API's edge of the merge (backend/etl/etl_merge.c):
   its arguments, its inputs (.etl or perf.data files), its Win32 codes and messages. */
#include <errno.h>
#include <string.h>

#include "etl_merge.h"
#include "etw/KernelTraceControl.h"
#include "etw/etwtop_ext.h"
#include "etw_error.h"
#include "perf_data_conv.h"

static ETW_CODEVIEW_LOOKUP codeview_lookup;
static PVOID codeview_ctx;

ULONG etw_merge_set_codeview_lookup(ETW_CODEVIEW_LOOKUP Lookup, PVOID Context)
{
        codeview_lookup = Lookup;
        codeview_ctx = Context;
        etw_set_error(ERROR_SUCCESS, NULL);
        return ERROR_SUCCESS;
}

/* Sets the last error and its message, and gives the code back. */
#define FAIL(code, ...) (etw_set_error((code), __VA_ARGS__), (ULONG)(code))

ULONG WINAPI CreateMergedTraceFileA(LPCSTR wszMergedFileName, LPCSTR wszTraceFileNames[],
                                    ULONG cTraceFileNames, DWORD dwExtendedDataFlags)
{
        struct etl_reader *in[ETL_MERGE_MAX_FILES];
        struct etl_error err;
        ULONG status = ERROR_SUCCESS;
        ULONG n = 0;

        if (!wszMergedFileName || !wszTraceFileNames || cTraceFileNames == 0)
                return FAIL(ERROR_INVALID_PARAMETER,
                            "CreateMergedTraceFile: no output or no input files");
        if (cTraceFileNames > ETL_MERGE_MAX_FILES)
                return FAIL(ERROR_BAD_LENGTH, "CreateMergedTraceFile: more than 64 input files");
        for (n = 0; n < cTraceFileNames; n++) {
                const char *path = wszTraceFileNames[n];
                int rc = path ? perf_data_etl_reader_open(&in[n], path, &err) : -EINVAL;
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
        if (rc == 0)
                etw_set_error(ERROR_SUCCESS, NULL);
        else if (stage == ETL_MERGE_NEW_WRITER)
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
