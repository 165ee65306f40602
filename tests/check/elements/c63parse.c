/* c63parse: the same frames as libc63's splitter at any chunking, with
 * DELTA_UNIT on delta frames, timestamps and durations from the framerate
 * (upstream caps or the property), caps with the picture size; in a
 * pipeline: a duration, key-unit seeks landing on keyframes, decodebin
 * picking it, and a transcode to MP4 keeping the duration.
 *
 * Copyright (C) 2026 gst-c63 contributors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <glib/gstdio.h>
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>

#include "c63check.h"

#define FRAME_DURATION (GST_SECOND / 25)

/* Keyframes at 0, 7, 14, 21 and 28 of its 30 frames. */
#define K7_STREAM "pan_352x288_q10k7.c63"

/* Push bytes [0, len) of data in chunks of `chunk` bytes, then EOS. */
static void push_chunked(GstHarness *hh, GBytes *data, gsize len, gsize chunk)
{
  gsize pos = 0;

  while (pos < len) {
    gsize n = MIN(chunk, len - pos);
    GstBuffer *buf = gst_buffer_new_wrapped_bytes(g_bytes_new_from_bytes(data, pos, n));
    fail_unless_equals_int(gst_harness_push(hh, buf), GST_FLOW_OK);
    pos += n;
  }
  fail_unless(gst_harness_push_event(hh, gst_event_new_eos()));
}

/* A byte stream from a file or socket comes in a segment in bytes, with
 * no timestamps (the harness starts one in time). */
static void push_bytes_segment(GstHarness *hh)
{
  GstSegment seg;

  gst_segment_init(&seg, GST_FORMAT_BYTES);
  fail_unless(gst_harness_push_event(hh, gst_event_new_segment(&seg)));
}

/* The first `n` frames of the stream, pushed in `chunk`-byte pieces, come
 * out as the library splits them, timed at fps_n/fps_d. */
static void check_frames(const gchar *caps, const gchar *framerate_prop, gsize chunk, guint n,
                         gint fps_n, gint fps_d)
{
  const C63Vector *v = c63check_vector(K7_STREAM);
  GBytes *stream = c63check_read_file(v->stream);
  GPtrArray *frames = c63check_split_frames(stream);
  GBytes *head;
  GstHarness *hh = gst_harness_new("c63parse");
  GstCaps *out_caps;
  GstStructure *s;
  gboolean parsed = FALSE;
  gint w = 0, h = 0, cn = 0, cd = 0;
  guint i;

  if (framerate_prop) gst_util_set_object_arg(G_OBJECT(hh->element), "framerate", framerate_prop);
  gst_harness_set_src_caps_str(hh, caps);
  push_bytes_segment(hh);
  n = MIN(n, frames->len);
  head = c63check_join_frames(frames, 0, n);
  push_chunked(hh, head, g_bytes_get_size(head), chunk);
  fail_unless_equals_int(gst_harness_buffers_in_queue(hh), n);
  for (i = 0; i < n; i++) {
    GstBuffer *buf = gst_harness_pull(hh);
    GstClockTime pts = gst_util_uint64_scale(i, GST_SECOND * fps_d, fps_n);
    GstClockTime dur = gst_util_uint64_scale(i + 1, GST_SECOND * fps_d, fps_n) - pts;
    gboolean key = FALSE;
    gsize size;
    const guint8 *want = g_bytes_get_data(frames->pdata[i], &size);

    fail_unless(gst_buffer_memcmp(buf, 0, want, size) == 0 && gst_buffer_get_size(buf) == size,
                "frame %u differs (%" G_GSIZE_FORMAT " bytes, want %" G_GSIZE_FORMAT ")", i,
                gst_buffer_get_size(buf), size);
    c63check_frame_info(buf, NULL, NULL, &key, NULL);
    fail_unless(GST_BUFFER_FLAG_IS_SET(buf, GST_BUFFER_FLAG_DELTA_UNIT) == !key,
                "frame %u: keyframe %d, flags %x", i, key, GST_BUFFER_FLAGS(buf));
    /* From the frame's number, exactly: no rounded durations added up. */
    fail_unless(GST_BUFFER_PTS(buf) == pts && GST_BUFFER_DTS(buf) == pts,
                "frame %u at %" GST_TIME_FORMAT ", want %" GST_TIME_FORMAT, i,
                GST_TIME_ARGS(GST_BUFFER_PTS(buf)), GST_TIME_ARGS(pts));
    fail_unless_equals_uint64(GST_BUFFER_DURATION(buf), dur);
    gst_buffer_unref(buf);
  }
  out_caps = gst_pad_get_current_caps(hh->sinkpad);
  s = gst_caps_get_structure(out_caps, 0);
  fail_unless(gst_structure_has_name(s, "video/x-c63"));
  fail_unless(gst_structure_get_boolean(s, "parsed", &parsed) && parsed);
  fail_unless(gst_structure_get_int(s, "width", &w) && gst_structure_get_int(s, "height", &h));
  fail_unless(gst_structure_get_fraction(s, "framerate", &cn, &cd));
  fail_unless_equals_int(w, v->width);
  fail_unless_equals_int(h, v->height);
  fail_unless_equals_int(cn * fps_d, cd * fps_n);
  gst_caps_unref(out_caps);
  gst_harness_teardown(hh);
  g_bytes_unref(head);
  g_ptr_array_unref(frames);
  g_bytes_unref(stream);
}

