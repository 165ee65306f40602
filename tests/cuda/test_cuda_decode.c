/* The CUDA decoding backend against the CPU one, picture for picture: the
 * conformance streams, synthetic streams at odd sizes with frequent and
 * rare keyframes, a stream that changes size at keyframes (buffers kept and
 * reused), and a stream whose frames hold vectors in keyframes; each
 * entropy-decoded on the GPU (in batches, with frames in flight through
 * send/receive: the policy's batches, and batches of 3 frames, 4 in flight,
 * so that short streams go through many batches, in flight at once, at a
 * size change too), and by the decoder's CPU threads
 * (C63_CUDA_CPU_ENTROPY=1); a stream whose last, partial batch is much
 * larger than the frames still unread from the batch before it in its
 * place; and a stream longer than the policy's batches in flight hold,
 * also in one batch at a time (not with C63_TEST_QUICK).
 * Corrupt frames: test_cuda_decode_errors.c. Without a CUDA device it
 * prints SKIP and exits 77.
 *
 * Speed: c63-dec --backend cuda (docs/performance.md); never asserted here.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <cuda_runtime.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c63/c63.h"
#include "cuda/c63_cuda.h"
#include "synth.h"
#include "tutil.h"

/* Small batches: a few frames make several, all in flight at once. */
static const tu_cuda_decoding small_batches = {0, 3, 4};

/* Decode every frame of a stream with one backend, set up as setup says
 * (NULL: the defaults); append the pictures. */
static int decode_with(c63_backend_kind kind, int send_receive, const tu_cuda_decoding *setup,
                       const uint8_t *s, size_t len, tu_buf *pics, const char *what)
{
  c63_dec_params p;
  c63_decoder *dec;
  char msg[256];
  c63_dec_params_init(&p);
  p.backend = kind;
  int r = tu_decoder_new(&p, setup, &dec, msg, sizeof msg);
  TU_CHECK(r == C63_OK, "%s: decoder: %s", what, msg);
  if (r) return -1;
  TU_CHECK(!strcmp(c63_decoder_backend_name(dec), kind == C63_BACKEND_CUDA ? "cuda" : "cpu"),
           "%s: backend %s", what, c63_decoder_backend_name(dec));
  int n = send_receive ? tu_decode_frames_sr(dec, s, len, pics, what)
                       : tu_decode_frames(dec, s, len, pics, what);
  c63_decoder_free(dec);
  return n;
}

/* Pictures left in device memory (c63_decoder_set_output), copied out
 * with c63_decoder_copy_picture into padded host planes. */
static int decode_device_out(const uint8_t *s, size_t len, tu_buf *pics, const char *what)
{
  c63_dec_params p;
  c63_decoder *dec;
  c63_dec_params_init(&p);
  p.backend = C63_BACKEND_CUDA;
  if (c63_decoder_new(&p, &dec, NULL, 0) != C63_OK) return -1;
  TU_CHECK(c63_decoder_set_output(dec, C63_MEMORY_CUDA) == C63_OK, "%s: device output", what);
  size_t pos = 0;
  int n = 0;
  while (pos < len) {
    c63_frame_header hdr;
    c63_decoded_picture pic;
    if (c63_parse_frame_header(s + pos, len - pos, &hdr, NULL, 0) != C63_OK) break;
    int r = c63_decoder_decode(dec, s + pos, hdr.frame_size, &pic);
    TU_CHECK(r == C63_OK && pic.memory == C63_MEMORY_CUDA, "%s: frame %d: %d (memory %d)", what, n,
             r, (int)pic.memory);
    if (r) break;
    const int cw = (pic.width + 1) / 2, ch = (pic.height + 1) / 2, pad = 13;
    uint8_t *buf = malloc((size_t)(pic.width + pad) * pic.height + 2 * (size_t)(cw + pad) * ch);
    uint8_t *dst[3] = {buf, buf + (size_t)(pic.width + pad) * pic.height, NULL};
    dst[2] = dst[1] + (size_t)(cw + pad) * ch;
    const int stride[3] = {pic.width + pad, cw + pad, cw + pad};
    r = c63_decoder_copy_picture(dec, &pic, dst, stride, C63_MEMORY_HOST);
    TU_CHECK(r == C63_OK, "%s: copy of frame %d: %s", what, n, c63_decoder_error(dec));
    for (int c = 0; c < 3; c++)
      for (int y = 0; y < (c ? ch : pic.height); y++)
        tu_buf_append(pics, dst[c] + (size_t)y * stride[c], (size_t)(c ? cw : pic.width));
    free(buf);
    pos += hdr.frame_size;
    n++;
  }
  c63_decoder_free(dec);
  return n;
}

