/* c63-read-bench: how fast c63-enc's reader pool delivers raw frames.
 *
 * Usage: c63-read-bench -w W -h H [-j MAX_READERS] [-n RUNS] FILE.yuv
 *
 * Reads FILE's whole frames through tools/frame_reader.c, as c63-enc does
 * (pread of whole frames by offset into picture memory: page-locked when
 * the CUDA backend is built), with 1..MAX_READERS threads (default 8) and
 * no encoder, and prints the median of RUNS (default 3) in fps and GB/s:
 * the most frames c63-enc could encode from that file. Speed is measured,
 * never asserted.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "bench_util.h"
#include "cliutil.h"
#include "frame_reader.h"

#define MAX_RUNS 99
/* c63-enc's read-ahead beyond one frame a thread */
#define READ_AHEAD 4

static const char *prog = "c63-read-bench";

static int usage(void)
{
  fprintf(stderr, "Usage: %s -w W -h H [-j MAX_READERS] [-n RUNS] FILE.yuv\n", prog);
  return 2;
}

/* Seconds to read every whole frame of in with threads readers; -1 on an
 * error. */
static double time_reads(FILE *in, size_t frame_size, int threads, long *frames)
{
  size_t partial;
  int err;

  if (fseek(in, 0, SEEK_SET) != 0) return -1;
  const double t0 = cli_now();
  frame_reader *r = frame_reader_start(in, frame_size, -1, threads + READ_AHEAD, threads, 1);
  if (!r) return -1;
  *frames = 0;
  while (frame_reader_next(r, &partial, &err) != NULL) {
    frame_reader_release(r);
    (*frames)++;
  }
  frame_reader_stop(r);
  return err ? -1 : cli_now() - t0;
}

int main(int argc, char **argv)
{
  int w = 0, h = 0, max_readers = 8, runs = 3, opt;

  while ((opt = getopt(argc, argv, "w:h:j:n:")) != -1) {
    int *target = opt == 'w' ? &w : opt == 'h' ? &h : opt == 'j' ? &max_readers : &runs;
    if (opt == '?' || cli_parse_int(optarg, target) != 0) return usage();
  }
  if (optind != argc - 1 || w < C63_MIN_SIZE || h < C63_MIN_SIZE || runs < 1 || runs > MAX_RUNS ||
      max_readers < 1 || max_readers > FRAME_READER_MAX_THREADS)
    return usage();
  FILE *in = cli_open(prog, argv[optind], "rb", stdin);
  if (!in) return 1;
  const size_t frame_size = cli_i420_size(w, h);
  for (int threads = 1; threads <= max_readers; threads++) {
    double fps[MAX_RUNS];
    long frames = 0;
    for (int i = 0; i < runs; i++) {
      const double s = time_reads(in, frame_size, threads, &frames);
      if (s < 0) {
        fprintf(stderr, "%s: cannot read %s\n", prog, argv[optind]);
        fclose(in);
        return 1;
      }
      fps[i] = s > 0 ? (double)frames / s : 0.0;
    }
    const double med = bench_median(fps, runs);
    printf("readers %2d: %ld frames, %.1f fps, %.2f GB/s (median of %d)\n", threads, frames, med,
           med * (double)frame_size / 1e9, runs);
  }
  fclose(in);
  return 0;
}
