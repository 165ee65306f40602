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
 * marked as sync points (delta frames carry `GST_BUFFER_FLAG_DELTA_UNIT`).
 * Junk between frames is skipped; a frame that is cut short or whose
 * headers are broken is passed on (marked corrupted) for the decoder to
 * report.
 *
 * The stream has no timing: the framerate comes from the upstream caps when
 * they have one, else from the #GstC63Parse:framerate property, and frame n
 * is at n frame durations. Where upstream can be read at random (pull mode:
 * filesrc, decodebin, playbin), the whole stream is scanned once before the
 * first frame (headers and markers only), so the duration is exact at once
 * and seeks follow GStreamer's seek flags exactly: key-unit seeks snap to a
 * keyframe, accurate seeks decode from the keyframe before, segment seeks
 * stop at their stop, and reverse playback goes keyframe group by group.
 * In push mode the duration is estimated from the upstream size and seeks
 * go upstream in bytes.
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

#include <string.h>

#include "gstc63parse.h"

GST_DEBUG_CATEGORY(gst_c63_parse_debug);
#define GST_CAT_DEFAULT gst_c63_parse_debug

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

/* Frames of under a nanosecond would share timestamps. */
static gboolean gst_c63_parse_framerate_ok(GstC63Parse *self, gint fps_n, gint fps_d)
{
  if (fps_n > 0 && fps_d > 0 && (guint64)fps_n <= (guint64)fps_d * GST_SECOND) return TRUE;
  GST_ELEMENT_ERROR(self, STREAM, FORMAT,
                    ("Framerate %d/%d cannot be timestamped: frames shorter than a nanosecond "
                     "would share timestamps. Use at most 1000000000 frames per second.",
                     fps_n, fps_d),
                    (NULL));
  return FALSE;
}

/* Frame n starts at n frame durations, computed from n (never a sum of
 * rounded durations, so 30000/1001 stays exact); GST_CLOCK_TIME_NONE past
 * the clock's range. */
static GstClockTime gst_c63_parse_frame_time(GstC63Parse *self, guint64 n)
{
  GstClockTime t =
      gst_util_uint64_scale(n, (guint64)self->fps_d * GST_SECOND, (guint64)self->fps_n);

  return t <= G_MAXINT64 ? t : GST_CLOCK_TIME_NONE;
}

/* The frame showing at time t: the last one starting at or before it. */
static guint64 gst_c63_parse_frame_number(GstC63Parse *self, GstClockTime t)
{
  guint64 n = gst_util_uint64_scale(t, (guint64)self->fps_n, (guint64)self->fps_d * GST_SECOND);

  while (n > 0 && gst_c63_parse_frame_time(self, n) > t)
    n--;
  while (gst_c63_parse_frame_time(self, n + 1) <= t)
    n++;
  return n;
}

/* Frame n's timestamps, or an error when they are out of range. */
static gboolean gst_c63_parse_stamp(GstC63Parse *self, GstBuffer *buf, guint64 n)
{
  GstClockTime t = gst_c63_parse_frame_time(self, n), end = gst_c63_parse_frame_time(self, n + 1);

  if (!GST_CLOCK_TIME_IS_VALID(end)) {
    GST_ELEMENT_ERROR(self, STREAM, FORMAT,
                      ("Frame %" G_GUINT64_FORMAT " cannot be timestamped at %d/%d frames per "
                       "second: it ends past the range of GStreamer's clock (292 years). Set a "
                       "higher framerate (upstream caps or the c63parse framerate property).",
                       n, self->fps_n, self->fps_d),
                      (NULL));
    return FALSE;
  }
  GST_BUFFER_PTS(buf) = GST_BUFFER_DTS(buf) = t;
  GST_BUFFER_DURATION(buf) = end - t;
  return TRUE;
}

/* Timestamps and durations follow the framerate in use; lead_in frames
 * before a seek's start are read (from the keyframe before it). */
static void gst_c63_parse_apply_framerate(GstC63Parse *self, guint lead_in)
{
  gst_base_parse_set_frame_rate(GST_BASE_PARSE(self), self->fps_n, self->fps_d, lead_in, 0);
}

