/* SPDX-License-Identifier: MIT */
/* boottrace.h: boot-time tracing, the global logger (issue 14): a session that starts early in
   boot, configured as Windows configures it in the registry (GlobalLogger), here by a config
   file and an enabled systemd unit that starts it. Files under the system configuration
   directory: /etc, or $ETWTOP_SYSCONF_DIR (the tests'). */
#ifndef ETWTOP_BOOTTRACE_H
#define ETWTOP_BOOTTRACE_H

#include <stddef.h>
#include <stdio.h>

#define BOOTTRACE_LOGGER_NAME  "GlobalLogger"
#define BOOTTRACE_DEFAULT_FILE "/var/log/etwtop/boot.etl"
#define BOOTTRACE_MAX_KEYS     16

/* One setting of the boot session: a long option of --start and its value ("on",
   "PROC_THREAD+LOADER"). */
struct boottrace_kv {
        char key[32];
        char value[1024];
};

struct boottrace_config {
        struct boottrace_kv kv[BOOTTRACE_MAX_KEYS];
        unsigned nr;
};

/* Writes the config (0600, replacing the old one whole), the unit that starts the session at
   boot (running exe, refused unless boottrace_check_exe passes) and its enabling link; what it
   did and how to undo it go to out. 0, or -1 with err (nothing written when exe is refused). */
int boottrace_install(const struct boottrace_config *c, const char *exe, FILE *out, char *err,
                      size_t err_size);

/* Removes the config, the unit and its link (those that exist). 0, or -1 with err. */
int boottrace_remove(FILE *out, char *err, size_t err_size);

/* Reads a config file: key=value lines, # comments. -1 with the line that is wrong in err. */
int boottrace_read(const char *path, struct boottrace_config *c, char *err, size_t err_size);

/* The value of key in c, or NULL. */
const char *boottrace_get(const struct boottrace_config *c, const char *key);

#endif
