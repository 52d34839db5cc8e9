/* SPDX-License-Identifier: MIT */
/* xml_tree.c: owns the making of an XML document's element tree from expat's parse (xml_tree.h).
   The nodes, the attribute lists and their strings live in one arena of large blocks, freed at
   once: a manifest's tree is made, walked once and dropped. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"
#include "xml_lazy.h"
#include "xml_tree.h"

#define BLOCK_SIZE (64u << 10)

struct block {
        struct block *prev;
        size_t used, size;
        _Alignas(max_align_t) unsigned char data[];
};

struct xml_tree {
        struct block *blocks; /* the newest first */
        size_t nr_bytes, max_bytes;
        struct xml_node *root, *cur;
        const struct xml_lazy *x;
        XML_Parser parser;
        bool is_too_big;
};

/* n bytes of the arena, aligned for pointers; NULL (the parse stopped) past the tree's limit */
static void *arena_alloc(struct xml_tree *t, size_t n)
{
        n = (n + sizeof(void *) - 1) & ~(sizeof(void *) - 1);
        if (t->nr_bytes + n > t->max_bytes) {
                t->is_too_big = true;
                t->x->stop_parser(t->parser, XML_FALSE);
                return NULL;
        }
        struct block *b = t->blocks;
        if (!b || b->size - b->used < n) {
                size_t size = n > BLOCK_SIZE ? n : BLOCK_SIZE;
                b = xmalloc(sizeof(*b) + size);
                b->prev = t->blocks;
                b->used = 0;
                b->size = size;
                t->blocks = b;
        }
        void *p = b->data + b->used;
        b->used += n;
        t->nr_bytes += n;
        return p;
}

static const char *arena_str(struct xml_tree *t, const char *s)
{
        size_t n = strlen(s) + 1;
        char *p = arena_alloc(t, n);
        if (p)
                memcpy(p, s, n);
        return p;
}

/* a namespace declaration (xmlns, xmlns:p): not an attribute of the element */
static bool is_xmlns(const char *name)
{
        return strncmp(name, "xmlns", 5) == 0 && (name[5] == 0 || name[5] == ':');
}

static void XMLCALL on_start(void *user, const XML_Char *name, const XML_Char **atts)
{
        struct xml_tree *t = user;
        if (t->is_too_big)
                return;

        size_t nr = 0;
        for (size_t i = 0; atts[i]; i += 2)
                nr += !is_xmlns(atts[i]);
        struct xml_node *n = arena_alloc(t, sizeof(*n));
        const char **attrs = arena_alloc(t, (2 * nr + 1) * sizeof(*attrs));
        const char *colon = strrchr(name, ':');
        const char *local = arena_str(t, colon ? colon + 1 : name);
        if (!n || !attrs || !local)
                return;
        size_t k = 0;
        for (size_t i = 0; atts[i]; i += 2) {
                if (is_xmlns(atts[i]))
                        continue;
                attrs[k] = arena_str(t, atts[i]);
                attrs[k + 1] = arena_str(t, atts[i + 1]);
                if (!attrs[k] || !attrs[k + 1])
                        return;
                k += 2;
        }
        attrs[k] = NULL;
        *n = (struct xml_node){.name = local, .attrs = attrs, .parent = t->cur};
        if (t->cur) {
                if (t->cur->last)
                        t->cur->last->next = n;
                else
                        t->cur->children = n;
                t->cur->last = n;
        } else {
                t->root = n; /* expat allows one document element */
        }
        t->cur = n;
}

static void XMLCALL on_end(void *user, const XML_Char *name)
{
        struct xml_tree *t = user;
        (void)name;
        if (!t->is_too_big && t->cur)
                t->cur = t->cur->parent;
}

void xml_tree_free(struct xml_tree *t)
{
        if (!t)
                return;
        for (struct block *b = t->blocks, *prev; b; b = prev) {
                prev = b->prev;
                free(b);
        }
        free(t);
}

int xml_tree_parse(const char *xml, size_t size, struct xml_tree **tree, char *err, size_t err_size)
{
        *tree = NULL;
        if (size > (size_t)INT32_MAX / 16) {
                snprintf(err, err_size, "%zu bytes of XML: too many to read", size);
                return -EBADMSG;
        }
        char why[320];
        const struct xml_lazy *x = xml_lazy(why, sizeof(why));
        if (!x) {
                snprintf(err, err_size, "%s", why);
                return -ENOSYS;
        }
        XML_Parser parser = x->parser_create(NULL);
        if (!parser) {
                snprintf(err, err_size, "expat could not make a parser (out of memory)");
                return -ENOMEM;
        }

        struct xml_tree *t = xcalloc(1, sizeof(*t));
        /* the tree is at most a few times its text: a limit for entities that grow it (expat's
           own stops the exponential ones) */
        t->max_bytes = 16 * size + (1u << 20);
        t->x = x;
        t->parser = parser;
        x->set_user_data(parser, t);
        x->set_element_handler(parser, on_start, on_end);

        int rc = 0;
        if (x->parse(parser, xml, (int)size, 1) != XML_STATUS_OK) {
                if (t->is_too_big)
                        snprintf(err, err_size, "XML of %zu bytes makes a tree of over %zu bytes",
                                 size, t->max_bytes);
                else
                        snprintf(err, err_size, "%s at line %lu, column %lu",
                                 x->error_string(x->get_error_code(parser)),
                                 (unsigned long)x->current_line(parser),
                                 (unsigned long)x->current_column(parser));
                rc = -EBADMSG;
        }
        x->parser_free(parser);
        t->parser = NULL;
        if (rc) {
                xml_tree_free(t);
                return rc;
        }
        *tree = t;
        return 0;
}

const struct xml_node *xml_tree_root(const struct xml_tree *t)
{
        return t ? t->root : NULL;
}

const char *xml_attr(const struct xml_node *n, const char *name)
{
        const char *prefixed = NULL;
        for (const char **a = n ? n->attrs : NULL; a && a[0]; a += 2) {
                const char *colon = strchr(a[0], ':');
                if (!colon && strcmp(a[0], name) == 0)
                        return a[1];
                if (colon && !prefixed && strcmp(colon + 1, name) == 0)
                        prefixed = a[1];
        }
        return prefixed;
}
