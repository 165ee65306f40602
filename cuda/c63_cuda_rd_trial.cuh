/* One trial of the rd mode on the GPU, by half a warp (c63_cuda_rd.cu): a
 * block coded one way (intra, or predicted with a vector) as
 * c63/rd_code.c's try_block codes it, with the transform and
 * reconstruction of c63/dsp_c.c, each element computed by one lane in the C
 * code's order, and the trellis of c63/rd_block.h with each coefficient's
 * nodes priced across the lanes. Included by c63_cuda_rd.cu only.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef C63_CUDA_RD_TRIAL_CUH
#define C63_CUDA_RD_TRIAL_CUH

#include <stdint.h>

#include "c63/quantise.h"
#include "c63/rd_block.h"
#include "cuda/c63_cuda_internal.h"

extern "C" {
#include "c63/tables.h"
}

namespace
{

/* The rest: what the chosen one leaves in the frame. */
struct __align__(16) rd_data
{
  int16_t coef[64];
  uint8_t rec[64];
};

/* The CPU's tables, copied to the device once. */
struct rd_tables {
  float dct[8][8];
  uint8_t zz_u[64], zz_v[64];
  uint8_t len[4][256]; /* Huffman code lengths, c63_huff_enc order */
};

/* ---- One trial by half a warp: the transform and reconstruction of
 * c63/dsp_c.c and the trellis of c63/rd_block.h ---- */

/* Lanes of a trial: a warp runs two, one in each half, in step. Each lane
 * takes elements lane + 16 h (h = 0..3) of its block, and in a transform
 * pass half a row: the row's eight inputs serve four outputs. */
constexpr int kTrialLanes = 16;

/* A trial's workspace in shared memory. */
struct __align__(16) trial_ws
{
  float a[64], b[64]; /* the 2-D transform's passes */
  float dct[64];      /* the forward transform, zig-zag order */
  int16_t coef[64];
  float cost[64]; /* trellis nodes */
  int16_t level[64];
  int8_t pos[64], from[64];
};

constexpr unsigned kFull = 0xffffffffu;

/* One pass of transform_2d over a 8x8 block in src (rows of 8): each
 * element the sum over j ascending of src[v][j] * C, as dct_1d / idct_1d,
 * written transposed into dst. Lane l computes elements 4 (l & 1) .. + 3
 * of row l >> 1; the sums keep the C code's order, so the bits are the
 * same. */
