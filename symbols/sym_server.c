/* SPDX-License-Identifier: MIT */
/* sym_server.c: owns the symbol path (_NT_SYMBOL_PATH's syntax) and finding files along it:
   directories, symbol stores, and symbol servers over HTTP(S) through libcurl, with the atomic
   writes into the downstream store and the progress lines. */
#include "sym_server.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "curl_lazy.h"
#include "util/xalloc.h"
#include "util/clock.h"

#define MAX_DOWNLOAD_BYTES      (4ull << 30) /* a PDB of 4 GiB is among the largest */
#define CONNECT_TIMEOUT_SECONDS 10L
#define STALL_SECONDS           60L /* a transfer under 1 byte/s for this long is given up */
#define USER_AGENT              "Microsoft-Symbol-Server/10.0.0.0 (etwtop)"

enum elem_kind { EL_DIR, EL_CACHE, EL_SRV };

struct store {
        char *where; /* owned: a directory or a URL (no trailing '/') */
        bool is_url;
        bool is_unreachable; /* a URL that did not answer: not asked again */
        char why_unreachable[160];
};

struct elem {
        enum elem_kind kind;
        char *dir;            /* owned: EL_DIR's directory, EL_CACHE's (NULL: the default) */
        struct store *stores; /* owned: EL_SRV's, in order */
        uint32_t nr_stores;
};

struct sym_path {
        struct elem *elems; /* owned */
        uint32_t nr_elems, cap_elems;
        char **dirs; /* owned: the EL_DIR directories, for sym_path_dirs */
        uint32_t nr_dirs;
        char *default_cache; /* owned, NULL without HOME */
        bool has_curl;       /* libcurl loaded (curl_lazy) and curl_global_init called */
        char why_no_curl[256];
        _Atomic bool is_cancelled;
        pthread_mutex_t lock; /* guards the progress line */
        char progress[320];
        uint64_t progress_serial, progress_seen;
};

/* ---- parsing ---- */

static bool is_url(const char *s)
{
        return strncasecmp(s, "http://", 7) == 0 || strncasecmp(s, "https://", 8) == 0;
}

static char *trimmed_copy(const char *s, size_t n)
{
        while (n && (*s == ' ' || *s == '\t')) {
                s++;
                n--;
        }
        while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
                n--;
        char *c = xmalloc(n + 1);
        memcpy(c, s, n);
        c[n] = 0;
        return c;
}

static struct elem *elem_add(struct sym_path *sp, enum elem_kind kind)
{
        if (sp->nr_elems == sp->cap_elems) {
                sp->cap_elems = sp->cap_elems ? sp->cap_elems * 2 : 8;
                sp->elems = xrealloc(sp->elems, sp->cap_elems * sizeof(*sp->elems));
        }
        struct elem *e = &sp->elems[sp->nr_elems++];
        memset(e, 0, sizeof(*e));
        e->kind = kind;
        return e;
}

/* srv*A*B*...: the stores after the prefix, empty ones skipped (srv**URL: the default store) */
static void parse_srv(struct sym_path *sp, const char *rest)
{
        struct elem *e = elem_add(sp, EL_SRV);
        while (*rest) {
                size_t n = strcspn(rest, "*");
                char *w = trimmed_copy(rest, n);
                rest += n + (rest[n] == '*');
                if (!*w) {
                        free(w);
                        continue;
                }
                size_t len = strlen(w);
                while (len > 1 && (w[len - 1] == '/' || w[len - 1] == '\\'))
                        w[--len] = 0;
                e->stores = xrealloc(e->stores, (e->nr_stores + 1) * sizeof(*e->stores));
                e->stores[e->nr_stores++] = (struct store){w, is_url(w), false, ""};
        }
        if (!e->nr_stores)
                sp->nr_elems--;
}

static void parse_element(struct sym_path *sp, const char *s, size_t n)
{
        char *w = trimmed_copy(s, n);
        if (!*w) {
                free(w);
                return;
        }
        if (strncasecmp(w, "srv*", 4) == 0) {
                parse_srv(sp, w + 4);
        } else if (strncasecmp(w, "symsrv*", 7) == 0) {
                const char *rest = strchr(w + 7, '*'); /* after the DLL's name */
                if (rest)
                        parse_srv(sp, rest + 1);
        } else if (strncasecmp(w, "cache*", 6) == 0) {
                struct elem *e = elem_add(sp, EL_CACHE);
                e->dir = w[6] ? xstrdup(w + 6) : NULL;
        } else if (is_url(w)) {
                parse_srv(sp, w); /* a bare URL: a server with the default store */
        } else {
                struct elem *e = elem_add(sp, EL_DIR);
                e->dir = xstrdup(w);
                sp->dirs = xrealloc(sp->dirs, (sp->nr_dirs + 1) * sizeof(*sp->dirs));
                sp->dirs[sp->nr_dirs++] = e->dir;
        }
        free(w);
}

