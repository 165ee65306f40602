/* c63dec: the Codec63 decoder element.
 *
 * Copyright (C) 2026 gst-c63 contributors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef GST_C63_DEC_H
#define GST_C63_DEC_H

#include <gst/gst.h>
#include <gst/video/video.h>

#include "c63/c63.h"
#include "gstc63decoutput.h"
#include "gstc63framer.h"

G_BEGIN_DECLS

#define GST_TYPE_C63_DEC (gst_c63_dec_get_type())
G_DECLARE_FINAL_TYPE(GstC63Dec, gst_c63_dec, GST, C63_DEC, GstVideoDecoder)

struct _GstC63Dec {
  GstVideoDecoder parent;

  c63_decoder *dec;
  GstVideoCodecState *input_state;
  gint backend;          /* GstC63DecBackend: the property, read at start */
  gint device_id;        /* CUDA device for the cuda backend */
  gint threads;          /* CPU threads, 0: one per core (the property) */
  GstC63Framer framer;   /* byte-stream input only */
  GstAllocator *try_mem; /* system memory that may fail, for output pictures */
  /* The GPU backend's GstCudaContext (gstc63cuda.h), shared with the
   * pipeline's CUDA elements, and whether the output is CUDA memory
   * (negotiated with downstream); set between start and stop. */
  GstObject *cuda_ctx;
  gboolean cuda_output;
  /* Output in page-locked system memory of our pool, which the GPU
   * writes by DMA (decide_allocation). */
  gboolean pinned_output;
  /* Pictures pushed from the source pad's task. */
  GstC63DecOutput output;

  /* Streaming thread only; reset by start. What the stream gave so far,
   * for the end-of-stream check and its message. */
  guint64 bytes_in;      /* input bytes: in frames and skipped */
  guint64 bytes_skipped; /* of those, bytes outside any frame */
  guint frames_in;       /* frames handed to handle_frame */
  guint frames_out;      /* pictures finished */
  guint frames_corrupt;  /* frames dropped as corrupt */
  guint frames_no_ref;   /* delta frames skipped for want of a keyframe */
  guint delta_units_in;  /* packetized buffers flagged as delta units */
  gboolean error_run;    /* corrupt frames since the last picture: warned once */
  gint64 last_key_sent;  /* system frame number of the last keyframe sent to libc63, or -1 */
  gboolean failed;       /* an error message was posted */
};

GST_ELEMENT_REGISTER_DECLARE(c63dec);

G_END_DECLS

#endif /* GST_C63_DEC_H */
