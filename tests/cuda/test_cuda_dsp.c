/* checkasm-style test of the CUDA stages: every kernel against its CPU twin
 * in c63_dsp_c (the oracle), on random inputs and edge cases (borders, flat
 * and saturated blocks, extreme vectors, tiny planes, every search range
 * class), comparing bytes. Without a CUDA device it prints SKIP and exits 77.
 *
 * C63_TEST_SEED=<n> reproduces a run; the seed is printed either way.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c63/c63.h"
#include "cuda/c63_cuda.h"
#include "cuda/c63_cuda_dsp.h"
#include "c63/dsp.h"

static uint64_t rng_state;
static int failures, checks;

static uint32_t rnd(void)
{
  /* xorshift64*: fast, reproducible from the printed seed. */
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return (uint32_t)((rng_state * 2685821657736338717ull) >> 32);
}

static int rnd_range(int lo, int hi) /* inclusive */
{
  return lo + (int)(rnd() % (uint32_t)(hi - lo + 1));
}

enum content { NOISE, FLAT, SATURATED, SMOOTH, SHIFTED, CONTENT_COUNT };
static const char *content_name[] = {"noise", "flat", "saturated", "smooth", "shifted"};

/* Fill a w x h plane. SHIFTED is filled by the caller from another plane. */
static void fill(uint8_t *p, int w, int h, enum content c, int seed_val)
{
  for (int y = 0; y < h; y++) {
    for (int x = 0; x < w; x++) {
      uint8_t v;
      switch (c) {
      case FLAT:
        v = (uint8_t)seed_val;
        break;
      case SATURATED:
        /* Blocks alternately black and white, with a few full-range
         * checkerboards: extreme residuals and maximal AC energy. */
        if (((x >> 3) + (y >> 3)) % 3 == 0)
          v = ((x ^ y) & 1) ? 255 : 0;
        else
          v = ((x >> 3) + (y >> 3) + seed_val) & 1 ? 255 : 0;
        break;
      case SMOOTH:
        v = (uint8_t)((x * 3 + y * 5 + seed_val) & 0xff);
        break;
      default:
        v = (uint8_t)rnd();
        break;
      }
      p[y * w + x] = v;
    }
  }
}

static void report(const char *stage, const char *what, int ok, const char *detail)
{
  checks++;
  if (!ok) {
    failures++;
    printf("%-22s %-44s FAILED %s\n", stage, what, detail);
  } else if (getenv("C63_TEST_VERBOSE")) {
    printf("%-22s %-44s ok\n", stage, what);
  }
}

static int cuda_ok(int status, const char *stage, const char *msg)
{
  if (status != C63_OK) {
    failures++;
    printf("%s: CUDA call failed: %s\n", stage, msg);
    return 0;
  }
  return 1;
}

/* ---- motion search ------------------------------------------------------ */

static void check_motion_search(int w, int h, int range, enum content c)
{
  uint8_t *cur = malloc((size_t)w * h), *ref = malloc((size_t)w * h);
  const int blocks = (w / 8) * (h / 8);
  c63_mv *want = malloc(blocks * sizeof *want), *got = malloc(blocks * sizeof *got);
  char msg[256], what[96], detail[160] = "";

  if (c == SHIFTED) {
    /* cur is ref moved by a vector at the edge of the range (the true match
     * at -range, the far side at +range - 1, which is the last candidate),
     * plus light noise so the match is not trivially unique. */
    fill(ref, w, h, NOISE, 0);
    int dx = rnd() & 1 ? -range : range - 1, dy = rnd() & 1 ? -range : range - 1;
    for (int y = 0; y < h; y++)
      for (int x = 0; x < w; x++) {
        int sx = x + dx, sy = y + dy;
        int v = (sx >= 0 && sy >= 0 && sx < w && sy < h) ? ref[sy * w + sx] : (int)(rnd() & 255);
        v += rnd_range(-2, 2);
        cur[y * w + x] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
      }
  } else {
    fill(cur, w, h, c, rnd_range(0, 255));
    /* Flat planes with equal values make every SAD equal: pure tie-break. */
    if (c == FLAT)
      memcpy(ref, cur, (size_t)w * h);
    else
      fill(ref, w, h, c, rnd_range(0, 255));
  }

  memset(want, 0xAA, blocks * sizeof *want);
  memset(got, 0x55, blocks * sizeof *got);
  c63_motion_search_plane(&c63_dsp_c, cur, ref, w, h, range, want);
  snprintf(what, sizeof what, "%dx%d range %d %s", w, h, range, content_name[c]);
  if (cuda_ok(c63_cuda_test_motion_search(cur, ref, w, h, range, got, msg, sizeof msg),
              "motion_search", msg)) {
    int ok = memcmp(want, got, blocks * sizeof *want) == 0;
    if (!ok) {
      for (int b = 0; b < blocks; b++)
        if (memcmp(&want[b], &got[b], sizeof *want)) {
          snprintf(detail, sizeof detail, "block %d (%d,%d): cpu (%d,%d,%d) gpu (%d,%d,%d)", b,
                   b % (w / 8), b / (w / 8), want[b].x, want[b].y, want[b].use_mv, got[b].x,
                   got[b].y, got[b].use_mv);
          break;
        }
    }
    report("motion_search", what, ok, detail);
  }
  free(cur);
  free(ref);
  free(want);
  free(got);
}

