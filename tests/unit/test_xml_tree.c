/* SPDX-License-Identifier: MIT */
/* test_xml_tree.c: cmocka tests of the element tree the manifest reader walks
 * (backend/decode/xml_tree.c, over expat): elements by their local names, attributes as
 * libxml2's xmlGetProp found them (the unprefixed first, entities replaced, no xmlns), what is
 * not XML said with its place, and what a hostile document cannot do: read a file through an
 * external entity, or grow without end through nested entities. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xml_tree.h"

static int parse(const char *xml, struct xml_tree **t, char *err, size_t err_size)
{
        err[0] = 0;
        return xml_tree_parse(xml, strlen(xml), t, err, err_size);
}

static void test_elements_and_attributes(void **state)
{
        (void)state;
        static const char xml[] =
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                "<!-- a comment -->\n"
                "<m:root xmlns:m=\"urn:m\" xmlns=\"urn:d\" xmlns:x=\"urn:x\" a=\"1\">\n"
                "  text <first x:name=\"decoy\" name=\"R&amp;D &#65;&#x42;\"/>\n"
                "  <?pi data?><x:second x:only=\"prefixed\"><third/></x:second>\n"
                "  <first name=\"again\"/>\n"
                "</m:root>";
        struct xml_tree *t;
        char err[256];
        assert_int_equal(parse(xml, &t, err, sizeof(err)), 0);

        const struct xml_node *root = xml_tree_root(t);
        assert_non_null(root);
        assert_string_equal(root->name, "root");
        assert_null(root->next);
        /* the namespace declarations are not attributes */
        assert_string_equal(root->attrs[0], "a");
        assert_string_equal(root->attrs[1], "1");
        assert_null(root->attrs[2]);
        assert_null(xml_attr(root, "xmlns"));
        assert_null(xml_attr(root, "m"));

        const struct xml_node *first = root->children;
        assert_non_null(first);
        assert_string_equal(first->name, "first");
        assert_null(first->children);
        /* the unprefixed one, though the prefixed comes first; entities and references read */
        assert_string_equal(xml_attr(first, "name"), "R&D AB");
        assert_null(xml_attr(first, "x:name"));

        const struct xml_node *second = first->next;
        assert_non_null(second);
        assert_string_equal(second->name, "second");
        /* no unprefixed one: the prefixed one of that local name */
        assert_string_equal(xml_attr(second, "only"), "prefixed");
        assert_null(xml_attr(second, "name"));
        assert_non_null(second->children);
        assert_string_equal(second->children->name, "third");
        assert_null(second->children->next);
        assert_null(second->children->attrs[0]);

        const struct xml_node *again = second->next;
        assert_non_null(again);
        assert_string_equal(xml_attr(again, "name"), "again");
        assert_null(again->next);
        xml_tree_free(t);
}

/* not XML: -EBADMSG, expat's reason with the line and column; nothing to free */
static void test_not_xml(void **state)
{
        (void)state;
        struct xml_tree *t = (struct xml_tree *)1;
        char err[256];

        assert_int_equal(parse("<a>\n  <b></a>", &t, err, sizeof(err)), -EBADMSG);
        assert_null(t);
        print_message("err: %s\n", err);
        assert_non_null(strstr(err, "mismatched tag at line 2, column "));

        assert_int_equal(parse("", &t, err, sizeof(err)), -EBADMSG);
        assert_non_null(strstr(err, "no element found at line 1"));
        assert_int_equal(parse("<a/><b/>", &t, err, sizeof(err)), -EBADMSG);
        assert_non_null(strstr(err, "junk after document element"));
        assert_int_equal(parse("<oops", &t, err, sizeof(err)), -EBADMSG);
        assert_true(err[0] != 0);
}

/* An external entity is never read (the file's text does not reach the tree), and entities
   nested to grow exponentially stop the parse with expat's reason. */
static void test_hostile_entities(void **state)
{
        (void)state;
        char path[] = "/tmp/etwtop-xml-XXXXXX";
        int fd = mkstemp(path);
        assert_true(fd >= 0);
        FILE *f = fdopen(fd, "w");
        assert_non_null(f);
        fputs("SECRET", f);
        fclose(f);

        char xml[512];
        snprintf(xml, sizeof(xml),
                 "<!DOCTYPE a [<!ENTITY ext SYSTEM \"file://%s\">]><a><b v=\"x\">&ext;</b></a>",
                 path);
        struct xml_tree *t;
        char err[256];
        int rc = parse(xml, &t, err, sizeof(err));
        unlink(path);
        if (rc == 0) {
                const struct xml_node *a = xml_tree_root(t);
                assert_string_equal(a->children->name, "b");
                assert_string_equal(xml_attr(a->children, "v"), "x");
                assert_null(a->children->children);
                xml_tree_free(t);
        } else {
                assert_int_equal(rc, -EBADMSG);
                assert_null(strstr(err, "SECRET"));
        }

        static const char lol[] =
                "<!DOCTYPE l [<!ENTITY a \"<x v='aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'/>\">"
                "<!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\">"
                "<!ENTITY c \"&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;\">"
                "<!ENTITY d \"&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;\">"
                "<!ENTITY e \"&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;\">"
                "<!ENTITY f \"&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;\">"
                "<!ENTITY g \"&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;\">"
                "<!ENTITY h \"&g;&g;&g;&g;&g;&g;&g;&g;&g;&g;\">"
                "<!ENTITY i \"&h;&h;&h;&h;&h;&h;&h;&h;&h;&h;\">]><l>&i;</l>";
        assert_int_equal(parse(lol, &t, err, sizeof(err)), -EBADMSG);
        print_message("err: %s\n", err);
        assert_null(t);
        assert_true(err[0] != 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_elements_and_attributes),
                cmocka_unit_test(test_not_xml),
                cmocka_unit_test(test_hostile_entities),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
