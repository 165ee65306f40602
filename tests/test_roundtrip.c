/* Round trips at sizes the reference cannot code: odd sizes, widths that are
 * not multiples of 16, the smallest and largest sizes. For each size the
 * decoder must return exactly width x height for every frame, and the
 * quality must be comparable to an aligned size:
 *
 *   PSNR bound: over the visible pixels, the luma PSNR of a W x H clip is at
 *   least MIN_PSNR_Y dB, and at least the PSNR of the same pixels coded as
 *   part of the 16-aligned clip minus MAX_LOSS_DB (the zero padding of the
 *   partial blocks may cost a little). Chroma at least MIN_PSNR_C dB (lower
 *   than luma because at 8x8 a chroma plane is 4x4 pixels in an 8x8 block
 *   that is mostly zero padding).
 *
 * The content is the synthetic clip of tools/synth.c at the aligned size;
 * the odd-size clip is its top-left W x H crop, so both code the same pixels.
 * Also: input with any stride gives the same stream as tight input.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdlib.h>
#include <string.h>

#include "synth.h"
#include "tutil.h"

#define MIN_PSNR_Y 30.0
#define MIN_PSNR_C 25.0
#define MAX_LOSS_DB 1.5
#define FRAMES 4

static int align16(int v)
{
  return (v + 15) / 16 * 16;
}

/* Crop plane-wise from a (aw x ah) I420 clip to (w x h). */
static void crop_clip(const uint8_t *src, int aw, int ah, uint8_t *dst, int w, int h, int frames)
{
  for (int f = 0; f < frames; f++) {
    const uint8_t *s = src + (size_t)f * tu_i420_size(aw, ah);
    uint8_t *d = dst + (size_t)f * tu_i420_size(w, h);
    for (int c = 0; c < 3; c++) {
      int sw = c ? c63_chroma_size(aw) : aw, sh = c ? c63_chroma_size(ah) : ah;
      int dw = c ? c63_chroma_size(w) : w, dh = c ? c63_chroma_size(h) : h;
      for (int y = 0; y < dh; y++)
        memcpy(d + (size_t)y * dw, s + (size_t)y * sw, (size_t)dw);
      s += (size_t)sw * sh;
      d += (size_t)dw * dh;
    }
  }
}

/* PSNR of one plane over all frames of two tight clips of w x h. */
static double clip_psnr(const uint8_t *a, const uint8_t *b, int w, int h, int frames, int plane)
{
  size_t fsize = tu_i420_size(w, h), ysize = (size_t)w * h;
  size_t csize = (size_t)c63_chroma_size(w) * c63_chroma_size(h);
  size_t off = plane == 0 ? 0 : plane == 1 ? ysize : ysize + csize;
  size_t n = plane == 0 ? ysize : csize;
  tu_buf pa = {0}, pb = {0};
  double psnr;

  for (int f = 0; f < frames; f++) {
    tu_buf_append(&pa, a + f * fsize + off, n);
    tu_buf_append(&pb, b + f * fsize + off, n);
  }
  psnr = tu_psnr(pa.data, pb.data, pa.size);
  tu_buf_free(&pa);
  tu_buf_free(&pb);
  return psnr;
}

/* Encode and decode; returns the decoded clip (tight I420) or NULL. */
static uint8_t *roundtrip(const uint8_t *clip, int w, int h, int frames, int quality,
                          int search_range, size_t *stream_size)
{
  c63_enc_params p;
  tu_buf stream = {0}, out = {0};
  tu_decode_result res;
  char msg[256] = "";
  int ret;

  c63_enc_params_init(&p);
  p.width = w;
  p.height = h;
  p.quality = quality;
  p.search_range = search_range;
  ret = tu_encode(&p, clip, frames, &stream, msg, sizeof msg);
  TU_CHECK(ret == C63_OK, "%dx%d: encoding failed: %s", w, h, msg);
  if (ret != C63_OK) {
    tu_buf_free(&stream);
    return NULL;
  }
  *stream_size = stream.size;
  tu_decode_stream(stream.data, stream.size, &out, &res);
  tu_buf_free(&stream);
  TU_CHECK(res.frames_ok == frames && res.frames_bad == 0 && res.header_errors == 0,
           "%dx%d: decoded %d of %d frames (%s)", w, h, res.frames_ok, frames, res.last_error);
  TU_CHECK(res.width == w && res.height == h, "%dx%d: decoder returned %dx%d", w, h, res.width,
           res.height);
  TU_CHECK(out.size == tu_i420_size(w, h) * (size_t)frames, "%dx%d: decoded %zu bytes", w, h,
           out.size);
  if (out.size != tu_i420_size(w, h) * (size_t)frames) {
    tu_buf_free(&out);
    return NULL;
  }
  return out.data;
}