/* ---- motion compensation ----------------------------------------------- */

static void check_motion_compensate(int w, int h, int extreme)
{
  uint8_t *ref = malloc((size_t)w * h);
  const int bw = w / 8, bh = h / 8, blocks = bw * bh;
  uint8_t *want = malloc((size_t)w * h), *got = malloc((size_t)w * h);
  c63_mv *mvs = calloc(blocks, sizeof *mvs);
  char msg[256], what[96], detail[96] = "";

  fill(ref, w, h, NOISE, 0);
  /* Random vectors inside the plane (what the search produces); "extreme"
   * pins each to a corner of its legal range. */
  for (int b = 0; b < blocks; b++) {
    int mx = (b % bw) * 8, my = (b / bw) * 8;
    int lo_x = -mx > -127 ? -mx : -127, hi_x = w - 8 - mx < 127 ? w - 8 - mx : 127;
    int lo_y = -my > -127 ? -my : -127, hi_y = h - 8 - my < 127 ? h - 8 - my : 127;
    mvs[b].use_mv = (rnd() % 8) != 0;
    mvs[b].x = (int8_t)(extreme ? (rnd() & 1 ? lo_x : hi_x) : rnd_range(lo_x, hi_x));
    mvs[b].y = (int8_t)(extreme ? (rnd() & 1 ? lo_y : hi_y) : rnd_range(lo_y, hi_y));
  }
  c63_dsp_c.motion_compensate(ref, w, h, mvs, want);
  memset(got, 0x5A, (size_t)w * h);
  snprintf(what, sizeof what, "%dx%d %s vectors", w, h, extreme ? "extreme" : "random");
  if (cuda_ok(c63_cuda_test_motion_compensate(ref, w, h, mvs, got, msg, sizeof msg),
              "motion_compensate", msg)) {
    int ok = memcmp(want, got, (size_t)w * h) == 0;
    if (!ok)
      for (int i = 0; i < w * h; i++)
        if (want[i] != got[i]) {
          snprintf(detail, sizeof detail, "pixel (%d,%d): cpu %d gpu %d", i % w, i / w, want[i],
                   got[i]);
          break;
        }
    report("motion_compensate", what, ok, detail);
  }
  free(ref);
  free(want);
  free(got);
  free(mvs);
}

/* ---- transforms --------------------------------------------------------- */

enum quant_kind { Q_QUALITY, Q_ONES, Q_MAX, Q_RANDOM, QUANT_COUNT };
static const char *quant_name[] = {"quality", "quant=1", "quant=255", "random-quant"};

static void make_quant(uint8_t q[64], enum quant_kind k, int plane)
{
  /* Annex K defaults (zig-zag), scaled like the encoder for a random quality. */
  static const uint8_t def_y[64] = {16,  11, 12, 14,  12,  10,  16,  14,  13, 14,  18,  17,  16,
                                    19,  24, 40, 26,  24,  22,  22,  24,  49, 35,  37,  29,  40,
                                    58,  51, 61, 30,  57,  51,  56,  55,  64, 72,  92,  78,  64,
                                    68,  87, 69, 55,  56,  80,  109, 81,  87, 95,  98,  103, 104,
                                    103, 62, 77, 113, 121, 112, 100, 120, 92, 101, 103, 99};
  static const uint8_t def_uv_head[14] = {17, 18, 18, 24, 21, 24, 47, 26, 26, 47, 99, 66, 56, 66};
  int quality = rnd_range(5, 50);
  for (int z = 0; z < 64; z++) {
    int d = plane == 0 ? def_y[z] : (z < 14 ? def_uv_head[z] : 99);
    switch (k) {
    case Q_QUALITY:
      q[z] = (uint8_t)(d / (quality / 10.0));
      break;
    case Q_ONES:
      q[z] = 1;
      break;
    case Q_MAX:
      q[z] = 255;
      break;
    default:
      q[z] = (uint8_t)rnd_range(1, 255);
      break;
    }
  }
}

