/* The transform on edge inputs, and every optimised DSP function against
 * the C oracle on random and edge inputs (checkasm style).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "c63-config.h"
#include "c63/dsp.h"
#include "c63/tables.h"
#include "tutil.h"

/* Deterministic, so failures reproduce. */
static uint64_t rng = 0x12345678u;

static uint8_t quant_flat[64];

/* Every SIMD version this build has, each applied alone to a copy of the C
 * table (its init returns 0 where the CPU lacks the instructions). */
static const struct simd_version {
  const char *name;
  int (*init)(c63_dsp *dsp);
} simd_versions[] = {
#if C63_ARCH_X86
    {"SSE4.1", c63_dsp_init_sse41},
    {"AVX2", c63_dsp_init_avx2},
#endif
#if C63_ARCH_AARCH64
    {"NEON", c63_dsp_init_neon},
#endif
    {NULL, NULL},
};

/* The next version after *index that replaces the function at offset
 * `member` of the table, initialised into *opt; NULL when none is left. */
static const char *next_version(size_t *index, size_t member, c63_dsp *opt)
{
  for (; simd_versions[*index].name; ++*index) {
    *opt = c63_dsp_c;
    if (!simd_versions[*index].init(opt)) {
      printf("%s: not on this CPU, not tested\n", simd_versions[*index].name);
      continue;
    }
    if (memcmp((char *)opt + member, (const char *)&c63_dsp_c + member, sizeof(void (*)(void))))
      return simd_versions[(*index)++].name;
  }
  return NULL;
}

/* A flat residual has only a DC coefficient: 64 * r * S * S / 4 / q. */
static void test_flat(void)
{
  int16_t res[64], coef[64], back[64];
  for (int v = -255; v <= 255; v += 17) {
    for (int i = 0; i < 64; i++)
      res[i] = (int16_t)v;
    c63_fdct_quant_block(res, quant_flat, 511, coef);
    TU_CHECK_EQ(coef[0], (int)round(v * 8.0 / 1.0));
    for (int z = 1; z < 64; z++)
      TU_CHECK_EQ(coef[z], 0);
    c63_dequant_idct_block(coef, quant_flat, back);
    for (int i = 0; i < 64; i++)
      TU_CHECK_TRUE(abs(back[i] - v) <= 1);
  }
}

/* Zero in, zero out, in both directions. */
static void test_zero(void)
{
  int16_t zero[64] = {0}, out[64];
  c63_fdct_quant_block(zero, quant_flat, 511, out);
  TU_CHECK_TRUE(memcmp(out, zero, sizeof(zero)) == 0);
  c63_dequant_idct_block(zero, quant_flat, out);
  TU_CHECK_TRUE(memcmp(out, zero, sizeof(zero)) == 0);
}

/* A saturated checkerboard puts its energy in the highest frequency, beyond
 * what the luma AC code can carry: the coefficient is clamped to the limit
 * (and a looser limit lets it through). */
static void test_saturated_alternating(void)
{
  int16_t res[64], coef[64], coef_wide[64];
  for (int j = 0; j < 8; j++)
    for (int i = 0; i < 8; i++)
      res[j * 8 + i] = (int16_t)(((i + j) & 1) ? -255 : 255);
  c63_fdct_quant_block(res, quant_flat, 511, coef);
  c63_fdct_quant_block(res, quant_flat, 30000, coef_wide);
  TU_CHECK_EQ(coef[63], 511);
  TU_CHECK_TRUE(coef_wide[63] > 511);
  for (int z = 0; z < 64; z++)
    TU_CHECK_TRUE(coef[z] >= -511 && coef[z] <= 511);

  /* alternating columns only: energy in row 0, column 7 (zig-zag index 28) */
  for (int j = 0; j < 8; j++)
    for (int i = 0; i < 8; i++)
      res[j * 8 + i] = (int16_t)((i & 1) ? -100 : 100);
  uint8_t q8[64];
  memset(q8, 8, sizeof(q8));
  c63_fdct_quant_block(res, q8, 511, coef);
  TU_CHECK_TRUE(coef[28] != 0);
  TU_CHECK_EQ(coef[0], 0);
  int16_t back[64];
  c63_dequant_idct_block(coef, q8, back);
  for (int i = 0; i < 64; i++)
    TU_CHECK_TRUE(abs(back[i] - res[i]) <= 12);
}

/* Random residuals survive a round trip with the finest quantiser: the
 * format divides coefficients by 4 before rounding and truncates after the
 * inverse transform, so a few levels of error remain, but no more. */
