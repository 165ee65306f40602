/* c63_copy_streaming_rows against memcpy: one row at every source and destination
 * alignment within 32 bytes, lengths around the 16-byte head and the
 * 64-byte steps, and a long copy; the bytes around the destination stay
 * as they were; several rows against memcpy row by row, tight and with
 * padded rows on either side.
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
  c63_copy_streaming_rows(dst + GUARD + doff, n, src, n, n, 1);
  TU_CHECK(!memcmp(dst, want, n + doff + 2 * GUARD), "%zu bytes to offset %zu (source at %p)", n,
           doff, (const void *)src);
}

static void check_rows(const uint8_t *src, size_t src_pitch, size_t dst_pitch, size_t width,
                       size_t rows, uint8_t *dst, uint8_t *want)
{
  const size_t span = dst_pitch * rows + 2 * GUARD;
  memset(dst, 0x5a, span);
  memset(want, 0x5a, span);
  for (size_t y = 0; y < rows; y++)
    memcpy(want + GUARD + y * dst_pitch, src + y * src_pitch, width);
  c63_copy_streaming_rows(dst + GUARD, dst_pitch, src, src_pitch, width, rows);
  TU_CHECK(!memcmp(dst, want, span), "%zu rows of %zu bytes, pitches %zu and %zu", rows, width,
           src_pitch, dst_pitch);
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
  check_rows(src, 1920, 1920, 1920, 100, dst, want);
  check_rows(src + 1, 2048, 1920, 1920, 100, dst, want);
  check_rows(src, 37, 40, 37, 21, dst, want);
  check_rows(src, 100, 64, 60, 50, dst, want);
  free(src);
  free(dst);
  free(want);
  return tu_finish("test_stream_copy");
}
