/* The kernels and device functions of the GPU entropy decoder
 * (c63_cuda_huff_decode.cu, which has the stages in order): included by
 * that file alone, and compiled as host C++ by the test that runs them on
 * the CPU one thread at a time (tests/test_huff_kernels_host.cpp), which
 * stands in for the CUDA built-ins and CUB's block scan.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef C63_CUDA_HUFF_KERNELS_CUH
#define C63_CUDA_HUFF_KERNELS_CUH

#ifdef __CUDACC__
#include <cub/block/block_scan.cuh>
#endif

#include <stdint.h>

#include "c63/huff_sync.h"
#include "c63/huff_sync_model.h"
#include "c63/sparse.h"
#include "cuda/c63_cuda_policy.cuh"

using policy = c63_cuda_huff_policy;

namespace
{

constexpr uint32_t kPhases = C63_HS_PHASES;
constexpr uint8_t kNoMeet = 0xff;
constexpr uint32_t kNone = 0xffffffffu;

/* What the kernels learn of the frame as a whole. */
struct frame_info {
  uint32_t n_bytes, total_bits, n_threads;
  uint32_t unpaired_ff; /* the data ends with an FF without its stuffing byte */
  uint32_t bad;         /* something only the sequential decoder judges */
  uint32_t n_entries;   /* of the sparse frame */
};

/* The frame's shape, by value. */
struct frame_shape {
  int n_blocks, mcus_w, keyframe;
  int blocks_w[3], pad_w[3], pad_h[3], plane_off[3];
  uint32_t entries_cap, ac_cap;
};

/* The unstuffed bits and tables every decoding kernel reads. */
struct bits_view {
  const c63_huff_lut *luts;
  const uint8_t *bits;
};

__device__ __forceinline__ uint32_t subseq_limit(const frame_info &fi, uint32_t t)
{
  const uint64_t end = (uint64_t)(t + 1) * policy::kSubseqBits;
  return end < fi.total_bits ? (uint32_t)end : fi.total_bits;
}

/* c63_sparse_entry on the device. */
__device__ __forceinline__ uint32_t entry_of(int zigzag_index, int value)
{
  return (uint32_t)zigzag_index << 16 | (uint16_t)value;
}

__device__ __forceinline__ void step(const bits_view &v, c63_hs_state *s, c63_hs_out *o)
{
  c63_hs_step(v.luts, c63_hs_peek(v.bits, s->pos), s, o);
}

/* Decode from s to the first field boundary at or past limit, or to no
 * code. */
__device__ c63_hs_state run_to(const bits_view &v, c63_hs_state s, uint32_t limit)
{
  while (s.field != C63_HS_BAD && s.pos < limit) {
    c63_hs_out o;
    step(v, &s, &o);
  }
  return s;
}

/* Decode from `from` (where subsequence t truly begins) until the state is
 * one that a candidate of t passes through: returns that candidate, or
 * kNoMeet when none is met by the subsequence's end. Positions only grow
 * along a decoding, so each candidate is walked alongside, never past the
 * true decoder. */
__device__ uint8_t meet(const bits_view &v, const frame_info &fi, uint32_t t, c63_hs_state from)
{
  const uint32_t limit = subseq_limit(fi, t);
  c63_hs_state cand[kPhases];
  for (uint32_t k = 0; k < kPhases; k++)
    cand[k] = c63_hs_block_start(t * policy::kSubseqBits, (int)k);
  c63_hs_state s = from;
  for (;;) {
    for (uint32_t k = 0; k < kPhases; k++) {
      while (cand[k].field != C63_HS_BAD && cand[k].pos < limit && cand[k].pos < s.pos) {
        c63_hs_out o;
        step(v, &cand[k], &o);
      }
      if (c63_hs_equal(cand[k], s)) return (uint8_t)k;
    }
    if (s.field == C63_HS_BAD || s.pos >= limit) return kNoMeet;
    c63_hs_out o;
    step(v, &s, &o);
  }
}

/* ---- stage 1: unstuffing ---- */

struct max_op {
  __device__ __forceinline__ int32_t operator()(int32_t a, int32_t b) const
  {
    return a > b ? a : b;
  }
};

/* Each byte's index if it is not FF, else -1: a max-scan gives the last
 * byte before each run of FFs. */
__global__ void mark_non_ff(const uint8_t *data, uint32_t n, int32_t *mark)
{
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) mark[i] = data[i] == 0xff ? -1 : (int32_t)i;
}

/* Whether byte i stays: not when the byte before it is an FF that stays,
 * the first, third, ... FF of its run (the model consumes the byte after
 * each FF it keeps, whatever that byte is). */