static void parse_list(struct sym_path *sp, const char *s)
{
        const char *seps = strpbrk(s, ";*") ? ";" : ":";
        while (*s) {
                size_t n = strcspn(s, seps);
                parse_element(sp, s, n);
                s += n + (s[n] != 0);
        }
}

struct sym_path *sym_path_new(const char *const *entries, uint32_t nr, const char *nt_symbol_path)
{
        struct sym_path *sp = xcalloc(1, sizeof(*sp));
        pthread_mutex_init(&sp->lock, NULL);
        for (uint32_t i = 0; i < nr; i++)
                if (entries[i])
                        parse_list(sp, entries[i]);
        if (nt_symbol_path)
                parse_list(sp, nt_symbol_path);
        const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
        char buf[4096];
        if (xdg && *xdg == '/')
                snprintf(buf, sizeof(buf), "%s/etwtop/symbols", xdg);
        else if (home && *home)
                snprintf(buf, sizeof(buf), "%s/.cache/etwtop/symbols", home);
        else
                buf[0] = 0;
        sp->default_cache = buf[0] ? xstrdup(buf) : NULL;
        for (uint32_t i = 0; i < sp->nr_elems && !sp->has_curl; i++)
                for (uint32_t j = 0; j < sp->elems[i].nr_stores && !sp->has_curl; j++)
                        if (sp->elems[i].stores[j].is_url) {
                                const struct curl_lazy *cl =
                                        curl_lazy(sp->why_no_curl, sizeof(sp->why_no_curl));
                                sp->has_curl =
                                        cl && cl->global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK;
                                if (cl && !sp->has_curl)
                                        snprintf(sp->why_no_curl, sizeof(sp->why_no_curl),
                                                 "curl_global_init failed");
                        }
        return sp;
}

void sym_path_free(struct sym_path *sp)
{
        if (!sp)
                return;
        for (uint32_t i = 0; i < sp->nr_elems; i++) {
                free(sp->elems[i].dir);
                for (uint32_t j = 0; j < sp->elems[i].nr_stores; j++)
                        free(sp->elems[i].stores[j].where);
                free(sp->elems[i].stores);
        }
        free(sp->elems);
        free(sp->dirs);
        free(sp->default_cache);
        if (sp->has_curl)
                curl_lazy(NULL, 0)->global_cleanup();
        pthread_mutex_destroy(&sp->lock);
        free(sp);
}

const char *const *sym_path_dirs(const struct sym_path *sp, uint32_t *nr)
{
        *nr = sp ? sp->nr_dirs : 0;
        return sp ? (const char *const *)sp->dirs : NULL;
}

bool sym_path_is_empty(const struct sym_path *sp)
{
        return !sp || !sp->nr_elems;
}

/* ---- progress ---- */

static void progress_set(struct sym_path *sp, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
static void progress_set(struct sym_path *sp, const char *fmt, ...)
{
        va_list ap;
        pthread_mutex_lock(&sp->lock);
        va_start(ap, fmt);
        vsnprintf(sp->progress, sizeof(sp->progress), fmt, ap);
        va_end(ap);
        sp->progress_serial++;
        pthread_mutex_unlock(&sp->lock);
}

bool sym_path_progress(struct sym_path *sp, char *buf, size_t size)
{
        if (!sp)
                return false;
        pthread_mutex_lock(&sp->lock);
        bool is_new = sp->progress_serial != sp->progress_seen;
        if (is_new) {
                snprintf(buf, size, "%s", sp->progress);
                sp->progress_seen = sp->progress_serial;
        }
        pthread_mutex_unlock(&sp->lock);
        return is_new;
}

void sym_path_cancel(struct sym_path *sp)
{
        if (sp)
                atomic_store(&sp->is_cancelled, true);
}

/* ---- looking ---- */

static void note_add(char *note, size_t size, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
static void note_add(char *note, size_t size, const char *fmt, ...)
{
        size_t n = strlen(note);
        if (n + 1 >= size)
                return;
        if (n)
                n += (size_t)snprintf(note + n, size - n, "; ");
        if (n + 1 >= size)
                return;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(note + n, size - n, fmt, ap);
        va_end(ap);
}

/* snprintf for messages that may be cut (paths of any length) */
static void say(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *buf, size_t size, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(buf, size, fmt, ap);
        va_end(ap);
}

/* dir/name, or the entry of dir whose name matches ignoring case (Windows names do not care),
   of the wanted kind. */
static bool find_ci(const char *dir, const char *name, bool is_dir, char *out, size_t size)
{
        struct stat st;
        snprintf(out, size, "%s/%s", dir, name);
        if (stat(out, &st) == 0 && (is_dir ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode)))
                return true;
        DIR *d = opendir(dir);
        struct dirent *e;
        bool is_found = false;
        while (d && !is_found && (e = readdir(d))) {
                if (strcasecmp(e->d_name, name) != 0)
                        continue;
                snprintf(out, size, "%s/%s", dir, e->d_name);
                is_found =
                        stat(out, &st) == 0 && (is_dir ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode));
        }
        if (d)
                closedir(d);
        return is_found;
}

