/* c63parse: splits a Codec63 byte stream into frames (see gstc63parse.h).
 *
 * Copyright (C) 2026 gst-c63 contributors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

/**
 * SECTION:element-c63parse
 * @title: c63parse
 *
 * Splits a Codec63 byte stream (a `.c63` file, or a stream cut into buffers
 * of any size) into one buffer per frame, with the picture size in the caps
 * (`video/x-c63, parsed=true, width, height, framerate`). Keyframes are
 * marked as sync points (delta frames carry `GST_BUFFER_FLAG_DELTA_UNIT`),
 * and an index of them is kept, so seeks land on keyframes. Junk between
 * frames is skipped; a frame that is cut short or whose headers are broken
 * is passed on (marked corrupted) for the decoder to report.
 *
 * The stream has no timing: the framerate comes from the upstream caps when
 * they have one, else from the #GstC63Parse:framerate property; timestamps
 * and durations follow from it, and the duration is estimated from the
 * upstream size.
 *
 * ## Example launch lines
 * |[
 * gst-launch-1.0 filesrc location=clip.c63 ! c63parse ! c63dec ! videoconvert ! autovideosink
 * ]| Play a Codec63 file at 25 frames per second.
 * |[
 * gst-launch-1.0 filesrc location=clip.c63 ! c63parse framerate=30/1 ! c63dec ! \
 *     videoconvert ! x264enc ! mp4mux ! filesink location=clip.mp4
 * ]| Transcode it to H.264 in MP4, at 30 frames per second.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstc63parse.h"

GST_DEBUG_CATEGORY_STATIC(gst_c63_parse_debug);
#define GST_CAT_DEFAULT gst_c63_parse_debug

#define DEFAULT_FPS_N 25
#define DEFAULT_FPS_D 1

/* The smallest frame: SOI, SOF0 (20 bytes), an empty SOS (4) and EOI. */
#define MIN_FRAME_BYTES 28

enum { PROP_0, PROP_FRAMERATE };

static GstStaticPadTemplate sink_template =
    GST_STATIC_PAD_TEMPLATE("sink", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS("video/x-c63"));
static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE(
    "src", GST_PAD_SRC, GST_PAD_ALWAYS,
    GST_STATIC_CAPS("video/x-c63, parsed = (boolean) true, width = (int) [ 8, 8192 ], "
                    "height = (int) [ 8, 8192 ], framerate = (fraction) [ 0/1, MAX ]"));

G_DEFINE_TYPE(GstC63Parse, gst_c63_parse, GST_TYPE_BASE_PARSE);
GST_ELEMENT_REGISTER_DEFINE(c63parse, "c63parse", GST_RANK_PRIMARY + 1, GST_TYPE_C63_PARSE);

/* Timestamps and durations follow the framerate in use. */
static void gst_c63_parse_apply_framerate(GstC63Parse *self)
{
  gst_base_parse_set_frame_rate(GST_BASE_PARSE(self), self->fps_n, self->fps_d, 0, 0);
}

static gboolean gst_c63_parse_start(GstBaseParse *parse)
{
  GstC63Parse *self = GST_C63_PARSE(parse);

  c63_frame_scanner_init(&self->scanner);
  self->width = self->height = 0;
  GST_OBJECT_LOCK(self);
  self->fps_n = self->prop_fps_n;
  self->fps_d = self->prop_fps_d;
  GST_OBJECT_UNLOCK(self);
  self->upstream_fps = FALSE;
  g_array_set_size(self->keyframes, 0);
  self->upstream_size = -1;
  self->duration = GST_CLOCK_TIME_NONE;
  gst_base_parse_set_min_frame_size(parse, MIN_FRAME_BYTES);
  gst_base_parse_set_syncable(parse, TRUE);
  gst_base_parse_set_has_timing_info(parse, FALSE);
  gst_c63_parse_apply_framerate(self);
  return TRUE;
}

static gboolean gst_c63_parse_set_src_caps(GstC63Parse *self)
{
  GstCaps *caps = gst_caps_new_simple(
      "video/x-c63", "parsed", G_TYPE_BOOLEAN, TRUE, "width", G_TYPE_INT, self->width, "height",
      G_TYPE_INT, self->height, "framerate", GST_TYPE_FRACTION, self->fps_n, self->fps_d, NULL);
  gboolean ok = gst_pad_set_caps(GST_BASE_PARSE_SRC_PAD(self), caps);

  GST_DEBUG_OBJECT(self, "src caps %" GST_PTR_FORMAT, caps);
  gst_caps_unref(caps);
  return ok;
}

