/* Motion compensation, forward transform + quantisation, and dequantisation +
 * inverse transform + reconstruction on the GPU, bit-exact with the C oracle
 * (docs/format.md section 5).
 *
 * Exactness: every product and sum is one IEEE single-precision operation in
 * the reference's order (__fmul_rn/__fadd_rn, which nvcc never contracts into
 * an FMA; the build adds -fmad=false as well); quantisation is exact in
 * float and integers (c63/quantise.h), dequantisation in integers
 * (dequant_scaled).
 *
 * Layout: two threads per 8x8 block, 64 blocks a CTA. Each pass is a loop
 * over the thread's four rows or columns of the block whose body is one 1-D
 * transform of 8 values, unrolled, so the cosine table is constant-bank
 * operands; the intermediate values, the levels and the pixels wait in
 * shared memory between the passes (laid out so that a warp's accesses fall
 * in distinct banks), which the two threads of a block, in one warp, share
 * (c63_cuda_transform_policy says why two).
 *
 * Reads of a displaced prediction take three aligned words per row, so a
 * reference must be followed by C63_CUDA_REF_TAIL readable bytes.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "c63/quantise.h"
#include "cuda/c63_cuda_dct.cuh"
#include "cuda/c63_cuda_internal.h"
#include "cuda/c63_cuda_policy.cuh"

namespace
{

/* Two threads a block, kBlocks blocks a CTA (c63_cuda_policy.cuh). */
constexpr int kBlocks = c63_cuda_transform_policy::kBlocks;
constexpr int kThreads = c63_cuda_transform_policy::kThreads;

/* For each plane and position v * 8 + u of a block: the quantiser, its
 * zig-zag index, and 1 / (4 quant) in float for the quantisation. */
struct coef_entry {
  float inv4q;
  uint16_t q, z;
};

/* A CTA's shared memory: the tables; each block's values in word columns
 * (element k of block b at [k][b ^ swizzle], see slots); and the levels,
 * a block's 64 in a row of 33 words (block b's row starts in bank b, and
 * the rows move to and from the coefficient buffer, where the CTA's blocks
 * lie back to back, in whole 16-byte pieces). */
struct cta_smem {
  coef_entry e[3][64];
  float t[64][kBlocks];       /* a pass's outputs, k = row * 8 + column */
  uint32_t cur[16][kBlocks];  /* the block's rows, packed bytes (k = 2 row + half) */
  uint32_t pred[16][kBlocks]; /* its prediction's rows, the same way */
  uint32_t lev[kBlocks][33];  /* levels by zig-zag index, two a word */
};

/* This thread's block in the CTA and its half of the work: rows, then
 * columns, 4 * half to 4 * half + 3. */
__device__ __forceinline__ int local_block()
{
  return threadIdx.x >> 1;
}
__device__ __forceinline__ int half()
{
  return threadIdx.x & 1;
}

/* The columns of the local block in the word-column arrays. A warp's 16
 * blocks fill half of the banks, and the two threads of a block touch, at
 * the same time, elements k whose parity (k >> 5 ^ k >> 2 for t: rows y and
 * y + 4, or columns u and u + 4; k >> 3 ^ k for the row words) differs: an
 * element of odd parity sits in column b ^ 16, in the other half. For this
 * thread's rows or columns that parity is its half, flipped for the other
 * half of the row or column (x below), so the two columns are set up once. */
struct slots {
  int s[2];
  __device__ __forceinline__ slots()
  {
    const int h = half();
    s[0] = local_block() ^ (h << 4);
    s[1] = local_block() ^ ((h ^ 1) << 4);
  }
  /* the column for elements of parity half() ^ x */
  __device__ __forceinline__ int operator()(int x) const
  {
    return s[x & 1];
  }
};

