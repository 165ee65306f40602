/* Splitting a Codec63 byte stream into frames, for c63dec's parse step.
 *
 * Copyright (C) 2026 gst-c63 contributors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Works whatever the chunking, down to 1-byte buffers, in time linear in
 * the stream: bytes known to belong to the current frame are handed to the
 * frame as they arrive (the caller's gst_video_decoder_add_to_frame), so
 * the adapter only ever holds the new bytes plus at most 3 undecided ones,
 * and the framer keeps a contiguous copy of the frame for scanning and for
 * checking its header. (Random access into an adapter of thousands of tiny
 * buffers walks the buffer list and would make the parse quadratic.)
 */
#ifndef GST_C63_FRAMER_H
#define GST_C63_FRAMER_H

#include <gst/base/gstadapter.h>

#include "c63/c63.h"

G_BEGIN_DECLS

typedef enum {
  GST_C63_FRAMER_NEED_DATA, /* add *size bytes to the frame, then wait for more */
  GST_C63_FRAMER_SKIP,      /* flush *size bytes: not part of any frame */
  GST_C63_FRAMER_FRAME,     /* add *size bytes to the frame: it is complete (or broken) */
} GstC63FramerResult;

typedef struct {
  c63_frame_scanner scanner;
  GByteArray *data; /* the current frame's bytes seen so far (or junk, unsynced) */
  gsize added;      /* of those, bytes already added to the frame */
} GstC63Framer;

void gst_c63_framer_init(GstC63Framer *framer);
void gst_c63_framer_clear(GstC63Framer *framer);
/* Forget everything, e.g. on flush (the adapter is emptied as well). */
void gst_c63_framer_reset(GstC63Framer *framer);

/* Decide about the adapter's bytes. For FRAME, *keyframe tells the frame
 * type when its header parsed, and *complete whether the whole frame
 * parsed (a broken one is still handed on, so the decoder reports it). At
 * EOS the bytes left become a (broken) frame or are skipped. */
GstC63FramerResult gst_c63_framer_next(GstC63Framer *framer, GstAdapter *adapter, gboolean at_eos,
                                       gsize *size, gboolean *keyframe, gboolean *complete);

G_END_DECLS

#endif /* GST_C63_FRAMER_H */
