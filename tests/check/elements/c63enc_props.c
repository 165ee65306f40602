/* GstHarness tests of c63enc's properties changed while PLAYING: each is
 * either applied from the next frame (quality, keyframe-interval,
 * search-range, bitrate, buffer-size) or refused with a warning and its
 * old value kept (mode, rate-control, threads, a bitrate of 0 with abr or
 * cbr); and rate control's warnings: a target out of reach named as the
 * library judged it, again after every new target, and frames over the
 * CBR buffer even at quality 1.
 *
 * Copyright (C) 2026 gst-c63 contributors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>

#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>

#include "c63/c63.h"
#include "c63check.h"

#define W 176
#define H 144
#define FRAME_DURATION (GST_SECOND / 25)

/* A c63enc harness in PLAYING with the properties given ("name=value"),
 * its messages on *bus. */
static GstHarness *start(const gchar *const *props, GstBus **bus)
{
  GstElement *enc = gst_element_factory_make("c63enc", NULL);
  GstHarness *hh;

  fail_unless(enc != NULL);
  for (; props && *props; props++) {
    gchar **kv = g_strsplit(*props, "=", 2);
    gst_util_set_object_arg(G_OBJECT(enc), kv[0], kv[1]);
    g_strfreev(kv);
  }
  hh = gst_harness_new_with_element(enc, "sink", "src");
  gst_object_unref(enc);
  *bus = gst_bus_new();
  gst_element_set_bus(hh->element, *bus);
  gst_harness_set_src_caps_str(hh, "video/x-raw, format=I420, width=176, height=144, "
                                   "framerate=25/1");
  return hh;
}

static void stop(GstHarness *hh, GstBus *bus)
{
  gst_element_set_bus(hh->element, NULL);
  gst_object_unref(bus);
  gst_harness_teardown(hh);
}

/* Push pictures first..last-1; every push succeeds. */
static void push(GstHarness *hh, guint first, guint last)
{
  for (guint n = first; n < last; n++) {
    GstBuffer *buf = c63check_picture(W, H, n, 0);

    GST_BUFFER_PTS(buf) = n * FRAME_DURATION;
    GST_BUFFER_DURATION(buf) = FRAME_DURATION;
    fail_unless_equals_int(gst_harness_push(hh, buf), GST_FLOW_OK);
  }
}

/* End the stream and pull its frames' sizes (frames of them). */
static void pull(GstHarness *hh, gsize *sizes, guint frames)
{
  fail_unless(gst_harness_push_event(hh, gst_event_new_eos()));
  for (guint n = 0; n < frames; n++) {
    GstBuffer *buf = gst_harness_pull(hh);

    fail_unless(buf != NULL, "frame %u missing", n);
    sizes[n] = gst_buffer_get_size(buf);
    gst_buffer_unref(buf);
  }
}

/* The warnings on bus since the last call, their texts joined by "\n"
 * (g_free it), and their count in *count; no error may be there. */
static gchar *warnings(GstBus *bus, guint *count)
{
  GString *all = g_string_new(NULL);
  GstMessage *msg;

  *count = 0;
  while ((msg = gst_bus_pop_filtered(bus, GST_MESSAGE_WARNING | GST_MESSAGE_ERROR))) {
    GError *err = NULL;

    if (GST_MESSAGE_TYPE(msg) == GST_MESSAGE_ERROR) {
      gst_message_parse_error(msg, &err, NULL);
      fail("unexpected error: %s", err->message);
    }
    gst_message_parse_warning(msg, &err, NULL);
    g_string_append_printf(all, "%s\n", err->message);
    (*count)++;
    g_error_free(err);
    gst_message_unref(msg);
  }
  return g_string_free(all, FALSE);
}

static guint get_uint(GstHarness *hh, const gchar *name)
{
  guint v = 0;
  g_object_get(hh->element, name, &v, NULL);
  return v;
}

static double kbit_per_s(const gsize *sizes, guint from, guint to)
{
  double bits = 0;
  for (guint i = from; i < to; i++)
    bits += 8.0 * (double)sizes[i];
  return bits * 25 / (to - from) / 1000.0;
}

