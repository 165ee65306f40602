/* The video/x-c63 typefinder: Codec63 streams are recognised with the
 * maximum probability (beating the JPEG typefinder, which also matches their
 * first bytes), and JPEG files are left to JPEG.
 *
 * Copyright (C) 2026 gst-c63 contributors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>

#include <gst/base/gsttypefindhelper.h>
#include <glib/gstdio.h>
#include <gst/check/gstcheck.h>

#include "c63check.h"

static GstCaps *typefind(const guint8 *data, gsize size, GstTypeFindProbability *prob)
{
  return gst_type_find_helper_for_data(NULL, data, size, prob);
}

GST_START_TEST(test_typefind_c63)
{
  const C63Vector *v = g_ptr_array_index(c63check_vectors(), __i__);
  GBytes *stream = c63check_read_file(v->stream);
  GstTypeFindProbability prob = GST_TYPE_FIND_NONE;
  GstCaps *caps = typefind(g_bytes_get_data(stream, NULL), g_bytes_get_size(stream), &prob);
  GstStructure *s;
  gint w = 0, h = 0;

  fail_unless(caps != NULL, "%s not recognised", v->name);
  s = gst_caps_get_structure(caps, 0);
  fail_unless(gst_structure_has_name(s, "video/x-c63"), "%s typed as %" GST_PTR_FORMAT, v->name,
              caps);
  fail_unless_equals_int(prob, GST_TYPE_FIND_MAXIMUM);
  fail_unless(gst_structure_get_int(s, "width", &w) && gst_structure_get_int(s, "height", &h));
  fail_unless_equals_int(w, v->width);
  fail_unless_equals_int(h, v->height);
  gst_caps_unref(caps);
  g_bytes_unref(stream);
}
GST_END_TEST;

/* Only the first frame's headers are needed, and any frame type. */
GST_START_TEST(test_typefind_delta_start)
{
  GBytes *stream = c63check_read_file(c63check_vector("pan_352x288_q10k7.c63")->stream);
  GPtrArray *frames = c63check_split_frames(stream);
  gsize len;
  const guint8 *d = g_bytes_get_data(frames->pdata[1], &len);
  GstCaps *caps = typefind(d, 700, NULL);

  fail_unless(caps != NULL);
  fail_unless(gst_structure_has_name(gst_caps_get_structure(caps, 0), "video/x-c63"));
  gst_caps_unref(caps);
  g_ptr_array_unref(frames);
  g_bytes_unref(stream);
}
GST_END_TEST;

/* A few junk bytes before the first frame, as c63dec skips them. */
GST_START_TEST(test_typefind_after_junk)
{
  static const guint8 junk[] = {0x12, 0x00, 0xff, 0x34, 0xff, 0xd8, 0x00};
  GBytes *stream = c63check_read_file(c63check_vector("pan_176x144.c63")->stream);
  GByteArray *b = g_byte_array_new();
  GstTypeFindProbability prob = GST_TYPE_FIND_NONE;
  GstCaps *caps;

  g_byte_array_append(b, junk, sizeof junk);
  g_byte_array_append(b, g_bytes_get_data(stream, NULL), 2048);
  caps = typefind(b->data, b->len, &prob);
  fail_unless(caps && gst_structure_has_name(gst_caps_get_structure(caps, 0), "video/x-c63"),
              "typed as %" GST_PTR_FORMAT, caps);
  fail_unless(prob >= GST_TYPE_FIND_LIKELY);
  gst_caps_unref(caps);
  g_byte_array_unref(b);
  g_bytes_unref(stream);
}
GST_END_TEST;

/* A DQT length of 197 (JPEG's count; the reference writes 195) is still
 * Codec63: the decoder ignores the field, as the reference does. */
GST_START_TEST(test_typefind_dqt_length_197)
{
  GBytes *stream = c63check_read_file(c63check_vector("pan_176x144.c63")->stream);
  guint8 *d = g_memdup2(g_bytes_get_data(stream, NULL), 2048);
  GstTypeFindProbability prob = GST_TYPE_FIND_NONE;
  GstCaps *caps;

  d[5] = 0xc5;
  caps = typefind(d, 2048, &prob);
  fail_unless(caps && gst_structure_has_name(gst_caps_get_structure(caps, 0), "video/x-c63"),
              "typed as %" GST_PTR_FORMAT, caps);
  fail_unless_equals_int(prob, GST_TYPE_FIND_MAXIMUM);
  gst_caps_unref(caps);
  g_free(d);
  g_bytes_unref(stream);
}
GST_END_TEST;

/* A baseline JFIF header is JPEG, not Codec63. */
GST_START_TEST(test_typefind_jpeg_is_not_c63)
{
  static const guint8 jfif[] = {0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 'J',  'F',  'I',  'F',  0x00,
                                0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0xff, 0xc0,
                                0x00, 0x11, 0x08, 0x00, 0x10, 0x00, 0x10, 0x03, 0x01, 0x22, 0x00,
                                0x02, 0x11, 0x01, 0x03, 0x11, 0x01, 0xff, 0xd9};
  guint8 data[1024];
  GstCaps *caps;

  memset(data, 0, sizeof data);
  memcpy(data, jfif, sizeof jfif);
  caps = typefind(data, sizeof data, NULL);
  fail_unless(caps != NULL);
  fail_unless(gst_structure_has_name(gst_caps_get_structure(caps, 0), "image/jpeg"),
              "typed as %" GST_PTR_FORMAT, caps);
  gst_caps_unref(caps);
}
GST_END_TEST;

