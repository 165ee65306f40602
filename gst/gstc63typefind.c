/* The video/x-c63 typefinder (see gstc63typefind.h).
 *
 * Copyright (C) 2026 gst-c63 contributors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A Codec63 frame starts like a baseline JPEG (FF D8 FF DB), so the JPEG
 * typefinder claims .c63 files too, with POSSIBLE or LIKELY. The first frame
 * start whose headers parse as the decoder parses them
 * (c63_parse_frame_headers_only: DQT with tables 0, 1, 2, SOF0 of
 * precision 8 and a Codec63 size, then SOS) is proof enough for
 * GST_TYPE_FIND_MAXIMUM at offset 0, which no JPEG typefinder result
 * reaches for these bytes. Only that frame's headers are needed: a file
 * that ends inside its first frame is still Codec63.
 *
 * A stream may also start inside a frame (a capture joined mid-stream, a
 * file cut at the front), which c63parse and c63dec skip to the next frame
 * start: the search goes on for a whole frame's worth of bytes. A frame
 * found further in is MAXIMUM when the next frame's headers parse too (a
 * lower probability would not do in pull mode: GstTypeFindElement fails
 * when any typefinder read past the end of a short file and nobody
 * reached MAXIMUM), else LIKELY a little way in (junk, as c63dec accepts)
 * and POSSIBLE beyond, which stronger claims of other formats outrank.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "gstc63typefind.h"

#include "c63/c63.h"

/* Junk this close to the start is taken as junk (the JPEG typefinder
 * looks as far): one frame found after it is LIKELY. */
#define JUNK_WINDOW 4096
/* A stream that starts inside a frame: its first frame start may come
 * this far in (a 1080p keyframe at high quality is a few hundred KiB). */
#define SEARCH_WINDOW (1024 * 1024)
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

/* The offset of the first frame start at or after from, before limit,
 * whose headers parse as the decoder parses them (which rejects JPEG's: a
 * JFIF APP0 marker, a single-table DQT); limit when there is none. */
static gsize gst_c63_typefind_next_frame(const guint8 *d, gsize size, gsize from, gsize limit,
                                         c63_frame_header *hdr)
{
  gsize off = from;

  limit = MIN(limit, size);
  while (off < limit) {
    off += c63_find_frame_start(d + off, limit - off);
    if (off >= limit) break;
    if (c63_parse_frame_headers_only(d + off, size - off, hdr, NULL, 0) == C63_OK) return off;
    off++;
  }
  return limit;
}

static void gst_c63_typefind(GstTypeFind *tf, G_GNUC_UNUSED gpointer user_data)
{
  guint size = 0;
  const guint8 *d = gst_c63_typefind_peek(tf, &size);
  GstTypeFindProbability prob;
  c63_frame_header hdr, next;
  gsize off;

  if (!d) return;
  off = gst_c63_typefind_next_frame(d, size, 0, SEARCH_WINDOW, &hdr);
  if (off >= MIN(size, SEARCH_WINDOW)) return;
  /* Entropy-coded data holds no frame start, so the next one found after
   * a frame's headers is the next frame: two frames in a row are as sure
   * as one at offset 0. */
  if (off == 0 || gst_c63_typefind_next_frame(d, size, off + hdr.data_offset, size, &next) < size)
    prob = GST_TYPE_FIND_MAXIMUM;
  else
    prob = off < JUNK_WINDOW ? GST_TYPE_FIND_LIKELY : GST_TYPE_FIND_POSSIBLE;
  gst_type_find_suggest_simple(tf, prob, "video/x-c63", "width", G_TYPE_INT, hdr.width, "height",
                               G_TYPE_INT, hdr.height, NULL);
}

gboolean gst_c63_typefind_register(GstPlugin *plugin)
{
  /* Ranked above the JPEG typefinder (PRIMARY) so it is tried first. */
  return gst_type_find_register(plugin, "video/x-c63", GST_RANK_PRIMARY + 1, gst_c63_typefind,
                                "c63", gst_static_caps_get(&c63_caps), NULL, NULL);
}
