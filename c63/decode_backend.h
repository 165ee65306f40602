/* The decoding backend interface: reconstruction of a frame from its
 * entropy-decoded coefficients (sparse.h) and vectors, with the reference frame kept
 * by the backend (a GPU backend keeps it resident on the device). The
 * decoder does the parsing and, unless the backend takes it on
 * (c63_decode_backend_info.entropy), the entropy decoding, like the
 * encoder's backend.h the other way round.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef C63_DECODE_BACKEND_H
#define C63_DECODE_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "c63-config.h"
#include "c63/c63.h"
#include "device.h"
#include "dsp.h"
#include "geometry.h"
#include "sparse.h"
#include "threadpool.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct c63_decode_job {
  int keyframe;   /* predicted from nothing; otherwise from the frame submitted before */
  int device_out; /* leave the picture in device memory (a GPU backend) */
  uint8_t quant[3][64];
  /* The frame's non-zero coefficients and its vectors; they stay in place
   * until the job is collected. NULL for a backend that entropy-decodes. */
  const c63_sparse_frame *coeffs;
  /* For a backend that entropy-decodes: the frame's entropy-coded bytes
   * (stuffed, as c63_entropy_decode takes them), in place until the job is
   * collected; its geometry (the one the backend was resized to); and the
   * entries its sparse frame may hold (c63_sparse_entries_bound), which
   * decides, as in c63_entropy_decode, when a frame has too many. A frame
   * whose data does not decode fails at its collect with
   * c63_entropy_decode's status and message. */
  const uint8_t *data;
  size_t data_size;
  const c63_geometry *g;
  size_t entries_bound;
  /* Set by collect: the padded planes of the picture, in memory the
   * backend owns (on the device for device_out), valid until its next
   * collect. */
  const uint8_t *out[3];
  int out_stride[3];
} c63_decode_job;

typedef struct c63_decode_backend c63_decode_backend;

/* What a backend made by create does beyond reconstruction. */
typedef struct c63_decode_backend_info {
  /* Frames submitted and not yet collected, at most: a GPU backend
   * reconstructs later frames (and entropy-decodes batches of them) while
   * the caller uses the oldest one's picture. */
  int depth;
  /* Jobs carry the frames' entropy-coded bytes, not coefficients: the
   * backend entropy-decodes them itself. */
  int entropy;
} c63_decode_backend_info;

/* Frames are submitted and collected in order, at most info.depth
 * submitted and not yet collected. */
typedef struct c63_decode_backend_ops {
  const char *name;
  /* Whether the sparse coefficients should be picture memory (page-locked
   * when the CUDA backend is built), which a GPU uploads by DMA. */
  int pinned_input;
  /* pool: the decoder's CPU threads, which the backend may use. */
  int (*create)(const c63_device *dev, c63_threadpool *pool, c63_decode_backend **out,
                c63_decode_backend_info *info, char *msg, size_t msg_size);
  void (*destroy)(c63_decode_backend *be);
  /* Prepare for pictures of geometry g (buffers are kept for smaller ones);
   * the reference is dropped. Only with nothing submitted. */
  int (*resize)(c63_decode_backend *be, const c63_geometry *g, char *msg, size_t msg_size);
  /* Start reconstructing a frame (predicted from the last one submitted).
   * The job stays in place until it is collected, and the backend reads it
   * until then: after a frame fails at collect, the decoder corrects the
   * quantiser tables of the jobs after it, so a backend reconstructs no
   * frame after a failed one before that one is collected. */
  int (*submit)(c63_decode_backend *be, const c63_decode_job *job, char *msg, size_t msg_size);
  /* Finish the oldest submitted frame and set its job's out. A failure
   * leaves the reference undefined: the decoder resumes at a keyframe (the
   * delta frames submitted after it fail). */
  int (*collect)(c63_decode_backend *be, c63_decode_job *job, char *msg, size_t msg_size);
  /* Forget every frame submitted and not collected (a seek); the reference
   * is undefined afterwards. NULL: the decoder collects them instead. */
  void (*drop)(c63_decode_backend *be);
  /* Copy planes (w x h each) from src to dst, one of them at least in
   * device memory (a GPU backend; NULL for the CPU's); complete on
   * return. */
  int (*copy)(c63_decode_backend *be, const uint8_t *const src[3], const int src_stride[3],
              uint8_t *const dst[3], const int dst_stride[3], const int w[3], const int h[3],
              char *msg, size_t msg_size);
  /* Whether pictures can stay in device memory (device_out). */
  int device_output;
  /* Start work on every frame submitted now (a GPU backend's partial
   * batch), not when the oldest of them is collected: the caller drains,
   * and submits nothing more until all are collected. NULL: a backend that
   * starts every frame at submit. */
  void (*start)(c63_decode_backend *be);
  /* As copy, but only started: *ticket (counting from 1) names it for
   * copy_wait. The source picture's memory is not written again before
   * the copy is done. NULL: copies are complete on return. */
  int (*copy_async)(c63_decode_backend *be, const uint8_t *const src[3], const int src_stride[3],
                    uint8_t *const dst[3], const int dst_stride[3], const int w[3], const int h[3],
                    uint64_t *ticket, char *msg, size_t msg_size);
  /* Wait for copy ticket and those before it; callable from any thread,
   * beside the other calls. C63_OK or C63_ERR_BACKEND. */
  int (*copy_wait)(c63_decode_backend *be, uint64_t ticket);
} c63_decode_backend_ops;

/* The decoding backends built into libc63 (as c63_backend_lookup). */
extern const c63_decode_backend_ops c63_decode_backend_cpu;
#if HAVE_CUDA
extern const c63_decode_backend_ops c63_decode_backend_cuda;
#endif

const c63_decode_backend_ops *c63_decode_backend_lookup(c63_backend_kind kind);

#ifdef __cplusplus
}
#endif

#endif
