/* The CPU decoding backend: prediction and reconstruction in stripes of
 * block rows on the decoder's thread pool, with the C functions the
 * encoder's oracle uses, so encoder and decoder agree bit for bit.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c63.h"
#include "decode_backend.h"

struct c63_decode_backend {
  c63_geometry g;
  size_t capacity; /* pixels of padded luma the buffers hold (they only grow) */
  int ref;         /* index of the reference in recon[] */
  uint8_t *recon[2][3], *pred[3];
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
  be->capacity = 0;
}

static int cpu_create(int device_id, c63_threadpool *pool, c63_decode_backend **out, char *msg,
                      size_t msg_size)
{
  (void)device_id;
  *out = calloc(1, sizeof(**out));
  if (!*out) {
    if (msg && msg_size) snprintf(msg, msg_size, "out of memory");
    return C63_ERR_NOMEM;
  }
  (*out)->pool = pool;
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
  be->g = *g;
  c63_stripes_init(&be->stripes, g, c63_threadpool_size(be->pool));
  return C63_OK;
}

/* Prediction and reconstruction of one stripe of block rows. Vectors are
 * relative to each block, so the stripe's prediction comes from the
 * reference offset by the same rows (validated vectors stay in the plane). */
static void reconstruct_stripe(void *arg, int i)
{
  c63_decode_backend *be = arg;
  const c63_decode_job *job = be->job;
  int c, by0, by1;
  c63_stripe_rows(&be->stripes, &be->g, i, &c, &by0, &by1);
  const int w = be->g.pad_w[c], rows_h = (by1 - by0) * 8;
  const size_t off = (size_t)by0 * 8 * w, blk = (size_t)by0 * be->g.blocks_w[c];
  const uint8_t *pred = NULL;
  if (!job->keyframe) {
    /* blocks with use_mv = 0 get a zero prediction */
    c63_dsp_c.motion_compensate(be->recon[be->ref][c] + off, w, rows_h, job->mvs[c] + blk,
                                be->pred[c] + off);
    pred = be->pred[c] + off;
  }
  c63_dsp_c.dequant_idct_recon(job->coeffs[c] + blk * 64, pred, w, rows_h, job->quant[c],
                               be->recon[!be->ref][c] + off);
}

static int cpu_reconstruct(c63_decode_backend *be, c63_decode_job *job, char *msg, size_t msg_size)
{
  (void)msg;
  (void)msg_size;
  be->job = job;
  c63_threadpool_run(be->pool, reconstruct_stripe, be, c63_stripes_total(&be->stripes));
  be->job = NULL;
  be->ref = !be->ref;
  for (int c = 0; c < 3; c++) {
    job->out[c] = be->recon[be->ref][c];
    job->out_stride[c] = be->g.pad_w[c];
  }
  return C63_OK;
}

const c63_decode_backend_ops c63_decode_backend_cpu = {
    .name = "cpu",
    .create = cpu_create,
    .destroy = cpu_destroy,
    .resize = cpu_resize,
    .reconstruct = cpu_reconstruct,
};
