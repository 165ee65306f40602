/* Shared helpers of the gst-check element tests (see c63check.h).
 *
 * Copyright (C) 2026 gst-c63 contributors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "c63check.h"

#include <string.h>

#include <gst/check/gstcheck.h>

#include "c63/c63.h"
#include "tutil.h"

#define RUN_TIMEOUT (600 * GST_SECOND)

/* The manifest is also read while building the suite, outside any test,
 * where check's assertions cannot run: tu_read_manifest prints problems,
 * and the tests then fail on the missing vectors. */
static GPtrArray *load_vectors(void)
{
  GPtrArray *vectors = g_ptr_array_new();
  tu_manifest_row rows[64];
  int n = tu_read_manifest(rows, G_N_ELEMENTS(rows));
  char path[1024];

  for (int i = 0; i < n; i++) {
    const tu_manifest_row *r = &rows[i];
    C63Vector *v = g_new0(C63Vector, 1);

    v->name = g_strdup(r->stream);
    tu_data_path(path, sizeof path, r->stream);
    v->stream = g_strdup(path);
    tu_yuv_path(path, sizeof path, r->input); /* the build tree has it unpacked */
    v->input = g_strdup(path);
    v->width = r->width;
    v->height = r->height;
    v->frames = r->frames;
    v->quality = r->quality;
    v->keyframe_interval = r->keyframe_interval;
    v->search_range = r->search_range;
    v->stream_sha256 = g_strdup(r->stream_sha256);
    v->decoded_sha256 = g_strdup(r->decoded_sha256);
    g_ptr_array_add(vectors, v);
  }
  return vectors;
}

const GPtrArray *c63check_vectors(void)
{
  static GPtrArray *vectors;

  if (!vectors) vectors = load_vectors();
  return vectors;
}

const C63Vector *c63check_vector(const gchar *stream_name)
{
  const GPtrArray *vectors = c63check_vectors();
  guint i;

  fail_unless(vectors->len > 0, "no conformance vectors in the manifest");
  for (i = 0; i < vectors->len; i++) {
    const C63Vector *v = g_ptr_array_index(vectors, i);
    if (g_str_equal(v->name, stream_name)) return v;
  }
  fail("no conformance vector %s", stream_name);
  return NULL;
}

GBytes *c63check_read_file(const gchar *path)
{
  gchar *data = NULL;
  gsize len = 0;
  GError *err = NULL;

  fail_unless(g_file_get_contents(path, &data, &len, &err), "cannot read %s: %s", path,
              err ? err->message : "?");
  return g_bytes_new_take(data, len);
}

GPtrArray *c63check_split_frames(GBytes *stream)
{
  GPtrArray *frames = g_ptr_array_new_with_free_func((GDestroyNotify)g_bytes_unref);
  gsize len, pos = 0;
  const guint8 *data = g_bytes_get_data(stream, &len);
  c63_frame_scanner sc;

  c63_frame_scanner_init(&sc);
  while (pos < len) {
    c63_frame_scan_result res;
    int st = c63_frame_scan(&sc, data + pos, len - pos, 1, &res);

    fail_unless(st == C63_SCAN_FRAME && res.complete,
                "frame %u at %" G_GSIZE_FORMAT ": not a complete frame (scan %d)", frames->len, pos,
                st);
    g_ptr_array_add(frames, g_bytes_new_from_bytes(stream, pos, res.size));
    pos += res.size;
  }
  return frames;
}

GBytes *c63check_join_frames(GPtrArray *frames, guint first, guint last)
{
  GByteArray *out = g_byte_array_new();
  guint i;

  for (i = first; i < last; i++) {
    gsize n;
    const guint8 *d = g_bytes_get_data(g_ptr_array_index(frames, i), &n);
    g_byte_array_append(out, d, n);
  }
  return g_byte_array_free_to_bytes(out);
}

void c63check_hash_video(GChecksum *sum, const GstVideoInfo *info, GstBuffer *buf)
{
  GstVideoFrame frame;
  guint c;
  gint y;

  fail_unless(gst_video_frame_map(&frame, info, buf, GST_MAP_READ));
  for (c = 0; c < GST_VIDEO_FRAME_N_COMPONENTS(&frame); c++) {
    const guint8 *d = GST_VIDEO_FRAME_COMP_DATA(&frame, c);
    gint stride = GST_VIDEO_FRAME_COMP_STRIDE(&frame, c);

    for (y = 0; y < GST_VIDEO_FRAME_COMP_HEIGHT(&frame, c); y++)
      g_checksum_update(sum, d + (gsize)y * stride, GST_VIDEO_FRAME_COMP_WIDTH(&frame, c));
  }
  gst_video_frame_unmap(&frame);
}

