/* Bad input to the frame parser and the decoder: truncated frames at every
 * length, bit flips, wrong and missing markers, impossible sizes, table ids
 * out of range, motion vectors outside the reference plane, a first frame
 * that is not a keyframe, a size change under a delta frame. Each must give
 * an error code and a message (no crash, no out-of-bounds access: run this
 * under valgrind or ASan too), and decoding must resume at the next keyframe
 * with exactly the pixels a clean decode gives.
 * Every decode gets a buffer of exactly the frame's size, so a read past
 * the end is caught by valgrind/ASan.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdlib.h>
#include <string.h>

#include "synth.h"
#include "tutil.h"

#define MAX_FRAMES 16

typedef struct stream {
  tu_buf data;
  int n;
  size_t off[MAX_FRAMES], size[MAX_FRAMES];
  int keyframe[MAX_FRAMES];
  tu_buf pic[MAX_FRAMES]; /* clean decode of each frame (tight I420) */
  int w, h;
} stream;

static int split(stream *s)
{
  size_t pos = 0;
  s->n = 0;
  while (pos < s->data.size && s->n < MAX_FRAMES) {
    c63_frame_header hdr;
    char msg[256];
    int ret = c63_parse_frame_header(s->data.data + pos, s->data.size - pos, &hdr, msg, sizeof msg);
    TU_CHECK(ret == C63_OK, "clean stream: %s", msg);
    if (ret != C63_OK) return -1;
    s->off[s->n] = pos;
    s->size[s->n] = hdr.frame_size;
    s->keyframe[s->n] = hdr.keyframe;
    s->w = hdr.width;
    s->h = hdr.height;
    s->n++;
    pos += hdr.frame_size;
  }
  return 0;
}

/* Decode data[0..len) from an exact-size copy. */
static int decode_copy(c63_decoder *dec, const uint8_t *data, size_t len, tu_buf *pic_out)
{
  uint8_t *copy = malloc(len ? len : 1);
  c63_decoded_picture pic;
  int ret;

  if (len) memcpy(copy, data, len);
  ret = c63_decoder_decode(dec, copy, len, &pic);
  if (ret == C63_OK && pic_out != NULL) {
    pic_out->size = 0;
    tu_append_picture(pic_out, &pic);
  }
  free(copy);
  return ret;
}

static int parse_copy(const uint8_t *data, size_t len, c63_frame_header *hdr, char *msg,
                      size_t msg_size)
{
  uint8_t *copy = malloc(len ? len : 1);
  int ret;
  if (len) memcpy(copy, data, len);
  msg[0] = '\0';
  ret = c63_parse_frame_header(copy, len, hdr, msg, msg_size);
  free(copy);
  return ret;
}

static int is_error(int s)
{
  return s < C63_OK && s >= C63_ERR_UNSUPPORTED;
}

/* After a failure, the next keyframe must decode to its clean pixels. */
static void check_resume(c63_decoder *dec, const stream *s, int key, const char *what)
{
  tu_buf pic = {0};
  int ret = decode_copy(dec, s->data.data + s->off[key], s->size[key], &pic);
  TU_CHECK(ret == C63_OK, "%s: next keyframe fails: %s", what, c63_decoder_error(dec));
  TU_CHECK(ret != C63_OK ||
               (pic.size == s->pic[key].size && memcmp(pic.data, s->pic[key].data, pic.size) == 0),
           "%s: next keyframe decodes to different pixels", what);
  tu_buf_free(&pic);
}

/* A frame that must be rejected: by the parser or, if it parses, by the
 * decoder, with a known error code and a message; then the next keyframe
 * decodes cleanly on the same decoder. */
