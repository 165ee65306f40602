/* Rate control (c63/ratectl.c): on a 10-second clip (250 frames at 25 fps
 * of the natural-looking synthetic scene, keyframes every 50 frames) the
 * average-bitrate mode lands within 5% of three targets, the constant-
 * bitrate mode never overflows its buffer and lands within 5% too,
 * keyframes keep a quality near the delta frames', a bitrate changed
 * mid-stream is followed, and bad settings are refused. Streams of
 * keyframes only are controlled too; CBR keeps buffers of 100 ms to 1 s
 * from the first frame through a scene cut in both modes, and reports the
 * frames that overflow even at quality 1.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "synth.h"
#include "tutil.h"

#define W 352
#define H 288
#define FRAMES 250
#define FPS 25
#define CUT_FRAMES 200

typedef struct frame_info {
  size_t bytes;
  int keyframe, dc_step; /* the luma DC quantiser: finer quality, smaller step */
  uint8_t luma_quant[64];
} frame_info;

/* The frames of a stream, in order. */
static int split(const tu_buf *s, frame_info *fi, int max)
{
  size_t pos = 0;
  int n = 0;
  while (pos < s->size && n < max) {
    c63_frame_header hdr;
    char msg[256];
    if (c63_parse_frame_header(s->data + pos, s->size - pos, &hdr, msg, sizeof msg) != C63_OK)
      break;
    fi[n].bytes = hdr.frame_size;
    fi[n].keyframe = hdr.keyframe;
    fi[n].dc_step = hdr.quant[0][0];
    memcpy(fi[n].luma_quant, hdr.quant[0], 64);
    pos += hdr.frame_size;
    n++;
  }
  return n;
}

static double kbps(const frame_info *fi, int from, int to)
{
  double bits = 0;
  for (int i = from; i < to; i++)
    bits += 8.0 * (double)fi[i].bytes;
  return bits * FPS / (to - from) / 1000.0;
}

static void params(c63_enc_params *p, c63_backend_kind backend, c63_rate_control rc, int bitrate)
{
  c63_enc_params_init(p);
  p->width = W;
  p->height = H;
  p->keyframe_interval = 50;
  p->backend = backend;
  p->rate_control = rc;
  p->bitrate = bitrate;
  p->fps_num = FPS;
  p->fps_den = 1;
}

static void check_rate(const uint8_t *clip, c63_backend_kind backend, c63_rate_control rc,
                       int bitrate)
{
  c63_enc_params p;
  tu_buf s = {0};
  char msg[256];
  frame_info fi[FRAMES];
  const char *name = rc == C63_RC_ABR ? "abr" : "cbr";
  params(&p, backend, rc, bitrate);
  int r = tu_encode(&p, clip, FRAMES, &s, msg, sizeof msg);
  TU_CHECK(r == C63_OK, "%s %d kbit/s: %s", name, bitrate, msg);
  const int n = split(&s, fi, FRAMES);
  TU_CHECK(n == FRAMES, "%s %d kbit/s: %d frames", name, bitrate, n);
  if (n != FRAMES) return;
  const double got = kbps(fi, 0, n);
  TU_CHECK(got > 0.95 * bitrate && got < 1.05 * bitrate, "%s %d kbit/s: %.1f kbit/s over 10 s",
           name, bitrate, got);
  /* keyframes get a share of the bits: a quality near the delta frames' */
  int worst_key = 0;
  for (int i = 1; i < n; i++) {
    if (!fi[i].keyframe) continue;
    const int before = fi[i - 1].dc_step;
    if (fi[i].dc_step > 2 * before + 2) worst_key = fi[i].dc_step;
  }
  TU_CHECK(worst_key == 0, "%s %d kbit/s: a keyframe starved (DC step %d)", name, bitrate,
           worst_key);
  double peak = 0;
  if (rc == C63_RC_CBR) {
    /* the decoder's buffer: half full at the start, one frame's target
     * drained per frame, never over its size */
    const double size = bitrate * (double)p.buffer_ms, per_frame = bitrate * 1000.0 / FPS;
    double full = size / 2;
    for (int i = 0; i < n; i++) {
      full += 8.0 * (double)fi[i].bytes - per_frame;
      if (full < 0) full = 0;
      if (full > peak) peak = full;
    }
    TU_CHECK(peak <= size, "cbr %d kbit/s: the buffer overflows (%.0f of %.0f bits)", bitrate, peak,
             size);
  }
  printf("  %-4s %-4s %5d kbit/s: %7.1f kbit/s (%+.2f%%)",
         backend == C63_BACKEND_CUDA ? "cuda" : "cpu", name, bitrate, got,
         100.0 * (got / bitrate - 1));
  if (rc == C63_RC_CBR)
    printf(", buffer peak %.0f%%", 100.0 * peak / (bitrate * (double)p.buffer_ms));
  printf("\n");
  tu_buf_free(&s);
}

