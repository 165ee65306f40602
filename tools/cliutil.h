/* Small helpers shared by the command-line tools (argument parsing, files,
 * clocks). Nothing here is part of libc63.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef C63_CLIUTIL_H
#define C63_CLIUTIL_H

#include <stddef.h>
#include <stdio.h>

#include "c63/c63.h"

/* The encoder options that c63-enc and c63-bench share: put
 * CLI_ENC_OPTSTRING in the getopt string and CLI_ENC_LONG_OPTS in the long
 * option table, and hand every option to cli_enc_option first. */
#define CLI_ENC_OPTSTRING "w:h:q:k:r:t:m:b:"
#define CLI_ENC_LONG_OPTS                                                                          \
  {"width", required_argument, NULL, 'w'}, {"height", required_argument, NULL, 'h'},               \
      {"quality", required_argument, NULL, 'q'},                                                   \
      {"keyframe-interval", required_argument, NULL, 'k'},                                         \
      {"search-range", required_argument, NULL, 'r'}, {"threads", required_argument, NULL, 't'},   \
      {"backend", required_argument, NULL, 'B'}, {"mode", required_argument, NULL, 'm'},           \
      {"bitrate", required_argument, NULL, 'b'}, {"rate-control", required_argument, NULL, 'R'},   \
      {"buffer", required_argument, NULL, 'U'}, {"fps", required_argument, NULL, 'F'},             \
  {                                                                                                \
    "device", required_argument, NULL, 'D'                                                         \
  }

/* Apply option opt with value arg to p. Returns 1 when opt is an encoder
 * option, 0 when it is not, -1 (with a message in err) for a bad value.
 * Ranges are left to c63_enc_params_validate. */
int cli_enc_option(int opt, const char *arg, c63_enc_params *p, char *err, size_t err_size);

/* Open /dev/null on any of file descriptors 0, 1 and 2 that is closed, so
 * that the files a tool opens never get them: a message to standard error
 * would otherwise land inside the output (a tool started with 2>&-). Call
 * first in main, before anything is opened. Returns 0, or -1 when
 * /dev/null cannot be opened (the tool then exits with 1, silently). */
int cli_open_std_fds(void);

/* When argv holds --version (before any "--"), print "PROG (gst-c63)
 * VERSION" and return 1: the tool then exits with 0. */
int cli_version(const char *prog, int argc, char **argv);

/* Parse a whole decimal integer into *out. Returns 0 on success, -1 when s is
 * empty or has trailing characters, CLI_OUT_OF_RANGE when it is a whole
 * number that does not fit an int. */
#define CLI_OUT_OF_RANGE (-2)
int cli_parse_int(const char *s, int *out);

/* Open path, or return the standard stream when path is "-". On failure
 * prints "prog: cannot open PATH: reason" to stderr and returns NULL. */
FILE *cli_open(const char *prog, const char *path, const char *mode, FILE *std_stream);

/* Close a stream opened by cli_open (standard streams are flushed, not
 * closed). Returns 0, or -1 after printing a message when the write failed. */
int cli_close(const char *prog, const char *path, FILE *f);

/* An output file that only appears when the run succeeds. A regular file
 * (or a new one) is written under a temporary name in its directory and
 * renamed onto the output by cli_output_commit; cli_output_abort removes
 * the temporary, leaving an old output untouched, and so does a signal
 * that ends the program (temp_cleanup.h). An old file keeps its mode (and
 * owner and group, where the user may set them); one the user may not
 * write is refused. "-" (standard output), devices and FIFOs are written
 * directly, as a stream. */
typedef struct cli_output {
  FILE *f;          /* write here (or with cli_output_write) */
  const char *path; /* the name given, for messages */
  char *final_path; /* where the temporary goes (a symbolic link's target) */
  char *tmp_path;   /* the temporary file, NULL when writing directly */
  int reported;     /* a write error was already reported */
  int cleanup_id;   /* temp_cleanup.h's slot + 1; 0: none */
} cli_output;

/* Open the output path for a tool reading in (in_path, for messages).
 * Returns 0; 2 after a message when the output is the input itself (same
 * device and inode: the same name, a symbolic or a hard link), which would
 * destroy it; 1 after a message when it cannot be created. Call it before
 * the tool starts threads (temp_cleanup_create says why). */
int cli_output_open(cli_output *o, const char *prog, const char *path, FILE *in,
                    const char *in_path);

/* Print "error writing PATH: strerror(err)", unless a write error was
 * reported already: one message per output. */
void cli_output_report(cli_output *o, const char *prog, int err);

/* fwrite n bytes; returns 0, or -1 after printing "error writing PATH:
 * reason" (cli_output_commit and cli_output_abort then stay quiet). */
int cli_output_write(cli_output *o, const char *prog, const void *data, size_t n);

/* Flush and close the output and move it into place. Returns 0, or -1 after
 * one message and removing the temporary file. */
int cli_output_commit(cli_output *o, const char *prog);

/* Give up: close the output and remove its temporary file, silently. Safe
 * on a cli_output that failed to open or was already committed. */
void cli_output_abort(cli_output *o);

/* Bytes of one I420 picture of width x height (chroma ceil(w/2) x ceil(h/2)). */
size_t cli_i420_size(int width, int height);

/* Read exactly n bytes unless the stream ends first; returns bytes read. */
size_t cli_read_full(FILE *f, void *buf, size_t n);

/* Monotonic clock in seconds. */
double cli_now(void);

/* Cores online (at least 1). */
int cli_cores(void);

#endif
