/* SPDX-License-Identifier: MIT */
/* xml_lazy.h: expat's functions the manifest reader uses (xml_tree.c), loaded at their first
   use. */
#ifndef ETWTOP_XML_LAZY_H
#define ETWTOP_XML_LAZY_H

#include <expat.h>
#include <stddef.h>

struct xml_lazy {
        XML_Parser (*parser_create)(const XML_Char *encoding);
        void (*parser_free)(XML_Parser parser);
        void (*set_user_data)(XML_Parser parser, void *user_data);
        void (*set_element_handler)(XML_Parser parser, XML_StartElementHandler start,
                                    XML_EndElementHandler end);
        enum XML_Status (*parse)(XML_Parser parser, const char *s, int len, int is_final);
        enum XML_Status (*stop_parser)(XML_Parser parser, XML_Bool resumable);
        enum XML_Error (*get_error_code)(XML_Parser parser);
        const XML_LChar *(*error_string)(enum XML_Error code);
        XML_Size (*current_line)(XML_Parser parser);
        XML_Size (*current_column)(XML_Parser parser);
};

/* expat (XML_LAZY_SONAME), loaded once by the first caller of any thread; NULL, with why (when
   given) saying what is missing, where it cannot be loaded. */
const struct xml_lazy *xml_lazy(char *why, size_t why_size);

#endif
