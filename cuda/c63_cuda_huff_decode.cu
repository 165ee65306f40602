/* Entropy decoding on the GPU (c63_cuda_huff.h), the port of the C model
 * c63/huff_sync_model.c with the same per-field step (c63/huff_sync.h), as
 * short kernels in five stages:
 *   1. unstuff: a max-scan finds each run of FF bytes, the byte after each
 *      odd FF of a run is dropped, a sum-scan places the kept bytes;
 *   2. synchronise: six candidate decoders per subsequence (one per MCU
 *      position); per subsequence a map from its predecessor's six
 *      candidates to the one of its own that the true decoding meets; a
 *      composition scan over the maps chains them from the frame's start,
 *      and where it breaks one thread decodes on until a candidate is met;
 *   3. place: fields and coefficients counted per subsequence from its true
 *      start, sum-scans, then decoded into their places;
 *   4. predict: DC prediction (a scan adding the differences per plane)
 *      and vector reuse (a scan carrying the last vector set);
 *   5. the sparse frame, with the verdict the C model gives.
 * Every write is bounded by its buffer, whatever the data: a frame whose
 * decoding would go past one is handed to the CPU.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <cub/block/block_scan.cuh>
#include <cub/device/device_scan.cuh>

#include <new>
#include <stdlib.h>
#include <string.h>

#include "c63/c63.h"
#include "c63/huff_sync.h"
#include "c63/huff_sync_model.h"
#include "cuda/c63_cuda_huff.h"
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
 * the scan goes on from there. */
__global__ void __launch_bounds__(policy::kChainThreads)
    chain_starts(bits_view v, const frame_info *fip, const c63_hs_state *cand_end,
                 const uint8_t *map, c63_hs_state *start)
{
  using scan = cub::BlockScan<uint64_t, policy::kChainThreads>;
  __shared__ typename scan::TempStorage temp;
  __shared__ uint8_t tile_cand[policy::kChainThreads];
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
      c = tile_cand[policy::kChainThreads - 1];
      p += policy::kChainThreads;
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

} // namespace

/* ---- host side ---- */

/* A device array that only grows. */
template <typename T> struct dev_array {
  T *p = nullptr;
  size_t cap = 0;
  cudaError_t reserve(size_t n)
  {
    if (n <= cap) return cudaSuccess;
    cudaFree(p);
    p = nullptr;
    cap = 0;
    const size_t want = n + n / 4 + 64;
    cudaError_t e = cudaMalloc(&p, want * sizeof(T));
    if (e == cudaSuccess) cap = want;
    return e;
  }
  void release()
  {
    cudaFree(p);
    p = nullptr;
    cap = 0;
  }
};

struct c63_cuda_huff {
  c63_huff_lut *luts = nullptr;
  frame_info *info = nullptr;      /* device */
  frame_info *info_host = nullptr; /* page-locked */
  dev_array<uint8_t> input, bits;
  dev_array<int32_t> mark, last_non_ff;
  dev_array<uint32_t> keep, dst;
  dev_array<c63_hs_state> cand_end, start, frame_end;
  dev_array<uint8_t> map;
  dev_array<uint32_t> blocks, block_base, acs, ac_base;
  /* per block */
  dev_array<uint8_t> use, reuse, count;
  dev_array<int8_t> mv_x, mv_y;
  dev_array<int16_t> dc_diff, dc;
  dev_array<uint32_t> n_ac, ac_first, n_entries, entry_base, ac, mv_src, mv_last, start_out,
      entries;
  dev_array<uint64_t> dc_lanes, dc_sum;
  dev_array<c63_mv> mvs;
  dev_array<uint8_t> temp; /* CUB's */
};

