/* Non-temporal copies (stream_copy.h).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "stream_copy.h"

#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) || defined(_M_X64)
#include <emmintrin.h>

/* The copy without the fence. */
static void stream(uint8_t *d, const uint8_t *s, size_t n)
{
  /* streaming stores want 16-byte aligned destinations */
  size_t head = (16 - ((uintptr_t)d & 15)) & 15;
  if (head > n) head = n;
  memcpy(d, s, head);
  d += head;
  s += head;
  n -= head;
  for (; n >= 64; n -= 64, d += 64, s += 64) {
    const __m128i a = _mm_loadu_si128((const __m128i *)s);
    const __m128i b = _mm_loadu_si128((const __m128i *)(s + 16));
    const __m128i c = _mm_loadu_si128((const __m128i *)(s + 32));
    const __m128i e = _mm_loadu_si128((const __m128i *)(s + 48));
    _mm_stream_si128((__m128i *)d, a);
    _mm_stream_si128((__m128i *)(d + 16), b);
    _mm_stream_si128((__m128i *)(d + 32), c);
    _mm_stream_si128((__m128i *)(d + 48), e);
  }
  memcpy(d, s, n);
}

/* The stores are weakly ordered: done before whoever waits for the copy
 * (the upload) is told. */
static void ordered(void)
{
  _mm_sfence();
}
#else
static void stream(uint8_t *d, const uint8_t *s, size_t n)
{
  memcpy(d, s, n);
}

static void ordered(void) {}
#endif

void c63_copy_streaming_rows(void *dst, size_t dst_pitch, const void *src, size_t src_pitch,
                             size_t width, size_t rows)
{
  uint8_t *d = dst;
  const uint8_t *s = src;
  if (src_pitch == width && dst_pitch == width) {
    stream(d, s, width * rows);
  } else {
    for (size_t y = 0; y < rows; y++, d += dst_pitch, s += src_pitch)
      stream(d, s, width);
  }
  ordered();
}