GST_START_TEST(test_parse_1byte)
{
  check_frames("video/x-c63", NULL, 1, 8, 25, 1);
}
GST_END_TEST;

GST_START_TEST(test_parse_chunks)
{
  check_frames("video/x-c63", NULL, 7, G_MAXUINT, 25, 1);
  check_frames("video/x-c63", NULL, 4096, G_MAXUINT, 25, 1);
}
GST_END_TEST;

GST_START_TEST(test_parse_upstream_framerate)
{
  check_frames("video/x-c63, framerate=30/1", NULL, 4096, G_MAXUINT, 30, 1);
  /* upstream caps win over the property */
  check_frames("video/x-c63, framerate=30/1", "50/1", 4096, 10, 30, 1);
}
GST_END_TEST;

GST_START_TEST(test_parse_framerate_property)
{
  GstElement *parse = gst_element_factory_make("c63parse", NULL);
  gint n = 0, d = 0;
  GValue v = G_VALUE_INIT;

  g_value_init(&v, GST_TYPE_FRACTION);
  g_object_get_property(G_OBJECT(parse), "framerate", &v);
  n = gst_value_get_fraction_numerator(&v);
  d = gst_value_get_fraction_denominator(&v);
  fail_unless(n == 25 && d == 1, "default framerate %d/%d", n, d);
  g_value_unset(&v);
  gst_object_unref(parse);
  check_frames("video/x-c63", "30000/1001", 4096, 10, 30000, 1001);
}
GST_END_TEST;

/* Junk before and between frames is dropped. */
GST_START_TEST(test_parse_junk)
{
  static const guint8 junk[] = {0x00, 0xff, 0xd8, 0x12, 0xff, 0xff, 0xd9, 0x55};
  GBytes *stream = c63check_read_file(c63check_vector(K7_STREAM)->stream);
  GPtrArray *frames = c63check_split_frames(stream);
  GByteArray *data = g_byte_array_new();
  GBytes *all;
  GstHarness *hh = gst_harness_new("c63parse");
  guint i;

  gst_harness_set_src_caps_str(hh, "video/x-c63");
  push_bytes_segment(hh);
  for (i = 0; i < 4; i++) {
    gsize n;
    const guint8 *d = g_bytes_get_data(frames->pdata[i], &n);
    g_byte_array_append(data, junk, sizeof junk);
    g_byte_array_append(data, d, n);
  }
  all = g_byte_array_free_to_bytes(data);
  push_chunked(hh, all, g_bytes_get_size(all), 3);
  fail_unless_equals_int(gst_harness_buffers_in_queue(hh), 4);
  for (i = 0; i < 4; i++) {
    GstBuffer *buf = gst_harness_pull(hh);
    gsize n;
    const guint8 *d = g_bytes_get_data(frames->pdata[i], &n);
    fail_unless(gst_buffer_get_size(buf) == n && gst_buffer_memcmp(buf, 0, d, n) == 0);
    gst_buffer_unref(buf);
  }
  gst_harness_teardown(hh);
  g_bytes_unref(all);
  g_ptr_array_unref(frames);
  g_bytes_unref(stream);
}
GST_END_TEST;

/* ---- Pipelines ---------------------------------------------------------- */

typedef struct {
  GMutex lock;
  GArray *pts;    /* GstClockTime of each picture */
  GPtrArray *sha; /* SHA-256 hex of each picture */
} Pictures;

static void on_handoff(G_GNUC_UNUSED GstElement *sink, GstBuffer *buf, GstPad *pad, Pictures *p)
{
  GstCaps *caps = gst_pad_get_current_caps(pad);
  GstVideoInfo info;
  GstClockTime pts = GST_BUFFER_PTS(buf);

  fail_unless(caps && gst_video_info_from_caps(&info, caps));
  g_mutex_lock(&p->lock);
  g_array_append_val(p->pts, pts);
  g_ptr_array_add(p->sha, c63check_picture_sha256(&info, buf));
  g_mutex_unlock(&p->lock);
  gst_caps_unref(caps);
}

static void pictures_clear(Pictures *p)
{
  g_mutex_lock(&p->lock);
  g_array_set_size(p->pts, 0);
  g_ptr_array_set_size(p->sha, 0);
  g_mutex_unlock(&p->lock);
}