gchar *c63check_picture_sha256(const GstVideoInfo *info, GstBuffer *buf)
{
  GChecksum *sum = g_checksum_new(G_CHECKSUM_SHA256);
  gchar *hex;

  c63check_hash_video(sum, info, buf);
  hex = g_strdup(g_checksum_get_string(sum));
  g_checksum_free(sum);
  return hex;
}

/* fakesink's handoff, in the streaming thread. The main thread reads run
 * only after the pipeline went back to NULL. */
static void on_handoff(G_GNUC_UNUSED GstElement *sink, GstBuffer *buf, GstPad *pad,
                       gpointer user_data)
{
  C63Run *run = user_data;
  GstCaps *caps = gst_pad_get_current_caps(pad);
  gchar *str = caps ? gst_caps_to_string(caps) : g_strdup("(none)");
  GstVideoInfo info;

  run->buffers++;
  if (run->caps->len == 0 || !g_str_equal(g_ptr_array_index(run->caps, run->caps->len - 1), str))
    g_ptr_array_add(run->caps, g_strdup(str));
  if (caps && gst_structure_has_name(gst_caps_get_structure(caps, 0), "video/x-raw") &&
      gst_video_info_from_caps(&info, caps)) {
    c63check_hash_video(run->video, &info, buf);
    g_ptr_array_add(run->pictures, c63check_picture_sha256(&info, buf));
  } else {
    GstMapInfo map;
    fail_unless(gst_buffer_map(buf, &map, GST_MAP_READ));
    g_byte_array_append(run->bytes, map.data, map.size);
    gst_buffer_unmap(buf, &map);
  }
  g_free(str);
  if (caps) gst_caps_unref(caps);
}

