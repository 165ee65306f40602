/* The GPU entropy decoder (cuda/c63_cuda_huff.h) against the CPU one
 * (c63_entropy_decode), frame by frame, in batches: every frame of every
 * conformance stream and of generated clips (odd sizes, keyframes and delta
 * frames, low and high quality), in batches of 1, 7 and 64 frames, must
 * decode on the GPU to exactly the CPU's sparse frame (counts, entries,
 * vectors and flags); corrupt copies of frames, in a batch between good
 * frames, must give the CPU's picture or be handed to the CPU, never a
 * picture where the CPU finds an error, and must leave their neighbours'
 * results alone. Without a CUDA device it prints SKIP and exits 77.
 *
 * `test_cuda_huff replay FILE...` decodes the frames of each file (a fuzz
 * corpus, say) on both, as corrupt data, in batches of consecutive frames
 * of one geometry: any verdict of the CPU's, or handed to the CPU (for
 * compute-sanitizer on the GPU machine).
 *
 * `test_cuda_huff bench [frames] [batch]` measures instead: frames a second
 * of the GPU stage on mandel_1920x1080.c63, its frames decoded over and
 * over from device memory in batches of `batch` frames (of 1, 8, 32 and 64
 * when not given), and of c63_entropy_decode on one core, for scale.
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

#define MAX_BATCH C63_CUDA_HUFF_MAX_BATCH

typedef struct frame_ref {
  const uint8_t *data;
  size_t size;
  int keyframe;
  c63_geometry g;
  int corrupt; /* the data may be anything; otherwise the GPU must decode it */
  char what[200];
} frame_ref;

static c63_cuda_huff *gpu;
static c63_sparse_frame cpu_out, gpu_out;
static int frames_checked, corrupt_checked, handed, batches;
static uint8_t *staging;
static size_t staging_cap;

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

/* The entries a caller's sparse frame holds for fr, as the decoder sizes
 * it (c63_sparse_entries_bound): the GPU stage and the CPU get the same. */
static size_t entries_cap_of(const frame_ref *fr)
{
  return c63_sparse_entries_bound(&fr->g, fr->size);
}

/* Frame fr's result on the GPU (got, out) against the CPU's. */
static void check_result(const frame_ref *fr, int got, const c63_cuda_huff_out *out)
{
  char msg[256];
  const size_t blocks = c63_frame_blocks(&fr->g), cap = entries_cap_of(fr);
  if (c63_sparse_frame_reserve(&cpu_out, blocks, cap, 0) ||
      c63_sparse_frame_reserve(&gpu_out, blocks, cap, 0))
    abort();
  c63_sparse_frame cpu = cpu_out; /* exactly the GPU's room for entries */
  cpu.entries_cap = cap;
  const int want =
      c63_entropy_decode(fr->data, fr->size, &fr->g, fr->keyframe, &cpu, msg, sizeof msg);
  if (!fr->corrupt) TU_CHECK(want == C63_OK, "%s: CPU: %s", fr->what, msg);
  TU_CHECK(got == C63_OK || got == C63_HS_HAND_TO_CPU, "%s: GPU status %d", fr->what, got);
  if (fr->corrupt)
    corrupt_checked++;
  else
    frames_checked++;
  if (got == C63_HS_HAND_TO_CPU) {
    TU_CHECK(fr->corrupt, "%s: a valid frame handed to the CPU", fr->what);
    handed++;
    return;
  }
  if (got != C63_OK) return;
  TU_CHECK(want == C63_OK, "%s: a picture on the GPU where the CPU says: %s", fr->what, msg);
  if (want != C63_OK) return;
  TU_CHECK(c63_cuda_huff_download(gpu, out, &gpu_out) == C63_OK, "%s: download failed", fr->what);
  const long d = first_difference(&cpu, &gpu_out, blocks);
  TU_CHECK(d < 0, "%s: block %ld of %zu differs (count %u vs %u)", fr->what, d, blocks,
           d < 0 ? 0 : cpu.count[d], d < 0 ? 0 : gpu_out.count[d]);
  TU_CHECK(cpu.n_entries == gpu_out.n_entries, "%s: %zu entries, the CPU %zu", fr->what,
           gpu_out.n_entries, cpu.n_entries);
}

