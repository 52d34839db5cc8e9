/* SPDX-License-Identifier: MIT */
/* runtime_dir.c: owns the session host's runtime directory: which directory a caller's host
   uses, and the checks that it is the caller's own private directory (runtime_dir.h). */
#include "runtime_dir.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* s with every "%u" replaced by the caller's uid, into out. */
static void with_uid(const char *s, char *out, size_t size)
{
        size_t n = 0;
        out[0] = '\0';
        for (; *s && n + 1 < size; s++) {
                if (s[0] == '%' && s[1] == 'u') {
                        int k = snprintf(out + n, size - n, "%u", (unsigned)geteuid());
                        n = k > 0 && (size_t)k < size - n ? n + (size_t)k : size - 1;
                        s++;
                } else {
                        out[n++] = *s;
                }
        }
        out[n < size ? n : size - 1] = '\0';
}

/* /run/user/UID when it is the caller's private directory: logind makes it at login, and only
   root can make a name there, so no other user can have taken it first. */
static bool has_run_user_dir(char *out, size_t size)
{
        struct stat st;
        snprintf(out, size, "/run/user/%u", (unsigned)geteuid());
        return lstat(out, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() &&
               !(st.st_mode & 077);
}

/* Whether dir is the last resort, /tmp/etwtop-UID: a name any user can take first. */
static bool is_tmp_fallback(const char *dir)
{
        char tmp[64];
        snprintf(tmp, sizeof(tmp), "/tmp/etwtop-%u", (unsigned)geteuid());
        return strcmp(dir, tmp) == 0;
}

/* What to do when the last resort is not the caller's, appended to a refusal. */
static const char *tmp_fallback_advice(const char *dir)
{
        return is_tmp_fallback(dir)
                       ? ". With XDG_RUNTIME_DIR unset this name in /tmp is the last resort, and "
                         "another user can make it first: set XDG_RUNTIME_DIR (or "
                         "ETWTOP_RUNTIME_DIR) to a private directory of yours, log in so that "
                         "/run/user/UID exists, or have root remove it"
                       : "";
}

/* The runtime directory of the caller's host: ETWTOP_RUNTIME_DIR (each "%u" in it replaced by
   the caller's uid, made absolute), else /run/etwtop for root, else $XDG_RUNTIME_DIR/etwtop,
   else /run/user/UID/etwtop when /run/user/UID is the caller's private directory (no other
   user can make that name), else /tmp/etwtop-UID, whose refusals, when another user made it
   first, say what to do. 0, or -ENAMETOOLONG with why filled. */
static int host_runtime_dir(char *out, size_t size, char *why, size_t why_size)
{
        char run_user[64];
        const char *env_raw = getenv("ETWTOP_RUNTIME_DIR");
        char env_buf[PATH_MAX];
        const char *env = NULL;
        if (env_raw) {
                with_uid(env_raw, env_buf, sizeof(env_buf));
                env = env_buf;
        }
        const char *xdg = getenv("XDG_RUNTIME_DIR");
        int n;
        if (env && *env && env[0] == '/') {
                n = snprintf(out, size, "%s", env);
        } else if (env && *env) {
                char cwd[PATH_MAX];
                if (!getcwd(cwd, sizeof(cwd))) {
                        snprintf(why, why_size,
                                 "ETWTOP_RUNTIME_DIR \"%s\" is relative and the "
                                 "current directory cannot be named",
                                 env);
                        return -ENAMETOOLONG;
                }
                n = snprintf(out, size, "%s/%s", cwd, env);
        } else if (geteuid() == 0) {
                n = snprintf(out, size, "/run/etwtop");
        } else if (xdg && xdg[0] == '/') {
                n = snprintf(out, size, "%s/etwtop", xdg);
        } else if (has_run_user_dir(run_user, sizeof(run_user))) {
                n = snprintf(out, size, "%s/etwtop", run_user);
        } else {
                n = snprintf(out, size, "/tmp/etwtop-%u", (unsigned)geteuid());
        }
        struct sockaddr_un sa;
        if (n < 0 || (size_t)n >= size ||
            (size_t)n + sizeof("/" HOST_SOCKET_NAME) > sizeof(sa.sun_path)) {
                snprintf(why, why_size,
                         "the session host directory %.200s is too long for a socket name (at "
                         "most %zu characters)",
                         out, sizeof(sa.sun_path) - sizeof("/" HOST_SOCKET_NAME));
                return -ENAMETOOLONG;
        }
        return 0;
}

/* Checks that dir is the caller's own private directory (made when may_create). 0, -ENOENT (it
   does not exist), -EACCES (another user's, or open to others: why says so), or -errno. */
static int check_dir(const char *dir, bool may_create, char *why, size_t why_size)
{
        struct stat st;
        if (lstat(dir, &st) < 0) {
                int e = errno;
                if (e == EACCES) {
                        snprintf(why, why_size,
                                 "the session host directory %s cannot be reached (%s): it is "
                                 "another user's, whose sessions are theirs",
                                 dir, strerror(e));
                        return -EACCES;
                }
                if (e != ENOENT || !may_create) {
                        snprintf(why, why_size, "no session host runs on %s (%s)", dir,
                                 strerror(e));
                        return -e;
                }
                if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
                        e = errno;
                        snprintf(why, why_size, "cannot create the session host directory %s: %s",
                                 dir, strerror(e));
                        return -e;
                }
                if (lstat(dir, &st) < 0) {
                        e = errno;
                        snprintf(why, why_size, "%s: %s", dir, strerror(e));
                        return -e;
                }
        }
        if (S_ISLNK(st.st_mode) || !S_ISDIR(st.st_mode)) {
                snprintf(why, why_size,
                         "the session host directory %s is %s: refused (it must be a private "
                         "directory)%s",
                         dir, S_ISLNK(st.st_mode) ? "a symbolic link" : "not a directory",
                         tmp_fallback_advice(dir));
                return -ENOTDIR;
        }
        if (st.st_uid != geteuid()) {
                snprintf(why, why_size,
                         "the session host directory %s belongs to uid %u, not to you (uid %u): "
                         "that user's sessions are theirs, and nobody else can see, consume, "
                         "change or stop them%s",
                         dir, (unsigned)st.st_uid, (unsigned)geteuid(), tmp_fallback_advice(dir));
                return -EACCES;
        }
        if (st.st_mode & 077) {
                snprintf(why, why_size,
                         "the session host directory %s is open to other users (mode %04o): "
                         "refused, it must be private (0700)%s",
                         dir, (unsigned)(st.st_mode & 07777), tmp_fallback_advice(dir));
                return -EACCES;
        }
        return 0;
}

int host_client_dir(char *dir, size_t size, bool may_create, char *why, size_t why_size)
{
        int rc = host_runtime_dir(dir, size, why, why_size);
        return rc < 0 ? rc : check_dir(dir, may_create, why, why_size);
}
