/* Small helpers shared by the command-line tools (argument parsing, files,
 * clocks). Nothing here is part of libc63.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef C63_CLIUTIL_H
#define C63_CLIUTIL_H

#include <stddef.h>
#include <stdio.h>

#include "c63.h"

/* The encoder options that c63-enc and c63-bench share: put
 * CLI_ENC_OPTSTRING in the getopt string and CLI_ENC_LONG_OPTS in the long
 * option table, and hand every option to cli_enc_option first. */
#define CLI_ENC_OPTSTRING "w:h:q:k:r:t:"
#define CLI_ENC_LONG_OPTS                                                                          \
  {"width", required_argument, NULL, 'w'}, {"height", required_argument, NULL, 'h'},               \
      {"quality", required_argument, NULL, 'q'},                                                   \
      {"keyframe-interval", required_argument, NULL, 'k'},                                         \
      {"search-range", required_argument, NULL, 'r'}, {"threads", required_argument, NULL, 't'},   \
      {"backend", required_argument, NULL, 'B'},                                                   \
  {                                                                                                \
    "device", required_argument, NULL, 'D'                                                         \
  }

/* Apply option opt with value arg to p. Returns 1 when opt is an encoder
 * option, 0 when it is not, -1 (with a message in err) for a bad value.
 * Ranges are left to c63_enc_params_validate. */
int cli_enc_option(int opt, const char *arg, c63_enc_params *p, char *err, size_t err_size);

/* Parse a whole decimal integer into *out. Returns 0 on success, -1 when s is
 * empty, has trailing characters or does not fit an int. */
int cli_parse_int(const char *s, int *out);

/* Open path, or return the standard stream when path is "-". On failure
 * prints "prog: cannot open PATH: reason" to stderr and returns NULL. */
FILE *cli_open(const char *prog, const char *path, const char *mode, FILE *std_stream);

/* Close a stream opened by cli_open (standard streams are flushed, not
 * closed). Returns 0, or -1 after printing a message when the write failed. */
int cli_close(const char *prog, const char *path, FILE *f);

/* Bytes of one I420 picture of width x height (chroma ceil(w/2) x ceil(h/2)). */
size_t cli_i420_size(int width, int height);

/* Read exactly n bytes unless the stream ends first; returns bytes read. */
size_t cli_read_full(FILE *f, void *buf, size_t n);

/* Monotonic clock in seconds. */
double cli_now(void);

#endif