/* The bitrate constant quality 25 gives here: a reachable target. */
static guint reachable_bitrate(void)
{
  static const gchar *const q25[] = {"quality=25", NULL};
  enum { FRAMES = 20 };
  gsize sizes[FRAMES];
  GstBus *bus;
  GstHarness *hh = start(q25, &bus);

  push(hh, 0, FRAMES);
  pull(hh, sizes, FRAMES);
  stop(hh, bus);
  return (guint)kbit_per_s(sizes, 0, FRAMES);
}

/* bitrate=0 while PLAYING with abr: refused with a warning, the old target
 * kept and read back, and the stream goes on; with rate-control=quality
 * the bitrate is unused, and 0 is taken. */
GST_START_TEST(test_enc_bitrate_zero_while_playing)
{
  static const gchar *const abr[] = {"rate-control=abr", "bitrate=500", NULL};
  enum { FRAMES = 20 };
  gsize sizes[FRAMES];
  GstBus *bus;
  GstHarness *hh = start(abr, &bus);
  guint n;
  gchar *w;

  push(hh, 0, FRAMES / 2);
  g_object_set(hh->element, "bitrate", 0u, NULL);
  fail_unless_equals_int(get_uint(hh, "bitrate"), 500);
  w = warnings(bus, &n);
  fail_unless(n == 1 && strstr(w, "bitrate=0 refused"), "warnings: %s", w);
  g_free(w);
  push(hh, FRAMES / 2, FRAMES);
  pull(hh, sizes, FRAMES);
  g_free(warnings(bus, &n));
  stop(hh, bus);

  hh = start(NULL, &bus);
  push(hh, 0, 2);
  g_object_set(hh->element, "bitrate", 0u, NULL);
  fail_unless_equals_int(get_uint(hh, "bitrate"), 0);
  push(hh, 2, 4);
  pull(hh, sizes, 4);
  w = warnings(bus, &n);
  fail_unless_equals_int(n, 0);
  g_free(w);
  stop(hh, bus);
}
GST_END_TEST;

/* A target out of reach is warned about once per target the library
 * judged, with that target in the text: 1 kbit/s, then a reachable one
 * (no warning), then 1 kbit/s again (warned again: a new judgement). */
GST_START_TEST(test_enc_reach_warning_per_target)
{
  static const gchar *const low[] = {"rate-control=abr", "bitrate=1", NULL};
  enum { RUN = C63_TARGET_REACH_FRAMES + 20, FRAMES = 3 * RUN };
  const guint reachable = reachable_bitrate();
  gsize sizes[FRAMES];
  GstBus *bus;
  GstHarness *hh = start(low, &bus);
  guint n;
  gchar *w;

  push(hh, 0, RUN);
  w = warnings(bus, &n);
  fail_unless(n == 1 && strstr(w, "target bitrate of 1 kbit/s is out of reach"), "%u: %s", n, w);
  g_free(w);
  g_object_set(hh->element, "bitrate", reachable, NULL);
  push(hh, RUN, 2 * RUN);
  w = warnings(bus, &n);
  fail_unless(n == 0, "%u kbit/s: %s", reachable, w);
  g_free(w);
  g_object_set(hh->element, "bitrate", 1u, NULL);
  push(hh, 2 * RUN, FRAMES);
  w = warnings(bus, &n);
  fail_unless(n == 1 && strstr(w, "target bitrate of 1 kbit/s is out of reach"), "%u: %s", n, w);
  g_free(w);
  pull(hh, sizes, FRAMES);
  g_free(warnings(bus, &n));
  stop(hh, bus);
}
GST_END_TEST;

/* The decoder's buffer of the stream replayed as the encoder models it:
 * half of buffer_ms at the start, buffer_ms2 from frame change on (what
 * the buffer holds kept, up to its new size). Returns the frames over it. */
