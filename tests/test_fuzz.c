/* A deterministic, bounded loop of random corruptions of real streams. Each
 * iteration takes a few frames of a conformance stream or of a stream made
 * here, applies 1..8 random mutations (bit flips, byte overwrites with marker
 * bytes, insertions, deletions, truncation, chunks repeated or moved) and
 * decodes the result the way a player does (tu_decode_stream: split, resync,
 * decode). The library must return known status codes with messages, never
 * crash, hang or touch memory it does not own (run it under valgrind or ASan
 * too), and a clean stream decoded afterwards on a fresh decoder must give
 * the clean pixels.
 * Usage: test_fuzz [ITERATIONS [SEED]]  (default 2000, seed 0x63c63)
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdlib.h>
#include <string.h>

#include "synth.h"
#include "tutil.h"

static void mutate(tu_buf *b, uint64_t *rng)
{
  int n = 1 + (int)(tu_rand(rng) % 8);
  static const uint8_t interesting[] = {0xff, 0x00, 0xd8, 0xd9, 0xdb, 0xc0, 0xc4, 0xda, 0x01, 0x80};

  for (int i = 0; i < n && b->size > 0; i++) {
    size_t pos = (size_t)(tu_rand(rng) % b->size);
    switch (tu_rand(rng) % 8) {
    case 0: /* flip a bit */
    case 1:
      b->data[pos] ^= (uint8_t)(1u << (tu_rand(rng) % 8));
      break;
    case 2: /* random byte */
      b->data[pos] = (uint8_t)tu_rand(rng);
      break;
    case 3: /* a marker-ish byte */
      b->data[pos] = interesting[tu_rand(rng) % sizeof interesting];
      break;
    case 4: { /* insert 1..16 random bytes */
      size_t k = 1 + (size_t)(tu_rand(rng) % 16);
      tu_buf t = {0};
      tu_buf_append(&t, b->data, pos);
      for (size_t j = 0; j < k; j++) {
        uint8_t v = (uint8_t)tu_rand(rng);
        tu_buf_append(&t, &v, 1);
      }
      tu_buf_append(&t, b->data + pos, b->size - pos);
      tu_buf_free(b);
      *b = t;
      break;
    }
    case 5: { /* delete 1..64 bytes */
      size_t k = 1 + (size_t)(tu_rand(rng) % 64);
      if (k > b->size - pos) k = b->size - pos;
      memmove(b->data + pos, b->data + pos + k, b->size - pos - k);
      b->size -= k;
      break;
    }
    case 6: /* truncate */
      b->size = pos;
      break;
    case 7: { /* copy a chunk over another place */
      size_t k = 1 + (size_t)(tu_rand(rng) % 256), from = (size_t)(tu_rand(rng) % b->size);
      if (k > b->size - pos) k = b->size - pos;
      if (k > b->size - from) k = b->size - from;
      memmove(b->data + pos, b->data + from, k);
      break;
    }
    }
  }
}

int main(int argc, char **argv)
{
  long iterations = argc > 1 ? strtol(argv[1], NULL, 0) : 2000;
  uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 0) : 0x63c63;
  uint64_t rng = seed ? seed : 1;
  tu_buf src[3] = {{0}, {0}, {0}}, clean_pics[3] = {{0}, {0}, {0}};
  tu_decode_result clean[3];
  const char *names[2] = {"pan_176x144.c63", "testsrc_640x200.c63"};
  long rejected = 0, decoded = 0;

  /* Sources: the first 4 frames of two reference streams (cut at a frame
   * boundary) and a 4-frame stream of ours at an odd size. */
  for (int i = 0; i < 2; i++) {
    char path[1024];
    size_t len, pos = 0;
    uint8_t *d;
    tu_data_path(path, sizeof path, names[i]);
    d = tu_read_file(path, &len);
    TU_CHECK(d != NULL, "cannot read %s", path);
    if (d == NULL) return tu_finish("fuzz");
    for (int f = 0; f < 4; f++) {
      c63_frame_header hdr;
      char msg[256];
      if (c63_parse_frame_header(d + pos, len - pos, &hdr, msg, sizeof msg) != C63_OK) break;
      pos += hdr.frame_size;
    }
    tu_buf_append(&src[i], d, pos);
    free(d);
  }
  {
    int w = 37, h = 29, frames = 4;
    size_t fsize = tu_i420_size(w, h);
    uint8_t *clip = malloc(fsize * frames);
    c63_enc_params p;
    char msg[256] = "";
    for (int t = 0; t < frames; t++)
      synth_frame(clip + (size_t)t * fsize, w, h, t);
    c63_enc_params_init(&p);
    p.width = w;
    p.height = h;
    p.keyframe_interval = 2;
    TU_CHECK(tu_encode(&p, clip, frames, &src[2], msg, sizeof msg) == C63_OK, "encode: %s", msg);
    free(clip);
  }
  for (int i = 0; i < 3; i++) {
    tu_decode_stream(src[i].data, src[i].size, &clean_pics[i], &clean[i]);
    TU_CHECK(clean[i].frames_ok == 4 && clean[i].frames_bad == 0, "clean source %d: %d frames", i,
             clean[i].frames_ok);
  }

  for (long it = 0; it < iterations; it++) {
    int which = (int)(tu_rand(&rng) % 3);
    tu_buf b = {0}, exact = {0};
    tu_decode_result res;

    tu_buf_append(&b, src[which].data, src[which].size);
    mutate(&b, &rng);
    /* an exact-size copy, so reads past the end are caught */
    tu_buf_append(&exact, b.data, b.size);
    exact.data = realloc(exact.data, exact.size ? exact.size : 1);
    tu_decode_stream(exact.data, exact.size, NULL, &res);
    TU_CHECK(!res.unknown_status, "iteration %ld: unknown status %d or bad size (%s)", it,
             res.last_status, res.last_error);
    TU_CHECK(!res.empty_message, "iteration %ld: an error without a message (status %d)", it,
             res.last_status);
    rejected += res.frames_bad + res.header_errors;
    decoded += res.frames_ok;
    tu_buf_free(&b);
    tu_buf_free(&exact);
    if (tu_failures > 20) break;
  }
  /* the library holds no state between decoders: a clean stream still decodes exactly */
  for (int i = 0; i < 3; i++) {
    tu_buf pics = {0};
    tu_decode_result res;
    tu_decode_stream(src[i].data, src[i].size, &pics, &res);
    TU_CHECK(res.frames_ok == 4 && pics.size == clean_pics[i].size &&
                 memcmp(pics.data, clean_pics[i].data, pics.size) == 0,
             "clean source %d decodes differently after fuzzing", i);
    tu_buf_free(&pics);
  }
  printf("fuzz: %ld iterations (seed 0x%llx): %ld frames decoded, %ld rejected with a message\n",
         iterations, (unsigned long long)seed, decoded, rejected);
  for (int i = 0; i < 3; i++) {
    tu_buf_free(&src[i]);
    tu_buf_free(&clean_pics[i]);
  }
  return tu_finish("fuzz");
}
