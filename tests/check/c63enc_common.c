/* Encoder element tests shared by c63enc and c63cudaenc (see
 * c63enc_common.h).
 *
 * Copyright (C) 2026 gst-c63 contributors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "c63enc_common.h"

#include <string.h>

#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/video/video.h>

#include "c63check.h"

#define FRAME_DURATION (GST_SECOND / 25)

/* Input caps of a size, at 25 fps. */
static void set_size_caps(GstHarness *hh, gint w, gint h)
{
  gchar *caps =
      g_strdup_printf("video/x-raw, format=I420, width=%d, height=%d, framerate=25/1", w, h);
  gst_harness_set_src_caps_str(hh, caps);
  g_free(caps);
}

static GstHarness *enc_harness(const gchar *element, gint w, gint h)
{
  GstHarness *hh = gst_harness_new(element);

  set_size_caps(hh, w, h);
  return hh;
}

static GstFlowReturn push_picture(GstHarness *hh, gint w, gint h, guint n, gint pad)
{
  GstBuffer *buf = c63check_picture(w, h, n, pad);

  GST_BUFFER_PTS(buf) = n * FRAME_DURATION;
  GST_BUFFER_DURATION(buf) = FRAME_DURATION;
  return gst_harness_push(hh, buf);
}

static void push_pictures(GstHarness *hh, gint w, gint h, guint first, guint last)
{
  guint n;

  for (n = first; n < last; n++)
    fail_unless_equals_int(push_picture(hh, w, h, n, 0), GST_FLOW_OK);
}

/* End the stream: the encoder drains what it holds. An encoder may keep
 * frames in flight (c63cudaenc keeps one), so tests finish the stream
 * before pulling rather than expecting a packet for every picture pushed. */
static void finish(GstHarness *hh)
{
  fail_unless(gst_harness_push_event(hh, gst_event_new_eos()));
}

/* Pull one coded frame and check that its header and buffer flags agree. */
static gboolean pull_keyframe_flag(GstHarness *hh, GstBuffer **out)
{
  GstBuffer *buf = gst_harness_pull(hh);
  gboolean keyframe;

  fail_unless(buf != NULL);
  c63check_frame_info(buf, NULL, NULL, &keyframe, NULL);
  fail_unless_equals_int(!GST_BUFFER_FLAG_IS_SET(buf, GST_BUFFER_FLAG_DELTA_UNIT), keyframe);
  if (out)
    *out = buf;
  else
    gst_buffer_unref(buf);
  return keyframe;
}

void c63check_enc_caps(const gchar *element)
{
  GstHarness *hh = gst_harness_new(element);
  GstStructure *s;
  GstCaps *caps;
  gint w = 0, h = 0, fn = 0, fd = 0;
  gboolean parsed = FALSE;

  gst_harness_set_src_caps_str(hh, "video/x-raw, format=I420, width=66, height=38, "
                                   "framerate=30000/1001");
  fail_unless_equals_int(push_picture(hh, 66, 38, 0, 0), GST_FLOW_OK);
  finish(hh);
  gst_buffer_unref(gst_harness_pull(hh));

  caps = gst_pad_get_current_caps(hh->sinkpad);
  fail_unless(caps != NULL);
  s = gst_caps_get_structure(caps, 0);
  fail_unless(gst_structure_has_name(s, "video/x-c63"));
  fail_unless(gst_structure_get_int(s, "width", &w) && gst_structure_get_int(s, "height", &h));
  fail_unless(gst_structure_get_fraction(s, "framerate", &fn, &fd));
  fail_unless(gst_structure_get_boolean(s, "parsed", &parsed) && parsed);
  fail_unless_equals_int(w, 66);
  fail_unless_equals_int(h, 38);
  fail_unless_equals_int(fn, 30000);
  fail_unless_equals_int(fd, 1001);
  gst_caps_unref(caps);
  gst_harness_teardown(hh);
}

/* Input without a frame rate (caps with no framerate field, or 0/1, e.g.
 * from appsrc or an image source): encoded, and the output caps say 0/1. */
