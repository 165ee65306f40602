/* Entropy coding on the GPU (docs/format.md section 4), byte for byte the
 * same as the CPU coder (c63/entropy_encode.c) and its stuffing and flush
 * rule (c63_write_stuffed in c63/bitwriter.c), so only the coded frame
 * crosses PCIe.
 *
 * Bits are independent of their position, so the frame is coded
 * data-parallel, four threads per 8x8 block (each 16 zig-zag positions),
 * blocks in coding (MCU) order, threads in that order through the grid:
 *  1.-3. code_bits, in one pass: each lane counts its bits (the DC
 *     difference and left-vector reuse read the neighbours' coefficients
 *     and vectors, which are all known), an exclusive scan of the counts
 *     over the whole grid gives its bit offset (a CUB block scan, and
 *     across CTAs CUB's decoupled look-back: each CTA publishes its
 *     total, then its prefix once the CTAs before it have theirs, so one
 *     kernel does what a count kernel, a device-wide scan and a second
 *     coding pass did), and it writes its bits at that offset into 32-bit
 *     words (MSB first), OR-ing into the words it shares with its
 *     neighbours;
 *  4. stuffing in chunks of words: count_ff counts FF bytes per chunk (and
 *     works out the flush byte); stuff scans the counts of the chunks before
 *     its own and within its own (CUB block scan), scatters the bytes with a
 *     00 after each FF, appends the flush byte, and clears the words it read,
 *     so the word buffer is all zero again for the next frame without a
 *     memset of its worst-case size.
 * copy_out then copies exactly the payload into mapped pinned host memory.
 *
 * The lengths of the scans are known on the host only as worst cases, so
 * count_ff and stuff are launched for the worst case and their chunks past
 * the frame's data return at once.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <cub/agent/single_pass_scan_operators.cuh>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c63/bit_width.h"
#include "c63/c63.h"
#include "cuda/c63_cuda_internal.h"
#include "cuda/c63_cuda_policy.cuh"

extern "C" {
#include "c63/entropy.h"
#include "c63/tables.h"
}

namespace
{

/* The coder's tuning (c63_cuda_policy.cuh). */
using policy = c63_cuda_entropy_policy;
constexpr int kBlockThreads = policy::kBlockThreads;
constexpr int kStuffThreads = policy::kStuffThreads;
constexpr int kWordsPerThread = policy::kWordsPerThread;
constexpr int kChunkWords = kStuffThreads * kWordsPerThread;
constexpr int kCopyCtas = policy::kCopyCtas;

/* Huffman codes as (length << 16 | code), per table (c63_huff_enc order). */
struct huff_codes {
  uint32_t lc[4][256];
};

/* Where coded block j (MCU order: 4 luma blocks, U, V per MCU) lives. */
struct coded_block {
  int c, bx, by, idx; /* plane, block position, global block index */
  int prev;           /* coded index of the block before it in its plane, or -1 */
};

__device__ __forceinline__ coded_block locate(const c63_cuda_entropy_geometry &G, int j)
{
  coded_block b;
  const int mcu = j / 6, k = j - mcu * 6;
  const int my = mcu / G.mcus_w, mx = mcu - my * G.mcus_w;
  if (k < 4) {
    b.c = 0;
    b.bx = mx * 2 + (k & 1);
    b.by = my * 2 + (k >> 1);
    /* the DC prediction runs through the frame in coding order */
    b.prev = k ? j - 1 : (mcu ? j - 3 : -1);
  } else {
    b.c = k - 3;
    b.bx = mx;
    b.by = my;
    b.prev = mcu ? j - 6 : -1;
  }
  b.idx = G.blk_off[b.c] + b.by * G.blocks_w[b.c] + b.bx;
  return b;
}

/* A sink that only counts. */
struct bit_counter {
  uint32_t n = 0;
  __device__ __forceinline__ void put(uint32_t, int len)
  {
    n += (uint32_t)len;
  }
};

/* A sink that packs MSB first into zeroed words, starting at a bit offset.
 * The words at both ends may be shared with the neighbouring blocks, so
 * every finished word is OR-ed in (a reduction the L2 does without a return
 * trip). */
