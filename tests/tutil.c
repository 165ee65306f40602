/* Test helpers (see tutil.h).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "tutil.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "c63/bitwriter.h"
#include "c63/tables.h"
#include "synth.h"

int tu_failures = 0;

int tu_finish(const char *test_name)
{
  if (tu_failures == 0) {
    printf("%s: all checks passed\n", test_name);
    return 0;
  }
  printf("%s: %d checks FAILED\n", test_name, tu_failures);
  return 1;
}

void tu_buf_append(tu_buf *b, const void *p, size_t n)
{
  if (b->size + n > b->cap) {
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->size + n)
      cap *= 2;
    b->data = realloc(b->data, cap);
    if (b->data == NULL) {
      fprintf(stderr, "out of memory\n");
      exit(99); /* test programs may exit; the library may not */
    }
    b->cap = cap;
  }
  if (n > 0) memcpy(b->data + b->size, p, n);
  b->size += n;
}

void tu_buf_free(tu_buf *b)
{
  free(b->data);
  memset(b, 0, sizeof *b);
}

uint8_t *tu_read_file(const char *path, size_t *len)
{
  FILE *f = fopen(path, "rb");
  tu_buf b = {0};
  uint8_t chunk[65536];
  size_t n;

  if (f == NULL) {
    fprintf(stderr, "cannot open %s: %s\n", path, strerror(errno));
    return NULL;
  }
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
    tu_buf_append(&b, chunk, n);
  fclose(f);
  tu_buf_append(&b, "", 0);
  *len = b.size;
  if (b.data == NULL) /* empty file: still return a valid pointer */
    b.data = malloc(1);
  return b.data;
}

static const char *env_or(const char *name, const char *fallback)
{
  const char *v = getenv(name);
  return v != NULL && *v ? v : fallback;
}

void tu_data_path(char *out, size_t out_size, const char *name)
{
  snprintf(out, out_size, "%s/conformance/%s", env_or("C63_TEST_DATA", "tests/data"), name);
}

void tu_yuv_path(char *out, size_t out_size, const char *name)
{
  snprintf(out, out_size, "%s/%s", env_or("C63_TEST_YUV_DIR", "."), name);
}

int tu_read_manifest(tu_manifest_row *rows, int max)
{
  char path[1024], line[1024];
  FILE *f;
  int n = 0, lineno = 0;

  tu_data_path(path, sizeof path, "MANIFEST.tsv");
  f = fopen(path, "r");
  if (f == NULL) {
    fprintf(stderr, "cannot open %s: %s\n", path, strerror(errno));
    return -1;
  }
  while (fgets(line, sizeof line, f) != NULL && n < max) {
    tu_manifest_row *r = &rows[n];
    char *xz;
    if (lineno++ == 0 || line[0] == '\n') continue; /* header */
    if (sscanf(line, "%127s %127s %d %d %d %d %d %d %64s %64s %lf", r->stream, r->input, &r->width,
               &r->height, &r->frames, &r->quality, &r->keyframe_interval, &r->search_range,
               r->stream_sha256, r->decoded_sha256, &r->psnr_y_db) != 11) {
      fprintf(stderr, "%s:%d: cannot parse the line\n", path, lineno);
      fclose(f);
      return -1;
    }
    xz = strstr(r->input, ".xz");
    if (xz != NULL && xz[3] == '\0') *xz = '\0';
    n++;
  }
  fclose(f);
  return n;
}

void tu_for_each_conformance_stream(void (*check)(const uint8_t *s, size_t len, const char *name,
                                                  void *ctx),
                                    void *ctx)
{
  static tu_manifest_row rows[32];
  const int n = tu_read_manifest(rows, 32);
  TU_CHECK(n > 0, "cannot read the conformance manifest");
  for (int i = 0; i < n; i++) {
    char path[1024];
    size_t len;
    tu_data_path(path, sizeof path, rows[i].stream);
    uint8_t *s = tu_read_file(path, &len);
    TU_CHECK(s != NULL, "cannot read %s", path);
    if (s) check(s, len, rows[i].stream, ctx);
    free(s);
  }
}