/* A pipeline ending in a fakesink named sink whose pictures go to p. */
static GstElement *pipeline_new(const gchar *description, Pictures *p)
{
  GError *err = NULL;
  GstElement *pipeline = gst_parse_launch(description, &err);
  GstElement *sink;

  fail_unless(pipeline != NULL, "'%s': %s", description, err ? err->message : "?");
  g_mutex_init(&p->lock);
  p->pts = g_array_new(FALSE, FALSE, sizeof(GstClockTime));
  p->sha = g_ptr_array_new_with_free_func(g_free);
  sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
  g_object_set(sink, "signal-handoffs", TRUE, "sync", FALSE, NULL);
  g_signal_connect(sink, "handoff", G_CALLBACK(on_handoff), p);
  gst_object_unref(sink);
  return pipeline;
}

static void pipeline_free(GstElement *pipeline)
{
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(pipeline);
}

static void pictures_free(Pictures *p)
{
  g_array_unref(p->pts);
  g_ptr_array_unref(p->sha);
  g_mutex_clear(&p->lock);
}

static void set_state_wait(GstElement *pipeline, GstState state)
{
  gst_element_set_state(pipeline, state);
  fail_unless_equals_int(gst_element_get_state(pipeline, NULL, NULL, 60 * GST_SECOND),
                         GST_STATE_CHANGE_SUCCESS);
}

