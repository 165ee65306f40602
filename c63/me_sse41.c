/* Motion search with SSE4.1: MPSADBW gives the SADs of eight horizontally
 * adjacent candidates at once, PHMINPOSUW the first minimum among them, so
 * scanning groups of eight in raster order with a strict '<' between groups
 * reproduces the reference's tie-break exactly. The same SADs fill the rd
 * mode's window of SADs. Selected at run time; built for x86 hosts only.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>

#include "dsp.h"

#include <smmintrin.h>

#define TARGET __attribute__((target("sse4.1")))

/* The block's eight rows, loaded once per block. */
TARGET static inline void load_block(const uint8_t *cur, int w, int mx, int my, __m128i c[8])
{
  for (int j = 0; j < 8; j++)
    c[j] = _mm_loadl_epi64((const __m128i *)(cur + (size_t)(my + j) * w + mx));
}

/* SADs of the eight candidates (x0 .. x0 + 7, y) in eight 16-bit lanes; a
 * lane whose candidate lies past the plane's row reads zeros there. */
TARGET static inline __m128i sad8(const __m128i c[8], const uint8_t *ref, int w, int x0, int y)
{
  __m128i acc = _mm_setzero_si128();
  int edge = x0 + 16 > w; /* a 16-byte load would leave the plane's row */
  for (int j = 0; j < 8; j++) {
    const uint8_t *r = ref + (size_t)(y + j) * w + x0;
    __m128i rv;
    if (edge) {
      uint8_t tmp[16] = {0};
      memcpy(tmp, r, (size_t)(w - x0));
      rv = _mm_loadu_si128((const __m128i *)tmp);
    } else {
      rv = _mm_loadu_si128((const __m128i *)r);
    }
    acc = _mm_adds_epu16(acc, _mm_mpsadbw_epu8(rv, c[j], 0));
    acc = _mm_adds_epu16(acc, _mm_mpsadbw_epu8(rv, c[j], 5));
  }
  return acc;
}

TARGET static void search_block(const uint8_t *cur, const uint8_t *ref, int w, int h, int range,
                                int mx, int my, c63_mv *mv)
{
  int left, top, right, bottom, best = 1 << 30, bx = mx, by = my;
  __m128i c[8];
  const __m128i lane = _mm_setr_epi16(0, 1, 2, 3, 4, 5, 6, 7);

  c63_me_window(mx, my, w, h, range, &left, &top, &right, &bottom);
  load_block(cur, w, mx, my, c);
  for (int y = top; y < bottom; y++) {
    for (int x0 = left; x0 < right; x0 += 8) {
      /* lanes whose candidate x0 + k lies outside the window never win */
      __m128i outside = _mm_cmpgt_epi16(lane, _mm_set1_epi16((short)(right - x0 - 1)));
      __m128i m = _mm_minpos_epu16(_mm_or_si128(sad8(c, ref, w, x0, y), outside));
      int sad = _mm_extract_epi16(m, 0);
      if (sad < best) {
        best = sad;
        bx = x0 + _mm_extract_epi16(m, 1);
        by = y;
      }
    }
  }
  mv->x = (int8_t)(bx - mx);
  mv->y = (int8_t)(by - my);
  mv->use_mv = 1;
  mv->pad_ = 0;
}

TARGET static void sad_window_sse41(const uint8_t *cur, const uint8_t *ref, int w, int mx, int my,
                                    int left, int top, int right, int bottom, uint16_t *sads)
{
  const int n = right - left;
  __m128i c[8];
  load_block(cur, w, mx, my, c);
  for (int y = top; y < bottom; y++, sads += n) {
    for (int x0 = left; x0 < right; x0 += 8) {
      __m128i s = sad8(c, ref, w, x0, y);
      if (right - x0 >= 8) {
        _mm_storeu_si128((__m128i *)(sads + (x0 - left)), s);
      } else {
        uint16_t tmp[8];
        _mm_storeu_si128((__m128i *)tmp, s);
        memcpy(sads + (x0 - left), tmp, (size_t)(right - x0) * sizeof(*tmp));
      }
    }
  }
}

static void motion_search_sse41(const uint8_t *cur, const uint8_t *ref, int w, int h, int range,
                                int by0, int by1, c63_mv *mvs)
{
  const int bw = w / 8;
  for (int by = by0; by < by1; by++)
    for (int bx = 0; bx < bw; bx++)
      search_block(cur, ref, w, h, range, bx * 8, by * 8, &mvs[by * bw + bx]);
}

int c63_dsp_init_sse41(c63_dsp *dsp)
{
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("sse4.1")) return 0;
  dsp->motion_search = motion_search_sse41;
  dsp->sad_window = sad_window_sse41;
  return 1;
}
