/* Full-search motion estimation on the GPU, bit-exact with the reference
 * (docs/format.md section 3: exclusive right/bottom bounds, strict < in
 * raster order).
 *
 * Designed against the hardware limit rather than the obvious
 * thread-per-block loop:
 *  - one CTA per 8x8 block; its search window is staged once in shared
 *    memory as 32-bit words, the current block in registers;
 *  - candidate-parallel threads: a thread owns one horizontal offset and G
 *    consecutive vertical offsets, so each reference row it aligns (two
 *    PRMT) feeds up to G candidates: the inner loop is almost only
 *    VABSDIFF4 with accumulate, four pixel differences per instruction;
 *  - one min-reduction over the packed key (sad << 14) | raster_index:
 *    the smallest SAD wins and, among equal SADs, the first candidate in
 *    raster order, exactly the reference's strict < tie-break;
 *  - U and V blocks at the same position share a CTA, one search per warp
 *    group, so the small chroma searches still fill the multiprocessors.
 * On an H200 (Nsight Compute) the luma kernel keeps the ALU pipe, which runs
 * VABSDIFF4 at half rate, about 70% busy.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "cuda/c63_cuda_internal.h"

namespace
{

/* Threads per CTA at most. Luma CTAs (128 threads at range 16) keep 40
 * registers so 12 fit on a multiprocessor; wider ranges loop. */
constexpr int kMaxThreads = 128;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
constexpr int kMinLumaCtas = 8; /* Turing runs at most 1024 threads per SM */
#else
constexpr int kMinLumaCtas = 12;
#endif
/* SAD of an 8x8 block is at most 64 * 255 = 16320 < 2^14; the raster index
 * of a candidate is below (2 * 64)^2 = 2^14. */
constexpr int kIndexBits = 14;