static guint overflows(const gsize *sizes, guint frames, guint bitrate, guint buffer_ms,
                       guint change, guint buffer_ms2)
{
  const double per_frame = bitrate * 1000.0 / 25;
  double size = (double)bitrate * buffer_ms, full = size / 2;
  guint over = 0;

  for (guint i = 0; i < frames; i++) {
    if (i == change) {
      size = (double)bitrate * buffer_ms2;
      full = MIN(full, size);
    }
    full = MAX(full + 8.0 * (double)sizes[i] - per_frame, 0);
    over += full > size;
  }
  return over;
}

/* buffer-size set while PLAYING applies from the next frame: read back,
 * no warning, the frames before the change as without it, those after it
 * different and within the new buffer. */
GST_START_TEST(test_enc_buffer_size_while_playing)
{
  enum { FRAMES = 100, CHANGE = 30 };
  gchar *bitrate = g_strdup_printf("bitrate=%u", reachable_bitrate());
  const gchar *cbr[] = {"rate-control=cbr", bitrate, "buffer-size=1000", NULL};
  gsize plain[FRAMES], changed[FRAMES];
  GstBus *bus;
  GstHarness *hh;
  guint n, i, first_diff = FRAMES;
  gchar *w;

  hh = start(cbr, &bus);
  push(hh, 0, FRAMES);
  pull(hh, plain, FRAMES);
  stop(hh, bus);

  hh = start(cbr, &bus);
  push(hh, 0, CHANGE);
  g_object_set(hh->element, "buffer-size", 100u, NULL);
  fail_unless_equals_int(get_uint(hh, "buffer-size"), 100);
  push(hh, CHANGE, FRAMES);
  pull(hh, changed, FRAMES);
  w = warnings(bus, &n);
  fail_unless(n == 0, "%s", w);
  g_free(w);
  const guint rate = get_uint(hh, "bitrate");
  stop(hh, bus);

  for (i = 0; i < FRAMES && first_diff == FRAMES; i++)
    if (plain[i] != changed[i]) first_diff = i;
  fail_unless(first_diff >= CHANGE && first_diff < FRAMES,
              "buffer-size set before frame %d: the first frame that differs is %u", CHANGE,
              first_diff);
  fail_unless_equals_int(overflows(changed, FRAMES, rate, 1000, CHANGE, 100), 0);
  g_free(bitrate);
}
GST_END_TEST;

/* What only applies when the encoder starts is refused while PLAYING, with
 * a warning that names it, and keeps its old value; what applies from the
 * next frame is taken without a word. */
GST_START_TEST(test_enc_properties_while_playing)
{
  static const gchar *const cbr[] = {"rate-control=cbr", "bitrate=300", NULL};
  static const struct {
    const gchar *name, *value;
    gboolean refused;
  } sets[] = {
      {"mode", "rd", TRUE},      {"rate-control", "abr", TRUE},     {"threads", "3", TRUE},
      {"quality", "40", FALSE},  {"keyframe-interval", "7", FALSE}, {"search-range", "8", FALSE},
      {"bitrate", "400", FALSE}, {"buffer-size", "500", FALSE},
  };
  enum { FRAMES = 4 * G_N_ELEMENTS(sets) + 2 };
  gsize sizes[FRAMES];
  GstBus *bus;
  GstHarness *hh = start(cbr, &bus);
  guint n, k;

  push(hh, 0, 2);
  for (k = 0; k < G_N_ELEMENTS(sets); k++) {
    GParamSpec *spec = g_object_class_find_property(G_OBJECT_GET_CLASS(hh->element), sets[k].name);
    GValue before = G_VALUE_INIT, after = G_VALUE_INIT, want = G_VALUE_INIT;
    gchar *w;

    fail_unless(spec != NULL);
    g_value_init(&before, spec->value_type);
    g_value_init(&after, spec->value_type);
    g_value_init(&want, spec->value_type);
    g_object_get_property(G_OBJECT(hh->element), sets[k].name, &before);
    fail_unless(gst_value_deserialize_with_pspec(&want, sets[k].value, spec));
    gst_util_set_object_arg(G_OBJECT(hh->element), sets[k].name, sets[k].value);
    g_object_get_property(G_OBJECT(hh->element), sets[k].name, &after);
    w = warnings(bus, &n);
    if (sets[k].refused) {
      fail_unless(gst_value_compare(&after, &before) == GST_VALUE_EQUAL, "%s changed",
                  sets[k].name);
      fail_unless(n == 1 && g_str_has_prefix(w, sets[k].name) && strstr(w, "refused"),
                  "%s: %u warnings: %s", sets[k].name, n, w);
    } else {
      fail_unless(gst_value_compare(&after, &want) == GST_VALUE_EQUAL, "%s not taken",
                  sets[k].name);
      fail_unless(n == 0, "%s: %s", sets[k].name, w);
    }
    g_free(w);
    g_value_unset(&before);
    g_value_unset(&after);
    g_value_unset(&want);
    push(hh, 2 + 4 * k, 6 + 4 * k);
  }
  pull(hh, sizes, FRAMES);
  g_free(warnings(bus, &n));
  stop(hh, bus);
}
GST_END_TEST;

