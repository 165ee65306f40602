/* Full-search motion estimation on the GPU, bit-exact with the reference
 * (c63-format.md section 3: exclusive right/bottom bounds, strict < in
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
 *    raster order, exactly the reference's strict < tie-break.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "cuda/c63_cuda_internal.h"

namespace
{

constexpr int kMaxThreads = 256;
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

template <int G>
__global__ void __launch_bounds__(kMaxThreads)
    me_kernel(const uint8_t *__restrict__ cur, const uint8_t *__restrict__ ref, c63_cu_plane pl,
              c63_mv *__restrict__ mvs)
{
  extern __shared__ uint32_t win[];
  __shared__ uint32_t cur_s[16];
  __shared__ uint32_t red[kMaxThreads / 32];

  const int w = pl.w, h = pl.h, range = pl.range;
  const int mx = blockIdx.x * 8, my = blockIdx.y * 8;
  const int left = max(0, mx - range), right = min(w - 8, mx + range);
  const int top = max(0, my - range), bottom = min(h - 8, my + range);
  const int nx = right - left, ny = bottom - top;
  c63_mv *out = mvs + pl.blk_off + blockIdx.y * pl.bw + blockIdx.x;
  cur += pl.pix_off;
  ref += pl.pix_off;

  if (nx <= 0 || ny <= 0) {
    /* No candidate at all (tiny planes, range 0): the reference keeps the
     * zero vector it started with. */
    if (threadIdx.x == 0) *out = c63_mv{0, 0, 1, 0};
    return;
  }

  /* Stage the window: rows [top, top + rows), words from the 4-aligned
   * column at or left of `left`. Pixels outside the plane read as zero;
   * no valid candidate touches them, they only keep the loads in bounds. */
  const int groups = (ny + G - 1) / G;
  const int rows = groups * G + 7;
  const int wx0 = left & ~3;
  const int off0 = left - wx0;
  const int words = ((off0 + nx - 1) >> 2) + 3;
  {
    /* Each thread keeps one word column and strides down the rows: one
     * division per thread instead of one per word. blockDim >= words holds
     * for every range (the launcher sizes CTAs by 2 * range). */
    const int c = threadIdx.x % words, rstep = blockDim.x / words;
    const int x = wx0 + 4 * c;
    if ((int)threadIdx.x < rstep * words) {
      for (int r = threadIdx.x / words; r < rows; r += rstep) {
        const int y = top + r;
        uint32_t v = 0;
        if (y < h && x < w) v = *reinterpret_cast<const uint32_t *>(ref + (size_t)y * w + x);
        win[r * words + c] = v;
      }
    }
  }
  if (threadIdx.x < 16) {
    int j = threadIdx.x >> 1;
    cur_s[threadIdx.x] = *reinterpret_cast<const uint32_t *>(cur + (size_t)(my + j) * w + mx +
                                                             4 * (threadIdx.x & 1));
  }
  __syncthreads();

  uint32_t cw[16];
#pragma unroll
  for (int i = 0; i < 16; i++)
    cw[i] = cur_s[i];

  uint32_t best = 0xffffffffu;
  const int items = nx * groups;
  for (int item = threadIdx.x; item < items; item += blockDim.x) {
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
#pragma unroll
    for (int k = 0; k < G; k++) {
      const int dy = g * G + k;
      if (dy < ny) best = min(best, (sad[k] << kIndexBits) | (uint32_t)(dy * nx + c));
    }
  }

  best = warp_min(best);
  if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = best;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int i = 1; i < (int)(blockDim.x + 31) / 32; i++)
      best = min(best, red[i]);
    const int idx = (int)(best & ((1u << kIndexBits) - 1));
    const int dy = idx / nx, dx = idx - dy * nx;
    *out = c63_mv{(int8_t)(left + dx - mx), (int8_t)(top + dy - my), 1, 0};
  }
}

template <int G>
cudaError_t launch(const uint8_t *cur, const uint8_t *ref, const c63_cu_plane &pl, int range,
                   c63_mv *mvs, cudaStream_t s)
{
  const window_shape ws = max_window(range, G);
  const size_t shmem = (size_t)ws.rows * ws.words * sizeof(uint32_t);
  /* Enough threads for every (column, row group) item of an unclipped block,
   * in whole warps; wider ranges loop. */
  const int items = 2 * range * ((2 * range + G - 1) / G);
  int threads = (items + 31) / 32 * 32;
  if (threads < 32) threads = 32;
  if (threads > kMaxThreads) threads = kMaxThreads;
  me_kernel<G><<<dim3(pl.bw, pl.bh), threads, shmem, s>>>(cur, ref, pl, mvs);
  return cudaGetLastError();
}

} // namespace

cudaError_t c63_cu_motion_search(const uint8_t *cur, const uint8_t *ref, const c63_cu_plane &pl,
                                 c63_mv *mvs, cudaStream_t s)
{
  if (pl.bw <= 0 || pl.bh <= 0) return cudaSuccess;
  const int range = pl.range < 0 ? 0 : pl.range;
  /* The packed key holds raster indices below (2 * 64)^2 only. */
  if (range > 64) return cudaErrorInvalidValue;
  /* 8 rows per thread: measured on an H200 (1080p, range 16), 16 rows gave
   * the same time; the ALU pipe (VABSDIFF4, PRMT) is the limit either way. */
  return launch<8>(cur, ref, pl, range, mvs, s);
}