__device__ __forceinline__ int kept(const uint8_t *data, const int32_t *last_non_ff, uint32_t i)
{
  return i == 0 || data[i - 1] != 0xff || (((int32_t)(i - 1) - last_non_ff[i - 1]) & 1) == 0;
}

__global__ void flag_kept(const uint8_t *data, uint32_t n, const int32_t *last_non_ff,
                          uint32_t *keep)
{
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) keep[i] = (uint32_t)kept(data, last_non_ff, i);
  if (i == n) keep[i] = 0; /* the exclusive sum's last entry is the total */
}

__global__ void scatter_kept(const uint8_t *data, uint32_t n, const uint32_t *keep,
                             const uint32_t *dst, uint8_t *out)
{
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && keep[i]) out[dst[i]] = data[i];
}

/* The frame's bit count and subsequences; resets the verdict. */
__global__ void frame_begin(const uint8_t *data, uint32_t n, const int32_t *last_non_ff,
                            const uint32_t *dst, frame_info *fi)
{
  fi->n_bytes = dst[n];
  fi->total_bits = 8 * fi->n_bytes;
  fi->n_threads = (fi->total_bits + policy::kSubseqBits - 1) / policy::kSubseqBits;
  if (fi->n_threads < 1) fi->n_threads = 1;
  /* an FF kept at the end has no stuffing byte after it */
  fi->unpaired_ff = data[n - 1] == 0xff && (((int32_t)(n - 1) - last_non_ff[n - 1]) & 1);
  fi->bad = 0;
  fi->n_entries = 0;
}

/* ---- stage 2: synchronisation ---- */

/* Candidate k of subsequence t: from its first bit at a block start of MCU
 * position k to the first field boundary past its end. */
__global__ void run_candidates(bits_view v, const frame_info *fip, uint32_t max_threads,
                               c63_hs_state *cand_end)
{
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  const frame_info fi = *fip;
  if (i >= max_threads * kPhases) return;
  const uint32_t t = i / kPhases, k = i % kPhases;
  if (t >= fi.n_threads) return;
  cand_end[i] = run_to(v, c63_hs_block_start(t * policy::kSubseqBits, (int)k), subseq_limit(fi, t));
}

/* Per subsequence t >= 1 and candidate j of t - 1: the candidate of t that
 * the decoding from j's end meets. Subsequence 0 maps everything to its
 * candidate 0, where the frame begins. Maps are packed a byte a candidate. */
__global__ void build_maps(bits_view v, const frame_info *fip, uint32_t max_threads,
                           const c63_hs_state *cand_end, uint8_t *map)
{
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  const frame_info fi = *fip;
  if (i >= max_threads * kPhases) return;
  const uint32_t t = i / kPhases;
  if (t >= fi.n_threads) return;
  map[i] = t == 0 ? 0 : meet(v, fi, t, cand_end[i - kPhases]);
}

/* Maps as functions on the predecessor's candidates, composed: (a then b). */
struct compose_op {
  __device__ __forceinline__ uint64_t operator()(uint64_t a, uint64_t b) const
  {
    uint64_t r = 0;
    for (uint32_t j = 0; j < kPhases; j++) {
      const uint32_t x = (uint32_t)(a >> (8 * j)) & 0xff;
      const uint32_t y = x == kNoMeet ? kNoMeet : (uint32_t)(b >> (8 * x)) & 0xff;
      r |= (uint64_t)y << (8 * j);
    }
    return r;
  }
};

__device__ __forceinline__ uint64_t load_map(const uint8_t *map, uint32_t t)
{
  uint64_t m = 0;
  for (uint32_t j = 0; j < kPhases; j++)
    m |= (uint64_t)map[t * kPhases + j] << (8 * j);
  return m;
}

/* Byte x of a packed map. */
__device__ __forceinline__ uint8_t apply_map(uint64_t m, uint32_t x)
{
  return (uint8_t)(m >> (8 * x));
}

/* One CTA: each subsequence's true start. A tile at a time, the
 * composition of the maps from the chain's last known candidate on (a
 * block scan) says which candidate's end is each subsequence's true end,
 * and so the next one's start. From the first subsequence where no
 * candidate is met, one thread decodes again from its true start, on
 * through the following subsequences until the decoding meets a candidate;
 * the scan goes on from there. kCtaThreads: the CTA's threads
 * (c63_cuda_huff_policy::kChainThreads). */
