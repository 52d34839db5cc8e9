/* SPDX-License-Identifier: MIT */
/* host_spawn.c: owns the start of a detached session host from any program linked with the
   backend: fork, setsid, fork (no exec), the grandchild made a daemon that serves the runtime
   directory (host_serve), and the starter's wait for its word that it serves. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "host.h"
#include "host_proto.h"
#include "session.h"
#include "util/clock.h"

/* how long the starter waits for the host's word that it serves */
#define SPAWN_WAIT_MS 30000

static int64_t now_ms(void)
{
        return (int64_t)(now_ns() / 1000000);
}

/* Closes every fd from first up. */
static void close_from(int first)
{
#ifdef SYS_close_range
        if (syscall(SYS_close_range, (unsigned)first, ~0u, 0) == 0)
                return;
#endif
        long max = sysconf(_SC_OPEN_MAX);
        for (long fd = first; fd < (max > 0 ? max : 65536); fd++)
                close((int)fd);
}

/* The grandchild becomes a daemon: stdio on /dev/null, the ready pipe on fd 3 and no other fd
   of its parent, default signal dispositions, nothing blocked, umask 077, cwd /. */
static int daemon_prepare(int ready)
{
        int r = fcntl(ready, F_DUPFD_CLOEXEC, 10);
        int null_fd = open("/dev/null", O_RDWR);
        if (null_fd >= 0) {
                dup2(null_fd, 0);
                dup2(null_fd, 1);
                dup2(null_fd, 2);
        }
        if (r >= 0) {
                dup2(r, 3);
                fcntl(3, F_SETFD, FD_CLOEXEC);
        }
        close_from(4);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        for (int sig = 1; sig < NSIG; sig++)
                if (sig != SIGKILL && sig != SIGSTOP)
                        signal(sig, SIG_DFL);
        signal(SIGHUP, SIG_IGN);
        umask(077);
        if (chdir("/") < 0) {
                /* stays where it was */
        }
        prctl(PR_SET_NAME, "etwtop-host", 0, 0, 0);
        session_after_fork();
        return r >= 0 ? 3 : -1;
}

int host_spawn(const char *dir, char *why, size_t why_size)
{
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0) {
                int e = errno;
                host_say(why, why_size, "starting the session host: pipe: %s", strerror(e));
                return -e;
        }
        pid_t pid = fork();
        if (pid < 0) {
                int e = errno;
                close(p[0]);
                close(p[1]);
                host_say(why, why_size, "starting the session host: fork: %s", strerror(e));
                return -e;
        }
        if (pid == 0) {
                /* detached: a session of its own, and not the starter's child */
                if (setsid() < 0)
                        _exit(1);
                pid_t g = fork();
                if (g != 0)
                        _exit(g < 0 ? 1 : 0);
                close(p[0]);
                int ready = daemon_prepare(p[1]);
                char w[512];
                int rc = host_serve(dir, ready, 0, w, sizeof(w));
                _exit(rc < 0 ? 1 : 0);
        }
        close(p[1]);
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
        }
        char buf[600];
        size_t got = 0;
        int64_t deadline = now_ms() + SPAWN_WAIT_MS;
        while (got < sizeof(buf) - 1) {
                int left = (int)(deadline - now_ms());
                struct pollfd pfd = {.fd = p[0], .events = POLLIN};
                if (left <= 0 || poll(&pfd, 1, left) <= 0)
                        break;
                ssize_t k = read(p[0], buf + got, sizeof(buf) - 1 - got);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        break;
                got += (size_t)k;
                if (buf[0] == 'R' || buf[0] == 'B')
                        break;
        }
        close(p[0]);
        buf[got] = '\0';
        if (got && (buf[0] == 'R' || buf[0] == 'B'))
                return 0;
        if (got)
                host_say(why, why_size, "the session host could not start on %s: %s", dir, buf + 1);
        else
                host_say(why, why_size,
                         "the session host for %s did not start (it exited or did not "
                         "answer in %d s)",
                         dir, SPAWN_WAIT_MS / 1000);
        return -EIO;
}
