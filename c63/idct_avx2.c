/* Dequantisation, inverse transform and reconstruction with AVX2: eight
 * floats per vector, bit-exact with dsp_c.c (the decoder's hot loop).
 *
 * Exactness: every element goes through the same single-precision
 * operations in the same order as the C code (separate multiplies and adds,
 * never FMA: the build forbids contraction), only eight elements at once.
 * The block is held as eight column vectors X_u (lane v = row v): the first
 * 1-D pass over the rows, out[v][i] = sum_j in[v][j] * C[i][j] with j
 * ascending, is then Out_i = sum_j X_j * C[i][j] with C broadcast, and
 * Out_i holds column i of its result, i.e. row i of the C code's transposed
 * intermediate. One 8x8 transpose gives the columns the second pass needs,
 * and that pass's Out_k is row k of the final block, which the C code's
 * second transpose produces. Dequantisation rounds in integers (exact, see
 * c63_dequant_idct_block). Selected at run time; built for x86 hosts only.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>

#include "dsp.h"

#include <immintrin.h>

#define TARGET __attribute__((target("avx2")))

/* Position of zig-zag coefficient z in the column-major block: u * 8 + v. */
static uint8_t column_index[64];

static void init_tables(void)
{
  for (int z = 0; z < 64; z++)
    column_index[z] = (uint8_t)(c63_zigzag_u[z] * 8 + c63_zigzag_v[z]);
}

TARGET static inline void transpose8(__m256 r[8])
{
  __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
  __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
  __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
  __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
  __m256 s0 = _mm256_shuffle_ps(t0, t2, 0x44), s1 = _mm256_shuffle_ps(t0, t2, 0xee);
  __m256 s2 = _mm256_shuffle_ps(t1, t3, 0x44), s3 = _mm256_shuffle_ps(t1, t3, 0xee);
  __m256 s4 = _mm256_shuffle_ps(t4, t6, 0x44), s5 = _mm256_shuffle_ps(t4, t6, 0xee);
  __m256 s6 = _mm256_shuffle_ps(t5, t7, 0x44), s7 = _mm256_shuffle_ps(t5, t7, 0xee);
  r[0] = _mm256_permute2f128_ps(s0, s4, 0x20);
  r[1] = _mm256_permute2f128_ps(s1, s5, 0x20);
  r[2] = _mm256_permute2f128_ps(s2, s6, 0x20);
  r[3] = _mm256_permute2f128_ps(s3, s7, 0x20);
  r[4] = _mm256_permute2f128_ps(s0, s4, 0x31);
  r[5] = _mm256_permute2f128_ps(s1, s5, 0x31);
  r[6] = _mm256_permute2f128_ps(s2, s6, 0x31);
  r[7] = _mm256_permute2f128_ps(s3, s7, 0x31);
}

/* out[i] = sum_j in[j] * C[i][j], j ascending from 0.0f, per lane. */
TARGET static inline void idct_pass(const __m256 in[8], __m256 out[8])
{
  for (int i = 0; i < 8; i++) {
    __m256 acc = _mm256_setzero_ps();
    for (int j = 0; j < 8; j++)
      acc = _mm256_add_ps(acc, _mm256_mul_ps(in[j], _mm256_broadcast_ss(&c63_dct_lookup[i][j])));
    out[i] = acc;
  }
}

/* Store eight rows of results: saturate to int16, truncate toward zero,
 * add the prediction in 16 bits as the reference does (a sum past 32767
 * wraps negative), clamp to 0..255. */
TARGET static inline void store_rows(const __m256 x[8], const uint8_t *pred, int stride,
                                     uint8_t *recon)
{
  const __m256 hi = _mm256_set1_ps(32767.0f), lo = _mm256_set1_ps(-32768.0f);
  for (int r = 0; r < 8; r++) {
    __m256i res = _mm256_cvttps_epi32(_mm256_max_ps(_mm256_min_ps(x[r], hi), lo));
    __m128i w16 = _mm_packs_epi32(_mm256_castsi256_si128(res), _mm256_extracti128_si256(res, 1));
    if (pred) {
      __m128i p = _mm_loadl_epi64((const __m128i *)(pred + (size_t)r * stride));
      w16 = _mm_add_epi16(w16, _mm_cvtepu8_epi16(p));
    }
    _mm_storel_epi64((__m128i *)(recon + (size_t)r * stride), _mm_packus_epi16(w16, w16));
  }
}

TARGET static void block_avx2(const int16_t in[64], const uint8_t quant[64], const uint8_t *pred,
                              int stride, uint8_t *recon)
{
  float m[64]; /* column-major: m[u * 8 + v] */
  __m256 x[8], t[8];

  /* A block without AC coefficients (most of a real picture's) is flat:
   * in both passes each output is 0.0f + dc * C[i][0] plus products with
   * zeros, and C[i][0] = 1.0f, so every pixel is the scaled DC, exactly as
   * the full transform computes it. */
  const __m256i no_dc =
      _mm256_setr_epi16(0, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
  __m256i ac = _mm256_or_si256(
      _mm256_or_si256(_mm256_and_si256(_mm256_loadu_si256((const __m256i *)in), no_dc),
                      _mm256_loadu_si256((const __m256i *)(in + 16))),
      _mm256_or_si256(_mm256_loadu_si256((const __m256i *)(in + 32)),
                      _mm256_loadu_si256((const __m256i *)(in + 48))));
  if (_mm256_testz_si256(ac, ac)) {
    const int v = in[0] * quant[0];
    const float dc = (float)(v >= 0 ? (v + 2) >> 2 : -((-v + 2) >> 2));
    /* (dc * a1) * a2, then 0.0f + . * 1.0f in each pass */
    const float f = (dc * C63_ISQRT2) * C63_ISQRT2;
    for (int r = 0; r < 8; r++)
      x[r] = _mm256_set1_ps(f);
    store_rows(x, pred, stride, recon);
    return;
  }

  for (int z = 0; z < 64; z++) {
    const int v = in[z] * quant[z]; /* exact: round((float)v / 4.0) half away */
    m[column_index[z]] = (float)(v >= 0 ? (v + 2) >> 2 : -((-v + 2) >> 2));
  }
  /* scale: (x * a1(u)) * a2(v); a1 is 1 except at u = 0, and x * 1.0f = x */
  const __m256 a2 = _mm256_setr_ps(C63_ISQRT2, 1, 1, 1, 1, 1, 1, 1);
  for (int u = 0; u < 8; u++) {
    x[u] = _mm256_loadu_ps(m + u * 8);
    if (u == 0) x[u] = _mm256_mul_ps(x[u], _mm256_set1_ps(C63_ISQRT2));
    x[u] = _mm256_mul_ps(x[u], a2);
  }
  idct_pass(x, t);
  transpose8(t);
  idct_pass(t, x);
  store_rows(x, pred, stride, recon);
}

static void dequant_idct_recon_avx2(const int16_t *coeffs, const uint8_t *pred, int w, int h,
                                    const uint8_t quant[64], uint8_t *recon)
{
  c63_recon_blocks(block_avx2, coeffs, pred, w, h, quant, recon);
}

int c63_dsp_init_avx2(c63_dsp *dsp)
{
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2")) return 0;
  static int tables_done;
  if (!__atomic_load_n(&tables_done, __ATOMIC_ACQUIRE)) {
    init_tables(); /* idempotent: racing initialisers write the same bytes */
    __atomic_store_n(&tables_done, 1, __ATOMIC_RELEASE);
  }
  dsp->dequant_idct_recon = dequant_idct_recon_avx2;
  return 1;
}