size_t tu_i420_size(int width, int height)
{
  size_t cw = (size_t)c63_chroma_size(width), ch = (size_t)c63_chroma_size(height);
  return (size_t)width * (size_t)height + 2 * cw * ch;
}

/* Borrowed pictures: released(ctx, i) once picture i's packet is out. */
typedef struct borrowing {
  tu_released_fn released;
  void *ctx;
} borrowing;

static int receive_all(c63_encoder *enc, tu_buf *out, int *eof, const borrowing *b)
{
  for (;;) {
    c63_packet pkt;
    int ret = c63_encoder_receive_packet(enc, &pkt);
    if (ret == C63_ERR_AGAIN) return C63_OK;
    if (ret == C63_ERR_EOF) {
      *eof = 1;
      return C63_OK;
    }
    if (ret != C63_OK) return ret;
    tu_buf_append(out, pkt.data, pkt.size);
    if (b) b->released(b->ctx, (int)pkt.user);
  }
}

typedef struct tight_i420 {
  const c63_enc_params *p;
  const uint8_t *yuv;
} tight_i420;

static void tight_picture(void *ctx, int i, c63_picture *pic)
{
  const tight_i420 *t = ctx;
  const int w = t->p->width, h = t->p->height;
  const size_t ysize = (size_t)w * h, csize = (size_t)c63_chroma_size(w) * c63_chroma_size(h);
  pic->data[0] = t->yuv + (size_t)i * tu_i420_size(w, h);
  pic->data[1] = pic->data[0] + ysize;
  pic->data[2] = pic->data[1] + csize;
  pic->stride[0] = w;
  pic->stride[1] = pic->stride[2] = c63_chroma_size(w);
}

/* Encode; with stats, the backend's stage timings of the run too; with
 * b, the pictures are sent borrowed. */
static int encode_pictures(const c63_enc_params *p, tu_picture_fn picture, void *ctx, int frames,
                           tu_buf *out, c63_stage_stats *stats, const borrowing *b, char *msg,
                           size_t msg_size)
{
  c63_encoder *enc;
  int ret, eof = 0;

  ret = c63_encoder_new(p, &enc, msg, msg_size);
  if (ret != C63_OK) return ret;
  if (stats && (ret = c63_encoder_set_stage_timing(enc, 1)) != C63_OK)
    snprintf(msg, msg_size, "the %s backend has no stage timings", c63_encoder_backend_name(enc));
  for (int i = 0; i <= frames && ret == C63_OK; i++) {
    c63_picture pic, *pp = NULL;
    if (i < frames) {
      memset(&pic, 0, sizeof pic);
      picture(ctx, i, &pic);
      pic.user = i;
      pp = &pic;
    }
    while ((ret = b ? c63_encoder_send_picture_borrowed(enc, pp)
                    : c63_encoder_send_picture(enc, pp)) == C63_ERR_AGAIN) {
      if ((ret = receive_all(enc, out, &eof, b)) != C63_OK) break;
    }
    if (ret == C63_OK) ret = receive_all(enc, out, &eof, b);
  }
  if (ret == C63_OK && !eof) {
    snprintf(msg, msg_size, "the encoder did not report EOF after draining");
    ret = C63_ERR_BACKEND;
  } else if (ret != C63_OK && ret != C63_ERR_UNSUPPORTED) {
    snprintf(msg, msg_size, "%s", c63_encoder_error(enc));
  }
  if (ret == C63_OK && stats) ret = c63_encoder_get_stage_stats(enc, stats, 0);
  c63_encoder_free(enc);
  return ret;
}

int tu_encode(const c63_enc_params *p, const uint8_t *yuv, int frames, tu_buf *out, char *msg,
              size_t msg_size)
{
  tight_i420 t = {p, yuv};
  return encode_pictures(p, tight_picture, &t, frames, out, NULL, NULL, msg, msg_size);
}

int tu_encode_timed(const c63_enc_params *p, const uint8_t *yuv, int frames, tu_buf *out,
                    c63_stage_stats *stats, char *msg, size_t msg_size)
{
  tight_i420 t = {p, yuv};
  return encode_pictures(p, tight_picture, &t, frames, out, stats, NULL, msg, msg_size);
}

