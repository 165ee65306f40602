/* The rd mode on the GPU (docs/rd.md): the decisions of the CPU coder
 * (c63/rd_code.c), to the bit, in four launches per frame.
 *
 * On the CPU a block's choice depends on its left neighbour's final vector
 * (which the format codes in 2 bits when reused) and on the DC before it,
 * so each MCU row goes block by block. Almost all of the work does not
 * depend on them, so it runs first, for every block at once:
 *
 *   1. search: the vector of least 16 * SAD + lambda * bits over the rd
 *      window, as c63_rd_choose_vector finds it before it looks at the
 *      left neighbour (its cost and raster index are kept for that);
 *   2. trials: every coding a decision may need, transformed,
 *      trellis-quantised and reconstructed, with its squared error and
 *      AC bits: intra, the searched vector, the zero vector, and the left
 *      neighbour's searched vector (the one it most often ends up with);
 *   3. decide: one thread per MCU row and plane walks the blocks in coding
 *      order as the CPU does, prices the trials with the left neighbour's
 *      final vector and the DC before, and picks. A vector no trial holds
 *      (one reused from further left) is tried there and then;
 *   4. gather: the chosen trial's coefficients, vector and reconstruction
 *      into the frame's buffers, for the entropy coder and the next frame.
 *
 * Keyframes have one candidate per block (intra) and need only 2 and 4.
 * The per-block arithmetic shared with the CPU is in c63/rd_block.h; the
 * transform and reconstruction below follow c63/dsp_c.c operation by
 * operation (the build forbids FMA contraction).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdint.h>
#include <string.h>

#include "c63/c63.h"
#include "c63/quantise.h"
#include "c63/rd_block.h"
#include "cuda/c63_cuda_internal.h"

extern "C" {
#include "c63/tables.h"
}

namespace
{

enum { T_INTRA, T_SEARCH, T_ZERO, T_LEFT_SEARCH, T_EXTRA, T_COUNT };

/* What a decision needs of one way of coding a block (16 bytes, one load). */
struct rd_sum {
  int ssd;
  int16_t ac_bits; /* c63_rd_ac_bits of the coefficients */
  int16_t dc;      /* the quantised DC */
  c63_mv mv;
  int valid;
};

/* The rest: what the chosen one leaves in the frame. */
struct rd_data {
  int16_t coef[64];
  uint8_t rec[64];
};

/* A frame's trials: T_COUNT slots of every block, slot-major (slot k of
 * block gb at k * stride + gb). */
struct rd_trials {
  rd_sum *sum;
  rd_data *data;
  size_t stride;
};

/* The search's best vector for a block, before the left neighbour counts. */
struct rd_search {
  int cost;  /* 16 * SAD + sad_16 * bits */
  int index; /* raster index in the block's rd window */
  c63_mv mv;
};

/* The CPU's tables, copied to the device once. */
struct rd_tables {
  float dct[8][8];
  uint8_t zz_u[64], zz_v[64];
  uint8_t len[4][256]; /* Huffman code lengths, c63_huff_enc order */
};

constexpr int kSearchThreads = 128;
/* The largest rd window: every candidate of the range, both ends, plus the
 * block; rows padded to whole words and one word more for the shifts. */
constexpr int kWinMax = 2 * C63_MAX_SEARCH_RANGE + 1 + 7;
constexpr int kWinStride = (kWinMax + 3) / 4 * 4 + 4;

struct block_pos {
  int c, bx, by;
};

__device__ __forceinline__ block_pos locate(const c63_cu_planes &P, int gb)
{
  int c = 0;
  while (c + 1 < P.n && gb >= P.p[c + 1].blk_off)
    c++;
  const int local = gb - P.p[c].blk_off;
  return {c, local % P.p[c].bw, local / P.p[c].bw};
}

/* The rd window of the block at pixel (mx, my): the reference's
 * (c63_me_window) with its right and bottom ends included. */