static gboolean gst_c63_parse_start(GstBaseParse *parse)
{
  GstC63Parse *self = GST_C63_PARSE(parse);

  gst_c63_indexer_reset(&self->indexer);
  c63_frame_scanner_init(&self->scanner);
  self->width = self->height = 0;
  GST_OBJECT_LOCK(self);
  self->fps_n = self->prop_fps_n;
  self->fps_d = self->prop_fps_d;
  GST_OBJECT_UNLOCK(self);
  if (!gst_c63_parse_framerate_ok(self, self->fps_n, self->fps_d)) return FALSE;
  self->upstream_fps = FALSE;
  self->pulled_caps = FALSE;
  g_array_set_size(self->keyframes, 0);
  self->upstream_size = -1;
  self->duration = GST_CLOCK_TIME_NONE;
  self->next_frame = -1;
  gst_base_parse_set_min_frame_size(parse, MIN_FRAME_BYTES);
  gst_base_parse_set_syncable(parse, TRUE);
  gst_base_parse_set_has_timing_info(parse, FALSE);
  gst_c63_parse_apply_framerate(self, 0);
  return TRUE;
}

/* Deactivated: the pad flushes, so the indexer's read in progress fails
 * and its thread ends. */
static gboolean gst_c63_parse_stop(GstBaseParse *parse)
{
  gst_c63_indexer_reset(&GST_C63_PARSE(parse)->indexer);
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
    if (!gst_c63_parse_framerate_ok(self, n, d)) return FALSE;
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
  gst_c63_parse_apply_framerate(self, 0);
  if (self->width > 0) return gst_c63_parse_set_src_caps(self);
  return TRUE;
}

/* In pull mode no caps event comes: upstream's fixed caps (a typefind's
 * that already found the type, a source's) are asked for. */
static gboolean gst_c63_parse_pull_caps(GstC63Parse *self)
{
  GstCaps *caps = gst_pad_peer_query_caps(GST_BASE_PARSE_SINK_PAD(self), NULL);
  gboolean ok = TRUE;

  GST_DEBUG_OBJECT(self, "upstream caps %" GST_PTR_FORMAT, caps);
  if (caps && !gst_caps_is_empty(caps) && gst_caps_is_fixed(caps))
    ok = gst_c63_parse_set_sink_caps(GST_BASE_PARSE(self), caps);
  gst_clear_caps(&caps);
  return ok;
}

/* The index whole (on the indexer's thread): the exact duration, and every
 * keyframe in GstBaseParse's index (for its seeks); FALSE when the frames
 * cannot be timestamped. */
static gboolean gst_c63_parse_publish_index(const GstC63Index *index, gpointer user_data)
{
  GstC63Parse *self = user_data;
  guint i, keyframes = 0;
  GstClockTime duration;

  duration = gst_c63_parse_frame_time(self, gst_c63_index_n_frames(index));
  if (!GST_CLOCK_TIME_IS_VALID(duration)) {
    GST_ELEMENT_ERROR(self, STREAM, FORMAT,
                      ("The stream's %u frames cannot be timestamped at %d/%d frames per "
                       "second: they end past the range of GStreamer's clock (292 years). Set "
                       "a higher framerate (upstream caps or the c63parse framerate property).",
                       gst_c63_index_n_frames(index), self->fps_n, self->fps_d),
                      (NULL));
    return FALSE;
  }
  for (i = 0; i < gst_c63_index_n_frames(index); i++) {
    const GstC63IndexEntry *e = gst_c63_index_entry(index, i);
    if (!e->keyframe) continue;
    gst_base_parse_add_index_entry(GST_BASE_PARSE(self), e->offset,
                                   gst_c63_parse_frame_time(self, i), TRUE, TRUE);
    keyframes++;
  }
  GST_INFO_OBJECT(self, "indexed %u frames (%u keyframes), %" GST_TIME_FORMAT,
                  gst_c63_index_n_frames(index), keyframes, GST_TIME_ARGS(duration));
  gst_base_parse_set_duration(GST_BASE_PARSE(self), GST_FORMAT_TIME, duration, 0);
  self->duration = duration;
  return TRUE;
}

/* Pull mode: frames go by the index (timestamps from their place in it,
 * each read whole in one pull). */
static gboolean gst_c63_parse_pulls(GstC63Parse *self)
{
  return GST_PAD_MODE(GST_BASE_PARSE_SINK_PAD(self)) == GST_PAD_MODE_PULL;
}

/* Pull mode: the frame at offset indexed, and what the index knows of it
 * (the indexer started with the first frame, upstream's framerate known
 * before). */
