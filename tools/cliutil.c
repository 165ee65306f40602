/* Helpers shared by the command-line tools.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "cliutil.h"

#include "c63-config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

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
  if (f == NULL) {
    fprintf(stderr, "%s: cannot open %s: %s\n", prog, path, strerror(errno));
    return NULL;
  }
  /* fopen opens a directory for reading on Linux and only the first read
   * fails: say why now, before any output is created. */
  if (mode[0] == 'r') {
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
      fprintf(stderr, "%s: cannot read %s: %s\n", prog, path, strerror(EISDIR));
      fclose(f);
      return NULL;
    }
  }
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

/* An option that names one of two values: *second = whether it is the
 * second; returns 1, or -1 with a message. */
static int name_option(const char *arg, const char *what, const char *name0, const char *name1,
                       int *second, char *err, size_t err_size)
{
  if (strcmp(arg, name0) == 0 || strcmp(arg, name1) == 0) {
    *second = strcmp(arg, name1) == 0;
    return 1;
  }
  snprintf(err, err_size, "unknown %s '%s' (expected %s or %s)", what, arg, name0, name1);
  return -1;
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
  case 'U':
    target = &p->buffer_ms;
    break;
  case 'b':
    /* a bitrate alone means an average bitrate */
    if (p->rate_control == C63_RC_QUALITY) p->rate_control = C63_RC_ABR;
    target = &p->bitrate;
    break;
  case 'R':
    if (strcmp(arg, "quality") == 0)
      p->rate_control = C63_RC_QUALITY;
    else if (strcmp(arg, "abr") == 0)
      p->rate_control = C63_RC_ABR;
    else if (strcmp(arg, "cbr") == 0)
      p->rate_control = C63_RC_CBR;
    else {
      snprintf(err, err_size, "unknown rate control '%s' (expected quality, abr or cbr)", arg);
      return -1;
    }
    return 1;
  case 'F': {
    /* N or N/D frames per second */
    char num[32];
    const char *slash = strchr(arg, '/');
    const size_t n = slash ? (size_t)(slash - arg) : strlen(arg);
    int bad = n >= sizeof num;
    if (!bad) {
      memcpy(num, arg, n);
      num[n] = '\0';
      p->fps_den = 1;
      bad = cli_parse_int(num, &p->fps_num) != 0 ||
            (slash != NULL && cli_parse_int(slash + 1, &p->fps_den) != 0);
    }
    if (bad) {
      snprintf(err, err_size, "'%s' is not a framerate (N or N/D)", arg);
      return -1;
    }
    return 1;
  }
  case 'B':
  case 'm': {
    const int mode = opt == 'm';
    int second;
    if (name_option(arg, mode ? "mode" : "backend", mode ? "exact" : "cpu", mode ? "rd" : "cuda",
                    &second, err, err_size) < 0)
      return -1;
    if (mode)
      p->mode = second ? C63_MODE_RD : C63_MODE_EXACT;
    else
      p->backend = second ? C63_BACKEND_CUDA : C63_BACKEND_CPU;
    return 1;
  }
  default:
    return 0;
  }
  if (cli_parse_int(arg, target) != 0) {
    snprintf(err, err_size, "'%s' is not a whole number", arg);
    return -1;
  }
  return 1;
}

/* A copy of s, or NULL. */
static char *dup_string(const char *s)
{
  size_t n = strlen(s) + 1;
  char *d = malloc(n);

  if (d != NULL) memcpy(d, s, n);
  return d;
}

/* The mode a file created by fopen(path, "w") would get: the old file's
 * when it is replaced, else 0666 less the umask. */
static mode_t new_file_mode(const struct stat *old)
{
  mode_t mask;

  if (old != NULL) return old->st_mode & 07777;
  mask = umask(0);
  umask(mask);
  return 0666 & ~mask;
}