void c63check_enc_no_framerate(const gchar *element)
{
  static const gchar *inputs[] = {
      "video/x-raw, format=I420, width=64, height=48",
      "video/x-raw, format=I420, width=64, height=48, framerate=0/1",
  };
  guint i, n;

  for (i = 0; i < G_N_ELEMENTS(inputs); i++) {
    GstHarness *hh = gst_harness_new(element);
    GstCaps *caps;
    gint fn = -1, fd = -1;

    gst_harness_set_src_caps_str(hh, inputs[i]);
    for (n = 0; n < 3; n++) {
      GstBuffer *buf = c63check_picture(64, 48, n, 0);

      GST_BUFFER_PTS(buf) = n * FRAME_DURATION;
      fail_unless_equals_int(gst_harness_push(hh, buf), GST_FLOW_OK);
    }
    finish(hh);
    fail_unless_equals_int(gst_harness_buffers_received(hh), 3);
    for (n = 0; n < 3; n++)
      fail_unless_equals_int(pull_keyframe_flag(hh, NULL), n == 0);
    caps = gst_pad_get_current_caps(hh->sinkpad);
    fail_unless(caps != NULL);
    fail_unless(gst_structure_get_fraction(gst_caps_get_structure(caps, 0), "framerate", &fn, &fd),
                "%" GST_PTR_FORMAT, caps);
    fail_unless(fn == 0 && fd == 1, "%" GST_PTR_FORMAT, caps);
    gst_caps_unref(caps);
    gst_harness_teardown(hh);
  }
}

void c63check_enc_flags_timestamps(const gchar *element)
{
  GstHarness *hh = enc_harness(element, 64, 48);
  guint n;

  g_object_set(hh->element, "keyframe-interval", 3, NULL);
  push_pictures(hh, 64, 48, 0, 7);
  finish(hh);
  for (n = 0; n < 7; n++) {
    GstBuffer *buf;
    gboolean key = pull_keyframe_flag(hh, &buf);

    fail_unless_equals_int(key, n % 3 == 0);
    fail_unless_equals_uint64(GST_BUFFER_PTS(buf), n * FRAME_DURATION);
    fail_unless_equals_uint64(GST_BUFFER_DURATION(buf), FRAME_DURATION);
    gst_buffer_unref(buf);
  }
  gst_harness_teardown(hh);
}

void c63check_enc_keyframe_interval_edges(const gchar *element)
{
  GstHarness *hh = enc_harness(element, 32, 32);
  guint n;

  g_object_set(hh->element, "keyframe-interval", 1, NULL);
  push_pictures(hh, 32, 32, 0, 4);
  finish(hh);
  for (n = 0; n < 4; n++)
    fail_unless(pull_keyframe_flag(hh, NULL), "frame %u should be a keyframe", n);
  gst_harness_teardown(hh);

  hh = enc_harness(element, 32, 32);
  g_object_set(hh->element, "keyframe-interval", 0, NULL);
  push_pictures(hh, 32, 32, 0, 12);
  finish(hh);
  for (n = 0; n < 12; n++)
    fail_unless_equals_int(pull_keyframe_flag(hh, NULL), n == 0);
  gst_harness_teardown(hh);
}

void c63check_enc_quality_mid_stream(const gchar *element)
{
  GstHarness *hh = enc_harness(element, 48, 32);
  const guint8 q25 = (guint8)(16 / (25 / 10.0)), q50 = (guint8)(16 / (50 / 10.0));
  guint n;

  gst_harness_play(hh);
  push_pictures(hh, 48, 32, 0, 2);
  g_object_set(hh->element, "quality", 50, NULL); /* while PLAYING */
  push_pictures(hh, 48, 32, 2, 4);
  finish(hh);
  for (n = 0; n < 4; n++) {
    GstBuffer *buf = gst_harness_pull(hh);
    gboolean key;
    guint8 quant0;

    c63check_frame_info(buf, NULL, NULL, &key, &quant0);
    fail_unless_equals_int(quant0, n < 2 ? q25 : q50);
    fail_unless_equals_int(key, n == 0); /* a quality change is no keyframe */
    gst_buffer_unref(buf);
  }
  gst_harness_teardown(hh);
}

void c63check_enc_keyframe_interval_mid_stream(const gchar *element)
{
  GstHarness *hh = enc_harness(element, 32, 32);
  guint n;

  gst_harness_play(hh);
  push_pictures(hh, 32, 32, 0, 3);
  /* while PLAYING, three frames after the keyframe: the next frame is due */
  g_object_set(hh->element, "keyframe-interval", 2, NULL);
  push_pictures(hh, 32, 32, 3, 8);
  finish(hh);
  for (n = 0; n < 8; n++)
    fail_unless_equals_int(pull_keyframe_flag(hh, NULL), n == 0 || n == 3 || n == 5 || n == 7);
  gst_harness_teardown(hh);
}

