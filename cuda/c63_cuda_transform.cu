/* Motion compensation, forward transform + quantisation, and dequantisation +
 * inverse transform + reconstruction on the GPU, bit-exact with the C oracle
 * (docs/format.md section 5).
 *
 * Exactness: every product and sum is one IEEE single-precision operation in
 * the reference's order (__fmul_rn/__fadd_rn, which nvcc never contracts into
 * an FMA; the build adds -fmad=false as well); quantisation divides in double
 * like the reference. Dequantisation is exact in integers: q * quant fits a
 * float exactly, so round(q * quant / 4.0) is the integer quotient rounded
 * half away from zero.
 *
 * Layout: one thread per block row, 32 blocks per CTA of 256 threads. A
 * thread does a whole 1-D pass in registers with the cosine table as
 * constant-bank operands (the unrolled loops index it at compile time), so
 * shared memory only carries the transpose between the two passes: on an
 * H200 the thread-per-pixel version of these kernels was bound by shared
 * loads (the table and the other pass's inputs, 32 per output).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "c63/quantise.h"
#include "cuda/c63_cuda_dct.cuh"
#include "cuda/c63_cuda_internal.h"

namespace
{

/* 32 blocks a CTA rather than 16: each CTA first builds its quantiser
 * tables, and 16 blocks a CTA ran 1.3% slower (library, H100, 1080p). */
constexpr int kBlocksPerCta = 32;
constexpr int kThreads = 8 * kBlocksPerCta;

/* Per CTA: for each plane and position (v, u) of a block, the zig-zag index
 * z (low byte) and the quantiser quant[z] (high byte), and 1 / (4 quant[z])
 * in float for c63_quantise_value (0 for a zero quantiser, which it hands
 * to the reference expression). */
struct tables {
  uint16_t zq[3][64];
  float inv4q[3][64];
};

__device__ __forceinline__ void load_tables(tables &t, const c63_cu_planes &P)
{
  for (int i = threadIdx.x; i < 3 * 64; i += blockDim.x) {
    const int p = i >> 6, vu = i & 63, z = kZigzagIndex[vu];
    if (p < P.n) {
      const int q = P.p[p].quant[z];
      t.zq[p][vu] = (uint16_t)(z | q << 8);
      t.inv4q[p][vu] = q ? 1.0f / (float)(4 * q) : 0.0f;
    }
  }
}

/* Block gb of the frame: its plane and the offset of its top-left pixel. */
struct block_pos {
  int plane, w, h, x, y, index;
};

__device__ __forceinline__ block_pos locate(const c63_cu_planes &P, int gb)
{
  const c63_cu_block k = c63_cu_locate(P, gb);
  const c63_cu_plane &pl = P.p[k.plane];
  block_pos r;
  r.plane = k.plane;
  r.w = pl.w;
  r.h = pl.h;
  r.x = k.bx * 8;
  r.y = k.by * 8;
  r.index = pl.pix_off + r.y * pl.w + r.x;
  return r;
}

/* Row `row` of the block's prediction: ref displaced by the block's vector,
 * zero for intra blocks (or no ref). Read as the reference reads it, from
 * ref[(y + mv_y) * w + x + mv_x], so a vector past the left or right edge
 * goes on in the neighbouring row (the decoder accepts those while the reads
 * stay in the plane); any other vector predicts zero rather than read
 * outside the buffer. */
__device__ __forceinline__ void predict_row(const uint8_t *ref, const c63_mv *mvs, int gb,
                                            const c63_cu_planes &P, const block_pos &bp, int row,
                                            int out[8])
{
#pragma unroll
  for (int i = 0; i < 8; i++)
    out[i] = 0;
  if (!mvs || !ref) return;
  const c63_mv mv = mvs[gb];
  if (!mv.use_mv || !c63_mv_reads_inside(bp.w, bp.h, bp.x / 8, bp.y / 8, mv.x, mv.y)) return;
  const uint8_t *src = ref + P.p[bp.plane].pix_off + (bp.y + mv.y + row) * bp.w + bp.x + mv.x;
#pragma unroll
  for (int i = 0; i < 8; i++)
    out[i] = src[i];
}

__global__ void __launch_bounds__(kThreads)
    mc_kernel(const uint8_t *__restrict__ ref, const c63_mv *__restrict__ mvs, c63_cu_planes P,
              uint8_t *__restrict__ pred)
{
  const int gb = blockIdx.x * kBlocksPerCta + (threadIdx.x >> 3), row = threadIdx.x & 7;
  if (gb >= P.total_blocks) return;
  const block_pos bp = locate(P, gb);
  int px[8];
  predict_row(ref, mvs, gb, P, bp, row, px);
  store_row(pred + bp.index + row * bp.w, px);
}

