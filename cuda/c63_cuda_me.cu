/* Full-search motion estimation on the GPU, bit-exact with the reference
 * (docs/format.md section 3: exclusive right/bottom bounds, strict < in
 * raster order).
 *
 * Designed against the hardware limit rather than the obvious
 * thread-per-block loop. The limit is the ALU pipe: VABSDIFF4 (four pixel
 * differences and their sum, one instruction) issues there at full rate,
 * PRMT (byte alignment) at half rate, and the pipe also runs the compares
 * and minimums. So:
 *  - a CTA searches a strip of consecutive blocks of a block row. Their
 *    windows overlap in all but 8 columns each: the strip's window is
 *    staged in shared memory once, and again shifted by one, two and three
 *    bytes, so every thread reads its candidate's reference rows as aligned
 *    words (two loads, no PRMT in the search loop);
 *  - candidate-parallel threads: a thread owns one horizontal offset and G
 *    consecutive vertical offsets, so each reference row it reads feeds up
 *    to G candidates: the inner loop is almost only VABSDIFF4 with
 *    accumulate;
 *  - one min-reduction over the packed key (sad << 14) | raster_index:
 *    the smallest SAD wins and, among equal SADs, the first candidate in
 *    raster order, exactly the reference's strict < tie-break;
 *  - several warps of a CTA share the strip's window, one block each at a
 *    time (two, a half warp each, for chroma at the default range); U and V
 *    blocks at the same position share a CTA.
 * The rd mode's search (c63_cuda_rd_motion_search) is the same kernel with
 * another key: the vector's bits join the SAD in the cost (c63/rd.c,
 * c63_rd_search_best).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <limits.h>

#include <atomic>
#include <type_traits>

#include "c63/c63.h"
#include "c63/rd_block.h"
#include "cuda/c63_cuda_internal.h"
#include "cuda/c63_cuda_policy.cuh"

extern "C" {
#include "c63/tables.h"
}

namespace
{

/* SAD of an 8x8 block is at most 64 * 255 = 16320 < 2^14. A candidate's
 * index is dy << 7 | dx (offsets in its block's window, each below 2 * 64):
 * ordered as the raster index dy * width + dx is, and taken apart with
 * shifts instead of a division by the window's width. */
constexpr int kIndexBits = 14;
constexpr int kRowShift = 7;
/* k << kRowShift for candidate row k of a thread's row group (up to 32),
 * the exact keys' addends, read from the constant bank. */
struct candidate_rows {
  uint32_t at[32];
};
constexpr candidate_rows make_candidate_rows()
{
  candidate_rows t{};
  for (int k = 0; k < 32; k++)
    t.at[k] = (uint32_t)k << kRowShift;
  return t;
}
__constant__ candidate_rows kCandidateRow = make_candidate_rows();
/* The search's tuning (c63_cuda_policy.cuh). */
using policy = c63_cuda_me_policy;
template <int G> using me_bounds = c63_cuda_me_bounds<G>;

/* Threads a plane of a CTA has for groups of 2^tpb_log2 threads:
 * policy::kWarpGroups warps of groups of a warp or less, else one group. */
__host__ __device__ constexpr int plane_threads_for(int tpb_log2)
{
  return tpb_log2 <= 5 ? 32 * policy::kWarpGroups : 1 << tpb_log2;
}
/* Dynamic shared memory a launch gets without opting in: 48 KiB less the
 * static arrays (the reduction's, and the rd mode's row and column keys,
 * 2.3 KiB at most). */
constexpr size_t kShmemLimit = 45 * 1024;