template <int kCtaThreads>
__global__ void __launch_bounds__(kCtaThreads)
    chain_starts(bits_view v, const frame_info *fip, const c63_hs_state *cand_end,
                 const uint8_t *map, c63_hs_state *start)
{
  using scan = cub::BlockScan<uint64_t, kCtaThreads>;
  __shared__ typename scan::TempStorage temp;
  __shared__ uint8_t tile_cand[kCtaThreads];
  __shared__ uint32_t first_fail, resume_at;
  __shared__ uint8_t resume_cand;
  const frame_info fi = *fip;
  const uint64_t identity = 0x050403020100ull;
  if (threadIdx.x == 0) start[0] = c63_hs_block_start(0, 0);
  uint32_t p = 1; /* the first subsequence whose true end is not known */
  uint8_t c = 0;  /* the candidate whose end is subsequence p - 1's true end */
  while (p < fi.n_threads) {
    const uint32_t t = p + threadIdx.x;
    const uint64_t m = t < fi.n_threads ? load_map(map, t) : identity;
    uint64_t prefix, total;
    scan(temp).InclusiveScan(m, prefix, compose_op(), total);
    const uint8_t ct = apply_map(prefix, c);
    tile_cand[threadIdx.x] = ct;
    if (threadIdx.x == 0) first_fail = kNone;
    __syncthreads();
    if (t < fi.n_threads && ct == kNoMeet) atomicMin(&first_fail, t);
    const uint8_t prev = threadIdx.x == 0 ? c : tile_cand[threadIdx.x - 1];
    if (t < fi.n_threads && prev != kNoMeet) start[t] = cand_end[(t - 1) * kPhases + prev];
    __syncthreads();
    if (first_fail == kNone) {
      c = tile_cand[kCtaThreads - 1];
      p += kCtaThreads;
      __syncthreads();
      continue;
    }
    if (threadIdx.x == 0) {
      uint32_t u = first_fail; /* its start is known: its predecessor's is not a fail */
      uint8_t k = kNoMeet;
      c63_hs_state end = run_to(v, start[u], subseq_limit(fi, u));
      while (u + 1 < fi.n_threads) {
        start[++u] = end;
        if ((k = meet(v, fi, u, end)) != kNoMeet) break;
        end = run_to(v, end, subseq_limit(fi, u));
      }
      resume_at = u + 1;
      resume_cand = k;
    }
    __syncthreads();
    p = resume_at;
    c = resume_cand;
    __syncthreads();
  }
}

/* ---- stage 3: placing the fields ---- */

/* Blocks begun and non-zero AC coefficients of each subsequence from its
 * true start (one more entry, zero, for the totals of exclusive sums); the
 * state after the last subsequence's last field. */
__global__ void count_fields(bits_view v, const frame_info *fip, uint32_t max_threads,
                             const c63_hs_state *start, uint32_t *blocks, uint32_t *acs,
                             c63_hs_state *frame_end)
{
  const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
  const frame_info fi = *fip;
  if (t > max_threads) return;
  if (t >= fi.n_threads) {
    blocks[t] = 0;
    acs[t] = 0;
    return;
  }
  const uint32_t limit = subseq_limit(fi, t);
  c63_hs_state s = start[t];
  uint32_t nb = 0, na = 0;
  while (s.field != C63_HS_BAD && s.pos < limit) {
    const uint8_t field = s.field;
    c63_hs_out o;
    step(v, &s, &o);
    if (s.field == C63_HS_BAD) break;
    nb += field == C63_HS_USE_MV;
    na += field == C63_HS_AC && o.value != 0;
  }
  blocks[t] = nb;
  acs[t] = na;
  if (t == fi.n_threads - 1) *frame_end = s;
}

/* Per block in decoding order, what its fields said. */
struct block_fields {
  uint8_t *use, *reuse;
  int8_t *mv_x, *mv_y;
  int16_t *dc_diff;
  uint32_t *n_ac;
  uint32_t *ac; /* the frame's non-zero AC entries, in decoding order */
};

/* Decode each subsequence again from its true start, each field into its
 * block (a block begun in an earlier subsequence goes on here), up to the
 * start of the block past the frame's last. */
