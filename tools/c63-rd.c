/* c63-rd: rate and quality of encoder configurations, and the Bjøntegaard
 * delta rate between two of them.
 *
 *   c63-rd [-w W -h H] [-f FRAMES] [--fps N] [-q Q1,Q2,...] [-a CONFIG] [-b CONFIG]
 *          [INPUT.yuv]
 *
 * Encodes the clip (a raw I420 file with tight planes, or without one the
 * synthetic clip of tools/synth.c: textured background panning, a moving
 * object, film grain) at each quality, decodes every frame again with the
 * decoder, and prints the bitrate (at --fps, default 25) and the PSNR of Y
 * and of Y, U and V weighted 6:1:1 (from each plane's mean squared error
 * over the clip). With -b it then prints the BD-rate of configuration B
 * against A, over PSNR-Y and PSNR-YUV: negative means B needs fewer bits
 * for the same quality. A configuration is a comma-separated list of
 * key=value: mode (exact or rd), keyframe-interval, search-range, threads,
 * backend (cpu or cuda). The default A is the reference encoder's settings.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bdrate.h"
#include "cliutil.h"
#include "synth.h"

static const char *prog = "c63-rd";

enum { MAX_Q = 16 };

typedef struct {
  int w, h, frames;
  uint8_t *data; /* frames x (w*h + 2*cw*ch) */
  size_t frame_size;
} clip;

typedef struct {
  double kbps, psnr_y, psnr_yuv;
} rd_point;

static void usage(FILE *f)
{
  fprintf(f,
          "Usage: %s [-w W -h H] [-f FRAMES] [--fps N] [-q Q1,Q2,...] [-a CONFIG] [-b CONFIG] "
          "[--scene pan|natural | INPUT.yuv]\n"
          "Bitrate and PSNR (Y, and YUV 6:1:1) of encoder configurations at several\n"
          "qualities, and the BD-rate of configuration B against A.\n"
          "  -w, -h       picture size (default 640x360)\n"
          "  -f           frames (default: the whole file, or 50 synthetic frames)\n"
          "  --scene      the synthetic clip without INPUT (c63-synth --scene): pan\n"
          "               (default) or natural\n"
          "  --fps        frame rate for the bitrate (default 25)\n"
          "  -q           qualities (default 10,20,30,40,50)\n"
          "  -a, -b       configurations: key=value,... with mode=exact|rd,\n"
          "               keyframe-interval, search-range, threads, backend=cpu|cuda\n",
          prog);
}

/* Apply "key=value,..." to p. Returns 0, or -1 after a message. */
static int parse_config(const char *spec, c63_enc_params *p)
{
  char *copy = strdup(spec), *save = NULL;
  int rc = 0;
  for (char *kv = strtok_r(copy, ",", &save); kv && rc == 0; kv = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(kv, '=');
    int v;
    if (!eq) {
      fprintf(stderr, "%s: '%s' is not key=value\n", prog, kv);
      rc = -1;
      break;
    }
    *eq = '\0';
    const char *val = eq + 1;
    if (!strcmp(kv, "backend") && (!strcmp(val, "cpu") || !strcmp(val, "cuda")))
      p->backend = val[1] == 'p' ? C63_BACKEND_CPU : C63_BACKEND_CUDA;
    else if (!strcmp(kv, "mode") && (!strcmp(val, "exact") || !strcmp(val, "rd")))
      p->mode = val[0] == 'e' ? C63_MODE_EXACT : C63_MODE_RD;
    else if (cli_parse_int(val, &v) != 0) {
      fprintf(stderr, "%s: bad value '%s' for %s\n", prog, val, kv);
      rc = -1;
    } else if (!strcmp(kv, "keyframe-interval"))
      p->keyframe_interval = v;
    else if (!strcmp(kv, "search-range"))
      p->search_range = v;
    else if (!strcmp(kv, "threads"))
      p->threads = v;
    else {
      fprintf(stderr, "%s: unknown setting '%s'\n", prog, kv);
      rc = -1;
    }
  }
  free(copy);
  return rc;
}

static double psnr(double sse, double count)
{
  return sse <= 0 ? 99.0 : 10 * log10(255.0 * 255.0 * count / sse);
}

/* Squared error of one plane of a decoded picture against the source. */
static double plane_sse(const uint8_t *src, int w, int h, const uint8_t *dec, int stride)
{
  double s = 0;
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      int d = (int)dec[(size_t)y * stride + x] - src[(size_t)y * w + x];
      s += d * d;
    }
  return s;
}

typedef struct {
  const clip *c;
  c63_decoder *dec;
  double sse[3];
  double bytes;
  int decoded;
} rd_run;

