/* The size category of a value, as the entropy code counts it (format
 * section 6): the bits of |v|, 0 for 0. One definition for the CPU coder,
 * the GPU coder and the rd mode's bit counts on both.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef C63_BIT_WIDTH_H
#define C63_BIT_WIDTH_H

#ifdef __CUDACC__
#define C63_BIT_WIDTH_FN __host__ __device__ __forceinline__
#else
#define C63_BIT_WIDTH_FN static inline
#endif

C63_BIT_WIDTH_FN int c63_bit_width(int v)
{
  const unsigned a = (unsigned)(v < 0 ? -v : v);
#ifdef __CUDA_ARCH__
  return 32 - __clz((int)a);
#else
  return a ? 32 - __builtin_clz(a) : 0;
#endif
}

#endif