__device__ __forceinline__ uint32_t sad4_acc(uint32_t a, uint32_t b, uint32_t acc)
{
  uint32_t d;
  asm("vabsdiff4.u32.u32.u32.add %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(acc));
  return d;
}

/* Minimum over aligned groups of `width` lanes (16 or 32); every lane of
 * the warp takes part. */
template <typename K> __device__ __forceinline__ K warp_min(K v, int width)
{
  for (int o = width >> 1; o > 0; o >>= 1) {
    const K other = __shfl_xor_sync(0xffffffffu, v, o);
    v = other < v ? other : v;
  }
  return v;
}

/* What a search minimises. kExact: the SAD, then the raster index (the
 * reference's choice). kRd32 and kRd64: the rd mode's cost, 16 * SAD +
 * sad_16 * (2 + bits(y) + bits(x)) (c63_rd_search_best), then the raster
 * order, in 32-bit keys where the cost fits beside the index and 64-bit
 * ones otherwise (wide ranges, coarse quantisers). */
enum { kExact, kRd32, kRd64 };
template <int MODE>
using me_key = typename std::conditional<MODE == kRd64, unsigned long long, uint32_t>::type;

/* The rd mode's costs and results. A candidate's key is cost << bits |
 * dy * stride + dx: stride (the range's full window width) is the same
 * for every block, so a row's part of the key is too, and raster order
 * within a block is kept. */
struct me_rd {
  const uint8_t *mv_len; /* device copy of the vector table's code lengths */
  int sad_16;
  int bits;   /* index bits of a key */
  int stride; /* 2 * range */
  c63_rd_searched *out;
};

/* Shape of a strip's shared memory, the same on host and device. */
struct window_shape {
  int rows;        /* rows staged: row groups * G + 7 */
  int words;       /* 32-bit words per staged row */
  int copy_words;  /* words between the four shifted copies */
  int plane_words; /* words per searched plane: four copies, then the strip's current blocks */
  /* 2^kIndexBits, the SAD's place in an exact key: a kernel parameter
   * rather than a constant, so that ptxas keeps the keys' multiply-adds
   * on the FMA pipe instead of making them shift-adds (LEA) on the ALU
   * pipe the SADs need */
  uint32_t sad_scale;
};

/* Largest window of a strip of `strip` blocks (unclipped) for a search
 * range, G candidate rows per thread, in `copies` shifted copies (4, or 1
 * where four do not fit). The copies lie 8 banks apart (mod 32), so a
 * warp's 32 consecutive columns, spread over four copies, read from
 * distinct banks but for one pair; the current blocks stay 16-byte
 * aligned. */
__host__ __device__ inline window_shape max_window(int range, int G, int strip, int copies)
{
  const int n = 2 * range;
  window_shape s;
  s.rows = (n + G - 1) / G * G + 7;
  s.words = ((3 + 8 * (strip - 1) + n - 1) >> 2) + 3;
  s.copy_words = (s.rows * s.words + 31) / 32 * 32 + 8;
  s.plane_words = copies * s.copy_words + strip * 16;
  s.sad_scale = 1u << kIndexBits;
  return s;
}

/* The planes one launch searches: luma alone, or U and V together (same
 * geometry and range), each by its own warps of every CTA. */
struct me_planes {
  c63_cuda_plane pl; /* geometry and range, shared by the searches */
  int pix_off[2];    /* each search's plane in the frame buffers */
  int blk_off[2];
};

/* Smallest key of a search group, valid in its thread 0. A group of a warp
 * or half a warp needs no shared memory nor barrier (every lane of the warp
 * calls it); a wider group is alone in its plane's share of the CTA
 * (launch), so CTA barriers are safe: one before the exchange and one
 * after, so the next block can reuse red[]. */
template <typename K> __device__ __forceinline__ K group_min(K best, int tpb, int tid, K *red)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  /* a whole warp's 32-bit minimum in one instruction (sm_80 on) instead of
   * five shuffles and minimums */
  if (sizeof(K) == 4 && tpb >= 32)
    best = (K)__reduce_min_sync(0xffffffffu, (unsigned)best);
  else
#endif
    best = warp_min(best, tpb < 32 ? tpb : 32);
  if (tpb <= 32) return best;
  __syncthreads();
  if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = best;
  __syncthreads();
  const int w0 = (int)threadIdx.x >> 5, nw = tpb >> 5;
  if (tid == 0)
    for (int i = 1; i < nw; i++)
      best = red[w0 + i] < best ? red[w0 + i] : best;
  return best;
}

/* Window rows a strip stages at most, for the rd keys' row parts. */
constexpr int kMaxRowKeys = 2 * C63_MAX_SEARCH_RANGE + 32;

/* Where the rd search of block b (in its plane, raster order) of the
 * launch's plane sub goes. */
__device__ __forceinline__ c63_rd_searched *rd_out(const me_rd &rd, const me_planes &mp, int sub,
                                                   int b)
{
  return rd.out + (sub ? mp.blk_off[1] : mp.blk_off[0]) + b;
}

/* Copies one 32-bit word from global to shared memory without a register
 * round trip, so that the loads of a thread's whole share of the window
 * are in flight at once instead of one latency per word. */
__device__ __forceinline__ void stage_word(uint32_t *dst, const uint8_t *src)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned d = (unsigned)__cvta_generic_to_shared(dst);
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(d), "l"(src) : "memory");
#else
  *dst = *reinterpret_cast<const uint32_t *>(src);
#endif
}

/* Waits for the thread's stage_word copies (a barrier then publishes them
 * to the CTA). */
__device__ __forceinline__ void stage_wait()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_all;" ::: "memory");
#endif
}

