/* The tests' common helpers (no GLib): check macros that report and count
 * failures instead of aborting, a deterministic generator, file and
 * manifest access, whole-clip encode and decode through the public API.
 * The element tests' harness (tests/check/c63check.h) is built on them.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef C63_TUTIL_H
#define C63_TUTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "c63/c63.h"
#include "c63/encoder_stats.h"

extern int tu_failures;

#define TU_CHECK(cond, ...)                                                                        \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      fflush(stdout); /* keep the order of progress lines and failures */                          \
      fprintf(stderr, "%s:%d: FAIL: %s: ", __FILE__, __LINE__, #cond);                             \
      fprintf(stderr, __VA_ARGS__);                                                                \
      fprintf(stderr, "\n");                                                                       \
      tu_failures++;                                                                               \
    }                                                                                              \
  } while (0)

/* TU_CHECK where the condition says it all. */
#define TU_CHECK_TRUE(cond) TU_CHECK(cond, "%s", "false")

/* a == b as integers, with both values in the failure. */
#define TU_CHECK_EQ(a, b)                                                                          \
  do {                                                                                             \
    long long a_ = (long long)(a), b_ = (long long)(b);                                            \
    TU_CHECK(a_ == b_, "%s == %lld, expected %s == %lld", #a, a_, #b, b_);                         \
  } while (0)

/* Exit status for main: 0 when no check failed. Prints a summary line. */
int tu_finish(const char *test_name);

/* A growing byte buffer. */
typedef struct tu_buf {
  uint8_t *data;
  size_t size, cap;
} tu_buf;

void tu_buf_append(tu_buf *b, const void *p, size_t n);
void tu_buf_free(tu_buf *b);

/* Read a whole file; NULL (after a message) when it cannot be read. */
uint8_t *tu_read_file(const char *path, size_t *len);

/* $C63_TEST_DATA/conformance/<name>, and $C63_TEST_YUV_DIR/<name>. */
void tu_data_path(char *out, size_t out_size, const char *name);
void tu_yuv_path(char *out, size_t out_size, const char *name);

/* One row of tests/data/conformance/MANIFEST.tsv. */
typedef struct tu_manifest_row {
  char stream[128];
  char input[128]; /* the .yuv name, without .xz */
  int width, height, frames, quality, keyframe_interval, search_range;
  char stream_sha256[65], decoded_sha256[65];
  double psnr_y_db;
} tu_manifest_row;

/* Read the manifest; returns the number of rows (at most max), or -1. */
int tu_read_manifest(tu_manifest_row *rows, int max);

/* Every conformance stream read whole and given to check(bytes, len, name,
 * ctx); a manifest or stream that cannot be read is a failure. */
void tu_for_each_conformance_stream(void (*check)(const uint8_t *s, size_t len, const char *name,
                                                  void *ctx),
                                    void *ctx);

size_t tu_i420_size(int width, int height);

/* Encode frames contiguous I420 pictures of p's size; appends all packets to
 * out. Returns C63_OK or the failing status (msg set). */
int tu_encode(const c63_enc_params *p, const uint8_t *yuv, int frames, tu_buf *out, char *msg,
              size_t msg_size);
/* The same, with the backend's stage timings of the run in *stats
 * (C63_ERR_UNSUPPORTED for a backend without them). */
int tu_encode_timed(const c63_enc_params *p, const uint8_t *yuv, int frames, tu_buf *out,
                    c63_stage_stats *stats, char *msg, size_t msg_size);
/* The same with each picture made by picture(ctx, i, pic) (pic zeroed
 * before; user set after): any layout, format or memory. */
typedef void (*tu_picture_fn)(void *ctx, int i, c63_picture *pic);
int tu_encode_pictures(const c63_enc_params *p, tu_picture_fn picture, void *ctx, int frames,
                       tu_buf *out, char *msg, size_t msg_size);
/* The same with c63_encoder_send_picture_borrowed: picture i's memory is
 * the encoder's until released(ctx, i), called once its packet is
 * received (pictures whose packets never come are the caller's again once
 * this returns). */
typedef void (*tu_released_fn)(void *ctx, int i);
int tu_encode_borrowed(const c63_enc_params *p, tu_picture_fn picture, tu_released_fn released,
                       void *ctx, int frames, tu_buf *out, char *msg, size_t msg_size);

/* A tight I420 picture as NV12: luma rows y_stride apart, the interleaved
 * chroma (U first) rows uv_stride apart. */
void tu_i420_to_nv12(const uint8_t *i420, int w, int h, uint8_t *y, int y_stride, uint8_t *uv,
                     int uv_stride);

/* A tight I420 picture laid out in buf with padded rows, as a pipeline
 * hands pictures over: luma rows w + pad apart, chroma rows (NV12: the
 * interleaved pairs) pad bytes longer than they are; pic points into buf.
 * Returns the bytes used of buf: tu_padded_size(w, h, nv12, pad). */
/* The bytes of tu_padded_picture's layout, the room buf needs. More than
 * tu_i420_size(w + pad, h): each chroma row is pad bytes longer, not pad / 2. */
size_t tu_padded_size(int w, int h, int nv12, int pad);
size_t tu_padded_picture(const uint8_t *i420, int w, int h, int nv12, int pad, uint8_t *buf,
                         c63_picture *pic);

/* Whether the CUDA backend is missing on device 0 (no build, driver or
 * device): then prints the SKIP line meson shows; the test exits 77. */
int tu_cuda_missing(void);

/* How the CUDA decoding backend is set up, through the environment it
 * reads when the decoder is made: entropy decoding on the decoder's CPU
 * threads (C63_CUDA_CPU_ENTROPY=1), or on the GPU in batches of `batch`
 * frames, `batches` of them in flight (C63_CUDA_DECODE_BATCH and
 * C63_CUDA_DECODE_BATCHES; 0: the policy's). */
typedef struct tu_cuda_decoding {
  int cpu_entropy, batch, batches;
} tu_cuda_decoding;

/* c63_decoder_new with the environment set as setup says (NULL: the
 * defaults), and cleared again. */
int tu_decoder_new(const c63_dec_params *p, const tu_cuda_decoding *setup, c63_decoder **dec,
                   char *msg, size_t msg_size);

/* Result of decoding a whole stream the way a player would (and c63-dec
 * does): split it with libc63's framer (c63_frame_scan), which skips junk
 * and gives up on broken frames, decode each frame; after lost data the
 * decoder is reset, so decoding resumes at the next keyframe. */
typedef struct tu_decode_result {
  int frames_ok, frames_bad, header_errors;
  int width, height;    /* of the last decoded frame */
  size_t garbage_bytes; /* bytes skipped while resynchronising */
  int last_status;      /* status of the last failure */
  char last_error[256]; /* its message */
  int empty_message;    /* a failure came with an empty message */
  int unknown_status;   /* a failure returned a status outside c63_status */
} tu_decode_result;

/* Decode all of stream[0..len). When out is not NULL, the decoded pictures
 * are appended to it as tight I420. */
void tu_decode_stream(const uint8_t *stream, size_t len, tu_buf *out, tu_decode_result *res);

/* Decode every frame of stream[0..len) on dec, split with
 * c63_parse_frame_header; every frame must parse and decode (a failed check
 * names `what` and the frame). Appends the pictures to pics as tight I420;
 * returns the frames decoded. */
int tu_decode_frames(c63_decoder *dec, const uint8_t *stream, size_t len, tu_buf *pics,
                     const char *what);
/* The same through c63_decoder_send_packet / receive_picture (frames in
 * flight); every frame must decode, and come out in order. */
int tu_decode_frames_sr(c63_decoder *dec, const uint8_t *stream, size_t len, tu_buf *pics,
                        const char *what);

/* Copy a decoded picture as tight I420 (width x height planes). */
void tu_append_picture(tu_buf *out, const c63_decoded_picture *pic);

/* Mean squared error -> PSNR in dB (capped at 100). */
double tu_psnr(const uint8_t *a, const uint8_t *b, size_t n);

/* Deterministic PRNG (xorshift64*). */
uint64_t tu_rand(uint64_t *state);

/* Append value v coded with Huffman table t (docs/format.md 4.3): the code
 * of run << 4 | size (run 0 for vectors and DC differences), then the
 * value's extra bits. */
struct c63_bitwriter;
struct c63_huff_enc;
void tu_put_value(struct c63_bitwriter *bw, const struct c63_huff_enc *t, int run, int v);

/* A synthetic clip (tools/synth.h: synth_natural_frame when natural, else
 * synth_frame) of `frames` w x h pictures, encoded at quality q with a
 * keyframe every keyframe_interval frames, appended to out. */
int tu_encode_synth(int w, int h, int q, int natural, int frames, int keyframe_interval,
                    tu_buf *out, char *msg, size_t msg_size);

#endif
