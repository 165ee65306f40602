/* Finding FFs not followed by 00 (marker_scan.h): two vectors compared at a
 * time where the architecture's baseline has them (SSE2, NEON), the tail
 * and other machines a byte at a time.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "marker_scan.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#elif defined(__ARM_NEON) && defined(__aarch64__)
#include <arm_neon.h>
#endif

size_t c63_find_marker_c(const uint8_t *buf, size_t from, size_t len)
{
  for (size_t i = from; i + 1 < len; i++)
    if (buf[i] == 0xff && buf[i + 1] != 0x00) return i;
  return len;
}

#if defined(__SSE2__)
/* Bit k set when p[k] is FF and p[k + 1] is not 00 (p[0..16] read). */
static inline unsigned candidates16(const uint8_t *p)
{
  const __m128i a = _mm_loadu_si128((const __m128i *)p);
  const __m128i b = _mm_loadu_si128((const __m128i *)(p + 1));
  const __m128i ff = _mm_cmpeq_epi8(a, _mm_set1_epi8((char)0xff));
  const __m128i zero = _mm_cmpeq_epi8(b, _mm_setzero_si128());
  return (unsigned)_mm_movemask_epi8(_mm_andnot_si128(zero, ff));
}
#endif

size_t c63_find_marker(const uint8_t *buf, size_t from, size_t len)
{
  size_t i = from;

  if (len < 2 || from >= len - 1) return len;
#if defined(__SSE2__)
  /* 32 bytes a step: one branch for two vectors. */
  for (; i + 33 <= len; i += 32) {
    unsigned m = candidates16(buf + i) | candidates16(buf + i + 16) << 16;
    if (m) return i + (size_t)__builtin_ctz(m);
  }
#elif defined(__ARM_NEON) && defined(__aarch64__)
  for (; i + 17 <= len; i += 16) {
    const uint8x16_t a = vld1q_u8(buf + i), b = vld1q_u8(buf + i + 1);
    if (vmaxvq_u8(vandq_u8(vceqq_u8(a, vdupq_n_u8(0xff)), vtstq_u8(b, b))))
      break; /* the loop below finds which byte */
  }
#endif
  return c63_find_marker_c(buf, i, len);
}
