/* The CUDA decoding backend (c63/decode_backend.h): dequantisation, inverse
 * transform, motion compensation and reconstruction on the GPU, with the
 * reference frame resident on the device, through the very kernel the
 * encoder reconstructs with (so its bytes are the CPU decoder's).
 *
 * Device buffers and pinned host buffers are allocated for the largest
 * geometry seen and kept; nothing is allocated per frame. Per frame: the
 * sparse coefficients and the vectors go up straight from the decoder's
 * page-locked buffers (well under 1 MB for a 1080p frame, where dense
 * coefficients would be 6.3 MB), a kernel expands them, one kernel
 * reconstructs, and the padded picture comes down into one of two pinned
 * buffers. Two frames can be in flight, so the GPU reconstructs the next
 * while the caller reads this one; one stream keeps them in order. On a GPU
 * that shares the host's memory (c63_cuda_zero_copy) the output buffers are
 * mapped and a kernel writes the picture into them where the CPU reads it;
 * the references stay in device memory.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c63/c63.h"
#include "cuda/c63_cuda.h"
#include "cuda/c63_cuda_internal.h"
#include "cuda/c63_cuda_policy.cuh"

namespace
{

/* Frames in flight (c63_cuda_policy.cuh). */
constexpr int kDepth = c63_cuda_decoder_policy::kDepth;
constexpr int kExpandBlocks = c63_cuda_decoder_policy::kExpandBlocks;

struct out_buffer {
  uint8_t *host;
  uint8_t *host_dev;     /* host as the device sees it (zero-copy: mapped) */
  const uint8_t *device; /* the picture left on the device instead (device_out) */
  cudaEvent_t ready;
};

} // namespace

struct c63_decode_backend {
  c63_device dev; /* the context everything below lives in */
  bool zero_copy; /* pictures written into mapped host memory by a kernel */
  cudaStream_t stream;
  cudaStream_t copy_stream; /* pictures copied out (collected: their work is done) */
  c63_geometry g;
  c63_cuda_planes planes;
  size_t frame_bytes, blocks;   /* of the current geometry */
  size_t cap_bytes, cap_blocks; /* what the buffers hold */
  size_t cap_entries;
  int16_t *d_coeffs; /* dense, expanded on the device */
  uint32_t *d_start, *d_entries;
  uint8_t *d_count;
  c63_mv *d_mvs;
  uint8_t *d_rec[2];
  out_buffer out[kDepth];
  int rec;                /* index of the latest reconstruction submitted */
  int next_out, n_flight; /* output buffer of the next submit; frames not collected */
};

