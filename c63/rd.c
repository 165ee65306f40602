/* The decisions of the rd encoder mode (see rd.h and docs/rd.md).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "rd.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>

#include "c63.h"
#include "tables.h"

/* How lambda follows the quantiser (docs/rd.md, "How the rd mode chooses").
 * At high rate a uniform quantiser of step s leaves an error of s^2 / 12 per
 * coefficient, and one more bit halves the step, so the slope of the
 * rate-distortion curve is dD/dR = -2 ln 2 * s^2 / 12, about 0.12 s^2: the
 * multiplier has to grow with the square of the step for the decisions to
 * stay where the quantiser operates. s is the mean of the luma DC step and
 * the first two AC steps (the low frequencies, where most of the bits go).
 * The factor measured best on the test clips with c63-rd is 0.3 rather
 * than 0.12 (0.25 to 0.4 are within a few per cent): the JPEG tables'
 * steps grow with frequency, so s understates the steps of most
 * coefficients. The vector search compares SADs, which grow like the
 * square root of SSDs, so its multiplier is the square root of the SSD
 * one (factors of 0.5 and 2 measured worse). */
#define LAMBDA_SSD_PER_STEP2 0.3f
#define LAMBDA_SAD_PER_SQRT 1.0f

void c63_rd_lambda_init(const uint8_t quant[3][64], c63_rd_lambda *l)
{
  const float step = (quant[0][0] + quant[0][1] + quant[0][2]) / 3.0f;
  l->ssd = LAMBDA_SSD_PER_STEP2 * step * step;
  l->sad_16 = (int)lrintf(16.0f * LAMBDA_SAD_PER_SQRT * sqrtf(l->ssd));
}

static inline int bit_width(int v)
{
  unsigned a = (unsigned)(v < 0 ? -v : v);
  return a ? 32 - __builtin_clz(a) : 0;
}

/* Bits of a value coded as its size with table t, then the size's bits. */
static inline int value_bits(const c63_huff_enc *t, int v)
{
  const int s = bit_width(v);
  return t->len[s] + s;
}

int c63_rd_mv_bits(const c63_mv *mv, const c63_mv *left)
{
  if (!mv->use_mv) return 1;
  if (left && left->use_mv && left->x == mv->x && left->y == mv->y) return 2;
  const c63_huff_enc *t = &c63_huff_enc_tables()[C63_HUFF_MV];
  return 2 + value_bits(t, mv->x) + value_bits(t, mv->y);
}

int c63_rd_coef_bits(const int16_t coef[64], int chroma, int prev_dc)
{
  const c63_huff_enc *tabs = c63_huff_enc_tables();
  const c63_huff_enc *act = &tabs[chroma ? C63_HUFF_AC1 : C63_HUFF_AC0];
  /* the DC difference wraps in int16_t, as the entropy coder writes it */
  int bits = value_bits(&tabs[chroma ? C63_HUFF_DC1 : C63_HUFF_DC0], (int16_t)(coef[0] - prev_dc));
  int run = 0, last = 0;
  for (int z = 1; z < 64; z++) {
    if (!coef[z]) {
      run++;
      continue;
    }
    const int s = bit_width(coef[z]);
    bits += (run >> 4) * act->len[0xf0] + act->len[(run & 15) << 4 | s] + s;
    run = 0;
    last = z;
  }
  return last < 63 ? bits + act->len[0x00] : bits;
}