__global__ void decode_fields(bits_view v, frame_info *fip, frame_shape sh,
                              const c63_hs_state *start, const uint32_t *block_base,
                              const uint32_t *ac_base, block_fields bf)
{
  const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
  const frame_info fi = *fip;
  if (t >= fi.n_threads) return;
  long b = (long)block_base[t] - 1; /* the block under way */
  if (b >= sh.n_blocks) return;
  uint32_t ac = ac_base[t];
  const uint32_t limit = subseq_limit(fi, t);
  c63_hs_state s = start[t];
  int bad = 0;
  while (s.field != C63_HS_BAD && s.pos < limit) {
    const c63_hs_state at = s;
    c63_hs_out o;
    step(v, &s, &o);
    if (s.field == C63_HS_BAD) break;
    if (at.field == C63_HS_USE_MV) {
      if (++b == sh.n_blocks) break; /* the rest is the flush byte's bits */
      if (at.k != b % kPhases) {     /* never on a chained parse */
        bad = 1;
        break;
      }
      bf.use[b] = (uint8_t)o.value;
      continue;
    }
    if (b < 0) { /* never on a chained parse: the frame begins at a block */
      bad = 1;
      break;
    }
    switch (o.field) {
    case C63_HS_REUSE:
      bf.reuse[b] = (uint8_t)o.value;
      break;
    case C63_HS_MV_X:
      bf.mv_x[b] = (int8_t)(uint8_t)(o.value & 0xff);
      break;
    case C63_HS_MV_Y:
      bf.mv_y[b] = (int8_t)(uint8_t)(o.value & 0xff);
      break;
    case C63_HS_DC:
      bf.dc_diff[b] = o.value;
      break;
    default:
      if (!o.value) break;
      if (ac >= sh.ac_cap) {
        bad = 1;
        break;
      }
      bf.ac[ac++] = entry_of(o.z, o.value);
      atomicAdd(&bf.n_ac[b], 1u);
    }
    if (bad) break;
  }
  if (bad) atomicOr(&fip->bad, 1u);
}

/* ---- stage 4: prediction ---- */

/* Block b of the decoding order: its plane, position and frame index. */
struct block_place {
  int c, bx, by;
  uint32_t idx, blk;
};

__device__ __forceinline__ block_place locate(const frame_shape &sh, uint32_t b)
{
  const uint32_t mcu = b / kPhases, k = b % kPhases;
  const int mx = (int)(mcu % (uint32_t)sh.mcus_w), my = (int)(mcu / (uint32_t)sh.mcus_w);
  block_place p;
  if (k < 4) {
    p.c = 0;
    p.bx = mx * 2 + (int)(k & 1);
    p.by = my * 2 + (int)(k >> 1);
  } else {
    p.c = (int)k - 3;
    p.bx = mx;
    p.by = my;
  }
  p.idx = (uint32_t)(p.by * sh.blocks_w[p.c] + p.bx);
  p.blk = (uint32_t)sh.plane_off[p.c] + p.idx;
  return p;
}

/* The decoding order of block (bx, by) within plane c. */
__device__ __forceinline__ long plane_order(const frame_shape &sh, int c, int bx, int by)
{
  if (c) return (long)by * sh.mcus_w + bx;
  return ((long)(by >> 1) * sh.mcus_w + (bx >> 1)) * 4 + (by & 1) * 2 + (bx & 1);
}

/* A vector source in the plane's raster order, packed: x, y, and whether
 * it is set here (not reused from the left). */
constexpr uint32_t kMvSet = 1u << 16;

struct last_set_op {
  __device__ __forceinline__ uint32_t operator()(uint32_t a, uint32_t b) const
  {
    return (b & kMvSet) ? b : a;
  }
};

/* DC differences in three 16-bit lanes, one a plane, added lane by lane
 * (the reference keeps DC values in int16_t: they wrap). */
struct lane_add_op {
  __device__ __forceinline__ uint64_t operator()(uint64_t a, uint64_t b) const
  {
    uint64_t r = 0;
    for (int c = 0; c < 3; c++)
      r |= (uint64_t)(uint16_t)((a >> (16 * c)) + (b >> (16 * c))) << (16 * c);
    return r;
  }
};

/* Per block: its DC difference in its plane's lane, and its vector source.
 * A reuse takes the vector of the block before it in the plane's raster
 * order as it stands then: zero if that block is decoded later. */
__global__ void prepare_blocks(frame_info *fip, frame_shape sh, block_fields bf, uint64_t *dc_lanes,
                               uint32_t *mv_src)
{
  const uint32_t b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= (uint32_t)sh.n_blocks) return;
  const block_place p = locate(sh, b);
  dc_lanes[b] = (uint64_t)(uint16_t)bf.dc_diff[b] << (16 * p.c);
  const int use = bf.use[b], reuse = use && bf.reuse[b];
  uint32_t src = (uint8_t)bf.mv_x[b] | (uint32_t)(uint8_t)bf.mv_y[b] << 8 | kMvSet;
  if (!use) src = kMvSet;
  if (reuse) {
    if (p.idx == 0) {
      atomicOr(&fip->bad, 1u); /* the reference reads before its array */
      src = kMvSet;
    } else {
      const int lx = p.bx ? p.bx - 1 : sh.blocks_w[p.c] - 1, ly = p.bx ? p.by : p.by - 1;
      src = plane_order(sh, p.c, lx, ly) < plane_order(sh, p.c, p.bx, p.by) ? 0 : kMvSet;
    }
  }
  mv_src[p.blk] = src;
}