/* Picture i of the clip. */
static void clip_picture(const uint8_t *clip, int i, c63_picture *pic)
{
  memset(pic, 0, sizeof *pic);
  pic->data[0] = clip + (size_t)i * tu_i420_size(W, H);
  pic->data[1] = pic->data[0] + W * H;
  pic->data[2] = pic->data[1] + (W / 2) * (H / 2);
  pic->stride[0] = W;
  pic->stride[1] = pic->stride[2] = W / 2;
}

/* Encode frames pictures of clip with p through the API, into s, and the
 * rate controller's report at the end into st. */
static void encode_status(const c63_enc_params *p, const uint8_t *clip, int frames, tu_buf *s,
                          c63_rate_status *st)
{
  c63_encoder *enc;
  c63_packet pkt;
  char msg[256];
  int r;
  TU_CHECK(c63_encoder_new(p, &enc, msg, sizeof msg) == C63_OK, "encoder: %s", msg);
  for (int i = 0; i <= frames; i++) {
    c63_picture pic;
    if (i < frames) clip_picture(clip, i, &pic);
    while ((r = c63_encoder_send_picture(enc, i < frames ? &pic : NULL)) == C63_ERR_AGAIN)
      while (c63_encoder_receive_packet(enc, &pkt) == C63_OK)
        tu_buf_append(s, pkt.data, pkt.size);
    TU_CHECK(r == C63_OK, "send: %s", c63_encoder_error(enc));
    while (c63_encoder_receive_packet(enc, &pkt) == C63_OK)
      tu_buf_append(s, pkt.data, pkt.size);
  }
  TU_CHECK(c63_encoder_rate_status(enc, st) == C63_OK, "rate status");
  c63_encoder_free(enc);
}

/* Every frame a keyframe (keyframe interval 1): the target is followed,
 * within 5%, by ABR and CBR alike, for several targets; one below what
 * quality 1 spends and one above what 50 does are reported out of reach. */
static void check_keyframes_only(const uint8_t *clip)
{
  static const struct {
    int bitrate, reach;
  } cases[] = {{1000, 0}, {1600, 0}, {2500, 0}, {300, -1}, {20000, 1}};
  static frame_info fi[FRAMES];
  for (int rc = C63_RC_ABR; rc <= C63_RC_CBR; rc++)
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
      c63_enc_params p;
      c63_rate_status st;
      tu_buf s = {0};
      const int bitrate = cases[k].bitrate;
      const char *name = rc == C63_RC_ABR ? "abr" : "cbr";
      params(&p, C63_BACKEND_CPU, (c63_rate_control)rc, bitrate);
      p.keyframe_interval = 1;
      encode_status(&p, clip, FRAMES, &s, &st);
      const int n = split(&s, fi, FRAMES);
      TU_CHECK(n == FRAMES, "keyframes only, %s %d: %d frames", name, bitrate, n);
      if (n == FRAMES) {
        const double got = kbps(fi, 0, n);
        if (cases[k].reach == 0)
          TU_CHECK(got > 0.95 * bitrate && got < 1.05 * bitrate,
                   "keyframes only, %s %d kbit/s: %.1f kbit/s", name, bitrate, got);
        else
          TU_CHECK(cases[k].reach < 0 ? got > bitrate : got < bitrate,
                   "keyframes only, %s %d kbit/s: %.1f kbit/s", name, bitrate, got);
        printf("  keyframes only, %s %5d kbit/s: %7.1f kbit/s, reach %d\n", name, bitrate, got,
               st.reach);
      }
      TU_CHECK(st.reach == cases[k].reach && st.bitrate == bitrate,
               "keyframes only, %s %d kbit/s: reach %d for %d kbit/s, not %d", name, bitrate,
               st.reach, st.bitrate, cases[k].reach);
      tu_buf_free(&s);
    }
}

