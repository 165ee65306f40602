/* c63-psnr: PSNR between two raw I420 files of the same size.
 *
 * Prints, per plane, the PSNR of the whole clip's mean squared error (the
 * figure the conformance manifest gives as psnr_y_db), and for luma also the
 * mean over frames of each frame's PSNR (a frame with no difference counts
 * as 100 dB so that the mean stays finite).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c63/c63.h"
#include "cliutil.h"

static const char *prog = "c63-psnr";

#define PSNR_CAP 100.0

static void usage(FILE *out)
{
  fprintf(out,
          "Usage: %s -w WIDTH -h HEIGHT REFERENCE.yuv TEST.yuv\n"
          "Print the PSNR of TEST against REFERENCE (raw I420, same size). Output:\n"
          "  frames N\n"
          "  psnr-y A  psnr-u B  psnr-v C   (PSNR of the clip's mean squared error, dB)\n"
          "  psnr-y-frame-mean D            (mean of the frames' luma PSNR, dB)\n",
          prog);
}

static double psnr_of(double sse, double n)
{
  if (sse <= 0) return PSNR_CAP;
  return fmin(PSNR_CAP, 10.0 * log10(255.0 * 255.0 * n / sse));
}

int main(int argc, char **argv)
{
  int w = 0, h = 0, status = 1;
  const char *paths[2] = {NULL, NULL};
  int npaths = 0;
  FILE *f[2] = {NULL, NULL};
  uint8_t *buf[2] = {NULL, NULL};
  size_t fsize, plane_off[4], got[2];
  double sum_psnr_y = 0, sse_total[3] = {0, 0, 0};
  long frames = 0;

  if (cli_open_std_fds() != 0) return 1;
  if (cli_version(prog, argc, argv)) return 0;
  for (int i = 1; i < argc; i++) {
    if ((strcmp(argv[i], "-w") == 0 || strcmp(argv[i], "-h") == 0) && i + 1 < argc) {
      if (cli_parse_int(argv[i + 1], argv[i][1] == 'w' ? &w : &h) != 0) {
        fprintf(stderr, "%s: '%s' is not a whole number\n", prog, argv[i + 1]);
        return 2;
      }
      i++;
    } else if (strcmp(argv[i], "--help") == 0) {
      usage(stdout);
      return 0;
    } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
      fprintf(stderr, "%s: unknown option %s\n\n", prog, argv[i]);
      usage(stderr);
      return 2;
    } else if (npaths < 2) {
      paths[npaths++] = argv[i];
    } else {
      fprintf(stderr, "%s: too many files\n\n", prog);
      usage(stderr);
      return 2;
    }
  }
  if (w < 1 || h < 1 || w > C63_MAX_SIZE || h > C63_MAX_SIZE || npaths != 2) {
    fprintf(stderr, "%s: need -w, -h (1..%d) and two files\n\n", prog, C63_MAX_SIZE);
    usage(stderr);
    return 2;
  }
  fsize = cli_i420_size(w, h);
  plane_off[0] = 0;
  plane_off[1] = (size_t)w * (size_t)h;
  plane_off[2] = plane_off[1] + (size_t)c63_chroma_size(w) * (size_t)c63_chroma_size(h);
  plane_off[3] = fsize;
  for (int i = 0; i < 2; i++) {
    f[i] = cli_open(prog, paths[i], "rb", stdin);
    buf[i] = malloc(fsize);
    if (f[i] == NULL || buf[i] == NULL) goto done;
  }
  for (;;) {
    got[0] = cli_read_full(f[0], buf[0], fsize);
    got[1] = cli_read_full(f[1], buf[1], fsize);
    if (got[0] < fsize || got[1] < fsize) break;
    for (int c = 0; c < 3; c++) {
      double sse = 0;
      for (size_t i = plane_off[c]; i < plane_off[c + 1]; i++) {
        int d = (int)buf[0][i] - (int)buf[1][i];
        sse += (double)(d * d);
      }
      sse_total[c] += sse;
      if (c == 0) sum_psnr_y += psnr_of(sse, (double)plane_off[1]);
    }
    frames++;
  }
  if (got[0] != got[1] || got[0] != 0) {
    fprintf(stderr, "%s: the files differ in length (frame %ld: %zu and %zu of %zu bytes)\n", prog,
            frames, got[0], got[1], fsize);
    goto done;
  }
  if (frames == 0) {
    fprintf(stderr, "%s: no complete %dx%d frame\n", prog, w, h);
    goto done;
  }
  printf("frames %ld\n", frames);
  printf("psnr-y %.2f  psnr-u %.2f  psnr-v %.2f\n",
         psnr_of(sse_total[0], (double)frames * (double)(plane_off[1] - plane_off[0])),
         psnr_of(sse_total[1], (double)frames * (double)(plane_off[2] - plane_off[1])),
         psnr_of(sse_total[2], (double)frames * (double)(plane_off[3] - plane_off[2])));
  printf("psnr-y-frame-mean %.2f\n", sum_psnr_y / frames);
  status = 0;
done:
  for (int i = 0; i < 2; i++) {
    if (f[i] != NULL && f[i] != stdin) fclose(f[i]);
    free(buf[i]);
  }
  return status;
}