__device__ __forceinline__ void load_tables(cta_smem &sm, const c63_cuda_planes &P)
{
  for (int i = threadIdx.x; i < 3 * 64; i += blockDim.x) {
    const int p = i >> 6, vu = i & 63, v = vu >> 3, u = vu & 7;
    if (p < P.n) {
      const int z = zigzag(v, u), q = P.p[p].quant[z];
      sm.e[p][vu] = {__frcp_rn((float)(4 * q)), (uint16_t)q, (uint16_t)z};
    }
  }
  __syncthreads();
}

__device__ __forceinline__ int byte_of(uint32_t w, int i)
{
  return (w >> (8 * i)) & 0xff;
}

__device__ __forceinline__ int16_t *level_ptr(cta_smem &sm, int z)
{
  return reinterpret_cast<int16_t *>(sm.lev[local_block()]) + z;
}

/* Block gb of the frame: its plane, the offset of its top-left pixel in a
 * frame buffer, and the plane's size. */
struct block_at {
  int plane, w, h, bx, by, index;
  bool active; /* false past the frame's last block */
};

__device__ __forceinline__ block_at locate_block(const c63_cuda_planes &P, int gb)
{
  block_at b{};
  b.active = gb < P.total_blocks;
  if (!b.active) return b;
  const c63_cuda_block k = c63_cuda_locate(P, gb);
  const c63_cuda_plane &pl = P.p[k.plane];
  b.plane = k.plane;
  b.w = pl.w;
  b.h = pl.h;
  b.bx = k.bx;
  b.by = k.by;
  b.index = pl.pix_off + k.by * 8 * pl.w + k.bx * 8;
  return b;
}

/* Where the block's prediction starts in ref: displaced by the block's
 * vector, or NULL (a zero prediction) for intra blocks and no ref. Read as
 * the reference reads it, from ref[(y + mv_y) * w + x + mv_x], so a vector
 * past the left or right edge goes on in the neighbouring row (the decoder
 * accepts those while the reads stay in the plane); any other vector
 * predicts zero rather than read outside the buffer. */
__device__ __forceinline__ const uint8_t *prediction(const uint8_t *ref, const c63_mv *mvs, int gb,
                                                     const block_at &b)
{
  if (!b.active || !mvs || !ref) return nullptr;
  const c63_mv mv = mvs[gb];
  if (!mv.use_mv || !c63_mv_reads_inside(b.w, b.h, b.bx, b.by, mv.x, mv.y)) return nullptr;
  return ref + b.index + mv.y * b.w + mv.x;
}

/* This thread's half of the block's rows (cur, aligned; when kCur) and of
 * its prediction's rows (pred, any alignment; NULL: zeros) into shared
 * memory, all loads in flight at once, and the CTA's tables built while
 * they are (the barrier then waits for the tables alone). */
template <bool kCur>
__device__ __forceinline__ void stage_rows(cta_smem &sm, const c63_cuda_planes &P,
                                           const uint8_t *cur, const uint8_t *pred, int w)
{
  uint2 c[4], p[4];
  const int y0 = 4 * half();
#pragma unroll
  for (int i = 0; i < 4; i++) {
    const int y = y0 + i;
    c[i] = kCur && cur ? *reinterpret_cast<const uint2 *>(cur + y * w) : make_uint2(0, 0);
    p[i] = pred ? load_row_unaligned(pred + y * w) : make_uint2(0, 0);
  }
  load_tables(sm, P);
  const slots col; /* row word 2y + c, y in this half: parity half ^ c */
#pragma unroll
  for (int i = 0; i < 4; i++) {
    const int k = 2 * (y0 + i);
    if (kCur) {
      sm.cur[k][col(0)] = c[i].x;
      sm.cur[k + 1][col(1)] = c[i].y;
    }
    sm.pred[k][col(0)] = p[i].x;
    sm.pred[k + 1][col(1)] = p[i].y;
  }
}

/* A warp's 16 blocks' levels between shared memory and the coefficient
 * buffer, where they lie back to back: each lane moves 16-byte pieces,
 * consecutive lanes consecutive pieces. Only the warp's own blocks, so a
 * warp synchronises with itself alone. */
