/* The video/x-c63 typefinder (see gstc63typefind.h).
 *
 * Copyright (C) 2026 gst-c63 contributors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A Codec63 frame starts like a baseline JPEG (FF D8 FF DB), so the JPEG
 * typefinder claims .c63 files too, with POSSIBLE or LIKELY. The first frame
 * start within the first 4 KiB whose headers parse as the decoder parses
 * them (c63_parse_frame_headers_only: DQT with tables 0, 1, 2, SOF0 of
 * precision 8 and a Codec63 size, then SOS) is proof enough for
 * GST_TYPE_FIND_MAXIMUM at offset 0, which no JPEG typefinder result
 * reaches for these bytes, and for LIKELY after some junk, which c63dec
 * skips.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "gstc63typefind.h"

#include "c63/c63.h"

/* A stream may start with a little junk, as c63dec accepts; the frame must
 * start within this window (the JPEG typefinder looks as far). */
#define SEARCH_WINDOW 4096
/* Bytes peeked: the window and a frame's headers (655 bytes when written by
 * a Codec63 encoder; longer DHT or SOS segments are legal). */
#define PEEK_BYTES (SEARCH_WINDOW + 4096)

static GstStaticCaps c63_caps = GST_STATIC_CAPS("video/x-c63");

/* As many of the first bytes as the source has, up to PEEK_BYTES: sources
 * that do not tell their length are probed by bisection. */
static const guint8 *gst_c63_typefind_peek(GstTypeFind *tf, guint *size)
{
  guint64 length = gst_type_find_get_length(tf);
  guint lo = 0, hi = length > 0 && length < PEEK_BYTES ? (guint)length : PEEK_BYTES;

  if (gst_type_find_peek(tf, 0, hi)) {
    lo = hi;
  } else {
    while (lo + 1 < hi) { /* lo bytes can be peeked (or lo is 0), hi bytes cannot */
      guint mid = lo + (hi - lo) / 2;
      if (gst_type_find_peek(tf, 0, mid))
        lo = mid;
      else
        hi = mid;
    }
  }
  *size = lo;
  return lo >= 8 ? gst_type_find_peek(tf, 0, lo) : NULL;
}

static void gst_c63_typefind(GstTypeFind *tf, G_GNUC_UNUSED gpointer user_data)
{
  guint size = 0;
  const guint8 *d = gst_c63_typefind_peek(tf, &size);
  c63_frame_header hdr;
  gsize off;

  if (!d) return;
  /* The first frame start whose headers parse as the decoder parses them
   * (which rejects JPEG's: a JFIF APP0 marker, a single-table DQT). */
  for (off = 0; off < MIN(size, SEARCH_WINDOW);) {
    off += c63_find_frame_start(d + off, MIN(size, SEARCH_WINDOW) - off);
    if (off >= MIN(size, SEARCH_WINDOW)) return;
    if (c63_parse_frame_headers_only(d + off, size - off, &hdr, NULL, 0) == C63_OK) break;
    off++;
  }
  if (off >= MIN(size, SEARCH_WINDOW)) return;
  gst_type_find_suggest_simple(tf, off == 0 ? GST_TYPE_FIND_MAXIMUM : GST_TYPE_FIND_LIKELY,
                               "video/x-c63", "width", G_TYPE_INT, hdr.width, "height", G_TYPE_INT,
                               hdr.height, NULL);
}

gboolean gst_c63_typefind_register(GstPlugin *plugin)
{
  /* Ranked above the JPEG typefinder (PRIMARY) so it is tried first. */
  return gst_type_find_register(plugin, "video/x-c63", GST_RANK_PRIMARY + 1, gst_c63_typefind,
                                "c63", gst_static_caps_get(&c63_caps), NULL, NULL);
}
