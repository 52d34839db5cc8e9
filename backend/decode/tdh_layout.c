/* SPDX-License-Identifier: MIT */
/* tdh_layout.c: owns the layout check of an event the trace's metadata describes: where each of
 * its properties ends and whether the payload holds them, without their text, so that the
 * decoder can leave the fields to be decoded when a consumer asks for them (kevent_fields);
 * tdh_decode, which checks or decodes. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "kevent_mof.h"
#include "le_bytes.h"
#include "tdh_layout.h"
#include "tdh_types.h"
#include "util/xalloc.h"

#define NR_VALUES 256 /* the top-level values tdh_meta.c keeps for counts and lengths */

/* What one top-level property takes, as tdh_meta.c's prop() reads it. */
enum step_op {
        STEP_INT,    /* one integer alone (prop_int): size bytes, kept when a count reads it */
        STEP_FIXED,  /* one value of a fixed size through value() */
        STEP_ARRAY,  /* count values of size bytes (int_array) */
        STEP_WSTR,   /* UTF-16: NUL-terminated, length units, or the rest */
        STEP_ASTR,   /* 8-bit: NUL-terminated, counted, length bytes, or the rest */
        STEP_WCOUNT, /* UTF-16 counted by a 16-bit byte count */
        STEP_SID,    /* a SID (after two pointers for a WBEM SID) */
        STEP_BINARY, /* length bytes, or a 32-bit count then the bytes (hex dump) */
        STEP_FAIL,   /* a property value() cannot place: the decode fails here */
};

struct tdh_step {
        uint8_t op;
        uint8_t nptr;  /* STEP_FIXED: the pointers it takes besides size */
        uint16_t size; /* STEP_INT, STEP_ARRAY: bytes a value, 9: the pointer's; STEP_FIXED:
                          the bytes of a run of properties, besides nptr pointers */
        uint8_t in_type;
        bool is_signed;     /* STEP_INT */
        bool is_kept;       /* STEP_INT: a later property's count or length */
        bool is_count_kept; /* count is the index of a kept value, else the count itself */
        bool is_length_kept;
        uint16_t prop;
        uint16_t count;
        uint16_t length;
};

void tdh_layout_free(struct tdh_event *e)
{
        free(e->steps);
        e->steps = NULL;
        e->nr_steps = 0;
}

/* The count or length property idx as the decode of property i reads it: a kept value when it
   is a plain integer decoded before i, else 0 (nothing decoded there yet, or a text, an array:
   their values stay 0). false when the decode's value cannot be known without decoding (an
   integer read through a map, a port or an address). */
static bool source_of(const struct tdh_event *e, uint32_t i, uint16_t idx, bool *is_kept)
{
        const struct tdh_prop *src = &e->props[idx];

        *is_kept = false;
        if (idx >= i)
                return true;
        if (src->is_plain_int) {
                *is_kept = true;
                return true;
        }
        if (src->flags & (PROPERTY_STRUCT | PROPERTY_PARAM_COUNT) || src->count > 1)
                return true; /* arrays and structs leave their value 0 */
        switch (src->in_type) {
        case IN_GUID:
        case IN_SYSTEMTIME:
        case IN_FLOAT:
        case IN_DOUBLE: return true;             /* always text */
        default: return !tdh_fixed_size(src, 8); /* the variable ones are texts */
        }
}

/* The step of a property prop() reads by its general path, or false when there is none. */
static bool general_step(const struct tdh_event *e, uint32_t i, struct tdh_step *s)
{
        const struct tdh_prop *pr = &e->props[i];
        uint32_t nr_values = e->nr_props < NR_VALUES ? e->nr_props : NR_VALUES;
        size_t fixed = tdh_fixed_size(pr, 8);

        if (pr->flags & PROPERTY_STRUCT)
                return false;
        if (((pr->flags & PROPERTY_PARAM_COUNT) && pr->count >= nr_values) ||
            ((pr->flags & PROPERTY_PARAM_LENGTH) && pr->length >= nr_values)) {
                s->op = STEP_FAIL;
                return true;
        }
        s->count = pr->count;
        if (pr->flags & PROPERTY_PARAM_COUNT) {
                if (!source_of(e, i, pr->count, &s->is_count_kept))
                        return false;
                if (!s->is_count_kept)
                        s->count = 0;
        }
        s->length = pr->length;
        if (pr->flags & PROPERTY_PARAM_LENGTH) {
                if (!source_of(e, i, pr->length, &s->is_length_kept))
                        return false;
                if (!s->is_length_kept)
                        s->length = 0;
        }
        s->size = pr->in_type == IN_POINTER || pr->in_type == IN_SIZET ? 9 : (uint8_t)fixed;
        if ((pr->flags & PROPERTY_PARAM_COUNT) || pr->count > 1) {
                /* an array: tdh_meta.c's int_array() for these, an element at a time else */
                if (pr->map_name || !fixed || pr->in_type == IN_GUID ||
                    pr->in_type == IN_SYSTEMTIME || pr->in_type == IN_FLOAT ||
                    pr->in_type == IN_DOUBLE)
                        return false;
                s->op = STEP_ARRAY;
                return true;
        }
        if (fixed) {
                s->op = STEP_FIXED;
                s->nptr = s->size == 9;
                s->size = s->size == 9 ? 0 : s->size;
                return true;
        }
        switch (pr->in_type) {
        case IN_UNICODESTRING:
        case IN_NONNULLTERMINATEDSTRING: s->op = STEP_WSTR; break;
        case IN_ANSISTRING:
        case IN_NONNULLTERMINATEDANSISTRING:
        case IN_COUNTEDANSISTRING:
        case IN_REVERSEDCOUNTEDANSISTRING: s->op = STEP_ASTR; break;
        case IN_COUNTEDSTRING:
        case IN_REVERSEDCOUNTEDSTRING: s->op = STEP_WCOUNT; break;
        case IN_SID:
        case IN_WBEMSID: s->op = STEP_SID; break;
        case IN_BINARY:
        case IN_HEXDUMP: s->op = STEP_BINARY; break;
        default: s->op = STEP_FAIL; break;
        }
        return true;
}

