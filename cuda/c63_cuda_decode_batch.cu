/* A batch of frames for the GPU entropy stage (c63_cuda_decode_batch.h).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>

#include "c63/c63.h"
#include "c63/huff_sync_model.h"
#include "cuda/c63_cuda_decode_batch.h"

namespace
{

/* Room for n bytes, with headroom: page-locked allocation is slow, and
 * frames vary in size. */
size_t grown(size_t n)
{
  return n + n / 2 + 65536;
}

void copy_staged(void *arg)
{
  const c63_cuda_decode_batch::staged_copy *c =
      static_cast<const c63_cuda_decode_batch::staged_copy *>(arg);
  memcpy(c->dst, c->src, c->size);
}

} // namespace

cudaError_t c63_cuda_decode_batch_init(c63_cuda_decode_batch *b, int capacity, c63_threadpool *pool)
{
  memset(b, 0, sizeof *b);
  b->state = c63_batch_state::empty;
  b->capacity = capacity;
  b->pool = pool;
  cudaError_t err = cudaStreamCreateWithFlags(&b->stream, cudaStreamNonBlocking);
  if (err == cudaSuccess) err = cudaEventCreateWithFlags(&b->decoded, cudaEventDisableTiming);
  if (err == cudaSuccess) err = cudaEventCreateWithFlags(&b->consumed, cudaEventDisableTiming);
  if (err == cudaSuccess) {
    const int r = c63_cuda_huff_new(&b->huff);
    if (r == C63_ERR_NOMEM)
      err = cudaErrorMemoryAllocation;
    else if (r != C63_OK)
      err = cudaErrorUnknown;
  }
  return err;
}

void c63_cuda_decode_batch_wait_copies(c63_cuda_decode_batch *b)
{
  for (int i = 0; i < b->n; i++)
    c63_task_wait(b->pool, &b->copying[i]);
}

void c63_cuda_decode_batch_release(c63_cuda_decode_batch *b)
{
  if (b->pool) c63_cuda_decode_batch_wait_copies(b);
  c63_cuda_huff_free(b->huff);
  cudaFreeHost(b->host);
  cudaFree(b->dev);
  if (b->decoded) cudaEventDestroy(b->decoded);
  if (b->consumed) cudaEventDestroy(b->consumed);
  if (b->stream) cudaStreamDestroy(b->stream);
  memset(b, 0, sizeof *b);
}

void c63_cuda_decode_batch_begin(c63_cuda_decode_batch *b, long long first)
{
  b->first = first;
  b->n = 0;
  b->used = 0;
  b->failed = false;
  b->state = c63_batch_state::filling;
}

int c63_cuda_decode_batch_add(c63_cuda_decode_batch *b, const uint8_t *data, size_t size,
                              int keyframe, size_t entries_cap)
{
  if (b->n == b->capacity || size > SIZE_MAX / 2 - b->used - 65536) return -1;
  if (b->used + size > b->host_cap) {
    /* The batch's bytes so far move with it (nothing reads them yet), once
     * they are all there. */
    c63_cuda_decode_batch_wait_copies(b);
    uint8_t *p = nullptr;
    /* A first frame sizes the staging for a batch of frames like it, so a
     * new decoder does not grow it frame by frame (page-locking is slow). */
    const size_t frames_left = (size_t)(b->capacity - b->n);
    const size_t guess =
        b->host_cap || size > SIZE_MAX / 4 / frames_left ? 0 : b->used + size * frames_left;
    const size_t want = guess > grown(b->used + size) ? guess : grown(b->used + size);
    if (cudaHostAlloc(&p, want, cudaHostAllocDefault) != cudaSuccess) {
      cudaGetLastError();
      return -1;
    }
    if (b->used) memcpy(p, b->host, b->used);
    cudaFreeHost(b->host);
    b->host = p;
    b->host_cap = want;
  }
  const int i = b->n++;
  b->copy[i] = {b->host + b->used, data, size};
  c63_threadpool_submit(b->pool, &b->copying[i], copy_staged, &b->copy[i]);
  b->offset[i] = b->used;
  b->frames[i] = {nullptr, size, keyframe, entries_cap};
  b->used += size;
  return i;
}

void c63_cuda_decode_batch_launch(c63_cuda_decode_batch *b, const c63_geometry *g)
{
  cudaStream_t s = b->stream;
  c63_cuda_decode_batch_wait_copies(b);
  b->state = c63_batch_state::launched;
  b->readers_end = b->first + b->n;
  /* The previous launch's sparse frames are read until then; where that
   * is not known, the stage is not enqueued (it would overwrite them). */
  const bool ordered = !b->unordered;
  b->unordered = false;
  cudaError_t err = cudaStreamWaitEvent(s, b->consumed, 0);
  if (err == cudaSuccess && b->used > b->dev_cap) {
    cudaFree(b->dev);
    b->dev = nullptr;
    b->dev_cap = 0;
    err = cudaMalloc(&b->dev, grown(b->used));
    if (err == cudaSuccess) b->dev_cap = grown(b->used);
  }
  if (err == cudaSuccess)
    err = cudaMemcpyAsync(b->dev, b->host, b->used, cudaMemcpyHostToDevice, s);
  int r = err == cudaSuccess && ordered ? C63_OK : C63_ERR_BACKEND;
  if (r == C63_OK) {
    for (int i = 0; i < b->n; i++)
      b->frames[i].data = b->dev + b->offset[i];
    r = c63_cuda_huff_enqueue(b->huff, b->frames, b->n, g, s);
  }
  b->failed = r != C63_OK;
  if (b->failed) cudaGetLastError(); /* a sticky error shows again where it matters */
  if (cudaEventRecord(b->decoded, s) != cudaSuccess) b->failed = true;
}

cudaError_t c63_cuda_decode_batch_resolve(c63_cuda_decode_batch *b, bool wait)
{
  if (b->state != c63_batch_state::launched) return cudaSuccess;
  cudaError_t err = wait ? cudaEventSynchronize(b->decoded) : cudaEventQuery(b->decoded);
  if (err == cudaErrorNotReady) return err;
  if (err != cudaSuccess) b->failed = true;
  b->state = c63_batch_state::resolved;
  return err;
}

int c63_cuda_decode_batch_verdict(c63_cuda_decode_batch *b, int i, c63_cuda_huff_out *out)
{
  if (b->failed) return C63_HS_HAND_TO_CPU;
  const int r = c63_cuda_huff_result(b->huff, i, out);
  return r == C63_OK ? C63_OK : C63_HS_HAND_TO_CPU;
}
