/* The rd mode's per-block work on the GPU (c63_cuda_rd.cu), as
 * c63/rd_code.c does it on the CPU:
 *  - a trial by the 8 threads of its block, a row each, then a column
 *    each: the rd transform in integers (c63/rd_block.h), the trials'
 *    quantisation, the bits of its AC levels, and the decoder's own
 *    reconstruction (the float transform of c63_cuda_dct.cuh) for its
 *    squared error;
 *  - the chosen trial's levels by the trellis of c63/rd_block.h, by half a
 *    warp, each coefficient's nodes priced across the lanes.
 * Included by c63_cuda_rd.cu only.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef C63_CUDA_RD_TRIAL_CUH
#define C63_CUDA_RD_TRIAL_CUH

#include <stdint.h>

#include "c63/rd_block.h"
#include "cuda/c63_cuda_dct.cuh"
#include "cuda/c63_cuda_internal.h"
#include "cuda/c63_cuda_policy.cuh"

extern "C" {
#include "c63/tables.h"
}

namespace
{

/* The CPU's tables, copied to the device once. */
struct rd_tables {
  uint32_t recip[256]; /* c63_rd_recip of each quantiser */
  uint8_t len[4][256]; /* Huffman code lengths, c63_huff_enc order */
};

/* A pass of the rd transform: all 8 outputs of c63_rd_fdct_out over in,
 * to the bit. The even outputs take the sums and differences of the
 * symmetric half that the constants' symmetry allows, 6 products instead
 * of 16 (integer algebra: the same sums exactly); the odd ones the 16
 * products of the antisymmetric half. The constants are immediates. */
__device__ __forceinline__ void rd_fdct_pass(const int in[8], int out[8], int shift)
{
  constexpr int32_t k[8][4] = C63_RD_FDCT_K;
  static_assert(k[0][1] == k[0][0] && k[0][2] == k[0][0] && k[0][3] == k[0][0] &&
                    k[4][0] == k[0][0] && k[4][1] == -k[0][0] && k[4][2] == -k[0][0] &&
                    k[4][3] == k[0][0],
                "rows 0 and 4: one constant");
  static_assert(k[2][2] == -k[2][1] && k[2][3] == -k[2][0] && k[6][2] == -k[6][1] &&
                    k[6][3] == -k[6][0],
                "rows 2 and 6: antisymmetric");
  int s[4], d[4];
#pragma unroll
  for (int x = 0; x < 4; x++) {
    s[x] = in[x] + in[7 - x];
    d[x] = in[x] - in[7 - x];
  }
  const int round = 1 << (shift - 1);
  const int e0 = s[0] + s[3], e1 = s[1] + s[2], o0 = s[0] - s[3], o1 = s[1] - s[2];
  out[0] = (round + k[0][0] * (e0 + e1)) >> shift;
  out[4] = (round + k[4][0] * (e0 - e1)) >> shift;
  out[2] = (round + k[2][0] * o0 + k[2][1] * o1) >> shift;
  out[6] = (round + k[6][0] * o0 + k[6][1] * o1) >> shift;
#pragma unroll
  for (int u = 1; u < 8; u += 2) {
    int acc = round;
#pragma unroll
    for (int x = 0; x < 4; x++)
      acc += k[u][x] * d[x];
    out[u] = acc >> shift;
  }
}

constexpr unsigned kFull = 0xffffffffu;

/* ---- A trial by the 8 threads of its block ---- */

/* The rd mode's tuning (c63_cuda_policy.cuh). */
using rd_policy = c63_cuda_rd_policy;

/* Trials per CTA of the trials kernel, 8 threads each. */
constexpr int kTrialsPerCta = rd_policy::kTrialsPerCta;
constexpr int kTrialThreads = 8 * kTrialsPerCta;

/* What the trials and the coding of a frame look up, per plane: at each
 * position (v, u) of a block (index v * 8 + u) the zig-zag index z (low
 * byte) and quant[z] (high byte), and c63_rd_recip(quant[z]); the
 * quantiser in zig-zag order; and the AC code lengths. Built once a frame
 * (tables_kernel), copied into each CTA's shared memory. */
