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

struct c63_decoder {
  c63_geometry g;
  int allocated;   /* buffers hold g */
  size_t capacity; /* pixels of padded luma the buffers hold (they only grow) */
  int have_ref;
  /* The last DQT's tables: a frame without DQT keeps them, as in the
   * reference (whose tables start all zero). */
  uint8_t quant[3][64];
  int16_t *coeffs[3];
  c63_mv *mvs[3];
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

static void free_buffers(c63_decoder *dec)
{
  for (int c = 0; c < 3; c++) {
    free(dec->coeffs[c]);
    free(dec->mvs[c]);
    dec->coeffs[c] = NULL;
    dec->mvs[c] = NULL;
  }
  dec->allocated = 0;
  dec->capacity = 0;
  dec->have_ref = 0;
}

/* Buffers for a picture size. They are kept when a smaller picture comes
 * (a stream alternating sizes reallocates only up to its largest). */
static int alloc_buffers(c63_decoder *dec, int width, int height)
{
  c63_geometry g;
  c63_geometry_init(&g, width, height);
  const size_t luma = (size_t)g.pad_w[0] * g.pad_h[0];
  dec->have_ref = 0;
  dec->allocated = 0;
  if (luma > dec->capacity) {
    free_buffers(dec);
    for (int c = 0; c < 3; c++) {
      /* chroma planes are a quarter of the luma plane */
      size_t px = c ? luma / 4 : luma;
      dec->coeffs[c] = calloc(px, sizeof(int16_t));
      dec->mvs[c] = calloc(px / 64, sizeof(c63_mv));
      if (!dec->coeffs[c] || !dec->mvs[c]) {
        free_buffers(dec);
        snprintf(dec->err, sizeof(dec->err), "out of memory for a %dx%d picture", width, height);
        return C63_ERR_NOMEM;
      }
    }
    dec->capacity = luma;
  }
  int r = dec->ops->resize(dec->be, &g, dec->err, sizeof(dec->err));
  if (r) return r;
  dec->g = g;
  dec->allocated = 1;
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
  free_buffers(dec);
  c63_threadpool_free(dec->pool);
  free(dec);
}

void c63_decoder_reset(c63_decoder *dec)
{
  if (!dec) return;
  dec->have_ref = 0;
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

int c63_decoder_decode(c63_decoder *dec, const uint8_t *data, size_t size, c63_decoded_picture *out)
{
  c63_frame_header hdr;
  int r;

  if (!dec) return C63_ERR_INVALID_ARG;
  dec->err[0] = '\0';
  if (!data) {
    snprintf(dec->err, sizeof(dec->err), "no data");
    return C63_ERR_INVALID_ARG;
  }
  if ((r = c63_parse_frame_header(data, size, &hdr, dec->err, sizeof(dec->err)))) goto fail;

  if (hdr.data_size < min_data_bytes(hdr.width, hdr.height)) {
    snprintf(dec->err, sizeof(dec->err),
             "%zu bytes of frame data cannot hold a %dx%d picture (at least %zu needed)",
             hdr.data_size, hdr.width, hdr.height, min_data_bytes(hdr.width, hdr.height));
    r = C63_ERR_TRUNCATED;
    goto fail;
  }
  if (hdr.has_quant) memcpy(dec->quant, hdr.quant, sizeof(dec->quant));
  int resized = !dec->allocated || hdr.width != dec->g.width || hdr.height != dec->g.height;
  if (!hdr.keyframe && (resized || !dec->have_ref)) {
    snprintf(dec->err, sizeof(dec->err),
             resized ? "delta frame changes the picture size without a keyframe"
                     : "delta frame without a preceding keyframe");
    r = C63_ERR_NO_REFERENCE;
    goto fail;
  }
  if (resized && (r = alloc_buffers(dec, hdr.width, hdr.height))) goto fail;

  r = c63_entropy_decode(data + hdr.data_offset, hdr.data_size, &dec->g, hdr.keyframe, dec->coeffs,
                         dec->mvs, dec->err, sizeof(dec->err));
  if (r) goto fail;

  c63_decode_job job;
  memset(&job, 0, sizeof(job));
  job.keyframe = hdr.keyframe;
  memcpy(job.quant, dec->quant, sizeof(job.quant));
  for (int c = 0; c < 3; c++) {
    job.coeffs[c] = dec->coeffs[c];
    job.mvs[c] = dec->mvs[c];
  }
  if ((r = dec->ops->reconstruct(dec->be, &job, dec->err, sizeof(dec->err)))) goto fail;
  dec->have_ref = 1;

  if (out) {
    for (int c = 0; c < 3; c++) {
      out->data[c] = job.out[c];
      out->stride[c] = job.out_stride[c];
    }
    out->width = hdr.width;
    out->height = hdr.height;
    out->keyframe = hdr.keyframe;
  }
  return C63_OK;

fail:
  /* Resume at the next keyframe: the reference is no longer trustworthy. */
  dec->have_ref = 0;
  return r;
}
