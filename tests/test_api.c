/* NULL arguments at the public API: every function of c63.h is called with
 * each pointer argument NULL in turn. A required pointer must give
 * C63_ERR_INVALID_ARG (not a crash), an optional one must work as
 * documented, and the functions without a status must not crash
 * (c63_*_free, c63_decoder_reset, c63_decoder_flush, c63_*_params_init)
 * or must return a static string (c63_*_error, c63_*_backend_name,
 * c63_version_string).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdlib.h>
#include <string.h>

#include "c63/c63.h"
#include "tutil.h"

#define W 64
#define H 48

static uint8_t planes[3][W * H];

static c63_enc_params params(void)
{
  c63_enc_params p;
  c63_enc_params_init(&p);
  p.width = W;
  p.height = H;
  p.threads = 1;
  return p;
}

static c63_picture picture(void)
{
  c63_picture pic;
  memset(&pic, 0, sizeof pic);
  for (int c = 0; c < 3; c++) {
    pic.data[c] = planes[c];
    pic.stride[c] = c ? c63_chroma_size(W) : W;
  }
  return pic;
}

static void test_status_and_params(void)
{
  c63_enc_params p = params(), bad = params();
  char msg[256];

  TU_CHECK_TRUE(c63_status_string(C63_ERR_INVALID_ARG) != NULL);
  TU_CHECK_TRUE(c63_status_string(12345) != NULL);

  c63_enc_params_init(NULL); /* no-ops, not crashes */
  c63_dec_params_init(NULL);
  TU_CHECK_TRUE(c63_version_string() != NULL);
  TU_CHECK_TRUE(c63_version() > 0 || strcmp(c63_version_string(), "0.0.0") == 0);

  msg[0] = '\0';
  TU_CHECK_EQ(c63_enc_params_validate(NULL, msg, sizeof msg), C63_ERR_INVALID_ARG);
  TU_CHECK_TRUE(msg[0] != '\0');
  TU_CHECK_EQ(c63_enc_params_validate(NULL, NULL, 0), C63_ERR_INVALID_ARG);
  /* msg is optional */
  TU_CHECK_EQ(c63_enc_params_validate(&p, NULL, 0), C63_OK);
  bad.quality = 0;
  TU_CHECK_EQ(c63_enc_params_validate(&bad, NULL, 0), C63_ERR_INVALID_ARG);
  TU_CHECK_EQ(c63_enc_params_validate(&bad, NULL, sizeof msg), C63_ERR_INVALID_ARG);

  /* msg optional, but the answer must be the same */
  TU_CHECK_EQ(c63_backend_available(C63_BACKEND_CPU, 0, NULL, 0), 1);
  TU_CHECK_EQ(c63_backend_available(C63_BACKEND_CPU, 0, NULL, sizeof msg), 1);
  TU_CHECK_EQ(c63_backend_available(C63_BACKEND_CUDA, 0, NULL, sizeof msg),
              c63_backend_available(C63_BACKEND_CUDA, 0, msg, sizeof msg));
  TU_CHECK_EQ(c63_backend_available((c63_backend_kind)99, 0, NULL, sizeof msg), 0);
}

/* Picture memory: c63_picture_memory_alloc's blocks, and registering the
 * caller's memory, which needs the CUDA backend and a device: without them
 * a status and a message (never a crash), and nothing to unregister. */
