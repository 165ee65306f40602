/* The rd mode on the GPU (docs/rd.md): the decisions of the CPU coder
 * (c63/rd_code.c), to the bit.
 *
 * On the CPU a block's choice depends on its left neighbour's final vector
 * (which the format codes in 2 bits when reused) and on the DC before it,
 * so each MCU row goes block by block. Almost all of the work does not
 * depend on them, so it runs first, for every block at once:
 *
 *   1. search: the vector of least 16 * SAD + lambda * bits over the
 *      reference's window, as c63_rd_search_best finds it (the left
 *      neighbour not counted; its cost and raster index are kept for
 *      c63_rd_decide): the exact mode's search kernel with the rd keys
 *      (c63_cuda_me.cu);
 *   2. trials: every coding a decision may need, each by a warp:
 *      transformed, trellis-quantised, reconstructed, with its squared
 *      error, AC bits and SAD: intra, the searched vector, the zero vector
 *      and the searched vectors of the blocks one and two to the left
 *      (c63_rd_trial_vector);
 *   3. the walk: a warp per MCU row and plane decides the blocks in
 *      coding order from the trials by c63_rd_decide, as the CPU does, a
 *      32nd of the row per lane from a guessed state, then repaired in
 *      order;
 *   4. gather: the chosen trial's coefficients, vector and reconstruction
 *      into the frame's buffers, for the entropy coder and the next frame.
 *
 * Keyframes have one candidate per block (intra) and need only 2 and 4.
 * The per-block arithmetic shared with the CPU is in c63/rd_block.h; the
 * transform and reconstruction (c63_cuda_rd_trial.cuh) follow c63/dsp_c.c
 * operation by operation (the build forbids FMA contraction), spread over
 * the lanes of a warp without changing any element's order of operations.
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

/* A frame's trials: C63_RD_T_COUNT slots of every block (c63/rd_block.h),
 * slot-major (slot k of block gb at k * stride + gb). */
struct rd_trials {
  c63_rd_sum *sum;
  rd_data *data;
  size_t stride;
};

/* ---- 2. Trials ---- */

/* Warps per CTA of the kernels that run a warp per block or per row. */
constexpr int kWarps = 4;
/* Code lengths of the DC and vector tables a walk keeps in shared memory:
 * sizes 0..16 are all a value can have. */
constexpr int kLenCopy = 32;

/* blockIdx.y: the slot (C63_RD_T_INTRA only in keyframes); a warp per
 * block. Each vector is tried once (c63_rd_trial_vector); a slot without a
 * trial is marked invalid. */
__global__ void __launch_bounds__(32 * kWarps)
    trials_kernel(const uint8_t *__restrict__ cur, const uint8_t *__restrict__ ref, c63_cu_planes P,
                  const rd_tables *__restrict__ T, float lambda,
                  const c63_rd_searched *__restrict__ search, rd_trials tr)
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
  if (kind != C63_RD_T_INTRA) {
    const c63_mv own1 = bp.bx >= 1 ? search[gb - 1].mv : mv;
    const c63_mv own2 = bp.bx >= 2 ? search[gb - 2].mv : mv;
    if (!c63_rd_trial_vector(kind, bp.bx, search[gb].mv, own1, own2, pl.w, pl.h, mx, my, &mv)) {
      const c63_rd_sum none = {0, 0, 0, mv, 0, 0};
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
  c63_rd_searched s;
  c63_rd_sum t[C63_RD_T_COUNT];
};

__device__ __forceinline__ void load_block(const c63_rd_searched *search, rd_trials tr, size_t nb,
                                           int gb, block_in &b)
{
  b.s = search[gb];
#pragma unroll
  for (int k = 0; k < C63_RD_T_COUNT; k++)
    b.t[k] = tr.sum[k * nb + gb];
}

/* What the decisions share within a frame. */
struct rd_frame {
  const rd_tables *T;
  float lambda;
  int sad_16;
  rd_trials tr;
  const c63_rd_searched *search;
};

/* c63_rd_decide for block (bx, by) of plane pl, by one thread. lens: the
 * code lengths of C63_HUFF_DC0 (also the vectors') and C63_HUFF_DC1. */
__device__ __forceinline__ int decide_block(const rd_frame &f, const c63_cu_plane &pl, int chroma,
                                            int bx, int by, const c63_mv *left, int prev_dc,
                                            const block_in &b, uint8_t (*lens)[kLenCopy])
{
  c63_rd_place p;
  p.w = pl.w;
  p.h = pl.h;
  p.mx = bx * 8;
  p.my = by * 8;
  /* the reference's window (c63_me_window) */
  p.x0 = p.mx - pl.range > 0 ? p.mx - pl.range : 0;
  p.y0 = p.my - pl.range > 0 ? p.my - pl.range : 0;
  p.x1 = p.mx + pl.range < pl.w - 8 ? p.mx + pl.range : pl.w - 8;
  p.y1 = p.my + pl.range < pl.h - 8 ? p.my + pl.range : pl.h - 8;
  return c63_rd_decide(&p, &b.s, b.t, left, prev_dc, f.lambda, f.sad_16, lens[C63_HUFF_MV],
                       lens[chroma ? C63_HUFF_DC1 : C63_HUFF_DC0]);
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
  return a.dc == b.dc && c63_rd_same_vector(a.left[0], b.left[0]) &&
         a.left[0].use_mv == b.left[0].use_mv && c63_rd_same_vector(a.left[1], b.left[1]) &&
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
    st.left[by & 1] = slot == C63_RD_T_INTRA ? c63_mv{0, 0, 0, 0} : b.t[slot].mv;
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
  const int slot = choice ? choice[gb] : C63_RD_T_INTRA;
  const size_t at = (size_t)slot * tr.stride + gb;
  const c63_cu_block bp = c63_cu_locate(P, gb);
  const c63_cu_plane &pl = P.p[bp.plane];
  coeffs[(size_t)gb * 64 + z] = tr.data[at].coef[z];
  recon[pl.pix_off + (size_t)(bp.by * 8 + z / 8) * pl.w + bp.bx * 8 + z % 8] = tr.data[at].rec[z];
  if (z == 0) mvs[gb] = slot == C63_RD_T_INTRA ? c63_mv{0, 0, 0, 0} : tr.sum[at].mv;
}

} // namespace

struct c63_cu_rd {
  rd_tables *tables;
  c63_rd_searched *search;
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
  if (err == cudaSuccess) err = cudaMalloc(&rd->search, nb * sizeof(c63_rd_searched));
  if (err == cudaSuccess)
    err = cudaMalloc(&rd->trials.sum, C63_RD_T_COUNT * nb * sizeof(c63_rd_sum));
  if (err == cudaSuccess) err = cudaMalloc(&rd->trials.data, C63_RD_T_COUNT * nb * sizeof(rd_data));
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
  if (delta) {
    const uint8_t *mv_len = rd->tables->len[C63_HUFF_MV];
    cudaError_t err =
        c63_cu_rd_motion_search(cur, ref, P.p[0], nullptr, mv_len, lambda_sad_16, rd->search, s);
    if (err == cudaSuccess && P.n == 3)
      err =
          c63_cu_rd_motion_search(cur, ref, P.p[1], &P.p[2], mv_len, lambda_sad_16, rd->search, s);
    if (err != cudaSuccess) return err;
  }
  const int per_warp = (nb + kWarps - 1) / kWarps;
  const dim3 grid(per_warp, delta ? C63_RD_T_COUNT : 1);
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
