/* The GPU entropy decoder (cuda/c63_cuda_huff.h) against the CPU one
 * (c63_entropy_decode), frame by frame: every conformance stream and
 * generated clips (odd sizes, keyframes and delta frames, low and high
 * quality) must decode on the GPU to exactly the CPU's sparse frame
 * (counts, entries, vectors and flags); corrupt copies of frames must give
 * the CPU's picture or be handed to the CPU, never a picture where the CPU
 * finds an error. Without a CUDA device it prints SKIP and exits 77.
 *
 * `test_cuda_huff replay FILE...` decodes the frames of each file (a fuzz
 * corpus, say) on both, as corrupt data: any verdict of the CPU's, or
 * handed to the CPU (for compute-sanitizer's memcheck on the GPU machine).
 *
 * `test_cuda_huff bench [frames]` measures instead: frames a second of the
 * GPU stage on mandel_1920x1080.c63, its frames decoded over and over from
 * device memory (and of c63_entropy_decode on one core, for scale).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "c63/c63.h"
#include "cuda/c63_cuda.h"
#include "cuda/c63_cuda_huff.h"
#include "c63/entropy.h"
#include "c63/huff_sync_model.h"
#include "tutil.h"

typedef struct frame_ref {
  const uint8_t *data;
  size_t size;
  int keyframe;
  c63_geometry g;
} frame_ref;

static c63_cuda_huff *gpu;
static c63_sparse_frame cpu_out, gpu_out;
static int frames_checked, corrupt_checked, handed;

static void reserve(c63_sparse_frame *f, const frame_ref *fr)
{
  if (c63_sparse_frame_reserve(f, c63_frame_blocks(&fr->g),
                               c63_sparse_entries_bound(&fr->g, fr->size), 0))
    abort();
}

/* The first block where a and b differ, or -1. */
static long first_difference(const c63_sparse_frame *a, const c63_sparse_frame *b, size_t blocks)
{
  for (size_t i = 0; i < blocks; i++) {
    if (a->count[i] != b->count[i] || memcmp(&a->mvs[i], &b->mvs[i], sizeof(c63_mv)) ||
        memcmp(a->entries + a->start[i], b->entries + b->start[i], a->count[i] * 4u))
      return (long)i;
  }
  return -1;
}

/* One frame on both decoders. corrupt: the data may be anything; otherwise
 * the GPU must decode it itself. */
static void check_frame(const frame_ref *fr, int corrupt, const char *what)
{
  char msg[256];
  reserve(&cpu_out, fr);
  reserve(&gpu_out, fr);
  const int want =
      c63_entropy_decode(fr->data, fr->size, &fr->g, fr->keyframe, &cpu_out, msg, sizeof msg);
  if (!corrupt) TU_CHECK(want == C63_OK, "%s: CPU: %s", what, msg);
  const uint8_t *dev = c63_cuda_huff_upload(gpu, fr->data, fr->size);
  TU_CHECK(dev != NULL, "%s: upload failed", what);
  if (!dev) return;
  c63_cuda_huff_out out;
  const int got = c63_cuda_huff_decode(gpu, dev, fr->size, &fr->g, fr->keyframe,
                                       cpu_out.entries_cap, NULL, &out);
  TU_CHECK(got == C63_OK || got == C63_HS_HAND_TO_CPU, "%s: GPU status %d", what, got);
  if (corrupt)
    corrupt_checked++;
  else
    frames_checked++;
  if (got == C63_HS_HAND_TO_CPU) {
    TU_CHECK(corrupt, "%s: a valid frame handed to the CPU", what);
    handed++;
    return;
  }
  if (got != C63_OK) return;
  TU_CHECK(want == C63_OK, "%s: a picture on the GPU where the CPU says: %s", what, msg);
  if (want != C63_OK) return;
  TU_CHECK(c63_cuda_huff_download(gpu, &out, &gpu_out) == C63_OK, "%s: download failed", what);
  const size_t blocks = c63_frame_blocks(&fr->g);
  const long d = first_difference(&cpu_out, &gpu_out, blocks);
  TU_CHECK(d < 0, "%s: block %ld of %zu differs (count %u vs %u)", what, d, blocks,
           d < 0 ? 0 : cpu_out.count[d], d < 0 ? 0 : gpu_out.count[d]);
  TU_CHECK(cpu_out.n_entries == gpu_out.n_entries, "%s: %zu entries, the CPU %zu", what,
           gpu_out.n_entries, cpu_out.n_entries);
}

