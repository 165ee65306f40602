/* The decoder accepts what the reference decoder decodes
 * (docs/decoder-tolerance.md), and decodes it to the same pixels: each case
 * is a legal variation of a real stream, or a hand-made frame, and the
 * pictures are compared with those of the unvaried stream or with pixels
 * worked out from the reference's rules.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c63/bitwriter.h"
#include "c63/dsp.h"
#include "c63/entropy.h"
#include "c63/frame_syntax.h"
#include "c63/geometry.h"
#include "c63/tables.h"
#include "tutil.h"

#define W 64
#define H 48
#define FRAMES 3 /* keyframe, delta, keyframe (interval 2) */

typedef struct frames {
  tu_buf data;
  size_t off[FRAMES], size[FRAMES];
} frames;

static void split(frames *f)
{
  size_t pos = 0;
  for (int i = 0; i < FRAMES; i++) {
    c63_frame_header hdr;
    char msg[256];
    int r = c63_parse_frame_header(f->data.data + pos, f->data.size - pos, &hdr, msg, sizeof msg);
    TU_CHECK(r == C63_OK, "frame %d of the clean stream: %s", i, msg);
    f->off[i] = pos;
    f->size[i] = hdr.frame_size;
    pos += hdr.frame_size;
  }
}

/* Offset of marker m in frame i (the clean stream's fixed layout). */
static size_t marker(const frames *f, int i, uint8_t m)
{
  const uint8_t *d = f->data.data + f->off[i];
  for (size_t p = 0; p + 1 < f->size[i]; p++)
    if (d[p] == 0xff && d[p + 1] == m) return p;
  return 0;
}

static int decode_with(c63_backend_kind backend, const uint8_t *s, size_t len, tu_buf *pics,
                       const char *what)
{
  c63_dec_params p;
  c63_decoder *dec;
  char msg[256];
  c63_dec_params_init(&p);
  p.backend = backend;
  int r = c63_decoder_new(&p, &dec, msg, sizeof msg);
  TU_CHECK(r == C63_OK, "%s: decoder: %s", what, msg);
  if (r) return 0;
  pics->size = 0;
  int n = tu_decode_frames(dec, s, len, pics, what);
  c63_decoder_free(dec);
  return n;
}

/* With C63_TOLERANCE_DUMP set to a folder, every stream that must decode
 * is also written there (NN.c63, and its pictures as NN.yuv), so that it
 * can be checked against the reference decoder outside the tests
 * (docs/decoder-tolerance.md). */
static void dump(const uint8_t *s, size_t len, const tu_buf *pics, const char *what)
{
  static int n;
  const char *dir = getenv("C63_TOLERANCE_DUMP");
  char path[1024];
  if (!dir) return;
  snprintf(path, sizeof path, "%s/%02d.c63", dir, n);
  FILE *f = fopen(path, "wb");
  TU_CHECK(f && fwrite(s, 1, len, f) == len && fclose(f) == 0, "cannot write %s", path);
  snprintf(path, sizeof path, "%s/%02d.yuv", dir, n);
  f = fopen(path, "wb");
  TU_CHECK(f && fwrite(pics->data, 1, pics->size, f) == pics->size && fclose(f) == 0,
           "cannot write %s", path);
  printf("  (%02d: %s)\n", n++, what);
}

/* Decode a whole stream frame by frame; every frame must decode. With a
 * GPU, the CUDA backend must give the same pictures as the CPU one. */
static int decode_all(const uint8_t *s, size_t len, tu_buf *pics, const char *what)
{
  int n = decode_with(C63_BACKEND_CPU, s, len, pics, what);
  if (c63_backend_available(C63_BACKEND_CUDA, 0, NULL, 0)) {
    tu_buf gpu = {0};
    int m = decode_with(C63_BACKEND_CUDA, s, len, &gpu, what);
    TU_CHECK(m == n && gpu.size == pics->size && memcmp(gpu.data, pics->data, gpu.size) == 0,
             "%s: the CUDA backend decodes it differently", what);
    tu_buf_free(&gpu);
  }
  dump(s, len, pics, what);
  return n;
}

