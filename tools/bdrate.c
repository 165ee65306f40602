/* Bjøntegaard delta rate (see bdrate.h).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "bdrate.h"

#include <math.h>

/* Least-squares cubic through (x[i], y[i]): c[0] + c[1] x + c[2] x^2 +
 * c[3] x^3. Normal equations, Gaussian elimination with partial pivoting.
 * x is centred on mid first (better conditioned), so the polynomial is in
 * (x - mid). Returns -1 when the system is singular. */
static int fit_cubic(const double *x, const double *y, int n, double mid, double c[4])
{
  double a[4][5] = {{0}};
  for (int i = 0; i < n; i++) {
    double p[7];
    p[0] = 1;
    for (int k = 1; k < 7; k++)
      p[k] = p[k - 1] * (x[i] - mid);
    for (int r = 0; r < 4; r++) {
      for (int k = 0; k < 4; k++)
        a[r][k] += p[r + k];
      a[r][4] += p[r] * y[i];
    }
  }
  for (int col = 0; col < 4; col++) {
    int piv = col;
    for (int r = col + 1; r < 4; r++)
      if (fabs(a[r][col]) > fabs(a[piv][col])) piv = r;
    if (fabs(a[piv][col]) < 1e-12) return -1;
    for (int k = 0; k < 5; k++) {
      double t = a[col][k];
      a[col][k] = a[piv][k];
      a[piv][k] = t;
    }
    for (int r = 0; r < 4; r++) {
      if (r == col) continue;
      double f = a[r][col] / a[col][col];
      for (int k = col; k < 5; k++)
        a[r][k] -= f * a[col][k];
    }
  }
  for (int r = 0; r < 4; r++)
    c[r] = a[r][4] / a[r][r];
  return 0;
}

/* Integral of the cubic (in x - mid) from lo to hi. */
static double integral(const double c[4], double mid, double lo, double hi)
{
  double u0 = lo - mid, u1 = hi - mid, s = 0;
  for (int k = 3; k >= 0; k--)
    s += c[k] / (k + 1) * (pow(u1, k + 1) - pow(u0, k + 1));
  return s;
}

static void range(const double *v, int n, double *lo, double *hi)
{
  *lo = *hi = v[0];
  for (int i = 1; i < n; i++) {
    if (v[i] < *lo) *lo = v[i];
    if (v[i] > *hi) *hi = v[i];
  }
}

int bd_rate(const double *rate_a, const double *psnr_a, int n_a, const double *rate_b,
            const double *psnr_b, int n_b, double *percent)
{
  enum { MAX_POINTS = 64 };
  double la[MAX_POINTS], lb[MAX_POINTS], ca[4], cb[4], lo_a, hi_a, lo_b, hi_b;
  if (n_a < 4 || n_b < 4 || n_a > MAX_POINTS || n_b > MAX_POINTS) return -1;
  for (int i = 0; i < n_a; i++) {
    if (!(rate_a[i] > 0)) return -1;
    la[i] = log(rate_a[i]);
  }
  for (int i = 0; i < n_b; i++) {
    if (!(rate_b[i] > 0)) return -1;
    lb[i] = log(rate_b[i]);
  }
  range(psnr_a, n_a, &lo_a, &hi_a);
  range(psnr_b, n_b, &lo_b, &hi_b);
  const double lo = lo_a > lo_b ? lo_a : lo_b, hi = hi_a < hi_b ? hi_a : hi_b;
  if (!(hi > lo)) return -1;
  const double mid = (lo + hi) / 2;
  if (fit_cubic(psnr_a, la, n_a, mid, ca) || fit_cubic(psnr_b, lb, n_b, mid, cb)) return -1;
  const double avg = (integral(cb, mid, lo, hi) - integral(ca, mid, lo, hi)) / (hi - lo);
  *percent = (exp(avg) - 1) * 100;
  return 0;
}