/* A vector of the search as one 32-bit store (x, y, use_mv = 1, padding
 * 0, in memory order) instead of four byte stores: every c63_mv array on
 * the device comes from cudaMalloc, so its 4-byte elements are aligned. */
__device__ __forceinline__ void store_mv(c63_mv *dst, int x, int y)
{
  *reinterpret_cast<uint32_t *>(dst) = (uint32_t)(uint8_t)x | (uint32_t)(uint8_t)y << 8 | 1u << 16;
}

/* ---- The search kernel, in stages: stage the window, search each block,
 * reduce, write ---- */

/* A thread's place in its CTA: its plane's share (sub: 0 or 1; ptid, its
 * thread there), its search group (grp of ngroups; tid, its thread there,
 * of tpb = 2^tpb_log2) and its warp in the share. Every count is a power
 * of two (see me_kernel). */
struct me_thread {
  int tpb_log2, plane_threads, sub, ptid, tpb, grp, ngroups, tid, lane, warp, nwarps;
};

template <int N, int TL> __device__ __forceinline__ me_thread thread_place(int tpb_log2_arg)
{
  me_thread t;
  t.tpb_log2 = TL ? TL : tpb_log2_arg;
  t.plane_threads = TL ? plane_threads_for(TL) : (int)blockDim.x / N;
  t.sub = N == 1 ? 0 : (int)threadIdx.x >= t.plane_threads;
  t.ptid = (int)threadIdx.x - t.sub * t.plane_threads; /* thread in the plane's share */
  t.tpb = 1 << t.tpb_log2;
  t.grp = t.ptid >> t.tpb_log2;
  t.ngroups = t.plane_threads >> t.tpb_log2;
  t.tid = t.ptid & (t.tpb - 1);
  t.lane = t.ptid & 31;
  t.warp = t.ptid >> 5;
  t.nwarps = t.plane_threads >> 5;
  return t;
}

/* The CTA's strip: its first block bx0 and nblk blocks of block row my / 8,
 * and the rows [top, bottom] and columns [sleft, sright] its candidates
 * span (ny = bottom - top). */
struct me_strip {
  int w, h, range, bx0, nblk, my, top, bottom, ny, sleft, sright;
};

__device__ __forceinline__ me_strip strip_place(const c63_cuda_plane &pl, int strip)
{
  me_strip s;
  s.w = pl.w;
  s.h = pl.h;
  s.range = pl.range;
  s.bx0 = (int)blockIdx.x * strip;
  s.nblk = min(strip, pl.bw - s.bx0);
  s.my = blockIdx.y * 8;
  s.top = max(0, s.my - s.range);
  s.bottom = min(s.h - 8, s.my + s.range);
  s.ny = s.bottom - s.top;
  s.sleft = max(0, s.bx0 * 8 - s.range);
  s.sright = min(s.w - 8, (s.bx0 + s.nblk - 1) * 8 + s.range);
  return s;
}

/* The window as staged: groups of G candidate rows, rows staged, the
 * 4-aligned column wx0 it starts at, and the words of a row in use. */
struct me_window {
  int groups, rows, wx0, used;
};

template <int G> __device__ __forceinline__ me_window window_place(const me_strip &s)
{
  me_window win;
  win.groups = (s.ny + G - 1) / G;
  win.rows = win.groups * G + 7;
  win.wx0 = s.sleft & ~3;
  win.used = ((s.sleft - win.wx0 + (s.sright - s.sleft) - 1) >> 2) + 3;
  return win;
}

/* The search's result where a strip has no candidate at all (tiny planes,
 * range 0): the zero vector the reference starts with. */
template <int MODE>
__device__ __forceinline__ void write_no_candidates(const me_thread &t, const me_strip &s,
                                                    const me_planes &mp, c63_mv *out,
                                                    const me_rd &rd)
{
  for (int b = t.ptid; b < s.nblk; b += t.plane_threads) {
    if constexpr (MODE == kExact)
      out[s.bx0 + b] = c63_mv{0, 0, 1, 0};
    else
      rd_out(rd, mp, t.sub, blockIdx.y * mp.pl.bw + s.bx0 + b)[0] = {INT_MAX, 0, {0, 0, 1, 0}};
  }
}

/* The strip's current blocks: word i is row (i >> 1) & 7, half i & 1 of
 * block i >> 4. */
__device__ __forceinline__ void stage_blocks(uint32_t *cur_s, const uint8_t *cur,
                                             const me_thread &t, const me_strip &s)
{
  for (int i = t.ptid; i < s.nblk * 16; i += t.plane_threads) {
    const int b = i >> 4, j = (i >> 1) & 7;
    stage_word(cur_s + i, cur + (size_t)(s.my + j) * s.w + (s.bx0 + b) * 8 + 4 * (i & 1));
  }
}

