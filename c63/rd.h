/* The decisions of the rd encoder mode (docs/rd.md): the Lagrange
 * multipliers, the bits the entropy coder spends on a block, the
 * rate-aware choice of a vector from a window of SADs, and trellis
 * quantisation. Pure functions of one block's data, so a GPU version can
 * mirror them block by block; c63/rd_code.c strings them together on the
 * CPU.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef C63_RD_H
#define C63_RD_H

#include <stdint.h>

#include "dsp.h"
#include "geometry.h"
#include "rd_block.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A frame's multipliers. A choice costs J = D + lambda * R: R in bits, D
 * the squared error (SSD) in pixels for mode decisions and quantisation,
 * or the SAD scaled by 16 for the vector search (integer arithmetic, so
 * every implementation picks the same vector). */
typedef struct c63_rd_lambda {
  float ssd;  /* per bit, against SSD */
  int sad_16; /* per bit, against 16 * SAD */
} c63_rd_lambda;

/* The multipliers for a frame coded with these quantiser tables. */
void c63_rd_lambda_init(const uint8_t quant[3][64], c63_rd_lambda *l);

/* Bits of a block's motion fields as the entropy coder writes them: use_mv,
 * reuse (reuse = 1 when left, the block's left neighbour in its plane or
 * NULL in the first column, has use_mv and the same vector), the vector. */
int c63_rd_mv_bits(const c63_mv *mv, const c63_mv *left);

/* Bits of a block's DC difference (from prev_dc, the plane's predictor in
 * coding order) and AC coefficients. chroma selects the tables. */
int c63_rd_coef_bits(const int16_t coef[64], int chroma, int prev_dc);

/* The search's choice among the candidates of the window [left, right) x
 * [top, bottom) around the block at pixel (mx, my), whose SADs
 * dsp.sad_window gave: the vector of least 16 * SAD + l->sad_16 *
 * c63_rd_mv_bits (no left neighbour counted), the first in raster order
 * among equal costs. An empty window gives the zero vector at cost
 * INT_MAX. */
void c63_rd_search_best(const uint16_t *sads, int left, int top, int right, int bottom, int mx,
                        int my, const c63_rd_lambda *l, c63_rd_searched *out);

/* The rd mode's forward transform of a block (rd_block.h): residual row
 * major, out 8 times the orthonormal DCT in zig-zag order. */
void c63_rd_fdct(const int16_t residual[64], int16_t out[64]);

/* A plane's quantiser (zig-zag order) with the reciprocals that
 * c63_rd_quantise_level takes, and its AC limit (c63_ac_limit). */
typedef struct c63_rd_quantiser {
  const uint8_t *quant;
  uint32_t recip[64];
  int ac_limit;
} c63_rd_quantiser;

void c63_rd_quantiser_init(c63_rd_quantiser *q, const uint8_t quant[64], int ac_limit);

/* The levels of a block's transform y (c63_rd_fdct's output): the AC
 * rounded up from round_ac eighths of a step (C63_RD_TRIAL_ROUND_AC for
 * trials, C63_RD_ROUND_NEAREST) and limited to +-ac_limit, the DC to
 * nearest. */
void c63_rd_quantise_block(const c63_rd_quantiser *q, const int16_t y[64], int round_ac,
                           int16_t out[64]);

/* The levels a block is coded with (y: c63_rd_fdct's output): rounded to
 * nearest, AC limited to +-ac_limit, then each AC level kept, one step
 * nearer zero, or zero, for the least SSD + lambda * bits over the whole
 * block: a dynamic programme over the position of the last non-zero
 * coefficient, with the AC table's run/size codes, ZRL and EOB (chroma
 * selects the tables). The DC stays rounded to nearest. */
void c63_rd_code_levels(const c63_rd_quantiser *q, const int16_t y[64], int chroma, float lambda,
                        int16_t out[64]);

/* ---- The CPU coder of the rd mode (rd_code.c) ---- */

/* One frame's planes and decisions: cur, the zero-padded input; ref, the
 * previous reconstruction (unused in keyframes); rec, coeffs and mvs, what
 * the coder writes (whole planes, as c63_backend_cpu lays them out). */
typedef struct c63_rd_frame {
  const c63_geometry *g;
  const c63_dsp *dsp;
  const uint8_t *cur[3], *ref[3];
  uint8_t *rec[3];
  int16_t *coeffs[3];
  c63_mv *mvs[3];
  const uint8_t (*quant)[64];
  int keyframe;
  int search_range; /* luma; chroma uses search_range / 2 */
  c63_rd_lambda lambda;
} c63_rd_frame;

/* Code MCU row my: for every block in coding order (format 4.1), the
 * least J = SSD + lambda * bits after trellis quantisation among the
 * candidates of c63_rd_decide, and the chosen block's reconstruction. Rows
 * are independent (each reads only ref and cur, and writes only its own
 * blocks), so they may run on several threads; within a row the blocks go
 * in order, since a block's cost depends on its left neighbour's vector
 * and the DC before it. */
void c63_rd_code_mcu_row(const c63_rd_frame *f, int my);

#ifdef __cplusplus
}
#endif

#endif
