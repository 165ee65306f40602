/* c63dec's byte-stream framer on its own: memory is bounded by the picture.
 * A frame header followed by a long run of data without an end must be
 * given up on once it is longer than the largest frame of that size
 * (c63_max_frame_bytes), not held until a constant limit or the end.
 *
 * Copyright (C) 2026 gst-c63 contributors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>

#include <gst/check/gstcheck.h>

#include "c63/c63.h"
#include "c63check.h"
#include "gstc63framer.h"

GST_START_TEST(test_framer_bounded_by_picture)
{
  const C63Vector *v = c63check_vector("pan_352x288.c63");
  GBytes *stream = c63check_read_file(v->stream);
  GPtrArray *frames = c63check_split_frames(stream);
  const gsize bound = c63_max_frame_bytes(v->width, v->height);
  const gsize total = 16 * bound, chunk = 65536;
  GstAdapter *adapter = gst_adapter_new();
  GstC63Framer framer;
  gsize header_len, fed = 0, most = 0;
  guint broken = 0;
  guint8 *junk = g_malloc(chunk);
  c63_frame_header hdr;

  /* the first frame's headers, then data that never ends (no FF at all) */
  fail_unless(c63_parse_frame_headers_only(g_bytes_get_data(frames->pdata[0], NULL), 4096, &hdr,
                                           NULL, 0) == C63_OK);
  header_len = hdr.data_offset;
  memset(junk, 0x55, chunk);
  gst_c63_framer_init(&framer);
  gst_adapter_push(adapter,
                   gst_buffer_new_memdup(g_bytes_get_data(frames->pdata[0], NULL), header_len));
  while (fed < total) {
    gst_adapter_push(adapter, gst_buffer_new_memdup(junk, chunk));
    fed += chunk;
    for (;;) {
      gsize size = 0;
      gboolean key, complete;
      GstC63FramerResult r = gst_c63_framer_next(&framer, adapter, FALSE, &size, &key, &complete);

      gst_adapter_flush(adapter, size); /* what the decoder adds to the frame, or skips */
      most = MAX(most, framer.data->len);
      if (r == GST_C63_FRAMER_NEED_DATA) break;
      if (r == GST_C63_FRAMER_FRAME) {
        fail_if(complete);
        broken++;
      }
    }
  }
  /* given up on at the bound (plus one chunk), then everything is junk */
  fail_unless(broken >= 1, "the endless frame was never given up on");
  fail_unless(most <= bound + chunk, "held %" G_GSIZE_FORMAT " bytes, bound %" G_GSIZE_FORMAT, most,
              bound);
  gst_c63_framer_clear(&framer);
  g_object_unref(adapter);
  g_free(junk);
  g_ptr_array_unref(frames);
  g_bytes_unref(stream);
}
GST_END_TEST;

static Suite *framer_suite(void)
{
  Suite *s = suite_create("c63framer");
  TCase *tc = tcase_create("general");

  suite_add_tcase(s, tc);
  tcase_add_test(tc, test_framer_bounded_by_picture);
  return s;
}

GST_CHECK_MAIN(framer);
