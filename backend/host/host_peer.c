/* SPDX-License-Identifier: MIT */
/* host_peer.c: owns what the session host knows of a client beyond its uid (its capabilities,
   no_new_privs, whether it sees the host's files), read from /proc without trusting a pid that
   may have been reused, and the serving thread's capabilities cut down to the client's, so that
   the kernel checks what the host does for a client as it would check the client itself. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "host.h"

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77 /* Linux 6.5: a pidfd of the peer as it connected */
#endif
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif

/* The field "key:" of a /proc status text as a hexadecimal (is_hex) or decimal number. */
static bool status_field(const char *text, const char *key, bool is_hex, uint64_t *out)
{
        size_t n = strlen(key);
        for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
                if (strncmp(p, key, n) == 0 && p[n] == ':') {
                        char *end;
                        errno = 0;
                        unsigned long long v = strtoull(p + n + 1, &end, is_hex ? 16 : 10);
                        if (errno || end == p + n + 1)
                                return false;
                        *out = v;
                        return true;
                }
        }
        return false;
}

/* Whether the files at a (relative to dirfd) and b are one (same device and inode). -errno when
   one cannot be looked at. */
static int same_file(int dirfd, const char *a, const char *b)
{
        struct stat sa, sb;
        if (fstatat(dirfd, a, &sa, 0) < 0 || stat(b, &sb) < 0)
                return -errno;
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int host_peer_read(int fd, struct host_peer *peer)
{
        memset(peer, 0, sizeof(*peer));
        struct ucred cred;
        socklen_t len = sizeof(cred);
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
                return -errno;
        peer->pid = cred.pid;
        peer->uid = cred.uid;
        peer->gid = cred.gid;
        /* until proven otherwise: no capability, and not the host's files */
        snprintf(peer->why_files, sizeof(peer->why_files),
                 "the session host cannot see the client's process");
        if (cred.pid <= 0)
                return 0; /* in a pid namespace the host cannot see */
        /* the peer as it connected: its pidfd from the socket (no pid reuse can come between);
           on older kernels a pidfd opened now, which a pid recycled in the instant between the
           peer's connect and this could fool (4 million pids in that instant) */
        int pidfd = -1;
        len = sizeof(pidfd);
        if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len) < 0)
                pidfd = (int)syscall(SYS_pidfd_open, cred.pid, 0);
        if (pidfd < 0)
                return 0;
        char path[64], text[4096];
        snprintf(path, sizeof(path), "/proc/%d", (int)cred.pid);
        int dirfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dirfd < 0) {
                close(pidfd);
                return 0;
        }
        uint64_t prm = 0;
        bool has_caps = false;
        int sfd = openat(dirfd, "status", O_RDONLY | O_CLOEXEC);
        ssize_t n = sfd >= 0 ? read(sfd, text, sizeof(text) - 1) : -1;
        if (sfd >= 0)
                close(sfd);
        if (n > 0) {
                text[n] = '\0';
                /* permitted, not effective: a process raises any permitted capability into its
                   effective set at will, and the thread that connected may have */
                has_caps = status_field(text, "CapPrm", true, &prm);
        }
        /* capabilities count only in the host's user namespace */
        if (same_file(dirfd, "ns/user", "/proc/self/ns/user") != 1)
                has_caps = false;
        int mnt = same_file(dirfd, "ns/mnt", "/proc/self/ns/mnt");
        int root = mnt == 1 ? same_file(dirfd, "root", "/") : mnt;
        bool has_files = mnt == 1 && root == 1;
        bool has_pids = same_file(dirfd, "ns/pid", "/proc/self/ns/pid") == 1;
        if (mnt < 0)
                snprintf(peer->why_files, sizeof(peer->why_files),
                         "the session host cannot see the client's mount namespace "
                         "(/proc/%d/ns/mnt: %s)",
                         (int)cred.pid, strerror(-mnt));
        else if (!mnt)
                snprintf(peer->why_files, sizeof(peer->why_files),
                         "the client runs in another mount namespace than the session host: its "
                         "file names do not name the host's files");
        else if (root < 0)
                snprintf(peer->why_files, sizeof(peer->why_files),
                         "the session host cannot see the client's root directory "
                         "(/proc/%d/root: %s)",
                         (int)cred.pid, strerror(-root));
        else if (!root)
                snprintf(peer->why_files, sizeof(peer->why_files),
                         "the client runs under another root directory (chroot) than the session "
                         "host: its file names do not name the host's files");
        /* what /proc/PID said was the peer's only if the peer still lives: its pid cannot have
           been given to another process while it does */
        bool is_alive = syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) == 0 ||
                        errno == EPERM; /* alive, another user's (root's) */
        close(dirfd);
        close(pidfd);
        if (!is_alive)
                return 0;
        peer->caps = has_caps ? prm : 0;
        peer->has_host_files = has_files;
        peer->has_host_pids = has_pids;
        if (has_files)
                peer->why_files[0] = '\0';
        return 0;
}

int host_peer_act_as(const struct host_peer *peer)
{
        struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
        struct __user_cap_data_struct d[2];
        if (syscall(SYS_capget, &hdr, d) < 0)
                return -errno;
        uint64_t eff = (uint64_t)d[0].effective | (uint64_t)d[1].effective << 32;
        uint64_t keep = eff & peer->caps;
        if (keep == eff)
                return 0;
        d[0].effective = (uint32_t)keep;
        d[1].effective = (uint32_t)(keep >> 32);
        /* this thread only (capset is per thread), and those it starts: a session's logger */
        if (syscall(SYS_capset, &hdr, d) < 0)
                return -errno;
        return 0;
}
