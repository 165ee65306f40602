/* Entropy encoder: MCU order, motion flags and vectors, DC differences and
 * JPEG-style run/size AC coding, exactly as the reference writes them.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "entropy.h"

#include "c63/c63.h"
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#include "bit_width.h"
#include "tables.h"
#include "threadpool.h"

#include <stdlib.h>

/* Slices of MCU rows are coded into their own bit buffers in parallel, then
 * concatenated and stuffed into the frame. */

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
      int sx = c63_bit_width(mv->x), sy = c63_bit_width(mv->y);
      put_value(bw, mvt, sx, sx, mv->x);
      put_value(bw, mvt, sy, sy, mv->y);
    }
  }

  /* The reference keeps the DC difference in an int16_t. */
  int dc = (int16_t)(blk[0] - *prev_dc);
  *prev_dc = blk[0];
  int sdc = c63_bit_width(dc);
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
    int ac = blk[i], size = c63_bit_width(ac);
    put_value(bw, act, run << 4 | size, size, ac);
    pos = i + 1;
    nz &= nz - 1;
  }
  if (last < 63) c63_bw_put(bw, act->code[0x00], act->len[0x00]); /* EOB */
}

struct c63_entropy_encoder {
  c63_geometry g;
  c63_threadpool *pool;
  int nslices;
  struct slice {
    int mcu_row0, mcu_rows;
    uint8_t *buf;
    c63_bitwriter w;
  } * slices;
  uint8_t *cat; /* all slices' bits, unstuffed */
  /* inputs of the frame being coded */
  const int16_t *const *coeffs;
  const c63_mv *const *mvs;
};

/* DC of the block coded just before MCU row r0 in component c (the DC
 * prediction runs through the whole frame in MCU order). */
static int dc_before_row(const c63_entropy_encoder *ee, int c, int r0)
{
  if (r0 == 0) return 0;
  const c63_geometry *g = &ee->g;
  int n = c ? 1 : 2;
  size_t idx = (size_t)(r0 * n - 1) * g->blocks_w[c] + (size_t)(g->mcus_w * n - 1);
  return ee->coeffs[c][idx * 64];
}

static void code_slice(void *arg, int s)
{
  c63_entropy_encoder *ee = arg;
  const c63_geometry *g = &ee->g;
  const c63_huff_enc *tabs = c63_huff_enc_tables();
  struct slice *sl = &ee->slices[s];
  int prev_dc[3];

  for (int c = 0; c < 3; c++)
    prev_dc[c] = dc_before_row(ee, c, sl->mcu_row0);
  c63_bw_init(&sl->w, sl->buf);
  for (int my = sl->mcu_row0; my < sl->mcu_row0 + sl->mcu_rows; my++) {
    for (int mx = 0; mx < g->mcus_w; mx++) {
      for (int k = 0; k < 6; k++) {
        int c, bx, by;
        c63_mcu_block(mx, my, k, &c, &bx, &by);
        size_t idx = (size_t)by * g->blocks_w[c] + bx;
        put_block(&sl->w, tabs, c != 0, ee->coeffs[c] + idx * 64, &ee->mvs[c][idx],
                  bx ? &ee->mvs[c][idx - 1] : NULL, &prev_dc[c]);
      }
    }
  }
}

c63_entropy_encoder *c63_entropy_encoder_new(const c63_geometry *g, c63_threadpool *pool)
{
  c63_entropy_encoder *ee = calloc(1, sizeof(*ee));
  if (!ee) return NULL;
  ee->g = *g;
  ee->pool = pool;
  /* Each slice is a run of whole MCU rows; several per thread, since the
   * cost of a row follows the picture's detail, which is rarely even. */
  int threads = c63_threadpool_size(ee->pool);
  ee->nslices = threads > 1 ? 4 * threads : 1;
  if (ee->nslices > g->mcus_h) ee->nslices = g->mcus_h;
  ee->slices = calloc((size_t)ee->nslices, sizeof(*ee->slices));
  ee->cat = malloc((size_t)g->mcus_w * g->mcus_h * 6 * C63_MAX_BLOCK_BYTES + 8);
  if (!ee->slices || !ee->cat) goto fail;
  for (int s = 0, row = 0; s < ee->nslices; s++) {
    struct slice *sl = &ee->slices[s];
    sl->mcu_row0 = row;
    sl->mcu_rows = g->mcus_h / ee->nslices + (s < g->mcus_h % ee->nslices);
    row += sl->mcu_rows;
    size_t blocks = (size_t)sl->mcu_rows * g->mcus_w * 6;
    sl->buf = malloc(blocks * C63_MAX_BLOCK_BYTES + 8);
    if (!sl->buf) goto fail;
  }
  return ee;
fail:
  c63_entropy_encoder_free(ee);
  return NULL;
}

void c63_entropy_encoder_free(c63_entropy_encoder *ee)
{
  if (!ee) return;
  for (int s = 0; ee->slices && s < ee->nslices; s++)
    free(ee->slices[s].buf);
  free(ee->slices);
  free(ee->cat);
  free(ee);
}

int c63_entropy_encode(c63_entropy_encoder *ee, c63_bytebuf *out, const int16_t *const coeffs[3],
                       const c63_mv *const mvs[3])
{
  ee->coeffs = coeffs;
  ee->mvs = mvs;
  c63_threadpool_run(ee->pool, code_slice, ee, ee->nslices);

  c63_bitwriter cat;
  c63_bw_init(&cat, ee->cat);
  for (int s = 0; s < ee->nslices; s++)
    c63_bw_append(&cat, &ee->slices[s].w);
  c63_bw_flush_bytes(&cat);
  if (c63_write_stuffed(out, cat.start, (size_t)(cat.p - cat.start), (uint32_t)cat.acc, cat.nbits) <
      0)
    return C63_ERR_NOMEM;
  return out->failed ? C63_ERR_NOMEM : C63_OK;
}
