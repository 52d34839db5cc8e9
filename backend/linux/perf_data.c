/* SPDX-License-Identifier: MIT */
/* perf_data.c: the perf.data reader's header, attrs, sample ids and record iteration (file and
   pipe mode); features and decompression are in perf_data_feat.c and perf_data_zstd.c. */
#include "perf_data_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "le_bytes.h"
#include "util/xalloc.h"

static void perf_data_add_id(struct perf_data *pd, uint32_t ev, uint64_t id);

/* perf.data-file-format.txt: the magic as a little-endian u64 is "PERFILE2" in memory. */
#define PERF_DATA_MAGIC    "PERFILE2"
#define PERF_DATA_MAGIC_BE "2ELIFREP"
#define PERF_DATA_MAGIC_V1 "PERFFILE"
#define FILE_HEADER_MIN    72u  /* magic, size, attr_size, attrs, data, event_types */
#define FILE_HEADER_FULL   104u /* ... flags and flags1[3]: the feature bitmap */
#define PIPE_HEADER_SIZE   16u
#define ATTR_SIZE_VER0     64u /* PERF_ATTR_SIZE_VER0 */
#define FILE_SECTION_SIZE  16u /* struct perf_file_section */
#define RECORD_HEADER_SIZE 8u  /* struct perf_event_header */
#define MAX_EVENTS         4096u
#define EVENT_UPDATE_NAME  2u /* PERF_EVENT_UPDATE__NAME (3 is __CPUS: a CPU map, not a name) */

_Static_assert(sizeof(struct perf_event_header) == RECORD_HEADER_SIZE, "perf_event_header");
_Static_assert(sizeof(struct perf_event_attr) >= ATTR_SIZE_VER0, "perf_event_attr");

void perf_data_error_set(struct err_msg *err, uint64_t offset, const char *fmt, ...)
{
        if (!err)
                return;
        err->offset = offset;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
        va_end(ap);
}

void perf_data_warn(struct perf_data *pd, uint64_t offset, const char *fmt, ...)
{
        pd->warning.offset = offset;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(pd->warning.msg, sizeof(pd->warning.msg), fmt, ap);
        va_end(ap);
        pd->nr_warnings++;
}

bool perf_data_is_perf_data(const uint8_t *data, size_t size)
{
        return size >= 8 &&
               (memcmp(data, PERF_DATA_MAGIC, 8) == 0 || memcmp(data, PERF_DATA_MAGIC_BE, 8) == 0);
}

static const char *const type_names[PERF_DATA_NR_TYPES] = {
        [PERF_RECORD_MMAP] = "MMAP",
        [PERF_RECORD_LOST] = "LOST",
        [PERF_RECORD_COMM] = "COMM",
        [PERF_RECORD_EXIT] = "EXIT",
        [PERF_RECORD_THROTTLE] = "THROTTLE",
        [PERF_RECORD_UNTHROTTLE] = "UNTHROTTLE",
        [PERF_RECORD_FORK] = "FORK",
        [PERF_RECORD_READ] = "READ",
        [PERF_RECORD_SAMPLE] = "SAMPLE",
        [PERF_RECORD_MMAP2] = "MMAP2",
        [PERF_RECORD_AUX] = "AUX",
        [PERF_RECORD_ITRACE_START] = "ITRACE_START",
        [PERF_RECORD_LOST_SAMPLES] = "LOST_SAMPLES",
        [PERF_RECORD_SWITCH] = "SWITCH",
        [PERF_RECORD_SWITCH_CPU_WIDE] = "SWITCH_CPU_WIDE",
        [PERF_RECORD_NAMESPACES] = "NAMESPACES",
        [PERF_RECORD_KSYMBOL] = "KSYMBOL",
        [PERF_RECORD_BPF_EVENT] = "BPF_EVENT",
        [PERF_RECORD_CGROUP] = "CGROUP",
        [PERF_RECORD_TEXT_POKE] = "TEXT_POKE",
        [21] = "AUX_OUTPUT_HW_ID",
        [PERF_DATA_HEADER_ATTR] = "ATTR",
        [PERF_DATA_HEADER_EVENT_TYPE] = "EVENT_TYPE",
        [PERF_DATA_HEADER_TRACING_DATA] = "TRACING_DATA",
        [PERF_DATA_HEADER_BUILD_ID] = "BUILD_ID",
        [PERF_DATA_FINISHED_ROUND] = "FINISHED_ROUND",
        [PERF_DATA_ID_INDEX] = "ID_INDEX",
        [PERF_DATA_AUXTRACE_INFO] = "AUXTRACE_INFO",
        [PERF_DATA_AUXTRACE] = "AUXTRACE",
        [PERF_DATA_AUXTRACE_ERROR] = "AUXTRACE_ERROR",
        [PERF_DATA_THREAD_MAP] = "THREAD_MAP",
        [PERF_DATA_CPU_MAP] = "CPU_MAP",
        [PERF_DATA_STAT_CONFIG] = "STAT_CONFIG",
        [PERF_DATA_STAT] = "STAT",
        [PERF_DATA_STAT_ROUND] = "STAT_ROUND",
        [PERF_DATA_EVENT_UPDATE] = "EVENT_UPDATE",
        [PERF_DATA_TIME_CONV] = "TIME_CONV",
        [PERF_DATA_HEADER_FEATURE] = "FEATURE",
        [PERF_DATA_COMPRESSED] = "COMPRESSED",
        [PERF_DATA_FINISHED_INIT] = "FINISHED_INIT",
        [PERF_DATA_COMPRESSED2] = "COMPRESSED2",
};

