/* The format's float transform on the GPU, a 1-D pass of 8 values a call:
 * the reference's cosine table as immediate operands (dct_k; the unrolled
 * loops index it at compile time), each product and sum one IEEE single-precision
 * operation in the C oracle's order (c63/dsp_c.c; __fmul_rn/__fadd_rn,
 * which nvcc never contracts into an FMA). Shared by the exact mode's
 * kernels (c63_cuda_transform.cu) and the rd mode's trials
 * (c63_cuda_rd_trial.cuh).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef C63_CUDA_DCT_CUH
#define C63_CUDA_DCT_CUH

#include <stdint.h>

namespace
{

/* c63_dct_lookup: the reference's 6-decimal float literals, row j. Kept to
 * check dct_k against, at compile time. */
struct dct_table {
  float v[64];
};
constexpr dct_table kDctLiterals = {{
    1.0f, 0.980785f,  0.923880f,  0.831470f,  0.707107f,  0.555570f,  0.382683f,  0.195090f,
    1.0f, 0.831470f,  0.382683f,  -0.195090f, -0.707107f, -0.980785f, -0.923880f, -0.555570f,
    1.0f, 0.555570f,  -0.382683f, -0.980785f, -0.707107f, 0.195090f,  0.923880f,  0.831470f,
    1.0f, 0.195090f,  -0.923880f, -0.555570f, 0.707107f,  0.831470f,  -0.382683f, -0.980785f,
    1.0f, -0.195090f, -0.923880f, 0.555570f,  0.707107f,  -0.831470f, -0.382683f, 0.980785f,
    1.0f, -0.555570f, -0.382683f, 0.980785f,  -0.707107f, -0.195090f, 0.923880f,  -0.831470f,
    1.0f, -0.831470f, 0.382683f,  0.195090f,  -0.707107f, 0.980785f,  -0.923880f, 0.555570f,
    1.0f, -0.980785f, 0.923880f,  -0.831470f, 0.707107f,  -0.555570f, 0.382683f,  -0.195090f,
}};

/* c63_dct_lookup[j][i], which is cos((2j + 1) i pi / 16) to 6 decimals:
 * the literal for m = (2j + 1) i folded into 0..8 (cos m pi / 16). A
 * function of the indices rather than a __constant__ array: the unrolled
 * passes call it with constants, so each product takes its factor as an
 * immediate operand. From the array, ptxas loaded every factor into a
 * uniform register first, an instruction per product (the rd mode's
 * kernels: 7384 instructions of SASS, 309 of them such loads; now 6904 and
 * 53). */
__host__ __device__ constexpr float dct_k(int j, int i)
{
  int m = (2 * j + 1) * i % 32;
  if (m > 16) m = 32 - m;
  const bool negative = m > 8;
  if (negative) m = 16 - m;
  const float c = m == 0   ? 1.0f
                  : m == 1 ? 0.980785f
                  : m == 2 ? 0.923880f
                  : m == 3 ? 0.831470f
                  : m == 4 ? 0.707107f
                  : m == 5 ? 0.555570f
                  : m == 6 ? 0.382683f
                  : m == 7 ? 0.195090f
                           : 0.0f;
  return negative ? -c : c;
}

constexpr bool dct_k_matches_literals()
{
  for (int n = 0; n < 64; n++)
    if (dct_k(n / 8, n % 8) != kDctLiterals.v[n]) return false;
  return true;
}
static_assert(dct_k_matches_literals(), "dct_k is the reference's table");

/* Zig-zag index of the coefficient at row v, column u: diagonals s = u + v
 * from the top left, odd ones walked downwards, even ones upwards; the
 * lower right half mirrors the upper left. A function rather than a table,
 * so that unrolled loops get it at compile time. */
__host__ __device__ constexpr int zigzag_upper(int s, int v, int u)
{
  return s * (s + 1) / 2 + (s & 1 ? v : u);
}
__host__ __device__ constexpr int zigzag(int v, int u)
{
  return u + v > 7 ? 63 - zigzag_upper(14 - u - v, 7 - v, 7 - u) : zigzag_upper(u + v, v, u);
}
static_assert(zigzag(0, 1) == 1 && zigzag(1, 0) == 2 && zigzag(2, 0) == 3 && zigzag(0, 2) == 5 &&
                  zigzag(7, 0) == 35 && zigzag(0, 7) == 28 && zigzag(7, 6) == 62 &&
                  zigzag(7, 7) == 63,
              "the format's zig-zag order (docs/format.md)");

constexpr float kIsqrt2 = 0.70710678118654f;

__device__ __forceinline__ uint2 pack_row(const int in[8])
{
  uint2 v = {0, 0};
#pragma unroll
  for (int i = 0; i < 4; i++) {
    v.x |= (uint32_t)in[i] << (8 * i);
    v.y |= (uint32_t)in[i + 4] << (8 * i);
  }
  return v;
}

