/* Splitting a Codec63 byte stream into frames (see gstc63framer.h).
 *
 * Copyright (C) 2026 gst-c63 contributors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A frame runs from SOI + DQT (FF D8 FF DB) to EOI (FF D9). Inside the
 * entropy-coded data every FF is followed by a stuffed 00, so FF D9 can only
 * be a real EOI there; the fixed headers could in theory hold FF D9 in a
 * quantiser table, so each candidate EOI is confirmed with
 * c63_parse_frame_header(), which reports TRUNCATED for such a false end. A
 * new frame start before any EOI means the current frame was cut short.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstc63framer.h"

#include "c63/c63.h"

/* A frame without EOI is given up on at this size (an 8192x8192 frame of
 * the densest coefficients still fits): garbage cannot grow memory without
 * bound. */
#define MAX_FRAME_BYTES (256u * 1024u * 1024u)

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
  framer->synced = FALSE;
  framer->added = 0;
  framer->scan_pos = 0;
  g_byte_array_set_size(framer->data, 0);
}

static gboolean is_frame_start(const guint8 *d)
{
  return d[0] == 0xff && d[1] == 0xd8 && d[2] == 0xff && d[3] == 0xdb;
}

/* The first n bytes of data are consumed by the caller: n - added of them
 * through the adapter (the rest were added before). Keep what follows. */
static GstC63FramerResult gst_c63_framer_done(GstC63Framer *framer, GstC63FramerResult result,
                                              gsize n, gsize *size)
{
  *size = n - framer->added;
  g_byte_array_remove_range(framer->data, 0, n);
  framer->synced = FALSE;
  framer->added = 0;
  framer->scan_pos = 0;
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

  if (len >= 4 && is_frame_start(d)) {
    framer->synced = TRUE;
    framer->scan_pos = 2; /* past our own SOI */
    *size = 0;
    return GST_C63_FRAMER_NEED_DATA; /* the caller loops: synced now */
  }
  off = c63_find_frame_start(d, len);
  if (off == 0) /* a partial frame start: wait for the rest, or give up at EOS */
    off = at_eos ? len : (len >= 4 ? 1 : 0);
  if (off == 0) {
    *size = 0;
    return GST_C63_FRAMER_NEED_DATA;
  }
  *size = off;
  g_byte_array_remove_range(framer->data, 0, off);
  return GST_C63_FRAMER_SKIP;
}

static GstC63FramerResult gst_c63_framer_scan(GstC63Framer *framer, gboolean at_eos, gsize *size,
                                              gboolean *keyframe, gboolean *complete)
{
  const guint8 *d = framer->data->data;
  gsize len = framer->data->len, p;

  for (p = framer->scan_pos; p + 1 < len; p++) {
    if (d[p] != 0xff) continue;
    if (d[p + 1] == 0xd8) {
      if (p + 3 >= len) /* FF D8 at the end: undecided */
        break;
      if (d[p + 2] == 0xff && d[p + 3] == 0xdb) /* a new frame: this one was cut short */
        return gst_c63_framer_done(framer, GST_C63_FRAMER_FRAME, p, size);
    } else if (d[p + 1] == 0xd9) {
      c63_frame_header hdr;
      int status = c63_parse_frame_header(d, p + 2, &hdr, NULL, 0);

      if (status == C63_ERR_TRUNCATED) /* FF D9 inside the headers */
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
  if (at_eos || len >= MAX_FRAME_BYTES) /* never ended */
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
