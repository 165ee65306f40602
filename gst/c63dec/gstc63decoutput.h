/* GstC63DecOutput: c63dec's pictures handed on from the source pad's own
 * task. The streaming thread that decodes starts each picture's copy into
 * its output buffer and queues the frame; the task waits for the copy
 * (c63_decoder_copy_wait) and finishes the frame (pushes it) while the
 * streaming thread is elsewhere (parsing, reading), so that thread
 * neither waits for the GPU's copies nor, mostly, pushes downstream.
 *
 * Copyright (C) 2026 gst-c63 contributors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef GST_C63_DEC_OUTPUT_H
#define GST_C63_DEC_OUTPUT_H

#include <gst/gst.h>
#include <gst/video/video.h>

#include "c63/c63.h"

G_BEGIN_DECLS

typedef struct {
  GstVideoDecoder *vdec; /* the element; not a reference */
  c63_decoder *dec;      /* whose copies are waited for, from start to stop */
  GMutex lock;
  GCond cond;          /* an entry came, or the task is stopped */
  GQueue pending;      /* frames (a reference each) whose copies run, oldest first */
  gboolean flushing;   /* stopped (READY): nothing is queued */
  GstFlowReturn flow;  /* the first push that failed, returned upstream */
  guint64 last_ticket; /* of the last copy queued */
  guint64 queued;      /* frames queued so far: each entry's number */
} GstC63DecOutput;

void gst_c63_dec_output_init(GstC63DecOutput *out, GstVideoDecoder *vdec);
void gst_c63_dec_output_clear(GstC63DecOutput *out);

/* Ready to take frames whose pictures dec copies (the element starts). */
void gst_c63_dec_output_start(GstC63DecOutput *out, c63_decoder *dec);

/* The calls below are made with the stream lock held, which the task
 * takes to finish a frame: they never wait for the task, but finish
 * frames themselves where they must wait. */

/* Queue frame (taken), whose picture's copy into its output buffer has
 * ticket, for the task to finish; finishes the oldest frames first while
 * the queue is full. Returns the flow of the pushes so far. */
GstFlowReturn gst_c63_dec_output_queue(GstC63DecOutput *out, GstVideoCodecFrame *frame,
                                       guint64 ticket);

/* Finish the oldest queued frame here (its buffer may be what a pool with
 * a limit waits for). FALSE when none was queued or the pushes stopped. */
gboolean gst_c63_dec_output_finish_one(GstC63DecOutput *out);

/* Finish every queued frame (drain, EOS). Returns the flow of the pushes. */
GstFlowReturn gst_c63_dec_output_drain(GstC63DecOutput *out);

/* The flow of the pushes so far. */
GstFlowReturn gst_c63_dec_output_flow(GstC63DecOutput *out);

/* Forget the queued frames once their copies are done (the base class
 * then lets their buffers go), and a failed push's flow: a flush, from
 * FLUSH_STOP or the base class's own (reverse playback, at each
 * discontinuity), with the stream lock held, or once the task stopped. */
void gst_c63_dec_output_flush(GstC63DecOutput *out);

/* Stop the task, without the stream lock (going to READY), and forget the
 * queued frames. Queueing returns GST_FLOW_FLUSHING until
 * gst_c63_dec_output_start. */
void gst_c63_dec_output_stop(GstC63DecOutput *out);

G_END_DECLS

#endif
