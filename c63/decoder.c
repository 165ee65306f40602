/* The decoder object: header parsing and entropy decoding here, and
 * reconstruction through a decoding backend (decode_backend.h): the CPU
 * one, or the CUDA one with the reference resident on the GPU. Both give
 * the same bytes.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c63-config.h"
#include "c63.h"
#include "decode_backend.h"
#include "dsp.h"
#include "entropy.h"
#include "geometry.h"
#include "threadpool.h"
#if HAVE_CUDA
#include "../cuda/c63_cuda.h"
#endif

#include <unistd.h>

/* Frames parsed and entropy-decoded together at most (and the decoder's
 * delay): enough for every thread of the pool. */
#define MAX_QUEUE 16

/* One frame on its way: its bytes (copied for send, borrowed for decode),
 * then its header, coefficients and vectors, or the failure. */
typedef struct dec_slot {
  const uint8_t *data;
  size_t size;
  c63_bytebuf copy;
  int64_t user;
  int reset_before;
  int decoded, status;
  char err[256];
  c63_frame_header hdr;
  c63_geometry g;
  size_t capacity; /* pixels of padded luma the buffers hold */
  int pinned;      /* the buffers are picture memory (for a GPU backend) */
  int16_t *coeffs[3];
  c63_mv *mvs[3];
} dec_slot;

struct c63_decoder {
  c63_geometry g;
  int allocated;   /* buffers hold g */
  size_t capacity; /* pixels of padded luma the buffers hold (they only grow) */
  int have_ref;
  /* The last DQT's tables: a frame without DQT keeps them, as in the
   * reference (whose tables start all zero). */
  uint8_t quant[3][64];
  /* Frames in flight, head first; slot buffers only grow. */
  dec_slot slots[MAX_QUEUE];
  int head, count, depth;
  int todo[MAX_QUEUE]; /* slots the entropy tasks decode */
  int pinned_slots;    /* slot buffers in picture memory, for a GPU backend */
  int draining;
  int reset_next;       /* c63_decoder_reset: the next frame sent starts afresh */
  c63_threadpool *pool; /* shared with the backend */
  const c63_decode_backend_ops *ops;
  c63_decode_backend *be;
  char err[256];
};

void c63_dec_params_init(c63_dec_params *p)
{
  if (!p) return;
  memset(p, 0, sizeof(*p));
  p->backend = C63_BACKEND_CPU;
}

static void free_slot(dec_slot *sl)
{
  for (int c = 0; c < 3; c++) {
    if (sl->pinned) {
      c63_picture_memory_free(sl->coeffs[c]);
      c63_picture_memory_free(sl->mvs[c]);
    } else {
      free(sl->coeffs[c]);
      free(sl->mvs[c]);
    }
    sl->coeffs[c] = NULL;
    sl->mvs[c] = NULL;
  }
  sl->capacity = 0;
}

/* A slot's buffers for a geometry; kept when a smaller picture comes (a
 * stream alternating sizes reallocates only up to its largest). For a GPU
 * backend (pinned) they are picture memory, page-locked, so it uploads them
 * without copying them first; page-locked memory is scarce, so the CPU
 * backend's are plain. */
static int slot_buffers(dec_slot *sl, const c63_geometry *g, int pinned)
{
  const size_t luma = (size_t)g->pad_w[0] * g->pad_h[0];
  if (luma <= sl->capacity) return C63_OK;
  free_slot(sl);
  sl->pinned = pinned;
  void *(*alloc)(size_t) = pinned ? c63_picture_memory_alloc : malloc;
  for (int c = 0; c < 3; c++) {
    /* chroma planes are a quarter of the luma plane */
    size_t px = c ? luma / 4 : luma;
    sl->coeffs[c] = alloc(px * sizeof(int16_t));
    sl->mvs[c] = alloc(px / 64 * sizeof(c63_mv));
    if (!sl->coeffs[c] || !sl->mvs[c]) {
      free_slot(sl);
      snprintf(sl->err, sizeof(sl->err), "out of memory for a %dx%d picture", g->width, g->height);
      return C63_ERR_NOMEM;
    }
  }
  sl->capacity = luma;
  return C63_OK;
}

/* Fewest bytes of entropy-coded data a frame of this geometry can have:
 * every block codes at least a use_mv bit, a DC size and an EOB (5 bits).
 * Checked before allocating, so a huge size in a short frame costs nothing. */
static size_t min_data_bytes(int width, int height)
{
  c63_geometry g;
  c63_geometry_init(&g, width, height);
  return ((size_t)g.mcus_w * g.mcus_h * 6 * 5) / 8;
}

static const c63_decode_backend_ops *decode_backend_ops(c63_backend_kind kind)
{
#if HAVE_CUDA
  if (kind == C63_BACKEND_CUDA) return &c63_decode_backend_cuda;
#endif
  return kind == C63_BACKEND_CPU ? &c63_decode_backend_cpu : NULL;
}

