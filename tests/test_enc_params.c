/* Encoder parameters and pictures: invalid values are rejected with a
 * message naming the problem, valid extremes are accepted (the rd mode
 * included, on either backend); keyframe
 * placement follows the keyframe interval; quality changes apply from the
 * next picture; below quality 5 the quantiser entries saturate at 255.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdlib.h>
#include <string.h>

#include "synth.h"
#include "tutil.h"

/* JPEG Annex K tables in zig-zag order (docs/format.md section 5). */
static const int default_y[64] = {16,  11, 12, 14,  12,  10,  16,  14,  13, 14,  18,  17,  16,
                                  19,  24, 40, 26,  24,  22,  22,  24,  49, 35,  37,  29,  40,
                                  58,  51, 61, 30,  57,  51,  56,  55,  64, 72,  92,  78,  64,
                                  68,  87, 69, 55,  56,  80,  109, 81,  87, 95,  98,  103, 104,
                                  103, 62, 77, 113, 121, 112, 100, 120, 92, 101, 103, 99};
static const int default_uv_head[14] = {17, 18, 18, 24, 21, 24, 47, 26, 26, 47, 99, 66, 56, 66};

static c63_enc_params base(void)
{
  c63_enc_params p;
  c63_enc_params_init(&p);
  p.width = 64;
  p.height = 48;
  return p;
}

static void expect_invalid(c63_enc_params p, const char *what, const char *word)
{
  char msg[256] = "";
  c63_encoder *enc = (c63_encoder *)&enc; /* must be set to NULL */
  int ret = c63_enc_params_validate(&p, msg, sizeof msg);

  TU_CHECK(ret == C63_ERR_INVALID_ARG, "%s: validate returned %d", what, ret);
  TU_CHECK(msg[0] != '\0', "%s: no message", what);
  TU_CHECK(word == NULL || strstr(msg, word) != NULL, "%s: message '%s' does not name '%s'", what,
           msg, word);
  printf("  %-32s %s\n", what, msg);
  msg[0] = '\0';
  ret = c63_encoder_new(&p, &enc, msg, sizeof msg);
  TU_CHECK(ret == C63_ERR_INVALID_ARG && enc == NULL, "%s: encoder_new returned %d", what, ret);
  TU_CHECK(msg[0] != '\0', "%s: encoder_new without a message", what);
  if (ret == C63_OK) c63_encoder_free(enc);
  /* a NULL message buffer is allowed */
  TU_CHECK(c63_enc_params_validate(&p, NULL, 0) == C63_ERR_INVALID_ARG, "%s: msg NULL", what);
}

static void expect_valid(c63_enc_params p, const char *what)
{
  char msg[256] = "";
  c63_encoder *enc = NULL;
  int ret = c63_enc_params_validate(&p, msg, sizeof msg);

  TU_CHECK(ret == C63_OK, "%s: rejected: %s", what, msg);
  ret = c63_encoder_new(&p, &enc, msg, sizeof msg);
  TU_CHECK(ret == C63_OK && enc != NULL, "%s: encoder_new: %s", what, msg);
  c63_encoder_free(enc);
}