struct bit_packer {
  uint32_t *words;
  uint32_t widx, fill, cur;
  __device__ bit_packer(uint32_t *w, uint32_t pos)
      : words(w), widx(pos >> 5), fill(pos & 31), cur(0)
  {
  }
  __device__ __forceinline__ void put(uint32_t v, int len)
  {
    const uint32_t room = 32 - fill;
    if ((uint32_t)len < room) {
      cur |= v << (room - len);
      fill += len;
      return;
    }
    const uint32_t rest = len - room;
    cur |= rest ? v >> rest : v;
    atomicOr(&words[widx++], cur);
    fill = rest;
    cur = rest ? v << (32 - rest) : 0;
  }
  __device__ __forceinline__ void finish()
  {
    if (fill) atomicOr(&words[widx], cur);
  }
};

/* The code of a symbol without value bits (ZRL, EOB). The tables are read
 * through the read-only path: 4 KiB that stay in L1. */
template <typename Sink>
__device__ __forceinline__ void put_code(Sink &s, const uint32_t *lc, int sym)
{
  const uint32_t e = __ldg(&lc[sym]);
  s.put(e & 0xffff, (int)(e >> 16));
}

/* Size code, then the low `size` bits of v (v - 1 when negative), as one
 * code of at most 16 + 11 bits. */
__device__ __forceinline__ uint32_t value_code(const uint32_t *lc, int sym, int size, int v,
                                               int *len)
{
  const uint32_t bits = (uint32_t)(v < 0 ? v - 1 : v) & ((1u << size) - 1);
  const uint32_t e = __ldg(&lc[sym]);
  *len = (int)(e >> 16) + size;
  return ((e & 0xffff) << size) | bits;
}

template <typename Sink>
__device__ __forceinline__ void put_value(Sink &s, const uint32_t *lc, int sym, int size, int v)
{
  int len;
  const uint32_t code = value_code(lc, sym, size, v, &len);
  s.put(code, len);
}

/* A block is coded by a group of kLanes threads, each taking kPerLane
 * consecutive zig-zag positions: lane 0 the block's head (vector flags,
 * vector, DC) and AC 1..kPerLane-1, lane l AC kPerLane*l onwards. A run of
 * zeros before an AC coefficient ends at the previous non-zero one, which
 * the whole group knows from the block's non-zero mask, so each lane codes
 * its coefficients on its own; the lane holding the last non-zero AC (lane
 * 0 when there is none) adds the EOB. Together the lanes write exactly
 * put_block's bits (c63/entropy_encode.c), in lane order
 * (c63_cuda_entropy_policy says why four lanes). */
constexpr int kLanes = policy::kLanes;
constexpr int kPerLane = 64 / kLanes;
constexpr int kVecs = kPerLane / 8; /* 16-byte words of coefficients a lane */

struct lane_data {
  coded_block b;
  uint4 v[kVecs]; /* this lane's coefficients */
  uint64_t nz;    /* the block's non-zero AC coefficients (bit 0 clear) */
  bool active;
};

/* Coefficient k of a lane (k may be known only at run time: selects, so
 * that the words stay in registers). */
__device__ __forceinline__ int lane_coeff(const lane_data &d, int k)
{
  uint4 v = d.v[0];
#pragma unroll
  for (int i = 1; i < kVecs; i++)
    if (k >> 3 == i) v = d.v[i];
  k &= 7;
  const uint32_t w = k < 4 ? (k < 2 ? v.x : v.y) : (k < 6 ? v.z : v.w);
  return (int16_t)(k & 1 ? w >> 16 : w & 0xffff);
}

/* Load a lane's coefficients and share the block's non-zero mask. Every
 * lane of the warp calls it (inactive ones with zeros), for the shuffles. */
