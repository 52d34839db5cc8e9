/* SPDX-License-Identifier: MIT */
/* xml_tree.h: an XML document's elements and attributes as a tree (expat's parse, through
   xml_lazy.h), what the manifest reader walks. Texts, comments and processing instructions are
   not kept: a manifest says everything in its elements' attributes. */
#ifndef ETWTOP_XML_TREE_H
#define ETWTOP_XML_TREE_H

#include <stddef.h>

struct xml_node {
        const char *name; /* the element's local name: what follows a prefix's ':' */
        /* name, value, name, value, ..., NULL: the names as written (a prefix kept), the values
           with their entities and character references replaced; no xmlns declarations */
        const char **attrs;
        struct xml_node *children;      /* the first child element, NULL if none */
        struct xml_node *next;          /* the next sibling element, NULL if none */
        struct xml_node *parent, *last; /* the tree's making */
};

struct xml_tree;

/* Reads the document xml[0..size): 0 and *tree (free with xml_tree_free), or -EBADMSG with err
   saying why (not XML, and where; a tree over the size allowed), or -ENOSYS where expat cannot
   be loaded (err says what to install). No DTD or entity outside the text is read. */
int xml_tree_parse(const char *xml, size_t size, struct xml_tree **tree, char *err,
                   size_t err_size);
const struct xml_node *xml_tree_root(const struct xml_tree *tree);
void xml_tree_free(struct xml_tree *tree);

/* The value of n's attribute name: the first without a prefix of that name, else the first
   with a prefix whose local name it is (as libxml2's xmlGetProp found it); NULL if none. */
const char *xml_attr(const struct xml_node *n, const char *name);

#endif
