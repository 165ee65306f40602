/* The decoder's send/receive API: the same pictures and statuses, in the
 * same order, as c63_decoder_decode frame by frame, for any thread count
 * (frames are entropy-decoded several at a time), with the user values
 * passed through, corrupt frames reported in their place, resets applied
 * from the next frame sent, AGAIN when full, EOF after draining, and
 * frames in flight dropped by a flush.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdlib.h>
#include <string.h>

#include "tutil.h"

#define W 64
#define H 48
/* more than the CUDA backend holds in flight (its batches of the GPU
 * entropy decoding), so that send asks to receive first there too */
#define FRAMES 160

/* The backend under test: the CPU, then the GPU when one is usable (the
 * reference of frame-by-frame decoding stays the CPU's). */
static c63_backend_kind backend = C63_BACKEND_CPU;

typedef struct result {
  int status;
  int64_t user;
  tu_buf pic;
} result;

/* Frame boundaries of a stream. */
static int split(const tu_buf *s, size_t *off, size_t *size)
{
  size_t pos = 0;
  int n = 0;
  while (pos < s->size && n < FRAMES) {
    c63_frame_header hdr;
    if (c63_parse_frame_header(s->data + pos, s->size - pos, &hdr, NULL, 0) != C63_OK) break;
    off[n] = pos;
    size[n++] = hdr.frame_size;
    pos += hdr.frame_size;
  }
  return n;
}

/* Frame by frame with c63_decoder_decode; reset before frame reset_at. */
static void sequential(const tu_buf *s, const size_t *off, const size_t *size, int n, int reset_at,
                       result *out)
{
  c63_decoder *dec;
  c63_decoder_new(NULL, &dec, NULL, 0);
  for (int i = 0; i < n; i++) {
    c63_decoded_picture pic;
    if (i == reset_at) c63_decoder_reset(dec);
    out[i].status = c63_decoder_decode(dec, s->data + off[i], size[i], &pic);
    out[i].user = i;
    out[i].pic.size = 0;
    if (out[i].status == C63_OK) tu_append_picture(&out[i].pic, &pic);
  }
  c63_decoder_free(dec);
}

/* The same picture, or none in both: a frame that did not decode has no
 * picture (NULL data), which memcmp must not see, even for no bytes. */
static int same_picture(const tu_buf *a, const tu_buf *b)
{
  return a->size == b->size && (a->size == 0 || memcmp(a->data, b->data, a->size) == 0);
}

static int receive_all(c63_decoder *dec, result *got, int *n)
{
  for (;;) {
    c63_decoded_picture pic;
    int r = c63_decoder_receive_picture(dec, &pic);
    if (r == C63_ERR_AGAIN || r == C63_ERR_EOF) return r;
    TU_CHECK(*n < FRAMES, "more pictures than frames");
    if (*n >= FRAMES) return r;
    got[*n].status = r;
    got[*n].user = pic.user;
    got[*n].pic.size = 0;
    if (r == C63_OK) tu_append_picture(&got[*n].pic, &pic);
    (*n)++;
  }
}

