/* Entropy (Huffman) decoding on the GPU, a batch of frames at a time: the
 * self-synchronising parallel decoder of docs/design.md ("Entropy
 * decoding"), synchronised by end states. Given frames' entropy-coded
 * bytes (stuffed, as c63_entropy_decode takes them) in device memory, it
 * leaves in device memory each frame's sparse frame (c63/sparse.h) as
 * c63_entropy_decode produces it, or answers C63_HS_HAND_TO_CPU for a frame
 * that only the sequential decoder judges. It never reads or writes outside
 * its buffers, whatever the data, and a frame's result does not depend on
 * the other frames of its batch.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef C63_CUDA_HUFF_H
#define C63_CUDA_HUFF_H

#include <stddef.h>
#include <stdint.h>

#include "c63/geometry.h"
#include "c63/sparse.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The stage's device buffers, grown as frames need; one per stream of
 * frames (not shared between threads). */
typedef struct c63_cuda_huff c63_cuda_huff;

/* The sparse frame in device memory (arrays as in c63_sparse_frame). */
typedef struct c63_cuda_huff_out {
  const uint32_t *start;
  const uint8_t *count;
  const c63_mv *mvs;
  const uint32_t *entries;
  size_t n_entries, n_blocks;
} c63_cuda_huff_out;

/* On the current CUDA device. Returns C63_OK, C63_ERR_NOMEM or
 * C63_ERR_BACKEND. */
int c63_cuda_huff_new(c63_cuda_huff **out);
void c63_cuda_huff_free(c63_cuda_huff *h);

/* One frame of a batch: its entropy-coded bytes (stuffed, as
 * c63_entropy_decode takes them) in device memory, whether it is a
 * keyframe, and the entries the caller's sparse frame holds
 * (c63_sparse_entries_bound), which decides, as in c63_entropy_decode, when
 * a frame has too many. */
typedef struct c63_cuda_huff_frame {
  const uint8_t *data;
  size_t size;
  int keyframe;
  size_t entries_cap;
} c63_cuda_huff_frame;

/* Enqueue the decoding of n frames (1 .. C63_CUDA_HUFF_MAX_BATCH) of
 * geometry g on stream (a cudaStream_t; NULL: the default stream) and
 * return without waiting. Returns C63_OK, C63_ERR_INVALID_ARG (n out of
 * range), C63_ERR_NOMEM or C63_ERR_BACKEND. The frames' data must stay in
 * place until the stream has passed the work. The results are h's until
 * its next enqueue: a caller that keeps one batch's sparse frames while the
 * next decodes uses two stages. */
#define C63_CUDA_HUFF_MAX_BATCH 64
int c63_cuda_huff_enqueue(c63_cuda_huff *h, const c63_cuda_huff_frame *frames, int n,
                          const c63_geometry *g, void *stream);

/* Once the stream has passed the enqueued work (cudaStreamSynchronize, or
 * an event recorded after the enqueue): frame i's verdict, C63_OK with *out
 * describing its sparse frame in device memory, or C63_HS_HAND_TO_CPU
 * (c63/huff_sync_model.h): decode that frame with c63_entropy_decode. */
int c63_cuda_huff_result(c63_cuda_huff *h, int i, c63_cuda_huff_out *out);

/* Wait until stream (a cudaStream_t; NULL: the default stream) has passed
 * the enqueued work, for callers without the CUDA runtime's headers.
 * Returns C63_OK or C63_ERR_BACKEND. */
int c63_cuda_huff_wait(void *stream);

/* One frame: enqueue, wait, result. */
int c63_cuda_huff_decode(c63_cuda_huff *h, const uint8_t *data, size_t size, const c63_geometry *g,
                         int keyframe, size_t entries_cap, void *stream, c63_cuda_huff_out *out);

/* For tests and benchmarks: the frame's bytes uploaded into h's own device
 * buffer (the pointer returned, NULL on failure), and the result of the
 * last decode copied into a host sparse frame reserved for g. */
const uint8_t *c63_cuda_huff_upload(c63_cuda_huff *h, const uint8_t *data, size_t size);
int c63_cuda_huff_download(c63_cuda_huff *h, const c63_cuda_huff_out *out, c63_sparse_frame *f);

#ifdef __cplusplus
}
#endif

#endif