/* The second of two frames is rejected, with a message, on every backend. */
static void expect_rejected(const tu_buf *key, const tu_buf *fr, const char *what)
{
  for (int b = 0; b < 2; b++) {
    c63_dec_params p;
    c63_decoder *dec;
    c63_dec_params_init(&p);
    p.backend = b ? C63_BACKEND_CUDA : C63_BACKEND_CPU;
    if (b && !c63_backend_available(C63_BACKEND_CUDA, 0, NULL, 0)) break;
    TU_CHECK(c63_decoder_new(&p, &dec, NULL, 0) == C63_OK, "%s: decoder", what);
    c63_decoder_decode(dec, key->data, key->size, NULL);
    int r = c63_decoder_decode(dec, fr->data, fr->size, NULL);
    TU_CHECK(r == C63_ERR_BITSTREAM && c63_decoder_error(dec)[0], "%s: %d (%s)", what, r,
             c63_decoder_error(dec));
    if (!b) printf("  %-50s %s\n", what, c63_decoder_error(dec));
    c63_decoder_free(dec);
  }
}

/* The stream with frame i replaced by the given bytes. */
static void with_frame(const frames *f, int i, const tu_buf *fr, tu_buf *out)
{
  out->size = 0;
  tu_buf_append(out, f->data.data, f->off[i]);
  tu_buf_append(out, fr->data, fr->size);
  tu_buf_append(out, f->data.data + f->off[i] + f->size[i], f->data.size - f->off[i] - f->size[i]);
}

static void expect_same(const frames *f, const tu_buf *clean, int i, const tu_buf *fr,
                        const char *what)
{
  tu_buf s = {0}, pics = {0};
  with_frame(f, i, fr, &s);
  int n = decode_all(s.data, s.size, &pics, what);
  int ok =
      n == FRAMES && pics.size == clean->size && memcmp(pics.data, clean->data, pics.size) == 0;
  TU_CHECK(ok, "%s: %d frames, pictures %s", what, n, ok ? "equal" : "differ");
  printf("  %-50s %s\n", what, ok ? "same pixels" : "DIFFERENT");
  tu_buf_free(&s);
  tu_buf_free(&pics);
}

/* A copy of frame i with bytes [from, to) replaced by rep. */
static void spliced(const frames *f, int i, size_t from, size_t to, const void *rep, size_t n,
                    tu_buf *out)
{
  const uint8_t *d = f->data.data + f->off[i];
  out->size = 0;
  tu_buf_append(out, d, from);
  tu_buf_append(out, rep, n);
  tu_buf_append(out, d + to, f->size[i] - to);
}