/* Per block: its DC value and entries. */
__global__ void count_entries(frame_shape sh, const block_fields bf, const uint64_t *dc_sum,
                              int16_t *dc, uint32_t *n_entries)
{
  const uint32_t b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b > (uint32_t)sh.n_blocks) return;
  if (b == (uint32_t)sh.n_blocks) {
    n_entries[b] = 0; /* the exclusive sum's last entry is the total */
    return;
  }
  const block_place p = locate(sh, b);
  const int16_t v = (int16_t)(uint16_t)(dc_sum[b] >> (16 * p.c));
  dc[b] = v;
  n_entries[b] = (v != 0) + bf.n_ac[b];
}

/* ---- stage 5: the sparse frame ---- */

struct sparse_view {
  uint32_t *start, *entries;
  uint8_t *count;
  c63_mv *mvs;
};

/* Per block: its entries at their place (the DC, then the AC in index
 * order), its vector. The entries must fit as c63_entropy_decode demands:
 * room for 64 before each block. */
__global__ void write_blocks(frame_info *fip, frame_shape sh, const block_fields bf,
                             const int16_t *dc, const uint32_t *entry_base,
                             const uint32_t *ac_first, const uint32_t *mv_last, sparse_view out)
{
  const uint32_t b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= (uint32_t)sh.n_blocks) return;
  const block_place p = locate(sh, b);
  const uint32_t base = entry_base[b], n_ac = bf.n_ac[b];
  if (b == (uint32_t)sh.n_blocks - 1) fip->n_entries = entry_base[b + 1];
  const uint32_t m = mv_last[p.blk];
  const int use = bf.use[b]; /* the scan carries the source's vector, not its flag */
  const c63_mv mv = {(int8_t)(uint8_t)(m & 0xff), (int8_t)(uint8_t)(m >> 8 & 0xff), (uint8_t)use,
                     0};
  out.mvs[p.blk] = mv;
  if (use && !sh.keyframe &&
      !c63_mv_reads_inside(sh.pad_w[p.c], sh.pad_h[p.c], p.bx, p.by, mv.x, mv.y))
    atomicOr(&fip->bad, 1u);
  if ((uint64_t)base + 64 > sh.entries_cap || n_ac > 63 ||
      (uint64_t)ac_first[b] + n_ac > sh.ac_cap) {
    atomicOr(&fip->bad, 1u);
    out.count[p.blk] = 0;
    out.start[p.blk] = 0;
    return;
  }
  uint32_t *e = out.entries + base;
  if (dc[b]) *e++ = entry_of(0, dc[b]);
  for (uint32_t i = 0; i < n_ac; i++)
    *e++ = bf.ac[ac_first[b] + i];
  out.start[p.blk] = base;
  out.count[p.blk] = (uint8_t)(e - (out.entries + base));
}

/* The decoding must cover the frame's blocks: past the last block's end
 * (the next block's start), or ending right at it inside the data. */
__global__ void final_verdict(frame_info *fip, frame_shape sh, const uint32_t *block_base,
                              const c63_hs_state *frame_end)
{
  const uint32_t total = block_base[fip->n_threads];
  const c63_hs_state end = *frame_end;
  if (total < (uint32_t)sh.n_blocks ||
      (total == (uint32_t)sh.n_blocks && (end.field != C63_HS_USE_MV || end.pos > fip->total_bits)))
    fip->bad = 1;
}

/* The shape of a frame of geometry g (on the host). */
frame_shape shape_of(const c63_geometry *g, int keyframe, size_t entries_cap, size_t ac_cap)
{
  frame_shape sh;
  sh.n_blocks = (int)c63_frame_blocks(g);
  sh.mcus_w = g->mcus_w;
  sh.keyframe = keyframe;
  for (int c = 0; c < 3; c++) {
    sh.blocks_w[c] = g->blocks_w[c];
    sh.pad_w[c] = g->pad_w[c];
    sh.pad_h[c] = g->pad_h[c];
    sh.plane_off[c] = (int)c63_block_offset(g, c);
  }
  sh.entries_cap = (uint32_t)(entries_cap < UINT32_MAX ? entries_cap : UINT32_MAX);
  sh.ac_cap = (uint32_t)ac_cap;
  return sh;
}

} // namespace

#endif
