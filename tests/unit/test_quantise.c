/* c63_quantise_in_range (quantise.h, the GPU's quantisation in float and
 * integers) against the reference's double expression: for every quantiser
 * 1..255, the floats at and next to every rounding boundary (k + 1/2) 4q up
 * to |x| = 2^17 (DCT coefficients stay below 2^15), random floats below
 * 2^22, zero, and the floats just below 2^22, where its range ends.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <math.h>
#include <stdlib.h>

#include "c63/quantise.h"
#include "tutil.h"

static long checked, wrong;

static void check(float x, int q, float inv4q)
{
  const int got = c63_quantise_in_range(x, q, inv4q), want = c63_quantise_reference(x, q);
  checked++;
  if (got != want && wrong++ < 10)
    fprintf(stderr, "x = %.9g (%a), q = %d: %d, expected %d\n", x, x, q, got, want);
}

/* x and its float neighbours below 2^22, both signs */
static void around(float x, int q, float inv4q)
{
  float lo = x, hi = x;
  for (int i = 0; i < 3; i++) {
    for (int k = 0; k < 2; k++) {
      const float v = k ? hi : lo;
      if (v < 4194304.0f) {
        check(v, q, inv4q);
        check(-v, q, inv4q);
      }
    }
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
      /* below 2^22: a 24-bit fraction below 1, scaled by 2^-8 .. 2^22 */
      const float x = ldexpf((float)(s >> 40) / 16777216.0f, (int)(s >> 35 & 31) - 9);
      check(s & 1 ? -x : x, q, inv4q);
    }
    around(0.0f, q, inv4q);
    around(4194304.0f, q, inv4q); /* the floats just below 2^22 */
  }
  TU_CHECK_TRUE(checked > 1000000);
  TU_CHECK_EQ(wrong, 0);
  printf("test_quantise: %ld values, %ld wrong\n", checked, wrong);
  return tu_finish("test_quantise");
}
