/* What the benchmarks share besides the tools' helpers (cliutil.h).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef C63_BENCH_UTIL_H
#define C63_BENCH_UTIL_H

/* The median of v[0..n), n > 0; sorts v in place. */
double bench_median(double *v, int n);

/* Keep the calling thread busy for us microseconds (a caller's own work
 * a frame, as a framework's or a script's); nothing for us <= 0. */
void bench_busy_us(int us);

#endif