struct __align__(16) trial_tables
{
  uint16_t zq[3][64];
  uint32_t recip[3][64];
  uint8_t quant[3][64];
  uint8_t ac_len[2][256];
};

/* Thread i of the one CTA of tables_kernel builds entries i, i + blockDim.x, ... */
__device__ __forceinline__ void build_trial_tables(trial_tables &t, const c63_cuda_planes &P,
                                                   const rd_tables &T)
{
  for (int i = threadIdx.x; i < 3 * 64; i += blockDim.x) {
    const int p = i >> 6, k = i & 63;
    /* k as a position v * 8 + u of the block, whose zig-zag index is z */
    const int z = zigzag(k >> 3, k & 7);
    const int q = p < P.n ? P.p[p].quant[z] : 1;
    t.zq[p][k] = (uint16_t)(z | q << 8);
    t.recip[p][k] = T.recip[q];
    /* k as a zig-zag index (the quantiser tables' own order) */
    t.quant[p][k] = p < P.n ? P.p[p].quant[k] : 1;
  }
  for (int i = threadIdx.x; i < 2 * 256; i += blockDim.x)
    t.ac_len[i >> 8][i & 255] = T.len[i >> 8 ? C63_HUFF_AC1 : C63_HUFF_AC0][i & 255];
}

/* The frame's tables into shared memory, in 16-byte words (a barrier must
 * follow). */
__device__ __forceinline__ void copy_trial_tables(trial_tables &dst, const trial_tables *src)
{
  for (int i = threadIdx.x; i < (int)(sizeof(trial_tables) / 16); i += blockDim.x)
    reinterpret_cast<uint4 *>(&dst)[i] = reinterpret_cast<const uint4 *>(src)[i];
}

/* A trial's part of the CTA's transposes (a padded row: fewer bank
 * conflicts). */
struct trial_buf {
  int i[8][9];
  float f[8][9];
};

/* The sum of v over the 8 threads of a block. */
template <typename T> __device__ __forceinline__ T group_sum(T v)
{
#pragma unroll
  for (int o = 1; o < 8; o <<= 1)
    v += __shfl_xor_sync(kFull, v, o);
  return v;
}

/* The rd transform (c63_rd_fdct) of a block by its 8 threads, which are
 * in one warp: thread r passes row r of the residual, then column u = r,
 * whose coefficients (v, u) it returns in y[v]. b: the block's
 * workspace. */
__device__ __forceinline__ void block_fdct(trial_buf &b, int r, const int res[8], int y[8])
{
  /* rows, written transposed: b.i[u][row] */
  int row[8];
  rd_fdct_pass(res, row, C63_RD_FDCT_SHIFT1);
#pragma unroll
  for (int u = 0; u < 8; u++)
    b.i[u][r] = row[u];
  __syncwarp();
  int col[8];
#pragma unroll
  for (int j = 0; j < 8; j++)
    col[j] = b.i[r][j];
  rd_fdct_pass(col, y, C63_RD_FDCT_SHIFT2);
}

/* The stages of a trial (block_trial), each by the 8 threads of its block,
 * thread r on row r, then column r. */

/* Row r of the residual from the block's and the prediction's rows
 * (packed bytes); returns its SAD. */
__device__ __forceinline__ int trial_residual(uint2 cw, uint2 pw, int res[8])
{
  int sad = 0;
  int c[8], p[8];
  unpack_row(cw, c);
  unpack_row(pw, p);
#pragma unroll
  for (int i = 0; i < 8; i++) {
    res[i] = (int16_t)(c[i] - p[i]);
    sad += abs(res[i]);
  }
  return sad;
}

/* Column r of the transform (yc) quantised as trials are, into l: packs
 * the column into `packed` (two coefficients a word), leaves the
 * decoder's input to its inverse transform in b.f (row v: b.f[v][u]; +0
 * for a zero level, and for every level of a row whose levels in the
 * warp's blocks are all zero), and returns the block's non-zero levels as
 * bits z of the thread's column. */
