/* c63-synth: write a deterministic synthetic clip (synth.h) as raw I420,
 * e.g. as input for the main job, for gst-launch examples or for c63-rd.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c63/c63.h"
#include "cliutil.h"
#include "synth.h"

static const char *prog = "c63-synth";

static void usage(FILE *out)
{
  fprintf(out,
          "Usage: %s -w WIDTH -h HEIGHT -f FRAMES [--scene pan|natural] OUTPUT.yuv\n"
          "Write a deterministic synthetic clip as raw I420. Use - for standard output.\n"
          "  --scene pan      panning texture, moving object, film grain (the default)\n"
          "  --scene natural  natural-looking: fractal landscape under a sky, a camera\n"
          "                   panning by fractions of a pixel, two soft-edged moving\n"
          "                   objects, light sensor noise\n",
          prog);
}

int main(int argc, char **argv)
{
  int w = 0, h = 0, frames = 0, status = 1;
  const char *path = NULL;
  void (*make_frame)(uint8_t *, int, int, int) = synth_frame;
  FILE *out;
  uint8_t *frame;
  size_t fsize;

  if (cli_open_std_fds() != 0) return 1;
  if (cli_version(prog, argc, argv)) return 0;
  for (int i = 1; i < argc; i++) {
    int *target = NULL;
    if (strcmp(argv[i], "-w") == 0)
      target = &w;
    else if (strcmp(argv[i], "-h") == 0)
      target = &h;
    else if (strcmp(argv[i], "-f") == 0)
      target = &frames;
    else if (strcmp(argv[i], "--scene") == 0 && i + 1 < argc &&
             (strcmp(argv[i + 1], "pan") == 0 || strcmp(argv[i + 1], "natural") == 0)) {
      make_frame = argv[++i][0] == 'n' ? synth_natural_frame : synth_frame;
      continue;
    } else if (strcmp(argv[i], "--help") == 0) {
      usage(stdout);
      return 0;
    } else if (path == NULL && (argv[i][0] != '-' || argv[i][1] == '\0')) {
      path = argv[i];
      continue;
    } else {
      fprintf(stderr, "%s: unexpected argument %s\n\n", prog, argv[i]);
      usage(stderr);
      return 2;
    }
    if (i + 1 >= argc || cli_parse_int(argv[++i], target) != 0) {
      fprintf(stderr, "%s: %s needs a whole number\n\n", prog, argv[i]);
      usage(stderr);
      return 2;
    }
  }
  if (w < C63_MIN_SIZE || h < C63_MIN_SIZE || w > C63_MAX_SIZE || h > C63_MAX_SIZE || frames < 1 ||
      path == NULL) {
    fprintf(stderr, "%s: need -w and -h (%d..%d), -f (at least 1) and an output file\n\n", prog,
            C63_MIN_SIZE, C63_MAX_SIZE);
    usage(stderr);
    return 2;
  }
  fsize = cli_i420_size(w, h);
  frame = malloc(fsize);
  if (frame == NULL) {
    fprintf(stderr, "%s: out of memory\n", prog);
    return 1;
  }
  out = cli_open(prog, path, "wb", stdout);
  if (out != NULL) {
    status = 0;
    for (int t = 0; t < frames && status == 0; t++) {
      make_frame(frame, w, h, t);
      if (fwrite(frame, 1, fsize, out) != fsize) status = 1;
    }
    if (cli_close(prog, path, out) != 0) status = 1;
  }
  free(frame);
  return status;
}