void c63check_enc_force_key_unit(const gchar *element)
{
  GstHarness *hh = enc_harness(element, 32, 32);
  guint n;

  g_object_set(hh->element, "keyframe-interval", 6, NULL);
  push_pictures(hh, 32, 32, 0, 3);
  /* From downstream (upstream event) before frame 3, from upstream
   * (downstream event) before frame 8; the interval restarts each time.
   * GstVideoEncoder folds a request into one still in flight (marked on a
   * frame the encoder has not output yet), so the second comes after the
   * first keyframe is out for any encoder delay up to libc63's four
   * frames. */
  fail_unless(gst_harness_push_upstream_event(
      hh, gst_video_event_new_upstream_force_key_unit(GST_CLOCK_TIME_NONE, TRUE, 1)));
  push_pictures(hh, 32, 32, 3, 8);
  fail_unless(gst_harness_push_event(
      hh, gst_video_event_new_downstream_force_key_unit(GST_CLOCK_TIME_NONE, GST_CLOCK_TIME_NONE,
                                                        GST_CLOCK_TIME_NONE, TRUE, 2)));
  push_pictures(hh, 32, 32, 8, 16);
  finish(hh);
  for (n = 0; n < 16; n++) {
    gboolean expect = n == 0 || n == 3 || n == 8 || n == 14;
    fail_unless_equals_int(pull_keyframe_flag(hh, NULL), expect);
  }
  gst_harness_teardown(hh);
}

void c63check_enc_eos_drain(const gchar *element)
{
  GstHarness *hh = enc_harness(element, 40, 24);
  GstEvent *ev;
  gboolean saw_eos = FALSE;

  push_pictures(hh, 40, 24, 0, 10);
  fail_unless(gst_harness_push_event(hh, gst_event_new_eos()));
  fail_unless_equals_int(gst_harness_buffers_received(hh), 10);
  while ((ev = gst_harness_try_pull_event(hh))) {
    saw_eos |= GST_EVENT_TYPE(ev) == GST_EVENT_EOS;
    gst_event_unref(ev);
  }
  fail_unless(saw_eos);
  gst_harness_teardown(hh);
}

void c63check_enc_size_change(const gchar *element)
{
  GstHarness *hh = enc_harness(element, 64, 48);
  GstStructure *s;
  GstCaps *caps;
  guint n;
  gint w, h, cw = 0;

  g_object_set(hh->element, "keyframe-interval", 0, NULL);
  push_pictures(hh, 64, 48, 0, 3);
  set_size_caps(hh, 97, 81);
  push_pictures(hh, 97, 81, 3, 6);
  finish(hh);
  for (n = 0; n < 6; n++) {
    GstBuffer *buf = gst_harness_pull(hh);
    gboolean key;

    c63check_frame_info(buf, &w, &h, &key, NULL);
    fail_unless_equals_int(w, n < 3 ? 64 : 97);
    fail_unless_equals_int(h, n < 3 ? 48 : 81);
    fail_unless_equals_int(key, n == 0 || n == 3); /* restarts with a keyframe */
    gst_buffer_unref(buf);
  }
  caps = gst_pad_get_current_caps(hh->sinkpad);
  s = gst_caps_get_structure(caps, 0);
  fail_unless(gst_structure_get_int(s, "width", &cw));
  fail_unless_equals_int(cw, 97);
  gst_caps_unref(caps);
  gst_harness_teardown(hh);
}

void c63check_enc_strided_input(const gchar *element)
{
  /* Odd size: chroma 25x15 rows; pad 13 gives strides that are neither
   * the width nor aligned, and gaps between planes. */
  GstHarness *packed = enc_harness(element, 50, 30);
  GstHarness *padded = enc_harness(element, 50, 30);
  guint n;

  for (n = 0; n < 5; n++) {
    fail_unless_equals_int(push_picture(packed, 50, 30, n, 0), GST_FLOW_OK);
    fail_unless_equals_int(push_picture(padded, 50, 30, n, 13), GST_FLOW_OK);
  }
  finish(packed);
  finish(padded);
  for (n = 0; n < 5; n++) {
    GstBuffer *a = gst_harness_pull(packed), *b = gst_harness_pull(padded);
    GstMapInfo ma;

    fail_unless(gst_buffer_map(a, &ma, GST_MAP_READ));
    fail_unless(gst_buffer_get_size(b) == ma.size && gst_buffer_memcmp(b, 0, ma.data, ma.size) == 0,
                "frame %u differs with strided, padded input", n);
    gst_buffer_unmap(a, &ma);
    gst_buffer_unref(a);
    gst_buffer_unref(b);
  }
  gst_harness_teardown(packed);
  gst_harness_teardown(padded);
}

