/* Entropy encoder: MCU order, motion flags and vectors, DC differences and
 * JPEG-style run/size AC coding, exactly as the reference writes them.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "entropy.h"

#include "c63.h"
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#include "tables.h"

/* Worst case of one block: flags and vectors 26 bits, DC 20, 63 AC of at
 * most 26 bits, EOB; doubled for FF 00 stuffing, rounded up. */
#define MAX_BLOCK_BYTES 512

static inline int bit_width(int v)
{
  unsigned a = (unsigned)(v < 0 ? -v : v);
  return a ? 32 - __builtin_clz(a) : 0;
}

/* Size code, then the low `size` bits of v (v - 1 when negative). */
static inline void put_value(c63_bitwriter *bw, const c63_huff_enc *t, int sym, int size, int v)
{
  uint32_t bits = (uint32_t)(v < 0 ? v - 1 : v) & ((1u << size) - 1);
  c63_bw_put(bw, ((uint32_t)t->code[sym] << size) | bits, t->len[sym] + size);
}

/* Bit i set when blk[i] != 0. */
static inline uint64_t nonzero_mask(const int16_t *blk)
{
#ifdef __SSE2__
  const __m128i zero = _mm_setzero_si128();
  uint64_t m = 0;
  for (int k = 0; k < 4; k++) {
    __m128i a = _mm_loadu_si128((const __m128i *)(blk + 16 * k));
    __m128i b = _mm_loadu_si128((const __m128i *)(blk + 16 * k + 8));
    __m128i z = _mm_packs_epi16(_mm_cmpeq_epi16(a, zero), _mm_cmpeq_epi16(b, zero));
    m |= (uint64_t)(uint16_t)~_mm_movemask_epi8(z) << (16 * k);
  }
  return m;
#else
  uint64_t m = 0;
  for (int i = 0; i < 64; i++)
    m |= (uint64_t)(blk[i] != 0) << i;
  return m;
#endif
}

static void put_block(c63_bitwriter *bw, const c63_huff_enc *tabs, int chroma, const int16_t *blk,
                      const c63_mv *mv, const c63_mv *left, int *prev_dc)
{
  const c63_huff_enc *mvt = &tabs[C63_HUFF_MV];
  const c63_huff_enc *dct = &tabs[chroma ? C63_HUFF_DC1 : C63_HUFF_DC0];
  const c63_huff_enc *act = &tabs[chroma ? C63_HUFF_AC1 : C63_HUFF_AC0];

  c63_bw_put(bw, mv->use_mv, 1);
  if (mv->use_mv) {
    int reuse = left && left->use_mv && left->x == mv->x && left->y == mv->y;
    c63_bw_put(bw, (uint32_t)reuse, 1);
    if (!reuse) {
      int sx = bit_width(mv->x), sy = bit_width(mv->y);
      put_value(bw, mvt, sx, sx, mv->x);
      put_value(bw, mvt, sy, sy, mv->y);
    }
  }

  /* The reference keeps the DC difference in an int16_t. */
  int dc = (int16_t)(blk[0] - *prev_dc);
  *prev_dc = blk[0];
  int sdc = bit_width(dc);
  put_value(bw, dct, sdc, sdc, dc);

  /* Walk only the non-zero AC coefficients: a run of zeros is the gap
   * between two set bits. Same symbols as the reference's per-coefficient
   * loop (a ZRL for every 16 zeros before a non-zero coefficient). */
  uint64_t nz = nonzero_mask(blk) & ~(uint64_t)1;
  int last = nz ? 63 - __builtin_clzll(nz) : 0;
  int pos = 1;
  while (nz) {
    int i = __builtin_ctzll(nz);
    int run = i - pos;
    for (; run >= 16; run -= 16)
      c63_bw_put(bw, act->code[0xf0], act->len[0xf0]); /* ZRL */
    int ac = blk[i], size = bit_width(ac);
    put_value(bw, act, run << 4 | size, size, ac);
    pos = i + 1;
    nz &= nz - 1;
  }
  if (last < 63) c63_bw_put(bw, act->code[0x00], act->len[0x00]); /* EOB */
}

int c63_entropy_encode(c63_bytebuf *out, const c63_geometry *g, const int16_t *const coeffs[3],
                       const c63_mv *const mvs[3])
{
  const c63_huff_enc *tabs = c63_huff_enc_tables();
  c63_bitwriter bw;
  int prev_dc[3] = {0, 0, 0};

  c63_bw_init(&bw, out);
  for (int my = 0; my < g->mcus_h; my++) {
    for (int mx = 0; mx < g->mcus_w; mx++) {
      if (c63_bytebuf_reserve(out, 6 * MAX_BLOCK_BYTES) < 0) return C63_ERR_NOMEM;
      /* Y: (0,0) (8,0) (0,8) (8,8); then U and V. Padded luma is a multiple
       * of 16 and chroma of 8, so every MCU is complete. */
      for (int c = 0; c < 3; c++) {
        int n = c ? 1 : 2, bw_c = g->blocks_w[c];
        for (int j = 0; j < n; j++) {
          for (int i = 0; i < n; i++) {
            int bx = mx * n + i, by = my * n + j;
            size_t idx = (size_t)by * bw_c + bx;
            put_block(&bw, tabs, c != 0, coeffs[c] + idx * 64, &mvs[c][idx],
                      bx ? &mvs[c][idx - 1] : NULL, &prev_dc[c]);
          }
        }
      }
    }
  }
  c63_bw_flush(&bw);
  return out->failed ? C63_ERR_NOMEM : C63_OK;
}