int c63_decoder_new_with_params(const c63_dec_params *p, c63_decoder **out, char *msg,
                                size_t msg_size)
{
  if (!out) return C63_ERR_INVALID_ARG;
  *out = NULL;
  if (!p) return C63_ERR_INVALID_ARG;
  if (p->threads < 0 || p->threads > 256 || p->device_id < 0) {
    if (msg && msg_size)
      snprintf(msg, msg_size, "thread count %d or device id %d out of range", p->threads,
               p->device_id);
    return C63_ERR_INVALID_ARG;
  }
  if (p->backend != C63_BACKEND_CPU && p->backend != C63_BACKEND_CUDA) {
    if (msg && msg_size) snprintf(msg, msg_size, "unknown backend %d", (int)p->backend);
    return C63_ERR_INVALID_ARG;
  }
  if (!c63_backend_available(p->backend, p->device_id, msg, msg_size))
    return p->backend == C63_BACKEND_CUDA ? C63_ERR_NO_DEVICE : C63_ERR_UNSUPPORTED;
  c63_decoder *dec = calloc(1, sizeof(*dec));
  if (!dec) return C63_ERR_NOMEM;
  int threads = p->threads;
  if (threads == 0) {
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    threads = cores < 1 ? 1 : cores > 16 ? 16 : (int)cores;
  }
  dec->ops = decode_backend_ops(p->backend);
  dec->pinned_slots = p->backend == C63_BACKEND_CUDA;
  dec->depth = threads < MAX_QUEUE ? threads : MAX_QUEUE;
  dec->pool = c63_threadpool_new(threads);
  if (!dec->pool) {
    free(dec);
    if (msg && msg_size) snprintf(msg, msg_size, "out of memory creating %d threads", threads);
    return C63_ERR_NOMEM;
  }
  int r = dec->ops->create(p->device_id, dec->pool, &dec->be, msg, msg_size);
  if (r) {
    c63_threadpool_free(dec->pool);
    free(dec);
    return r;
  }
  *out = dec;
  return C63_OK;
}

int c63_decoder_new(c63_decoder **out)
{
  c63_dec_params p;
  c63_dec_params_init(&p);
  return c63_decoder_new_with_params(&p, out, NULL, 0);
}

void c63_decoder_free(c63_decoder *dec)
{
  if (!dec) return;
  if (dec->be) dec->ops->destroy(dec->be);
  for (int i = 0; i < MAX_QUEUE; i++) {
    free_slot(&dec->slots[i]);
    c63_bytebuf_free(&dec->slots[i].copy);
  }
  c63_threadpool_free(dec->pool);
  free(dec);
}

void c63_decoder_reset(c63_decoder *dec)
{
  if (!dec) return;
  /* Frames already in flight keep their reference: the reset takes effect
   * with the next frame sent. */
  if (dec->count == 0) dec->have_ref = 0;
  dec->reset_next = 1;
}

const char *c63_decoder_error(const c63_decoder *dec)
{
  if (!dec) return "no decoder (NULL)";
  return dec->err;
}

const char *c63_decoder_backend_name(const c63_decoder *dec)
{
  if (!dec) return "none";
  return dec->ops->name;
}

/* Parse and entropy-decode a slot: it touches nothing else, so slots of
 * several frames run at once. */
static void entropy_stage(dec_slot *sl, int pinned)
{
  c63_frame_header *hdr = &sl->hdr;
  sl->err[0] = '\0';
  sl->decoded = 1;
  if ((sl->status = c63_parse_frame_header(sl->data, sl->size, hdr, sl->err, sizeof(sl->err))))
    return;
  if (hdr->data_size < min_data_bytes(hdr->width, hdr->height)) {
    snprintf(sl->err, sizeof(sl->err),
             "%zu bytes of frame data cannot hold a %dx%d picture (at least %zu needed)",
             hdr->data_size, hdr->width, hdr->height, min_data_bytes(hdr->width, hdr->height));
    sl->status = C63_ERR_TRUNCATED;
    return;
  }
  c63_geometry_init(&sl->g, hdr->width, hdr->height);
  if ((sl->status = slot_buffers(sl, &sl->g, pinned))) return;
  sl->status = c63_entropy_decode(sl->data + hdr->data_offset, hdr->data_size, &sl->g,
                                  hdr->keyframe, sl->coeffs, sl->mvs, sl->err, sizeof(sl->err));
}

/* Reconstruct the head slot's frame, in order (the reference, the
 * quantiser tables and the picture size carry over from frame to frame). */
