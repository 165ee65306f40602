/* c63cudaenc: the shared encoder element tests and the conformance vectors
 * on the CUDA backend. Skipped (exit code 77) when the element is not
 * registered, i.e. no usable CUDA device was found when the plugin loaded.
 *
 * Copyright (C) 2026 gst-c63 contributors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>

#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>

#include "c63check.h"
#include "c63enc_common.h"
#include "c63layout_common.h"

#define ELEMENT "c63cudaenc"

GST_START_TEST(test_cuda_caps)
{
  c63check_enc_caps(ELEMENT);
}
GST_END_TEST;

GST_START_TEST(test_cuda_no_framerate)
{
  c63check_enc_no_framerate(ELEMENT);
}
GST_END_TEST;

GST_START_TEST(test_cuda_flags_timestamps)
{
  c63check_enc_flags_timestamps(ELEMENT);
}
GST_END_TEST;

GST_START_TEST(test_cuda_keyframe_interval_edges)
{
  c63check_enc_keyframe_interval_edges(ELEMENT);
}
GST_END_TEST;

GST_START_TEST(test_cuda_keyframe_interval_mid_stream)
{
  c63check_enc_keyframe_interval_mid_stream(ELEMENT);
}
GST_END_TEST;

GST_START_TEST(test_cuda_quality_mid_stream)
{
  c63check_enc_quality_mid_stream(ELEMENT);
}
GST_END_TEST;

GST_START_TEST(test_cuda_force_key_unit)
{
  c63check_enc_force_key_unit(ELEMENT);
}
GST_END_TEST;

GST_START_TEST(test_cuda_eos_drain)
{
  c63check_enc_eos_drain(ELEMENT);
}
GST_END_TEST;

GST_START_TEST(test_cuda_size_change)
{
  c63check_enc_size_change(ELEMENT);
}
GST_END_TEST;

GST_START_TEST(test_cuda_strided_input)
{
  c63check_enc_strided_input(ELEMENT);
}
GST_END_TEST;

GST_START_TEST(test_cuda_failing_allocator)
{
  c63check_enc_failing_allocator(ELEMENT);
}
GST_END_TEST;

GST_START_TEST(test_cuda_flush)
{
  c63check_enc_flush(ELEMENT);
}
GST_END_TEST;

GST_START_TEST(test_cuda_pool_input)
{
  /* page-locked memory, uploaded without the staging copy */
  c63check_enc_pool_input(ELEMENT, "C63PinnedMemory");
}
GST_END_TEST;

GST_START_TEST(test_cuda_conformance)
{
  c63check_enc_conformance(ELEMENT, __i__);
}
GST_END_TEST;

GST_START_TEST(test_cuda_device_id)
{
  GstElement *enc = gst_element_factory_make(ELEMENT, NULL);
  gint id = -1;

  fail_unless(enc != NULL);
  g_object_get(enc, "cuda-device-id", &id, NULL);
  fail_unless_equals_int(id, 0);
  gst_object_unref(enc);
}
GST_END_TEST;

/* A device that does not exist: a clear error when the element starts (the
 * device is set before: above READY it is kept), no crash. */
GST_START_TEST(test_cuda_bad_device)
{
  GstElement *enc = gst_element_factory_make(ELEMENT, NULL);
  GstBus *bus = gst_bus_new();

  fail_unless(enc != NULL);
  g_object_set(enc, "cuda-device-id", 4096, NULL);
  gst_element_set_bus(enc, bus);
  fail_unless_equals_int(gst_element_set_state(enc, GST_STATE_PAUSED), GST_STATE_CHANGE_FAILURE);
  c63check_expect_error(bus, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_NOT_FOUND,
                        "cuda-device-id 4096");
  gst_element_set_state(enc, GST_STATE_NULL);
  gst_element_set_bus(enc, NULL);
  gst_object_unref(bus);
  gst_object_unref(enc);
}
GST_END_TEST;

/* Pictures in CUDA memory (cudaupload, nvcodec's element, shares our
 * CUDA context) give the bytes the same pictures give in system memory,
 * I420 and NV12 alike. Skipped without cudaupload. */
GST_START_TEST(test_cuda_memory_input)
{
  GstElementFactory *up = gst_element_factory_find("cudaupload");

  if (!up) {
    GST_INFO("cudaupload not available: CUDA memory input not tested");
    return;
  }
  gst_object_unref(up);
  c63check_enc_formats(ELEMENT, "! cudaupload ! video/x-raw(memory:CUDAMemory)");
}
GST_END_TEST;

GST_START_TEST(test_cuda_nv12)
{
  c63check_enc_formats(ELEMENT, "");
}
GST_END_TEST;

GST_START_TEST(test_cuda_latency)
{
  c63check_enc_latency(ELEMENT, C63_BACKEND_CUDA);
}
GST_END_TEST;

GST_START_TEST(test_cuda_mode)
{
  c63check_enc_mode(ELEMENT);
}
GST_END_TEST;

GST_START_TEST(test_cuda_rate_control)
{
  c63check_enc_rate_control(ELEMENT);
}
GST_END_TEST;