__device__ __forceinline__ void rd_window(const c63_cu_plane &pl, int mx, int my, int *x0, int *y0,
                                          int *x1, int *y1)
{
  const int r = pl.range;
  *x0 = mx - r > 0 ? mx - r : 0;
  *y0 = my - r > 0 ? my - r : 0;
  *x1 = (mx + r < pl.w - 8 ? mx + r : pl.w - 8) + 1;
  *y1 = (my + r < pl.h - 8 ? my + r : pl.h - 8) + 1;
}

__device__ __forceinline__ bool vector_inside(const c63_cu_plane &pl, int mx, int my, c63_mv v)
{
  return mx + v.x >= 0 && mx + v.x <= pl.w - 8 && my + v.y >= 0 && my + v.y <= pl.h - 8;
}

__device__ __forceinline__ bool same_vector(c63_mv a, c63_mv b)
{
  return a.x == b.x && a.y == b.y;
}

/* ---- The transform and reconstruction of c63/dsp_c.c ---- */

/* Rows, transpose, rows, transpose back, as transform_2d; kInverse picks
 * idct_1d's coefficient order. */
template <bool kInverse> __device__ void transform_2d(const rd_tables &T, float mb[64])
{
  float tmp[64];
  for (int pass = 0; pass < 2; pass++) {
    for (int v = 0; v < 8; v++) {
      float acc[8];
#pragma unroll
      for (int i = 0; i < 8; i++)
        acc[i] = 0.0f;
      for (int j = 0; j < 8; j++)
#pragma unroll
        for (int i = 0; i < 8; i++)
          acc[i] = acc[i] + mb[v * 8 + j] * (kInverse ? T.dct[i][j] : T.dct[j][i]);
#pragma unroll
      for (int i = 0; i < 8; i++)
        tmp[v * 8 + i] = acc[i];
    }
    for (int i = 0; i < 8; i++)
      for (int j = 0; j < 8; j++)
        mb[i * 8 + j] = tmp[j * 8 + i];
  }
}

__device__ void scale(float mb[64])
{
  for (int v = 0; v < 8; v++) {
    const float a2 = v ? 1.0f : C63_ISQRT2;
    for (int u = 0; u < 8; u++) {
      const float a1 = u ? 1.0f : C63_ISQRT2;
      mb[v * 8 + u] = mb[v * 8 + u] * a1 * a2;
    }
  }
}

/* c63_fdct_block then c63_quantise_block (through c63_quantise_value,
 * which equals the reference expression: tests/unit/test_quantise.c). */
__device__ void fdct_quantise(const rd_tables &T, const int16_t res[64], const uint8_t quant[64],
                              int ac_limit, float dct[64], int16_t out[64])
{
  float mb[64];
  for (int i = 0; i < 64; i++)
    mb[i] = res[i];
  transform_2d<false>(T, mb);
  scale(mb);
  for (int z = 0; z < 64; z++) {
    dct[z] = mb[T.zz_v[z] * 8 + T.zz_u[z]];
    const int q = quant[z];
    int v = c63_quantise_value(dct[z], q, q ? 1.0f / (float)(4 * q) : 0.0f);
    if (z > 0) v = v > ac_limit ? ac_limit : (v < -ac_limit ? -ac_limit : v);
    out[z] = (int16_t)v;
  }
}

/* c63_dequant_idct_block and dequant_idct_recon_c's clamping; pred NULL
 * for intra. */
__device__ void dequant_idct_recon(const rd_tables &T, const int16_t in[64],
                                   const uint8_t quant[64], const uint8_t *pred, int w,
                                   uint8_t rec[64])
{
  float mb[64];
  for (int z = 0; z < 64; z++) {
    const int v = in[z] * quant[z];
    mb[T.zz_v[z] * 8 + T.zz_u[z]] = (float)(v >= 0 ? (v + 2) >> 2 : -((-v + 2) >> 2));
  }
  scale(mb);
  transform_2d<true>(T, mb);
  for (int j = 0; j < 8; j++)
    for (int i = 0; i < 8; i++) {
      const float f = mb[j * 8 + i];
      const int16_t r = f >= 32767.0f ? 32767 : f <= -32768.0f ? -32768 : (int16_t)f;
      int v = r + (pred ? pred[j * w + i] : 0);
      if (v > INT16_MAX) v = 0;
      rec[j * 8 + i] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
    }
}

