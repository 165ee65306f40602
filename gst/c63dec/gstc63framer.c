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

/* Whether the 4 bytes at offset match value under mask. */
static gboolean is_at(GstAdapter *adapter, gsize offset, guint32 mask, guint32 value)
{
  return gst_adapter_masked_scan_uint32(adapter, mask, value, offset, 4) == (gssize)offset;
}

static GstC63FramerResult gst_c63_framer_emit(GstC63Framer *framer, GstC63FramerResult result,
                                              gsize n, gsize *size);

/* A candidate EOI ends at end: if the bytes before it parse as a frame (or
 * are corrupt), set *result and return TRUE; FALSE for an FF D9 inside the
 * headers. */
static gboolean gst_c63_framer_try_end(GstC63Framer *framer, GstAdapter *adapter, gsize end,
                                       gsize *size, gboolean *keyframe, gboolean *complete,
                                       GstC63FramerResult *result)
{
  c63_frame_header hdr;
  int status = gst_c63_framer_check(adapter, end, &hdr);

  if (status == C63_ERR_TRUNCATED) return FALSE;
  if (status == C63_OK) {
    *keyframe = hdr.keyframe != 0;
    *complete = TRUE;
    end = MIN(hdr.frame_size, end);
  }
  *result = gst_c63_framer_emit(framer, GST_C63_FRAMER_FRAME, end, size);
  return TRUE;
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
    framer->scan_pos = 2; /* past our own SOI */
  }

  /* One scan for FF D8 / FF D9 at the start of 4-byte windows, always
   * moving forward, so GstAdapter's scan cache keeps it linear even when
   * the adapter holds thousands of 1-byte buffers. */
  while (framer->scan_pos + 4 <= avail) {
    gssize at = gst_adapter_masked_scan_uint32(adapter, 0xfffe0000, 0xffd80000, framer->scan_pos,
                                               avail - framer->scan_pos);
    GstC63FramerResult result;

    if (at < 0) {
      framer->scan_pos = avail - 3;
      break;
    }
    if (at > 0 && is_at(adapter, at, 0xffffffff, FRAME_START))
      return gst_c63_framer_emit(framer, GST_C63_FRAMER_FRAME, at, size); /* cut short */
    if (is_at(adapter, at, 0xffff0000, 0xffd90000) &&
        gst_c63_framer_try_end(framer, adapter, at + 2, size, keyframe, complete, &result))
      return result;
    framer->scan_pos = at + 1;
  }

  /* An EOI in the last window that is not complete yet: the frame may end
   * exactly where the data does (one frame per buffer, or end of file). */
  if (avail >= 4 && avail - 4 + 1 >= framer->scan_pos) {
    GstC63FramerResult result;

    if (is_at(adapter, avail - 4, 0x00ffff00, 0x00ffd900) &&
        gst_c63_framer_try_end(framer, adapter, avail - 1, size, keyframe, complete, &result))
      return result;
    if (is_at(adapter, avail - 4, 0x0000ffff, 0x0000ffd9) &&
        gst_c63_framer_try_end(framer, adapter, avail, size, keyframe, complete, &result))
      return result;
  }

  if (at_eos || avail >= MAX_FRAME_BYTES)
    return gst_c63_framer_emit(framer, GST_C63_FRAMER_FRAME, avail, size); /* never ended */
  return GST_C63_FRAMER_NEED_DATA;
}