namespace
{

int status_of(cudaError_t e)
{
  return e == cudaSuccess                 ? C63_OK
         : e == cudaErrorMemoryAllocation ? C63_ERR_NOMEM
                                          : C63_ERR_BACKEND;
}

unsigned grid_for(size_t n)
{
  return (unsigned)((n + policy::kThreads - 1) / policy::kThreads);
}

/* CUB's scans with the workspace's temporary storage. */
template <typename In, typename Out, typename Op>
cudaError_t inclusive_scan(c63_cuda_huff *h, In in, Out out, Op op, size_t n, cudaStream_t s)
{
  size_t bytes = 0;
  cudaError_t e = cub::DeviceScan::InclusiveScan(nullptr, bytes, in, out, op, (int)n, s);
  if (e == cudaSuccess) e = h->temp.reserve(bytes);
  if (e == cudaSuccess)
    e = cub::DeviceScan::InclusiveScan(h->temp.p, bytes, in, out, op, (int)n, s);
  return e;
}

cudaError_t exclusive_sum(c63_cuda_huff *h, const uint32_t *in, uint32_t *out, size_t n,
                          cudaStream_t s)
{
  size_t bytes = 0;
  cudaError_t e = cub::DeviceScan::ExclusiveSum(nullptr, bytes, in, out, (int)n, s);
  if (e == cudaSuccess) e = h->temp.reserve(bytes);
  if (e == cudaSuccess) e = cub::DeviceScan::ExclusiveSum(h->temp.p, bytes, in, out, (int)n, s);
  return e;
}

#define TRY(x)                                                                                     \
  do {                                                                                             \
    const cudaError_t e_ = (x);                                                                    \
    if (e_ != cudaSuccess) return e_;                                                              \
  } while (0)

cudaError_t reserve_all(c63_cuda_huff *h, size_t size, size_t max_threads, size_t n_blocks,
                        size_t entries_cap, size_t ac_cap)
{
  TRY(h->bits.reserve(size + 8));
  TRY(h->mark.reserve(size));
  TRY(h->last_non_ff.reserve(size));
  TRY(h->keep.reserve(size + 1));
  TRY(h->dst.reserve(size + 1));
  TRY(h->cand_end.reserve(max_threads * kPhases));
  TRY(h->map.reserve(max_threads * kPhases));
  TRY(h->start.reserve(max_threads));
  TRY(h->frame_end.reserve(1));
  TRY(h->blocks.reserve(max_threads + 1));
  TRY(h->block_base.reserve(max_threads + 1));
  TRY(h->acs.reserve(max_threads + 1));
  TRY(h->ac_base.reserve(max_threads + 1));
  TRY(h->use.reserve(n_blocks));
  TRY(h->reuse.reserve(n_blocks));
  TRY(h->count.reserve(n_blocks));
  TRY(h->mv_x.reserve(n_blocks));
  TRY(h->mv_y.reserve(n_blocks));
  TRY(h->dc_diff.reserve(n_blocks));
  TRY(h->dc.reserve(n_blocks));
  TRY(h->n_ac.reserve(n_blocks));
  TRY(h->ac_first.reserve(n_blocks));
  TRY(h->n_entries.reserve(n_blocks + 1));
  TRY(h->entry_base.reserve(n_blocks + 1));
  TRY(h->mv_src.reserve(n_blocks));
  TRY(h->mv_last.reserve(n_blocks));
  TRY(h->start_out.reserve(n_blocks));
  TRY(h->dc_lanes.reserve(n_blocks));
  TRY(h->dc_sum.reserve(n_blocks));
  TRY(h->mvs.reserve(n_blocks));
  TRY(h->ac.reserve(ac_cap));
  TRY(h->entries.reserve(entries_cap));
  return cudaSuccess;
}

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

/* Stage 1: the unstuffed bits, zero-padded, and the frame's info. */
cudaError_t unstuff(c63_cuda_huff *h, const uint8_t *data, uint32_t n, cudaStream_t s)
{
  mark_non_ff<<<grid_for(n), policy::kThreads, 0, s>>>(data, n, h->mark.p);
  TRY(cudaGetLastError());
  TRY(inclusive_scan(h, h->mark.p, h->last_non_ff.p, max_op(), n, s));
  flag_kept<<<grid_for(n + 1), policy::kThreads, 0, s>>>(data, n, h->last_non_ff.p, h->keep.p);
  TRY(cudaGetLastError());
  TRY(exclusive_sum(h, h->keep.p, h->dst.p, n + 1, s));
  TRY(cudaMemsetAsync(h->bits.p, 0, n + 8, s));
  scatter_kept<<<grid_for(n), policy::kThreads, 0, s>>>(data, n, h->keep.p, h->dst.p, h->bits.p);
  frame_begin<<<1, 1, 0, s>>>(data, n, h->last_non_ff.p, h->dst.p, h->info);
  return cudaGetLastError();
}

/* Stage 2: each subsequence's true start. */
cudaError_t synchronise(c63_cuda_huff *h, bits_view v, uint32_t max_threads, cudaStream_t s)
{
  const size_t n_cand = (size_t)max_threads * kPhases;
  run_candidates<<<grid_for(n_cand), policy::kThreads, 0, s>>>(v, h->info, max_threads,
                                                               h->cand_end.p);
  build_maps<<<grid_for(n_cand), policy::kThreads, 0, s>>>(v, h->info, max_threads, h->cand_end.p,
                                                           h->map.p);
  chain_starts<<<1, policy::kChainThreads, 0, s>>>(v, h->info, h->cand_end.p, h->map.p, h->start.p);
  return cudaGetLastError();
}

block_fields fields_of(c63_cuda_huff *h)
{
  return {h->use.p, h->reuse.p, h->mv_x.p, h->mv_y.p, h->dc_diff.p, h->n_ac.p, h->ac.p};
}

/* Stage 3: the fields at their places. */
cudaError_t place(c63_cuda_huff *h, bits_view v, const frame_shape &sh, uint32_t max_threads,
                  cudaStream_t s)
{
  const size_t nb = (size_t)sh.n_blocks;
  count_fields<<<grid_for(max_threads + 1), policy::kThreads, 0, s>>>(
      v, h->info, max_threads, h->start.p, h->blocks.p, h->acs.p, h->frame_end.p);
  TRY(exclusive_sum(h, h->blocks.p, h->block_base.p, max_threads + 1, s));
  TRY(exclusive_sum(h, h->acs.p, h->ac_base.p, max_threads + 1, s));
  TRY(cudaMemsetAsync(h->use.p, 0, nb, s));
  TRY(cudaMemsetAsync(h->reuse.p, 0, nb, s));
  TRY(cudaMemsetAsync(h->mv_x.p, 0, nb, s));
  TRY(cudaMemsetAsync(h->mv_y.p, 0, nb, s));
  TRY(cudaMemsetAsync(h->dc_diff.p, 0, nb * sizeof(int16_t), s));
  TRY(cudaMemsetAsync(h->n_ac.p, 0, nb * sizeof(uint32_t), s));
  decode_fields<<<grid_for(max_threads), policy::kThreads, 0, s>>>(
      v, h->info, sh, h->start.p, h->block_base.p, h->ac_base.p, fields_of(h));
  return cudaGetLastError();
}

/* Stages 4 and 5: predictions, then the sparse frame. */
cudaError_t assemble(c63_cuda_huff *h, const frame_shape &sh, cudaStream_t s)
{
  const size_t nb = (size_t)sh.n_blocks;
  prepare_blocks<<<grid_for(nb), policy::kThreads, 0, s>>>(h->info, sh, fields_of(h), h->dc_lanes.p,
                                                           h->mv_src.p);
  TRY(cudaGetLastError());
  TRY(inclusive_scan(h, h->dc_lanes.p, h->dc_sum.p, lane_add_op(), nb, s));
  TRY(inclusive_scan(h, h->mv_src.p, h->mv_last.p, last_set_op(), nb, s));
  count_entries<<<grid_for(nb + 1), policy::kThreads, 0, s>>>(sh, fields_of(h), h->dc_sum.p,
                                                              h->dc.p, h->n_entries.p);
  TRY(cudaGetLastError());
  TRY(exclusive_sum(h, h->n_entries.p, h->entry_base.p, nb + 1, s));
  TRY(exclusive_sum(h, h->n_ac.p, h->ac_first.p, nb, s));
  const sparse_view out = {h->start_out.p, h->entries.p, h->count.p, h->mvs.p};
  write_blocks<<<grid_for(nb), policy::kThreads, 0, s>>>(
      h->info, sh, fields_of(h), h->dc.p, h->entry_base.p, h->ac_first.p, h->mv_last.p, out);
  final_verdict<<<1, 1, 0, s>>>(h->info, sh, h->block_base.p, h->frame_end.p);
  return cudaGetLastError();
}

} // namespace