/* The rd keys' row and column parts (me_kernel's row_key and col_key), by
 * the whole CTA. */
template <int G, typename K>
__device__ __forceinline__ void stage_rd_keys(K *row_key, K *col_key, const me_rd &rd,
                                              const me_strip &s, const me_window &win)
{
  for (int r = threadIdx.x; r < win.groups * G; r += blockDim.x)
    row_key[r] =
        ((K)(rd.sad_16 * (2 + c63_rd_value_bits(rd.mv_len, s.top + r - s.my))) << rd.bits) +
        (K)(r * rd.stride);
  for (int d = threadIdx.x; d < 2 * s.range; d += blockDim.x)
    col_key[d] = (K)(rd.sad_16 * c63_rd_value_bits(rd.mv_len, d - s.range)) << rd.bits;
}

/* Copies 1-3: word c of copy s holds bytes 4c + s .. 4c + s + 3 of the
 * row, from words c and c + 1 of copy 0. The search reads words up to
 * used - 2 of them. */
__device__ __forceinline__ void shift_copies(uint32_t *copies, const me_thread &t,
                                             const me_window &win, const window_shape &ws)
{
  const int words = ws.words;
  const int cw = win.used - 1, step = t.nwarps * words;
  for (int c = t.lane; c < cw; c += 32) {
    uint32_t *p = copies + t.warp * words + c;
    for (int r = t.warp; r < win.rows; r += t.nwarps, p += step) {
      const uint32_t a = p[0], b = p[1];
      p[ws.copy_words] = __byte_perm(a, b, 0x4321);
      p[2 * ws.copy_words] = __byte_perm(a, b, 0x5432);
      p[3 * ws.copy_words] = __byte_perm(a, b, 0x6543);
    }
  }
}

/* The 16 words of a current block (staged by stage_blocks) from cb. */
__device__ __forceinline__ void load_block(const uint4 *cb, uint32_t cw[16])
{
#pragma unroll
  for (int i = 0; i < 4; i++) {
    const uint4 q = cb[i];
    cw[4 * i] = q.x;
    cw[4 * i + 1] = q.y;
    cw[4 * i + 2] = q.z;
    cw[4 * i + 3] = q.w;
  }
}

/* The SADs of an item's G candidates (a column, G consecutive rows of
 * the window, from row pointer p, rows `words` apart; sel: the byte
 * alignment of an unshifted window) against the block in cw. */
template <int G, int COPIES>
__device__ __forceinline__ void item_sads(const uint32_t *p, int words, uint32_t sel,
                                          const uint32_t cw[16], uint32_t sad[G])
{
#pragma unroll
  for (int k = 0; k < G; k++)
    sad[k] = 0;
#pragma unroll
  for (int r = 0; r < G + 7; r++) {
    uint32_t lo, hi;
    if (COPIES == 4) {
      lo = p[r * words];
      hi = p[r * words + 1];
    } else {
      /* Unshifted window: align the row in registers. */
      const uint32_t a = p[r * words], b = p[r * words + 1], d = p[r * words + 2];
      lo = __byte_perm(a, b, sel);
      hi = __byte_perm(b, d, sel);
    }
    /* Reference row r is row j = r - k of candidate k. */
#pragma unroll
    for (int k = 0; k < G; k++) {
      const int j = r - k;
      if (j >= 0 && j < 8) {
        sad[k] = sad4_acc(cw[2 * j], lo, sad[k]);
        sad[k] = sad4_acc(cw[2 * j + 1], hi, sad[k]);
      }
    }
  }
}

/* The least exact key of an item's G candidates, rows first.. of its
 * block's window, without the item's own part: only the last row group
 * can hold rows past the window (ny rows of candidates). Keys: sad * 2^14
 * + index, each by a multiply-add whose addend, k << kRowShift, comes from
 * the constant bank (the FMA pipe), and their minimum by three-input
 * minimums, so that the ALU pipe the SADs need runs one instruction per
 * two candidates instead of an add-and-minimum per candidate. */
template <int G>
__device__ __forceinline__ uint32_t exact_least(const uint32_t sad[G], uint32_t sad_scale,
                                                int first, int ny)
{
  uint32_t least = ~0u;
  if (first + G <= ny) {
#pragma unroll
    for (int k = 0; k < G; k++)
      least = min(least, sad[k] * sad_scale + kCandidateRow.at[k]);
  } else {
#pragma unroll
    for (int k = 0; k < G; k++)
      if (first + k < ny) least = min(least, sad[k] * sad_scale + kCandidateRow.at[k]);
  }
  return least;
}