void c63check_enc_allocation(const gchar *element)
{
  GstHarness *hh = enc_harness(element, 64, 48);
  GstCaps *caps = gst_caps_from_string("video/x-raw, format=I420, width=64, height=48, "
                                       "framerate=25/1");
  GstQuery *query = gst_query_new_allocation(caps, TRUE);
  GstBufferPool *pool = NULL;
  guint size = 0;

  fail_unless(gst_pad_peer_query(hh->srcpad, query));
  fail_unless(gst_query_get_n_allocation_pools(query) > 0);
  gst_query_parse_nth_allocation_pool(query, 0, &pool, &size, NULL, NULL);
  fail_unless(pool != NULL && GST_IS_VIDEO_BUFFER_POOL(pool));
  fail_unless(size >= 64 * 48 * 3 / 2);
  fail_unless(gst_query_find_allocation_meta(query, GST_VIDEO_META_API_TYPE, NULL));
  gst_object_unref(pool);
  gst_query_unref(query);
  gst_caps_unref(caps);
  gst_harness_teardown(hh);
}

GByteArray *c63check_enc_pulled(GstHarness *hh, guint frames)
{
  GByteArray *bytes = g_byte_array_new();
  guint n;

  finish(hh);
  for (n = 0; n < frames; n++) {
    GstBuffer *buf = gst_harness_pull(hh);
    GstMapInfo map;

    fail_unless(buf != NULL);
    fail_unless(gst_buffer_map(buf, &map, GST_MAP_READ));
    g_byte_array_append(bytes, map.data, map.size);
    gst_buffer_unmap(buf, &map);
    gst_buffer_unref(buf);
  }
  return bytes;
}

void c63check_enc_pool_input(const gchar *element, const gchar *mem_type)
{
  const gint w = 64, h = 48;
  const guint frames = 6;
  GstHarness *plain = enc_harness(element, w, h), *pooled = enc_harness(element, w, h);
  GstCaps *caps = gst_caps_from_string("video/x-raw, format=I420, width=64, height=48, "
                                       "framerate=25/1");
  GstQuery *query = gst_query_new_allocation(caps, TRUE);
  GstBufferPool *pool = NULL;
  GByteArray *want, *got;
  guint n;

  push_pictures(plain, w, h, 0, frames);
  want = c63check_enc_pulled(plain, frames);

  /* The same pictures written into buffers of the pool the element proposes,
   * as an upstream element that honours it would. */
  fail_unless(gst_pad_peer_query(pooled->srcpad, query));
  fail_unless(gst_query_get_n_allocation_pools(query) > 0);
  gst_query_parse_nth_allocation_pool(query, 0, &pool, NULL, NULL, NULL);
  fail_unless(pool != NULL);
  fail_unless(gst_buffer_pool_set_active(pool, TRUE));
  for (n = 0; n < frames; n++) {
    GstBuffer *src = c63check_picture(w, h, n, 0), *buf = NULL;
    GstMapInfo in, out;

    fail_unless_equals_int(gst_buffer_pool_acquire_buffer(pool, &buf, NULL), GST_FLOW_OK);
    if (mem_type)
      fail_unless(gst_memory_is_type(gst_buffer_peek_memory(buf, 0), mem_type),
                  "pool memory is %s, not %s", gst_buffer_peek_memory(buf, 0)->allocator->mem_type,
                  mem_type);
    fail_unless(gst_buffer_map(src, &in, GST_MAP_READ));
    fail_unless(gst_buffer_map(buf, &out, GST_MAP_WRITE));
    fail_unless(out.size >= in.size);
    memcpy(out.data, in.data, in.size);
    gst_buffer_unmap(buf, &out);
    gst_buffer_unmap(src, &in);
    gst_buffer_unref(src);
    GST_BUFFER_PTS(buf) = n * FRAME_DURATION;
    GST_BUFFER_DURATION(buf) = FRAME_DURATION;
    fail_unless_equals_int(gst_harness_push(pooled, buf), GST_FLOW_OK);
  }
  got = c63check_enc_pulled(pooled, frames);
  fail_unless_equals_int(got->len, want->len);
  fail_unless(memcmp(got->data, want->data, want->len) == 0);

  g_byte_array_unref(want);
  g_byte_array_unref(got);
  gst_buffer_pool_set_active(pool, FALSE);
  gst_object_unref(pool);
  gst_query_unref(query);
  gst_caps_unref(caps);
  gst_harness_teardown(plain);
  gst_harness_teardown(pooled);
}

