/* The decisions of the rd encoder mode (see rd.h and docs/rd.md).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "rd.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>

#include "c63/c63.h"
#include "rd_block.h"
#include "tables.h"

/* How lambda follows the quantiser (docs/rd.md, "How the rd mode chooses").
 * At high rate a uniform quantiser of step s leaves an error of s^2 / 12 per
 * coefficient, and one more bit halves the step, so the slope of the
 * rate-distortion curve is dD/dR = -2 ln 2 * s^2 / 12, about 0.12 s^2: the
 * multiplier has to grow with the square of the step for the decisions to
 * stay where the quantiser operates. s is the mean of the luma DC step and
 * the first two AC steps (the low frequencies, where most of the bits go).
 * The factor is 0.3 rather than 0.12, the best on the test clips with
 * c63-rd (docs/rd.md): the JPEG tables' steps grow with frequency, so s
 * understates the steps of most coefficients. The vector search compares
 * SADs, which grow like the square root of SSDs, so its multiplier is the
 * square root of the SSD one (with a factor of 1, again the best on the
 * clips). */
#define LAMBDA_SSD_PER_STEP2 0.3f
#define LAMBDA_SAD_PER_SQRT 1.0f

void c63_rd_lambda_init(const uint8_t quant[3][64], c63_rd_lambda *l)
{
  const float step = (quant[0][0] + quant[0][1] + quant[0][2]) / 3.0f;
  l->ssd = LAMBDA_SSD_PER_STEP2 * step * step;
  l->sad_16 = (int)lrintf(16.0f * LAMBDA_SAD_PER_SQRT * sqrtf(l->ssd));
}

int c63_rd_mv_bits(const c63_mv *mv, const c63_mv *left)
{
  return c63_rd_mv_bits_len(c63_huff_enc_tables()[C63_HUFF_MV].len, mv, left);
}

int c63_rd_coef_bits(const int16_t coef[64], int chroma, int prev_dc)
{
  const c63_huff_enc *tabs = c63_huff_enc_tables();
  return c63_rd_dc_bits(tabs[chroma ? C63_HUFF_DC1 : C63_HUFF_DC0].len, coef[0], prev_dc) +
         c63_rd_ac_bits(tabs[chroma ? C63_HUFF_AC1 : C63_HUFF_AC0].len, coef);
}

void c63_rd_search_best(const uint16_t *sads, int left, int top, int right, int bottom, int mx,
                        int my, const c63_rd_lambda *l, c63_rd_searched *out)
{
  const uint8_t *mv_len = c63_huff_enc_tables()[C63_HUFF_MV].len;
  const int n = right - left;
  /* Costs fit an int: 16 * SAD <= 261120, and sad_16 * bits stays far
   * below 2^31 for any quantiser. A candidate's cost is 16 * SAD + sad_16
   * * c63_rd_mv_bits(vector, no left neighbour) = 16 * SAD + sad_16 * (2 +
   * bits(y) + bits(x)), the vector's bits counted once per column and per
   * row instead of once per candidate (the GPU search does the same). */
  int cost_x[2 * C63_MAX_SEARCH_RANGE];
  for (int x = left; x < right; x++)
    cost_x[x - left] = l->sad_16 * c63_rd_value_bits(mv_len, x - mx);
  int best = INT_MAX, best_i = 0;
  for (int y = top; y < bottom; y++) {
    const int row = l->sad_16 * (2 + c63_rd_value_bits(mv_len, y - my));
    const uint16_t *s = sads + (size_t)(y - top) * n;
    for (int i = 0; i < n; i++) {
      const int cost = 16 * s[i] + row + cost_x[i];
      if (cost < best) {
        best = cost;
        best_i = (y - top) * n + i;
      }
    }
  }
  out->cost = best;
  out->index = best_i;
  out->mv.x = (int8_t)(best == INT_MAX ? 0 : left + best_i % n - mx);
  out->mv.y = (int8_t)(best == INT_MAX ? 0 : top + best_i / n - my);
  out->mv.use_mv = 1;
  out->mv.pad_ = 0;
}

static const int32_t c63_rd_fdct_k[8][4] = C63_RD_FDCT_K;

void c63_rd_fdct(const int16_t residual[64], int16_t out[64])
{
  int rows[64], in[8];
  /* rows, written transposed: rows[u * 8 + y] */
  for (int y = 0; y < 8; y++) {
    for (int x = 0; x < 8; x++)
      in[x] = residual[y * 8 + x];
    for (int u = 0; u < 8; u++)
      rows[u * 8 + y] = c63_rd_fdct_out(c63_rd_fdct_k[u], in, u, C63_RD_FDCT_SHIFT1);
  }
  /* then columns: coefficient (v, u) from column u of the rows' outputs */
  int coef[64];
  for (int u = 0; u < 8; u++)
    for (int v = 0; v < 8; v++)
      coef[v * 8 + u] = c63_rd_fdct_out(c63_rd_fdct_k[v], rows + u * 8, v, C63_RD_FDCT_SHIFT2);
  for (int z = 0; z < 64; z++)
    out[z] = (int16_t)coef[c63_zigzag_v[z] * 8 + c63_zigzag_u[z]];
}

void c63_rd_quantiser_init(c63_rd_quantiser *q, const uint8_t quant[64], int ac_limit)
{
  q->quant = quant;
  q->ac_limit = ac_limit;
  for (int z = 0; z < 64; z++)
    q->recip[z] = c63_rd_recip(quant[z]);
}

void c63_rd_quantise_block(const c63_rd_quantiser *q, const int16_t y[64], int round_ac,
                           int16_t out[64])
{
  for (int z = 0; z < 64; z++)
    out[z] = (int16_t)c63_rd_quantise_level(y[z], q->quant[z], q->recip[z],
                                            z ? round_ac : C63_RD_ROUND_NEAREST,
                                            z ? q->ac_limit : INT16_MAX);
}

void c63_rd_code_levels(const c63_rd_quantiser *q, const int16_t y[64], int chroma, float lambda,
                        int16_t out[64])
{
  float dct[64];
  c63_rd_quantise_block(q, y, C63_RD_ROUND_NEAREST, out);
  for (int z = 0; z < 64; z++)
    dct[z] = (float)y[z] / 2.0f; /* the trellis takes 4 times orthonormal */
  c63_rd_trellis_levels(
      dct, q->quant, c63_huff_enc_tables()[chroma ? C63_HUFF_AC1 : C63_HUFF_AC0].len, lambda, out);
}
