/* The CPU entropy decoder's multi-symbol steps (c63/huff_lut_cpu.h) against
 * the same decoder taking every symbol alone: on the conformance streams,
 * generated ones and many corrupt copies of their frames (cut short, ending
 * in an unpaired FF, flipped bits, random bytes), the status, the message,
 * the coefficients and the vectors are the same. A step decodes several
 * symbols at once only where that cannot change what the symbols decode
 * to or which error comes first.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c63/bitwriter.h"
#include "c63/entropy.h"
#include "c63/huff_lut_cpu.h"
#include "c63/tables.h"
#include "tutil.h"

/* Corrupt copies per frame, and frames per stream that get them. */
#define TRIALS 500
#define CORRUPT_FRAMES 2

typedef struct decoded {
  c63_sparse_frame f;
  int status;
  char msg[256];
} decoded;

static void decode_with(const uint8_t *data, size_t size, const c63_geometry *g, int keyframe,
                        const c63_huff_steps *steps, decoded *out)
{
  if (c63_sparse_frame_reserve(&out->f, c63_frame_blocks(g), c63_sparse_entries_bound(g, size), 0))
    abort();
  out->msg[0] = '\0';
  out->status =
      c63_entropy_decode_steps(data, size, g, keyframe, steps, &out->f, out->msg, sizeof(out->msg));
}

static int same_output(const decoded *a, const decoded *b, size_t blocks)
{
  if (a->status != b->status || strcmp(a->msg, b->msg)) return 0;
  if (a->status) return 1; /* the output of a failed frame is undefined */
  for (size_t i = 0; i < blocks; i++) {
    if (a->f.count[i] != b->f.count[i] || memcmp(&a->f.mvs[i], &b->f.mvs[i], sizeof(c63_mv)) ||
        memcmp(a->f.entries + a->f.start[i], b->f.entries + b->f.start[i], a->f.count[i] * 4u))
      return 0;
  }
  return 1;
}

/* Frame data damaged in one of six ways, in place; returns its new size. */
static size_t corrupt(uint8_t *d, size_t n, int kind, uint64_t *rng)
{
  size_t p;
  switch (kind) {
  case 0: /* cut near the end */
    return n - tu_rand(rng) % (n < 64 ? n : 64);
  case 1: /* ending with an FF whose stuffing byte is missing */
    n -= tu_rand(rng) % (n < 16 ? n : 16);
    if (n) d[n - 1] = 0xff;
    return n;
  case 2: /* an FF near the end, maybe the last byte */
    p = n - 1 - tu_rand(rng) % (n < 32 ? n : 32);
    d[p] = 0xff;
    return tu_rand(rng) & 1 ? p + 1 : n;
  case 3: /* a flipped bit */
    d[tu_rand(rng) % n] ^= (uint8_t)(1u << tu_rand(rng) % 8);
    return n;
  case 4: /* random bytes */
    for (int k = 0; k < 8; k++)
      d[tu_rand(rng) % n] = (uint8_t)tu_rand(rng);
    return n;
  default: /* cut anywhere */
    return tu_rand(rng) % n;
  }
}

static int failed_frames, corrupt_frames;

static void check_frame(const uint8_t *data, size_t size, const c63_geometry *g, int keyframe,
                        const char *what, int trial)
{
  static decoded steps, alone;
  decode_with(data, size, g, keyframe, c63_huff_steps_get(), &steps);
  decode_with(data, size, g, keyframe, c63_huff_steps_symbolwise(), &alone);
  TU_CHECK(same_output(&steps, &alone, c63_frame_blocks(g)),
           "%s, trial %d: steps give %d (%s), symbols alone %d (%s)%s", what, trial, steps.status,
           steps.msg, alone.status, alone.msg,
           steps.status == alone.status ? ", or other coefficients" : "");
  failed_frames += steps.status != C63_OK;
}

/* Every frame of a stream, and corrupt copies of its first frames. */
static void check_stream(const uint8_t *s, size_t len, const char *what, int max_frames)
{
  uint64_t rng = 0x5eed ^ len;
  char name[160];
  int frames = 0;
  for (size_t off = 0; off < len && frames < max_frames; frames++) {
    c63_frame_header hdr;
    TU_CHECK(c63_parse_frame_header(s + off, len - off, &hdr, NULL, 0) == C63_OK,
             "%s: frame %d does not parse", what, frames);
    if (tu_failures) return;
    const uint8_t *data = s + off + hdr.data_offset;
    c63_geometry g;
    c63_geometry_init(&g, hdr.width, hdr.height);
    snprintf(name, sizeof(name), "%s frame %d", what, frames);
    check_frame(data, hdr.data_size, &g, hdr.keyframe, name, -1);
    if (frames < CORRUPT_FRAMES && hdr.data_size) {
      uint8_t *copy = malloc(hdr.data_size);
      for (int trial = 0; trial < TRIALS && !tu_failures; trial++) {
        memcpy(copy, data, hdr.data_size);
        const size_t n = corrupt(copy, hdr.data_size, trial % 6, &rng);
        check_frame(copy, n, &g, hdr.keyframe, name, trial);
        corrupt_frames++;
      }
      free(copy);
    }
    off += hdr.frame_size;
  }
}