static void test_params(void)
{
  c63_enc_params p = base();

  c63_enc_params_init(&p);
  TU_CHECK(p.quality == 25 && p.keyframe_interval == 100 && p.search_range == 16 &&
               p.backend == C63_BACKEND_CPU && p.width == 0 && p.height == 0 &&
               p.mode == C63_MODE_EXACT,
           "defaults: q %d k %d r %d backend %d size %dx%d mode %d", p.quality, p.keyframe_interval,
           p.search_range, (int)p.backend, p.width, p.height, (int)p.mode);

  printf("rejected parameters:\n");
  p = base(), p.quality = 0, expect_invalid(p, "quality 0", "quality");
  p = base(), p.quality = 51, expect_invalid(p, "quality 51", "quality");
  p = base(), p.quality = -5, expect_invalid(p, "quality -5", "quality");
  p = base(), p.search_range = 0, expect_invalid(p, "search range 0", "search");
  p = base(), p.search_range = 65, expect_invalid(p, "search range 65", "search");
  p = base(), p.keyframe_interval = -1, expect_invalid(p, "keyframe interval -1", "keyframe");
  p = base(), p.width = 7, expect_invalid(p, "width 7", "size");
  p = base(), p.width = 8193, expect_invalid(p, "width 8193", "size");
  p = base(), p.height = 7, expect_invalid(p, "height 7", "size");
  p = base(), p.height = 8193, expect_invalid(p, "height 8193", "size");
  p = base(), p.width = 0, p.height = 0, expect_invalid(p, "size 0x0", NULL);
  p = base(), p.width = -16, expect_invalid(p, "width -16", "size");
  p = base(), p.backend = (c63_backend_kind)7, expect_invalid(p, "backend 7", "backend");
  p = base(), p.mode = (c63_enc_mode)2, expect_invalid(p, "mode 2", "mode");
  p = base(), p.mode = (c63_enc_mode)-1, expect_invalid(p, "mode -1", "mode");

  p = base(), p.quality = 1, expect_valid(p, "quality 1");
  p = base(), p.quality = 50, expect_valid(p, "quality 50");
  p = base(), p.search_range = 1, expect_valid(p, "search range 1");
  p = base(), p.search_range = 64, expect_valid(p, "search range 64");
  p = base(), p.keyframe_interval = 0, expect_valid(p, "keyframe interval 0");
  p = base(), p.keyframe_interval = 1, expect_valid(p, "keyframe interval 1");
  p = base(), p.width = 8, p.height = 8, expect_valid(p, "size 8x8");
  p = base(), p.width = 8192, p.height = 8, expect_valid(p, "size 8192x8");
  p = base(), p.width = 9, p.height = 8191, expect_valid(p, "size 9x8191");
  p = base(), p.mode = C63_MODE_RD, expect_valid(p, "mode rd");
  p = base(), p.mode = C63_MODE_RD, p.width = 8, p.height = 8, expect_valid(p, "mode rd, 8x8");
}

/* CUDA: either usable, or refused with a message (on machines without it). */
static void test_cuda_backend(void)
{
  char msg[256] = "";
  c63_enc_params p = base();
  c63_encoder *enc = NULL;
  int avail = c63_backend_available(C63_BACKEND_CUDA, 0, msg, sizeof msg);
  int ret;

  TU_CHECK(c63_backend_available(C63_BACKEND_CPU, 0, NULL, 0), "the CPU backend is unavailable");
  p.backend = C63_BACKEND_CUDA;
  msg[0] = '\0';
  ret = c63_encoder_new(&p, &enc, msg, sizeof msg);
  if (avail) {
    TU_CHECK(ret == C63_OK, "CUDA available but encoder_new failed: %s", msg);
    if (ret == C63_OK)
      TU_CHECK(strcmp(c63_encoder_backend_name(enc), "cuda") == 0, "backend name %s",
               c63_encoder_backend_name(enc));
    printf("CUDA backend available\n");
  } else {
    TU_CHECK(ret == C63_ERR_NO_DEVICE || ret == C63_ERR_UNSUPPORTED,
             "CUDA unavailable, encoder_new returned %d", ret);
    TU_CHECK(msg[0] != '\0', "CUDA unavailable but no message");
    printf("CUDA backend unavailable: %s\n", msg);
  }
  c63_encoder_free(enc);

  /* the rd mode runs on the GPU as well: the same answer as exact */
  p.mode = C63_MODE_RD;
  enc = NULL;
  msg[0] = '\0';
  TU_CHECK(c63_enc_params_validate(&p, NULL, 0) == C63_OK, "rd on CUDA is invalid");
  ret = c63_encoder_new(&p, &enc, msg, sizeof msg);
  if (avail)
    TU_CHECK(ret == C63_OK, "rd on CUDA: encoder_new failed: %s", msg);
  else
    TU_CHECK(ret == C63_ERR_NO_DEVICE && msg[0], "rd on CUDA without a device: %d '%s'", ret, msg);
  c63_encoder_free(enc);
}

