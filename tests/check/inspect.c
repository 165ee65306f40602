/* gst-inspect-1.0 lists the plugin's elements with their documentation.
 *
 * Copyright (C) 2026 gst-c63 contributors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Runs the real gst-inspect-1.0 with this test's environment, which points
 * GST_PLUGIN_PATH at the freshly built plugin.
 */
#include <gst/check/gstcheck.h>

static gchar *inspect(const gchar *what)
{
  const gchar *argv[] = {GST_INSPECT, what, NULL};
  gchar *out = NULL, *err = NULL;
  gint status = 0;
  GError *error = NULL;

  fail_if(GST_INSPECT[0] == '\0', "gst-inspect-1.0 was not found at configure time");
  fail_unless(g_spawn_sync(NULL, (gchar **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err,
                           &status, &error),
              "cannot run %s: %s", GST_INSPECT, error ? error->message : "?");
  fail_unless(g_spawn_check_wait_status(status, NULL), "gst-inspect-1.0 %s failed: %s", what, err);
  g_free(err);
  return out;
}

static void expect(const gchar *out, const gchar *text)
{
  fail_unless(strstr(out, text) != NULL, "gst-inspect output lacks \"%s\":\n%s", text, out);
}

GST_START_TEST(test_inspect_plugin)
{
  gchar *out = inspect("c63");

  expect(out, "c63enc: Codec63 encoder");
  expect(out, "c63dec: Codec63 decoder");
  expect(out, "video/x-c63: c63");
  expect(out, "Codec63");
  /* The description says how to see why c63cudaenc is missing. */
  expect(out, "GST_DEBUG=c63:4");
  /* c63cudaenc is listed exactly when it is registered in this process. */
  {
    GstElementFactory *cuda = gst_element_factory_find("c63cudaenc");
    fail_unless_equals_int(strstr(out, "c63cudaenc: ") != NULL, cuda != NULL);
    if (cuda) gst_object_unref(cuda);
  }
  g_free(out);
}
GST_END_TEST;

GST_START_TEST(test_inspect_encoder)
{
  gchar *out = inspect("c63enc");

  expect(out, "Codec/Encoder/Video");
  expect(out, "video/x-c63");
  expect(out, "format: { (string)I420, (string)NV12 }");
  expect(out, "quality");
  expect(out, "Range: 1 - 50 Default: 25");
  expect(out, "keyframe-interval");
  expect(out, "Default: 100");
  expect(out, "search-range");
  expect(out, "Range: 1 - 64 Default: 16");
  expect(out, "changeable in NULL, READY, PAUSED or PLAYING state");
  expect(out, "mode");
  expect(out, "(0): exact");
  expect(out, "(1): rd");
  g_free(out);
}
GST_END_TEST;

GST_START_TEST(test_inspect_decoder)
{
  gchar *out = inspect("c63dec");

  expect(out, "Codec/Decoder/Video");
  expect(out, "video/x-c63");
  expect(out, "I420");
  expect(out, "Rank                     primary");
  expect(out, "max-errors");
  g_free(out);
}
GST_END_TEST;

static Suite *inspect_suite(void)
{
  Suite *s = suite_create("gst-inspect");
  TCase *tc = tcase_create("general");

  suite_add_tcase(s, tc);
  tcase_add_test(tc, test_inspect_plugin);
  tcase_add_test(tc, test_inspect_encoder);
  tcase_add_test(tc, test_inspect_decoder);
  return s;
}

GST_CHECK_MAIN(inspect);
