/* GstC63DecOutput: c63dec's pictures handed on from the source pad's own
 * task (see the header).
 *
 * Locks: frames are taken off the queue (and finished) only with the
 * decoder's stream lock held, by the task or by the streaming thread, so
 * they are finished in order; out->lock guards the queue itself and is
 * never held while the stream lock is taken. The task waits for the
 * oldest frame's copy before it takes the stream lock, and finishes that
 * frame only if it is still the oldest. The streaming thread never waits
 * for the task: GstVideoDecoder may hold its stream lock more than once
 * (byte-stream input calls handle_frame from inside parse), so it could
 * not let the task have it.
 *
 * Copyright (C) 2026 gst-c63 contributors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "gstc63decoutput.h"

GST_DEBUG_CATEGORY_STATIC(gst_c63_dec_output_debug);
#define GST_CAT_DEFAULT gst_c63_dec_output_debug

/* Frames queued at most: enough to keep copies and pushes going while the
 * decoding thread works on, and well under C63_COPIES_IN_FLIGHT. */
#define MAX_PENDING 16

typedef struct {
  GstVideoCodecFrame *frame; /* a reference */
  guint64 ticket;
  guint64 number; /* in the order queued */
} GstC63DecPending;

static void gst_c63_dec_pending_free(gpointer data)
{
  GstC63DecPending *p = data;

  if (p->frame) gst_video_codec_frame_unref(p->frame);
  g_free(p);
}

void gst_c63_dec_output_init(GstC63DecOutput *out, GstVideoDecoder *vdec)
{
  static gsize once;

  if (g_once_init_enter(&once)) {
    GST_DEBUG_CATEGORY_INIT(gst_c63_dec_output_debug, "c63decoutput", 0,
                            "c63dec's pictures pushed from the source pad's task");
    g_once_init_leave(&once, 1);
  }
  out->vdec = vdec;
  out->dec = NULL;
  g_mutex_init(&out->lock);
  g_cond_init(&out->cond);
  g_queue_init(&out->pending);
  out->flushing = TRUE; /* until the element starts */
  out->flow = GST_FLOW_OK;
  out->last_ticket = 0;
  out->queued = 0;
}

void gst_c63_dec_output_clear(GstC63DecOutput *out)
{
  g_queue_clear_full(&out->pending, gst_c63_dec_pending_free);
  g_cond_clear(&out->cond);
  g_mutex_clear(&out->lock);
}

void gst_c63_dec_output_start(GstC63DecOutput *out, c63_decoder *dec)
{
  g_mutex_lock(&out->lock);
  out->dec = dec;
  out->flushing = FALSE;
  out->flow = GST_FLOW_OK;
  g_mutex_unlock(&out->lock);
}

static GstFlowReturn gst_c63_dec_output_flow_locked(GstC63DecOutput *out)
{
  return out->flushing ? GST_FLOW_FLUSHING : out->flow;
}

/* Finish p, taken off the queue, its copy waited for (copied: whether it
 * succeeded); with the stream lock held. Returns the flow. */
static GstFlowReturn gst_c63_dec_output_finish(GstC63DecOutput *out, GstC63DecPending *p,
                                               gboolean copied)
{
  GstFlowReturn ret;

  if (copied) {
    ret = gst_video_decoder_finish_frame(out->vdec, p->frame);
  } else {
    GST_ELEMENT_ERROR(out->vdec, RESOURCE, WRITE,
                      ("The GPU failed to copy a decoded picture into its output buffer"),
                      ("c63_decoder_copy_wait, ticket %" G_GUINT64_FORMAT, p->ticket));
    gst_video_decoder_release_frame(out->vdec, p->frame);
    ret = GST_FLOW_ERROR;
  }
  p->frame = NULL; /* taken by the base class */
  gst_c63_dec_pending_free(p);

  g_mutex_lock(&out->lock);
  if (ret != GST_FLOW_OK && out->flow == GST_FLOW_OK) {
    GST_DEBUG_OBJECT(out->vdec, "pushing stopped: %s", gst_flow_get_name(ret));
    out->flow = ret;
  }
  ret = gst_c63_dec_output_flow_locked(out);
  g_mutex_unlock(&out->lock);
  return ret;
}

/* One frame: its copy waited for, then finished (pushed) if no one else
 * finished it meanwhile. */