extern "C" int c63_cuda_huff_new(c63_cuda_huff **out)
{
  *out = nullptr;
  c63_cuda_huff *h = new (std::nothrow) c63_cuda_huff();
  if (!h) return C63_ERR_NOMEM;
  cudaError_t e = cudaMalloc(&h->luts, 4 * sizeof(c63_huff_lut));
  if (e == cudaSuccess) e = cudaMalloc(&h->info, sizeof(frame_info));
  if (e == cudaSuccess) e = cudaMallocHost(&h->info_host, sizeof(frame_info));
  if (e == cudaSuccess)
    e = cudaMemcpy(h->luts, c63_huff_luts(), 4 * sizeof(c63_huff_lut), cudaMemcpyHostToDevice);
  if (e != cudaSuccess) {
    c63_cuda_huff_free(h);
    return status_of(e);
  }
  *out = h;
  return C63_OK;
}

extern "C" void c63_cuda_huff_free(c63_cuda_huff *h)
{
  if (!h) return;
  cudaFree(h->luts);
  cudaFree(h->info);
  cudaFreeHost(h->info_host);
  h->input.release();
  h->bits.release();
  h->mark.release();
  h->last_non_ff.release();
  h->keep.release();
  h->dst.release();
  h->cand_end.release();
  h->start.release();
  h->frame_end.release();
  h->map.release();
  h->blocks.release();
  h->block_base.release();
  h->acs.release();
  h->ac_base.release();
  h->use.release();
  h->reuse.release();
  h->count.release();
  h->mv_x.release();
  h->mv_y.release();
  h->dc_diff.release();
  h->dc.release();
  h->n_ac.release();
  h->ac_first.release();
  h->n_entries.release();
  h->entry_base.release();
  h->ac.release();
  h->mv_src.release();
  h->mv_last.release();
  h->start_out.release();
  h->entries.release();
  h->dc_lanes.release();
  h->dc_sum.release();
  h->mvs.release();
  h->temp.release();
  delete h;
}