__device__ __forceinline__ lane_data load_lane(const c63_cuda_entropy_geometry &G,
                                               const int16_t *coeffs, int j, int lane)
{
  lane_data d;
  d.active = j < G.blocks;
  d.b.prev = -1;
#pragma unroll
  for (int i = 0; i < kVecs; i++)
    d.v[i] = make_uint4(0, 0, 0, 0);
  if (d.active) {
    d.b = locate(G, j);
    const uint4 *src = reinterpret_cast<const uint4 *>(coeffs + (size_t)d.b.idx * 64);
#pragma unroll
    for (int i = 0; i < kVecs; i++)
      d.v[i] = src[lane * kVecs + i];
  }
  uint32_t m = 0;
#pragma unroll
  for (int k = 0; k < kPerLane; k++)
    m |= (uint32_t)(lane_coeff(d, k) != 0) << k;
  uint64_t nz = (uint64_t)m << (kPerLane * lane);
#pragma unroll
  for (int o = 1; o < kLanes; o <<= 1)
    nz |= __shfl_xor_sync(0xffffffffu, nz, o);
  d.nz = nz & ~(uint64_t)1;
  return d;
}

/* The DC of the block coded before this one in its plane (0 for a plane's
 * first), which the reference subtracts, for lane 0, which codes the head
 * (other lanes get 0). When that block is in the same warp its lane 0 has
 * it; else it comes from memory. Every lane of the warp calls it, for the
 * shuffle. */
__device__ __forceinline__ int previous_dc(const c63_cuda_entropy_geometry &G,
                                           const int16_t *coeffs, const lane_data &d, int j,
                                           int lane)
{
  const int first = j - (int)(threadIdx.x & 31) / kLanes; /* the warp's first block */
  const int prev = d.b.prev;                              /* -1 for inactive lanes */
  const bool here = prev >= first;
  const int dc = __shfl_sync(0xffffffffu, lane_coeff(d, 0), here ? (prev - first) * kLanes : 0);
  if (here) return dc;
  return prev < 0 || lane ? 0 : coeffs[(size_t)locate(G, prev).idx * 64];
}

/* A block's head, the bits before its AC coefficients, as up to four codes
 * (empty ones of length 0): the vector flags, the vector's x and y, and
 * the DC difference. Worked out once, for both passes. */
struct block_head {
  uint32_t code[4];
  int len[4];
};

__device__ __forceinline__ block_head make_head(const huff_codes &H, const c63_mv *mvs,
                                                const lane_data &d, int prev_dc)
{
  const coded_block &b = d.b;
  const int chroma = b.c != 0;
  block_head h = {{0, 0, 0, 0}, {1, 0, 0, 0}};
  const c63_mv mv = mvs[b.idx];
  h.code[0] = mv.use_mv;
  if (mv.use_mv) {
    bool reuse = false;
    if (b.bx) {
      const c63_mv left = mvs[b.idx - 1];
      reuse = left.use_mv && left.x == mv.x && left.y == mv.y;
    }
    h.code[0] = 2 | reuse;
    h.len[0] = 2;
    if (!reuse) {
      const uint32_t *mvt = H.lc[C63_HUFF_MV];
      const int sx = c63_bit_width(mv.x), sy = c63_bit_width(mv.y);
      h.code[1] = value_code(mvt, sx, sx, mv.x, &h.len[1]);
      h.code[2] = value_code(mvt, sy, sy, mv.y, &h.len[2]);
    }
  }
  /* The reference keeps the DC difference in an int16_t. */
  const int dc = (int16_t)(lane_coeff(d, 0) - prev_dc);
  const int sdc = c63_bit_width(dc);
  h.code[3] = value_code(H.lc[chroma ? C63_HUFF_DC1 : C63_HUFF_DC0], sdc, sdc, dc, &h.len[3]);
  return h;
}

template <typename Sink> __device__ __forceinline__ void put_head(Sink &s, const block_head &h)
{
#pragma unroll
  for (int i = 0; i < 4; i++)
    if (h.len[i]) s.put(h.code[i], h.len[i]);
}