/* Run until EOS (an error fails the test). */
static void wait_eos(GstElement *pipeline)
{
  GstBus *bus = gst_element_get_bus(pipeline);
  GstMessage *msg =
      gst_bus_timed_pop_filtered(bus, 120 * GST_SECOND, GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  fail_unless(msg != NULL, "no EOS");
  if (GST_MESSAGE_TYPE(msg) == GST_MESSAGE_ERROR) {
    GError *err = NULL;
    gst_message_parse_error(msg, &err, NULL);
    fail("error: %s", err->message);
  }
  gst_message_unref(msg);
  gst_object_unref(bus);
}

static gchar *describe(const gchar *middle, const C63Vector *v)
{
  return g_strdup_printf("filesrc location=\"%s\" ! %s ! fakesink name=sink", v->stream, middle);
}

/* A duration in time, frames x 40 ms; a key-unit seek into the middle
 * starts at a keyframe's timestamp with the pictures of a clean decode. */
GST_START_TEST(test_parse_pipeline_duration_seek)
{
  const C63Vector *v = c63check_vector(K7_STREAM);
  gchar *desc = describe("c63parse ! c63dec", v);
  Pictures clean, p;
  GstElement *pipeline = pipeline_new(desc, &clean);
  gint64 duration = -1;
  guint i, start, key;

  /* A clean decode, then the duration of the stream fully parsed. */
  set_state_wait(pipeline, GST_STATE_PLAYING);
  wait_eos(pipeline);
  fail_unless_equals_int(clean.sha->len, v->frames);
  for (i = 0; i < clean.pts->len; i++)
    fail_unless_equals_uint64(g_array_index(clean.pts, GstClockTime, i), i * FRAME_DURATION);
  fail_unless(gst_element_query_duration(pipeline, GST_FORMAT_TIME, &duration));
  fail_unless_equals_uint64(duration, v->frames * FRAME_DURATION);
  pipeline_free(pipeline);

  /* Prerolled only: the duration is exact (the stream was indexed). */
  pipeline = pipeline_new(desc, &p);
  set_state_wait(pipeline, GST_STATE_PAUSED);
  fail_unless(gst_element_query_duration(pipeline, GST_FORMAT_TIME, &duration));
  fail_unless_equals_uint64(duration, v->frames * FRAME_DURATION);

  /* Play through (the keyframes are indexed), then seek back into the
   * middle of a group: frame 17 lies after keyframe 14. */
  set_state_wait(pipeline, GST_STATE_PLAYING);
  wait_eos(pipeline);
  pictures_clear(&p);
  fail_unless(gst_element_seek_simple(pipeline, GST_FORMAT_TIME,
                                      GST_SEEK_FLAG_FLUSH | GST_SEEK_FLAG_KEY_UNIT,
                                      17 * FRAME_DURATION + FRAME_DURATION / 2));
  wait_eos(pipeline);
  fail_unless(p.pts->len > 0);
  start = (guint)(g_array_index(p.pts, GstClockTime, 0) / FRAME_DURATION);
  key = 14;
  fail_unless_equals_uint64(g_array_index(p.pts, GstClockTime, 0), key * FRAME_DURATION);
  fail_unless_equals_int(p.sha->len, v->frames - start);
  for (i = 0; i < p.sha->len; i++) {
    fail_unless_equals_uint64(g_array_index(p.pts, GstClockTime, i), (start + i) * FRAME_DURATION);
    fail_unless_equals_string(p.sha->pdata[i], clean.sha->pdata[start + i]);
  }

  /* A seek before anything past the start was pushed: the index knows
   * every keyframe, so it starts at keyframe 14 as well. */
  set_state_wait(pipeline, GST_STATE_NULL);
  pictures_clear(&p);
  set_state_wait(pipeline, GST_STATE_PAUSED);
  pictures_clear(&p);
  fail_unless(gst_element_seek_simple(pipeline, GST_FORMAT_TIME,
                                      GST_SEEK_FLAG_FLUSH | GST_SEEK_FLAG_KEY_UNIT,
                                      17 * FRAME_DURATION));
  set_state_wait(pipeline, GST_STATE_PLAYING);
  wait_eos(pipeline);
  fail_unless(p.sha->len > 0);
  start = (guint)(g_array_index(p.pts, GstClockTime, 0) / FRAME_DURATION);
  fail_unless(start == key, "the first picture after the seek is frame %u", start);
  fail_unless_equals_int(p.sha->len, v->frames - start);
  for (i = 0; i < p.sha->len; i++) {
    fail_unless_equals_uint64(g_array_index(p.pts, GstClockTime, i), (start + i) * FRAME_DURATION);
    fail_unless_equals_string(p.sha->pdata[i], clean.sha->pdata[start + i]);
  }

  pipeline_free(pipeline);
  pictures_free(&p);
  pictures_free(&clean);
  g_free(desc);
}
GST_END_TEST;

/* decodebin puts c63parse in front of c63dec; pictures have timestamps. */
GST_START_TEST(test_parse_decodebin)
{
  const C63Vector *v = c63check_vector(K7_STREAM);
  gchar *desc = describe("decodebin", v);
  Pictures p;
  GstElement *pipeline = pipeline_new(desc, &p);
  GstIterator *it;
  GValue item = G_VALUE_INIT;
  gboolean found = FALSE;
  guint i;

  set_state_wait(pipeline, GST_STATE_PLAYING);
  wait_eos(pipeline);
  it = gst_bin_iterate_recurse(GST_BIN(pipeline));
  while (gst_iterator_next(it, &item) == GST_ITERATOR_OK) {
    GstElement *e = g_value_get_object(&item);
    GstElementFactory *f = gst_element_get_factory(e);
    if (f && !g_strcmp0(GST_OBJECT_NAME(f), "c63parse")) found = TRUE;
    g_value_reset(&item);
  }
  g_value_unset(&item);
  gst_iterator_free(it);
  fail_unless(found, "decodebin did not use c63parse");
  fail_unless_equals_int(p.pts->len, v->frames);
  for (i = 0; i < p.pts->len; i++)
    fail_unless_equals_uint64(g_array_index(p.pts, GstClockTime, i), i * FRAME_DURATION);
  pipeline_free(pipeline);
  pictures_free(&p);
  g_free(desc);
}
GST_END_TEST;

static gboolean have_elements(const gchar *const *names)
{
  for (; *names; names++) {
    GstElementFactory *f = gst_element_factory_find(*names);
    if (!f) {
      g_print("c63parse test skipped: no %s element (gstreamer1.0-plugins-%s)\n", *names,
              !g_strcmp0(*names, "x264enc") ? "ugly" : "good");
      return FALSE;
    }
    gst_object_unref(f);
  }
  return TRUE;
}

/* The stream, `times` copies of it (30 frames each), in a file of its own. */
/* The stream of vector `name` repeated `times` times, in a new file. */
static gchar *write_repeated(gchar **dir, const gchar *name, guint times)
{
  GBytes *stream = c63check_read_file(c63check_vector(name)->stream);
  GError *err = NULL;
  GString *all = g_string_new(NULL);
  gchar *path;
  gsize n;
  const gchar *d = g_bytes_get_data(stream, &n);
  guint i;

  *dir = g_dir_make_tmp("c63parse-XXXXXX", &err);
  fail_unless(*dir != NULL);
  path = g_build_filename(*dir, "long.c63", NULL);
  for (i = 0; i < times; i++)
    g_string_append_len(all, d, (gssize)n);
  fail_unless(g_file_set_contents(path, all->str, (gssize)all->len, &err));
  g_string_free(all, TRUE);
  g_bytes_unref(stream);
  return path;
}

static gchar *write_long_stream(gchar **dir, guint times)
{
  return write_repeated(dir, K7_STREAM, times);
}

static void remove_file(gchar *path, gchar *dir)
{
  g_unlink(path);
  g_rmdir(dir);
  g_free(path);
  g_free(dir);
}

static void on_parsed(G_GNUC_UNUSED GstElement *sink, GstBuffer *buf, G_GNUC_UNUSED GstPad *pad,
                      GArray *pts)
{
  GstClockTime t = GST_BUFFER_PTS(buf);
  g_array_append_val(pts, t);
}

/* filesrc ! c63parse at 30000/1001: frame n at n x 1001/30000 s exactly, in
 * pull mode (filesrc) and in push mode (a queue in between); frame 108 is
 * at 3.603600000 s, not a sum of rounded durations. */
GST_START_TEST(test_parse_exact_timestamps)
{
  static const gchar *const middles[] = {"", "queue !"};
  gchar *dir, *path = write_long_stream(&dir, 4);
  guint m, i;

  for (m = 0; m < G_N_ELEMENTS(middles); m++) {
    gchar *desc = g_strdup_printf("filesrc location=\"%s\" ! %s c63parse framerate=30000/1001 ! "
                                  "fakesink name=sink signal-handoffs=true sync=false",
                                  path, middles[m]);
    GstElement *pipeline = gst_parse_launch(desc, NULL);
    GstElement *sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
    GArray *pts = g_array_new(FALSE, FALSE, sizeof(GstClockTime));

    g_signal_connect(sink, "handoff", G_CALLBACK(on_parsed), pts);
    set_state_wait(pipeline, GST_STATE_PLAYING);
    wait_eos(pipeline);
    fail_unless_equals_int(pts->len, 120);
    fail_unless_equals_uint64(g_array_index(pts, GstClockTime, 108), 3603600000u);
    for (i = 0; i < pts->len; i++)
      fail_unless_equals_uint64(g_array_index(pts, GstClockTime, i),
                                gst_util_uint64_scale(i, 1001 * GST_SECOND, 30000));
    g_array_unref(pts);
    gst_object_unref(sink);
    pipeline_free(pipeline);
    g_free(desc);
  }
  remove_file(path, dir);
}
GST_END_TEST;

/* Bytes filesrc reads for c63parse, in pull mode. */
static GstPadProbeReturn on_pulled(G_GNUC_UNUSED GstPad *pad, GstPadProbeInfo *info, guint64 *bytes)
{
  *bytes += gst_buffer_get_size(GST_PAD_PROBE_INFO_BUFFER(info));
  return GST_PAD_PROBE_OK;
}

/* Runs filesrc ! c63parse ! fakesink over path in pull mode: the bytes
 * filesrc read, the frames out, and (query) the duration asked for once
 * prerolled (-1 when not asked). */
static guint64 pull_stream(const gchar *path, gboolean query, guint *frames, gint64 *duration)
{
  gchar *desc = g_strdup_printf("filesrc name=src location=\"%s\" ! c63parse ! "
                                "fakesink name=sink signal-handoffs=true sync=false",
                                path);
  GstElement *pipeline = gst_parse_launch(desc, NULL);
  GstElement *src = gst_bin_get_by_name(GST_BIN(pipeline), "src");
  GstElement *sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
  GstPad *pad = gst_element_get_static_pad(src, "src");
  GArray *pts = g_array_new(FALSE, FALSE, sizeof(GstClockTime));
  guint64 pulled = 0;

  gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_PULL | GST_PAD_PROBE_TYPE_BUFFER,
                    (GstPadProbeCallback)on_pulled, &pulled, NULL);
  g_signal_connect(sink, "handoff", G_CALLBACK(on_parsed), pts);
  *duration = -1;
  if (query) {
    set_state_wait(pipeline, GST_STATE_PAUSED);
    fail_unless(gst_element_query_duration(pipeline, GST_FORMAT_TIME, duration));
  }
  set_state_wait(pipeline, GST_STATE_PLAYING);
  wait_eos(pipeline);
  *frames = pts->len;
  g_array_unref(pts);
  gst_object_unref(pad);
  gst_object_unref(src);
  gst_object_unref(sink);
  pipeline_free(pipeline);
  g_free(desc);
  return pulled;
}