/* n frames of one geometry (n <= MAX_BATCH) in one batch, their data
 * uploaded together; each frame's result held to the CPU's. One frame goes
 * through c63_cuda_huff_decode. */
static void check_batch(const frame_ref *fr, int n)
{
  size_t total = 1, off[MAX_BATCH];
  for (int i = 0; i < n; i++) {
    off[i] = total - 1;
    total += fr[i].size;
  }
  if (total > staging_cap) {
    free(staging);
    staging = malloc(total);
    staging_cap = staging ? total : 0;
    if (!staging) abort();
  }
  for (int i = 0; i < n; i++)
    if (fr[i].size) memcpy(staging + off[i], fr[i].data, fr[i].size);
  const uint8_t *dev = c63_cuda_huff_upload(gpu, staging, total);
  TU_CHECK(dev != NULL, "%s: upload failed", fr[0].what);
  if (!dev) return;
  if (n == 1) { /* c63_cuda_huff_decode: the same, enqueue, wait and result in one */
    c63_cuda_huff_out out;
    const int got = c63_cuda_huff_decode(gpu, dev, fr->size, &fr->g, fr->keyframe,
                                         entries_cap_of(fr), NULL, &out);
    batches++;
    check_result(fr, got, &out);
    return;
  }
  c63_cuda_huff_frame in[MAX_BATCH];
  for (int i = 0; i < n; i++)
    in[i] = (c63_cuda_huff_frame){dev + off[i], fr[i].size, fr[i].keyframe, entries_cap_of(&fr[i])};
  int r = c63_cuda_huff_enqueue(gpu, in, n, &fr[0].g, NULL);
  TU_CHECK(r == C63_OK, "%s: a batch of %d: enqueue: %d", fr[0].what, n, r);
  if (r == C63_OK) r = c63_cuda_huff_wait(NULL);
  TU_CHECK(r == C63_OK, "%s: a batch of %d: wait: %d", fr[0].what, n, r);
  if (r != C63_OK) return;
  batches++;
  for (int i = 0; i < n; i++) {
    c63_cuda_huff_out out;
    const int got = c63_cuda_huff_result(gpu, i, &out);
    check_result(&fr[i], got, &out);
  }
}

/* The frames in batches of up to `size` consecutive frames of one
 * geometry. */
static void check_in_batches(const frame_ref *fr, int n, int size)
{
  for (int i = 0; i < n;) {
    int k = 1;
    while (k < size && i + k < n && fr[i + k].g.width == fr[i].g.width &&
           fr[i + k].g.height == fr[i].g.height)
      k++;
    check_batch(fr + i, k);
    i += k;
  }
}

/* Parses a stream's frames into fr (at most max); returns their number.
 * strict: every frame must parse (else the frames up to the first that
 * does not). */
static int parse_frames(const uint8_t *s, size_t len, const char *what, int strict, frame_ref *fr,
                        int max)
{
  int n = 0;
  for (size_t off = 0; off < len && n < max;) {
    c63_frame_header hdr;
    char msg[256];
    const int r = c63_parse_frame_header(s + off, len - off, &hdr, msg, sizeof msg);
    if (strict) TU_CHECK(r == C63_OK, "%s: frame %d: %s", what, n, msg);
    if (r || hdr.frame_size == 0 || hdr.data_offset + hdr.data_size > len - off) break;
    frame_ref *f = &fr[n];
    *f = (frame_ref){.data = s + off + hdr.data_offset,
                     .size = hdr.data_size,
                     .keyframe = hdr.keyframe,
                     .corrupt = !strict};
    c63_geometry_init(&f->g, hdr.width, hdr.height);
    snprintf(f->what, sizeof f->what, "%s frame %d", what, n);
    n++;
    off += hdr.frame_size;
  }
  return n;
}

