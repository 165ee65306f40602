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
 *      (c63_cuda_me.cu) for luma; chroma among the vectors the luma
 *      search chose (c63_rd_chroma_candidate);
 *   2. trials: every coding a decision may need, each by the 8 threads of
 *      its block: transformed (the rd transform, in integers), quantised as
 *      trials are, reconstructed by the decoder's arithmetic, with its
 *      squared error, AC bits and SAD: intra, the searched vector, the zero
 *      vector and the searched vector of the block to the left
 *      (c63_rd_trial_vector);
 *   3. the decisions, by c63_rd_decide, as the CPU makes them in coding
 *      order: a table per unit of an MCU row (an MCU of luma, a block of
 *      chroma) of its choices for every state the blocks before it may
 *      leave, all at once, then a short pass along each row through the
 *      tables;
 *   4. coding: the chosen trial's levels by the trellis, from its
 *      transform, into the frame's coefficients with its vector, and its
 *      reconstruction (the decoder's arithmetic) for the next frame's
 *      reference, by the 8 threads of its block.
 *
 * The kernels after the search are launched early on sm_90
 * (c63_cuda_launch_after).
 * Keyframes have one candidate per block (intra) and need only 4, which
 * transforms each block itself. The per-block arithmetic shared with the
 * CPU is in c63/rd_block.h; the reconstruction (c63_cuda_dct.cuh) follows
 * c63/dsp_c.c operation by operation (the build forbids FMA contraction).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <cub/block/block_scan.cuh>

#include <limits.h>
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

/* ---- Launching one kernel after another ----
 *
 * Each kernel of a frame reads what the one before it wrote, on one
 * stream. On sm_90 a kernel may be launched before the one before it ends
 * (c63_cuda_launch_after): its CTAs are placed while the other's last ones
 * run, and wait in c63_cuda_wait_for_previous() until it has finished and its
 * writes are visible. That hides most of the gap between the kernels,
 * which a frame of seven short kernels would otherwise feel once per
 * kernel. Every kernel so launched calls c63_cuda_wait_for_previous() before
 * it touches global memory. */

/* A frame's trials: C63_RD_T_COUNT slots of every block (c63/rd_block.h),
 * their summaries block by block (slot k of block gb at gb *
 * C63_RD_T_COUNT + k, as the decisions read them), their transforms slot
 * by slot (64 values at (k * stride + gb) * 64, column by column). */
struct rd_trials {
  c63_rd_sum *sum;
  int16_t *y;
  size_t stride;
};

/* Code lengths of the DC and vector tables that the chroma search and the
 * decisions keep in shared memory: sizes 0..16 are all a value can have. */
constexpr int kLenCopy = 32;

/* Block (bx, by) of plane pl and its search window, the reference's
 * (c63_me_window), for the chroma search and the decisions. */
__device__ __forceinline__ c63_rd_place block_place(const c63_cuda_plane &pl, int bx, int by)
{
  c63_rd_place p;
  p.w = pl.w;
  p.h = pl.h;
  p.mx = bx * 8;
  p.my = by * 8;
  p.x0 = max(p.mx - pl.range, 0);
  p.y0 = max(p.my - pl.range, 0);
  p.x1 = min(p.mx + pl.range, pl.w - 8);
  p.y1 = min(p.my + pl.range, pl.h - 8);
  return p;
}

/* ---- 1b. The chroma search ---- */

/* c63_rd_chroma_candidate's candidates of each chroma block (U's blocks,
 * then V's) once the luma search is in, by the block's 8 threads, a row
 * each: SADs of at most five 8x8 blocks instead of a search of the
 * window. */
constexpr int kChromaSearchThreads = rd_policy::kChromaSearchThreads;

__global__ void __launch_bounds__(kChromaSearchThreads)
    chroma_search_kernel(const uint8_t *__restrict__ cur, const uint8_t *__restrict__ ref,
                         c63_cuda_planes P, const rd_tables *__restrict__ T, int sad_16,
                         c63_rd_searched *__restrict__ search)
{
  __shared__ uint8_t mv_len[kLenCopy];
  if (threadIdx.x < kLenCopy) mv_len[threadIdx.x] = T->len[C63_HUFF_MV][threadIdx.x];
  __syncthreads();
  c63_cuda_wait_for_previous();
  const int mcus_w = P.p[0].bw / 2, mcus = mcus_w * (P.p[0].bh / 2);
  const int i = (int)(blockIdx.x * blockDim.x + threadIdx.x) >> 3, r = threadIdx.x & 7;
  /* a warp's blocks go in step (they share its shuffles) */
  if ((int)((blockIdx.x * blockDim.x + (threadIdx.x & ~31u)) >> 3) >= 2 * mcus) return;
  const bool active = i < 2 * mcus;
  const int j = (active ? i : 0) % mcus, bx = j % mcus_w, by = j / mcus_w;
  const c63_cuda_plane &pl = P.p[1 + (active ? i : 0) / mcus], &luma_pl = P.p[0];
  const int top = luma_pl.blk_off + 2 * by * luma_pl.bw + 2 * bx;
  const c63_mv luma[4] = {search[top].mv, search[top + 1].mv, search[top + luma_pl.bw].mv,
                          search[top + luma_pl.bw + 1].mv};
  const c63_rd_place p = block_place(pl, bx, by);
  const uint2 row =
      *reinterpret_cast<const uint2 *>(cur + pl.pix_off + (size_t)(p.my + r) * pl.w + p.mx);
  c63_rd_searched best = {INT_MAX, 0, {0, 0, 1, 0}};
#pragma unroll
  for (int k = 0; k < 5; k++) {
    c63_mv v = {0, 0, 1, 0};
    const bool has = c63_rd_chroma_candidate(luma, k, &p, &v);
    unsigned sad = 0;
    if (has) {
      const uint2 q =
          load_row_unaligned(ref + pl.pix_off + (size_t)(p.my + v.y + r) * pl.w + p.mx + v.x);
      sad = __vsadu4(row.x, q.x) + __vsadu4(row.y, q.y);
    }
    sad = group_sum(sad);
    if (has) c63_rd_chroma_consider((int)sad, v, &p, sad_16, mv_len, &best);
  }
  if (active && r == 0) search[pl.blk_off + by * pl.bw + bx] = best;
}

/* ---- 2. Trials ---- */

/* The frame's trial_tables, by one CTA. */
__global__ void __launch_bounds__(rd_policy::kTablesThreads)
    tables_kernel(c63_cuda_planes P, const rd_tables *__restrict__ T,
                  trial_tables *__restrict__ out)
{
  build_trial_tables(*out, P, *T);
}

/* A listed trial: its block, where the block lies, its slot and vector
 * (16 bytes, one load). */
struct __align__(16) rd_item
{
  int gb;
  int16_t bx, by;
  c63_mv mv;
  uint8_t plane, kind, pad_[2];
};

/* The trials of a delta frame, listed so that the trials kernel's warps
 * all have one: a thread per block lists the slots that hold a trial, at
 * an offset from a CTA scan and one atomic addition per CTA (their order
 * does not matter: each trial writes its own slot). The CTA zeroes its
 * blocks' summaries (a slot without a trial stays invalid; the trials
 * write the others) and writes its part of the list from shared memory,
 * both in consecutive 16-byte words: stores scattered by each thread over
 * its own slots and items would leave the multiprocessors idle while they
 * drain. */
constexpr int kListThreads = rd_policy::kListThreads;

__global__ void __launch_bounds__(kListThreads)
    list_kernel(c63_cuda_planes P, const c63_rd_searched *__restrict__ search, rd_trials tr,
                rd_item *__restrict__ list, uint32_t *__restrict__ count,
                const rd_tables *__restrict__ T, trial_tables *__restrict__ tables)
{
  c63_cuda_wait_for_previous();
  /* the frame's tables for the kernels after this one, by its last CTA
   * (the others have more blocks to list) */
  if (blockIdx.x == gridDim.x - 1) build_trial_tables(*tables, P, *T);
  using scan = cub::BlockScan<unsigned long long, kListThreads>;
  __shared__ typename scan::TempStorage temp;
  __shared__ uint32_t base;
  __shared__ rd_item staged[kListThreads * C63_RD_T_COUNT];
  static_assert(kListThreads < 1 << 16, "a kind's count fits 16 bits");
  static_assert(sizeof(c63_rd_sum) * C63_RD_T_COUNT % sizeof(uint4) == 0,
                "a block's summaries are whole 16-byte words");
  {
    const int first = (int)(blockIdx.x * blockDim.x);
    const int blocks = min(kListThreads, P.total_blocks - first);
    uint4 *sum = reinterpret_cast<uint4 *>(tr.sum + (size_t)first * C63_RD_T_COUNT);
    const int words = blocks * (int)(sizeof(c63_rd_sum) * C63_RD_T_COUNT / sizeof(uint4));
    for (int i = threadIdx.x; i < words; i += kListThreads)
      sum[i] = make_uint4(0, 0, 0, 0);
  }
  const int gb = (int)(blockIdx.x * blockDim.x + threadIdx.x);
  const bool in = gb < P.total_blocks;
  const c63_cuda_block bp = c63_cuda_locate(P, in ? gb : 0);
  const c63_cuda_plane &pl = P.p[bp.plane];
  const c63_mv none = {0, 0, 0, 0};
  c63_mv own = none, own1 = none;
  if (in) {
    own = search[gb].mv;
    if (bp.bx >= 1) own1 = search[gb - 1].mv;
  }
  const int mx = bp.bx * 8, my = bp.by * 8;
  /* each slot's vector (intra's none), and which slots hold a trial */
  c63_mv mv[C63_RD_T_COUNT];
  unsigned valid = in ? 1u << C63_RD_T_INTRA : 0;
  mv[C63_RD_T_INTRA] = none;
#pragma unroll
  for (int kind = C63_RD_T_SEARCH; kind < C63_RD_T_COUNT; kind++) {
    mv[kind] = none;
    if (!in) continue;
    if (c63_rd_trial_vector(kind, bp.bx, own, own1, pl.w, pl.h, mx, my, &mv[kind]))
      valid |= 1u << kind;
  }
  /* The CTA's part of the list kind by kind: a warp's four trials are
   * then mostly of one kind, so its votes skip more (an intra trial has
   * levels in most columns, which the vector trials beside it would
   * otherwise share; docs/rd.md). One scan of the counts, 16 bits a
   * kind. */
  unsigned long long mine = 0, before, totals;
#pragma unroll
  for (int kind = 0; kind < C63_RD_T_COUNT; kind++)
    mine |= (unsigned long long)(valid >> kind & 1) << (16 * kind);
  scan(temp).ExclusiveSum(mine, before, totals);
  int total = 0;
#pragma unroll
  for (int kind = 0; kind < C63_RD_T_COUNT; kind++) {
    const int at = total + (int)(before >> (16 * kind) & 0xffff);
    total += (int)(totals >> (16 * kind) & 0xffff);
    if (!(valid >> kind & 1)) continue;
    staged[at] = rd_item{
        gb, (int16_t)bp.bx, (int16_t)bp.by, mv[kind], (uint8_t)bp.plane, (uint8_t)kind, {0, 0}};
  }
  if (threadIdx.x == 0) base = atomicAdd(count, (uint32_t)total);
  __syncthreads();
  for (int i = threadIdx.x; i < total; i += kListThreads)
    list[base + i] = staged[i];
}

/* Trials' CTAs per multiprocessor (c63_cuda_policy.cuh). */
constexpr int kTrialCtas = rd_policy::kTrialCtas;

/* The 8 threads of a block per trial of a delta frame's list. */
__global__ void __launch_bounds__(kTrialThreads, kTrialCtas)
    trials_kernel(const uint8_t *__restrict__ cur, const uint8_t *__restrict__ ref,
                  c63_cuda_planes P, const trial_tables *__restrict__ tables, rd_trials tr,
                  const rd_item *__restrict__ list, const uint32_t *__restrict__ count)
{
  __shared__ trial_tables tb;
  __shared__ trial_buf buf[kTrialsPerCta];
  c63_cuda_wait_for_previous();
  const int n = (int)*count;
  /* a CTA past the list's end leaves at once, before any barrier */
  if ((int)blockIdx.x * kTrialsPerCta >= n) return;
  const int lt = threadIdx.x >> 3, r = threadIdx.x & 7;
  const int t = (int)blockIdx.x * kTrialsPerCta + lt;
  const bool active = t < n;
  rd_item it = {0, 0, 0, {0, 0, 0, 0}, 0, (uint8_t)C63_RD_T_INTRA, {0, 0}};
  if (active) it = list[t];
  copy_trial_tables(tb, tables);
  __syncthreads();
  const c63_cuda_plane &pl = P.p[it.plane];
  const int mx = it.bx * 8, my = it.by * 8;
  const uint8_t *pred =
      it.mv.use_mv ? ref + pl.pix_off + (size_t)(my + it.mv.y) * pl.w + mx + it.mv.x : nullptr;
  block_trial(tb, buf[lt], r, active, cur + pl.pix_off + (size_t)my * pl.w + mx, pred, pl.w,
              it.plane, pl.ac_limit, it.mv, tr.y + ((size_t)it.kind * tr.stride + it.gb) * 64,
              tr.sum + (size_t)it.gb * C63_RD_T_COUNT + it.kind);
}

/* ---- 3. The decisions ---- */

/* Code lengths copied into shared memory: vectors, luma DC, chroma DC. */
enum { kLenMv, kLenDc0, kLenDc1, kLenTables };

/* What the decisions share within a frame. */
struct rd_frame {
  const rd_tables *T;
  float lambda;
  int sad_16;
  rd_trials tr;
  const c63_rd_searched *search;
};

/* Block gb's trial summaries (read in place: a copy indexed by slot
 * would live in local memory). */
__device__ __forceinline__ const c63_rd_sum *block_sums(const rd_trials &tr, int gb)
{
  return tr.sum + (size_t)gb * C63_RD_T_COUNT;
}

/* The final vector a block leaves its right neighbour when it chooses
 * slot k (use_mv = 0 for intra). */
__device__ __forceinline__ c63_mv chosen_mv(const c63_rd_sum *t, int k)
{
  return k == C63_RD_T_INTRA ? c63_mv{0, 0, 0, 0} : t[k].mv;
}

/* c63_rd_decide for block (bx, by) of plane pl, by one thread, given its
 * left neighbour's final vector (left; none in the first column) and the
 * DC before it. lens: the code lengths of the vector and DC tables. */
__device__ __forceinline__ int decide_block(const rd_frame &f, const c63_cuda_plane &pl, int chroma,
                                            int bx, int by, c63_mv left, int prev_dc, int gb,
                                            const uint8_t (*lens)[kLenCopy])
{
  const c63_rd_place p = block_place(pl, bx, by);
  return c63_rd_decide(&p, &f.search[gb], block_sums(f.tr, gb), bx > 0, left, prev_dc, f.lambda,
                       f.sad_16, lens[kLenMv], lens[chroma ? kLenDc1 : kLenDc0]);
}

/* A block's choice depends on the blocks before it in its MCU row only
 * through their choices: its left neighbour's final vector and the DC
 * before it in coding order are those of the slots those blocks chose. So
 * the choices follow from a table per unit of a row, which every unit
 * fills at once for every state it may be entered in, and a pass along
 * each row through the tables, which is short:
 *  - chroma: a unit is a block, entered in the slot its left neighbour
 *    chose (C63_RD_T_COUNT states);
 *  - luma: a unit is an MCU's four blocks (coding order (0,0), (1,0),
 *    (0,1), (1,1)), entered in the slots chosen by the right blocks of the
 *    MCU before it, top and bottom (the left neighbours of its left
 *    blocks; the bottom one also gives the DC before its first block):
 *    C63_RD_T_COUNT^2 states. Its entry holds its four choices (3 bits
 *    each) and the state it leaves.
 * The row's first unit has one state only (no left neighbour, DC 0). The
 * result is the choice of one walk along the row, as the CPU makes it. */
constexpr int kLumaStates = C63_RD_T_COUNT * C63_RD_T_COUNT;

/* The table kernel's CTAs: first those of luma, kTableMcus MCUs each
 * (kLumaStates threads an MCU), then those of chroma, a thread a state. */
constexpr int kTableThreads = rd_policy::kTableThreads;
constexpr int kTableMcus = kTableThreads / kLumaStates;
__host__ __device__ inline int table_luma_ctas(int mcus)
{
  return (mcus + kTableMcus - 1) / kTableMcus;
}

/* Luma: a CTA per kTableMcus MCUs, a thread per (MCU, state). The right
 * blocks of an MCU depend on the state only through the choice of the
 * block before them (its vector and DC), so their decisions for each such
 * choice are made first, once per MCU (D10, D11), and each state then
 * decides only the MCU's left blocks: two decisions a state instead of
 * four. Then chroma: a thread per (plane, block row, block, state). table:
 * a row's units back to back, each unit's states in order. */
__global__ void __launch_bounds__(kTableThreads)
    table_kernel(rd_frame f, c63_cuda_planes P, uint16_t *__restrict__ table)
{
  __shared__ uint8_t lens[kLenTables][kLenCopy];
  /* [MCU][choice of (0,0) or (0,1)]: the choice of (1,0) or (1,1) */
  __shared__ uint8_t right[2][kTableMcus][C63_RD_T_COUNT];
  c63_cuda_wait_for_previous();
  if (threadIdx.x < kLenCopy) {
    lens[kLenMv][threadIdx.x] = f.T->len[C63_HUFF_MV][threadIdx.x];
    lens[kLenDc0][threadIdx.x] = f.T->len[C63_HUFF_DC0][threadIdx.x];
    lens[kLenDc1][threadIdx.x] = f.T->len[C63_HUFF_DC1][threadIdx.x];
  }
  const int mcus_w = P.p[0].bw / 2, mcus_h = P.p[0].bh / 2;
  const int mcus = mcus_h * mcus_w, luma_ctas = table_luma_ctas(mcus);
  if ((int)blockIdx.x < luma_ctas) {
    const int local = threadIdx.x / kLumaStates, s = threadIdx.x % kLumaStates;
    const int unit = (int)blockIdx.x * kTableMcus + local;
    const bool in = local < kTableMcus && unit < mcus;
    const int m = unit % mcus_w, r = unit / mcus_w;
    const c63_cuda_plane &pl = P.p[0];
    const int top = pl.blk_off + 2 * r * pl.bw + 2 * m, bottom = top + pl.bw;
    __syncthreads(); /* lens */
    /* D10 and D11: thread s < 10 decides the right block of row s / 5
     * given the left block's choice s % 5, where that choice has a trial */
    if (in && s < 2 * C63_RD_T_COUNT) {
      const int row = s / C63_RD_T_COUNT, k = s % C63_RD_T_COUNT;
      const int gb = row ? bottom : top;
      const c63_rd_sum *b = block_sums(f.tr, gb);
      if (b[k].valid)
        right[row][local][k] = (uint8_t)decide_block(f, pl, 0, 2 * m + 1, 2 * r + row,
                                                     chosen_mv(b, k), b[k].dc, gb + 1, lens);
    }
    __syncthreads();
    if (!in) return;
    const int i = unit * kLumaStates + s;
    /* the row's first MCU has one state, and no MCU is entered in a slot
     * without a trial (about half of the states) */
    if (m == 0 ? s != 0
               : !block_sums(f.tr, top - 1)[s % C63_RD_T_COUNT].valid ||
                     !block_sums(f.tr, bottom - 1)[s / C63_RD_T_COUNT].valid) {
      table[i] = 0;
      return;
    }
    c63_mv left_top = {0, 0, 0, 0}, left_bottom = {0, 0, 0, 0};
    int dc = 0;
    if (m) {
      left_top = chosen_mv(block_sums(f.tr, top - 1), s % C63_RD_T_COUNT);
      const c63_rd_sum *lb = block_sums(f.tr, bottom - 1);
      left_bottom = chosen_mv(lb, s / C63_RD_T_COUNT);
      dc = lb[s / C63_RD_T_COUNT].dc;
    }
    /* coding order (0,0), (1,0), (0,1), (1,1); (0,1) follows (1,0) */
    const int s0 = decide_block(f, pl, 0, 2 * m, 2 * r, left_top, dc, top, lens);
    const int s1 = right[0][local][s0];
    const int s2 = decide_block(f, pl, 0, 2 * m, 2 * r + 1, left_bottom,
                                block_sums(f.tr, top + 1)[s1].dc, bottom, lens);
    const int s3 = right[1][local][s2];
    table[i] = (uint16_t)(s0 | s1 << 3 | s2 << 6 | s3 << 9);
    return;
  }
  __syncthreads(); /* lens */
  const int luma = mcus * kLumaStates;
  const int i = ((int)blockIdx.x - luma_ctas) * kTableThreads + (int)threadIdx.x;
  const int chroma = 2 * mcus * C63_RD_T_COUNT;
  if (i >= chroma) return;
  const int s = i % C63_RD_T_COUNT, unit = i / C63_RD_T_COUNT;
  const int bx = unit % mcus_w, row = unit / mcus_w, by = row % mcus_h, c = 1 + row / mcus_h;
  const c63_cuda_plane &pl = P.p[c];
  const int gb = pl.blk_off + by * pl.bw + bx;
  if (bx == 0 ? s != 0 : !block_sums(f.tr, gb - 1)[s].valid) {
    table[luma + i] = 0;
    return;
  }
  c63_mv left = {0, 0, 0, 0};
  int dc = 0;
  if (bx) {
    const c63_rd_sum *lb = block_sums(f.tr, gb - 1);
    left = chosen_mv(lb, s);
    dc = lb[s].dc;
  }
  table[luma + i] = (uint16_t)decide_block(f, pl, 1, bx, by, left, dc, gb, lens);
}

/* Most units a row of tables holds: MCUs of the widest picture. */
constexpr int kMaxRowUnits = C63_MAX_SIZE / 16;

/* The state a luma entry leaves: the choices of (1,0) and (1,1). */
__device__ __forceinline__ int luma_state_after(uint32_t e)
{
  return (int)(e >> 3 & 7) + C63_RD_T_COUNT * (int)(e >> 9 & 7);
}

/* The pass along each row: a CTA per (MCU row, plane). Its threads load
 * the row's tables into shared memory, many loads in flight (a warp alone
 * would wait out its lanes' loads one latency after another, most of the
 * pass), then follow them in three short walks instead of one long one: the
 * row is cut into segments, and
 *  1. a thread per (segment, state it may be entered in) follows its
 *     segment from that state, for the state it leaves;
 *  2. one thread goes from segment to segment through those, from the
 *     row's start, for the state each segment is entered in;
 *  3. a thread per segment follows it again from that state, for the
 *     state of each unit;
 * about 3 sqrt(units) steps in series instead of one a unit (120 at
 * 1080p). Then every thread writes the choices of its units. */
constexpr int kResolveThreads = rd_policy::kResolveThreads;

/* Segments a row of units is cut into: about sqrt(2 units), which makes
 * the walks' steps in series (2 units / segments + segments) fewest, with
 * a thread per (segment, state). */
__device__ __forceinline__ int resolve_segments(int units, int states)
{
  int n = 1;
  while ((n + 1) * (n + 1) <= 2 * units)
    n++;
  return min(n, kResolveThreads / states);
}

/* The tables are loaded in 8-byte words: a row's starts on one. */
static_assert(C63_RD_T_COUNT * sizeof(uint16_t) % sizeof(uint2) == 0,
              "a chroma unit's entries are whole 8-byte words");

__global__ void __launch_bounds__(kResolveThreads)
    resolve_kernel(c63_cuda_planes P, const uint16_t *__restrict__ table,
                   uint8_t *__restrict__ choice)
{
  __shared__ __align__(8) uint16_t row[kMaxRowUnits * kLumaStates];
  __shared__ uint8_t state[kMaxRowUnits];
  __shared__ uint8_t leaves[kResolveThreads]; /* [segment][entry state] */
  __shared__ uint8_t entered[kResolveThreads];
  c63_cuda_wait_for_previous();
  const int mcus_w = P.p[0].bw / 2, mcus_h = P.p[0].bh / 2, tid = threadIdx.x;
  const int c = blockIdx.x % 3, r = blockIdx.x / 3;
  const int states = c ? C63_RD_T_COUNT : kLumaStates;
  const uint16_t *src = c ? table + (size_t)mcus_h * mcus_w * kLumaStates +
                                ((size_t)(c - 1) * mcus_h + r) * mcus_w * C63_RD_T_COUNT
                          : table + (size_t)r * mcus_w * kLumaStates;
  const int words = mcus_w * states / 4;
#pragma unroll 4
  for (int i = tid; i < words; i += kResolveThreads)
    reinterpret_cast<uint2 *>(row)[i] = reinterpret_cast<const uint2 *>(src)[i];
  __syncthreads();
  /* the state after unit u, entered in state s */
  auto after = [&](int u, int s) {
    const uint32_t e = row[u * states + s];
    return c ? (int)e : luma_state_after(e);
  };
  const int segs = resolve_segments(mcus_w, states), len = (mcus_w + segs - 1) / segs;
  if (tid < segs * states) {
    const int g = tid / states, end = min(mcus_w, (g + 1) * len);
    int s = tid % states;
    for (int u = g * len; u < end; u++)
      s = after(u, s);
    leaves[tid] = (uint8_t)s;
  }
  __syncthreads();
  if (tid == 0) {
    int s = 0; /* the row's start: no left neighbour, DC 0 */
    for (int g = 0; g < segs; g++) {
      entered[g] = (uint8_t)s;
      s = leaves[g * states + s];
    }
  }
  __syncthreads();
  if (tid < segs) {
    const int end = min(mcus_w, (tid + 1) * len);
    int s = entered[tid];
    for (int u = tid * len; u < end; u++) {
      state[u] = (uint8_t)s;
      s = after(u, s);
    }
  }
  __syncthreads();
  const c63_cuda_plane &pl = P.p[c];
  for (int u = tid; u < mcus_w; u += kResolveThreads) {
    const uint32_t e = row[u * states + state[u]];
    if (c) {
      choice[pl.blk_off + r * pl.bw + u] = (uint8_t)e;
    } else {
      const int top = pl.blk_off + 2 * r * pl.bw + 2 * u;
      choice[top] = (uint8_t)(e & 7);
      choice[top + 1] = (uint8_t)(e >> 3 & 7);
      choice[top + pl.bw] = (uint8_t)(e >> 6 & 7);
      choice[top + pl.bw + 1] = (uint8_t)(e >> 9 & 7);
    }
  }
}

/* ---- 4. Coding ---- */

/* The chosen trial of each block (every block's intra trial in keyframes,
 * choice NULL) coded by its 8 threads: its levels into the frame's
 * coefficients, its vector, and its reconstruction, the next frame's
 * reference. */
__global__ void __launch_bounds__(8 * kCodeBlocks)
    code_kernel(const uint8_t *__restrict__ cur, const uint8_t *__restrict__ ref, c63_cuda_planes P,
                const trial_tables *__restrict__ tables, float lambda, rd_trials tr,
                const uint8_t *__restrict__ choice, int16_t *__restrict__ coeffs,
                c63_mv *__restrict__ mvs, uint8_t *__restrict__ recon, uint32_t *count)
{
  __shared__ trial_tables tb;
  __shared__ code_ws ws[kCodeBlocks];
  c63_cuda_wait_for_previous();
  /* the trials kernel has read the count of the list: zero for the next
   * frame's list */
  if (count && blockIdx.x == 0 && threadIdx.x == 0) *count = 0;
  copy_trial_tables(tb, tables);
  __syncthreads();
  const int lb = threadIdx.x >> 3, r = threadIdx.x & 7;
  const int gb = (int)blockIdx.x * kCodeBlocks + lb;
  /* a warp's blocks go in step (they share its votes and shuffles) */
  if ((int)(blockIdx.x * blockDim.x + (threadIdx.x & ~31u)) / 8 >= P.total_blocks) return;
  const bool active = gb < P.total_blocks;
  const c63_cuda_block bp = c63_cuda_locate(P, active ? gb : 0);
  const c63_cuda_plane &pl = P.p[bp.plane];
  const int slot = active && choice ? choice[gb] : C63_RD_T_INTRA;
  const c63_mv mv =
      slot == C63_RD_T_INTRA ? c63_mv{0, 0, 0, 0} : tr.sum[(size_t)gb * C63_RD_T_COUNT + slot].mv;
  const int mx = bp.bx * 8, my = bp.by * 8;
  const uint8_t *pred =
      mv.use_mv ? ref + pl.pix_off + (size_t)(my + mv.y) * pl.w + mx + mv.x : nullptr;
  /* keyframes (no choice): no trials ran, the block is transformed here */
  block_code(tb, ws[lb], r, active, tr.y + ((size_t)slot * tr.stride + (active ? gb : 0)) * 64,
             choice ? nullptr : cur + pl.pix_off + (size_t)my * pl.w + mx, bp.plane, pl.ac_limit,
             lambda, pred, pl.w, coeffs + (size_t)gb * 64,
             recon + pl.pix_off + (size_t)my * pl.w + mx);
  if (active && r == 0) mvs[gb] = mv;
}

} // namespace