__device__ __forceinline__ void unpack_row(uint2 v, int out[8])
{
#pragma unroll
  for (int i = 0; i < 4; i++) {
    out[i] = (v.x >> (8 * i)) & 0xff;
    out[i + 4] = (v.y >> (8 * i)) & 0xff;
  }
}

/* 8 bytes from any address, packed as pack_row's, in three aligned 32-bit
 * loads: p + 11 rounded down to 4 must be readable (C63_CUDA_REF_TAIL). */
__device__ __forceinline__ uint2 load_row_unaligned(const uint8_t *p)
{
  const uint32_t *w = reinterpret_cast<const uint32_t *>(reinterpret_cast<uintptr_t>(p) & ~3);
  const unsigned shift = 8 * (unsigned)(reinterpret_cast<uintptr_t>(p) & 3);
  const uint32_t w0 = w[0], w1 = w[1], w2 = w[2];
  return make_uint2(__funnelshift_r(w0, w1, shift), __funnelshift_r(w1, w2, shift));
}

__device__ __forceinline__ void store_row(uint8_t *p, const int in[8])
{
  *reinterpret_cast<uint2 *>(p) = pack_row(in);
}

/* out[i] = sum_j in[j] * C[j][i] (forward) or sum_j in[j] * C[i][j]
 * (inverse), j ascending, each product and sum rounded to float.
 *
 * The oracle starts each sum at 0 and adds the first product to it; here
 * the sum starts at the first product, one addition fewer per output (of
 * 15). The two differ only where that product is -0 (0 + -0 is +0), and
 * from there on only in the sign of a zero: x + (+-0) is x for every other
 * x. Both ends are blind to that sign: quantisation takes |x| and gives 0
 * for either zero, and the inverse transform's truncation to integers
 * makes 0 of both. */
template <bool kInverse> __device__ __forceinline__ void pass_1d(const float in[8], float out[8])
{
#pragma unroll
  for (int i = 0; i < 8; i++) {
    float acc = __fmul_rn(in[0], kInverse ? dct_k(i, 0) : dct_k(0, i));
#pragma unroll
    for (int j = 1; j < 8; j++)
      acc = __fadd_rn(acc, __fmul_rn(in[j], kInverse ? dct_k(i, j) : dct_k(j, i)));
    out[i] = acc;
  }
}

/* pass_1d<true> for sparse inputs: the oracle's sums (each from 0, j
 * ascending) without the terms whose input is zero in every thread of the
 * warp (a vote a term; the warp must be converged). Leaving out a product
 * of a zero changes a sum only in the sign of a zero, as in pass_1d. */
__device__ __forceinline__ void idct_pass_sparse(const float in[8], float out[8])
{
#pragma unroll
  for (int i = 0; i < 8; i++)
    out[i] = 0.0f;
#pragma unroll
  for (int j = 0; j < 8; j++)
    if (__any_sync(0xffffffffu, in[j] != 0.0f))
#pragma unroll
      for (int i = 0; i < 8; i++)
        out[i] = __fadd_rn(out[i], __fmul_rn(in[j], dct_k(i, j)));
}

/* x * a(u) * a(v) in the oracle's order, a(0) = 1 / sqrt(2), a(k) = 1:
 * the forward transform's scaling and the inverse one's. The products by 1
 * are left out (x * 1.0f is x; nvcc keeps a __fmul_rn by 1, an instruction
 * per coefficient). */
__device__ __forceinline__ float scale_uv(float x, int u, int v)
{
  if (u == 0) x = __fmul_rn(x, kIsqrt2);
  if (v == 0) x = __fmul_rn(x, kIsqrt2);
  return x;
}

/* A level's input to the inverse transform, as the oracle dequantises and
 * scales it: round(level * quant / 4.0), half away from zero (exact in
 * integers: the product fits a float exactly), times a(u), times a(v). */
__device__ __forceinline__ float dequant_scaled(int level, int quant, int u, int v)
{
  const int prod = level * quant;
  const int deq = prod >= 0 ? (prod + 2) >> 2 : -((-prod + 2) >> 2);
  return scale_uv((float)deq, u, v);
}

/* The inverse transform's output truncated toward zero to int16, saturating
 * like the oracle (only corrupt coefficients leave that range). */
__device__ __forceinline__ int truncate_sample(float x)
{
  return min(max(__float2int_rz(x), -32768), 32767);
}

/* A reconstructed pixel: prediction plus residual as the reference adds
 * them in int16 (past 32767 the sum wraps negative, to 0), clamped. */
__device__ __forceinline__ int reconstruct_pixel(int residual, int pred)
{
  int v = residual + pred;
  if (v > 32767) v = 0;
  return v < 0 ? 0 : (v > 255 ? 255 : v);
}

} // namespace

#endif