static void test_random_roundtrip(void)
{
  int16_t res[64], coef[64], back[64];
  int worst = 0;
  long total = 0;
  for (int n = 0; n < 2000; n++) {
    for (int i = 0; i < 64; i++)
      res[i] = (int16_t)((int)(tu_rand(&rng) % 511) - 255);
    c63_fdct_quant_block(res, quant_flat, 1023, coef);
    c63_dequant_idct_block(coef, quant_flat, back);
    for (int i = 0; i < 64; i++) {
      int e = abs(back[i] - res[i]);
      worst = e > worst ? e : worst;
      total += e;
    }
  }
  TU_CHECK_TRUE(worst <= 6);
  TU_CHECK_TRUE(total < 2000L * 64); /* mean absolute error below one level */
}

static void fill_random(uint8_t *p, size_t n, int lo, int hi)
{
  for (size_t i = 0; i < n; i++)
    p[i] = (uint8_t)(lo + (int)(tu_rand(&rng) % (unsigned)(hi - lo + 1)));
}

/* The optimised motion search against the oracle, vector for vector. */
static void test_motion_search_version(const char *name, const c63_dsp *impl)
{
  const c63_dsp opt = *impl;
  printf("motion search: %s against C\n", name);
  static const int sizes[][2] = {{8, 8}, {16, 16}, {24, 8}, {40, 32}, {88, 72}, {176, 144}};
  static const int ranges[] = {0, 1, 3, 7, 8, 9, 16, 31, 64};
  for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
    int w = sizes[s][0], h = sizes[s][1];
    size_t n = (size_t)w * h, blocks = n / 64;
    uint8_t *cur = malloc(n), *ref = malloc(n);
    c63_mv *a = calloc(blocks, sizeof(c63_mv)), *b = calloc(blocks, sizeof(c63_mv));
    for (size_t r = 0; r < sizeof(ranges) / sizeof(ranges[0]); r++) {
      for (int kind = 0; kind < 3; kind++) {
        /* random, flat (all ties), and few-valued (many ties) content */
        if (kind == 0) {
          fill_random(cur, n, 0, 255);
          fill_random(ref, n, 0, 255);
        } else if (kind == 1) {
          memset(cur, 200, n);
          memset(ref, 17, n);
        } else {
          fill_random(cur, n, 254, 255);
          fill_random(ref, n, 0, 1);
        }
        c63_motion_search_plane(&c63_dsp_c, cur, ref, w, h, ranges[r], a);
        c63_motion_search_plane(&opt, cur, ref, w, h, ranges[r], b);
        /* in stripes of block rows, as the threaded CPU backend runs it */
        c63_mv *c = calloc(blocks, sizeof(c63_mv));
        for (int by = 0; by < h / 8; by += 3)
          opt.motion_search(cur, ref, w, h, ranges[r], by, by + 3 < h / 8 ? by + 3 : h / 8, c);
        TU_CHECK_TRUE(memcmp(b, c, blocks * sizeof(c63_mv)) == 0);
        free(c);
        for (size_t i = 0; i < blocks; i++) {
          if (a[i].x != b[i].x || a[i].y != b[i].y || a[i].use_mv != b[i].use_mv) {
            fprintf(stderr, "%dx%d range %d kind %d block %zu: C (%d,%d) %s (%d,%d)\n", w, h,
                    ranges[r], kind, i, a[i].x, a[i].y, name, b[i].x, b[i].y);
            tu_failures++;
            break;
          }
        }
      }
    }
    free(cur);
    free(ref);
    free(a);
    free(b);
  }
}

static void test_motion_search_simd(void)
{
  c63_dsp opt;
  const char *name;
  for (size_t i = 0; (name = next_version(&i, offsetof(c63_dsp, motion_search), &opt));)
    test_motion_search_version(name, &opt);
}

/* The optimised SAD window against the oracle, for blocks at the corners,
 * edges and middle of planes whose widths leave partial groups of eight. */
static void test_sad_window_version(const char *name, const c63_dsp *opt)
{
  static const int sizes[][2] = {{16, 16}, {40, 32}, {88, 72}};
  printf("sad window: %s against C\n", name);
  for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
    const int w = sizes[s][0], h = sizes[s][1], range = 16;
    uint8_t *cur = malloc((size_t)w * h), *ref = malloc((size_t)w * h);
    uint16_t a[32 * 32], b[32 * 32];
    fill_random(cur, (size_t)w * h, 0, 255);
    fill_random(ref, (size_t)w * h, 0, 255);
    for (int my = 0; my < h; my += 8) {
      for (int mx = 0; mx < w; mx += 8) {
        int left, top, right, bottom;
        c63_me_window(mx, my, w, h, range, &left, &top, &right, &bottom);
        const size_t n = (size_t)(right - left) * (bottom - top);
        c63_dsp_c.sad_window(cur, ref, w, mx, my, left, top, right, bottom, a);
        opt->sad_window(cur, ref, w, mx, my, left, top, right, bottom, b);
        if (memcmp(a, b, n * sizeof(*a)) != 0) {
          fprintf(stderr, "sad window %dx%d block (%d,%d): %s differs from C\n", w, h, mx, my,
                  name);
          tu_failures++;
        }
      }
    }
    free(cur);
    free(ref);
  }
}

