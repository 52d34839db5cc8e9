/* SPDX-License-Identifier: MIT */
/* module_name.h: a module's short name from its path, and the module+offset form of an address. */
#ifndef ETWTOP_SYMBOLS_MODULE_NAME_H
#define ETWTOP_SYMBOLS_MODULE_NAME_H

#include <stddef.h>
#include <stdint.h>

/* The last component of a Linux or Windows (NT or DOS) path: "ntdll.dll" for
   "\Device\HarddiskVolume2\Windows\System32\ntdll.dll", "libc.so.6" for "/usr/lib/libc.so.6".
   Returns a pointer into path (borrowed); "" for NULL. */
const char *module_name_of_path(const char *path);

/* A module's short name, as perf report's Shared Object column has it, into buf (always
   NUL-terminated): module_name_of_path's, but "[ext4]" for a Linux kernel module's file
   (".../ext4.ko.xz"; "[xhci_pci]" for xhci-pci.ko: its dashes made underscores, as the kernel
   names it). Returns the length it needed. */
size_t module_short_name(char *buf, size_t size, const char *path);

/* Writes "module+0x1a2b" into buf (always NUL-terminated); returns the length it needed. */
size_t module_name_format_offset(char *buf, size_t size, const char *module, uint64_t offset);

#endif
