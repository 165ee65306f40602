/* c63-enc's frame reader (tools/frame_reader.c): frames in order from a
 * regular file read by several threads, several held by the caller at
 * once (an encoder reads a borrowed picture until its packet) and
 * released oldest first, EDEADLK rather than a wait for ever when the
 * caller holds every buffer, and the incomplete last frame; one ring
 * reading several ranges in turn (c63-farm's workers), also after a range
 * left with frames held.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "frame_reader.h"
#include "tutil.h"

#define FRAME 1000
#define FRAMES 40
#define TAIL 300
#define DEPTH 4

/* Whether buf is frame k (every byte k). */
static int is_frame(const uint8_t *buf, int k)
{
  for (int i = 0; i < FRAME; i++)
    if (buf[i] != (uint8_t)k) return 0;
  return 1;
}

static void test_held_frames(FILE *in, int threads)
{
  rewind(in);
  /* page-locked buffers (plain ones without a CUDA device) with one thread, plain with several */
  frame_reader *r = frame_reader_start(in, FRAME, -1, DEPTH, threads, threads == 1);
  TU_CHECK(r != NULL, "frame_reader_start with %d threads", threads);
  if (!r) return;
  TU_CHECK_EQ(frame_reader_frames(r), FRAMES);
  size_t partial;
  int err;
  /* the caller holds every buffer, and is told so */
  for (int k = 0; k < DEPTH; k++) {
    const uint8_t *f = frame_reader_next(r, &partial, &err);
    TU_CHECK(f && is_frame(f, k), "frame %d held with %d threads", k, threads);
  }
  TU_CHECK(frame_reader_next(r, &partial, &err) == NULL, "a frame beyond the buffers");
  TU_CHECK_EQ(err, EDEADLK);
  TU_CHECK_EQ(partial, 0);
  /* then two held at a time, released oldest first */
  int next = DEPTH;
  for (;;) {
    frame_reader_release(r);
    frame_reader_release(r);
    const uint8_t *a = frame_reader_next(r, &partial, &err);
    if (!a) break;
    TU_CHECK(is_frame(a, next), "frame %d with %d threads", next, threads);
    next++;
    const uint8_t *b = frame_reader_next(r, &partial, &err);
    if (!b) break;
    TU_CHECK(is_frame(b, next), "frame %d with %d threads", next, threads);
    next++;
  }
  TU_CHECK_EQ(next, FRAMES);
  TU_CHECK_EQ(partial, TAIL);
  TU_CHECK_EQ(err, 0);
  frame_reader_stop(r);
}

/* Ranges of the file through one ring: frames first.. of each, at most
 * count, the last range left with frames held and unread. */
static void test_ranges(FILE *in, int threads)
{
  static const struct {
    int first, count, expect;
  } ranges[] = {{5, 10, 10}, {0, 3, 3}, {30, 20, 10}, {12, 6, 6}};
  frame_reader *r = frame_reader_new(FRAME, DEPTH, threads == 1);
  TU_CHECK(r != NULL, "frame_reader_new");
  if (!r) return;
  for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++) {
    size_t partial;
    int err, got = 0;
    /* where the reader starts: the descriptor's offset (stdio's may lag) */
    lseek(fileno(in), (off_t)ranges[i].first * FRAME, SEEK_SET);
    TU_CHECK(frame_reader_begin(r, in, ranges[i].count, threads) == 0, "begin range %zu", i);
    const uint8_t *f;
    while ((f = frame_reader_next(r, &partial, &err)) != NULL) {
      TU_CHECK(is_frame(f, ranges[i].first + got), "range %zu frame %d, %d threads", i, got,
               threads);
      got++;
      if (i != 1) frame_reader_release(r); /* range 1: every frame left held */
    }
    TU_CHECK(got == ranges[i].expect, "range %zu: %d frames of %d", i, got, ranges[i].expect);
    frame_reader_end(r);
  }
  frame_reader_stop(r);
}

int main(void)
{
  FILE *in = tmpfile();
  TU_CHECK(in != NULL, "a temporary file");
  if (!in) return tu_finish("test_frame_reader");
  uint8_t frame[FRAME];
  for (int k = 0; k < FRAMES; k++) {
    memset(frame, k, sizeof frame);
    fwrite(frame, 1, sizeof frame, in);
  }
  fwrite(frame, 1, TAIL, in);
  fflush(in);
  test_held_frames(in, 1);
  test_held_frames(in, 3);
  test_ranges(in, 1);
  test_ranges(in, 3);
  fclose(in);
  return tu_finish("test_frame_reader");
}