__device__ __forceinline__ unsigned long long trial_quantise(const trial_tables &tb, trial_buf &b,
                                                             int r, int plane, int ac_limit,
                                                             const int yc[8], int l[8],
                                                             int packed[4])
{
  unsigned long long nz = 0;
#pragma unroll
  for (int v = 0; v < 8; v++) {
    const int yv = yc[v];
    if (v & 1)
      packed[v >> 1] |= (int)((uint32_t)yv << 16);
    else
      packed[v >> 1] = yv & 0xffff;
    const int zq = tb.zq[plane][v * 8 + r], z = zq & 0xff;
    /* the DC (z = 0) is at (0, 0): for v > 0 known at compile time,
     * without a test of z */
    const bool dc = v == 0 && r == 0;
    l[v] = c63_rd_quantise_level(yv, zq >> 8, tb.recip[plane][v * 8 + r],
                                 dc ? C63_RD_ROUND_NEAREST : C63_RD_TRIAL_ROUND_AC,
                                 dc ? INT16_MAX : ac_limit);
    if (l[v]) nz |= 1ull << z;
    b.f[v][r] = __any_sync(kFull, l[v] != 0) ? dequant_scaled(l[v], zq >> 8, r, v) : 0.0f;
  }
  return nz;
}

/* The bits of the thread's AC levels l (c63_rd_ac_bits): each from the
 * run since the non-zero coefficient before it (or the DC); m: the
 * block's non-zero levels, bit 0 set. */
__device__ __forceinline__ int trial_ac_bits(const trial_tables &tb, int r, int plane,
                                             const uint8_t *ac_len, unsigned long long m,
                                             const int l[8])
{
  int bits = 0;
#pragma unroll
  for (int v = 0; v < 8; v++) {
    const int z = tb.zq[plane][v * 8 + r] & 0xff;
    const bool ac = v != 0 || r != 0;
    if (__any_sync(kFull, ac && l[v]) && ac && l[v]) {
      const int prev = 63 - __clzll((long long)(m & ((1ull << z) - 1)));
      const int run = z - prev - 1, s = c63_bit_width(l[v]);
      bits += (run >> 4) * ac_len[0xf0] + ac_len[(run & 15) << 4 | s] + s;
    }
  }
  return bits;
}

/* try_block of c63/rd_code.c by the 8 threads of a block (thread r: row r,
 * then column r): the block at cur predicted from pred (NULL: intra), both
 * with stride w, in plane `plane`. Writes the transform (column by column:
 * y[u * 8 + v]) and the summary. Every thread of the warp calls it (the
 * inactive ones, past the end of the list, on a zero block, writing
 * nothing), for its votes and shuffles. Stages: load the rows and take
 * the residual, transform, quantise, price the levels, reconstruct, sum
 * over the block. The reconstruction and the squared error stay in the
 * body: as functions of their own they compile to other instructions. */