static GstFlowReturn gst_c63_parse_wait_index(GstC63Parse *self, guint64 offset,
                                              GstC63IndexedFrame *indexed)
{
  if (!self->pulled_caps) {
    if (!self->upstream_fps && !gst_c63_parse_pull_caps(self)) return GST_FLOW_NOT_NEGOTIATED;
    self->pulled_caps = TRUE;
  }
  return gst_c63_indexer_wait_past(&self->indexer, offset, indexed);
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

/* Push mode: the duration is the time parsed so far scaled by the upstream
 * size, in whole frames, so exact once the last frame is parsed. GstBaseParse
 * only estimates after 3 s of frames; this starts with the first, and
 * updates when the estimate moves by a second or the end is reached. */
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
  est = gst_c63_parse_frame_time(self, frames);
  if (!GST_CLOCK_TIME_IS_VALID(est)) return;
  if (GST_CLOCK_TIME_IS_VALID(self->duration) && end_offset < (guint64)self->upstream_size &&
      (GstClockTimeDiff)(est - self->duration) < GST_SECOND &&
      (GstClockTimeDiff)(self->duration - est) < GST_SECOND)
    return;
  if (est == self->duration) return;
  GST_DEBUG_OBJECT(self, "duration %" GST_TIME_FORMAT, GST_TIME_ARGS(est));
  self->duration = est;
  gst_base_parse_set_duration(GST_BASE_PARSE(self), GST_FORMAT_TIME, est, 0);
}

/* Pull mode: frame timestamps from the frame's place in the index (in
 * push mode: in pre_push_frame). */
static gboolean gst_c63_parse_timestamp(GstC63Parse *self, GstBaseParseFrame *frame,
                                        const GstC63IndexedFrame *indexed)
{
  return indexed->number < 0 || gst_c63_parse_stamp(self, frame->buffer, (guint64)indexed->number);
}

/* The bytes to ask for after a scan that found a frame (or bytes to skip)
 * at offset: the next frame whole where the index knows its size. */
static guint gst_c63_parse_next_min_size(GstC63Parse *self, guint64 offset,
                                         const c63_frame_scan_result *res)
{
  GstC63IndexedFrame next = {-1, 0, 0};

  if (gst_c63_parse_pulls(self)) gst_c63_indexer_frame(&self->indexer, offset + res->size, &next);
  return next.size > MIN_FRAME_BYTES && next.size < G_MAXUINT / 2 ? (guint)next.size
                                                                  : MIN_FRAME_BYTES;
}

/* A frame the index scanned complete needs no second scan: its headers
 * are read again (the bytes may have changed since), and it is taken when
 * it still starts and ends as a frame; FALSE: scan it. */
static gboolean gst_c63_parse_indexed_frame(const GstC63IndexedFrame *indexed,
                                            const GstMapInfo *map, c63_frame_scan_result *res)
{
  guint64 size = indexed->complete;

  if (size < 4 || size > map->size) return FALSE;
  if (map->data[size - 2] != 0xff || map->data[size - 1] != 0xd9) return FALSE;
  memset(res, 0, sizeof(*res));
  if (c63_parse_frame_headers_only(map->data, (size_t)size, &res->hdr, NULL, 0) != C63_OK)
    return FALSE;
  res->size = (size_t)size;
  res->complete = 1;
  return TRUE;
}