/* Corrupt copies of a frame: flipped bits, flipped bytes, cut short. */
static void check_corrupt(const frame_ref *fr, uint64_t *rng, const char *what)
{
  uint8_t *copy = malloc(fr->size + 1);
  for (int trial = 0; trial < 12; trial++) {
    char name[200];
    frame_ref bad = *fr;
    memcpy(copy, fr->data, fr->size);
    bad.data = copy;
    if (trial % 4 == 3) {
      bad.size = tu_rand(rng) % fr->size;
    } else {
      for (int k = 0; k <= trial % 4; k++)
        copy[tu_rand(rng) % fr->size] ^= (uint8_t)(trial & 1 ? 0xff : 1 << (tu_rand(rng) % 8));
    }
    snprintf(name, sizeof name, "%s corruption %d", what, trial);
    check_frame(&bad, 1, name);
  }
  free(copy);
}

/* Calls fn on each frame of a stream; returns the frames. strict: every
 * frame must parse (else the frames up to the first that does not). */
static int for_each_frame(const uint8_t *s, size_t len, const char *what, int strict,
                          void (*fn)(const frame_ref *, int, void *), void *ctx)
{
  int n = 0;
  for (size_t off = 0; off < len; n++) {
    c63_frame_header hdr;
    char msg[256];
    const int r = c63_parse_frame_header(s + off, len - off, &hdr, msg, sizeof msg);
    if (strict) TU_CHECK(r == C63_OK, "%s: frame %d: %s", what, n, msg);
    if (r || hdr.frame_size == 0 || hdr.data_offset + hdr.data_size > len - off) break;
    frame_ref fr = {
        .data = s + off + hdr.data_offset, .size = hdr.data_size, .keyframe = hdr.keyframe};
    c63_geometry_init(&fr.g, hdr.width, hdr.height);
    fn(&fr, n, ctx);
    off += hdr.frame_size;
  }
  return n;
}

typedef struct check_ctx {
  const char *what;
  int corrupt_frames;
  uint64_t rng;
} check_ctx;

static void check_one(const frame_ref *fr, int n, void *p)
{
  check_ctx *c = p;
  char name[160];
  snprintf(name, sizeof name, "%s frame %d", c->what, n);
  check_frame(fr, 0, name);
  if (n < c->corrupt_frames && fr->size) check_corrupt(fr, &c->rng, name);
}

static void check_stream(const uint8_t *s, size_t len, const char *what, int corrupt_frames)
{
  check_ctx c = {what, corrupt_frames, 0x63c63 ^ len};
  const int n = for_each_frame(s, len, what, 1, check_one, &c);
  printf("%s: %d frames\n", what, n);
}

/* A synthetic clip at quality q, every fourth frame a keyframe. */
static void check_generated(int w, int h, int q, int natural)
{
  tu_buf out = {0};
  char msg[256], what[96];
  TU_CHECK(tu_encode_synth(w, h, q, natural, 6, 4, &out, msg, sizeof msg) == C63_OK, "encode: %s",
           msg);
  snprintf(what, sizeof what, "%s %dx%d q%d", natural ? "natural" : "pan", w, h, q);
  if (!tu_failures) check_stream(out.data, out.size, what, 2);
  tu_buf_free(&out);
}

static void check_replayed(const frame_ref *fr, int n, void *p)
{
  char name[1100];
  snprintf(name, sizeof name, "%s frame %d", (const char *)p, n);
  check_frame(fr, 1, name);
}

/* Each file's frames as corrupt data. */
static void replay(int n, char **paths)
{
  for (int i = 0; i < n; i++) {
    size_t len;
    uint8_t *s = tu_read_file(paths[i], &len);
    TU_CHECK(s != NULL, "cannot read %s", paths[i]);
    if (s) for_each_frame(s, len, paths[i], 0, check_replayed, paths[i]);
    free(s);
  }
  printf("%d files: %d frames (%d handed to the CPU)\n", n, corrupt_checked, handed);
}

