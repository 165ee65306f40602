/* bd_rate (tools/bdrate.c): known answers. A curve against itself is 0%;
 * B needing 80% of A's rate at every PSNR is -20% (a constant shift of
 * log-rate, which the cubic fits exactly); and curves that cannot be
 * compared are refused.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <math.h>
#include <stdio.h>

#include "bdrate.h"

static int fails;

static void expect(int ok, const char *what)
{
  printf("%s: %s\n", ok ? "ok" : "FAIL", what);
  if (!ok) fails++;
}

int main(void)
{
  const double psnr[5] = {30.1, 33.4, 35.9, 38.2, 40.0};
  const double rate[5] = {400, 800, 1500, 2900, 5200};
  double scaled[5], shifted[5], bd = 1;
  for (int i = 0; i < 5; i++) {
    scaled[i] = rate[i] * 0.8;
    shifted[i] = psnr[i] + 20;
  }
  expect(bd_rate(rate, psnr, 5, rate, psnr, 5, &bd) == 0 && fabs(bd) < 1e-9,
         "a curve against itself: 0%");
  expect(bd_rate(rate, psnr, 5, scaled, psnr, 5, &bd) == 0 && fabs(bd + 20) < 1e-6,
         "80% of the rate at equal PSNR: -20%");
  expect(bd_rate(scaled, psnr, 5, rate, psnr, 5, &bd) == 0 && fabs(bd - 25) < 1e-6,
         "125% of the rate at equal PSNR: +25%");
  expect(bd_rate(rate, psnr, 3, rate, psnr, 3, &bd) == -1, "three points: refused");
  expect(bd_rate(rate, psnr, 5, rate, shifted, 5, &bd) == -1, "no common PSNR range: refused");
  return fails ? 1 : 0;
}