template <bool kInverse>
__device__ __forceinline__ void half_pass(const rd_tables &T, const float *src, float *dst, int hl)
{
  const int v = hl >> 1, i0 = 4 * (hl & 1);
  const float4 lo = reinterpret_cast<const float4 *>(src + v * 8)[0];
  const float4 hi = reinterpret_cast<const float4 *>(src + v * 8)[1];
  const float x[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
#pragma unroll
  for (int t = 0; t < 4; t++) {
    const int i = i0 + t;
    float acc = 0.0f;
#pragma unroll
    for (int j = 0; j < 8; j++)
      acc = acc + x[j] * (kInverse ? T.dct[i][j] : T.dct[j][i]);
    dst[i * 8 + v] = acc;
  }
  __syncwarp();
}

/* Sum of v over each half warp, in its lanes. */
__device__ __forceinline__ int half_sum(int v, int half)
{
#if __CUDA_ARCH__ >= 800
  const int s0 = __reduce_add_sync(kFull, half ? 0 : v);
  const int s1 = __reduce_add_sync(kFull, half ? v : 0);
  return half ? s1 : s0;
#else
#pragma unroll
  for (int o = kTrialLanes / 2; o > 0; o >>= 1)
    v += __shfl_xor_sync(kFull, v, o);
  return v;
#endif
}

/* The least (c, order) over each half warp: the first in the sequential
 * order among equal costs, as a loop with a strict < keeps it. Costs are
 * never NaN nor -0 (sums of squares, bits and +0), so their bits ordered
 * as unsigned integers order them as floats. */
__device__ __forceinline__ void half_argmin(float &c, int &order, int half)
{
#if __CUDA_ARCH__ >= 800
  const unsigned u = __float_as_uint(c), key = u & 0x80000000u ? ~u : u | 0x80000000u;
  const unsigned l0 = __reduce_min_sync(kFull, half ? 0xffffffffu : key);
  const unsigned l1 = __reduce_min_sync(kFull, half ? key : 0xffffffffu);
  const unsigned least = half ? l1 : l0;
  const unsigned mine = key == least ? (unsigned)order : 0xffffffffu;
  const unsigned o0 = __reduce_min_sync(kFull, half ? 0xffffffffu : mine);
  const unsigned o1 = __reduce_min_sync(kFull, half ? mine : 0xffffffffu);
  order = (int)(half ? o1 : o0);
  c = __uint_as_float(least & 0x80000000u ? least & 0x7fffffffu : ~least);
#else
#pragma unroll
  for (int o = kTrialLanes / 2; o > 0; o >>= 1) {
    const float oc = __shfl_xor_sync(kFull, c, o);
    const int oo = __shfl_xor_sync(kFull, order, o);
    if (oc < c || (oc == c && oo < order)) {
      c = oc;
      order = oo;
    }
  }
#endif
}

/* Bit z (0..63) set where coef[z] != 0, for the lane's half. */
__device__ __forceinline__ unsigned long long nonzero_mask(const int16_t *coef, int hl, int half)
{
  unsigned long long m = 0;
#pragma unroll
  for (int h = 0; h < 4; h++) {
    const unsigned b = __ballot_sync(kFull, coef[hl + kTrialLanes * h] != 0);
    m |= (unsigned long long)(b >> (kTrialLanes * half) & 0xffffu) << (kTrialLanes * h);
  }
  return m;
}

/* c63_rd_trellis_levels, with the nodes' costs for a coefficient computed
 * across the half's lanes: the same expressions, and the same winner. The
 * two halves go in step; a half whose levels are all decided waits. */
__device__ void half_trellis(trial_ws &ws, const uint8_t *quant, const uint8_t *ac_len,
                             float lambda, int hl, int half)
{
  unsigned long long todo = nonzero_mask(ws.coef, hl, half) & ~1ull;
  /* without AC levels a half has nothing to choose (the loop below would
   * keep them all) */
  const bool any = todo != 0;
  if (!__any_sync(kFull, any)) return;
  const float zrl = lambda * ac_len[0xf0];
  int n = 1;
  if (hl == 0) {
    ws.pos[0] = 0;
    ws.cost[0] = 0.0f;
  }
  __syncwarp();
  while (__any_sync(kFull, todo != 0)) {
    const bool active = todo != 0;
    const int z = active ? __ffsll((long long)todo) - 1 : 1;
    todo &= todo - 1;
    const int q = ws.coef[z], aq = active ? abs(q) : 0;
    const float o = fabsf(ws.dct[z] / 4.0f);
    float best = INFINITY;
    int order = 1 << 30;
    for (int ai = 0; ai < 2; ai++) {
      const int a = aq - ai;
      if (a <= 0) break;
      const float e = o - (float)(4 * ((a * quant[z] + 2) >> 2));
      const int s = c63_bit_width(a);
      const float here = e * e - o * o;
#pragma unroll
      for (int h = 0; h < 4; h++) {
        const int k = hl + kTrialLanes * h;
        if (k >= n) break;
        const int run = z - ws.pos[k] - 1;
        const float c = ws.cost[k] + (float)(run >> 4) * zrl +
                        lambda * (float)(ac_len[(run & 15) << 4 | s] + s) + here;
        if (c < best) {
          best = c;
          order = ai * 64 + k;
        }
      }
    }
    half_argmin(best, order, half);
    if (active) {
      if (hl == 0) {
        ws.pos[n] = (int8_t)z;
        ws.cost[n] = best;
        ws.level[n] = (int16_t)((q < 0 ? -1 : 1) * (aq - (order >> 6)));
        ws.from[n] = (int8_t)(order & 63);
      }
      n++;
    }
    __syncwarp();
  }
  /* the block ends after the best last node, with an EOB unless at 63 */
  float best = INFINITY;
  int last = 1 << 30;
#pragma unroll
  for (int h = 0; h < 4; h++) {
    const int k = hl + kTrialLanes * h;
    if (any && k < n) {
      const float c = ws.cost[k] + (ws.pos[k] < 63 ? lambda * ac_len[0x00] : 0.0f);
      if (c < best) {
        best = c;
        last = k;
      }
    }
  }
  half_argmin(best, last, half);
  if (any) {
#pragma unroll
    for (int h = 0; h < 4; h++)
      if (hl + h) ws.coef[hl + kTrialLanes * h] = 0;
  }
  __syncwarp();
  if (any && hl == 0)
    for (int k = last; k > 0; k = ws.from[k])
      ws.coef[ws.pos[k]] = ws.level[k];
  __syncwarp();
}

/* c63_rd_ac_bits across the half's lanes: each non-zero coefficient's code
 * from the run before it (the distance to the previous non-zero one, or to
 * the DC), summed, and the EOB unless the last is at 63. nz: nonzero_mask
 * of the coefficients. */
__device__ __forceinline__ int half_ac_bits(const trial_ws &ws, const uint8_t *ac_len, int hl,
                                            int half, unsigned long long nz)
{
  const unsigned long long m = nz | 1ull;
  int bits = 0;
#pragma unroll
  for (int h = 0; h < 4; h++) {
    const int z = hl + kTrialLanes * h;
    if (z && (m >> z & 1)) {
      const int prev = 63 - __clzll((long long)(m & ((1ull << z) - 1)));
      const int run = z - prev - 1, s = c63_bit_width(ws.coef[z]);
      bits += (run >> 4) * ac_len[0xf0] + ac_len[(run & 15) << 4 | s] + s;
    }
  }
  bits = half_sum(bits, half);
  const int last = 63 - __clzll((long long)m);
  return last < 63 ? bits + ac_len[0x00] : bits;
}

/* try_block of c63/rd_code.c by half a warp, without the parts that depend
 * on the left neighbour and the DC before (the decisions add them): the
 * block at cur predicted from pred (NULL: intra), both with stride w. Both
 * halves of the warp call it together; a half that is not active (no trial
 * left for it) runs along on its block and writes nothing. */
__device__ void half_trial(const rd_tables &T, const c63_cu_plane &pl, int chroma, float lambda,
                           const uint8_t *cur, const uint8_t *pred, c63_mv mv, bool active,
                           trial_ws &ws, c63_rd_sum *sum, rd_data *data)
{
  const int lane = threadIdx.x & 31, hl = lane & (kTrialLanes - 1), half = lane / kTrialLanes;
  const int w = pl.w;
  const uint8_t *ac_len = T.len[chroma ? C63_HUFF_AC1 : C63_HUFF_AC0];
  int pix[4], sad = 0;
#pragma unroll
  for (int h = 0; h < 4; h++) {
    const int e = hl + kTrialLanes * h, j = e >> 3, i = e & 7;
    pix[h] = cur[j * w + i];
    const int d = pix[h] - (pred ? pred[j * w + i] : 0);
    ws.a[e] = (float)(int16_t)d;
    sad += abs(d);
  }
  __syncwarp();
  half_pass<false>(T, ws.a, ws.b, hl);
  half_pass<false>(T, ws.b, ws.a, hl);
  /* scale (X * a(u)) * a(v), zig-zag, and the format's quantisation */
#pragma unroll
  for (int h = 0; h < 4; h++) {
    const int z = hl + kTrialLanes * h, u = T.zz_u[z], v = T.zz_v[z];
    const float x = ws.a[v * 8 + u] * (u ? 1.0f : C63_ISQRT2) * (v ? 1.0f : C63_ISQRT2);
    ws.dct[z] = x;
    const int q = pl.quant[z];
    int l = c63_quantise_value(x, q, q ? 1.0f / (float)(4 * q) : 0.0f);
    if (z > 0) l = l > pl.ac_limit ? pl.ac_limit : (l < -pl.ac_limit ? -pl.ac_limit : l);
    ws.coef[z] = (int16_t)l;
  }
  __syncwarp();
  half_trellis(ws, pl.quant, ac_len, lambda, hl, half);
  /* A block with no level at all reconstructs as its prediction: every
   * sum of the inverse transform is then +0 (so skipped). */
  const unsigned long long nz = nonzero_mask(ws.coef, hl, half);
  if (__any_sync(kFull, nz != 0)) {
    /* dequantise into natural order, scale, inverse transform */
#pragma unroll
    for (int h = 0; h < 4; h++) {
      const int z = hl + kTrialLanes * h, v = ws.coef[z] * pl.quant[z];
      ws.b[T.zz_v[z] * 8 + T.zz_u[z]] = (float)(v >= 0 ? (v + 2) >> 2 : -((-v + 2) >> 2));
    }
    __syncwarp();
#pragma unroll
    for (int h = 0; h < 4; h++) {
      const int e = hl + kTrialLanes * h, v = e >> 3, u = e & 7;
      ws.b[e] = ws.b[e] * (u ? 1.0f : C63_ISQRT2) * (v ? 1.0f : C63_ISQRT2);
    }
    __syncwarp();
    half_pass<true>(T, ws.b, ws.a, hl);
    half_pass<true>(T, ws.a, ws.b, hl);
  }
  int ssd = 0;
#pragma unroll
  for (int h = 0; h < 4; h++) {
    const int e = hl + kTrialLanes * h, j = e >> 3, i = e & 7;
    const float f = nz ? ws.b[e] : 0.0f;
    const int16_t r = f >= 32767.0f ? 32767 : f <= -32768.0f ? -32768 : (int16_t)f;
    int v = r + (pred ? pred[j * w + i] : 0);
    if (v > INT16_MAX) v = 0;
    const uint8_t rec = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
    if (active) {
      data->rec[e] = rec;
      data->coef[e] = ws.coef[e];
    }
    const int d = rec - pix[h];
    ssd += d * d;
  }
  const c63_rd_sum r = {half_sum(ssd, half),
                        (int16_t)half_ac_bits(ws, ac_len, hl, half, nz),
                        ws.coef[0],
                        mv,
                        (uint16_t)half_sum(sad, half),
                        1};
  if (active && hl == 0) *sum = r;
  __syncwarp();
}

} // namespace

#endif