void c63check_run(const gchar *description, C63Run *run)
{
  GError *err = NULL;
  GstElement *pipeline = gst_parse_launch(description, &err);
  GstElement *sink;
  GstBus *bus;
  gboolean done = FALSE;

  fail_unless(pipeline != NULL, "cannot build '%s': %s", description, err ? err->message : "?");
  g_clear_error(&err);
  memset(run, 0, sizeof *run);
  run->bytes = g_byte_array_new();
  run->video = g_checksum_new(G_CHECKSUM_SHA256);
  run->pictures = g_ptr_array_new_with_free_func(g_free);
  run->caps = g_ptr_array_new_with_free_func(g_free);

  sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
  fail_unless(sink != NULL, "no element named sink in '%s'", description);
  g_object_set(sink, "signal-handoffs", TRUE, "sync", FALSE, NULL);
  g_signal_connect(sink, "handoff", G_CALLBACK(on_handoff), run);
  gst_object_unref(sink);

  bus = gst_element_get_bus(pipeline);
  fail_if(gst_element_set_state(pipeline, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE &&
              gst_bus_peek(bus) == NULL,
          "'%s' failed to start without an error message", description);
  while (!done) {
    GstMessage *msg = gst_bus_timed_pop_filtered(
        bus, RUN_TIMEOUT, GST_MESSAGE_EOS | GST_MESSAGE_ERROR | GST_MESSAGE_WARNING);

    fail_unless(msg != NULL, "'%s' neither ended nor failed in time", description);
    if (GST_MESSAGE_TYPE(msg) == GST_MESSAGE_WARNING) {
      run->warnings++;
    } else if (GST_MESSAGE_TYPE(msg) == GST_MESSAGE_ERROR) {
      GError *e = NULL;
      gchar *dbg = NULL;
      gst_message_parse_error(msg, &e, &dbg);
      run->error = g_strdup_printf("%s (%s)", e->message, dbg ? dbg : "");
      GST_INFO("'%s': error %s", description, run->error);
      g_clear_error(&e);
      g_free(dbg);
      done = TRUE;
    } else {
      run->eos = TRUE;
      done = TRUE;
    }
    gst_message_unref(msg);
  }
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(bus);
  gst_object_unref(pipeline);
}

void c63check_run_clear(C63Run *run)
{
  g_byte_array_unref(run->bytes);
  g_checksum_free(run->video);
  g_ptr_array_unref(run->pictures);
  g_ptr_array_unref(run->caps);
  g_free(run->error);
  memset(run, 0, sizeof *run);
}

static guint8 picture_value(gint c, gint x, gint y, guint n)
{
  /* A diagonal gradient moving 3 px per frame plus a hashed texture, so
   * motion search, residuals and every plane get real work. */
  guint32 h = (guint32)(x * 73856093u) ^ (guint32)(y * 19349663u) ^ (guint32)(c * 83492791u);
  return (guint8)((x + 2 * y + 3 * (gint)n + 40 * c) + (h >> 28));
}

GstBuffer *c63check_picture(gint w, gint h, guint n, gint pad)
{
  GstVideoInfo info;
  gsize offset[GST_VIDEO_MAX_PLANES] = {0};
  gint stride[GST_VIDEO_MAX_PLANES] = {0};
  gsize size = 0;
  GstBuffer *buf;
  GstMapInfo map;
  gint c, x, y;

  gst_video_info_set_format(&info, GST_VIDEO_FORMAT_I420, w, h);
  for (c = 0; c < 3; c++) {
    gint pw = GST_VIDEO_INFO_COMP_WIDTH(&info, c), ph = GST_VIDEO_INFO_COMP_HEIGHT(&info, c);

    stride[c] = pad ? pw + pad : GST_VIDEO_INFO_PLANE_STRIDE(&info, c);
    offset[c] = pad ? size + pad * 3 : GST_VIDEO_INFO_PLANE_OFFSET(&info, c);
    size = offset[c] + (gsize)stride[c] * ph;
  }
  if (!pad) size = GST_VIDEO_INFO_SIZE(&info);
  buf = gst_buffer_new_allocate(NULL, size, NULL);
  fail_unless(gst_buffer_map(buf, &map, GST_MAP_WRITE));
  memset(map.data, 0xa5, size); /* padding bytes must not matter */
  for (c = 0; c < 3; c++)
    for (y = 0; y < GST_VIDEO_INFO_COMP_HEIGHT(&info, c); y++)
      for (x = 0; x < GST_VIDEO_INFO_COMP_WIDTH(&info, c); x++)
        map.data[offset[c] + (gsize)y * stride[c] + x] = picture_value(c, x, y, n);
  gst_buffer_unmap(buf, &map);
  if (pad)
    gst_buffer_add_video_meta_full(buf, GST_VIDEO_FRAME_FLAG_NONE, GST_VIDEO_FORMAT_I420, w, h, 3,
                                   offset, stride);
  return buf;
}

void c63check_frame_info(GstBuffer *coded, gint *width, gint *height, gboolean *keyframe,
                         guint8 *luma_quant0)
{
  c63_frame_header hdr;
  char msg[256] = "";
  GstMapInfo map;
  int st;

  fail_unless(gst_buffer_map(coded, &map, GST_MAP_READ));
  st = c63_parse_frame_header(map.data, map.size, &hdr, msg, sizeof msg);
  fail_unless(st == C63_OK, "coded frame does not parse: %s", msg);
  fail_unless_equals_uint64(hdr.frame_size, map.size);
  gst_buffer_unmap(coded, &map);
  if (width) *width = hdr.width;
  if (height) *height = hdr.height;
  if (keyframe) *keyframe = hdr.keyframe;
  if (luma_quant0) *luma_quant0 = hdr.quant[0][0];
}

typedef GstAllocator C63FailingAllocator;
typedef GstAllocatorClass C63FailingAllocatorClass;
G_DEFINE_TYPE(C63FailingAllocator, c63_failing_allocator, GST_TYPE_ALLOCATOR)

static GstMemory *c63_failing_allocator_alloc(G_GNUC_UNUSED GstAllocator *allocator,
                                              G_GNUC_UNUSED gsize size,
                                              G_GNUC_UNUSED GstAllocationParams *params)
{
  return NULL;
}

static void c63_failing_allocator_free(G_GNUC_UNUSED GstAllocator *allocator,
                                       G_GNUC_UNUSED GstMemory *memory)
{
}

static void c63_failing_allocator_class_init(C63FailingAllocatorClass *klass)
{
  klass->alloc = c63_failing_allocator_alloc;
  klass->free = c63_failing_allocator_free;
}

static void c63_failing_allocator_init(C63FailingAllocator *allocator)
{
  allocator->mem_type = "C63FailingMemory";
}

GstAllocator *c63check_failing_allocator_new(void)
{
  return g_object_new(c63_failing_allocator_get_type(), NULL);
}

void c63check_expect_error(GstBus *bus, GQuark domain, gint code, const gchar *text)
{
  GstMessage *msg = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
  GError *err = NULL;

  fail_unless(msg != NULL, "no error message (expected one saying \"%s\")", text);
  gst_message_parse_error(msg, &err, NULL);
  fail_unless(g_error_matches(err, domain, code), "%s", err->message);
  fail_unless(strstr(err->message, text) != NULL, "\"%s\" lacks \"%s\"", err->message, text);
  g_error_free(err);
  gst_message_unref(msg);
}