/* A lane's AC coefficients, with the EOB where it falls to this lane. */
template <typename Sink>
__device__ void code_ac(Sink &s, const huff_codes &H, const lane_data &d, int lane)
{
  const uint32_t *act = H.lc[d.b.c != 0 ? C63_HUFF_AC1 : C63_HUFF_AC0];
  uint32_t mine = (uint32_t)(d.nz >> (kPerLane * lane)) & (uint32_t)((1ull << kPerLane) - 1);
  while (mine) {
    const int k = __ffs(mine) - 1, i = kPerLane * lane + k;
    const uint64_t before = d.nz & ((1ull << i) - 1);
    int run = i - 1 - (before ? 63 - __clzll((long long)before) : 0);
    for (; run >= 16; run -= 16)
      put_code(s, act, 0xf0); /* ZRL */
    const int ac = lane_coeff(d, k), size = c63_bit_width(ac);
    put_value(s, act, run << 4 | size, size, ac);
    mine &= mine - 1;
  }
  const int last = d.nz ? 63 - __clzll((long long)d.nz) : 0;
  if (last < 63 && last / kPerLane == lane) put_code(s, act, 0x00); /* EOB */
}

/* The scan of the lanes' bit counts across CTAs (decoupled look-back). */
using tile_state = cub::ScanTileState<uint32_t>;
struct add_bits {
  __device__ __forceinline__ uint32_t operator()(uint32_t a, uint32_t b) const
  {
    return a + b;
  }
};
using tile_prefix = cub::TilePrefixCallbackOp<uint32_t, add_bits, tile_state>;
using block_scan = cub::BlockScan<uint32_t, kBlockThreads>;

/* Every CTA's status "not yet known", before each frame. */
__global__ void init_tiles(tile_state tiles, int n)
{
  tiles.InitializeStatus(n);
}

/* Steps 1-3: a CTA is a tile of the look-back, its index its blockIdx (as
 * in CUB's own scans: CTAs start in that order, so every CTA one waits for
 * has started). The thread holding the frame's last lane writes the
 * total. */
__global__ void __launch_bounds__(kBlockThreads)
    code_bits(const huff_codes *__restrict__ H, c63_cuda_entropy_geometry G,
              const int16_t *__restrict__ coeffs, const c63_mv *__restrict__ mvs, tile_state tiles,
              uint32_t *__restrict__ words, uint32_t *__restrict__ total_bits)
{
  __shared__ struct {
    typename block_scan::TempStorage scan;
    typename tile_prefix::TempStorage prefix;
  } tmp;
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  const int j = t / kLanes, lane = t % kLanes;
  const lane_data d = load_lane(G, coeffs, j, lane);
  const int prev_dc = previous_dc(G, coeffs, d, j, lane);
  block_head head = {{0, 0, 0, 0}, {0, 0, 0, 0}};
  if (d.active && lane == 0) head = make_head(*H, mvs, d, prev_dc);
  bit_counter n;
  put_head(n, head);
  if (d.active) code_ac(n, *H, d, lane);
  uint32_t before;
  if (blockIdx.x == 0) {
    uint32_t aggregate;
    block_scan(tmp.scan).ExclusiveSum(n.n, before, aggregate);
    if (threadIdx.x == 0) tiles.SetInclusive(0, aggregate);
  } else {
    tile_prefix prefix(tiles, tmp.prefix, add_bits(), blockIdx.x);
    block_scan(tmp.scan).ExclusiveScan(n.n, before, add_bits(), prefix);
  }
  if (!d.active) return;
  if (t == G.blocks * kLanes - 1) *total_bits = before + n.n;
  bit_packer s(words, before);
  put_head(s, head);
  code_ac(s, *H, d, lane);
  s.finish();
}

__device__ __forceinline__ uint32_t word_byte(uint32_t w, int k)
{
  return (w >> (24 - 8 * k)) & 0xff;
}

/* The frame's words as bytes: a thread's kWordsPerThread words, and how many
 * of their bytes are FF among the first nbytes of the frame. */
struct thread_words {
  uint32_t w[kWordsPerThread];
  uint32_t first_word;
  int ff;
};