static void test_sad_window_simd(void)
{
  c63_dsp opt;
  const char *name;
  for (size_t i = 0; (name = next_version(&i, offsetof(c63_dsp, sad_window), &opt));)
    test_sad_window_version(name, &opt);
}

/* The dequantisation's integer rounding against the format's double
 * formula, for every coefficient and quantiser value. */
static void test_dequant_rounding(void)
{
  long bad = 0;
  for (int q = 0; q < 256; q++) {
    for (int in = -32768; in <= 32767; in++) {
      const float want = (float)round((double)((float)in * q) / 4.0);
      const int v = in * q;
      const float got = (float)(v >= 0 ? (v + 2) >> 2 : -((-v + 2) >> 2));
      bad += want != got;
    }
  }
  TU_CHECK_EQ(bad, 0);
}

/* The optimised dequantisation + inverse transform + reconstruction
 * against the oracle, byte for byte: realistic, sparse and extreme
 * coefficients (corrupt streams reach all of int16), every quantiser
 * value, with and without a prediction, several plane sizes. */
static void test_dequant_idct_recon_version(const char *name, const c63_dsp *impl)
{
  const c63_dsp opt = *impl;
  printf("dequant_idct_recon: %s against C\n", name);
  static const int sizes[][2] = {{8, 8}, {16, 24}, {64, 8}, {1920, 16}};
  for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
    const int w = sizes[s][0], h = sizes[s][1];
    const size_t n = (size_t)w * h;
    int16_t *coeffs = malloc(n * sizeof(int16_t));
    uint8_t *pred = malloc(n), *a = malloc(n), *b = malloc(n), quant[64];
    for (int kind = 0; kind < 9; kind++) {
      for (size_t i = 0; i < n; i++) {
        int v;
        switch (kind) {
        case 0: /* small, as real streams have */
          v = (int)(tu_rand(&rng) % 41) - 20;
          break;
        case 1: /* sparse */
          v = tu_rand(&rng) % 8 == 0 ? (int)(tu_rand(&rng) % 201) - 100 : 0;
          break;
        case 2: /* any int16 */
          v = (int)(int16_t)tu_rand(&rng);
          break;
        case 3: /* extremes */
          v = tu_rand(&rng) % 2 ? 32767 : -32768;
          break;
        case 6: /* DC only (the optimised version takes a shortcut) */
          v = i % 64 == 0 ? (int)(int16_t)tu_rand(&rng) : 0;
          break;
        case 8: /* DC only, IDCT output near 32767: prediction + output wraps in int16 */
          v = i % 64 == 0 ? 1015 + (int)(tu_rand(&rng) % 12) : 0;
          break;
        case 7: /* DC and one AC coefficient at 16, 32 or 48 */
          v = i % 64 == 0 || i % 64 == 16 * (1 + (i / 64) % 3) ? (int)(tu_rand(&rng) % 201) - 100
                                                               : 0;
          break;
        default: /* mid-range */
          v = (int)(tu_rand(&rng) % 4001) - 2000;
          break;
        }
        coeffs[i] = (int16_t)v;
      }
      for (int z = 0; z < 64; z++)
        quant[z] = kind == 5 ? (uint8_t)(z * 4) : (uint8_t)tu_rand(&rng); /* 0..255 */
      if (kind == 8) quant[0] = 255;
      fill_random(pred, n, 0, 255);
      for (int with_pred = 0; with_pred < 2; with_pred++) {
        c63_dsp_c.dequant_idct_recon(coeffs, with_pred ? pred : NULL, w, h, quant, a);
        opt.dequant_idct_recon(coeffs, with_pred ? pred : NULL, w, h, quant, b);
        if (memcmp(a, b, n) != 0) {
          fprintf(stderr, "dequant_idct_recon %dx%d kind %d pred %d: %s differs from C\n", w, h,
                  kind, with_pred, name);
          tu_failures++;
        }
      }
    }
    free(coeffs);
    free(pred);
    free(a);
    free(b);
  }
}