static gboolean gst_c63_parse_set_sink_caps(GstBaseParse *parse, GstCaps *caps)
{
  GstC63Parse *self = GST_C63_PARSE(parse);
  GstStructure *s = gst_caps_get_structure(caps, 0);
  gint n, d;

  if (gst_structure_get_fraction(s, "framerate", &n, &d) && n > 0 && d > 0) {
    self->fps_n = n;
    self->fps_d = d;
    self->upstream_fps = TRUE;
  } else {
    GST_OBJECT_LOCK(self);
    self->fps_n = self->prop_fps_n;
    self->fps_d = self->prop_fps_d;
    GST_OBJECT_UNLOCK(self);
    self->upstream_fps = FALSE;
  }
  GST_DEBUG_OBJECT(self, "framerate %d/%d from %s", self->fps_n, self->fps_d,
                   self->upstream_fps ? "upstream caps" : "the property");
  gst_c63_parse_apply_framerate(self);
  if (self->width > 0) return gst_c63_parse_set_src_caps(self);
  return TRUE;
}

/* A keyframe at ts: remembered for snapping key-unit seeks (in stream order). */
static void gst_c63_parse_note_keyframe(GstC63Parse *self, guint64 offset, GstClockTime ts)
{
  GArray *k = self->keyframes;

  if (!GST_CLOCK_TIME_IS_VALID(ts)) return;
  gst_base_parse_add_index_entry(GST_BASE_PARSE(self), offset, ts, TRUE, FALSE);
  GST_OBJECT_LOCK(self);
  if (k->len == 0 || g_array_index(k, GstClockTime, k->len - 1) < ts) g_array_append_val(k, ts);
  GST_OBJECT_UNLOCK(self);
}

/* The duration: the time parsed so far scaled by the upstream size, in
 * whole frames, so exact once the last frame is parsed. GstBaseParse only
 * estimates after 3 s of frames; this starts with the first, and updates
 * when the estimate moves by a second or the end is reached. */
static void gst_c63_parse_update_duration(GstC63Parse *self, guint64 end_offset, GstClockTime end)
{
  GstClockTime frame = gst_util_uint64_scale(GST_SECOND, self->fps_d, self->fps_n);
  GstClockTime est;
  guint64 frames;

  if (self->upstream_size < 0 &&
      !gst_pad_peer_query_duration(GST_BASE_PARSE_SINK_PAD(self), GST_FORMAT_BYTES,
                                   &self->upstream_size))
    self->upstream_size = 0;
  if (self->upstream_size <= 0 || end_offset == 0 || !GST_CLOCK_TIME_IS_VALID(end) || frame == 0)
    return;
  frames = gst_util_uint64_scale_round(gst_util_uint64_scale(end, self->upstream_size, end_offset),
                                       1, frame);
  est = gst_util_uint64_scale(frames, GST_SECOND * self->fps_d, self->fps_n);
  if (GST_CLOCK_TIME_IS_VALID(self->duration) && end_offset < (guint64)self->upstream_size &&
      (GstClockTimeDiff)(est - self->duration) < GST_SECOND &&
      (GstClockTimeDiff)(self->duration - est) < GST_SECOND)
    return;
  if (est == self->duration) return;
  GST_DEBUG_OBJECT(self, "duration %" GST_TIME_FORMAT, GST_TIME_ARGS(est));
  self->duration = est;
  gst_base_parse_set_duration(GST_BASE_PARSE(self), GST_FORMAT_TIME, est, 0);
}

