/* GstHarness tests of c63enc: caps, flags, timestamps, properties changed
 * mid-stream, force-key-unit, EOS drain, size change, strided input,
 * allocation, input without a framerate, a failing downstream allocator,
 * the mode property.
 * c63cudaenc.c runs the shared ones on the CUDA element.
 *
 * Copyright (C) 2026 gst-c63 contributors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/video/video.h>

#include "c63check.h"
#include "c63enc_common.h"
#include "c63layout_common.h"

GST_START_TEST(test_enc_caps)
{
  c63check_enc_caps("c63enc");
}
GST_END_TEST;

GST_START_TEST(test_enc_no_framerate)
{
  c63check_enc_no_framerate("c63enc");
}
GST_END_TEST;

GST_START_TEST(test_enc_flags_timestamps)
{
  c63check_enc_flags_timestamps("c63enc");
}
GST_END_TEST;

GST_START_TEST(test_enc_keyframe_interval_edges)
{
  c63check_enc_keyframe_interval_edges("c63enc");
}
GST_END_TEST;

GST_START_TEST(test_enc_keyframe_interval_mid_stream)
{
  c63check_enc_keyframe_interval_mid_stream("c63enc");
}
GST_END_TEST;

GST_START_TEST(test_enc_quality_mid_stream)
{
  c63check_enc_quality_mid_stream("c63enc");
}
GST_END_TEST;

GST_START_TEST(test_enc_force_key_unit)
{
  c63check_enc_force_key_unit("c63enc");
}
GST_END_TEST;

GST_START_TEST(test_enc_eos_drain)
{
  c63check_enc_eos_drain("c63enc");
}
GST_END_TEST;

GST_START_TEST(test_enc_size_change)
{
  c63check_enc_size_change("c63enc");
}
GST_END_TEST;

GST_START_TEST(test_enc_strided_input)
{
  c63check_enc_strided_input("c63enc");
}
GST_END_TEST;

GST_START_TEST(test_enc_allocation)
{
  c63check_enc_allocation("c63enc");
}
GST_END_TEST;

GST_START_TEST(test_enc_failing_allocator)
{
  c63check_enc_failing_allocator("c63enc");
}
GST_END_TEST;

GST_START_TEST(test_enc_flush)
{
  c63check_enc_flush("c63enc");
}
GST_END_TEST;

GST_START_TEST(test_enc_bad_caps)
{
  c63check_enc_bad_caps("c63enc");
}
GST_END_TEST;

GST_START_TEST(test_enc_properties)
{
  GstElement *enc = gst_element_factory_make("c63enc", NULL);
  gint q, k, r;

  fail_unless(enc != NULL);
  g_object_get(enc, "quality", &q, "keyframe-interval", &k, "search-range", &r, NULL);
  fail_unless_equals_int(q, 25);
  fail_unless_equals_int(k, 100);
  fail_unless_equals_int(r, 16);
  /* The CPU element has no device to choose. */
  fail_unless(g_object_class_find_property(G_OBJECT_GET_CLASS(enc), "cuda-device-id") == NULL);
  gst_object_unref(enc);
}
GST_END_TEST;

GST_START_TEST(test_enc_mode)
{
  c63check_enc_mode("c63enc");
}
GST_END_TEST;

GST_START_TEST(test_enc_rate_control)
{
  c63check_enc_rate_control("c63enc");
}
GST_END_TEST;

GST_START_TEST(test_enc_pool_input)
{
  c63check_enc_pool_input("c63enc", NULL);
}
GST_END_TEST;

GST_START_TEST(test_enc_latency)
{
  c63check_enc_latency("c63enc", C63_BACKEND_CPU);
}
GST_END_TEST;

GST_START_TEST(test_enc_nv12)
{
  c63check_enc_formats("c63enc", "");
}
GST_END_TEST;

GST_START_TEST(test_enc_tags_threads)
{
  c63check_enc_tags_threads("c63enc");
}
GST_END_TEST;

/* GstVideoMetas that disagree with their memory or the caps: an error,
 * never a crash or a read past the buffer. */
GST_START_TEST(test_enc_bad_layouts)
{
  c63check_enc_bad_layouts("c63enc");
}
GST_END_TEST;

static Suite *c63enc_suite(void)
{
  Suite *s = suite_create("c63enc");
  TCase *tc = tcase_create("general");

  suite_add_tcase(s, tc);
  tcase_add_test(tc, test_enc_nv12);
  tcase_add_test(tc, test_enc_tags_threads);
  tcase_add_test(tc, test_enc_latency);
  tcase_add_test(tc, test_enc_pool_input);
  tcase_add_test(tc, test_enc_caps);
  tcase_add_test(tc, test_enc_no_framerate);
  tcase_add_test(tc, test_enc_flags_timestamps);
  tcase_add_test(tc, test_enc_keyframe_interval_edges);
  tcase_add_test(tc, test_enc_quality_mid_stream);
  tcase_add_test(tc, test_enc_keyframe_interval_mid_stream);
  tcase_add_test(tc, test_enc_force_key_unit);
  tcase_add_test(tc, test_enc_eos_drain);
  tcase_add_test(tc, test_enc_size_change);
  tcase_add_test(tc, test_enc_strided_input);
  tcase_add_test(tc, test_enc_bad_layouts);
  tcase_add_test(tc, test_enc_allocation);
  tcase_add_test(tc, test_enc_flush);
  tcase_add_test(tc, test_enc_failing_allocator);
  tcase_add_test(tc, test_enc_bad_caps);
  tcase_add_test(tc, test_enc_properties);
  tcase_add_test(tc, test_enc_mode);
  tcase_add_test(tc, test_enc_rate_control);
  return s;
}

GST_CHECK_MAIN(c63enc);
