/* Motion compensation, forward transform + quantisation, and dequantisation +
 * inverse transform + reconstruction on the GPU, bit-exact with the C oracle
 * (c63-format.md section 5).
 *
 * Exactness: every product and sum is one IEEE single-precision operation in
 * the reference's order (__fmul_rn/__fadd_rn, which nvcc never contracts into
 * an FMA; the build adds -fmad=false as well); quantisation divides in double
 * like the reference. Dequantisation is exact in integers: q * quant fits a
 * float exactly, so round(q * quant / 4.0) is the integer quotient rounded
 * half away from zero.
 *
 * Layout: a CTA of 256 threads works on 4 blocks, one thread per pixel or
 * coefficient; the 1-D passes go through shared memory.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "cuda/c63_cuda_internal.h"

namespace
{

constexpr int kBlocksPerCta = 4;
constexpr int kThreads = 64 * kBlocksPerCta;

/* c63_dct_lookup: the reference's 6-decimal float literals, row j. */
__constant__ float kDct[64] = {
    1.0f, 0.980785f,  0.923880f,  0.831470f,  0.707107f,  0.555570f,  0.382683f,  0.195090f,
    1.0f, 0.831470f,  0.382683f,  -0.195090f, -0.707107f, -0.980785f, -0.923880f, -0.555570f,
    1.0f, 0.555570f,  -0.382683f, -0.980785f, -0.707107f, 0.195090f,  0.923880f,  0.831470f,
    1.0f, 0.195090f,  -0.923880f, -0.555570f, 0.707107f,  0.831470f,  -0.382683f, -0.980785f,
    1.0f, -0.195090f, -0.923880f, 0.555570f,  0.707107f,  -0.831470f, -0.382683f, 0.980785f,
    1.0f, -0.555570f, -0.382683f, 0.980785f,  -0.707107f, -0.195090f, 0.923880f,  -0.831470f,
    1.0f, -0.831470f, 0.382683f,  0.195090f,  -0.707107f, 0.980785f,  -0.923880f, 0.555570f,
    1.0f, -0.980785f, 0.923880f,  -0.831470f, 0.707107f,  -0.555570f, 0.382683f,  -0.195090f,
};

/* Zig-zag index of the coefficient at row v, column u (index v * 8 + u):
 * the inverse of the format's zig-zag (u, v) lists. */
__constant__ uint8_t kZigzagIndex[64] = {
    0,  1,  5,  6,  14, 15, 27, 28, 2,  4,  7,  13, 16, 26, 29, 42, 3,  8,  12, 17, 25, 30,
    41, 43, 9,  11, 18, 24, 31, 40, 44, 53, 10, 19, 23, 32, 39, 45, 52, 54, 20, 22, 33, 38,
    46, 51, 55, 60, 21, 34, 37, 47, 50, 56, 59, 61, 35, 36, 48, 49, 57, 58, 62, 63,
};

constexpr float kIsqrt2 = 0.70710678118654f;

/* What every transform CTA stages first: the cosine table, the zig-zag
 * indices and the quantiser tables of all planes (a CTA's 4 blocks may
 * straddle a plane boundary). Shared memory avoids the serialisation of
 * divergent constant-memory reads. */
struct tables {
  float dct[64];
  uint8_t zz[64];
  uint8_t quant[3][64];
};

__device__ __forceinline__ void load_tables(tables &t, const c63_cu_planes &P)
{
  const int i = threadIdx.x;
  if (i < 64) {
    t.dct[i] = kDct[i];
    t.zz[i] = kZigzagIndex[i];
  } else if (i < 64 + 3 * 64) {
    const int p = (i - 64) >> 6;
    if (p < P.n) t.quant[p][i & 63] = P.p[p].quant[i & 63];
  }
}

/* Where thread (ty, tx) of block gb works. */
struct pixel_pos {
  int plane;
  int index; /* pixel offset in a frame buffer */
  int w, h, x, y;
};