namespace
{

/* kExpandBlocks coefficient blocks per CUDA block: each thread clears one
 * coefficient in shared memory, the block's entries land on theirs, and
 * the block is written out whole (coalesced). Entries come from the
 * decoder's own entropy decoder: indices below 64, starts in range. */
__global__ void expand_sparse(const uint32_t *__restrict__ start, const uint8_t *__restrict__ count,
                              const uint32_t *__restrict__ entries, int blocks,
                              int16_t *__restrict__ dense)
{
  __shared__ int16_t s[kExpandBlocks][64];
  const int lb = threadIdx.x >> 6, k = threadIdx.x & 63;
  const int b = blockIdx.x * kExpandBlocks + lb;
  s[lb][k] = 0;
  __syncthreads();
  if (b < blocks && k < count[b]) {
    const uint32_t e = entries[start[b] + k];
    s[lb][(e >> 16) & 63] = (int16_t)(uint16_t)e;
  }
  __syncthreads();
  if (b < blocks) dense[(size_t)b * 64 + k] = s[lb][k];
}

void free_entries(c63_decode_backend *be)
{
  cudaFree(be->d_entries);
  be->d_entries = nullptr;
  be->cap_entries = 0;
}

void free_buffers(c63_decode_backend *be)
{
  cudaFree(be->d_coeffs);
  cudaFree(be->d_start);
  cudaFree(be->d_count);
  cudaFree(be->d_mvs);
  cudaFree(be->d_rec[0]);
  cudaFree(be->d_rec[1]);
  for (auto &o : be->out) {
    cudaFreeHost(o.host);
    o.host = o.host_dev = nullptr;
  }
  be->d_coeffs = nullptr;
  be->d_start = nullptr;
  be->d_count = nullptr;
  be->d_mvs = nullptr;
  be->d_rec[0] = be->d_rec[1] = nullptr;
  be->cap_bytes = be->cap_blocks = 0;
  free_entries(be);
}

void destroy_events(c63_decode_backend *be)
{
  for (auto &o : be->out)
    if (o.ready) cudaEventDestroy(o.ready);
}

int cu_create(const c63_device *dev, c63_threadpool *, c63_decode_backend **out, char *msg,
              size_t msg_size)
{
  *out = nullptr;
  c63_cuda_scope scope(*dev);
  cudaError_t err = scope.error();
  if (err != cudaSuccess) return c63_cuda_error(err, "entering the CUDA context", msg, msg_size);
  c63_decode_backend *be = static_cast<c63_decode_backend *>(calloc(1, sizeof *be));
  if (!be) {
    snprintf(msg, msg_size, "out of host memory");
    return C63_ERR_NOMEM;
  }
  be->dev = *dev;
  const int device = c63_cuda_context_device(*dev);
  be->zero_copy = device >= 0 && c63_cuda_zero_copy(device);
  err = cudaStreamCreateWithFlags(&be->stream, cudaStreamNonBlocking);
  if (err == cudaSuccess) err = cudaStreamCreateWithFlags(&be->copy_stream, cudaStreamNonBlocking);
  for (int i = 0; i < kDepth && err == cudaSuccess; i++)
    err = cudaEventCreateWithFlags(&be->out[i].ready, cudaEventDisableTiming);
  if (err != cudaSuccess) {
    destroy_events(be);
    if (be->stream) cudaStreamDestroy(be->stream);
    if (be->copy_stream) cudaStreamDestroy(be->copy_stream);
    free(be);
    return c63_cuda_error(err, "creating a CUDA stream", msg, msg_size);
  }
  *out = be;
  return C63_OK;
}

void cu_destroy(c63_decode_backend *be)
{
  if (!be) return;
  c63_cuda_scope scope(be->dev);
  cudaStreamSynchronize(be->stream);
  free_buffers(be);
  destroy_events(be);
  cudaStreamDestroy(be->stream);
  if (be->copy_stream) cudaStreamDestroy(be->copy_stream);
  free(be);
}

int alloc_failed(c63_decode_backend *be, cudaError_t err, const char *what, char *msg,
                 size_t msg_size)
{
  char cuda_msg[256];
  int status = c63_cuda_error(err, what, cuda_msg, sizeof cuda_msg);
  snprintf(msg, msg_size, "CUDA device %d: %s for %dx%d: %s", c63_cuda_context_device(be->dev),
           what, be->g.width, be->g.height, cuda_msg);
  cudaGetLastError();
  return status;
}

int cu_resize(c63_decode_backend *be, const c63_geometry *g, char *msg, size_t msg_size)
{
  c63_cuda_scope scope(be->dev);
  cudaError_t err = scope.error();
  if (err != cudaSuccess) return c63_cuda_error(err, "entering the CUDA context", msg, msg_size);
  const size_t pix = c63_cuda_planes_init(g, &be->planes);
  const int blocks = be->planes.total_blocks;
  be->g = *g;
  be->frame_bytes = pix;
  be->blocks = (size_t)blocks;
  if (pix <= be->cap_bytes && (size_t)blocks <= be->cap_blocks) return C63_OK;

  free_buffers(be);
  const char *what = "allocating device buffers";
  err = cudaMalloc(&be->d_coeffs, (size_t)blocks * 64 * sizeof(int16_t));
  if (err == cudaSuccess) err = cudaMalloc(&be->d_start, (size_t)blocks * sizeof(uint32_t));
  if (err == cudaSuccess) err = cudaMalloc(&be->d_count, (size_t)blocks);
  if (err == cudaSuccess) err = cudaMalloc(&be->d_mvs, (size_t)blocks * sizeof(c63_mv));
  /* references: the reconstruction reads a displaced row as three aligned
   * words, which may reach past the frame */
  for (int i = 0; i < 2 && err == cudaSuccess; i++) {
    err = cudaMalloc(&be->d_rec[i], pix + C63_CUDA_REF_TAIL);
    if (err == cudaSuccess) err = cudaMemset(be->d_rec[i] + pix, 0, C63_CUDA_REF_TAIL);
  }
  if (err == cudaSuccess) what = "allocating pinned host buffers";
  for (int i = 0; i < kDepth && err == cudaSuccess; i++) {
    out_buffer &o = be->out[i];
    err = cudaHostAlloc(&o.host, pix, be->zero_copy ? cudaHostAllocMapped : cudaHostAllocDefault);
    if (err == cudaSuccess && be->zero_copy) err = cudaHostGetDevicePointer(&o.host_dev, o.host, 0);
  }
  if (err != cudaSuccess) {
    int status = alloc_failed(be, err, what, msg, msg_size);
    free_buffers(be);
    return status;
  }
  be->cap_bytes = pix;
  be->cap_blocks = (size_t)blocks;
  return C63_OK;
}

/* Room on the device for a frame's entries (they vary with the frame). */
int reserve_entries(c63_decode_backend *be, size_t n, char *msg, size_t msg_size)
{
  if (n <= be->cap_entries) return C63_OK;
  /* Frames in flight may still read the old array. */
  cudaError_t err = cudaStreamSynchronize(be->stream);
  if (err != cudaSuccess) return c63_cuda_error(err, "reconstruction", msg, msg_size);
  free_entries(be);
  const size_t want = n + n / 4 + 4096; /* headroom: frames vary a little */
  err = cudaMalloc(&be->d_entries, want * sizeof(uint32_t));
  if (err != cudaSuccess) return alloc_failed(be, err, "allocating device buffers", msg, msg_size);
  be->cap_entries = want;
  return C63_OK;
}

/* The reconstruction rec into the output buffer o: by the copy engine, or
 * on the zero-copy path by a kernel writing the mapped buffer in place. */
cudaError_t write_out(const c63_decode_backend *be, const uint8_t *rec, out_buffer &o,
                      cudaStream_t st)
{
  if (!be->zero_copy)
    return cudaMemcpyAsync(o.host, rec, be->frame_bytes, cudaMemcpyDeviceToHost, st);
  cudaError_t err = cudaSuccess;
  for (int p = 0; p < 3 && err == cudaSuccess; p++) {
    const c63_cuda_plane &pl = be->planes.p[p];
    err =
        c63_cuda_copy_plane(rec + pl.pix_off, pl.w, o.host_dev + pl.pix_off, pl.w, pl.w, pl.h, st);
  }
  return err;
}

int cu_submit(c63_decode_backend *be, const c63_decode_job *job, char *msg, size_t msg_size)
{
  if (be->n_flight == kDepth) {
    snprintf(msg, msg_size, "more than %d frames submitted", kDepth);
    return C63_ERR_INVALID_ARG;
  }
  c63_cuda_scope scope(be->dev);
  cudaError_t err = scope.error();
  if (err != cudaSuccess) return c63_cuda_error(err, "entering the CUDA context", msg, msg_size);
  const c63_sparse_frame *sp = job->coeffs;
  int r = reserve_entries(be, sp->n_entries, msg, msg_size);
  if (r) return r;
  c63_cuda_planes P = be->planes;
  for (int p = 0; p < 3; p++)
    memcpy(P.p[p].quant, job->quant[p], 64);
  const int next = be->rec ^ 1;
  const uint8_t *ref = job->keyframe ? nullptr : be->d_rec[be->rec];
  const c63_mv *mvs = job->keyframe ? nullptr : be->d_mvs;
  const size_t nb = be->blocks;
  cudaStream_t st = be->stream;
  out_buffer &o = be->out[be->next_out];

  const char *what = "uploading coefficients";
  err = cudaMemcpyAsync(be->d_start, sp->start, nb * sizeof(uint32_t), cudaMemcpyHostToDevice, st);
  if (err == cudaSuccess)
    err = cudaMemcpyAsync(be->d_count, sp->count, nb, cudaMemcpyHostToDevice, st);
  if (err == cudaSuccess)
    err = cudaMemcpyAsync(be->d_mvs, sp->mvs, nb * sizeof(c63_mv), cudaMemcpyHostToDevice, st);
  if (err == cudaSuccess && sp->n_entries)
    err = cudaMemcpyAsync(be->d_entries, sp->entries, sp->n_entries * sizeof(uint32_t),
                          cudaMemcpyHostToDevice, st);
  if (err == cudaSuccess) {
    what = "reconstruction";
    expand_sparse<<<(unsigned)((nb + kExpandBlocks - 1) / kExpandBlocks), 64 * kExpandBlocks, 0,
                    st>>>(be->d_start, be->d_count, be->d_entries, (int)nb, be->d_coeffs);
    err = cudaGetLastError();
  }
  if (err == cudaSuccess)
    err = c63_cuda_dequant_idct_recon(be->d_coeffs, ref, mvs, P, be->d_rec[next], st);
  if (err == cudaSuccess && !job->device_out) {
    what = "downloading the picture";
    err = write_out(be, be->d_rec[next], o, st);
  }
  if (err == cudaSuccess) err = cudaEventRecord(o.ready, st);
  if (err != cudaSuccess) return c63_cuda_error(err, what, msg, msg_size);
  be->rec = next;
  o.device = job->device_out ? be->d_rec[next] : nullptr;
  be->next_out = (be->next_out + 1) % kDepth;
  be->n_flight++;
  return C63_OK;
}

int cu_collect(c63_decode_backend *be, c63_decode_job *job, char *msg, size_t msg_size)
{
  if (be->n_flight == 0) {
    snprintf(msg, msg_size, "no frame submitted");
    return C63_ERR_INVALID_ARG;
  }
  const int i = (be->next_out + kDepth - be->n_flight) % kDepth;
  be->n_flight--;
  c63_cuda_scope scope(be->dev);
  cudaError_t err = scope.error();
  if (err == cudaSuccess) err = cudaEventSynchronize(be->out[i].ready);
  if (err != cudaSuccess) return c63_cuda_error(err, "reconstruction", msg, msg_size);
  const uint8_t *base = be->out[i].device ? be->out[i].device : be->out[i].host;
  for (int p = 0; p < 3; p++) {
    job->out[p] = base + be->planes.p[p].pix_off;
    job->out_stride[p] = be->planes.p[p].w;
  }
  return C63_OK;
}

/* Planes between host and device memory, in any direction (unified
 * addressing tells the copy engine which). */
int cu_copy(c63_decode_backend *be, const uint8_t *const src[3], const int src_stride[3],
            uint8_t *const dst[3], const int dst_stride[3], const int w[3], const int h[3],
            char *msg, size_t msg_size)
{
  c63_cuda_scope scope(be->dev);
  cudaError_t err = scope.error();
  c63_cuda_host_copy_begin(); /* the host side may be registered memory */
  for (int p = 0; p < 3 && err == cudaSuccess; p++)
    err = cudaMemcpy2DAsync(dst[p], dst_stride[p], src[p], src_stride[p], w[p], h[p],
                            cudaMemcpyDefault, be->copy_stream);
  if (err == cudaSuccess) err = cudaStreamSynchronize(be->copy_stream);
  c63_cuda_host_copy_end();
  if (err != cudaSuccess) return c63_cuda_error(err, "copying a picture", msg, msg_size);
  return C63_OK;
}

} // namespace

extern "C" const c63_decode_backend_ops c63_decode_backend_cuda = {
    "cuda", kDepth, 1, cu_create, cu_destroy, cu_resize, cu_submit, cu_collect, cu_copy, 1,
};
