/* SPDX-License-Identifier: MIT */
/* placeholder until its module lands */
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        (void)data;
        (void)size;
        return 0;
}