static double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct bench_ctx {
  const uint8_t *host, *dev; /* the stream, on the host and on the device */
  frame_ref frames[64];
  int n;
} bench_ctx;

static void collect(const frame_ref *fr, int n, void *p)
{
  bench_ctx *b = p;
  (void)n;
  if (b->n < 64) b->frames[b->n++] = *fr;
}

static int bench(int count)
{
  char path[1024];
  size_t len;
  tu_data_path(path, sizeof path, "mandel_1920x1080.c63");
  uint8_t *s = tu_read_file(path, &len);
  if (!s) return 1;
  bench_ctx b = {.host = s};
  for_each_frame(s, len, "bench", 1, collect, &b);
  b.dev = c63_cuda_huff_upload(gpu, s, len);
  if (!b.dev || !b.n) return 1;
  size_t bytes = 0;
  for (int pass = 0; pass < 2; pass++) { /* a warm-up pass, then the measured one */
    const double t0 = now_s();
    int done = 0;
    for (int i = 0; i < (pass ? count : b.n); i++) {
      const frame_ref *fr = &b.frames[i % b.n];
      reserve(&cpu_out, fr);
      c63_cuda_huff_out out;
      const int r = c63_cuda_huff_decode(gpu, b.dev + (fr->data - s), fr->size, &fr->g,
                                         fr->keyframe, cpu_out.entries_cap, NULL, &out);
      if (r != C63_OK) {
        fprintf(stderr, "frame %d: status %d\n", i % b.n, r);
        return 1;
      }
      bytes += fr->size;
      done++;
    }
    const double t = now_s() - t0;
    if (pass)
      printf("GPU entropy decoding, mandel_1920x1080.c63: %d frames in %.3f s: %.0f frames/s\n",
             done, t, done / t);
  }
  const double t0 = now_s();
  for (int i = 0; i < count; i++) {
    const frame_ref *fr = &b.frames[i % b.n];
    reserve(&cpu_out, fr);
    c63_entropy_decode(fr->data, fr->size, &fr->g, fr->keyframe, &cpu_out, NULL, 0);
  }
  const double t = now_s() - t0;
  printf("CPU entropy decoding, one thread: %d frames in %.3f s: %.0f frames/s\n", count, t,
         count / t);
  free(s);
  return 0;
}

int main(int argc, char **argv)
{
  char msg[256];
  if (c63_cuda_device_count(msg, sizeof msg) <= 0) {
    printf("SKIP: %s\n", msg);
    return 77;
  }
  TU_CHECK(c63_cuda_huff_new(&gpu) == C63_OK, "cannot set up the GPU decoder");
  if (!gpu) return tu_finish("test_cuda_huff");
  if (argc > 1 && !strcmp(argv[1], "bench")) {
    const int r = bench(argc > 2 ? atoi(argv[2]) : 2000);
    c63_cuda_huff_free(gpu);
    return r;
  }
  if (argc > 1 && !strcmp(argv[1], "replay")) {
    replay(argc - 2, argv + 2);
    c63_cuda_huff_free(gpu);
    return tu_finish("test_cuda_huff replay");
  }
  tu_manifest_row rows[32];
  const int n = tu_read_manifest(rows, 32);
  TU_CHECK(n > 0, "cannot read the conformance manifest");
  for (int i = 0; i < n; i++) {
    char path[1024];
    size_t len;
    tu_data_path(path, sizeof path, rows[i].stream);
    uint8_t *s = tu_read_file(path, &len);
    TU_CHECK(s != NULL, "cannot read %s", path);
    if (s) check_stream(s, len, rows[i].stream, 2);
    free(s);
  }
  check_generated(50, 38, 5, 0);
  check_generated(50, 38, 50, 1);
  check_generated(200, 120, 25, 1);
  check_generated(330, 190, 10, 0);
  check_generated(640, 360, 40, 1);
  printf("%d frames, %d corrupt copies (%d handed to the CPU)\n", frames_checked, corrupt_checked,
         handed);
  c63_cuda_huff_free(gpu);
  c63_sparse_frame_free(&cpu_out);
  c63_sparse_frame_free(&gpu_out);
  return tu_finish("test_cuda_huff");
}