struct c63_cuda_rd {
  rd_tables *tables;
  trial_tables *frame_tables; /* the frame's, from tables_kernel */
  c63_rd_searched *search;
  rd_trials trials;
  uint8_t *choice;
  uint16_t *table;   /* the decisions' tables (table_kernel) */
  rd_item *list;     /* a delta frame's trials (list_kernel) */
  uint32_t *count;   /* ... how many */
  bool early_launch; /* programmatic dependent launches (sm_90 on) */
};

cudaError_t c63_cuda_rd_create(const c63_cuda_planes &P, c63_cuda_rd **out)
{
  *out = nullptr;
  c63_cuda_rd *rd = static_cast<c63_cuda_rd *>(calloc(1, sizeof *rd));
  if (!rd) return cudaErrorMemoryAllocation;
  const size_t nb = (size_t)P.total_blocks;
  rd->trials.stride = nb;
  cudaError_t err = cudaMalloc(&rd->tables, sizeof(rd_tables));
  if (err == cudaSuccess) err = cudaMalloc(&rd->frame_tables, sizeof(trial_tables));
  if (err == cudaSuccess) err = cudaMalloc(&rd->search, nb * sizeof(c63_rd_searched));
  if (err == cudaSuccess)
    err = cudaMalloc(&rd->trials.sum, C63_RD_T_COUNT * nb * sizeof(c63_rd_sum));
  if (err == cudaSuccess)
    err = cudaMalloc(&rd->trials.y, C63_RD_T_COUNT * nb * 64 * sizeof(int16_t));
  if (err == cudaSuccess) err = cudaMalloc(&rd->choice, nb);
  if (err == cudaSuccess) err = cudaMalloc(&rd->list, C63_RD_T_COUNT * nb * sizeof(rd_item));
  if (err == cudaSuccess) err = cudaMalloc(&rd->count, sizeof(uint32_t));
  if (err == cudaSuccess) err = cudaMemset(rd->count, 0, sizeof(uint32_t));
  int dev = 0, major = 0;
  if (err == cudaSuccess) err = cudaGetDevice(&dev);
  if (err == cudaSuccess)
    err = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
  rd->early_launch = major >= 9;
  const size_t mcus = (size_t)(P.p[0].bw / 2) * (P.p[0].bh / 2);
  if (err == cudaSuccess)
    err = cudaMalloc(&rd->table, mcus * (kLumaStates + 2 * C63_RD_T_COUNT) * sizeof(uint16_t));
  if (err == cudaSuccess) {
    rd_tables t;
    for (int q = 1; q < 256; q++)
      t.recip[q] = c63_rd_recip(q);
    t.recip[0] = 0; /* no quantiser is 0 (c63_make_quant_tables) */
    for (int i = 0; i < 4; i++)
      memcpy(t.len[i], c63_huff_enc_tables()[i].len, sizeof t.len[i]);
    err = cudaMemcpy(rd->tables, &t, sizeof t, cudaMemcpyHostToDevice);
  }
  /* A copy from pageable memory may still be on its way when cudaMemcpy
   * returns, on the legacy default stream, which the backend's streams do
   * not wait for: the first frame's kernels could read the tables early. */
  if (err == cudaSuccess) err = cudaStreamSynchronize(0);
  if (err != cudaSuccess) {
    c63_cuda_rd_destroy(rd);
    return err;
  }
  *out = rd;
  return cudaSuccess;
}

