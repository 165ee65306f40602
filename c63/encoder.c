/* The encoder object: parameters, frame types, the send/receive queue
 * over a backend, and entropy coding of what the backend returns.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "encode_backend.h"
#include "encoder_stats.h"
#include "c63-config.h"
#include "c63/c63.h"
#include "frame_syntax.h"
#include "ratectl.h"
#include "tables.h"

#include "params.h"

#define MAX_IN_FLIGHT 8

typedef struct queued_frame {
  c63_frame_job job;
  int64_t user, number;
  c63_ratectl_frame rc; /* rate control's choice for it */
  int collected;        /* collected at submit (CBR), waiting to be received */
} queued_frame;

struct c63_encoder {
  c63_enc_params p;
  c63_geometry g;
  const c63_backend_ops *ops;
  c63_backend *be;
  int depth; /* frames the backend may hold */

  queued_frame queue[MAX_IN_FLIGHT];
  int head, count;
  int draining;

  int64_t frames_sent;
  int frames_since_keyframe;
  int quality;
  uint8_t quant[3][64];
  c63_ratectl rc;
  int last_quality; /* of the last packet received */

  c63_threadpool *pool; /* lent to the backend */
  c63_bytebuf headers;
  char err[256];
};

static void set_msg(char *msg, size_t msg_size, const char *fmt, ...)
{
  if (!msg || !msg_size) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, msg_size, fmt, ap);
  va_end(ap);
}

void c63_enc_params_init(c63_enc_params *p)
{
  if (!p) return;
  memset(p, 0, sizeof(*p));
  p->size = sizeof(*p);
  p->quality = C63_DEFAULT_QUALITY;
  p->keyframe_interval = C63_DEFAULT_KEYFRAME_INTERVAL;
  p->search_range = C63_DEFAULT_SEARCH_RANGE;
  p->backend = C63_BACKEND_CPU;
  p->buffer_ms = C63_DEFAULT_BUFFER_MS;
  p->fps_num = C63_DEFAULT_FPS_NUM;
  p->fps_den = C63_DEFAULT_FPS_DEN;
}

/* The caller's parameters in this library's layout (params.h). */
static int load_params(const c63_enc_params *p, c63_enc_params *full, char *msg, size_t msg_size)
{
  if (!p) {
    set_msg(msg, msg_size, "no parameters (NULL)");
    return C63_ERR_INVALID_ARG;
  }
  c63_enc_params_init(full);
  return c63_params_load(full, sizeof(*full), C63_ENC_PARAMS_SIZE_V1, p, "c63_enc_params", msg,
                         msg_size);
}

static int validate(const c63_enc_params *p, char *msg, size_t msg_size)
{
  if (p->width < C63_MIN_SIZE || p->width > C63_MAX_SIZE || p->height < C63_MIN_SIZE ||
      p->height > C63_MAX_SIZE) {
    set_msg(msg, msg_size, "picture size %dx%d is outside %d..%d", p->width, p->height,
            C63_MIN_SIZE, C63_MAX_SIZE);
    return C63_ERR_INVALID_ARG;
  }
  if (p->quality < C63_MIN_QUALITY || p->quality > C63_MAX_QUALITY) {
    set_msg(msg, msg_size, "quality %d is outside %d..%d", p->quality, C63_MIN_QUALITY,
            C63_MAX_QUALITY);
    return C63_ERR_INVALID_ARG;
  }
  if (p->search_range < C63_MIN_SEARCH_RANGE || p->search_range > C63_MAX_SEARCH_RANGE) {
    set_msg(msg, msg_size, "search range %d is outside %d..%d", p->search_range,
            C63_MIN_SEARCH_RANGE, C63_MAX_SEARCH_RANGE);
    return C63_ERR_INVALID_ARG;
  }
  if (p->keyframe_interval < 0) {
    set_msg(msg, msg_size, "keyframe interval %d is negative", p->keyframe_interval);
    return C63_ERR_INVALID_ARG;
  }
  if (p->backend != C63_BACKEND_CPU && p->backend != C63_BACKEND_CUDA) {
    set_msg(msg, msg_size, "unknown backend %d", (int)p->backend);
    return C63_ERR_INVALID_ARG;
  }
  if (p->threads < 0 || p->threads > C63_MAX_THREADS) {
    set_msg(msg, msg_size, "thread count %d is outside 0..%d", p->threads, C63_MAX_THREADS);
    return C63_ERR_INVALID_ARG;
  }
  if (p->rate_control < C63_RC_QUALITY || p->rate_control > C63_RC_CBR) {
    set_msg(msg, msg_size, "unknown rate control %d (0: quality, 1: abr, 2: cbr)",
            (int)p->rate_control);
    return C63_ERR_INVALID_ARG;
  }
  if (p->rate_control != C63_RC_QUALITY) {
    if (p->bitrate < C63_MIN_BITRATE_KBPS || p->bitrate > C63_MAX_BITRATE_KBPS) {
      set_msg(msg, msg_size, "bitrate %d kbit/s is outside %d..%d", p->bitrate,
              C63_MIN_BITRATE_KBPS, C63_MAX_BITRATE_KBPS);
      return C63_ERR_INVALID_ARG;
    }
    if (p->fps_num <= 0 || p->fps_den <= 0) {
      set_msg(msg, msg_size, "framerate %d/%d: rate control needs a positive one", p->fps_num,
              p->fps_den);
      return C63_ERR_INVALID_ARG;
    }
    if (p->rate_control == C63_RC_CBR &&
        (p->buffer_ms < C63_MIN_BUFFER_MS || p->buffer_ms > C63_MAX_BUFFER_MS)) {
      set_msg(msg, msg_size, "buffer of %d ms is outside %d..%d", p->buffer_ms, C63_MIN_BUFFER_MS,
              C63_MAX_BUFFER_MS);
      return C63_ERR_INVALID_ARG;
    }
  }
  if (p->mode != C63_MODE_EXACT && p->mode != C63_MODE_RD) {
    set_msg(msg, msg_size, "unknown mode %d (0: exact, 1: rd)", (int)p->mode);
    return C63_ERR_INVALID_ARG;
  }
  if (p->device_id < 0) {
    set_msg(msg, msg_size, "device id %d is negative", p->device_id);
    return C63_ERR_INVALID_ARG;
  }
  return C63_OK;
}

