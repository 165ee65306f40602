/* The CPU backend: the pixel stages with the fastest DSP functions of this
 * CPU, completing each frame during submit. Each plane is cut into stripes
 * of block rows that the encoder's thread pool codes in parallel: within a
 * frame a stripe reads only the input and the previous reconstruction and
 * writes only its own rows, so the output does not depend on the cut.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "encode_backend.h"
#include "c63/c63.h"
#include "entropy.h"
#include "frame_syntax.h"
#include "rd.h"

/* Slack after every plane so SIMD loads near the end stay in bounds. */
#define PLANE_SLACK 32

struct c63_backend {
  c63_geometry g;
  c63_dsp dsp;
  uint8_t *cur[3], *pred[3], *recon[2][3];
  int16_t *coeffs[3];
  c63_mv *mvs[3];
  int ref; /* index of the reference reconstruction in recon[] */
  int pending;
  c63_threadpool *pool;
  c63_stripes stripes;
  const c63_frame_job *job; /* the frame being coded, for the stripe tasks */
  c63_entropy_encoder *entropy;
  /* The coded frame: C63_FRAME_HEADER_BYTES of room for the encoder's
   * headers, the payload, then room for EOI. */
  c63_bytebuf out;
};

void c63_pad_plane(const uint8_t *src, int src_stride, int step, int pic_w, int pic_h, uint8_t *dst,
                   int pad_w, int pad_h)
{
  for (int y = 0; y < pic_h; y++) {
    uint8_t *d = dst + (size_t)y * pad_w;
    const uint8_t *s = src + (size_t)y * src_stride;
    if (step == 1)
      memcpy(d, s, (size_t)pic_w);
    else
      for (int x = 0; x < pic_w; x++)
        d[x] = s[(size_t)x * 2];
    memset(d + pic_w, 0, (size_t)(pad_w - pic_w));
  }
  memset(dst + (size_t)pic_h * pad_w, 0, (size_t)(pad_h - pic_h) * pad_w);
}

static void cpu_destroy(c63_backend *be)
{
  if (!be) return;
  for (int c = 0; c < 3; c++) {
    free(be->cur[c]);
    free(be->pred[c]);
    free(be->recon[0][c]);
    free(be->recon[1][c]);
    free(be->coeffs[c]);
    free(be->mvs[c]);
  }
  c63_entropy_encoder_free(be->entropy);
  c63_bytebuf_free(&be->out);
  free(be);
}

static int cpu_create(const c63_geometry *g, const c63_device *dev, c63_threadpool *pool,
                      c63_backend **out, char *msg, size_t msg_size)
{
  c63_backend *be = calloc(1, sizeof(*be));
  (void)dev; /* the CPU backend has no devices */
  *out = NULL;
  if (!be) goto nomem;
  be->g = *g;
  be->pool = pool;
  c63_dsp_init(&be->dsp);
  for (int c = 0; c < 3; c++) {
    size_t px = (size_t)g->pad_w[c] * g->pad_h[c], blocks = px / 64;
    /* calloc: the first reference is never read (keyframe), but keep it defined */
    be->cur[c] = calloc(1, px + PLANE_SLACK);
    be->pred[c] = calloc(1, px + PLANE_SLACK);
    be->recon[0][c] = calloc(1, px + PLANE_SLACK);
    be->recon[1][c] = calloc(1, px + PLANE_SLACK);
    be->coeffs[c] = calloc(blocks, 64 * sizeof(int16_t));
    be->mvs[c] = calloc(blocks, sizeof(c63_mv));
    if (!be->cur[c] || !be->pred[c] || !be->recon[0][c] || !be->recon[1][c] || !be->coeffs[c] ||
        !be->mvs[c])
      goto nomem;
  }
  be->entropy = c63_entropy_encoder_new(g, pool);
  if (!be->entropy) goto nomem;
  c63_stripes_init(&be->stripes, g, c63_threadpool_size(pool));
  *out = be;
  return C63_OK;
nomem:
  cpu_destroy(be);
  if (msg && msg_size)
    snprintf(msg, msg_size, "out of memory allocating CPU encoder buffers for %dx%d", g->width,
             g->height);
  return C63_ERR_NOMEM;
}

/* Code block rows [by0, by1) of plane c. */
static void code_rows(c63_backend *be, int c, int by0, int by1)
{
  const c63_geometry *g = &be->g;
  const c63_frame_job *job = be->job;
  const int w = g->pad_w[c], h = g->pad_h[c], bw = g->blocks_w[c];
  const size_t off = (size_t)by0 * 8 * w, blk = (size_t)by0 * bw;
  const int rows_h = (by1 - by0) * 8;
  uint8_t *ref = be->recon[be->ref][c], *rec = be->recon[!be->ref][c];
  const uint8_t *pred = NULL;

  if (job->keyframe) {
    memset(be->mvs[c] + blk, 0, (size_t)(by1 - by0) * bw * sizeof(c63_mv));
  } else {
    int range = c ? job->search_range / 2 : job->search_range;
    be->dsp.motion_search(be->cur[c], ref, w, h, range, by0, by1, be->mvs[c]);
    /* Vectors are relative to each block, so a stripe's prediction comes
     * from the reference offset by the same rows (they may reach outside
     * the stripe, never outside the plane). */
    be->dsp.motion_compensate(ref + off, w, rows_h, be->mvs[c] + blk, be->pred[c] + off);
    pred = be->pred[c] + off;
  }
  be->dsp.fdct_quant(be->cur[c] + off, pred, w, rows_h, job->quant[c], c63_ac_limit(c),
                     be->coeffs[c] + blk * 64);
  be->dsp.dequant_idct_recon(be->coeffs[c] + blk * 64, pred, w, rows_h, job->quant[c], rec + off);
}