int tu_encode_pictures(const c63_enc_params *p, tu_picture_fn picture, void *ctx, int frames,
                       tu_buf *out, char *msg, size_t msg_size)
{
  return encode_pictures(p, picture, ctx, frames, out, NULL, NULL, msg, msg_size);
}

int tu_encode_borrowed(const c63_enc_params *p, tu_picture_fn picture, tu_released_fn released,
                       void *ctx, int frames, tu_buf *out, char *msg, size_t msg_size)
{
  const borrowing b = {released, ctx};
  return encode_pictures(p, picture, ctx, frames, out, NULL, &b, msg, msg_size);
}

void tu_append_picture(tu_buf *out, const c63_decoded_picture *pic)
{
  for (int c = 0; c < 3; c++) {
    int w = c ? c63_chroma_size(pic->width) : pic->width;
    int h = c ? c63_chroma_size(pic->height) : pic->height;
    for (int y = 0; y < h; y++)
      tu_buf_append(out, pic->data[c] + (size_t)y * (size_t)pic->stride[c], (size_t)w);
  }
}

static int known_status(int s)
{
  return s <= C63_OK && s >= C63_ERR_UNSUPPORTED;
}

static void note_failure(tu_decode_result *res, int status, const char *message)
{
  res->last_status = status;
  snprintf(res->last_error, sizeof res->last_error, "%s", message ? message : "");
  if (message == NULL || message[0] == '\0') res->empty_message = 1;
  if (!known_status(status)) res->unknown_status = 1;
}

void tu_decode_stream(const uint8_t *stream, size_t len, tu_buf *out, tu_decode_result *res)
{
  c63_decoder *dec;
  size_t pos = 0;

  memset(res, 0, sizeof *res);
  if (c63_decoder_new(NULL, &dec, NULL, 0) != C63_OK) {
    note_failure(res, C63_ERR_NOMEM, "cannot create a decoder");
    res->frames_bad++;
    return;
  }
  /* Split as the tools and elements do, with libc63's framer. */
  c63_frame_scanner scanner;
  c63_frame_scanner_init(&scanner);
  while (pos < len) {
    c63_frame_scan_result fr;
    c63_decoded_picture pic;
    char msg[256] = "";
    int ret = c63_frame_scan(&scanner, stream + pos, len - pos, 1, &fr);

    if (ret == C63_SCAN_NEED_DATA || ret < 0 || fr.size == 0 || fr.size > len - pos) {
      note_failure(res, 1, "c63_frame_scan did not consume the end of the stream");
      res->unknown_status = 1;
      break;
    }
    if (ret == C63_SCAN_SKIP) { /* bytes lost: a frame may be missing, wait for a keyframe */
      res->garbage_bytes += fr.size;
      pos += fr.size;
      c63_decoder_reset(dec);
      continue;
    }
    if (!fr.complete) { /* broken headers, cut short, or too long: why, says the parser */
      c63_frame_header hdr;
      ret = c63_parse_frame_header(stream + pos, fr.size, &hdr, msg, sizeof msg);
      res->header_errors++;
      if (ret == C63_OK) { /* the framer gave up on a frame that parses */
        note_failure(res, 1, "c63_frame_scan broke a frame that parses");
        res->unknown_status = 1;
      } else {
        note_failure(res, ret, msg);
      }
      pos += fr.size;
      c63_decoder_reset(dec);
      continue;
    }
    ret = c63_decoder_decode(dec, stream + pos, fr.size, &pic);
    if (ret == C63_OK) {
      res->frames_ok++;
      res->width = pic.width;
      res->height = pic.height;
      if (out != NULL) tu_append_picture(out, &pic);
    } else {
      res->frames_bad++;
      note_failure(res, ret, c63_decoder_error(dec));
    }
    pos += fr.size;
  }
  c63_decoder_free(dec);
}

double tu_psnr(const uint8_t *a, const uint8_t *b, size_t n)
{
  double sse = 0;
  for (size_t i = 0; i < n; i++) {
    int d = (int)a[i] - (int)b[i];
    sse += (double)(d * d);
  }
  if (sse == 0) return 100.0;
  return fmin(100.0, 10.0 * log10(255.0 * 255.0 * (double)n / sse));
}

