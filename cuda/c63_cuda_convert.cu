/* NV12's interleaved chroma split into the U and V planes the encoder
 * works on: one thread per UV pair, rows of the source at any pitch. It
 * writes only the visible pixels, so the destination's zero padding stays.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "cuda/c63_cuda_internal.h"
#include "cuda/c63_cuda_policy.cuh"

namespace
{

__global__ void split_uv(const uint8_t *__restrict__ uv, size_t pitch, int w, int h,
                         uint8_t *__restrict__ u, uint8_t *__restrict__ v, int dst_pitch)
{
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x >= w || y >= h) return;
  const uint8_t *src = uv + (size_t)y * pitch + 2 * (size_t)x;
  u[(size_t)y * dst_pitch + x] = src[0];
  v[(size_t)y * dst_pitch + x] = src[1];
}

} // namespace

cudaError_t c63_cuda_split_uv(const uint8_t *uv, size_t pitch, int w, int h, uint8_t *u, uint8_t *v,
                              int dst_pitch, cudaStream_t s)
{
  constexpr int kThreads = c63_cuda_backend_policy::kSplitThreads;
  const dim3 block(kThreads), grid((unsigned)((w + kThreads - 1) / kThreads), (unsigned)h);
  split_uv<<<grid, block, 0, s>>>(uv, pitch, w, h, u, v, dst_pitch);
  return cudaGetLastError();
}
