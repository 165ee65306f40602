/* The kernels and device functions of the GPU entropy decoder
 * (c63_cuda_huff_decode.cu, which launches them in order for a batch of
 * frames): included by that file alone, and compiled as host C++ by the
 * test that runs them on the CPU (tests/test_huff_kernels_host.cpp), which
 * stands in for the CUDA built-ins and CUB's block scan.
 *
 * A batch is frames of one geometry. Kernels with a thread per subsequence
 * (or per candidate) take blockIdx.y as the frame; kernels that scan a
 * frame run one CTA per frame (blockIdx.x), tile after tile with a running
 * prefix. No kernel reads another frame's data or buffers, so a corrupt
 * frame cannot change its neighbours' results.
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
#include "cuda/c63_cuda_huff.h"
#include "cuda/c63_cuda_policy.cuh"

using policy = c63_cuda_huff_policy;

namespace
{

constexpr uint32_t kPhases = C63_HS_PHASES;
constexpr uint8_t kNoMeet = 0xff;
constexpr uint32_t kNone = 0xffffffffu;

/* What the kernels learn of a frame as a whole; the batch's array of these
 * is the one copy back to the host. */
struct frame_info {
  uint32_t n_bytes, total_bits, n_threads;
  uint32_t unpaired_ff;             /* the data ends with an FF without its stuffing byte */
  uint32_t bad;                     /* something only the sequential decoder judges */
  uint32_t n_entries;               /* of the sparse frame */
  uint32_t total_blocks, total_acs; /* blocks begun, AC coefficients */
  c63_hs_state end;                 /* after the last subsequence's last field */
};

/* The batch's geometry. */
struct frame_shape {
  int n_blocks, mcus_w;
  int blocks_w[3], pad_w[3], pad_h[3], plane_off[3];
};

/* One frame of a batch: its data and where its parts of the stage's
 * buffers begin (in elements). Per-block arrays are at frame * stride of
 * the block count (plus one); per-subsequence arrays at sub_off (times six
 * for the candidates' and the maps'). */
struct batch_frame {
  const uint8_t *data;
  uint32_t size; /* 0: nothing to decode (the host hands such a frame on) */
  uint32_t bits_off;
  uint32_t sub_off;
  uint32_t ac_off, ac_cap;
  uint32_t entries_off, entries_cap;
  uint32_t keyframe;
};

/* A batch, by value in every launch (kernel parameters are captured at the
 * launch, so the host may plan the next batch at once). */
struct batch {
  frame_shape sh;
  uint32_t n;
  batch_frame f[C63_CUDA_HUFF_MAX_BATCH];
};

/* Per block in decoding order, what its fields said. ac_first[b]: the
 * frame's AC entries before block b (entry n_blocks: those of all). */
struct block_fields {
  uint8_t *use, *reuse;
  int8_t *mv_x, *mv_y;
  int16_t *dc_diff;
  uint32_t *ac_first;
  uint32_t *ac; /* the non-zero AC entries, in decoding order */
};

struct sparse_view {
  uint32_t *start, *entries;
  uint8_t *count;
  c63_mv *mvs;
};

/* The stage's device buffers. */
struct stage_buffers {
  const c63_huff_lut *luts;
  uint8_t *bits; /* unstuffed, 8 zero bytes after each frame's */
  frame_info *info;
  c63_hs_state *cand_end, *start;
  uint8_t *map;
  /* per map entry that meets no candidate: its detour (build_maps) */
  uint16_t *detour;
  c63_hs_state *detour_states; /* kDepth a map entry */
  uint32_t *block_base, *ac_base;
  block_fields bf;
  sparse_view out;
};

/* What a frame's per-block arrays are offset by. */
__device__ __forceinline__ size_t block_stride(const frame_shape &sh)
{
  return (size_t)sh.n_blocks + 1;
}

/* ---- reading the bits ---- */

/* The four tables in shared memory, for the kernels that decode: a lookup
 * is on every step's critical path. Copied in 16-byte words (global: the
 * stage's cudaMalloc'd copy). */
struct alignas(16) lut_tables {
  c63_huff_lut t[4];
};
static_assert(sizeof(lut_tables) % 16 == 0, "copied in 16-byte words");

/* The tables to decode with: the CTA's shared copy, loaded here (every
 * thread of the CTA must call it, before any returns). */
__device__ __forceinline__ const c63_huff_lut *stage_luts(const c63_huff_lut *global,
                                                          lut_tables *shared)
{
#ifdef __CUDA_ARCH__
  const uint4 *src = (const uint4 *)global;
  uint4 *dst = (uint4 *)shared;
  for (uint32_t i = threadIdx.x; i < sizeof(lut_tables) / 16; i += blockDim.x)
    dst[i] = __ldg(&src[i]);
  __syncthreads();
  return shared->t;
#else
  (void)shared;
  return global;
#endif
}

/* The four bytes at p (4-byte aligned) as a big-endian word, through the
 * read-only path. */
__device__ __forceinline__ uint32_t load_be32(const uint8_t *p)
{
#ifdef __CUDA_ARCH__
  return __byte_perm(__ldg((const unsigned int *)p), 0, 0x0123);
#else
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
#endif
}

