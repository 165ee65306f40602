/* The decoding backend interface: reconstruction of a frame from its
 * entropy-decoded coefficients (sparse.h) and vectors, with the reference frame kept
 * by the backend (a GPU backend keeps it resident on the device). The
 * decoder does the parsing and entropy decoding, like the encoder's
 * backend.h the other way round.
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
   * until the job is collected. */
  const c63_sparse_frame *coeffs;
  /* Set by collect: the padded planes of the picture, in memory the
   * backend owns (on the device for device_out), valid until its next
   * collect. */
  const uint8_t *out[3];
  int out_stride[3];
} c63_decode_job;

typedef struct c63_decode_backend c63_decode_backend;

/* Frames are submitted and collected in order, at most `depth` submitted
 * and not yet collected, so a GPU backend reconstructs one frame while the
 * caller uses the previous picture. */
typedef struct c63_decode_backend_ops {
  const char *name;
  int depth;
  /* Whether the sparse coefficients should be picture memory (page-locked
   * when the CUDA backend is built), which a GPU uploads by DMA. */
  int pinned_input;
  /* pool: the decoder's CPU threads, which the backend may use. */
  int (*create)(const c63_device *dev, c63_threadpool *pool, c63_decode_backend **out, char *msg,
                size_t msg_size);
  void (*destroy)(c63_decode_backend *be);
  /* Prepare for pictures of geometry g (buffers are kept for smaller ones);
   * the reference is dropped. Only with nothing submitted. */
  int (*resize)(c63_decode_backend *be, const c63_geometry *g, char *msg, size_t msg_size);
  /* Start reconstructing a frame (predicted from the last one submitted). */
  int (*submit)(c63_decode_backend *be, const c63_decode_job *job, char *msg, size_t msg_size);
  /* Finish the oldest submitted frame and set its job's out. A failure
   * leaves the reference undefined: the decoder resumes at a keyframe. */
  int (*collect)(c63_decode_backend *be, c63_decode_job *job, char *msg, size_t msg_size);
  /* Copy planes (w x h each) from src to dst, one of them at least in
   * device memory (a GPU backend; NULL for the CPU's); complete on
   * return. */
  int (*copy)(c63_decode_backend *be, const uint8_t *const src[3], const int src_stride[3],
              uint8_t *const dst[3], const int dst_stride[3], const int w[3], const int h[3],
              char *msg, size_t msg_size);
  /* Whether pictures can stay in device memory (device_out). */
  int device_output;
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
