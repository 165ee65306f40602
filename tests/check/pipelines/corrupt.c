/* Corrupt Codec63 files through whole pipelines (filesrc ! c63dec and
 * filesrc ! decodebin): every run ends with EOS or an error message, never a
 * crash or a hang, and where the damage is confined to one keyframe period
 * the pictures after the next keyframe are exactly the clean ones.
 *
 * Copyright (C) 2026 gst-c63 contributors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>

#include <glib/gstdio.h>
#include <gst/check/gstcheck.h>

#include "c63check.h"

/* Keyframes at 0, 7, 14, 21 and 28 of 30 frames. */
#define STREAM "pan_352x288_q10k7.c63"
#define CLEAN_TAIL 16 /* frames 14..29: after the damage in frames 5..13 */

typedef enum {
  DAMAGE_TRUNCATE,   /* the file ends in the middle of a frame */
  DAMAGE_BITFLIPS,   /* random bit flips all over frames 1..29 */
  DAMAGE_ZEROS,      /* a run of zero bytes in frame 10's coded data */
  DAMAGE_BAD_SIZE,   /* frame 5 claims 65535x65535 */
  DAMAGE_ZERO_WIDTH, /* frame 10 claims width 0 */
  DAMAGE_BAD_MARKER, /* frame 11 has no SOS marker */
  DAMAGE_CUT_FRAME,  /* frame 12 loses its second half, frame 13 follows */
  DAMAGE_GARBAGE,    /* no Codec63 data at all */
  DAMAGE_EMPTY,      /* an empty file */
  N_DAMAGE
} Damage;

static const gchar *damage_names[N_DAMAGE] = {"truncated", "bitflips",   "zeros",
                                              "bad-size",  "zero-width", "bad-marker",
                                              "cut-frame", "garbage",    "empty"};

static gchar *tmpdir;

static void setup(void)
{
  tmpdir = g_dir_make_tmp("c63-corrupt-XXXXXX", NULL);
  fail_unless(tmpdir != NULL);
}

static void teardown(void)
{
  GDir *dir = g_dir_open(tmpdir, 0, NULL);
  const gchar *name;

  while (dir && (name = g_dir_read_name(dir))) {
    gchar *path = g_build_filename(tmpdir, name, NULL);
    g_unlink(path);
    g_free(path);
  }
  if (dir) g_dir_close(dir);
  g_rmdir(tmpdir);
  g_clear_pointer(&tmpdir, g_free);
}

/* Offset of frame n in the stream. */
static gsize frame_offset(GPtrArray *frames, guint n)
{
  gsize off = 0;
  guint i;

  for (i = 0; i < n; i++)
    off += g_bytes_get_size(frames->pdata[i]);
  return off;
}

static gchar *write_damaged(Damage damage)
{
  GBytes *stream = c63check_read_file(c63check_vector(STREAM)->stream);
  GPtrArray *frames = c63check_split_frames(stream);
  gsize len = g_bytes_get_size(stream);
  guint8 *d = g_memdup2(g_bytes_get_data(stream, NULL), len);
  gchar *path = g_build_filename(tmpdir, damage_names[damage], NULL);
  GRand *rand = g_rand_new_with_seed(63); /* the same damage every run */
  gsize f, i;

  switch (damage) {
  case DAMAGE_TRUNCATE:
    len = frame_offset(frames, 17) + 1234;
    break;
  case DAMAGE_BITFLIPS:
    f = frame_offset(frames, 1);
    for (i = 0; i < 40; i++) {
      gsize pos = f + g_rand_int_range(rand, 0, (gint32)(len - f));
      d[pos] ^= 1u << g_rand_int_range(rand, 0, 8);
    }
    break;
  case DAMAGE_ZEROS:
    f = frame_offset(frames, 10);
    memset(d + f + 1000, 0, MIN(4000, g_bytes_get_size(frames->pdata[10]) - 1100));
    break;
  case DAMAGE_BAD_SIZE:
    f = frame_offset(frames, 5) + 201 + 5; /* SOF height, then width */
    memset(d + f, 0xff, 4);
    break;
  case DAMAGE_ZERO_WIDTH:
    f = frame_offset(frames, 10) + 201 + 7;
    memset(d + f, 0, 2);
    break;
  case DAMAGE_BAD_MARKER:
    f = frame_offset(frames, 11) + 641; /* SOI DQT SOF DHT, then FF DA */
    d[f + 1] = 0x00;
    break;
  case DAMAGE_CUT_FRAME: {
    gsize start = frame_offset(frames, 12), size = g_bytes_get_size(frames->pdata[12]);
    memmove(d + start + size / 2, d + start + size, len - start - size);
    len -= size - size / 2;
    break;
  }
  case DAMAGE_GARBAGE:
    for (i = 0; i < len; i++)
      d[i] = (guint8)g_rand_int(rand);
    break;
  case DAMAGE_EMPTY:
    len = 0;
    break;
  default:
    g_assert_not_reached();
  }
  fail_unless(g_file_set_contents(path, (const gchar *)d, (gssize)len, NULL));
  g_rand_free(rand);
  g_free(d);
  g_ptr_array_unref(frames);
  g_bytes_unref(stream);
  return path;
}

