/* Minimal assertion helpers for the core's unit tests (no GStreamer, no
 * GLib): each failed check prints its location and the test exits 1.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef C63_TEST_UTIL_H
#define C63_TEST_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static int test_failures;

#define CHECK(cond)                                                                                \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);                     \
      test_failures++;                                                                             \
    }                                                                                              \
  } while (0)

#define CHECK_EQ(a, b)                                                                             \
  do {                                                                                             \
    long long a_ = (long long)(a), b_ = (long long)(b);                                            \
    if (a_ != b_) {                                                                                \
      fprintf(stderr, "%s:%d: %s == %lld, expected %s == %lld\n", __FILE__, __LINE__, #a, a_, #b,  \
              b_);                                                                                 \
      test_failures++;                                                                             \
    }                                                                                              \
  } while (0)

static inline int test_done(const char *name)
{
  if (test_failures) {
    fprintf(stderr, "%s: %d check(s) failed\n", name, test_failures);
    return 1;
  }
  printf("%s: all checks passed\n", name);
  return 0;
}

/* Deterministic xorshift generator, so failures reproduce. */
static uint32_t test_rng_state = 0x12345678u;
static inline uint32_t test_rand(void)
{
  uint32_t x = test_rng_state;
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  return test_rng_state = x;
}

#endif
