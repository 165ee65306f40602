/* c63_find_marker, the search for FFs not followed by 00, against its
 * byte-at-a-time oracle: every start and length over buffers that mix
 * stuffing, markers and FF runs, the candidate at every place of a vector,
 * and a whole conformance stream searched from each candidate on.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdlib.h>
#include <string.h>

#include "c63/marker_scan.h"
#include "tutil.h"

/* Deterministic, so failures reproduce. */
static uint64_t rng = 0x9e3779b97f4a7c15u;

static uint8_t next_byte(void)
{
  static const uint8_t pick[] = {0xff, 0x00, 0xd9, 0xd8, 0xff, 0x01, 0xfe};
  rng = rng * 6364136223846793005u + 1442695040888963407u;
  unsigned r = (unsigned)(rng >> 33);
  return (r & 3) ? (uint8_t)(r >> 8) : pick[(r >> 8) % sizeof pick];
}

/* Random mixtures: every start and end of short buffers. */
static void test_random(void)
{
  uint8_t buf[160];
  for (int round = 0; round < 200; round++) {
    for (size_t i = 0; i < sizeof buf; i++)
      buf[i] = next_byte();
    for (size_t len = 0; len <= sizeof buf; len += 1 + (size_t)(round % 3))
      for (size_t from = 0; from <= len + 1; from++)
        TU_CHECK_EQ(c63_find_marker(buf, from, len), c63_find_marker_c(buf, from, len));
  }
}

/* Stuffed data (FF 00 pairs) with one FF D9 moved through every place of
 * the first vectors, and an FF as the very last byte (no next byte: not a
 * candidate). */
static void test_single_candidate(void)
{
  uint8_t buf[100];
  for (size_t at = 0; at + 1 < sizeof buf; at++) {
    for (size_t i = 0; i < sizeof buf; i++)
      buf[i] = (i % 2) ? 0x00 : 0xff;
    buf[sizeof buf - 1] = 0xff;
    buf[at] = 0xff;
    buf[at + 1] = 0xd9;
    for (size_t from = 0; from <= at + 1; from++) {
      size_t want = c63_find_marker_c(buf, from, sizeof buf);
      TU_CHECK_EQ(c63_find_marker(buf, from, sizeof buf), want);
      TU_CHECK_TRUE(want == sizeof buf || buf[want + 1] != 0x00);
    }
    TU_CHECK_EQ(c63_find_marker(buf, 0, at + 1), c63_find_marker_c(buf, 0, at + 1));
  }
}

/* A real stream: the candidates found one after another are the oracle's. */
static void test_stream(void)
{
  char path[4096];
  size_t len = 0, n = 0;
  tu_data_path(path, sizeof path, "mandel_1920x1080.c63");
  uint8_t *data = tu_read_file(path, &len);
  TU_CHECK(data != NULL, "%s", path);
  if (!data) return;
  for (size_t p = 0; p < len; n++) {
    size_t want = c63_find_marker_c(data, p, len);
    TU_CHECK_EQ(c63_find_marker(data, p, len), want);
    p = want + 1;
  }
  TU_CHECK(n > 5 * 6, "%zu candidates: fewer than the markers of 5 frames", n);
  free(data);
}

int main(void)
{
  test_random();
  test_single_candidate();
  test_stream();
  return tu_finish("test_marker_scan");
}
