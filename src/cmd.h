/* SPDX-License-Identifier: MIT */
/* cmd.h: etwtop's commands, one file each (cmd_*.c); main.c's table lists them. */
#ifndef ETWTOP_CMD_H
#define ETWTOP_CMD_H

#include "cli.h"

extern const struct cmd cmd_top;             /* the screen, live -b, --replay FILE */
extern const struct cmd cmd_attach;          /* --attach [NAME] */
extern const struct cmd cmd_record;          /* --record OUT.etl without the screen */
extern const struct cmd cmd_replay;          /* --replay FILE -b */
extern const struct cmd cmd_dump;            /* --dump FILE... */
extern const struct cmd cmd_export;          /* --replay FILE --export FORMAT -o OUT */
extern const struct cmd cmd_merge;           /* --merge -o OUT IN... */
extern const struct cmd cmd_session;         /* --start, --update, --flush, --stop, ... */
extern const struct cmd cmd_boottrace;       /* --boottrace */
extern const struct cmd cmd_boottrace_start; /* --boottrace-start CONFIG (the boot unit) */

#endif
