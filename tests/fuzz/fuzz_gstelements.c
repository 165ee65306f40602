/* libFuzzer target: c63enc and c63dec (CPU) driven through GstHarness by a
 * script of operations read from the input: caps of random format and
 * size, pictures with random GstVideoMeta strides and plane offsets (most
 * fit their buffer, some do not), properties changed while PLAYING,
 * force-key-unit events, flushes and EOS. Every packet the encoder gives
 * goes to c63dec, some with bytes flipped or flags changed, with flushes of
 * their own. Whatever the script, the elements must answer with packets,
 * pictures, warnings or errors, never a crash, undefined behaviour, a
 * critical or a hang. The elements are compiled into the target
 * (tests/fuzz/run-fuzzer.sh) and registered statically.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <gst/check/gstharness.h>
#include <gst/gst.h>
#include <gst/video/video.h>
#include <stdint.h>
#include <string.h>

#include "c63dec/gstc63dec.h"
#include "c63enc/gstc63encbase.h"

typedef struct {
  const uint8_t *data;
  size_t size, pos;
} Script;

static unsigned next_byte(Script *s)
{
  return s->pos < s->size ? s->data[s->pos++] : 0;
}

static unsigned next_u16(Script *s)
{
  unsigned lo = next_byte(s);
  return lo | next_byte(s) << 8;
}

/* A critical is a bug here (the elements check what GStreamer would
 * g_return_if_fail on), so it stops the run like a crash. */
static void fail_on_critical(const gchar *domain, GLogLevelFlags level, const gchar *message,
                             gpointer user_data)
{
  g_log_default_handler(domain, level, message, user_data);
  if (level & (G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_ERROR)) abort();
}

static void setup(void)
{
  static int done;
  if (done) return;
  done = 1;
  gst_init(NULL, NULL);
  g_log_set_default_handler(fail_on_critical, NULL);
  if (!GST_ELEMENT_REGISTER(c63enc, NULL) || !GST_ELEMENT_REGISTER(c63dec, NULL)) abort();
}

typedef struct {
  GstVideoInfo info; /* the caps last set */
  guint n;           /* pictures pushed */
  gboolean stopped;  /* a flow error: the encoder takes nothing more until a flush */
} Enc;

static void set_caps(GstHarness *h, Enc *e, Script *s)
{
  GstVideoFormat format = next_byte(s) & 1 ? GST_VIDEO_FORMAT_NV12 : GST_VIDEO_FORMAT_I420;
  gint w = 8 + next_byte(s) % 57, hh = 8 + next_byte(s) % 57;
  GstCaps *caps;

  gst_video_info_set_format(&e->info, format, w, hh);
  if (next_byte(s) & 1) GST_VIDEO_INFO_FPS_N(&e->info) = 1 + next_byte(s) % 60;
  caps = gst_video_info_to_caps(&e->info);
  gst_harness_set_src_caps(h, caps);
}

/* A picture of the caps' format in a buffer described by a GstVideoMeta:
 * rows padded and planes spaced by amounts from the script, the buffer
 * sometimes short, and sometimes a stride, offset, plane count or format
 * that is plain wrong. */
static GstBuffer *make_picture(const Enc *e, Script *s)
{
  const GstVideoInfo *info = &e->info;
  guint n_planes = GST_VIDEO_INFO_N_PLANES(info), p;
  gsize offset[GST_VIDEO_MAX_PLANES] = {0}, size = 0;
  gint stride[GST_VIDEO_MAX_PLANES] = {0};
  GstVideoFormat format = GST_VIDEO_INFO_FORMAT(info);
  guint width = GST_VIDEO_INFO_WIDTH(info), height = GST_VIDEO_INFO_HEIGHT(info);
  unsigned fault = next_byte(s);
  GstBuffer *buf;

  for (p = 0; p < n_planes; p++) {
    gint comp[GST_VIDEO_MAX_COMPONENTS];
    gst_video_format_info_component(info->finfo, p, comp);
    stride[p] =
        GST_VIDEO_INFO_COMP_WIDTH(info, comp[0]) * GST_VIDEO_INFO_COMP_PSTRIDE(info, comp[0]) +
        next_byte(s) % 17;
    offset[p] = size + next_byte(s) % 9;
    size = offset[p] + (gsize)stride[p] * GST_VIDEO_INFO_COMP_HEIGHT(info, comp[0]);
  }
  switch (fault % 16) {
  case 0:
    size -= 1 + next_byte(s) % 64;
    break; /* the last plane runs past the end */
  case 1:
    stride[next_byte(s) % n_planes] = (gint16)next_u16(s);
    break;
  case 2:
    offset[next_byte(s) % n_planes] = next_u16(s) * 7;
    break;
  case 3:
    n_planes = 1 + next_byte(s) % GST_VIDEO_MAX_PLANES;
    break;
  case 4:
    format = format == GST_VIDEO_FORMAT_I420 ? GST_VIDEO_FORMAT_NV12 : GST_VIDEO_FORMAT_I420;
    break;
  case 5:
    width = next_byte(s) % (width + 1);
    height = next_byte(s) % (height + 1);
    break;
  case 6:
    offset[next_byte(s) % n_planes] = G_MAXSIZE - next_byte(s);
    break;
  default:
    break; /* a layout that fits */
  }
  buf = gst_buffer_new_allocate(NULL, MAX(size, 1), NULL);
  {
    GstMapInfo map;
    gsize i;
    gst_buffer_map(buf, &map, GST_MAP_WRITE);
    for (i = 0; i < map.size; i++)
      map.data[i] = (guint8)(i * 7 + e->n * 13 + (s->size ? s->data[i % s->size] : 0));
    gst_buffer_unmap(buf, &map);
  }
  /* without a meta (1 in 8), GstVideoInfo's layout is what counts */
  if (fault >> 5 != 0)
    gst_buffer_add_video_meta_full(buf, GST_VIDEO_FRAME_FLAG_NONE, format, width, height, n_planes,
                                   offset, stride);
  return buf;
}