/* c63_hs_peek from two aligned words: the frame's bits begin 8-byte
 * aligned and have 8 zero bytes after their end, and pos is inside them. */
__device__ __forceinline__ uint32_t peek(const uint8_t *bits, uint32_t pos)
{
  const uint8_t *p = bits + (pos >> 5) * 4;
  const uint64_t w = (uint64_t)load_be32(p) << 32 | load_be32(p + 4);
  return (uint32_t)((w << (pos & 31)) >> 32);
}

/* A frame's unstuffed bits and the tables to decode them with. */
struct bits_view {
  const c63_huff_lut *luts;
  const uint8_t *bits;
};

__device__ __forceinline__ void step(const bits_view &v, c63_hs_state *s, c63_hs_out *o)
{
  c63_hs_step(v.luts, peek(v.bits, s->pos), s, o);
}

__device__ __forceinline__ uint32_t subseq_limit(const frame_info &fi, uint32_t t)
{
  const uint64_t end = (uint64_t)(t + 1) * policy::kSubseqBits;
  return end < fi.total_bits ? (uint32_t)end : fi.total_bits;
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

/* The candidate whose end state (of six at ends) is `end`, or kNoMeet. Two
 * decoders in the same state decode the same from there on, so a decoding
 * that ends a subsequence in a candidate's end state has followed that
 * candidate since they met. */
__device__ __forceinline__ uint8_t matching_candidate(const c63_hs_state *ends, c63_hs_state end)
{
  for (uint32_t k = 0; k < kPhases; k++)
    if (c63_hs_equal(ends[k], end)) return (uint8_t)k;
  return kNoMeet;
}

/* c63_sparse_entry on the device. */
__device__ __forceinline__ uint32_t entry_of(int zigzag_index, int value)
{
  return (uint32_t)zigzag_index << 16 | (uint16_t)value;
}

/* ---- scans over a frame, one CTA ---- */

/* Exclusive scan of kItems values a thread (thread i holding the tile's
 * items i * kItems ..) with the running prefix `carry` of the tiles before,
 * which it then advances past this tile. identity: op(identity, x) == x. */
template <int kCta, int kItems, class T, class Op> struct tile_scan {
  using scan = cub::BlockScan<T, kCta>;
  using storage = typename scan::TempStorage;
  __device__ static void run(storage &temp, T (&v)[kItems], T &carry, Op op, T identity)
  {
    T out[kItems], aggregate;
    scan(temp).ExclusiveScan(v, out, identity, op, aggregate);
    __syncthreads(); /* temp is reused by the next scan */
    for (int j = 0; j < kItems; j++)
      v[j] = op(carry, out[j]);
    carry = op(carry, aggregate);
  }
};

struct sum_op {
  template <class T> __device__ __forceinline__ T operator()(T a, T b) const
  {
    return a + b;
  }
};

/* ---- stage 1: unstuffing, a CTA a frame ---- */

/* What a run of input bytes does to the unstuffing, from either state on
 * entry (0: keep the next byte; 1: drop it, the stuffing after a kept FF):
 * bits 0..23 the bytes kept from state 0, 24..47 from state 1; bit 48 the
 * state after from 0, bit 49 from 1. Composed in byte order. */
constexpr uint64_t kStuffIdentity = (uint64_t)2 << 48; /* keeps none; 0 -> 0, 1 -> 1 */

__device__ __forceinline__ uint32_t stuff_state(uint64_t f, uint32_t s)
{
  return (uint32_t)(f >> (48 + s)) & 1;
}

__device__ __forceinline__ uint32_t stuff_kept(uint64_t f, uint32_t s)
{
  return (uint32_t)(f >> (24 * s)) & 0xffffff;
}

struct stuff_op {
  __device__ __forceinline__ uint64_t operator()(uint64_t a, uint64_t b) const
  {
    uint64_t r = 0;
    for (uint32_t s = 0; s < 2; s++) {
      const uint32_t mid = stuff_state(a, s);
      r |= (uint64_t)(stuff_kept(a, s) + stuff_kept(b, mid)) << (24 * s);
      r |= (uint64_t)stuff_state(b, mid) << (48 + s);
    }
    return r;
  }
};

/* Bytes [from, to) of data from state s: the state after, and the bytes
 * kept (written at out, if not NULL). As the C model: a kept FF drops the
 * byte after it, whatever that byte is. */
__device__ __forceinline__ uint32_t unstuff_run(const uint8_t *data, uint32_t from, uint32_t to,
                                                uint32_t s, uint32_t *kept, uint8_t *out)
{
  uint32_t k = 0;
  for (uint32_t i = from; i < to; i++) {
    if (s) {
      s = 0;
      continue;
    }
    const uint8_t byte = data[i];
    if (out) out[k] = byte;
    k++;
    s = byte == 0xff;
  }
  *kept = k;
  return s;
}

/* Each frame's bytes without their stuffing, 8 zero bytes after them, and
 * its frame_info reset. kItems bytes a thread, a tile of kCta * kItems at
 * a time; the state and the bytes kept are carried across tiles. */
template <int kCta, int kItems>
__global__ void __launch_bounds__(kCta) unstuff_frames(batch b, stage_buffers B)
{
  static_assert(kCta >= 8 && (uint64_t)kCta * kItems < (1u << 24), "a tile's count fits");
  using scanner = tile_scan<kCta, 1, uint64_t, stuff_op>;
  __shared__ typename scanner::storage temp;
  const batch_frame &fr = b.f[blockIdx.x];
  uint8_t *out = B.bits + fr.bits_off;
  uint32_t state = 0, kept = 0; /* after the tiles before */
  for (uint32_t tile = 0; tile < fr.size; tile += kCta * kItems) {
    const uint64_t first = (uint64_t)tile + threadIdx.x * (uint64_t)kItems;
    const uint32_t from = first < fr.size ? (uint32_t)first : fr.size;
    const uint32_t to = fr.size - from < (uint32_t)kItems ? fr.size : from + kItems;
    uint32_t k0, k1, k;
    const uint32_t s0 = unstuff_run(fr.data, from, to, 0, &k0, nullptr);
    const uint32_t s1 = unstuff_run(fr.data, from, to, 1, &k1, nullptr);
    uint64_t f[1] = {(uint64_t)k0 | (uint64_t)k1 << 24 | (uint64_t)s0 << 48 | (uint64_t)s1 << 49};
    uint64_t tile_fn = kStuffIdentity; /* becomes the whole tile's */
    scanner::run(temp, f, tile_fn, stuff_op(), kStuffIdentity);
    /* f[0]: the tile's runs before this thread's */
    unstuff_run(fr.data, from, to, stuff_state(f[0], state), &k,
                out + kept + stuff_kept(f[0], state));
    kept += stuff_kept(tile_fn, state);
    state = stuff_state(tile_fn, state);
  }
  if (threadIdx.x < 8) out[kept + threadIdx.x] = 0;
  if (threadIdx.x == 0) {
    frame_info fi = {};
    fi.n_bytes = kept;
    fi.total_bits = 8 * kept;
    fi.n_threads = (fi.total_bits + policy::kSubseqBits - 1) / policy::kSubseqBits;
    if (fi.n_threads < 1) fi.n_threads = 1;
    fi.unpaired_ff = state;
    B.info[blockIdx.x] = fi;
  }
}

/* ---- stage 2: synchronisation ---- */

/* Candidate k of subsequence t: from its first bit at a block start of MCU
 * position k to the first field boundary at or past its end. */
__global__ void __launch_bounds__(policy::kDecodeThreads) run_candidates(batch b, stage_buffers B)
{
  __shared__ lut_tables lut;
  const uint32_t f = blockIdx.y;
  const frame_info fi = B.info[f];
  if (blockIdx.x * blockDim.x >= fi.n_threads * kPhases) return; /* the whole CTA */
  const bits_view v = {stage_luts(B.luts, &lut), B.bits + b.f[f].bits_off};
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= fi.n_threads * kPhases) return;
  const uint32_t t = i / kPhases, k = i % kPhases;
  B.cand_end[(size_t)b.f[f].sub_off * kPhases + i] =
      run_to(v, c63_hs_block_start(t * policy::kSubseqBits, (int)k), subseq_limit(fi, t));
}