static void expect_rejected(c63_decoder *dec, const uint8_t *frame, size_t len, const stream *s,
                            int next_key, const char *what)
{
  c63_frame_header hdr;
  char msg[256];
  int ret = parse_copy(frame, len, &hdr, msg, sizeof msg);

  if (ret == C63_OK) {
    ret = decode_copy(dec, frame, hdr.frame_size, NULL);
    TU_CHECK(is_error(ret), "%s: decoder returned %d", what, ret);
    TU_CHECK(ret == C63_OK || c63_decoder_error(dec)[0] != '\0',
             "%s: decoder error without a message", what);
    if (ret != C63_OK)
      printf("  %-40s decoder: %s: %s\n", what, c63_status_string(ret), c63_decoder_error(dec));
  } else {
    TU_CHECK(is_error(ret), "%s: parser returned %d", what, ret);
    TU_CHECK(msg[0] != '\0', "%s: parser error without a message", what);
    printf("  %-40s parser: %s: %s\n", what, c63_status_string(ret), msg);
    /* The decoder must reject it as well. */
    ret = decode_copy(dec, frame, len, NULL);
    TU_CHECK(is_error(ret), "%s: the parser rejects it but the decoder returned %d", what, ret);
    TU_CHECK(c63_decoder_error(dec)[0] != '\0', "%s: decoder error without a message", what);
  }
  check_resume(dec, s, next_key, what);
}

static void make_stream(stream *s, int w, int h, int frames, int kf_interval)
{
  size_t fsize = tu_i420_size(w, h);
  uint8_t *clip = malloc(fsize * frames);
  c63_enc_params p;
  c63_decoder *dec;
  char msg[256] = "";
  int ret;

  memset(s, 0, sizeof *s);
  for (int t = 0; t < frames; t++)
    synth_frame(clip + (size_t)t * fsize, w, h, t);
  c63_enc_params_init(&p);
  p.width = w;
  p.height = h;
  p.keyframe_interval = kf_interval;
  ret = tu_encode(&p, clip, frames, &s->data, msg, sizeof msg);
  TU_CHECK(ret == C63_OK, "encode %dx%d: %s", w, h, msg);
  free(clip);
  split(s);
  c63_decoder_new(NULL, &dec, NULL, 0);
  for (int i = 0; i < s->n; i++) {
    ret = decode_copy(dec, s->data.data + s->off[i], s->size[i], &s->pic[i]);
    TU_CHECK(ret == C63_OK, "clean decode of frame %d: %s", i, c63_decoder_error(dec));
  }
  c63_decoder_free(dec);
}

static void load_stream(stream *s, const char *name, int max_frames)
{
  char path[1024];
  size_t len;
  uint8_t *d;
  c63_decoder *dec;

  memset(s, 0, sizeof *s);
  tu_data_path(path, sizeof path, name);
  d = tu_read_file(path, &len);
  TU_CHECK(d != NULL, "cannot read %s", path);
  if (d == NULL) return;
  tu_buf_append(&s->data, d, len);
  free(d);
  split(s);
  if (s->n > max_frames) {
    s->n = max_frames;
    s->data.size = s->off[s->n - 1] + s->size[s->n - 1];
  }
  c63_decoder_new(NULL, &dec, NULL, 0);
  for (int i = 0; i < s->n; i++) {
    int ret = decode_copy(dec, s->data.data + s->off[i], s->size[i], &s->pic[i]);
    TU_CHECK(ret == C63_OK, "clean decode of %s frame %d: %s", name, i, c63_decoder_error(dec));
  }
  c63_decoder_free(dec);
}

static void free_stream(stream *s)
{
  tu_buf_free(&s->data);
  for (int i = 0; i < MAX_FRAMES; i++)
    tu_buf_free(&s->pic[i]);
}

/* Offset of marker FF m in the headers of frame f (before its data). */
static size_t marker_at(const stream *s, int f, uint8_t m)
{
  const uint8_t *p = s->data.data + s->off[f];
  for (size_t i = 0; i + 1 < s->size[f]; i++)
    if (p[i] == 0xff && p[i + 1] == m) return i;
  return 0;
}