static void check_first_frames(const uint8_t *s, size_t len, const char *name, void *ctx)
{
  (void)ctx;
  check_stream(s, len, name, 4);
}

/* The streams of the conformance manifest (the peer's and the reference
 * encoder's among them). */
static void check_conformance(void)
{
  tu_for_each_conformance_stream(check_first_frames, NULL);
}

/* A synthetic clip at quality q, every fourth frame a keyframe. */
static void check_generated(int w, int h, int q, int natural)
{
  tu_buf out = {0};
  char msg[256], what[96];
  TU_CHECK(tu_encode_synth(w, h, q, natural, 6, 4, &out, msg, sizeof(msg)) == C63_OK, "encode: %s",
           msg);
  snprintf(what, sizeof(what), "%s %dx%d q%d", natural ? "natural" : "pan", w, h, q);
  if (!tu_failures) check_stream(out.data, out.size, what, 6);
  tu_buf_free(&out);
}

/* A large value of at most `size` bits (half of them all ones), either
 * sign. */
static int large_value(uint64_t *rng, int size)
{
  const int v = (int)(tu_rand(rng) & 1 ? (1u << size) - 1
                                       : (1u << (size - 1)) + tu_rand(rng) % (1u << (size - 1)));
  return tu_rand(rng) & 1 ? v : -v;
}

/* Keyframe data of a 64x64 picture dense with FF bytes: long codes with
 * values of many one bits (vectors of sizes past 7, the largest DC
 * differences and AC coefficients), where the reader refills byte by byte
 * and holds no bits past its count. A step decoded without a fill after
 * such a code reads zeros instead of the data. */
static void check_ff_dense(void)
{
  const c63_huff_enc *t = c63_huff_enc_tables();
  c63_geometry g;
  c63_geometry_init(&g, 64, 64);
  const size_t blocks = c63_frame_blocks(&g);
  uint8_t *bits = malloc(blocks * C63_MAX_BLOCK_BYTES + 8);
  uint64_t rng = 0xff;
  for (int trial = 0; trial < 200 && !tu_failures; trial++) {
    c63_bitwriter bw;
    c63_bw_init(&bw, bits);
    for (size_t b = 0; b < blocks; b++) {
      const int chroma = b % 6 >= 4, coded = (int)(tu_rand(&rng) % 3);
      c63_bw_put(&bw, coded ? 2 : 0, coded ? 2 : 1); /* a coded vector, or none */
      if (coded) {
        tu_put_value(&bw, &t[C63_HUFF_MV], 0, large_value(&rng, 8 + (int)(tu_rand(&rng) % 4)));
        tu_put_value(&bw, &t[C63_HUFF_MV], 0, large_value(&rng, 1 + (int)(tu_rand(&rng) % 11)));
      }
      tu_put_value(&bw, &t[chroma ? C63_HUFF_DC1 : C63_HUFF_DC0], 0,
                   large_value(&rng, 1 + (int)(tu_rand(&rng) % 11)));
      const c63_huff_enc *ac = &t[chroma ? C63_HUFF_AC1 : C63_HUFF_AC0];
      for (int k = 0, n = (int)(tu_rand(&rng) % 6); k < n; k++)
        tu_put_value(&bw, ac, (int)(tu_rand(&rng) % 3),
                     large_value(&rng, 1 + (int)(tu_rand(&rng) % 10)));
      c63_bw_put(&bw, ac->code[0], ac->len[0]); /* EOB */
    }
    c63_bw_flush_bytes(&bw);
    c63_bytebuf data = {0};
    TU_CHECK(c63_write_stuffed(&data, bw.start, (size_t)(bw.p - bw.start), (uint32_t)bw.acc,
                               bw.nbits) == 0,
             "out of memory");
    static decoded steps, alone;
    decode_with(data.data, data.size, &g, 1, c63_huff_steps_get(), &steps);
    decode_with(data.data, data.size, &g, 1, c63_huff_steps_symbolwise(), &alone);
    TU_CHECK(alone.status == C63_OK, "FF-dense frame %d: %s", trial, alone.msg);
    TU_CHECK(same_output(&steps, &alone, blocks),
             "FF-dense frame %d: steps give %d (%s) or other coefficients", trial, steps.status,
             steps.msg);
    c63_bytebuf_free(&data);
  }
  free(bits);
}

int main(void)
{
  check_ff_dense();
  check_conformance();
  check_generated(50, 38, 5, 0);
  check_generated(200, 120, 25, 1);
  check_generated(330, 190, 50, 1);
  check_generated(640, 360, 10, 1);
  printf("%d corrupt frames, %d frames rejected, all with the same verdict and output\n",
         corrupt_frames, failed_frames);
  /* The corruptions must reach both verdicts, or the test shows little. */
  TU_CHECK(failed_frames > corrupt_frames / 4 && failed_frames < corrupt_frames,
           "%d of %d corrupt frames rejected", failed_frames, corrupt_frames);
  return tu_finish("entropy_steps");
}
