/* SPDX-License-Identifier: MIT */
/* etl_zip.c: owns reading a zip archive (APPNOTE.TXT: the end of central directory record, its
   Zip64 form, the central directory, a local file header) far enough to inflate its one .etl
   entry. */
#include "etl_zip.h"

#include "le_bytes.h"
#include "util/err.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>

#define SIG_LOCAL      0x04034b50u
#define SIG_CENTRAL    0x02014b50u
#define SIG_END        0x06054b50u
#define SIG_END64      0x06064b50u
#define SIG_END64_LOC  0x07064b50u
#define END_SIZE       22u
#define END64_LOC_SIZE 20u
#define END64_SIZE     56u
#define CENTRAL_SIZE   46u
#define LOCAL_SIZE     30u
#define MAX_COMMENT    0xffffu
#define ZIP64_EXTRA_ID 0x0001u

bool etl_zip_is_zip(const uint8_t *data, size_t size)
{
        return size >= 4 && (le_get32(data) == SIG_LOCAL || le_get32(data) == SIG_END);
}

/* The central directory: where it starts, how long it is, how many entries it holds. */
struct directory {
        uint64_t offset, size, nr;
};

/* Whether [off, off + len) lies inside size bytes. */
static bool inside(uint64_t off, uint64_t len, size_t size)
{
        return off <= size && len <= size - off;
}

/* The end of central directory record: the last one in the final 64 KiB + 22 bytes whose
   comment reaches the archive's end exactly; its Zip64 form where a field is saturated. */
static int find_directory(const uint8_t *d, size_t size, struct directory *dir,
                          struct etl_error *err)
{
        if (size < END_SIZE) {
                etl_error_set(err, 0, "a damaged zip archive: %zu bytes, no end record", size);
                return -EINVAL;
        }
        size_t lowest = size - END_SIZE > MAX_COMMENT ? size - END_SIZE - MAX_COMMENT : 0;
        size_t at = size - END_SIZE + 1;
        bool is_found = false;
        while (at-- > lowest)
                if (le_get32(d + at) == SIG_END && at + END_SIZE + le_get16(d + at + 20) <= size) {
                        is_found = true;
                        break;
                }
        if (!is_found) {
                etl_error_set(err, size,
                              "a damaged zip archive: no end of central directory record in "
                              "its last 64 KiB (cut short?)");
                return -EINVAL;
        }
        const uint8_t *e = d + at;
        if (le_get16(e + 4) != 0 || le_get16(e + 6) != 0) {
                etl_error_set(err, at, "a zip archive of several parts (spanned): join them first");
                return -EINVAL;
        }
        dir->nr = le_get16(e + 10);
        dir->size = le_get32(e + 12);
        dir->offset = le_get32(e + 16);
        if (dir->nr == 0xffff || dir->size == 0xffffffffu || dir->offset == 0xffffffffu) {
                /* Zip64: the locator just before, naming the Zip64 end record */
                const uint8_t *l = at >= END64_LOC_SIZE ? e - END64_LOC_SIZE : NULL;
                if (!l || le_get32(l) != SIG_END64_LOC) {
                        etl_error_set(err, at,
                                      "a damaged zip archive: its end record's fields are "
                                      "saturated and no Zip64 locator precedes it");
                        return -EINVAL;
                }
                uint64_t off64 = le_get64(l + 8);
                if (!inside(off64, END64_SIZE, size) || le_get32(d + off64) != SIG_END64) {
                        etl_error_set(err, at - END64_LOC_SIZE + 8,
                                      "a damaged zip archive: its Zip64 end record at byte "
                                      "%llu is not one",
                                      (unsigned long long)off64);
                        return -EINVAL;
                }
                dir->nr = le_get64(d + off64 + 32);
                dir->size = le_get64(d + off64 + 40);
                dir->offset = le_get64(d + off64 + 48);
        }
        if (!inside(dir->offset, dir->size, size) || dir->nr > dir->size / CENTRAL_SIZE) {
                etl_error_set(err, at,
                              "a damaged zip archive: its central directory (%llu entries, "
                              "%llu bytes at byte %llu) is not inside its %zu bytes",
                              (unsigned long long)dir->nr, (unsigned long long)dir->size,
                              (unsigned long long)dir->offset, size);
                return -EINVAL;
        }
        return 0;
}