/* Every prefix of a keyframe and of a delta frame. */
static void test_truncation(const stream *s, const char *name)
{
  c63_decoder *dec;
  int fails = tu_failures;

  c63_decoder_new(NULL, &dec, NULL, 0);
  for (int f = 0; f < 2; f++) {
    const uint8_t *frame = s->data.data + s->off[f];
    for (size_t len = 0; len < s->size[f]; len++) {
      c63_frame_header hdr;
      char msg[256], what[128];
      int ret = parse_copy(frame, len, &hdr, msg, sizeof msg);
      snprintf(what, sizeof what, "%s frame %d cut at %zu", name, f, len);
      TU_CHECK(ret == C63_ERR_TRUNCATED, "%s: parser returned %d (%s)", what, ret, msg);
      TU_CHECK(msg[0] != '\0', "%s: no message", what);
      if (f == 1) { /* give the delta frame its reference first */
        ret = decode_copy(dec, s->data.data + s->off[0], s->size[0], NULL);
        TU_CHECK(ret == C63_OK, "%s: keyframe: %s", what, c63_decoder_error(dec));
      }
      ret = decode_copy(dec, frame, len, NULL);
      TU_CHECK(is_error(ret), "%s: decoder returned %d", what, ret);
      TU_CHECK(c63_decoder_error(dec)[0] != '\0', "%s: no decoder message", what);
      if (f == 1 && len % 101 == 0) {
        /* the failure dropped the reference: the complete delta frame now
         * needs a keyframe first */
        ret = decode_copy(dec, frame, s->size[1], NULL);
        TU_CHECK(ret == C63_ERR_NO_REFERENCE, "%s: then the whole delta frame gives %d", what, ret);
      }
      if (len % 97 == 0 || len + 1 == s->size[f]) check_resume(dec, s, 0, what);
      if (tu_failures - fails > 20) goto out; /* enough said */
    }
  }
out:
  printf("truncation of %s: %zu + %zu prefixes checked\n", name, s->size[0], s->size[1]);
  c63_decoder_free(dec);
}

/* Flip every bit of a keyframe and of a delta frame, one at a time. */
static void test_bitflips(const stream *s, int next_key, const char *name)
{
  c63_decoder *dec;
  int errors = 0, ok = 0, fails = tu_failures;

  c63_decoder_new(NULL, &dec, NULL, 0);
  for (int f = 0; f < 2; f++) {
    size_t size = s->size[f];
    uint8_t *frame = malloc(size);
    for (size_t bit = 0; bit < size * 8; bit++) {
      c63_frame_header hdr;
      char msg[256], what[128];
      int ret;
      memcpy(frame, s->data.data + s->off[f], size);
      frame[bit / 8] ^= (uint8_t)(0x80 >> (bit % 8));
      snprintf(what, sizeof what, "%s frame %d bit %zu", name, f, bit);
      if (f == 1) decode_copy(dec, s->data.data + s->off[0], s->size[0], NULL);
      ret = parse_copy(frame, size, &hdr, msg, sizeof msg);
      if (ret == C63_OK) {
        TU_CHECK(hdr.frame_size <= size, "%s: frame size %zu > %zu", what, hdr.frame_size, size);
        ret = decode_copy(dec, frame, hdr.frame_size, NULL);
        TU_CHECK(ret == C63_OK || (is_error(ret) && c63_decoder_error(dec)[0] != '\0'),
                 "%s: decoder returned %d '%s'", what, ret, c63_decoder_error(dec));
      } else {
        TU_CHECK(is_error(ret) && msg[0] != '\0', "%s: parser returned %d '%s'", what, ret, msg);
      }
      if (ret == C63_OK)
        ok++;
      else
        errors++;
      if (bit % 13 == 0) check_resume(dec, s, next_key, what);
      if (tu_failures - fails > 20) break;
    }
    free(frame);
  }
  printf("bit flips in %s: %d rejected, %d decoded (to other pixels or benign)\n", name, errors,
         ok);
  c63_decoder_free(dec);
}

/* A copy of frame f with byte edits applied: pairs of (offset, value). */
static void edited(const stream *s, int f, tu_buf *out, const size_t *offs, const uint8_t *vals,
                   int n)
{
  out->size = 0;
  tu_buf_append(out, s->data.data + s->off[f], s->size[f]);
  for (int i = 0; i < n; i++)
    out->data[offs[i]] = vals[i];
}

