/* SPDX-License-Identifier: MIT */
/* test_cli.c: the command line (src/cli.c, src/cmd_*.c): the option table (--help lists every
   option, names unique), what options parse into, and which command the table's dispatch picks
   and when its checks refuse a command line. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd.h"
#include "ui/views.h"
#include "verbs.h"

static const struct cmd *const commands[] = {
        &cmd_top,   &cmd_record,  &cmd_replay,    &cmd_dump,   &cmd_export,
        &cmd_merge, &cmd_session, &cmd_boottrace, &cmd_attach, &cmd_boottrace_start,
};
#define NR_COMMANDS (sizeof(commands) / sizeof(commands[0]))

/* argv from a NULL-terminated list (getopt may permute it and strtok writes into it: copies) */
struct argv_copy {
        int argc;
        char *argv[32];
};

static void argv_make(struct argv_copy *c, const char *const *words)
{
        c->argc = 0;
        c->argv[c->argc++] = strdup("etwtop");
        for (; *words; words++)
                c->argv[c->argc++] = strdup(*words);
        c->argv[c->argc] = NULL;
}

static void argv_free(struct argv_copy *c)
{
        for (int i = 0; i < c->argc; i++)
                free(c->argv[i]);
}

/* words parsed: cli_parse's return; a holds the result (its strings are argv's: copied in c) */
static int parse(struct cli_args *a, struct argv_copy *c, const char *const *words)
{
        argv_make(c, words);
        return cli_parse(a, c->argc, c->argv, commands, NR_COMMANDS);
}

static char *usage_text(void)
{
        char *text = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&text, &size);
        assert_non_null(f);
        cli_usage(f, commands, NR_COMMANDS);
        fclose(f);
        return text;
}

static void test_help_lists_every_option(void **state)
{
        (void)state;
        char *text = usage_text();
        for (size_t i = 0; i < cli_nr_options; i++) {
                const struct cli_option *o = &cli_options[i];
                char name[64];
                if (o->name)
                        snprintf(name, sizeof(name), "--%s%s", o->name, o->arg ? " " : "");
                else
                        snprintf(name, sizeof(name), "-%c", o->short_name);
                if (!strstr(text, name))
                        fail_msg("--help does not list %s", name);
                assert_non_null(o->help);
        }
        /* the commands' synopsis, as the old usage had it (tests/shell/boottrace.sh looks for it)
         */
        assert_non_null(strstr(text, "usage: etwtop [options]"));
        assert_non_null(strstr(text, "etwtop --boottrace -f OUT.etl"));
        assert_non_null(strstr(text, "etwtop --replay FILE.etl --export FORMAT -o OUT"));
        /* the hidden command has no synopsis; its option is listed */
        assert_null(strstr(text, "etwtop --boottrace-start"));
        /* a description that does not fit after its command goes on the next line, aligned */
        assert_non_null(strstr(text, "[options]\n                                            "
                                     "start a session that outlives etwtop\n"));
        free(text);
}

static void test_names_unique(void **state)
{
        (void)state;
        for (size_t i = 0; i < cli_nr_options; i++)
                for (size_t j = i + 1; j < cli_nr_options; j++) {
                        const struct cli_option *x = &cli_options[i], *y = &cli_options[j];
                        assert_false(x->name && y->name && !strcmp(x->name, y->name));
                        assert_false(x->short_name && x->short_name == y->short_name);
                }
}

static void test_parse(void **state)
{
        (void)state;
        struct cli_args a;
        struct argv_copy c;
        assert_int_equal(parse(&a, &c,
                               (const char *[]){"--replay", "t.etl", "-b", "--top", "5", "-s",
                                                "dso", "--from", "1.5", "--symbol-path", "/a:/b",
                                                "-p", "42", NULL}),
                         CLI_CONTINUE);
        assert_string_equal(a.replay_path, "t.etl");
        assert_true(a.is_batch);
        assert_int_equal(a.nr_top, 5);
        assert_int_equal(a.group, FUNCTIONS_BY_MODULE);
        assert_true(a.has_from);
        assert_false(a.has_to);
        assert_true(a.from_s == 1.5);
        assert_int_equal(a.nr_symbol_path, 2);
        assert_string_equal(a.symbol_path[0], "/a");
        assert_string_equal(a.symbol_path[1], "/b");
        assert_int_equal(a.collect.pid, 42);
        assert_int_equal(a.verb, -1);
        assert_int_equal(a.nr_rest, 0);
        argv_free(&c);

        /* the defaults: xperf's collection, one-second refresh */
        assert_int_equal(parse(&a, &c, (const char *[]){"--stop", "mine", "-d", "out.etl", NULL}),
                         CLI_CONTINUE);
        assert_int_equal(a.verb, VERB_STOP);
        assert_string_equal(a.delay_arg, "out.etl");
        assert_int_equal(a.nr_rest, 1);
        assert_string_equal(a.rest[0], "mine");
        assert_string_equal(a.ca.on, "PROC_THREAD+LOADER+PROFILE+CSWITCH+DISPATCHER");
        assert_false(a.is_on_given);
        assert_true(a.delay_s == 1.0);
        argv_free(&c);

        /* a bad value ends the parse with status 2 (the message is on stderr) */
        assert_int_equal(parse(&a, &c, (const char *[]){"--top", "0", NULL}), 2);
        argv_free(&c);
        assert_int_equal(parse(&a, &c, (const char *[]){"-s", "bogus", NULL}), 2);
        argv_free(&c);
        assert_int_equal(parse(&a, &c, (const char *[]){"--set-prof-int", "10", NULL}), 2);
        argv_free(&c);
        /* an unknown option: the usage, status 2 */
        assert_int_equal(parse(&a, &c, (const char *[]){"--no-such-option", NULL}), 2);
        argv_free(&c);
        /* parsed twice in one process (--boottrace-start does): getopt starts afresh */
        assert_int_equal(parse(&a, &c, (const char *[]){"--on", "LOADER", NULL}), CLI_CONTINUE);
        assert_true(a.is_on_given);
        assert_string_equal(a.ca.on, "LOADER");
        argv_free(&c);
}