void c63_rd_choose_vector(const uint16_t *sads, int left, int top, int right, int bottom, int mx,
                          int my, const c63_mv *left_mv, const c63_rd_lambda *l, c63_mv *out)
{
  const c63_huff_enc *t = &c63_huff_enc_tables()[C63_HUFF_MV];
  const int n = right - left;
  /* Costs fit an int: 16 * SAD <= 261120, and sad_16 * bits stays far
   * below 2^31 for any quantiser. */
  int cost_x[2 * C63_MAX_SEARCH_RANGE + 1];
  for (int x = left; x < right; x++)
    cost_x[x - left] = l->sad_16 * value_bits(t, x - mx);
  int best = INT_MAX, best_i = 0;
  for (int y = top; y < bottom; y++) {
    /* use_mv, reuse = 0, and the vertical component */
    const int row = l->sad_16 * (2 + value_bits(t, y - my));
    const uint16_t *s = sads + (size_t)(y - top) * n;
    for (int i = 0; i < n; i++) {
      const int cost = 16 * s[i] + row + cost_x[i];
      if (cost < best) {
        best = cost;
        best_i = (y - top) * n + i;
      }
    }
  }
  /* The left neighbour's vector costs 2 bits (use_mv, reuse = 1) instead;
   * it wins a tie when it comes first in raster order. */
  if (left_mv && left_mv->use_mv) {
    const int x = mx + left_mv->x, y = my + left_mv->y;
    if (x >= left && x < right && y >= top && y < bottom) {
      const int i = (y - top) * n + (x - left), cost = 16 * sads[i] + 2 * l->sad_16;
      if (cost < best || (cost == best && i < best_i)) {
        best = cost;
        best_i = i;
      }
    }
  }
  out->x = (int8_t)(left + best_i % n - mx);
  out->y = (int8_t)(top + best_i / n - my);
  out->use_mv = 1;
  out->pad_ = 0;
}

void c63_rd_trellis_quantise(const float dct[64], const uint8_t quant[64], int ac_limit, int chroma,
                             float lambda, int16_t out[64])
{
  const c63_huff_enc *act = &c63_huff_enc_tables()[chroma ? C63_HUFF_AC1 : C63_HUFF_AC0];
  const float zrl = lambda * act->len[0xf0];
  /* Node 0 is the start; node k > 0 is the k-th AC coefficient that the
   * format's quantisation leaves non-zero, the only places a non-zero level
   * can be. cost[k]: the least cost of the coefficients up to pos[k] with
   * pos[k] the last non-zero one so far, as squared error added to that of
   * an all-zero block (so a zero costs nothing) plus lambda * bits. */
  int pos[64], level[64], from[64], n = 1;
  float cost[64];

  c63_quantise_block(dct, quant, ac_limit, out);
  pos[0] = 0;
  cost[0] = 0.0f;
  for (int z = 1; z < 64; z++) {
    if (!out[z]) continue;
    /* Orthonormal units: the transform is 4 times the orthonormal DCT, and
     * a level l reconstructs as 4 * round(l * quant / 4) (format 5.5). */
    const float o = fabsf(dct[z] / 4.0f);
    const int sign = out[z] < 0 ? -1 : 1;
    float best = INFINITY;
    int best_level = 0, best_from = 0;
    for (int a = abs(out[z]); a > 0 && a >= abs(out[z]) - 1; a--) {
      const float e = o - (float)(4 * ((a * quant[z] + 2) >> 2));
      const int s = bit_width(a);
      const float here = e * e - o * o;
      for (int k = 0; k < n; k++) {
        const int run = z - pos[k] - 1;
        const float c = cost[k] + (float)(run >> 4) * zrl +
                        lambda * (float)(act->len[(run & 15) << 4 | s] + s) + here;
        if (c < best) {
          best = c;
          best_level = sign * a;
          best_from = k;
        }
      }
    }
    pos[n] = z;
    cost[n] = best;
    level[n] = best_level;
    from[n] = best_from;
    n++;
  }
  /* the block ends after the best last node, with an EOB unless at 63 */
  float best = INFINITY;
  int last = 0;
  for (int k = 0; k < n; k++) {
    const float c = cost[k] + (pos[k] < 63 ? lambda * act->len[0x00] : 0.0f);
    if (c < best) {
      best = c;
      last = k;
    }
  }
  for (int z = 1; z < 64; z++)
    out[z] = 0;
  for (int k = last; k > 0; k = from[k])
    out[pos[k]] = (int16_t)level[k];
}
