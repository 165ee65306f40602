/* bench_entropy: single-thread entropy-decoding speed.
 *
 * Reads a Codec63 stream into memory, parses its frame headers once, then
 * entropy-decodes every frame (c63_entropy_decode, one thread) RUNS times
 * and prints the median speed in MB of coded data a second and in frames a
 * second, with a checksum of the decoded coefficients and vectors that must
 * not change when the decoder gets faster. Time is the thread's CPU time, so
 * that other load on a shared machine counts little (bench/entropy-ab.sh
 * compares two commits). Speed is measured, never asserted.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "c63/c63.h"
#include "c63/entropy.h"
#include "c63/geometry.h"
#include "c63/sparse.h"

typedef struct bench_frame {
  const uint8_t *data;
  size_t size;
  int keyframe;
  c63_geometry g;
} bench_frame;

/* CPU time of this thread, in seconds. */
static double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static uint8_t *read_all(const char *path, size_t *len)
{
  FILE *fp = fopen(path, "rb");
  if (!fp) return NULL;
  size_t cap = 1 << 20, n = 0;
  uint8_t *buf = malloc(cap);
  size_t got;
  while (buf && (got = fread(buf + n, 1, cap - n, fp)) > 0) {
    n += got;
    if (n == cap) {
      uint8_t *bigger = realloc(buf, cap *= 2);
      if (!bigger) free(buf);
      buf = bigger;
    }
  }
  fclose(fp);
  *len = n;
  return buf;
}

/* 64-bit FNV-1a over the decoded frame: entries per block, then vectors. */
static uint64_t checksum(uint64_t h, const c63_sparse_frame *f, size_t blocks)
{
  for (size_t b = 0; b < blocks; b++) {
    const uint32_t *e = f->entries + f->start[b];
    for (int k = 0; k < f->count[b]; k++)
      h = (h ^ e[k]) * 0x100000001b3ull;
    const c63_mv *mv = &f->mvs[b];
    h = (h ^ (uint32_t)(mv->use_mv | (uint8_t)mv->x << 8 | (uint8_t)mv->y << 16)) *
        0x100000001b3ull;
  }
  return h;
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
  if (argc < 2) {
    fprintf(stderr, "Usage: %s STREAM.c63 [RUNS]\n", argv[0]);
    return 2;
  }
  int runs = argc > 2 ? atoi(argv[2]) : 5;
  if (runs < 1) runs = 1;
  size_t len;
  uint8_t *buf = read_all(argv[1], &len);
  if (!buf) {
    fprintf(stderr, "cannot read %s\n", argv[1]);
    return 1;
  }
  bench_frame *frames = NULL;
  size_t n = 0, data_bytes = 0, max_blocks = 0, max_entries = 0;
  for (size_t off = 0; off < len;) {
    c63_frame_header hdr;
    if (c63_parse_frame_header(buf + off, len - off, &hdr, NULL, 0)) break;
    bench_frame *grown = realloc(frames, (n + 1) * sizeof(*frames));
    if (!grown) return 1;
    frames = grown;
    bench_frame *fr = &frames[n++];
    fr->data = buf + off + hdr.data_offset;
    fr->size = hdr.data_size;
    fr->keyframe = hdr.keyframe;
    c63_geometry_init(&fr->g, hdr.width, hdr.height);
    data_bytes += hdr.data_size;
    if (c63_frame_blocks(&fr->g) > max_blocks) max_blocks = c63_frame_blocks(&fr->g);
    size_t bound = c63_sparse_entries_bound(&fr->g, hdr.data_size);
    if (bound > max_entries) max_entries = bound;
    off += hdr.frame_size;
  }
  if (!n) {
    fprintf(stderr, "no frames in %s\n", argv[1]);
    return 1;
  }
  c63_sparse_frame f = {0};
  if (c63_sparse_frame_reserve(&f, max_blocks, max_entries, 0)) return 1;
  double *secs = calloc((size_t)runs, sizeof(double));
  uint64_t sum = 0;
  char msg[256];
  for (int r = 0; r < runs; r++) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) {
      const bench_frame *fr = &frames[i];
      double t0 = now_s();
      int status =
          c63_entropy_decode(fr->data, fr->size, &fr->g, fr->keyframe, &f, msg, sizeof(msg));
      secs[r] += now_s() - t0;
      if (status) {
        fprintf(stderr, "frame %zu: %s\n", i, msg);
        return 1;
      }
      h = checksum(h, &f, c63_frame_blocks(&fr->g));
    }
    sum = h;
  }
  qsort(secs, (size_t)runs, sizeof(double), cmp_double);
  double med = secs[runs / 2];
  printf("%zu frames, %.1f KB of coded data a frame, %d runs\n", n, data_bytes / 1e3 / n, runs);
  printf("entropy decoding, one thread: %.1f MB/s, %.1f fps (median; best %.1f fps)\n",
         data_bytes / 1e6 / med, n / med, n / secs[0]);
  printf("checksum %016llx\n", (unsigned long long)sum);
  c63_sparse_frame_free(&f);
  free(secs);
  free(frames);
  free(buf);
  return 0;
}