/* Where a decoding that ends subsequence t in no candidate's end state
 * goes on: through the next subsequences, each start stored in turn at
 * states[0], [1], .. (the true starts of t + 1, t + 2, .. should it be on
 * the true parse), until one ends in a candidate's end state (rejoin: that
 * candidate, after n subsequences), max_n starts are stored, or the frame
 * ends (rejoin: kNoMeet). */
struct detour_walk {
  uint32_t n;
  uint8_t rejoin;
};

__device__ detour_walk walk_detour(const bits_view &v, const frame_info &fi,
                                   const c63_hs_state *cand_end, uint32_t t, c63_hs_state end,
                                   c63_hs_state *states, uint32_t max_n)
{
  detour_walk w = {0, kNoMeet};
  for (uint32_t u = t; w.rejoin == kNoMeet && w.n < max_n && u + 1 < fi.n_threads;) {
    states[w.n++] = end;
    end = run_to(v, end, subseq_limit(fi, ++u));
    w.rejoin = matching_candidate(cand_end + u * kPhases, end);
  }
  return w;
}

/* A detour as build_maps stores it: n in the high byte, the candidate it
 * rejoins in the low. */
__device__ __forceinline__ uint16_t pack_detour(detour_walk w)
{
  return (uint16_t)(w.n << 8 | w.rejoin);
}

/* Per subsequence t >= 1 and candidate j of t - 1: the candidate of t whose
 * end state is the end of the decoding from j's end (kNoMeet: none).
 * Subsequence 0's map is unused (the frame begins at its candidate 0).
 * Where none is, the decoding's detour (walk_detour) of up to kDepth
 * subsequences, for chain to copy should j be on the true parse: the
 * serial walks of the fallbacks run here, all at once. */