/* An entry of the central directory, as the reader needs it. */
struct entry {
        uint64_t at; /* of its central directory record */
        const char *name;
        uint32_t name_len;
        uint16_t flags, method;
        uint32_t crc;
        uint64_t packed, size, local;
};

/* The Zip64 extended information of an entry (extra[0..len)): its 64-bit fields, for those the
   record saturated, in the order APPNOTE gives. */
static bool zip64_fields(struct entry *e, const uint8_t *extra, uint32_t len)
{
        bool need_size = e->size == 0xffffffffu, need_packed = e->packed == 0xffffffffu,
             need_local = e->local == 0xffffffffu;
        if (!need_size && !need_packed && !need_local)
                return true;
        for (uint32_t at = 0; at + 4 <= len;) {
                uint16_t id = le_get16(extra + at), n = le_get16(extra + at + 2);
                if (at + 4 + n > len)
                        return false;
                if (id == ZIP64_EXTRA_ID) {
                        const uint8_t *f = extra + at + 4, *end = f + n;
                        uint64_t *fields[3] = {need_size ? &e->size : NULL,
                                               need_packed ? &e->packed : NULL,
                                               need_local ? &e->local : NULL};
                        for (int i = 0; i < 3; i++) {
                                if (!fields[i])
                                        continue;
                                if (end - f < 8)
                                        return false;
                                *fields[i] = le_get64(f);
                                f += 8;
                        }
                        return true;
                }
                at += 4 + n;
        }
        return false;
}

/* name[0..len) appended to dst (n bytes used of cap), at most max bytes of it, each byte that is
   not printable ASCII as '?': an archive's names go to a terminal. Returns the new n. */
static size_t put_printable(char *dst, size_t n, size_t cap, const char *name, uint32_t len,
                            uint32_t max)
{
        for (uint32_t k = 0; k < len && k < max && n + 1 < cap; k++) {
                unsigned char ch = (unsigned char)name[k];
                dst[n++] = ch >= 0x20 && ch < 0x7f ? (char)ch : '?';
        }
        dst[n] = '\0';
        return n;
}

static bool is_etl_name(const char *name, uint32_t len)
{
        return len > 4 && name[len - 1] != '/' && strncasecmp(name + len - 4, ".etl", 4) == 0;
}

