/* The CPU coder of the rd mode: each block of an MCU row in coding order,
 * decided by the rules of rd.h and rd_block.h, which the GPU shares
 * (cuda/c63_cuda_rd.cu).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "c63/c63.h"
#include "rd.h"
#include "tables.h"

/* The largest window of SADs: every candidate within the search range. */
#define MAX_WINDOW (2 * C63_MAX_SEARCH_RANGE)

/* A block's trials: their summaries and transforms (the levels the chosen
 * one is coded with come from its transform after the decision). */
typedef struct block_trials {
  c63_rd_sum sum[C63_RD_T_COUNT];
  int16_t y[C63_RD_T_COUNT][64];
} block_trials;

/* The 8x8 prediction at pred (stride w; NULL: zero, i.e. intra) as a
 * block of its own. */
static void load_prediction(const uint8_t *pred, int w, uint8_t out[64])
{
  for (int j = 0; j < 8; j++) {
    if (pred)
      memcpy(out + j * 8, pred + (size_t)j * w, 8);
    else
      memset(out + j * 8, 0, 8);
  }
}

/* The block at cur (stride w) predicted from pred (load_prediction) into
 * pred_block, its residual transformed into y; returns its SAD. */
static int transform_block(const uint8_t *cur, const uint8_t *pred, int w, uint8_t pred_block[64],
                           int16_t y[64])
{
  int16_t residual[64];
  int sad = 0;
  load_prediction(pred, w, pred_block);
  for (int j = 0; j < 8; j++)
    for (int i = 0; i < 8; i++) {
      residual[j * 8 + i] = (int16_t)(cur[j * w + i] - pred_block[j * 8 + i]);
      sad += abs(residual[j * 8 + i]);
    }
  c63_rd_fdct(residual, y);
  return sad;
}

/* Try the block at cur predicted from pred (as transform_block) with
 * vector mv as slot s of t: its levels as trials price them (AC with the
 * trials' dead zone), reconstructed by the decoder's own function, and
 * everything its decision needs but the bits of its vector and DC, which
 * depend on the blocks before it. */
static void try_block(const c63_rd_frame *f, int c, const c63_rd_quantiser *pq, const uint8_t *cur,
                      const uint8_t *pred, int w, c63_mv mv, block_trials *t, int s)
{
  uint8_t pred_block[64], rec[64];
  int16_t coef[64];
  const int sad = transform_block(cur, pred, w, pred_block, t->y[s]);
  c63_rd_quantise_block(pq, t->y[s], C63_RD_TRIAL_ROUND_AC, coef);
  f->dsp->dequant_idct_recon(coef, pred ? pred_block : NULL, 8, 8, pq->quant, rec);
  int ssd = 0;
  for (int j = 0; j < 8; j++)
    for (int i = 0; i < 8; i++) {
      const int d = rec[j * 8 + i] - cur[j * w + i];
      ssd += d * d;
    }
  c63_rd_sum *sum = &t->sum[s];
  sum->ssd = ssd;
  sum->ac_bits =
      (int16_t)c63_rd_ac_bits(c63_huff_enc_tables()[c ? C63_HUFF_AC1 : C63_HUFF_AC0].len, coef);
  sum->dc = coef[0];
  sum->mv = mv;
  sum->sad = (uint16_t)sad;
  sum->valid = 1;
}

/* Try slot s of the block at (bx, by) of plane c, if it holds a vector
 * (c63_rd_trial_vector); own[0..1]: the search's choices of the block and
 * of the one to its left. */
static void try_slot(const c63_rd_frame *f, int c, const c63_rd_quantiser *pq, int bx, int by,
                     const c63_mv own[2], int s, block_trials *t)
{
  const int w = f->g->pad_w[c], mx = bx * 8, my = by * 8;
  c63_mv mv;
  t->sum[s].valid = 0;
  if (!c63_rd_trial_vector(s, bx, own[0], own[1], w, f->g->pad_h[c], mx, my, &mv)) return;
  try_block(f, c, pq, f->cur[c] + (size_t)my * w + mx,
            f->ref[c] + (size_t)(my + mv.y) * w + mx + mv.x, w, mv, t, s);
}

/* The chroma search of the block at p of plane c (c63_rd_chroma_candidate):
 * luma holds the search's choices of the MCU's luma blocks. */
static void chroma_search(const c63_rd_frame *f, int c, const c63_rd_place *p, const c63_mv luma[4],
                          c63_rd_searched *s)
{
  const int w = p->w;
  const uint8_t *cur = f->cur[c] + (size_t)p->my * w + p->mx;
  const uint8_t *mv_len = c63_huff_enc_tables()[C63_HUFF_MV].len;
  s->cost = INT32_MAX;
  s->index = 0;
  s->mv = (c63_mv){0, 0, 1, 0};
  for (int k = 0; k < 5; k++) {
    c63_mv v;
    if (!c63_rd_chroma_candidate(luma, k, p, &v)) continue;
    const uint8_t *ref = f->ref[c] + (size_t)(p->my + v.y) * w + p->mx + v.x;
    c63_rd_chroma_consider(c63_sad_8x8(cur, w, ref, w), v, p, f->lambda.sad_16, mv_len, s);
  }
}

