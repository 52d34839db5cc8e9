/* SPDX-License-Identifier: MIT */
/* main.c: etwtop's command table: every command the command line can run (one file each,
   cmd_*.c), in the order --help lists them; cli.c parses the options and picks the one. */
#include "cmd.h"

static const struct cmd *const commands[] = {
        &cmd_top,   &cmd_record,  &cmd_replay,    &cmd_dump,   &cmd_export,
        &cmd_merge, &cmd_session, &cmd_boottrace, &cmd_attach, &cmd_boottrace_start,
};

int main(int argc, char **argv)
{
        return cli_run(argc, argv, commands, sizeof(commands) / sizeof(commands[0]));
}
