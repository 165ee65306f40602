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

/* Headers (DQT, SOF0, DHT and SOS, a DHT or SOS at most 64 KiB each) never
 * reach this; a frame whose headers are broken is given up on here too. */
#define MAX_HEADER_BYTES (4u * 65540u)

void gst_c63_framer_init(GstC63Framer *framer)
{
  framer->data = g_byte_array_new();
  gst_c63_framer_reset(framer);
}

void gst_c63_framer_clear(GstC63Framer *framer)
{
  g_clear_pointer(&framer->data, g_byte_array_unref);
}

/* Start looking at a new frame (or junk) at the front of data. */
static void gst_c63_framer_new_frame(GstC63Framer *framer)
{
  framer->synced = FALSE;
  framer->added = 0;
  framer->scan_pos = 0;
  framer->have_header = FALSE;
  framer->broken_header = FALSE;
  framer->data_offset = 0;
  framer->max_bytes = MAX_HEADER_BYTES;
}

void gst_c63_framer_reset(GstC63Framer *framer)
{
  gst_c63_framer_new_frame(framer);
  g_byte_array_set_size(framer->data, 0);
}

/* The first n bytes of data are consumed by the caller: n - added of them
 * through the adapter (the rest were added before). Keep what follows. */
static GstC63FramerResult gst_c63_framer_done(GstC63Framer *framer, GstC63FramerResult result,
                                              gsize n, gsize *size)
{
  *size = n - framer->added;
  g_byte_array_remove_range(framer->data, 0, n);
  gst_c63_framer_new_frame(framer);
  return result;
}

/* Hand the bytes before the first undecided one to the frame. */
static GstC63FramerResult gst_c63_framer_wait(GstC63Framer *framer, gsize decided, gsize *size)
{
  *size = decided - framer->added;
  framer->added = decided;
  return GST_C63_FRAMER_NEED_DATA;
}

/* Not in a frame: skip to the next frame start. */
static GstC63FramerResult gst_c63_framer_sync(GstC63Framer *framer, gboolean at_eos, gsize *size)
{
  const guint8 *d = framer->data->data;
  gsize len = framer->data->len, off;

  off = c63_find_frame_start(d, len);
  if (off == 0 && len >= 5) { /* SOI, an optional 00, FF and a segment marker */
    framer->synced = TRUE;
    framer->scan_pos = 2; /* past our own SOI */
    *size = 0;
    return GST_C63_FRAMER_NEED_DATA; /* the caller loops: synced now */
  }
  if (off == 0) /* a partial frame start: wait for the rest, or give up at EOS */
    off = at_eos ? len : 0;
  if (off == 0) {
    *size = 0;
    return GST_C63_FRAMER_NEED_DATA;
  }
  *size = off;
  g_byte_array_remove_range(framer->data, 0, off);
  return GST_C63_FRAMER_SKIP;
}

/* Parse the frame's headers once they are all there. */
static void gst_c63_framer_headers(GstC63Framer *framer, gboolean at_eos)
{
  c63_frame_header hdr;
  int status;

  if (framer->have_header || framer->broken_header) return;
  status = c63_parse_frame_headers_only(framer->data->data, framer->data->len, &hdr, NULL, 0);
  if (status == C63_OK) {
    framer->have_header = TRUE;
    framer->data_offset = hdr.data_offset;
    framer->max_bytes = c63_max_frame_bytes(hdr.width, hdr.height);
    framer->scan_pos = MAX(framer->scan_pos, hdr.data_offset);
  } else if (status != C63_ERR_TRUNCATED || at_eos || framer->data->len > MAX_HEADER_BYTES) {
    /* Handed on as a broken frame, ending where the next one starts. */
    framer->broken_header = TRUE;
  }
}

static GstC63FramerResult gst_c63_framer_scan(GstC63Framer *framer, gboolean at_eos, gsize *size,
                                              gboolean *keyframe, gboolean *complete)
{
  const guint8 *d = framer->data->data;
  gsize len = framer->data->len, p;

  gst_c63_framer_headers(framer, at_eos);
  if (!framer->have_header && !framer->broken_header) /* headers still arriving */
    return gst_c63_framer_wait(framer, len, size);

  for (p = framer->scan_pos; p + 1 < len; p++) {
    if (d[p] != 0xff) continue;
    if (d[p + 1] == 0xd8) { /* a new frame: this one was cut short */
      return gst_c63_framer_done(framer, GST_C63_FRAMER_FRAME, p, size);
    } else if (d[p + 1] == 0xd9) {
      c63_frame_header hdr;
      int status = c63_parse_frame_header(d, p + 2, &hdr, NULL, 0);

      if (status == C63_ERR_TRUNCATED) /* FF D9 in a segment after the data */
        continue;
      if (status == C63_OK) {
        *keyframe = hdr.keyframe != 0;
        *complete = TRUE;
      }
      return gst_c63_framer_done(framer, GST_C63_FRAMER_FRAME,
                                 status == C63_OK ? MIN(hdr.frame_size, p + 2) : p + 2, size);
    }
  }
  framer->scan_pos = p;
  if (at_eos || len >= framer->max_bytes) /* never ended */
    return gst_c63_framer_done(framer, GST_C63_FRAMER_FRAME, len, size);
  return gst_c63_framer_wait(framer, p, size);
}

GstC63FramerResult gst_c63_framer_next(GstC63Framer *framer, GstAdapter *adapter, gboolean at_eos,
                                       gsize *size, gboolean *keyframe, gboolean *complete)
{
  /* The adapter holds data[added..] followed by bytes not copied yet. */
  gsize have = framer->data->len - framer->added;
  gsize avail = gst_adapter_available(adapter);

  *keyframe = FALSE;
  *complete = FALSE;
  if (avail > have) {
    gsize n = avail - have;

    g_byte_array_set_size(framer->data, framer->data->len + n);
    gst_adapter_copy(adapter, framer->data->data + framer->data->len - n, have, n);
  }
  if (!framer->synced) {
    GstC63FramerResult r = gst_c63_framer_sync(framer, at_eos, size);
    if (!framer->synced) return r;
  }
  return gst_c63_framer_scan(framer, at_eos, size, keyframe, complete);
}
