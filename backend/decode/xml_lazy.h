/* SPDX-License-Identifier: MIT */
/* xml_lazy.h: libxml2's functions the manifest reader uses, loaded at their first use. */
#ifndef ETWTOP_XML_LAZY_H
#define ETWTOP_XML_LAZY_H

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <stddef.h>

struct xml_lazy {
        xmlDoc *(*read_memory)(const char *buf, int size, const char *url, const char *encoding,
                               int options);
        const xmlError *(*get_last_error)(void);
        xmlNode *(*doc_get_root_element)(const xmlDoc *doc);
        void (*free_doc)(xmlDoc *doc);
        xmlChar *(*get_prop)(const xmlNode *node, const xmlChar *name);
        void (*free)(void *p); /* xmlFree: what the functions above return is freed by it */
};

/* libxml2 (XML_LAZY_SONAME), loaded once by the first caller of any thread; NULL, with why
   (when given) saying what is missing, where it cannot be loaded. */
const struct xml_lazy *xml_lazy(char *why, size_t why_size);

#endif