uint64_t tu_rand(uint64_t *state)
{
  uint64_t x = *state;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *state = x;
  return x * 0x2545f4914f6cdd1dull;
}

/* Receive what the decoder gives; returns the last status. */
static int receive_pictures(c63_decoder *dec, tu_buf *pics, int *n, const char *what)
{
  for (;;) {
    c63_decoded_picture pic;
    int r = c63_decoder_receive_picture(dec, &pic);
    if (r == C63_ERR_AGAIN || r == C63_ERR_EOF) return r;
    TU_CHECK(r == C63_OK, "%s: frame %lld does not decode: %s", what, (long long)pic.user,
             c63_decoder_error(dec));
    TU_CHECK(pic.user == *n, "%s: picture %d is frame %lld", what, *n, (long long)pic.user);
    if (r) return r;
    tu_append_picture(pics, &pic);
    (*n)++;
  }
}

int tu_decode_frames_sr(c63_decoder *dec, const uint8_t *stream, size_t len, tu_buf *pics,
                        const char *what)
{
  size_t pos = 0;
  int sent = 0, n = 0, r;
  while (pos < len) {
    c63_frame_header hdr;
    char msg[256];
    r = c63_parse_frame_header(stream + pos, len - pos, &hdr, msg, sizeof msg);
    TU_CHECK(r == C63_OK, "%s: frame %d does not parse: %s", what, sent, msg);
    if (r) break;
    while ((r = c63_decoder_send_packet(dec, stream + pos, hdr.frame_size, sent)) == C63_ERR_AGAIN)
      if ((r = receive_pictures(dec, pics, &n, what)) != C63_ERR_AGAIN) return n;
    TU_CHECK(r == C63_OK, "%s: send %d: %d", what, sent, r);
    pos += hdr.frame_size;
    sent++;
  }
  c63_decoder_send_packet(dec, NULL, 0, 0);
  r = receive_pictures(dec, pics, &n, what);
  TU_CHECK(r == C63_ERR_EOF, "%s: no EOF after draining", what);
  return n;
}

int tu_decode_frames(c63_decoder *dec, const uint8_t *stream, size_t len, tu_buf *pics,
                     const char *what)
{
  size_t pos = 0;
  int n = 0;
  while (pos < len) {
    c63_frame_header hdr;
    char msg[256];
    c63_decoded_picture pic;
    int r = c63_parse_frame_header(stream + pos, len - pos, &hdr, msg, sizeof msg);
    TU_CHECK(r == C63_OK, "%s: frame %d does not parse: %s", what, n, msg);
    if (r) break;
    r = c63_decoder_decode(dec, stream + pos, hdr.frame_size, &pic);
    TU_CHECK(r == C63_OK, "%s: frame %d does not decode: %s", what, n, c63_decoder_error(dec));
    if (r) break;
    tu_append_picture(pics, &pic);
    pos += hdr.frame_size;
    n++;
  }
  return n;
}

void tu_i420_to_nv12(const uint8_t *i420, int w, int h, uint8_t *y, int y_stride, uint8_t *uv,
                     int uv_stride)
{
  const int cw = c63_chroma_size(w), ch = c63_chroma_size(h);
  const uint8_t *u = i420 + (size_t)w * h, *v = u + (size_t)cw * ch;
  for (int r = 0; r < h; r++)
    memcpy(y + (size_t)r * y_stride, i420 + (size_t)r * w, (size_t)w);
  for (int r = 0; r < ch; r++)
    for (int x = 0; x < cw; x++) {
      uv[(size_t)r * uv_stride + 2 * x] = u[(size_t)r * cw + x];
      uv[(size_t)r * uv_stride + 2 * x + 1] = v[(size_t)r * cw + x];
    }
}

/* Row strides of tu_padded_picture's luma and chroma planes. */
static void padded_strides(int w, int nv12, int pad, int *ys, int *cs)
{
  const int cw = c63_chroma_size(w);
  *ys = w + pad;
  *cs = nv12 ? 2 * cw + pad : cw + pad;
}