static void test_size(int w, int h, int frames)
{
  int aw = align16(w), ah = align16(h);
  size_t afsize = tu_i420_size(aw, ah), fsize = tu_i420_size(w, h), sz_odd = 0, sz_al = 0;
  uint8_t *aligned = malloc(afsize * frames), *odd = malloc(fsize * frames);
  uint8_t *dec_odd = NULL, *dec_al = NULL, *dec_al_crop = malloc(fsize * frames);
  double y_odd, y_al, u_odd, v_odd;

  for (int t = 0; t < frames; t++)
    synth_frame(aligned + (size_t)t * afsize, aw, ah, t);
  crop_clip(aligned, aw, ah, odd, w, h, frames);

  dec_odd = roundtrip(odd, w, h, frames, C63_DEFAULT_QUALITY, C63_DEFAULT_SEARCH_RANGE, &sz_odd);
  dec_al =
      roundtrip(aligned, aw, ah, frames, C63_DEFAULT_QUALITY, C63_DEFAULT_SEARCH_RANGE, &sz_al);
  if (dec_odd == NULL || dec_al == NULL) goto done;
  crop_clip(dec_al, aw, ah, dec_al_crop, w, h, frames);
  y_odd = clip_psnr(odd, dec_odd, w, h, frames, 0);
  u_odd = clip_psnr(odd, dec_odd, w, h, frames, 1);
  v_odd = clip_psnr(odd, dec_odd, w, h, frames, 2);
  y_al = clip_psnr(odd, dec_al_crop, w, h, frames, 0);
  printf("%5dx%-5d %d frames: PSNR Y %.2f U %.2f V %.2f dB, %zu bytes; same pixels coded at "
         "%dx%d: Y %.2f dB\n",
         w, h, frames, y_odd, u_odd, v_odd, sz_odd, aw, ah, y_al);
  TU_CHECK(y_odd >= MIN_PSNR_Y, "%dx%d: luma PSNR %.2f dB < %.1f", w, h, y_odd, MIN_PSNR_Y);
  TU_CHECK(u_odd >= MIN_PSNR_C && v_odd >= MIN_PSNR_C, "%dx%d: chroma PSNR %.2f / %.2f dB", w, h,
           u_odd, v_odd);
  TU_CHECK(y_odd >= y_al - MAX_LOSS_DB, "%dx%d: luma PSNR %.2f dB, aligned %.2f dB", w, h, y_odd,
           y_al);
done:
  free(aligned);
  free(odd);
  free(dec_odd);
  free(dec_al);
  free(dec_al_crop);
}

/* The extremes of quality and search range round-trip at an odd size, and
 * a higher quality (finer quantisers: the tables are divided by quality / 10)
 * gives a higher PSNR and a larger stream. */
static void test_extremes(int w, int h)
{
  static const int qr[][2] = {{1, 1}, {1, 64}, {5, 16}, {25, 1}, {50, 64}, {50, 1}};
  double psnr[6];
  size_t bytes[6];
  size_t fsize = tu_i420_size(w, h);
  uint8_t *clip = malloc(fsize * FRAMES);

  for (int t = 0; t < FRAMES; t++)
    synth_frame(clip + (size_t)t * fsize, w, h, t);
  for (int i = 0; i < 6; i++) {
    uint8_t *dec = roundtrip(clip, w, h, FRAMES, qr[i][0], qr[i][1], &bytes[i]);
    psnr[i] = dec ? clip_psnr(clip, dec, w, h, FRAMES, 0) : 0;
    printf("%dx%d quality %2d search range %2d: PSNR Y %.2f dB, %zu bytes\n", w, h, qr[i][0],
           qr[i][1], psnr[i], bytes[i]);
    free(dec);
  }
  TU_CHECK(psnr[1] < psnr[2] && psnr[2] < psnr[4], "PSNR at quality 1/5/50: %.2f %.2f %.2f",
           psnr[1], psnr[2], psnr[4]);
  TU_CHECK(bytes[1] < bytes[2] && bytes[2] < bytes[4], "bytes at quality 1/5/50: %zu %zu %zu",
           bytes[1], bytes[2], bytes[4]);
  for (int i = 0; i < 6; i++)
    TU_CHECK(psnr[i] >= 20.0, "quality %d search range %d: PSNR %.2f dB", qr[i][0], qr[i][1],
             psnr[i]);
  free(clip);
}