/* Pull mode: the stream is read once. The index's reads are kept for the
 * frames, which are pulled (here 1080p, each larger than GstBaseParse's
 * 64 KiB reads) at their indexed size and answered from them; only
 * GstBaseParse's first read, before the index, may go upstream again. */
GST_START_TEST(test_parse_reads_frames_once)
{
  const C63Vector *v = c63check_vector("mandel_1920x1080.c63");
  GBytes *stream = c63check_read_file(v->stream);
  guint64 pulled, size = g_bytes_get_size(stream);
  guint frames;
  gint64 duration;

  pulled = pull_stream(v->stream, FALSE, &frames, &duration);
  fail_unless_equals_int(frames, 5);
  fail_unless(pulled >= size && pulled <= size + (64 << 10),
              "%" G_GUINT64_FORMAT " bytes read for a stream of %" G_GUINT64_FORMAT, pulled, size);
  g_bytes_unref(stream);
}
GST_END_TEST;

/* A stream twice the reads kept ahead (GST_C63_INDEXER_AHEAD_BYTES): the
 * index keeps pace with the frames pulled, so it is still read about once
 * (each 1 MiB read of the index starts again at the frame its last one
 * cut, up to a frame more a read); a duration query makes the index read
 * on at once, and the duration is exact. */
GST_START_TEST(test_parse_reads_long_stream_once)
{
  const C63Vector *v = c63check_vector("mandel_1920x1080.c63");
  GBytes *stream = c63check_read_file(v->stream);
  const guint copies = (guint)((32u << 20) / g_bytes_get_size(stream)) + 1;
  gchar *dir, *path = write_repeated(&dir, v->name, copies);
  guint64 pulled, size = copies * g_bytes_get_size(stream);
  guint frames;
  gint64 duration;

  pulled = pull_stream(path, FALSE, &frames, &duration);
  fail_unless_equals_int(frames, copies * v->frames);
  fail_unless(pulled >= size && pulled <= size + size / 4,
              "%" G_GUINT64_FORMAT " bytes read for a stream of %" G_GUINT64_FORMAT, pulled, size);
  pulled = pull_stream(path, TRUE, &frames, &duration);
  fail_unless_equals_int(frames, copies * v->frames);
  fail_unless_equals_uint64(duration, copies * v->frames * FRAME_DURATION);
  fail_unless(pulled >= size, "%" G_GUINT64_FORMAT " bytes read", pulled);
  remove_file(path, dir);
  g_bytes_unref(stream);
}
GST_END_TEST;