/* Pictures that do not fit the parameters are rejected with a message. */
static void test_bad_pictures(void)
{
  c63_enc_params p = base();
  c63_encoder *enc = NULL;
  char msg[256];
  uint8_t *buf = calloc(1, tu_i420_size(64, 48) + 64);
  c63_picture pic;
  int ret;

  printf("rejected pictures:\n");
  TU_CHECK(c63_encoder_new(&p, &enc, msg, sizeof msg) == C63_OK, "encoder: %s", msg);
  if (enc == NULL) goto out;
  TU_CHECK(strcmp(c63_encoder_backend_name(enc), "cpu") == 0, "backend name %s",
           c63_encoder_backend_name(enc));
  for (int c = 0; c < 4; c++) {
    const char *what[4] = {"luma stride 63 < width 64", "U stride 31 < 32", "V stride 0",
                           "V plane NULL"};
    memset(&pic, 0, sizeof pic);
    pic.data[0] = buf;
    pic.data[1] = buf + 64 * 48;
    pic.data[2] = buf + 64 * 48 + 32 * 24;
    pic.stride[0] = 64;
    pic.stride[1] = pic.stride[2] = 32;
    if (c == 0)
      pic.stride[0] = 63;
    else if (c == 1)
      pic.stride[1] = 31;
    else if (c == 2)
      pic.stride[2] = 0;
    else
      pic.data[2] = NULL;
    ret = c63_encoder_send_picture(enc, &pic);
    TU_CHECK(ret == C63_ERR_INVALID_ARG, "%s: send returned %d", what[c], ret);
    TU_CHECK(c63_encoder_error(enc)[0] != '\0', "%s: no message", what[c]);
    printf("  %-32s %s\n", what[c], c63_encoder_error(enc));
  }
  /* NV12: the interleaved chroma rows hold 2 x 32 bytes; V is unused */
  memset(&pic, 0, sizeof pic);
  pic.format = C63_FORMAT_NV12;
  pic.data[0] = buf;
  pic.data[1] = buf + 64 * 48;
  pic.stride[0] = 64;
  pic.stride[1] = 63;
  ret = c63_encoder_send_picture(enc, &pic);
  TU_CHECK(ret == C63_ERR_INVALID_ARG, "NV12 chroma stride 63 < 64: send returned %d", ret);
  printf("  %-32s %s\n", "NV12 chroma stride 63 < 64", c63_encoder_error(enc));
  pic.stride[1] = 64;
  pic.format = (c63_pixel_format)7;
  ret = c63_encoder_send_picture(enc, &pic);
  TU_CHECK(ret == C63_ERR_INVALID_ARG, "format 7: send returned %d", ret);
  printf("  %-32s %s\n", "format 7", c63_encoder_error(enc));
  /* the encoder still works afterwards, starting with a keyframe */
  pic.format = C63_FORMAT_I420;
  pic.data[1] = buf + 64 * 48;
  pic.data[2] = buf + 64 * 48 + 32 * 24;
  pic.stride[0] = 64;
  pic.stride[1] = pic.stride[2] = 32;
  ret = c63_encoder_send_picture(enc, &pic);
  TU_CHECK(ret == C63_OK, "valid picture after bad ones: %s", c63_encoder_error(enc));
  {
    c63_packet pkt;
    ret = c63_encoder_receive_packet(enc, &pkt);
    TU_CHECK(ret == C63_OK && pkt.keyframe && pkt.frame_number == 0,
             "first packet: %d, keyframe %d, number %lld", ret, pkt.keyframe,
             (long long)pkt.frame_number);
  }
  TU_CHECK(c63_encoder_set_quality(enc, 0) == C63_ERR_INVALID_ARG, "set_quality(0)");
  TU_CHECK(c63_encoder_set_quality(enc, 51) == C63_ERR_INVALID_ARG, "set_quality(51)");
  TU_CHECK(c63_encoder_delay(enc) >= 0, "delay %d", c63_encoder_delay(enc));
out:
  c63_encoder_free(enc);
  free(buf);
}