static int take_packets(c63_encoder *enc, rd_run *run)
{
  c63_packet pkt;
  int r;
  const int cw = c63_chroma_size(run->c->w), ch = c63_chroma_size(run->c->h);
  while ((r = c63_encoder_receive_packet(enc, &pkt)) == C63_OK) {
    c63_decoded_picture pic;
    if (c63_decoder_decode(run->dec, pkt.data, pkt.size, &pic) != C63_OK) {
      fprintf(stderr, "%s: decoding frame %lld: %s\n", prog, (long long)pkt.user,
              c63_decoder_error(run->dec));
      return -1;
    }
    const uint8_t *src = run->c->data + (size_t)pkt.user * run->c->frame_size;
    const uint8_t *planes[3] = {src, src + (size_t)run->c->w * run->c->h,
                                src + (size_t)run->c->w * run->c->h + (size_t)cw * ch};
    for (int p = 0; p < 3; p++)
      run->sse[p] +=
          plane_sse(planes[p], p ? cw : run->c->w, p ? ch : run->c->h, pic.data[p], pic.stride[p]);
    run->bytes += (double)pkt.size;
    run->decoded++;
  }
  return r == C63_ERR_AGAIN || r == C63_ERR_EOF ? 0 : -1;
}

/* Encode and decode the clip at one setting. */
static int measure(const clip *c, const c63_enc_params *p, double fps, rd_point *out)
{
  char msg[256];
  c63_encoder *enc;
  rd_run run = {.c = c};
  if (c63_encoder_new(p, &enc, msg, sizeof msg) != C63_OK) {
    fprintf(stderr, "%s: %s\n", prog, msg);
    return -1;
  }
  if (c63_decoder_new(NULL, &run.dec, NULL, 0) != C63_OK) {
    c63_encoder_free(enc);
    return -1;
  }
  const int cw = c63_chroma_size(c->w), ch = c63_chroma_size(c->h);
  int rc = 0;
  for (int t = 0; t < c->frames && rc == 0; t++) {
    const uint8_t *y = c->data + (size_t)t * c->frame_size, *u = y + (size_t)c->w * c->h;
    c63_picture pic = {.data = {y, u, u + (size_t)cw * ch}, .stride = {c->w, cw, cw}, .user = t};
    int r;
    while ((r = c63_encoder_send_picture(enc, &pic)) == C63_ERR_AGAIN)
      if (take_packets(enc, &run) != 0) break;
    if (r != C63_OK || take_packets(enc, &run) != 0) rc = -1;
  }
  if (rc == 0 && (c63_encoder_send_picture(enc, NULL) != C63_OK || take_packets(enc, &run) != 0))
    rc = -1;
  if (rc != 0) fprintf(stderr, "%s: encoding failed: %s\n", prog, c63_encoder_error(enc));
  if (rc == 0 && run.decoded != c->frames) {
    fprintf(stderr, "%s: %d of %d frames came back\n", prog, run.decoded, c->frames);
    rc = -1;
  }
  if (rc == 0) {
    const double n = c->frames;
    const double py = psnr(run.sse[0], n * c->w * c->h), pu = psnr(run.sse[1], n * cw * ch),
                 pv = psnr(run.sse[2], n * cw * ch);
    out->kbps = run.bytes * 8 * fps / n / 1000;
    out->psnr_y = py;
    out->psnr_yuv = (6 * py + pu + pv) / 8;
  }
  c63_decoder_free(run.dec);
  c63_encoder_free(enc);
  return rc;
}

static int load_clip(clip *c, const char *path, int max_frames, int natural)
{
  const int cw = c63_chroma_size(c->w), ch = c63_chroma_size(c->h);
  c->frame_size = (size_t)c->w * c->h + 2 * (size_t)cw * ch;
  if (!path) {
    c->frames = max_frames > 0 ? max_frames : 50;
    c->data = malloc(c->frame_size * c->frames);
    if (!c->data) return -1;
    for (int t = 0; t < c->frames; t++)
      (natural ? synth_natural_frame : synth_frame)(c->data + (size_t)t * c->frame_size, c->w, c->h,
                                                    t);
    return 0;
  }
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "%s: cannot open %s\n", prog, path);
    return -1;
  }
  c->frames = 0;
  c->data = NULL;
  for (;;) {
    if (max_frames > 0 && c->frames == max_frames) break;
    uint8_t *grown = realloc(c->data, c->frame_size * (c->frames + 1));
    if (!grown) break;
    c->data = grown;
    if (fread(c->data + c->frame_size * c->frames, 1, c->frame_size, f) != c->frame_size) break;
    c->frames++;
  }
  fclose(f);
  if (c->frames == 0) fprintf(stderr, "%s: no whole %dx%d frame in %s\n", prog, c->w, c->h, path);
  return c->frames > 0 ? 0 : -1;
}

