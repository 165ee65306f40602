/* The conformance vectors through whole pipelines: c63enc byte-identical to
 * the reference encoder; filesrc ! c63dec and filesrc ! decodebin
 * pixel-identical to the reference decoder; 1-byte buffers from filesrc.
 *
 * Copyright (C) 2026 gst-c63 contributors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <gst/check/gstcheck.h>

#include "c63check.h"
#include "c63enc_common.h"

static const C63Vector *vector(guint i)
{
  return g_ptr_array_index(c63check_vectors(), i);
}

static void check_decode(const C63Vector *v, const gchar *description)
{
  C63Run run;

  c63check_run(description, &run);
  fail_unless(run.eos, "%s: %s", description, run.error);
  fail_unless_equals_int(run.warnings, 0);
  fail_unless_equals_int(run.pictures->len, v->frames);
  fail_unless_equals_string(g_checksum_get_string(run.video), v->decoded_sha256);
  c63check_run_clear(&run);
}

GST_START_TEST(test_encode)
{
  c63check_enc_conformance("c63enc", __i__);
}
GST_END_TEST;

GST_START_TEST(test_decode_c63dec)
{
  const C63Vector *v = vector(__i__);
  gchar *desc = g_strdup_printf("filesrc location=\"%s\" ! c63dec ! fakesink name=sink", v->stream);

  check_decode(v, desc);
  g_free(desc);
}
GST_END_TEST;

GST_START_TEST(test_decode_decodebin)
{
  const C63Vector *v = vector(__i__);
  gchar *desc = g_strdup_printf("filesrc location=\"%s\" ! decodebin ! video/x-raw,format=I420 ! "
                                "fakesink name=sink",
                                v->stream);
  GstElementFactory *typefinders = gst_element_factory_find("typefind");

  fail_unless(typefinders != NULL);
  gst_object_unref(typefinders);
  check_decode(v, desc);
  g_free(desc);
}
GST_END_TEST;

GST_START_TEST(test_decode_1byte_buffers)
{
  const C63Vector *v = c63check_vector("pan_352x288_q10k7.c63");
  gchar *desc = g_strdup_printf("filesrc location=\"%s\" blocksize=1 ! c63dec ! fakesink name=sink",
                                v->stream);

  check_decode(v, desc);
  g_free(desc);
}
GST_END_TEST;

/* Encode and decode in one pipeline: what the decoder shows is what the
 * reference decoder shows for the reference encoder's stream. */
GST_START_TEST(test_encode_decode)
{
  const C63Vector *v = c63check_vector("testsrc_640x200.c63");
  gchar *desc = g_strdup_printf(
      "filesrc location=\"%s\" ! rawvideoparse width=%d height=%d format=i420 framerate=25/1 ! "
      "c63enc ! c63dec ! fakesink name=sink",
      v->input, v->width, v->height);

  check_decode(v, desc);
  g_free(desc);
}
GST_END_TEST;

GST_START_TEST(test_manifest)
{
  fail_unless_equals_int(c63check_vectors()->len, 6);
}
GST_END_TEST;

static Suite *conformance_suite(void)
{
  Suite *s = suite_create("conformance");
  TCase *tc = tcase_create("general");
  guint n = c63check_vectors()->len;

  suite_add_tcase(s, tc);
  tcase_add_test(tc, test_manifest);
  tcase_add_loop_test(tc, test_encode, 0, n);
  tcase_add_loop_test(tc, test_decode_c63dec, 0, n);
  tcase_add_loop_test(tc, test_decode_decodebin, 0, n);
  tcase_add_test(tc, test_decode_1byte_buffers);
  tcase_add_test(tc, test_encode_decode);
  return s;
}

GST_CHECK_MAIN(conformance);
