/* libFuzzer target: the decoder fed whole packets. The input is a byte
 * stream; frames are found the way c63-dec finds them (frame start, header,
 * size) and decoded one by one with c63_decoder_decode, then the same
 * frames go through send/receive on two threads, which must give the same
 * statuses and pictures. Any status is fine; a crash, a leak, undefined
 * behaviour or a disagreement is a finding.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "c63/c63.h"

#define MAX_FRAMES 32

typedef struct result {
  int status;
  uint64_t sum; /* of the picture's visible bytes, FNV-1a */
} result;

static uint64_t picture_sum(const c63_decoded_picture *pic)
{
  uint64_t h = 1469598103934665603ull;
  for (int c = 0; c < 3; c++) {
    const int w = c ? c63_chroma_size(pic->width) : pic->width;
    const int ht = c ? c63_chroma_size(pic->height) : pic->height;
    for (int y = 0; y < ht; y++)
      for (int x = 0; x < w; x++)
        h = (h ^ pic->data[c][(size_t)y * pic->stride[c] + x]) * 1099511628211ull;
  }
  return h;
}

/* Frame boundaries: from each frame start, the frame's own size. */
static int split(const uint8_t *d, size_t n, size_t *off, size_t *len)
{
  size_t pos = 0;
  int k = 0;
  while (pos < n && k < MAX_FRAMES) {
    pos += c63_find_frame_start(d + pos, n - pos);
    if (pos >= n) break;
    c63_frame_header hdr;
    if (c63_parse_frame_header(d + pos, n - pos, &hdr, NULL, 0) == C63_OK) {
      off[k] = pos;
      len[k++] = hdr.frame_size;
      pos += hdr.frame_size;
    } else {
      /* a broken frame: hand it over as it is, up to the next start */
      if (n - pos < 2) break;
      size_t next = pos + 2 + c63_find_frame_start(d + pos + 2, n - pos - 2);
      off[k] = pos;
      len[k++] = next - pos;
      pos = next;
    }
  }
  return k;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  size_t off[MAX_FRAMES], len[MAX_FRAMES];
  result one[MAX_FRAMES];
  const int n = split(data, size, off, len);
  c63_decoder *dec;
  c63_dec_params p;

  if (c63_decoder_new(NULL, &dec, NULL, 0) != C63_OK) abort();
  for (int i = 0; i < n; i++) {
    c63_decoded_picture pic;
    one[i].status = c63_decoder_decode(dec, data + off[i], len[i], &pic);
    one[i].sum = one[i].status == C63_OK ? picture_sum(&pic) : 0;
  }
  c63_decoder_free(dec);

  c63_dec_params_init(&p);
  p.threads = 2;
  if (c63_decoder_new(&p, &dec, NULL, 0) != C63_OK) abort();
  int got = 0;
  for (int i = 0; i <= n; i++) {
    int r;
    while ((r = i < n ? c63_decoder_send_packet(dec, data + off[i], len[i], i)
                      : c63_decoder_send_packet(dec, NULL, 0, 0)) == C63_ERR_AGAIN ||
           i == n) {
      c63_decoded_picture pic;
      int s;
      while ((s = c63_decoder_receive_picture(dec, &pic)) != C63_ERR_AGAIN && s != C63_ERR_EOF) {
        if (got >= n || pic.user != got || s != one[got].status ||
            (s == C63_OK && picture_sum(&pic) != one[got].sum))
          abort(); /* send/receive disagrees with frame by frame */
        got++;
      }
      if (i == n) break;
    }
    if (i < n && r != C63_OK) abort(); /* the copy of a small frame cannot fail */
  }
  if (got != n) abort();
  c63_decoder_free(dec);
  return 0;
}
