/* The model of the parallel entropy decoder (c63/huff_sync_model.c) against
 * the sequential one (c63_entropy_decode): on every conformance stream and
 * on generated ones (keyframes and delta frames, several qualities, sizes
 * that are not multiples of 16), for several subsequence sizes, its
 * coefficients, vectors and flags equal the sequential decoder's exactly;
 * on corrupt frames it gives the same picture or hands the frame to the CPU,
 * never a picture where the CPU gives an error. Prints how far past a
 * subsequence's start a thread runs before it is in step (docs/design.md).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c63/entropy.h"
#include "c63/huff_sync_model.h"
#include "tutil.h"

static const uint32_t subseq_sizes[] = {32, 64, 128, 1024};
#define N_SIZES (sizeof(subseq_sizes) / sizeof(subseq_sizes[0]))

/* Figures per subsequence size over everything decoded. */
static c63_hs_stats totals[N_SIZES];

typedef struct frame_ref {
  const uint8_t *data;
  size_t size;
  int keyframe;
  c63_geometry g;
} frame_ref;

static int same_frame(const c63_sparse_frame *a, const c63_sparse_frame *b, size_t blocks)
{
  for (size_t i = 0; i < blocks; i++) {
    if (a->count[i] != b->count[i] || memcmp(&a->mvs[i], &b->mvs[i], sizeof(c63_mv)) ||
        memcmp(a->entries + a->start[i], b->entries + b->start[i], a->count[i] * 4u))
      return 0;
  }
  return 1;
}

static void reserve(c63_sparse_frame *f, const frame_ref *fr)
{
  if (c63_sparse_frame_reserve(f, c63_frame_blocks(&fr->g),
                               c63_sparse_entries_bound(&fr->g, fr->size), 0))
    abort();
}

static void add_stats(c63_hs_stats *t, const c63_hs_stats *s)
{
  t->subsequences += s->subsequences;
  t->met += s->met;
  t->fallbacks += s->fallbacks;
  if (s->fallback_run_max > t->fallback_run_max) t->fallback_run_max = s->fallback_run_max;
  t->meet_bits_sum += s->meet_bits_sum;
  if (s->meet_bits_max > t->meet_bits_max) t->meet_bits_max = s->meet_bits_max;
  t->synced += s->synced;
  t->never_synced += s->never_synced;
  t->sync_bits_sum += s->sync_bits_sum;
  if (s->sync_bits_max > t->sync_bits_max) t->sync_bits_max = s->sync_bits_max;
  t->synced6 += s->synced6;
  t->never_synced6 += s->never_synced6;
  t->sync6_bits_sum += s->sync6_bits_sum;
  if (s->sync6_bits_max > t->sync6_bits_max) t->sync6_bits_max = s->sync6_bits_max;
}

/* One frame, every subsequence size. corrupt: the data may be anything;
 * otherwise the model must decode it itself. Returns the frames the model
 * handed to the CPU. */
static int check_frame(const frame_ref *fr, int corrupt, const char *what)
{
  static c63_sparse_frame seq, par;
  char msg[256];
  reserve(&seq, fr);
  reserve(&par, fr);
  const int want =
      c63_entropy_decode(fr->data, fr->size, &fr->g, fr->keyframe, &seq, msg, sizeof(msg));
  if (!corrupt) TU_CHECK(want == C63_OK, "%s: %s", what, msg);
  int handed = 0;
  for (size_t i = 0; i < N_SIZES; i++) {
    c63_hs_stats st;
    const int got =
        c63_hs_model_decode(fr->data, fr->size, &fr->g, fr->keyframe, subseq_sizes[i], &par, &st);
    TU_CHECK(got == C63_OK || got == C63_HS_HAND_TO_CPU, "%s: status %d", what, got);
    if (got == C63_HS_HAND_TO_CPU) {
      TU_CHECK(corrupt, "%s, %u-bit subsequences: handed a valid frame to the CPU", what,
               subseq_sizes[i]);
      handed++;
      continue;
    }
    TU_CHECK(want == C63_OK, "%s, %u-bit subsequences: a picture where the CPU says: %s", what,
             subseq_sizes[i], msg);
    if (want == C63_OK)
      TU_CHECK(same_frame(&seq, &par, c63_frame_blocks(&fr->g)),
               "%s, %u-bit subsequences: output differs", what, subseq_sizes[i]);
    if (!corrupt) add_stats(&totals[i], &st);
  }
  return handed;
}

