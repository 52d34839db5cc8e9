/* SPDX-License-Identifier: MIT */
/* curl_lazy.c: owns the loading of libcurl at its first use (dlopen): only a symbol path with a
   server (srv*...*URL) needs it, and linking it made every etwtop, a --dump or a -b of a small
   file too, load it and the thirty libraries it needs (TLS, Kerberos, LDAP, IDN...) at start:
   about half of the start's time in the dynamic loader. */
#include "curl_lazy.h"
#include "util/dl_lazy.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#ifndef CURL_LAZY_SONAME
#define CURL_LAZY_SONAME "libcurl.so.4"
#endif

static pthread_once_t once = PTHREAD_ONCE_INIT;
static struct curl_lazy api;
static const struct curl_lazy *loaded;
static char load_why[256];

/* dlsym's object pointer as a function pointer (POSIX guarantees the conversion). */
#define LOAD(field, name)                                                                          \
        do {                                                                                       \
                void *f = dlsym(h, name);                                                          \
                if (!f) {                                                                          \
                        snprintf(load_why, sizeof(load_why), "%s has no %s", CURL_LAZY_SONAME,     \
                                 name);                                                            \
                        return;                                                                    \
                }                                                                                  \
                *(void **)&api.field = f;                                                          \
        } while (0)

static void load(void)
{
        void *h = dl_open_lazy(CURL_LAZY_SONAME);
        if (!h) {
                const char *e = dlerror();
                snprintf(load_why, sizeof(load_why),
                         "%s could not be loaded (%s): symbol servers need libcurl (on Debian: "
                         "apt-get install libcurl4)",
                         CURL_LAZY_SONAME, e ? e : "not found");
                return;
        }
        LOAD(global_init, "curl_global_init");
        LOAD(global_cleanup, "curl_global_cleanup");
        LOAD(easy_init, "curl_easy_init");
        LOAD(easy_setopt, "curl_easy_setopt");
        LOAD(easy_perform, "curl_easy_perform");
        LOAD(easy_getinfo, "curl_easy_getinfo");
        LOAD(easy_cleanup, "curl_easy_cleanup");
        LOAD(easy_strerror, "curl_easy_strerror");
        LOAD(easy_escape, "curl_easy_escape");
        LOAD(free, "curl_free");
        loaded = &api; /* never unloaded: libcurl's own threads and handlers may outlive a path */
}

const struct curl_lazy *curl_lazy(char *why, size_t why_size)
{
        pthread_once(&once, load);
        if (!loaded && why && why_size)
                snprintf(why, why_size, "%s", load_why);
        return loaded;
}