const char *perf_data_type_name(uint32_t type)
{
        return type < PERF_DATA_NR_TYPES && type_names[type] ? type_names[type] : "UNKNOWN";
}

/* perf's modifiers of a name it makes from an attr (tools/perf/util/evsel.c,
   evsel__add_modifiers): ":u", ":ppp", ":HG" ... */
static void add_modifiers(const struct perf_event_attr *a, char *buf, size_t size)
{
        char mod[16];
        size_t n = 0;
        bool exclude_guest_default = false;
        if (a->exclude_kernel || a->exclude_user || a->exclude_hv) {
                if (!a->exclude_kernel)
                        mod[n++] = 'k';
                if (!a->exclude_user)
                        mod[n++] = 'u';
                if (!a->exclude_hv)
                        mod[n++] = 'h';
                exclude_guest_default = true;
        }
        for (uint32_t i = 0; i < a->precise_ip && i < 3; i++)
                mod[n++] = 'p';
        if (a->precise_ip)
                exclude_guest_default = true;
        if (a->exclude_host || a->exclude_guest == exclude_guest_default) {
                if (!a->exclude_host)
                        mod[n++] = 'H';
                if (!a->exclude_guest)
                        mod[n++] = 'G';
        }
        size_t len = strlen(buf);
        if (n && len + n + 2 <= size) {
                buf[len] = ':';
                memcpy(buf + len + 1, mod, n);
                buf[len + 1 + n] = '\0';
        }
}

const char *perf_data_event_name(const struct perf_data_event *ev, char *buf, size_t size)
{
        static const char *const hw[] = {"cycles",
                                         "instructions",
                                         "cache-references",
                                         "cache-misses",
                                         "branches",
                                         "branch-misses",
                                         "bus-cycles",
                                         "stalled-cycles-frontend",
                                         "stalled-cycles-backend",
                                         "ref-cycles"};
        static const char *const sw[] = {
                "cpu-clock",        "task-clock",   "page-faults",  "context-switches",
                "cpu-migrations",   "minor-faults", "major-faults", "alignment-faults",
                "emulation-faults", "dummy",        "bpf-output",   "cgroup-switches"};
        if (ev->name && ev->name[0]) {
                snprintf(buf, size, "%s", ev->name);
                return buf;
        }
        /* hybrid PMUs keep the PMU's type in config's high half (PERF_PMU_TYPE_SHIFT) */
        uint64_t config = ev->attr.config & 0xffffffffu;
        switch (ev->attr.type) {
        case PERF_TYPE_HARDWARE:
                if (config < sizeof(hw) / sizeof(hw[0])) {
                        snprintf(buf, size, "%s", hw[config]);
                        add_modifiers(&ev->attr, buf, size);
                        return buf;
                }
                break;
        case PERF_TYPE_SOFTWARE:
                if (config < sizeof(sw) / sizeof(sw[0])) {
                        snprintf(buf, size, "%s", sw[config]);
                        add_modifiers(&ev->attr, buf, size);
                        return buf;
                }
                break;
        case PERF_TYPE_TRACEPOINT:
                snprintf(buf, size, "tracepoint %llu", (unsigned long long)ev->attr.config);
                return buf;
        case PERF_TYPE_RAW:
                snprintf(buf, size, "raw 0x%llx", (unsigned long long)ev->attr.config);
                return buf;
        default: break;
        }
        snprintf(buf, size, "type %u config 0x%llx", ev->attr.type,
                 (unsigned long long)ev->attr.config);
        return buf;
}

