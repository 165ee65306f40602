/* Helpers shared by the command-line tools.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "cliutil.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "c63.h"

int cli_parse_int(const char *s, int *out)
{
  char *end;
  long v;

  if (s == NULL || *s == '\0') return -1;
  errno = 0;
  v = strtol(s, &end, 10);
  if (errno != 0 || *end != '\0' || v < INT_MIN || v > INT_MAX) return -1;
  *out = (int)v;
  return 0;
}

FILE *cli_open(const char *prog, const char *path, const char *mode, FILE *std_stream)
{
  FILE *f;

  if (strcmp(path, "-") == 0) return std_stream;
  f = fopen(path, mode);
  if (f == NULL) fprintf(stderr, "%s: cannot open %s: %s\n", prog, path, strerror(errno));
  return f;
}

int cli_close(const char *prog, const char *path, FILE *f)
{
  int failed;

  if (f == NULL) return 0;
  /* ferror catches earlier short writes; fflush/fclose catch buffered ones
   * (e.g. a full disk), which would otherwise pass silently. */
  failed = ferror(f) != 0;
  if (f == stdin || f == stdout || f == stderr)
    failed |= fflush(f) != 0;
  else
    failed |= fclose(f) != 0;
  if (failed) {
    fprintf(stderr, "%s: error writing %s: %s\n", prog, path, strerror(errno));
    return -1;
  }
  return 0;
}

size_t cli_i420_size(int width, int height)
{
  size_t cw = (size_t)c63_chroma_size(width), ch = (size_t)c63_chroma_size(height);

  return (size_t)width * (size_t)height + 2 * cw * ch;
}

size_t cli_read_full(FILE *f, void *buf, size_t n)
{
  size_t got = 0;

  /* fread may return short counts on pipes; loop until EOF or error. */
  while (got < n) {
    size_t r = fread((char *)buf + got, 1, n - got, f);
    if (r == 0) break;
    got += r;
  }
  return got;
}

double cli_now(void)
{
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int cli_enc_option(int opt, const char *arg, c63_enc_params *p, char *err, size_t err_size)
{
  int *target;
  switch (opt) {
  case 'w':
    target = &p->width;
    break;
  case 'h':
    target = &p->height;
    break;
  case 'q':
    target = &p->quality;
    break;
  case 'k':
    target = &p->keyframe_interval;
    break;
  case 'r':
    target = &p->search_range;
    break;
  case 't':
    target = &p->threads;
    break;
  case 'D':
    target = &p->device_id;
    break;
  case 'B':
    if (strcmp(arg, "cpu") == 0) {
      p->backend = C63_BACKEND_CPU;
    } else if (strcmp(arg, "cuda") == 0) {
      p->backend = C63_BACKEND_CUDA;
    } else {
      snprintf(err, err_size, "unknown backend '%s' (expected cpu or cuda)", arg);
      return -1;
    }
    return 1;
  default:
    return 0;
  }
  if (cli_parse_int(arg, target) != 0) {
    snprintf(err, err_size, "'%s' is not a whole number", arg);
    return -1;
  }
  return 1;
}
