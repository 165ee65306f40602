/* Helpers shared by the command-line tools.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "cliutil.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "c63/c63.h"
#include "temp_cleanup.h"

int cli_parse_int(const char *s, int *out)
{
  char *end;
  long v;

  if (s == NULL || *s == '\0') return -1;
  errno = 0;
  v = strtol(s, &end, 10);
  if (end == s || *end != '\0') return -1;
  if (errno == ERANGE || v < INT_MIN || v > INT_MAX) return CLI_OUT_OF_RANGE;
  *out = (int)v;
  return 0;
}

int cli_open_std_fds(void)
{
  for (int fd = 0; fd <= 2; fd++) {
    if (fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    /* The lowest free descriptor: fd itself, as those below it are open. */
    const int got = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
    if (got != fd) {
      if (got >= 0) close(got);
      return -1;
    }
  }
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

int cli_cores(void)
{
  const long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n < 1 ? 1 : n > INT_MAX ? INT_MAX : (int)n;
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

/* The values c63_enc_params_validate accepts for each numeric option, to
 * name them when the number given does not even fit an int. */
typedef struct enc_option_range {
  int opt;
  const char *name;
  int lo, hi;
} enc_option_range;

static const enc_option_range enc_ranges[] = {
    {'w', "--width", C63_MIN_SIZE, C63_MAX_SIZE},
    {'h', "--height", C63_MIN_SIZE, C63_MAX_SIZE},
    {'q', "--quality", C63_MIN_QUALITY, C63_MAX_QUALITY},
    {'k', "--keyframe-interval", 0, INT_MAX},
    {'r', "--search-range", C63_MIN_SEARCH_RANGE, C63_MAX_SEARCH_RANGE},
    {'t', "--threads", 0, C63_MAX_THREADS},
    {'D', "--device", 0, INT_MAX},
    {'U', "--buffer", C63_MIN_BUFFER_MS, C63_MAX_BUFFER_MS},
    {'b', "--bitrate", C63_MIN_BITRATE_KBPS, C63_MAX_BITRATE_KBPS},
};

static const enc_option_range *enc_range(int opt)
{
  for (size_t i = 0; i < sizeof enc_ranges / sizeof enc_ranges[0]; i++)
    if (enc_ranges[i].opt == opt) return &enc_ranges[i];
  return NULL;
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
  const int r = cli_parse_int(arg, target);
  const enc_option_range *range = enc_range(opt);
  if (r == CLI_OUT_OF_RANGE && range != NULL) {
    snprintf(err, err_size, "%s %s is out of range (%d..%d)", range->name, arg, range->lo,
             range->hi);
    return -1;
  }
  if (r != 0) {
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

/* A standard output that is also the input (e.g. "c63-dec f.c63 - >>
 * f.c63" would read its own output) is refused: 2 after a message. */
static int open_standard_output(cli_output *o, const char *prog, FILE *in, const char *in_path)
{
  struct stat out_st, in_st;

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

/* The temporary's name for final: ".NAME.XXXXXX" in final's directory,
 * NAME cut short where the whole would pass the directory's name length
 * limit (the X's keep it unique). NULL when out of memory. */
static char *temp_name(const char *final, size_t dir_len)
{
  static const char suffix[] = ".XXXXXX";
  const char *base = final + dir_len;
  size_t base_len = strlen(base);
  char *dir = dir_len > 0 ? malloc(dir_len + 1) : NULL;
  long name_max = -1;

  if (dir != NULL) {
    memcpy(dir, final, dir_len);
    dir[dir_len] = '\0';
    name_max = pathconf(dir, _PC_NAME_MAX);
    free(dir);
  } else if (dir_len == 0) {
    name_max = pathconf(".", _PC_NAME_MAX);
  }
  if (name_max <= 0) name_max = NAME_MAX;
  if (base_len + sizeof suffix > (size_t)name_max) /* 1 + base + ".XXXXXX" */
    base_len = (size_t)name_max > sizeof suffix ? (size_t)name_max - sizeof suffix : 1;
  char *tmp = malloc(dir_len + 1 + base_len + sizeof suffix);
  if (tmp == NULL) return NULL;
  memcpy(tmp, final, dir_len);
  tmp[dir_len] = '.';
  memcpy(tmp + dir_len + 1, base, base_len);
  memcpy(tmp + dir_len + 1 + base_len, suffix, sizeof suffix);
  return tmp;
}

/* Why the temporary could not be created. A directory that may not be
 * written is named: the output itself may not even exist. */
static void report_create_error(const cli_output *o, const char *prog, size_t dir_len, int err,
                                int replacing)
{
  if (err == EACCES || err == EPERM || err == EROFS) {
    /* the directory without its final slash ("/" stays "/") */
    const int n = dir_len > 1 ? (int)dir_len - 1 : (int)dir_len;
    fprintf(stderr, "%s: cannot %s %s: directory %.*s is not writable: %s\n", prog,
            replacing ? "replace" : "create", o->path, n > 0 ? n : 1, n > 0 ? o->final_path : ".",
            strerror(err));
    return;
  }
  fprintf(stderr, "%s: cannot open %s: %s\n", prog, o->path, strerror(err));
}

/* Give the temporary fd an old file's owner and group, as a shell
 * redirect keeps them. Only root may give a file away: for another user
 * the file becomes theirs (as an editor's save makes it), in the old
 * group where they are a member of it. 0 when both were kept. */
static int keep_owner(int fd, const struct stat *old)
{
  if (old->st_uid == geteuid() && old->st_gid == getegid()) return 0;
  if (fchown(fd, old->st_uid, old->st_gid) == 0) return 0;
  return fchown(fd, (uid_t)-1, old->st_gid) == 0 && old->st_uid == geteuid() ? 0 : -1;
}

/* A regular file, or a new one: written under a temporary name in its
 * directory (rename is only atomic within one file system) and renamed
 * onto the output on success, so a failed run never leaves a file that
 * looks complete and never touches the old one. Returns 0, or 1 after a
 * message. */
static int open_temporary(cli_output *o, const char *prog, const struct stat *old)
{
  const char *slash = strrchr(o->final_path, '/');
  const size_t dir_len = slash ? (size_t)(slash - o->final_path) + 1 : 0;
  int fd, slot;

  o->tmp_path = temp_name(o->final_path, dir_len);
  if (o->tmp_path == NULL) {
    fprintf(stderr, "%s: out of memory\n", prog);
    return 1;
  }
  /* registered, so that a signal that ends the run removes it */
  fd = temp_cleanup_create(o->tmp_path, prog, o->path, &slot);
  if (fd < 0) {
    report_create_error(o, prog, dir_len, errno, old != NULL);
    free(o->tmp_path);
    o->tmp_path = NULL;
    return 1;
  }
  o->cleanup_id = slot + 1;
  /* mkstemp made it 0600: give it the mode fopen would have kept or
   * given. The owner first: chown clears the set-user-ID bits the mode may
   * set. */
  if (old != NULL) keep_owner(fd, old);
  if (fchmod(fd, new_file_mode(old)) != 0 || (o->f = fdopen(fd, "wb")) == NULL) {
    fprintf(stderr, "%s: cannot open %s: %s\n", prog, o->path, strerror(errno));
    close(fd);
    return 1;
  }
  return 0;
}

int cli_output_open(cli_output *o, const char *prog, const char *path, FILE *in,
                    const char *in_path)
{
  struct stat out_st, in_st;
  int have_out;
  char *resolved = NULL;

  memset(o, 0, sizeof *o);
  o->path = path;
  if (strcmp(path, "-") == 0) return open_standard_output(o, prog, in, in_path);

  /* stat follows links, so a symbolic or hard link to the input is the
   * input too: writing it would destroy what is being read. */
  have_out = stat(path, &out_st) == 0;
  if (!have_out && errno != ENOENT) { /* a name too long, a directory not searchable... */
    fprintf(stderr, "%s: cannot open %s: %s\n", prog, path, strerror(errno));
    return 1;
  }
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
  /* A file the user may not write (chmod a-w) is refused, as a shell
   * redirect would refuse it, although its directory would let a rename
   * replace it. The effective IDs decide, as they do for open. */
  if (have_out && faccessat(AT_FDCWD, path, W_OK, AT_EACCESS) != 0) {
    fprintf(stderr, "%s: cannot open %s: %s\n", prog, path, strerror(errno));
    return 1;
  }

  /* A symbolic link keeps pointing where it did: the file it names is the
   * one replaced. */
  if (have_out) resolved = realpath(path, NULL);
  o->final_path = dup_string(resolved != NULL ? resolved : path);
  free(resolved);
  if (o->final_path == NULL) {
    fprintf(stderr, "%s: out of memory\n", prog);
    return 1;
  }
  if (open_temporary(o, prog, have_out ? &out_st : NULL) != 0) {
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
  /* After the rename: a signal before it still finds the temporary. */
  temp_cleanup_forget(o->cleanup_id - 1);
  o->cleanup_id = 0;
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
  temp_cleanup_forget(o->cleanup_id - 1);
  o->cleanup_id = 0;
  free(o->tmp_path);
  free(o->final_path);
  o->tmp_path = o->final_path = NULL;
}

int cli_version(const char *prog, int argc, char **argv)
{
  for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
    if (strcmp(argv[i], "--version") == 0) {
      printf("%s (gst-c63) %s\n", prog, c63_version_string());
      return 1;
    }
  return 0;
}
