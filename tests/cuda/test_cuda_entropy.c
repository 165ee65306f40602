/* GPU entropy coding against the CPU coder, byte for byte: the stuffing
 * stage alone (c63_write_stuffed: FF runs, every pending-bit count, the
 * register-zero case that writes no flush byte) and whole frames
 * (c63_entropy_encode) at many sizes, odd ones included, on content from
 * all-zero to noise at the coefficient limits, keyframes and delta frames
 * with reused vectors. Without a CUDA device it prints SKIP and exits 77.
 *
 * C63_TEST_SEED=<n> reproduces a run; the seed is printed either way.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c63/bitwriter.h"
#include "c63/c63.h"
#include "cuda/c63_cuda.h"
#include "cuda/c63_cuda_dsp.h"
#include "c63/entropy.h"
#include "c63/geometry.h"
#include "c63/threadpool.h"
#include "tutil.h"

static uint64_t rng_state;
static int failures, checks;

static uint32_t rnd(void)
{
  return (uint32_t)(tu_rand(&rng_state) >> 32);
}

static int rnd_range(int lo, int hi) /* inclusive */
{
  return lo + (int)(rnd() % (uint32_t)(hi - lo + 1));
}

/* Compare two byte strings; on a difference say where. */
static void compare(const char *stage, const char *what, const uint8_t *want, size_t want_n,
                    const uint8_t *got, size_t got_n)
{
  char detail[160] = "";
  int ok = want_n == got_n && memcmp(want, got, want_n) == 0;
  if (!ok) {
    size_t i = 0;
    while (i < want_n && i < got_n && want[i] == got[i])
      i++;
    snprintf(detail, sizeof detail, "sizes cpu %zu gpu %zu, first difference at byte %zu", want_n,
             got_n, i);
  }
  checks++;
  if (!ok) {
    failures++;
    printf("%-10s %-52s FAILED %s\n", stage, what, detail);
  } else if (getenv("C63_TEST_VERBOSE")) {
    printf("%-10s %-52s ok\n", stage, what);
  }
}

/* ---- stuffing and the flush rule ------------------------------------------ */

enum bytes_kind { B_ZERO, B_FF, B_RANDOM, B_HALF_FF, B_FF_END, BYTES_COUNT };
static const char *bytes_name[] = {"zeros", "all FF", "random", "half FF", "FF at the end"};

static void check_stuffing(size_t n, enum bytes_kind k, int pending_bits, uint32_t pending)
{
  uint8_t *data = malloc(n + 1);
  for (size_t i = 0; i < n; i++) {
    switch (k) {
    case B_ZERO:
      data[i] = 0;
      break;
    case B_FF:
      data[i] = 0xff;
      break;
    case B_HALF_FF:
      data[i] = rnd() & 1 ? 0xff : (uint8_t)rnd();
      break;
    case B_FF_END:
      data[i] = i + 3 >= n ? 0xff : (uint8_t)(rnd() & 0x7f);
      break;
    default:
      data[i] = (uint8_t)rnd();
      break;
    }
  }
  c63_bytebuf want = {0};
  if (c63_write_stuffed(&want, data, n, pending, pending_bits) < 0) {
    printf("out of memory\n");
    exit(1);
  }
  const size_t cap = 2 * n + 16;
  uint8_t *got = malloc(cap);
  size_t got_n = 0;
  char msg[256], what[96];
  snprintf(what, sizeof what, "%zu bytes %s, %d pending bits %#x", n, bytes_name[k], pending_bits,
           pending & ((1u << pending_bits) - 1));
  if (c63_cuda_test_write_stuffed(data, n, pending, pending_bits, got, cap, &got_n, msg,
                                  sizeof msg)) {
    failures++;
    printf("stuffing: CUDA call failed: %s\n", msg);
  } else {
    compare("stuffing", what, want.data, want.size, got, got_n);
  }
  c63_bytebuf_free(&want);
  free(got);
  free(data);
}

/* ---- whole frames ------------------------------------------------------------ */

enum frame_kind { F_ZERO, F_SPARSE, F_TYPICAL, F_NOISE, F_LIMITS, FRAME_COUNT };
static const char *frame_name[] = {"zero", "sparse", "typical", "noise", "at the limits"};

static int16_t coefficient(enum frame_kind k, int c, int z)
{
  const int limit = c63_ac_limit(c);
  switch (k) {
  case F_ZERO:
    return 0;
  case F_SPARSE:
    return (rnd() % 40 == 0) ? (int16_t)rnd_range(-3, 3) : 0;
  case F_TYPICAL:
    return (rnd() % (z + 2) == 0) ? (int16_t)rnd_range(-20, 20) : 0;
  case F_NOISE:
    return (int16_t)rnd_range(z ? -limit : -1023, z ? limit : 1023);
  default:
    return (int16_t)(rnd() & 1 ? (z ? limit : 1023) : (z ? -limit : -1023));
  }
}

