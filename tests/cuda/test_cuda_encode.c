/* Whole-encoder tests of the CUDA backend through the public API.
 *
 *   test_cuda_encode conformance  the golden vectors: CUDA output must equal
 *                                 the reference encoder's .c63 byte for byte
 *   test_cuda_encode odd-sizes    sizes 8x8 .. 8191x8191, mostly not multiples
 *                                 of 16, all search-range classes, extreme
 *                                 qualities and keyframe intervals: CUDA == CPU
 *   test_cuda_encode api          errors for a missing device, stage timings
 *   test_cuda_encode long         600 frames (6 keyframe periods, scene cuts,
 *                                 all frames in flight all along): CUDA == CPU
 *   test_cuda_encode pinned       pictures in page-locked memory, uploaded
 *                                 straight from there: CUDA == CPU
 *   test_cuda_encode rd           the rd mode at odd sizes, qualities and
 *                                 ranges: CUDA == CPU
 *
 * Without a CUDA device each prints SKIP and exits 77.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c63/c63.h"
#include "cuda/c63_cuda.h"
#include "cuda/c63_cuda_dsp.h"
#include "synth.h"
#include "tutil.h"

/* Offset of frame k (SOI) in a stream, or len. */
static size_t frame_offset(const uint8_t *s, size_t len, int k)
{
  size_t off = 0;
  for (int i = 0; i < k && off < len; i++) {
    c63_frame_header hdr;
    if (c63_parse_frame_header(s + off, len - off, &hdr, NULL, 0) != C63_OK) return len;
    off += hdr.frame_size;
  }
  return off;
}

/* Compare two streams; on a difference name the first frame that differs. */
static int same_stream(const char *what, const uint8_t *want, size_t want_len, const uint8_t *got,
                       size_t got_len)
{
  if (want_len == got_len && memcmp(want, got, want_len) == 0) return 1;
  size_t i = 0;
  while (i < want_len && i < got_len && want[i] == got[i])
    i++;
  int frame = 0;
  while (frame_offset(want, want_len, frame + 1) <= i &&
         frame_offset(want, want_len, frame + 1) < want_len)
    frame++;
  fprintf(stderr, "%s: streams differ at byte %zu (frame %d); sizes %zu (expected) and %zu\n", what,
          i, frame, want_len, got_len);
  return 0;
}

static int encode(const c63_enc_params *p, const uint8_t *yuv, int frames, tu_buf *out,
                  const char *what)
{
  char msg[512];
  int r = tu_encode(p, yuv, frames, out, msg, sizeof msg);
  TU_CHECK(r == C63_OK, "%s (%s backend): %s: %s", what,
           p->backend == C63_BACKEND_CUDA ? "cuda" : "cpu", c63_status_string(r), msg);
  return r == C63_OK;
}

static void run_conformance(void)
{
  tu_manifest_row rows[32];
  int n = tu_read_manifest(rows, 32);
  TU_CHECK(n > 0, "cannot read the conformance manifest");
  for (int i = 0; i < n; i++) {
    const tu_manifest_row *r = &rows[i];
    char path[1024];
    size_t yuv_len, ref_len;
    tu_yuv_path(path, sizeof path, r->input);
    uint8_t *yuv = tu_read_file(path, &yuv_len);
    tu_data_path(path, sizeof path, r->stream);
    uint8_t *ref = tu_read_file(path, &ref_len);
    TU_CHECK(yuv && ref, "%s: missing input or golden stream", r->stream);
    if (yuv && ref) {
      TU_CHECK(yuv_len >= (size_t)r->frames * tu_i420_size(r->width, r->height),
               "%s: input too short", r->input);
      c63_enc_params p;
      c63_enc_params_init(&p);
      p.width = r->width;
      p.height = r->height;
      p.quality = r->quality;
      p.keyframe_interval = r->keyframe_interval;
      p.search_range = r->search_range;
      p.backend = C63_BACKEND_CUDA;
      tu_buf out = {0};
      if (encode(&p, yuv, r->frames, &out, r->stream)) {
        int ok = same_stream(r->stream, ref, ref_len, out.data, out.size);
        TU_CHECK(ok, "%s: CUDA output is not reference-exact", r->stream);
        printf("%-24s %4dx%-4d %3d frames  %s\n", r->stream, r->width, r->height, r->frames,
               ok ? "identical" : "DIFFERENT");
      }
      tu_buf_free(&out);
    }
    free(yuv);
    free(ref);
  }
}