/* try_block of c63/rd_code.c without the parts that depend on the left
 * neighbour and the DC before (the decide kernel adds them): the block at
 * cur predicted from pred (NULL: intra), both with stride w. */
__device__ rd_sum run_trial(const rd_tables &T, const c63_cu_plane &pl, int chroma, float lambda,
                            const uint8_t *cur, const uint8_t *pred, c63_mv mv, rd_sum *sum,
                            rd_data *data)
{
  const int w = pl.w;
  int16_t res[64], coef[64];
  float dct[64];
  uint8_t rec[64];
  for (int j = 0; j < 8; j++)
    for (int i = 0; i < 8; i++)
      res[j * 8 + i] = (int16_t)(cur[j * w + i] - (pred ? pred[j * w + i] : 0));
  fdct_quantise(T, res, pl.quant, pl.ac_limit, dct, coef);
  const uint8_t *ac_len = T.len[chroma ? C63_HUFF_AC1 : C63_HUFF_AC0];
  c63_rd_trellis_levels(dct, pl.quant, ac_len, lambda, coef);
  dequant_idct_recon(T, coef, pl.quant, pred, w, rec);
  int ssd = 0;
  for (int j = 0; j < 8; j++)
    for (int i = 0; i < 8; i++) {
      const int d = rec[j * 8 + i] - cur[j * w + i];
      ssd += d * d;
    }
  for (int z = 0; z < 64; z++)
    data->coef[z] = coef[z];
  for (int z = 0; z < 64; z++)
    data->rec[z] = rec[z];
  const rd_sum r = {ssd, (int16_t)c63_rd_ac_bits(ac_len, coef), coef[0], mv, 1};
  *sum = r;
  return r;
}

__device__ __forceinline__ int sad_8x8(const uint8_t *a, const uint8_t *b, int w)
{
  int sad = 0;
  for (int j = 0; j < 8; j++)
    for (int i = 0; i < 8; i++)
      sad += abs(a[j * w + i] - b[j * w + i]);
  return sad;
}

/* ---- 1. Search ---- */

/* One CTA per block: the window and the block into shared memory, each
 * thread a share of the candidates (four pixels per SAD instruction), then
 * the least (cost, raster index). */
