/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "bench_util.h"

#include <stdlib.h>

#include "cliutil.h"

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double bench_median(double *v, int n)
{
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void bench_busy_us(int us)
{
  if (us <= 0) return;
  const double end = cli_now() + us * 1e-6;
  while (cli_now() < end)
    ;
}
