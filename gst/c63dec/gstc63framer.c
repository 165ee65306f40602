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

#define FRAME_START 0xffd8ffdbu /* SOI followed by the DQT marker */
/* A frame without EOI is given up on at this size (an 8192x8192 frame of
 * the densest coefficients still fits): garbage cannot grow the adapter
 * without bound. */
#define MAX_FRAME_BYTES (256u * 1024u * 1024u)

void gst_c63_framer_reset(GstC63Framer *framer)
{
  framer->synced = FALSE;
  framer->scan_pos = 0;
}

/* Bytes at the head that cannot start a frame, using libc63's resync scan.
 * Only runs when out of sync (stream start, after garbage). */
static gsize gst_c63_framer_junk(GstAdapter *adapter, gsize avail)
{
  gsize n = MIN(avail, 1u << 20);
  const guint8 *data = gst_adapter_map(adapter, n);
  gsize off = c63_find_frame_start(data, n);

  gst_adapter_unmap(adapter);
  return off == 0 ? 1 : off; /* 0 only if the peeked start was not a frame start */
}

/* Returns TRUNCATED for a false EOI, else OK or BITSTREAM with the header. */
static int gst_c63_framer_check(GstAdapter *adapter, gsize end, c63_frame_header *hdr)
{
  const guint8 *data = gst_adapter_map(adapter, end);
  int status = c63_parse_frame_header(data, end, hdr, NULL, 0);

  gst_adapter_unmap(adapter);
  return status;
}

static GstC63FramerResult gst_c63_framer_emit(GstC63Framer *framer, GstC63FramerResult result,
                                              gsize n, gsize *size)
{
  *size = n;
  gst_c63_framer_reset(framer);
  return result;
}

GstC63FramerResult gst_c63_framer_next(GstC63Framer *framer, GstAdapter *adapter, gboolean at_eos,
                                       gsize *size, gboolean *keyframe, gboolean *complete)
{
  gsize avail = gst_adapter_available(adapter);

  *keyframe = FALSE;
  *complete = FALSE;
  if (!framer->synced) {
    if (avail < 4)
      return at_eos && avail > 0 ? gst_c63_framer_emit(framer, GST_C63_FRAMER_SKIP, avail, size)
                                 : GST_C63_FRAMER_NEED_DATA;
    if (gst_adapter_masked_scan_uint32(adapter, 0xffffffff, FRAME_START, 0, 4) != 0)
      return gst_c63_framer_emit(framer, GST_C63_FRAMER_SKIP, gst_c63_framer_junk(adapter, avail),
                                 size);
    framer->synced = TRUE;
    framer->scan_pos = 0;
  }

  /* Scan 4-byte windows starting in [scan_pos, avail - 4]. An EOI is looked
   * for in the last two bytes of a window, a new frame start in all four. */
  while (framer->scan_pos + 4 <= avail) {
    gsize len = avail - framer->scan_pos;
    gssize eoi =
        gst_adapter_masked_scan_uint32(adapter, 0x0000ffff, 0x0000ffd9, framer->scan_pos, len);
    gssize next = gst_adapter_masked_scan_uint32(
        adapter, 0xffffffff, FRAME_START, MAX(framer->scan_pos, 1), len - (framer->scan_pos == 0));
    c63_frame_header hdr;
    int status;

    if (next >= 0 && (eoi < 0 || (gsize)next < (gsize)eoi + 2))
      return gst_c63_framer_emit(framer, GST_C63_FRAMER_FRAME, next, size); /* cut short */
    if (eoi < 0) break;
    status = gst_c63_framer_check(adapter, eoi + 4, &hdr);
    if (status == C63_ERR_TRUNCATED) { /* FF D9 inside the headers */
      framer->scan_pos = eoi + 1;
      continue;
    }
    if (status == C63_OK) {
      *keyframe = hdr.keyframe != 0;
      *complete = TRUE;
      return gst_c63_framer_emit(framer, GST_C63_FRAMER_FRAME, MIN(hdr.frame_size, (gsize)eoi + 4),
                                 size);
    }
    return gst_c63_framer_emit(framer, GST_C63_FRAMER_FRAME, eoi + 4, size); /* corrupt */
  }
  framer->scan_pos = avail >= 3 ? avail - 3 : 0;

  if (at_eos || avail >= MAX_FRAME_BYTES)
    return gst_c63_framer_emit(framer, GST_C63_FRAMER_FRAME, avail, size); /* never ended */
  return GST_C63_FRAMER_NEED_DATA;
}