/* ---- events and their ids ---- */

/* Appends an event (attr_bytes of a perf_event_attr, ids) and returns its index. */
static uint32_t perf_data_add_event(struct perf_data *pd, const uint8_t *attr_bytes,
                                    uint32_t attr_size, const uint64_t *ids, uint32_t nr_ids)
{
        if (pd->nr_events == pd->cap_events) {
                pd->cap_events = pd->cap_events ? 2 * pd->cap_events : 8;
                pd->events = xrealloc(pd->events, pd->cap_events * sizeof(*pd->events));
        }
        uint32_t i = pd->nr_events++;
        struct perf_data_event *ev = &pd->events[i];
        memset(ev, 0, sizeof(*ev));
        uint32_t n = attr_size < sizeof(ev->attr) ? attr_size : (uint32_t)sizeof(ev->attr);
        memcpy(&ev->attr, attr_bytes, n);
        ev->attr_size = attr_size;
        for (uint32_t k = 0; k < nr_ids; k++)
                perf_data_add_id(pd, i, ids[k]);
        return i;
}

/* Adds sample id id to event ev (no-op when it is there). */
static void perf_data_add_id(struct perf_data *pd, uint32_t ev, uint64_t id)
{
        struct perf_data_event *e = &pd->events[ev];
        for (uint32_t k = 0; k < e->nr_ids; k++)
                if (e->ids[k] == id)
                        return;
        e->ids = xrealloc(e->ids, (e->nr_ids + 1) * sizeof(*e->ids));
        e->ids[e->nr_ids++] = id;
        if (pd->nr_ids == pd->cap_ids) {
                pd->cap_ids = pd->cap_ids ? 2 * pd->cap_ids : 16;
                pd->ids = xrealloc(pd->ids, pd->cap_ids * sizeof(*pd->ids));
        }
        pd->ids[pd->nr_ids++] = (struct perf_data_id){id, ev};
        pd->is_ids_dirty = true;
}

void perf_data_set_name(struct perf_data_event *ev, const char *name, size_t len)
{
        free(ev->name);
        ev->name = xmalloc(len + 1);
        memcpy(ev->name, name, len);
        ev->name[len] = '\0';
        ev->name[strnlen(ev->name, len)] = '\0';
}

static int cmp_id(const void *a, const void *b)
{
        const struct perf_data_id *x = a, *y = b;
        return x->id < y->id ? -1 : x->id > y->id;
}