static void set_property(GstElement *enc, Script *s)
{
  switch (next_byte(s) % 7) {
  case 0:
    g_object_set(enc, "quality", 1 + next_byte(s) % 50, NULL);
    break;
  case 1:
    g_object_set(enc, "keyframe-interval", next_byte(s) % 8, NULL);
    break;
  case 2:
    g_object_set(enc, "search-range", 1 + next_byte(s) % 64, NULL);
    break;
  case 3:
    g_object_set(enc, "bitrate", next_u16(s) * 15, NULL);
    break;
  case 4:
    g_object_set(enc, "rate-control", next_byte(s) % 3, NULL);
    break;
  case 5:
    g_object_set(enc, "buffer-size", 1 + next_u16(s) % 60000, NULL);
    break;
  default:
    g_object_set(enc, "mode", next_byte(s) % 2, NULL);
    break;
  }
}

static void flush(GstHarness *h)
{
  GstSegment segment;

  gst_harness_push_event(h, gst_event_new_flush_start());
  gst_harness_push_event(h, gst_event_new_flush_stop(TRUE));
  gst_segment_init(&segment, GST_FORMAT_TIME);
  gst_harness_push_event(h, gst_event_new_segment(&segment));
}

/* Hand the packets the encoder gave to the decoder, some changed. */
static void decode_packets(GstHarness *enc, GstHarness *dec, Script *s)
{
  GstBuffer *pkt;

  while ((pkt = gst_harness_try_pull(enc)) != NULL) {
    unsigned op = next_byte(s);
    if (op % 8 == 0) {
      GstMapInfo map;
      pkt = gst_buffer_make_writable(pkt);
      if (gst_buffer_map(pkt, &map, GST_MAP_WRITE)) {
        if (map.size) map.data[next_u16(s) % map.size] ^= (guint8)(1 + next_byte(s));
        gst_buffer_unmap(pkt, &map);
      }
    } else if (op % 8 == 1) {
      pkt = gst_buffer_make_writable(pkt);
      GST_BUFFER_FLAG_SET(pkt, GST_BUFFER_FLAG_DELTA_UNIT);
    } else if (op % 8 == 2) {
      flush(dec);
    }
    gst_harness_push(dec, pkt);
    while ((pkt = gst_harness_try_pull(dec)) != NULL)
      gst_buffer_unref(pkt);
  }
}

/* A harness around the element itself (not a bin, so its properties can
 * be set), on one thread. */
static GstHarness *element_harness(const gchar *factory)
{
  GstElement *element = gst_element_factory_make(factory, NULL);

  g_object_set(element, "threads", 1, NULL);
  return gst_harness_new_with_element(element, "sink", "src");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  Script s = {data, size, 0};
  GstHarness *enc, *dec;
  Enc e;
  GstBuffer *out;
  guint ops = 0;

  setup();
  memset(&e, 0, sizeof e);
  enc = element_harness("c63enc");
  dec = element_harness("c63dec");
  g_object_set(dec->element, "backend", 1 /* cpu */, NULL);
  gst_harness_set_src_caps_str(dec, "video/x-c63, parsed=(boolean)true");
  set_caps(enc, &e, &s);
  /* at most 40 operations: each picture is a whole encode */
  while (s.pos < s.size && ops++ < 40) {
    switch (next_byte(&s) % 8) {
    case 0:
    case 1:
    case 2: {
      GstBuffer *buf = make_picture(&e, &s);
      GST_BUFFER_PTS(buf) = e.n++ * GST_SECOND / 25;
      if (e.stopped)
        gst_buffer_unref(buf);
      else if (gst_harness_push(enc, buf) != GST_FLOW_OK)
        e.stopped = TRUE;
      break;
    }
    case 3:
      set_property(enc->element, &s);
      break;
    case 4:
      set_caps(enc, &e, &s);
      break;
    case 5:
      gst_harness_push_upstream_event(
          enc, gst_video_event_new_upstream_force_key_unit(GST_CLOCK_TIME_NONE, TRUE, 0));
      break;
    case 6:
      flush(enc);
      e.stopped = FALSE;
      break;
    default:
      decode_packets(enc, dec, &s);
      break;
    }
  }
  gst_harness_push_event(enc, gst_event_new_eos());
  decode_packets(enc, dec, &s);
  gst_harness_push_event(dec, gst_event_new_eos());
  while ((out = gst_harness_try_pull(dec)) != NULL)
    gst_buffer_unref(out);
  gst_harness_teardown(enc);
  gst_harness_teardown(dec);
  return 0;
}