static void send_receive(const tu_buf *s, const size_t *off, const size_t *size, int n, int threads,
                         int reset_at, const result *want, const char *what)
{
  c63_dec_params p;
  c63_decoder *dec;
  result got[FRAMES];
  int received = 0, again = 0;
  memset(got, 0, sizeof got);
  c63_dec_params_init(&p);
  p.threads = threads;
  p.backend = backend;
  TU_CHECK(c63_decoder_new(&p, &dec, NULL, 0) == C63_OK, "%s: decoder", what);
  /* on the CPU backend a frame per thread being entropy-decoded; the CUDA
   * backend holds its batches (c63_cuda_decoder_policy) */
  const int delay = c63_decoder_delay(dec);
  TU_CHECK(backend == C63_BACKEND_CPU ? delay == threads : delay >= 1 && delay < FRAMES - 1,
           "%s: delay %d", what, delay);
  for (int i = 0; i < n; i++) {
    if (i == reset_at) c63_decoder_reset(dec);
    int r;
    /* every other frame's bytes borrowed (s lives through the decoding),
     * the corrupt one among them */
    int (*send)(c63_decoder *, const uint8_t *, size_t, int64_t) =
        i % 2 == 0 ? c63_decoder_send_packet_borrowed : c63_decoder_send_packet;
    while ((r = send(dec, s->data + off[i], size[i], i)) == C63_ERR_AGAIN) {
      again++;
      receive_all(dec, got, &received);
    }
    TU_CHECK(r == C63_OK, "%s: send %d: %d", what, i, r);
  }
  TU_CHECK(c63_decoder_send_packet(dec, NULL, 0, 0) == C63_OK, "%s: drain", what);
  TU_CHECK(receive_all(dec, got, &received) == C63_ERR_EOF, "%s: no EOF after draining", what);
  TU_CHECK(received == n, "%s: %d pictures for %d frames", what, received, n);
  TU_CHECK(again > 0, "%s: send never asked to receive first", what);
  for (int i = 0; i < received && i < n; i++) {
    TU_CHECK(got[i].user == i, "%s: picture %d carries user %lld", what, i, (long long)got[i].user);
    TU_CHECK(got[i].status == want[i].status, "%s: frame %d: status %d, frame by frame %d", what, i,
             got[i].status, want[i].status);
    TU_CHECK(same_picture(&got[i].pic, &want[i].pic), "%s: frame %d: picture differs", what, i);
  }
  /* drained: the decoder takes frames again */
  TU_CHECK(c63_decoder_send_packet(dec, s->data + off[0], size[0], 99) == C63_OK,
           "%s: send after EOF", what);
  c63_decoder_free(dec);
  for (int i = 0; i < FRAMES; i++)
    tu_buf_free(&got[i].pic);
  printf("  %-46s %d frames, %d AGAIN\n", what, received, again);
}

/* Flush drops the frames in flight and the reference: a delta frame sent
 * next fails, a keyframe decodes as frame by frame. */
static void flush(const tu_buf *s, const size_t *off, const size_t *size, int threads,
                  const result *want)
{
  c63_dec_params p;
  c63_decoder *dec;
  c63_decoded_picture pic;
  result got[FRAMES];
  int received = 0;
  memset(got, 0, sizeof got);
  c63_dec_params_init(&p);
  p.threads = threads;
  p.backend = backend;
  TU_CHECK(c63_decoder_new(&p, &dec, NULL, 0) == C63_OK, "flush: decoder");
  /* frames 0..delay: the first is received, the others are in flight */
  for (int i = 0; i <= c63_decoder_delay(dec); i++)
    TU_CHECK(c63_decoder_send_packet(dec, s->data + off[i], size[i], i) == C63_OK, "flush: send");
  TU_CHECK(c63_decoder_receive_picture(dec, &pic) == C63_OK && pic.user == 0, "flush: frame 0");
  c63_decoder_flush(dec);
  TU_CHECK(c63_decoder_receive_picture(dec, &pic) == C63_ERR_AGAIN, "flush: frames left");
  static const int after[] = {3, 7, 8, 9, 10, 11, 12, 13}; /* 7 is a keyframe */
  for (int k = 0; k < 8; k++) {
    const int i = after[k];
    while (c63_decoder_send_packet(dec, s->data + off[i], size[i], i) == C63_ERR_AGAIN)
      receive_all(dec, got, &received);
  }
  c63_decoder_send_packet(dec, NULL, 0, 0);
  TU_CHECK(receive_all(dec, got, &received) == C63_ERR_EOF, "flush: no EOF");
  TU_CHECK(received == 8, "flush: %d pictures for 8 frames", received);
  TU_CHECK(got[0].user == 3 && got[0].status == C63_ERR_NO_REFERENCE,
           "flush: delta frame after a flush gave %d", got[0].status);
  for (int k = 1; k < received && k < 8; k++) {
    const result *w = &want[6 + k];
    TU_CHECK(got[k].user == 6 + k && got[k].status == w->status &&
                 same_picture(&got[k].pic, &w->pic),
             "flush: frame %d differs from frame by frame", 6 + k);
  }
  c63_decoder_flush(dec); /* nothing in flight: harmless */
  c63_decoder_free(dec);
  for (int i = 0; i < FRAMES; i++)
    tu_buf_free(&got[i].pic);
  printf("  flush with %d threads                          ok\n", threads);
}

