/* The integrated-GPU path of the CUDA backends (cuda/c63_cuda_internal.h,
 * c63_cuda_zero_copy), forced on whatever GPU runs the tests with
 * C63_CUDA_ZERO_COPY=1: kernels read the pictures in host memory in place
 * and write decoded pictures into mapped host memory. Its streams and
 * pictures must be the copying path's (C63_CUDA_ZERO_COPY=0) and the CPU
 * backend's, byte for byte, for pictures in pageable memory (read from the
 * backend's mapped staging), page-locked memory (registered, or allocated
 * page-locked: read where they are), I420 and NV12 with padded rows, in
 * both coding modes. Without a CUDA device it prints SKIP and exits 77.
 *
 * Speed: c63-cuda-bench -z (docs/jetson.md); never asserted here.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c63/c63.h"
#include "cuda/c63_cuda.h"
#include "synth.h"
#include "tutil.h"

/* The backends read the setting when they are created. */
static void set_zero_copy(int on)
{
  setenv("C63_CUDA_ZERO_COPY", on ? "1" : "0", 1);
  TU_CHECK(c63_cuda_zero_copy_on(0) == on, "C63_CUDA_ZERO_COPY=%d: the path is %s", on,
           on ? "off" : "on");
}

static const char *const path_names[3] = {"cpu", "cuda copying", "cuda zero-copy"};

/* Where and how the pictures of a case are laid out. */
enum memory { PAGEABLE, REGISTERED, HOST_ALLOC };
static const char *const memory_names[3] = {"pageable", "registered", "cudaHostAlloc"};

typedef struct pictures {
  const uint8_t *yuv; /* tight I420 clip */
  int w, h, nv12;
  uint8_t *buf; /* one picture with padded rows, in the case's memory */
} pictures;

/* Picture i of the clip in buf, rows padded (NV12: chroma interleaved). */
static void make_picture(void *arg, int i, c63_picture *pic)
{
  pictures *f = arg;
  tu_padded_picture(f->yuv + (size_t)i * tu_i420_size(f->w, f->h), f->w, f->h, f->nv12, 24, f->buf,
                    pic);
}

static uint8_t *alloc_pictures(enum memory m, size_t size)
{
  char msg[256];
  if (m == HOST_ALLOC) return c63_cuda_host_alloc(size);
  uint8_t *p = malloc(size);
  if (p && m == REGISTERED && c63_cuda_pin(p, size, msg, sizeof msg) != C63_OK) {
    TU_CHECK(0, "page-locking the pictures: %s", msg);
    free(p);
    return NULL;
  }
  return p;
}

static void free_pictures(enum memory m, uint8_t *p)
{
  if (m == HOST_ALLOC) {
    c63_cuda_host_free(p);
    return;
  }
  if (m == REGISTERED) c63_cuda_unpin(p);
  free(p);
}

/* One clip through the CPU, the copying and the zero-copy path; the three
 * streams must be equal. */
static void encode_case(int w, int h, int nv12, enum memory m, c63_enc_mode mode)
{
  const int frames = 8;
  uint8_t *yuv = malloc(tu_i420_size(w, h) * frames);
  for (int t = 0; t < frames; t++)
    synth_frame(yuv + tu_i420_size(w, h) * t, w, h, t + (t == 5) * 1000); /* a scene cut */
  pictures f = {yuv, w, h, nv12, alloc_pictures(m, tu_i420_size(w + 24, h) * 3)};
  char what[128], msg[512];
  snprintf(what, sizeof what, "%s%dx%d %s, %s", mode == C63_MODE_RD ? "rd " : "", w, h,
           nv12 ? "NV12" : "I420", memory_names[m]);
  TU_CHECK(f.buf != NULL, "%s: no memory for the pictures", what);
  c63_enc_params p;
  c63_enc_params_init(&p);
  p.width = w;
  p.height = h;
  p.keyframe_interval = 4;
  p.mode = mode;
  tu_buf out[3] = {{0}};
  int ok = f.buf != NULL;
  for (int k = 0; k < 3 && ok; k++) {
    p.backend = k ? C63_BACKEND_CUDA : C63_BACKEND_CPU;
    set_zero_copy(k == 2);
    const int r = tu_encode_pictures(&p, make_picture, &f, frames, &out[k], msg, sizeof msg);
    TU_CHECK(r == C63_OK, "%s, %s: %s", what, path_names[k], msg);
    ok = r == C63_OK;
  }
  for (int k = 1; k < 3 && ok; k++) {
    const int same = out[k].size == out[0].size && !memcmp(out[k].data, out[0].data, out[0].size);
    TU_CHECK(same, "%s: the %s stream differs from the CPU's", what, path_names[k]);
    ok = same;
  }
  printf("%-40s %8zu bytes  %s\n", what, out[0].size, ok ? "identical" : "DIFFERENT");
  for (int k = 0; k < 3; k++)
    tu_buf_free(&out[k]);
  if (f.buf) free_pictures(m, f.buf);
  free(yuv);
}