static void test_picture_memory(void)
{
  char msg[256] = "";
  uint8_t *p = c63_picture_memory_alloc(4096);
  TU_CHECK_TRUE(p != NULL && (uintptr_t)p % 64 == 0);
  if (p) memset(p, 1, 4096);
  c63_picture_memory_free(p);
  c63_picture_memory_free(NULL);

  static uint8_t block[1 << 16];
  const int gpu = c63_backend_available(C63_BACKEND_CUDA, 0, NULL, 0);
  const int r = c63_picture_memory_register(block, sizeof block, msg, sizeof msg);
  if (gpu) {
    TU_CHECK(r == C63_OK, "registering with a CUDA device: %s", msg);
    TU_CHECK_EQ(c63_picture_memory_unregister(block), C63_OK);
  } else {
    TU_CHECK(r == C63_ERR_UNSUPPORTED || r == C63_ERR_NO_DEVICE, "registering without a device: %s",
             c63_status_string(r));
    TU_CHECK_TRUE(msg[0] != '\0');
    TU_CHECK_EQ(c63_picture_memory_register(block, sizeof block, NULL, 0), r);
  }
  /* nothing registered is left to unregister */
  const int u = c63_picture_memory_unregister(block);
  TU_CHECK(u == C63_ERR_INVALID_ARG || u == C63_ERR_UNSUPPORTED, "unregistering twice: %s",
           c63_status_string(u));
}

static void test_encoder(void)
{
  c63_enc_params p = params();
  c63_picture pic = picture();
  c63_encoder *enc = (c63_encoder *)&enc; /* must be set to NULL on failure */
  c63_packet pkt;
  char msg[256];

  msg[0] = '\0';
  TU_CHECK_EQ(c63_encoder_new(NULL, &enc, msg, sizeof msg), C63_ERR_INVALID_ARG);
  TU_CHECK_TRUE(enc == NULL);
  TU_CHECK_TRUE(msg[0] != '\0');
  msg[0] = '\0';
  TU_CHECK_EQ(c63_encoder_new(&p, NULL, msg, sizeof msg), C63_ERR_INVALID_ARG);
  TU_CHECK_TRUE(msg[0] != '\0');
  TU_CHECK_EQ(c63_encoder_new(NULL, NULL, NULL, 0), C63_ERR_INVALID_ARG);
  /* a bad size with no msg buffer, of either size */
  p.width = 1;
  TU_CHECK_EQ(c63_encoder_new(&p, &enc, NULL, sizeof msg), C63_ERR_INVALID_ARG);
  p = params();
  /* msg is optional */
  TU_CHECK_EQ(c63_encoder_new(&p, &enc, NULL, 0), C63_OK);
  TU_CHECK_TRUE(enc != NULL);
  if (enc == NULL) return;

  c63_encoder_free(NULL); /* a no-op */

  TU_CHECK_EQ(c63_encoder_set_quality(NULL, 25), C63_ERR_INVALID_ARG);
  TU_CHECK_EQ(c63_encoder_set_keyframe_interval(NULL, 10), C63_ERR_INVALID_ARG);
  TU_CHECK_EQ(c63_encoder_set_search_range(NULL, 8), C63_ERR_INVALID_ARG);
  TU_CHECK_EQ(c63_encoder_send_picture(NULL, &pic), C63_ERR_INVALID_ARG);
  TU_CHECK_EQ(c63_encoder_send_picture(NULL, NULL), C63_ERR_INVALID_ARG);
  TU_CHECK_EQ(c63_encoder_send_picture_borrowed(NULL, &pic), C63_ERR_INVALID_ARG);
  TU_CHECK_EQ(c63_encoder_send_picture_borrowed(NULL, NULL), C63_ERR_INVALID_ARG);
  TU_CHECK_EQ(c63_encoder_receive_packet(NULL, &pkt), C63_ERR_INVALID_ARG);
  TU_CHECK_EQ(c63_encoder_receive_packet(NULL, NULL), C63_ERR_INVALID_ARG);
  TU_CHECK_EQ(c63_encoder_delay(NULL), C63_ERR_INVALID_ARG);
  TU_CHECK_EQ(c63_encoder_last_quality(NULL), C63_ERR_INVALID_ARG);
  int reach;
  TU_CHECK_EQ(c63_encoder_target_reach(NULL, &reach, NULL), C63_ERR_INVALID_ARG);
  TU_CHECK_EQ(c63_encoder_target_reach(NULL, NULL, NULL), C63_ERR_INVALID_ARG);
  TU_CHECK_TRUE(c63_encoder_error(NULL) != NULL);
  TU_CHECK_TRUE(c63_encoder_backend_name(NULL) != NULL);

  /* A NULL packet must not consume the packet that is ready: the next call
   * with a packet still gets frame 0. */
  TU_CHECK_EQ(c63_encoder_send_picture(enc, &pic), C63_OK);
  TU_CHECK_EQ(c63_encoder_receive_packet(enc, NULL), C63_ERR_INVALID_ARG);
  TU_CHECK_TRUE(c63_encoder_error(enc)[0] != '\0');
  TU_CHECK_EQ(c63_encoder_receive_packet(enc, &pkt), C63_OK);
  TU_CHECK_EQ(pkt.frame_number, 0);
  /* a borrowed picture is a picture like any other */
  TU_CHECK_EQ(c63_encoder_send_picture_borrowed(enc, &pic), C63_OK);
  TU_CHECK_EQ(c63_encoder_receive_packet(enc, &pkt), C63_OK);
  TU_CHECK_EQ(pkt.frame_number, 1);
  /* NULL picture: drain, as documented (borrowed too) */
  TU_CHECK_EQ(c63_encoder_send_picture_borrowed(enc, NULL), C63_OK);
  TU_CHECK_EQ(c63_encoder_receive_packet(enc, &pkt), C63_ERR_EOF);
  TU_CHECK_EQ(c63_encoder_target_reach(enc, NULL, NULL), C63_ERR_INVALID_ARG);
  TU_CHECK_EQ(c63_encoder_target_reach(enc, &reach, NULL), C63_OK);
  TU_CHECK_EQ(reach, 0); /* constant quality */
  c63_encoder_free(enc);
}