/* The command words pick (parse, then cli_pick); NULL: none. */
static const struct cmd *pick(const char *const *words)
{
        struct cli_args a;
        struct argv_copy c;
        assert_int_equal(parse(&a, &c, words), CLI_CONTINUE);
        const struct cmd *cmd = cli_pick(&a);
        argv_free(&c);
        return cmd;
}

static void test_pick(void **state)
{
        (void)state;
        assert_ptr_equal(pick((const char *[]){"--replay", "t.etl", "-b", NULL}), &cmd_replay);
        assert_ptr_equal(pick((const char *[]){"--replay", "t.etl", NULL}), &cmd_top);
        assert_ptr_equal(pick((const char *[]){"-b", "-n", "2", NULL}), &cmd_top);
        assert_ptr_equal(
                pick((const char *[]){"--replay", "t.etl", "--export", "csv", "-o", "-", NULL}),
                &cmd_export);
        /* --export before -b's report, whichever comes first on the line */
        assert_ptr_equal(pick((const char *[]){"-b", "--export", "csv", "--replay", "t", NULL}),
                         &cmd_export);
        assert_ptr_equal(pick((const char *[]){"--dump", "t.etl", NULL}), &cmd_dump);
        assert_ptr_equal(pick((const char *[]){"--merge", "-o", "o.etl", "a.etl", NULL}),
                         &cmd_merge);
        assert_ptr_equal(pick((const char *[]){"--record", "o.etl", "-b", NULL}), &cmd_record);
        assert_ptr_equal(pick((const char *[]){"--attach", "-b", NULL}), &cmd_attach);
        assert_ptr_equal(pick((const char *[]){"--loggers", NULL}), &cmd_session);
        assert_ptr_equal(pick((const char *[]){"--start", "--replay", "t", NULL}), &cmd_session);
        assert_ptr_equal(pick((const char *[]){"--boottrace", "--start", NULL}), &cmd_boottrace);
        assert_ptr_equal(pick((const char *[]){"--boottrace-start", "c", "--boottrace", NULL}),
                         &cmd_boottrace_start);
}

static int nr_stub_runs;

static bool stub_match(const struct cli_args *a)
{
        return a->is_totals;
}

static int stub_run(struct cli_args *a)
{
        (void)a;
        nr_stub_runs++;
        return 7;
}

static void test_run_checks(void **state)
{
        (void)state;
        static const struct cmd checked = {.name = "stub",
                                           .precedence = 0,
                                           .checks = CLI_CHECK_MODES | CLI_CHECK_REPORT,
                                           .match = stub_match,
                                           .run = stub_run};
        static const struct cmd unchecked = {
                .name = "stub", .precedence = 0, .match = stub_match, .run = stub_run};
        const struct cmd *const one[] = {&checked}, *const other[] = {&unchecked};
        struct argv_copy c;
        nr_stub_runs = 0;
        argv_make(&c, (const char *[]){"--totals", NULL});
        assert_int_equal(cli_run(c.argc, c.argv, one, 1), 7);
        argv_free(&c);
        assert_int_equal(nr_stub_runs, 1);
        /* --to not after --from: refused before the command runs */
        argv_make(&c, (const char *[]){"--totals", "--dump", "--from", "2", "--to", "1", NULL});
        assert_int_equal(cli_run(c.argc, c.argv, one, 1), 2);
        argv_free(&c);
        /* -f goes with --start only */
        argv_make(&c, (const char *[]){"--totals", "-f", "x.etl", NULL});
        assert_int_equal(cli_run(c.argc, c.argv, one, 1), 2);
        argv_free(&c);
        /* --annotate without --replay -b */
        argv_make(&c, (const char *[]){"--totals", "--annotate", "f", NULL});
        assert_int_equal(cli_run(c.argc, c.argv, one, 1), 2);
        argv_free(&c);
        assert_int_equal(nr_stub_runs, 1);
        /* a command without checks runs whatever they would say */
        argv_make(&c, (const char *[]){"--totals", "-f", "x.etl", NULL});
        assert_int_equal(cli_run(c.argc, c.argv, other, 1), 7);
        argv_free(&c);
        assert_int_equal(nr_stub_runs, 2);
        /* none matches: the usage, status 2 */
        argv_make(&c, (const char *[]){"-b", NULL});
        assert_int_equal(cli_run(c.argc, c.argv, one, 1), 2);
        argv_free(&c);
        assert_int_equal(nr_stub_runs, 2);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_help_lists_every_option),
                cmocka_unit_test(test_names_unique),
                cmocka_unit_test(test_parse),
                cmocka_unit_test(test_pick),
                cmocka_unit_test(test_run_checks),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
