/* Picture kernels: NV12's interleaved chroma split into the U and V planes
 * the encoder works on (one thread per UV pair, rows of the source at any
 * pitch), and up to three planes copied between pitches in one launch
 * (one thread per byte).
 * Both write only the visible pixels, so the destination's zero padding
 * stays. Kernels rather than the copy engine, so either side may be mapped
 * host memory read or written in place (c63_cuda_zero_copy).
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

/* Block row y of the grid is row y of the planes one after another. */
__global__ void copy_planes(const c63_cuda_planes_copy c)
{
  int y = blockIdx.y, p = 0;
  while (p < 2 && y >= c.h[p])
    y -= c.h[p++];
  for (int x = blockIdx.x * blockDim.x + threadIdx.x; x < c.w[p]; x += gridDim.x * blockDim.x)
    c.dst[p][(size_t)y * c.dst_pitch[p] + x] = c.src[p][(size_t)y * c.src_pitch[p] + x];
}

} // namespace

cudaError_t c63_cuda_copy_planes(const c63_cuda_planes_copy &c, cudaStream_t s)
{
  constexpr int kThreads = c63_cuda_backend_policy::kSplitThreads;
  const int rows = c.h[0] + c.h[1] + c.h[2];
  if (rows <= 0) return cudaSuccess;
  const dim3 block(kThreads), grid((unsigned)((c.w[0] + kThreads - 1) / kThreads), (unsigned)rows);
  copy_planes<<<grid, block, 0, s>>>(c);
  return cudaGetLastError();
}

cudaError_t c63_cuda_copy_plane(const uint8_t *src, size_t src_pitch, uint8_t *dst,
                                size_t dst_pitch, int w, int h, cudaStream_t s)
{
  const c63_cuda_planes_copy c = {{src, nullptr, nullptr},
                                  {dst, nullptr, nullptr},
                                  {src_pitch, 0, 0},
                                  {dst_pitch, 0, 0},
                                  {w, 0, 0},
                                  {h, 0, 0}};
  return c63_cuda_copy_planes(c, s);
}

cudaError_t c63_cuda_split_uv(const uint8_t *uv, size_t pitch, int w, int h, uint8_t *u, uint8_t *v,
                              int dst_pitch, cudaStream_t s)
{
  constexpr int kThreads = c63_cuda_backend_policy::kSplitThreads;
  const dim3 block(kThreads), grid((unsigned)((w + kThreads - 1) / kThreads), (unsigned)h);
  split_uv<<<grid, block, 0, s>>>(uv, pitch, w, h, u, v, dst_pitch);
  return cudaGetLastError();
}