/* The same in the rd mode's keys, without the column's part: 16 * SAD
 * shifted (scale), plus the row's part from rk (a broadcast load). */
template <int G, typename K>
__device__ __forceinline__ K rd_least(const uint32_t sad[G], K scale, const K *rk, int first,
                                      int ny)
{
  K least = ~(K)0;
  if (first + G <= ny) {
#pragma unroll
    for (int k = 0; k < G; k++) {
      /* Keeps the compiler from hoisting all 32 row parts' loads
       * above the minimum: 32 more registers, which spill. */
      if (k % 8 == 0) asm volatile("" ::: "memory");
      const K key = (K)sad[k] * scale + rk[k];
      least = key < least ? key : least;
    }
  } else {
#pragma unroll
    for (int k = 0; k < G; k++)
      if (first + k < ny) {
        const K key = (K)sad[k] * scale + rk[k];
        least = key < least ? key : least;
      }
  }
  return least;
}

/* Writes the vector of the smallest key best for block b of the strip
 * (left, mx: its window's left column and its own; nx: its window's
 * width). */
template <int MODE, typename K>
__device__ __forceinline__ void write_best(K best, const me_thread &t, const me_strip &s,
                                           const me_planes &mp, c63_mv *out, const me_rd &rd, int b,
                                           int left, int mx, int nx)
{
  if constexpr (MODE == kExact) {
    const int idx = (int)(best & ((1u << kIndexBits) - 1));
    const int dy = idx >> kRowShift, dx = idx & ((1 << kRowShift) - 1);
    store_mv(out + s.bx0 + b, left + dx - mx, s.top + dy - s.my);
  } else {
    const int idx = (int)(best & (((K)1 << rd.bits) - 1));
    const int dy = idx / rd.stride, dx = idx - dy * rd.stride;
    rd_out(rd, mp, t.sub, blockIdx.y * mp.pl.bw + s.bx0 + b)[0] = {
        (int)(best >> rd.bits), dy * nx + dx,
        c63_mv{(int8_t)(left + dx - mx), (int8_t)(s.top + dy - s.my), 1, 0}};
  }
}

/* One CTA searches a strip of `strip` blocks of one block row, in N planes;
 * each plane has groups of 2^tpb_log2 threads, and its share of the CTA
 * (blockDim.x / N threads) is 64 or 128 threads. Every count the prologue
 * divides by is a power of two: runtime divisions would make the set-up of
 * a half-warp chroma search cost more instructions than its search. TL,
 * when not 0, is tpb_log2 known at compile time (the default ranges'
 * searches): a block's set-up then has no shifts by a runtime count, and
 * the compiler does not work the thread's group out again for every
 * block.
 *
 * Stages: stage the window (copy 0, the current blocks, the rd keys, then
 * the shifted copies), search each block (items of a column and a row
 * group: their SADs, then their least key), reduce over the group, write.
 * Staging copy 0: rows [top, top + rows), words from the 4-aligned column
 * at or left of the strip's first candidate; a lane keeps a word column,
 * the warps take the rows in turn. Pixels outside the plane are zero; no
 * valid candidate touches them. The rows inside the plane are copied by a
 * loop of pointer steps alone, and the words outside it (right of the
 * plane, or below it: strips at the edges only) are cleared apart: a
 * bounds test and a select per word would spend the ALU pipe that the SADs
 * need. The staging of copy 0, the current block's words and the items'
 * row pointers stay in the kernel's body: computed there, their addresses
 * compile to the same instructions as one expression. */