__global__ void __launch_bounds__(kSearchThreads)
    search_kernel(const uint8_t *__restrict__ cur, const uint8_t *__restrict__ ref, c63_cu_planes P,
                  const rd_tables *__restrict__ T, int sad_16, rd_search *__restrict__ out)
{
  __shared__ uint32_t win[kWinMax * kWinStride / 4];
  __shared__ unsigned long long best_of_warp[kSearchThreads / 32];
  const int gb = blockIdx.x;
  const block_pos bp = locate(P, gb);
  const c63_cu_plane &pl = P.p[bp.c];
  const int w = pl.w, mx = bp.bx * 8, my = bp.by * 8;
  int x0, y0, x1, y1;
  rd_window(pl, mx, my, &x0, &y0, &x1, &y1);
  const int nx = x1 - x0, ny = y1 - y0, rows = ny + 7, cols = nx + 7;
  const uint8_t *rp = ref + pl.pix_off;
  uint8_t *wb = reinterpret_cast<uint8_t *>(win);
  for (int i = threadIdx.x; i < rows * kWinStride; i += kSearchThreads) {
    const int r = i / kWinStride, c = i % kWinStride;
    wb[i] = c < cols ? rp[(size_t)(y0 + r) * w + x0 + c] : 0;
  }
  uint32_t cw[16];
  const uint8_t *cp = cur + pl.pix_off + (size_t)my * w + mx;
#pragma unroll
  for (int j = 0; j < 8; j++) {
    const uint2 v = *reinterpret_cast<const uint2 *>(cp + (size_t)j * w);
    cw[2 * j] = v.x;
    cw[2 * j + 1] = v.y;
  }
  __syncthreads();

  const uint8_t *mv_len = T->len[C63_HUFF_MV];
  unsigned long long best = ~0ull;
  for (int i = threadIdx.x; i < nx * ny; i += kSearchThreads) {
    const int dy = i / nx, dx = i - dy * nx;
    const int k = dx & 3;
    const unsigned sel = 0x3210u + 0x1111u * (unsigned)k;
    const uint32_t *row = win + dy * (kWinStride / 4) + (dx >> 2);
    unsigned sad = 0;
#pragma unroll
    for (int j = 0; j < 8; j++, row += kWinStride / 4) {
      const uint32_t a = row[0], b = row[1], c = row[2];
      sad = __vsadu4(__byte_perm(a, b, sel), cw[2 * j]) + sad;
      sad = __vsadu4(__byte_perm(b, c, sel), cw[2 * j + 1]) + sad;
    }
    const int cost = c63_rd_vector_cost(mv_len, sad_16, (int)sad, x0 + dx - mx, y0 + dy - my);
    const unsigned long long key = (unsigned long long)(unsigned)cost << 32 | (unsigned)i;
    best = key < best ? key : best;
  }
  for (int o = 16; o > 0; o >>= 1) {
    const unsigned long long other = __shfl_xor_sync(0xffffffffu, best, o);
    best = other < best ? other : best;
  }
  if ((threadIdx.x & 31) == 0) best_of_warp[threadIdx.x >> 5] = best;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int i = 1; i < kSearchThreads / 32; i++)
      best = best_of_warp[i] < best ? best_of_warp[i] : best;
    const int index = (int)(best & 0xffffffffu);
    rd_search s;
    s.cost = (int)(best >> 32);
    s.index = index;
    s.mv.x = (int8_t)(x0 + index % nx - mx);
    s.mv.y = (int8_t)(y0 + index / nx - my);
    s.mv.use_mv = 1;
    s.mv.pad_ = 0;
    out[gb] = s;
  }
}

/* ---- 2. Trials ---- */

__device__ __forceinline__ bool is_zero(c63_mv v)
{
  return !v.x && !v.y;
}

/* blockIdx.y: the slot (T_INTRA only in keyframes); one thread per block.
 * Each vector is tried once (the decisions look in T_SEARCH first); a
 * slot without a trial, T_EXTRA included, is marked invalid. */
__global__ void trials_kernel(const uint8_t *__restrict__ cur, const uint8_t *__restrict__ ref,
                              c63_cu_planes P, const rd_tables *__restrict__ T, float lambda,
                              const rd_search *__restrict__ search, rd_trials tr)
{
  const int gb = blockIdx.x * blockDim.x + threadIdx.x;
  if (gb >= P.total_blocks) return;
  const int kind = blockIdx.y;
  const block_pos bp = locate(P, gb);
  const c63_cu_plane &pl = P.p[bp.c];
  const int mx = bp.bx * 8, my = bp.by * 8;
  const size_t at = (size_t)kind * P.total_blocks + gb;
  c63_mv mv = {0, 0, 0, 0};
  if (kind != T_INTRA) {
    const c63_mv own = search[gb].mv;
    mv.use_mv = 1;
    if (kind == T_SEARCH) mv = own;
    if (kind == T_LEFT_SEARCH && bp.bx) mv = search[gb - 1].mv;
    if (kind == T_EXTRA || (kind == T_LEFT_SEARCH && (!bp.bx || is_zero(mv))) ||
        (kind != T_SEARCH && same_vector(mv, own)) || !vector_inside(pl, mx, my, mv)) {
      const rd_sum none = {0, 0, 0, mv, 0};
      tr.sum[at] = none;
      return;
    }
  }
  const uint8_t *pred =
      mv.use_mv ? ref + pl.pix_off + (size_t)(my + mv.y) * pl.w + mx + mv.x : nullptr;
  run_trial(*T, pl, bp.c != 0, lambda, cur + pl.pix_off + (size_t)my * pl.w + mx, pred, mv,
            tr.sum + at, tr.data + at);
}

/* ---- 3. Decide ---- */

/* What a decision reads of one block. */
struct block_in {
  rd_search s;
  rd_sum t[T_COUNT];
};