static void check_frame(int w, int h, enum frame_kind k, int delta, c63_threadpool *pool)
{
  c63_geometry g;
  c63_geometry_init(&g, w, h);
  int16_t *coeffs[3];
  c63_mv *mvs[3];
  for (int c = 0; c < 3; c++) {
    const size_t blocks = (size_t)g.blocks_w[c] * g.blocks_h[c];
    coeffs[c] = malloc(blocks * 64 * sizeof(int16_t));
    mvs[c] = calloc(blocks, sizeof(c63_mv));
    for (size_t b = 0; b < blocks; b++) {
      for (int z = 0; z < 64; z++)
        coeffs[c][b * 64 + z] = coefficient(k, c, z);
      if (delta) {
        c63_mv *m = &mvs[c][b];
        const int r = c ? 8 : 16;
        /* a third repeat their left neighbour's vector, which is coded as reuse */
        if (b % g.blocks_w[c] && rnd() % 3 == 0) {
          *m = mvs[c][b - 1];
        } else {
          m->use_mv = (uint8_t)(rnd() % 4 != 0);
          m->x = (int8_t)(m->use_mv ? rnd_range(-r, r) : 0);
          m->y = (int8_t)(m->use_mv ? rnd_range(-r, r) : 0);
        }
      }
    }
  }

  c63_entropy_encoder *ee = c63_entropy_encoder_new(&g, pool);
  c63_bytebuf want = {0};
  if (!ee || c63_entropy_encode(ee, &want, (const int16_t *const *)coeffs,
                                (const c63_mv *const *)mvs) != C63_OK) {
    printf("CPU entropy coder failed\n");
    exit(1);
  }
  const size_t cap = want.size + 64;
  uint8_t *got = malloc(cap);
  size_t got_n = 0;
  char msg[256], what[96];
  snprintf(what, sizeof what, "%dx%d %s %s", w, h, frame_name[k], delta ? "delta" : "key");
  if (c63_cuda_test_entropy_encode(w, h, (const int16_t *const *)coeffs, (const c63_mv *const *)mvs,
                                   got, cap, &got_n, msg, sizeof msg)) {
    failures++;
    printf("frame: CUDA call failed (%s): %s\n", what, msg);
  } else {
    compare("frame", what, want.data, want.size, got, got_n);
  }
  c63_bytebuf_free(&want);
  c63_entropy_encoder_free(ee);
  free(got);
  for (int c = 0; c < 3; c++) {
    free(coeffs[c]);
    free(mvs[c]);
  }
}

int main(void)
{
  char msg[256];
  if (c63_cuda_device_count(msg, sizeof msg) <= 0) {
    printf("SKIP: %s\n", msg);
    return 77;
  }
  const char *s = getenv("C63_TEST_SEED");
  uint64_t seed = s ? strtoull(s, NULL, 0) : 0x63e63e63ull;
  rng_state = seed ? seed : 1;
  printf("test_cuda_entropy: seed %" PRIu64 " (set C63_TEST_SEED to repeat)\n", seed);
  const int quick = getenv("C63_TEST_QUICK") != NULL;

  /* Lengths around word and stuffing-chunk boundaries (8 KiB chunks). */
  static const size_t lengths[] = {0,  1,  2,  3,   4,    5,    7,    8,
                                   31, 32, 33, 100, 8191, 8192, 8193, 40000};
  for (size_t li = 0; li < sizeof lengths / sizeof lengths[0]; li++)
    for (int k = 0; k < BYTES_COUNT; k++)
      for (int pb = 0; pb <= 7; pb++) {
        check_stuffing(lengths[li], (enum bytes_kind)k, pb, 0);
        check_stuffing(lengths[li], (enum bytes_kind)k, pb, 0xff);
        check_stuffing(lengths[li], (enum bytes_kind)k, pb, rnd());
      }

  c63_threadpool *pool = c63_threadpool_new(2);
  static const int sizes[][2] = {{8, 8},    {9, 9},     {16, 16},   {17, 33},   {33, 17},
                                 {100, 75}, {176, 144}, {352, 288}, {650, 488}, {1920, 1080}};
  const int nsizes = (int)(sizeof sizes / sizeof sizes[0]) - (quick ? 2 : 0);
  for (int si = 0; si < nsizes; si++)
    for (int k = 0; k < FRAME_COUNT; k++)
      for (int delta = 0; delta < 2; delta++)
        check_frame(sizes[si][0], sizes[si][1], (enum frame_kind)k, delta, pool);
  /* Many small frames: every count of pending bits at the end, many times. */
  for (int i = 0; i < (quick ? 50 : 400); i++)
    check_frame(rnd_range(8, 80), rnd_range(8, 80), (enum frame_kind)rnd_range(0, FRAME_COUNT - 1),
                (int)(rnd() & 1), pool);
  c63_threadpool_free(pool);

  printf("test_cuda_entropy: %d checks, %d failed\n", checks, failures);
  return failures ? 1 : 0;
}
