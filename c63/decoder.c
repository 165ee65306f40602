/* The decoder object: header parsing and entropy decoding here, and
 * reconstruction through a decoding backend (decode_backend.h): the CPU
 * one, or the CUDA one with the reference resident on the GPU. Both give
 * the same bytes.
 *
 * Frames sent are parsed and their buffers sized on the caller's thread
 * (reading a frame's headers and finding its end is quick), then
 * entropy-decoded each by a background task of its own in the thread pool
 * (that work does not depend on pixels), unless the backend entropy-decodes
 * (the CUDA one, in batches on the GPU): then the frame's bytes go to the
 * backend as they are. Receiving takes frames in order and hands them to
 * the backend, as many ahead as the backend takes (the GPU works on later
 * frames while the caller uses this one).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c63-config.h"
#include "c63/c63.h"
#include "decode_backend.h"
#include "dsp.h"
#include "entropy.h"
#include "geometry.h"
#include "sparse.h"
#include "threadpool.h"

#include "params.h"

/* Frames in flight at most: one being entropy-decoded per thread (up to
 * 16) and the backend's (MAX_THREAD_DEPTH), or the backend's alone where
 * it entropy-decodes (a GPU backend's batches in flight:
 * c63_decode_backend_info.depth, up to MAX_QUEUE, the most the CUDA
 * backend's tuning variables give). The queue holds that many. */
#define MAX_THREAD_DEPTH 20
#define MAX_QUEUE 512

enum { SLOT_SENT, SLOT_DECODED, SLOT_SUBMITTED, SLOT_FAILED };

/* One frame on its way: its bytes (copied, or borrowed from the caller),
 * then its header, coefficients and vectors, or the failure. */
typedef struct dec_slot {
  const uint8_t *data;
  size_t size;
  c63_bytebuf copy;
  int64_t user;
  int reset_before;
  int pinned;             /* coefficients in picture memory (for a GPU backend) */
  int entropy_on_backend; /* no coefficients here: the backend decodes the bytes */
  c63_task task;
  int queued; /* the task was submitted and not yet waited for */
  int stage, status;
  char err[256];
  c63_frame_header hdr;
  c63_geometry g;
  c63_sparse_frame coeffs;
  uint8_t quant_before[3][64]; /* the tables in effect before its DQT */
  c63_decode_job job;
} dec_slot;

struct c63_decoder {
  c63_geometry g;
  int allocated; /* the backend holds g */
  int have_ref;  /* the last frame submitted can be predicted from */
  /* The last DQT's tables: a frame without DQT keeps them, as in the
   * reference (whose tables start all zero). */
  uint8_t quant[3][64];
  /* Frames in flight, head first: a ring of depth slots. */
  dec_slot *slots;
  int head, count, depth;
  int submitted; /* slots from head on that the backend has */
  /* A frame the backend failed at collect, with no keyframe collected
   * since: the delta frames after it that the backend already had were
   * reconstructed from a picture that does not exist. */
  int broken;
  int draining;
  c63_memory output;    /* c63_decoder_set_output, for frames submitted from now */
  int reset_next;       /* c63_decoder_reset: the next frame sent starts afresh */
  c63_threadpool *pool; /* shared with the backend */
  const c63_decode_backend_ops *ops;
  c63_decode_backend_info info;
  c63_decode_backend *be;
  char err[256];
};

