/* Embedding libc63: encode a few generated pictures and decode them again.
 *
 *   cc encode_decode.c $(pkg-config --cflags --libs c63) -o encode_decode
 *
 * The encoder takes pictures with c63_encoder_send_picture and gives coded
 * frames with c63_encoder_receive_packet (it may hold a few pictures
 * before the first frame comes out; sending NULL drains it). Each coded
 * frame is a self-contained byte string: here it goes straight into a
 * decoder (c63_decoder_decode: one frame through send/receive), which could
 * as well be in another process. Parameters always start from their init
 * function, which also records the struct's size, so the program keeps
 * working with later libc63.so.1 releases. Prints the PSNR of each decoded
 * picture and exits with 0 when all are above 30 dB.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <c63/c63.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

enum { W = 64, H = 48, FRAMES = 10 };

static uint8_t planes[FRAMES][W * H * 3 / 2];
static int decoded, failed;

/* A diagonal gradient moving right by two pixels a frame. */
static void make_picture(int t, c63_picture *pic)
{
  uint8_t *y = planes[t], *u = y + W * H, *v = u + (W / 2) * (H / 2);
  for (int i = 0; i < H; i++)
    for (int j = 0; j < W; j++)
      y[i * W + j] = (uint8_t)(2 * (j - 2 * t) + 3 * i);
  for (int i = 0; i < H / 2; i++)
    for (int j = 0; j < W / 2; j++) {
      u[i * (W / 2) + j] = (uint8_t)(128 + i);
      v[i * (W / 2) + j] = (uint8_t)(128 - j);
    }
  *pic = (c63_picture){.data = {y, u, v}, .stride = {W, W / 2, W / 2}};
  pic->user = t; /* comes back in the packet */
}

static void decode(c63_decoder *dec, const c63_packet *pkt)
{
  c63_decoded_picture out;
  if (c63_decoder_decode(dec, pkt->data, pkt->size, &out) != C63_OK) {
    fprintf(stderr, "decode: %s\n", c63_decoder_error(dec));
    failed = 1;
    return;
  }
  const uint8_t *src = planes[pkt->user];
  double se = 0;
  for (int i = 0; i < H; i++)
    for (int j = 0; j < W; j++) {
      double d = (double)out.data[0][i * out.stride[0] + j] - src[i * W + j];
      se += d * d;
    }
  double psnr = se == 0 ? 99 : 10 * log10(255.0 * 255.0 * W * H / se);
  printf("frame %lld: %zu bytes%s, PSNR-Y %.2f dB\n", (long long)pkt->user, pkt->size,
         pkt->keyframe ? " (keyframe)" : "", psnr);
  if (psnr < 30) failed = 1;
  decoded++;
}

/* Take every packet the encoder has ready. */
static int drain_packets(c63_encoder *enc, c63_decoder *dec)
{
  c63_packet pkt;
  int r;
  while ((r = c63_encoder_receive_packet(enc, &pkt)) == C63_OK)
    decode(dec, &pkt);
  return r == C63_ERR_AGAIN || r == C63_ERR_EOF ? C63_OK : r;
}

int main(void)
{
  c63_enc_params p;
  c63_encoder *enc;
  c63_decoder *dec;
  char msg[256];

  printf("libc63 %s\n", c63_version_string()); /* the library it runs with */
  c63_enc_params_init(&p);                     /* the reference encoder's defaults, CPU backend */
  p.width = W;
  p.height = H;
  if (c63_encoder_new(&p, &enc, msg, sizeof msg) != C63_OK) {
    fprintf(stderr, "encoder: %s\n", msg);
    return 1;
  }
  if (c63_decoder_new(NULL, &dec, msg, sizeof msg) != C63_OK) { /* NULL: default params */
    fprintf(stderr, "decoder: %s\n", msg);
    return 1;
  }
  for (int t = 0; t < FRAMES; t++) {
    c63_picture pic;
    make_picture(t, &pic);
    int r;
    /* C63_ERR_AGAIN: packets must be taken before more pictures go in. */
    while ((r = c63_encoder_send_picture(enc, &pic)) == C63_ERR_AGAIN)
      if (drain_packets(enc, dec) != C63_OK) break;
    if (r != C63_OK || drain_packets(enc, dec) != C63_OK) {
      fprintf(stderr, "encode: %s\n", c63_encoder_error(enc));
      return 1;
    }
  }
  c63_encoder_send_picture(enc, NULL); /* drain */
  if (drain_packets(enc, dec) != C63_OK) failed = 1;
  c63_encoder_free(enc);
  c63_decoder_free(dec);
  printf("%d of %d frames decoded\n", decoded, FRAMES);
  return failed || decoded != FRAMES;
}
