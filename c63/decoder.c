/* The decoder object: header parsing, entropy decoding, and reconstruction
 * with the same DSP functions as the encoder, so encoder and decoder agree
 * bit for bit.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c63.h"
#include "dsp.h"
#include "entropy.h"
#include "geometry.h"
#include "threadpool.h"

#include <unistd.h>

struct c63_decoder {
  c63_geometry g;
  int allocated;   /* buffers hold g */
  size_t capacity; /* pixels of padded luma the buffers hold (they only grow) */
  int have_ref;
  /* The last DQT's tables: a frame without DQT keeps them, as in the
   * reference (whose tables start all zero). */
  uint8_t quant[3][64];
  int ref; /* index of the reference in recon[] */
  uint8_t *recon[2][3], *pred[3];
  int16_t *coeffs[3];
  c63_mv *mvs[3];
  c63_threadpool *pool; /* reconstruction runs in stripes of block rows */
  c63_stripes stripes;
  const c63_frame_header *hdr; /* the frame being reconstructed */
  char err[256];
};

static void free_buffers(c63_decoder *dec)
{
  for (int c = 0; c < 3; c++) {
    free(dec->recon[0][c]);
    free(dec->recon[1][c]);
    free(dec->pred[c]);
    free(dec->coeffs[c]);
    free(dec->mvs[c]);
    dec->recon[0][c] = dec->recon[1][c] = dec->pred[c] = NULL;
    dec->coeffs[c] = NULL;
    dec->mvs[c] = NULL;
  }
  dec->allocated = 0;
  dec->capacity = 0;
  dec->have_ref = 0;
}

/* Buffers for a picture size. They are kept when a smaller picture comes
 * (a stream alternating sizes reallocates only up to its largest), so the
 * planes of a size are laid out in buffers sized for the largest seen. */
static int alloc_buffers(c63_decoder *dec, int width, int height)
{
  c63_geometry g;
  c63_geometry_init(&g, width, height);
  const size_t luma = (size_t)g.pad_w[0] * g.pad_h[0];
  dec->have_ref = 0;
  if (luma > dec->capacity) {
    free_buffers(dec);
    for (int c = 0; c < 3; c++) {
      /* chroma planes are a quarter of the luma plane at most */
      size_t px = c ? luma / 4 : luma;
      dec->recon[0][c] = calloc(1, px);
      dec->recon[1][c] = calloc(1, px);
      dec->pred[c] = calloc(1, px);
      dec->coeffs[c] = calloc(px, sizeof(int16_t));
      dec->mvs[c] = calloc(px / 64, sizeof(c63_mv));
      if (!dec->recon[0][c] || !dec->recon[1][c] || !dec->pred[c] || !dec->coeffs[c] ||
          !dec->mvs[c]) {
        free_buffers(dec);
        snprintf(dec->err, sizeof(dec->err), "out of memory for a %dx%d picture", width, height);
        return C63_ERR_NOMEM;
      }
    }
    dec->capacity = luma;
  }
  dec->g = g;
  c63_stripes_init(&dec->stripes, &dec->g, c63_threadpool_size(dec->pool));
  dec->allocated = 1;
  return C63_OK;
}

/* Fewest bytes of entropy-coded data a frame of this geometry can have:
 * every block codes at least a use_mv bit, a DC size and an EOB (5 bits).
 * Checked before allocating, so a huge size in a short frame costs nothing. */
static size_t min_data_bytes(int width, int height)
{
  c63_geometry g;
  c63_geometry_init(&g, width, height);
  return ((size_t)g.mcus_w * g.mcus_h * 6 * 5) / 8;
}

int c63_decoder_new(c63_decoder **out)
{
  if (!out) return C63_ERR_INVALID_ARG;
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  c63_decoder *dec = calloc(1, sizeof(*dec));
  *out = NULL;
  if (!dec) return C63_ERR_NOMEM;
  dec->pool = c63_threadpool_new(cores < 1 ? 1 : cores > 16 ? 16 : (int)cores);
  if (!dec->pool) {
    free(dec);
    return C63_ERR_NOMEM;
  }
  *out = dec;
  return C63_OK;
}