static void test_dequant_idct_recon_simd(void)
{
  c63_dsp opt;
  const char *name;
  for (size_t i = 0; (name = next_version(&i, offsetof(c63_dsp, dequant_idct_recon), &opt));)
    test_dequant_idct_recon_version(name, &opt);
}

/* Flat planes: every candidate ties, so the first in raster order wins,
 * i.e. the top-left corner of the clipped window. */
static void test_tie_break_and_borders(void)
{
  const int w = 64, h = 48, R = 16;
  uint8_t cur[64 * 48], ref[64 * 48];
  c63_mv mvs[8 * 6];
  c63_dsp dsp;
  c63_dsp_init(&dsp);
  const c63_dsp *impls[2] = {&c63_dsp_c, &dsp};

  memset(cur, 50, sizeof(cur));
  memset(ref, 50, sizeof(ref));
  for (int k = 0; k < 2; k++) {
    c63_motion_search_plane(impls[k], cur, ref, w, h, R, mvs);
    TU_CHECK_EQ(mvs[0].x, 0); /* block (0,0): window starts at the plane's corner */
    TU_CHECK_EQ(mvs[0].y, 0);
    TU_CHECK_EQ(mvs[2 * 8 + 3].x, -16); /* block (24,16): window starts at (8,0) */
    TU_CHECK_EQ(mvs[2 * 8 + 3].y, -16);
    TU_CHECK_EQ(mvs[2 * 8 + 3].use_mv, 1);
  }

  /* A unique match exactly at +R is outside the window (exclusive bound);
   * at +R-1 it is found. */
  for (int k = 0; k < 2; k++) {
    for (int d = R - 1; d <= R; d++) {
      fill_random(ref, sizeof(ref), 0, 255);
      fill_random(cur, sizeof(cur), 0, 255);
      /* block (16,16) of cur copies ref at (16+d, 16+d) */
      for (int j = 0; j < 8; j++)
        memcpy(cur + (16 + j) * w + 16, ref + (16 + d + j) * w + 16 + d, 8);
      c63_motion_search_plane(impls[k], cur, ref, w, h, R, mvs);
      c63_mv mv = mvs[2 * 8 + 2];
      if (d == R - 1) {
        TU_CHECK_EQ(mv.x, d);
        TU_CHECK_EQ(mv.y, d);
      } else {
        TU_CHECK_TRUE(mv.x != d || mv.y != d);
        TU_CHECK_TRUE(mv.x < R && mv.y < R);
      }
    }
  }

  /* Right and bottom borders: the window is clipped to w - 8 / h - 8
   * (exclusive), so the last block's vectors are never positive. */
  fill_random(ref, sizeof(ref), 0, 255);
  fill_random(cur, sizeof(cur), 0, 255);
  for (int k = 0; k < 2; k++) {
    c63_motion_search_plane(impls[k], cur, ref, w, h, R, mvs);
    c63_mv last = mvs[6 * 8 - 1];
    TU_CHECK_TRUE(last.x <= 0 && last.x >= -R && last.y <= 0 && last.y >= -R);
  }
}

/* Compensation copies the displaced block; use_mv = 0 predicts zeros. */
static void test_motion_compensate(void)
{
  const int w = 32, h = 16;
  uint8_t ref[32 * 16], pred[32 * 16];
  c63_mv mvs[4 * 2] = {{0}};
  for (int i = 0; i < w * h; i++)
    ref[i] = (uint8_t)i;
  for (int i = 0; i < 8; i++)
    mvs[i].use_mv = 1;
  mvs[3].x = -24; /* block (24,0) from (0,8): the far corner */
  mvs[3].y = 8;
  mvs[4].use_mv = 0;
  c63_dsp_c.motion_compensate(ref, w, h, mvs, pred);
  for (int j = 0; j < 8; j++)
    for (int i = 0; i < 8; i++) {
      TU_CHECK_EQ(pred[j * w + 24 + i], ref[(8 + j) * w + i]);
      TU_CHECK_EQ(pred[(8 + j) * w + i], 0);
      TU_CHECK_EQ(pred[j * w + i], ref[j * w + i]);
    }
}

int main(void)
{
  memset(quant_flat, 1, sizeof(quant_flat));
  test_flat();
  test_zero();
  test_saturated_alternating();
  test_random_roundtrip();
  test_motion_search_simd();
  test_sad_window_simd();
  test_dequant_rounding();
  test_dequant_idct_recon_simd();
  test_tie_break_and_borders();
  test_motion_compensate();
  return tu_finish("test_dsp");
}
