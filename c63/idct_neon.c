/* Dequantisation, inverse transform and reconstruction with NEON (aarch64):
 * bit-exact with dsp_c.c, four floats per vector, a block row in two.
 *
 * Exactness: every element goes through the same single-precision
 * operations in the same order as the C code, only four elements at once.
 * Products and sums are separate instructions (vmulq, vaddq), never the
 * fused FMLA/FMADD, whose single rounding would change the result; the
 * build forbids the compiler to contract them (-ffp-contract=off). The
 * block is held as eight column vectors X_u (lane v = row v), as in
 * idct_avx2.c, whose comment derives the passes and the one transpose.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <arm_neon.h>

#include "dsp.h"

/* Eight floats: lanes 0-3 and 4-7. */
typedef struct {
  float32x4_t lo, hi;
} f32x8;

/* The 4x4 transpose of rows a, b, c, d. */
static inline void transpose4(float32x4_t *a, float32x4_t *b, float32x4_t *c, float32x4_t *d)
{
  const float32x4_t t0 = vtrn1q_f32(*a, *b), t1 = vtrn2q_f32(*a, *b);
  const float32x4_t t2 = vtrn1q_f32(*c, *d), t3 = vtrn2q_f32(*c, *d);
  *a = vreinterpretq_f32_f64(vtrn1q_f64(vreinterpretq_f64_f32(t0), vreinterpretq_f64_f32(t2)));
  *b = vreinterpretq_f32_f64(vtrn1q_f64(vreinterpretq_f64_f32(t1), vreinterpretq_f64_f32(t3)));
  *c = vreinterpretq_f32_f64(vtrn2q_f64(vreinterpretq_f64_f32(t0), vreinterpretq_f64_f32(t2)));
  *d = vreinterpretq_f32_f64(vtrn2q_f64(vreinterpretq_f64_f32(t1), vreinterpretq_f64_f32(t3)));
}

/* The 8x8 transpose as four 4x4 ones, the off-diagonal quarters swapped. */
static inline void transpose8(f32x8 r[8])
{
  transpose4(&r[0].lo, &r[1].lo, &r[2].lo, &r[3].lo);
  transpose4(&r[4].hi, &r[5].hi, &r[6].hi, &r[7].hi);
  transpose4(&r[0].hi, &r[1].hi, &r[2].hi, &r[3].hi);
  transpose4(&r[4].lo, &r[5].lo, &r[6].lo, &r[7].lo);
  for (int i = 0; i < 4; i++) {
    const float32x4_t t = r[i].hi;
    r[i].hi = r[i + 4].lo;
    r[i + 4].lo = t;
  }
}

/* out[i] = sum_j in[j] * C[i][j], j ascending from 0.0f, per lane. */
static inline void idct_pass(const f32x8 in[8], f32x8 out[8])
{
  for (int i = 0; i < 8; i++) {
    float32x4_t lo = vdupq_n_f32(0.0f), hi = vdupq_n_f32(0.0f);
    for (int j = 0; j < 8; j++) {
      const float32x4_t c = vdupq_n_f32(c63_dct_lookup[i][j]);
      lo = vaddq_f32(lo, vmulq_f32(in[j].lo, c));
      hi = vaddq_f32(hi, vmulq_f32(in[j].hi, c));
    }
    out[i].lo = lo;
    out[i].hi = hi;
  }
}

/* Four results as int16: saturated, truncated toward zero. */
static inline int32x4_t to_int(float32x4_t x)
{
  const float32x4_t hi = vdupq_n_f32(32767.0f), lo = vdupq_n_f32(-32768.0f);
  return vcvtq_s32_f32(vmaxq_f32(vminq_f32(x, hi), lo));
}

/* Store eight rows of results: add the prediction in 16 bits as the
 * reference does (a sum past 32767 wraps negative), clamp to 0..255. */
static inline void store_rows(const f32x8 x[8], const uint8_t *pred, int stride, uint8_t *recon)
{
  for (int r = 0; r < 8; r++) {
    int16x8_t w16 = vcombine_s16(vmovn_s32(to_int(x[r].lo)), vmovn_s32(to_int(x[r].hi)));
    if (pred)
      w16 = vaddq_s16(w16, vreinterpretq_s16_u16(vmovl_u8(vld1_u8(pred + (size_t)r * stride))));
    vst1_u8(recon + (size_t)r * stride, vqmovun_s16(w16));
  }
}

/* Whether the block has no AC coefficient. */
static inline int dc_only(const int16_t in[64])
{
  static const uint16_t no_dc_lanes[8] = {0,      0xffff, 0xffff, 0xffff,
                                          0xffff, 0xffff, 0xffff, 0xffff};
  uint16x8_t ac = vandq_u16(vld1q_u16((const uint16_t *)in), vld1q_u16(no_dc_lanes));
  for (int k = 8; k < 64; k += 8)
    ac = vorrq_u16(ac, vld1q_u16((const uint16_t *)(in + k)));
  return vmaxvq_u16(ac) == 0;
}

static void block_neon(const int16_t in[64], const uint8_t quant[64], const uint8_t *pred,
                       int stride, uint8_t *recon)
{
  float m[64]; /* column-major: m[u * 8 + v] */
  f32x8 x[8], t[8];

  /* A block without AC coefficients is flat, exactly as the full transform
   * computes it (idct_avx2.c explains why). */
  if (dc_only(in)) {
    const int v = in[0] * quant[0];
    const float dc = (float)(v >= 0 ? (v + 2) >> 2 : -((-v + 2) >> 2));
    const float f = (dc * C63_ISQRT2) * C63_ISQRT2;
    for (int r = 0; r < 8; r++)
      x[r].lo = x[r].hi = vdupq_n_f32(f);
    store_rows(x, pred, stride, recon);
    return;
  }

  for (int z = 0; z < 64; z++) {
    const int v = in[z] * quant[z]; /* exact: round((float)v / 4.0) half away */
    m[c63_zigzag_u[z] * 8 + c63_zigzag_v[z]] = (float)(v >= 0 ? (v + 2) >> 2 : -((-v + 2) >> 2));
  }
  /* scale: (x * a1(u)) * a2(v); a1 is 1 except at u = 0, and x * 1.0f = x;
   * a2 is 1 except at v = 0 (lane 0 of the low half) */
  static const float a2_lanes[4] = {C63_ISQRT2, 1, 1, 1};
  const float32x4_t a2 = vld1q_f32(a2_lanes);
  for (int u = 0; u < 8; u++) {
    x[u].lo = vld1q_f32(m + u * 8);
    x[u].hi = vld1q_f32(m + u * 8 + 4);
    if (u == 0) {
      x[u].lo = vmulq_f32(x[u].lo, vdupq_n_f32(C63_ISQRT2));
      x[u].hi = vmulq_f32(x[u].hi, vdupq_n_f32(C63_ISQRT2));
    }
    x[u].lo = vmulq_f32(x[u].lo, a2);
  }
  idct_pass(x, t);
  transpose8(t);
  idct_pass(t, x);
  store_rows(x, pred, stride, recon);
}

static void dequant_idct_recon_neon(const int16_t *coeffs, const uint8_t *pred, int w, int h,
                                    const uint8_t quant[64], uint8_t *recon)
{
  c63_recon_blocks(block_neon, coeffs, pred, w, h, quant, recon);
}

void c63_dsp_init_idct_neon(c63_dsp *dsp)
{
  dsp->dequant_idct_recon = dequant_idct_recon_neon;
}