/* The scene-cut clip: the natural scene, then the panning one. */
static uint8_t *make_cut_clip(void)
{
  const size_t fsize = tu_i420_size(W, H);
  uint8_t *clip = malloc(fsize * CUT_FRAMES);
  for (int t = 0; t < CUT_FRAMES; t++)
    if (t < CUT_FRAMES / 2)
      synth_natural_frame(clip + fsize * t, W, H, t);
    else
      synth_frame(clip + fsize * t, W, H, t);
  return clip;
}

/* The decoder's buffer replayed on the stream from its first frame: half
 * full at the start, one frame's target drained per frame. Returns the
 * frames that overflowed it; *at_q1 counts those coded at quality 1
 * (luma tables q1). */
static int replay_buffer(const frame_info *fi, int n, int bitrate, int buffer_ms, const uint8_t *q1,
                         int *at_q1, double *peak)
{
  const double size = bitrate * (double)buffer_ms, per_frame = bitrate * 1000.0 / FPS;
  double full = size / 2;
  int over = 0;
  *at_q1 = 0;
  *peak = 0;
  for (int i = 0; i < n; i++) {
    full += 8.0 * (double)fi[i].bytes - per_frame;
    if (full < 0) full = 0;
    if (full > *peak) *peak = full;
    if (full > size) {
      over++;
      *at_q1 += memcmp(fi[i].luma_quant, q1, 64) == 0;
    }
  }
  *peak /= size;
  return over;
}

/* CBR's promise: from the first frame, through a scene cut with a keyframe
 * on it, no frame overflows a buffer of 100 ms to 1 s where quality 1
 * fits (at 1200 kbit/s it always does here), in exact and rd mode; where
 * quality 1 does not fit (exact, 600 kbit/s), only frames coded at quality
 * 1 overflow, and each is reported. */
