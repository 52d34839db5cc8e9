/* SPDX-License-Identifier: MIT */
/* curl_lazy.h: libcurl's functions the symbol servers use, loaded at their first use. */
#ifndef ETWTOP_CURL_LAZY_H
#define ETWTOP_CURL_LAZY_H

#include <curl/curl.h>
#include <stddef.h>

struct curl_lazy {
        CURLcode (*global_init)(long flags);
        void (*global_cleanup)(void);
        CURL *(*easy_init)(void);
        CURLcode (*easy_setopt)(CURL *c, CURLoption opt, ...);
        CURLcode (*easy_perform)(CURL *c);
        CURLcode (*easy_getinfo)(CURL *c, CURLINFO info, ...);
        void (*easy_cleanup)(CURL *c);
        const char *(*easy_strerror)(CURLcode code);
        char *(*easy_escape)(CURL *c, const char *s, int length);
        void (*free)(void *p);
};

/* libcurl (CURL_LAZY_SONAME), loaded once by the first caller of any thread; NULL, with why
   (when given) saying what is missing, where it cannot be loaded. */
const struct curl_lazy *curl_lazy(char *why, size_t why_size);

#endif