__device__ __forceinline__ void block_trial(const trial_tables &tb, trial_buf &b, int r,
                                            bool active, const uint8_t *cur, const uint8_t *pred,
                                            int w, int plane, int ac_limit, c63_mv mv, int16_t *y,
                                            c63_rd_sum *sum)
{
  /* this row of the block and of its prediction, kept packed for the
   * squared error at the end */
  uint2 cw = make_uint2(0, 0), pw = make_uint2(0, 0);
  if (active) {
    cw = *reinterpret_cast<const uint2 *>(cur + r * w); /* rows are 8-byte aligned */
    if (pred) pw = load_row_unaligned(pred + r * w);
  }
  int res[8];
  const int sad = trial_residual(cw, pw, res);
  int yc[8], l[8];
  block_fdct(b, r, res, yc);
  int packed[4];
  unsigned long long nz = trial_quantise(tb, b, r, plane, ac_limit, yc, l, packed);
  if (active)
    reinterpret_cast<int4 *>(y)[r] = make_int4(packed[0], packed[1], packed[2], packed[3]);
  nz |= __shfl_xor_sync(kFull, nz, 1);
  nz |= __shfl_xor_sync(kFull, nz, 2);
  nz |= __shfl_xor_sync(kFull, nz, 4);
  const uint8_t *ac_len = tb.ac_len[plane != 0];
  const unsigned long long m = nz | 1ull;
  const int bits = trial_ac_bits(tb, r, plane, ac_len, m, l);
  /* The decoder's reconstruction; a warp whose blocks have no level at
   * all skips it (every sum of the inverse transform would be +0). */
  int rec[8];
#pragma unroll
  for (int i = 0; i < 8; i++)
    rec[i] = 0;
  if (__any_sync(kFull, active && nz != 0)) {
    __syncwarp(); /* b.f written */
    float x[8], t[8];
#pragma unroll
    for (int u = 0; u < 8; u++)
      x[u] = b.f[r][u];
    idct_pass_sparse(x, t); /* row v = r */
    __syncwarp();
#pragma unroll
    for (int i = 0; i < 8; i++)
      b.f[r][i] = t[i];
    __syncwarp();
#pragma unroll
    for (int j = 0; j < 8; j++)
      x[j] = b.f[j][r];
    idct_pass_sparse(x, t); /* column x = r */
#pragma unroll
    for (int v = 0; v < 8; v++)
      b.i[v][r] = truncate_sample(t[v]);
    __syncwarp();
#pragma unroll
    for (int i = 0; i < 8; i++)
      rec[i] = b.i[r][i]; /* row r */
  }
  int ssd = 0;
  {
    int c[8], p[8];
    unpack_row(cw, c);
    unpack_row(pw, p);
#pragma unroll
    for (int i = 0; i < 8; i++) {
      const int d = reconstruct_pixel(rec[i], p[i]) - c[i];
      ssd += d * d;
    }
  }
  ssd = group_sum(ssd);
  const int bits_sad = group_sum(bits << 16 | sad); /* both below 2^16 */
  if (active && r == 0) {
    const int last = 63 - __clzll((long long)m);
    *sum = c63_rd_sum{ssd,
                      (int16_t)((bits_sad >> 16) + (last < 63 ? ac_len[0x00] : 0)),
                      (int16_t)l[0],
                      mv,
                      (uint16_t)(bits_sad & 0xffff),
                      1};
  }
}

/* ---- The chosen trial coded by the 8 threads of its block ---- */

static_assert(C63_RD_TRELLIS_WINDOW == 8, "the trellis' window is a node per thread of a block");

/* Blocks per CTA of the coding kernel, 8 threads each. */
constexpr int kCodeBlocks = rd_policy::kCodeBlocks;

/* A block's coding workspace: the trellis' inputs and nodes, then the
 * inverse transform's transposes (padded rows: fewer bank conflicts). */
struct __align__(16) code_ws
{
  float dct[64]; /* 4 times the orthonormal transform, zig-zag order */
  int16_t coef[64];
  union {
    struct {
      float cost[64];    /* trellis nodes */
      uint32_t link[64]; /* node_link */
    } node;
    trial_buf t;
  };
};

/* A trellis node's position (bits 0-7), the node before it (8-15) and its
 * level (16-31), in one word: one store a node. */
__device__ __forceinline__ uint32_t node_link(int pos, int from, int level)
{
  return (uint32_t)pos | (uint32_t)from << 8 | (uint32_t)level << 16;
}
__device__ __forceinline__ int node_pos(uint32_t link)
{
  return (int)(link & 0xff);
}
__device__ __forceinline__ int node_from(uint32_t link)
{
  return (int)(link >> 8 & 0xff);
}
__device__ __forceinline__ int16_t node_level(uint32_t link)
{
  return (int16_t)(link >> 16);
}

/* The least (c, order) over the 8 threads of a block: the first in the
 * sequential order among equal costs, as a loop with a strict < keeps
 * it. */
__device__ __forceinline__ void group_argmin(float &c, int &order)
{
#pragma unroll
  for (int o = 1; o < 8; o <<= 1) {
    const float oc = __shfl_xor_sync(kFull, c, o);
    const int oo = __shfl_xor_sync(kFull, order, o);
    if (oc < c || (oc == c && oo < order)) {
      c = oc;
      order = oo;
    }
  }
}

/* Bit z (0..63) set where coef[z] != 0, for the block of thread r, which
 * holds coefficients r + 8 h. */
__device__ __forceinline__ unsigned long long group_nonzero(const int16_t *coef, int r)
{
  const int group = (threadIdx.x & 31) >> 3;
  unsigned long long m = 0;
#pragma unroll
  for (int h = 0; h < 8; h++) {
    const unsigned b = __ballot_sync(kFull, coef[r + 8 * h] != 0);
    m |= (unsigned long long)(b >> (8 * group) & 0xffu) << (8 * h);
  }
  return m;
}