static int reconstruct_stage(c63_decoder *dec, dec_slot *sl, c63_decoded_picture *out)
{
  const c63_frame_header *hdr = &sl->hdr;
  int r = sl->status;
  if (sl->reset_before) dec->have_ref = 0;
  if (r) {
    memcpy(dec->err, sl->err, sizeof(dec->err));
    goto fail;
  }
  if (hdr->has_quant) memcpy(dec->quant, hdr->quant, sizeof(dec->quant));
  int resized = !dec->allocated || hdr->width != dec->g.width || hdr->height != dec->g.height;
  if (!hdr->keyframe && (resized || !dec->have_ref)) {
    snprintf(dec->err, sizeof(dec->err),
             resized ? "delta frame changes the picture size without a keyframe"
                     : "delta frame without a preceding keyframe");
    r = C63_ERR_NO_REFERENCE;
    goto fail;
  }
  if (resized) {
    dec->allocated = 0;
    if ((r = dec->ops->resize(dec->be, &sl->g, dec->err, sizeof(dec->err)))) goto fail;
    dec->g = sl->g;
    dec->allocated = 1;
  }

  c63_decode_job job;
  memset(&job, 0, sizeof(job));
  job.keyframe = hdr->keyframe;
  memcpy(job.quant, dec->quant, sizeof(job.quant));
  for (int c = 0; c < 3; c++) {
    job.coeffs[c] = sl->coeffs[c];
    job.mvs[c] = sl->mvs[c];
  }
  if ((r = dec->ops->reconstruct(dec->be, &job, dec->err, sizeof(dec->err)))) goto fail;
  dec->have_ref = 1;
  if (out) {
    for (int c = 0; c < 3; c++) {
      out->data[c] = job.out[c];
      out->stride[c] = job.out_stride[c];
    }
    out->width = hdr->width;
    out->height = hdr->height;
    out->keyframe = hdr->keyframe;
    out->user = sl->user;
  }
  return C63_OK;

fail:
  /* Resume at the next keyframe: the reference is no longer trustworthy. */
  dec->have_ref = 0;
  if (out) {
    memset(out, 0, sizeof(*out));
    out->user = sl->user;
  }
  return r;
}

int c63_decoder_decode(c63_decoder *dec, const uint8_t *data, size_t size, c63_decoded_picture *out)
{
  if (!dec) return C63_ERR_INVALID_ARG;
  dec->err[0] = '\0';
  if (!data) {
    snprintf(dec->err, sizeof(dec->err), "no data");
    return C63_ERR_INVALID_ARG;
  }
  if (dec->count) {
    snprintf(dec->err, sizeof(dec->err), "frames sent with c63_decoder_send_packet are in flight");
    return C63_ERR_AGAIN;
  }
  /* One frame straight from the caller's bytes, in the head slot. */
  dec_slot *sl = &dec->slots[dec->head];
  sl->data = data;
  sl->size = size;
  sl->user = 0;
  sl->reset_before = dec->reset_next;
  dec->reset_next = 0;
  entropy_stage(sl, dec->pinned_slots);
  return reconstruct_stage(dec, sl, out);
}

int c63_decoder_send_packet(c63_decoder *dec, const uint8_t *data, size_t size, int64_t user)
{
  if (!dec) return C63_ERR_INVALID_ARG;
  if (!data) {
    dec->draining = 1;
    return C63_OK;
  }
  if (dec->draining || dec->count == dec->depth) return C63_ERR_AGAIN;
  dec_slot *sl = &dec->slots[(dec->head + dec->count) % MAX_QUEUE];
  sl->copy.size = 0;
  c63_bytebuf_put(&sl->copy, data, size);
  if (sl->copy.failed) {
    sl->copy.failed = 0;
    snprintf(dec->err, sizeof(dec->err), "out of memory for a %zu-byte frame", size);
    return C63_ERR_NOMEM;
  }
  sl->data = sl->copy.data;
  sl->size = size;
  sl->user = user;
  sl->decoded = 0;
  sl->reset_before = dec->reset_next;
  dec->reset_next = 0;
  dec->count++;
  return C63_OK;
}

static void entropy_task(void *arg, int i)
{
  c63_decoder *dec = arg;
  entropy_stage(&dec->slots[dec->todo[i]], dec->pinned_slots);
}

int c63_decoder_receive_picture(c63_decoder *dec, c63_decoded_picture *pic)
{
  if (!dec || !pic) return C63_ERR_INVALID_ARG;
  if (dec->count == 0) {
    if (!dec->draining) return C63_ERR_AGAIN;
    dec->draining = 0;
    return C63_ERR_EOF;
  }
  if (dec->count < dec->depth && !dec->draining) return C63_ERR_AGAIN;
  dec_slot *sl = &dec->slots[dec->head];
  if (!sl->decoded) {
    /* Entropy-decode every frame in flight at once. */
    int pending = 0;
    for (int k = 0; k < dec->count; k++) {
      const int i = (dec->head + k) % MAX_QUEUE;
      if (!dec->slots[i].decoded) dec->todo[pending++] = i;
    }
    c63_threadpool_run(dec->pool, entropy_task, dec, pending);
  }
  dec->err[0] = '\0';
  int r = reconstruct_stage(dec, sl, pic);
  dec->head = (dec->head + 1) % MAX_QUEUE;
  dec->count--;
  return r;
}

int c63_decoder_delay(const c63_decoder *dec)
{
  if (!dec) return C63_ERR_INVALID_ARG;
  return dec->depth - 1;
}