static void stripe_task(void *arg, int i)
{
  c63_backend *be = arg;
  int c, by0, by1;
  c63_stripe_rows(&be->stripes, &be->g, i, &c, &by0, &by1);
  code_rows(be, c, by0, by1);
}

static void rd_row_task(void *arg, int my)
{
  c63_rd_code_mcu_row(arg, my);
}

/* The rd mode: MCU rows in parallel, each coded in order (rd.h). */
static void code_frame_rd(c63_backend *be, const c63_frame_job *job)
{
  c63_rd_frame f = {
      .g = &be->g,
      .dsp = &be->dsp,
      .quant = (const uint8_t(*)[64])job->quant,
      .keyframe = job->keyframe,
      .search_range = job->search_range,
  };
  for (int c = 0; c < 3; c++) {
    f.cur[c] = be->cur[c];
    f.ref[c] = be->recon[be->ref][c];
    f.rec[c] = be->recon[!be->ref][c];
    f.coeffs[c] = be->coeffs[c];
    f.mvs[c] = be->mvs[c];
  }
  c63_rd_lambda_init(f.quant, &f.lambda);
  c63_threadpool_run(be->pool, rd_row_task, &f, be->g.mcus_h);
}

static int cpu_submit(c63_backend *be, c63_frame_job *job, char *msg, size_t msg_size)
{
  const c63_geometry *g = &be->g;

  for (int c = 0; c < 3; c++) {
    /* NV12: U and V are the even and odd bytes of the interleaved plane */
    const uint8_t *src = job->nv12 && c ? job->src[1] + (c - 1) : job->src[c];
    const int stride = job->nv12 && c ? job->src_stride[1] : job->src_stride[c];
    c63_pad_plane(src, stride, job->nv12 && c ? 2 : 1, g->pic_w[c], g->pic_h[c], be->cur[c],
                  g->pad_w[c], g->pad_h[c]);
  }
  if (job->mode == C63_MODE_RD) {
    code_frame_rd(be, job);
  } else {
    be->job = job;
    c63_threadpool_run(be->pool, stripe_task, be, c63_stripes_total(&be->stripes));
    be->job = NULL;
  }
  be->ref = !be->ref;

  c63_bytebuf *b = &be->out;
  b->size = 0;
  if (c63_bytebuf_reserve(b, C63_FRAME_HEADER_BYTES) == 0) b->size = C63_FRAME_HEADER_BYTES;
  int r = c63_entropy_encode(be->entropy, b, (const int16_t *const *)be->coeffs,
                             (const c63_mv *const *)be->mvs);
  if (r || c63_bytebuf_reserve(b, C63_FRAME_TRAILER_BYTES) < 0) {
    b->failed = 0;
    if (msg && msg_size)
      snprintf(msg, msg_size, "out of memory writing a %dx%d frame", g->width, g->height);
    return C63_ERR_NOMEM;
  }
  be->pending = 1;
  return C63_OK;
}

static int cpu_collect(c63_backend *be, c63_frame_job *job, char *msg, size_t msg_size)
{
  if (!be->pending) {
    if (msg && msg_size) snprintf(msg, msg_size, "collect without a submitted frame");
    return C63_ERR_INVALID_ARG;
  }
  be->pending = 0;
  job->payload = be->out.data + C63_FRAME_HEADER_BYTES;
  job->payload_size = be->out.size - C63_FRAME_HEADER_BYTES;
  return C63_OK;
}

/* The reconstruction before the last frame is still in the other slot. */
static void cpu_rewind(c63_backend *be)
{
  be->ref = !be->ref;
}

/* The CPU is always there. */
static int cpu_probe(int device_id, char *msg, size_t msg_size)
{
  (void)device_id;
  if (msg && msg_size) msg[0] = '\0';
  return 1;
}

const uint8_t *c63_backend_cpu_reference(const c63_backend *be, int c)
{
  return be->recon[be->ref][c];
}

/* One frame at a time: submit codes it, collect hands it out. */
static int cpu_in_flight(const c63_backend *be)
{
  (void)be;
  return 1;
}

const c63_backend_ops c63_backend_cpu = {
    .name = "cpu",
    .in_flight = cpu_in_flight,
    .rewind = cpu_rewind,
    .create = cpu_create,
    .destroy = cpu_destroy,
    .submit = cpu_submit,
    .collect = cpu_collect,
    .probe = cpu_probe,
    .modes = 1u << C63_MODE_EXACT | 1u << C63_MODE_RD,
};
