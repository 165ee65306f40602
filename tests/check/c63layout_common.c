/* Bad picture layouts into an encoder (see c63layout_common.h).
 *
 * Copyright (C) 2026 gst-c63 contributors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "c63layout_common.h"

#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/video/video.h>

#include "c63check.h"

#define W 64
#define H 48
#define I420_SIZE (W * H * 3 / 2)

/* One bad layout of a 64x48 I420 picture: a buffer of size bytes (in two
 * memories when split is not 0: the first split bytes, then the rest) and
 * a GstVideoMeta of the given format, size, planes, offsets and strides
 * (none when n_planes is 0). */
typedef struct {
  const gchar *name;
  gsize size, split;
  GstVideoFormat format;
  guint width, height, n_planes;
  gsize offset[GST_VIDEO_MAX_PLANES];
  gint stride[GST_VIDEO_MAX_PLANES];
} BadLayout;

static const BadLayout bad_layouts[] = {
    /* the issue's: Y rows 1,000,000 bytes apart in a 4608-byte buffer */
    {"huge Y stride",
     I420_SIZE,
     0,
     GST_VIDEO_FORMAT_I420,
     W,
     H,
     3,
     {0, 3072, 3840},
     {1000000, 32, 32}},
    {"Y stride past the end",
     I420_SIZE,
     0,
     GST_VIDEO_FORMAT_I420,
     W,
     H,
     3,
     {0, 3072, 3840},
     {200, 32, 32}},
    {"stride below the width",
     I420_SIZE,
     0,
     GST_VIDEO_FORMAT_I420,
     W,
     H,
     3,
     {0, 3072, 3840},
     {32, 32, 32}},
    {"negative stride",
     I420_SIZE,
     0,
     GST_VIDEO_FORMAT_I420,
     W,
     H,
     3,
     {0, 3072, 3840},
     {-64, 32, 32}},
    {"V offset past the end",
     I420_SIZE,
     0,
     GST_VIDEO_FORMAT_I420,
     W,
     H,
     3,
     {0, 3072, 100000},
     {64, 32, 32}},
    {"V plane runs past the end",
     I420_SIZE,
     0,
     GST_VIDEO_FORMAT_I420,
     W,
     H,
     3,
     {0, 3072, 4000},
     {64, 32, 32}},
    /* the packed layout one byte short: the V plane's last row is cut */
    {"V plane's last row one byte short",
     I420_SIZE - 1,
     0,
     GST_VIDEO_FORMAT_I420,
     W,
     H,
     3,
     {0, 3072, 3840},
     {64, 32, 32}},
    {"offset near G_MAXSIZE",
     I420_SIZE,
     0,
     GST_VIDEO_FORMAT_I420,
     W,
     H,
     3,
     {0, 3072, G_MAXSIZE - 8},
     {64, 32, 32}},
    {"two planes for I420",
     I420_SIZE,
     0,
     GST_VIDEO_FORMAT_I420,
     W,
     H,
     2,
     {0, 3072, 0},
     {64, 32, 0}},
    {"NV12 meta on I420 caps",
     I420_SIZE,
     0,
     GST_VIDEO_FORMAT_NV12,
     W,
     H,
     2,
     {0, 3072, 0},
     {64, 64, 0}},
    {"meta smaller than the caps",
     I420_SIZE,
     0,
     GST_VIDEO_FORMAT_I420,
     W / 2,
     H,
     3,
     {0, 3072, 3840},
     {64, 32, 32}},
    /* the Y plane fits the buffer but not the memory that holds it */
    {"Y plane across two memories",
     I420_SIZE,
     3000,
     GST_VIDEO_FORMAT_I420,
     W,
     H,
     3,
     {0, 3072, 3840},
     {64, 32, 32}},
    /* no meta: GstVideoInfo's layout needs 4608 bytes */
    {"short buffer without a meta", I420_SIZE - 1, 0, GST_VIDEO_FORMAT_I420, W, H, 0, {0}, {0}},
};

static GstBuffer *bad_layout_buffer(const BadLayout *l)
{
  GstBuffer *buf;

  if (l->split) {
    buf = gst_buffer_new_allocate(NULL, l->split, NULL);
    gst_buffer_append_memory(buf, gst_allocator_alloc(NULL, l->size - l->split, NULL));
  } else {
    buf = gst_buffer_new_allocate(NULL, l->size, NULL);
  }
  gst_buffer_memset(buf, 0, 0x80, l->size);
  if (l->n_planes)
    gst_buffer_add_video_meta_full(buf, GST_VIDEO_FRAME_FLAG_NONE, l->format, l->width, l->height,
                                   l->n_planes, (gsize *)l->offset, (gint *)l->stride);
  GST_BUFFER_PTS(buf) = 0;
  GST_BUFFER_DURATION(buf) = GST_SECOND / 25;
  return buf;
}

void c63check_enc_bad_layouts(const gchar *element)
{
  guint i;

  for (i = 0; i < G_N_ELEMENTS(bad_layouts); i++) {
    const BadLayout *l = &bad_layouts[i];
    GstHarness *hh = gst_harness_new(element);
    GstBus *bus = gst_bus_new();
    GstMessage *msg;
    GError *err = NULL;

    gst_element_set_bus(hh->element, bus);
    gst_harness_set_src_caps_str(hh, "video/x-raw, format=I420, width=64, height=48, "
                                     "framerate=25/1");
    fail_unless_equals_int(gst_harness_push(hh, bad_layout_buffer(l)), GST_FLOW_ERROR);
    msg = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
    fail_unless(msg != NULL, "%s: no error message", l->name);
    gst_message_parse_error(msg, &err, NULL);
    fail_unless(g_error_matches(err, GST_STREAM_ERROR, GST_STREAM_ERROR_FORMAT), "%s: %s", l->name,
                err->message);
    GST_INFO("%s: %s", l->name, err->message);
    g_error_free(err);
    gst_message_unref(msg);
    fail_unless_equals_int(gst_harness_buffers_received(hh), 0);
    gst_element_set_bus(hh->element, NULL);
    gst_object_unref(bus);
    gst_harness_teardown(hh);
  }
}