extern "C" int c63_cuda_huff_decode(c63_cuda_huff *h, const uint8_t *data, size_t size,
                                    const c63_geometry *g, int keyframe, size_t entries_cap,
                                    void *stream, c63_cuda_huff_out *out)
{
  cudaStream_t s = (cudaStream_t)stream;
  const size_t n_blocks = c63_frame_blocks(g);
  /* as the C model: sizes whose bit positions need more than 32 bits */
  if (size == 0 || size > UINT32_MAX / 8 - 8 || n_blocks >= INT32_MAX / 2)
    return C63_HS_HAND_TO_CPU;
  const uint32_t n = (uint32_t)size;
  const uint32_t max_threads = (8 * n + policy::kSubseqBits - 1) / policy::kSubseqBits;
  /* a non-zero AC coefficient takes at least three bits */
  const size_t ac_cap = (size_t)8 * n / 3 + 64;
  cudaError_t e = reserve_all(h, size, max_threads, n_blocks, entries_cap, ac_cap);
  if (e != cudaSuccess) return status_of(e);
  const frame_shape sh = shape_of(g, keyframe, entries_cap, ac_cap);
  const bits_view v = {h->luts, h->bits.p};
  if ((e = unstuff(h, data, n, s)) != cudaSuccess || (e = synchronise(h, v, max_threads, s)) ||
      (e = place(h, v, sh, max_threads, s)) || (e = assemble(h, sh, s)) ||
      (e = cudaMemcpyAsync(h->info_host, h->info, sizeof(frame_info), cudaMemcpyDeviceToHost, s)) ||
      (e = cudaStreamSynchronize(s)))
    return status_of(e);
  const frame_info *fi = h->info_host;
  if (fi->bad || fi->unpaired_ff) return C63_HS_HAND_TO_CPU;
  *out = {h->start_out.p, h->count.p, h->mvs.p, h->entries.p, fi->n_entries, n_blocks};
  return C63_OK;
}

extern "C" const uint8_t *c63_cuda_huff_upload(c63_cuda_huff *h, const uint8_t *data, size_t size)
{
  if (h->input.reserve(size + 1) != cudaSuccess ||
      cudaMemcpy(h->input.p, data, size, cudaMemcpyHostToDevice) != cudaSuccess)
    return nullptr;
  return h->input.p;
}

extern "C" int c63_cuda_huff_download(c63_cuda_huff *h, const c63_cuda_huff_out *out,
                                      c63_sparse_frame *f)
{
  (void)h;
  if (f->blocks_cap < out->n_blocks || f->entries_cap < out->n_entries) return C63_ERR_INVALID_ARG;
  cudaError_t e =
      cudaMemcpy(f->start, out->start, out->n_blocks * sizeof(uint32_t), cudaMemcpyDeviceToHost);
  if (e == cudaSuccess) e = cudaMemcpy(f->count, out->count, out->n_blocks, cudaMemcpyDeviceToHost);
  if (e == cudaSuccess)
    e = cudaMemcpy(f->mvs, out->mvs, out->n_blocks * sizeof(c63_mv), cudaMemcpyDeviceToHost);
  if (e == cudaSuccess && out->n_entries)
    e = cudaMemcpy(f->entries, out->entries, out->n_entries * sizeof(uint32_t),
                   cudaMemcpyDeviceToHost);
  f->n_entries = out->n_entries;
  return status_of(e);
}