static void test_headers(const frames *f, const tu_buf *clean)
{
  tu_buf fr = {0};
  const uint8_t *d0 = f->data.data + f->off[0];
  const size_t dqt = marker(f, 0, 0xdb), sof = marker(f, 0, 0xc0), dht = marker(f, 0, 0xc4),
               sos = marker(f, 0, 0xda);
  printf("headers the reference accepts:\n");

  static const uint8_t len17[2] = {0x00, 0x11}, len197[2] = {0x00, 0xc5}, ff = 0xff;
  spliced(f, 0, sof + 2, sof + 4, len17, 2, &fr);
  expect_same(f, clean, 0, &fr, "SOF0 length 17 (the field is not used)");
  spliced(f, 0, dqt + 2, dqt + 4, len197, 2, &fr);
  expect_same(f, clean, 0, &fr, "DQT length 197 (JPEG's count)");
  spliced(f, 0, sof + 19, sof + 20, &ff, 1, &fr);
  expect_same(f, clean, 0, &fr, "keyframe byte 0xFF (any non-zero value)");

  /* SOF0 component bytes, DHT and SOS contents are skipped */
  static const uint8_t one_comp = 1, bad_sel = 0x22, table_id = 0x20;
  spliced(f, 0, sof + 9, sof + 10, &one_comp, 1, &fr);
  expect_same(f, clean, 0, &fr, "SOF0 component count 1 (skipped)");
  spliced(f, 0, dht + 4, dht + 5, &table_id, 1, &fr);
  expect_same(f, clean, 0, &fr, "DHT table class 2 (static tables used)");
  spliced(f, 0, sos + 6, sos + 7, &bad_sel, 1, &fr);
  expect_same(f, clean, 0, &fr, "SOS Huffman selectors 2/2 (skipped)");

  /* missing and reordered segments */
  spliced(f, 0, dht, sos, NULL, 0, &fr);
  expect_same(f, clean, 0, &fr, "frame without DHT");
  fr.size = 0;
  tu_buf_append(&fr, d0, 2);                      /* SOI */
  tu_buf_append(&fr, d0 + sof, dht - sof);        /* SOF0 */
  tu_buf_append(&fr, d0 + dqt, sof - dqt);        /* DQT */
  tu_buf_append(&fr, d0 + dht, f->size[0] - dht); /* DHT, SOS, data, EOI */
  expect_same(f, clean, 0, &fr, "SOF0 before DQT");
  {
    const uint8_t *d1 = f->data.data + f->off[1];
    const size_t dqt1 = marker(f, 1, 0xdb), sof1 = marker(f, 1, 0xc0);
    fr.size = 0;
    tu_buf_append(&fr, d1, dqt1);
    tu_buf_append(&fr, d1 + sof1, f->size[1] - sof1);
    expect_same(f, clean, 1, &fr, "delta frame without DQT (the last tables hold)");
  }
  {
    static const uint8_t zero = 0;
    fr.size = 0;
    tu_buf_append(&fr, d0, 2);
    tu_buf_append(&fr, &zero, 1);
    tu_buf_append(&fr, d0 + 2, sof - 2);
    tu_buf_append(&fr, &zero, 1);
    tu_buf_append(&fr, d0 + sof, f->size[0] - sof);
    expect_same(f, clean, 0, &fr, "a 00 byte before DQT and before SOF0");
  }
  {
    /* DQT again after the data, before EOI: the last tables are used */
    fr.size = 0;
    tu_buf_append(&fr, d0, f->size[0] - 2);
    tu_buf_append(&fr, d0 + dqt, sof - dqt);
    tu_buf_append(&fr, d0 + f->size[0] - 2, 2);
    expect_same(f, clean, 0, &fr, "DQT repeated after the data");
  }
  tu_buf_free(&fr);
}

/* A delta frame of the stream, flagged as a keyframe: the reference reads
 * its vectors and predicts nothing, so the picture is the residual alone. */
/* The reference drops the byte after an FF in the data whatever it is:
 * an FF 00 of the clean stream with the 00 replaced decodes the same. */
static void test_stuffing(const frames *f, const tu_buf *clean)
{
  static const uint8_t other[] = {0x37, 0xff, 0x01};
  int found = 0;
  printf("stuffing:\n");
  for (int i = 0; i < FRAMES && !found; i++) {
    c63_frame_header hdr;
    char msg[256];
    const uint8_t *d = f->data.data + f->off[i];
    c63_parse_frame_header(d, f->size[i], &hdr, msg, sizeof msg);
    for (size_t p = hdr.data_offset; p + 1 < hdr.data_offset + hdr.data_size; p++) {
      if (d[p] != 0xff || d[p + 1] != 0x00) continue;
      for (size_t k = 0; k < sizeof other; k++) {
        tu_buf fr = {0};
        char what[64];
        spliced(f, i, p + 1, p + 2, &other[k], 1, &fr);
        snprintf(what, sizeof what, "FF %02X instead of FF 00 in the data", other[k]);
        expect_same(f, clean, i, &fr, what);
        tu_buf_free(&fr);
      }
      found = 1;
      break;
    }
  }
  TU_CHECK(found, "the clean stream has no FF 00 in its data to vary");
}