/* The forward half: compensation, DCT and quantisation of the block row
 * (and, after the transpose, column) this thread owns. Writes the block's
 * coefficients in zig-zag order and returns this thread's column u = r of
 * quantised values in q[v] and row r of the prediction in pred (packed
 * bytes). Every thread of the CTA calls it (inactive ones too, for the
 * barriers). */
__device__ __forceinline__ void
fdct_quant_block(const tables &tb, float (*buf)[8][9], const uint8_t *cur, const uint8_t *ref,
                 const c63_mv *mvs, const c63_cu_planes &P, int16_t *coeffs, int lb, int r, int gb,
                 bool active, const block_pos &bp, int q[8], uint2 &pred)
{
  float x[8], t[8];
  pred = make_uint2(0, 0);
  if (active) {
    int c[8], pr[8];
    load_row(cur + bp.index + r * bp.w, c);
    predict_row(ref, mvs, gb, P, bp, r, pr);
    pred = pack_row(pr);
#pragma unroll
    for (int i = 0; i < 8; i++)
      x[i] = (float)(int16_t)(c[i] - pr[i]);
  } else {
#pragma unroll
    for (int i = 0; i < 8; i++)
      x[i] = 0.0f;
  }
  /* Rows: t[y][i] = sum_j r[y][j] * C[j][i]; this thread is row y = r. */
  pass_1d<false>(x, t);
#pragma unroll
  for (int i = 0; i < 8; i++)
    buf[lb][r][i] = t[i];
  __syncthreads();
  /* Columns: X[v][u] = sum_j t[j][u] * C[j][v]; this thread is column u = r. */
  const int u = r;
#pragma unroll
  for (int j = 0; j < 8; j++)
    x[j] = buf[lb][j][u];
  pass_1d<false>(x, t);
  const float au = u == 0 ? kIsqrt2 : 1.0f;
  const int plane = active ? bp.plane : 0;
  const int lim = P.p[plane].ac_limit;
  int16_t *out = coeffs + (size_t)gb * 64;
#pragma unroll
  for (int v = 0; v < 8; v++) {
    /* Scale: (X * a(u)) * a(v), then quantise to the reference's integers
     * (c63/quantise.h). */
    const float xs = __fmul_rn(__fmul_rn(t[v], au), v == 0 ? kIsqrt2 : 1.0f);
    const int zq = tb.zq[plane][v * 8 + u], z = zq & 0xff;
    int qv = c63_quantise_value(xs, zq >> 8, tb.inv4q[plane][v * 8 + u]);
    if (z > 0) qv = qv > lim ? lim : (qv < -lim ? -lim : qv);
    q[v] = (int16_t)qv;
    if (active) out[z] = (int16_t)qv;
  }
}

/* The inverse half: dequantisation, IDCT, prediction added and clamped, for
 * block row r. coef(v, u) gives the quantised coefficient at row v, column
 * u; pred, where not null, is the row's prediction (packed bytes) that the
 * forward half read, which saves reading it again. Every thread of the CTA
 * calls it. */
template <typename Coef>
__device__ __forceinline__ void
recon_block(const tables &tb, float (*buf)[8][9], Coef coef, const uint8_t *ref, const c63_mv *mvs,
            const c63_cu_planes &P, uint8_t *recon, int lb, int r, int gb, bool active,
            const block_pos &bp, const uint2 *pred)
{
  float y[8], t[8];
  if (active) {
    const int v = r;
#pragma unroll
    for (int u = 0; u < 8; u++)
      y[u] = dequant_scaled(coef(v, u), tb.zq[bp.plane][v * 8 + u] >> 8, u, v);
  } else {
#pragma unroll
    for (int u = 0; u < 8; u++)
      y[u] = 0.0f;
  }
  /* Rows: t[v][i] = sum_j Y[v][j] * C[i][j]; this thread is row v = r. */
  pass_1d<true>(y, t);
#pragma unroll
  for (int i = 0; i < 8; i++)
    buf[lb][r][i] = t[i];
  __syncthreads();
  /* Columns: out[v][u] = sum_j t[j][u] * C[v][j]; this thread is column u = r. */
#pragma unroll
  for (int j = 0; j < 8; j++)
    y[j] = buf[lb][j][r];
  pass_1d<true>(y, t);
  __syncthreads(); /* every column is read before buf is reused */
  /* Truncate toward zero to int16 (saturating, like the oracle: only corrupt
   * coefficients leave that range); transpose back through buf so each
   * thread writes one row of 8 pixels at once. */
#pragma unroll
  for (int v = 0; v < 8; v++)
    buf[lb][v][r] = __int_as_float(truncate_sample(t[v]));
  __syncthreads();
  if (!active) return;
  int pr[8], px[8];
  if (pred)
    unpack_row(*pred, pr); /* the forward half's prediction of this row */
  else
    predict_row(ref, mvs, gb, P, bp, r, pr);
#pragma unroll
  for (int i = 0; i < 8; i++)
    px[i] = reconstruct_pixel(__float_as_int(buf[lb][r][i]), pr[i]);
  store_row(recon + bp.index + r * bp.w, px);
}

