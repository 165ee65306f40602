/* The portable C implementation of the pixel stages: the oracle every other
 * implementation is compared with. The arithmetic follows docs/format.md
 * section 5 to the bit: float products and sums in the stated order (the
 * build forbids FMA contraction), double-precision rounding where stated.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <math.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "dsp.h"

/* t[i] = sum_j in[j] * C[j][i], j ascending. Written with i innermost so the
 * compiler can vectorise across i without changing any element's order. */
static void dct_1d(const float in[8], float out[8])
{
  float acc[8] = {0};
  for (int j = 0; j < 8; j++)
    for (int i = 0; i < 8; i++)
      acc[i] = acc[i] + in[j] * c63_dct_lookup[j][i];
  memcpy(out, acc, sizeof(acc));
}

/* t[i] = sum_j in[j] * C[i][j], j ascending. */
static void idct_1d(const float in[8], float out[8])
{
  float acc[8] = {0};
  for (int j = 0; j < 8; j++)
    for (int i = 0; i < 8; i++)
      acc[i] = acc[i] + in[j] * c63_dct_lookup[i][j];
  memcpy(out, acc, sizeof(acc));
}

static void transpose(const float in[64], float out[64])
{
  for (int i = 0; i < 8; i++)
    for (int j = 0; j < 8; j++)
      out[i * 8 + j] = in[j * 8 + i];
}

/* Rows, transpose, rows, transpose back: the second pass runs down columns. */
static void transform_2d(float mb[64], void (*pass)(const float *, float *))
{
  float tmp[64];
  for (int v = 0; v < 8; v++)
    pass(mb + v * 8, tmp + v * 8);
  transpose(tmp, mb);
  for (int v = 0; v < 8; v++)
    pass(mb + v * 8, tmp + v * 8);
  transpose(tmp, mb);
}

static void scale(float mb[64])
{
  for (int v = 0; v < 8; v++) {
    float a2 = v ? 1.0f : C63_ISQRT2;
    for (int u = 0; u < 8; u++) {
      float a1 = u ? 1.0f : C63_ISQRT2;
      mb[v * 8 + u] = mb[v * 8 + u] * a1 * a2;
    }
  }
}

void c63_fdct_block(const int16_t residual[64], float out[64])
{
  float mb[64];
  for (int i = 0; i < 64; i++)
    mb[i] = residual[i];
  transform_2d(mb, dct_1d);
  scale(mb);
  for (int z = 0; z < 64; z++)
    out[z] = mb[c63_zigzag_v[z] * 8 + c63_zigzag_u[z]];
}

void c63_quantise_block(const float dct[64], const uint8_t quant[64], int ac_limit, int16_t out[64])
{
  for (int z = 0; z < 64; z++) {
    float q = (float)round((dct[z] / 4.0) / quant[z]);
    /* The entropy code cannot carry larger AC magnitudes (dsp.h); DC fits. */
    if (z > 0 && q > ac_limit) q = (float)ac_limit;
    if (z > 0 && q < -ac_limit) q = (float)-ac_limit;
    out[z] = (int16_t)q;
  }
}

void c63_fdct_quant_block(const int16_t residual[64], const uint8_t quant[64], int ac_limit,
                          int16_t out[64])
{
  float dct[64];
  c63_fdct_block(residual, dct);
  c63_quantise_block(dct, quant, ac_limit, out);
}

void c63_dequant_idct_block(const int16_t in[64], const uint8_t quant[64], int16_t out[64])
{
  float mb[64];
  for (int z = 0; z < 64; z++) {
    /* The format's round((double)((float)in * quant) / 4.0): the product is
     * an integer under 2^24, exact in float, so rounding its quarter half
     * away from zero in integers gives the same value without libm. */
    const int v = in[z] * quant[z];
    mb[c63_zigzag_v[z] * 8 + c63_zigzag_u[z]] = (float)(v >= 0 ? (v + 2) >> 2 : -((-v + 2) >> 2));
  }
  scale(mb);
  transform_2d(mb, idct_1d);
  for (int i = 0; i < 64; i++) {
    /* Truncation toward zero; out-of-range values only come from corrupt
     * streams, and converting them would be undefined behaviour. */
    float f = mb[i];
    out[i] = f >= 32767.0f ? 32767 : f <= -32768.0f ? -32768 : (int16_t)f;
  }
}

int c63_sad_8x8(const uint8_t *a, int a_stride, const uint8_t *b, int b_stride)
{
  int sad = 0;
  for (int j = 0; j < 8; j++)
    for (int i = 0; i < 8; i++)
      sad += abs(a[j * a_stride + i] - b[j * b_stride + i]);
  return sad;
}

/* Search window of the block at (mx, my): bounds exclusive on the right and
 * bottom, as in the reference (format section 3). */