static GPtrArray *clean_pictures(void)
{
  gchar *desc = g_strdup_printf("filesrc location=\"%s\" ! c63dec ! fakesink name=sink",
                                c63check_vector(STREAM)->stream);
  GPtrArray *pictures;
  C63Run run;

  c63check_run(desc, &run);
  fail_unless(run.eos);
  pictures = g_ptr_array_ref(run.pictures);
  c63check_run_clear(&run);
  g_free(desc);
  return pictures;
}

/* The last CLEAN_TAIL pictures equal the clean decode's. */
static void check_recovered(GPtrArray *pictures, GPtrArray *clean, const gchar *what)
{
  guint i;

  fail_unless(pictures->len >= CLEAN_TAIL, "%s: only %u pictures", what, pictures->len);
  for (i = 0; i < CLEAN_TAIL; i++)
    fail_unless_equals_string(pictures->pdata[pictures->len - CLEAN_TAIL + i],
                              clean->pdata[clean->len - CLEAN_TAIL + i]);
}

static void run_damaged(Damage damage, const gchar *decoder)
{
  gchar *path = write_damaged(damage);
  gchar *desc = g_strdup_printf("filesrc location=\"%s\" ! %s ! fakesink name=sink", path, decoder);
  GPtrArray *clean = clean_pictures();
  C63Run run;

  c63check_run(desc, &run);
  GST_INFO("%s through %s: eos %d, %u pictures, %u warnings, error %s", damage_names[damage],
           decoder, run.eos, run.pictures->len, run.warnings, run.error);
  /* Ending at all (EOS or error) is the first requirement: c63check_run
   * fails on a hang, and a crash fails the forked test. */
  fail_unless(run.eos || run.error != NULL);
  switch (damage) {
  case DAMAGE_TRUNCATE:
    fail_unless(run.eos, "%s: %s", desc, run.error);
    fail_unless_equals_int(run.pictures->len, 17);
    break;
  case DAMAGE_ZEROS:
  case DAMAGE_BAD_SIZE:
  case DAMAGE_ZERO_WIDTH:
  case DAMAGE_BAD_MARKER:
  case DAMAGE_CUT_FRAME:
    fail_unless(run.eos, "%s: %s", desc, run.error);
    check_recovered(run.pictures, clean, damage_names[damage]);
    if (damage != DAMAGE_ZEROS) /* zeros may decode, just to wrong pixels */
      fail_unless(run.warnings > 0, "%s: the corrupt frame was not reported", desc);
    break;
  case DAMAGE_GARBAGE:
  case DAMAGE_EMPTY:
    fail_unless_equals_int(run.pictures->len, 0);
    break;
  default: /* bit flips: anything but a crash or hang */
    break;
  }
  c63check_run_clear(&run);
  g_ptr_array_unref(clean);
  g_free(desc);
  g_free(path);
}

GST_START_TEST(test_corrupt_c63dec)
{
  run_damaged((Damage)__i__, "c63dec");
}
GST_END_TEST;

GST_START_TEST(test_corrupt_decodebin)
{
  /* decodebin cannot type garbage or empty files: an error, which is fine. */
  run_damaged((Damage)__i__, "decodebin");
}
GST_END_TEST;

/* With max-errors=0 a corrupt frame stops the pipeline with an error. */
GST_START_TEST(test_corrupt_fatal)
{
  gchar *path = write_damaged(DAMAGE_ZERO_WIDTH);
  gchar *desc =
      g_strdup_printf("filesrc location=\"%s\" ! c63dec max-errors=0 ! fakesink name=sink", path);
  C63Run run;

  c63check_run(desc, &run);
  fail_if(run.eos);
  fail_unless(run.error != NULL && strstr(run.error, "Corrupt Codec63 frame") != NULL, "%s",
              run.error);
  fail_unless_equals_int(run.pictures->len, 10);
  c63check_run_clear(&run);
  g_free(desc);
  g_free(path);
}
GST_END_TEST;

static Suite *corrupt_suite(void)
{
  Suite *s = suite_create("corrupt");
  TCase *tc = tcase_create("general");

  suite_add_tcase(s, tc);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_loop_test(tc, test_corrupt_c63dec, 0, N_DAMAGE);
  tcase_add_loop_test(tc, test_corrupt_decodebin, 0, N_DAMAGE - 2);
  tcase_add_loop_test(tc, test_corrupt_decodebin, N_DAMAGE - 2, N_DAMAGE);
  tcase_add_test(tc, test_corrupt_fatal);
  return s;
}

GST_CHECK_MAIN(corrupt);