template <int kDepth>
__global__ void __launch_bounds__(policy::kDecodeThreads) build_maps(batch b, stage_buffers B)
{
  static_assert(kDepth >= 1 && kDepth < 256, "a detour's length fits its byte");
  __shared__ lut_tables lut;
  const uint32_t f = blockIdx.y;
  const frame_info fi = B.info[f];
  if (blockIdx.x * blockDim.x >= fi.n_threads * kPhases) return;
  const bits_view v = {stage_luts(B.luts, &lut), B.bits + b.f[f].bits_off};
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= fi.n_threads * kPhases) return;
  const uint32_t t = i / kPhases;
  const size_t entry = (size_t)b.f[f].sub_off * kPhases + i;
  const c63_hs_state *cand_end = B.cand_end + (size_t)b.f[f].sub_off * kPhases;
  if (t == 0) {
    B.map[entry] = 0;
    return;
  }
  const c63_hs_state end = run_to(v, cand_end[i - kPhases], subseq_limit(fi, t));
  const uint8_t k = matching_candidate(cand_end + t * kPhases, end);
  B.map[entry] = k;
  if (k == kNoMeet)
    B.detour[entry] =
        pack_detour(walk_detour(v, fi, cand_end, t, end, B.detour_states + entry * kDepth, kDepth));
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
constexpr uint64_t kMapIdentity = 0x050403020100ull;

__device__ __forceinline__ uint64_t load_map(const uint8_t *map, uint32_t t)
{
  uint64_t m = 0;
  for (uint32_t j = 0; j < kPhases; j++)
    m |= (uint64_t)map[t * kPhases + j] << (8 * j);
  return m;
}

/* Subsequence t's map, or the identity past the frame's last. */
__device__ __forceinline__ uint64_t tile_map(const uint8_t *map, const frame_info &fi, uint32_t t)
{
  return t < fi.n_threads ? load_map(map, t) : kMapIdentity;
}

/* Byte x of a packed map. */
__device__ __forceinline__ uint8_t apply_map(uint64_t m, uint32_t x)
{
  return (uint8_t)(m >> (8 * x));
}

/* The CTA's shared state while it chains a frame's subsequences. */
struct chain_shared {
  uint32_t first_fail, resume_at;
  uint32_t entry, n; /* the map entry whose detour is copied, its length */
  uint8_t resume_cand;
};

/* The detour of the map entry (u, j), from the predecessor's candidate j
 * where the true decoding fails to meet one of u's. */
struct frame_detours {
  const uint16_t *packed;
  const c63_hs_state *states; /* kDepth an entry */
};

/* The chain broken at cs.first_fail (u), in the tile from `tile` on where
 * tile_cand holds the candidates the scan gave, c the one before the tile:
 * u's start is known (its predecessor's end is candidate j's), its end is
 * not. The detour of the entry (u, j) gives the true starts after u, up to
 * the subsequence where it rejoined a candidate; past a detour that did
 * not, thread 0 walks on from its last state, writing the starts past
 * the detour's. Sets cs.resume_at and cs.resume_cand before the barrier,
 * never after it: every thread may load cs's fields early. The CTA's
 * threads must all call it. */
template <int kCta, int kDepth>
__device__ void resolve_fallback(const bits_view &v, const frame_info &fi,
                                 const c63_hs_state *cand_end, const frame_detours &d,
                                 c63_hs_state *start, const uint8_t *tile_cand, chain_shared &cs,
                                 uint32_t tile, uint8_t c)
{
  if (threadIdx.x == 0) {
    const uint32_t u = cs.first_fail, at = u - tile;
    const uint32_t j = at ? tile_cand[at - 1] : c;
    const uint32_t entry = u * kPhases + j;
    const uint16_t packed = d.packed[entry];
    uint32_t n = packed >> 8;
    if (n > (uint32_t)kDepth) n = kDepth;
    if (n > fi.n_threads - 1 - u) n = fi.n_threads - 1 - u;
    uint32_t resume_at = u + n + 1;
    uint8_t resume_cand = (uint8_t)packed;
    if (resume_cand == kNoMeet && resume_at < fi.n_threads) {
      /* not rejoined within kDepth: on from the start of u + n */
      const uint32_t w = u + n;
      const c63_hs_state *states = d.states + (size_t)entry * kDepth;
      const c63_hs_state end = run_to(v, n ? states[n - 1] : start[u], subseq_limit(fi, w));
      const detour_walk on = walk_detour(v, fi, cand_end, w, end, start + w + 1, kNone);
      resume_at = w + on.n + 1;
      resume_cand = on.rejoin;
    }
    cs.entry = entry;
    cs.n = n;
    cs.resume_at = resume_at;
    cs.resume_cand = resume_cand;
  }
  __syncthreads();
  const uint32_t u = cs.first_fail, n = cs.n;
  const c63_hs_state *states = d.states + (size_t)cs.entry * kDepth;
  for (uint32_t i = threadIdx.x; i < n; i += kCta)
    start[u + 1 + i] = states[i];
  __syncthreads();
}

/* Each subsequence's true start. A tile at a time, the composition of the
 * maps from the chain's last known candidate on (a block scan) says which
 * candidate's end is each subsequence's true end, and so the next one's
 * start. At the first subsequence u where none is, the decoding from u's
 * true start (candidate j's end) is the detour build_maps walked for the
 * entry (u, j): its states are the true starts of the subsequences it
 * went through, copied, and the scan goes on after the subsequence where
 * it rejoined a candidate (resolve_fallback). */
