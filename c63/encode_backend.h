/* The backend interface: what the encoder asks of a CPU or GPU backend.
 *
 * A backend owns everything from the picture's pixels to the stuffed
 * entropy-coded data of the frame: motion search, compensation, forward
 * transform and quantisation, reconstruction, entropy coding, byte stuffing
 * and the end-of-frame flush. It keeps the reference frame itself, so a GPU
 * backend keeps it resident on the device and sends only the coded frame
 * back. The encoder decides frame types and quantisers, hands the backend
 * one frame at a time (submit), later collects the payload (collect) and
 * writes the headers around it; a backend may keep up to in_flight
 * frames in flight.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef C63_BACKEND_H
#define C63_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "c63-config.h"
#include "c63/c63.h"
#include "device.h"
#include "dsp.h"
#include "geometry.h"
#include "threadpool.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One frame's work. */
typedef struct c63_frame_job {
  /* Input picture, visible size (geometry pic_w x pic_h), any stride. The
   * backend copies it during submit, unless borrowed. */
  const uint8_t *src[3];
  int src_stride[3];
  int nv12; /* src[1] holds U and V interleaved (src[2] unused) */
  /* The caller keeps src unchanged until the job is collected, so the
   * backend may go on reading it after submit returns
   * (c63_encoder_send_picture_borrowed). */
  int borrowed;
  int keyframe;
  int search_range;     /* luma; chroma uses search_range / 2 */
  c63_enc_mode mode;    /* how the backend chooses what it codes */
  uint8_t quant[3][64]; /* zig-zag order */
  /* Output, set by collect: the frame's entropy-coded data, stuffed and
   * flushed (format section 4), payload_size bytes at payload, in memory the
   * backend owns (mapped pinned memory the GPU wrote, for CUDA). At least
   * C63_FRAME_HEADER_BYTES writable bytes precede it and
   * C63_FRAME_TRAILER_BYTES follow it, so the encoder completes the frame in
   * place. Valid until the next submit or collect on this backend. */
  uint8_t *payload;
  size_t payload_size;
} c63_frame_job;

typedef struct c63_backend c63_backend;

/* GPU stage timings of one backend (the CUDA one), for benchmarks: while
 * timing is on, every frame's stages are bracketed with events and the
 * times summed. Costs a few event records per frame, so it is off unless
 * asked for. */
typedef struct c63_stage_stats {
  long frames;         /* frames timed since the last reset */
  double upload_ms;    /* sums over those frames: host-to-device copy of the frame */
  double motion_ms;    /* motion search (keyframes: clearing the vectors) */
  double transform_ms; /* compensation, transform and quantisation, and the
                          reconstruction from them (one kernel) */
  double entropy_ms;   /* entropy coding, byte stuffing and the flush byte, from the
                          end of the transform (it may wait for the frame before) */
  double download_ms;  /* writing the coded frame into mapped host memory */
  double total_ms;     /* the upload plus the GPU time from the search to the download */
  /* Host side, wall clock: time in submit (copying the picture into pinned
   * staging, enqueueing) and time collect waited for the GPU. A wait near
   * zero means the GPU keeps up and the caller's CPU work sets the pace. */
  double submit_host_ms;
  double collect_wait_ms;
} c63_stage_stats;

typedef struct c63_backend_ops {
  const char *name;
  /* Frames the backend holds between submit and collect (>= 1), asked
   * once it is created (a tuning aid may set them). */
  int (*in_flight)(const c63_backend *be);
  /* pool: the encoder's CPU threads, which a backend may use during submit
   * and collect (it is idle then). */
  int (*create)(const c63_geometry *g, const c63_device *dev, c63_threadpool *pool,
                c63_backend **out, char *msg, size_t msg_size);
  void (*destroy)(c63_backend *be);
  /* Start the frame. Jobs are collected in submission order. */
  int (*submit)(c63_backend *be, c63_frame_job *job, char *msg, size_t msg_size);
  /* Wait for the oldest submitted job and set its outputs. job is the same
   * object that was submitted (the encoder keeps it alive in between). */
  int (*collect)(c63_backend *be, c63_frame_job *job, char *msg, size_t msg_size);
  /* 1 when the backend can run on device device_id of this machine; else 0
   * with msg saying why (no driver, no device, no such device). */
  int (*probe)(int device_id, char *msg, size_t msg_size);
  /* Optional (NULL for the CPU): page-locked host memory that the backend
   * uploads from by DMA, for c63_picture_memory_alloc; NULL when there is
   * none to be had. */
  void *(*host_alloc)(size_t size);
  void (*host_free)(void *ptr);
  /* Optional: stage timing of this backend (c63_stage_stats); get copies
   * the sums and, with reset, starts them again. */
  void (*set_timing)(c63_backend *be, int on);
  void (*get_stats)(c63_backend *be, c63_stage_stats *out, int reset);
  /* The encoding modes (c63_mode) it implements, bit 1 << mode each. */
  unsigned modes;
  /* Optional: with nothing in flight, forget the frame collected last, so
   * that the next submit predicts from the reference before it (a frame
   * coded again at another quality). */
  void (*rewind)(c63_backend *be);
  /* Optional: page-lock the caller's memory at ptr, counted per range, and
   * undo it (c63_picture_memory_register); register returns a status with
   * msg set, unregister C63_ERR_INVALID_ARG for memory not registered. */
  int (*host_register)(void *ptr, size_t size, char *msg, size_t msg_size);
  int (*host_unregister)(void *ptr);
  /* The encoder's pool when the caller leaves its size to the library
   * (c63_enc_params.threads 0): one thread per core, at most this many
   * (0: c63_threadpool_default_size's own bound). */
  int default_threads;
} c63_backend_ops;

/* The backends built into libc63, declared by the core (as FFmpeg declares
 * its hardware accelerations) and implemented in their own directories:
 * the core reaches the CUDA one through this table only. */
extern const c63_backend_ops c63_backend_cpu;
#if HAVE_CUDA
extern const c63_backend_ops c63_backend_cuda;
#endif

/* The backend of a kind, or NULL when this build has none. */
const c63_backend_ops *c63_backend_lookup(c63_backend_kind kind);

/* The CPU backend's reconstruction of the frame it coded last, plane c
 * (padded, pad_w bytes per row): the reference the next frame predicts
 * from, which the decoder's picture must equal. For tests. */
const uint8_t *c63_backend_cpu_reference(const c63_backend *be, int c);

/* The backend of an encoder (for tests of a backend's internals). */
struct c63_encoder;
c63_backend *c63_encoder_backend(struct c63_encoder *enc);

/* Copy a visible plane into a zero-padded plane (stride pad_w). step: 1,
 * or 2 to take every second byte (one chroma plane of NV12's interleaved
 * UV, src pointing at its first U or V byte). */
void c63_pad_plane(const uint8_t *src, int src_stride, int step, int pic_w, int pic_h, uint8_t *dst,
                   int pad_w, int pad_h);

#ifdef __cplusplus
}
#endif

#endif
