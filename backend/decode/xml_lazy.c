/* SPDX-License-Identifier: MIT */
/* xml_lazy.c: owns the loading of libxml2 at its first use (dlopen): only a trace with an
   EventSource manifest (ManifestData events) needs it, and linking it made every etwtop start
   load it and what it needs (ICU's 30 MB of data, libstdc++, liblzma). */
#include "xml_lazy.h"
#include "util/dl_lazy.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#ifndef XML_LAZY_SONAME
#define XML_LAZY_SONAME "libxml2.so.2"
#endif

static pthread_once_t once = PTHREAD_ONCE_INIT;
static struct xml_lazy api;
static const struct xml_lazy *loaded;
static char load_why[320];

/* dlsym's object pointer as a function pointer (POSIX guarantees the conversion). */
#define LOAD(field, name)                                                                          \
        do {                                                                                       \
                void *f = dlsym(h, name);                                                          \
                if (!f) {                                                                          \
                        snprintf(load_why, sizeof(load_why), "%s has no %s", XML_LAZY_SONAME,      \
                                 name);                                                            \
                        return;                                                                    \
                }                                                                                  \
                *(void **)&api.field = f;                                                          \
        } while (0)

static void load(void)
{
        void *h = dl_open_lazy(XML_LAZY_SONAME);
        if (!h) {
                const char *e = dlerror();
                snprintf(load_why, sizeof(load_why),
                         "%s could not be loaded (%s): the EventSource manifests' events are left "
                         "undecoded (on Debian: apt-get install libxml2)",
                         XML_LAZY_SONAME, e ? e : "not found");
                return;
        }
        int (*mem_get)(xmlFreeFunc *, xmlMallocFunc *, xmlReallocFunc *, xmlStrdupFunc *);
        LOAD(read_memory, "xmlReadMemory");
        LOAD(get_last_error, "xmlGetLastError");
        LOAD(doc_get_root_element, "xmlDocGetRootElement");
        LOAD(free_doc, "xmlFreeDoc");
        LOAD(get_prop, "xmlGetProp");
        *(void **)&mem_get = dlsym(h, "xmlMemGet");
        /* xmlFree is a variable, or a macro of a function (threads), by the version: xmlMemGet
           reads it in every version */
        xmlFreeFunc free_fn = NULL;
        if (!mem_get || mem_get(&free_fn, NULL, NULL, NULL) != 0 || !free_fn) {
                snprintf(load_why, sizeof(load_why), "%s has no xmlMemGet", XML_LAZY_SONAME);
                return;
        }
        api.free = free_fn;
        loaded = &api; /* never unloaded */
}

const struct xml_lazy *xml_lazy(char *why, size_t why_size)
{
        pthread_once(&once, load);
        if (!loaded && why && why_size)
                snprintf(why, why_size, "%s", load_why);
        return loaded;
}