static void check_cbr_buffer(c63_backend_kind backend)
{
  static const int buffers[] = {100, 200, 250, 1000};
  static frame_info fi[CUT_FRAMES];
  uint8_t *clip = make_cut_clip();
  uint8_t q1[64];
  c63_enc_params p;
  c63_rate_status st;
  tu_buf s = {0};
  /* quality 1's luma table, from one frame coded at it */
  params(&p, C63_BACKEND_CPU, C63_RC_QUALITY, 0);
  p.quality = C63_MIN_QUALITY;
  encode_status(&p, clip, 1, &s, &st);
  TU_CHECK(split(&s, fi, 1) == 1, "a frame at quality 1");
  memcpy(q1, fi[0].luma_quant, 64);
  for (int mode = C63_MODE_EXACT; mode <= C63_MODE_RD; mode++)
    for (size_t b = 0; b <= sizeof buffers / sizeof buffers[0]; b++) {
      const int tight = b == sizeof buffers / sizeof buffers[0]; /* quality 1 does not fit */
      if (tight && mode == C63_MODE_RD) continue;
      const int bitrate = tight ? 600 : 1200, buffer_ms = tight ? 100 : buffers[b];
      const char *name = mode == C63_MODE_RD ? "rd" : "exact";
      params(&p, backend, C63_RC_CBR, bitrate);
      p.keyframe_interval = CUT_FRAMES / 2; /* a keyframe on the cut */
      p.buffer_ms = buffer_ms;
      p.mode = (c63_enc_mode)mode;
      s.size = 0;
      encode_status(&p, clip, CUT_FRAMES, &s, &st);
      const int n = split(&s, fi, CUT_FRAMES);
      TU_CHECK(n == CUT_FRAMES, "cbr %s %d ms: %d frames", name, buffer_ms, n);
      int at_q1;
      double peak;
      const int over = replay_buffer(fi, n, bitrate, buffer_ms, q1, &at_q1, &peak);
      printf("  scene cut, %s, cbr %-5s %4d kbit/s, %4d ms: %d overflows (%d at quality 1, %lld "
             "reported), peak %.0f%%, %lld frames coded again\n",
             backend == C63_BACKEND_CUDA ? "cuda" : "cpu", name, bitrate, buffer_ms, over, at_q1,
             (long long)st.overflows, 100 * peak, (long long)st.recoded);
      TU_CHECK(over == at_q1, "cbr %s %d ms: %d frames overflow, %d of them at quality 1", name,
               buffer_ms, over, at_q1);
      TU_CHECK(over == st.overflows, "cbr %s %d ms: %d frames overflow, %lld reported", name,
               buffer_ms, over, (long long)st.overflows);
      TU_CHECK(tight ? over > 0 : over == 0, "cbr %s %d kbit/s, %d ms: %d overflows", name, bitrate,
               buffer_ms, over);
      TU_CHECK(st.buffer_ms == buffer_ms && st.bitrate == bitrate, "status of %d ms: %d ms",
               buffer_ms, st.buffer_ms);
    }
  tu_buf_free(&s);
  free(clip);
}

/* Encode the clip at ABR 1200 kbit/s, setting the bitrate before every
 * picture: 2400 from the middle on (change), or 1200 again (the same). */
static void encode_live(const uint8_t *clip, int change, tu_buf *s)
{
  c63_enc_params p;
  c63_encoder *enc;
  char msg[256];
  params(&p, C63_BACKEND_CPU, C63_RC_ABR, 1200);
  TU_CHECK(c63_encoder_new(&p, &enc, msg, sizeof msg) == C63_OK, "encoder: %s", msg);
  for (int i = 0; i <= FRAMES; i++) {
    c63_picture pic, *pp = NULL;
    c63_packet pkt;
    const int rate = change && i >= FRAMES / 2 ? 2400 : 1200;
    TU_CHECK(c63_encoder_set_bitrate(enc, rate) == C63_OK, "set_bitrate: %s",
             c63_encoder_error(enc));
    if (i < FRAMES) {
      clip_picture(clip, i, &pic);
      pp = &pic;
    }
    int r;
    while ((r = c63_encoder_send_picture(enc, pp)) == C63_ERR_AGAIN)
      while (c63_encoder_receive_packet(enc, &pkt) == C63_OK)
        tu_buf_append(s, pkt.data, pkt.size);
    TU_CHECK(r == C63_OK, "send: %s", c63_encoder_error(enc));
    while (c63_encoder_receive_packet(enc, &pkt) == C63_OK)
      tu_buf_append(s, pkt.data, pkt.size);
  }
  TU_CHECK(c63_encoder_set_bitrate(enc, 0) == C63_ERR_INVALID_ARG, "bitrate 0 accepted");
  c63_encoder_free(enc);
}

/* Half the clip at one bitrate, half at another, set while encoding; and
 * the same bitrate set again changes nothing (an element re-applies all
 * its settings whenever one of them changes). */