__device__ __forceinline__ void load_words(thread_words &t, const uint32_t *words, uint32_t chunk,
                                           uint32_t nwords, uint32_t nbytes)
{
  t.first_word = chunk * kChunkWords + threadIdx.x * kWordsPerThread;
  t.ff = 0;
#pragma unroll
  for (int i = 0; i < kWordsPerThread; i++) {
    const uint32_t wi = t.first_word + i;
    t.w[i] = wi < nwords ? words[wi] : 0;
#pragma unroll
    for (int k = 0; k < 4; k++)
      t.ff += wi * 4 + k < nbytes && word_byte(t.w[i], k) == 0xff;
  }
}

/* The end-of-frame byte, or 0x100 when none is written. The reference's
 * register holds the last 32 bits written; only when it is non-zero does it
 * write the pending 0..7 bits, left-aligned: the partial byte as it lies in
 * the words, zero-padded (bits past the end are zero in the words). */
__device__ uint32_t flush_byte(const uint32_t *words, uint32_t total_bits)
{
  const uint32_t s = total_bits >= 32 ? total_bits - 32 : 0;
  const uint64_t x = (uint64_t)words[s >> 5] << 32 | words[(s >> 5) + 1];
  const uint32_t reg = (uint32_t)(x >> (32 - (s & 31)));
  if (!reg) return 0x100;
  const uint32_t nbytes = total_bits >> 3;
  return (total_bits & 7) ? word_byte(words[nbytes >> 2], nbytes & 3) : 0;
}

__global__ void count_ff(const uint32_t *words, const uint32_t *total_bits, uint32_t *chunk_ff,
                         uint32_t *tail_flush)
{
  const uint32_t total = *total_bits;
  const uint32_t nbytes = total >> 3, nwords = (total + 31) >> 5;
  if (blockIdx.x == 0 && threadIdx.x == 0) *tail_flush = flush_byte(words, total);
  if (blockIdx.x * (uint32_t)kChunkWords >= nwords) return;
  thread_words t;
  load_words(t, words, blockIdx.x, nwords, nbytes);
  using reduce = cub::BlockReduce<int, kStuffThreads>;
  __shared__ typename reduce::TempStorage tmp;
  const int sum = reduce(tmp).Sum(t.ff);
  if (threadIdx.x == 0) chunk_ff[blockIdx.x] = (uint32_t)sum;
}

__global__ void stuff(uint32_t *words, const uint32_t *total_bits, const uint32_t *chunk_ff,
                      const uint32_t *tail_flush, uint8_t *out, uint32_t *out_size)
{
  const uint32_t total = *total_bits;
  const uint32_t nbytes = total >> 3, nwords = (total + 31) >> 5;
  const uint32_t chunks = (nwords + kChunkWords - 1) / kChunkWords;
  const uint32_t chunk = blockIdx.x;
  if (chunk >= (chunks ? chunks : 1)) return;

  /* FF bytes of the chunks before this one */
  using reduce = cub::BlockReduce<uint32_t, kStuffThreads>;
  using scan = cub::BlockScan<int, kStuffThreads>;
  __shared__ union {
    typename reduce::TempStorage r;
    typename scan::TempStorage s;
  } tmp;
  uint32_t before = 0;
  for (uint32_t c = threadIdx.x; c < chunk; c += kStuffThreads)
    before += chunk_ff[c];
  __shared__ uint32_t chunk_base;
  const uint32_t sum = reduce(tmp.r).Sum(before);
  if (threadIdx.x == 0) chunk_base = sum;
  __syncthreads();

  thread_words t;
  load_words(t, words, chunk, nwords, nbytes);
  int ff_before, ff_chunk;
  scan(tmp.s).ExclusiveSum(t.ff, ff_before, ff_chunk);

  /* Stuff into shared memory first, then write the chunk out with
   * consecutive threads on consecutive bytes: byte stores straight from
   * each thread's own run would touch a sector of L2 per byte. */
  __shared__ uint8_t staged[2 * kChunkWords * 4];
  const uint32_t chunk_byte0 = chunk * (uint32_t)kChunkWords * 4;
  uint8_t *dst = staged + (t.first_word * 4 - chunk_byte0) + ff_before;
#pragma unroll
  for (int i = 0; i < kWordsPerThread; i++) {
    const uint32_t wi = t.first_word + i;
    if (wi >= nwords) break;
#pragma unroll
    for (int k = 0; k < 4; k++) {
      if (wi * 4 + k >= nbytes) break;
      const uint32_t b = word_byte(t.w[i], k);
      *dst++ = (uint8_t)b;
      if (b == 0xff) *dst++ = 0;
    }
    words[wi] = 0; /* ready for the next frame */
  }
  __syncthreads();
  const uint32_t chunk_bytes =
      nbytes > chunk_byte0 ? min(nbytes - chunk_byte0, (uint32_t)kChunkWords * 4) : 0;
  uint8_t *out_chunk = out + chunk_byte0 + chunk_base;
  for (uint32_t i = threadIdx.x; i < chunk_bytes + (uint32_t)ff_chunk; i += kStuffThreads)
    out_chunk[i] = staged[i];

  if (chunk == (chunks ? chunks - 1 : 0) && threadIdx.x == 0) {
    const uint32_t stuffed = nbytes + chunk_base + (uint32_t)ff_chunk;
    const uint32_t flush = *tail_flush;
    if (flush < 0x100) out[stuffed] = (uint8_t)flush;
    *out_size = stuffed + (flush < 0x100);
  }
}

