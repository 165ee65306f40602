/* c63_copy_streaming against memcpy: every source and destination
 * alignment within 32 bytes, lengths around the 16-byte head and the
 * 64-byte steps, and a long copy; the bytes around the destination stay
 * as they were.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "c63/stream_copy.h"
#include "tutil.h"

#define GUARD 64

static void check(const uint8_t *src, size_t n, size_t doff, uint8_t *dst, uint8_t *want)
{
  memset(dst, 0xa5, n + doff + 2 * GUARD);
  memset(want, 0xa5, n + doff + 2 * GUARD);
  memcpy(want + GUARD + doff, src, n);
  c63_copy_streaming(dst + GUARD + doff, src, n);
  TU_CHECK(!memcmp(dst, want, n + doff + 2 * GUARD), "%zu bytes to offset %zu (source at %p)", n,
           doff, (const void *)src);
}

int main(void)
{
  const size_t big = (1u << 20) + 77;
  uint8_t *src = malloc(big + 32), *dst = malloc(big + 32 + 2 * GUARD),
          *want = malloc(big + 32 + 2 * GUARD);
  if (!src || !dst || !want) return 1;
  for (size_t i = 0; i < big + 32; i++)
    src[i] = (uint8_t)(i * 131 + (i >> 8));
  for (size_t soff = 0; soff < 32; soff++)
    for (size_t doff = 0; doff < 32; doff++)
      for (size_t n = 0; n <= 200; n += (n < 80 ? 1 : 13))
        check(src + soff, n, doff, dst, want);
  for (size_t doff = 0; doff < 32; doff += 7)
    check(src + 3, big, doff, dst, want);
  free(src);
  free(dst);
  free(want);
  return tu_finish("test_stream_copy");
}