/* One keyframe of the W x H test picture; returns its size, 0 on failure. */
static size_t encode_frame(uint8_t *out, size_t cap)
{
  c63_enc_params p = params();
  c63_picture pic = picture();
  c63_encoder *enc = NULL;
  c63_packet pkt;
  size_t n = 0;

  if (c63_encoder_new(&p, &enc, NULL, 0) != C63_OK) return 0;
  if (c63_encoder_send_picture(enc, &pic) == C63_OK &&
      c63_encoder_receive_packet(enc, &pkt) == C63_OK && pkt.size <= cap) {
    memcpy(out, pkt.data, pkt.size);
    n = pkt.size;
  }
  c63_encoder_free(enc);
  return n;
}

static void test_frame_syntax(const uint8_t *frame, size_t size)
{
  c63_frame_header hdr;
  char msg[256];

  msg[0] = '\0';
  TU_CHECK_EQ(c63_parse_frame_header(NULL, size, &hdr, msg, sizeof msg), C63_ERR_INVALID_ARG);
  TU_CHECK_TRUE(msg[0] != '\0');
  msg[0] = '\0';
  TU_CHECK_EQ(c63_parse_frame_header(frame, size, NULL, msg, sizeof msg), C63_ERR_INVALID_ARG);
  TU_CHECK_TRUE(msg[0] != '\0');
  TU_CHECK_EQ(c63_parse_frame_header(NULL, 0, NULL, NULL, 0), C63_ERR_INVALID_ARG);
  TU_CHECK_EQ(c63_parse_frame_header(NULL, 0, NULL, NULL, sizeof msg), C63_ERR_INVALID_ARG);
  /* msg is optional */
  TU_CHECK_EQ(c63_parse_frame_header(frame, size, &hdr, NULL, 0), C63_OK);
  TU_CHECK_EQ(hdr.frame_size, size);
  TU_CHECK_EQ(c63_parse_frame_header(frame, size - 1, &hdr, NULL, sizeof msg), C63_ERR_TRUNCATED);

  /* No status here: NULL is "nothing to search", so a resync loop moves on. */
  TU_CHECK_EQ(c63_find_frame_start(NULL, 0), 0);
  TU_CHECK_EQ(c63_find_frame_start(NULL, 100), 100);
}