int main(void)
{
  c63_enc_params p;
  tu_buf s = {0};
  char msg[256];
  size_t off[FRAMES], size[FRAMES];
  uint8_t *yuv = malloc(tu_i420_size(W, H) * FRAMES);
  for (int t = 0; t < FRAMES; t++)
    for (size_t i = 0; i < tu_i420_size(W, H); i++)
      yuv[t * tu_i420_size(W, H) + i] = (uint8_t)(i * 7 + (i / W) * (size_t)(t + 3));
  c63_enc_params_init(&p);
  p.width = W;
  p.height = H;
  p.keyframe_interval = 7;
  TU_CHECK(tu_encode(&p, yuv, FRAMES, &s, msg, sizeof msg) == C63_OK, "encode: %s", msg);
  int n = split(&s, off, size);
  TU_CHECK(n == FRAMES, "%d frames", n);
  /* frame 10 (a delta frame) corrupt: frames 10..13 fail, 14 is a keyframe */
  s.data[off[10] + size[10] / 2] ^= 0x5a;
  s.data[off[10] + size[10] / 2 + 1] ^= 0xa5;

  result want[FRAMES], want_reset[FRAMES];
  memset(want, 0, sizeof want);
  memset(want_reset, 0, sizeof want_reset);
  sequential(&s, off, size, n, -1, want);
  sequential(&s, off, size, n, 20, want_reset);
  int bad = 0;
  for (int i = 0; i < n; i++)
    bad += want[i].status != C63_OK;
  TU_CHECK(bad > 0, "the corrupted frame decoded: the test needs a failure");
  TU_CHECK(want_reset[20].status == C63_ERR_NO_REFERENCE, "reset before a delta frame");
  static const int threads[] = {1, 2, 5, 16};
  for (int b = 0; b < 2; b++) {
    backend = b ? C63_BACKEND_CUDA : C63_BACKEND_CPU;
    if (backend == C63_BACKEND_CUDA && !c63_backend_available(backend, 0, NULL, 0)) {
      printf("no usable CUDA device: the GPU backend is not tested here\n");
      break;
    }
    printf("send/receive on the %s backend against frame by frame on the CPU (%d failures "
           "among %d frames):\n",
           b ? "cuda" : "cpu", bad, n);
    for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
      char what[64];
      snprintf(what, sizeof what, "%d threads", threads[t]);
      send_receive(&s, off, size, n, threads[t], -1, want, what);
      snprintf(what, sizeof what, "%d threads, reset before frame 20", threads[t]);
      send_receive(&s, off, size, n, threads[t], 20, want_reset, what);
    }
    flush(&s, off, size, 2, want);
    flush(&s, off, size, 5, want);
  }
  c63_decoder_flush(NULL);
  {
    /* c63_decoder_copy_picture into padded planes; device output needs
     * the CUDA backend */
    c63_decoder *dec;
    c63_decoded_picture pic;
    uint8_t y[(W + 3) * H], u[(W / 2 + 3) * (H / 2)], v[(W / 2 + 3) * (H / 2)];
    uint8_t *dst[3] = {y, u, v};
    const int stride[3] = {W + 3, W / 2 + 3, W / 2 + 3};
    c63_decoder_new(NULL, &dec, NULL, 0);
    TU_CHECK(c63_decoder_set_output(dec, C63_MEMORY_CUDA) == C63_ERR_UNSUPPORTED,
             "device output on the CPU backend");
    TU_CHECK(c63_decoder_decode(dec, s.data + off[0], size[0], &pic) == C63_OK, "frame 0");
    TU_CHECK(pic.memory == C63_MEMORY_HOST, "memory %d", (int)pic.memory);
    TU_CHECK(c63_decoder_copy_picture(dec, &pic, dst, stride, C63_MEMORY_HOST) == C63_OK,
             "copy: %s", c63_decoder_error(dec));
    int same = 1;
    for (int r = 0; r < H; r++)
      same &= memcmp(y + r * stride[0], want[0].pic.data + r * W, W) == 0;
    for (int r = 0; r < H / 2; r++) {
      same &= memcmp(u + r * stride[1], want[0].pic.data + W * H + r * (W / 2), W / 2) == 0;
      same &= memcmp(v + r * stride[2], want[0].pic.data + W * H * 5 / 4 + r * (W / 2), W / 2) == 0;
    }
    TU_CHECK(same, "copied picture differs");
    const int narrow[3] = {W - 1, W / 2, W / 2};
    TU_CHECK(c63_decoder_copy_picture(dec, &pic, dst, narrow, C63_MEMORY_HOST) ==
                 C63_ERR_INVALID_ARG,
             "stride under the width");
    TU_CHECK(c63_decoder_copy_picture(dec, &pic, dst, stride, C63_MEMORY_CUDA) ==
                 C63_ERR_UNSUPPORTED,
             "device destination on the CPU backend");
    TU_CHECK(c63_decoder_copy_picture(NULL, &pic, dst, stride, C63_MEMORY_HOST) ==
                 C63_ERR_INVALID_ARG,
             "NULL");
    TU_CHECK(c63_decoder_set_output(NULL, C63_MEMORY_HOST) == C63_ERR_INVALID_ARG, "NULL");
    /* the copy waited for elsewhere: host to host is done on return */
    uint64_t ticket = 99;
    memset(y, 0, sizeof y);
    TU_CHECK(c63_decoder_copy_picture_async(dec, &pic, dst, stride, C63_MEMORY_HOST, &ticket) ==
                     C63_OK &&
                 ticket == 0,
             "async copy: ticket %llu, %s", (unsigned long long)ticket, c63_decoder_error(dec));
    TU_CHECK(c63_decoder_copy_wait(dec, ticket) == C63_OK, "wait");
    TU_CHECK(memcmp(y + (H - 1) * stride[0], want[0].pic.data + (H - 1) * W, W) == 0,
             "async copy differs");
    TU_CHECK(c63_decoder_copy_picture_async(dec, &pic, dst, stride, C63_MEMORY_HOST, NULL) ==
                 C63_ERR_INVALID_ARG,
             "async copy without a ticket");
    TU_CHECK(c63_decoder_copy_picture_async(dec, &pic, dst, narrow, C63_MEMORY_HOST, &ticket) ==
                     C63_ERR_INVALID_ARG &&
                 ticket == 0,
             "async copy, stride under the width");
    TU_CHECK(c63_decoder_copy_picture_async(dec, &pic, dst, stride, C63_MEMORY_CUDA, &ticket) ==
                 C63_ERR_UNSUPPORTED,
             "async copy to the device on the CPU backend");
    TU_CHECK(c63_decoder_copy_wait(NULL, 1) == C63_ERR_INVALID_ARG, "wait NULL");
    c63_decoder_free(dec);
    printf("  copy_picture into padded planes                ok\n");
  }
  for (int i = 0; i < FRAMES; i++) {
    tu_buf_free(&want[i].pic);
    tu_buf_free(&want_reset[i].pic);
  }
  free(yuv);
  tu_buf_free(&s);
  return tu_finish("test_decode_api");
}