/* cbr with a buffer that even quality 1 overflows: a warning that says so,
 * once, and the stream goes on. */
GST_START_TEST(test_enc_cbr_overflow_warning)
{
  static const gchar *const tiny[] = {"rate-control=cbr", "bitrate=1", "buffer-size=100", NULL};
  enum { FRAMES = 10 };
  gsize sizes[FRAMES];
  GstBus *bus;
  GstHarness *hh = start(tiny, &bus);
  guint n;
  gchar *w;

  push(hh, 0, FRAMES);
  pull(hh, sizes, FRAMES);
  w = warnings(bus, &n);
  fail_unless(n == 1 && strstr(w, "overflowed the decoder buffer of 100 ms at 1 kbit/s"), "%s", w);
  g_free(w);
  stop(hh, bus);
}
GST_END_TEST;

/* keyframe-interval=1 with abr: every frame a keyframe, and still each
 * target followed (within 10%) without a warning: two targets, two
 * bitrates. */
GST_START_TEST(test_enc_keyframes_only_abr)
{
  enum { FRAMES = 100 };
  static const gchar *const q25_all_key[] = {"quality=25", "keyframe-interval=1", NULL};
  gsize sizes[FRAMES];
  GstBus *bus;
  GstHarness *hh = start(q25_all_key, &bus);
  guint n, count;

  push(hh, 0, FRAMES);
  pull(hh, sizes, FRAMES);
  stop(hh, bus);
  const double q25 = kbit_per_s(sizes, 0, FRAMES);
  for (n = 0; n < 2; n++) {
    const guint target = (guint)(q25 * (n ? 0.6 : 1.3));
    gchar *bitrate = g_strdup_printf("bitrate=%u", target);
    const gchar *abr[] = {"rate-control=abr", "keyframe-interval=1", bitrate, NULL};
    gchar *w;

    hh = start(abr, &bus);
    push(hh, 0, FRAMES);
    pull(hh, sizes, FRAMES);
    const double got = kbit_per_s(sizes, 0, FRAMES);
    fail_unless(got > 0.9 * target && got < 1.1 * target, "%u kbit/s: %.1f", target, got);
    w = warnings(bus, &count);
    fail_unless(count == 0, "%u kbit/s: %s", target, w);
    g_free(w);
    stop(hh, bus);
    g_free(bitrate);
  }
}
GST_END_TEST;

static Suite *c63enc_props_suite(void)
{
  Suite *s = suite_create("c63enc-props");
  TCase *tc = tcase_create("general");

  suite_add_tcase(s, tc);
  tcase_add_test(tc, test_enc_bitrate_zero_while_playing);
  tcase_add_test(tc, test_enc_reach_warning_per_target);
  tcase_add_test(tc, test_enc_buffer_size_while_playing);
  tcase_add_test(tc, test_enc_properties_while_playing);
  tcase_add_test(tc, test_enc_cbr_overflow_warning);
  tcase_add_test(tc, test_enc_keyframes_only_abr);
  return s;
}

GST_CHECK_MAIN(c63enc_props);