/* Copies waited for on another thread, as c63dec does: pictures left on
 * the device, copied with c63_decoder_copy_picture_async into padded
 * buffers (page-locked, ordinary and device memory in turn), a waiting
 * thread appending
 * each once its copy is done, kAsyncCopies behind, while the decoder goes
 * on decoding into the places those pictures came from. */
enum { kAsyncCopies = 8 };

typedef struct async_copies {
  c63_decoder *dec;
  pthread_mutex_t lock;
  pthread_cond_t cond;
  uint64_t ticket[kAsyncCopies];
  uint8_t *buf[kAsyncCopies];
  uint8_t *host;                        /* a device buffer's copy, read back */
  size_t bytes;                         /* of each buffer */
  int w[kAsyncCopies], h[kAsyncCopies]; /* of each copy's picture */
  int pad, head, count, done;           /* done: no more copies come */
  tu_buf *pics;
  int failed;
} async_copies;

/* Buffer k's memory: page-locked, ordinary, device. */
static int async_on_device(int k)
{
  return k % 3 == 2;
}

static void *wait_copies(void *arg)
{
  async_copies *a = arg;
  pthread_mutex_lock(&a->lock);
  for (;;) {
    while (a->count == 0 && !a->done)
      pthread_cond_wait(&a->cond, &a->lock);
    if (a->count == 0) break;
    const int k = a->head;
    pthread_mutex_unlock(&a->lock);
    if (c63_decoder_copy_wait(a->dec, a->ticket[k]) != C63_OK) a->failed = 1;
    const int w = a->w[k], h = a->h[k], cw = (w + 1) / 2, ch = (h + 1) / 2;
    const uint8_t *plane = a->buf[k];
    if (async_on_device(k)) {
      if (cudaMemcpy(a->host, a->buf[k], a->bytes, cudaMemcpyDeviceToHost) != cudaSuccess)
        a->failed = 1;
      plane = a->host;
    }
    for (int c = 0; c < 3; c++) {
      const int stride = (c ? cw : w) + a->pad, rows = c ? ch : h;
      for (int y = 0; y < rows; y++)
        tu_buf_append(a->pics, plane + (size_t)y * stride, (size_t)(c ? cw : w));
      plane += (size_t)stride * rows;
    }
    pthread_mutex_lock(&a->lock);
    a->head = (a->head + 1) % kAsyncCopies;
    a->count--;
    pthread_cond_broadcast(&a->cond);
  }
  pthread_mutex_unlock(&a->lock);
  return NULL;
}

/* Start the copy of pic into the next buffer, once the waiting thread has
 * one free. */
static int copy_out(async_copies *a, const c63_decoded_picture *pic, const char *what)
{
  pthread_mutex_lock(&a->lock);
  while (a->count == kAsyncCopies)
    pthread_cond_wait(&a->cond, &a->lock);
  const int k = (a->head + a->count) % kAsyncCopies;
  pthread_mutex_unlock(&a->lock);
  const int cw = (pic->width + 1) / 2, ch = (pic->height + 1) / 2;
  uint8_t *dst[3] = {a->buf[k], a->buf[k] + (size_t)(pic->width + a->pad) * pic->height, NULL};
  dst[2] = dst[1] + (size_t)(cw + a->pad) * ch;
  const int stride[3] = {pic->width + a->pad, cw + a->pad, cw + a->pad};
  uint64_t ticket;
  int r = c63_decoder_copy_picture_async(
      a->dec, pic, dst, stride, async_on_device(k) ? C63_MEMORY_CUDA : C63_MEMORY_HOST, &ticket);
  TU_CHECK(r == C63_OK && ticket > 0, "%s: copy of frame %lld: %d %s", what, (long long)pic->user,
           r, c63_decoder_error(a->dec));
  if (r) return r;
  pthread_mutex_lock(&a->lock);
  a->w[k] = pic->width;
  a->h[k] = pic->height;
  a->ticket[k] = ticket;
  a->count++;
  pthread_cond_broadcast(&a->cond);
  pthread_mutex_unlock(&a->lock);
  return C63_OK;
}