/* The one .etl entry of the directory into *found. */
static int find_entry(const uint8_t *d, const struct directory *dir, struct entry *found,
                      struct etl_error *err)
{
        uint64_t at = dir->offset, end = dir->offset + dir->size;
        uint64_t nr_etl = 0;
        char names[160] = "";
        for (uint64_t i = 0; i < dir->nr; i++) {
                if (end - at < CENTRAL_SIZE || le_get32(d + at) != SIG_CENTRAL) {
                        etl_error_set(err, at,
                                      "a damaged zip archive: central directory entry %llu is "
                                      "not one",
                                      (unsigned long long)i);
                        return -EINVAL;
                }
                const uint8_t *c = d + at;
                struct entry e = {.at = at,
                                  .name = (const char *)c + CENTRAL_SIZE,
                                  .name_len = le_get16(c + 28),
                                  .flags = le_get16(c + 8),
                                  .method = le_get16(c + 10),
                                  .crc = le_get32(c + 16),
                                  .packed = le_get32(c + 20),
                                  .size = le_get32(c + 24),
                                  .local = le_get32(c + 42)};
                uint32_t extra_len = le_get16(c + 30);
                uint64_t len = (uint64_t)CENTRAL_SIZE + e.name_len + extra_len + le_get16(c + 32);
                if (end - at < len) {
                        etl_error_set(err, at,
                                      "a damaged zip archive: central directory entry %llu "
                                      "runs past the directory's end",
                                      (unsigned long long)i);
                        return -EINVAL;
                }
                if (is_etl_name(e.name, e.name_len)) {
                        if (!zip64_fields(&e, c + CENTRAL_SIZE + e.name_len, extra_len)) {
                                etl_error_set(err, at,
                                              "a damaged zip archive: the Zip64 sizes of "
                                              "entry %llu are missing or cut short",
                                              (unsigned long long)i);
                                return -EINVAL;
                        }
                        if (nr_etl++ == 0)
                                *found = e;
                        size_t n = strlen(names);
                        if (n)
                                n = put_printable(names, n, sizeof(names), ", ", 2, 2);
                        put_printable(names, n, sizeof(names), e.name, e.name_len, 60);
                }
                at += len;
        }
        if (nr_etl == 0) {
                etl_error_set(err, dir->offset,
                              "a zip archive that holds no .etl file (%llu entries)",
                              (unsigned long long)dir->nr);
                return -ENOENT;
        }
        if (nr_etl > 1) {
                etl_error_set(err, dir->offset,
                              "a zip archive that holds %llu .etl files (%s): unzip it and give "
                              "one, or --merge them",
                              (unsigned long long)nr_etl, names);
                return -EINVAL;
        }
        return 0;
}

/* Inflates e's raw deflate stream src[0..e->packed) into out[0..e->size). */
static int inflate_entry(const uint8_t *src, const struct entry *e, uint8_t *out, uint64_t *got)
{
        z_stream z;
        memset(&z, 0, sizeof(z));
        if (inflateInit2(&z, -MAX_WBITS) != Z_OK)
                return Z_MEM_ERROR;
        uint64_t in_left = e->packed, out_left = e->size;
        const uint8_t *in = src;
        uint8_t *o = out;
        int rc = Z_OK;
        while (rc == Z_OK) {
                /* zlib's counts are 32-bit: the stream in slices */
                uInt in_n = in_left > 1u << 30 ? 1u << 30 : (uInt)in_left;
                uInt out_n = out_left > 1u << 30 ? 1u << 30 : (uInt)out_left;
                z.next_in = (Bytef *)(uintptr_t)in;
                z.avail_in = in_n;
                z.next_out = o;
                z.avail_out = out_n;
                rc = inflate(&z, Z_NO_FLUSH);
                in += in_n - z.avail_in;
                in_left -= in_n - z.avail_in;
                o += out_n - z.avail_out;
                out_left -= out_n - z.avail_out;
                if (rc == Z_OK && in_n == z.avail_in && out_n == z.avail_out)
                        rc = Z_BUF_ERROR; /* no progress: input or room ran out */
        }
        inflateEnd(&z);
        *got = (uint64_t)(o - out);
        return rc == Z_STREAM_END ? Z_OK : rc;
}