int c63_enc_params_validate(const c63_enc_params *p, char *msg, size_t msg_size)
{
  c63_enc_params full;
  int r = load_params(p, &full, msg, msg_size);
  return r ? r : validate(&full, msg, msg_size);
}

int c63_backend_available(c63_backend_kind kind, int device_id, char *msg, size_t msg_size)
{
  const c63_backend_ops *ops = c63_backend_lookup(kind);
  if (ops) return ops->probe(device_id, msg, msg_size);
  if (kind == C63_BACKEND_CUDA)
    set_msg(msg, msg_size, "this build of libc63 has no CUDA backend (nvcc was not found)");
  else
    set_msg(msg, msg_size, "unknown backend %d", (int)kind);
  return 0;
}

int c63_encoder_new(const c63_enc_params *caller_p, c63_encoder **out, char *msg, size_t msg_size)
{
  c63_enc_params full;
  const c63_enc_params *p = &full;
  int r;
  /* The backends write msg with snprintf: NULL is only safe with size 0. */
  if (!msg) msg_size = 0;
  if (!out) {
    set_msg(msg, msg_size, "no place for the encoder (out is NULL)");
    return C63_ERR_INVALID_ARG;
  }
  *out = NULL;
  if ((r = load_params(caller_p, &full, msg, msg_size)) || (r = validate(p, msg, msg_size)))
    return r;
  const c63_backend_ops *ops = c63_backend_lookup(p->backend);
  if (ops && !(ops->modes & (1u << p->mode))) {
    char name[16];
    size_t n = 0;
    for (; ops->name[n] && n + 1 < sizeof name; n++) /* "cuda" as prose writes it */
      name[n] = (char)toupper((unsigned char)ops->name[n]);
    name[n] = '\0';
    set_msg(msg, msg_size,
            "the %s mode is not available on the %s backend yet: use a backend that has it "
            "(rd: the CPU), or the exact mode",
            p->mode == C63_MODE_RD ? "rd" : "exact", name);
    return C63_ERR_UNSUPPORTED;
  }
  if (!c63_backend_available(p->backend, p->device_id, msg, msg_size))
    return p->backend == C63_BACKEND_CUDA ? C63_ERR_NO_DEVICE : C63_ERR_UNSUPPORTED;

  c63_encoder *enc = calloc(1, sizeof(*enc));
  if (!enc) {
    set_msg(msg, msg_size, "out of memory");
    return C63_ERR_NOMEM;
  }
  enc->p = *p;
  c63_geometry_init(&enc->g, p->width, p->height);
  enc->ops = c63_backend_lookup(p->backend);
  enc->quality = p->quality;
  c63_make_quant_tables(enc->quality, enc->quant);
  c63_ratectl_init(&enc->rc, p);
  const int threads =
      p->threads ? p->threads : c63_threadpool_default_size(enc->ops->default_threads);
  enc->pool = c63_threadpool_new(threads);
  if (!enc->pool) {
    set_msg(msg, msg_size, "out of memory creating %d encoder threads", threads);
    c63_encoder_free(enc);
    return C63_ERR_NOMEM;
  }
  const c63_device dev = {p->device_id, p->cuda_context};
  if ((r = enc->ops->create(&enc->g, &dev, enc->pool, &enc->be, msg, msg_size))) {
    c63_encoder_free(enc);
    return r;
  }
  const int in_flight = enc->ops->in_flight(enc->be);
  enc->depth = in_flight < MAX_IN_FLIGHT ? in_flight : MAX_IN_FLIGHT;
  /* CBR judges each frame's coded size before the next is sent, so that an
   * overflowing frame can be coded again (submit_frame). */
  if (p->rate_control == C63_RC_CBR) enc->depth = 1;
  *out = enc;
  return C63_OK;
}