__device__ __forceinline__ pixel_pos locate(const c63_cu_planes &P, int gb, int ty, int tx)
{
  int p = 0;
  if (P.n > 1 && gb >= P.p[1].blk_off) p = 1;
  if (P.n > 2 && gb >= P.p[2].blk_off) p = 2;
  const c63_cu_plane &pl = P.p[p];
  const int b = gb - pl.blk_off;
  const int by = b / pl.bw, bx = b - by * pl.bw;
  pixel_pos r;
  r.plane = p;
  r.w = pl.w;
  r.h = pl.h;
  r.x = bx * 8 + tx;
  r.y = by * 8 + ty;
  r.index = pl.pix_off + r.y * pl.w + r.x;
  return r;
}

/* The prediction of one pixel: ref displaced by the block's vector, zero for
 * intra blocks. Vectors from the search always stay inside the plane; any
 * other vector reads zero rather than outside the buffer. */
__device__ __forceinline__ int predict(const uint8_t *ref, const c63_mv *mvs, int gb,
                                       const c63_cu_planes &P, const pixel_pos &pp)
{
  if (!mvs || !ref) return 0;
  const c63_mv mv = mvs[gb];
  if (!mv.use_mv) return 0;
  const int x = pp.x + mv.x, y = pp.y + mv.y;
  if (x < 0 || y < 0 || x >= pp.w || y >= pp.h) return 0;
  return ref[P.p[pp.plane].pix_off + y * pp.w + x];
}

__global__ void __launch_bounds__(kThreads)
    mc_kernel(const uint8_t *__restrict__ ref, const c63_mv *__restrict__ mvs, c63_cu_planes P,
              uint8_t *__restrict__ pred)
{
  const int gb = blockIdx.x * kBlocksPerCta + (threadIdx.x >> 6);
  if (gb >= P.total_blocks) return;
  const int t = threadIdx.x & 63;
  const pixel_pos pp = locate(P, gb, t >> 3, t & 7);
  pred[pp.index] = (uint8_t)predict(ref, mvs, gb, P, pp);
}

__global__ void __launch_bounds__(kThreads)
    fdct_quant_kernel(const uint8_t *__restrict__ cur, const uint8_t *__restrict__ ref,
                      const c63_mv *__restrict__ mvs, c63_cu_planes P, int16_t *__restrict__ coeffs)
{
  __shared__ tables tb;
  __shared__ float buf[kBlocksPerCta][8][9]; /* +1 column: no bank conflicts */
  load_tables(tb, P);

  const int lb = threadIdx.x >> 6, t = threadIdx.x & 63, ty = t >> 3, tx = t & 7;
  const int gb = blockIdx.x * kBlocksPerCta + lb;
  const bool active = gb < P.total_blocks;
  pixel_pos pp{};
  float r = 0.0f;
  if (active) {
    pp = locate(P, gb, ty, tx);
    const int16_t res = (int16_t)(cur[pp.index] - predict(ref, mvs, gb, P, pp));
    r = (float)res;
  }
  buf[lb][ty][tx] = r;
  __syncthreads();

  /* Rows: t[y][i] = sum_j r[y][j] * C[j][i], j ascending. */
  float acc = 0.0f;
#pragma unroll
  for (int j = 0; j < 8; j++)
    acc = __fadd_rn(acc, __fmul_rn(buf[lb][ty][j], tb.dct[j * 8 + tx]));
  __syncthreads();
  buf[lb][ty][tx] = acc;
  __syncthreads();
  /* Columns: X[v][u] = sum_j t[j][u] * C[j][v]. */
  acc = 0.0f;
#pragma unroll
  for (int j = 0; j < 8; j++)
    acc = __fadd_rn(acc, __fmul_rn(buf[lb][j][tx], tb.dct[j * 8 + ty]));
  if (!active) return;

  /* Scale: (X * a(u)) * a(v), then quantise in double like the reference. */
  const float x = __fmul_rn(__fmul_rn(acc, tx == 0 ? kIsqrt2 : 1.0f), ty == 0 ? kIsqrt2 : 1.0f);
  const int z = tb.zz[ty * 8 + tx];
  const double d = ((double)x / 4.0) / (double)tb.quant[pp.plane][z];
  int q = (int)(float)round(d);
  if (z > 0) {
    const int lim = P.p[pp.plane].ac_limit;
    q = q > lim ? lim : (q < -lim ? -lim : q);
  }
  coeffs[(size_t)gb * 64 + z] = (int16_t)q;
}

