/* c63-scan-bench: how fast c63parse indexes a stream in pull mode.
 *
 * Usage: c63-scan-bench [-s MIB] [-n RUNS] FILE.c63
 *
 * Repeats FILE in memory up to MIB mebibytes (default 2048) and indexes it
 * as c63parse's index thread does: c63_frame_scan over reads of
 * 1 MiB (gst/c63parse/gstc63indexer.c), on one thread. Prints the frames
 * found and the best of RUNS (default 3) in GB/s of stream.
 *
 * Copyright (C) 2026 gst-c63 contributors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c63parse/gstc63index.h"
#include "cliutil.h"

/* The read size of c63parse's scan (INDEX_READ_BYTES). */
#define READ_BYTES ((size_t)1 << 20)

static const char *prog = "c63-scan-bench";

static int usage(void)
{
  fprintf(stderr, "Usage: %s [-s MIB] [-n RUNS] FILE.c63\n", prog);
  return 2;
}

/* FILE repeated (*copies times) to at least mib MiB. */
static uint8_t *make_stream(const char *path, size_t mib, size_t *size, unsigned *copies)
{
  FILE *f = fopen(path, "rb");
  uint8_t *file, *stream;
  long n;
  size_t want = mib << 20, i;

  if (!f || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) <= 0 || fseek(f, 0, SEEK_SET) != 0) {
    fprintf(stderr, "%s: cannot read %s\n", prog, path);
    if (f) fclose(f);
    return NULL;
  }
  file = malloc((size_t)n);
  if (!file || cli_read_full(f, file, (size_t)n) != (size_t)n) {
    fprintf(stderr, "%s: cannot read %s\n", prog, path);
    fclose(f);
    free(file);
    return NULL;
  }
  fclose(f);
  *copies = (unsigned)((want + (size_t)n - 1) / (size_t)n);
  *size = (size_t)n * *copies;
  stream = malloc(*size);
  if (!stream) {
    fprintf(stderr, "%s: out of memory for %zu bytes\n", prog, *size);
    free(file);
    return NULL;
  }
  for (i = 0; i < *copies; i++)
    memcpy(stream + i * (size_t)n, file, (size_t)n);
  free(file);
  return stream;
}

/* Index the stream as c63parse does: reads of READ_BYTES from where the
 * last whole frame ended (a longer one gets a larger read). */
static unsigned scan(const uint8_t *stream, size_t size)
{
  GstC63Index index;
  size_t read = READ_BYTES;
  unsigned frames;

  gst_c63_index_init(&index);
  for (;;) {
    size_t left = size - (size_t)index.pos, len = left < read ? left : read;
    int at_end = len == left;
    size_t used = gst_c63_index_scan(&index, stream + index.pos, len, at_end);

    if (at_end) break;
    read = used == 0 ? read * 2 : READ_BYTES;
  }
  frames = gst_c63_index_n_frames(&index);
  gst_c63_index_clear(&index);
  return frames;
}

int main(int argc, char **argv)
{
  int mib = 2048, runs = 3, i;
  size_t size;
  unsigned copies, frames = 0, one;
  double best = 0;
  uint8_t *stream;

  for (i = 1; i + 1 < argc && argv[i][0] == '-'; i += 2) {
    if (!strcmp(argv[i], "-s") && cli_parse_int(argv[i + 1], &mib) == 0 && mib > 0) continue;
    if (!strcmp(argv[i], "-n") && cli_parse_int(argv[i + 1], &runs) == 0 && runs > 0) continue;
    return usage();
  }
  if (i + 1 != argc) return usage();
  stream = make_stream(argv[i], (size_t)mib, &size, &copies);
  if (!stream) return 1;
  one = scan(stream, size / copies);
  for (i = 0; i < runs; i++) {
    double t0 = cli_now(), s;
    frames = scan(stream, size);
    s = cli_now() - t0;
    if (best == 0 || s < best) best = s;
  }
  free(stream);
  printf("%s: %u frames in %.1f MiB: best of %d scans %.3f s, %.2f GB/s\n", argv[argc - 1], frames,
         (double)size / (1 << 20), runs, best, (double)size / best / 1e9);
  if (frames != one * copies) {
    fprintf(stderr, "%s: found %u frames, want %u\n", prog, frames, one * copies);
    return 1;
  }
  return 0;
}