void c63check_enc_flush(const gchar *element)
{
  GstHarness *hh = enc_harness(element, 32, 32);
  GstSegment segment;
  guint n;

  push_pictures(hh, 32, 32, 0, 3);
  finish(hh); /* frames still in flight at a flush would be dropped */
  fail_unless(gst_harness_push_event(hh, gst_event_new_flush_start()));
  fail_unless(gst_harness_push_event(hh, gst_event_new_flush_stop(TRUE)));
  gst_segment_init(&segment, GST_FORMAT_TIME);
  fail_unless(gst_harness_push_event(hh, gst_event_new_segment(&segment)));
  push_pictures(hh, 32, 32, 3, 8);
  finish(hh);
  /* The encoder restarts after the flush: its first frame is a keyframe
   * although the interval (100) is far from due. */
  for (n = 0; n < 8; n++)
    fail_unless_equals_int(pull_keyframe_flag(hh, NULL), n == 0 || n == 3);
  gst_harness_teardown(hh);
}

/* Downstream proposes an allocator that fails: coded frames go to system
 * memory instead (as GstVideoEncoder's own fallback would), all of them. */
void c63check_enc_failing_allocator(const gchar *element)
{
  GstHarness *hh = gst_harness_new(element);
  GstBus *bus = gst_bus_new();
  GstMessage *msg;
  guint n;

  gst_element_set_bus(hh->element, bus);
  gst_harness_set_propose_allocator(hh, c63check_failing_allocator_new(), NULL);
  set_size_caps(hh, 64, 48);
  push_pictures(hh, 64, 48, 0, 3);
  finish(hh);
  for (n = 0; n < 3; n++)
    fail_unless_equals_int(pull_keyframe_flag(hh, NULL), n == 0);
  msg = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
  fail_if(msg != NULL, "unexpected error");
  gst_element_set_bus(hh->element, NULL);
  gst_object_unref(bus);
  gst_harness_teardown(hh);
}

void c63check_enc_latency(const gchar *element, c63_backend_kind backend)
{
  GstHarness *hh = enc_harness(element, 64, 48);
  c63_enc_params params;
  c63_encoder *enc = NULL;
  char msg[256];

  /* The element reports the library's delay in frames at 25 fps. */
  c63_enc_params_init(&params);
  params.width = 64;
  params.height = 48;
  params.backend = backend;
  fail_unless_equals_int(c63_encoder_new(&params, &enc, msg, sizeof msg), C63_OK);
  push_pictures(hh, 64, 48, 0, 1);
  fail_unless_equals_uint64(gst_harness_query_latency(hh),
                            (guint64)c63_encoder_delay(enc) * FRAME_DURATION);
  gst_harness_teardown(hh);

  /* without a framerate, 25 fps is assumed for the frames in flight */
  hh = gst_harness_new(element);
  gst_harness_set_src_caps_str(hh, "video/x-raw, format=I420, width=64, height=48");
  push_pictures(hh, 64, 48, 0, 1);
  fail_unless_equals_uint64(gst_harness_query_latency(hh),
                            (guint64)c63_encoder_delay(enc) * (GST_SECOND / 25));
  c63_encoder_free(enc);
  gst_harness_teardown(hh);
}

void c63check_enc_tags_threads(const gchar *element)
{
  GstElement *enc = gst_element_factory_make(element, NULL);
  GstHarness *hh;
  GstEvent *ev;
  gboolean found = FALSE;
  gint threads = -1;

  /* threads: 0 by default, any of 1..256 encodes (set before it starts:
   * above READY it is refused) */
  fail_unless(enc != NULL);
  g_object_get(enc, "threads", &threads, NULL);
  fail_unless_equals_int(threads, 0);
  g_object_set(enc, "threads", 3, NULL);
  hh = gst_harness_new_with_element(enc, "sink", "src");
  gst_object_unref(enc);
  set_size_caps(hh, 64, 48);
  g_object_get(hh->element, "threads", &threads, NULL);
  fail_unless_equals_int(threads, 3);
  push_pictures(hh, 64, 48, 0, 2);
  fail_unless(gst_harness_push_event(hh, gst_event_new_eos()));
  fail_unless_equals_int(gst_harness_buffers_received(hh), 2);
  while ((ev = gst_harness_try_pull_event(hh))) {
    if (GST_EVENT_TYPE(ev) == GST_EVENT_TAG) {
      GstTagList *tags;
      gchar *s = NULL;
      guint version = 0;
      gst_event_parse_tag(ev, &tags);
      if (gst_tag_list_get_string(tags, GST_TAG_ENCODER, &s)) {
        fail_unless_equals_string(s, element);
        g_free(s);
        fail_unless(gst_tag_list_get_string(tags, GST_TAG_VIDEO_CODEC, &s));
        fail_unless_equals_string(s, "Codec63");
        g_free(s);
        fail_unless(gst_tag_list_get_uint(tags, GST_TAG_ENCODER_VERSION, &version));
        found = TRUE;
      }
    }
    gst_event_unref(ev);
  }
  fail_unless(found, "no encoder tags");
  gst_harness_teardown(hh);
}