static void check_change(const uint8_t *clip)
{
  c63_enc_params p;
  char msg[256];
  frame_info fi[FRAMES];
  tu_buf s = {0}, plain = {0};
  encode_live(clip, 1, &s);
  const int n = split(&s, fi, FRAMES);
  TU_CHECK(n == FRAMES, "bitrate change: %d frames", n);
  if (n == FRAMES) {
    /* the second half after a second to settle */
    const double a = kbps(fi, 0, FRAMES / 2), b = kbps(fi, FRAMES / 2 + FPS, FRAMES);
    TU_CHECK(a > 0.9 * 1200 && a < 1.1 * 1200 && b > 0.9 * 2400 && b < 1.1 * 2400,
             "bitrate change 1200 -> 2400 kbit/s: %.1f then %.1f kbit/s", a, b);
    printf("  bitrate changed while encoding, 1200 -> 2400 kbit/s: %.1f, then %.1f kbit/s\n", a, b);
  }
  s.size = 0;
  encode_live(clip, 0, &s);
  params(&p, C63_BACKEND_CPU, C63_RC_ABR, 1200);
  TU_CHECK(tu_encode(&p, clip, FRAMES, &plain, msg, sizeof msg) == C63_OK, "encode: %s", msg);
  TU_CHECK(s.size == plain.size && memcmp(s.data, plain.data, s.size) == 0,
           "setting the same bitrate again changed the stream");
  tu_buf_free(&s);
  tu_buf_free(&plain);
}

/* c63_encoder_last_quality: 0 before the first packet, then the quality of
 * each packet's frame: the one set in constant-quality mode; with a target
 * below what the coarsest quality spends (1 kbit/s), quality 1 from the
 * controller's first few steps on, and the finest above what it spends.
 * c63_encoder_target_reach: those two targets out of reach (-1, +1), and
 * no other (a reachable target's last quality, want 0, is not checked); a
 * new target judged afresh. */
static void check_last_quality(const uint8_t *clip)
{
  static const struct {
    c63_rate_control rc;
    int bitrate, want, reach;
  } cases[] = {{C63_RC_QUALITY, 0, 30, 0},
               {C63_RC_ABR, 2000, 0, 0},
               {C63_RC_ABR, 1, C63_MIN_QUALITY, -1},
               {C63_RC_CBR, 1000000, C63_MAX_QUALITY, 1}};
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    c63_enc_params p;
    c63_encoder *enc;
    c63_packet pkt;
    char msg[256];
    int r, last = -1;
    params(&p, C63_BACKEND_CPU, cases[k].rc, cases[k].bitrate);
    p.quality = 30;
    TU_CHECK(c63_encoder_new(&p, &enc, msg, sizeof msg) == C63_OK, "encoder: %s", msg);
    TU_CHECK(c63_encoder_last_quality(enc) == 0, "last quality before any packet: %d",
             c63_encoder_last_quality(enc));
    for (int i = 0; i <= FRAMES; i++) {
      c63_picture pic;
      if (i < FRAMES) clip_picture(clip, i, &pic);
      while ((r = c63_encoder_send_picture(enc, i < FRAMES ? &pic : NULL)) == C63_ERR_AGAIN)
        while (c63_encoder_receive_packet(enc, &pkt) == C63_OK)
          last = c63_encoder_last_quality(enc);
      TU_CHECK(r == C63_OK, "send: %s", c63_encoder_error(enc));
      while (c63_encoder_receive_packet(enc, &pkt) == C63_OK)
        last = c63_encoder_last_quality(enc);
    }
    TU_CHECK(!cases[k].want || last == cases[k].want,
             "rate control %d at %d kbit/s: last quality %d, not %d", (int)cases[k].rc,
             cases[k].bitrate, last, cases[k].want);
    int reach = 2;
    double kbps = 0;
    TU_CHECK(c63_encoder_target_reach(enc, &reach, &kbps) == C63_OK && reach == cases[k].reach,
             "rate control %d at %d kbit/s: reach %d, not %d", (int)cases[k].rc, cases[k].bitrate,
             reach, cases[k].reach);
    /* the frames' bitrate is on the side of the target the answer says */
    TU_CHECK(reach == 0 || (reach < 0 ? kbps > cases[k].bitrate : kbps < cases[k].bitrate),
             "reach %d with %.1f kbit/s against %d", reach, kbps, cases[k].bitrate);
    if (reach != 0) {
      TU_CHECK(c63_encoder_set_bitrate(enc, 2000) == C63_OK, "set_bitrate: %s",
               c63_encoder_error(enc));
      TU_CHECK(c63_encoder_target_reach(enc, &reach, NULL) == C63_OK && reach == 0,
               "a new target is not judged afresh: reach %d", reach);
    }
    c63_encoder_free(enc);
  }
}