template <int kCta, int kDepth>
__device__ void chain(const bits_view &v, const frame_info &fi, const c63_hs_state *cand_end,
                      const uint8_t *map, const frame_detours &d, c63_hs_state *start,
                      uint8_t *tile_cand, chain_shared &cs,
                      typename cub::BlockScan<uint64_t, kCta>::TempStorage &temp)
{
  using scan = cub::BlockScan<uint64_t, kCta>;
  if (threadIdx.x == 0) start[0] = c63_hs_block_start(0, 0);
  uint32_t p = 1; /* the first subsequence whose true end is not known */
  uint8_t c = 0;  /* the candidate whose end is subsequence p - 1's true end */
  /* The tile's subsequences, from `tile` on, and this thread's map: kept
   * while the chain resumes inside the tile (the maps before p count as
   * the identity). */
  uint32_t tile = p;
  uint64_t m = tile_map(map, fi, tile + threadIdx.x);
  while (p < fi.n_threads) {
    const uint32_t t = tile + threadIdx.x;
    const bool chained = t >= p && t < fi.n_threads;
    uint64_t prefix, total;
    scan(temp).InclusiveScan(t >= p ? m : kMapIdentity, prefix, compose_op(), total);
    const uint8_t ct = apply_map(prefix, c);
    tile_cand[threadIdx.x] = ct;
    if (threadIdx.x == 0) cs.first_fail = kNone;
    __syncthreads();
    if (chained && ct == kNoMeet) atomicMin(&cs.first_fail, t);
    const uint8_t prev = threadIdx.x == 0 ? c : tile_cand[threadIdx.x - 1];
    if (chained && prev != kNoMeet) start[t] = cand_end[(t - 1) * kPhases + prev];
    __syncthreads();
    if (cs.first_fail == kNone) {
      c = tile_cand[kCta - 1];
      p = tile + kCta;
    } else {
      resolve_fallback<kCta, kDepth>(v, fi, cand_end, d, start, tile_cand, cs, tile, c);
      p = cs.resume_at;
      c = cs.resume_cand;
    }
    __syncthreads();
    if (p - tile >= (uint32_t)kCta) {
      tile = p;
      m = tile_map(map, fi, tile + threadIdx.x);
    }
  }
  __syncthreads();
}

/* Blocks begun and non-zero AC coefficients of subsequence t from its
 * true start, packed: blocks in the low half, AC in the high. */
__device__ uint64_t count_fields(const bits_view &v, const frame_info &fi, c63_hs_state s,
                                 uint32_t t, c63_hs_state *end)
{
  const uint32_t limit = subseq_limit(fi, t);
  uint32_t nb = 0, na = 0;
  while (s.field != C63_HS_BAD && s.pos < limit) {
    const uint8_t field = s.field;
    c63_hs_out o;
    step(v, &s, &o);
    if (s.field == C63_HS_BAD) break;
    nb += field == C63_HS_USE_MV;
    na += field == C63_HS_AC && o.value != 0;
  }
  *end = s;
  return (uint64_t)na << 32 | nb;
}

/* A CTA a frame: the subsequences' true starts (chain), then their blocks
 * and AC coefficients counted from there, placed by a sum scan
 * (block_base, ac_base), with the frame's totals and end state. */
template <int kCta, int kDepth>
__global__ void __launch_bounds__(kCta) chain_and_count(batch b, stage_buffers B)
{
  using scan = cub::BlockScan<uint64_t, kCta>;
  __shared__ typename scan::TempStorage temp;
  __shared__ lut_tables lut;
  __shared__ uint8_t tile_cand[kCta];
  __shared__ chain_shared cs;
  const uint32_t f = blockIdx.x;
  const batch_frame &fr = b.f[f];
  const bits_view v = {stage_luts(B.luts, &lut), B.bits + fr.bits_off};
  const frame_info fi = B.info[f];
  const size_t sub = fr.sub_off;
  c63_hs_state *start = B.start + sub;
  const frame_detours d = {B.detour + sub * kPhases, B.detour_states + sub * kPhases * kDepth};
  chain<kCta, kDepth>(v, fi, B.cand_end + sub * kPhases, B.map + sub * kPhases, d, start, tile_cand,
                      cs, temp);
  uint64_t carry = 0;
  for (uint32_t tile = 0; tile < fi.n_threads; tile += kCta) {
    const uint32_t t = tile + threadIdx.x;
    uint64_t n[1] = {0};
    c63_hs_state end = {};
    if (t < fi.n_threads) n[0] = count_fields(v, fi, start[t], t, &end);
    if (t == fi.n_threads - 1) B.info[f].end = end;
    tile_scan<kCta, 1, uint64_t, sum_op>::run(temp, n, carry, sum_op(), 0);
    if (t < fi.n_threads) {
      B.block_base[sub + t] = (uint32_t)n[0];
      B.ac_base[sub + t] = (uint32_t)(n[0] >> 32);
    }
  }
  if (threadIdx.x == 0) {
    B.info[f].total_blocks = (uint32_t)carry;
    B.info[f].total_acs = (uint32_t)(carry >> 32);
    /* unless a thread begins the block past the last (decode_fields) */
    B.bf.ac_first[f * block_stride(b.sh) + (size_t)b.sh.n_blocks] = (uint32_t)(carry >> 32);
  }
}

/* ---- stage 3: the fields at their places ---- */

/* Decode each subsequence again from its true start, each field into its
 * block (a block begun in an earlier subsequence goes on here), up to the
 * start of the block past the frame's last. */