__device__ __forceinline__ void load_block(const rd_search *search, rd_trials tr, size_t nb, int gb,
                                           block_in &b)
{
  b.s = search[gb];
#pragma unroll
  for (int k = 0; k < T_COUNT; k++)
    b.t[k] = tr.sum[k * nb + gb];
}

/* The slot that holds a trial of vector v (use_mv = 1), or -1. */
__device__ __forceinline__ int find_slot(const block_in &b, c63_mv v)
{
  if (same_vector(v, b.s.mv)) return T_SEARCH;
  if (is_zero(v)) return T_ZERO;
  if (b.t[T_LEFT_SEARCH].valid && same_vector(v, b.t[T_LEFT_SEARCH].mv)) return T_LEFT_SEARCH;
  if (b.t[T_EXTRA].valid && same_vector(v, b.t[T_EXTRA].mv)) return T_EXTRA;
  return -1;
}

/* What the decisions share within a frame. */
struct rd_frame {
  const uint8_t *cur, *ref;
  const rd_tables *T;
  float lambda;
  int sad_16;
  rd_trials tr;
  const rd_search *search;
};

/* code_block of c63/rd_code.c from the trials: the slot of the cheapest
 * coding of block gb, given its left neighbour's final vector (left, NULL
 * in the first column) and the DC before it. A candidate vector without a
 * trial is tried on the spot with kExact (into T_EXTRA, and b), and left
 * out otherwise (the guesses). */
template <bool kExact>
__device__ int decide_block(const rd_frame &f, const c63_cu_plane &pl, int chroma, int gb, int bx,
                            int by, const c63_mv *left, int prev_dc, block_in &b)
{
  const int mx = bx * 8, my = by * 8;
  const uint8_t *cp = f.cur + pl.pix_off + (size_t)my * pl.w + mx;
  const uint8_t *rp = f.ref + pl.pix_off;
  const uint8_t *mv_len = f.T->len[C63_HUFF_MV];
  const uint8_t *dc_len = f.T->len[chroma ? C63_HUFF_DC1 : C63_HUFF_DC0];

  /* c63_rd_choose_vector: the left neighbour's vector, at 2 bits, against
   * the search's best. */
  c63_mv t1 = b.s.mv;
  if (left && left->use_mv) {
    int x0, y0, x1, y1;
    rd_window(pl, mx, my, &x0, &y0, &x1, &y1);
    const int x = mx + left->x, y = my + left->y;
    if (x >= x0 && x < x1 && y >= y0 && y < y1) {
      const int i = (y - y0) * (x1 - x0) + (x - x0);
      const int cost = 16 * sad_8x8(cp, rp + (size_t)y * pl.w + x, pl.w) + 2 * f.sad_16;
      if (cost < b.s.cost || (cost == b.s.cost && i < b.s.index)) t1 = *left;
    }
  }
  c63_mv cand[3];
  int n = 0;
  cand[n++] = t1;
  if (left && left->use_mv && !same_vector(*left, t1) && vector_inside(pl, mx, my, *left))
    cand[n++] = *left;
  if (!is_zero(t1)) cand[n++] = {0, 0, 1, 0};

  const c63_mv no_mv = {0, 0, 0, 0};
  float best_cost =
      (float)b.t[T_INTRA].ssd +
      f.lambda * (float)(c63_rd_mv_bits_len(mv_len, &no_mv, left) +
                         c63_rd_dc_bits(dc_len, b.t[T_INTRA].dc, prev_dc) + b.t[T_INTRA].ac_bits);
  int best = T_INTRA;
  for (int i = 0; i < n; i++) {
    const c63_mv v = cand[i];
    int slot = find_slot(b, v);
    if (slot < 0) {
      if (!kExact) continue;
      /* at most one vector per block: the left neighbour's, when it was
       * reused from further left than the guesses reached */
      const size_t at = (size_t)T_EXTRA * f.tr.stride + gb;
      b.t[T_EXTRA] =
          run_trial(*f.T, pl, chroma, f.lambda, cp, rp + (size_t)(my + v.y) * pl.w + mx + v.x, v,
                    f.tr.sum + at, f.tr.data + at);
      slot = T_EXTRA;
    }
    const rd_sum &t = b.t[slot];
    const float cost =
        (float)t.ssd + f.lambda * (float)(c63_rd_mv_bits_len(mv_len, &v, left) +
                                          c63_rd_dc_bits(dc_len, t.dc, prev_dc) + t.ac_bits);
    /* the first of equal costs, but intra only when strictly cheaper */
    if (cost < best_cost || (best == T_INTRA && cost == best_cost)) {
      best_cost = cost;
      best = slot;
    }
  }
  return best;
}