/* Corrupt copies of a frame (flipped bits, flipped bytes, cut short) into
 * copy (fr->size bytes), described in *bad. */
static void corrupt_copy(const frame_ref *fr, int trial, uint64_t *rng, uint8_t *copy,
                         frame_ref *bad)
{
  *bad = *fr;
  memcpy(copy, fr->data, fr->size);
  bad->data = copy;
  bad->corrupt = 1;
  if (trial % 4 == 3) {
    bad->size = tu_rand(rng) % fr->size;
  } else {
    for (int k = 0; k <= trial % 4; k++)
      copy[tu_rand(rng) % fr->size] ^= (uint8_t)(trial & 1 ? 0xff : 1 << (tu_rand(rng) % 8));
  }
  snprintf(bad->what, sizeof bad->what, "%s corruption %d", fr->what, trial);
}

#define MAX_FRAMES 1024
#define TRIALS 12

/* Corrupt copies of a stream's first two frames, each between two good
 * frames of the stream, and its first frames without their last byte
 * (where that is the flush byte alone, the data ends right at the start
 * of the block past the last), in one batch. */
static void check_corrupt(const frame_ref *fr, int n, uint64_t *rng)
{
  static frame_ref mixed[MAX_BATCH];
  uint8_t *copies[2 * TRIALS] = {0};
  int m = 0;
  for (int i = 0; i < n && i < 2; i++) {
    if (!fr[i].size) continue;
    for (int trial = 0; trial < TRIALS; trial++) {
      uint8_t *copy = copies[i * TRIALS + trial] = malloc(fr[i].size);
      if (!copy) abort();
      mixed[m++] = fr[(i + trial) % n];
      corrupt_copy(&fr[i], trial, rng, copy, &mixed[m++]);
    }
  }
  for (int i = 0; i < n && m < MAX_BATCH; i++) {
    if (!fr[i].size) continue;
    mixed[m] = fr[i];
    mixed[m].size--;
    mixed[m].corrupt = 1;
    snprintf(mixed[m].what, sizeof mixed[m].what, "%s without its last byte", fr[i].what);
    m++;
  }
  if (m) check_batch(mixed, m);
  for (int i = 0; i < 2 * TRIALS; i++)
    free(copies[i]);
}

static void check_stream(const uint8_t *s, size_t len, const char *what)
{
  static frame_ref fr[MAX_FRAMES];
  uint64_t rng = 0x63c63 ^ len;
  const int n = parse_frames(s, len, what, 1, fr, MAX_FRAMES);
  if (!n) return;
  static const int sizes[] = {1, 7, MAX_BATCH};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
    check_in_batches(fr, n, sizes[i]);
  check_corrupt(fr, n, &rng);
  printf("%s: %d frames\n", what, n);
}

static void check_conformance_stream(const uint8_t *s, size_t len, const char *name, void *ctx)
{
  (void)ctx;
  check_stream(s, len, name);
}

/* A synthetic clip at quality q, every fourth frame a keyframe. */
static void check_generated(int w, int h, int q, int natural)
{
  tu_buf out = {0};
  char msg[256], what[96];
  TU_CHECK(tu_encode_synth(w, h, q, natural, 6, 4, &out, msg, sizeof msg) == C63_OK, "encode: %s",
           msg);
  snprintf(what, sizeof what, "%s %dx%d q%d", natural ? "natural" : "pan", w, h, q);
  if (!tu_failures) check_stream(out.data, out.size, what);
  tu_buf_free(&out);
}

/* Each file's frames as corrupt data. */
static void replay(int n, char **paths)
{
  static frame_ref fr[MAX_FRAMES];
  for (int i = 0; i < n; i++) {
    size_t len;
    uint8_t *s = tu_read_file(paths[i], &len);
    TU_CHECK(s != NULL, "cannot read %s", paths[i]);
    if (s) check_in_batches(fr, parse_frames(s, len, paths[i], 0, fr, MAX_FRAMES), MAX_BATCH);
    free(s);
  }
  printf("%d files: %d frames in %d batches (%d handed to the CPU)\n", n, corrupt_checked, batches,
         handed);
}

