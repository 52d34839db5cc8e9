/* SPDX-License-Identifier: MIT */
/* verbs.h: xperf's session verbs on the command line (issue 14): start a session that outlives
   etwtop (to a file or as a flight recorder), update, flush, stop it, list every session, and
   run the session host in the foreground. Only through the API (etw/), as any controller. */
#ifndef ETWTOP_VERBS_H
#define ETWTOP_VERBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "etw_client.h"

enum verb {
        VERB_START,   /* --start [NAME] [-f OUT.etl | --buffering] */
        VERB_UPDATE,  /* --update [NAME] [collection options] */
        VERB_FLUSH,   /* --flush [NAME] [-o SNAP.etl] */
        VERB_STOP,    /* --stop [NAME] [-d OUT.etl] */
        VERB_LOGGERS, /* --loggers */
        VERB_HOST,    /* --host: the session host in the foreground (the systemd unit) */
};

struct verbs_options {
        enum verb verb;
        const char *name; /* borrowed; NULL: "NT Kernel Logger" */
        /* borrowed: --start -f (the session's file), --flush -o (a snapshot of the ring),
           --stop -d (the file or ring, image identity merged); NULL: none */
        const char *file;
        bool is_buffering; /* --start --buffering: a flight recorder, no file */
        bool is_realtime;  /* --start --realtime: for real-time consumers (a file session is
                              real-time too, for --attach) */
        bool is_force;     /* replace an existing output file */
        /* borrowed: --start: what the session collects; --update: all it should collect (build
           it with verbs_current, then apply the options given) */
        const struct collect_settings *collect;
        uint32_t buffer_size_kb; /* 0: the API's (64) */
        uint32_t min_buffers;    /* 0: the API's; the rings hold at least this many buffers */
        uint32_t max_buffers;    /* 0: the API's; a flight recorder keeps this many */
        uint32_t max_file_mb;    /* --start -f: the file's MaximumFileSize (0: none) */
};

/* The settings the session name runs with, for --update to start from. 0, or -1 with err. */
int verbs_current(const char *name, struct collect_settings *s, char *err, size_t err_size);

/* Runs the verb; what it did goes to out. Returns the process's exit status: 0, or 1 with the
   API's reason in err. */
int verbs_run(const struct verbs_options *o, FILE *out, char *err, size_t err_size);

#endif