size_t tu_padded_size(int w, int h, int nv12, int pad)
{
  int ys, cs;
  padded_strides(w, nv12, pad, &ys, &cs);
  return (size_t)ys * h + (size_t)(nv12 ? 1 : 2) * cs * c63_chroma_size(h);
}

size_t tu_padded_picture(const uint8_t *i420, int w, int h, int nv12, int pad, uint8_t *buf,
                         c63_picture *pic)
{
  const int cw = c63_chroma_size(w), ch = c63_chroma_size(h);
  int ys, cs;
  padded_strides(w, nv12, pad, &ys, &cs);
  const size_t off[3] = {0, (size_t)ys * h, (size_t)ys * h + (size_t)cs * ch};
  if (nv12) {
    tu_i420_to_nv12(i420, w, h, buf, ys, buf + off[1], cs);
  } else {
    for (int c = 0; c < 3; c++) {
      const int pw = c ? cw : w, ph = c ? ch : h, st = c ? cs : ys;
      const uint8_t *p = i420 + (c ? (size_t)w * h + (c - 1) * (size_t)cw * ch : 0);
      for (int r = 0; r < ph; r++)
        memcpy(buf + off[c] + (size_t)r * st, p + (size_t)r * pw, (size_t)pw);
    }
  }
  pic->format = nv12 ? C63_FORMAT_NV12 : C63_FORMAT_I420;
  for (int c = 0; c < (nv12 ? 2 : 3); c++) {
    pic->data[c] = buf + off[c];
    pic->stride[c] = c ? cs : ys;
  }
  return tu_padded_size(w, h, nv12, pad);
}

int tu_cuda_missing(void)
{
  char msg[256] = "";
  if (c63_backend_available(C63_BACKEND_CUDA, 0, msg, sizeof msg) == 1) return 0;
  printf("SKIP: CUDA backend not available: %s\n", msg);
  return 1;
}

/* Set name to a number, or unset it for 0. */
static void set_or_unset(const char *name, int value)
{
  char v[16];
  snprintf(v, sizeof v, "%d", value);
  if (value)
    setenv(name, v, 1);
  else
    unsetenv(name);
}

int tu_decoder_new(const c63_dec_params *p, const tu_cuda_decoding *setup, c63_decoder **dec,
                   char *msg, size_t msg_size)
{
  static const tu_cuda_decoding defaults = {0, 0, 0};
  if (!setup) setup = &defaults;
  set_or_unset("C63_CUDA_CPU_ENTROPY", setup->cpu_entropy);
  set_or_unset("C63_CUDA_DECODE_BATCH", setup->batch);
  set_or_unset("C63_CUDA_DECODE_BATCHES", setup->batches);
  const int r = c63_decoder_new(p, dec, msg, msg_size);
  set_or_unset("C63_CUDA_CPU_ENTROPY", 0);
  set_or_unset("C63_CUDA_DECODE_BATCH", 0);
  set_or_unset("C63_CUDA_DECODE_BATCHES", 0);
  return r;
}

int tu_encode_synth(int w, int h, int q, int natural, int frames, int keyframe_interval,
                    tu_buf *out, char *msg, size_t msg_size)
{
  const size_t pic = tu_i420_size(w, h);
  uint8_t *yuv = malloc(pic * (size_t)frames);
  if (!yuv) return C63_ERR_NOMEM;
  for (int i = 0; i < frames; i++)
    (natural ? synth_natural_frame : synth_frame)(yuv + pic * (size_t)i, w, h, i);
  c63_enc_params p;
  c63_enc_params_init(&p);
  p.width = w;
  p.height = h;
  p.quality = q;
  p.keyframe_interval = keyframe_interval;
  const int r = tu_encode(&p, yuv, frames, out, msg, msg_size);
  free(yuv);
  return r;
}

void tu_put_value(c63_bitwriter *bw, const c63_huff_enc *t, int run, int v)
{
  int a = v < 0 ? -v : v, size = 0;
  while ((1 << size) <= a)
    size++;
  c63_bw_put(bw, t->code[run << 4 | size], t->len[run << 4 | size]);
  if (size) c63_bw_put(bw, (uint32_t)(v >= 0 ? v : v - 1) & ((1u << size) - 1), size);
}