/* Check a packet against its own header and record it. */
static void record(const c63_packet *pkt, c63_frame_header *hdrs, int64_t *users, int *n, int max)
{
  char msg[256] = "";
  if (*n >= max) return;
  TU_CHECK(c63_parse_frame_header(pkt->data, pkt->size, &hdrs[*n], msg, sizeof msg) == C63_OK,
           "packet %d does not parse: %s", *n, msg);
  TU_CHECK(pkt->frame_number == *n && pkt->keyframe == hdrs[*n].keyframe &&
               pkt->size == hdrs[*n].frame_size,
           "packet %d: number %lld, keyframe %d/%d, size %zu/%zu", *n, (long long)pkt->frame_number,
           pkt->keyframe, hdrs[*n].keyframe, pkt->size, hdrs[*n].frame_size);
  users[(*n)++] = pkt->user;
}

/* Encode frames pictures one at a time; returns the frame headers and user
 * values of the packets, in order. quality_at[i] > 0 changes the quality
 * before picture i is sent. */
static int encode_headers(c63_enc_params p, int frames, const int *quality_at,
                          c63_frame_header *hdrs, int64_t *users, int max)
{
  c63_encoder *enc;
  size_t fsize = tu_i420_size(p.width, p.height);
  uint8_t *frame = malloc(fsize);
  char msg[256];
  int n = 0, ret;

  if (c63_encoder_new(&p, &enc, msg, sizeof msg) != C63_OK) {
    TU_CHECK(0, "encoder: %s", msg);
    free(frame);
    return 0;
  }
  for (int i = 0; i <= frames; i++) {
    c63_picture pic;
    c63_packet pkt;
    if (i < frames) {
      synth_frame(frame, p.width, p.height, i);
      memset(&pic, 0, sizeof pic);
      pic.data[0] = frame;
      pic.data[1] = frame + p.width * p.height;
      pic.data[2] = pic.data[1] + c63_chroma_size(p.width) * c63_chroma_size(p.height);
      pic.stride[0] = p.width;
      pic.stride[1] = pic.stride[2] = c63_chroma_size(p.width);
      pic.user = 1000 + i;
      if (quality_at != NULL && quality_at[i] > 0)
        TU_CHECK(c63_encoder_set_quality(enc, quality_at[i]) == C63_OK, "set_quality %d",
                 quality_at[i]);
    }
    /* a pipelining backend may want packets taken out first */
    while ((ret = c63_encoder_send_picture(enc, i < frames ? &pic : NULL)) == C63_ERR_AGAIN) {
      if (c63_encoder_receive_packet(enc, &pkt) != C63_OK) break;
      record(&pkt, hdrs, users, &n, max);
    }
    TU_CHECK(ret == C63_OK, "send %d: %s", i, c63_encoder_error(enc));
    while ((ret = c63_encoder_receive_packet(enc, &pkt)) == C63_OK)
      record(&pkt, hdrs, users, &n, max);
    TU_CHECK(ret == C63_ERR_AGAIN || (i == frames && ret == C63_ERR_EOF), "receive %d: %d", i, ret);
  }
  c63_encoder_free(enc);
  free(frame);
  return n;
}

static void test_keyframes(void)
{
  static const struct {
    int interval;
    const char *pattern; /* K = keyframe, d = delta */
  } cases[] = {
      {0, "Kdddddddddd"}, {1, "KKKKKKKKKKK"},   {2, "KdKdKdKdKdK"},
      {3, "KddKddKddKd"}, {100, "Kdddddddddd"},
  };
  c63_frame_header hdrs[16];
  int64_t users[16];

  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    c63_enc_params p = base();
    char got[16] = "";
    int n;
    p.width = 24;
    p.height = 16;
    p.keyframe_interval = cases[c].interval;
    n = encode_headers(p, 11, NULL, hdrs, users, 16);
    for (int i = 0; i < n && i < 15; i++) {
      got[i] = hdrs[i].keyframe ? 'K' : 'd';
      TU_CHECK(users[i] == 1000 + i, "user value of packet %d: %lld", i, (long long)users[i]);
    }
    TU_CHECK(n == 11 && strcmp(got, cases[c].pattern) == 0,
             "keyframe interval %d: %d packets %s, expected %s", cases[c].interval, n, got,
             cases[c].pattern);
    printf("keyframe interval %3d: %s\n", cases[c].interval, got);
  }
}