void tdh_layout_make(struct tdh_event *e)
{
        uint32_t end = e->nr_top < e->nr_props ? e->nr_top : e->nr_props;
        struct tdh_step *steps = xcalloc(end ? end : 1, sizeof(*steps));
        uint32_t nr = 0;

        tdh_layout_free(e);
        for (uint32_t i = 0; i < end; i++) {
                const struct tdh_prop *pr = &e->props[i];
                struct tdh_step *s = &steps[nr++];

                s->prop = (uint16_t)i;
                s->in_type = (uint8_t)pr->in_type;
                if (pr->is_plain_int) {
                        s->op = STEP_INT;
                        s->size = tdh_int_types[pr->in_type].size;
                        s->is_signed = tdh_int_types[pr->in_type].is_signed;
                        continue;
                }
                if (i > UINT16_MAX || !general_step(e, i, s)) {
                        free(steps);
                        return; /* decoded whole when it comes */
                }
                if (s->op == STEP_FAIL)
                        break; /* nothing after it is read */
        }
        /* the integers a later count or length reads */
        for (uint32_t k = 0; k < nr; k++) {
                if (steps[k].is_count_kept)
                        steps[steps[k].count].is_kept = true;
                if (steps[k].is_length_kept)
                        steps[steps[k].length].is_kept = true;
        }
        /* a run of integers no count reads and fixed-size values is one step: its bytes are
           there or the decode fails inside it, wherever */
        uint32_t o = 0;
        for (uint32_t k = 0; k < nr; k++) {
                struct tdh_step s = steps[k];
                bool is_plain = (s.op == STEP_INT && !s.is_kept) ||
                                (s.op == STEP_FIXED && !s.is_length_kept);

                if (is_plain) {
                        unsigned nptr = s.op == STEP_INT ? s.size == 9 : s.nptr;
                        unsigned size = s.op == STEP_INT && s.size == 9 ? 0 : s.size;
                        struct tdh_step *last = o ? &steps[o - 1] : NULL;

                        if (last && last->op == STEP_FIXED && !last->is_length_kept &&
                            last->size + size <= UINT16_MAX && last->nptr + nptr <= UINT8_MAX) {
                                last->size = (uint16_t)(last->size + size);
                                last->nptr = (uint8_t)(last->nptr + nptr);
                                continue;
                        }
                        s.op = STEP_FIXED;
                        s.size = (uint16_t)size;
                        s.nptr = (uint8_t)nptr;
                        s.length = 0;
                }
                steps[o++] = s;
        }
        e->steps = steps;
        e->nr_steps = o;
}

/* The next n bytes, as tdh_meta.c's take(). */
static inline bool take(size_t size, size_t *at, uint64_t n)
{
        if (*at > size || n > size - *at)
                return false;
        *at += (size_t)n;
        return true;
}

