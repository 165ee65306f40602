/* libFuzzer target: the encoder API with random parameters and pictures.
 * The first bytes choose the size, quality, keyframe interval, search
 * range, threads, layout (I420 or NV12, row padding), mode (exact or rd)
 * and settings changed mid-stream; the rest are the pixels (repeated as
 * needed). Every
 * parameter set the library accepts must encode, and its stream must
 * decode frame for frame. A crash, a leak, undefined behaviour, a packet
 * that does not decode or a missing packet is a finding.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "c63/c63.h"

#define FRAMES 4

typedef struct reader {
  const uint8_t *d;
  size_t n, pos;
} reader;

static unsigned take(reader *r)
{
  return r->pos < r->n ? r->d[r->pos++] : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  reader r = {data, size, 0};
  c63_enc_params p;
  c63_encoder *enc;
  c63_decoder *dec;

  c63_enc_params_init(&p);
  p.width = 8 + (int)(take(&r) % 57); /* 8..64: odd sizes included */
  p.height = 8 + (int)(take(&r) % 57);
  p.quality = (int)(take(&r) % 52);              /* 0 and 51 are refused */
  p.keyframe_interval = (int)(take(&r) % 5) - 1; /* -1 is refused */
  p.search_range = (int)(take(&r) % 67);         /* 0, 65, 66 are refused */
  p.threads = (int)(take(&r) % 4);
  const unsigned flags = take(&r);
  const int nv12 = flags & 1, pad = (int)(flags >> 1 & 7), change = flags >> 4 & 3;
  p.mode = flags & 0x80 ? C63_MODE_RD : C63_MODE_EXACT;
  if (c63_encoder_new(&p, &enc, NULL, 0) != C63_OK) return 0; /* refused: fine */
  if (c63_decoder_new(NULL, &dec, NULL, 0) != C63_OK) abort();

  /* The pictures: the remaining bytes, cycled, in the chosen layout. */
  const int cw = c63_chroma_size(p.width), ch = c63_chroma_size(p.height);
  const int ys = p.width + pad, cs = (nv12 ? 2 * cw : cw) + pad;
  const size_t bytes = (size_t)ys * p.height + (size_t)cs * ch * (nv12 ? 1 : 2);
  uint8_t *buf = malloc(bytes);
  if (!buf) abort();
  const size_t start = r.pos;
  int sent = 0, received = 0;
  for (int f = 0; f <= FRAMES; f++) {
    c63_picture pic, *pp = NULL;
    if (f < FRAMES) {
      for (size_t i = 0; i < bytes; i++)
        buf[i] = size > start ? data[start + (i * (f + 1) + f) % (size - start)] : (uint8_t)i;
      memset(&pic, 0, sizeof pic);
      pic.format = nv12 ? C63_FORMAT_NV12 : C63_FORMAT_I420;
      pic.data[0] = buf;
      pic.data[1] = buf + (size_t)ys * p.height;
      pic.data[2] = nv12 ? NULL : pic.data[1] + (size_t)cs * ch;
      pic.stride[0] = ys;
      pic.stride[1] = pic.stride[2] = cs;
      pic.force_keyframe = f == 2 && (flags & 0x40);
      pp = &pic;
      if (f == 2 && change == 1) c63_encoder_set_quality(enc, 1 + (int)(take(&r) % 50));
      if (f == 2 && change == 2) c63_encoder_set_search_range(enc, 1 + (int)(take(&r) % 64));
      if (f == 2 && change == 3) c63_encoder_set_keyframe_interval(enc, (int)(take(&r) % 3));
    }
    int s;
    while ((s = c63_encoder_send_picture(enc, pp)) == C63_ERR_AGAIN || pp == NULL) {
      c63_packet pkt;
      int e;
      while ((e = c63_encoder_receive_packet(enc, &pkt)) == C63_OK) {
        c63_decoded_picture out;
        if (pkt.frame_number != received) abort();
        if (c63_decoder_decode(dec, pkt.data, pkt.size, &out) != C63_OK) abort();
        if (out.width != p.width || out.height != p.height) abort();
        received++;
      }
      if (e != C63_ERR_AGAIN && e != C63_ERR_EOF) abort();
      if (pp == NULL) break;
    }
    if (pp && s != C63_OK) abort();
    if (pp) sent++;
  }
  if (received != sent) abort();
  free(buf);
  c63_decoder_free(dec);
  c63_encoder_free(enc);
  return 0;
}