static void test_vectors_in_keyframe(const frames *f)
{
  tu_buf fr = {0}, s = {0}, pics = {0};
  const size_t sof = marker(f, 1, 0xc0);
  static const uint8_t one = 1;
  spliced(f, 1, sof + 19, sof + 20, &one, 1, &fr);
  with_frame(f, 1, &fr, &s);
  printf("vectors:\n");
  int n = decode_all(s.data, s.size, &pics, "vectors in a keyframe");
  TU_CHECK(n == FRAMES, "vectors in a keyframe: %d frames decoded", n);

  /* the residual alone, worked out from the frame's coefficients */
  c63_frame_header hdr;
  c63_geometry g;
  char msg[256];
  c63_parse_frame_header(fr.data, fr.size, &hdr, msg, sizeof msg);
  c63_geometry_init(&g, W, H);
  int16_t *coeffs[3];
  uint8_t *rec[3];
  c63_sparse_frame sp = {0};
  int r = c63_sparse_frame_reserve(&sp, c63_frame_blocks(&g),
                                   c63_sparse_entries_bound(&g, hdr.data_size), 0);
  TU_CHECK(r == C63_OK, "out of memory");
  r = c63_entropy_decode(fr.data + hdr.data_offset, hdr.data_size, &g, 1, &sp, msg, sizeof msg);
  TU_CHECK(r == C63_OK, "entropy decoding of the keyframe with vectors: %s", msg);
  int vectors = 0;
  for (size_t b = 0; b < c63_frame_blocks(&g); b++)
    vectors += sp.mvs[b].use_mv;
  for (int c = 0; c < 3; c++) {
    size_t px = (size_t)g.pad_w[c] * g.pad_h[c];
    coeffs[c] = malloc(px * sizeof(int16_t));
    rec[c] = malloc(px);
    c63_sparse_expand(&sp, c63_block_offset(&g, c), px / 64, coeffs[c]);
  }
  c63_sparse_frame_free(&sp);
  TU_CHECK(vectors > 0, "the delta frame used for the test has no vectors");
  tu_buf want = {0};
  tu_buf_append(&want, pics.data, pics.size); /* frames 0 and 2 as decoded */
  size_t pos = tu_i420_size(W, H);
  for (int c = 0; c < 3; c++) {
    c63_dsp_c.dequant_idct_recon(coeffs[c], NULL, g.pad_w[c], g.pad_h[c], hdr.quant[c], rec[c]);
    for (int y = 0; y < g.pic_h[c]; y++) {
      memcpy(want.data + pos, rec[c] + (size_t)y * g.pad_w[c], (size_t)g.pic_w[c]);
      pos += (size_t)g.pic_w[c];
    }
  }
  int ok = n == FRAMES && memcmp(want.data, pics.data, pics.size) == 0;
  TU_CHECK(ok, "vectors in a keyframe: picture is not the residual alone");
  printf("  %-50s %s\n", "vectors in a keyframe, read and ignored", ok ? "ok" : "WRONG");
  for (int c = 0; c < 3; c++) {
    free(coeffs[c]);
    free(rec[c]);
  }
  tu_buf_free(&want);
  tu_buf_free(&fr);
  tu_buf_free(&s);
  tu_buf_free(&pics);
}

/* ---- hand-made delta frames of 32x16: two MCUs ---- */

/* One block of a hand-made frame: its vector syntax, its DC difference,
 * up to six AC tokens (run, value; value 0 with run 15 is a ZRL), and
 * whether an EOB follows them (after a run past coefficient 63 the
 * reference reads none). */
typedef struct vec {
  int use, reuse, x, y;
  int dc, n, run[6], val[6], no_eob;
} vec;

/* A 32x16 frame (two MCUs: 12 blocks in MCU order) with the given block
 * syntax, the keyframe flag, and the quantiser tables of `key` unless
 * `quant` is given. */