int cli_output_open(cli_output *o, const char *prog, const char *path, FILE *in,
                    const char *in_path)
{
  struct stat out_st, in_st;
  int have_out, fd;
  const char *target = path, *slash, *base;
  char *resolved = NULL;
  size_t dir_len;

  memset(o, 0, sizeof *o);
  o->path = path;
  if (strcmp(path, "-") == 0) {
    /* Standard output streams; still refuse a regular file that is also
     * the input (e.g. "c63-dec f.c63 - >> f.c63" would read its own output). */
    if (fstat(STDOUT_FILENO, &out_st) == 0 && S_ISREG(out_st.st_mode) &&
        fstat(fileno(in), &in_st) == 0 && out_st.st_dev == in_st.st_dev &&
        out_st.st_ino == in_st.st_ino) {
      fprintf(stderr, "%s: the output (standard output) is the input %s\n", prog, in_path);
      return 2;
    }
    o->path = "standard output";
    o->f = stdout;
    return 0;
  }

  /* stat follows links, so a symbolic or hard link to the input is the
   * input too: writing it would destroy what is being read. */
  have_out = stat(path, &out_st) == 0;
  if (have_out && fstat(fileno(in), &in_st) == 0 && out_st.st_dev == in_st.st_dev &&
      out_st.st_ino == in_st.st_ino) {
    fprintf(stderr, "%s: the output %s is the input %s\n", prog, path, in_path);
    return 2;
  }

  /* Devices and FIFOs (/dev/null, /dev/full, a named pipe) are written
   * directly: there is no file to replace, and renaming over /dev/null
   * would be a disaster. Directories fail here with their reason. */
  if (have_out && !S_ISREG(out_st.st_mode)) {
    o->f = fopen(path, "wb");
    if (o->f == NULL) {
      fprintf(stderr, "%s: cannot open %s: %s\n", prog, path, strerror(errno));
      return 1;
    }
    return 0;
  }

  /* A regular file, or a new one: write to a temporary name in the same
   * directory (rename is only atomic within one file system) and rename it
   * onto the output on success, so a failed run never leaves a file that
   * looks complete and never touches the old one. A symbolic link keeps
   * pointing where it did: the file it names is the one replaced. */
  if (have_out) {
    resolved = realpath(path, NULL);
    if (resolved != NULL) target = resolved;
  }
  o->final_path = dup_string(target);
  free(resolved);
  if (o->final_path == NULL) {
    fprintf(stderr, "%s: out of memory\n", prog);
    return 1;
  }
  slash = strrchr(o->final_path, '/');
  base = slash ? slash + 1 : o->final_path;
  dir_len = slash ? (size_t)(slash - o->final_path) + 1 : 0;
  o->tmp_path = malloc(dir_len + 1 + strlen(base) + sizeof ".XXXXXX");
  if (o->tmp_path == NULL) {
    fprintf(stderr, "%s: out of memory\n", prog);
    cli_output_abort(o);
    return 1;
  }
  memcpy(o->tmp_path, o->final_path, dir_len);
  sprintf(o->tmp_path + dir_len, ".%s.XXXXXX", base);
  fd = mkstemp(o->tmp_path);
  if (fd < 0) {
    /* Name the output, not the temporary: that is what the user gave. */
    fprintf(stderr, "%s: cannot open %s: %s\n", prog, path, strerror(errno));
    free(o->tmp_path);
    o->tmp_path = NULL;
    cli_output_abort(o);
    return 1;
  }
  /* mkstemp makes the file 0600; give it the mode fopen would have. */
  if (fchmod(fd, new_file_mode(have_out ? &out_st : NULL)) != 0 ||
      (o->f = fdopen(fd, "wb")) == NULL) {
    fprintf(stderr, "%s: cannot open %s: %s\n", prog, path, strerror(errno));
    close(fd);
    cli_output_abort(o);
    return 1;
  }
  return 0;
}

void cli_output_report(cli_output *o, const char *prog, int err)
{
  if (!o->reported) fprintf(stderr, "%s: error writing %s: %s\n", prog, o->path, strerror(err));
  o->reported = 1;
}

int cli_output_write(cli_output *o, const char *prog, const void *data, size_t n)
{
  if (fwrite(data, 1, n, o->f) == n) return 0;
  cli_output_report(o, prog, errno);
  return -1;
}

int cli_output_commit(cli_output *o, const char *prog)
{
  int failed, err;

  /* ferror catches earlier short writes; fflush/fclose catch buffered ones
   * (e.g. a full disk), which would otherwise pass silently. */
  failed = ferror(o->f) != 0;
  err = errno;
  if ((o->f == stdout ? fflush(o->f) : fclose(o->f)) != 0) {
    failed = 1;
    err = errno;
  }
  o->f = NULL;
  if (!failed && o->tmp_path != NULL && rename(o->tmp_path, o->final_path) != 0) {
    failed = 1;
    err = errno;
  }
  if (failed) {
    cli_output_report(o, prog, err);
    cli_output_abort(o);
    return -1;
  }
  free(o->tmp_path);
  free(o->final_path);
  o->tmp_path = o->final_path = NULL;
  return 0;
}

void cli_output_abort(cli_output *o)
{
  if (o->f != NULL && o->f != stdout) fclose(o->f);
  o->f = NULL;
  if (o->tmp_path != NULL) unlink(o->tmp_path);
  free(o->tmp_path);
  free(o->final_path);
  o->tmp_path = o->final_path = NULL;
}

int cli_version(const char *prog, int argc, char **argv)
{
  for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
    if (strcmp(argv[i], "--version") == 0) {
      printf("%s (gst-c63) %s\n", prog, C63_VERSION);
      return 1;
    }
  return 0;
}