static void test_decoder(const uint8_t *frame, size_t size)
{
  c63_decoder *dec = NULL;
  c63_decoded_picture pic;

  TU_CHECK_EQ(c63_decoder_new(NULL, NULL, NULL, 0), C63_ERR_INVALID_ARG);
  c63_decoder_free(NULL); /* no-ops */
  c63_decoder_reset(NULL);
  c63_decoder_flush(NULL);
  TU_CHECK_TRUE(c63_decoder_error(NULL) != NULL);
  TU_CHECK_TRUE(c63_decoder_backend_name(NULL) != NULL);
  /* msg is optional, and so are the params (NULL: the defaults) */
  c63_dec_params bad;
  c63_dec_params_init(&bad);
  bad.threads = -1;
  TU_CHECK_EQ(c63_decoder_new(&bad, &dec, NULL, 0), C63_ERR_INVALID_ARG);
  TU_CHECK_EQ(c63_decoder_new(&bad, &dec, NULL, 16), C63_ERR_INVALID_ARG);
  TU_CHECK_TRUE(dec == NULL);
  TU_CHECK_EQ(c63_decoder_new(NULL, &dec, NULL, 0), C63_OK);
  if (dec == NULL) return;
  TU_CHECK_EQ(c63_decoder_send_packet(NULL, frame, size, 0), C63_ERR_INVALID_ARG);
  TU_CHECK_EQ(c63_decoder_receive_picture(NULL, &pic), C63_ERR_INVALID_ARG);
  TU_CHECK_EQ(c63_decoder_receive_picture(dec, NULL), C63_ERR_INVALID_ARG);
  TU_CHECK_EQ(c63_decoder_decode(NULL, frame, size, &pic), C63_ERR_INVALID_ARG);
  TU_CHECK_EQ(c63_decoder_decode(NULL, NULL, 0, NULL), C63_ERR_INVALID_ARG);
  TU_CHECK_EQ(c63_decoder_decode(dec, NULL, size, &pic), C63_ERR_INVALID_ARG);
  TU_CHECK_TRUE(c63_decoder_error(dec)[0] != '\0');
  /* out is optional: the frame still becomes the reference */
  TU_CHECK_EQ(c63_decoder_decode(dec, frame, size, NULL), C63_OK);
  TU_CHECK_EQ(c63_decoder_decode(dec, frame, size, &pic), C63_OK);
  TU_CHECK_EQ(pic.width, W);
  TU_CHECK_EQ(pic.height, H);
  /* decode is send, drain and receive: refused while frames sent are in
   * flight, and the decoder takes frames sent after it */
  TU_CHECK_EQ(c63_decoder_send_packet(dec, frame, size, 7), C63_OK);
  TU_CHECK_EQ(c63_decoder_decode(dec, frame, size, &pic), C63_ERR_AGAIN);
  TU_CHECK_EQ(c63_decoder_send_packet(dec, NULL, 0, 0), C63_OK);
  TU_CHECK_EQ(c63_decoder_receive_picture(dec, &pic), C63_OK);
  TU_CHECK_EQ(pic.user, 7);
  TU_CHECK_EQ(c63_decoder_receive_picture(dec, &pic), C63_ERR_EOF);
  TU_CHECK_EQ(c63_decoder_decode(dec, frame, size, &pic), C63_OK);
  TU_CHECK_EQ(c63_decoder_send_packet(dec, frame, size, 8), C63_OK);
  TU_CHECK_EQ(c63_decoder_send_packet(dec, NULL, 0, 0), C63_OK);
  TU_CHECK_EQ(c63_decoder_receive_picture(dec, &pic), C63_OK);
  TU_CHECK_EQ(pic.user, 8);
  c63_decoder_free(dec);
}

int main(void)
{
  static uint8_t frame[1 << 16];
  size_t size;

  for (int c = 0; c < 3; c++)
    for (int i = 0; i < W * H; i++)
      planes[c][i] = (uint8_t)(i * (c + 3) + c * 50);

  test_status_and_params();
  test_picture_memory();
  test_encoder();
  size = encode_frame(frame, sizeof frame);
  TU_CHECK_TRUE(size > 0);
  if (size > 0) {
    test_frame_syntax(frame, size);
    test_decoder(frame, size);
  }
  return tu_finish("test_api");
}