int32_t perf_data_event_by_id(const struct perf_data *pd, uint64_t id)
{
        struct perf_data *w = (struct perf_data *)pd; /* the sort is a cache */
        if (w->is_ids_dirty) {
                if (w->nr_ids) /* none: ids may be NULL, which qsort may not take */
                        qsort(w->ids, w->nr_ids, sizeof(*w->ids), cmp_id);
                w->is_ids_dirty = false;
        }
        uint32_t lo = 0, hi = pd->nr_ids;
        while (lo < hi) {
                uint32_t mid = lo + (hi - lo) / 2;
                if (pd->ids[mid].id < id)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo < pd->nr_ids && pd->ids[lo].id == id ? (int32_t)pd->ids[lo].event : -1;
}

/* The event of a record: by its sample id where the first event's sample_type has one (perf's
   id_pos for samples, is_pos from the end of the sample_id_all trailer of other kernel
   records), else the only event. */
static int32_t record_event(const struct perf_data *pd, const uint8_t *rec, uint32_t size,
                            uint32_t type)
{
        if (pd->nr_events == 0)
                return -1;
        if (pd->nr_events == 1)
                return 0;
        const struct perf_event_attr *a = &pd->events[0].attr;
        uint64_t st = a->sample_type;
        if (!(st & (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_ID)))
                return pd->nr_events == 1 ? 0 : -1;
        uint64_t off;
        if (type == PERF_RECORD_SAMPLE) {
                uint32_t idx = 0;
                if (!(st & PERF_SAMPLE_IDENTIFIER))
                        idx = !!(st & PERF_SAMPLE_IP) + !!(st & PERF_SAMPLE_TID) +
                              !!(st & PERF_SAMPLE_TIME) + !!(st & PERF_SAMPLE_ADDR);
                off = RECORD_HEADER_SIZE + 8ull * idx;
        } else if (type < PERF_DATA_HEADER_ATTR && a->sample_id_all) {
                uint32_t idx = 1;
                if (!(st & PERF_SAMPLE_IDENTIFIER))
                        idx += !!(st & PERF_SAMPLE_CPU) + !!(st & PERF_SAMPLE_STREAM_ID);
                if (size < RECORD_HEADER_SIZE + 8ull * idx)
                        return -1;
                off = size - 8ull * idx;
        } else {
                return pd->nr_events == 1 ? 0 : -1;
        }
        if (off + 8 > size)
                return -1;
        int32_t ev = perf_data_event_by_id(pd, le_get64(rec + off));
        return ev >= 0 || pd->nr_events > 1 ? ev : 0;
}

/* ---- opening ---- */

static void perf_data_free_events(struct perf_data *pd)
{
        for (uint32_t i = 0; i < pd->nr_events; i++) {
                free(pd->events[i].name);
                free(pd->events[i].ids);
        }
        free(pd->events);
        pd->events = NULL;
        pd->nr_events = pd->cap_events = 0;
        free(pd->ids);
        pd->ids = NULL;
        pd->nr_ids = pd->cap_ids = 0;
}

void perf_data_close(struct perf_data *pd)
{
        if (!pd)
                return;
        perf_data_free_events(pd);
        perf_data_info_free(&pd->info);
        perf_data_zstd_free(pd->zstd);
        free(pd->dbuf);
        if (pd->map)
                munmap(pd->map, pd->map_size);
        free(pd->buf);
        perf_data_dir_free(pd->parts, pd->nr_parts);
        free(pd);
}

static int read_attrs(struct perf_data *pd, struct err_msg *err)
{
        const uint8_t *h = pd->data;
        uint64_t attr_size = le_get64(h + 16);
        uint64_t attrs_off = le_get64(h + 24), attrs_size = le_get64(h + 32);
        if (attrs_size == 0)
                return 0;
        if (attr_size < ATTR_SIZE_VER0 + FILE_SECTION_SIZE || attr_size > 4096) {
                perf_data_error_set(err, 16, "perf.data header: attr size %llu is not an attr",
                                    (unsigned long long)attr_size);
                return -EBADMSG;
        }
        if (attrs_off > pd->size || attrs_size > pd->size - attrs_off) {
                perf_data_error_set(err, 24,
                                    "perf.data header: the attrs (%llu bytes at %llu) lie past "
                                    "the end of the file (%zu bytes)",
                                    (unsigned long long)attrs_size, (unsigned long long)attrs_off,
                                    pd->size);
                return -EBADMSG;
        }
        uint64_t nr = attrs_size / attr_size;
        if (nr > MAX_EVENTS) {
                perf_data_error_set(err, 32, "perf.data header: %llu attrs (at most %u)",
                                    (unsigned long long)nr, MAX_EVENTS);
                return -EBADMSG;
        }
        uint32_t asize = (uint32_t)attr_size - FILE_SECTION_SIZE;
        for (uint64_t i = 0; i < nr; i++) {
                uint64_t o = attrs_off + i * attr_size;
                const uint8_t *p = pd->data + o;
                uint64_t ids_off = le_get64(p + asize), ids_size = le_get64(p + asize + 8);
                if (ids_off > pd->size || ids_size > pd->size - ids_off || ids_size % 8) {
                        perf_data_error_set(err, o + asize,
                                            "attr %llu: its ids (%llu bytes at %llu) lie past "
                                            "the end of the file",
                                            (unsigned long long)i, (unsigned long long)ids_size,
                                            (unsigned long long)ids_off);
                        return -EBADMSG;
                }
                uint32_t ev = perf_data_add_event(pd, p, asize, NULL, 0);
                for (uint64_t k = 0; k < ids_size / 8; k++)
                        perf_data_add_id(pd, ev, le_get64(pd->data + ids_off + 8 * k));
        }
        return 0;
}

static void read_features(struct perf_data *pd)
{
        const uint8_t *h = pd->data;
        if (le_get64(h + 8) < FILE_HEADER_FULL)
                return;
        uint64_t bits[4];
        for (int i = 0; i < 4; i++)
                bits[i] = le_get64(h + 72 + 8 * i);
        uint64_t off = pd->declared_end;
        for (uint32_t f = 0; f < PERF_DATA_FEAT_MAX; f++) {
                if (!(bits[f / 64] >> (f % 64) & 1))
                        continue;
                if (off > pd->size || pd->size - off < FILE_SECTION_SIZE) {
                        perf_data_warn(pd, off,
                                       "feature %u: its section entry lies past the end of the "
                                       "file (truncated?)",
                                       f);
                        return;
                }
                uint64_t foff = le_get64(pd->data + off), fsize = le_get64(pd->data + off + 8);
                if (foff > pd->size || fsize > pd->size - foff)
                        perf_data_warn(pd, off,
                                       "feature %u: %llu bytes at %llu lie past the end of the "
                                       "file",
                                       f, (unsigned long long)fsize, (unsigned long long)foff);
                else
                        perf_data_feat_parse(pd, f, pd->data + foff, fsize, foff);
                off += FILE_SECTION_SIZE;
        }
        perf_data_name_tracepoints(pd);
}

static int open_file_mode(struct perf_data *pd, struct err_msg *err)
{
        const uint8_t *h = pd->data;
        uint64_t hsize = le_get64(h + 8);
        if (hsize < FILE_HEADER_MIN || hsize > pd->size) {
                perf_data_error_set(err, 8, "perf.data header: size %llu (file of %zu bytes)",
                                    (unsigned long long)hsize, pd->size);
                return -EBADMSG;
        }
        int rc = read_attrs(pd, err);
        if (rc < 0)
                return rc;
        uint64_t doff = le_get64(h + 40), dsize = le_get64(h + 48);
        if (doff < hsize || doff > pd->size) {
                perf_data_error_set(err, 40,
                                    "perf.data header: the data section starts at %llu, outside "
                                    "the file (%zu bytes)",
                                    (unsigned long long)doff, pd->size);
                return -EBADMSG;
        }
        pd->data_start = doff;
        if (dsize > UINT64_MAX - doff)
                dsize = UINT64_MAX - doff;
        pd->declared_end = doff + dsize;
        if (dsize == 0) {
                /* a recording that never finished: its header was not rewritten */
                pd->data_end = pd->size;
                if (pd->size > doff)
                        perf_data_warn(pd, 48,
                                       "perf.data header: data size 0 (perf record did not "
                                       "finish): reading the records to the end of the file");
        } else {
                pd->data_end = pd->declared_end < pd->size ? pd->declared_end : pd->size;
                read_features(pd);
        }
        return 0;
}

int perf_data_open_mem(struct perf_data **out, const uint8_t *data, size_t size,
                       struct err_msg *err)
{
        *out = NULL;
        if (err)
                memset(err, 0, sizeof(*err));
        if (size < 16) {
                perf_data_error_set(err, 0, "not a perf.data file: %zu bytes", size);
                return -EINVAL;
        }
        if (memcmp(data, PERF_DATA_MAGIC_BE, 8) == 0) {
                perf_data_error_set(err, 0, "perf.data file of a big-endian machine: not read");
                return -EPROTONOSUPPORT;
        }
        if (memcmp(data, PERF_DATA_MAGIC_V1, 8) == 0) {
                perf_data_error_set(err, 0, "perf.data file version 1 (PERFFILE): not read");
                return -EPROTONOSUPPORT;
        }
        if (memcmp(data, PERF_DATA_MAGIC, 8) != 0) {
                perf_data_error_set(err, 0, "not a perf.data file: no PERFILE2 magic");
                return -EINVAL;
        }
        struct perf_data *pd = xcalloc(1, sizeof(*pd));
        pd->data = data;
        pd->size = size;
        int rc;
        if (le_get64(data + 8) == PIPE_HEADER_SIZE) {
                pd->is_pipe = pd->info.is_pipe = true;
                pd->data_start = PIPE_HEADER_SIZE;
                pd->data_end = pd->declared_end = size;
                rc = 0;
        } else {
                rc = open_file_mode(pd, err);
        }
        if (rc < 0) {
                perf_data_close(pd);
                return rc;
        }
        pd->pos = pd->data_start;
        pd->main_data = pd->data;
        pd->main_size = pd->size;
        pd->main_start = pd->data_start;
        pd->main_end = pd->data_end;
        pd->main_declared_end = pd->declared_end;
        *out = pd;
        return 0;
}

static int read_all(int fd, uint8_t **buf, size_t *len)
{
        size_t cap = 1 << 16;
        *buf = xmalloc(cap);
        *len = 0;
        for (;;) {
                if (*len == cap) {
                        cap *= 2;
                        *buf = xrealloc(*buf, cap);
                }
                ssize_t n = read(fd, *buf + *len, cap - *len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0)
                        return 0;
                *len += (size_t)n;
        }
}

int perf_data_open_file(struct perf_data **out, const char *path, struct err_msg *err)
{
        *out = NULL;
        if (err)
                memset(err, 0, sizeof(*err));
        bool is_stdin = strcmp(path, "-") == 0;
        int fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
                int e = errno;
                perf_data_error_set(err, 0, "%s: %s", path, strerror(e));
                return -e;
        }
        struct stat st;
        void *map = NULL;
        uint8_t *buf = NULL;
        size_t size = 0;
        int rc = 0;
        struct perf_data_part *parts = NULL;
        uint32_t nr_parts = 0;
        bool is_dir = !is_stdin && fstat(fd, &st) == 0 && S_ISDIR(st.st_mode);
        if (is_dir) {
                rc = perf_data_dir_open(fd, path, &map, &size, &parts, &nr_parts, err);
                close(fd);
                if (rc < 0)
                        return rc;
                if (!map) {
                        perf_data_dir_free(parts, nr_parts);
                        perf_data_error_set(err, 0, "%s/data: the file is empty", path);
                        return -EINVAL;
                }
        } else if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
                size = (size_t)st.st_size;
                /* mapped whole at once: every byte is read (the scan, then the conversion),
                   and a fault per 64 KiB of a 100 MB file was 1,500 page faults */
                map = mmap(NULL, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
                if (map == MAP_FAILED) {
                        rc = -errno;
                        map = NULL;
                }
        } else {
                rc = read_all(fd, &buf, &size); /* a pipe: perf record -o - | etwtop ... */
        }
        if (!is_stdin && !is_dir)
                close(fd);
        if (rc < 0) {
                perf_data_error_set(err, 0, "%s: %s", path, strerror(-rc));
                free(buf);
                return rc;
        }
        const uint8_t *bytes = map ? map : buf;
        struct perf_data *pd = NULL;
        rc = perf_data_open_mem(&pd, bytes ? bytes : (const uint8_t *)"", bytes ? size : 0, err);
        if (rc < 0) {
                if (map)
                        munmap(map, size);
                free(buf);
                perf_data_dir_free(parts, nr_parts);
                if (err) {
                        char msg[sizeof(err->msg)];
                        snprintf(msg, sizeof(msg), "%s", err->msg);
                        snprintf(err->msg, sizeof(err->msg), "%.95s%s: %.150s", path,
                                 is_dir ? "/data" : "", msg);
                }
                return rc;
        }
        pd->parts = parts;
        pd->nr_parts = nr_parts;
        pd->map = map;
        pd->map_size = map ? size : 0;
        pd->buf = buf;
        *out = pd;
        return 0;
}

