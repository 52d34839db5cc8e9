/* SPDX-License-Identifier: MIT */
/* boottrace.c: owns the boot session's files (boottrace.h): the config, the systemd unit and
   the link that enables it, written and removed whole; and the config's reader. */
#include "boottrace.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define UNIT_NAME "etwtop-boottrace.service"
/* systemd's early-boot target: the session starts before most services (as the global logger
   starts before most drivers) once the file systems are mounted */
#define UNIT_TARGET "sysinit.target"

static const char *const keys[] = {
        "name",
        "file",
        "on",
        "stackwalk",
        "set-prof-int",
        "buffer-size",
        "pmc-profile",
        "pmc",
        "pmc-events",
        "lastbranch",
        "lastbranch-filter",
        "stackwalk-mode",
        "max-file-size",
        "min-buffers",
};

/* Whether key is a setting the boot session takes (file, name, and --start's collection
   options). */
static int boottrace_is_key(const char *key)
{
        for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
                if (strcmp(key, keys[i]) == 0)
                        return 1;
        return 0;
}

static const char *sysconf_dir(void)
{
        const char *d = getenv("ETWTOP_SYSCONF_DIR");
        return d && *d ? d : "/etc";
}

/* The config file's path (into buf). */
static const char *boottrace_config_path(char *buf, size_t size)
{
        snprintf(buf, size, "%s/etwtop/boottrace.conf", sysconf_dir());
        return buf;
}

static void unit_path(char *buf, size_t size)
{
        snprintf(buf, size, "%s/systemd/system/" UNIT_NAME, sysconf_dir());
}

static void link_path(char *buf, size_t size)
{
        snprintf(buf, size, "%s/systemd/system/" UNIT_TARGET ".wants/" UNIT_NAME, sysconf_dir());
}

/* mkdir -p of path's directory. */
static int make_parent(const char *path, mode_t mode, char *err, size_t err_size)
{
        char dir[1024];
        snprintf(dir, sizeof(dir), "%s", path);
        char *slash = strrchr(dir, '/');
        if (!slash || slash == dir)
                return 0;
        *slash = '\0';
        for (char *p = dir + 1; *p; p++) {
                if (*p != '/')
                        continue;
                *p = '\0';
                if (mkdir(dir, mode) < 0 && errno != EEXIST)
                        goto fail;
                *p = '/';
        }
        if (mkdir(dir, mode) < 0 && errno != EEXIST)
                goto fail;
        return 0;
fail:
        snprintf(err, err_size, "cannot create %s: %s%s", dir, strerror(errno),
                 errno == EACCES ? " (--boottrace configures the system: run it as root)" : "");
        return -1;
}

/* Writes text to path whole: a temporary file beside it, renamed over it. */
static int write_whole(const char *path, const char *text, mode_t mode, char *err, size_t err_size)
{
        if (make_parent(path, 0755, err, err_size) < 0)
                return -1;
        char tmp[1100];
        snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path);
        int fd = mkstemp(tmp);
        if (fd < 0) {
                snprintf(err, err_size, "cannot write %s: %s%s", path, strerror(errno),
                         errno == EACCES ? " (run --boottrace as root)" : "");
                return -1;
        }
        size_t n = strlen(text);
        bool is_ok = fchmod(fd, mode) == 0 && write(fd, text, n) == (ssize_t)n && fsync(fd) == 0;
        is_ok = close(fd) == 0 && is_ok;
        if (!is_ok || rename(tmp, path) < 0) {
                snprintf(err, err_size, "cannot write %s: %s", path, strerror(errno));
                unlink(tmp);
                return -1;
        }
        return 0;
}

/* Why path (absolute) is not root's alone, into err; 0 when it is. Every directory from / down
   and the file itself must belong to root and be writable by no group or other user: else
   another user could put their own program where the unit runs one as root at every boot. A
   directory that others may write but that has the sticky bit (/tmp) counts as root's for an
   entry of root's in it, which only root may then rename or remove. */