/* A Codec63 header with one byte wrong is not claimed with certainty. */
GST_START_TEST(test_typefind_damaged_header)
{
  GBytes *stream = c63check_read_file(c63check_vector("pan_176x144.c63")->stream);
  guint8 *d = g_memdup2(g_bytes_get_data(stream, NULL), 1024);
  GstTypeFindProbability prob = GST_TYPE_FIND_NONE;
  GstCaps *caps;

  d[2 + 4 + 65] = 7; /* the U table's id */
  caps = typefind(d, 1024, &prob);
  fail_if(caps && gst_structure_has_name(gst_caps_get_structure(caps, 0), "video/x-c63"));
  if (caps) gst_caps_unref(caps);
  g_free(d);
  g_bytes_unref(stream);
}
GST_END_TEST;

/* A stream that starts inside a frame (joined mid-stream, cut at the
 * front) is Codec63 from its first whole frame on: with certainty when the
 * frame after it parses too. */
GST_START_TEST(test_typefind_starts_inside_frame)
{
  GBytes *stream = c63check_read_file(c63check_vector("pan_352x288_q10k7.c63")->stream);
  gsize len;
  const guint8 *d = g_bytes_get_data(stream, &len);
  GstTypeFindProbability prob = GST_TYPE_FIND_NONE;
  GstCaps *caps = typefind(d + 5000, len - 5000, &prob);

  fail_unless(caps && gst_structure_has_name(gst_caps_get_structure(caps, 0), "video/x-c63"),
              "typed as %" GST_PTR_FORMAT, caps);
  fail_unless_equals_int(prob, GST_TYPE_FIND_MAXIMUM);
  gst_caps_unref(caps);
  g_bytes_unref(stream);
}
GST_END_TEST;

/* decodebin plays what c63parse ! c63dec plays: files cut inside a frame
 * at the end (the first frame's headers whole) and at the front. */
GST_START_TEST(test_decodebin_truncated)
{
  GBytes *stream = c63check_read_file(c63check_vector("pan_352x288_q10k7.c63")->stream);
  gsize len;
  const guint8 *d = g_bytes_get_data(stream, &len);
  gchar *dir = g_dir_make_tmp("c63typefind-XXXXXX", NULL);
  const struct {
    const gchar *name;
    gsize from, to;
  } cuts[] = {
      {"end", 0, len / 2 + 1234},
      {"front", 5000, len},
      {"both", 5000, len / 2 + 1234},
  };
  guint i;

  fail_unless(dir != NULL);
  for (i = 0; i < G_N_ELEMENTS(cuts); i++) {
    gchar *path = g_build_filename(dir, "cut.c63", NULL);
    gchar *desc;
    C63Run via_parse, via_decodebin;

    fail_unless(g_file_set_contents(path, (const gchar *)d + cuts[i].from,
                                    cuts[i].to - cuts[i].from, NULL));
    desc = g_strdup_printf("filesrc location=%s ! c63parse ! c63dec ! fakesink name=sink", path);
    c63check_run(desc, &via_parse);
    g_free(desc);
    desc = g_strdup_printf("filesrc location=%s ! decodebin ! fakesink name=sink", path);
    c63check_run(desc, &via_decodebin);
    g_free(desc);
    fail_unless(via_parse.eos && via_parse.buffers > 0, "cut at the %s: c63parse ! c63dec: %s",
                cuts[i].name, via_parse.error);
    fail_unless(via_decodebin.eos, "cut at the %s: decodebin: %s", cuts[i].name,
                via_decodebin.error);
    fail_unless_equals_int(via_decodebin.buffers, via_parse.buffers);
    fail_unless_equals_string(g_checksum_get_string(via_decodebin.video),
                              g_checksum_get_string(via_parse.video));
    c63check_run_clear(&via_parse);
    c63check_run_clear(&via_decodebin);
    g_unlink(path);
    g_free(path);
  }
  g_rmdir(dir);
  g_free(dir);
  g_bytes_unref(stream);
}
GST_END_TEST;

static Suite *c63typefind_suite(void)
{
  Suite *s = suite_create("c63typefind");
  TCase *tc = tcase_create("general");

  suite_add_tcase(s, tc);
  tcase_add_loop_test(tc, test_typefind_c63, 0, c63check_vectors()->len);
  tcase_add_test(tc, test_typefind_delta_start);
  tcase_add_test(tc, test_typefind_after_junk);
  tcase_add_test(tc, test_typefind_dqt_length_197);
  tcase_add_test(tc, test_typefind_jpeg_is_not_c63);
  tcase_add_test(tc, test_typefind_damaged_header);
  tcase_add_test(tc, test_typefind_starts_inside_frame);
  tcase_add_test(tc, test_decodebin_truncated);
  return s;
}

GST_CHECK_MAIN(c63typefind);