void c63_encoder_free(c63_encoder *enc)
{
  if (!enc) return;
  if (enc->be) enc->ops->destroy(enc->be);
  c63_threadpool_free(enc->pool);
  c63_bytebuf_free(&enc->headers);
  free(enc);
}

/* The quantiser tables of the pictures sent from now on. */
static void use_quality(c63_encoder *enc, int quality)
{
  if (quality == enc->quality) return;
  enc->quality = quality;
  c63_make_quant_tables(quality, enc->quant);
}

int c63_encoder_set_quality(c63_encoder *enc, int quality)
{
  if (!enc) return C63_ERR_INVALID_ARG;
  if (quality < C63_MIN_QUALITY || quality > C63_MAX_QUALITY) {
    set_msg(enc->err, sizeof(enc->err), "quality %d is outside %d..%d", quality, C63_MIN_QUALITY,
            C63_MAX_QUALITY);
    return C63_ERR_INVALID_ARG;
  }
  use_quality(enc, quality);
  c63_ratectl_set_quality(&enc->rc, quality); /* with rate control: where it goes on from */
  return C63_OK;
}

int c63_encoder_set_bitrate(c63_encoder *enc, int bitrate)
{
  if (!enc) return C63_ERR_INVALID_ARG;
  if (enc->p.rate_control == C63_RC_QUALITY) {
    set_msg(enc->err, sizeof(enc->err), "no bitrate in constant-quality mode");
    return C63_ERR_INVALID_ARG;
  }
  c63_enc_params p = enc->p;
  p.bitrate = bitrate;
  int r = validate(&p, enc->err, sizeof(enc->err));
  /* the same bitrate again (an element re-applies all its settings when
   * one changes) keeps the balance the controller has built up */
  if (r != C63_OK || bitrate == enc->p.bitrate) return r;
  enc->p = p;
  c63_ratectl_set_bitrate(&enc->rc, &p);
  return C63_OK;
}

int c63_encoder_set_buffer(c63_encoder *enc, int buffer_ms)
{
  if (!enc) return C63_ERR_INVALID_ARG;
  if (enc->p.rate_control != C63_RC_CBR) {
    set_msg(enc->err, sizeof(enc->err), "a buffer is only for constant bitrate (cbr)");
    return C63_ERR_INVALID_ARG;
  }
  c63_enc_params p = enc->p;
  p.buffer_ms = buffer_ms;
  int r = validate(&p, enc->err, sizeof(enc->err));
  if (r != C63_OK || buffer_ms == enc->p.buffer_ms) return r;
  enc->p = p;
  c63_ratectl_set_buffer(&enc->rc, buffer_ms);
  return C63_OK;
}

int c63_encoder_set_keyframe_interval(c63_encoder *enc, int keyframe_interval)
{
  if (!enc) return C63_ERR_INVALID_ARG;
  c63_enc_params p = enc->p;
  p.keyframe_interval = keyframe_interval;
  int r = validate(&p, enc->err, sizeof(enc->err));
  if (r == C63_OK) enc->p = p;
  return r;
}

int c63_encoder_set_search_range(c63_encoder *enc, int search_range)
{
  if (!enc) return C63_ERR_INVALID_ARG;
  c63_enc_params p = enc->p;
  p.search_range = search_range;
  int r = validate(&p, enc->err, sizeof(enc->err));
  if (r == C63_OK) enc->p = p;
  return r;
}