static double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* count frames of the stream's n frames (uploaded at dev, the stream's
 * copy on the host at host), over and over in batches of `size`; frames a
 * second, or a negative number on failure. */
static double bench_gpu(const frame_ref *fr, int n, const uint8_t *host, const uint8_t *dev,
                        int count, int size)
{
  c63_cuda_huff_frame in[MAX_BATCH];
  double t0 = 0;
  int done = 0;
  for (int pass = 0; pass < 2; pass++) { /* a warm-up pass, then the measured one */
    const int todo = pass ? count : n;
    t0 = now_s();
    for (done = 0; done < todo;) {
      const int k = todo - done < size ? todo - done : size;
      for (int i = 0; i < k; i++) {
        const frame_ref *f = &fr[(done + i) % n];
        in[i] =
            (c63_cuda_huff_frame){dev + (f->data - host), f->size, f->keyframe, entries_cap_of(f)};
      }
      if (c63_cuda_huff_enqueue(gpu, in, k, &fr[0].g, NULL) != C63_OK ||
          c63_cuda_huff_wait(NULL) != C63_OK)
        return -1;
      for (int i = 0; i < k; i++) {
        c63_cuda_huff_out out;
        const int r = c63_cuda_huff_result(gpu, i, &out);
        if (r != C63_OK) {
          fprintf(stderr, "frame %d: status %d\n", (done + i) % n, r);
          return -1;
        }
      }
      done += k;
    }
  }
  return done / (now_s() - t0);
}

static int bench(int count, int only_size)
{
  static frame_ref fr[MAX_FRAMES];
  char path[1024];
  size_t len;
  tu_data_path(path, sizeof path, "mandel_1920x1080.c63");
  uint8_t *s = tu_read_file(path, &len);
  if (!s) return 1;
  const int n = parse_frames(s, len, "bench", 1, fr, MAX_FRAMES);
  const uint8_t *dev = c63_cuda_huff_upload(gpu, s, len);
  if (!dev || !n) return 1;
  static const int sizes[] = {1, 8, 32, MAX_BATCH};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    const int size = only_size ? only_size : sizes[i];
    const double fps = bench_gpu(fr, n, s, dev, count, size);
    if (fps < 0) return 1;
    printf("GPU entropy decoding, mandel_1920x1080.c63, batches of %d: %d frames: %.0f frames/s\n",
           size, count, fps);
    if (only_size) break;
  }
  const double t0 = now_s();
  for (int i = 0; i < count; i++) {
    const frame_ref *f = &fr[i % n];
    if (c63_sparse_frame_reserve(&cpu_out, c63_frame_blocks(&f->g), entries_cap_of(f), 0)) return 1;
    c63_entropy_decode(f->data, f->size, &f->g, f->keyframe, &cpu_out, NULL, 0);
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
  int r = -1;
  if (argc > 1 && !strcmp(argv[1], "bench")) {
    const int size = argc > 3 ? atoi(argv[3]) : 0;
    r = size < 0 || size > MAX_BATCH ? 2 : bench(argc > 2 ? atoi(argv[2]) : 2000, size);
  } else if (argc > 1 && !strcmp(argv[1], "replay")) {
    replay(argc - 2, argv + 2);
  } else {
    tu_for_each_conformance_stream(check_conformance_stream, NULL);
    check_generated(50, 38, 5, 0);
    check_generated(50, 38, 50, 1);
    check_generated(200, 120, 25, 1);
    check_generated(330, 190, 10, 0);
    check_generated(640, 360, 40, 1);
    check_generated(16, 16, 1, 0);
    printf("%d batches: %d frames, %d corrupt copies (%d handed to the CPU)\n", batches,
           frames_checked, corrupt_checked, handed);
  }
  c63_cuda_huff_free(gpu);
  c63_sparse_frame_free(&cpu_out);
  c63_sparse_frame_free(&gpu_out);
  free(staging);
  return r >= 0 ? r : tu_finish(argc > 1 ? "test_cuda_huff replay" : "test_cuda_huff");
}
