/* Device discovery and error reporting of the CUDA backend. The runtime is
 * linked statically, so on a machine without a driver these calls fail with
 * an error code, which we turn into a message: never an abort.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c63/c63.h"
#include "cuda/c63_cuda.h"
#include "cuda/c63_cuda_internal.h"

int c63_cuda_error(cudaError_t err, const char *what, char *msg, size_t msg_size)
{
  int status;
  const char *hint = "";
  switch (err) {
  case cudaErrorMemoryAllocation:
    status = C63_ERR_NOMEM;
    hint = " (out of device memory: use a smaller picture or free the GPU)";
    break;
  case cudaErrorInsufficientDriver:
    status = C63_ERR_NO_DEVICE;
    hint = " (no NVIDIA driver loaded, or one older than this build's CUDA runtime)";
    break;
  case cudaErrorNoDevice:
  case cudaErrorInvalidDevice:
  case cudaErrorDevicesUnavailable:
  case cudaErrorNoKernelImageForDevice:
    status = C63_ERR_NO_DEVICE;
    break;
  case cudaErrorLaunchFailure:
  case cudaErrorIllegalAddress:
  case cudaErrorHardwareStackError:
  case cudaErrorIllegalInstruction:
  case cudaErrorUnknown:
    status = C63_ERR_BACKEND;
    hint = " (the GPU was lost or faulted; the encoder must be recreated)";
    break;
  default:
    status = C63_ERR_BACKEND;
    break;
  }
  if (msg && msg_size)
    snprintf(msg, msg_size, "%s: CUDA error %d, %s%s", what, (int)err, cudaGetErrorString(err),
             hint);
  return status;
}

extern "C" int c63_cuda_device_count(char *msg, size_t msg_size)
{
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    c63_cuda_error(err, "no usable CUDA device", msg, msg_size);
    cudaGetLastError(); /* clear the sticky-free error so later calls start clean */
    return 0;
  }
  if (count <= 0) {
    if (msg && msg_size) snprintf(msg, msg_size, "no CUDA device found");
    return 0;
  }
  if (msg && msg_size) msg[0] = '\0';
  return count;
}

bool c63_cuda_zero_copy(int device)
{
  const char *force = getenv("C63_CUDA_ZERO_COPY");
  int mappable = 0, integrated = 0;
  if (cudaDeviceGetAttribute(&mappable, cudaDevAttrCanMapHostMemory, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&integrated, cudaDevAttrIntegrated, device) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  if (!mappable) return false;
  if (force && (!strcmp(force, "0") || !strcmp(force, "1"))) return force[0] == '1';
  return integrated != 0;
}

int c63_cuda_tuning(const char *name, int def, int lo, int hi)
{
  const char *v = getenv(name);
  if (!v || !*v) return def;
  char *end;
  const long n = strtol(v, &end, 10);
  return *end || n < lo || n > hi ? def : (int)n;
}

extern "C" int c63_cuda_zero_copy_on(int device_id)
{
  return c63_cuda_zero_copy(device_id) ? 1 : 0;
}

const uint8_t *c63_cuda_mapped(const uint8_t *p)
{
  cudaPointerAttributes a;
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  if (a.type != cudaMemoryTypeHost && a.type != cudaMemoryTypeDevice) return nullptr;
  return static_cast<const uint8_t *>(a.devicePointer);
}

size_t c63_cuda_planes_init(const c63_geometry *g, c63_cuda_planes *P)
{
  memset(P, 0, sizeof *P);
  P->n = 3;
  size_t pix = 0;
  int blocks = 0;
  for (int p = 0; p < 3; p++) {
    c63_cuda_plane &pl = P->p[p];
    pl.w = g->pad_w[p];
    pl.h = g->pad_h[p];
    pl.bw = g->blocks_w[p];
    pl.bh = g->blocks_h[p];
    pl.pix_off = (int)pix;
    pl.blk_off = blocks;
    pl.ac_limit = c63_ac_limit(p);
    pix += (size_t)pl.w * pl.h;
    blocks += pl.bw * pl.bh;
  }
  P->total_blocks = blocks;
  return pix;
}

c63_cuda_entropy_geometry c63_cuda_entropy_layout(const c63_geometry *g)
{
  c63_cuda_planes P;
  c63_cuda_planes_init(g, &P);
  c63_cuda_entropy_geometry G;
  G.blocks = g->mcus_w * g->mcus_h * 6;
  G.mcus_w = g->mcus_w;
  for (int p = 0; p < 3; p++) {
    G.blocks_w[p] = P.p[p].bw;
    G.blk_off[p] = P.p[p].blk_off;
  }
  return G;
}
