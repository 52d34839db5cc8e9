/* SPDX-License-Identifier: MIT */
/* merge_output.c: owns the output of `etwtop --merge`: its checks (out_file) and "-o -". */
#include "merge_output.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "etw/KernelTraceControl.h"
#include "etw/etwtop_ext.h"
#include "util/out_file.h"

static int merge(const char *output, char **inputs, int nr_inputs)
{
        ULONG rc = CreateMergedTraceFile(output, (LPCSTR *)inputs, (ULONG)nr_inputs,
                                         EVENT_TRACE_MERGE_EXTENDED_DATA_DEFAULT);
        if (rc != ERROR_SUCCESS) {
                fprintf(stderr, "etwtop: %s (Win32 error %u)\n", etw_last_error_text(), rc);
                return 1;
        }
        char damage[512];
        if (etw_merge_get_damage(damage, sizeof(damage)) == ERROR_SUCCESS && damage[0])
                fprintf(stderr, "etwtop: %s: merged without what was skipped: %s\n", output,
                        damage);
        return 0;
}

/* Copies the file at path to standard output. 0 or -errno. */
static int copy_to_stdout(const char *path)
{
        int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        char buf[65536];
        int rc = 0;
        for (;;) {
                ssize_t n = read(fd, buf, sizeof(buf));
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0) {
                        rc = n < 0 ? -errno : 0;
                        break;
                }
                for (ssize_t off = 0; off < n && rc == 0;) {
                        ssize_t w = write(STDOUT_FILENO, buf + off, (size_t)(n - off));
                        if (w < 0 && errno == EINTR)
                                continue;
                        if (w < 0)
                                rc = -errno;
                        else
                                off += w;
                }
                if (rc < 0)
                        break;
        }
        close(fd);
        return rc;
}

static int merge_to_stdout(char **inputs, int nr_inputs)
{
        const char *tmpdir = getenv("TMPDIR");
        char dir[4096], file[4200];
        snprintf(dir, sizeof(dir), "%s/etwtop-merge-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
        if (!mkdtemp(dir)) {
                fprintf(stderr, "etwtop: --merge -o -: a temporary directory: %s\n",
                        strerror(errno));
                return 1;
        }
        snprintf(file, sizeof(file), "%s/merged.etl", dir);
        int status = merge(file, inputs, nr_inputs);
        if (status == 0) {
                int rc = copy_to_stdout(file);
                if (rc < 0) {
                        fprintf(stderr, "etwtop: --merge -o -: writing standard output: %s\n",
                                strerror(-rc));
                        status = 1;
                }
        }
        unlink(file);
        rmdir(dir);
        return status;
}

int merge_output_run(const char *output, bool is_force, char **inputs, int nr_inputs)
{
        if (strcmp(output, "-") == 0)
                return merge_to_stdout(inputs, nr_inputs);
        char err[512];
        /* only a regular file of ours is removed; CreateMergedTraceFile then creates the name
           with O_EXCL, never through a link */
        if (out_file_make_room(output, is_force ? OUT_FILE_FORCE : 0, err, sizeof(err)) < 0) {
                fprintf(stderr, "etwtop: %s\n", err);
                return 1;
        }
        return merge(output, inputs, nr_inputs);
}
