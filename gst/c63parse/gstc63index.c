/* The frame index of a Codec63 stream (see gstc63index.h).
 *
 * Copyright (C) 2026 gst-c63 contributors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "gstc63index.h"

void gst_c63_index_init(GstC63Index *index)
{
  index->entries = g_array_new(FALSE, FALSE, sizeof(GstC63IndexEntry));
  gst_c63_index_reset(index);
}

void gst_c63_index_clear(GstC63Index *index)
{
  g_clear_pointer(&index->entries, g_array_unref);
}

void gst_c63_index_reset(GstC63Index *index)
{
  g_array_set_size(index->entries, 0);
  c63_frame_scanner_init(&index->scanner);
  index->pos = 0;
}

gsize gst_c63_index_scan(GstC63Index *index, const guint8 *data, gsize len, gboolean at_end)
{
  gsize p = 0;

  while (p < len || at_end) {
    c63_frame_scan_result res;
    int r = c63_frame_scan(&index->scanner, data + p, len - p, at_end, &res);

    if (res.size > len - p) break; /* never past the bytes given */
    if (r == C63_SCAN_FRAME) {
      GstC63IndexEntry e = {index->pos + p, res.complete && res.hdr.keyframe,
                            res.complete ? res.size : 0};
      g_array_append_val(index->entries, e);
    } else if (r != C63_SCAN_SKIP || res.size == 0) {
      break; /* more bytes needed (or none left at the end) */
    }
    p += res.size;
  }
  index->pos += p;
  return p;
}

guint gst_c63_index_n_frames(const GstC63Index *index)
{
  return index->entries->len;
}

const GstC63IndexEntry *gst_c63_index_entry(const GstC63Index *index, guint n)
{
  return n < index->entries->len ? &g_array_index(index->entries, GstC63IndexEntry, n) : NULL;
}

gint64 gst_c63_index_frame_at_offset(const GstC63Index *index, guint64 offset)
{
  guint lo = 0, hi = index->entries->len;

  while (lo < hi) { /* the first entry at or after offset is in [lo, hi] */
    guint mid = lo + (hi - lo) / 2;
    if (gst_c63_index_entry(index, mid)->offset < offset)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo < index->entries->len && gst_c63_index_entry(index, lo)->offset == offset) return lo;
  return -1;
}

void gst_c63_index_lookup(const GstC63Index *index, guint64 offset, GstC63IndexedFrame *frame)
{
  const gint64 n = gst_c63_index_frame_at_offset(index, offset);

  frame->number = n;
  frame->size = frame->complete = 0;
  if (n < 0) return;
  frame->complete = gst_c63_index_entry(index, (guint)n)->size;
  if ((guint64)n + 1 < index->entries->len)
    frame->size = gst_c63_index_entry(index, (guint)n + 1)->offset - offset;
  else if (index->pos > offset)
    frame->size = index->pos - offset; /* the last frame, and any junk the scan passed after it */
}

gint64 gst_c63_index_keyframe_before(const GstC63Index *index, guint n)
{
  gint64 i = MIN((gint64)n, (gint64)index->entries->len - 1);

  for (; i >= 0; i--)
    if (gst_c63_index_entry(index, (guint)i)->keyframe) return i;
  return -1;
}

gint64 gst_c63_index_keyframe_after(const GstC63Index *index, guint n)
{
  guint i;

  for (i = n; i < index->entries->len; i++)
    if (gst_c63_index_entry(index, i)->keyframe) return i;
  return -1;
}