static int receive_copies(async_copies *a, int *n, const char *what)
{
  for (;;) {
    c63_decoded_picture pic;
    int r = c63_decoder_receive_picture(a->dec, &pic);
    if (r == C63_ERR_AGAIN || r == C63_ERR_EOF) return r;
    TU_CHECK(r == C63_OK && pic.memory == C63_MEMORY_CUDA && pic.user == *n,
             "%s: picture %d: %d, memory %d, frame %lld", what, *n, r, (int)pic.memory,
             (long long)pic.user);
    if (r) return r;
    if ((r = copy_out(a, &pic, what))) return r;
    (*n)++;
  }
}

static int decode_async_copies(const uint8_t *s, size_t len, tu_buf *pics, const char *what)
{
  c63_dec_params p;
  async_copies a = {.pad = 7, .pics = pics};
  c63_frame_header hdr;
  size_t bytes = 0, pos = 0;
  c63_dec_params_init(&p);
  p.backend = C63_BACKEND_CUDA;
  /* buffers for the largest picture */
  for (; pos < len && c63_parse_frame_header(s + pos, len - pos, &hdr, NULL, 0) == C63_OK;
       pos += hdr.frame_size) {
    const size_t b = (size_t)(hdr.width + a.pad) * hdr.height +
                     2 * (size_t)((hdr.width + 1) / 2 + a.pad) * ((hdr.height + 1) / 2);
    if (b > bytes) bytes = b;
  }
  if (!bytes || c63_decoder_new(&p, &a.dec, NULL, 0) != C63_OK) return -1;
  TU_CHECK(c63_decoder_set_output(a.dec, C63_MEMORY_CUDA) == C63_OK, "%s: device output", what);
  a.bytes = bytes;
  a.host = malloc(bytes);
  for (int k = 0; k < kAsyncCopies; k++) {
    a.buf[k] = NULL;
    if (async_on_device(k)) {
      if (cudaMalloc((void **)&a.buf[k], bytes) != cudaSuccess) a.buf[k] = NULL;
    } else {
      a.buf[k] = k % 3 ? malloc(bytes) : c63_picture_memory_alloc(bytes);
    }
    TU_CHECK(a.buf[k] != NULL, "%s: buffer %d", what, k);
  }
  pthread_mutex_init(&a.lock, NULL);
  pthread_cond_init(&a.cond, NULL);
  pthread_t waiter;
  pthread_create(&waiter, NULL, wait_copies, &a);
  int sent = 0, n = 0, r = C63_OK;
  pos = 0;
  while (pos < len && r != C63_ERR_EOF) {
    if (c63_parse_frame_header(s + pos, len - pos, &hdr, NULL, 0) != C63_OK) break;
    while ((r = c63_decoder_send_packet_borrowed(a.dec, s + pos, hdr.frame_size, sent)) ==
           C63_ERR_AGAIN)
      if ((r = receive_copies(&a, &n, what)) != C63_ERR_AGAIN) break;
    pos += hdr.frame_size;
    sent++;
  }
  c63_decoder_send_packet(a.dec, NULL, 0, 0);
  r = receive_copies(&a, &n, what);
  TU_CHECK(r == C63_ERR_EOF, "%s: no EOF after draining", what);
  pthread_mutex_lock(&a.lock);
  a.done = 1;
  pthread_cond_broadcast(&a.cond);
  pthread_mutex_unlock(&a.lock);
  pthread_join(waiter, NULL);
  TU_CHECK(!a.failed, "%s: a copy failed", what);
  for (int k = 0; k < kAsyncCopies; k++)
    if (async_on_device(k))
      cudaFree(a.buf[k]);
    else if (k % 3)
      free(a.buf[k]);
    else
      c63_picture_memory_free(a.buf[k]);
  free(a.host);
  pthread_cond_destroy(&a.cond);
  pthread_mutex_destroy(&a.lock);
  c63_decoder_free(a.dec);
  return n;
}

/* Whether n pictures are the CPU's a pictures; pics is freed. */
static int same_as_cpu(int a, const tu_buf *cpu, int n, tu_buf *pics)
{
  const int same =
      a == n && cpu->size == pics->size && memcmp(cpu->data, pics->data, cpu->size) == 0;
  tu_buf_free(pics);
  return same;
}

/* The CUDA backend through send/receive, set up as setup says, against
 * the CPU's pictures (a frames); returns whether they are the same. */
static int same_send_receive(const char *what, const tu_cuda_decoding *setup, int a,
                             const tu_buf *cpu, const uint8_t *s, size_t len)
{
  tu_buf pics = {0};
  const int n = decode_with(C63_BACKEND_CUDA, 1, setup, s, len, &pics, what);
  return same_as_cpu(a, cpu, n, &pics);
}