static GstFlowReturn gst_c63_parse_handle_frame(GstBaseParse *parse, GstBaseParseFrame *frame,
                                                gint *skipsize)
{
  GstC63Parse *self = GST_C63_PARSE(parse);
  gboolean at_end = GST_BASE_PARSE_DRAINING(parse);
  GstC63IndexedFrame indexed = {-1, 0, 0};
  c63_frame_scan_result res;
  GstMapInfo map;
  int r;

  if (gst_c63_parse_pulls(self)) {
    GstFlowReturn ret = gst_c63_parse_wait_index(self, frame->offset, &indexed);
    if (ret != GST_FLOW_OK) return ret;
  }
  /* Called again with more bytes at the same offset, or at a new one. */
  if (frame->flags & GST_BASE_PARSE_FRAME_FLAG_NEW_FRAME) c63_frame_scanner_init(&self->scanner);
  /* Indexed, the frame's size is known: asked for whole, it is pulled in
   * one read instead of growing reads of the same bytes. */
  if (indexed.size > gst_buffer_get_size(frame->buffer) && indexed.size < G_MAXUINT / 2 &&
      !at_end) {
    gst_base_parse_set_min_frame_size(parse, (guint)indexed.size);
    *skipsize = 0;
    return GST_FLOW_OK;
  }
  if (!gst_buffer_map(frame->buffer, &map, GST_MAP_READ)) {
    GST_ELEMENT_ERROR(self, RESOURCE, READ, (NULL), ("cannot map the input"));
    return GST_FLOW_ERROR;
  }
  if (!gst_c63_parse_indexed_frame(&indexed, &map, &res)) {
    r = c63_frame_scan(&self->scanner, map.data, map.size, at_end, &res);
  } else {
    r = C63_SCAN_FRAME;
    c63_frame_scanner_init(&self->scanner);
  }
  gst_buffer_unmap(frame->buffer, &map);

  /* Until the frame is complete, GstBaseParse hands over all bytes again,
   * copied together; asking for a quarter more (at least 4 KiB) each time
   * keeps a stream in tiny buffers linear. */
  gst_base_parse_set_min_frame_size(
      parse, r == C63_SCAN_NEED_DATA ? (guint)MIN(map.size + MAX(map.size / 4, 4096), G_MAXUINT / 2)
                                     : gst_c63_parse_next_min_size(self, frame->offset, &res));
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
    if (!gst_c63_parse_timestamp(self, frame, &indexed)) return GST_FLOW_ERROR;
    return gst_base_parse_finish_frame(parse, frame, res.size);
  }
  if (res.hdr.width != self->width || res.hdr.height != self->height ||
      !gst_pad_has_current_caps(GST_BASE_PARSE_SRC_PAD(parse))) {
    GST_INFO_OBJECT(self, "picture size %dx%d", res.hdr.width, res.hdr.height);
    self->width = res.hdr.width;
    self->height = res.hdr.height;
    if (!gst_c63_parse_set_src_caps(self)) return GST_FLOW_NOT_NEGOTIATED;
  }
  if (res.hdr.keyframe)
    GST_BUFFER_FLAG_UNSET(frame->buffer, GST_BUFFER_FLAG_DELTA_UNIT);
  else
    GST_BUFFER_FLAG_SET(frame->buffer, GST_BUFFER_FLAG_DELTA_UNIT);
  GST_BUFFER_FLAG_UNSET(frame->buffer, GST_BUFFER_FLAG_CORRUPTED);
  if (!gst_c63_parse_timestamp(self, frame, &indexed)) return GST_FLOW_ERROR;
  return gst_base_parse_finish_frame(parse, frame, res.size);
}

/* Push mode: frames are counted from the time GstBaseParse gives the first
 * one after a segment (or upstream's), and counted again from the time it
 * gives when that is more than half a frame off the count (a gap, or
 * upstream timestamps); timestamps then follow from the count. */
static gboolean gst_c63_parse_count(GstC63Parse *self, GstBuffer *buf)
{
  GstClockTime t = GST_BUFFER_PTS_IS_VALID(buf) ? GST_BUFFER_PTS(buf) : GST_BUFFER_DTS(buf);
  gint64 n = self->next_frame;

  if (GST_CLOCK_TIME_IS_VALID(t)) {
    GstClockTime counted =
        n >= 0 ? gst_c63_parse_frame_time(self, (guint64)n) : GST_CLOCK_TIME_NONE;
    GstClockTime half = gst_c63_parse_frame_time(self, 1) / 2;

    if (!GST_CLOCK_TIME_IS_VALID(counted) || (t > counted ? t - counted : counted - t) > half)
      n = (gint64)gst_util_uint64_scale_round(t, (guint64)self->fps_n,
                                              (guint64)self->fps_d * GST_SECOND);
  }
  if (n < 0) return TRUE; /* no time at all */
  if (!gst_c63_parse_stamp(self, buf, (guint64)n)) return FALSE;
  self->next_frame = n + 1;
  return TRUE;
}

/* Timestamps are final here. The segment's stop ends the stream: pictures
 * are those in [start, stop). Frames before the start are pushed all the
 * same (GstBaseParse's clipping is not asked for): the decoder needs them
 * from the keyframe before the start, and clips its pictures itself. */