/* The same pictures with padded strides and unaligned plane starts must give
 * exactly the same stream as tight pictures. */
static void test_strides(int w, int h)
{
  int cw = c63_chroma_size(w), ch = c63_chroma_size(h), frames = 3;
  int stride[3] = {w + 37, cw + 5, cw + 64};
  size_t fsize = tu_i420_size(w, h);
  uint8_t *clip = malloc(fsize * frames);
  c63_enc_params p;
  c63_encoder *enc = NULL;
  tu_buf tight = {0}, strided = {0};
  char msg[256] = "";
  int ret;

  for (int t = 0; t < frames; t++)
    synth_frame(clip + (size_t)t * fsize, w, h, t);
  c63_enc_params_init(&p);
  p.width = w;
  p.height = h;
  ret = tu_encode(&p, clip, frames, &tight, msg, sizeof msg);
  TU_CHECK(ret == C63_OK, "tight encode: %s", msg);
  ret = c63_encoder_new(&p, &enc, msg, sizeof msg);
  TU_CHECK(ret == C63_OK, "encoder: %s", msg);
  for (int t = 0; t <= frames && ret == C63_OK; t++) {
    c63_picture pic;
    uint8_t *planes[3] = {NULL, NULL, NULL};
    c63_packet pkt;
    memset(&pic, 0, sizeof pic);
    if (t < frames) {
      const uint8_t *src = clip + (size_t)t * fsize;
      for (int c = 0; c < 3; c++) {
        int pw = c ? cw : w, ph = c ? ch : h;
        /* +1: planes start at an odd address */
        planes[c] = malloc((size_t)stride[c] * ph + 1);
        memset(planes[c], 0xA5, (size_t)stride[c] * ph + 1);
        for (int y = 0; y < ph; y++)
          memcpy(planes[c] + 1 + (size_t)y * stride[c], src + (size_t)y * pw, (size_t)pw);
        src += (size_t)pw * ph;
        pic.data[c] = planes[c] + 1;
        pic.stride[c] = stride[c];
      }
    }
    ret = c63_encoder_send_picture(enc, t < frames ? &pic : NULL);
    TU_CHECK(ret == C63_OK, "send: %s", c63_encoder_error(enc));
    while (ret == C63_OK && (ret = c63_encoder_receive_packet(enc, &pkt)) == C63_OK)
      tu_buf_append(&strided, pkt.data, pkt.size);
    TU_CHECK(ret == (t < frames ? C63_ERR_AGAIN : C63_ERR_EOF), "receive returned %d: %s", ret,
             c63_encoder_error(enc));
    ret = C63_OK;
    for (int c = 0; c < 3; c++)
      free(planes[c]);
  }
  TU_CHECK(tight.size == strided.size && memcmp(tight.data, strided.data, tight.size) == 0,
           "%dx%d: strided input gives a different stream (%zu vs %zu bytes)", w, h, strided.size,
           tight.size);
  printf("%dx%d: strided input gives the same %zu bytes\n", w, h, strided.size);
  c63_encoder_free(enc);
  free(clip);
  tu_buf_free(&tight);
  tu_buf_free(&strided);
}

int main(void)
{
  static const int sizes[][2] = {
      {8, 8},      {9, 9},     {17, 33},  {33, 17},  {100, 75},  {24, 40},
      {1282, 722}, {650, 488}, {8, 8192}, {8192, 8}, {176, 144},
  };

  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    int w = sizes[i][0], h = sizes[i][1];
    /* the thin extremes are slow to search per pixel; two frames suffice */
    test_size(w, h, (w >= 4096 || h >= 4096) ? 2 : FRAMES);
  }
  test_extremes(37, 29);
  test_strides(17, 33);
  test_strides(100, 75);
  return tu_finish("roundtrip");
}