void c63check_enc_bad_caps(const gchar *element)
{
  GstHarness *hh = gst_harness_new(element);

  /* 4x4 is below the minimum: refused at negotiation, not at encode time. */
  gst_harness_set_src_caps_str(hh, "video/x-raw, format=I420, width=4, height=4, framerate=25/1");
  fail_unless_equals_int(push_picture(hh, 4, 4, 0, 0), GST_FLOW_NOT_NEGOTIATED);
  gst_harness_teardown(hh);
}

void c63check_enc_conformance(const gchar *element, guint vector)
{
  const C63Vector *v = g_ptr_array_index(c63check_vectors(), vector);
  gchar *desc = g_strdup_printf(
      "filesrc location=\"%s\" ! rawvideoparse width=%d height=%d format=i420 framerate=25/1 ! "
      "%s quality=%d keyframe-interval=%d search-range=%d ! fakesink name=sink",
      v->input, v->width, v->height, element, v->quality, v->keyframe_interval, v->search_range);
  GBytes *golden = c63check_read_file(v->stream);
  GChecksum *sum = g_checksum_new(G_CHECKSUM_SHA256);
  C63Run run;

  c63check_run(desc, &run);
  fail_unless(run.eos, "%s: %s", v->name, run.error);
  fail_unless_equals_int(run.buffers, v->frames);
  g_checksum_update(sum, run.bytes->data, run.bytes->len);
  fail_unless_equals_string(g_checksum_get_string(sum), v->stream_sha256);
  fail_unless(run.bytes->len == g_bytes_get_size(golden) &&
                  memcmp(run.bytes->data, g_bytes_get_data(golden, NULL), run.bytes->len) == 0,
              "%s: output differs from the reference encoder's", v->name);
  g_checksum_free(sum);
  g_bytes_unref(golden);
  c63check_run_clear(&run);
  g_free(desc);
}

/* One run of 12 synthetic 350x202 pictures in `format`, through `route`
 * (caps or elements between the source and the encoder). */
static void run_format(const gchar *element, const gchar *format, const gchar *route, C63Run *run)
{
  gchar *desc = g_strdup_printf(
      "videotestsrc num-buffers=12 pattern=ball ! video/x-raw,format=I420,width=350,height=202 ! "
      "videoconvert ! video/x-raw,format=%s %s ! %s keyframe-interval=5 ! fakesink name=sink",
      format, route, element);
  c63check_run(desc, run);
  g_free(desc);
  fail_unless(run->eos, "%s %s: %s", format, route, run->error ? run->error : "no EOS");
}

void c63check_enc_formats(const gchar *element, const gchar *route)
{
  static const gchar *formats[] = {"I420", "NV12"};
  C63Run want, got;
  guint i;

  run_format(element, "I420", "", &want);
  fail_unless(want.bytes->len > 0);
  for (i = 0; i < G_N_ELEMENTS(formats); i++) {
    run_format(element, formats[i], route, &got);
    fail_unless(got.bytes->len == want.bytes->len &&
                    memcmp(got.bytes->data, want.bytes->data, want.bytes->len) == 0,
                "%s %s: other bytes than I420 in system memory", formats[i], route);
    c63check_run_clear(&got);
  }
  c63check_run_clear(&want);
}

/* With property prop set to value, the first picture fails and the element
 * posts a settings error whose text holds what. */
static void expect_settings_error(const gchar *element, const gchar *prop, const gchar *value,
                                  const gchar *what)
{
  GstElement *enc = gst_element_factory_make(element, NULL);
  GstBus *bus = gst_bus_new();
  GstHarness *hh;

  gst_util_set_object_arg(G_OBJECT(enc), prop, value);
  hh = gst_harness_new_with_element(enc, "sink", "src");
  gst_object_unref(enc);
  gst_element_set_bus(hh->element, bus);
  set_size_caps(hh, 64, 48);
  fail_unless_equals_int(push_picture(hh, 64, 48, 0, 0), GST_FLOW_ERROR);
  c63check_expect_error(bus, GST_LIBRARY_ERROR, GST_LIBRARY_ERROR_SETTINGS, what);
  gst_element_set_bus(hh->element, NULL);
  gst_object_unref(bus);
  gst_harness_teardown(hh);
}