/* Every frame of a stream, and corrupted copies of some. */
static void check_stream(const uint8_t *s, size_t len, const char *what, int max_frames,
                         int corrupt_frames)
{
  uint64_t rng = 0x63c63 ^ len;
  int frames = 0, handed = 0, corrupt_checked = 0;
  for (size_t off = 0; off < len && frames < max_frames; frames++) {
    c63_frame_header hdr;
    char name[160];
    TU_CHECK(c63_parse_frame_header(s + off, len - off, &hdr, NULL, 0) == C63_OK,
             "%s: frame %d does not parse", what, frames);
    if (tu_failures) return;
    frame_ref fr = {
        .data = s + off + hdr.data_offset, .size = hdr.data_size, .keyframe = hdr.keyframe};
    c63_geometry_init(&fr.g, hdr.width, hdr.height);
    snprintf(name, sizeof(name), "%s frame %d", what, frames);
    check_frame(&fr, 0, name);
    if (frames < corrupt_frames) {
      uint8_t *copy = malloc(fr.size);
      for (int trial = 0; trial < 12; trial++) {
        memcpy(copy, fr.data, fr.size);
        frame_ref bad = fr;
        bad.data = copy;
        if (trial % 4 == 3) {
          bad.size = tu_rand(&rng) % fr.size; /* cut short */
        } else {
          for (int k = 0; k <= trial % 4; k++) /* a few flipped bits or bytes */
            copy[tu_rand(&rng) % fr.size] ^= (uint8_t)(trial & 1 ? 0xff : 1 << (tu_rand(&rng) % 8));
        }
        snprintf(name, sizeof(name), "%s frame %d corruption %d", what, frames, trial);
        handed += check_frame(&bad, 1, name);
        corrupt_checked++;
      }
      free(copy);
    }
    off += hdr.frame_size;
  }
  printf("%s: %d frames; %d corrupt copies, handed to the CPU %d times (of %zu sizes each)\n", what,
         frames, corrupt_checked, handed, N_SIZES);
}

static void check_conformance(const char *name)
{
  char path[512];
  size_t len;
  tu_data_path(path, sizeof(path), name);
  uint8_t *s = tu_read_file(path, &len);
  TU_CHECK(s != NULL, "cannot read %s", path);
  if (!s) return;
  /* a keyframe and the delta frames after it; corrupt copies of two */
  check_stream(s, len, name, 4, 2);
  free(s);
}

/* A synthetic clip encoded at quality q, every fourth frame a keyframe. */
static void check_generated(int w, int h, int q, int natural)
{
  const int frames = 6;
  tu_buf out = {0};
  char msg[256], what[96];
  TU_CHECK(tu_encode_synth(w, h, q, natural, frames, 4, &out, msg, sizeof(msg)) == C63_OK,
           "encode: %s", msg);
  snprintf(what, sizeof(what), "%s %dx%d q%d", natural ? "natural" : "pan", w, h, q);
  if (!tu_failures) check_stream(out.data, out.size, what, frames, 2);
  tu_buf_free(&out);
}

int main(void)
{
  static const char *const streams[] = {
      "pan_176x144.c63",     "pan_352x288.c63",       "mandel_1920x1080.c63",
      "testsrc_640x200.c63", "pan_352x288_q10k7.c63", "pan_352x288_q50r8.c63",
  };
  for (size_t i = 0; i < sizeof(streams) / sizeof(streams[0]); i++)
    check_conformance(streams[i]);
  check_generated(50, 38, 5, 0);
  check_generated(50, 38, 50, 1);
  check_generated(200, 120, 25, 1);
  check_generated(330, 190, 10, 0);
  check_generated(640, 360, 40, 1);
  for (size_t i = 0; i < N_SIZES; i++) {
    const c63_hs_stats *t = &totals[i];
    printf("%4u-bit subsequences: %d; the true decoding met a candidate after %.1f bits on "
           "average, %u at most, and none %ld times (%.2f%%, at most %d in a row)\n",
           subseq_sizes[i], t->subsequences,
           t->met ? (double)t->meet_bits_sum / (double)t->met : 0.0, t->meet_bits_max, t->fallbacks,
           100.0 * (double)t->fallbacks / (double)(t->met + t->fallbacks + !t->met),
           t->fallback_run_max);
    printf("      one decoder from MCU position 0: in step after %.1f bits on average, %u at "
           "most, %ld not within %d; the first of six in step: %.1f on average, %u at most, %ld "
           "not\n",
           t->synced ? (double)t->sync_bits_sum / (double)t->synced : 0.0, t->sync_bits_max,
           t->never_synced, C63_HS_SYNC_WINDOW,
           t->synced6 ? (double)t->sync6_bits_sum / (double)t->synced6 : 0.0, t->sync6_bits_max,
           t->never_synced6);
  }
  return tu_finish("huff_sync");
}
