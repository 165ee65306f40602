/* Small helpers shared by the command-line tools (argument parsing, files,
 * clocks). Nothing here is part of libc63.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef C63_CLIUTIL_H
#define C63_CLIUTIL_H

#include <stddef.h>
#include <stdio.h>

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