/* Copy the payload to mapped host memory in 16-byte stores, when it fits;
 * the host reads the size either way and fetches a larger payload itself. */
__global__ void copy_out(const uint8_t *src, const uint32_t *size, uint8_t *dst, uint32_t *dst_size,
                         size_t capacity)
{
  const uint32_t n = *size;
  if (blockIdx.x == 0 && threadIdx.x == 0) *dst_size = n;
  if (n > capacity) return;
  const uint32_t vecs = (n + 15) / 16;
  const uint4 *s = reinterpret_cast<const uint4 *>(src);
  uint4 *d = reinterpret_cast<uint4 *>(dst);
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < vecs; i += gridDim.x * blockDim.x)
    d[i] = s[i];
}

} // namespace

struct c63_cuda_entropy {
  c63_cuda_entropy_geometry G;
  size_t max_words;   /* worst-case unstuffed words of a frame */
  uint32_t chunks;    /* worst-case stuffing chunks */
  huff_codes *codes;  /* device */
  int tiles;          /* CTAs of code_bits */
  void *tile_status;  /* device: their look-back status */
  tile_state status;  /* ... as CUB reads and writes it */
  uint32_t *total;    /* the frame's bits */
  uint32_t *words;    /* [max_words + 2], all zero between frames */
  uint32_t *chunk_ff; /* [chunks] */
  uint32_t *tail_flush;
};

size_t c63_cuda_entropy_max_payload(const c63_cuda_entropy *e)
{
  /* every byte an FF with its stuffing, plus the flush byte */
  return e->max_words * 4 * 2 + 1;
}

cudaError_t c63_cuda_entropy_create(const c63_cuda_entropy_geometry &G, c63_cuda_entropy **out)
{
  *out = nullptr;
  c63_cuda_entropy *e = static_cast<c63_cuda_entropy *>(calloc(1, sizeof(c63_cuda_entropy)));
  if (!e) return cudaErrorMemoryAllocation;
  e->G = G;
  e->max_words = (size_t)G.blocks * (C63_MAX_BLOCK_BYTES / 4 + 1) + 1;
  e->chunks = (uint32_t)((e->max_words + kChunkWords - 1) / kChunkWords);

  huff_codes h;
  const c63_huff_enc *t = c63_huff_enc_tables();
  for (int k = 0; k < 4; k++)
    for (int s = 0; s < 256; s++)
      h.lc[k][s] = (uint32_t)t[k].len[s] << 16 | t[k].code[s];

  cudaError_t err = cudaMalloc(&e->codes, sizeof h);
  if (err == cudaSuccess) err = cudaMemcpy(e->codes, &h, sizeof h, cudaMemcpyHostToDevice);
  e->tiles = (int)(((size_t)G.blocks * kLanes + kBlockThreads - 1) / kBlockThreads);
  size_t status_bytes = 0;
  if (err == cudaSuccess) err = tile_state::AllocationSize(e->tiles, status_bytes);
  if (err == cudaSuccess) err = cudaMalloc(&e->tile_status, status_bytes);
  if (err == cudaSuccess) err = e->status.Init(e->tiles, e->tile_status, status_bytes);
  if (err == cudaSuccess) err = cudaMalloc(&e->total, sizeof(uint32_t));
  if (err == cudaSuccess) err = cudaMalloc(&e->words, (e->max_words + 2) * sizeof(uint32_t));
  if (err == cudaSuccess) err = cudaMemset(e->words, 0, (e->max_words + 2) * sizeof(uint32_t));
  if (err == cudaSuccess) err = cudaMalloc(&e->chunk_ff, e->chunks * sizeof(uint32_t));
  if (err == cudaSuccess) err = cudaMalloc(&e->tail_flush, sizeof(uint32_t));
  /* the memset must be complete before any stream uses the words */
  if (err == cudaSuccess) err = cudaDeviceSynchronize();
  if (err != cudaSuccess) {
    c63_cuda_entropy_destroy(e);
    return err;
  }
  *out = e;
  return cudaSuccess;
}