void c63_me_window(int mx, int my, int w, int h, int range, int *left, int *top, int *right,
                   int *bottom)
{
  *left = mx - range > 0 ? mx - range : 0;
  *top = my - range > 0 ? my - range : 0;
  *right = mx + range < w - 8 ? mx + range : w - 8;
  *bottom = my + range < h - 8 ? my + range : h - 8;
}

static void motion_search_block_c(const uint8_t *cur, const uint8_t *ref, int w, int h, int range,
                                  int mx, int my, c63_mv *mv)
{
  int left, top, right, bottom, best = 1 << 30, bx = mx, by = my;

  c63_me_window(mx, my, w, h, range, &left, &top, &right, &bottom);
  for (int y = top; y < bottom; y++) {
    for (int x = left; x < right; x++) {
      int sad = c63_sad_8x8(cur + my * w + mx, w, ref + y * w + x, w);
      if (sad < best) {
        best = sad;
        bx = x;
        by = y;
      }
    }
  }
  /* An empty window (e.g. chroma range 0) leaves the zero vector. */
  mv->x = (int8_t)(bx - mx);
  mv->y = (int8_t)(by - my);
  mv->use_mv = 1;
  mv->pad_ = 0;
}

static void motion_search_c(const uint8_t *cur, const uint8_t *ref, int w, int h, int range,
                            int by0, int by1, c63_mv *mvs)
{
  const int bw = w / 8;
  for (int by = by0; by < by1; by++)
    for (int bx = 0; bx < bw; bx++)
      motion_search_block_c(cur, ref, w, h, range, bx * 8, by * 8, &mvs[by * bw + bx]);
}

static void sad_window_c(const uint8_t *cur, const uint8_t *ref, int w, int mx, int my, int left,
                         int top, int right, int bottom, uint16_t *sads)
{
  for (int y = top; y < bottom; y++)
    for (int x = left; x < right; x++)
      *sads++ = (uint16_t)c63_sad_8x8(cur + my * w + mx, w, ref + y * w + x, w);
}

static void motion_compensate_c(const uint8_t *ref, int w, int h, const c63_mv *mvs, uint8_t *pred)
{
  const int bw = w / 8, bh = h / 8;
  for (int by = 0; by < bh; by++) {
    for (int bx = 0; bx < bw; bx++) {
      const c63_mv *mv = &mvs[by * bw + bx];
      uint8_t *dst = pred + by * 8 * w + bx * 8;
      if (!mv->use_mv) {
        for (int j = 0; j < 8; j++)
          memset(dst + j * w, 0, 8);
        continue;
      }
      /* Vectors from the encoder stay in the plane; the decoder validates
       * vectors from a stream before calling this. */
      const uint8_t *src = ref + (by * 8 + mv->y) * w + bx * 8 + mv->x;
      for (int j = 0; j < 8; j++)
        memcpy(dst + j * w, src + j * w, 8);
    }
  }
}

static void fdct_quant_c(const uint8_t *cur, const uint8_t *pred, int w, int h,
                         const uint8_t quant[64], int ac_limit, int16_t *coeffs)
{
  const int bw = w / 8, bh = h / 8;
  int16_t residual[64];
  for (int by = 0; by < bh; by++) {
    for (int bx = 0; bx < bw; bx++) {
      size_t off = (size_t)by * 8 * w + bx * 8;
      for (int j = 0; j < 8; j++)
        for (int i = 0; i < 8; i++)
          residual[j * 8 + i] =
              (int16_t)(cur[off + j * w + i] - (pred ? pred[off + j * w + i] : 0));
      c63_fdct_quant_block(residual, quant, ac_limit, coeffs + ((size_t)by * bw + bx) * 64);
    }
  }
}

static void dequant_idct_recon_c(const int16_t *coeffs, const uint8_t *pred, int w, int h,
                                 const uint8_t quant[64], uint8_t *recon)
{
  const int bw = w / 8, bh = h / 8;
  int16_t res[64];
  for (int by = 0; by < bh; by++) {
    for (int bx = 0; bx < bw; bx++) {
      size_t off = (size_t)by * 8 * w + bx * 8;
      c63_dequant_idct_block(coeffs + ((size_t)by * bw + bx) * 64, quant, res);
      for (int j = 0; j < 8; j++) {
        for (int i = 0; i < 8; i++) {
          /* The reference keeps the sum in int16_t before clamping: past
           * 32767 it wraps to a negative value, which clamps to 0. Only
           * crafted coefficients get there. */
          int v = res[j * 8 + i] + (pred ? pred[off + j * w + i] : 0);
          if (v > INT16_MAX) v = 0;
          recon[off + j * w + i] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
        }
      }
    }
  }
}

const c63_dsp c63_dsp_c = {
    .motion_search = motion_search_c,
    .sad_window = sad_window_c,
    .motion_compensate = motion_compensate_c,
    .fdct_quant = fdct_quant_c,
    .dequant_idct_recon = dequant_idct_recon_c,
};
