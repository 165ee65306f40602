/* The frame index of a Codec63 stream: where each frame starts and whether
 * it is a keyframe, built by splitting the bytes with c63_frame_scan (no
 * entropy decoding). GLib only, so a benchmark can run the same scan.
 *
 * Copyright (C) 2026 gst-c63 contributors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef GST_C63_INDEX_H
#define GST_C63_INDEX_H

#include <glib.h>

#include "c63/c63.h"

G_BEGIN_DECLS

typedef struct {
  guint64 offset;    /* of the frame's first byte in the stream */
  gboolean keyframe; /* complete and a keyframe */
  guint64 size;      /* SOI..EOI of a complete frame; 0 for a broken one */
} GstC63IndexEntry;

typedef struct {
  GArray *entries;           /* GstC63IndexEntry, one per frame, by offset */
  c63_frame_scanner scanner; /* the frame under way at pos */
  guint64 pos;               /* stream offset the next scan starts from */
} GstC63Index;

void gst_c63_index_init(GstC63Index *index);
void gst_c63_index_clear(GstC63Index *index);
/* Forget every frame, to scan again from offset 0. */
void gst_c63_index_reset(GstC63Index *index);

/* Index the frames in data, the stream from index->pos on (len bytes;
 * at_end: the stream ends there). Returns the bytes consumed (whole frames
 * and junk) and advances pos by them; the caller scans again from the new
 * pos, with more bytes when nothing was consumed and the stream goes on. */
gsize gst_c63_index_scan(GstC63Index *index, const guint8 *data, gsize len, gboolean at_end);

guint gst_c63_index_n_frames(const GstC63Index *index);
/* The number of the frame starting at offset, or -1. */
gint64 gst_c63_index_frame_at_offset(const GstC63Index *index, guint64 offset);
const GstC63IndexEntry *gst_c63_index_entry(const GstC63Index *index, guint n);
/* The frame starting at offset, as the index knows it. */
typedef struct {
  gint64 number;    /* -1: no frame starts there */
  guint64 size;     /* to the next frame (the last frame: to the scan position); 0: none */
  guint64 complete; /* SOI..EOI of a complete frame; 0: broken, or none */
} GstC63IndexedFrame;

void gst_c63_index_lookup(const GstC63Index *index, guint64 offset, GstC63IndexedFrame *frame);
/* The last keyframe at or before frame n, or -1 if none. */
gint64 gst_c63_index_keyframe_before(const GstC63Index *index, guint n);
/* The first keyframe at or after frame n, or -1 if none. */
gint64 gst_c63_index_keyframe_after(const GstC63Index *index, guint n);

G_END_DECLS

#endif /* GST_C63_INDEX_H */
