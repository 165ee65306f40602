/* Splitting a Codec63 byte stream into frames (see gstc63framer.h).
 *
 * Copyright (C) 2026 gst-c63 contributors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A frame runs from SOI to EOI (FF D9). Its headers are parsed first, so
 * bytes inside them (a quantiser table may hold FF D8 FF DB, or FF D9) are
 * never taken for a boundary; then, in the entropy-coded data, every FF is
 * followed by a stuffed 00, so an FF D8 there is the start of the next frame
 * (this one was cut short) and an FF D9 the end, confirmed with
 * c63_parse_frame_header(). Memory is bounded by the picture: a frame longer
 * than the largest its header's size allows (c63_max_frame_bytes) is given
 * up on, and so are headers longer than any valid ones.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstc63framer.h"

#include "c63/c63.h"

/* The splitting itself is libc63's (c63_frame_scan, the one framer of
 * the project, also behind c63parse and c63-dec); this keeps the frame's
 * bytes contiguous for it and maps its answers onto the adapter. */

void gst_c63_framer_init(GstC63Framer *framer)
{
  framer->data = g_byte_array_new();
  gst_c63_framer_reset(framer);
}

void gst_c63_framer_clear(GstC63Framer *framer)
{
  g_clear_pointer(&framer->data, g_byte_array_unref);
}

void gst_c63_framer_reset(GstC63Framer *framer)
{
  c63_frame_scanner_init(&framer->scanner);
  framer->added = 0;
  g_byte_array_set_size(framer->data, 0);
}

GstC63FramerResult gst_c63_framer_next(GstC63Framer *framer, GstAdapter *adapter, gboolean at_eos,
                                       gsize *size, gboolean *keyframe, gboolean *complete)
{
  /* The adapter holds data[added..] followed by bytes not copied yet. */
  gsize have = framer->data->len - framer->added;
  gsize avail = gst_adapter_available(adapter);
  c63_frame_scan_result res;

  *keyframe = FALSE;
  *complete = FALSE;
  if (avail > have) {
    gsize n = avail - have;

    g_byte_array_set_size(framer->data, framer->data->len + n);
    gst_adapter_copy(adapter, framer->data->data + framer->data->len - n, have, n);
  }
  switch (c63_frame_scan(&framer->scanner, framer->data->data, framer->data->len, at_eos, &res)) {
  case C63_SCAN_SKIP:
    /* Junk before a frame start: nothing of it was added to a frame. */
    *size = res.size;
    g_byte_array_remove_range(framer->data, 0, res.size);
    return GST_C63_FRAMER_SKIP;
  case C63_SCAN_FRAME:
    *keyframe = res.complete && res.hdr.keyframe != 0;
    *complete = res.complete;
    *size = res.size - framer->added;
    g_byte_array_remove_range(framer->data, 0, res.size);
    framer->added = 0;
    return GST_C63_FRAMER_FRAME;
  default:
    /* Hand on the bytes known to belong to the frame: the adapter then
     * holds only what is still undecided. */
    *size = res.size > framer->added ? res.size - framer->added : 0;
    framer->added = MAX(framer->added, res.size);
    return GST_C63_FRAMER_NEED_DATA;
  }
}