static void gst_c63_dec_output_loop(gpointer data)
{
  GstC63DecOutput *out = data;
  GstPad *srcpad = GST_VIDEO_DECODER_SRC_PAD(out->vdec);
  GstC63DecPending *p;
  guint64 number, ticket;
  gboolean copied;

  g_mutex_lock(&out->lock);
  while (g_queue_is_empty(&out->pending) && !out->flushing && out->flow == GST_FLOW_OK)
    g_cond_wait(&out->cond, &out->lock);
  if (out->flushing || out->flow != GST_FLOW_OK) {
    g_mutex_unlock(&out->lock);
    GST_DEBUG_OBJECT(out->vdec, "pausing the task");
    gst_pad_pause_task(srcpad);
    return;
  }
  p = g_queue_peek_head(&out->pending);
  number = p->number;
  ticket = p->ticket;
  g_mutex_unlock(&out->lock);

  /* the entry stays while the stream lock is not held (the streaming
   * thread may finish it meanwhile; a flush forgets it), so it is taken
   * below only if it is still the oldest */
  copied = c63_decoder_copy_wait(out->dec, ticket) == C63_OK;

  GST_VIDEO_DECODER_STREAM_LOCK(out->vdec);
  g_mutex_lock(&out->lock);
  p = g_queue_peek_head(&out->pending);
  if (!out->flushing && p && p->number == number)
    g_queue_pop_head(&out->pending);
  else
    p = NULL;
  g_mutex_unlock(&out->lock);
  if (p && gst_c63_dec_output_finish(out, p, copied) != GST_FLOW_OK) gst_pad_pause_task(srcpad);
  GST_VIDEO_DECODER_STREAM_UNLOCK(out->vdec);
}

GstFlowReturn gst_c63_dec_output_queue(GstC63DecOutput *out, GstVideoCodecFrame *frame,
                                       guint64 ticket)
{
  GstPad *srcpad = GST_VIDEO_DECODER_SRC_PAD(out->vdec);
  GstC63DecPending *p;
  GstFlowReturn ret;

  for (;;) {
    gboolean full;

    g_mutex_lock(&out->lock);
    ret = gst_c63_dec_output_flow_locked(out);
    full = out->pending.length >= MAX_PENDING;
    g_mutex_unlock(&out->lock);
    if (ret != GST_FLOW_OK || !full) break;
    gst_c63_dec_output_finish_one(out);
  }
  if (ret != GST_FLOW_OK) {
    gst_video_decoder_release_frame(out->vdec, frame);
    return ret;
  }
  p = g_new(GstC63DecPending, 1);
  p->frame = frame;
  p->ticket = ticket;
  g_mutex_lock(&out->lock);
  p->number = out->queued++;
  g_queue_push_tail(&out->pending, p);
  if (ticket) out->last_ticket = ticket;
  g_cond_broadcast(&out->cond);
  g_mutex_unlock(&out->lock);
  if (gst_pad_get_task_state(srcpad) != GST_TASK_STARTED &&
      !gst_pad_start_task(srcpad, gst_c63_dec_output_loop, out, NULL)) {
    GST_ELEMENT_ERROR(out->vdec, CORE, THREAD, ("Could not start the output thread"), (NULL));
    return GST_FLOW_ERROR;
  }
  return GST_FLOW_OK;
}

gboolean gst_c63_dec_output_finish_one(GstC63DecOutput *out)
{
  GstC63DecPending *p = NULL;

  g_mutex_lock(&out->lock);
  if (gst_c63_dec_output_flow_locked(out) == GST_FLOW_OK) p = g_queue_pop_head(&out->pending);
  g_mutex_unlock(&out->lock);
  if (!p) return FALSE;
  return gst_c63_dec_output_finish(out, p, c63_decoder_copy_wait(out->dec, p->ticket) == C63_OK) ==
         GST_FLOW_OK;
}

GstFlowReturn gst_c63_dec_output_drain(GstC63DecOutput *out)
{
  while (gst_c63_dec_output_finish_one(out))
    ;
  return gst_c63_dec_output_flow(out);
}

GstFlowReturn gst_c63_dec_output_flow(GstC63DecOutput *out)
{
  GstFlowReturn ret;

  g_mutex_lock(&out->lock);
  ret = gst_c63_dec_output_flow_locked(out);
  g_mutex_unlock(&out->lock);
  return ret;
}

void gst_c63_dec_output_flush(GstC63DecOutput *out)
{
  GQueue forgotten = G_QUEUE_INIT;
  guint64 ticket;

  g_mutex_lock(&out->lock);
  GST_DEBUG_OBJECT(out->vdec, "forgetting %u frames", out->pending.length);
  ticket = out->last_ticket;
  forgotten = out->pending;
  g_queue_init(&out->pending);
  out->last_ticket = 0;
  out->flow = GST_FLOW_OK;
  g_mutex_unlock(&out->lock);
  /* the frames' buffers are let go once nothing writes into them */
  if (out->dec && ticket) c63_decoder_copy_wait(out->dec, ticket);
  g_queue_clear_full(&forgotten, gst_c63_dec_pending_free);
}

void gst_c63_dec_output_stop(GstC63DecOutput *out)
{
  GST_DEBUG_OBJECT(out->vdec, "stopping the task");
  g_mutex_lock(&out->lock);
  out->flushing = TRUE;
  g_cond_broadcast(&out->cond);
  g_mutex_unlock(&out->lock);
  gst_pad_stop_task(GST_VIDEO_DECODER_SRC_PAD(out->vdec));
  gst_c63_dec_output_flush(out);
  out->dec = NULL; /* freed next */
}