__device__ __forceinline__ uint32_t sad4_acc(uint32_t a, uint32_t b, uint32_t acc)
{
  uint32_t d;
  asm("vabsdiff4.u32.u32.u32.add %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(acc));
  return d;
}

__device__ __forceinline__ uint32_t warp_min(uint32_t v)
{
#pragma unroll
  for (int o = 16; o > 0; o >>= 1)
    v = min(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

struct window_shape {
  int rows;  /* rows staged: groups * G + 7 */
  int words; /* 32-bit words per staged row */
};

/* Largest window for a search range (unclipped block), G rows per thread. */
inline window_shape max_window(int range, int G)
{
  int n = 2 * range;
  window_shape s;
  s.rows = (n + G - 1) / G * G + 7;
  s.words = ((3 + n - 1) >> 2) + 3;
  return s;
}

/* The planes one launch searches: luma alone, or U and V together (same
 * geometry and range), one search per thread group of each CTA. Chroma
 * searches are small (32 threads at the default range): pairing them fills
 * the multiprocessors twice as well as one 32-thread CTA each. */
struct me_planes {
  c63_cu_plane pl; /* geometry and range, shared by the searches */
  int n;           /* searches per CTA: 1 or 2 */
  int pix_off[2];  /* each search's plane in the frame buffers */
  int blk_off[2];
};

/* Launch bounds: wide row groups (G = 32) hold 32 SADs per thread, so
 * their CTAs are small and many; narrow ones keep 40 registers. */
template <int G> struct me_bounds {
  static constexpr int threads = G >= 32 ? 64 : kMaxThreads;
  static constexpr int min_ctas = G >= 32 ? 16 : kMinLumaCtas;
};

template <int G, int N>
__global__ void __launch_bounds__(me_bounds<G>::threads, N == 1 ? me_bounds<G>::min_ctas : 8)
    me_kernel(const uint8_t *__restrict__ cur, const uint8_t *__restrict__ ref, me_planes mp,
              int win_words, c63_mv *__restrict__ mvs)
{
  extern __shared__ uint32_t smem[];
  __shared__ uint32_t cur_s[2][16];
  __shared__ uint32_t red[kMaxThreads / 32];
  static_assert(me_bounds<G>::threads <= kMaxThreads, "red[] holds one entry per warp");

  /* Thread group `sub` (a whole number of warps) does search `sub`. */
  const int tpb = N == 1 ? (int)blockDim.x : (int)blockDim.x / N;
  const int sub = N == 1 ? 0 : (int)threadIdx.x / tpb, tid = (int)threadIdx.x - sub * tpb;
  const c63_cu_plane &pl = mp.pl;
  uint32_t *win = smem + sub * win_words;
  const int pix_off = sub ? mp.pix_off[1] : mp.pix_off[0];
  const int blk_off = sub ? mp.blk_off[1] : mp.blk_off[0];

  const int w = pl.w, h = pl.h, range = pl.range;
  const int mx = blockIdx.x * 8, my = blockIdx.y * 8;
  const int left = max(0, mx - range), right = min(w - 8, mx + range);
  const int top = max(0, my - range), bottom = min(h - 8, my + range);
  const int nx = right - left, ny = bottom - top;
  /* No candidate at all (tiny planes, range 0): the reference keeps the
   * zero vector it started with. */
  const bool any = nx > 0 && ny > 0;
  cur += pix_off;
  ref += pix_off;
  if (N == 1 && !any) {
    /* CTA-uniform: leave at once (keeps the common path lean). */
    if (tid == 0) mvs[blk_off + blockIdx.y * pl.bw + blockIdx.x] = c63_mv{0, 0, 1, 0};
    return;
  }

  /* Stage the window: rows [top, top + rows), words from the 4-aligned
   * column at or left of `left`. Pixels outside the plane read as zero;
   * no valid candidate touches them, they only keep the loads in bounds. */
  const int groups = any ? (ny + G - 1) / G : 0;
  const int rows = groups * G + 7;
  const int wx0 = left & ~3;
  const int off0 = left - wx0;
  const int words = any ? ((off0 + nx - 1) >> 2) + 3 : 1;
  if (any) {
    /* Each thread keeps one word column and strides down the rows: one
     * division per thread instead of one per word. tpb >= words holds for
     * every range (the launcher sizes groups by 2 * range). */
    const int c = tid % words, rstep = tpb / words;
    const int x = wx0 + 4 * c;
    if (tid < rstep * words) {
      for (int r = tid / words; r < rows; r += rstep) {
        const int y = top + r;
        uint32_t v = 0;
        if (y < h && x < w) v = *reinterpret_cast<const uint32_t *>(ref + (size_t)y * w + x);
        win[r * words + c] = v;
      }
    }
  }
  if (tid < 16) {
    const int j = tid >> 1;
    cur_s[sub][tid] =
        *reinterpret_cast<const uint32_t *>(cur + (size_t)(my + j) * w + mx + 4 * (tid & 1));
  }
  __syncthreads();

  uint32_t cw[16];
#pragma unroll
  for (int i = 0; i < 16; i++)
    cw[i] = cur_s[sub][i];

  uint32_t best = 0xffffffffu;
  const int items = nx * groups;
  for (int item = tid; item < items; item += tpb) {
    /* Consecutive threads take consecutive columns: their window reads
     * share words (broadcast), no bank conflicts. */
    const int g = item / nx, c = item - g * nx;
    const int col = off0 + c;
    const uint32_t sel = 0x3210u + 0x1111u * (uint32_t)(col & 3);
    const uint32_t *p = win + g * G * words + (col >> 2);
    uint32_t sad[G];
#pragma unroll
    for (int k = 0; k < G; k++)
      sad[k] = 0;
#pragma unroll
    for (int r = 0; r < G + 7; r++) {
      const uint32_t a = p[r * words], b = p[r * words + 1], d = p[r * words + 2];
      const uint32_t lo = __byte_perm(a, b, sel), hi = __byte_perm(b, d, sel);
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
    /* Keys: sad * 2^14 + raster index (multiply-adds, off the ALU pipe the
     * SADs need); only the last row group can hold rows past the window. */
    const uint32_t base = (uint32_t)(g * G * nx + c);
    if (g * G + G <= ny) {
#pragma unroll
      for (int k = 0; k < G; k++)
        best = min(best, sad[k] * (1u << kIndexBits) + base + (uint32_t)(k * nx));
    } else {
#pragma unroll
      for (int k = 0; k < G; k++)
        if (g * G + k < ny)
          best = min(best, sad[k] * (1u << kIndexBits) + base + (uint32_t)(k * nx));
    }
  }

  best = warp_min(best);
  if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = best;
  __syncthreads();
  if (tid == 0) {
    const int w0 = threadIdx.x >> 5, nw = tpb >> 5;
    for (int i = 1; i < nw; i++)
      best = min(best, red[w0 + i]);
    c63_mv mv{0, 0, 1, 0};
    if (any) {
      const int idx = (int)(best & ((1u << kIndexBits) - 1));
      const int dy = idx / nx, dx = idx - dy * nx;
      mv.x = (int8_t)(left + dx - mx);
      mv.y = (int8_t)(top + dy - my);
    }
    mvs[blk_off + blockIdx.y * pl.bw + blockIdx.x] = mv;
  }
}

template <int G>
cudaError_t launch(const uint8_t *cur, const uint8_t *ref, const me_planes &mp, c63_mv *mvs,
                   cudaStream_t s)
{
  const c63_cu_plane &pl = mp.pl;
  if (pl.bw <= 0 || pl.bh <= 0) return cudaSuccess;
  const int range = pl.range < 0 ? 0 : pl.range;
  /* The packed key holds raster indices below (2 * 64)^2 only. */
  if (range > 64) return cudaErrorInvalidValue;
  const window_shape ws = max_window(range, G);
  const int win_words = ws.rows * ws.words;
  const size_t shmem = (size_t)mp.n * win_words * sizeof(uint32_t);
  /* Enough threads for every (column, row group) item of an unclipped block,
   * in whole warps; wider ranges loop. */
  const int items = 2 * range * ((2 * range + G - 1) / G);
  int threads = (items + 31) / 32 * 32;
  if (threads < 32) threads = 32;
  if (threads > me_bounds<G>::threads / mp.n) threads = me_bounds<G>::threads / mp.n;
  if (mp.n == 2)
    me_kernel<G, 2><<<dim3(pl.bw, pl.bh), threads * 2, shmem, s>>>(cur, ref, mp, win_words, mvs);
  else
    me_kernel<G, 1><<<dim3(pl.bw, pl.bh), threads, shmem, s>>>(cur, ref, mp, win_words, mvs);
  return cudaGetLastError();
}

} // namespace

/* Luma: 32 candidate rows per thread, so at the default range one warp
 * searches a block, each thread a whole column of candidates. A thread's
 * fixed costs (setup, its share of staging the window, the reduction) then
 * spread over 512 VABSDIFF4 instead of 128: on an H200 with 8 rows per
 * thread (four warps a block) only a quarter of the instructions executed
 * were VABSDIFF4. */
cudaError_t c63_cu_motion_search(const uint8_t *cur, const uint8_t *ref, const c63_cu_plane &pl,
                                 c63_mv *mvs, cudaStream_t s)
{
  me_planes mp;
  mp.pl = pl;
  mp.n = 1;
  mp.pix_off[0] = mp.pix_off[1] = pl.pix_off;
  mp.blk_off[0] = mp.blk_off[1] = pl.blk_off;
  return launch<32>(cur, ref, mp, mvs, s);
}

cudaError_t c63_cu_motion_search_pair(const uint8_t *cur, const uint8_t *ref, const c63_cu_plane &a,
                                      const c63_cu_plane &b, c63_mv *mvs, cudaStream_t s)
{
  if (a.w != b.w || a.h != b.h || a.bw != b.bw || a.bh != b.bh || a.range != b.range) {
    cudaError_t err = c63_cu_motion_search(cur, ref, a, mvs, s);
    return err == cudaSuccess ? c63_cu_motion_search(cur, ref, b, mvs, s) : err;
  }
  me_planes mp;
  mp.pl = a;
  mp.n = 2;
  mp.pix_off[0] = a.pix_off;
  mp.pix_off[1] = b.pix_off;
  mp.blk_off[0] = a.blk_off;
  mp.blk_off[1] = b.blk_off;
  return launch<8>(cur, ref, mp, mvs, s);
}