int tdh_layout_check(const struct tdh_event *e, const uint8_t *p, size_t size, unsigned psize)
{
        uint64_t values[NR_VALUES]; /* only the kept ones are written, and read */
        size_t at = 0;

        for (uint32_t k = 0; k < e->nr_steps; k++) {
                const struct tdh_step *s = &e->steps[k];

                if (s->op == STEP_FIXED && !s->is_length_kept) {
                        /* most steps: a run of fixed-size properties */
                        if (!take(size, &at, s->size + (size_t)s->nptr * psize))
                                return -EBADMSG;
                        continue;
                }

                size_t n = s->size == 9 ? psize : s->size;

                if (s->op == STEP_INT) {
                        if (!take(size, &at, n))
                                return -EBADMSG;
                        if (s->is_kept) {
                                const uint8_t *q = p + at - n;
                                uint64_t v;
                                switch (n) {
                                case 1:
                                        v = s->is_signed ? (uint64_t)(int64_t)(int8_t)q[0] : q[0];
                                        break;
                                case 2:
                                        v = s->is_signed ? (uint64_t)(int64_t)(int16_t)le_get16(q)
                                                         : le_get16(q);
                                        break;
                                case 4:
                                        v = s->is_signed ? (uint64_t)(int64_t)(int32_t)le_get32(q)
                                                         : le_get32(q);
                                        break;
                                default: v = le_get64(q); break;
                                }
                                values[s->prop] = v;
                        }
                        continue;
                }
                uint64_t count = s->is_count_kept ? values[s->count] : s->count;
                uint64_t length = s->is_length_kept ? values[s->length] : s->length;

                if (count > 4096 || length > 65536)
                        return -EBADMSG;
                switch ((enum step_op)s->op) {
                case STEP_INT: break;
                case STEP_FIXED:
                        if (!take(size, &at, s->size + (size_t)s->nptr * psize))
                                return -EBADMSG;
                        break;
                case STEP_ARRAY:
                        if (!take(size, &at, count * n))
                                return -EBADMSG;
                        break;
                case STEP_WSTR:
                        if (length || s->in_type == IN_NONNULLTERMINATEDSTRING) {
                                uint64_t m = length * 2;
                                if (s->in_type == IN_NONNULLTERMINATEDSTRING)
                                        m = size - (at < size ? at : size);
                                if (!take(size, &at, m))
                                        return -EBADMSG;
                        } else {
                                if (at >= size)
                                        return -EBADMSG;
                                at = kdecoder_utf16_end(p, size, at);
                        }
                        break;
                case STEP_ASTR: {
                        uint64_t m;
                        if (s->in_type == IN_COUNTEDANSISTRING ||
                            s->in_type == IN_REVERSEDCOUNTEDANSISTRING) {
                                if (!take(size, &at, 2))
                                        return -EBADMSG;
                                const uint8_t *q = p + at - 2;
                                m = s->in_type == IN_COUNTEDANSISTRING ? le_get16(q)
                                                                       : (size_t)(q[0] << 8 | q[1]);
                        } else if (length) {
                                m = length;
                        } else if (s->in_type == IN_NONNULLTERMINATEDANSISTRING) {
                                m = size - (at < size ? at : size);
                        } else {
                                if (at >= size)
                                        return -EBADMSG;
                                const uint8_t *z = memchr(p + at, 0, size - at);
                                m = z ? (size_t)(z - (p + at)) + 1 : size - at;
                        }
                        if (!take(size, &at, m))
                                return -EBADMSG;
                        break;
                }
                case STEP_WCOUNT: {
                        if (!take(size, &at, 2))
                                return -EBADMSG;
                        const uint8_t *q = p + at - 2;
                        uint64_t m = s->in_type == IN_COUNTEDSTRING ? le_get16(q)
                                                                    : (size_t)(q[0] << 8 | q[1]);
                        if (!take(size, &at, m))
                                return -EBADMSG;
                        break;
                }
                case STEP_SID: {
                        size_t skip = s->in_type == IN_WBEMSID ? 2u * psize : 0;
                        if (!take(size, &at, skip) || size - at < 8)
                                return -EBADMSG;
                        if (!take(size, &at, 8 + 4u * p[at + 1]))
                                return -EBADMSG;
                        break;
                }
                case STEP_BINARY: {
                        uint64_t m = length;
                        if (s->in_type == IN_HEXDUMP) {
                                if (!take(size, &at, 4))
                                        return -EBADMSG;
                                m = le_get32(p + at - 4);
                        }
                        if (!take(size, &at, m))
                                return -EBADMSG;
                        break;
                }
                case STEP_FAIL: return -EBADMSG;
                }
        }
        return 0;
}

int tdh_decode(const struct tdh_registry *r, const struct tdh_event *e, struct kdecoder *d,
               struct kevent *ev, const uint8_t *p, size_t size, unsigned psize)
{
        int rc;

        ev->type = KEV_FIELDS;
        if (e->steps) {
                /* where the properties end, not their text: that when a consumer asks */
                rc = tdh_layout_check(e, p, size, psize);
                ev->fields.nr = 0;
                ev->fields.list = NULL;
                ev->fields.lazy = rc ? NULL : kdecoder_lazy_arm(d, tdh_fill, e, r, p, size, psize);
        } else {
                rc = tdh_fill(d, e, r, p, size, psize, &ev->fields.nr);
                ev->fields.list = kdecoder_field_slots(d);
                ev->fields.lazy = NULL;
        }
        if (rc)
                return rc;
        ev->name = e->name;
        return 0;
}