static void test_headers(const stream *s, int next_key)
{
  c63_decoder *dec;
  tu_buf fr = {0};
  size_t dqt = marker_at(s, 0, 0xdb), sof = marker_at(s, 0, 0xc0);
  size_t dht = marker_at(s, 0, 0xc4), sos = marker_at(s, 0, 0xda);
  size_t o[4];
  uint8_t v[4];
  static const int sizes[][2] = {{0, 0},    {65535, 65535}, {7, 8},   {8, 7},
                                 {8193, 8}, {8, 8193},      {0, 480}, {640, 0}};

  TU_CHECK(dqt == 2 && sof > dqt && dht > sof && sos > dht, "header layout %zu %zu %zu %zu", dqt,
           sof, dht, sos);
  c63_decoder_new(NULL, &dec, NULL, 0);
  printf("header corruptions:\n");

  /* wrong markers */
  o[0] = 1, v[0] = 0xd7;
  edited(s, 0, &fr, o, v, 1);
  expect_rejected(dec, fr.data, fr.size, s, next_key, "SOI replaced by FF D7");
  o[0] = dqt + 1, v[0] = 0xdc;
  edited(s, 0, &fr, o, v, 1);
  expect_rejected(dec, fr.data, fr.size, s, next_key, "DQT marker replaced");
  o[0] = sof + 1, v[0] = 0xc2;
  edited(s, 0, &fr, o, v, 1);
  expect_rejected(dec, fr.data, fr.size, s, next_key, "SOF0 replaced by SOF2");
  o[0] = dht + 1, v[0] = 0xc5;
  edited(s, 0, &fr, o, v, 1);
  expect_rejected(dec, fr.data, fr.size, s, next_key, "DHT marker replaced");
  o[0] = sos, v[0] = 0x00;
  edited(s, 0, &fr, o, v, 1);
  expect_rejected(dec, fr.data, fr.size, s, next_key, "SOS marker broken");
  o[0] = s->size[0] - 1, v[0] = 0xd8;
  edited(s, 0, &fr, o, v, 1);
  expect_rejected(dec, fr.data, fr.size, s, next_key, "EOI replaced by SOI");
  o[0] = s->size[0] - 1, v[0] = 0xc0;
  edited(s, 0, &fr, o, v, 1);
  expect_rejected(dec, fr.data, fr.size, s, next_key, "EOI replaced by SOF0");

  /* missing segments and markers: without SOF0 the size is unknown, without
   * SOS there is no data (the reference's frames then hold no picture) */
  fr.size = 0;
  tu_buf_append(&fr, s->data.data + s->off[0], sof);
  tu_buf_append(&fr, s->data.data + s->off[0] + dht, s->size[0] - dht);
  expect_rejected(dec, fr.data, fr.size, s, next_key, "SOF0 segment missing");
  fr.size = 0;
  tu_buf_append(&fr, s->data.data + s->off[0] + 2, s->size[0] - 2);
  expect_rejected(dec, fr.data, fr.size, s, next_key, "SOI missing");
  fr.size = 0;
  tu_buf_append(&fr, s->data.data + s->off[0], s->size[0] - 2);
  expect_rejected(dec, fr.data, fr.size, s, next_key, "EOI missing (end of data)");

  /* picture sizes in SOF0 (height at sof+5, width at sof+7) */
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    char what[64];
    o[0] = sof + 5, v[0] = (uint8_t)(sizes[i][1] >> 8);
    o[1] = sof + 6, v[1] = (uint8_t)sizes[i][1];
    o[2] = sof + 7, v[2] = (uint8_t)(sizes[i][0] >> 8);
    o[3] = sof + 8, v[3] = (uint8_t)sizes[i][0];
    edited(s, 0, &fr, o, v, 4);
    snprintf(what, sizeof what, "SOF0 size %dx%d", sizes[i][0], sizes[i][1]);
    expect_rejected(dec, fr.data, fr.size, s, next_key, what);
  }
  o[0] = sof + 4, v[0] = 12;
  edited(s, 0, &fr, o, v, 1);
  expect_rejected(dec, fr.data, fr.size, s, next_key, "SOF0 precision 12");

  /* table ids out of range (DHT and SOS contents, SOF0 component bytes and
   * a missing DQT or DHT are accepted as the reference accepts them:
   * test_tolerance.c) */
  o[0] = dqt + 4, v[0] = 3;
  edited(s, 0, &fr, o, v, 1);
  expect_rejected(dec, fr.data, fr.size, s, next_key, "DQT table id 3");
  o[0] = dqt + 4 + 65 * 2, v[0] = 0xff;
  edited(s, 0, &fr, o, v, 1);
  expect_rejected(dec, fr.data, fr.size, s, next_key, "DQT table id 255");

  /* nothing at all */
  expect_rejected(dec, s->data.data, 0, s, next_key, "empty frame");
  tu_buf_free(&fr);
  c63_decoder_free(dec);
}