/* The end of group_trellis: the block ends after the best last node (n
 * nodes), with an EOB unless at 63; its levels, every other AC zero, are
 * those of the nodes back from there. any: the block has AC levels. */
__device__ __forceinline__ void trellis_backtrack(code_ws &ws, const uint8_t *ac_len, float lambda,
                                                  int r, int n, bool any)
{
  float best = INFINITY;
  int last = 1 << 30;
  for (int k = r; any && k < n; k += 8) {
    const float c =
        ws.node.cost[k] + (node_pos(ws.node.link[k]) < 63 ? lambda * ac_len[0x00] : 0.0f);
    if (c < best) {
      best = c;
      last = k;
    }
  }
  group_argmin(best, last);
  if (any) {
#pragma unroll
    for (int h = 0; h < 8; h++)
      if (r + h) ws.coef[r + 8 * h] = 0;
  }
  __syncwarp();
  if (any && r == 0)
    for (int k = last; k > 0;) {
      const uint32_t l = ws.node.link[k];
      ws.coef[node_pos(l)] = node_level(l);
      k = node_from(l);
    }
  __syncwarp();
}

/* c63_rd_trellis_levels, with the nodes' costs for a coefficient computed
 * across the block's 8 threads (a node of the window each, kept in its
 * registers): the same expressions, and the same winner. The warp's four blocks go in step; a
 * block whose levels are all decided waits. */
__device__ void group_trellis(code_ws &ws, const uint8_t *quant, const uint8_t *ac_len,
                              float lambda, int r)
{
  unsigned long long todo = group_nonzero(ws.coef, r) & ~1ull;
  /* without AC levels a block has nothing to choose (the loop below would
   * keep them all) */
  const bool any = todo != 0;
  if (!__any_sync(kFull, any)) return;
  const float zrl = lambda * ac_len[0xf0];
  int n = 1;
  /* The nodes a level may follow (C63_RD_TRELLIS_WINDOW, which is 8): the
   * start (thread 0's) and the last 8, one a thread: thread r keeps, in
   * registers, the last node k = r modulo 8 (none yet: own_k = 0), its
   * coefficient's position and its cost. The nodes go to shared memory
   * too, for the end. */
  int own_k = 0, own_pos = 0;
  float own_cost = 0.0f;
  if (r == 0) {
    ws.node.link[0] = node_link(0, 0, 0);
    ws.node.cost[0] = 0.0f;
  }
  while (__any_sync(kFull, todo != 0)) {
    const bool active = todo != 0;
    const int z = active ? __ffsll((long long)todo) - 1 : 1;
    todo &= todo - 1;
    const int q = ws.coef[z], aq = active ? abs(q) : 0, qz = quant[z];
    const float o = fabsf(ws.dct[z] / 4.0f);
    /* A node's cost is ((its predecessor's + the ZRLs') + lambda * the
     * level's bits) + its error, summed in that order as on the CPU: the
     * first sum and the code's row depend on the predecessor alone, so each
     * is made once for both levels tried. Thread r prices its own node
     * (where it has one) and thread 0 the start too. */
    const int run_s = z - 1, run_o = z - own_pos - 1;
    const float base_s = 0.0f + (float)(run_s >> 4) * zrl;
    const float base_o = own_cost + (float)(run_o >> 4) * zrl;
    const uint8_t *len_s = ac_len + ((run_s & 15) << 4), *len_o = ac_len + ((run_o & 15) << 4);
    const bool start = r == 0, own = own_k != 0;
    float best = INFINITY;
    int order = 1 << 30;
    /* the level kept, then one step nearer zero where that is not zero;
     * candidates in the CPU's order, the first of equal costs kept */
#pragma unroll
    for (int ai = 0; ai < 2; ai++) {
      const int a = aq - ai;
      if (a <= 0) break;
      const float e = o - (float)(4 * ((a * qz + 2) >> 2));
      const int s = c63_bit_width(a);
      const float here = e * e - o * o;
      const float cs = base_s + lambda * (float)(len_s[s] + s) + here;
      const float co = base_o + lambda * (float)(len_o[s] + s) + here;
      if (start && cs < best) {
        best = cs;
        order = ai * 64;
      }
      if (own && co < best) {
        best = co;
        order = ai * 64 + own_k;
      }
    }
    group_argmin(best, order);
    if (active) {
      if (r == 0) {
        ws.node.cost[n] = best;
        ws.node.link[n] = node_link(z, order & 63, (q < 0 ? -1 : 1) * (aq - (order >> 6)));
      }
      if ((n & 7) == r) {
        own_k = n;
        own_pos = z;
        own_cost = best;
      }
      n++;
    }
  }
  __syncwarp();
  trellis_backtrack(ws, ac_len, lambda, r, n, any);
}