/* The index's reads (1 MiB each, where frames here are read 64 KiB at a
 * time) past its first are held until the sink has had a frame, or for
 * 20 s at most. */
typedef struct {
  GMutex lock;
  GCond cond;
  guint frames;            /* at the sink */
  guint frames_at_release; /* when the index's second read went on */
  gboolean released;
} HeldIndex;

static GstPadProbeReturn on_index_read(G_GNUC_UNUSED GstPad *pad, GstPadProbeInfo *info,
                                       HeldIndex *h)
{
  gint64 until = g_get_monotonic_time() + 20 * G_TIME_SPAN_SECOND;

  if (info->offset == 0 || gst_buffer_get_size(GST_PAD_PROBE_INFO_BUFFER(info)) < (1u << 20))
    return GST_PAD_PROBE_OK;
  g_mutex_lock(&h->lock);
  while (!h->released && h->frames == 0 && g_cond_wait_until(&h->cond, &h->lock, until))
    ;
  if (!h->released) h->frames_at_release = h->frames;
  h->released = TRUE;
  g_mutex_unlock(&h->lock);
  return GST_PAD_PROBE_OK;
}

static void on_frame_held(G_GNUC_UNUSED GstElement *sink, G_GNUC_UNUSED GstBuffer *buf,
                          G_GNUC_UNUSED GstPad *pad, HeldIndex *h)
{
  g_mutex_lock(&h->lock);
  h->frames++;
  g_cond_broadcast(&h->cond);
  g_mutex_unlock(&h->lock);
}

/* Pull mode: frames go out while the stream is still being indexed (the
 * index of a long file is not read before the first frame), and the
 * duration is exact all the same. */
GST_START_TEST(test_parse_frames_before_whole_index)
{
  gchar *dir, *path = write_long_stream(&dir, 8);
  gchar *desc = g_strdup_printf("filesrc name=src location=\"%s\" ! c63parse ! "
                                "fakesink name=sink signal-handoffs=true sync=false",
                                path);
  GstElement *pipeline = gst_parse_launch(desc, NULL);
  GstElement *src = gst_bin_get_by_name(GST_BIN(pipeline), "src");
  GstElement *sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
  GstPad *pad = gst_element_get_static_pad(src, "src");
  HeldIndex h = {0};
  gint64 duration = -1;

  g_mutex_init(&h.lock);
  g_cond_init(&h.cond);
  gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_PULL | GST_PAD_PROBE_TYPE_BUFFER,
                    (GstPadProbeCallback)on_index_read, &h, NULL);
  g_signal_connect(sink, "handoff", G_CALLBACK(on_frame_held), &h);
  set_state_wait(pipeline, GST_STATE_PLAYING);
  fail_unless(gst_element_query_duration(pipeline, GST_FORMAT_TIME, &duration));
  fail_unless_equals_uint64(duration, 8 * 30 * FRAME_DURATION);
  wait_eos(pipeline);
  fail_unless(h.released, "the index read only its first MiB");
  fail_unless(h.frames_at_release > 0, "no frame went out before the index was whole");
  fail_unless_equals_int(h.frames, 8 * 30);
  gst_object_unref(pad);
  gst_object_unref(src);
  gst_object_unref(sink);
  pipeline_free(pipeline);
  g_mutex_clear(&h.lock);
  g_cond_clear(&h.cond);
  g_free(desc);
  remove_file(path, dir);
}
GST_END_TEST;

/* The timestamps of the buffers reaching a sink, seen before the sink
 * drops those outside the segment. */
