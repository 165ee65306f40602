/* A batch of frames for the GPU entropy stage (c63_cuda_huff.h), the CUDA
 * decoding backend's unit of entropy decoding (C++ only): the frames'
 * entropy-coded bytes are staged in page-locked memory as they are
 * submitted, uploaded in one copy and decoded by one enqueue on the batch's
 * own stream (the copies into staging run on the decoder's thread pool,
 * so the caller's thread goes on at once); once the stage has run, each frame's verdict and sparse frame
 * in device memory are read. The backend keeps several, used in turn: the
 * stages of some run while the oldest one's sparse frames are
 * reconstructed, and a batch's results stay valid until its next launch.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef C63_CUDA_DECODE_BATCH_H
#define C63_CUDA_DECODE_BATCH_H

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

#include "c63/geometry.h"
#include "c63/threadpool.h"
#include "cuda/c63_cuda_huff.h"
#include "cuda/c63_cuda_policy.cuh"

static_assert(c63_cuda_decoder_policy::kBatch >= 1 &&
                  c63_cuda_decoder_policy::kBatch <= C63_CUDA_HUFF_MAX_BATCH,
              "a batch is one enqueue of the entropy stage");
static_assert(c63_cuda_decoder_policy::kBatches >= 1 &&
                  c63_cuda_decoder_policy::kBatches <= c63_cuda_decoder_policy::kMaxBatches,
              "batches in flight");

enum class c63_batch_state {
  empty,    /* takes frames once it has a first one */
  filling,  /* frames staged, not launched */
  due,      /* takes no more frames; launched once its previous frames are read (readers_end) */
  launched, /* uploaded and enqueued; the verdicts are not read yet */
  resolved, /* verdicts read; the device results serve until the next launch */
};

struct c63_cuda_decode_batch {
  c63_cuda_huff *huff;
  cudaStream_t stream; /* its upload and its stage */
  int capacity;        /* frames it takes */
  uint8_t *host;       /* page-locked staging of the frames' bytes */
  size_t host_cap;
  uint8_t *dev; /* their copy on the device */
  size_t dev_cap;
  size_t used;     /* bytes staged */
  int n;           /* frames */
  long long first; /* the backend's sequence number of the first frame */
  size_t offset[C63_CUDA_HUFF_MAX_BATCH];
  c63_threadpool *pool; /* runs the copies into staging */
  struct staged_copy {
    uint8_t *dst;
    const uint8_t *src;
    size_t size;
  } copy[C63_CUDA_HUFF_MAX_BATCH];
  c63_task copying[C63_CUDA_HUFF_MAX_BATCH]; /* frame i's copy */
  c63_cuda_huff_frame frames[C63_CUDA_HUFF_MAX_BATCH];
  bool failed;         /* the stage could not be enqueued: every frame to the CPU */
  cudaEvent_t decoded; /* recorded on its stream after the stage */
  /* The backend's sequence number after the last frame of its last launch:
   * the reconstructions of the frames before it read that launch's results
   * in device memory, which the next launch overwrites, so the next launch
   * waits until the backend has enqueued them all. */
  long long readers_end;
  /* Recorded by the backend after the reconstruction of frame
   * readers_end - 1; where that failed (unordered), the next launch hands
   * every frame to the CPU. */
  cudaEvent_t consumed;
  bool unordered;
  c63_batch_state state;
};

/* In the current CUDA context; a batch of capacity frames (1 to
 * C63_CUDA_HUFF_MAX_BATCH) whose copies into staging pool runs. */
cudaError_t c63_cuda_decode_batch_init(c63_cuda_decode_batch *b, int capacity,
                                       c63_threadpool *pool);
void c63_cuda_decode_batch_release(c63_cuda_decode_batch *b);

/* Start a new batch at sequence number first (the batch is empty or
 * resolved: its earlier frames' uploads are done). */
void c63_cuda_decode_batch_begin(c63_cuda_decode_batch *b, long long first);

/* Stage one frame's bytes: copied by the pool, so data is read until the
 * batch is launched, dropped (c63_cuda_decode_batch_wait_copies) or
 * released. Returns the frame's index in the batch, or -1 when page-locked
 * memory runs out. */
int c63_cuda_decode_batch_add(c63_cuda_decode_batch *b, const uint8_t *data, size_t size,
                              int keyframe, size_t entries_cap);

/* Wait until every frame added has been copied into staging (the callers'
 * bytes are then no longer read). */
void c63_cuda_decode_batch_wait_copies(c63_cuda_decode_batch *b);

/* Upload the staged bytes and enqueue the stage on the batch's stream,
 * after the work the consumed event marks: only once the backend has
 * enqueued the reconstructions of all frames before readers_end and
 * recorded consumed after the last. A failure is not an error: the frames
 * go to the CPU (c63_cuda_decode_batch_verdict). */
void c63_cuda_decode_batch_launch(c63_cuda_decode_batch *b, const c63_geometry *g);

/* Whether a launched batch's stage has run (without waiting), or wait for
 * it; then state becomes resolved. Returns cudaSuccess, cudaErrorNotReady
 * (wait false, still running) or the error of the wait. */
cudaError_t c63_cuda_decode_batch_resolve(c63_cuda_decode_batch *b, bool wait);

/* Frame i's verdict once resolved: C63_OK with *out its sparse frame in
 * device memory, or C63_HS_HAND_TO_CPU (the CPU decodes it). */
int c63_cuda_decode_batch_verdict(c63_cuda_decode_batch *b, int i, c63_cuda_huff_out *out);

#endif