void c63_decoder_free(c63_decoder *dec)
{
  if (!dec) return;
  free_buffers(dec);
  c63_threadpool_free(dec->pool);
  free(dec);
}

void c63_decoder_reset(c63_decoder *dec)
{
  if (!dec) return;
  dec->have_ref = 0;
}

const char *c63_decoder_error(const c63_decoder *dec)
{
  if (!dec) return "no decoder (NULL)";
  return dec->err;
}

/* Prediction and reconstruction of one stripe of block rows. Vectors are
 * relative to each block, so the stripe's prediction comes from the
 * reference offset by the same rows (validated vectors stay in the plane). */
static void reconstruct_stripe(void *arg, int i)
{
  c63_decoder *dec = arg;
  int c, by0, by1;
  c63_stripe_rows(&dec->stripes, &dec->g, i, &c, &by0, &by1);
  const int w = dec->g.pad_w[c], rows_h = (by1 - by0) * 8;
  const size_t off = (size_t)by0 * 8 * w, blk = (size_t)by0 * dec->g.blocks_w[c];
  const uint8_t *pred = NULL;
  if (!dec->hdr->keyframe) {
    /* blocks with use_mv = 0 get a zero prediction */
    c63_dsp_c.motion_compensate(dec->recon[dec->ref][c] + off, w, rows_h, dec->mvs[c] + blk,
                                dec->pred[c] + off);
    pred = dec->pred[c] + off;
  }
  c63_dsp_c.dequant_idct_recon(dec->coeffs[c] + blk * 64, pred, w, rows_h, dec->quant[c],
                               dec->recon[!dec->ref][c] + off);
}

int c63_decoder_decode(c63_decoder *dec, const uint8_t *data, size_t size, c63_decoded_picture *out)
{
  c63_frame_header hdr;
  int r;

  if (!dec) return C63_ERR_INVALID_ARG;
  dec->err[0] = '\0';
  if (!data) {
    snprintf(dec->err, sizeof(dec->err), "no data");
    return C63_ERR_INVALID_ARG;
  }
  if ((r = c63_parse_frame_header(data, size, &hdr, dec->err, sizeof(dec->err)))) goto fail;

  if (hdr.data_size < min_data_bytes(hdr.width, hdr.height)) {
    snprintf(dec->err, sizeof(dec->err),
             "%zu bytes of frame data cannot hold a %dx%d picture (at least %zu needed)",
             hdr.data_size, hdr.width, hdr.height, min_data_bytes(hdr.width, hdr.height));
    r = C63_ERR_TRUNCATED;
    goto fail;
  }
  if (hdr.has_quant) memcpy(dec->quant, hdr.quant, sizeof(dec->quant));
  int resized = !dec->allocated || hdr.width != dec->g.width || hdr.height != dec->g.height;
  if (!hdr.keyframe && (resized || !dec->have_ref)) {
    snprintf(dec->err, sizeof(dec->err),
             resized ? "delta frame changes the picture size without a keyframe"
                     : "delta frame without a preceding keyframe");
    r = C63_ERR_NO_REFERENCE;
    goto fail;
  }
  if (resized && (r = alloc_buffers(dec, hdr.width, hdr.height))) goto fail;

  r = c63_entropy_decode(data + hdr.data_offset, hdr.data_size, &dec->g, hdr.keyframe, dec->coeffs,
                         dec->mvs, dec->err, sizeof(dec->err));
  if (r) goto fail;

  int next = !dec->ref;
  dec->hdr = &hdr;
  c63_threadpool_run(dec->pool, reconstruct_stripe, dec, c63_stripes_total(&dec->stripes));
  dec->hdr = NULL;
  dec->ref = next;
  dec->have_ref = 1;

  if (out) {
    for (int c = 0; c < 3; c++) {
      out->data[c] = dec->recon[next][c];
      out->stride[c] = dec->g.pad_w[c];
    }
    out->width = hdr.width;
    out->height = hdr.height;
    out->keyframe = hdr.keyframe;
  }
  return C63_OK;

fail:
  /* Resume at the next keyframe: the reference is no longer trustworthy. */
  dec->have_ref = 0;
  return r;
}