/* Block step of the coding-order walk of MCU row mrow in plane c. */
__device__ __forceinline__ void chain_block(int c, int mrow, int step, int *bx, int *by)
{
  if (c) {
    *bx = step;
    *by = mrow;
  } else {
    *bx = (step >> 2) * 2 + (step & 1);
    *by = mrow * 2 + ((step >> 1) & 1);
  }
}

/* The block before (bx, by) in coding order within its MCU row and plane,
 * as a global index, or -1 for the first. */
__device__ __forceinline__ int previous_in_order(const c63_cu_plane &pl, int c, int bx, int by)
{
  if (c) return bx ? pl.blk_off + by * pl.bw + bx - 1 : -1;
  const int k = (by & 1) * 2 + (bx & 1);
  if (k == 0 && bx == 0) return -1;
  const int pbx = k ? (bx & ~1) + ((k - 1) & 1) : bx - 1;
  const int pby = k ? (by & ~1) + ((k - 1) >> 1) : by | 1;
  return pl.blk_off + pby * pl.bw + pbx;
}

/* A guess at every block's decision at once, from the previous guess of
 * its left neighbour's vector and of the DC before it (or, first, from
 * their searched vectors). Each round of guesses is right one block
 * further along every row; the exact walk then finds most candidates
 * tried already. */
__global__ void guess_kernel(rd_frame f, c63_cu_planes P, const c63_mv *__restrict__ mv_in,
                             const int16_t *__restrict__ dc_in, c63_mv *__restrict__ mv_out,
                             int16_t *__restrict__ dc_out)
{
  const int gb = blockIdx.x * blockDim.x + threadIdx.x;
  if (gb >= P.total_blocks) return;
  const block_pos bp = locate(P, gb);
  const c63_cu_plane &pl = P.p[bp.c];
  const size_t nb = f.tr.stride;
  c63_mv left = {0, 0, 0, 0};
  if (bp.bx) left = mv_in ? mv_in[gb - 1] : f.search[gb - 1].mv;
  const int prev = previous_in_order(pl, bp.c, bp.bx, bp.by);
  const int prev_dc = prev < 0 ? 0 : dc_in ? dc_in[prev] : f.tr.sum[T_SEARCH * nb + prev].dc;
  block_in b;
  load_block(f.search, f.tr, nb, gb, b);
  const int slot =
      decide_block<false>(f, pl, bp.c != 0, gb, bp.bx, bp.by, bp.bx ? &left : nullptr, prev_dc, b);
  mv_out[gb] = slot == T_INTRA ? c63_mv{0, 0, 0, 0} : b.t[slot].mv;
  dc_out[gb] = b.t[slot].dc;
}

/* Try the guessed left neighbour's vector where no trial holds it yet. */
__global__ void extra_kernel(rd_frame f, c63_cu_planes P, const c63_mv *__restrict__ guess)
{
  const int gb = blockIdx.x * blockDim.x + threadIdx.x;
  if (gb >= P.total_blocks) return;
  const block_pos bp = locate(P, gb);
  const c63_cu_plane &pl = P.p[bp.c];
  if (!bp.bx) return;
  const c63_mv v = guess[gb - 1];
  const int mx = bp.bx * 8, my = bp.by * 8;
  if (!v.use_mv || !vector_inside(pl, mx, my, v)) return;
  const size_t nb = f.tr.stride;
  block_in b;
  load_block(f.search, f.tr, nb, gb, b);
  if (find_slot(b, v) >= 0) return;
  const size_t at = (size_t)T_EXTRA * nb + gb;
  run_trial(*f.T, pl, bp.c != 0, f.lambda, f.cur + pl.pix_off + (size_t)my * pl.w + mx,
            f.ref + pl.pix_off + (size_t)(my + v.y) * pl.w + mx + v.x, v, f.tr.sum + at,
            f.tr.data + at);
}