template <int G, int N, int COPIES, int MODE, int TL>
__global__ void __launch_bounds__(me_bounds<G>::threads, me_bounds<G>::min_ctas)
    me_kernel(const uint8_t *__restrict__ cur, const uint8_t *__restrict__ ref, me_planes mp,
              int strip, int tpb_log2_arg, window_shape ws, c63_mv *__restrict__ mvs, me_rd rd)
{
  using K = me_key<MODE>;
  extern __shared__ uint4 smem4[];
  __shared__ K red[me_bounds<G>::threads / 32];
  /* rd: each window row's part of the keys, (sad_16 * (2 + bits(dy))) <<
   * bits + dy * stride, shared by the strip's blocks and both planes */
  __shared__ K row_key[MODE == kExact ? 1 : kMaxRowKeys];
  /* ... and each horizontal offset's, (sad_16 * bits(dx)) << bits, dx +
   * range indexing it (the same for every block) */
  __shared__ K col_key[MODE == kExact ? 1 : 2 * C63_MAX_SEARCH_RANGE];

  if constexpr (MODE != kExact) c63_cuda_let_next_launch();
  const me_thread t = thread_place<N, TL>(tpb_log2_arg);
  uint32_t *copies = reinterpret_cast<uint32_t *>(smem4) + t.sub * ws.plane_words;
  uint32_t *cur_s = copies + COPIES * ws.copy_words;
  const int pix_off = t.sub ? mp.pix_off[1] : mp.pix_off[0];
  c63_mv *out = MODE == kExact
                    ? mvs + (t.sub ? mp.blk_off[1] : mp.blk_off[0]) + blockIdx.y * mp.pl.bw
                    : nullptr;
  const me_strip s = strip_place(mp.pl, strip);
  /* A block's candidates are empty only when the plane is 8 wide or the
   * range 0, so the test is CTA-uniform. */
  if (s.sright <= s.sleft || s.ny <= 0) {
    write_no_candidates<MODE>(t, s, mp, out, rd);
    return;
  }
  cur += pix_off;
  ref += pix_off;

  /* Stage the window. */
  const me_window win = window_place<G>(s);
  const int words = ws.words; /* row pitch: the strip's largest window */
  const int in_rows = min(win.rows, s.h - s.top);
  const int dst_step = t.nwarps * words;
  for (int c = t.lane; c < win.used; c += 32) {
    const int x = win.wx0 + 4 * c; /* w is a multiple of 8: the word is in or out */
    uint32_t *dst = copies + t.warp * words + c;
    int r = t.warp;
    if (x < s.w) {
      const uint8_t *src = ref + (size_t)(s.top + t.warp) * s.w + x;
      const size_t src_step = (size_t)t.nwarps * s.w;
      for (; r < in_rows; r += t.nwarps, src += src_step, dst += dst_step)
        stage_word(dst, src);
    }
    for (; r < win.rows; r += t.nwarps, dst += dst_step)
      *dst = 0;
  }
  stage_blocks(cur_s, cur, t, s);
  if (MODE != kExact) stage_rd_keys<G>(row_key, col_key, rd, s, win);
  stage_wait();
  __syncthreads();
  if (COPIES == 4) shift_copies(copies, t, win, ws);
  __syncthreads();

  /* Search, block by block: half-warp groups go through the blocks two at
   * a time, so both halves of a warp reach the reduction's shuffles
   * together. */
  const int gpw = t.tpb < 32 ? 32 >> t.tpb_log2 : 1;
  for (int b0 = t.grp & ~(gpw - 1); b0 < s.nblk; b0 += t.ngroups) {
    const int b = b0 + (t.grp & (gpw - 1));
    const bool act = b < s.nblk;
    const int mx = (s.bx0 + b) * 8;
    const int left = max(0, mx - s.range), right = min(s.w - 8, mx + s.range);
    const int nx = right - left;
    const int off0 = left - win.wx0;
    uint32_t cw[16];
    load_block(reinterpret_cast<const uint4 *>(cur_s + (act ? b : 0) * 16), cw);

    K best = ~(K)0;
    const int items = act ? nx * win.groups : 0;
    for (int item = t.tid; item < items; item += t.tpb) {
      /* Consecutive threads take consecutive columns: four copies, eight
       * words each, on distinct banks. */
      const int g = win.groups == 1 ? 0 : item / nx, c = item - g * nx;
      const int col = off0 + c;
      const uint32_t *p =
          copies + (COPIES == 4 ? (col & 3) * ws.copy_words : 0) + g * G * words + (col >> 2);
      const uint32_t sel = 0x3210u + 0x1111u * (uint32_t)(col & 3);
      uint32_t sad[G];
      item_sads<G, COPIES>(p, words, sel, cw, sad);
      /* The item's least key: its candidates share their column and row
       * group, so that part is added once, after their minimum. */
      if constexpr (MODE == kExact) {
        const uint32_t base = (uint32_t)((g * G << kRowShift) + c);
        /* the item's first candidate always exists (g < groups) */
        best = min(best, exact_least<G>(sad, ws.sad_scale, g * G, s.ny) + base);
      } else {
        const K least = rd_least<G>(sad, (K)16 << rd.bits, row_key + g * G, g * G, s.ny);
        const K colk = col_key[left + c - mx + s.range] + (K)c;
        best = least + colk < best ? least + colk : best;
      }
    }

    /* Reduce and write. */
    best = group_min(best, t.tpb, t.tid, red);
    if (t.tid == 0 && act) write_best<MODE>(best, t, s, mp, out, rd, b, left, mx, nx);
  }
}

/* Shared memory of a launch with N planes. */
inline size_t me_shmem(int range, int G, int strip, int copies, int n)
{
  return (size_t)n * max_window(range, G, strip, copies).plane_words * sizeof(uint32_t);
}