static void make_frame32x16(const uint8_t *key, size_t key_size, const vec v[12], int keyframe,
                            const uint8_t (*quant)[64], tu_buf *out)
{
  const c63_huff_enc *t = c63_huff_enc_tables();
  uint8_t bits[1024];
  c63_bitwriter bw;
  c63_frame_header hdr;
  char msg[256];
  c63_bytebuf b = {0};

  c63_parse_frame_header(key, key_size, &hdr, msg, sizeof msg);
  c63_write_frame_headers(&b, 32, 16, keyframe, quant ? quant : (const uint8_t(*)[64])hdr.quant);
  c63_bw_init(&bw, bits);
  for (int i = 0; i < 12; i++) {
    const int chroma = i % 6 >= 4;
    c63_bw_put(&bw, (uint32_t)v[i].use, 1);
    if (v[i].use) {
      c63_bw_put(&bw, (uint32_t)v[i].reuse, 1);
      if (!v[i].reuse) {
        tu_put_value(&bw, &t[C63_HUFF_MV], 0, v[i].x);
        tu_put_value(&bw, &t[C63_HUFF_MV], 0, v[i].y);
      }
    }
    tu_put_value(&bw, &t[chroma ? C63_HUFF_DC1 : C63_HUFF_DC0], 0, v[i].dc);
    const c63_huff_enc *ac = &t[chroma ? C63_HUFF_AC1 : C63_HUFF_AC0];
    for (int k = 0; k < v[i].n; k++)
      tu_put_value(&bw, ac, v[i].run[k], v[i].val[k]);
    if (!v[i].no_eob) c63_bw_put(&bw, ac->code[0], ac->len[0]); /* EOB */
  }
  c63_bw_flush_bytes(&bw);
  c63_write_stuffed(&b, bw.start, (size_t)(bw.p - bw.start), (uint32_t)bw.acc, bw.nbits);
  uint8_t eoi[2];
  c63_put_eoi(eoi);
  c63_bytebuf_put(&b, eoi, 2);
  out->size = 0;
  tu_buf_append(out, b.data, b.size);
  c63_bytebuf_free(&b);
}

static void make_delta32x16(const uint8_t *key, size_t key_size, const vec v[12], tu_buf *out)
{
  make_frame32x16(key, key_size, v, 0, NULL, out);
}

/* A 32x16 keyframe of a busy pattern (every luma value occurs). */
static void make_key32x16(tu_buf *key)
{
  enum { KW = 32, KH = 16 };
  c63_enc_params p;
  uint8_t *yuv = malloc(tu_i420_size(KW, KH));
  char msg[256];
  for (size_t i = 0; i < tu_i420_size(KW, KH); i++)
    yuv[i] = (uint8_t)(i * 7 + (i >> 4) * 13);
  c63_enc_params_init(&p);
  p.width = KW;
  p.height = KH;
  p.quality = 50;
  TU_CHECK(tu_encode(&p, yuv, 1, key, msg, sizeof msg) == C63_OK, "keyframe: %s", msg);
  free(yuv);
}

/* Reused vectors: the block before in the plane's raster order, decoded
 * yet or not, with a vector or not. */