constexpr int kWarpBlocks = 16;

__device__ __forceinline__ void store_levels(cta_smem &sm, int16_t *coeffs, int total_blocks)
{
  __syncwarp(); /* the block's other half's levels written */
  const int lb = (threadIdx.x >> 5) * kWarpBlocks, first = blockIdx.x * kBlocks + lb;
  const int n = max(0, min(kWarpBlocks, total_blocks - first)) * 8;
  uint4 *out = reinterpret_cast<uint4 *>(coeffs + (size_t)first * 64);
  for (int i = threadIdx.x & 31; i < n; i += 32) {
    const uint32_t *row = sm.lev[lb + (i >> 3)] + 4 * (i & 7);
    out[i] = make_uint4(row[0], row[1], row[2], row[3]);
  }
}

__device__ __forceinline__ void load_levels(cta_smem &sm, const int16_t *coeffs, int total_blocks)
{
  const int lb = (threadIdx.x >> 5) * kWarpBlocks, first = blockIdx.x * kBlocks + lb;
  const int n = max(0, min(kWarpBlocks, total_blocks - first)) * 8;
  const uint4 *in = reinterpret_cast<const uint4 *>(coeffs + (size_t)first * 64);
  for (int i = threadIdx.x & 31; i < kWarpBlocks * 8; i += 32) {
    const uint4 v = i < n ? in[i] : make_uint4(0, 0, 0, 0);
    uint32_t *row = sm.lev[lb + (i >> 3)] + 4 * (i & 7);
    row[0] = v.x;
    row[1] = v.y;
    row[2] = v.z;
    row[3] = v.w;
  }
  __syncwarp();
}

/* Forward half: DCT of cur - pred (both staged in shared memory), scaled
 * and quantised, the levels into shared memory. The DCT of 8-bit residuals
 * stays below 2^15 in magnitude and the launchers take quantisers from 1
 * up, so the quantisation is c63_quantise_in_range, without a branch: a
 * column's 8 quantisations interleave. */
__device__ __forceinline__ void fdct_quant_block(cta_smem &sm, const c63_cuda_planes &P,
                                                 const block_at &b)
{
  const slots col;
  /* Rows: t[y][i] = sum_j r[y][j] * C[j][i]. Row y of this half: the row
   * words' parity is half ^ c, element y * 8 + i of t's half ^ (i >> 2). */
#pragma unroll 1
  for (int y = 4 * half(); y < 4 * half() + 4; y++) {
    const uint32_t c0 = sm.cur[2 * y][col(0)], c1 = sm.cur[2 * y + 1][col(1)];
    const uint32_t p0 = sm.pred[2 * y][col(0)], p1 = sm.pred[2 * y + 1][col(1)];
    float x[8], t[8];
#pragma unroll
    for (int i = 0; i < 4; i++) {
      x[i] = (float)(byte_of(c0, i) - byte_of(p0, i));
      x[i + 4] = (float)(byte_of(c1, i) - byte_of(p1, i));
    }
    pass_1d<false>(x, t);
#pragma unroll
    for (int i = 0; i < 8; i++)
      sm.t[y * 8 + i][col(i >> 2)] = t[i];
  }
  __syncwarp(); /* the other half's rows written */
  /* Columns: X[v][u] = sum_j t[j][u] * C[j][v], scaled (X * a(u)) * a(v)
   * and quantised. Column u of this half: element j * 8 + u of t has
   * parity half ^ (j >> 2). */
  const coef_entry *ce = sm.e[b.plane];
  const int lim = P.p[b.plane].ac_limit;
#pragma unroll 1
  for (int u = 4 * half(); u < 4 * half() + 4; u++) {
    float x[8], X[8];
#pragma unroll
    for (int j = 0; j < 8; j++)
      x[j] = sm.t[j * 8 + u][col(j >> 2)];
    pass_1d<false>(x, X);
#pragma unroll
    for (int v = 0; v < 8; v++) {
      const coef_entry e = ce[v * 8 + u];
      int qv = c63_quantise_in_range(scale_uv(X[v], u, v), e.q, e.inv4q);
      if (u + v > 0) qv = min(max(qv, -lim), lim);
      *level_ptr(sm, e.z) = (int16_t)qv;
    }
  }
}

