/* The rd mode on the GPU (docs/rd.md): the decisions of the CPU coder
 * (c63/rd_code.c), to the bit.
 *
 * On the CPU a block's choice depends on its left neighbour's final vector
 * (which the format codes in 2 bits when reused) and on the DC before it,
 * so each MCU row goes block by block. Almost all of the work does not
 * depend on them, so it runs first, for every block at once:
 *
 *   1. search: the vector of least 16 * SAD + lambda * bits over the rd
 *      window, as c63_rd_choose_vector finds it before it looks at the
 *      left neighbour (its cost and raster index are kept for that);
 *   2. trials: every coding a decision may need, each by a warp:
 *      transformed, trellis-quantised, reconstructed, with its squared
 *      error, AC bits and SAD: intra, the searched vector, the zero vector
 *      and the searched vectors of the blocks one and two to the left;
 *   3. the walk: a warp per MCU row and plane decides the blocks in
 *      coding order from the trials, as the CPU does (the left
 *      neighbour's final vector competes where a trial holds it), a 32nd
 *      of the row per lane from a guessed state, then repaired in order;
 *   4. gather: the chosen trial's coefficients, vector and reconstruction
 *      into the frame's buffers, for the entropy coder and the next frame.
 *
 * Keyframes have one candidate per block (intra) and need only 2 and 4.
 * The per-block arithmetic shared with the CPU is in c63/rd_block.h; the
 * transform and reconstruction (c63_cuda_rd_trial.cuh) follow c63/dsp_c.c operation by
 * operation (the build forbids FMA contraction), spread over the lanes of
 * a warp without changing any element's order of operations.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "c63/c63.h"
#include "c63/rd_block.h"
#include "cuda/c63_cuda_internal.h"
#include "cuda/c63_cuda_rd_trial.cuh"

extern "C" {
#include "c63/tables.h"
}

namespace
{

/* The trials of a block: intra, its searched vector, the zero vector, and
 * the searched vectors of the blocks one and two to the left (a reused
 * vector is often one of them). The left neighbour's final vector
 * competes only where one of these holds it (c63/rd_code.c), so the walk
 * never runs a trial itself. */
enum { T_INTRA, T_SEARCH, T_ZERO, T_LEFT_SEARCH, T_LEFT2_SEARCH, T_COUNT };

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

constexpr int kSearchThreads = 128;
/* The largest rd window: every candidate of the range, both ends, plus the
 * block; rows padded to whole words and one word more for the shifts. */
constexpr int kWinMax = 2 * C63_MAX_SEARCH_RANGE + 1 + 7;
constexpr int kWinStride = (kWinMax + 3) / 4 * 4 + 4;

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

/* ---- 1. Search ---- */

/* Candidate rows per thread: a thread takes one column of candidates and
 * G consecutive rows of it, so each reference row it reads (three words,
 * aligned with two PRMT) serves up to G candidates, instead of one. G is
 * chosen per plane so that the (column, row group) items of a block fill
 * most of a CTA: 33 columns x 3 groups of 11 rows at range 16 (99 of 128
 * threads), 17 x 6 groups of 3 at range 8. */
template <int G> struct search_shape {
  /* Window rows staged: every row group whole, plus the block's 7. */
  static constexpr int rows = (2 * C63_MAX_SEARCH_RANGE + 1 + G - 1) / G * G + 7;
};

/* One CTA per block: the window and the block into shared memory, then
 * each thread a column of candidates, G rows at a time (four pixels per
 * SAD instruction), and the least (cost, raster index). */