/* Submit q's job. In CBR collect it at once, and while it overflows the
 * buffer code it again at the lower quality rate control gives (a delta
 * frame from the same reference, which the backend rewinds to). */
static int submit_frame(c63_encoder *enc, queued_frame *q)
{
  for (;;) {
    int r = enc->ops->submit(enc->be, &q->job, enc->err, sizeof(enc->err));
    if (r || enc->p.rate_control != C63_RC_CBR) return r;
    if ((r = enc->ops->collect(enc->be, &q->job, enc->err, sizeof(enc->err)))) return r;
    q->collected = 1;
    const double bits =
        8.0 * (double)(C63_FRAME_HEADER_BYTES + q->job.payload_size + C63_FRAME_TRAILER_BYTES);
    /* a keyframe needs no reference: coding it again replaces it */
    const int can_redo = q->job.keyframe || enc->ops->rewind;
    const int lower = c63_ratectl_retry(&enc->rc, &q->rc, bits, can_redo);
    if (!lower) return C63_OK;
    if (enc->ops->rewind) enc->ops->rewind(enc->be);
    use_quality(enc, lower);
    memcpy(q->job.quant, enc->quant, sizeof(enc->quant));
  }
}

static int send_picture(c63_encoder *enc, const c63_picture *pic, int borrowed)
{
  if (!enc) return C63_ERR_INVALID_ARG;
  if (!pic) {
    enc->draining = 1;
    return C63_OK;
  }
  if (enc->draining || enc->count == enc->depth) return C63_ERR_AGAIN;
  if (pic->format != C63_FORMAT_I420 && pic->format != C63_FORMAT_NV12) {
    set_msg(enc->err, sizeof(enc->err), "unknown picture format %d", (int)pic->format);
    return C63_ERR_INVALID_ARG;
  }
  const int nv12 = pic->format == C63_FORMAT_NV12;
  for (int c = 0; c < (nv12 ? 2 : 3); c++) {
    /* NV12's second plane holds both chroma planes' bytes in each row */
    const int row = nv12 && c ? 2 * enc->g.pic_w[1] : enc->g.pic_w[c];
    if (!pic->data[c] || pic->stride[c] < row) {
      set_msg(enc->err, sizeof(enc->err), "plane %d: %s (stride %d, row of %d bytes)", c,
              pic->data[c] ? "stride smaller than a row" : "no data", pic->stride[c], row);
      return C63_ERR_INVALID_ARG;
    }
  }

  /* Keyframe on the first frame, every keyframe_interval frames counted
   * from the last keyframe, and on request (format section 3). */
  const int kfi = enc->p.keyframe_interval;
  /* '>=' rather than the reference's '==': the same frames for a fixed
   * interval, and a smaller interval set mid-stream still takes effect. */
  int keyframe = enc->frames_sent == 0 || pic->force_keyframe ||
                 (kfi > 0 && enc->frames_since_keyframe >= kfi);

  queued_frame *q = &enc->queue[(enc->head + enc->count) % MAX_IN_FLIGHT];
  memset(q, 0, sizeof(*q));
  c63_ratectl_choose(&enc->rc, keyframe, &q->rc);
  if (enc->p.rate_control != C63_RC_QUALITY) use_quality(enc, q->rc.quality);
  q->rc.quality = enc->quality;
  for (int c = 0; c < 3; c++) {
    q->job.src[c] = nv12 && c == 2 ? NULL : pic->data[c];
    q->job.src_stride[c] = nv12 && c == 2 ? 0 : pic->stride[c];
  }
  q->job.nv12 = nv12;
  q->job.borrowed = borrowed;
  q->job.keyframe = keyframe;
  q->job.search_range = enc->p.search_range;
  q->job.mode = enc->p.mode;
  memcpy(q->job.quant, enc->quant, sizeof(enc->quant));
  q->user = pic->user;
  q->number = enc->frames_sent;

  int r = submit_frame(enc, q);
  if (r) return r;
  enc->count++;
  enc->frames_sent++;
  if (keyframe) enc->frames_since_keyframe = 0;
  enc->frames_since_keyframe++;
  return C63_OK;
}

int c63_encoder_send_picture(c63_encoder *enc, const c63_picture *pic)
{
  return send_picture(enc, pic, 0);
}

int c63_encoder_send_picture_borrowed(c63_encoder *enc, const c63_picture *pic)
{
  return send_picture(enc, pic, 1);
}