/* store/name/key/name */
static bool find_in_store(const char *store, const char *name, const char *key, char *out,
                          size_t size)
{
        char a[4096], b[4096];
        return key && find_ci(store, name, true, a, sizeof(a)) &&
               find_ci(a, key, true, b, sizeof(b)) && find_ci(b, name, false, out, size);
}

struct look {
        struct sym_path *sp;
        const char *name, *key;
        sym_path_check_fn check;
        void *ctx;
        char *found;
        size_t found_size;
        char *note;
        size_t note_size;
};

/* Offers a file to the check: true when taken. */
static bool offer(struct look *lk, const char *file)
{
        char why[256] = "";
        if (lk->check(lk->ctx, file, why, sizeof(why)) == 0) {
                snprintf(lk->found, lk->found_size, "%s", file);
                return true;
        }
        note_add(lk->note, lk->note_size, "%s: %s", file, why[0] ? why : "refused");
        return false;
}

static bool look_dir(struct look *lk, const char *dir)
{
        char file[4096];
        bool is_any = false;
        if (find_ci(dir, lk->name, false, file, sizeof(file))) {
                is_any = true;
                if (offer(lk, file))
                        return true;
        }
        if (find_in_store(dir, lk->name, lk->key, file, sizeof(file))) {
                is_any = true;
                if (offer(lk, file))
                        return true;
        }
        if (!is_any)
                note_add(lk->note, lk->note_size, "%s: none", dir);
        return false;
}

static bool look_store(struct look *lk, const char *store, bool is_quiet)
{
        char file[4096];
        if (find_in_store(store, lk->name, lk->key, file, sizeof(file)))
                return offer(lk, file);
        if (!is_quiet && lk->key)
                note_add(lk->note, lk->note_size, "%s: none", store);
        return false;
}

/* ---- downloading ---- */

struct transfer {
        struct sym_path *sp;
        const char *url;
        int fd;
        uint64_t nr_bytes;
        int write_errno;
        uint64_t last_report_ns; /* CLOCK_MONOTONIC */
};

static size_t transfer_write(char *data, size_t size, size_t n, void *arg)
{
        struct transfer *t = arg;
        size_t len = size * n, done = 0;
        while (done < len) {
                ssize_t w = write(t->fd, data + done, len - done);
                if (w < 0 && errno == EINTR)
                        continue;
                if (w <= 0) {
                        t->write_errno = w < 0 ? errno : EIO;
                        return 0; /* curl ends the transfer: CURLE_WRITE_ERROR */
                }
                done += (size_t)w;
        }
        t->nr_bytes += len;
        return len;
}

static int transfer_progress(void *arg, curl_off_t total, curl_off_t now, curl_off_t up_total,
                             curl_off_t up_now)
{
        (void)up_total;
        (void)up_now;
        struct transfer *t = arg;
        if (atomic_load(&t->sp->is_cancelled))
                return 1; /* CURLE_ABORTED_BY_CALLBACK */
        uint64_t ts = now_ns();
        if (ts / 1000000000u > t->last_report_ns / 1000000000u && now > 0) {
                t->last_report_ns = ts;
                if (total > 0)
                        progress_set(t->sp, "fetching %s: %.1f of %.1f MB", t->url,
                                     (double)now / 1e6, (double)total / 1e6);
                else
                        progress_set(t->sp, "fetching %s: %.1f MB", t->url, (double)now / 1e6);
        }
        return 0;
}