void c63_cuda_rd_destroy(c63_cuda_rd *rd)
{
  if (!rd) return;
  cudaFree(rd->tables);
  cudaFree(rd->frame_tables);
  cudaFree(rd->search);
  cudaFree(rd->trials.sum);
  cudaFree(rd->trials.y);
  cudaFree(rd->choice);
  cudaFree(rd->table);
  cudaFree(rd->list);
  cudaFree(rd->count);
  free(rd);
}

cudaError_t c63_cuda_rd_code(c63_cuda_rd *rd, const uint8_t *cur, const uint8_t *ref,
                             const c63_cuda_planes &P, float lambda_ssd, int lambda_sad_16,
                             int16_t *coeffs, c63_mv *mvs, uint8_t *recon, cudaStream_t s)
{
  const int nb = P.total_blocks;
  const bool delta = ref != nullptr;
  const rd_frame f = {rd->tables, lambda_ssd, lambda_sad_16, rd->trials, rd->search};
  /* keyframes have no list kernel, which builds the frame's tables */
  if (!delta)
    tables_kernel<<<1, rd_policy::kTablesThreads, 0, s>>>(P, rd->tables, rd->frame_tables);
  if (delta) {
    const uint8_t *mv_len = rd->tables->len[C63_HUFF_MV];
    cudaError_t err =
        c63_cuda_rd_motion_search(cur, ref, P.p[0], mv_len, lambda_sad_16, rd->search, s);
    /* chroma: from the luma search's vectors */
    if (err == cudaSuccess && P.n == 3) {
      const int mcus = (P.p[0].bw / 2) * (P.p[0].bh / 2);
      err = c63_cuda_launch_after(rd->early_launch, chroma_search_kernel,
                                  (16 * mcus + kChromaSearchThreads - 1) / kChromaSearchThreads,
                                  kChromaSearchThreads, 0, s, cur, ref, P, rd->tables,
                                  lambda_sad_16, rd->search);
    }
    if (err != cudaSuccess) return err;
  }
  /* The count of the list is 0 here: zeroed at creation, and again by
   * each frame's coding kernel once the trials have read it. */
  const bool early = rd->early_launch;
  cudaError_t err = cudaSuccess;
  if (delta)
    err = c63_cuda_launch_after(early, list_kernel, (nb + kListThreads - 1) / kListThreads,
                                kListThreads, 0, s, P, rd->search, rd->trials, rd->list, rd->count,
                                rd->tables, rd->frame_tables);
  /* as many trials as the list may hold; CTAs past its length return at
   * once (keyframes have none: the coding kernel transforms each block) */
  const long trials = (long)nb * C63_RD_T_COUNT;
  if (delta && err == cudaSuccess)
    err = c63_cuda_launch_after(
        early, trials_kernel, (unsigned)((trials + kTrialsPerCta - 1) / kTrialsPerCta),
        kTrialThreads, 0, s, cur, ref, P, rd->frame_tables, rd->trials, rd->list, rd->count);
  if (delta && err == cudaSuccess) {
    const int mcus_h = P.p[0].bh / 2;
    const int mcus = mcus_h * (P.p[0].bw / 2);
    const int ctas =
        table_luma_ctas(mcus) + (mcus * 2 * C63_RD_T_COUNT + kTableThreads - 1) / kTableThreads;
    err = c63_cuda_launch_after(early, table_kernel, (unsigned)ctas, kTableThreads, 0, s, f, P,
                                rd->table);
    if (err == cudaSuccess)
      err = c63_cuda_launch_after(early, resolve_kernel, 3 * mcus_h, kResolveThreads, 0, s, P,
                                  rd->table, rd->choice);
  }
  if (err == cudaSuccess)
    err = c63_cuda_launch_after(early, code_kernel, (nb + kCodeBlocks - 1) / kCodeBlocks,
                                8 * kCodeBlocks, 0, s, cur, ref, P, rd->frame_tables, lambda_ssd,
                                rd->trials, delta ? rd->choice : nullptr, coeffs, mvs, recon,
                                rd->count);
  if (err != cudaSuccess) return err;
  return cudaGetLastError();
}
