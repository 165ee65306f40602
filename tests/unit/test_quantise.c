/* c63_quantise_value (quantise.h, the GPU's quantisation in float and
 * integers) against the reference's double expression: for every quantiser
 * 1..255, the floats at and next to every rounding boundary (k + 1/2) 4q up
 * to |x| = 2^17 (DCT coefficients stay below 2^12), random floats up to
 * 2^23, zero, and 2^22, where the reference expression takes over.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <math.h>

#include "quantise.h"
#include "test_util.h"

static long checked, wrong;

static void check(float x, int q, float inv4q)
{
  const int got = c63_quantise_value(x, q, inv4q), want = c63_quantise_reference(x, q);
  checked++;
  if (got != want && wrong++ < 10)
    fprintf(stderr, "x = %.9g (%a), q = %d: %d, expected %d\n", x, x, q, got, want);
}

/* x and its float neighbours, both signs */
static void around(float x, int q, float inv4q)
{
  float lo = x, hi = x;
  for (int i = 0; i < 3; i++) {
    check(lo, q, inv4q);
    check(-lo, q, inv4q);
    check(hi, q, inv4q);
    check(-hi, q, inv4q);
    lo = nextafterf(lo, 0.0f);
    hi = nextafterf(hi, INFINITY);
  }
}

int main(void)
{
  uint64_t s = 0x9e3779b97f4a7c15ull;
  for (int q = 1; q <= 255; q++) {
    const float inv4q = 1.0f / (float)(4 * q);
    for (long b = 2L * q; b <= (1L << 17); b += 4L * q) /* (k + 1/2) 4q */
      around((float)b, q, inv4q);
    for (int i = 0; i < 20000; i++) {
      s = s * 6364136223846793005ull + 1442695040888963407ull;
      const float x = ldexpf((float)(s >> 40) / 16777216.0f, (int)(s >> 35 & 31) - 8);
      check(s & 1 ? -x : x, q, inv4q);
    }
    around(0.0f, q, inv4q);
    around(4194304.0f, q, inv4q); /* 2^22: where the reference expression takes over */
  }
  CHECK(checked > 1000000);
  CHECK_EQ(wrong, 0);
  printf("test_quantise: %ld values, %ld wrong\n", checked, wrong);
  return test_done("test_quantise");
}