/* Inverse half: dequantisation of the levels in shared memory (written by
 * the warp, which has synchronised since), IDCT, prediction added and clamped, into
 * recon. Rows whose levels are zero in every thread of the warp skip their
 * row pass (their outputs are zero; leaving out products of zero changes a
 * sum only in the sign of a zero, to which truncation is blind: see
 * pass_1d). The warp must be converged. */
__device__ __forceinline__ void recon_block(cta_smem &sm, const block_at &b, uint8_t *recon)
{
  const coef_entry *ce = sm.e[b.plane];
  const slots col; /* as in fdct_quant_block */
  /* Rows: t[v][i] = sum_j Y[v][j] * C[i][j], Y dequantised and scaled. */
#pragma unroll 1
  for (int v = 4 * half(); v < 4 * half() + 4; v++) {
    float y[8], t[8];
    bool nonzero = false;
#pragma unroll
    for (int u = 0; u < 8; u++) {
      const coef_entry e = ce[v * 8 + u];
      y[u] = dequant_scaled(*level_ptr(sm, e.z), e.q, u, v);
      nonzero |= y[u] != 0.0f;
    }
    if (__any_sync(0xffffffffu, nonzero)) {
      pass_1d<true>(y, t);
    } else {
#pragma unroll
      for (int i = 0; i < 8; i++)
        t[i] = 0.0f;
    }
#pragma unroll
    for (int i = 0; i < 8; i++)
      sm.t[v * 8 + i][col(i >> 2)] = t[i];
  }
  __syncwarp(); /* the other half's rows written */
  /* Columns: out[v][u] = sum_j t[j][u] * C[v][j], truncated toward zero to
   * int16 (saturating, like the oracle: only corrupt coefficients leave
   * that range), plus the prediction as the reference adds them; this
   * thread's four columns gather in a word a row. */
  uint32_t px[8];
#pragma unroll
  for (int v = 0; v < 8; v++)
    px[v] = 0;
  const int h = half();
#pragma unroll 1
  for (int i = 0; i < 4; i++) {
    const int u = 4 * h + i;
    float x[8], o[8];
#pragma unroll
    for (int j = 0; j < 8; j++)
      x[j] = sm.t[j * 8 + u][col(j >> 2)];
    pass_1d<true>(x, o);
#pragma unroll
    for (int v = 0; v < 8; v++) {
      /* row word 2v + half: parity half ^ (v >> 2) */
      const int pred = byte_of(sm.pred[2 * v + h][col(v >> 2)], i);
      px[v] |= (uint32_t)reconstruct_pixel(truncate_sample(o[v]), pred) << (8 * i);
    }
  }
  if (!b.active) return;
#pragma unroll
  for (int v = 0; v < 8; v++)
    *reinterpret_cast<uint32_t *>(recon + b.index + v * b.w + 4 * h) = px[v];
}

__device__ __forceinline__ int this_block()
{
  return blockIdx.x * kBlocks + local_block();
}

/* One thread a block. */
__global__ void mc_kernel(const uint8_t *__restrict__ ref, const c63_mv *__restrict__ mvs,
                          c63_cuda_planes P, uint8_t *__restrict__ pred)
{
  const int gb = blockIdx.x * blockDim.x + threadIdx.x;
  const block_at b = locate_block(P, gb);
  if (!b.active) return;
  const uint8_t *src = prediction(ref, mvs, gb, b);
#pragma unroll
  for (int y = 0; y < 8; y++)
    *reinterpret_cast<uint2 *>(pred + b.index + y * b.w) =
        src ? load_row_unaligned(src + y * b.w) : make_uint2(0, 0);
}