GST_START_TEST(test_cuda_tags_threads)
{
  c63check_enc_tags_threads(ELEMENT);
}
GST_END_TEST;

/* The same layout checks as c63enc (system memory into the CUDA element). */
GST_START_TEST(test_cuda_bad_layouts)
{
  c63check_enc_bad_layouts("c63cudaenc");
}
GST_END_TEST;

/* CUDA memory whose GstVideoMeta does not fit it (rows 1,000,000 bytes
 * apart in a buffer of the element's own CUDA pool): the same stream-format
 * error as for system memory, checked on the device mapping before libc63
 * reads a row. */
GST_START_TEST(test_cuda_memory_bad_layout)
{
  GstHarness *hh = gst_harness_new(ELEMENT);
  GstBus *bus = gst_bus_new();
  GstCaps *caps = gst_caps_from_string("video/x-raw(memory:CUDAMemory), format=I420, width=64, "
                                       "height=48, framerate=25/1");
  GstQuery *query = gst_query_new_allocation(caps, TRUE);
  GstBufferPool *pool = NULL;
  GstBuffer *buf = NULL;
  GstVideoMeta *meta;
  GstVideoInfo info;

  gst_element_set_bus(hh->element, bus);
  gst_harness_set_src_caps(hh, gst_caps_ref(caps));
  fail_unless(gst_video_info_from_caps(&info, caps));
  fail_unless(gst_pad_peer_query(hh->srcpad, query));
  fail_unless(gst_query_get_n_allocation_pools(query) > 0);
  gst_query_parse_nth_allocation_pool(query, 0, &pool, NULL, NULL, NULL);
  fail_unless(pool != NULL);
  fail_unless(gst_buffer_pool_set_active(pool, TRUE));
  fail_unless_equals_int(gst_buffer_pool_acquire_buffer(pool, &buf, NULL), GST_FLOW_OK);
  meta = gst_buffer_get_video_meta(buf);
  if (!meta)
    meta = gst_buffer_add_video_meta_full(buf, GST_VIDEO_FRAME_FLAG_NONE, GST_VIDEO_FORMAT_I420, 64,
                                          48, 3, info.offset, info.stride);
  meta->stride[0] = 1000000;
  GST_BUFFER_PTS(buf) = 0;
  fail_unless_equals_int(gst_harness_push(hh, buf), GST_FLOW_ERROR);
  c63check_expect_error(bus, GST_STREAM_ERROR, GST_STREAM_ERROR_FORMAT,
                        "The input picture does not fit its buffer");
  gst_buffer_pool_set_active(pool, FALSE);
  gst_object_unref(pool);
  gst_query_unref(query);
  gst_caps_unref(caps);
  gst_element_set_bus(hh->element, NULL);
  gst_object_unref(bus);
  gst_harness_teardown(hh);
}
GST_END_TEST;

static Suite *c63cudaenc_suite(void)
{
  Suite *s = suite_create(ELEMENT);
  TCase *tc = tcase_create("general");

  suite_add_tcase(s, tc);
  tcase_add_test(tc, test_cuda_tags_threads);
  tcase_add_test(tc, test_cuda_mode);
  tcase_add_test(tc, test_cuda_rate_control);
  tcase_add_test(tc, test_cuda_latency);
  tcase_add_test(tc, test_cuda_memory_input);
  tcase_add_test(tc, test_cuda_nv12);
  tcase_add_test(tc, test_cuda_pool_input);
  tcase_add_test(tc, test_cuda_caps);
  tcase_add_test(tc, test_cuda_no_framerate);
  tcase_add_test(tc, test_cuda_flags_timestamps);
  tcase_add_test(tc, test_cuda_keyframe_interval_edges);
  tcase_add_test(tc, test_cuda_quality_mid_stream);
  tcase_add_test(tc, test_cuda_keyframe_interval_mid_stream);
  tcase_add_test(tc, test_cuda_force_key_unit);
  tcase_add_test(tc, test_cuda_eos_drain);
  tcase_add_test(tc, test_cuda_size_change);
  tcase_add_test(tc, test_cuda_strided_input);
  tcase_add_test(tc, test_cuda_bad_layouts);
  tcase_add_test(tc, test_cuda_memory_bad_layout);
  tcase_add_test(tc, test_cuda_flush);
  tcase_add_test(tc, test_cuda_failing_allocator);
  tcase_add_test(tc, test_cuda_device_id);
  tcase_add_test(tc, test_cuda_bad_device);
  tcase_add_loop_test(tc, test_cuda_conformance, 0, c63check_vectors()->len);
  return s;
}

int main(int argc, char **argv)
{
  GstElementFactory *factory;

  gst_check_init(&argc, &argv);
  factory = gst_element_factory_find(ELEMENT);
  if (!factory) {
    /* Meson counts exit code 77 as a skipped test. */
    g_print("SKIP: no CUDA device (c63cudaenc is not registered)\n");
    return 77;
  }
  gst_object_unref(factory);
  return gst_check_run_suite(c63cudaenc_suite(), ELEMENT, __FILE__);
}