static void compare(const char *what, const uint8_t *s, size_t len)
{
  static const tu_cuda_decoding cpu_entropy = {1, 0, 0};
  tu_buf cpu = {0}, gpu = {0};
  int a = decode_with(C63_BACKEND_CPU, 0, NULL, s, len, &cpu, what);
  int b = decode_with(C63_BACKEND_CUDA, 0, NULL, s, len, &gpu, what);
  int ok = same_as_cpu(a, &cpu, b, &gpu) && a > 0;
  /* frames in flight: batches entropy-decoded on the GPU while earlier
   * frames are reconstructed */
  int ok_sr = same_send_receive(what, NULL, a, &cpu, s, len);
  int ok_small = same_send_receive(what, &small_batches, a, &cpu, s, len);
  int ok_ce = same_send_receive(what, &cpu_entropy, a, &cpu, s, len);
  tu_buf dev = {0};
  int d = decode_device_out(s, len, &dev, what);
  int ok_dev = same_as_cpu(a, &cpu, d, &dev);
  TU_CHECK(ok_dev, "%s: pictures left on the device differ from the CPU's (%d / %d frames)", what,
           a, d);
  tu_buf later = {0};
  int l = decode_async_copies(s, len, &later, what);
  int ok_later = same_as_cpu(a, &cpu, l, &later);
  TU_CHECK(ok_later, "%s: pictures copied out later differ from the CPU's (%d / %d frames)", what,
           a, l);
  TU_CHECK(ok, "%s: CUDA pictures differ from the CPU's (%d / %d frames)", what, a, b);
  TU_CHECK(ok_sr, "%s: CUDA send/receive pictures differ from the CPU's", what);
  TU_CHECK(ok_small, "%s: CUDA send/receive in small batches differs from the CPU's", what);
  TU_CHECK(ok_ce, "%s: CUDA with CPU entropy decoding differs from the CPU's", what);
  printf("%-44s %4d frames  %s, send/receive %s, small batches %s, on the device %s, copied out "
         "later %s, CPU entropy %s\n",
         what, a, ok ? "identical" : "DIFFERENT", ok_sr ? "identical" : "DIFFERENT",
         ok_small ? "identical" : "DIFFERENT", ok_dev ? "identical" : "DIFFERENT",
         ok_later ? "identical" : "DIFFERENT", ok_ce ? "identical" : "DIFFERENT");
  tu_buf_free(&cpu);
}

static void compare_stream(const uint8_t *s, size_t len, const char *name, void *ctx)
{
  (void)ctx;
  compare(name, s, len);
}

/* A synthetic clip (tools/synth.h), moving or a still picture; the stream
 * is appended to out. */
static void encode_clip(int w, int h, int frames, int kfi, int quality, int moving, tu_buf *out)
{
  const size_t fsize = tu_i420_size(w, h);
  uint8_t *yuv = malloc(fsize * frames);
  c63_enc_params p;
  char msg[256];
  for (int t = 0; t < frames; t++)
    synth_frame(yuv + fsize * t, w, h, moving ? t : 0);
  c63_enc_params_init(&p);
  p.width = w;
  p.height = h;
  p.keyframe_interval = kfi;
  p.quality = quality;
  TU_CHECK(tu_encode(&p, yuv, frames, out, msg, sizeof msg) == C63_OK, "encode: %s", msg);
  free(yuv);
}

static void synthetic(int w, int h, int frames, int kfi, int quality, tu_buf *out)
{
  encode_clip(w, h, frames, kfi, quality, 1, out);
}

/* The last, partial batch of a stream far larger than the batch before it
 * in the same place (the batches are used in turn): 96 frames of a still
 * picture at low quality, then 14 of film grain at the highest quality. At
 * the drain that partial batch is closed while frames of that place's
 * previous batch, further than the pictures in flight, are not
 * reconstructed yet; its stage, which packs its frames' coefficients by
 * their size, writes where theirs are, so those frames come out wrong
 * unless the stage waits until they are read. Batch shapes larger than the
 * pictures in flight, so that such frames exist: the policy's (a batch of
 * 14 at the end), 24 x 3 (14), 20 x 3 (10) and 12 x 3 (2). */