static void run_encoder(void)
{
  static const int sizes[][2] = {{1282, 722}, {37, 21}};
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
    for (int m = PAGEABLE; m <= HOST_ALLOC; m++)
      for (int nv12 = 0; nv12 < 2; nv12++)
        encode_case(sizes[s][0], sizes[s][1], nv12, (enum memory)m, C63_MODE_EXACT);
  encode_case(176, 144, 0, REGISTERED, C63_MODE_RD);
  encode_case(176, 144, 1, PAGEABLE, C63_MODE_RD);
}

/* Every frame of a stream decoded on one path (decode, or send/receive
 * with frames in flight); the pictures appended to pics. */
static int decode_on(int path, int send_receive, const uint8_t *s, size_t len, tu_buf *pics,
                     const char *what)
{
  c63_dec_params p;
  c63_decoder *dec;
  char msg[256];
  c63_dec_params_init(&p);
  p.backend = path ? C63_BACKEND_CUDA : C63_BACKEND_CPU;
  set_zero_copy(path == 2);
  const int r = c63_decoder_new(&p, &dec, msg, sizeof msg);
  TU_CHECK(r == C63_OK, "%s, %s: decoder: %s", what, path_names[path], msg);
  if (r) return -1;
  const int n = send_receive ? tu_decode_frames_sr(dec, s, len, pics, what)
                             : tu_decode_frames(dec, s, len, pics, what);
  c63_decoder_free(dec);
  return n;
}

static void decode_case(int w, int h, int frames, int kfi)
{
  const size_t fsize = tu_i420_size(w, h);
  uint8_t *yuv = malloc(fsize * frames);
  for (int t = 0; t < frames; t++)
    synth_frame(yuv + fsize * t, w, h, t);
  c63_enc_params p;
  c63_enc_params_init(&p);
  p.width = w;
  p.height = h;
  p.keyframe_interval = kfi;
  tu_buf s = {0};
  char msg[256], what[64];
  snprintf(what, sizeof what, "decode %dx%d k%d", w, h, kfi);
  TU_CHECK(tu_encode(&p, yuv, frames, &s, msg, sizeof msg) == C63_OK, "%s: encode: %s", what, msg);
  free(yuv);
  for (int sr = 0; sr < 2; sr++) {
    tu_buf pics[3] = {{0}};
    int n[3], ok = 1;
    for (int k = 0; k < 3; k++)
      n[k] = decode_on(k, sr, s.data, s.size, &pics[k], what);
    for (int k = 1; k < 3; k++) {
      const int same = n[k] == frames && n[0] == frames && pics[k].size == pics[0].size &&
                       !memcmp(pics[k].data, pics[0].data, pics[0].size);
      TU_CHECK(same, "%s%s: the %s pictures differ from the CPU's (%d / %d frames)", what,
               sr ? ", send/receive" : "", path_names[k], n[k], n[0]);
      ok = ok && same;
    }
    printf("%-40s %4d frames%s  %s\n", what, n[0], sr ? " (send/receive)" : "",
           ok ? "identical" : "DIFFERENT");
    for (int k = 0; k < 3; k++)
      tu_buf_free(&pics[k]);
  }
  tu_buf_free(&s);
}

static void run_decoder(void)
{
  decode_case(1282, 722, 7, 3);
  decode_case(37, 21, 9, 4);
  decode_case(8, 8, 3, 100);
}

int main(void)
{
  if (tu_cuda_missing()) return 77;
  run_encoder();
  run_decoder();
  return tu_finish("test_cuda_zero_copy");
}