__global__ void __launch_bounds__(policy::kDecodeThreads) decode_fields(batch b, stage_buffers B)
{
  __shared__ lut_tables lut;
  const uint32_t f = blockIdx.y;
  const frame_info fi = B.info[f];
  if (blockIdx.x * blockDim.x >= fi.n_threads) return;
  const batch_frame &fr = b.f[f];
  const bits_view v = {stage_luts(B.luts, &lut), B.bits + fr.bits_off};
  const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= fi.n_threads) return;
  const long n_blocks = b.sh.n_blocks;
  long blk = (long)B.block_base[fr.sub_off + t] - 1; /* the block under way */
  if (blk >= n_blocks) return;
  const size_t base = f * block_stride(b.sh);
  const block_fields bf = B.bf;
  uint32_t ac = B.ac_base[fr.sub_off + t];
  const uint32_t limit = subseq_limit(fi, t);
  c63_hs_state s = B.start[fr.sub_off + t];
  int bad = 0;
  while (s.field != C63_HS_BAD && s.pos < limit) {
    const c63_hs_state at = s;
    c63_hs_out o;
    step(v, &s, &o);
    if (s.field == C63_HS_BAD) break;
    if (at.field == C63_HS_USE_MV) {
      bf.ac_first[base + (size_t)(blk + 1)] = ac;
      if (++blk == n_blocks) break; /* the rest is the flush byte's bits */
      if (at.k != blk % kPhases) {  /* never on a chained parse */
        bad = 1;
        break;
      }
      bf.use[base + blk] = (uint8_t)o.value;
      continue;
    }
    if (blk < 0) { /* never on a chained parse: the frame begins at a block */
      bad = 1;
      break;
    }
    switch (o.field) {
    case C63_HS_REUSE:
      bf.reuse[base + blk] = (uint8_t)o.value;
      break;
    case C63_HS_MV_X:
      bf.mv_x[base + blk] = (int8_t)(uint8_t)(o.value & 0xff);
      break;
    case C63_HS_MV_Y:
      bf.mv_y[base + blk] = (int8_t)(uint8_t)(o.value & 0xff);
      break;
    case C63_HS_DC:
      bf.dc_diff[base + blk] = o.value;
      break;
    default:
      if (!o.value) break;
      if (ac >= fr.ac_cap) {
        bad = 1;
        break;
      }
      bf.ac[fr.ac_off + ac++] = entry_of(o.z, o.value);
    }
    if (bad) break;
  }
  if (bad) atomicOr(&B.info[f].bad, 1u);
}

/* ---- stage 4: the sparse frame, a CTA a frame ---- */

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

/* The decoding order of block (bx, by) within plane c, and within the
 * frame. */
__device__ __forceinline__ long plane_order(const frame_shape &sh, int c, int bx, int by)
{
  if (c) return (long)by * sh.mcus_w + bx;
  return ((long)(by >> 1) * sh.mcus_w + (bx >> 1)) * 4 + (by & 1) * 2 + (bx & 1);
}

__device__ __forceinline__ uint32_t decode_order(const frame_shape &sh, int c, int bx, int by)
{
  const uint32_t mcu =
      c ? (uint32_t)(by * sh.mcus_w + bx) : (uint32_t)((by >> 1) * sh.mcus_w + (bx >> 1));
  return mcu * kPhases + (c ? 3 + (uint32_t)c : (uint32_t)((by & 1) * 2 + (bx & 1)));
}

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

/* A vector source in the plane's raster order, packed: x, y, and whether
 * it is set here (not reused from the left). Unset sources are 0, which is
 * then the scan's identity. */
constexpr uint32_t kMvSet = 1u << 16;

struct last_set_op {
  __device__ __forceinline__ uint32_t operator()(uint32_t a, uint32_t b) const
  {
    return (b & kMvSet) ? b : a;
  }
};

/* The blocks' entries (the DC by a scan of the differences, then the AC in
 * index order) placed by a sum scan, in decoding order. The entries must
 * fit as c63_entropy_decode demands: room for 64 before each block. */
