/* The decoding backend interface: reconstruction of a frame from its
 * entropy-decoded coefficients and vectors, with the reference frame kept
 * by the backend (a GPU backend keeps it resident on the device). The
 * decoder does the parsing and entropy decoding, like the encoder's
 * backend.h the other way round.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef C63_DECODE_BACKEND_H
#define C63_DECODE_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "dsp.h"
#include "geometry.h"
#include "threadpool.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct c63_decode_job {
  int keyframe; /* predicted from nothing; otherwise from the last reconstruction */
  uint8_t quant[3][64];
  const int16_t *coeffs[3]; /* per plane, layouts as in dsp.h */
  const c63_mv *mvs[3];
  /* Set by reconstruct: the padded planes of the picture, in memory the
   * backend owns, valid until its next call. */
  const uint8_t *out[3];
  int out_stride[3];
} c63_decode_job;

typedef struct c63_decode_backend c63_decode_backend;

typedef struct c63_decode_backend_ops {
  const char *name;
  /* pool: the decoder's CPU threads, which the backend may use. */
  int (*create)(int device_id, c63_threadpool *pool, c63_decode_backend **out, char *msg,
                size_t msg_size);
  void (*destroy)(c63_decode_backend *be);
  /* Prepare for pictures of geometry g (buffers are kept for smaller ones);
   * the reference is dropped. */
  int (*resize)(c63_decode_backend *be, const c63_geometry *g, char *msg, size_t msg_size);
  int (*reconstruct)(c63_decode_backend *be, c63_decode_job *job, char *msg, size_t msg_size);
} c63_decode_backend_ops;

extern const c63_decode_backend_ops c63_decode_backend_cpu;

#ifdef __cplusplus
}
#endif

#endif