static int boottrace_check_exe(const char *path, char *err, size_t err_size)
{
        char p[1024];
        if (path[0] != '/' || strlen(path) >= sizeof(p)) {
                snprintf(err, err_size, "etwtop's path (%s) is not absolute", path);
                return -1;
        }
        snprintf(p, sizeof(p), "%s", path);
        size_t end = 1;
        for (;;) {
                char saved = p[end];
                p[end] = '\0';
                struct stat st;
                if (lstat(p, &st) < 0) {
                        snprintf(err, err_size, "%s: %s", p, strerror(errno));
                        return -1;
                }
                bool is_last = saved == '\0';
                const char *why = NULL;
                if (S_ISLNK(st.st_mode))
                        why = "is a symbolic link";
                else if (st.st_uid != 0)
                        why = "belongs to a user other than root";
                else if ((st.st_mode & (S_IWGRP | S_IWOTH)) &&
                         (is_last || !S_ISDIR(st.st_mode) || !(st.st_mode & S_ISVTX)))
                        why = "is writable by users other than root";
                else if (is_last && !S_ISREG(st.st_mode))
                        why = "is not a regular file";
                else if (!is_last && !S_ISDIR(st.st_mode))
                        why = "is not a directory";
                if (why) {
                        snprintf(err, err_size,
                                 "%s %s (uid %u, mode %04o): the boot unit would run what it "
                                 "holds as root at every boot; install etwtop where only root "
                                 "can change it (as /usr/local/bin)",
                                 p, why, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
                        return -1;
                }
                p[end] = saved;
                if (is_last)
                        return 0;
                /* the next component: skip repeated slashes */
                while (p[end] == '/')
                        end++;
                if (!p[end])
                        return 0;
                while (p[end] && p[end] != '/')
                        end++;
        }
}

int boottrace_install(const struct boottrace_config *c, const char *exe, FILE *out, char *err,
                      size_t err_size)
{
        char conf[1024], unit[1024], link[1024];
        boottrace_config_path(conf, sizeof(conf));
        unit_path(unit, sizeof(unit));
        link_path(link, sizeof(link));
        if (strpbrk(exe, " \t\n\"'\\%$")) {
                snprintf(err, err_size,
                         "--boottrace: etwtop's path (%s) has characters a unit's ExecStart "
                         "would have to quote: install etwtop under a plain path",
                         exe);
                return -1;
        }
        if (boottrace_check_exe(exe, err, err_size) < 0)
                return -1;

        char text[BOOTTRACE_MAX_KEYS * 1100 + 256];
        size_t len = (size_t)snprintf(text, sizeof(text),
                                      "# etwtop's boot session (the global logger): written by "
                                      "etwtop --boottrace;\n"
                                      "# etwtop --boottrace off removes it. Keys: --start's long "
                                      "options, and name, file.\n");
        for (unsigned i = 0; i < c->nr && len < sizeof(text); i++) {
                if (strchr(c->kv[i].value, '\n')) {
                        snprintf(err, err_size, "--boottrace: a value has a line break");
                        return -1;
                }
                len += (size_t)snprintf(text + len, sizeof(text) - len, "%s=%s\n", c->kv[i].key,
                                        c->kv[i].value);
        }
        if (len >= sizeof(text)) {
                snprintf(err, err_size, "--boottrace: the settings are too long");
                return -1;
        }
        if (write_whole(conf, text, 0600, err, err_size) < 0)
                return -1;

        snprintf(text, sizeof(text),
                 "# %s: etwtop's boot session (the global logger), written by etwtop "
                 "--boottrace\n"
                 "# (etwtop --boottrace off removes it). It starts the session %s configures, "
                 "early in\n"
                 "# boot, and leaves it to the session host: etwtop --stop %s -d boot.etl ends "
                 "it.\n"
                 "[Unit]\n"
                 "Description=etwtop boot trace (the global logger)\n"
                 "DefaultDependencies=no\n"
                 "After=local-fs.target\n"
                 "Before=" UNIT_TARGET " shutdown.target\n"
                 "Conflicts=shutdown.target\n"
                 "ConditionPathExists=%s\n"
                 "\n"
                 "[Service]\n"
                 "Type=oneshot\n"
                 "RemainAfterExit=yes\n"
                 "Environment=ETWTOP_RUNTIME_DIR=/run/etwtop\n"
                 "RuntimeDirectory=etwtop\n"
                 "RuntimeDirectoryMode=0700\n"
                 "RuntimeDirectoryPreserve=yes\n"
                 "UMask=0077\n"
                 "ExecStart=%s --boottrace-start %s\n"
                 "\n"
                 "[Install]\n"
                 "WantedBy=" UNIT_TARGET "\n",
                 UNIT_NAME, conf, BOOTTRACE_LOGGER_NAME, conf, exe, conf);
        if (write_whole(unit, text, 0644, err, err_size) < 0)
                return -1;
        /* what systemctl enable does: the target wants the unit */
        if (make_parent(link, 0755, err, err_size) < 0)
                return -1;
        if (unlink(link) < 0 && errno != ENOENT) {
                snprintf(err, err_size, "cannot replace %s: %s", link, strerror(errno));
                return -1;
        }
        if (symlink(unit, link) < 0) {
                snprintf(err, err_size, "cannot link %s: %s", link, strerror(errno));
                return -1;
        }
        const char *name =
                boottrace_get(c, "name") ? boottrace_get(c, "name") : BOOTTRACE_LOGGER_NAME;
        fprintf(out, "wrote %s (the settings)\nwrote %s (a systemd unit)\nenabled it: %s\n", conf,
                unit, link);
        fprintf(out,
                "at every boot, until undone, systemd runs %s --boottrace-start %s as root;\n"
                "the session \"%s\" it starts writes %s; etwtop --stop %s -d boot.etl ends it\n"
                "to undo: etwtop --boottrace off (removes the three files above)\n",
                exe, conf, name, boottrace_get(c, "file") ? boottrace_get(c, "file") : "?", name);
        return 0;
}

int boottrace_remove(FILE *out, char *err, size_t err_size)
{
        char paths[3][1024];
        link_path(paths[0], sizeof(paths[0]));
        unit_path(paths[1], sizeof(paths[1]));
        boottrace_config_path(paths[2], sizeof(paths[2]));
        unsigned nr = 0;
        for (int i = 0; i < 3; i++) {
                if (unlink(paths[i]) == 0) {
                        fprintf(out, "removed %s\n", paths[i]);
                        nr++;
                } else if (errno != ENOENT) {
                        snprintf(err, err_size, "cannot remove %s: %s%s", paths[i], strerror(errno),
                                 errno == EACCES ? " (run it as root)" : "");
                        return -1;
                }
        }
        if (!nr)
                fprintf(out, "no boot trace was configured\n");
        return 0;
}

int boottrace_read(const char *path, struct boottrace_config *c, char *err, size_t err_size)
{
        memset(c, 0, sizeof(*c));
        FILE *f = fopen(path, "re");
        if (!f) {
                snprintf(err, err_size, "cannot read %s: %s", path, strerror(errno));
                return -1;
        }
        char line[2048];
        unsigned nr_line = 0;
        int rc = 0;
        while (fgets(line, sizeof(line), f)) {
                nr_line++;
                size_t n = strlen(line);
                if (n && line[n - 1] == '\n')
                        line[--n] = '\0';
                else if (!feof(f)) {
                        snprintf(err, err_size, "%s:%u: the line is too long", path, nr_line);
                        rc = -1;
                        break;
                }
                char *p = line + strspn(line, " \t");
                if (!*p || *p == '#')
                        continue;
                char *eq = strchr(p, '=');
                if (!eq) {
                        snprintf(err, err_size, "%s:%u: not key=value: %.80s", path, nr_line, p);
                        rc = -1;
                        break;
                }
                *eq = '\0';
                if (!boottrace_is_key(p)) {
                        snprintf(err, err_size,
                                 "%s:%u: unknown key \"%.40s\" (name, file, or a long option "
                                 "of --start)",
                                 path, nr_line, p);
                        rc = -1;
                        break;
                }
                if (boottrace_get(c, p)) {
                        snprintf(err, err_size, "%s:%u: \"%s\" given twice", path, nr_line, p);
                        rc = -1;
                        break;
                }
                if (c->nr == BOOTTRACE_MAX_KEYS || strlen(eq + 1) >= sizeof(c->kv[0].value)) {
                        snprintf(err, err_size, "%s:%u: too many settings or a value too long",
                                 path, nr_line);
                        rc = -1;
                        break;
                }
                snprintf(c->kv[c->nr].key, sizeof(c->kv[0].key), "%s", p);
                snprintf(c->kv[c->nr].value, sizeof(c->kv[0].value), "%s", eq + 1);
                c->nr++;
        }
        fclose(f);
        return rc;
}

const char *boottrace_get(const struct boottrace_config *c, const char *key)
{
        for (unsigned i = 0; i < c->nr; i++)
                if (strcmp(c->kv[i].key, key) == 0)
                        return c->kv[i].value;
        return NULL;
}