/* Encode frames with both backends and compare the streams. With pinned,
 * the clip is page-locked, so the CUDA backend uploads straight from it
 * instead of through its staging copy. */
static void cuda_vs_cpu_mode(int w, int h, int frames, int quality, int kfi, int range, int pinned,
                             c63_enc_mode mode)
{
  const size_t fsize = tu_i420_size(w, h);
  uint8_t *yuv = malloc(fsize * frames);
  char msg[256];
  for (int t = 0; t < frames; t++) {
    /* A scene cut every 97 frames: the search must cope with garbage
     * references, not only with smooth motion. */
    synth_frame(yuv + fsize * t, w, h, t + (t / 97) * 1000);
  }
  c63_enc_params p;
  c63_enc_params_init(&p);
  p.width = w;
  p.height = h;
  p.quality = quality;
  p.keyframe_interval = kfi;
  p.search_range = range;
  p.mode = mode;
  char what[128];
  snprintf(what, sizeof what, "%s%dx%d q%d k%d r%d, %d frames%s", mode == C63_MODE_RD ? "rd " : "",
           w, h, quality, kfi, range, frames, pinned ? ", page-locked" : "");
  if (pinned && c63_cuda_pin(yuv, fsize * frames, msg, sizeof msg) != C63_OK) {
    TU_CHECK(0, "%s: %s", what, msg);
    pinned = 0;
  }

  tu_buf cpu = {0}, gpu = {0};
  p.backend = C63_BACKEND_CPU;
  int ok = encode(&p, yuv, frames, &cpu, what);
  p.backend = C63_BACKEND_CUDA;
  ok = ok && encode(&p, yuv, frames, &gpu, what);
  if (ok) {
    ok = same_stream(what, cpu.data, cpu.size, gpu.data, gpu.size);
    TU_CHECK(ok, "%s: CUDA and CPU streams differ", what);
    printf("%-40s %8zu bytes  %s\n", what, gpu.size, ok ? "identical" : "DIFFERENT");
  }
  tu_buf_free(&cpu);
  tu_buf_free(&gpu);
  if (pinned) c63_cuda_unpin(yuv);
  free(yuv);
}

static void cuda_vs_cpu(int w, int h, int frames, int quality, int kfi, int range, int pinned)
{
  cuda_vs_cpu_mode(w, h, frames, quality, kfi, range, pinned, C63_MODE_EXACT);
}

/* The rd mode: the GPU's decisions (c63_cuda_rd.cu) must be the CPU's
 * (c63/rd_code.c) to the bit, so the streams are equal. Odd sizes, every
 * search-range class, qualities from 1 to 50, keyframes now and then, and
 * the synthetic clip's scene cuts (frame 97 of the long case), where intra
 * blocks win in delta frames. */
static void run_rd(void)
{
  static const struct {
    int w, h, frames, quality, kfi, range;
  } cases[] = {
      {8, 8, 5, 25, 100, 16},       {17, 9, 5, 50, 100, 3},     {33, 47, 5, 25, 2, 64},
      {63, 65, 5, 1, 100, 7},       {176, 144, 8, 25, 100, 16}, {250, 130, 6, 10, 4, 16},
      {352, 288, 6, 50, 100, 16},   {96, 64, 110, 25, 100, 1},  {1282, 722, 4, 25, 3, 8},
      {1920, 1080, 3, 25, 100, 16},
  };
  /* C63_TEST_QUICK (under compute-sanitizer): without the two largest */
  const size_t n = sizeof cases / sizeof cases[0] - (getenv("C63_TEST_QUICK") ? 2 : 0);
  for (size_t i = 0; i < n; i++)
    cuda_vs_cpu_mode(cases[i].w, cases[i].h, cases[i].frames, cases[i].quality, cases[i].kfi,
                     cases[i].range, 0, C63_MODE_RD);
}