int etl_zip_extract(const uint8_t *data, size_t size, uint8_t **out, size_t *out_size,
                    char *out_name, size_t out_name_size, struct etl_error *err)
{
        *out = NULL;
        *out_size = 0;
        if (out_name_size)
                out_name[0] = '\0';
        char name[128] = ""; /* the messages name it */
        struct directory dir;
        struct entry e = {0};
        int rc = find_directory(data, size, &dir, err);
        if (rc == 0)
                rc = find_entry(data, &dir, &e, err);
        if (rc < 0)
                return rc;
        /* the archive's name, printable: it goes to a terminal */
        put_printable(name, 0, sizeof(name), e.name, e.name_len, UINT32_MAX);
        if (out_name_size)
                snprintf(out_name, out_name_size, "%s", name);
        if (e.flags & 1) {
                etl_error_set(err, e.at, "%s in the zip archive is encrypted", name);
                return -EINVAL;
        }
        if (e.method != 0 && e.method != 8) {
                etl_error_set(err, e.at,
                              "%s in the zip archive is compressed with method %u%s (stored and "
                              "deflate are read): unzip it with a tool that reads it",
                              name, e.method, e.method == 9 ? ", Deflate64" : "");
                return -EINVAL;
        }
        /* the local header: its own name and extra lengths say where the data starts */
        if (!inside(e.local, LOCAL_SIZE, size) || le_get32(data + e.local) != SIG_LOCAL) {
                etl_error_set(err, e.at,
                              "a damaged zip archive: the local header of %s at byte %llu is "
                              "not one",
                              name, (unsigned long long)e.local);
                return -EINVAL;
        }
        uint64_t start = e.local + LOCAL_SIZE + le_get16(data + e.local + 26) +
                         le_get16(data + e.local + 28);
        if (!inside(start, e.packed, size)) {
                etl_error_set(err, e.local,
                              "a damaged zip archive: %s's %llu bytes at byte %llu run past its "
                              "end (%zu bytes: cut short?)",
                              name, (unsigned long long)e.packed, (unsigned long long)start, size);
                return -EINVAL;
        }
        /* deflate turns at most about two bits into 258 bytes: a larger claim is not believed,
           nor asked of malloc */
        if (e.size == 0 || (e.method == 0 && e.size != e.packed) || e.size / 1032 > e.packed + 1 ||
            e.size > SIZE_MAX / 2) {
                etl_error_set(err, e.at,
                              "%s in the zip archive: %llu bytes from %llu is not believable", name,
                              (unsigned long long)e.size, (unsigned long long)e.packed);
                return -EINVAL;
        }
        uint8_t *buf = malloc((size_t)e.size);
        if (!buf) {
                etl_error_set(err, e.at, "out of memory for the %llu bytes of %s",
                              (unsigned long long)e.size, name);
                return -ENOMEM;
        }
        uint64_t got = e.size;
        if (e.method == 0)
                memcpy(buf, data + start, (size_t)e.size);
        else if ((rc = inflate_entry(data + start, &e, buf, &got)) != Z_OK || got != e.size) {
                etl_error_set(err, start,
                              "%s in the zip archive does not inflate (%s after %llu of its "
                              "%llu bytes)",
                              name, rc == Z_MEM_ERROR ? "out of memory" : "damaged data",
                              (unsigned long long)got, (unsigned long long)e.size);
                free(buf);
                return rc == Z_MEM_ERROR ? -ENOMEM : -EINVAL;
        }
        uint32_t crc = (uint32_t)crc32_z(0, buf, (z_size_t)e.size);
        if (crc != e.crc) {
                etl_error_set(err, start,
                              "%s in the zip archive is damaged: CRC-32 %08x, the archive says "
                              "%08x",
                              name, crc, e.crc);
                free(buf);
                return -EINVAL;
        }
        *out = buf;
        *out_size = (size_t)e.size;
        return 0;
}

int etl_zip_entry_open(struct etl_reader **out, const uint8_t *etl, size_t n, const char *name,
                       struct etl_error *err)
{
        int rc = etl_reader_open_mem(out, etl, n, err);
        if (rc < 0) {
                char prefix[128];
                snprintf(prefix, sizeof(prefix), "%.100s in the zip archive: ", name);
                err_prefix(err, prefix, (int)sizeof(prefix));
        }
        return rc;
}

int etl_zip_reader_open(struct etl_reader **out, const uint8_t *data, size_t size,
                        struct etl_error *err)
{
        *out = NULL;
        uint8_t *buf;
        size_t n;
        char name[128];
        int rc = etl_zip_extract(data, size, &buf, &n, name, sizeof(name), err);
        if (rc < 0)
                return rc;
        rc = etl_zip_entry_open(out, buf, n, name, err);
        if (rc < 0) {
                free(buf);
                return rc;
        }
        etl_reader_set_release(*out, free, buf);
        return 0;
}