/* ---- hand-made frames with chosen motion vectors ---- */

typedef struct bitw {
  tu_buf *out;
  uint32_t acc;
  int nbits;
} bitw;

static void put_bits(bitw *w, uint32_t v, int n)
{
  for (int i = n - 1; i >= 0; i--) {
    w->acc = (w->acc << 1) | ((v >> i) & 1);
    if (++w->nbits == 8) {
      uint8_t b = (uint8_t)w->acc, zero = 0;
      tu_buf_append(w->out, &b, 1);
      if (b == 0xff) tu_buf_append(w->out, &zero, 1); /* stuffing */
      w->acc = 0;
      w->nbits = 0;
    }
  }
}

/* The reference's flush: pending bits left-aligned, or a 00 byte. */
static void flush_bits(bitw *w)
{
  if (w->nbits > 0)
    put_bits(w, 0, 8 - w->nbits);
  else
    put_bits(w, 0, 8);
}

/* A value with the motion-vector table (the luma DC codes, sizes 0..7). */
static void put_mv(bitw *w, int v)
{
  static const uint32_t code[8] = {0x0, 0x2, 0x3, 0x4, 0x5, 0x6, 0xe, 0x1e};
  static const int len[8] = {2, 3, 3, 3, 3, 3, 4, 5};
  int a = v < 0 ? -v : v, size = 0;
  while ((1 << size) <= a)
    size++;
  put_bits(w, code[size], len[size]);
  if (size > 0) put_bits(w, (uint32_t)(v >= 0 ? v : v - 1) & ((1u << size) - 1), size);
}

/* A delta frame of a 16x16 picture (one MCU: four luma blocks, U, V) whose
 * blocks all have zero residual and the given vectors. */
static void make_delta16(const stream *s, const int mv[6][2], tu_buf *out)
{
  c63_frame_header hdr;
  char msg[256];
  bitw w = {out, 0, 0};
  uint8_t eoi[2] = {0xff, 0xd9};

  /* headers of the stream's delta frame 1, then our data */
  c63_parse_frame_header(s->data.data + s->off[1], s->size[1], &hdr, msg, sizeof msg);
  out->size = 0;
  tu_buf_append(out, s->data.data + s->off[1], hdr.data_offset);
  for (int b = 0; b < 6; b++) {
    put_bits(&w, 1, 1); /* use_mv */
    put_bits(&w, 0, 1); /* no reuse: the vector follows */
    put_mv(&w, mv[b][0]);
    put_mv(&w, mv[b][1]);
    put_bits(&w, 0, 2); /* DC difference 0: size 0 is 00 in both DC tables */
    if (b < 4)
      put_bits(&w, 0xa, 4); /* luma AC EOB 1010 */
    else
      put_bits(&w, 0x0, 2); /* chroma AC EOB 00 */
  }
  flush_bits(&w);
  tu_buf_append(out, eoi, 2);
}