static GstFlowReturn gst_c63_parse_pre_push_frame(GstBaseParse *parse, GstBaseParseFrame *frame)
{
  GstC63Parse *self = GST_C63_PARSE(parse);
  GstBuffer *buf = frame->buffer;

  if (!gst_c63_parse_pulls(self) && !gst_c63_parse_count(self, buf)) return GST_FLOW_ERROR;
  if (!gst_c63_parse_pulls(self) && GST_BUFFER_PTS_IS_VALID(buf)) {
    if (!GST_BUFFER_FLAG_IS_SET(buf, GST_BUFFER_FLAG_DELTA_UNIT))
      gst_c63_parse_note_keyframe(self, frame->offset, GST_BUFFER_PTS(buf));
    if (GST_BUFFER_DURATION_IS_VALID(buf))
      gst_c63_parse_update_duration(self, frame->offset + gst_buffer_get_size(buf),
                                    GST_BUFFER_PTS(buf) + GST_BUFFER_DURATION(buf));
  }
  if (GST_BUFFER_PTS_IS_VALID(buf) && GST_CLOCK_TIME_IS_VALID(parse->segment.stop) &&
      GST_BUFFER_PTS(buf) >= parse->segment.stop) {
    GST_DEBUG_OBJECT(self, "frame at %" GST_TIME_FORMAT " is past the segment's stop",
                     GST_TIME_ARGS(GST_BUFFER_PTS(buf)));
    return GST_FLOW_EOS;
  }
  return GST_FLOW_OK;
}

static gboolean gst_c63_parse_sink_event(GstBaseParse *parse, GstEvent *event)
{
  GstC63Parse *self = GST_C63_PARSE(parse);

  /* Push mode: after a new segment (a seek) the count starts again from
   * the time GstBaseParse gives the first frame. */
  if (GST_EVENT_TYPE(event) == GST_EVENT_SEGMENT || GST_EVENT_TYPE(event) == GST_EVENT_FLUSH_STOP)
    self->next_frame = -1;
  return GST_BASE_PARSE_CLASS(gst_c63_parse_parent_class)->sink_event(parse, event);
}

/* The keyframe a key-unit seek to target starts at, given the nearest
 * keyframe times before and after it (GST_CLOCK_TIME_NONE: none):
 * SNAP_BEFORE (the default), SNAP_AFTER or SNAP_NEAREST (both flags; the
 * one before on a tie). */
static GstClockTime gst_c63_parse_snap(GstSeekFlags flags, GstClockTime target, GstClockTime before,
                                       GstClockTime after)
{
  gboolean snap_before = (flags & GST_SEEK_FLAG_SNAP_BEFORE) != 0;
  gboolean snap_after = (flags & GST_SEEK_FLAG_SNAP_AFTER) != 0;

  if (!GST_CLOCK_TIME_IS_VALID(after)) return before;
  if (!GST_CLOCK_TIME_IS_VALID(before)) return after;
  if (snap_after && snap_before) return target - before <= after - target ? before : after;
  return snap_after ? after : before;
}

static GstEvent *gst_c63_parse_seek_event(GstEvent *old, gdouble rate, GstSeekFlags flags,
                                          gint64 start, GstSeekType stop_type, gint64 stop)
{
  GstEvent *event =
      gst_event_new_seek(rate, GST_FORMAT_TIME, flags, GST_SEEK_TYPE_SET, start, stop_type, stop);

  gst_event_set_seqnum(event, gst_event_get_seqnum(old));
  gst_event_unref(old);
  return event;
}

/* Pull mode, with the index: a key-unit seek starts at the keyframe the
 * snap flags pick; every seek reads from the keyframe before its start
 * (GstBaseParse finds it in its index, with that many frames of lead-in)
 * and the decoder shows the pictures from the start on. A reverse seek
 * with no stop runs from the end of the stream. */