/* The exact walk: one thread per (MCU row, plane), every block in coding
 * order as c63/rd_code.c goes, each block's trials loaded while the one
 * before is decided. */
__global__ void decide_kernel(rd_frame f, c63_cu_planes P, uint8_t *__restrict__ choice)
{
  const int mcus_w = P.p[0].bw / 2, mcus_h = P.p[0].bh / 2;
  const int chain = blockIdx.x * blockDim.x + threadIdx.x;
  if (chain >= 3 * mcus_h) return;
  const int c = chain % 3, mrow = chain / 3, chroma = c != 0;
  const c63_cu_plane &pl = P.p[c];
  const size_t nb = f.tr.stride;
  const int steps = c ? mcus_w : 4 * mcus_w;
  c63_mv left_of_row[2] = {{0, 0, 0, 0}, {0, 0, 0, 0}};
  int prev_dc = 0, bx, by;
  block_in next;
  chain_block(c, mrow, 0, &bx, &by);
  load_block(f.search, f.tr, nb, pl.blk_off + by * pl.bw + bx, next);

  for (int step = 0; step < steps; step++) {
    block_in b = next;
    const int cbx = bx, cby = by, gb = pl.blk_off + by * pl.bw + bx;
    if (step + 1 < steps) {
      chain_block(c, mrow, step + 1, &bx, &by);
      load_block(f.search, f.tr, nb, pl.blk_off + by * pl.bw + bx, next);
    }
    const int slot = decide_block<true>(f, pl, chroma, gb, cbx, cby,
                                        cbx ? &left_of_row[cby & 1] : nullptr, prev_dc, b);
    choice[gb] = (uint8_t)slot;
    left_of_row[cby & 1] = slot == T_INTRA ? c63_mv{0, 0, 0, 0} : b.t[slot].mv;
    prev_dc = b.t[slot].dc;
  }
}

/* ---- 4. Gather ---- */

/* 64 threads per block: coefficient z, and pixel z of the reconstruction. */
__global__ void gather_kernel(c63_cu_planes P, rd_trials tr, const uint8_t *__restrict__ choice,
                              int16_t *__restrict__ coeffs, c63_mv *__restrict__ mvs,
                              uint8_t *__restrict__ recon)
{
  const int gb = blockIdx.x * (blockDim.x / 64) + threadIdx.x / 64, z = threadIdx.x % 64;
  if (gb >= P.total_blocks) return;
  const int slot = choice ? choice[gb] : T_INTRA;
  const size_t at = (size_t)slot * tr.stride + gb;
  const block_pos bp = locate(P, gb);
  const c63_cu_plane &pl = P.p[bp.c];
  coeffs[(size_t)gb * 64 + z] = tr.data[at].coef[z];
  recon[pl.pix_off + (size_t)(bp.by * 8 + z / 8) * pl.w + bp.bx * 8 + z % 8] = tr.data[at].rec[z];
  if (z == 0) mvs[gb] = slot == T_INTRA ? c63_mv{0, 0, 0, 0} : tr.sum[at].mv;
}

/* Rounds of guesses before the exact walk (guess_kernel). */
constexpr int kGuessRounds = 3;

} // namespace

struct c63_cu_rd {
  rd_tables *tables;
  rd_search *search;
  rd_trials trials;
  c63_mv *guess_mv[2];
  int16_t *guess_dc[2];
  uint8_t *choice;
};

