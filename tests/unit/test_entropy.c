/* Entropy coding: random coefficients and vectors survive encode + decode
 * exactly (runs of every length, ZRL, extreme values, reused vectors), and
 * the output is the same whatever the number of threads.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdlib.h>
#include <string.h>

#include "c63/c63.h"
#include "c63/entropy.h"
#include "tutil.h"

/* Deterministic, so failures reproduce. */
static uint64_t rng = 0x12345678u;

static void fill_frame(const c63_geometry *g, int16_t *coeffs[3], c63_mv *mvs[3], int keyframe)
{
  for (int c = 0; c < 3; c++) {
    size_t blocks = (size_t)g->blocks_w[c] * g->blocks_h[c];
    for (size_t b = 0; b < blocks; b++) {
      int16_t *blk = coeffs[c] + b * 64;
      int density = (int)(tu_rand(&rng) % 5); /* empty .. dense blocks */
      memset(blk, 0, 64 * sizeof(*blk));
      blk[0] = (int16_t)((int)(tu_rand(&rng) % 1361) - 680);
      for (int z = 1; z < 64; z++) {
        if ((int)(tu_rand(&rng) % 8) >= density) continue;
        int lim = c63_ac_limit(c);
        int v = (int)(tu_rand(&rng) % (unsigned)(2 * lim + 1)) - lim;
        if (tu_rand(&rng) % 4) v /= 16; /* mostly small values */
        blk[z] = (int16_t)v;
      }
      if (b % 7 == 3) blk[63] = 1; /* last coefficient set: no EOB */
      int bx = (int)(b % (size_t)g->blocks_w[c]), by = (int)(b / (size_t)g->blocks_w[c]);
      c63_mv *mv = &mvs[c][b];
      memset(mv, 0, sizeof(*mv));
      if (keyframe) continue;
      mv->use_mv = tu_rand(&rng) % 8 != 0;
      if (!mv->use_mv) continue;
      if (bx > 0 && tu_rand(&rng) % 3 == 0 && mvs[c][b - 1].use_mv) { /* reuse */
        mv->x = mvs[c][b - 1].x;
        mv->y = mvs[c][b - 1].y;
      } else {
        mv->x = (int8_t)((int)(tu_rand(&rng) % 33) - 16);
        mv->y = (int8_t)((int)(tu_rand(&rng) % 33) - 16);
      }
      /* keep the prediction inside the plane */
      if (bx * 8 + mv->x < 0 || bx * 8 + mv->x > g->pad_w[c] - 8) mv->x = 0;
      if (by * 8 + mv->y < 0 || by * 8 + mv->y > g->pad_h[c] - 8) mv->y = 0;
    }
  }
}