static GstPadProbeReturn on_buffer_to_sink(G_GNUC_UNUSED GstPad *pad, GstPadProbeInfo *info,
                                           GArray *pts)
{
  GstClockTime t = GST_BUFFER_PTS(GST_PAD_PROBE_INFO_BUFFER(info));
  g_array_append_val(pts, t);
  return GST_PAD_PROBE_OK;
}

/* A seek with a stop exactly on a frame's time (keyframe 21): c63parse
 * alone (a remux) pushes frames up to frame 20, none at or past the stop,
 * in pull mode and in push mode (a queue in between). */
GST_START_TEST(test_parse_segment_stop)
{
  static const gchar *const middles[] = {"c63parse", "queue ! c63parse"};
  const C63Vector *v = c63check_vector(K7_STREAM);
  const GstClockTime stop = 21 * FRAME_DURATION;
  guint m, i;

  for (m = 0; m < G_N_ELEMENTS(middles); m++) {
    gchar *desc = describe(middles[m], v);
    GstElement *pipeline = gst_parse_launch(desc, NULL);
    GstElement *sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
    GArray *pts = g_array_new(FALSE, FALSE, sizeof(GstClockTime));
    GstPad *sinkpad = gst_element_get_static_pad(sink, "sink");

    g_object_set(sink, "sync", FALSE, NULL);
    gst_pad_add_probe(sinkpad, GST_PAD_PROBE_TYPE_BUFFER, (GstPadProbeCallback)on_buffer_to_sink,
                      pts, NULL);
    gst_object_unref(sinkpad);
    set_state_wait(pipeline, GST_STATE_PAUSED);
    g_array_set_size(pts, 0); /* the picture prerolled before the seek */
    fail_unless(gst_element_seek(pipeline, 1.0, GST_FORMAT_TIME,
                                 GST_SEEK_FLAG_FLUSH | GST_SEEK_FLAG_ACCURATE, GST_SEEK_TYPE_SET,
                                 14 * FRAME_DURATION, GST_SEEK_TYPE_SET, stop));
    set_state_wait(pipeline, GST_STATE_PLAYING);
    wait_eos(pipeline);
    fail_unless(pts->len > 0);
    for (i = 0; i < pts->len; i++)
      fail_unless(g_array_index(pts, GstClockTime, i) < stop,
                  "%s: a frame at %" GST_TIME_FORMAT ", the stop is %" GST_TIME_FORMAT, middles[m],
                  GST_TIME_ARGS(g_array_index(pts, GstClockTime, i)), GST_TIME_ARGS(stop));
    fail_unless_equals_uint64(g_array_index(pts, GstClockTime, pts->len - 1), 20 * FRAME_DURATION);
    g_array_unref(pts);
    gst_object_unref(sink);
    pipeline_free(pipeline);
    g_free(desc);
  }
}
GST_END_TEST;

/* Framerates whose timestamps GStreamer cannot hold are refused with an
 * error that says so: frames under a nanosecond (2147483647/1), and frames
 * past the clock's range (1/2147483647: frame 4 ends after 292 years), in
 * pull and push mode, from the property or upstream caps. */
GST_START_TEST(test_parse_framerate_refused)
{
  static const struct {
    const gchar *middle, *text;
  } cases[] = {
      {"c63parse framerate=2147483647/1", "shorter than a nanosecond"},
      {"queue ! c63parse framerate=2147483647/1", "shorter than a nanosecond"},
      {"typefind ! capssetter caps=\"video/x-c63,framerate=2147483647/1\" ! c63parse",
       "shorter than a nanosecond"},
      {"c63parse framerate=1/2147483647", "cannot be timestamped"},
      {"queue ! c63parse framerate=1/2147483647", "cannot be timestamped"},
  };
  static const gchar *const needed[] = {"capssetter", NULL};
  const C63Vector *v = c63check_vector(K7_STREAM);
  guint i;

  if (!have_elements(needed)) return;
  for (i = 0; i < G_N_ELEMENTS(cases); i++) {
    gchar *desc = describe(cases[i].middle, v);
    GstElement *pipeline = gst_parse_launch(desc, NULL);
    GstBus *bus = gst_element_get_bus(pipeline);
    GstMessage *msg;
    GError *err = NULL;

    fail_unless(pipeline != NULL, "%s", desc);
    gst_element_set_state(pipeline, GST_STATE_PLAYING);
    msg = gst_bus_timed_pop_filtered(bus, 60 * GST_SECOND, GST_MESSAGE_ERROR | GST_MESSAGE_EOS);
    fail_unless(msg && GST_MESSAGE_TYPE(msg) == GST_MESSAGE_ERROR, "%s: no error", desc);
    gst_message_parse_error(msg, &err, NULL);
    fail_unless(g_error_matches(err, GST_STREAM_ERROR, GST_STREAM_ERROR_FORMAT) &&
                    strstr(err->message, cases[i].text) != NULL,
                "%s: %s", desc, err->message);
    g_error_free(err);
    gst_message_unref(msg);
    gst_object_unref(bus);
    pipeline_free(pipeline);
    g_free(desc);
  }
}
GST_END_TEST;

