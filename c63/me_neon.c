/* Motion search with NEON (aarch64): the SADs of eight horizontally adjacent
 * candidates at once in eight 16-bit lanes, as the SSE4.1 version computes
 * them with MPSADBW. Scanning the groups of eight in raster order, taking the
 * first minimum within a group and switching groups only on a strict '<'
 * reproduces the reference's tie-break exactly. The same SADs fill the rd
 * mode's window of SADs. Every aarch64 CPU has NEON; c63_dsp_c stays
 * selectable (the tests compare the two).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>

#include <arm_neon.h>

#include "dsp.h"

/* The block's eight rows, loaded once per block. */
static inline void load_block(const uint8_t *cur, int w, int mx, int my, uint8x8_t c[8])
{
  for (int j = 0; j < 8; j++)
    c[j] = vld1_u8(cur + (size_t)(my + j) * w + mx);
}

/* Accumulates, for each candidate k of the eight, the absolute differences
 * of block column i: ref byte x0 + k + i against the block's byte i. */
#define SAD_COLUMN(i) acc = vabal_u8(acc, vget_low_u8(vextq_u8(rv, rv, i)), vdup_lane_u8(c[j], i))

/* SADs of the eight candidates (x0 .. x0 + 7, y) in eight 16-bit lanes; a
 * lane whose candidate lies past the plane's row reads zeros there. */
static inline uint16x8_t sad8(const uint8x8_t c[8], const uint8_t *ref, int w, int x0, int y)
{
  uint16x8_t acc = vdupq_n_u16(0);
  const int edge = x0 + 16 > w; /* a 16-byte load would leave the plane's row */
  for (int j = 0; j < 8; j++) {
    const uint8_t *r = ref + (size_t)(y + j) * w + x0;
    uint8x16_t rv;
    if (edge) {
      uint8_t tmp[16] = {0};
      memcpy(tmp, r, (size_t)(w - x0));
      rv = vld1q_u8(tmp);
    } else {
      rv = vld1q_u8(r);
    }
    SAD_COLUMN(0);
    SAD_COLUMN(1);
    SAD_COLUMN(2);
    SAD_COLUMN(3);
    SAD_COLUMN(4);
    SAD_COLUMN(5);
    SAD_COLUMN(6);
    SAD_COLUMN(7);
  }
  return acc;
}

static void search_block(const uint8_t *cur, const uint8_t *ref, int w, int h, int range, int mx,
                         int my, c63_mv *mv)
{
  int left, top, right, bottom, best = 1 << 30, bx = mx, by = my;
  uint8x8_t c[8];
  static const uint16_t lanes[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  const uint16x8_t lane = vld1q_u16(lanes), no_lane = vdupq_n_u16(8);

  c63_me_window(mx, my, w, h, range, &left, &top, &right, &bottom);
  load_block(cur, w, mx, my, c);
  for (int y = top; y < bottom; y++) {
    for (int x0 = left; x0 < right; x0 += 8) {
      /* lanes whose candidate x0 + k lies outside the window never win */
      const uint16x8_t outside = vcgtq_u16(lane, vdupq_n_u16((uint16_t)(right - x0 - 1)));
      const uint16x8_t s = vorrq_u16(sad8(c, ref, w, x0, y), outside);
      const int sad = vminvq_u16(s);
      if (sad < best) {
        const uint16x8_t first = vbslq_u16(vceqq_u16(s, vdupq_n_u16((uint16_t)sad)), lane, no_lane);
        best = sad;
        bx = x0 + vminvq_u16(first);
        by = y;
      }
    }
  }
  mv->x = (int8_t)(bx - mx);
  mv->y = (int8_t)(by - my);
  mv->use_mv = 1;
  mv->pad_ = 0;
}

static void sad_window_neon(const uint8_t *cur, const uint8_t *ref, int w, int mx, int my, int left,
                            int top, int right, int bottom, uint16_t *sads)
{
  const int n = right - left;
  uint8x8_t c[8];
  load_block(cur, w, mx, my, c);
  for (int y = top; y < bottom; y++, sads += n) {
    for (int x0 = left; x0 < right; x0 += 8) {
      const uint16x8_t s = sad8(c, ref, w, x0, y);
      if (right - x0 >= 8) {
        vst1q_u16(sads + (x0 - left), s);
      } else {
        uint16_t tmp[8];
        vst1q_u16(tmp, s);
        memcpy(sads + (x0 - left), tmp, (size_t)(right - x0) * sizeof(*tmp));
      }
    }
  }
}

static void motion_search_neon(const uint8_t *cur, const uint8_t *ref, int w, int h, int range,
                               int by0, int by1, c63_mv *mvs)
{
  const int bw = w / 8;
  for (int by = by0; by < by1; by++)
    for (int bx = 0; bx < bw; bx++)
      search_block(cur, ref, w, h, range, bx * 8, by * 8, &mvs[by * bw + bx]);
}

void c63_dsp_init_me_neon(c63_dsp *dsp)
{
  dsp->motion_search = motion_search_neon;
  dsp->sad_window = sad_window_neon;
}