static GstFlowReturn gst_c63_parse_handle_frame(GstBaseParse *parse, GstBaseParseFrame *frame,
                                                gint *skipsize)
{
  GstC63Parse *self = GST_C63_PARSE(parse);
  gboolean at_end = GST_BASE_PARSE_DRAINING(parse);
  c63_frame_scan_result res;
  GstMapInfo map;
  int r;

  /* Called again with more bytes at the same offset, or at a new one. */
  if (frame->flags & GST_BASE_PARSE_FRAME_FLAG_NEW_FRAME) c63_frame_scanner_init(&self->scanner);
  if (!gst_buffer_map(frame->buffer, &map, GST_MAP_READ)) {
    GST_ELEMENT_ERROR(self, RESOURCE, READ, (NULL), ("cannot map the input"));
    return GST_FLOW_ERROR;
  }
  r = c63_frame_scan(&self->scanner, map.data, map.size, at_end, &res);
  gst_buffer_unmap(frame->buffer, &map);

  /* Until the frame is complete, GstBaseParse hands over all bytes again,
   * copied together; asking for a quarter more (at least 4 KiB) each time
   * keeps a stream in tiny buffers linear. */
  gst_base_parse_set_min_frame_size(
      parse, r == C63_SCAN_NEED_DATA ? (guint)MIN(map.size + MAX(map.size / 4, 4096), G_MAXUINT / 2)
                                     : MIN_FRAME_BYTES);
  if (r == C63_SCAN_NEED_DATA) {
    *skipsize = 0;
    return GST_FLOW_OK;
  }
  if (r == C63_SCAN_SKIP) {
    GST_LOG_OBJECT(self, "skipping %" G_GSIZE_FORMAT " bytes before a frame start", res.size);
    *skipsize = (gint)MIN(res.size, (gsize)G_MAXINT);
    return GST_FLOW_OK;
  }
  if (!res.complete) {
    /* Passed on for the decoder to report (and to wait for a keyframe). */
    GST_WARNING_OBJECT(
        self, "broken frame of %" G_GSIZE_FORMAT " bytes at offset %" G_GUINT64_FORMAT "%s",
        res.size, frame->offset, res.too_long ? " (no end within the bound)" : "");
    GST_BUFFER_FLAG_SET(frame->buffer, GST_BUFFER_FLAG_DELTA_UNIT);
    GST_BUFFER_FLAG_SET(frame->buffer, GST_BUFFER_FLAG_CORRUPTED);
    if (self->width == 0) { /* nothing to describe it yet */
      *skipsize = (gint)MIN(res.size, (gsize)G_MAXINT);
      return GST_FLOW_OK;
    }
    return gst_base_parse_finish_frame(parse, frame, res.size);
  }
  if (res.hdr.width != self->width || res.hdr.height != self->height ||
      !gst_pad_has_current_caps(GST_BASE_PARSE_SRC_PAD(parse))) {
    GST_INFO_OBJECT(self, "picture size %dx%d", res.hdr.width, res.hdr.height);
    self->width = res.hdr.width;
    self->height = res.hdr.height;
    if (!gst_c63_parse_set_src_caps(self)) return GST_FLOW_NOT_NEGOTIATED;
  }
  if (res.hdr.keyframe) {
    GST_BUFFER_FLAG_UNSET(frame->buffer, GST_BUFFER_FLAG_DELTA_UNIT);
    gst_c63_parse_note_keyframe(self, frame->offset, GST_BUFFER_PTS(frame->buffer));
  } else {
    GST_BUFFER_FLAG_SET(frame->buffer, GST_BUFFER_FLAG_DELTA_UNIT);
  }
  GST_BUFFER_FLAG_UNSET(frame->buffer, GST_BUFFER_FLAG_CORRUPTED);
  if (GST_BUFFER_PTS_IS_VALID(frame->buffer))
    gst_c63_parse_update_duration(self, frame->offset + res.size,
                                  GST_BUFFER_PTS(frame->buffer) +
                                      gst_util_uint64_scale(GST_SECOND, self->fps_d, self->fps_n));
  return gst_base_parse_finish_frame(parse, frame, res.size);
}

/* A key-unit seek in time starts at a keyframe already seen (the one
 * before the target, or after it with SNAP_AFTER), so the first picture
 * shown is that keyframe; a target beyond the keyframes seen so far is left
 * to GstBaseParse. */
static gboolean gst_c63_parse_src_event(GstBaseParse *parse, GstEvent *event)
{
  GstC63Parse *self = GST_C63_PARSE(parse);
  gdouble rate;
  GstFormat format;
  GstSeekFlags flags;
  GstSeekType start_type, stop_type;
  gint64 start, stop;

  if (GST_EVENT_TYPE(event) != GST_EVENT_SEEK)
    return GST_BASE_PARSE_CLASS(gst_c63_parse_parent_class)->src_event(parse, event);
  gst_event_parse_seek(event, &rate, &format, &flags, &start_type, &start, &stop_type, &stop);
  if (format == GST_FORMAT_TIME && (flags & GST_SEEK_FLAG_KEY_UNIT) && rate > 0 &&
      start_type == GST_SEEK_TYPE_SET && start >= 0) {
    GArray *k = self->keyframes;
    gint64 snapped = -1;
    guint i;

    GST_OBJECT_LOCK(self);
    if (k->len > 0 && g_array_index(k, GstClockTime, k->len - 1) >= (GstClockTime)start) {
      for (i = 0; i < k->len; i++) {
        GstClockTime ts = g_array_index(k, GstClockTime, i);
        if (ts <= (GstClockTime)start) snapped = (gint64)ts;
        if (ts >= (GstClockTime)start) {
          if ((flags & GST_SEEK_FLAG_SNAP_AFTER) && !(flags & GST_SEEK_FLAG_SNAP_BEFORE))
            snapped = (gint64)ts;
          break;
        }
      }
    }
    GST_OBJECT_UNLOCK(self);
    if (snapped >= 0 && snapped != start) {
      GstEvent *snap =
          gst_event_new_seek(rate, format, flags, start_type, snapped, stop_type, stop);

      GST_DEBUG_OBJECT(self,
                       "key-unit seek to %" GST_TIME_FORMAT " starts at keyframe %" GST_TIME_FORMAT,
                       GST_TIME_ARGS(start), GST_TIME_ARGS(snapped));
      gst_event_set_seqnum(snap, gst_event_get_seqnum(event));
      gst_event_unref(event);
      event = snap;
    }
  }
  return GST_BASE_PARSE_CLASS(gst_c63_parse_parent_class)->src_event(parse, event);
}