/* searched: the search's choice of the block to the left in this block
 * row, which this block's replaces; luma: the search's choices of the
 * current MCU's luma blocks, which a luma block fills in and a chroma
 * block reads. */
static void code_block(const c63_rd_frame *f, int c, const c63_rd_quantiser *pq, int bx, int by,
                       int *prev_dc, uint16_t *sads, c63_mv *searched, c63_mv luma[4])
{
  const int w = f->g->pad_w[c];
  const size_t idx = (size_t)by * f->g->blocks_w[c] + bx, off = (size_t)by * 8 * w + bx * 8;
  const c63_mv no_mv = {0, 0, 0, 0};
  block_trials t;
  int best = C63_RD_T_INTRA;

  try_block(f, c, pq, f->cur[c] + off, NULL, w, no_mv, &t, C63_RD_T_INTRA);
  if (!f->keyframe) {
    c63_rd_place p = {w, f->g->pad_h[c], bx * 8, by * 8, 0, 0, 0, 0};
    const int range = c ? f->search_range / 2 : f->search_range;
    c63_me_window(p.mx, p.my, p.w, p.h, range, &p.x0, &p.y0, &p.x1, &p.y1);
    c63_rd_searched s;
    if (c) {
      chroma_search(f, c, &p, luma, &s);
    } else {
      if (p.x1 > p.x0 && p.y1 > p.y0)
        f->dsp->sad_window(f->cur[c], f->ref[c], w, p.mx, p.my, p.x0, p.y0, p.x1, p.y1, sads);
      c63_rd_search_best(sads, p.x0, p.y0, p.x1, p.y1, p.mx, p.my, &f->lambda, &s);
      luma[(by & 1) * 2 + (bx & 1)] = s.mv;
    }
    const c63_mv own[2] = {s.mv, bx >= 1 ? *searched : no_mv};
    *searched = s.mv;
    /* The trials the decision can look at: the searched and the zero
     * vector, and the left neighbour's final vector where it is that
     * block's searched vector (otherwise the slot stays invalid;
     * c63_rd_decide never reads it). The GPU, which cannot know the left
     * neighbour's choice beforehand, tries that slot wherever it holds a
     * vector: the same decisions either way. */
    const c63_mv *left = bx ? &f->mvs[c][idx - 1] : NULL;
    try_slot(f, c, pq, bx, by, own, C63_RD_T_SEARCH, &t);
    try_slot(f, c, pq, bx, by, own, C63_RD_T_ZERO, &t);
    t.sum[C63_RD_T_LEFT_SEARCH].valid = 0;
    if (left && left->use_mv && c63_rd_same_vector(*left, own[1]))
      try_slot(f, c, pq, bx, by, own, C63_RD_T_LEFT_SEARCH, &t);
    const c63_huff_enc *tabs = c63_huff_enc_tables();
    best = c63_rd_decide(&p, &s, t.sum, left != NULL, left ? *left : no_mv, *prev_dc, f->lambda.ssd,
                         f->lambda.sad_16, tabs[C63_HUFF_MV].len,
                         tabs[c ? C63_HUFF_DC1 : C63_HUFF_DC0].len);
  }

  /* the chosen trial coded: its levels by the trellis, reconstructed as
   * the decoder will */
  const c63_mv mv = best == C63_RD_T_INTRA ? no_mv : t.sum[best].mv;
  int16_t *coef = f->coeffs[c] + idx * 64;
  uint8_t pred_block[64], rec[64];
  c63_rd_code_levels(pq, t.y[best], c != 0, f->lambda.ssd, coef);
  if (mv.use_mv)
    load_prediction(f->ref[c] + (size_t)(by * 8 + mv.y) * w + bx * 8 + mv.x, w, pred_block);
  f->dsp->dequant_idct_recon(coef, mv.use_mv ? pred_block : NULL, 8, 8, pq->quant, rec);
  for (int j = 0; j < 8; j++)
    memcpy(f->rec[c] + off + (size_t)j * w, rec + j * 8, 8);
  f->mvs[c][idx] = mv;
  *prev_dc = t.sum[best].dc;
}

void c63_rd_code_mcu_row(const c63_rd_frame *f, int my)
{
  uint16_t sads[MAX_WINDOW * MAX_WINDOW];
  /* The DC predictor at the start of the row is the previous row's last
   * block, which another thread may still be coding: 0 stands in for it.
   * It only enters the estimate of the first block's bits, never the
   * stream (the entropy coder predicts from the decided values). */
  int prev_dc[3] = {0, 0, 0};
  /* The search's choice of the last block of each block row: luma has two
   * in an MCU row (by & 1), chroma one. */
  c63_mv searched[3][2];
  /* the searches' choices of the current MCU's luma blocks */
  c63_mv luma[4];
  memset(searched, 0, sizeof searched);
  c63_rd_quantiser pq[3];
  for (int c = 0; c < 3; c++)
    c63_rd_quantiser_init(&pq[c], f->quant[c], c63_ac_limit(c));

  for (int mx = 0; mx < f->g->mcus_w; mx++)
    for (int k = 0; k < 6; k++) {
      int c, bx, by;
      c63_mcu_block(mx, my, k, &c, &bx, &by);
      code_block(f, c, &pq[c], bx, by, &prev_dc[c], sads, &searched[c][by & 1], luma);
    }
}