static void run_odd_sizes(void)
{
  static const struct {
    int w, h, quality, kfi, range;
  } cases[] = {
      {8, 8, 25, 100, 16},
      {8, 8, 25, 0, 1},
      {10, 8, 25, 3, 2},
      {17, 9, 50, 100, 3},
      {24, 24, 5, 1, 16},
      {33, 47, 25, 2, 64},
      {63, 65, 1, 100, 7},
      {100, 30, 25, 100, 17},
      {250, 130, 10, 4, 16},
      {176, 144, 25, 100, 8},
      {130, 250, 50, 0, 32},
      {96, 64, 25, 100, 1},
      /* Over 1 MiB: the backend pads the input in slices on several threads. */
      {1282, 722, 25, 3, 4},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    cuda_vs_cpu(cases[i].w, cases[i].h, 7, cases[i].quality, cases[i].kfi, cases[i].range, 0);
  /* The largest odd size the API accepts (8191 -> 8192 padded, 1.6 M blocks
   * per frame, 24-bit block indices): range 1 keeps the CPU side quick. */
  cuda_vs_cpu(C63_MAX_SIZE - 1, C63_MAX_SIZE - 1, 2, 25, 100, 1, 0);
}

/* Errors a user can act on, and the stage-timing API. */
static void run_api(void)
{
  char msg[256] = "";
  const int n = c63_cuda_device_count(msg, sizeof msg);
  c63_enc_params p;
  c63_enc_params_init(&p);
  p.width = 64;
  p.height = 48;
  p.backend = C63_BACKEND_CUDA;
  p.device_id = n; /* one past the last device */
  c63_encoder *enc = NULL;
  int r = c63_encoder_new(&p, &enc, msg, sizeof msg);
  TU_CHECK(r == C63_ERR_NO_DEVICE && enc == NULL, "device %d of %d: got %s", n, n,
           c63_status_string(r));
  TU_CHECK(msg[0] != '\0', "no message for a missing device");
  printf("device %d of %d: %s\n", n, n, msg);
  msg[0] = '\0';
  TU_CHECK(!c63_backend_available(C63_BACKEND_CUDA, n, msg, sizeof msg) && msg[0],
           "c63_backend_available accepts device %d", n);
  c63_encoder_free(enc);

  /* Stage timings: every frame of an encode is counted, every stage timed. */
  p.device_id = 0;
  const int frames = 5;
  const size_t fsize = tu_i420_size(p.width, p.height);
  uint8_t *yuv = malloc(fsize * frames);
  for (int t = 0; t < frames; t++)
    synth_frame(yuv + fsize * t, p.width, p.height, t);
  tu_buf out = {0};
  c63_stage_stats st = {0};
  char smsg[512];
  int sr = tu_encode_timed(&p, yuv, frames, &out, &st, smsg, sizeof smsg);
  TU_CHECK(sr == C63_OK, "stage timings: %s", smsg);
  TU_CHECK(st.frames == frames, "stats counted %ld frames of %d", st.frames, frames);
  /* the timings are the encoder's own: another encoder's frames do not count */
  c63_stage_stats none = {0};
  tu_buf out2 = {0};
  encode(&p, yuv, frames, &out2, "untimed encoder");
  sr = tu_encode_timed(&p, yuv, 1, &out2, &none, smsg, sizeof smsg);
  TU_CHECK(sr == C63_OK && none.frames == 1, "a second timed encoder counted %ld frames of 1",
           none.frames);
  tu_buf_free(&out2);
  TU_CHECK(st.total_ms > 0 && st.upload_ms >= 0 && st.motion_ms >= 0 && st.transform_ms >= 0 &&
               st.entropy_ms >= 0 && st.download_ms >= 0,
           "stage times not recorded");
  char name[256];
  TU_CHECK(c63_cuda_device_name(0, name, sizeof name) == C63_OK && name[0], "no device name");
  printf("device 0: %s; %ld frames timed\n", name, st.frames);
  tu_buf_free(&out);
  free(yuv);
}

/* Pictures in the layouts and memories a GStreamer pipeline hands over:
 * NV12 with padded rows, I420 and NV12 in device memory (as CUDAMemory
 * gives them), in the primary context or in a context of the caller's own
 * (cuCtxCreate, as a GstCudaContext). Each gives the CPU's bytes for the
 * same pictures in tight I420. */
typedef struct layout_frames {
  const uint8_t *yuv;
  int w, h, nv12;
  void *ctx;    /* device memory in this context */
  int device;   /* planes in device memory */
  uint8_t *buf; /* host staging of one picture */
  void *dev;    /* its device copy, replaced per picture */
  size_t size;
} layout_frames;

static void layout_picture(void *arg, int i, c63_picture *pic)
{
  layout_frames *f = arg;
  f->size = tu_padded_picture(f->yuv + (size_t)i * tu_i420_size(f->w, f->h), f->w, f->h, f->nv12,
                              40, f->buf, pic);
  if (!f->device) return;
  if (f->dev) c63_cuda_test_device_free(f->ctx, f->dev);
  f->dev = c63_cuda_test_upload(f->ctx, f->buf, f->size);
  TU_CHECK(f->dev != NULL, "device copy of picture %d", i);
  if (!f->dev) return;
  for (int c = 0; c < 3; c++)
    if (pic->data[c]) pic->data[c] = (const uint8_t *)f->dev + (pic->data[c] - f->buf);
}

static void run_layouts(void)
{
  static const int sizes[][2] = {{1282, 722}, {37, 21}};
  void *own = c63_cuda_test_context_new(0);
  TU_CHECK(own != NULL, "could not create a CUDA context of our own");
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
    const int w = sizes[k][0], h = sizes[k][1], frames = 8;
    uint8_t *yuv = malloc(tu_i420_size(w, h) * frames);
    for (int t = 0; t < frames; t++)
      synth_frame(yuv + tu_i420_size(w, h) * t, w, h, t);
    c63_enc_params p;
    c63_enc_params_init(&p);
    p.width = w;
    p.height = h;
    p.keyframe_interval = 5;
    char what[128], msg[512];
    tu_buf cpu = {0};
    snprintf(what, sizeof what, "%dx%d", w, h);
    if (!encode(&p, yuv, frames, &cpu, what)) continue;
    static const struct {
      const char *name;
      int nv12, device, own_ctx;
    } cases[] = {
        {"NV12, host memory", 1, 0, 0},
        {"I420, device memory", 0, 1, 0},
        {"NV12, device memory", 1, 1, 0},
        {"I420, device memory, own context", 0, 1, 1},
        {"NV12, device memory, own context", 1, 1, 1},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
      if (cases[c].own_ctx && !own) continue;
      layout_frames f = {
          yuv, w, h, cases[c].nv12, cases[c].own_ctx ? own : NULL, cases[c].device, NULL, NULL, 0};
      f.buf = malloc(tu_i420_size(w + 40, h) * 3);
      tu_buf gpu = {0};
      p.backend = C63_BACKEND_CUDA;
      p.cuda_context = f.ctx;
      int r = tu_encode_pictures(&p, layout_picture, &f, frames, &gpu, msg, sizeof msg);
      TU_CHECK(r == C63_OK, "%s, %s: %s", what, cases[c].name, msg);
      int ok = r == C63_OK && same_stream(cases[c].name, cpu.data, cpu.size, gpu.data, gpu.size);
      TU_CHECK(ok, "%s, %s: stream differs from the CPU's", what, cases[c].name);
      printf("%-12s %-36s %s\n", what, cases[c].name, ok ? "identical" : "DIFFERENT");
      if (f.dev) c63_cuda_test_device_free(f.ctx, f.dev);
      free(f.buf);
      tu_buf_free(&gpu);
      p.cuda_context = NULL;
    }
    tu_buf_free(&cpu);
    free(yuv);
  }
  c63_cuda_test_context_free(own);
}

int main(int argc, char **argv)
{
  const char *mode = argc > 1 ? argv[1] : "conformance";
  if (tu_cuda_missing()) return 77;
  if (!strcmp(mode, "conformance"))
    run_conformance();
  else if (!strcmp(mode, "odd-sizes"))
    run_odd_sizes();
  else if (!strcmp(mode, "api"))
    run_api();
  else if (!strcmp(mode, "layouts"))
    run_layouts();
  else if (!strcmp(mode, "rd"))
    run_rd();
  else if (!strcmp(mode, "long"))
    cuda_vs_cpu(144, 96, 600, 25, 100, 16, 0);
  else if (!strcmp(mode, "pinned")) {
    cuda_vs_cpu(144, 96, 40, 25, 7, 16, 1);
    cuda_vs_cpu(1282, 722, 12, 50, 5, 8, 1);
  } else {
    fprintf(stderr, "usage: %s conformance|odd-sizes|long|pinned|api|layouts|rd\n", argv[0]);
    return 2;
  }
  return tu_finish(mode);
}