static void check_settings(void)
{
  c63_enc_params p;
  c63_encoder *enc;
  char msg[256];
  params(&p, C63_BACKEND_CPU, C63_RC_ABR, 0);
  TU_CHECK(c63_enc_params_validate(&p, msg, sizeof msg) == C63_ERR_INVALID_ARG &&
               strstr(msg, "bitrate"),
           "abr without a bitrate: %s", msg);
  params(&p, C63_BACKEND_CPU, C63_RC_ABR, 1000);
  p.fps_num = 0;
  TU_CHECK(c63_enc_params_validate(&p, msg, sizeof msg) == C63_ERR_INVALID_ARG &&
               strstr(msg, "framerate"),
           "abr without a framerate: %s", msg);
  params(&p, C63_BACKEND_CPU, C63_RC_CBR, 1000);
  p.buffer_ms = 0;
  TU_CHECK(c63_enc_params_validate(&p, msg, sizeof msg) == C63_ERR_INVALID_ARG &&
               strstr(msg, "buffer"),
           "cbr without a buffer: %s", msg);
  params(&p, C63_BACKEND_CPU, (c63_rate_control)7, 1000);
  TU_CHECK(c63_enc_params_validate(&p, msg, sizeof msg) == C63_ERR_INVALID_ARG,
           "rate control 7 accepted");
  /* constant quality ignores the bitrate, and has none to change */
  params(&p, C63_BACKEND_CPU, C63_RC_QUALITY, 0);
  TU_CHECK(c63_encoder_new(&p, &enc, msg, sizeof msg) == C63_OK, "quality mode: %s", msg);
  TU_CHECK(c63_encoder_set_bitrate(enc, 1000) == C63_ERR_INVALID_ARG,
           "set_bitrate in quality mode accepted");
  c63_encoder_free(enc);
}

int main(void)
{
  const size_t fsize = tu_i420_size(W, H);
  uint8_t *clip = malloc(fsize * FRAMES);
  for (int t = 0; t < FRAMES; t++)
    synth_natural_frame(clip + fsize * t, W, H, t);
  printf("rate control, %dx%d, %d frames at %d fps:\n", W, H, FRAMES, FPS);
  static const int rates[] = {1200, 2000, 3000};
  for (int i = 0; i < 3; i++) {
    check_rate(clip, C63_BACKEND_CPU, C63_RC_ABR, rates[i]);
    check_rate(clip, C63_BACKEND_CPU, C63_RC_CBR, rates[i]);
  }
  /* frames in flight on the GPU: the sizes come back later */
  if (c63_backend_available(C63_BACKEND_CUDA, 0, NULL, 0)) {
    check_rate(clip, C63_BACKEND_CUDA, C63_RC_ABR, 2000);
    check_rate(clip, C63_BACKEND_CUDA, C63_RC_CBR, 2000);
  }
  check_change(clip);
  check_last_quality(clip);
  check_keyframes_only(clip);
  check_cbr_buffer(C63_BACKEND_CPU);
  if (c63_backend_available(C63_BACKEND_CUDA, 0, NULL, 0)) check_cbr_buffer(C63_BACKEND_CUDA);
  check_settings();
  free(clip);
  return tu_finish("test_ratectl");
}