/* ---- records ---- */

/* Applies what perf's own records say of the events and the session. */
static void apply_record(struct perf_data *pd, const uint8_t *p, uint32_t size, uint32_t type,
                         uint64_t off)
{
        switch (type) {
        case PERF_DATA_HEADER_ATTR: {
                uint32_t asize = size >= RECORD_HEADER_SIZE + 8 ? le_get32(p + 12) : 0;
                if (asize == 0)
                        asize = ATTR_SIZE_VER0;
                if (asize < ATTR_SIZE_VER0 || asize > size - RECORD_HEADER_SIZE ||
                    pd->nr_events >= MAX_EVENTS) {
                        perf_data_warn(pd, off, "ATTR record: attr size %u in a record of %u",
                                       asize, size);
                        return;
                }
                uint32_t ev = perf_data_add_event(pd, p + RECORD_HEADER_SIZE, asize, NULL, 0);
                for (uint32_t o = RECORD_HEADER_SIZE + asize; o + 8 <= size; o += 8)
                        perf_data_add_id(pd, ev, le_get64(p + o));
                return;
        }
        case PERF_DATA_HEADER_FEATURE:
                if (size < RECORD_HEADER_SIZE + 8) {
                        perf_data_warn(pd, off, "FEATURE record of %u bytes", size);
                        return;
                }
                perf_data_feat_parse(pd, (uint32_t)le_get64(p + 8) & 0xffff, p + 16, size - 16,
                                     off + 16);
                return;
        case PERF_DATA_HEADER_TRACING_DATA:
                /* its bytes follow the record (perf_data_next checked they are there) */
                if (size < 12)
                        return;
                pd->info.tracing_data = p + size;
                pd->info.tracing_size = le_get32(p + 8);
                perf_data_name_tracepoints(pd);
                return;
        case PERF_DATA_HEADER_BUILD_ID:
                if (perf_data_build_id_add(pd, p, size) < 0)
                        perf_data_warn(pd, off, "BUILD_ID record of %u bytes", size);
                return;
        case PERF_DATA_ID_INDEX: {
                uint64_t nr = size >= 16 ? le_get64(p + 8) : 0;
                if (nr > (size - 16) / 32) {
                        perf_data_warn(pd, off, "ID_INDEX record: %llu entries in %u bytes",
                                       (unsigned long long)nr, size);
                        return;
                }
                for (uint64_t i = 0; i < nr; i++) {
                        const uint8_t *e = p + 16 + 32 * i;
                        uint64_t idx = le_get64(e + 8);
                        if (idx < pd->nr_events)
                                perf_data_add_id(pd, (uint32_t)idx, le_get64(e));
                }
                return;
        }
        case PERF_DATA_EVENT_UPDATE: {
                if (size < 24)
                        return;
                int32_t ev = perf_data_event_by_id(pd, le_get64(p + 16));
                if (le_get64(p + 8) == EVENT_UPDATE_NAME && ev >= 0)
                        perf_data_set_name(&pd->events[ev], (const char *)p + 24, size - 24);
                return;
        }
        default: return;
        }
}