/* c63_rd_code_levels of a block's chosen trial (y: its transform, column
 * by column; or, in keyframes, cur: the block, transformed here), and its
 * reconstruction as the decoder makes it, by its 8
 * threads (thread r: column r, then row r): the coefficients into coef
 * (zig-zag order), row r of the reconstruction into rec (stride w), the
 * prediction's row r from pred (NULL: intra). Every thread of the warp
 * calls it (inactive ones on a zero block, writing nothing). */
__device__ __forceinline__ void block_code(const trial_tables &tb, code_ws &ws, int r, bool active,
                                           const int16_t *y, const uint8_t *cur, int plane,
                                           int ac_limit, float lambda, const uint8_t *pred, int w,
                                           int16_t *coef, uint8_t *rec)
{
  int yc[8];
  if (cur) {
    /* a keyframe's block, which no trial transformed: intra */
    int res[8];
    unpack_row(active ? *reinterpret_cast<const uint2 *>(cur + r * w) : make_uint2(0, 0), res);
    block_fdct(ws.t, r, res, yc);
  } else {
    int4 col = make_int4(0, 0, 0, 0);
    if (active) col = reinterpret_cast<const int4 *>(y)[r];
    const int packed[4] = {col.x, col.y, col.z, col.w};
#pragma unroll
    for (int v = 0; v < 8; v++)
      yc[v] = (int16_t)(packed[v >> 1] >> (v & 1 ? 16 : 0));
  }
#pragma unroll
  for (int v = 0; v < 8; v++) {
    const int yv = yc[v];
    const int zq = tb.zq[plane][v * 8 + r], z = zq & 0xff;
    ws.coef[z] = (int16_t)c63_rd_quantise_level(yv, zq >> 8, tb.recip[plane][v * 8 + r],
                                                C63_RD_ROUND_NEAREST,
                                                v == 0 && r == 0 ? INT16_MAX : ac_limit);
    ws.dct[z] = (float)yv / 2.0f; /* the trellis takes 4 times orthonormal */
  }
  __syncwarp();
  group_trellis(ws, tb.quant[plane], tb.ac_len[plane != 0], lambda, r);
  if (active) reinterpret_cast<int4 *>(coef)[r] = reinterpret_cast<const int4 *>(ws.coef)[r];
  /* the decoder's reconstruction: rows (thread r: row v = r), columns,
   * then back to rows through the workspace */
  float x[8], t[8];
#pragma unroll
  for (int u = 0; u < 8; u++) {
    const int zq = tb.zq[plane][r * 8 + u];
    x[u] = dequant_scaled(ws.coef[zq & 0xff], zq >> 8, u, r);
  }
  idct_pass_sparse(x, t);
  /* (the trellis' nodes, which the transposes reuse, are read by now) */
#pragma unroll
  for (int i = 0; i < 8; i++)
    ws.t.f[r][i] = t[i];
  __syncwarp();
#pragma unroll
  for (int j = 0; j < 8; j++)
    x[j] = ws.t.f[j][r];
  idct_pass_sparse(x, t);
#pragma unroll
  for (int v = 0; v < 8; v++)
    ws.t.i[v][r] = truncate_sample(t[v]);
  __syncwarp();
  if (!active) return;
  int px[8], p[8];
  unpack_row(pred ? load_row_unaligned(pred + r * w) : make_uint2(0, 0), p);
#pragma unroll
  for (int i = 0; i < 8; i++)
    px[i] = reconstruct_pixel(ws.t.i[r][i], p[i]);
  store_row(rec + r * w, px);
}

} // namespace

#endif
