/* The pixel stages of the codec as a table of functions, dav1d style: the C
 * versions in dsp_c.c are the reference ("oracle") for every optimised or GPU
 * version, which must produce the same bytes.
 *
 * Data layout shared by all implementations:
 *  - planes are padded planes (c63_geometry pad_w x pad_h), stride = pad_w;
 *  - coefficients: per plane, blocks in raster order, 64 int16 per block in
 *    zig-zag order (index z as in docs/format.md section 5);
 *  - vectors: per plane, one c63_mv per block in raster order.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef C63_DSP_H
#define C63_DSP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct c63_mv {
  int8_t x, y;
  uint8_t use_mv; /* 0: intra (zero prediction) */
  uint8_t pad_;
} c63_mv;

/* Exact float constants of the transform (docs/format.md section 5). */
extern const float c63_dct_lookup[8][8];
#define C63_ISQRT2 0.70710678118654f
extern const uint8_t c63_zigzag_u[64];
extern const uint8_t c63_zigzag_v[64];

/* Largest AC magnitude the entropy coder may carry for a plane: luma 511
 * (the reference's broken FF82 code for size 10), chroma 1023 (size 10). */
static inline int c63_ac_limit(int plane)
{
  return plane == 0 ? 511 : 1023;
}

/* Block-level primitives. */
/* residual: 64 values row-major; out: the scaled transform X (format 5.3),
 * 64 floats in zig-zag order, before the division by 4 and the quantiser. */
void c63_fdct_block(const int16_t residual[64], float out[64]);
/* dct: c63_fdct_block's output; out: the format's quantised values (5.4),
 * AC limited to +-ac_limit. */
void c63_quantise_block(const float dct[64], const uint8_t quant[64], int ac_limit,
                        int16_t out[64]);
/* residual: 64 values row-major; out: 64 coefficients in zig-zag order. */
void c63_fdct_quant_block(const int16_t residual[64], const uint8_t quant[64], int ac_limit,
                          int16_t out[64]);
/* in: 64 coefficients in zig-zag order; out: 64 residuals row-major. */
void c63_dequant_idct_block(const int16_t in[64], const uint8_t quant[64], int16_t out[64]);
int c63_sad_8x8(const uint8_t *a, int a_stride, const uint8_t *b, int b_stride);

/* Plane-level stages. w, h: padded plane size; stride = w. */
typedef struct c63_dsp {
  /* Full search, reference bounds and raster-order tie-break (format 3),
   * for the blocks of rows [by0, by1), so stripes of a plane can run on
   * several threads; mvs is always the whole plane's array. range: this
   * plane's search range (luma R, chroma R/2). Sets use_mv = 1. */
  void (*motion_search)(const uint8_t *cur, const uint8_t *ref, int w, int h, int range, int by0,
                        int by1, c63_mv *mvs);
  /* The SAD of the block at pixel (mx, my) of cur against every candidate
   * of the window [left, right) x [top, bottom) of ref (inside the plane, as
   * c63_me_window gives it), in raster order: candidate (x, y) at
   * sads[(y - top) * (right - left) + x - left]. For the rd mode, which
   * adds the cost of each vector to its SAD. */
  void (*sad_window)(const uint8_t *cur, const uint8_t *ref, int w, int mx, int my, int left,
                     int top, int right, int bottom, uint16_t *sads);
  /* pred = ref displaced by each block's vector; use_mv = 0 gives zeros. */
  void (*motion_compensate)(const uint8_t *ref, int w, int h, const c63_mv *mvs, uint8_t *pred);
  /* coeffs = quant(fdct(cur - pred)); pred NULL means a zero prediction. */
  void (*fdct_quant)(const uint8_t *cur, const uint8_t *pred, int w, int h, const uint8_t quant[64],
                     int ac_limit, int16_t *coeffs);
  /* recon = clamp(pred + idct(dequant(coeffs))); pred NULL means zero. */
  void (*dequant_idct_recon)(const int16_t *coeffs, const uint8_t *pred, int w, int h,
                             const uint8_t quant[64], uint8_t *recon);
} c63_dsp;

/* Motion search over a whole plane. */
static inline void c63_motion_search_plane(const c63_dsp *dsp, const uint8_t *cur,
                                           const uint8_t *ref, int w, int h, int range, c63_mv *mvs)
{
  dsp->motion_search(cur, ref, w, h, range, 0, h / 8, mvs);
}

/* The SIMD versions of dequant_idct_recon: block() on every 8x8 block of a
 * w x h plane, with the block's coefficients and its pixels in pred (NULL:
 * zero prediction) and recon, whose stride is w. */
typedef void (*c63_recon_block_fn)(const int16_t in[64], const uint8_t quant[64],
                                   const uint8_t *pred, int stride, uint8_t *recon);
static inline void c63_recon_blocks(c63_recon_block_fn block, const int16_t *coeffs,
                                    const uint8_t *pred, int w, int h, const uint8_t quant[64],
                                    uint8_t *recon)
{
  const int bw = w / 8, bh = h / 8;
  for (int by = 0; by < bh; by++) {
    for (int bx = 0; bx < bw; bx++) {
      const size_t off = (size_t)by * 8 * w + bx * 8;
      block(coeffs + ((size_t)by * bw + bx) * 64, quant, pred ? pred + off : NULL, w, recon + off);
    }
  }
}

/* The portable C implementation (the oracle). */
extern const c63_dsp c63_dsp_c;

/* The fastest implementation for this CPU: c63_dsp_c with the functions
 * that have a SIMD version replaced (same output, tested against it). */
void c63_dsp_init(c63_dsp *dsp);

/* The search window of the block at (mx, my) in a w x h plane: candidates
 * x in [left, right), y in [top, bottom) (format section 3). */
void c63_me_window(int mx, int my, int w, int h, int range, int *left, int *top, int *right,
                   int *bottom);

/* Each architecture's SIMD versions exist only in that architecture's
 * build (C63_ARCH_X86, C63_ARCH_AARCH64 in c63-config.h say which). */
/* Replace the functions that have an SSE4.1 version when this CPU has
 * SSE4.1; returns whether it did (used by c63_dsp_init and the tests). */
int c63_dsp_init_sse41(c63_dsp *dsp);
/* The same for AVX2 (dequantisation, inverse transform, reconstruction). */
int c63_dsp_init_avx2(c63_dsp *dsp);
/* The same for NEON, which every aarch64 CPU has: the motion search and
 * SAD window (me_neon.c), dequantisation, inverse transform and
 * reconstruction (idct_neon.c). Returns 1. */
int c63_dsp_init_neon(c63_dsp *dsp);
void c63_dsp_init_me_neon(c63_dsp *dsp);
void c63_dsp_init_idct_neon(c63_dsp *dsp);

#ifdef __cplusplus
}
#endif

#endif