static void large_last_batch(void)
{
  static const tu_cuda_decoding shapes[] = {{0, 24, 3}, {0, 20, 3}, {0, 12, 3}};
  tu_buf s = {0}, cpu = {0};
  encode_clip(176, 144, 96, 0, 10, 0, &s);
  encode_clip(176, 144, 14, 7, C63_MAX_QUALITY, 1, &s);
  const char *what = "still 96 frames, then grain 14 (110 frames)";
  const int a = decode_with(C63_BACKEND_CPU, 0, NULL, s.data, s.size, &cpu, what);
  TU_CHECK(a == 110, "%s: %d frames decoded on the CPU", what, a);
  TU_CHECK(same_send_receive(what, NULL, a, &cpu, s.data, s.size),
           "%s: CUDA send/receive differs from the CPU's", what);
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
    TU_CHECK(same_send_receive(what, &shapes[i], a, &cpu, s.data, s.size),
             "%s: CUDA send/receive in batches of %d, %d in flight, differs from the CPU's", what,
             shapes[i].batch, shapes[i].batches);
  printf("%-44s %4d frames  send/receive at 32x3, 24x3, 20x3, 12x3 checked\n", what, a);
  tu_buf_free(&cpu);
  tu_buf_free(&s);
}

/* More frames than the policy's batches in flight hold, so batches are
 * reused while others decode; and batches one at a time (one in flight),
 * each launched again as soon as its frames were collected. */
static void longer_than_in_flight(void)
{
  static const tu_cuda_decoding one_batch = {0, 7, 1};
  tu_buf longer = {0}, cpu = {0};
  synthetic(176, 144, 230, 40, 25, &longer);
  const int a = decode_with(C63_BACKEND_CPU, 0, NULL, longer.data, longer.size, &cpu, "230 frames");
  TU_CHECK(same_send_receive("230 frames", NULL, a, &cpu, longer.data, longer.size),
           "230 frames: CUDA send/receive differs from the CPU's");
  TU_CHECK(same_send_receive("230 frames", &one_batch, a, &cpu, longer.data, longer.size),
           "230 frames: CUDA send/receive, one batch of 7 in flight, differs from the CPU's");
  printf("%-44s %4d frames  send/receive and one batch in flight checked\n",
         "synthetic 176x144 k40 q25, 230 frames", a);
  tu_buf_free(&cpu);
  tu_buf_free(&longer);
}

int main(void)
{
  char msg[256];
  if (c63_cuda_device_count(msg, sizeof msg) <= 0) {
    printf("SKIP: %s\n", msg);
    return 77;
  }
  /* the golden streams */
  tu_for_each_conformance_stream(compare_stream, NULL);
  /* synthetic streams at odd sizes, and a size change at keyframes */
  static const int sizes[][4] = {{8, 8, 3, 25},     {33, 17, 2, 50},   {100, 75, 5, 10},
                                 {650, 488, 4, 25}, {1282, 722, 3, 1}, {1920, 1080, 100, 25}};
  tu_buf all = {0};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    tu_buf s = {0};
    char what[64];
    synthetic(sizes[i][0], sizes[i][1], 12, sizes[i][2], sizes[i][3], &s);
    snprintf(what, sizeof what, "synthetic %dx%d k%d q%d", sizes[i][0], sizes[i][1], sizes[i][2],
             sizes[i][3]);
    compare(what, s.data, s.size);
    tu_buf_append(&all, s.data, s.size);
    tu_buf_free(&s);
  }
  compare("all of them in one stream (sizes change)", all.data, all.size);
  tu_buf_free(&all);
  /* batches of the GPU entropy stage, full and partial, one after another */
  tu_buf many = {0};
  synthetic(320, 240, 83, 30, 25, &many);
  compare("synthetic 320x240 k30 q25, 83 frames", many.data, many.size);
  large_last_batch();
  /* C63_TEST_QUICK (under compute-sanitizer): small batches above cover
   * the reuse of batches */
  if (!getenv("C63_TEST_QUICK")) longer_than_in_flight();
  tu_buf_free(&many);

  /* a missing device is an error with a message, not a crash */
  c63_dec_params p;
  c63_decoder *dec = NULL;
  c63_dec_params_init(&p);
  p.backend = C63_BACKEND_CUDA;
  p.device_id = 1000;
  int r = c63_decoder_new(&p, &dec, msg, sizeof msg);
  TU_CHECK(r == C63_ERR_NO_DEVICE && dec == NULL && msg[0], "device 1000: %d (%s)", r, msg);
  return tu_finish("test_cuda_decode");
}
