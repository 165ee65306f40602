/* Splitting a Codec63 byte stream into frames, for c63dec's parse step.
 *
 * Copyright (C) 2026 gst-c63 contributors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Works on a GstAdapter, whatever the chunking (down to 1-byte buffers): it
 * scans each byte once, remembering how far it got, so a frame arriving in
 * n pieces costs O(size) and not O(n * size).
 */
#ifndef GST_C63_FRAMER_H
#define GST_C63_FRAMER_H

#include <gst/base/gstadapter.h>

G_BEGIN_DECLS

typedef enum {
  GST_C63_FRAMER_NEED_DATA, /* no decision yet: wait for more bytes */
  GST_C63_FRAMER_SKIP,      /* drop the first *size bytes: not part of any frame */
  GST_C63_FRAMER_FRAME,     /* the first *size bytes are one frame, possibly broken */
} GstC63FramerResult;

typedef struct {
  gboolean synced; /* the adapter starts with a frame start (SOI + DQT) */
  gsize scan_pos;  /* bytes before this were searched for EOI/SOI already */
} GstC63Framer;

void gst_c63_framer_reset(GstC63Framer *framer);

/* Decide about the bytes at the head of the adapter. For FRAME, *keyframe
 * tells the frame type if its header could be parsed (FALSE otherwise) and
 * *complete whether it parsed as a whole frame (a broken one is handed on so
 * the decoder reports it). The caller consumes *size bytes after SKIP or
 * FRAME. At EOS, leftover bytes become a (broken) frame or are skipped. */
GstC63FramerResult gst_c63_framer_next(GstC63Framer *framer, GstAdapter *adapter, gboolean at_eos,
                                       gsize *size, gboolean *keyframe, gboolean *complete);

G_END_DECLS

#endif /* GST_C63_FRAMER_H */
