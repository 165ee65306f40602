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

struct c63_decoder {
  c63_geometry g;
  int allocated; /* buffers match g */
  int have_ref;
  int ref; /* index of the reference in recon[] */
  uint8_t *recon[2][3], *pred[3];
  int16_t *coeffs[3];
  c63_mv *mvs[3];
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
  dec->have_ref = 0;
}

static int alloc_buffers(c63_decoder *dec, int width, int height)
{
  free_buffers(dec);
  c63_geometry_init(&dec->g, width, height);
  for (int c = 0; c < 3; c++) {
    size_t px = (size_t)dec->g.pad_w[c] * dec->g.pad_h[c];
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
  dec->allocated = 1;
  return C63_OK;
}

int c63_decoder_new(c63_decoder **out)
{
  *out = calloc(1, sizeof(**out));
  return *out ? C63_OK : C63_ERR_NOMEM;
}

void c63_decoder_free(c63_decoder *dec)
{
  if (!dec) return;
  free_buffers(dec);
  free(dec);
}

void c63_decoder_reset(c63_decoder *dec)
{
  dec->have_ref = 0;
}

const char *c63_decoder_error(const c63_decoder *dec)
{
  return dec->err;
}

int c63_decoder_decode(c63_decoder *dec, const uint8_t *data, size_t size, c63_decoded_picture *out)
{
  c63_frame_header hdr;
  int r;

  dec->err[0] = '\0';
  if (!data) {
    snprintf(dec->err, sizeof(dec->err), "no data");
    return C63_ERR_INVALID_ARG;
  }
  if ((r = c63_parse_frame_header(data, size, &hdr, dec->err, sizeof(dec->err)))) goto fail;

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
  for (int c = 0; c < 3; c++) {
    int w = dec->g.pad_w[c], h = dec->g.pad_h[c];
    const uint8_t *pred = NULL;
    if (!hdr.keyframe) {
      /* blocks with use_mv = 0 get a zero prediction */
      c63_dsp_c.motion_compensate(dec->recon[dec->ref][c], w, h, dec->mvs[c], dec->pred[c]);
      pred = dec->pred[c];
    }
    c63_dsp_c.dequant_idct_recon(dec->coeffs[c], pred, w, h, hdr.quant[c], dec->recon[next][c]);
  }
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