/* The bytes that follow a record without being counted in its size. */
static uint64_t trailing_payload(const uint8_t *p, uint32_t size, uint32_t type)
{
        if (type == PERF_DATA_HEADER_TRACING_DATA && size >= 12)
                return ((uint64_t)le_get32(p + 8) + 7) & ~7ull;
        if (type == PERF_DATA_AUXTRACE && size >= 16)
                return le_get64(p + 8);
        return 0;
}

static void decompress_record(struct perf_data *pd, const uint8_t *p, uint32_t size, uint32_t type,
                              uint64_t off)
{
        const uint8_t *in = p + RECORD_HEADER_SIZE;
        uint64_t n = size - RECORD_HEADER_SIZE;
        if (type == PERF_DATA_COMPRESSED2) {
                uint64_t dsize = size >= 16 ? le_get64(p + 8) : UINT64_MAX;
                if (dsize > (uint64_t)size - 16) {
                        perf_data_warn(pd, off,
                                       "COMPRESSED2 record: %llu bytes of data in a record of %u",
                                       (unsigned long long)dsize, size);
                        return;
                }
                in = p + 16;
                n = dsize;
        }
        /* what is left of the previous record's output moves to the front */
        if (pd->dpos) {
                memmove(pd->dbuf, pd->dbuf + pd->dpos, pd->dlen - pd->dpos);
                pd->dlen -= pd->dpos;
                pd->dbase += pd->dpos;
                pd->dpos = 0;
        }
        pd->comp_offset = off;
        perf_data_zstd_append(pd, in, n, off);
}