static int mkdir_p(char *path)
{
        for (char *p = path + 1; *p; p++) {
                if (*p != '/')
                        continue;
                *p = 0;
                int rc = mkdir(path, 0755);
                *p = '/';
                if (rc < 0 && errno != EEXIST)
                        return -errno;
        }
        if (mkdir(path, 0755) < 0 && errno != EEXIST)
                return -errno;
        return 0;
}

/* GET url into a temporary file beside dest; 0 with the file at tmp (the caller renames or
   unlinks it), or -errno with why. Connection failures mark the store unreachable. */
static int download(struct sym_path *sp, struct store *st, const char *url, const char *dest,
                    char *tmp, size_t tmp_size, char *why, size_t why_size)
{
        char dir[4096];
        snprintf(dir, sizeof(dir), "%s", dest);
        char *slash = strrchr(dir, '/');
        if (slash)
                *slash = 0;
        int rc = mkdir_p(dir);
        if (rc < 0) {
                say(why, why_size, "cannot create %s: %s", dir, strerror(-rc));
                return rc;
        }
        say(tmp, tmp_size, "%s/.download-XXXXXX", dir);
        int fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0) {
                rc = -errno;
                say(why, why_size, "cannot write in %s: %s", dir, strerror(errno));
                return rc;
        }
        fchmod(fd, 0644);
        const struct curl_lazy *cl = curl_lazy(NULL, 0); /* loaded: has_curl */
        CURL *c = cl->easy_init();
        if (!c) {
                close(fd);
                unlink(tmp);
                snprintf(why, why_size, "libcurl could not start a transfer");
                return -ENOMEM;
        }
        char curl_err[CURL_ERROR_SIZE] = "";
        struct transfer t = {sp, url, fd, 0, 0, 0};
        t.last_report_ns = now_ns();
        progress_set(sp, "fetching %s", url);
        cl->easy_setopt(c, CURLOPT_URL, url);
        cl->easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
        cl->easy_setopt(c, CURLOPT_MAXREDIRS, 10L);
        cl->easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
        cl->easy_setopt(c, CURLOPT_USERAGENT, USER_AGENT);
        cl->easy_setopt(c, CURLOPT_CONNECTTIMEOUT, CONNECT_TIMEOUT_SECONDS);
        cl->easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
        cl->easy_setopt(c, CURLOPT_LOW_SPEED_TIME, STALL_SECONDS);
        cl->easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)MAX_DOWNLOAD_BYTES);
        cl->easy_setopt(c, CURLOPT_ERRORBUFFER, curl_err);
        cl->easy_setopt(c, CURLOPT_WRITEFUNCTION, transfer_write);
        cl->easy_setopt(c, CURLOPT_WRITEDATA, &t);
        cl->easy_setopt(c, CURLOPT_XFERINFOFUNCTION, transfer_progress);
        cl->easy_setopt(c, CURLOPT_XFERINFODATA, &t);
        cl->easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
        CURLcode res = cl->easy_perform(c);
        long status = 0;
        cl->easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
        cl->easy_cleanup(c);
        if (res == CURLE_OK && status == 200 && fsync(fd) < 0)
                t.write_errno = errno;
        if (close(fd) < 0 && !t.write_errno)
                t.write_errno = errno;
        rc = 0;
        if (res == CURLE_WRITE_ERROR || (res == CURLE_OK && t.write_errno)) {
                rc = -(t.write_errno ? t.write_errno : EIO);
                say(why, why_size, "writing %s: %s", tmp, strerror(-rc));
        } else if (res == CURLE_ABORTED_BY_CALLBACK) {
                rc = -ECANCELED;
                snprintf(why, why_size, "cancelled");
        } else if (res != CURLE_OK) {
                rc = -EHOSTUNREACH;
                snprintf(why, why_size, "%s%s", status ? "" : "no answer: ",
                         curl_err[0] ? curl_err : cl->easy_strerror(res));
                if (status == 0) {
                        st->is_unreachable = true;
                        snprintf(st->why_unreachable, sizeof(st->why_unreachable), "%s", why);
                }
        } else if (status != 200) {
                rc = -ENOENT;
                snprintf(why, why_size, "HTTP %ld", status);
        }
        if (rc < 0) {
                unlink(tmp);
                progress_set(sp, "%s: %s", url, why);
        } else {
                progress_set(sp, "fetched %s (%" PRIu64 " bytes)", url, t.nr_bytes);
        }
        return rc;
}