static int run_config(const char *name, const char *spec, const clip *c, const int *q, int nq,
                      double fps, rd_point *pts)
{
  c63_enc_params p;
  c63_enc_params_init(&p);
  p.width = c->w;
  p.height = c->h;
  if (spec && parse_config(spec, &p) != 0) return -1;
  printf("config %s (%s): mode %s, keyframe-interval %d, search-range %d, backend %s\n", name,
         spec ? spec : "defaults", p.mode == C63_MODE_RD ? "rd" : "exact", p.keyframe_interval,
         p.search_range, p.backend == C63_BACKEND_CUDA ? "cuda" : "cpu");
  for (int i = 0; i < nq; i++) {
    p.quality = q[i];
    if (measure(c, &p, fps, &pts[i]) != 0) return -1;
    printf("  quality %2d: %10.1f kbit/s  PSNR-Y %6.2f dB  PSNR-YUV %6.2f dB\n", q[i], pts[i].kbps,
           pts[i].psnr_y, pts[i].psnr_yuv);
    fflush(stdout);
  }
  return 0;
}

static void print_bd(const rd_point *a, const rd_point *b, int n)
{
  double ra[MAX_Q], rb[MAX_Q], ya[MAX_Q], yb[MAX_Q], va[MAX_Q], vb[MAX_Q], bd;
  for (int i = 0; i < n; i++) {
    ra[i] = a[i].kbps;
    rb[i] = b[i].kbps;
    ya[i] = a[i].psnr_y;
    yb[i] = b[i].psnr_y;
    va[i] = a[i].psnr_yuv;
    vb[i] = b[i].psnr_yuv;
  }
  if (bd_rate(ra, ya, n, rb, yb, n, &bd) == 0)
    printf("BD-rate of B against A, PSNR-Y:   %+.2f%%\n", bd);
  else
    printf("BD-rate, PSNR-Y: the curves do not overlap (or fewer than 4 points)\n");
  if (bd_rate(ra, va, n, rb, vb, n, &bd) == 0)
    printf("BD-rate of B against A, PSNR-YUV: %+.2f%%\n", bd);
  else
    printf("BD-rate, PSNR-YUV: the curves do not overlap (or fewer than 4 points)\n");
}

int main(int argc, char **argv)
{
  clip c = {.w = 640, .h = 360};
  int q[MAX_Q] = {10, 20, 30, 40, 50}, nq = 5, max_frames = 0, fps = 25;
  const char *spec_a = NULL, *spec_b = NULL, *input = NULL, *scene = "pan";
  rd_point pa[MAX_Q], pb[MAX_Q];

  if (cli_open_std_fds() != 0) return 1;
  if (cli_version(prog, argc, argv)) return 0;
  for (int i = 1; i < argc; i++) {
    const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    int *target = NULL;
    if (!strcmp(o, "--help")) {
      usage(stdout);
      return 0;
    }
    if (o[0] != '-') {
      input = o;
      continue;
    }
    if (!v) {
      fprintf(stderr, "%s: option %s needs a value\n", prog, o);
      return 2;
    }
    i++;
    if (!strcmp(o, "-w"))
      target = &c.w;
    else if (!strcmp(o, "-h"))
      target = &c.h;
    else if (!strcmp(o, "-f"))
      target = &max_frames;
    else if (!strcmp(o, "--fps"))
      target = &fps;
    else if (!strcmp(o, "-a"))
      spec_a = v;
    else if (!strcmp(o, "-b"))
      spec_b = v;
    else if (!strcmp(o, "--scene") && (!strcmp(v, "pan") || !strcmp(v, "natural")))
      scene = v;
    else if (!strcmp(o, "-q")) {
      char *copy = strdup(v), *save = NULL;
      nq = 0;
      for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
        if (nq == MAX_Q || cli_parse_int(t, &q[nq++]) != 0) {
          fprintf(stderr, "%s: bad quality list '%s'\n", prog, v);
          free(copy);
          return 2;
        }
      free(copy);
    } else {
      fprintf(stderr, "%s: unknown option %s\n\n", prog, o);
      usage(stderr);
      return 2;
    }
    if (target && cli_parse_int(v, target) != 0) {
      fprintf(stderr, "%s: '%s' is not a whole number\n", prog, v);
      return 2;
    }
  }
  if (c.w < C63_MIN_SIZE || c.h < C63_MIN_SIZE || c.w > C63_MAX_SIZE || c.h > C63_MAX_SIZE ||
      fps < 1 || nq < 1) {
    fprintf(stderr, "%s: bad size, frame rate or quality list\n", prog);
    return 2;
  }
  if (load_clip(&c, input, max_frames, !strcmp(scene, "natural")) != 0) return 1;
  printf("clip: %s%s, %dx%d, %d frames, %d fps\n", input ? input : "synthetic, scene ",
         input ? "" : scene, c.w, c.h, c.frames, fps);
  int rc = run_config("A", spec_a, &c, q, nq, fps, pa);
  if (rc == 0 && spec_b) {
    rc = run_config("B", spec_b, &c, q, nq, fps, pb);
    if (rc == 0) print_bd(pa, pb, nq);
  }
  free(c.data);
  return rc == 0 ? 0 : 1;
}