/* A whole record from the decompressed bytes, or 0. */
static int next_decompressed(struct perf_data *pd, struct perf_data_record *rec)
{
        size_t left = pd->dlen - pd->dpos;
        if (left < RECORD_HEADER_SIZE)
                return 0;
        const uint8_t *p = pd->dbuf + pd->dpos;
        uint32_t size = le_get16(p + 6), type = le_get32(p);
        if (size < RECORD_HEADER_SIZE) {
                perf_data_warn(pd, pd->comp_offset,
                               "decompressed record at %llu: size %u below its header; the rest "
                               "of the compressed data skipped",
                               (unsigned long long)(pd->dbase + pd->dpos), size);
                pd->dpos = pd->dlen = 0;
                return 0;
        }
        if (size > left)
                return 0; /* continues in the next compressed record */
        *rec = (struct perf_data_record){.data = p,
                                         .size = size,
                                         .type = type,
                                         .misc = le_get16(p + 4),
                                         .offset = pd->comp_offset,
                                         .inner_offset = pd->dbase + pd->dpos,
                                         .is_decompressed = true};
        pd->dpos += size;
        if (type == PERF_DATA_COMPRESSED || type == PERF_DATA_COMPRESSED2)
                perf_data_warn(pd, pd->comp_offset, "a compressed record inside compressed data");
        else if (type != PERF_DATA_HEADER_TRACING_DATA) /* its data would follow, outside */
                apply_record(pd, p, size, type, pd->comp_offset);
        rec->event = record_event(pd, p, size, type);
        return 1;
}

/* A perf.data directory's next data.N file: its records from its first byte, its compressed
   records a stream of their own (each recording thread compressed its own). */