template <int G>
__global__ void __launch_bounds__(kSearchThreads)
    search_kernel(const uint8_t *__restrict__ cur, const uint8_t *__restrict__ ref, c63_cu_plane pl,
                  const rd_tables *__restrict__ T, int sad_16, rd_search *__restrict__ out)
{
  constexpr int kRows = search_shape<G>::rows, kWords = kWinStride / 4;
  __shared__ uint32_t win[kRows * kWords];
  __shared__ int row_cost[kRows]; /* sad_16 * (2 + bits) of each vertical offset */
  __shared__ unsigned long long best_of_warp[kSearchThreads / 32];
  const int by = (int)blockIdx.x / pl.bw, bx = (int)blockIdx.x - by * pl.bw;
  const int gb = pl.blk_off + (int)blockIdx.x;
  const int w = pl.w, mx = bx * 8, my = by * 8;
  int x0, y0, x1, y1;
  rd_window(pl, mx, my, &x0, &y0, &x1, &y1);
  /* Whole words from the one holding x0 to the one holding the last
   * pixel a candidate reads (rows start on 8-byte boundaries, so no word
   * crosses the plane's end), and candidate dx starts at byte dx + skew
   * of its row. Words past those, and rows past the window (read by the
   * last row group's unused candidates), stay zero. */
  const int nx = x1 - x0, ny = y1 - y0, groups = (ny + G - 1) / G, skew = x0 & 3;
  const int rows = ny + 7, staged = groups * G + 7;
  const int words = (skew + nx + 6) / 4 + 1;
  const uint32_t *rp = reinterpret_cast<const uint32_t *>(ref + pl.pix_off + (x0 - skew));
  for (int i = threadIdx.x; i < staged * kWords; i += kSearchThreads) {
    const int r = i / kWords, c = i % kWords;
    win[i] = c < words && r < rows ? rp[((size_t)(y0 + r) * w) / 4 + c] : 0;
  }
  const uint8_t *mv_len = T->len[C63_HUFF_MV];
  for (int r = threadIdx.x; r < ny; r += kSearchThreads)
    row_cost[r] = sad_16 * (2 + c63_rd_value_bits(mv_len, y0 + r - my));
  uint32_t cw[16];
  const uint8_t *cp = cur + pl.pix_off + (size_t)my * w + mx;
#pragma unroll
  for (int j = 0; j < 8; j++) {
    const uint2 v = *reinterpret_cast<const uint2 *>(cp + (size_t)j * w);
    cw[2 * j] = v.x;
    cw[2 * j + 1] = v.y;
  }
  __syncthreads();

  unsigned long long best = ~0ull;
  for (int item = threadIdx.x; item < nx * groups; item += kSearchThreads) {
    const int g = item / nx, dx = item - g * nx, col = dx + skew;
    const unsigned sel = 0x3210u + 0x1111u * (unsigned)(col & 3);
    const uint32_t *row = win + g * G * kWords + (col >> 2);
    unsigned sad[G];
#pragma unroll
    for (int k = 0; k < G; k++)
      sad[k] = 0;
#pragma unroll
    for (int r = 0; r < G + 7; r++) {
      const uint32_t a = row[r * kWords], b = row[r * kWords + 1], c = row[r * kWords + 2];
      const uint32_t lo = __byte_perm(a, b, sel), hi = __byte_perm(b, c, sel);
      /* Reference row r is row j = r - k of candidate row k. */
#pragma unroll
      for (int k = 0; k < G; k++) {
        const int j = r - k;
        if (j >= 0 && j < 8) {
          sad[k] = __vsadu4(lo, cw[2 * j]) + sad[k];
          sad[k] = __vsadu4(hi, cw[2 * j + 1]) + sad[k];
        }
      }
    }
    /* 16 * SAD + sad_16 * (2 + bits(y) + bits(x)), as c63_rd_choose_vector
     * computes it, the column's bits counted once */
    const int col_cost = sad_16 * c63_rd_value_bits(mv_len, x0 + dx - mx);
#pragma unroll
    for (int k = 0; k < G; k++) {
      const int dy = g * G + k;
      if (dy < ny) {
        const int cost = 16 * (int)sad[k] + row_cost[dy] + col_cost;
        const unsigned long long key =
            (unsigned long long)(unsigned)cost << 32 | (unsigned)(dy * nx + dx);
        best = key < best ? key : best;
      }
    }
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

/* The search of every block of plane pl: G by the plane's range (see
 * search_shape). */
cudaError_t launch_search(const uint8_t *cur, const uint8_t *ref, const c63_cu_plane &pl,
                          const rd_tables *T, int sad_16, rd_search *out, cudaStream_t s)
{
  const int blocks = pl.bw * pl.bh;
  if (blocks <= 0) return cudaSuccess;
  if (pl.range >= 12)
    search_kernel<11><<<blocks, kSearchThreads, 0, s>>>(cur, ref, pl, T, sad_16, out);
  else
    search_kernel<3><<<blocks, kSearchThreads, 0, s>>>(cur, ref, pl, T, sad_16, out);
  return cudaGetLastError();
}

/* ---- 2. Trials ---- */

__device__ __forceinline__ bool is_zero(c63_mv v)
{
  return !v.x && !v.y;
}

/* Warps per CTA of the kernels that run a warp per block or per row. */
constexpr int kWarps = 4;
/* Code lengths of the DC and vector tables a walk keeps in shared memory:
 * sizes 0..16 are all a value can have. */
constexpr int kLenCopy = 32;

/* blockIdx.y: the slot (T_INTRA only in keyframes); a warp per block. Each
 * vector is tried once (the decisions look in T_SEARCH first); a slot
 * without a trial is marked invalid. */
__global__ void __launch_bounds__(32 * kWarps)
    trials_kernel(const uint8_t *__restrict__ cur, const uint8_t *__restrict__ ref, c63_cu_planes P,
                  const rd_tables *__restrict__ T, float lambda,
                  const rd_search *__restrict__ search, rd_trials tr)
{
  __shared__ warp_ws ws[kWarps];
  const int warp = threadIdx.x >> 5, gb = blockIdx.x * kWarps + warp;
  if (gb >= P.total_blocks) return;
  const int kind = blockIdx.y;
  const c63_cu_block bp = c63_cu_locate(P, gb);
  const c63_cu_plane &pl = P.p[bp.plane];
  const int mx = bp.bx * 8, my = bp.by * 8;
  const size_t at = (size_t)kind * P.total_blocks + gb;
  c63_mv mv = {0, 0, 0, 0};
  if (kind != T_INTRA) {
    const c63_mv own = search[gb].mv;
    mv.use_mv = 1;
    if (kind == T_SEARCH) mv = own;
    if (kind == T_LEFT_SEARCH && bp.bx) mv = search[gb - 1].mv;
    if (kind == T_LEFT2_SEARCH && bp.bx >= 2) mv = search[gb - 2].mv;
    if ((kind == T_LEFT_SEARCH && (!bp.bx || is_zero(mv))) ||
        (kind == T_LEFT2_SEARCH &&
         (bp.bx < 2 || is_zero(mv) || same_vector(mv, search[gb - 1].mv))) ||
        (kind != T_SEARCH && same_vector(mv, own)) || !vector_inside(pl, mx, my, mv)) {
      const rd_sum none = {0, 0, 0, mv, 0, 0};
      if ((threadIdx.x & 31) == 0) tr.sum[at] = none;
      return;
    }
  }
  const uint8_t *pred =
      mv.use_mv ? ref + pl.pix_off + (size_t)(my + mv.y) * pl.w + mx + mv.x : nullptr;
  warp_trial(*T, pl, bp.plane != 0, lambda, cur + pl.pix_off + (size_t)my * pl.w + mx, pred, mv,
             ws[warp], tr.sum + at, tr.data + at);
}

/* ---- 3. The walk ---- */

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
  if (b.t[T_LEFT2_SEARCH].valid && same_vector(v, b.t[T_LEFT2_SEARCH].mv)) return T_LEFT2_SEARCH;
  return -1;
}

/* What the decisions share within a frame. */
struct rd_frame {
  const rd_tables *T;
  float lambda;
  int sad_16;
  rd_trials tr;
  const rd_search *search;
};

/* code_block of c63/rd_code.c from the trials, by one thread: the slot
 * of the cheapest coding of block gb, given its left neighbour's final
 * vector (left, NULL in the first column) and the DC before it. lens: the
 * code lengths of C63_HUFF_DC0 (also the vectors') and C63_HUFF_DC1. */
__device__ int decide_block(const rd_frame &f, const c63_cu_plane &pl, int chroma, int bx, int by,
                            const c63_mv *left, int prev_dc, const block_in &b,
                            uint8_t (*lens)[kLenCopy])
{
  const int mx = bx * 8, my = by * 8;
  const uint8_t *mv_len = lens[C63_HUFF_MV];
  const uint8_t *dc_len = lens[chroma ? C63_HUFF_DC1 : C63_HUFF_DC0];

  /* The left neighbour's vector is a candidate (as the choice below, or on
   * its own) where it lies inside the plane and a trial holds it: the
   * search's, the zero vector's, or those of the searches one and two
   * blocks to the left (c63/rd_code.c). */
  int left_slot = -1;
  if (left && left->use_mv && vector_inside(pl, mx, my, *left)) left_slot = find_slot(b, *left);
  /* c63_rd_choose_vector: the left neighbour's vector, at 2 bits, against
   * the search's best. */
  c63_mv t1 = b.s.mv;
  if (left_slot >= 0) {
    int x0, y0, x1, y1;
    rd_window(pl, mx, my, &x0, &y0, &x1, &y1);
    const int x = mx + left->x, y = my + left->y;
    if (x >= x0 && x < x1 && y >= y0 && y < y1) {
      const int i = (y - y0) * (x1 - x0) + (x - x0);
      const int cost = 16 * b.t[left_slot].sad + 2 * f.sad_16;
      if (cost < b.s.cost || (cost == b.s.cost && i < b.s.index)) t1 = *left;
    }
  }
  c63_mv cand[3];
  int n = 0;
  cand[n++] = t1;
  if (left_slot >= 0 && !same_vector(*left, t1)) cand[n++] = *left;
  if (!is_zero(t1)) cand[n++] = {0, 0, 1, 0};

  const c63_mv no_mv = {0, 0, 0, 0};
  float best_cost =
      (float)b.t[T_INTRA].ssd +
      f.lambda * (float)(c63_rd_mv_bits_len(mv_len, &no_mv, left) +
                         c63_rd_dc_bits(dc_len, b.t[T_INTRA].dc, prev_dc) + b.t[T_INTRA].ac_bits);
  int best = T_INTRA;
  for (int i = 0; i < n; i++) {
    const c63_mv v = cand[i];
    const int slot = find_slot(b, v);
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

/* What a block's decision reads of the blocks before it: the final vectors
 * of the last blocks of the two block rows (luma has two in an MCU row;
 * use_mv = 0 for intra) and the DC before it in coding order. */
struct walk_state {
  c63_mv left[2];
  int dc;
};

__device__ __forceinline__ bool same_state(const walk_state &a, const walk_state &b)
{
  return a.dc == b.dc && same_vector(a.left[0], b.left[0]) &&
         a.left[0].use_mv == b.left[0].use_mv && same_vector(a.left[1], b.left[1]) &&
         a.left[1].use_mv == b.left[1].use_mv;
}

/* Decide the steps [from, to) of a walk, from state st, by one thread.
 * after, unless NULL, gets each block's choice and the state after it;
 * with converge set the walk stops at the first block after which the
 * state is the one after already held: every later decision would be the
 * same. Returns the state after the last block decided. */
__device__ walk_state walk_span(const rd_frame &f, const c63_cu_plane &pl, int c, int mrow,
                                int from, int to, walk_state st, uint8_t *choice, walk_state *after,
                                bool converge, uint8_t (*lens)[kLenCopy])
{
  for (int t = from; t < to; t++) {
    int bx, by;
    chain_block(c, mrow, t, &bx, &by);
    const int gb = pl.blk_off + by * pl.bw + bx;
    block_in b;
    load_block(f.search, f.tr, f.tr.stride, gb, b);
    const int slot =
        decide_block(f, pl, c != 0, bx, by, bx ? &st.left[by & 1] : nullptr, st.dc, b, lens);
    st.left[by & 1] = slot == T_INTRA ? c63_mv{0, 0, 0, 0} : b.t[slot].mv;
    st.dc = b.t[slot].dc;
    if (after) {
      choice[gb] = (uint8_t)slot;
      const bool same = converge && same_state(after[gb], st);
      after[gb] = st;
      if (same) break;
    }
  }
  return st;
}

/* Blocks a lane walks before its share of a walk, unrecorded, so that it
 * most often enters its share in the state the walk has there: at 1080p
 * (real footage, H100) 36% of the guesses were wrong after 4 blocks, 26%
 * after 8, 19% after 16 and 13% after 32, with 6 to 7 blocks walked again
 * for each, and the walk took 327 us with 8 and 262 with 32. The
 * environment variable C63_CUDA_RD_WALK_WARM overrides it, for the tests:
 * with 0 most guesses are wrong, and the repairs decide the row. */
constexpr int kWarmSteps = 32;

/* The walk: a warp per (MCU row, plane) decides every block in coding
 * order as c63/rd_code.c goes. A block's choice depends on the blocks
 * before it only through a small state (walk_state), which forgets its
 * past within a few blocks. So each lane takes a 32nd of the walk (whole
 * MCUs), walks kWarmSteps blocks before it from an empty state to guess
 * the state it starts in, and decides its share; then the lanes check, in
 * order, that their guess was the state the share before them ended in,
 * and where it was not walk again from that state until the states meet.
 * The choices are those of one walk from the start, in any case; at the
 * default look-back about one guess in eight is wrong, and its repair
 * walks 6 to 7 blocks (kWarmSteps). */
__global__ void __launch_bounds__(32 * kWarps)
    walk_kernel(rd_frame f, c63_cu_planes P, int warm_steps, uint8_t *__restrict__ choice,
                walk_state *__restrict__ after)
{
  const int mcus_w = P.p[0].bw / 2, mcus_h = P.p[0].bh / 2;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, chain = blockIdx.x * kWarps + warp;
  if (chain >= 3 * mcus_h) return;
  const int c = chain % 3, mrow = chain / 3;
  const c63_cu_plane &pl = P.p[c];
  /* The DC and vector tables (C63_HUFF_DC0 = MV, DC1), one copy a warp. */
  __shared__ uint8_t lens[kWarps][2][kLenCopy];
  lens[warp][0][lane] = f.T->len[C63_HUFF_DC0][lane];
  lens[warp][1][lane] = f.T->len[C63_HUFF_DC1][lane];
  __syncwarp();

  /* This lane's share: steps [begin, end), whole MCUs. */
  const int unit = c ? 1 : 4;
  const int begin = (int)((long)mcus_w * lane / 32) * unit;
  const int end = (int)((long)mcus_w * (lane + 1) / 32) * unit;
  const walk_state empty = {{{0, 0, 0, 0}, {0, 0, 0, 0}}, 0};
  const int warm = begin > warm_steps ? begin - warm_steps : 0;
  const walk_state guess =
      walk_span(f, pl, c, mrow, warm, begin, empty, choice, nullptr, false, lens[warp]);
  walk_span(f, pl, c, mrow, begin, end, guess, choice, after, false, lens[warp]);

  for (int l = 1; l < 32; l++) {
    __syncwarp();
    if (lane == l && begin > 0 && begin < end) {
      int bx, by;
      chain_block(c, mrow, begin - 1, &bx, &by);
      const walk_state in = after[pl.blk_off + by * pl.bw + bx];
      if (!same_state(in, guess))
        walk_span(f, pl, c, mrow, begin, end, in, choice, after, true, lens[warp]);
    }
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
  const c63_cu_block bp = c63_cu_locate(P, gb);
  const c63_cu_plane &pl = P.p[bp.plane];
  coeffs[(size_t)gb * 64 + z] = tr.data[at].coef[z];
  recon[pl.pix_off + (size_t)(bp.by * 8 + z / 8) * pl.w + bp.bx * 8 + z % 8] = tr.data[at].rec[z];
  if (z == 0) mvs[gb] = slot == T_INTRA ? c63_mv{0, 0, 0, 0} : tr.sum[at].mv;
}

} // namespace

struct c63_cu_rd {
  rd_tables *tables;
  rd_search *search;
  rd_trials trials;
  uint8_t *choice;
  walk_state *after; /* the walk's state after each block */
  int warm_steps;
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
  if (err == cudaSuccess) err = cudaMalloc(&rd->choice, nb);
  if (err == cudaSuccess) err = cudaMalloc(&rd->after, nb * sizeof(walk_state));
  const char *warm = getenv("C63_CUDA_RD_WALK_WARM");
  rd->warm_steps = warm && *warm ? atoi(warm) : kWarmSteps;
  if (rd->warm_steps < 0) rd->warm_steps = 0;
  if (err == cudaSuccess) {
    rd_tables t;
    memcpy(t.dct, c63_dct_lookup, sizeof t.dct);
    memcpy(t.zz_u, c63_zigzag_u, sizeof t.zz_u);
    memcpy(t.zz_v, c63_zigzag_v, sizeof t.zz_v);
    for (int i = 0; i < 4; i++)
      memcpy(t.len[i], c63_huff_enc_tables()[i].len, sizeof t.len[i]);
    err = cudaMemcpy(rd->tables, &t, sizeof t, cudaMemcpyHostToDevice);
  }
  /* A copy from pageable memory may still be on its way when cudaMemcpy
   * returns, on the legacy default stream, which the backend's streams do
   * not wait for: the first frame's kernels could read the tables early. */
  if (err == cudaSuccess) err = cudaStreamSynchronize(0);
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
  cudaFree(rd->choice);
  cudaFree(rd->after);
  free(rd);
}

cudaError_t c63_cu_rd_code(c63_cu_rd *rd, const uint8_t *cur, const uint8_t *ref,
                           const c63_cu_planes &P, float lambda_ssd, int lambda_sad_16,
                           int16_t *coeffs, c63_mv *mvs, uint8_t *recon, cudaStream_t s)
{
  const int nb = P.total_blocks;
  const bool delta = ref != nullptr;
  const rd_frame f = {rd->tables, lambda_ssd, lambda_sad_16, rd->trials, rd->search};
  if (delta)
    for (int p = 0; p < P.n; p++) {
      const cudaError_t err =
          launch_search(cur, ref, P.p[p], rd->tables, lambda_sad_16, rd->search, s);
      if (err != cudaSuccess) return err;
    }
  const int per_warp = (nb + kWarps - 1) / kWarps;
  const dim3 grid(per_warp, delta ? T_COUNT : 1);
  trials_kernel<<<grid, 32 * kWarps, 0, s>>>(cur, ref, P, rd->tables, lambda_ssd, rd->search,
                                             rd->trials);
  if (delta) {
    const int chains = 3 * (P.p[0].bh / 2);
    walk_kernel<<<(chains + kWarps - 1) / kWarps, 32 * kWarps, 0, s>>>(f, P, rd->warm_steps,
                                                                       rd->choice, rd->after);
  }
  gather_kernel<<<(nb + 3) / 4, 256, 0, s>>>(P, rd->trials, delta ? rd->choice : nullptr, coeffs,
                                             mvs, recon);
  return cudaGetLastError();
}
