/* SPDX-License-Identifier: MIT */
/* kallsyms_text.c: owns the process's one copy of /proc/kallsyms and the rule for reusing it. */
#include "util/kallsyms_text.h"
#include "util/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define FRESH_NS  (60ull * 1000000000ull)
#define MAX_BYTES ((size_t)256 << 20)
#define CHUNK     65536

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char *kept; /* the last text read, NULL when none */
static size_t kept_len;
static char *kept_modules; /* /proc/modules's names and addresses at that read */
static uint64_t kept_at_ns;
static const char *kallsyms_path = "/proc/kallsyms", *modules_path = "/proc/modules";

static uint64_t now_ns(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* fd's whole text (up to MAX_BYTES), NUL-terminated; between after each chunk. NULL with errno
   set on a read error. */
static char *read_all(int fd, size_t *len_out, void (*between)(void *), void *ctx)
{
        size_t cap = (size_t)1 << 20, len = 0;
        char *text = xmalloc(cap);
        for (;;) {
                if (len + CHUNK + 1 > cap) {
                        if (cap >= MAX_BYTES)
                                break; /* no kallsyms is this long: what was read is kept */
                        cap *= 2;
                        text = xrealloc(text, cap);
                }
                ssize_t r = read(fd, text + len, CHUNK);
                if (r < 0 && errno == EINTR)
                        continue;
                if (r < 0) {
                        int e = errno;
                        free(text);
                        errno = e;
                        return NULL;
                }
                if (r == 0)
                        break;
                len += (size_t)r;
                if (between)
                        between(ctx);
        }
        text[len] = 0;
        *len_out = len;
        return text;
}

/* The first and sixth fields of each line of /proc/modules (name, load address): what tells
   that modules came or went; "" where there is no /proc/modules (a kernel without modules). */
static char *modules_now(void)
{
        int fd = open(modules_path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return xstrdup("");
        size_t len = 0;
        char *text = read_all(fd, &len, NULL, NULL);
        close(fd);
        if (!text)
                return xstrdup("");
        size_t o = 0;
        for (char *line = text, *next; *line; line = next) {
                char *nl = strchr(line, '\n');
                next = nl ? nl + 1 : line + strlen(line);
                if (nl)
                        *nl = 0;
                char *field[6] = {0};
                int n = 0;
                for (char *save = NULL, *f = strtok_r(line, " ", &save); f && n < 6;
                     f = strtok_r(NULL, " ", &save))
                        field[n++] = f;
                if (n < 1)
                        continue;
                /* in place: what is written never overtakes what is read */
                size_t a = strlen(field[0]), b = n == 6 ? strlen(field[5]) : 0;
                memmove(text + o, field[0], a);
                o += a;
                text[o++] = ' ';
                if (b) {
                        memmove(text + o, field[5], b);
                        o += b;
                }
                text[o++] = '\n';
        }
        text[o] = 0;
        return text;
}

char *kallsyms_text_read(size_t *len, void (*between)(void *ctx), void *ctx)
{
        char *modules = modules_now();
        pthread_mutex_lock(&lock);
        if (kept && now_ns() - kept_at_ns < FRESH_NS && strcmp(modules, kept_modules) == 0) {
                char *copy = xmalloc(kept_len + 1);
                memcpy(copy, kept, kept_len + 1);
                *len = kept_len;
                pthread_mutex_unlock(&lock);
                free(modules);
                return copy;
        }
        pthread_mutex_unlock(&lock);
        /* read without the lock: another reader waits for nothing (two at once both read) */
        int fd = open(kallsyms_path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
                int e = errno;
                free(modules);
                errno = e;
                return NULL;
        }
        uint64_t at = now_ns();
        char *text = read_all(fd, len, between, ctx);
        int e = errno;
        close(fd);
        if (!text) {
                free(modules);
                errno = e;
                return NULL;
        }
        char *copy = xmalloc(*len + 1);
        memcpy(copy, text, *len + 1);
        pthread_mutex_lock(&lock);
        free(kept);
        free(kept_modules);
        kept = copy;
        kept_len = *len;
        kept_modules = modules;
        kept_at_ns = at;
        pthread_mutex_unlock(&lock);
        return text;
}

void kallsyms_text_forget(void)
{
        pthread_mutex_lock(&lock);
        free(kept);
        free(kept_modules);
        kept = kept_modules = NULL;
        kept_len = 0;
        pthread_mutex_unlock(&lock);
}

void kallsyms_text_set_paths(const char *kallsyms, const char *modules)
{
        kallsyms_text_forget();
        pthread_mutex_lock(&lock);
        kallsyms_path = kallsyms ? kallsyms : "/proc/kallsyms";
        modules_path = modules ? modules : "/proc/modules";
        pthread_mutex_unlock(&lock);
}