static void gst_c63_parse_set_property(GObject *object, guint prop_id, const GValue *value,
                                       GParamSpec *pspec)
{
  GstC63Parse *self = GST_C63_PARSE(object);

  switch (prop_id) {
  case PROP_FRAMERATE:
    GST_OBJECT_LOCK(self);
    self->prop_fps_n = gst_value_get_fraction_numerator(value);
    self->prop_fps_d = gst_value_get_fraction_denominator(value);
    GST_OBJECT_UNLOCK(self);
    break;
  default:
    G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
    break;
  }
}

static void gst_c63_parse_get_property(GObject *object, guint prop_id, GValue *value,
                                       GParamSpec *pspec)
{
  GstC63Parse *self = GST_C63_PARSE(object);

  switch (prop_id) {
  case PROP_FRAMERATE:
    GST_OBJECT_LOCK(self);
    gst_value_set_fraction(value, self->prop_fps_n, self->prop_fps_d);
    GST_OBJECT_UNLOCK(self);
    break;
  default:
    G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
    break;
  }
}

static void gst_c63_parse_finalize(GObject *object)
{
  GstC63Parse *self = GST_C63_PARSE(object);

  g_array_unref(self->keyframes);
  G_OBJECT_CLASS(gst_c63_parse_parent_class)->finalize(object);
}

static void gst_c63_parse_class_init(GstC63ParseClass *klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS(klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS(klass);
  GstBaseParseClass *parse_class = GST_BASE_PARSE_CLASS(klass);

  GST_DEBUG_CATEGORY_INIT(gst_c63_parse_debug, "c63parse", 0, "Codec63 stream parser");

  gobject_class->set_property = gst_c63_parse_set_property;
  gobject_class->get_property = gst_c63_parse_get_property;
  gobject_class->finalize = gst_c63_parse_finalize;

  /**
   * GstC63Parse:framerate:
   *
   * Frames per second when the upstream caps have no framerate (the stream
   * itself has none): any positive fraction, 25/1 by default. Read when the
   * element starts and when caps arrive.
   */
  g_object_class_install_property(
      gobject_class, PROP_FRAMERATE,
      gst_param_spec_fraction("framerate", "Framerate",
                              "Frames per second when upstream caps have none (the stream "
                              "carries no timing)",
                              1, G_MAXINT, G_MAXINT, 1, DEFAULT_FPS_N, DEFAULT_FPS_D,
                              G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));

  gst_element_class_add_static_pad_template(element_class, &sink_template);
  gst_element_class_add_static_pad_template(element_class, &src_template);
  gst_element_class_set_static_metadata(
      element_class, "Codec63 parser", "Codec/Parser/Video",
      "Splits a Codec63 (IN5050) byte stream into frames, with size, framerate and keyframes",
      "gst-c63 contributors");

  parse_class->start = GST_DEBUG_FUNCPTR(gst_c63_parse_start);
  parse_class->set_sink_caps = GST_DEBUG_FUNCPTR(gst_c63_parse_set_sink_caps);
  parse_class->handle_frame = GST_DEBUG_FUNCPTR(gst_c63_parse_handle_frame);
  parse_class->src_event = GST_DEBUG_FUNCPTR(gst_c63_parse_src_event);
}

static void gst_c63_parse_init(GstC63Parse *self)
{
  self->prop_fps_n = self->fps_n = DEFAULT_FPS_N;
  self->prop_fps_d = self->fps_d = DEFAULT_FPS_D;
  self->keyframes = g_array_new(FALSE, FALSE, sizeof(GstClockTime));
  c63_frame_scanner_init(&self->scanner);
  GST_PAD_SET_ACCEPT_INTERSECT(GST_BASE_PARSE_SINK_PAD(self));
  GST_PAD_SET_ACCEPT_TEMPLATE(GST_BASE_PARSE_SINK_PAD(self));
}