template <int kCta, int kItems>
__device__ void place_entries(const batch &b, const stage_buffers &B, uint32_t f, uint32_t *bad,
                              typename cub::BlockScan<uint64_t, kCta>::TempStorage &temp)
{
  const frame_shape &sh = b.sh;
  const batch_frame &fr = b.f[f];
  const size_t base = f * block_stride(sh), out_base = f * (size_t)sh.n_blocks;
  const uint32_t nb = (uint32_t)sh.n_blocks;
  uint64_t dc_carry = 0, n_carry = 0;
  for (uint32_t tile = 0; tile < nb; tile += kCta * kItems) {
    const uint32_t first = tile + threadIdx.x * kItems;
    uint64_t lanes[kItems], count[kItems];
    for (int j = 0; j < kItems; j++) {
      const uint32_t blk = first + j;
      lanes[j] =
          blk < nb ? (uint64_t)(uint16_t)B.bf.dc_diff[base + blk] << (16 * locate(sh, blk).c) : 0;
    }
    tile_scan<kCta, kItems, uint64_t, lane_add_op>::run(temp, lanes, dc_carry, lane_add_op(), 0);
    int16_t dc[kItems];
    uint32_t n_ac[kItems];
    for (int j = 0; j < kItems; j++) {
      const uint32_t blk = first + j;
      count[j] = 0;
      if (blk >= nb) continue;
      const int c = locate(sh, blk).c;
      /* lanes[j] holds the blocks before; add this one's */
      dc[j] = (int16_t)(uint16_t)((lanes[j] >> (16 * c)) + (uint16_t)B.bf.dc_diff[base + blk]);
      n_ac[j] = B.bf.ac_first[base + blk + 1] - B.bf.ac_first[base + blk];
      count[j] = (dc[j] != 0) + (uint64_t)n_ac[j];
    }
    tile_scan<kCta, kItems, uint64_t, sum_op>::run(temp, count, n_carry, sum_op(), 0);
    for (int j = 0; j < kItems; j++) {
      const uint32_t blk = first + j;
      if (blk >= nb) continue;
      const block_place p = locate(sh, blk);
      const uint64_t at = count[j];
      const uint32_t ac0 = B.bf.ac_first[base + blk];
      if (at + 64 > fr.entries_cap || n_ac[j] > 63 || (uint64_t)ac0 + n_ac[j] > fr.ac_cap) {
        *bad = 1;
        B.out.count[out_base + p.blk] = 0;
        B.out.start[out_base + p.blk] = 0;
        continue;
      }
      uint32_t *e0 = B.out.entries + fr.entries_off + at, *e = e0;
      if (dc[j]) *e++ = entry_of(0, dc[j]);
      for (uint32_t i = 0; i < n_ac[j]; i++)
        *e++ = B.bf.ac[fr.ac_off + ac0 + i];
      B.out.start[out_base + p.blk] = (uint32_t)at;
      B.out.count[out_base + p.blk] = (uint8_t)(e - e0);
    }
  }
  if (threadIdx.x == 0) B.info[f].n_entries = (uint32_t)n_carry;
}

/* The blocks' vectors, in each plane's raster order: a reuse takes the
 * vector of the block before it in that order as it stands then (zero if
 * that block is decoded later); a scan carries the last vector set. */
template <int kCta, int kItems>
__device__ void place_vectors(const batch &b, const stage_buffers &B, uint32_t f, uint32_t *bad,
                              typename cub::BlockScan<uint32_t, kCta>::TempStorage &temp)
{
  const frame_shape &sh = b.sh;
  const size_t base = f * block_stride(sh), out_base = f * (size_t)sh.n_blocks;
  const uint32_t nb = (uint32_t)sh.n_blocks;
  uint32_t carry = 0;
  for (uint32_t tile = 0; tile < nb; tile += kCta * kItems) {
    const uint32_t first = tile + threadIdx.x * kItems;
    uint32_t src[kItems], order[kItems] = {};
    for (int j = 0; j < kItems; j++) {
      const uint32_t blk = first + j;
      src[j] = 0;
      if (blk >= nb) continue;
      const int c = blk >= (uint32_t)sh.plane_off[2] ? 2 : blk >= (uint32_t)sh.plane_off[1];
      const uint32_t idx = blk - (uint32_t)sh.plane_off[c];
      const int bx = (int)(idx % (uint32_t)sh.blocks_w[c]), by = (int)(idx / sh.blocks_w[c]);
      const uint32_t o = order[j] = decode_order(sh, c, bx, by);
      const int use = B.bf.use[base + o], reuse = use && B.bf.reuse[base + o];
      src[j] = kMvSet;
      if (use && !reuse)
        src[j] |= (uint8_t)B.bf.mv_x[base + o] | (uint32_t)(uint8_t)B.bf.mv_y[base + o] << 8;
      if (reuse) {
        if (idx == 0) {
          *bad = 1; /* the reference reads before its array */
        } else {
          const int lx = bx ? bx - 1 : sh.blocks_w[c] - 1, ly = bx ? by : by - 1;
          src[j] = plane_order(sh, c, lx, ly) < plane_order(sh, c, bx, by) ? 0 : kMvSet;
        }
      }
    }
    uint32_t last[kItems];
    for (int j = 0; j < kItems; j++)
      last[j] = src[j];
    tile_scan<kCta, kItems, uint32_t, last_set_op>::run(temp, last, carry, last_set_op(), 0);
    for (int j = 0; j < kItems; j++) {
      const uint32_t blk = first + j;
      if (blk >= nb) continue;
      const uint32_t m = (src[j] & kMvSet) ? src[j] : last[j];
      const int use = B.bf.use[base + order[j]];
      const c63_mv mv = {(int8_t)(uint8_t)(m & 0xff), (int8_t)(uint8_t)(m >> 8 & 0xff),
                         (uint8_t)use, 0};
      B.out.mvs[out_base + blk] = mv;
      const int c = blk >= (uint32_t)sh.plane_off[2] ? 2 : blk >= (uint32_t)sh.plane_off[1];
      const uint32_t idx = blk - (uint32_t)sh.plane_off[c];
      if (use && !b.f[f].keyframe &&
          !c63_mv_reads_inside(sh.pad_w[c], sh.pad_h[c], (int)(idx % (uint32_t)sh.blocks_w[c]),
                               (int)(idx / sh.blocks_w[c]), mv.x, mv.y))
        *bad = 1;
    }
  }
}

