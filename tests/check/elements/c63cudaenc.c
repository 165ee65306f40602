/* c63cudaenc: the shared encoder element tests and the conformance vectors
 * on the CUDA backend. Skipped (exit code 77) when the element is not
 * registered, i.e. no usable CUDA device was found when the plugin loaded.
 *
 * Copyright (C) 2026 gst-c63 contributors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdlib.h>
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

/* ---- Upstream memory: staged, registered, freed, shared ---------------- */

/* Pictures of MEM_W x MEM_H with rows MEM_PAD bytes longer than they are
 * and gaps between the planes (c63check_picture), starting MEM_PREFIX bytes
 * into their memory's block: odd addresses and strides everywhere. */
#define MEM_W 200
#define MEM_H 120
#define MEM_PAD 13
#define MEM_PREFIX 13
#define MEM_CAPS "video/x-raw, format=I420, width=200, height=120, framerate=25/1"

/* A GstMemory wrapping a block of its own (page-aligned, so that its pages
 * are its alone, or from malloc) that holds picture n. */
static GstMemory *picture_memory(guint n, gboolean aligned)
{
  GstBuffer *pic = c63check_picture(MEM_W, MEM_H, n, MEM_PAD);
  const gsize size = gst_buffer_get_size(pic), page = 4096;
  const gsize block_size =
      aligned ? (MEM_PREFIX + size + page - 1) / page * page : MEM_PREFIX + size;
  void *block = NULL;

  if (aligned)
    fail_unless(posix_memalign(&block, page, block_size) == 0);
  else
    block = malloc(block_size);
  fail_unless(block != NULL);
  gst_buffer_extract(pic, 0, (guint8 *)block + MEM_PREFIX, size);
  gst_buffer_unref(pic);
  return gst_memory_new_wrapped(0, block, block_size, MEM_PREFIX, size, block, free);
}

/* Frame n of a stream in mem (another reference to it), with the layout
 * c63check_picture gave the picture. */
static GstBuffer *picture_buffer(GstMemory *mem, guint n)
{
  GstBuffer *layout = c63check_picture(MEM_W, MEM_H, 0, MEM_PAD);
  GstVideoMeta *meta = gst_buffer_get_video_meta(layout);
  GstBuffer *buf = gst_buffer_new();

  gst_buffer_append_memory(buf, gst_memory_ref(mem));
  gst_buffer_add_video_meta_full(buf, GST_VIDEO_FRAME_FLAG_NONE, GST_VIDEO_FORMAT_I420, MEM_W,
                                 MEM_H, 3, meta->offset, meta->stride);
  gst_buffer_unref(layout);
  GST_BUFFER_PTS(buf) = n * (GST_SECOND / 25);
  GST_BUFFER_DURATION(buf) = GST_SECOND / 25;
  return buf;
}

/* Whether mem's block is page-locked: libc63 refuses to register it again
 * with another size (its own registration), or the driver refuses its
 * pages. Memory that is not is registered for the question and released. */
static gboolean memory_registered(GstMemory *mem)
{
  GstMapInfo map;
  guint8 *base;
  char msg[256] = "";
  int r;

  fail_unless(gst_memory_map(mem, &map, GST_MAP_READ));
  base = map.data - mem->offset;
  gst_memory_unmap(mem, &map);
  r = c63_picture_memory_register(base, mem->maxsize - 1, msg, sizeof msg);
  if (r == C63_OK) {
    fail_unless_equals_int(c63_picture_memory_unregister(base), C63_OK);
    return FALSE;
  }
  fail_unless_equals_int(r, C63_ERR_INVALID_ARG);
  return TRUE;
}

/* Encode frames pictures (picture seq[n] for frame n) with element, from
 * memories mems[n % n_mems] when given, else from c63check_picture's
 * buffers; the coded bytes. */
static GByteArray *encode_memories(const gchar *element, GstMemory **mems, guint n_mems,
                                   const guint *seq, guint frames)
{
  GstHarness *hh = gst_harness_new(element);
  GByteArray *bytes;
  guint n;

  gst_harness_set_src_caps_str(hh, MEM_CAPS);
  for (n = 0; n < frames; n++) {
    GstBuffer *buf = mems ? picture_buffer(mems[n % n_mems], n)
                          : c63check_picture(MEM_W, MEM_H, seq[n], MEM_PAD);

    GST_BUFFER_PTS(buf) = n * (GST_SECOND / 25);
    fail_unless_equals_int(gst_harness_push(hh, buf), GST_FLOW_OK);
  }
  bytes = c63check_enc_pulled(hh, frames);
  gst_harness_teardown(hh);
  return bytes;
}

static void assert_same_bytes(GByteArray *want, GByteArray *got, const gchar *route)
{
  fail_unless(got->len == want->len && memcmp(got->data, want->data, want->len) == 0,
              "%s: other bytes than c63enc's", route);
  g_byte_array_unref(got);
}

/* Memory a pool recycles is registered on its second picture and uploaded
 * from there; when the stream ends and the memory is freed, so is its
 * registration, and memory allocated next (malloc hands the same addresses
 * out again) is new to the element: seen once, staged, never taken for the
 * registered memory that was there. Every frame as c63enc codes it. */