/* Every thread of a CTA runs to the end (those past the frame on zeros):
 * the tables take a barrier, and the level moves and the inverse half's
 * votes take the whole warp.
 *
 * The forward half, and with kRecon the inverse one in the same pass: the
 * levels go from one to the other in shared memory, and the prediction is
 * read once. */
template <bool kRecon>
__global__ void __launch_bounds__(kThreads)
    fdct_quant_kernel(const uint8_t *__restrict__ cur, const uint8_t *__restrict__ ref,
                      const c63_mv *__restrict__ mvs, c63_cuda_planes P,
                      int16_t *__restrict__ coeffs, uint8_t *__restrict__ recon)
{
  __shared__ cta_smem sm;
  const int gb = this_block();
  const block_at b = locate_block(P, gb);
  stage_rows<true>(sm, P, b.active ? cur + b.index : nullptr, prediction(ref, mvs, gb, b), b.w);
  fdct_quant_block(sm, P, b);
  store_levels(sm, coeffs, P.total_blocks);
  if (kRecon) recon_block(sm, b, recon);
}

__global__ void __launch_bounds__(kThreads)
    recon_kernel(const int16_t *__restrict__ coeffs, const uint8_t *__restrict__ ref,
                 const c63_mv *__restrict__ mvs, c63_cuda_planes P, uint8_t *__restrict__ recon)
{
  __shared__ cta_smem sm;
  const int gb = this_block();
  const block_at b = locate_block(P, gb);
  stage_rows<false>(sm, P, nullptr, prediction(ref, mvs, gb, b), b.w);
  load_levels(sm, coeffs, P.total_blocks);
  recon_block(sm, b, recon);
}

int ctas(const c63_cuda_planes &P)
{
  return (P.total_blocks + kBlocks - 1) / kBlocks;
}

template <bool kRecon>
cudaError_t launch_fdct(const uint8_t *cur, const uint8_t *ref, const c63_mv *mvs,
                        const c63_cuda_planes &P, int16_t *coeffs, uint8_t *recon, cudaStream_t s)
{
  if (P.total_blocks <= 0) return cudaSuccess;
  fdct_quant_kernel<kRecon><<<ctas(P), kThreads, 0, s>>>(cur, ref, mvs, P, coeffs, recon);
  return cudaGetLastError();
}

} // namespace

cudaError_t c63_cuda_motion_compensate(const uint8_t *ref, const c63_mv *mvs,
                                       const c63_cuda_planes &P, uint8_t *pred, cudaStream_t s)
{
  if (P.total_blocks <= 0) return cudaSuccess;
  mc_kernel<<<ctas(P), kBlocks, 0, s>>>(ref, mvs, P, pred);
  return cudaGetLastError();
}

cudaError_t c63_cuda_fdct_quant(const uint8_t *cur, const uint8_t *ref, const c63_mv *mvs,
                                const c63_cuda_planes &P, int16_t *coeffs, cudaStream_t s)
{
  return launch_fdct<false>(cur, ref, mvs, P, coeffs, nullptr, s);
}

cudaError_t c63_cuda_fdct_quant_recon(const uint8_t *cur, const uint8_t *ref, const c63_mv *mvs,
                                      const c63_cuda_planes &P, int16_t *coeffs, uint8_t *recon,
                                      cudaStream_t s)
{
  return launch_fdct<true>(cur, ref, mvs, P, coeffs, recon, s);
}

cudaError_t c63_cuda_dequant_idct_recon(const int16_t *coeffs, const uint8_t *ref,
                                        const c63_mv *mvs, const c63_cuda_planes &P, uint8_t *recon,
                                        cudaStream_t s)
{
  if (P.total_blocks <= 0) return cudaSuccess;
  recon_kernel<<<ctas(P), kThreads, 0, s>>>(coeffs, ref, mvs, P, recon);
  return cudaGetLastError();
}