static void test_reuse(void)
{
  tu_buf key = {0}, fr = {0}, s = {0}, pics = {0};
  make_key32x16(&key);

  /* MCU 0: luma (0,0) (1,0) (0,1) (1,1), U, V; MCU 1: luma (2,0) (3,0) (2,1) (3,1), U, V */
  const vec none = {0}, reuse = {.use = 1, .reuse = 1};
  const vec v[12] = {
      none,                /* (0,0): no vector: predicted from zero */
      reuse,               /* (1,0): reuses (0,0), which has none: (0,0) */
      reuse,               /* (0,1): reuses (3,0), not decoded yet: (0,0) */
      {.use = 1, .x = -8}, /* (1,1): (-8,0) */
      none,
      none,
      reuse,               /* (2,0): reuses (1,0): (0,0) */
      {.use = 1, .x = -8}, /* (3,0): (-8,0) */
      {.use = 1, .y = -8}, /* (2,1): (0,-8) */
      reuse,               /* (3,1): reuses (2,1): (0,-8) */
      none,
      none,
  };
  /* where each luma block's prediction comes from, in the keyframe's
   * picture (block column and row), or -1 for zero */
  static const int from[2][4][2] = {{{-1, -1}, {1, 0}, {0, 1}, {0, 1}},
                                    {{2, 0}, {2, 0}, {2, 0}, {3, 0}}};
  make_delta32x16(key.data, key.size, v, &fr);
  s.size = 0;
  tu_buf_append(&s, key.data, key.size);
  tu_buf_append(&s, fr.data, fr.size);
  int n = decode_all(s.data, s.size, &pics, "reused vectors");
  int ok = n == 2;
  const uint8_t *ref = pics.data, *pic = pics.data + tu_i420_size(32, 16);
  for (int m = 0; ok && m < 2; m++)
    for (int k = 0; k < 4; k++) {
      const int bx = 2 * m + (k & 1), by = k >> 1;
      for (int y = 0; y < 8; y++)
        for (int x = 0; x < 8; x++) {
          const int fx = from[m][k][0], fy = from[m][k][1];
          const uint8_t want = fx < 0 ? 0 : ref[(fy * 8 + y) * 32 + fx * 8 + x];
          if (pic[(by * 8 + y) * 32 + bx * 8 + x] != want) ok = 0;
        }
    }
  TU_CHECK(ok, "reused vectors: %d frames, luma not predicted as the reference does", n);
  printf("  %-50s %s\n", "vector reuse after no vector, and before decoding", ok ? "ok" : "WRONG");

  /* reuse at the very first block of a plane: the reference reads before
   * its array; rejected with a message */
  vec first[12];
  memcpy(first, v, sizeof first);
  first[0] = (vec){.use = 1, .reuse = 1};
  make_delta32x16(key.data, key.size, first, &fr);
  expect_rejected(&key, &fr, "reuse at the first block: rejected");
  tu_buf_free(&key);
  tu_buf_free(&fr);
  tu_buf_free(&s);
  tu_buf_free(&pics);
}

/* The luma of the second picture of key + fr, decoded (both must decode). */
static int decode_pair(const tu_buf *key, const tu_buf *fr, tu_buf *pics, const char *what)
{
  tu_buf s = {0};
  tu_buf_append(&s, key->data, key->size);
  tu_buf_append(&s, fr->data, fr->size);
  int n = decode_all(s.data, s.size, pics, what);
  TU_CHECK(n == 2, "%s: %d frames decoded", what, n);
  tu_buf_free(&s);
  return n == 2;
}

/* Vectors past the left or right edge: the reference reads
 * ref[(y + mv_y) * w + x + mv_x], so a row goes on in the next one (or the
 * one before). Accepted while every read is inside the plane. */
static void test_wrap_vectors(void)
{
  tu_buf key = {0}, fr = {0}, pics = {0};
  const vec none = {0};
  /* (0,1) from row 7, column 24 on; (3,0) from row 1, column 0; (3,1)
   * from columns 28..31 of its rows, then 0..3 of the next ones */
  vec v[12] = {
      [2] = {.use = 1, .x = -8}, [7] = {.use = 1, .x = 8}, [9] = {.use = 1, .x = 4, .y = -8}};
  /* luma block (bx, by) of each vector above, by index */
  static const int at[12][2] = {[2] = {0, 1}, [7] = {3, 0}, [9] = {3, 1}};
  make_key32x16(&key);
  make_delta32x16(key.data, key.size, v, &fr);
  int ok = decode_pair(&key, &fr, &pics, "vectors wrapping around rows");
  const uint8_t *ref = pics.data, *pic = pics.data + tu_i420_size(32, 16);
  for (int i = 0; ok && i < 12; i++) {
    if (!v[i].use) continue;
    const int bx = at[i][0], by = at[i][1];
    for (int y = 0; y < 8; y++)
      for (int x = 0; x < 8; x++)
        if (pic[(by * 8 + y) * 32 + bx * 8 + x] !=
            ref[(by * 8 + y + v[i].y) * 32 + bx * 8 + x + v[i].x])
          ok = 0;
  }
  TU_CHECK(ok, "vectors wrapping around rows: not predicted as the reference does");
  printf("  %-50s %s\n", "vectors past the left and right edges", ok ? "ok" : "WRONG");

  v[0] = (vec){.use = 1, .x = -1}; /* reads ref[-1] */
  make_delta32x16(key.data, key.size, v, &fr);
  expect_rejected(&key, &fr, "vector reading before the plane: rejected");
  v[0] = none;
  v[9] = (vec){.use = 1, .x = 1}; /* the last read is one past the plane */
  make_delta32x16(key.data, key.size, v, &fr);
  expect_rejected(&key, &fr, "vector reading past the plane: rejected");
  tu_buf_free(&key);
  tu_buf_free(&fr);
  tu_buf_free(&pics);
}