GST_START_TEST(test_cuda_recycled_memory)
{
  const guint frames = 9, first[9] = {0, 1, 2, 0, 1, 2, 0, 1, 2},
              next[9] = {3, 4, 5, 3, 4, 5, 3, 4, 5};
  GByteArray *want_first = encode_memories("c63enc", NULL, 0, first, frames);
  GByteArray *want_next = encode_memories("c63enc", NULL, 0, next, frames);
  GstMemory *mems[3];
  guint k;

  for (k = 0; k < 3; k++)
    mems[k] = picture_memory(k, TRUE);
  assert_same_bytes(want_first, encode_memories(ELEMENT, mems, 3, first, frames), "recycled");
  for (k = 0; k < 3; k++) {
    fail_unless(memory_registered(mems[k]), "memory %u, seen three times, is not registered", k);
    gst_memory_unref(mems[k]);
  }
  for (k = 0; k < 3; k++) {
    mems[k] = picture_memory(3 + k, TRUE);
    fail_if(memory_registered(mems[k]), "new memory %u is registered before its first frame", k);
  }
  assert_same_bytes(want_next, encode_memories(ELEMENT, mems, 3, next, frames),
                    "new memory after registered memory was freed");
  for (k = 0; k < 3; k++)
    gst_memory_unref(mems[k]);
  g_byte_array_unref(want_first);
  g_byte_array_unref(want_next);
}
GST_END_TEST;

/* A new memory a frame, as filesrc gives: each seen once, so none is
 * registered; small blocks from malloc too. */
GST_START_TEST(test_cuda_fresh_memory)
{
  const guint frames = 8, seq[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  GByteArray *want = encode_memories("c63enc", NULL, 0, seq, frames);
  GstHarness *hh = gst_harness_new(ELEMENT);
  GByteArray *got;
  guint n;

  gst_harness_set_src_caps_str(hh, MEM_CAPS);
  for (n = 0; n < frames; n++) {
    GstMemory *mem = picture_memory(n, n % 2 == 0);

    fail_unless_equals_int(gst_harness_push(hh, picture_buffer(mem, n)), GST_FLOW_OK);
    if (n % 2 == 0) fail_if(memory_registered(mem), "memory %u, seen once, is registered", n);
    gst_memory_unref(mem);
  }
  got = c63check_enc_pulled(hh, frames);
  gst_harness_teardown(hh);
  assert_same_bytes(want, got, "fresh memory");
  g_byte_array_unref(want);
}
GST_END_TEST;

/* A buffer a tee hands to two encoders is one picture seen twice, not
 * memory that comes back: it stays staged; the same memory with the next
 * picture is registered. */
GST_START_TEST(test_cuda_teed_memory)
{
  const guint once[1] = {0}, twice[2] = {0, 0};
  GByteArray *want_once = encode_memories("c63enc", NULL, 0, once, 1);
  GByteArray *want_twice = encode_memories("c63enc", NULL, 0, twice, 2);
  GstMemory *mem = picture_memory(0, TRUE);
  GstHarness *a = gst_harness_new(ELEMENT), *b = gst_harness_new(ELEMENT);

  gst_harness_set_src_caps_str(a, MEM_CAPS);
  gst_harness_set_src_caps_str(b, MEM_CAPS);
  fail_unless_equals_int(gst_harness_push(a, picture_buffer(mem, 0)), GST_FLOW_OK);
  fail_unless_equals_int(gst_harness_push(b, picture_buffer(mem, 0)), GST_FLOW_OK);
  fail_if(memory_registered(mem), "one picture seen by two encoders registered its memory");
  fail_unless_equals_int(gst_harness_push(a, picture_buffer(mem, 1)), GST_FLOW_OK);
  fail_unless(memory_registered(mem), "memory with a second picture is not registered");
  assert_same_bytes(want_twice, c63check_enc_pulled(a, 2), "teed memory, then recycled");
  assert_same_bytes(want_once, c63check_enc_pulled(b, 1), "teed memory");
  gst_harness_teardown(a);
  gst_harness_teardown(b);
  gst_memory_unref(mem);
  g_byte_array_unref(want_once);
  g_byte_array_unref(want_twice);
}
GST_END_TEST;

/* Encoders of one process share the registrations: four elements, each in
 * its own thread, encode from the same memories at once (as after a tee),
 * some of them page-aligned and some from malloc. */
#define SHARERS 4
#define SHARED_FRAMES 12

typedef struct {
  GstMemory **mems;
  GByteArray *bytes;
} Sharer;

static gpointer share_memories(gpointer data)
{
  Sharer *s = data;
  guint seq[SHARED_FRAMES], n;

  for (n = 0; n < SHARED_FRAMES; n++)
    seq[n] = n % 4;
  s->bytes = encode_memories(ELEMENT, s->mems, 4, seq, SHARED_FRAMES);
  return NULL;
}

GST_START_TEST(test_cuda_shared_memory)
{
  guint seq[SHARED_FRAMES], n, k;
  GstMemory *mems[4];
  Sharer sharers[SHARERS];
  GThread *threads[SHARERS];
  GByteArray *want;

  for (n = 0; n < SHARED_FRAMES; n++)
    seq[n] = n % 4;
  want = encode_memories("c63enc", NULL, 0, seq, SHARED_FRAMES);
  for (k = 0; k < 4; k++)
    mems[k] = picture_memory(k, k < 2);
  for (k = 0; k < SHARERS; k++) {
    sharers[k].mems = mems;
    threads[k] = g_thread_new("sharer", share_memories, &sharers[k]);
  }
  for (k = 0; k < SHARERS; k++) {
    g_thread_join(threads[k]);
    assert_same_bytes(want, sharers[k].bytes, "memory shared by four encoders");
  }
  for (k = 0; k < 2; k++)
    fail_unless(memory_registered(mems[k]), "shared memory %u is not registered", k);
  for (k = 0; k < 4; k++)
    gst_memory_unref(mems[k]);
  g_byte_array_unref(want);
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
  tcase_add_test(tc, test_cuda_recycled_memory);
  tcase_add_test(tc, test_cuda_fresh_memory);
  tcase_add_test(tc, test_cuda_teed_memory);
  tcase_add_test(tc, test_cuda_shared_memory);
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