/* Push frames pictures through element with mode set (in NULL) and return
 * the coded bytes; with decode, every frame must decode (libc63). */
static gsize encode_with_mode(const gchar *element, const gchar *mode, guint frames,
                              gboolean decode)
{
  GstElement *enc = gst_element_factory_make(element, NULL);
  GstHarness *hh;
  c63_decoder *dec = NULL;
  gsize bytes = 0;
  guint n;

  fail_unless(enc != NULL);
  gst_util_set_object_arg(G_OBJECT(enc), "mode", mode);
  hh = gst_harness_new_with_element(enc, "sink", "src");
  gst_object_unref(enc);
  set_size_caps(hh, 64, 48);
  push_pictures(hh, 64, 48, 0, frames);
  /* in PLAYING the mode stays: the stream keeps one */
  gst_util_set_object_arg(G_OBJECT(hh->element), "mode", strcmp(mode, "rd") ? "rd" : "exact");
  {
    gint now = -1;
    g_object_get(hh->element, "mode", &now, NULL);
    fail_unless_equals_int(now, strcmp(mode, "rd") ? C63_MODE_EXACT : C63_MODE_RD);
  }
  finish(hh);
  if (decode) fail_unless_equals_int(c63_decoder_new(NULL, &dec, NULL, 0), C63_OK);
  for (n = 0; n < frames; n++) {
    GstBuffer *buf = gst_harness_pull(hh);
    GstMapInfo map;

    fail_unless(buf != NULL);
    fail_unless(gst_buffer_map(buf, &map, GST_MAP_READ));
    bytes += map.size;
    if (dec) fail_unless_equals_int(c63_decoder_decode(dec, map.data, map.size, NULL), C63_OK);
    gst_buffer_unmap(buf, &map);
    gst_buffer_unref(buf);
  }
  c63_decoder_free(dec);
  gst_harness_teardown(hh);
  return bytes;
}

void c63check_enc_mode(const gchar *element)
{
  GstElement *enc = gst_element_factory_make(element, NULL);
  GParamSpec *spec;
  gsize exact, rd;

  fail_unless(enc != NULL);
  spec = g_object_class_find_property(G_OBJECT_GET_CLASS(enc), "mode");
  fail_unless(spec != NULL && G_IS_PARAM_SPEC_ENUM(spec));
  fail_unless_equals_int(G_PARAM_SPEC_ENUM(spec)->default_value, C63_MODE_EXACT);
  fail_unless(spec->flags & GST_PARAM_MUTABLE_READY);
  gst_object_unref(enc);

  /* rd: every frame decodes, in fewer bytes than exact (on the GPU too) */
  exact = encode_with_mode(element, "exact", 8, FALSE);
  rd = encode_with_mode(element, "rd", 8, TRUE);
  fail_unless(rd < exact, "mode=rd gave %" G_GSIZE_FORMAT " bytes, exact %" G_GSIZE_FORMAT, rd,
              exact);
}

/* Encode frames pictures of w x h (framerate 25/1) with the properties
 * given as "name=value" strings; with change_at, bitrate becomes
 * new_bitrate from that picture on, in PLAYING. Returns each frame's bytes
 * in sizes (frames entries) and, where warning is given, the text of the
 * first warning the element posted (NULL if none; g_free it). */
static void encode_rated(const gchar *element, const gchar *const *props, guint frames,
                         guint change_at, guint new_bitrate, gsize *sizes, gchar **warning)
{
  GstElement *enc = gst_element_factory_make(element, NULL);
  GstBus *bus = gst_bus_new();
  GstMessage *msg;
  GstHarness *hh;
  guint n;

  fail_unless(enc != NULL);
  for (; *props; props++) {
    gchar **kv = g_strsplit(*props, "=", 2);
    gst_util_set_object_arg(G_OBJECT(enc), kv[0], kv[1]);
    g_strfreev(kv);
  }
  hh = gst_harness_new_with_element(enc, "sink", "src");
  gst_object_unref(enc);
  gst_element_set_bus(hh->element, bus);
  set_size_caps(hh, 176, 144);
  for (n = 0; n < frames; n++) {
    if (change_at && n == change_at) g_object_set(hh->element, "bitrate", new_bitrate, NULL);
    fail_unless_equals_int(push_picture(hh, 176, 144, n, 0), GST_FLOW_OK);
  }
  finish(hh);
  for (n = 0; n < frames; n++) {
    GstBuffer *buf = gst_harness_pull(hh);

    fail_unless(buf != NULL);
    sizes[n] = gst_buffer_get_size(buf);
    gst_buffer_unref(buf);
  }
  msg = gst_bus_pop_filtered(bus, GST_MESSAGE_WARNING);
  if (warning) {
    *warning = NULL;
    if (msg) {
      GError *err = NULL;
      gst_message_parse_warning(msg, &err, NULL);
      *warning = g_strdup(err->message);
      g_error_free(err);
    }
  }
  if (msg) gst_message_unref(msg);
  gst_element_set_bus(hh->element, NULL);
  gst_object_unref(bus);
  gst_harness_teardown(hh);
}

