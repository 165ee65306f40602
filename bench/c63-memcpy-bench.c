/* c63-memcpy-bench: what the host's memory gives to copies of pictures
 * between ordinary buffers, by one thread and by several, each a slice of
 * the picture, as the CUDA backend stages pageable input. The limit the
 * staged route runs into; speed is measured, never asserted.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"
#include "cliutil.h"

#define MAX_THREADS 64
#define MAX_RUNS 64
#define PICTURES 8 /* cycled, so that the copies are not served from the caches */

typedef struct {
  const unsigned char *src;
  unsigned char *dst;
  size_t picture, begin, end; /* the thread's slice of each picture */
  int frames;
} slice;

static void *copy_slices(void *arg)
{
  const slice *s = arg;
  for (int f = 0; f < s->frames; f++) {
    const size_t off = s->picture * (size_t)(f % PICTURES);
    memcpy(s->dst + off + s->begin, s->src + off + s->begin, s->end - s->begin);
  }
  return NULL;
}

/* Seconds for frames copies of a picture by threads threads. */
static double run_once(const unsigned char *src, unsigned char *dst, size_t picture, int frames,
                       int threads)
{
  pthread_t th[MAX_THREADS];
  slice s[MAX_THREADS];
  const double t0 = cli_now();
  for (int i = 0; i < threads; i++) {
    s[i] = (slice){src, dst, picture, picture * i / threads, picture * (i + 1) / threads, frames};
    pthread_create(&th[i], NULL, copy_slices, &s[i]);
  }
  for (int i = 0; i < threads; i++)
    pthread_join(th[i], NULL);
  return cli_now() - t0;
}

int main(int argc, char **argv)
{
  size_t picture = 1920 * 1080 * 3 / 2;
  int frames = 2000, runs = 5, opt;
  while ((opt = getopt(argc, argv, "s:f:n:")) != -1) {
    if (opt == 's')
      picture = strtoul(optarg, NULL, 10);
    else if (opt == 'f')
      frames = atoi(optarg);
    else if (opt == 'n')
      runs = atoi(optarg);
    else {
      fprintf(stderr, "usage: c63-memcpy-bench [-s PICTURE_BYTES] [-f FRAMES] [-n RUNS]\n"
                      "copies of a 1080p I420 picture by default, 2000 a run, median of 5 runs\n");
      return 2;
    }
  }
  if (picture < 4096 || frames < 1 || runs < 1 || runs > MAX_RUNS) {
    fprintf(stderr, "c63-memcpy-bench: bad -s, -f or -n\n");
    return 2;
  }
  unsigned char *src = malloc(picture * PICTURES), *dst = malloc(picture * PICTURES);
  if (!src || !dst) return 1;
  memset(src, 1, picture * PICTURES); /* every page present before timing */
  memset(dst, 2, picture * PICTURES);
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  printf("copies of %zu-byte pictures between ordinary buffers, %d a run, %ld cores\n", picture,
         frames, cores);
  for (int threads = 1; threads <= MAX_THREADS && threads <= 2 * cores; threads *= 2) {
    double gbs[MAX_RUNS];
    for (int r = 0; r < runs; r++)
      gbs[r] = (double)picture * frames / run_once(src, dst, picture, frames, threads) / 1e9;
    const double m = bench_median(gbs, runs);
    printf("%2d thread%s: %6.1f GB/s (%.0f pictures a second)\n", threads, threads == 1 ? " " : "s",
           m, m * 1e9 / (double)picture);
  }
  free(src);
  free(dst);
  return 0;
}