static void next_part(struct perf_data *pd)
{
        const struct perf_data_part *pt = &pd->parts[pd->part++];
        pd->data = pt->map ? pt->map : (const uint8_t *)"";
        pd->size = pt->size;
        pd->data_start = 0;
        pd->data_end = pd->declared_end = pt->size;
        pd->pos = 0;
        pd->dlen = pd->dpos = 0;
        pd->dbase = 0;
        perf_data_zstd_free(pd->zstd);
        pd->zstd = NULL;
        snprintf(pd->where, sizeof(pd->where), "%s: ", pt->name);
}

int perf_data_next(struct perf_data *pd, struct perf_data_record *rec, struct err_msg *err)
{
        if (next_decompressed(pd, rec))
                return 1;
        if (pd->is_done)
                return 0;
        uint64_t off = pd->pos;
        while (off >= pd->data_end) {
                if (pd->dlen > pd->dpos)
                        perf_data_warn(pd, pd->comp_offset,
                                       "%s%zu decompressed bytes at the end are not a whole "
                                       "record",
                                       pd->where, pd->dlen - pd->dpos);
                if (pd->declared_end > pd->size) {
                        pd->is_done = true;
                        perf_data_error_set(err, pd->size,
                                            "the file ends at %zu bytes, in its data section "
                                            "(%llu to %llu): truncated",
                                            pd->size, (unsigned long long)pd->data_start,
                                            (unsigned long long)pd->declared_end);
                        return -EBADMSG;
                }
                if (pd->part == pd->nr_parts) {
                        pd->is_done = true;
                        return 0;
                }
                next_part(pd);
                off = pd->pos;
        }
        const uint8_t *p = pd->data + off;
        uint64_t left = pd->data_end - off;
        if (left < RECORD_HEADER_SIZE) {
                pd->is_done = true;
                perf_data_error_set(err, off,
                                    "%srecord at %llu: %llu bytes left, less than a record header "
                                    "(truncated?)",
                                    pd->where, (unsigned long long)off, (unsigned long long)left);
                return -EBADMSG;
        }
        uint32_t type = le_get32(p), size = le_get16(p + 6);
        if (size < RECORD_HEADER_SIZE || size > left) {
                pd->is_done = true;
                perf_data_error_set(err, off, "%s%s record (type %u) at %llu: size %u %s",
                                    pd->where, perf_data_type_name(type), type,
                                    (unsigned long long)off, size,
                                    size < RECORD_HEADER_SIZE ? "is below its header's"
                                                              : "runs past the end (truncated?)");
                return -EBADMSG;
        }
        uint64_t extra = trailing_payload(p, size, type);
        if (extra > left - size) {
                pd->is_done = true;
                perf_data_error_set(err, off,
                                    "%s%s record at %llu: its %llu bytes of data run past the end "
                                    "(truncated?)",
                                    pd->where, perf_data_type_name(type), (unsigned long long)off,
                                    (unsigned long long)extra);
                return -EBADMSG;
        }
        pd->pos = off + size + extra;
        *rec = (struct perf_data_record){
                .data = p, .size = size, .type = type, .misc = le_get16(p + 4), .offset = off};
        if (type == PERF_DATA_COMPRESSED || type == PERF_DATA_COMPRESSED2)
                decompress_record(pd, p, size, type, off);
        else
                apply_record(pd, p, size, type, off);
        rec->event = record_event(pd, p, size, type);
        return 1;
}

void perf_data_rewind(struct perf_data *pd)
{
        pd->data = pd->main_data;
        pd->size = pd->main_size;
        pd->data_start = pd->main_start;
        pd->data_end = pd->main_end;
        pd->declared_end = pd->main_declared_end;
        pd->part = 0;
        pd->where[0] = 0;
        pd->pos = pd->data_start;
        pd->is_done = false;
        pd->dlen = pd->dpos = 0;
        pd->dbase = 0;
        perf_data_zstd_free(pd->zstd);
        pd->zstd = NULL;
        if (pd->is_pipe) {
                /* the attrs and features come again from the records */
                perf_data_free_events(pd);
                perf_data_info_free(&pd->info);
                pd->info.is_pipe = true;
        }
}

const struct err_msg *perf_data_last_warning(const struct perf_data *pd)
{
        return &pd->warning;
}

uint64_t perf_data_nr_warnings(const struct perf_data *pd)
{
        return pd->nr_warnings;
}

const struct perf_data_info *perf_data_info(const struct perf_data *pd)
{
        return &pd->info;
}

uint32_t perf_data_nr_events(const struct perf_data *pd)
{
        return pd->nr_events;
}

const struct perf_data_event *perf_data_event(const struct perf_data *pd, uint32_t i)
{
        return i < pd->nr_events ? &pd->events[i] : NULL;
}