static GstEvent *gst_c63_parse_indexed_seek(GstC63Parse *self, const GstC63Index *index,
                                            GstEvent *event)
{
  gdouble rate;
  GstFormat format;
  GstSeekFlags flags;
  GstSeekType start_type, stop_type;
  gint64 start, stop;
  guint n_frames = gst_c63_index_n_frames(index);
  GstClockTime duration = gst_c63_parse_frame_time(self, n_frames);
  guint64 n;
  gint64 k;

  gst_event_parse_seek(event, &rate, &format, &flags, &start_type, &start, &stop_type, &stop);
  if (n_frames == 0 || start_type != GST_SEEK_TYPE_SET ||
      (stop_type != GST_SEEK_TYPE_SET && stop_type != GST_SEEK_TYPE_NONE))
    return event; /* GstBaseParse refuses these */
  /* Past the end there is nothing to play: the segment starts at the end
   * (and stays within a stop kept from an earlier seek). */
  start = CLAMP(start, 0, (gint64)duration);
  if (rate < 0 && (stop_type == GST_SEEK_TYPE_NONE || stop < 0)) {
    stop_type = GST_SEEK_TYPE_SET;
    stop = (gint64)duration;
  }
  n = MIN(gst_c63_parse_frame_number(self, start), n_frames - 1);
  if ((flags & GST_SEEK_FLAG_KEY_UNIT) && rate > 0 && (GstClockTime)start < duration) {
    gint64 before = gst_c63_index_keyframe_before(index, n);
    gint64 after = gst_c63_index_keyframe_after(
        index, gst_c63_parse_frame_time(self, n) == (GstClockTime)start ? n : n + 1);
    GstClockTime snapped = gst_c63_parse_snap(
        flags, start, before >= 0 ? gst_c63_parse_frame_time(self, before) : GST_CLOCK_TIME_NONE,
        after >= 0 ? gst_c63_parse_frame_time(self, after) : GST_CLOCK_TIME_NONE);

    if (GST_CLOCK_TIME_IS_VALID(snapped)) {
      GST_DEBUG_OBJECT(self, "key-unit seek to %" GST_TIME_FORMAT " starts at %" GST_TIME_FORMAT,
                       GST_TIME_ARGS(start), GST_TIME_ARGS(snapped));
      start = (gint64)snapped;
      n = gst_c63_parse_frame_number(self, start);
    }
  }
  k = gst_c63_index_keyframe_before(index, n);
  gst_c63_parse_apply_framerate(self, k >= 0 ? (guint)(n - (guint64)k) : 0);
  return gst_c63_parse_seek_event(event, rate, flags | GST_SEEK_FLAG_ACCURATE, start, stop_type,
                                  stop);
}

/* Push mode: a key-unit seek in time starts at a keyframe already seen (as
 * the snap flags pick); a target beyond the keyframes seen so far is left
 * to GstBaseParse. */
static GstEvent *gst_c63_parse_snapped_seek(GstC63Parse *self, GstEvent *event)
{
  gdouble rate;
  GstFormat format;
  GstSeekFlags flags;
  GstSeekType start_type, stop_type;
  gint64 start, stop;
  GArray *k = self->keyframes;
  GstClockTime before = GST_CLOCK_TIME_NONE, after = GST_CLOCK_TIME_NONE, snapped;
  guint i;

  gst_event_parse_seek(event, &rate, &format, &flags, &start_type, &start, &stop_type, &stop);
  if (!(flags & GST_SEEK_FLAG_KEY_UNIT) || rate <= 0 || start_type != GST_SEEK_TYPE_SET ||
      start < 0)
    return event;
  GST_OBJECT_LOCK(self);
  if (k->len > 0 && g_array_index(k, GstClockTime, k->len - 1) >= (GstClockTime)start) {
    for (i = 0; i < k->len; i++) {
      GstClockTime ts = g_array_index(k, GstClockTime, i);
      if (ts <= (GstClockTime)start) before = ts;
      if (ts >= (GstClockTime)start) {
        after = ts;
        break;
      }
    }
  }
  GST_OBJECT_UNLOCK(self);
  if (!GST_CLOCK_TIME_IS_VALID(after)) return event;
  snapped = gst_c63_parse_snap(flags, start, before, after);
  if (snapped == (GstClockTime)start) return event;
  GST_DEBUG_OBJECT(self,
                   "key-unit seek to %" GST_TIME_FORMAT " starts at keyframe %" GST_TIME_FORMAT,
                   GST_TIME_ARGS(start), GST_TIME_ARGS(snapped));
  return gst_c63_parse_seek_event(event, rate, flags, (gint64)snapped, stop_type, stop);
}

static gboolean gst_c63_parse_src_event(GstBaseParse *parse, GstEvent *event)
{
  GstC63Parse *self = GST_C63_PARSE(parse);

  if (GST_EVENT_TYPE(event) == GST_EVENT_SEEK) {
    GstFormat format;
    const GstC63Index *index;

    gst_event_parse_seek(event, NULL, &format, NULL, NULL, NULL, NULL, NULL);
    /* Pull mode: the seek waits for the whole index (read far faster than
     * frames are decoded), so that it knows every keyframe. */
    index = gst_c63_indexer_wait_whole(&self->indexer);
    if (format == GST_FORMAT_TIME)
      event = index ? gst_c63_parse_indexed_seek(self, index, event)
                    : gst_c63_parse_snapped_seek(self, event);
  }
  return GST_BASE_PARSE_CLASS(gst_c63_parse_parent_class)->src_event(parse, event);
}