/* The CTA's 16 blocks: this thread's block, row, and whether it exists. */
struct thread_block {
  int lb, r, gb;
  bool active;
  block_pos bp;
};

__device__ __forceinline__ thread_block this_block(const c63_cu_planes &P)
{
  thread_block b;
  b.lb = threadIdx.x >> 3;
  b.r = threadIdx.x & 7;
  b.gb = blockIdx.x * kBlocksPerCta + b.lb;
  b.active = b.gb < P.total_blocks;
  b.bp = b.active ? locate(P, b.gb) : block_pos{};
  return b;
}

__global__ void __launch_bounds__(kThreads)
    fdct_quant_kernel(const uint8_t *__restrict__ cur, const uint8_t *__restrict__ ref,
                      const c63_mv *__restrict__ mvs, c63_cu_planes P, int16_t *__restrict__ coeffs)
{
  __shared__ tables tb;
  __shared__ float buf[kBlocksPerCta][8][9]; /* +1 column: fewer bank conflicts */
  load_tables(tb, P);
  const thread_block b = this_block(P);
  int q[8];
  uint2 pred;
  fdct_quant_block(tb, buf, cur, ref, mvs, P, coeffs, b.lb, b.r, b.gb, b.active, b.bp, q, pred);
}

__global__ void __launch_bounds__(kThreads)
    recon_kernel(const int16_t *__restrict__ coeffs, const uint8_t *__restrict__ ref,
                 const c63_mv *__restrict__ mvs, c63_cu_planes P, uint8_t *__restrict__ recon)
{
  __shared__ tables tb;
  __shared__ float buf[kBlocksPerCta][8][9];
  load_tables(tb, P);
  __syncthreads();
  const thread_block b = this_block(P);
  const int16_t *in = coeffs + (size_t)b.gb * 64;
  const int plane = b.bp.plane;
  auto coef = [&](int v, int u) { return (int)in[tb.zq[plane][v * 8 + u] & 0xff]; };
  recon_block(tb, buf, coef, ref, mvs, P, recon, b.lb, b.r, b.gb, b.active, b.bp, nullptr);
}

/* Both halves in one pass: the quantised block goes from the forward half
 * to the inverse one through shared memory instead of a round trip through
 * the coefficient buffer and a second launch. */
__global__ void __launch_bounds__(kThreads)
    fdct_quant_recon_kernel(const uint8_t *__restrict__ cur, const uint8_t *__restrict__ ref,
                            const c63_mv *__restrict__ mvs, c63_cu_planes P,
                            int16_t *__restrict__ coeffs, uint8_t *__restrict__ recon)
{
  __shared__ tables tb;
  __shared__ float buf[kBlocksPerCta][8][9];
  __shared__ int16_t qs[kBlocksPerCta][8][8];
  load_tables(tb, P);
  const thread_block b = this_block(P);
  int q[8];
  uint2 pred;
  fdct_quant_block(tb, buf, cur, ref, mvs, P, coeffs, b.lb, b.r, b.gb, b.active, b.bp, q, pred);
#pragma unroll
  for (int v = 0; v < 8; v++)
    qs[b.lb][v][b.r] = (int16_t)q[v];
  __syncthreads(); /* qs written, and buf free again */
  const int lb = b.lb;
  auto coef = [&](int v, int u) { return (int)qs[lb][v][u]; };
  recon_block(tb, buf, coef, ref, mvs, P, recon, b.lb, b.r, b.gb, b.active, b.bp, &pred);
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

cudaError_t c63_cu_fdct_quant_recon(const uint8_t *cur, const uint8_t *ref, const c63_mv *mvs,
                                    const c63_cu_planes &P, int16_t *coeffs, uint8_t *recon,
                                    cudaStream_t s)
{
  if (P.total_blocks <= 0) return cudaSuccess;
  fdct_quant_recon_kernel<<<ctas(P), kThreads, 0, s>>>(cur, ref, mvs, P, coeffs, recon);
  return cudaGetLastError();
}

cudaError_t c63_cu_dequant_idct_recon(const int16_t *coeffs, const uint8_t *ref, const c63_mv *mvs,
                                      const c63_cu_planes &P, uint8_t *recon, cudaStream_t s)
{
  if (P.total_blocks <= 0) return cudaSuccess;
  recon_kernel<<<ctas(P), kThreads, 0, s>>>(coeffs, ref, mvs, P, recon);
  return cudaGetLastError();
}