static void roundtrip(int width, int height, int keyframe)
{
  c63_geometry g;
  c63_geometry_init(&g, width, height);
  int16_t *coeffs[3], *back[3];
  c63_mv *mvs[3], *mvs_back[3];
  for (int c = 0; c < 3; c++) {
    size_t blocks = (size_t)g.blocks_w[c] * g.blocks_h[c];
    coeffs[c] = calloc(blocks * 64, sizeof(int16_t));
    back[c] = calloc(blocks * 64, sizeof(int16_t));
    mvs[c] = calloc(blocks, sizeof(c63_mv));
    mvs_back[c] = calloc(blocks, sizeof(c63_mv));
  }
  fill_frame(&g, coeffs, mvs, keyframe);

  c63_bytebuf ref = {0};
  const int thread_counts[] = {1, 2, 3, 7};
  for (size_t t = 0; t < sizeof(thread_counts) / sizeof(thread_counts[0]); t++) {
    c63_threadpool *pool = c63_threadpool_new(thread_counts[t]);
    c63_entropy_encoder *ee = c63_entropy_encoder_new(&g, pool);
    c63_bytebuf out = {0};
    TU_CHECK_TRUE(ee != NULL);
    TU_CHECK_EQ(
        c63_entropy_encode(ee, &out, (const int16_t *const *)coeffs, (const c63_mv *const *)mvs),
        C63_OK);
    if (t == 0) {
      ref = out;
    } else {
      TU_CHECK_EQ(out.size, ref.size);
      TU_CHECK_TRUE(out.size == ref.size && memcmp(out.data, ref.data, out.size) == 0);
      c63_bytebuf_free(&out);
    }
    c63_entropy_encoder_free(ee);
    c63_threadpool_free(pool);
  }
  /* stuffing: every FF is followed by 00 */
  for (size_t i = 0; i + 1 < ref.size; i++)
    if (ref.data[i] == 0xff) TU_CHECK_EQ(ref.data[i + 1], 0x00);

  char msg[256] = "";
  c63_sparse_frame sp = {0};
  TU_CHECK_EQ(c63_sparse_frame_reserve(&sp, c63_frame_blocks(&g),
                                       c63_sparse_entries_bound(&g, ref.size), 0),
              C63_OK);
  int r = c63_entropy_decode(ref.data, ref.size, &g, keyframe, &sp, msg, sizeof(msg));
  if (r) fprintf(stderr, "decode %dx%d: %s\n", width, height, msg);
  TU_CHECK_EQ(r, C63_OK);
  /* only non-zero coefficients, in increasing zig-zag order per block */
  size_t total = 0;
  for (size_t b = 0; b < c63_frame_blocks(&g); b++) {
    const uint32_t *e = sp.entries + sp.start[b];
    for (int k = 0; k < sp.count[b]; k++) {
      TU_CHECK_TRUE((int16_t)(uint16_t)e[k] != 0);
      if (k) TU_CHECK_TRUE((e[k] >> 16) > (e[k - 1] >> 16));
    }
    total += sp.count[b];
  }
  TU_CHECK_EQ(total, sp.n_entries);
  for (int c = 0; c < 3; c++) {
    size_t blocks = (size_t)g.blocks_w[c] * g.blocks_h[c];
    c63_sparse_expand(&sp, c63_block_offset(&g, c), blocks, back[c]);
    memcpy(mvs_back[c], sp.mvs + c63_block_offset(&g, c), blocks * sizeof(c63_mv));
    TU_CHECK_TRUE(memcmp(coeffs[c], back[c], blocks * 64 * sizeof(int16_t)) == 0);
    for (size_t b = 0; b < blocks; b++) {
      TU_CHECK_EQ(mvs_back[c][b].use_mv, mvs[c][b].use_mv);
      if (mvs[c][b].use_mv) {
        TU_CHECK_EQ(mvs_back[c][b].x, mvs[c][b].x);
        TU_CHECK_EQ(mvs_back[c][b].y, mvs[c][b].y);
      }
    }
  }
  /* every prefix but the whole is truncated data */
  for (size_t cut = 0; cut + 1 < ref.size; cut += ref.size / 17 + 1) {
    r = c63_entropy_decode(ref.data, cut, &g, keyframe, &sp, msg, sizeof(msg));
    TU_CHECK_TRUE(r == C63_ERR_TRUNCATED || r == C63_ERR_BITSTREAM);
  }

  c63_bytebuf_free(&ref);
  c63_sparse_frame_free(&sp);
  for (int c = 0; c < 3; c++) {
    free(coeffs[c]);
    free(back[c]);
    free(mvs[c]);
    free(mvs_back[c]);
  }
}

/* Data that ends with an FF whose stuffing byte is missing is an error only
 * when the decoder looked at that FF: the reference-compatible reader looks
 * at the bits it takes, and at the 16 bits from a code's start; a decoder
 * that reads further ahead must not count what it saw there. The data is the
 * 16x16 keyframe of docs/format.md 4.9 (78 bits; its last code, the V
 * block's EOB, begins at bit 76). */
static void trailing_ff(void)
{
  static const uint8_t frame[] = {0x7d, 0x0b, 0x42, 0x85, 0x0a, 0x7f, 0x55, 0x8f, 0xea, 0xb0};
  uint8_t data[sizeof(frame) + 3];
  c63_geometry g;
  c63_sparse_frame sp = {0};
  char msg[256];
  c63_geometry_init(&g, 16, 16);
  TU_CHECK_EQ(c63_sparse_frame_reserve(&sp, c63_frame_blocks(&g), 64, 0), C63_OK);
  memcpy(data, frame, sizeof(frame));
  /* FF at bits 80..87: within 16 bits of the EOB's start */
  data[sizeof(frame)] = 0xff;
  TU_CHECK_EQ(c63_entropy_decode(data, sizeof(frame) + 1, &g, 1, &sp, msg, sizeof(msg)),
              C63_ERR_BITSTREAM);
  /* FF at bits 96..103: past them, never looked at */
  data[sizeof(frame)] = 0x00;
  data[sizeof(frame) + 1] = 0x00;
  data[sizeof(frame) + 2] = 0xff;
  TU_CHECK_EQ(c63_entropy_decode(data, sizeof(data), &g, 1, &sp, msg, sizeof(msg)), C63_OK);
  TU_CHECK_EQ(sp.count[0], 1);
  c63_sparse_frame_free(&sp);
}

int main(void)
{
  trailing_ff();
  roundtrip(16, 16, 1);
  roundtrip(64, 48, 0);
  roundtrip(176, 144, 0);
  roundtrip(200, 130, 1);
  roundtrip(352, 288, 0);
  return tu_finish("test_entropy");
}