static void check_fdct(int w, int h, enum content c, int with_pred, enum quant_kind qk, int plane)
{
  const size_t n = (size_t)w * h;
  uint8_t *cur = malloc(n), *pred = malloc(n), quant[64];
  int16_t *want = malloc(n * 2), *got = malloc(n * 2);
  char msg[256], what[96], detail[96] = "";

  fill(cur, w, h, c == SHIFTED ? NOISE : c, rnd_range(0, 255));
  /* A saturated current frame against the inverted prediction gives
   * residuals of +-255, the extremes of the transform's input. */
  fill(pred, w, h, c == SATURATED ? SATURATED : NOISE, 1);
  if (c == SATURATED)
    for (size_t i = 0; i < n; i++)
      pred[i] = (uint8_t)(255 - cur[i]);
  make_quant(quant, qk, plane);
  const int lim = c63_ac_limit(plane);
  c63_dsp_c.fdct_quant(cur, with_pred ? pred : NULL, w, h, quant, lim, want);
  memset(got, 0x5A, n * 2);
  snprintf(what, sizeof what, "%dx%d %s %s %s lim %d", w, h, content_name[c],
           with_pred ? "pred" : "intra", quant_name[qk], lim);
  if (cuda_ok(c63_cuda_test_fdct_quant(cur, with_pred ? pred : NULL, w, h, quant, lim, got, msg,
                                       sizeof msg),
              "fdct_quant", msg)) {
    int ok = memcmp(want, got, n * 2) == 0;
    if (!ok)
      for (size_t i = 0; i < n; i++)
        if (want[i] != got[i]) {
          snprintf(detail, sizeof detail, "block %zu coeff %zu: cpu %d gpu %d", i / 64, i % 64,
                   want[i], got[i]);
          break;
        }
    report("fdct_quant", what, ok, detail);
  }
  free(cur);
  free(pred);
  free(want);
  free(got);
}

enum coeff_kind { C_TYPICAL, C_LARGE, C_FULL, C_ZERO, C_FROM_FDCT, C_WRAP, COEFF_COUNT };
static const char *coeff_name[] = {"typical", "large",     "full-int16",
                                   "zero",    "from-fdct", "int16-wrap"};

/* A zero quantiser divides by zero in the reference's expression (the CPU
 * and the GPU would turn its infinity into different integers): the GPU
 * refuses the table rather than code anything. */
static void check_zero_quant(void)
{
  uint8_t cur[64] = {0}, quant[64];
  int16_t coeffs[64];
  char msg[256] = "";
  for (int z = 0; z < 64; z++)
    quant[z] = 16;
  quant[rnd_range(0, 63)] = 0;
  const int status =
      c63_cuda_test_fdct_quant(cur, NULL, 8, 8, quant, 2047, coeffs, msg, sizeof msg);
  char detail[300];
  snprintf(detail, sizeof detail, "status %d (%s)", status, msg);
  report("fdct_quant", "a zero quantiser refused", status == C63_ERR_INVALID_ARG, detail);
}