void c63_dec_params_init(c63_dec_params *p)
{
  if (!p) return;
  memset(p, 0, sizeof(*p));
  p->size = sizeof(*p);
  p->backend = C63_BACKEND_CPU;
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

int c63_decoder_new(const c63_dec_params *caller_p, c63_decoder **out, char *msg, size_t msg_size)
{
  c63_dec_params full;
  const c63_dec_params *p = &full;
  if (!out) return C63_ERR_INVALID_ARG;
  *out = NULL;
  c63_dec_params_init(&full);
  if (caller_p && c63_params_load(&full, sizeof(full), C63_DEC_PARAMS_SIZE_V1, caller_p,
                                  "c63_dec_params", msg, msg_size))
    return C63_ERR_INVALID_ARG;
  if (p->threads < 0 || p->threads > C63_MAX_THREADS || p->device_id < 0) {
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
  const int threads = p->threads ? p->threads : c63_threadpool_default_size(0);
  dec->ops = c63_decode_backend_lookup(p->backend);
  dec->pool = c63_threadpool_new(threads);
  if (!dec->pool) {
    free(dec);
    if (msg && msg_size) snprintf(msg, msg_size, "out of memory creating %d threads", threads);
    return C63_ERR_NOMEM;
  }
  const c63_device dev = {p->device_id, p->cuda_context};
  int r = dec->ops->create(&dev, dec->pool, &dec->be, &dec->info, msg, msg_size);
  if (r) {
    c63_threadpool_free(dec->pool);
    free(dec);
    return r;
  }
  /* Enough frames to keep every entropy task and the backend busy. */
  const int cap = dec->info.entropy ? MAX_QUEUE : MAX_THREAD_DEPTH;
  dec->depth = (dec->info.entropy ? 0 : threads) + dec->info.depth;
  if (dec->depth > cap) dec->depth = cap;
  dec->slots = calloc((size_t)dec->depth, sizeof(*dec->slots));
  if (!dec->slots) {
    c63_decoder_free(dec);
    if (msg && msg_size) snprintf(msg, msg_size, "out of memory for %d frames", dec->depth);
    return C63_ERR_NOMEM;
  }
  *out = dec;
  return C63_OK;
}

void c63_decoder_free(c63_decoder *dec)
{
  if (!dec) return;
  c63_decoder_flush(dec);
  if (dec->be) dec->ops->destroy(dec->be);
  for (int i = 0; dec->slots && i < dec->depth; i++) {
    c63_sparse_frame_free(&dec->slots[i].coeffs);
    c63_bytebuf_free(&dec->slots[i].copy);
  }
  free(dec->slots);
  c63_threadpool_free(dec->pool);
  free(dec);
}

void c63_decoder_reset(c63_decoder *dec)
{
  if (!dec) return;
  /* Frames already in flight keep their reference: the reset takes effect
   * with the next frame sent (submit_slot). */
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

/* Parse a slot's header, which scans the whole frame for the data's end:
 * SLOT_DECODED (for the backend to entropy-decode) or SLOT_FAILED. It
 * touches nothing else, so it runs on a pool thread where it can. */
static void parse_slot(dec_slot *sl)
{
  c63_frame_header *hdr = &sl->hdr;
  sl->err[0] = '\0';
  sl->stage = SLOT_FAILED;
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
  sl->stage = SLOT_DECODED;
}

static void parse_task(void *arg)
{
  parse_slot(arg);
}

/* Parse a slot's header and size its coefficient buffers, on the caller's
 * thread: for a GPU backend those are page-locked, and allocating or
 * freeing them is a CUDA call, which stays with the thread that drives the
 * backend (from a pool thread it would run beside the caller's launches
 * and synchronisations, which deadlocks compute-sanitizer's racecheck). */
static void prepare_slot(dec_slot *sl)
{
  const c63_frame_header *hdr = &sl->hdr;
  parse_slot(sl);
  if (sl->stage == SLOT_FAILED || sl->entropy_on_backend) return;
  sl->stage = SLOT_FAILED;
  sl->status =
      c63_sparse_frame_reserve(&sl->coeffs, c63_frame_blocks(&sl->g),
                               c63_sparse_entries_bound(&sl->g, hdr->data_size), sl->pinned);
  if (sl->status) {
    snprintf(sl->err, sizeof(sl->err), "out of memory for a %dx%d picture", hdr->width,
             hdr->height);
    return;
  }
  sl->stage = SLOT_SENT;
}

/* Entropy-decode a prepared slot: it touches nothing else, so slots of
 * several frames run at once. */
static void entropy_stage(dec_slot *sl)
{
  const c63_frame_header *hdr = &sl->hdr;
  sl->stage = SLOT_FAILED;
  sl->status = c63_entropy_decode(sl->data + hdr->data_offset, hdr->data_size, &sl->g,
                                  hdr->keyframe, &sl->coeffs, sl->err, sizeof(sl->err));
  if (!sl->status) sl->stage = SLOT_DECODED;
}

static void entropy_task(void *arg)
{
  entropy_stage(arg);
}

/* Wait for a slot's background task: its entropy decoding, or where the
 * backend entropy-decodes, the parse of its header. */
static void wait_entropy(c63_decoder *dec, dec_slot *sl)
{
  if (!sl->queued) return;
  c63_task_wait(dec->pool, &sl->task);
  sl->queued = 0;
}

/* A failed frame: the reference is no longer trustworthy, so decoding
 * resumes at the next keyframe. */
static int slot_fail(c63_decoder *dec, dec_slot *sl, int status)
{
  sl->stage = SLOT_FAILED;
  sl->status = status;
  dec->have_ref = 0;
  return status;
}

static const char no_keyframe_msg[] = "delta frame without a preceding keyframe";

/* Where the backend entropy-decodes: a frame that changes the decoder's
 * state before it reaches the backend (a size change) or that fails before
 * it (no reference) is entropy-decoded here first, so that a frame whose
 * data does not decode fails with that error and changes nothing, as where
 * entropy decoding comes first. Both are rare (a stream's first frame). */
static int entropy_fails_first(dec_slot *sl)
{
  if (!sl->entropy_on_backend) return 0;
  sl->status = c63_sparse_frame_reserve(&sl->coeffs, c63_frame_blocks(&sl->g),
                                        c63_sparse_entries_bound(&sl->g, sl->hdr.data_size), 0);
  if (sl->status) {
    snprintf(sl->err, sizeof(sl->err), "out of memory for a %dx%d picture", sl->hdr.width,
             sl->hdr.height);
    return 1;
  }
  entropy_stage(sl);
  return sl->stage == SLOT_FAILED;
}

/* Hand a decoded frame to the backend, in order (the reference, the
 * quantiser tables and the picture size carry over from frame to frame).
 * A picture size change needs the backend idle: returns C63_ERR_AGAIN
 * while frames before it are still submitted. */
static int submit_slot(c63_decoder *dec, dec_slot *sl)
{
  const c63_frame_header *hdr = &sl->hdr;
  if (sl->stage == SLOT_FAILED) {
    dec->have_ref = 0;
    return sl->status;
  }
  int resized = !dec->allocated || hdr->width != dec->g.width || hdr->height != dec->g.height;
  if (resized && hdr->keyframe && dec->submitted) return C63_ERR_AGAIN;
  if (sl->reset_before) dec->have_ref = 0;
  if ((resized || (!hdr->keyframe && !dec->have_ref)) && entropy_fails_first(sl)) {
    dec->have_ref = 0;
    return sl->status;
  }
  memcpy(sl->quant_before, dec->quant, sizeof(dec->quant));
  if (hdr->has_quant) memcpy(dec->quant, hdr->quant, sizeof(dec->quant));
  if (!hdr->keyframe && (resized || !dec->have_ref)) {
    snprintf(sl->err, sizeof(sl->err), "%s",
             resized ? "delta frame changes the picture size without a keyframe" : no_keyframe_msg);
    return slot_fail(dec, sl, C63_ERR_NO_REFERENCE);
  }
  int r;
  if (resized) {
    dec->allocated = 0;
    if ((r = dec->ops->resize(dec->be, &sl->g, sl->err, sizeof(sl->err))))
      return slot_fail(dec, sl, r);
    dec->g = sl->g;
    dec->allocated = 1;
  }
  c63_decode_job *job = &sl->job;
  memset(job, 0, sizeof(*job));
  job->keyframe = hdr->keyframe;
  job->device_out = dec->output == C63_MEMORY_CUDA;
  memcpy(job->quant, dec->quant, sizeof(job->quant));
  if (sl->entropy_on_backend) {
    job->data = sl->data + hdr->data_offset;
    job->data_size = hdr->data_size;
    job->g = &sl->g;
    job->entries_bound = c63_sparse_entries_bound(&sl->g, hdr->data_size);
  } else {
    job->coeffs = &sl->coeffs;
  }
  if ((r = dec->ops->submit(dec->be, job, sl->err, sizeof(sl->err)))) return slot_fail(dec, sl, r);
  sl->stage = SLOT_SUBMITTED;
  dec->have_ref = 1;
  dec->submitted++;
  return C63_OK;
}

/* Submit the frames after the head whose entropy decoding is done, as far
 * as the backend takes them: it then works on them while the caller uses
 * the head's picture. Never waits. */
static void submit_ahead(c63_decoder *dec)
{
  for (int k = dec->submitted; k < dec->count && dec->submitted < dec->info.depth; k++) {
    dec_slot *sl = &dec->slots[(dec->head + k) % dec->depth];
    if (sl->queued) {
      if (!c63_task_done(dec->pool, &sl->task)) return;
      wait_entropy(dec, sl);
    }
    /* A failure is reported when the frame is received; the frames after
     * it wait until then. */
    if (sl->stage == SLOT_FAILED || submit_slot(dec, sl) != C63_OK) return;
  }
}

/* The head slot failed in the backend: as a frame whose entropy decoding
 * fails before submission, it sets no quantiser tables. The frames after
 * it that the backend has (it reconstructs none of them before this
 * returns) and those still to come take the tables before it, up to the
 * next frame with tables of its own. */
static void undo_tables(c63_decoder *dec, const dec_slot *failed)
{
  if (!failed->hdr.has_quant) return;
  for (int k = 1; k <= dec->submitted; k++) {
    dec_slot *sl = &dec->slots[(dec->head + k) % dec->depth];
    memcpy(sl->quant_before, failed->quant_before, sizeof(sl->quant_before));
    if (sl->hdr.has_quant) return;
    memcpy(sl->job.quant, failed->quant_before, sizeof(sl->job.quant));
  }
  memcpy(dec->quant, failed->quant_before, sizeof(dec->quant));
}

/* Collect the head slot from the backend. A failure found there (a GPU
 * backend's entropy decoding, or its reconstruction) comes after later
 * frames were submitted: the delta frames among them fail as they would
 * have at submission, up to the next keyframe, and the reference is
 * dropped only where nothing after the failure was submitted. */
static int collect_slot(c63_decoder *dec, dec_slot *sl)
{
  if (sl->hdr.keyframe) dec->broken = 0;
  int r = dec->ops->collect(dec->be, &sl->job, sl->err, sizeof(sl->err));
  dec->submitted--;
  if (r) {
    undo_tables(dec, sl);
  } else if (dec->broken) {
    snprintf(sl->err, sizeof(sl->err), "%s", no_keyframe_msg);
    r = C63_ERR_NO_REFERENCE;
  }
  if (r) {
    sl->stage = SLOT_FAILED;
    sl->status = r;
    dec->broken = 1;
    if (!dec->submitted) dec->have_ref = 0;
  }
  return r;
}

/* Draining with every frame held submitted: nothing more is submitted
 * before all are collected, so the backend may start on all of them now (a
 * GPU backend's last, partial batch) rather than as they are collected. */
static void start_drained(c63_decoder *dec)
{
  if (dec->draining && dec->submitted == dec->count && dec->ops->start) dec->ops->start(dec->be);
}

/* Take the head slot's picture (submitting it first if needed). */
static int finish_head(c63_decoder *dec, c63_decoded_picture *out)
{
  dec_slot *sl = &dec->slots[dec->head];
  int r = C63_OK;
  wait_entropy(dec, sl);
  if (sl->stage != SLOT_SUBMITTED) {
    /* Nothing is submitted ahead of a slot that was not: the backend is
     * idle, so a size change can go through. */
    r = submit_slot(dec, sl);
  }
  if (sl->stage == SLOT_SUBMITTED) {
    submit_ahead(dec);
    start_drained(dec);
    r = collect_slot(dec, sl);
  }
  memcpy(dec->err, sl->err, sizeof(dec->err));
  if (out) {
    memset(out, 0, sizeof(*out));
    out->user = sl->user;
    if (r == C63_OK) {
      for (int c = 0; c < 3; c++) {
        out->data[c] = sl->job.out[c];
        out->stride[c] = sl->job.out_stride[c];
      }
      out->memory = sl->job.device_out ? C63_MEMORY_CUDA : C63_MEMORY_HOST;
      out->width = sl->hdr.width;
      out->height = sl->hdr.height;
      out->keyframe = sl->hdr.keyframe;
    }
  }
  return r;
}

/* Queue one frame: its bytes copied into the slot, or borrowed when the
 * caller keeps them until the frame is received (decode, and
 * c63_decoder_send_packet_borrowed). */
static int send_frame(c63_decoder *dec, const uint8_t *data, size_t size, int64_t user, int borrow)
{
  dec_slot *sl = &dec->slots[(dec->head + dec->count) % dec->depth];
  if (borrow) {
    sl->data = data;
  } else {
    sl->copy.size = 0;
    c63_bytebuf_put(&sl->copy, data, size);
    if (sl->copy.failed) {
      sl->copy.failed = 0;
      snprintf(dec->err, sizeof(dec->err), "out of memory for a %zu-byte frame", size);
      return C63_ERR_NOMEM;
    }
    sl->data = sl->copy.data;
  }
  sl->size = size;
  sl->user = user;
  sl->pinned = dec->ops->pinned_input;
  sl->entropy_on_backend = dec->info.entropy;
  sl->reset_before = dec->reset_next;
  dec->reset_next = 0;
  /* a frame that fails here is reported when it is received, in order */
  void (*task)(void *) = NULL;
  if (sl->entropy_on_backend && c63_threadpool_size(dec->pool) > 1) {
    /* the scan of the frame off the caller's thread, which then only
     * queues frames and takes pictures; done long before the frame is
     * submitted (submit_ahead waits for it). A pool without workers would
     * run it only when waited for, and hold back submit_ahead. */
    sl->stage = SLOT_SENT;
    task = parse_task;
  } else {
    prepare_slot(sl);
    if (sl->stage == SLOT_SENT) task = entropy_task;
  }
  if (task) {
    sl->queued = 1;
    c63_threadpool_submit(dec->pool, &sl->task, task, sl);
  }
  dec->count++;
  return C63_OK;
}

static int send_packet(c63_decoder *dec, const uint8_t *data, size_t size, int64_t user, int borrow)
{
  if (!dec) return C63_ERR_INVALID_ARG;
  if (!data) {
    dec->draining = 1;
    return C63_OK;
  }
  if (dec->draining || dec->count == dec->depth) return C63_ERR_AGAIN;
  return send_frame(dec, data, size, user, borrow);
}

int c63_decoder_send_packet(c63_decoder *dec, const uint8_t *data, size_t size, int64_t user)
{
  return send_packet(dec, data, size, user, 0);
}

int c63_decoder_send_packet_borrowed(c63_decoder *dec, const uint8_t *data, size_t size,
                                     int64_t user)
{
  return send_packet(dec, data, size, user, 1);
}

int c63_decoder_decode(c63_decoder *dec, const uint8_t *data, size_t size, c63_decoded_picture *out)
{
  c63_decoded_picture pic;
  if (!dec) return C63_ERR_INVALID_ARG;
  dec->err[0] = '\0';
  if (!data) {
    snprintf(dec->err, sizeof(dec->err), "no data");
    return C63_ERR_INVALID_ARG;
  }
  if (dec->count || dec->draining) {
    snprintf(dec->err, sizeof(dec->err), "frames sent with c63_decoder_send_packet are in flight");
    return C63_ERR_AGAIN;
  }
  int r = send_frame(dec, data, size, 0, 1);
  if (r) return r;
  /* Drain: the frame comes out at once, and the decoder is left as before. */
  dec->draining = 1;
  r = c63_decoder_receive_picture(dec, out ? out : &pic);
  dec->draining = 0;
  return r;
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
  dec->err[0] = '\0';
  int r = finish_head(dec, pic);
  dec->head = (dec->head + 1) % dec->depth;
  dec->count--;
  return r;
}

void c63_decoder_flush(c63_decoder *dec)
{
  if (!dec) return;
  /* Background tasks use the slots: let them finish; drop or collect what
   * the backend has, so it is idle. */
  if (dec->submitted && dec->ops->drop) dec->ops->drop(dec->be);
  for (int k = 0; k < dec->count; k++) {
    dec_slot *sl = &dec->slots[(dec->head + k) % dec->depth];
    wait_entropy(dec, sl);
    if (sl->stage == SLOT_SUBMITTED && !dec->ops->drop)
      dec->ops->collect(dec->be, &sl->job, sl->err, sizeof(sl->err));
  }
  dec->head = dec->count = dec->submitted = 0;
  dec->broken = 0;
  dec->draining = 0;
  dec->have_ref = 0;
  dec->reset_next = 0;
}

int c63_decoder_set_output(c63_decoder *dec, c63_memory memory)
{
  if (!dec || (memory != C63_MEMORY_HOST && memory != C63_MEMORY_CUDA)) return C63_ERR_INVALID_ARG;
  if (memory == C63_MEMORY_CUDA && !dec->ops->device_output) {
    snprintf(dec->err, sizeof(dec->err), "pictures in device memory need the CUDA backend");
    return C63_ERR_UNSUPPORTED;
  }
  dec->output = memory;
  return C63_OK;
}

/* Checks common to both copies; the plane sizes into w and h. */
static int check_copy(c63_decoder *dec, const c63_decoded_picture *pic, uint8_t *const dst[3],
                      const int dst_stride[3], c63_memory dst_memory, int w[3], int h[3])
{
  if (!dec) return C63_ERR_INVALID_ARG;
  if (dst_memory == C63_MEMORY_CUDA && !dec->ops->device_output) {
    snprintf(dec->err, sizeof(dec->err), "device memory needs the CUDA backend");
    return C63_ERR_UNSUPPORTED;
  }
  if (!pic || !dst || !dst_stride || !pic->data[0]) {
    snprintf(dec->err, sizeof(dec->err), "no picture or destination");
    return C63_ERR_INVALID_ARG;
  }
  for (int c = 0; c < 3; c++) {
    w[c] = c ? c63_chroma_size(pic->width) : pic->width;
    h[c] = c ? c63_chroma_size(pic->height) : pic->height;
    if (!dst[c] || dst_stride[c] < w[c]) {
      snprintf(dec->err, sizeof(dec->err), "plane %d: no destination, or a stride under %d", c,
               w[c]);
      return C63_ERR_INVALID_ARG;
    }
  }
  dec->err[0] = '\0';
  return C63_OK;
}

static void copy_host_planes(const c63_decoded_picture *pic, uint8_t *const dst[3],
                             const int dst_stride[3], const int w[3], const int h[3])
{
  for (int c = 0; c < 3; c++)
    for (int y = 0; y < h[c]; y++)
      memcpy(dst[c] + (size_t)y * dst_stride[c], pic->data[c] + (size_t)y * pic->stride[c],
             (size_t)w[c]);
}

int c63_decoder_copy_picture(c63_decoder *dec, const c63_decoded_picture *pic,
                             uint8_t *const dst[3], const int dst_stride[3], c63_memory dst_memory)
{
  int w[3], h[3];
  int r = check_copy(dec, pic, dst, dst_stride, dst_memory, w, h);
  if (r != C63_OK) return r;
  if (pic->memory == C63_MEMORY_HOST && dst_memory == C63_MEMORY_HOST) {
    copy_host_planes(pic, dst, dst_stride, w, h);
    return C63_OK;
  }
  return dec->ops->copy(dec->be, pic->data, pic->stride, dst, dst_stride, w, h, dec->err,
                        sizeof(dec->err));
}

int c63_decoder_copy_picture_async(c63_decoder *dec, const c63_decoded_picture *pic,
                                   uint8_t *const dst[3], const int dst_stride[3],
                                   c63_memory dst_memory, uint64_t *ticket)
{
  int w[3], h[3];
  if (!ticket) return C63_ERR_INVALID_ARG;
  *ticket = 0;
  int r = check_copy(dec, pic, dst, dst_stride, dst_memory, w, h);
  if (r != C63_OK) return r;
  if (pic->memory == C63_MEMORY_HOST && dst_memory == C63_MEMORY_HOST) {
    copy_host_planes(pic, dst, dst_stride, w, h);
    return C63_OK;
  }
  if (!dec->ops->copy_async)
    return dec->ops->copy(dec->be, pic->data, pic->stride, dst, dst_stride, w, h, dec->err,
                          sizeof(dec->err));
  return dec->ops->copy_async(dec->be, pic->data, pic->stride, dst, dst_stride, w, h, ticket,
                              dec->err, sizeof(dec->err));
}

int c63_decoder_copy_wait(c63_decoder *dec, uint64_t ticket)
{
  if (!dec) return C63_ERR_INVALID_ARG;
  if (ticket == 0 || !dec->ops->copy_wait) return C63_OK;
  return dec->ops->copy_wait(dec->be, ticket);
}

int c63_decoder_delay(const c63_decoder *dec)
{
  if (!dec) return C63_ERR_INVALID_ARG;
  return dec->depth - 1;
}