/* The pictures of key + a and key + b are the same. */
static void expect_equivalent(const tu_buf *key, const vec a[12], const vec b[12], const char *what)
{
  tu_buf fa = {0}, fb = {0}, pa = {0}, pb = {0};
  make_delta32x16(key->data, key->size, a, &fa);
  make_delta32x16(key->data, key->size, b, &fb);
  int ok = decode_pair(key, &fa, &pa, what) && decode_pair(key, &fb, &pb, what) &&
           pa.size == pb.size && memcmp(pa.data, pb.data, pa.size) == 0;
  TU_CHECK(ok, "%s: not decoded as the reference does", what);
  printf("  %-50s %s\n", what, ok ? "ok" : "WRONG");
  tu_buf_free(&fa);
  tu_buf_free(&fb);
  tu_buf_free(&pa);
  tu_buf_free(&pb);
}

/* AC runs past coefficient 63: the reference writes the value at 64 + k of
 * the block's memory, which is coefficient k of the next block in the
 * plane's raster order, and reads no EOB. The next block clears it when it
 * is decoded later; when it was decoded already (the first of the second
 * luma row after the last of the first) it keeps it. */
static void test_ac_spill(void)
{
  tu_buf key = {0}, fr = {0};
  /* three ZRLs take a block from coefficient 1 to 49 */
#define ZRL3 15, 15, 15
  const vec none = {0};
  make_key32x16(&key);

  /* (0,0) runs to 64: erased by (1,0), decoded next, which must still be
   * read from the right bit */
  vec a[12] = {[0] = {.n = 4, .run = {ZRL3, 15}, .val = {0, 0, 0, 9}, .no_eob = 1},
               [1] = {.dc = 5, .n = 1, .val = {3}}};
  vec b[12];
  memcpy(b, a, sizeof b);
  b[0] = none;
  expect_equivalent(&key, a, b, "AC run past 63 into a block decoded later");

  /* the same in chroma: U (0,0) into U (1,0), decoded in the next MCU */
  memcpy(a, b, sizeof a);
  a[4] = (vec){.n = 4, .run = {ZRL3, 15}, .val = {0, 0, 0, -2}, .no_eob = 1};
  expect_equivalent(&key, a, b, "chroma AC run past 63 into a later block");

  /* (3,0), the last block of luma row 0, runs to 65 (a coefficient at 49
   * first): coefficient 1 of (0,1), decoded in the first MCU, becomes -6 */
  const vec key01 = {.dc = 3, .n = 2, .val = {2, 7}};
  vec c[12] = {
      [2] = key01, [7] = {.n = 5, .run = {ZRL3, 0, 15}, .val = {0, 0, 0, 4, -6}, .no_eob = 1}};
  vec d[12];
  memcpy(d, c, sizeof d);
  d[2] = (vec){.dc = 3, .n = 2, .val = {-6, 7}};
  d[7] = (vec){.n = 4, .run = {ZRL3, 0}, .val = {0, 0, 0, 4}};
  expect_equivalent(&key, c, d, "AC run past 63 into a block decoded before");

  /* running to 64 replaces the DC of (0,1), not the DC prediction chain */
  c[7] = (vec){.n = 4, .run = {ZRL3, 15}, .val = {0, 0, 0, 10}, .no_eob = 1};
  memcpy(d, c, sizeof d);
  d[2] = (vec){.dc = 10, .n = 2, .val = {2, 7}};
  d[3] = (vec){.dc = 3 - 10};
  d[7] = none;
  expect_equivalent(&key, c, d, "AC run past 63 onto a decoded block's DC");

  /* after the last block of a plane the reference writes outside its buffer */
  memcpy(c, b, sizeof c);
  c[9] = (vec){.n = 4, .run = {ZRL3, 15}, .val = {0, 0, 0, 1}, .no_eob = 1};
  make_delta32x16(key.data, key.size, c, &fr);
  expect_rejected(&key, &fr, "AC run past the end of the luma plane: rejected");
  memcpy(c, b, sizeof c);
  c[11] = (vec){.n = 4, .run = {ZRL3, 15}, .val = {0, 0, 0, 1}, .no_eob = 1};
  make_delta32x16(key.data, key.size, c, &fr);
  expect_rejected(&key, &fr, "AC run past the end of a chroma plane: rejected");
#undef ZRL3
  tu_buf_free(&key);
  tu_buf_free(&fr);
}

