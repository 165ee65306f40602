/* Padding on the GPU: the visible planes arrive tight (as uploaded) and the
 * kernels read zero-padded planes (c63-format.md section 1), so the host
 * copies and uploads only the picture's own bytes.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "cuda/c63_cuda_internal.h"

namespace
{

/* One thread per 4 padded bytes (plane widths are multiples of 8). */
__global__ void pad_planes(const uint8_t *in, c63_cu_pad_geometry G, uint8_t *out)
{
  const uint32_t q = blockIdx.x * blockDim.x + threadIdx.x;
  uint32_t i = q * 4;
  int p = 0;
  while (p < 2 && i >= G.pad_bytes[p]) {
    i -= G.pad_bytes[p];
    p++;
  }
  if (i >= G.pad_bytes[p]) return;
  const int y = (int)(i / G.pad_w[p]), x = (int)(i - (uint32_t)y * G.pad_w[p]);
  uint8_t v[4];
  const uint8_t *row = in + G.in_off[p] + (size_t)y * G.pic_w[p];
#pragma unroll
  for (int k = 0; k < 4; k++)
    v[k] = (y < G.pic_h[p] && x + k < G.pic_w[p]) ? row[x + k] : 0;
  *reinterpret_cast<uchar4 *>(out + G.out_off[p] + i) = make_uchar4(v[0], v[1], v[2], v[3]);
}

} // namespace

cudaError_t c63_cu_pad(const uint8_t *in, const c63_cu_pad_geometry &G, uint8_t *out,
                       cudaStream_t s)
{
  const uint32_t quads = (G.pad_bytes[0] + G.pad_bytes[1] + G.pad_bytes[2]) / 4;
  pad_planes<<<(quads + 255) / 256, 256, 0, s>>>(in, G, out);
  return cudaGetLastError();
}