/* quant[c][z] = min(255, (int)(default / (quality / 10.0))) */
static int expected_quant(int c, int z, int quality)
{
  int d = c == 0 ? default_y[z] : z < 14 ? default_uv_head[z] : 99;
  int q = (int)(d / (quality / 10.0));
  return q > 255 ? 255 : q;
}

/* NV12 pictures with padded rows code to the same bytes as the same
 * pictures in tight I420. */
typedef struct nv12_frames {
  const uint8_t *yuv;
  int w, h, y_stride, uv_stride;
  uint8_t *buf;
} nv12_frames;

static void nv12_picture(void *ctx, int i, c63_picture *pic)
{
  nv12_frames *f = ctx;
  uint8_t *uv = f->buf + (size_t)f->y_stride * f->h;
  tu_i420_to_nv12(f->yuv + (size_t)i * tu_i420_size(f->w, f->h), f->w, f->h, f->buf, f->y_stride,
                  uv, f->uv_stride);
  pic->format = C63_FORMAT_NV12;
  pic->data[0] = f->buf;
  pic->data[1] = uv;
  pic->stride[0] = f->y_stride;
  pic->stride[1] = f->uv_stride;
}

static void test_nv12(void)
{
  static const int sizes[][2] = {{64, 48}, {37, 21}, {8, 8}};
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
    const int w = sizes[k][0], h = sizes[k][1], frames = 6;
    c63_enc_params p;
    char msg[256];
    tu_buf want = {0}, got = {0};
    uint8_t *yuv = malloc(tu_i420_size(w, h) * frames);
    nv12_frames f = {yuv, w, h, w + 5, 2 * c63_chroma_size(w) + 3, NULL};
    f.buf = malloc((size_t)f.y_stride * h + (size_t)f.uv_stride * c63_chroma_size(h));
    for (int t = 0; t < frames; t++)
      synth_frame(yuv + tu_i420_size(w, h) * t, w, h, t);
    c63_enc_params_init(&p);
    p.width = w;
    p.height = h;
    p.keyframe_interval = 4;
    int r = tu_encode(&p, yuv, frames, &want, msg, sizeof msg);
    TU_CHECK(r == C63_OK, "%dx%d I420: %s", w, h, msg);
    r = tu_encode_pictures(&p, nv12_picture, &f, frames, &got, msg, sizeof msg);
    TU_CHECK(r == C63_OK, "%dx%d NV12: %s", w, h, msg);
    int same = want.size == got.size && memcmp(want.data, got.data, want.size) == 0;
    TU_CHECK(same, "%dx%d: NV12 and I420 streams differ", w, h);
    printf("  NV12 %dx%d (padded rows): %s\n", w, h, same ? "same bytes as I420" : "DIFFERENT");
    tu_buf_free(&want);
    tu_buf_free(&got);
    free(f.buf);
    free(yuv);
  }
}

static void test_quality(void)
{
  int quality_at[6] = {0, 0, 10, 0, 1, 50};
  int expect_q[6] = {25, 25, 10, 10, 1, 50};
  c63_frame_header hdrs[8];
  int64_t users[8];
  c63_enc_params p = base();
  int n = encode_headers(p, 6, quality_at, hdrs, users, 8);

  TU_CHECK(n == 6, "%d packets", n);
  for (int f = 0; f < n; f++) {
    int bad = 0, sat = 0;
    for (int c = 0; c < 3; c++)
      for (int z = 0; z < 64; z++) {
        int e = expected_quant(c, z, expect_q[f]);
        bad += hdrs[f].quant[c][z] != e;
        sat += e == 255;
      }
    TU_CHECK(bad == 0, "frame %d: %d quantiser entries differ from quality %d", f, bad,
             expect_q[f]);
    printf("frame %d: quality %d tables%s\n", f, expect_q[f],
           sat ? " (entries saturated at 255)" : "");
  }
  TU_CHECK(expected_quant(0, 63, 1) == 255 && expected_quant(1, 63, 1) == 255,
           "quality 1 saturates");
}

int main(void)
{
  test_params();
  test_cuda_backend();
  test_bad_pictures();
  test_keyframes();
  test_quality();
  test_nv12();
  return tu_finish("encoder parameters");
}
