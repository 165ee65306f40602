/* The format's quantisation of one DCT coefficient, (int)(float)round(((double)x
 * / 4.0) / q) (docs/format.md section 5), computed in float and integers for
 * the GPU: most kinds of GPU run double precision at 1/32 to 1/64 of the
 * float rate (GPUs with a half-rate FP64 unit gain nothing from it).
 *
 * Why it is exact: the double quotient is correctly rounded, so round()
 * sees a half-integer only where x / (4q) is one (x is a float, 4q an
 * integer: any other quotient lies at least 2^-24 of its size away from a
 * half-integer, far more than the double's rounding error). So the result
 * is x / (4q) rounded half away from zero: for |x|, the largest k with
 * (k - 1/2) 4q <= |x|, i.e. (2k - 1) 2q <= |x|. An estimate from a float
 * reciprocal is within one of it, and the two integer boundaries around the
 * estimate, exact in float below 2^24, settle it. That needs q > 0 and
 * |x| < 2^22, which every use has: a zero quantiser would divide by zero
 * in the reference's expression, whose infinite result the CPU and the GPU
 * convert to different integers, so the GPU refuses such tables instead.
 *
 * tests/unit/test_quantise.c compares it with the reference expression at
 * every boundary of every quantiser.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef C63_QUANTISE_H
#define C63_QUANTISE_H

#include <math.h>

#ifdef __CUDACC__
#define C63_QUANTISE_FN __host__ __device__ __forceinline__
#else
#define C63_QUANTISE_FN static inline
#endif

/* The reference's expression (the test's oracle). */
C63_QUANTISE_FN int c63_quantise_reference(float x, int q)
{
  return (int)(float)round(((double)x / 4.0) / (double)q);
}

/* For q > 0 and |x| < 2^22 (not NaN): every quantisation of the format's
 * DCT, whose outputs stay below 2^15 and whose quantisers c63_make_quant_tables
 * keeps in 1..255. No branch, so that a GPU interleaves many of them.
 * inv4q: 1.0f / (4 * q) rounded to float (any value within a few units in
 * the last place gives the same result). */
C63_QUANTISE_FN int c63_quantise_in_range(float x, int q, float inv4q)
{
  const float ax = fabsf(x);
  int k = (int)(ax * inv4q + 0.5f);
  /* at most one of the two holds, since (2k - 1) 2q < (2k + 1) 2q */
  const int down = k > 0 && ax < (float)((2 * k - 1) * 2 * q);
  const int up = ax >= (float)((2 * k + 1) * 2 * q);
  k += up - down;
  return x < 0.0f ? -k : k;
}

#endif