cudaError_t c63_cu_rd_create(const c63_cu_planes &P, c63_cu_rd **out)
{
  *out = nullptr;
  c63_cu_rd *rd = static_cast<c63_cu_rd *>(calloc(1, sizeof *rd));
  if (!rd) return cudaErrorMemoryAllocation;
  const size_t nb = (size_t)P.total_blocks;
  rd->trials.stride = nb;
  cudaError_t err = cudaMalloc(&rd->tables, sizeof(rd_tables));
  if (err == cudaSuccess) err = cudaMalloc(&rd->search, nb * sizeof(rd_search));
  if (err == cudaSuccess) err = cudaMalloc(&rd->trials.sum, T_COUNT * nb * sizeof(rd_sum));
  if (err == cudaSuccess) err = cudaMalloc(&rd->trials.data, T_COUNT * nb * sizeof(rd_data));
  for (int i = 0; i < 2 && err == cudaSuccess; i++) {
    err = cudaMalloc(&rd->guess_mv[i], nb * sizeof(c63_mv));
    if (err == cudaSuccess) err = cudaMalloc(&rd->guess_dc[i], nb * sizeof(int16_t));
  }
  if (err == cudaSuccess) err = cudaMalloc(&rd->choice, nb);
  if (err == cudaSuccess) {
    rd_tables t;
    memcpy(t.dct, c63_dct_lookup, sizeof t.dct);
    memcpy(t.zz_u, c63_zigzag_u, sizeof t.zz_u);
    memcpy(t.zz_v, c63_zigzag_v, sizeof t.zz_v);
    for (int i = 0; i < 4; i++)
      memcpy(t.len[i], c63_huff_enc_tables()[i].len, sizeof t.len[i]);
    err = cudaMemcpy(rd->tables, &t, sizeof t, cudaMemcpyHostToDevice);
  }
  if (err != cudaSuccess) {
    c63_cu_rd_destroy(rd);
    return err;
  }
  *out = rd;
  return cudaSuccess;
}

void c63_cu_rd_destroy(c63_cu_rd *rd)
{
  if (!rd) return;
  cudaFree(rd->tables);
  cudaFree(rd->search);
  cudaFree(rd->trials.sum);
  cudaFree(rd->trials.data);
  for (int i = 0; i < 2; i++) {
    cudaFree(rd->guess_mv[i]);
    cudaFree(rd->guess_dc[i]);
  }
  cudaFree(rd->choice);
  free(rd);
}

cudaError_t c63_cu_rd_code(c63_cu_rd *rd, const uint8_t *cur, const uint8_t *ref,
                           const c63_cu_planes &P, float lambda_ssd, int lambda_sad_16,
                           int16_t *coeffs, c63_mv *mvs, uint8_t *recon, cudaStream_t s)
{
  const int nb = P.total_blocks, per_thread = (nb + 127) / 128;
  const bool delta = ref != nullptr;
  const rd_frame f = {cur, ref, rd->tables, lambda_ssd, lambda_sad_16, rd->trials, rd->search};
  if (delta)
    search_kernel<<<nb, kSearchThreads, 0, s>>>(cur, ref, P, rd->tables, lambda_sad_16, rd->search);
  const dim3 grid(per_thread, delta ? T_COUNT : 1);
  trials_kernel<<<grid, 128, 0, s>>>(cur, ref, P, rd->tables, lambda_ssd, rd->search, rd->trials);
  if (delta) {
    for (int r = 0; r < kGuessRounds; r++) {
      const int in = (r + 1) & 1, out = r & 1;
      guess_kernel<<<per_thread, 128, 0, s>>>(f, P, r ? rd->guess_mv[in] : nullptr,
                                              r ? rd->guess_dc[in] : nullptr, rd->guess_mv[out],
                                              rd->guess_dc[out]);
      extra_kernel<<<per_thread, 128, 0, s>>>(f, P, rd->guess_mv[out]);
    }
    const int chains = 3 * (P.p[0].bh / 2);
    decide_kernel<<<(chains + 63) / 64, 64, 0, s>>>(f, P, rd->choice);
  }
  gather_kernel<<<(nb + 3) / 4, 256, 0, s>>>(P, rd->trials, delta ? rd->choice : nullptr, coeffs,
                                             mvs, recon);
  return cudaGetLastError();
}
