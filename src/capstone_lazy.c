/* SPDX-License-Identifier: MIT */
/* capstone_lazy.c: owns the loading of capstone at its first use (dlopen): only annotate
   disassembles, and linking it made every etwtop start relocate its 77,000 pointers (most of
   the dynamic loader's work at start). */
#include "capstone_lazy.h"
#include "util/dl_lazy.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#ifndef CAPSTONE_LAZY_SONAME
#define CAPSTONE_LAZY_SONAME "libcapstone.so.4"
#endif
#ifndef CAPSTONE_LAZY_PACKAGE /* Debian's package of that SONAME */
#define CAPSTONE_LAZY_PACKAGE "libcapstone4"
#endif

static pthread_once_t once = PTHREAD_ONCE_INIT;
static struct capstone_lazy api;
static const struct capstone_lazy *loaded;
static char load_why[320];

/* dlsym's object pointer as a function pointer (POSIX guarantees the conversion). */
#define LOAD(field, name)                                                                          \
        do {                                                                                       \
                void *f = dlsym(h, name);                                                          \
                if (!f) {                                                                          \
                        snprintf(load_why, sizeof(load_why), "%s has no %s", CAPSTONE_LAZY_SONAME, \
                                 name);                                                            \
                        return;                                                                    \
                }                                                                                  \
                *(void **)&api.field = f;                                                          \
        } while (0)

static void load(void)
{
        void *h = dl_open_lazy(CAPSTONE_LAZY_SONAME);
        if (!h) {
                const char *e = dlerror();
                snprintf(load_why, sizeof(load_why),
                         "%s could not be loaded (%s): disassembly is unavailable (on Debian: "
                         "apt-get install %s)",
                         CAPSTONE_LAZY_SONAME, e ? e : "not found", CAPSTONE_LAZY_PACKAGE);
                return;
        }
        LOAD(open, "cs_open");
        LOAD(close, "cs_close");
        LOAD(option, "cs_option");
        LOAD(strerror, "cs_strerror");
        LOAD(malloc, "cs_malloc");
        LOAD(free, "cs_free");
        LOAD(disasm_iter, "cs_disasm_iter");
        LOAD(insn_group, "cs_insn_group");
        loaded = &api; /* never unloaded */
}

const struct capstone_lazy *capstone_lazy(char *why, size_t why_size)
{
        pthread_once(&once, load);
        if (!loaded && why && why_size)
                snprintf(why, why_size, "%s", load_why);
        return loaded;
}
