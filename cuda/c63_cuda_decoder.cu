/* The CUDA decoding backend (c63/decode_backend.h): dequantisation, inverse
 * transform, motion compensation and reconstruction on the GPU, with the
 * reference frame resident on the device, through the very kernel the
 * encoder reconstructs with (so its bytes are the CPU decoder's).
 *
 * Device buffers and pinned host buffers are allocated for the largest
 * geometry seen and kept; nothing is allocated per frame. Per frame: the
 * coefficients and vectors go up straight from the decoder's buffers
 * (page-locked picture memory), one kernel, the padded picture comes down
 * into pinned memory the caller reads.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c63/c63.h"
#include "cuda/c63_cuda.h"
#include "cuda/c63_cuda_internal.h"

struct c63_decode_backend {
  int device;
  cudaStream_t stream;
  c63_geometry g;
  c63_cu_planes planes;
  size_t frame_bytes, blocks;   /* of the current geometry */
  size_t cap_bytes, cap_blocks; /* what the buffers hold */
  int16_t *d_coeffs;
  c63_mv *d_mvs;
  uint8_t *d_rec[2], *h_out;
  int rec; /* index of the latest reconstruction */
};

namespace
{

void free_buffers(c63_decode_backend *be)
{
  cudaFree(be->d_coeffs);
  cudaFree(be->d_mvs);
  cudaFree(be->d_rec[0]);
  cudaFree(be->d_rec[1]);
  cudaFreeHost(be->h_out);
  be->d_coeffs = nullptr;
  be->d_mvs = nullptr;
  be->d_rec[0] = be->d_rec[1] = be->h_out = nullptr;
  be->cap_bytes = be->cap_blocks = 0;
}

int cu_create(int device_id, c63_threadpool *, c63_decode_backend **out, char *msg, size_t msg_size)
{
  *out = nullptr;
  cudaError_t err = cudaSetDevice(device_id);
  if (err != cudaSuccess) return c63_cu_error(err, "selecting the CUDA device", msg, msg_size);
  c63_decode_backend *be = static_cast<c63_decode_backend *>(calloc(1, sizeof *be));
  if (!be) {
    snprintf(msg, msg_size, "out of host memory");
    return C63_ERR_NOMEM;
  }
  be->device = device_id;
  err = cudaStreamCreateWithFlags(&be->stream, cudaStreamNonBlocking);
  if (err != cudaSuccess) {
    free(be);
    return c63_cu_error(err, "creating a CUDA stream", msg, msg_size);
  }
  *out = be;
  return C63_OK;
}

void cu_destroy(c63_decode_backend *be)
{
  if (!be) return;
  cudaSetDevice(be->device);
  cudaStreamSynchronize(be->stream);
  free_buffers(be);
  cudaStreamDestroy(be->stream);
  free(be);
}

int cu_resize(c63_decode_backend *be, const c63_geometry *g, char *msg, size_t msg_size)
{
  cudaError_t err = cudaSetDevice(be->device);
  if (err != cudaSuccess) return c63_cu_error(err, "selecting the CUDA device", msg, msg_size);
  const size_t pix = c63_cu_planes_init(g, &be->planes);
  const int blocks = be->planes.total_blocks;
  be->g = *g;
  be->frame_bytes = pix;
  be->blocks = (size_t)blocks;
  if (pix <= be->cap_bytes && (size_t)blocks <= be->cap_blocks) return C63_OK;

  free_buffers(be);
  const char *what = "allocating device buffers";
  err = cudaMalloc(&be->d_coeffs, (size_t)blocks * 64 * sizeof(int16_t));
  if (err == cudaSuccess) err = cudaMalloc(&be->d_mvs, (size_t)blocks * sizeof(c63_mv));
  for (int i = 0; i < 2 && err == cudaSuccess; i++)
    err = cudaMalloc(&be->d_rec[i], pix);
  if (err == cudaSuccess) {
    what = "allocating pinned host buffers";
    err = cudaHostAlloc(&be->h_out, pix, cudaHostAllocDefault);
  }
  if (err != cudaSuccess) {
    char cuda_msg[256];
    int status = c63_cu_error(err, what, cuda_msg, sizeof cuda_msg);
    snprintf(msg, msg_size, "CUDA device %d: %s for %dx%d: %s", be->device, what, g->width,
             g->height, cuda_msg);
    cudaGetLastError();
    free_buffers(be);
    return status;
  }
  be->cap_bytes = pix;
  be->cap_blocks = (size_t)blocks;
  return C63_OK;
}

int cu_reconstruct(c63_decode_backend *be, c63_decode_job *job, char *msg, size_t msg_size)
{
  cudaError_t err = cudaSetDevice(be->device);
  if (err != cudaSuccess) return c63_cu_error(err, "selecting the CUDA device", msg, msg_size);
  c63_cu_planes P = be->planes;
  for (int p = 0; p < 3; p++)
    memcpy(P.p[p].quant, job->quant[p], 64);
  const int next = be->rec ^ 1;
  const uint8_t *ref = job->keyframe ? nullptr : be->d_rec[be->rec];
  const c63_mv *mvs = job->keyframe ? nullptr : be->d_mvs;
  cudaStream_t st = be->stream;
  const char *what = "uploading coefficients";
  for (int p = 0; p < 3 && err == cudaSuccess; p++) {
    const size_t n = (size_t)P.p[p].bw * P.p[p].bh;
    err = cudaMemcpyAsync(be->d_coeffs + (size_t)P.p[p].blk_off * 64, job->coeffs[p],
                          n * 64 * sizeof(int16_t), cudaMemcpyHostToDevice, st);
    if (err == cudaSuccess)
      err = cudaMemcpyAsync(be->d_mvs + P.p[p].blk_off, job->mvs[p], n * sizeof(c63_mv),
                            cudaMemcpyHostToDevice, st);
  }
  if (err == cudaSuccess) {
    what = "reconstruction";
    err = c63_cu_dequant_idct_recon(be->d_coeffs, ref, mvs, P, be->d_rec[next], st);
  }
  if (err == cudaSuccess) {
    what = "downloading the picture";
    err = cudaMemcpyAsync(be->h_out, be->d_rec[next], be->frame_bytes, cudaMemcpyDeviceToHost, st);
  }
  if (err == cudaSuccess) err = cudaStreamSynchronize(st);
  if (err != cudaSuccess) return c63_cu_error(err, what, msg, msg_size);
  be->rec = next;
  for (int p = 0; p < 3; p++) {
    job->out[p] = be->h_out + P.p[p].pix_off;
    job->out_stride[p] = P.p[p].w;
  }
  return C63_OK;
}

} // namespace

extern "C" const c63_decode_backend_ops c63_decode_backend_cuda = {
    "cuda", cu_create, cu_destroy, cu_resize, cu_reconstruct,
};