/* Two CTAs a frame, apart as their scans are: the entries and the verdict
 * (blockIdx.y 0), the vectors (1); either may find the frame bad. The
 * decoding must cover the frame's blocks: past the last block's end (the
 * next block's start), or ending right at it inside the data. */
template <int kCta, int kItems>
__global__ void __launch_bounds__(kCta) assemble_frames(batch b, stage_buffers B)
{
  __shared__ union {
    typename cub::BlockScan<uint64_t, kCta>::TempStorage wide;
    typename cub::BlockScan<uint32_t, kCta>::TempStorage narrow;
  } temp;
  __shared__ uint32_t any_bad;
  const uint32_t f = blockIdx.x;
  if (threadIdx.x == 0) any_bad = 0;
  __syncthreads();
  uint32_t bad = 0;
  if (blockIdx.y == 0)
    place_entries<kCta, kItems>(b, B, f, &bad, temp.wide);
  else
    place_vectors<kCta, kItems>(b, B, f, &bad, temp.narrow);
  if (bad) atomicOr(&any_bad, 1u);
  __syncthreads();
  if (threadIdx.x) return;
  const frame_info fi = B.info[f];
  const uint32_t nb = (uint32_t)b.sh.n_blocks;
  if (blockIdx.y == 0 &&
      (fi.total_blocks < nb ||
       (fi.total_blocks == nb && (fi.end.field != C63_HS_USE_MV || fi.end.pos > fi.total_bits))))
    any_bad = 1;
  if (any_bad) atomicOr(&B.info[f].bad, 1u);
}

/* ---- the host's plan of a batch ---- */

/* The shape of frames of geometry g. */
frame_shape shape_of(const c63_geometry *g)
{
  frame_shape sh;
  sh.n_blocks = (int)c63_frame_blocks(g);
  sh.mcus_w = g->mcus_w;
  for (int c = 0; c < 3; c++) {
    sh.blocks_w[c] = g->blocks_w[c];
    sh.pad_w[c] = g->pad_w[c];
    sh.pad_h[c] = g->pad_h[c];
    sh.plane_off[c] = (int)c63_block_offset(g, c);
  }
  return sh;
}

/* The sizes of a batch's buffers (elements). */
struct batch_sizes {
  size_t bits, subseqs, ac, entries, blocks;
};

/* Whether the stage can take a frame of `size` bytes of geometry g: bit
 * positions must fit 32 bits, as in the C model. */
inline int frame_fits(size_t size, const c63_geometry *g)
{
  return size > 0 && size <= UINT32_MAX / 8 - 8 && c63_frame_blocks(g) < INT32_MAX / 64;
}

/* Lay out n frames (n <= C63_CUDA_HUFF_MAX_BATCH) of geometry g in the
 * stage's buffers. A frame the stage cannot take, or that would overflow
 * the 32-bit offsets, gets size 0 and handed[i] = 1: the host hands it to
 * the CPU. */
inline void plan_batch(const c63_cuda_huff_frame *frames, int n, const c63_geometry *g, batch *bt,
                       batch_sizes *sz, int *handed)
{
  bt->sh = shape_of(g);
  bt->n = (uint32_t)n;
  const size_t nb = (size_t)bt->sh.n_blocks;
  size_t bits = 0, subs = 0, ac = 0, entries = 0;
  for (int i = 0; i < n; i++) {
    batch_frame &fr = bt->f[i];
    size_t size = frames[i].size;
    handed[i] = !frame_fits(size, g);
    if (handed[i]) size = 0;
    /* subsequences: at least one; a non-zero AC coefficient takes at
     * least three bits; no more entries than 64 a block */
    const size_t n_sub = (8 * size + policy::kSubseqBits - 1) / policy::kSubseqBits + 1;
    const size_t ac_cap = 8 * size / 3 + 64;
    const size_t entries_cap = frames[i].entries_cap < 64 * nb ? frames[i].entries_cap : 64 * nb;
    const size_t bits_next = bits + ((size + 8 + 7) & ~(size_t)7);
    if (bits_next > UINT32_MAX || subs + n_sub > UINT32_MAX / kPhases || ac + ac_cap > UINT32_MAX ||
        entries + entries_cap > UINT32_MAX) {
      handed[i] = 1;
      size = 0;
    }
    fr.data = size ? frames[i].data : nullptr;
    fr.size = (uint32_t)size;
    fr.keyframe = frames[i].keyframe != 0;
    fr.bits_off = (uint32_t)bits;
    fr.sub_off = (uint32_t)subs;
    fr.ac_off = (uint32_t)ac;
    fr.ac_cap = size ? (uint32_t)ac_cap : 0;
    fr.entries_off = (uint32_t)entries;
    fr.entries_cap = size ? (uint32_t)entries_cap : 0;
    if (!size) {
      /* room for the stage to run over an empty frame */
      bits += 8;
      subs += 2;
      continue;
    }
    bits = bits_next;
    subs += n_sub;
    ac += ac_cap;
    entries += entries_cap;
  }
  sz->bits = bits;
  sz->subseqs = subs;
  sz->ac = ac;
  sz->entries = entries;
  sz->blocks = (size_t)n * (nb + 1);
}

} // namespace

#endif