int c63_encoder_receive_packet(c63_encoder *enc, c63_packet *pkt)
{
  if (!enc) return C63_ERR_INVALID_ARG;
  /* Checked before the queue moves, so no packet is lost to a bad call. */
  if (!pkt) {
    set_msg(enc->err, sizeof(enc->err), "no packet to fill (pkt is NULL)");
    return C63_ERR_INVALID_ARG;
  }
  if (enc->count == 0) {
    if (!enc->draining) return C63_ERR_AGAIN;
    enc->draining = 0;
    return C63_ERR_EOF;
  }
  if (enc->count < enc->depth && !enc->draining) return C63_ERR_AGAIN;

  queued_frame *q = &enc->queue[enc->head];
  enc->head = (enc->head + 1) % MAX_IN_FLIGHT;
  enc->count--;
  int r = q->collected ? C63_OK : enc->ops->collect(enc->be, &q->job, enc->err, sizeof(enc->err));
  if (r) return r;

  /* The backend left room around the payload: complete the frame there. */
  c63_bytebuf *h = &enc->headers;
  h->size = 0;
  c63_write_frame_headers(h, enc->g.width, enc->g.height, q->job.keyframe,
                          (const uint8_t(*)[64])q->job.quant);
  if (h->failed || h->size != C63_FRAME_HEADER_BYTES) {
    set_msg(enc->err, sizeof(enc->err), "out of memory writing frame headers");
    h->failed = 0;
    return C63_ERR_NOMEM;
  }
  uint8_t *frame = q->job.payload - C63_FRAME_HEADER_BYTES;
  memcpy(frame, h->data, C63_FRAME_HEADER_BYTES);
  c63_put_eoi(q->job.payload + q->job.payload_size);
  pkt->data = frame;
  pkt->size = C63_FRAME_HEADER_BYTES + q->job.payload_size + C63_FRAME_TRAILER_BYTES;
  pkt->keyframe = q->job.keyframe;
  pkt->user = q->user;
  pkt->frame_number = q->number;
  enc->last_quality = q->rc.quality;
  c63_ratectl_update(&enc->rc, &q->rc, 8.0 * (double)pkt->size);
  return C63_OK;
}

int c63_encoder_last_quality(const c63_encoder *enc)
{
  if (!enc) return C63_ERR_INVALID_ARG;
  return enc->last_quality;
}

int c63_encoder_target_reach(const c63_encoder *enc, int *reach, double *kbps)
{
  if (!enc || !reach) return C63_ERR_INVALID_ARG;
  *reach = c63_ratectl_reach(&enc->rc, kbps);
  return C63_OK;
}

int c63_encoder_rate_status(const c63_encoder *enc, c63_rate_status *st)
{
  if (!enc || !st) return C63_ERR_INVALID_ARG;
  memset(st, 0, sizeof(*st));
  if (enc->p.rate_control == C63_RC_QUALITY) return C63_OK;
  st->bitrate = enc->rc.bitrate;
  st->buffer_ms = enc->p.rate_control == C63_RC_CBR ? enc->rc.buffer_ms : 0;
  st->reach = c63_ratectl_reach(&enc->rc, &st->reach_kbps);
  st->recoded = enc->rc.recoded;
  st->overflows = enc->rc.overflows;
  return C63_OK;
}

int c63_encoder_delay(const c63_encoder *enc)
{
  if (!enc) return C63_ERR_INVALID_ARG;
  return enc->depth - 1;
}

const char *c63_encoder_error(const c63_encoder *enc)
{
  if (!enc) return "no encoder (NULL)";
  return enc->err;
}

c63_backend *c63_encoder_backend(c63_encoder *enc)
{
  return enc->be;
}

const char *c63_encoder_backend_name(const c63_encoder *enc)
{
  if (!enc) return "none";
  return enc->ops->name;
}

int c63_encoder_set_stage_timing(c63_encoder *enc, int on)
{
  if (!enc) return C63_ERR_INVALID_ARG;
  if (!enc->ops->set_timing) return C63_ERR_UNSUPPORTED;
  enc->ops->set_timing(enc->be, on);
  return C63_OK;
}

int c63_encoder_get_stage_stats(c63_encoder *enc, c63_stage_stats *out, int reset)
{
  if (!enc || !out) return C63_ERR_INVALID_ARG;
  if (!enc->ops->get_stats) return C63_ERR_UNSUPPORTED;
  enc->ops->get_stats(enc->be, out, reset);
  return C63_OK;
}