/* Fetches name/key/name from the server st into the store dest, checks it and renames it into
   place. */
static bool look_server(struct look *lk, struct store *st, const char *dest)
{
        if (!lk->key)
                return false; /* a server knows files by their key only */
        if (st->is_unreachable) {
                note_add(lk->note, lk->note_size, "%s: not asked again (%s)", st->where,
                         st->why_unreachable);
                return false;
        }
        if (!lk->sp->has_curl) {
                note_add(lk->note, lk->note_size, "%s: libcurl did not start: %s", st->where,
                         lk->sp->why_no_curl[0] ? lk->sp->why_no_curl : "unknown");
                return false;
        }
        if (!dest) {
                note_add(lk->note, lk->note_size,
                         "%s: no store to download into (set HOME or give srv*DIR*URL)", st->where);
                return false;
        }
        const struct curl_lazy *cl = curl_lazy(NULL, 0); /* loaded: has_curl */
        CURL *c = cl->easy_init();
        char *esc = c ? cl->easy_escape(c, lk->name, 0) : NULL;
        char url[4096], file[4096], tmp[4096], why[256] = "";
        snprintf(url, sizeof(url), "%s/%s/%s/%s", st->where, esc ? esc : lk->name, lk->key,
                 esc ? esc : lk->name);
        cl->free(esc);
        if (c)
                cl->easy_cleanup(c);
        snprintf(file, sizeof(file), "%s/%s/%s/%s", dest, lk->name, lk->key, lk->name);
        if (download(lk->sp, st, url, file, tmp, sizeof(tmp), why, sizeof(why)) < 0) {
                note_add(lk->note, lk->note_size, "%s: %s", url, why);
                return false;
        }
        char check_why[256] = "";
        if (lk->check(lk->ctx, tmp, check_why, sizeof(check_why)) != 0) {
                unlink(tmp);
                note_add(lk->note, lk->note_size, "%s: served a file refused: %s", url,
                         check_why[0] ? check_why : "refused");
                return false;
        }
        if (rename(tmp, file) < 0) {
                /* the file was checked and is open: it serves this time, from where it is */
                note_add(lk->note, lk->note_size, "%s: cannot rename %s into place: %s", url, tmp,
                         strerror(errno));
                snprintf(lk->found, lk->found_size, "%s", tmp);
                unlink(tmp);
                return true;
        }
        snprintf(lk->found, lk->found_size, "%s", file);
        return true;
}

static bool look_srv(struct look *lk, struct elem *e, const char *cache)
{
        const char *downstream = NULL;
        bool has_looked_default = false;
        for (uint32_t i = 0; i < e->nr_stores; i++) {
                struct store *st = &e->stores[i];
                if (!st->is_url) {
                        if (!downstream)
                                downstream = st->where;
                        if (look_store(lk, st->where, false))
                                return true;
                        continue;
                }
                const char *dest = downstream ? downstream : cache ? cache : lk->sp->default_cache;
                if (dest == lk->sp->default_cache && dest && !has_looked_default) {
                        has_looked_default = true;
                        if (look_store(lk, dest, true))
                                return true;
                }
                if (look_server(lk, st, dest))
                        return true;
        }
        return false;
}

int sym_path_find(struct sym_path *sp, const char *name, const char *key, sym_path_check_fn check,
                  void *ctx, char *found, size_t found_size, char *note, size_t note_size)
{
        note[0] = 0;
        found[0] = 0;
        if (!*name || strchr(name, '/') || strcmp(name, ".") == 0 || strcmp(name, "..") == 0) {
                note_add(note, note_size, "\"%s\" is not a file name", name);
                return -EINVAL;
        }
        struct look lk = {sp, name, key, check, ctx, found, found_size, note, note_size};
        const char *cache = NULL;
        for (uint32_t i = 0; sp && i < sp->nr_elems; i++) {
                struct elem *e = &sp->elems[i];
                bool is_found = false;
                switch (e->kind) {
                case EL_DIR: is_found = look_dir(&lk, e->dir); break;
                case EL_CACHE:
                        cache = e->dir ? e->dir : sp->default_cache;
                        is_found = cache && look_store(&lk, cache, true);
                        break;
                case EL_SRV: is_found = look_srv(&lk, e, cache); break;
                }
                if (is_found)
                        return 0;
                if (atomic_load(&sp->is_cancelled))
                        break;
        }
        return -ENOENT;
}