/* Pull mode: the duration and whether (and how far) the stream can be
 * sought are answered once the index is whole, exactly, not estimated. */
static gboolean gst_c63_parse_src_query(GstBaseParse *parse, GstQuery *query)
{
  GstC63Parse *self = GST_C63_PARSE(parse);

  if (GST_QUERY_TYPE(query) == GST_QUERY_DURATION || GST_QUERY_TYPE(query) == GST_QUERY_SEEKING)
    gst_c63_indexer_wait_whole(&self->indexer);
  return GST_BASE_PARSE_CLASS(gst_c63_parse_parent_class)->src_query(parse, query);
}

/* Pull mode reads upstream's bytes directly, so no caps event comes (a
 * typefind in pull mode finds nothing, a capssetter sets nothing): it is
 * taken where upstream is the source itself or already has its caps, and
 * random access is possible. Elsewhere push mode keeps upstream's caps (its
 * framerate) and GstBaseParse's duration estimate. */
static gboolean gst_c63_parse_sink_activate(GstPad *pad, GstObject *parent)
{
  GstQuery *query = gst_query_new_scheduling();
  gboolean pull = gst_pad_peer_query(pad, query) &&
                  gst_query_has_scheduling_mode_with_flags(query, GST_PAD_MODE_PULL,
                                                           GST_SCHEDULING_FLAG_SEEKABLE);
  GstPad *peer = gst_pad_get_peer(pad);

  gst_query_unref(query);
  if (pull && peer) {
    GstElement *up = gst_pad_get_parent_element(peer);
    GstCaps *caps = gst_pad_query_caps(peer, NULL);

    pull = (up && GST_OBJECT_FLAG_IS_SET(up, GST_ELEMENT_FLAG_SOURCE)) ||
           (caps && gst_caps_is_fixed(caps));
    gst_clear_caps(&caps);
    gst_clear_object(&up);
  }
  gst_clear_object(&peer);
  GST_DEBUG_OBJECT(parent, "pull mode %s", pull ? "possible" : "not taken");
  if (pull) /* GstBaseParse's own activation, which starts its pull loop */
    return GST_C63_PARSE(parent)->parent_sink_activate(pad, parent);
  return gst_pad_activate_mode(pad, GST_PAD_MODE_PUSH, TRUE);
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
  gst_c63_indexer_clear(&self->indexer);
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
                              1, G_MAXINT, G_MAXINT, 1, C63_DEFAULT_FPS_NUM, C63_DEFAULT_FPS_DEN,
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
  parse_class->src_query = GST_DEBUG_FUNCPTR(gst_c63_parse_src_query);
  parse_class->stop = GST_DEBUG_FUNCPTR(gst_c63_parse_stop);
  parse_class->sink_event = GST_DEBUG_FUNCPTR(gst_c63_parse_sink_event);
  parse_class->pre_push_frame = GST_DEBUG_FUNCPTR(gst_c63_parse_pre_push_frame);
}

static void gst_c63_parse_init(GstC63Parse *self)
{
  self->prop_fps_n = self->fps_n = C63_DEFAULT_FPS_NUM;
  self->prop_fps_d = self->fps_d = C63_DEFAULT_FPS_DEN;
  self->keyframes = g_array_new(FALSE, FALSE, sizeof(GstClockTime));
  c63_frame_scanner_init(&self->scanner);
  gst_c63_indexer_init(&self->indexer, GST_ELEMENT(self), GST_BASE_PARSE_SINK_PAD(self),
                       gst_c63_parse_publish_index, self);
  self->parent_sink_activate = GST_PAD_ACTIVATEFUNC(GST_BASE_PARSE_SINK_PAD(self));
  gst_pad_set_activate_function(GST_BASE_PARSE_SINK_PAD(self),
                                GST_DEBUG_FUNCPTR(gst_c63_parse_sink_activate));
  GST_PAD_SET_ACCEPT_INTERSECT(GST_BASE_PARSE_SINK_PAD(self));
  GST_PAD_SET_ACCEPT_TEMPLATE(GST_BASE_PARSE_SINK_PAD(self));
}
