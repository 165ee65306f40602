/* The CPU coder of the rd mode: each block of an MCU row in coding order,
 * with the decisions of rd.c (see rd.h).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>

#include "c63.h"
#include "rd.h"

/* The largest window of SADs: every candidate within the search range,
 * both ends included. */
#define MAX_WINDOW (2 * C63_MAX_SEARCH_RANGE + 1)

/* One way of coding a block and what it costs. */
typedef struct block_trial {
  c63_mv mv;
  int16_t coef[64];
  uint8_t rec[64];
  float cost;
} block_trial;

/* Code the block at cur (stride w) predicted from pred (stride w; NULL:
 * zero, i.e. intra) and fill in what it costs. */
static void try_block(const c63_rd_frame *f, int c, const uint8_t *cur, const uint8_t *pred, int w,
                      const c63_mv *left, int prev_dc, block_trial *t)
{
  int16_t residual[64];
  uint8_t pred_block[64];
  float dct[64];

  for (int j = 0; j < 8; j++)
    for (int i = 0; i < 8; i++) {
      pred_block[j * 8 + i] = pred ? pred[j * w + i] : 0;
      residual[j * 8 + i] = (int16_t)(cur[j * w + i] - pred_block[j * 8 + i]);
    }
  c63_fdct_block(residual, dct);
  c63_rd_trellis_quantise(dct, f->quant[c], c63_ac_limit(c), c != 0, f->lambda.ssd, t->coef);
  /* the decoder's reconstruction, by the same function the decoder uses */
  f->dsp->dequant_idct_recon(t->coef, pred ? pred_block : NULL, 8, 8, f->quant[c], t->rec);
  int ssd = 0;
  for (int j = 0; j < 8; j++)
    for (int i = 0; i < 8; i++) {
      const int d = t->rec[j * 8 + i] - cur[j * w + i];
      ssd += d * d;
    }
  const int bits = c63_rd_mv_bits(&t->mv, left) + c63_rd_coef_bits(t->coef, c != 0, prev_dc);
  t->cost = (float)ssd + f->lambda.ssd * (float)bits;
}

/* The rd mode's search window: the reference's (c63_me_window), but with
 * its right and bottom ends included, so blocks of the last column or row
 * may keep a zero vector. */
static void rd_window(int mx, int my, int w, int h, int range, int *left, int *top, int *right,
                      int *bottom)
{
  c63_me_window(mx, my, w, h, range, left, top, right, bottom);
  ++*right;
  ++*bottom;
}

/* Whether the block at pixel (mx, my) of a w x h plane, displaced by mv,
 * lies inside the plane (format 3.3), as every candidate of the window
 * does. */
static int vector_inside(int w, int h, int mx, int my, const c63_mv *mv)
{
  return mx + mv->x >= 0 && mx + mv->x <= w - 8 && my + mv->y >= 0 && my + mv->y <= h - 8;
}

static int same_vector(const c63_mv *a, const c63_mv *b)
{
  return a->x == b->x && a->y == b->y;
}

/* searched: the search's choices, made without the left neighbour, of the
 * two blocks to the left in this block row ([0]: one to the left), which
 * this block's replaces. */
static void code_block(const c63_rd_frame *f, int c, int bx, int by, int *prev_dc, uint16_t *sads,
                       c63_mv searched[2])
{
  const int w = f->g->pad_w[c], h = f->g->pad_h[c];
  const size_t idx = (size_t)by * f->g->blocks_w[c] + bx, off = (size_t)by * 8 * w + bx * 8;
  const uint8_t *cur = f->cur[c] + off;
  const c63_mv *left = bx ? &f->mvs[c][idx - 1] : NULL;
  block_trial trial[4], *best = &trial[0];
  int n = 1;

  memset(&trial[0].mv, 0, sizeof(trial[0].mv));
  try_block(f, c, cur, NULL, w, left, *prev_dc, &trial[0]);
  if (!f->keyframe) {
    /* Inter candidates: the vector of least SAD + cost, and two that the
     * search's SAD may undervalue, as their residuals often code in fewer
     * bits: the left neighbour's (reused in 2 bits) and the zero vector. */
    const int range = c ? f->search_range / 2 : f->search_range;
    const int mx = bx * 8, my = by * 8;
    int x0, y0, x1, y1;
    rd_window(mx, my, w, h, range, &x0, &y0, &x1, &y1);
    f->dsp->sad_window(f->cur[c], f->ref[c], w, mx, my, x0, y0, x1, y1, sads);
    /* The left neighbour's final vector competes where it is one that
     * this block tries anyway: the zero vector, the search's choice, or
     * the search's choice of one of the two blocks to the left. A vector
     * reused along a run from further left is not followed: the GPU
     * decides a row's blocks in order, and any other vector would need a
     * trial (transform, trellis, reconstruction) there, one block at a
     * time (docs/rd.md). */
    const int reuse = left && left->use_mv &&
                      ((!left->x && !left->y) || (bx >= 1 && same_vector(left, &searched[0])) ||
                       (bx >= 2 && same_vector(left, &searched[1])));
    c63_mv own;
    c63_rd_choose_vector(sads, x0, y0, x1, y1, mx, my, reuse ? left : NULL, &f->lambda,
                         &trial[n++].mv, &own);
    if (reuse && !same_vector(left, &trial[1].mv) && vector_inside(w, h, mx, my, left))
      trial[n++].mv = *left;
    searched[1] = searched[0];
    searched[0] = own;
    if (trial[1].mv.x || trial[1].mv.y) {
      memset(&trial[n].mv, 0, sizeof(c63_mv));
      trial[n++].mv.use_mv = 1;
    }
    for (int i = 1; i < n; i++) {
      const uint8_t *pred = f->ref[c] + (size_t)(my + trial[i].mv.y) * w + mx + trial[i].mv.x;
      try_block(f, c, cur, pred, w, left, *prev_dc, &trial[i]);
      /* the first of equal costs, but intra only when strictly cheaper */
      if (trial[i].cost < best->cost || (best == &trial[0] && trial[i].cost == best->cost))
        best = &trial[i];
    }
  }

  memcpy(f->coeffs[c] + idx * 64, best->coef, sizeof(best->coef));
  f->mvs[c][idx] = best->mv;
  for (int j = 0; j < 8; j++)
    memcpy(f->rec[c] + off + (size_t)j * w, best->rec + j * 8, 8);
  *prev_dc = best->coef[0];
}

void c63_rd_code_mcu_row(const c63_rd_frame *f, int my)
{
  uint16_t sads[MAX_WINDOW * MAX_WINDOW];
  /* The DC predictor at the start of the row is the previous row's last
   * block, which another thread may still be coding: 0 stands in for it.
   * It only enters the estimate of the first block's bits, never the
   * stream (the entropy coder predicts from the decided values). */
  int prev_dc[3] = {0, 0, 0};
  /* The search's choices of the last two blocks of each block row: luma
   * has two in an MCU row (by & 1), chroma one. */
  c63_mv searched[3][2][2];
  memset(searched, 0, sizeof searched);

  for (int mx = 0; mx < f->g->mcus_w; mx++)
    for (int k = 0; k < 6; k++) {
      int c, bx, by;
      c63_mcu_block(mx, my, k, &c, &bx, &by);
      code_block(f, c, bx, by, &prev_dc[c], sads, searched[c][by & 1]);
    }
}