/* The framerate of upstream caps wins where filesrc could be read at
 * random: typefind ! capssetter sends no caps in pull mode, so c63parse
 * takes push mode there and keeps 30/1 (not its default 25/1). */
GST_START_TEST(test_parse_capssetter_framerate)
{
  static const gchar *const needed[] = {"capssetter", NULL};
  const C63Vector *v = c63check_vector(K7_STREAM);
  gchar *desc;
  GstElement *pipeline, *parse;
  GstPad *src;
  GstCaps *caps;
  gint n = 0, d = 0;

  if (!have_elements(needed)) return;
  desc = describe("typefind ! capssetter caps=\"video/x-c63,framerate=30/1\" ! c63parse name=parse",
                  v);
  pipeline = gst_parse_launch(desc, NULL);
  parse = gst_bin_get_by_name(GST_BIN(pipeline), "parse");
  src = gst_element_get_static_pad(parse, "src");

  set_state_wait(pipeline, GST_STATE_PAUSED);
  caps = gst_pad_get_current_caps(src);
  fail_unless(caps != NULL);
  fail_unless(gst_structure_get_fraction(gst_caps_get_structure(caps, 0), "framerate", &n, &d));
  fail_unless(n == 30 && d == 1, "framerate %d/%d, want 30/1", n, d);
  gst_caps_unref(caps);
  gst_object_unref(src);
  gst_object_unref(parse);
  pipeline_free(pipeline);
  g_free(desc);
}
GST_END_TEST;

/* filesrc ! decodebin ! videoconvert ! x264enc ! mp4mux: the MP4 lasts
 * frames / 25 s. */
GST_START_TEST(test_parse_transcode_mp4)
{
  static const gchar *const needed[] = {"x264enc", "mp4mux", "qtdemux", "videoconvert", NULL};
  const C63Vector *v = c63check_vector(K7_STREAM);
  gchar *dir, *mp4, *desc;
  GstElement *pipeline;
  GError *err = NULL;
  gint64 duration = -1;

  if (!have_elements(needed)) return;
  dir = g_dir_make_tmp("c63parse-XXXXXX", &err);
  fail_unless(dir != NULL);
  mp4 = g_build_filename(dir, "out.mp4", NULL);
  desc = g_strdup_printf("filesrc location=\"%s\" ! decodebin ! videoconvert ! "
                         "x264enc speed-preset=ultrafast ! mp4mux ! filesink location=\"%s\"",
                         v->stream, mp4);
  pipeline = gst_parse_launch(desc, &err);
  fail_unless(pipeline != NULL);
  set_state_wait(pipeline, GST_STATE_PLAYING);
  wait_eos(pipeline);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(pipeline);
  g_free(desc);

  desc = g_strdup_printf("filesrc location=\"%s\" ! qtdemux ! fakesink", mp4);
  pipeline = gst_parse_launch(desc, &err);
  fail_unless(pipeline != NULL);
  set_state_wait(pipeline, GST_STATE_PAUSED);
  fail_unless(gst_element_query_duration(pipeline, GST_FORMAT_TIME, &duration));
  fail_unless_equals_uint64(duration, gst_util_uint64_scale(v->frames, GST_SECOND, 25));
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(pipeline);
  g_unlink(mp4);
  g_rmdir(dir);
  g_free(desc);
  g_free(mp4);
  g_free(dir);
}
GST_END_TEST;

static Suite *c63parse_suite(void)
{
  Suite *s = suite_create("c63parse");
  TCase *tc = tcase_create("general");

  suite_add_tcase(s, tc);
  tcase_add_test(tc, test_parse_1byte);
  tcase_add_test(tc, test_parse_chunks);
  tcase_add_test(tc, test_parse_upstream_framerate);
  tcase_add_test(tc, test_parse_framerate_property);
  tcase_add_test(tc, test_parse_junk);
  tcase_add_test(tc, test_parse_pipeline_duration_seek);
  tcase_add_test(tc, test_parse_decodebin);
  tcase_add_test(tc, test_parse_exact_timestamps);
  tcase_add_test(tc, test_parse_reads_frames_once);
  tcase_add_test(tc, test_parse_reads_long_stream_once);
  tcase_add_test(tc, test_parse_frames_before_whole_index);
  tcase_add_test(tc, test_parse_segment_stop);
  tcase_add_test(tc, test_parse_framerate_refused);
  tcase_add_test(tc, test_parse_capssetter_framerate);
  tcase_add_test(tc, test_parse_transcode_mp4);
  return s;
}

GST_CHECK_MAIN(c63parse);
