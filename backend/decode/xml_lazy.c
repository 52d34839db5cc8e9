/* SPDX-License-Identifier: MIT */
/* xml_lazy.c: owns the loading of expat at its first use (dlopen): only a trace with an
   EventSource manifest (ManifestData events) needs it. expat, a library of its own without
   others, loads in a tenth of a millisecond; libxml2, which read the manifests before, took 1.5
   to 3 ms of every such replay to load, with ICU's 30 MB of data, libstdc++ and liblzma. */
#include "xml_lazy.h"
#include "util/dl_lazy.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#ifndef XML_LAZY_SONAME
#define XML_LAZY_SONAME "libexpat.so.1"
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
                         "undecoded (on Debian: apt-get install libexpat1)",
                         XML_LAZY_SONAME, e ? e : "not found");
                return;
        }
        LOAD(parser_create, "XML_ParserCreate");
        LOAD(parser_free, "XML_ParserFree");
        LOAD(set_user_data, "XML_SetUserData");
        LOAD(set_element_handler, "XML_SetElementHandler");
        LOAD(parse, "XML_Parse");
        LOAD(stop_parser, "XML_StopParser");
        LOAD(get_error_code, "XML_GetErrorCode");
        LOAD(error_string, "XML_ErrorString");
        LOAD(current_line, "XML_GetCurrentLineNumber");
        LOAD(current_column, "XML_GetCurrentColumnNumber");
        loaded = &api; /* never unloaded */
}

const struct xml_lazy *xml_lazy(char *why, size_t why_size)
{
        pthread_once(&once, load);
        if (!loaded && why && why_size)
                snprintf(why, why_size, "%s", load_why);
        return loaded;
}