/* A target no quality reaches (1 kbit/s, below what the coarsest quality
 * spends; 1 Gbit/s, above what the finest spends) is reported once, with
 * the quality that bounds it; a reachable one is not. */
static void check_out_of_reach(const gchar *element, guint frames, gsize *sizes,
                               const gchar *reachable)
{
  static const gchar *const low[] = {"rate-control=abr", "bitrate=1", NULL};
  static const gchar *const high[] = {"rate-control=cbr", "bitrate=1000000", NULL};
  const gchar *ok[] = {"rate-control=abr", reachable, NULL};
  gchar *warning;

  encode_rated(element, low, frames, 0, 0, sizes, &warning);
  fail_unless(warning && strstr(warning, "out of reach") && strstr(warning, "quality 1,"),
              "bitrate=1: %s", warning ? warning : "no warning");
  g_free(warning);
  encode_rated(element, high, frames, 0, 0, sizes, &warning);
  fail_unless(warning && strstr(warning, "out of reach") && strstr(warning, "quality 50,"),
              "bitrate=1000000: %s", warning ? warning : "no warning");
  g_free(warning);
  encode_rated(element, ok, frames, 0, 0, sizes, &warning);
  fail_unless(warning == NULL, "%s: %s", reachable, warning);
}

static double kbit_per_s(const gsize *sizes, guint from, guint to)
{
  double bits = 0;
  for (guint i = from; i < to; i++)
    bits += 8.0 * (double)sizes[i];
  return bits * 25 / (to - from) / 1000.0;
}

void c63check_enc_rate_control(const gchar *element)
{
  GstElement *enc = gst_element_factory_make(element, NULL);
  GParamSpec *spec;
  enum { FRAMES = 100 };
  gsize sizes[FRAMES];

  fail_unless(enc != NULL);
  spec = g_object_class_find_property(G_OBJECT_GET_CLASS(enc), "rate-control");
  fail_unless(spec != NULL && G_IS_PARAM_SPEC_ENUM(spec));
  fail_unless_equals_int(G_PARAM_SPEC_ENUM(spec)->default_value, C63_RC_QUALITY);
  spec = g_object_class_find_property(G_OBJECT_GET_CLASS(enc), "bitrate");
  fail_unless(spec != NULL && (spec->flags & GST_PARAM_MUTABLE_PLAYING));
  gst_object_unref(enc);

  /* what constant quality 25 costs here, then three quarters of it */
  {
    static const gchar *const q25[] = {"quality=25", NULL};
    encode_rated(element, q25, FRAMES, 0, 0, sizes, NULL);
  }
  const guint target = (guint)(0.75 * kbit_per_s(sizes, 0, FRAMES));
  gchar *bitrate = g_strdup_printf("bitrate=%u", target);
  const gchar *abr[] = {"rate-control=abr", bitrate, NULL};
  encode_rated(element, abr, FRAMES, 0, 0, sizes, NULL);
  const double got = kbit_per_s(sizes, 0, FRAMES);
  fail_unless(got > 0.9 * target && got < 1.1 * target, "abr %u kbit/s: %.1f kbit/s", target, got);

  /* a higher bitrate set while PLAYING is followed */
  encode_rated(element, abr, FRAMES, FRAMES / 2, 2 * target, sizes, NULL);
  const double before = kbit_per_s(sizes, 0, FRAMES / 2), after = kbit_per_s(sizes, 75, FRAMES);
  fail_unless(after > 1.5 * before, "bitrate %u -> %u kbit/s in PLAYING: %.1f then %.1f kbit/s",
              target, 2 * target, before, after);
  check_out_of_reach(element, FRAMES, sizes, bitrate);
  g_free(bitrate);

  /* abr without a bitrate: an error that says what is missing */
  expect_settings_error(element, "rate-control", "abr", "bitrate");
}