/* Blocks per strip: long strips share more of the window, but the grid
 * must still fill the GPU: at least one wave of resident CTAs, at most
 * policy::kMaxStrip blocks, and within the 48 KiB of shared memory a launch gets
 * without opting in. A grid of under two waves loses much of its last one
 * (a second wave nearly empty), so there the length with the fewest waves
 * times CTA time wins, a CTA taking its blocks plus about two blocks' worth
 * of staging; grids of two waves or more keep the longest strip. */
template <int G, int N, int COPIES, int MODE, int TL>
int strip_length(const c63_cuda_plane &pl, int range, int threads)
{
  /* Resident CTAs on the whole device (the first device asked). Atomic:
   * encoders on several threads may ask at once; all compute the same. */
  static std::atomic<int> cached{0};
  int slots = cached.load(std::memory_order_relaxed);
  if (slots == 0) {
    int dev = 0, sms = 0, per_sm = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(
            &per_sm, me_kernel<G, N, COPIES, MODE, TL>, threads,
            me_shmem(range, G, policy::kMaxStrip, COPIES, N)) != cudaSuccess)
      return 1;
    slots = sms * (per_sm > 0 ? per_sm : 1);
    cached.store(slots, std::memory_order_relaxed);
  }
  int strip = pl.bw * pl.bh / slots;
  strip = strip < 1 ? 1 : strip > policy::kMaxStrip ? policy::kMaxStrip : strip;
  while (strip > 1 && me_shmem(range, G, strip, COPIES, N) > kShmemLimit)
    strip--;
  auto ctas = [&](int n) { return (long)((pl.bw + n - 1) / n) * pl.bh; };
  if (ctas(strip) >= 2L * slots) return strip;
  int best = strip;
  long best_cost = (ctas(strip) + slots - 1) / slots * (strip + 2);
  for (int n = strip - 1; n >= 1; n--) {
    const long cost = (ctas(n) + slots - 1) / slots * (n + 2);
    if (cost < best_cost) {
      best_cost = cost;
      best = n;
    }
  }
  return best;
}

template <int G, int N, int COPIES, int MODE, int TL>
cudaError_t launch_copies(const uint8_t *cur, const uint8_t *ref, const me_planes &mp, int range,
                          int tpb_log2, c63_mv *mvs, const me_rd &rd, cudaStream_t s)
{
  const c63_cuda_plane &pl = mp.pl;
  const int threads = N * plane_threads_for(tpb_log2);
  const int strip = strip_length<G, N, COPIES, MODE, TL>(pl, range, threads);
  const window_shape ws = max_window(range, G, strip, COPIES);
  const dim3 grid((pl.bw + strip - 1) / strip, pl.bh);
  const size_t shmem = me_shmem(range, G, strip, COPIES, N);
  me_kernel<G, N, COPIES, MODE, TL>
      <<<grid, threads, shmem, s>>>(cur, ref, mp, strip, tpb_log2, ws, mvs, rd);
  return cudaGetLastError();
}

template <int G, int N, int MODE>
cudaError_t launch(const uint8_t *cur, const uint8_t *ref, const me_planes &mp, c63_mv *mvs,
                   const me_rd &rd, cudaStream_t s)
{
  const c63_cuda_plane &pl = mp.pl;
  if (pl.bw <= 0 || pl.bh <= 0) return cudaSuccess;
  const int range = pl.range < 0 ? 0 : pl.range;
  /* The packed key holds raster indices below (2 * 64)^2 only. */
  if (range > 64) return cudaErrorInvalidValue;
  /* Threads per search: enough for every (column, row group) item of an
   * unclipped block, a power of two from 16 to 128 (the kernel's
   * arithmetic is shifts); wider ranges loop. One-warp searches run
   * kWarpGroups to a plane; a wider one is alone in its plane. */
  const int items = 2 * range * ((2 * range + G - 1) / G);
  const int max_tpb = me_bounds<G>::threads / N;
  int tpb_log2 = 4;
  while ((1 << tpb_log2) < items && (1 << tpb_log2) < max_tpb)
    tpb_log2++;
  /* Four shifted copies where they fit (every range up to 40 or so);
   * wider windows keep one copy and align rows with PRMT. The group size
   * of the default ranges (luma's 16: a warp; chroma's 8: half a warp) is
   * built in (me_kernel's TL). */
  constexpr int kBuiltIn = G == 32 ? 5 : G == 16 ? 4 : 0;
  if (me_shmem(range, G, 1, 4, N) <= kShmemLimit) {
    if (kBuiltIn && tpb_log2 == kBuiltIn)
      return launch_copies<G, N, 4, MODE, kBuiltIn>(cur, ref, mp, range, tpb_log2, mvs, rd, s);
    return launch_copies<G, N, 4, MODE, 0>(cur, ref, mp, range, tpb_log2, mvs, rd, s);
  }
  return launch_copies<G, N, 1, MODE, 0>(cur, ref, mp, range, tpb_log2, mvs, rd, s);
}

