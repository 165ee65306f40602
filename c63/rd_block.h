/* The per-block arithmetic of the rd mode (docs/rd.md) that the CPU coder
 * (rd.c, rd_code.c) and the CUDA one (cuda/c63_cuda_rd.cu) share, written
 * once so that both decide alike to the bit: the bits the entropy coder
 * spends on a block's vector and coefficients, the cost of a vector in the
 * search, and the trellis over a quantised block's AC levels. The Huffman
 * code lengths come in as arrays (c63_huff_enc.len: host tables on the CPU,
 * a device copy on the GPU). Float sums and products are written in the
 * order the CPU evaluates them; the CUDA build forbids FMA contraction
 * (-fmad=false) as the C build does (-ffp-contract=off).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef C63_RD_BLOCK_H
#define C63_RD_BLOCK_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "bit_width.h"
#include "dsp.h"

#ifdef __CUDACC__
#define C63_RD_FN __host__ __device__ __forceinline__
#else
#define C63_RD_FN static inline
#endif

/* Bits of a value coded as its size with a table of code lengths, then the
 * size's bits. */
C63_RD_FN int c63_rd_value_bits(const uint8_t *len, int v)
{
  const int s = c63_bit_width(v);
  return len[s] + s;
}

/* Bits of a block's motion fields (c63_rd_mv_bits); mv_len: the MV table. */
C63_RD_FN int c63_rd_mv_bits_len(const uint8_t *mv_len, const c63_mv *mv, const c63_mv *left)
{
  if (!mv->use_mv) return 1;
  if (left && left->use_mv && left->x == mv->x && left->y == mv->y) return 2;
  return 2 + c63_rd_value_bits(mv_len, mv->x) + c63_rd_value_bits(mv_len, mv->y);
}

/* Bits of the DC difference, which wraps in int16_t as the coder writes it. */
C63_RD_FN int c63_rd_dc_bits(const uint8_t *dc_len, int dc, int prev_dc)
{
  return c63_rd_value_bits(dc_len, (int16_t)(dc - prev_dc));
}

/* Bits of the AC coefficients: run/size codes, ZRLs, and the EOB unless the
 * last coefficient is non-zero. */
C63_RD_FN int c63_rd_ac_bits(const uint8_t *ac_len, const int16_t coef[64])
{
  int bits = 0, run = 0, last = 0;
  for (int z = 1; z < 64; z++) {
    if (!coef[z]) {
      run++;
      continue;
    }
    const int s = c63_bit_width(coef[z]);
    bits += (run >> 4) * ac_len[0xf0] + ac_len[(run & 15) << 4 | s] + s;
    run = 0;
    last = z;
  }
  return last < 63 ? bits + ac_len[0x00] : bits;
}

/* The trellis of c63_rd_trellis_quantise on a block that out already holds
 * quantised as the format does (dct: the transform it came from): each AC
 * level kept, one step nearer zero, or zero, for the least squared error
 * plus lambda * bits over the whole block. */
C63_RD_FN void c63_rd_trellis_levels(const float dct[64], const uint8_t quant[64],
                                     const uint8_t *ac_len, float lambda, int16_t out[64])
{
  const float zrl = lambda * ac_len[0xf0];
  /* Node 0 is the start; node k > 0 is the k-th AC coefficient that the
   * format's quantisation leaves non-zero, the only places a non-zero level
   * can be. cost[k]: the least cost of the coefficients up to pos[k] with
   * pos[k] the last non-zero one so far, as squared error added to that of
   * an all-zero block (so a zero costs nothing) plus lambda * bits. */
  int pos[64], level[64], from[64], n = 1;
  float cost[64];

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
      const int s = c63_bit_width(a);
      const float here = e * e - o * o;
      for (int k = 0; k < n; k++) {
        const int run = z - pos[k] - 1;
        const float c = cost[k] + (float)(run >> 4) * zrl +
                        lambda * (float)(ac_len[(run & 15) << 4 | s] + s) + here;
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
    const float c = cost[k] + (pos[k] < 63 ? lambda * ac_len[0x00] : 0.0f);
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

#endif