__global__ void __launch_bounds__(kThreads)
    recon_kernel(const int16_t *__restrict__ coeffs, const uint8_t *__restrict__ ref,
                 const c63_mv *__restrict__ mvs, c63_cu_planes P, uint8_t *__restrict__ recon)
{
  __shared__ tables tb;
  __shared__ float buf[kBlocksPerCta][8][9];
  load_tables(tb, P);
  __syncthreads();

  const int lb = threadIdx.x >> 6, t = threadIdx.x & 63, ty = t >> 3, tx = t & 7;
  const int gb = blockIdx.x * kBlocksPerCta + lb;
  const bool active = gb < P.total_blocks;
  pixel_pos pp{};
  float y = 0.0f;
  if (active) {
    pp = locate(P, gb, ty, tx);
    const int z = tb.zz[ty * 8 + tx];
    /* round((q * quant) / 4.0), half away from zero, exactly. */
    const int prod = (int)coeffs[(size_t)gb * 64 + z] * (int)tb.quant[pp.plane][z];
    const int deq = prod >= 0 ? (prod + 2) >> 2 : -((-prod + 2) >> 2);
    y = __fmul_rn(__fmul_rn((float)deq, tx == 0 ? kIsqrt2 : 1.0f), ty == 0 ? kIsqrt2 : 1.0f);
  }
  buf[lb][ty][tx] = y;
  __syncthreads();

  /* Rows: t[y][i] = sum_j Y[y][j] * C[i][j]. */
  float acc = 0.0f;
#pragma unroll
  for (int j = 0; j < 8; j++)
    acc = __fadd_rn(acc, __fmul_rn(buf[lb][ty][j], tb.dct[tx * 8 + j]));
  __syncthreads();
  buf[lb][ty][tx] = acc;
  __syncthreads();
  /* Columns: out[v][u] = sum_j t[j][u] * C[v][j]. */
  acc = 0.0f;
#pragma unroll
  for (int j = 0; j < 8; j++)
    acc = __fadd_rn(acc, __fmul_rn(buf[lb][j][tx], tb.dct[ty * 8 + j]));
  if (!active) return;

  /* Truncate toward zero to int16 (saturating, like the oracle: only corrupt
   * coefficients leave that range), add the prediction, clamp. */
  const int res = min(max(__float2int_rz(acc), -32768), 32767);
  const int v = res + predict(ref, mvs, gb, P, pp);
  recon[pp.index] = (uint8_t)(v < 0 ? 0 : (v > 255 ? 255 : v));
}

int ctas(const c63_cu_planes &P)
{
  return (P.total_blocks + kBlocksPerCta - 1) / kBlocksPerCta;
}

} // namespace

cudaError_t c63_cu_motion_compensate(const uint8_t *ref, const c63_mv *mvs, const c63_cu_planes &P,
                                     uint8_t *pred, cudaStream_t s)
{
  if (P.total_blocks <= 0) return cudaSuccess;
  mc_kernel<<<ctas(P), kThreads, 0, s>>>(ref, mvs, P, pred);
  return cudaGetLastError();
}

cudaError_t c63_cu_fdct_quant(const uint8_t *cur, const uint8_t *ref, const c63_mv *mvs,
                              const c63_cu_planes &P, int16_t *coeffs, cudaStream_t s)
{
  if (P.total_blocks <= 0) return cudaSuccess;
  fdct_quant_kernel<<<ctas(P), kThreads, 0, s>>>(cur, ref, mvs, P, coeffs);
  return cudaGetLastError();
}

cudaError_t c63_cu_dequant_idct_recon(const int16_t *coeffs, const uint8_t *ref, const c63_mv *mvs,
                                      const c63_cu_planes &P, uint8_t *recon, cudaStream_t s)
{
  if (P.total_blocks <= 0) return cudaSuccess;
  recon_kernel<<<ctas(P), kThreads, 0, s>>>(coeffs, ref, mvs, P, recon);
  return cudaGetLastError();
}