/* The search of one plane (N = 1) or two of equal geometry (N = 2), in
 * the mode's keys, with the policy's candidate rows per thread. */
template <int N, int MODE>
cudaError_t search(const uint8_t *cur, const uint8_t *ref, const me_planes &mp, c63_mv *mvs,
                   const me_rd &rd, cudaStream_t s)
{
  if (N == 1) return launch<policy::kLumaRows, 1, MODE>(cur, ref, mp, mvs, rd, s);
  if (mp.pl.range <= policy::kChromaNarrowRange)
    return launch<policy::kChromaRows, 2, MODE>(cur, ref, mp, mvs, rd, s);
  return launch<policy::kChromaWideRows, 2, MODE>(cur, ref, mp, mvs, rd, s);
}

/* The planes of one launch: a alone, or a and b (U and V) together. */
me_planes make_planes(const c63_cuda_plane &a, const c63_cuda_plane *b)
{
  me_planes mp;
  mp.pl = a;
  mp.pix_off[0] = a.pix_off;
  mp.blk_off[0] = a.blk_off;
  mp.pix_off[1] = b ? b->pix_off : a.pix_off;
  mp.blk_off[1] = b ? b->blk_off : a.blk_off;
  return mp;
}

bool same_geometry(const c63_cuda_plane &a, const c63_cuda_plane &b)
{
  return a.w == b.w && a.h == b.h && a.bw == b.bw && a.bh == b.bh && a.range == b.range;
}

} // namespace

/* Luma: 32 candidate rows per thread, so at the default range one warp
 * searches a block, each thread a whole column of candidates. A thread's
 * fixed costs (setup, its share of staging the window, the reduction) then
 * spread over 512 VABSDIFF4 instead of 128, so that most of the
 * instructions executed are VABSDIFF4. */
cudaError_t c63_cuda_motion_search(const uint8_t *cur, const uint8_t *ref, const c63_cuda_plane &pl,
                                   c63_mv *mvs, cudaStream_t s)
{
  return search<1, kExact>(cur, ref, make_planes(pl, nullptr), mvs, me_rd{}, s);
}

/* Up to range 8 (the default's chroma), 16 candidate rows per thread: a
 * half warp searches a block, each thread a whole column of candidates, as
 * for luma; wider ranges take 8 rows per thread. */
cudaError_t c63_cuda_motion_search_pair(const uint8_t *cur, const uint8_t *ref,
                                        const c63_cuda_plane &a, const c63_cuda_plane &b,
                                        c63_mv *mvs, cudaStream_t s)
{
  if (!same_geometry(a, b)) {
    cudaError_t err = c63_cuda_motion_search(cur, ref, a, mvs, s);
    return err == cudaSuccess ? c63_cuda_motion_search(cur, ref, b, mvs, s) : err;
  }
  return search<2, kExact>(cur, ref, make_planes(a, &b), mvs, me_rd{}, s);
}

cudaError_t c63_cuda_rd_motion_search(const uint8_t *cur, const uint8_t *ref,
                                      const c63_cuda_plane &pl, const uint8_t *mv_len, int sad_16,
                                      c63_rd_searched *out, cudaStream_t s)
{
  const int range = pl.range < 0 ? 0 : pl.range;
  if (range > 64) return cudaErrorInvalidValue;
  me_rd rd;
  rd.mv_len = mv_len;
  rd.sad_16 = sad_16;
  rd.stride = 2 * range;
  rd.out = out;
  /* Index bits: every dy * stride + dx below stride^2. The largest cost:
   * 16 * 64 * 255 plus the bits of the longest vector of the range. */
  rd.bits = 0;
  while ((1L << rd.bits) < (long)rd.stride * rd.stride)
    rd.bits++;
  const uint8_t *len = c63_huff_enc_tables()[C63_HUFF_MV].len;
  int vbits = 0;
  for (int v = -range; v <= range; v++) {
    const int b = c63_rd_value_bits(len, v);
    vbits = b > vbits ? b : vbits;
  }
  const long long max_cost = 16LL * 64 * 255 + (long long)sad_16 * (2 + 2 * vbits);
  const me_planes mp = make_planes(pl, nullptr);
  if (max_cost < (1LL << (32 - rd.bits))) return search<1, kRd32>(cur, ref, mp, nullptr, rd, s);
  rd.bits = 32;
  return search<1, kRd64>(cur, ref, mp, nullptr, rd, s);
}