static void check_recon(int w, int h, enum coeff_kind ck, int with_pred, enum quant_kind qk)
{
  const size_t n = (size_t)w * h;
  uint8_t *pred = malloc(n), *want = malloc(n), *got = malloc(n), quant[64];
  int16_t *coeffs = malloc(n * 2);
  char msg[256], what[96], detail[96] = "";

  make_quant(quant, qk, rnd() & 1);
  if (ck == C_WRAP) quant[0] = 255;
  fill(pred, w, h, rnd() & 1 ? NOISE : SATURATED, 0);
  if (ck == C_FROM_FDCT) {
    uint8_t *cur = malloc(n);
    fill(cur, w, h, NOISE, 0);
    c63_dsp_c.fdct_quant(cur, with_pred ? pred : NULL, w, h, quant, 511, coeffs);
    free(cur);
  } else {
    for (size_t i = 0; i < n; i++) {
      int v;
      switch (ck) {
      case C_TYPICAL:
        /* Mostly zeros with small values, like real quantised data. */
        v = (rnd() % 4 == 0) ? rnd_range(-40, 40) : 0;
        if (i % 64 == 0) v = rnd_range(-1020, 1020);
        break;
      case C_LARGE:
        v = rnd_range(-2047, 2047);
        break;
      case C_FULL:
        v = rnd_range(-32768, 32767);
        break;
      case C_WRAP:
        /* DC only, with a DC quantiser of 255 an IDCT output near 32767:
         * prediction + output wraps in int16 as in the reference */
        v = i % 64 == 0 ? rnd_range(1015, 1026) : 0;
        break;
      default:
        v = 0;
        break;
      }
      coeffs[i] = (int16_t)v;
    }
  }
  c63_dsp_c.dequant_idct_recon(coeffs, with_pred ? pred : NULL, w, h, quant, want);
  memset(got, 0x5A, n);
  snprintf(what, sizeof what, "%dx%d %s %s %s", w, h, coeff_name[ck], with_pred ? "pred" : "intra",
           quant_name[qk]);
  if (cuda_ok(c63_cuda_test_dequant_idct_recon(coeffs, with_pred ? pred : NULL, w, h, quant, got,
                                               msg, sizeof msg),
              "dequant_idct_recon", msg)) {
    int ok = memcmp(want, got, n) == 0;
    if (!ok)
      for (size_t i = 0; i < n; i++)
        if (want[i] != got[i]) {
          snprintf(detail, sizeof detail, "pixel (%zu,%zu): cpu %d gpu %d", i % w, i / w, want[i],
                   got[i]);
          break;
        }
    report("dequant_idct_recon", what, ok, detail);
  }
  free(pred);
  free(want);
  free(got);
  free(coeffs);
}

int main(void)
{
  char msg[256];
  if (c63_cuda_device_count(msg, sizeof msg) <= 0) {
    printf("SKIP: %s\n", msg);
    return 77;
  }
  const char *s = getenv("C63_TEST_SEED");
  uint64_t seed = s ? strtoull(s, NULL, 0) : 0x63c63c63ull;
  rng_state = seed ? seed : 1;
  printf("test_cuda_dsp: seed %" PRIu64 " (set C63_TEST_SEED to repeat)\n", seed);

  /* Sizes: the smallest planes (no candidate at all), widths that are not
   * multiples of 16, chroma-like planes, and a CIF frame. */
  static const int sizes[][2] = {{8, 8},   {16, 8},  {8, 24},    {24, 16},
                                 {40, 32}, {88, 72}, {176, 144}, {352, 288}};
  static const int ranges[] = {0, 1, 2, 3, 7, 8, 15, 16, 17, 32, 64};
  /* C63_TEST_QUICK: the smaller half of the cases, for compute-sanitizer. */
  const int quick = getenv("C63_TEST_QUICK") != NULL;
  const int nsizes = (int)(sizeof sizes / sizeof sizes[0]) - (quick ? 3 : 0);
  for (int si = 0; si < nsizes; si++) {
    const int w = sizes[si][0], h = sizes[si][1];
    for (size_t ri = 0; ri < sizeof ranges / sizeof ranges[0]; ri++) {
      /* The CPU oracle is slow at wide ranges on large planes. */
      if ((size_t)w * h * ranges[ri] * ranges[ri] > 176u * 144 * 32 * 32) continue;
      for (int c = 0; c < CONTENT_COUNT; c++)
        check_motion_search(w, h, ranges[ri], (enum content)c);
    }
    check_motion_compensate(w, h, 0);
    check_motion_compensate(w, h, 1);
    for (int c = 0; c < CONTENT_COUNT; c++)
      for (int qk = 0; qk < QUANT_COUNT; qk++)
        for (int wp = 0; wp < 2; wp++)
          check_fdct(w, h, (enum content)c, wp, (enum quant_kind)qk, (c + qk) % 2);
    for (int ck = 0; ck < COEFF_COUNT; ck++)
      for (int qk = 0; qk < QUANT_COUNT; qk++)
        for (int wp = 0; wp < 2; wp++)
          check_recon(w, h, (enum coeff_kind)ck, wp, (enum quant_kind)qk);
  }
  check_zero_quant();
  /* A 1080p luma plane once per stage: many blocks per launch. */
  if (!quick) {
    check_fdct(1920, 1088, NOISE, 1, Q_QUALITY, 0);
    check_recon(1920, 1088, C_FROM_FDCT, 1, Q_QUALITY);
    check_motion_search(1920, 1088, 4, NOISE);
  }

  printf("test_cuda_dsp: %d checks, %d failed\n", checks, failures);
  return failures ? 1 : 0;
}