void c63_cuda_entropy_destroy(c63_cuda_entropy *e)
{
  if (!e) return;
  cudaFree(e->codes);
  cudaFree(e->tile_status);
  cudaFree(e->total);
  cudaFree(e->words);
  cudaFree(e->chunk_ff);
  cudaFree(e->tail_flush);
  free(e);
}

/* Steps 4 and 5: stuffing and the flush byte, from e->words and the total
 * bit count in e->total. */
static cudaError_t stuff_words(c63_cuda_entropy *e, uint8_t *payload, uint32_t *payload_size,
                               cudaStream_t s)
{
  const uint32_t *total = e->total;
  count_ff<<<e->chunks, kStuffThreads, 0, s>>>(e->words, total, e->chunk_ff, e->tail_flush);
  stuff<<<e->chunks, kStuffThreads, 0, s>>>(e->words, total, e->chunk_ff, e->tail_flush, payload,
                                            payload_size);
  return cudaGetLastError();
}

cudaError_t c63_cuda_entropy_encode(c63_cuda_entropy *e, const int16_t *coeffs, const c63_mv *mvs,
                                    uint8_t *payload, uint32_t *payload_size, cudaStream_t s)
{
  /* a thread per tile (block 0's first 32 also mark the padding before
   * tile 0) */
  init_tiles<<<(e->tiles + 255) / 256, 256, 0, s>>>(e->status, e->tiles);
  code_bits<<<e->tiles, kBlockThreads, 0, s>>>(e->codes, e->G, coeffs, mvs, e->status, e->words,
                                               e->total);
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) return err;
  return stuff_words(e, payload, payload_size, s);
}

cudaError_t c63_cuda_entropy_stuff_bits(c63_cuda_entropy *e, const uint32_t *words, size_t nwords,
                                        uint32_t total_bits, uint8_t *payload,
                                        uint32_t *payload_size, cudaStream_t s)
{
  if (nwords > e->max_words || total_bits > nwords * 32) return cudaErrorInvalidValue;
  cudaError_t err =
      cudaMemcpyAsync(e->words, words, nwords * sizeof(uint32_t), cudaMemcpyHostToDevice, s);
  if (err == cudaSuccess)
    err = cudaMemcpyAsync(e->total, &total_bits, sizeof total_bits, cudaMemcpyHostToDevice, s);
  if (err == cudaSuccess) err = stuff_words(e, payload, payload_size, s);
  /* total_bits lives on this stack frame until the copy is done */
  if (err == cudaSuccess) err = cudaStreamSynchronize(s);
  return err;
}

cudaError_t c63_cuda_copy_payload(const uint8_t *payload, const uint32_t *payload_size,
                                  uint8_t *host_dst, uint32_t *host_size, size_t capacity,
                                  cudaStream_t s)
{
  copy_out<<<kCopyCtas, policy::kCopyThreads, 0, s>>>(payload, payload_size, host_dst, host_size,
                                                      capacity & ~(size_t)15);
  return cudaGetLastError();
}