/* The reference adds prediction and IDCT output in int16_t before it
 * clamps: a sum past 32767 wraps negative and gives 0, not 255. A DC of
 * 1024 with a quantiser of 255 gives an IDCT output just under 32767. */
static void test_int16_wrap(void)
{
  tu_buf key = {0}, fr = {0}, pics = {0};
  c63_frame_header hdr;
  char msg[256];
  make_key32x16(&key);
  c63_parse_frame_header(key.data, key.size, &hdr, msg, sizeof msg);
  uint8_t quant[3][64];
  memcpy(quant, hdr.quant, sizeof quant);
  quant[0][0] = 255;
  const vec v[12] = {[0] = {.use = 1, .dc = 1024}, [1] = {.dc = -1024}};
  make_frame32x16(key.data, key.size, v, 0, (const uint8_t(*)[64])quant, &fr);
  int ok = decode_pair(&key, &fr, &pics, "prediction + IDCT past 32767");
  int16_t coef[64] = {1024}, res[64];
  c63_dequant_idct_block(coef, quant[0], res);
  const uint8_t *ref = pics.data, *pic = pics.data + tu_i420_size(32, 16);
  int wrapped = 0, kept = 0;
  for (int y = 0; ok && y < 8; y++)
    for (int x = 0; x < 8; x++) {
      int16_t tmp = (int16_t)(uint16_t)(res[y * 8 + x] + ref[y * 32 + x]);
      const uint8_t want = tmp < 0 ? 0 : tmp > 255 ? 255 : (uint8_t)tmp;
      if (pic[y * 32 + x] != want) ok = 0;
      if (tmp < 0)
        wrapped++;
      else
        kept++;
    }
  TU_CHECK(ok && wrapped && kept, "int16 sum: %d pixels wrapped, %d not; %s", wrapped, kept,
           ok ? "right" : "pixels differ from the reference's");
  printf("  %-50s %s\n", "prediction + IDCT wrapping in 16 bits", ok ? "ok" : "WRONG");
  tu_buf_free(&key);
  tu_buf_free(&fr);
  tu_buf_free(&pics);
}

int main(void)
{
  frames f = {0};
  tu_buf clean = {0};
  uint8_t *yuv = malloc(tu_i420_size(W, H) * FRAMES);
  c63_enc_params p;
  char msg[256];
  for (int t = 0; t < FRAMES; t++)
    for (size_t i = 0; i < tu_i420_size(W, H); i++)
      yuv[t * tu_i420_size(W, H) + i] = (uint8_t)((i * 5 + (i / W) * 3 + (size_t)t * 9) & 0xff);
  c63_enc_params_init(&p);
  p.width = W;
  p.height = H;
  p.keyframe_interval = 2;
  TU_CHECK(tu_encode(&p, yuv, FRAMES, &f.data, msg, sizeof msg) == C63_OK, "encode: %s", msg);
  split(&f);
  TU_CHECK(decode_all(f.data.data, f.data.size, &clean, "clean stream") == FRAMES, "clean stream");
  test_headers(&f, &clean);
  test_stuffing(&f, &clean);
  test_vectors_in_keyframe(&f);
  test_reuse();
  test_wrap_vectors();
  test_ac_spill();
  test_int16_wrap();
  free(yuv);
  tu_buf_free(&f.data);
  tu_buf_free(&clean);
  return tu_finish("test_tolerance");
}
