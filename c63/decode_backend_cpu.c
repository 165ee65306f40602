/* The CPU decoding backend: prediction and reconstruction in stripes of
 * block rows on the decoder's thread pool, with the DSP functions the
 * encoder reconstructs with (dsp.h), so encoder and decoder agree bit for
 * bit. Each stripe expands its sparse coefficients a block row at a time
 * into a small buffer of its own, which stays in cache.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c63/c63.h"
#include "decode_backend.h"

struct c63_decode_backend {
  c63_geometry g;
  size_t capacity; /* pixels of padded luma the buffers hold (they only grow) */
  int ref;         /* index of the reference in recon[] */
  uint8_t *recon[2][3], *pred[3];
  int16_t *rows;     /* one block row of dense coefficients per stripe */
  size_t rows_cap;   /* coefficients rows holds */
  size_t row_coeffs; /* coefficients of the widest block row */
  c63_dsp dsp;
  c63_threadpool *pool;
  c63_stripes stripes;
  const c63_decode_job *job; /* the frame being reconstructed */
};

static void free_buffers(c63_decode_backend *be)
{
  for (int c = 0; c < 3; c++) {
    free(be->recon[0][c]);
    free(be->recon[1][c]);
    free(be->pred[c]);
    be->recon[0][c] = be->recon[1][c] = be->pred[c] = NULL;
  }
  free(be->rows);
  be->rows = NULL;
  be->capacity = be->rows_cap = 0;
}

static int cpu_create(const c63_device *dev, c63_threadpool *pool, c63_decode_backend **out,
                      c63_decode_backend_info *info, char *msg, size_t msg_size)
{
  (void)dev;
  info->depth = 1;
  info->entropy = 0;
  *out = calloc(1, sizeof(**out));
  if (!*out) {
    if (msg && msg_size) snprintf(msg, msg_size, "out of memory");
    return C63_ERR_NOMEM;
  }
  (*out)->pool = pool;
  c63_dsp_init(&(*out)->dsp);
  return C63_OK;
}

static void cpu_destroy(c63_decode_backend *be)
{
  if (!be) return;
  free_buffers(be);
  free(be);
}

/* Buffers are kept when a smaller picture comes (a stream alternating sizes
 * reallocates only up to its largest). */
static int cpu_resize(c63_decode_backend *be, const c63_geometry *g, char *msg, size_t msg_size)
{
  const size_t luma = (size_t)g->pad_w[0] * g->pad_h[0];
  if (luma > be->capacity) {
    free_buffers(be);
    for (int c = 0; c < 3; c++) {
      /* chroma planes are a quarter of the luma plane */
      size_t px = c ? luma / 4 : luma;
      be->recon[0][c] = calloc(1, px);
      be->recon[1][c] = calloc(1, px);
      be->pred[c] = calloc(1, px);
      if (!be->recon[0][c] || !be->recon[1][c] || !be->pred[c]) {
        free_buffers(be);
        if (msg && msg_size)
          snprintf(msg, msg_size, "out of memory for a %dx%d picture", g->width, g->height);
        return C63_ERR_NOMEM;
      }
    }
    be->capacity = luma;
  }
  c63_stripes_init(&be->stripes, g, c63_threadpool_size(be->pool));
  be->row_coeffs = (size_t)g->blocks_w[0] * 64;
  const size_t rows = be->row_coeffs * (size_t)c63_stripes_total(&be->stripes);
  if (rows > be->rows_cap) {
    free(be->rows);
    be->rows_cap = 0;
    be->rows = malloc(rows * sizeof(int16_t));
    if (!be->rows) {
      if (msg && msg_size)
        snprintf(msg, msg_size, "out of memory for a %dx%d picture", g->width, g->height);
      return C63_ERR_NOMEM;
    }
    be->rows_cap = rows;
  }
  be->g = *g;
  return C63_OK;
}

/* Prediction and reconstruction of one stripe of block rows. Vectors are
 * relative to each block, so the stripe's prediction comes from the
 * reference offset by the same rows (validated vectors stay in the plane). */
static void reconstruct_stripe(void *arg, int i)
{
  c63_decode_backend *be = arg;
  const c63_decode_job *job = be->job;
  const c63_sparse_frame *sp = job->coeffs;
  int c, by0, by1;
  c63_stripe_rows(&be->stripes, &be->g, i, &c, &by0, &by1);
  const int w = be->g.pad_w[c], bw = be->g.blocks_w[c];
  const size_t off = (size_t)by0 * 8 * w;
  const size_t blk = c63_block_offset(&be->g, c) + (size_t)by0 * bw;
  int16_t *row = be->rows + (size_t)i * be->row_coeffs;
  const uint8_t *pred = NULL;
  if (!job->keyframe) {
    /* blocks with use_mv = 0 get a zero prediction */
    be->dsp.motion_compensate(be->recon[be->ref][c] + off, w, (by1 - by0) * 8, sp->mvs + blk,
                              be->pred[c] + off);
    pred = be->pred[c] + off;
  }
  uint8_t *rec = be->recon[!be->ref][c] + off;
  for (int by = by0; by < by1; by++) {
    const size_t r = (size_t)(by - by0) * 8 * w;
    c63_sparse_expand(sp, blk + (size_t)(by - by0) * bw, (size_t)bw, row);
    be->dsp.dequant_idct_recon(row, pred ? pred + r : NULL, w, 8, job->quant[c], rec + r);
  }
}

/* The work is done here, on the pool; collect hands out the picture. */
static int cpu_submit(c63_decode_backend *be, const c63_decode_job *job, char *msg, size_t msg_size)
{
  (void)msg;
  (void)msg_size;
  be->job = job;
  c63_threadpool_run(be->pool, reconstruct_stripe, be, c63_stripes_total(&be->stripes));
  be->job = NULL;
  be->ref = !be->ref;
  return C63_OK;
}

static int cpu_collect(c63_decode_backend *be, c63_decode_job *job, char *msg, size_t msg_size)
{
  (void)msg;
  (void)msg_size;
  for (int c = 0; c < 3; c++) {
    job->out[c] = be->recon[be->ref][c];
    job->out_stride[c] = be->g.pad_w[c];
  }
  return C63_OK;
}

const c63_decode_backend_ops c63_decode_backend_cpu = {
    .name = "cpu",
    .pinned_input = 0,
    .create = cpu_create,
    .destroy = cpu_destroy,
    .resize = cpu_resize,
    .submit = cpu_submit,
    .collect = cpu_collect,
    .drop = NULL, /* nothing is in flight after submit */
    .copy = NULL, /* host to host only: the decoder copies */
    .device_output = 0,
    .start = NULL, /* every frame starts at submit */
};