static void test_vectors(void)
{
  stream s;
  c63_decoder *dec;
  tu_buf fr = {0}, pic = {0};
  int zero[6][2] = {{0, 0}};
  int ret;

  make_stream(&s, 16, 16, 3, 2); /* K0 D1 K2 */
  TU_CHECK(s.n == 3 && s.keyframe[0] && !s.keyframe[1] && s.keyframe[2], "16x16 stream layout");
  if (s.n != 3) goto out;
  c63_decoder_new(NULL, &dec, NULL, 0);
  printf("motion vectors:\n");

  /* zero vectors, zero residual: exactly the previous picture */
  make_delta16(&s, (const int(*)[2])zero, &fr);
  decode_copy(dec, s.data.data + s.off[0], s.size[0], NULL);
  ret = decode_copy(dec, fr.data, fr.size, &pic);
  TU_CHECK(ret == C63_OK, "zero vectors: %s", c63_decoder_error(dec));
  TU_CHECK(ret != C63_OK || memcmp(pic.data, s.pic[0].data, pic.size) == 0,
           "zero vectors: picture differs from the reference");

  /* the furthest legal vector: luma block (0,0) takes block (8,8) */
  {
    int mv[6][2] = {{8, 8}};
    make_delta16(&s, (const int(*)[2])mv, &fr);
    decode_copy(dec, s.data.data + s.off[0], s.size[0], NULL);
    ret = decode_copy(dec, fr.data, fr.size, &pic);
    TU_CHECK(ret == C63_OK, "vector (8,8): %s", c63_decoder_error(dec));
    for (int y = 0; ret == C63_OK && y < 8; y++)
      TU_CHECK(memcmp(pic.data + y * 16, s.pic[0].data + (y + 8) * 16 + 8, 8) == 0,
               "vector (8,8): row %d not taken from the reference's block (8,8)", y);
  }

  /* vectors that read outside the 16x16 luma or 8x8 chroma plane's buffer
   * (past the left or right edge alone a row goes on in the next one, as
   * in the reference: test_tolerance) */
  {
    static const struct {
      int block, x, y;
      const char *what;
    } bad[] = {
        {0, 9, 8, "luma (9,8) past the end of the plane"},
        {0, -1, 0, "luma (-1,0) past the left edge"},
        {0, 0, -1, "luma (0,-1) above the top"},
        {3, 0, 1, "luma block 3 (0,1) below the bottom"},
        {3, 1, 0, "luma block 3 (1,0): its last pixel past the end"},
        {0, 127, 127, "luma (127,127)"},
        {0, -127, -127, "luma (-127,-127)"},
        {4, 1, 0, "U (1,0)"},
        {5, 0, -1, "V (0,-1)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
      int mv[6][2] = {{0, 0}};
      mv[bad[i].block][0] = bad[i].x;
      mv[bad[i].block][1] = bad[i].y;
      make_delta16(&s, (const int(*)[2])mv, &fr);
      decode_copy(dec, s.data.data + s.off[0], s.size[0], NULL);
      expect_rejected(dec, fr.data, fr.size, &s, 2, bad[i].what);
    }
  }
  c63_decoder_free(dec);
out:
  tu_buf_free(&fr);
  tu_buf_free(&pic);
  free_stream(&s);
}

/* Delta frames without a usable reference. */
static void test_references(const stream *s, int next_key)
{
  c63_decoder *dec;
  stream small;
  int ret;

  printf("references:\n");
  c63_decoder_new(NULL, &dec, NULL, 0);
  ret = decode_copy(dec, s->data.data + s->off[1], s->size[1], NULL);
  TU_CHECK(ret == C63_ERR_NO_REFERENCE, "first frame a delta frame: %d", ret);
  TU_CHECK(c63_decoder_error(dec)[0] != '\0', "first frame a delta frame: no message");
  printf("  %-40s %s: %s\n", "first frame a delta frame", c63_status_string(ret),
         c63_decoder_error(dec));
  check_resume(dec, s, 0, "after a leading delta frame");
  /* then the delta frame decodes as in a clean decode */
  {
    tu_buf pic = {0};
    ret = decode_copy(dec, s->data.data + s->off[1], s->size[1], &pic);
    TU_CHECK(ret == C63_OK && pic.size == s->pic[1].size &&
                 memcmp(pic.data, s->pic[1].data, pic.size) == 0,
             "delta frame after the keyframe: %d", ret);
    tu_buf_free(&pic);
  }
  /* reset forgets the reference */
  c63_decoder_reset(dec);
  ret = decode_copy(dec, s->data.data + s->off[1], s->size[1], NULL);
  TU_CHECK(ret == C63_ERR_NO_REFERENCE, "delta frame after reset: %d", ret);

  /* a delta frame whose reference has another size */
  make_stream(&small, 16, 16, 2, 100);
  ret = decode_copy(dec, small.data.data + small.off[0], small.size[0], NULL);
  TU_CHECK(ret == C63_OK, "16x16 keyframe: %s", c63_decoder_error(dec));
  expect_rejected(dec, s->data.data + s->off[1], s->size[1], s, next_key,
                  "delta frame on a reference of another size");
  free_stream(&small);
  c63_decoder_free(dec);
}

static void test_find_frame_start(const stream *s)
{
  tu_buf b = {0};
  static const uint8_t junk[] = {0x00, 0xff, 0xd8, 0x00, 0xff, 0xff, 0xd8, 0xff, 0xd9, 0x12};
  static const uint8_t partial[][3] = {{0xff}, {0xff, 0xd8}, {0xff, 0xd8, 0xff}};

  tu_buf_append(&b, junk, sizeof junk);
  tu_buf_append(&b, s->data.data, s->size[0]);
  TU_CHECK(c63_find_frame_start(b.data, b.size) == sizeof junk,
           "frame after junk found at %zu, expected %zu", c63_find_frame_start(b.data, b.size),
           sizeof junk);
  TU_CHECK(c63_find_frame_start(s->data.data, s->data.size) == 0, "frame at 0");
  TU_CHECK(c63_find_frame_start(s->data.data + 1, s->data.size - 1) == s->size[0] - 1,
           "second frame after a broken first: %zu",
           c63_find_frame_start(s->data.data + 1, s->data.size - 1));
  TU_CHECK(c63_find_frame_start(junk, 0) == 0, "empty input");
  TU_CHECK(c63_find_frame_start(junk, 1) == 1, "one junk byte");
  /* junk that cannot start a frame, then the start of one, cut short */
  static const uint8_t prefix[4] = {0x12, 0x00, 0x34, 0x00};
  for (int i = 0; i < 3; i++) {
    b.size = 0;
    tu_buf_append(&b, prefix, 4);
    tu_buf_append(&b, partial[i], (size_t)i + 1);
    TU_CHECK(c63_find_frame_start(b.data, b.size) == 4, "partial start of %d bytes at the end: %zu",
             i + 1, c63_find_frame_start(b.data, b.size));
  }
  b.size = 0;
  tu_buf_append(&b, prefix, 4);
  tu_buf_append(&b, (const uint8_t[]){0xff, 0xd9}, 2);
  TU_CHECK(c63_find_frame_start(b.data, b.size) == b.size, "EOI is not a start: %zu",
           c63_find_frame_start(b.data, b.size));
  tu_buf_free(&b);
}

int main(void)
{
  stream conf, synth;

  /* a reference stream: keyframe, two delta frames */
  load_stream(&conf, "pan_176x144.c63", 3);
  /* our own: K0 D1 K2 D3 at an odd size */
  make_stream(&synth, 44, 30, 4, 2);
  TU_CHECK(conf.n == 3 && synth.n == 4 && synth.keyframe[2], "test streams");
  if (conf.n != 3 || synth.n != 4) return tu_finish("robustness");

  test_find_frame_start(&conf);
  test_truncation(&conf, "pan_176x144");
  test_truncation(&synth, "synthetic 44x30");
  test_bitflips(&synth, 2, "synthetic 44x30");
  test_headers(&conf, 0);
  test_headers(&synth, 2);
  test_vectors();
  test_references(&synth, 2);

  free_stream(&conf);
  free_stream(&synth);
  return tu_finish("robustness");
}
