/* mapped_output_open: a file allocated to its final size, written through
 * shared mappings by several threads at once (c63-farm's decoding workers,
 * each its range of the job's one output): the bytes land where they were
 * put, across the windows' boundaries; a put past the end fails with
 * EFBIG and writes nothing; the file keeps its size; a file that is empty,
 * or open for writing only, is refused (the caller then uses pwrite).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mapped_output.h"
#include "tutil.h"

/* Past one 32 MiB window, not a whole number of pages. */
#define SIZE (((size_t)40 << 20) + 12345)
#define THREADS 3

static uint8_t byte_at(size_t i)
{
  return (uint8_t)(i * 2654435761u >> 13);
}

typedef struct {
  mapped_output *m;
  int t;
  int err;
} put_arg;

/* Thread t puts every THREADS-th slice of 1 MiB + 7 bytes, so slices of
 * different threads meet inside windows and at their boundaries. */
static void *put_slices(void *p)
{
  put_arg *a = p;
  const size_t slice = ((size_t)1 << 20) + 7;
  uint8_t *buf = malloc(slice);
  for (size_t off = (size_t)a->t * slice; buf && off < SIZE && !a->err; off += THREADS * slice) {
    const size_t n = SIZE - off < slice ? SIZE - off : slice;
    for (size_t i = 0; i < n; i++)
      buf[i] = byte_at(off + i);
    a->err = mapped_output_put(a->m, off, buf, n);
  }
  if (!buf) a->err = ENOMEM;
  free(buf);
  return NULL;
}

int main(void)
{
  const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
  char path[4096];
  snprintf(path, sizeof path, "%s/test_mapped_output.XXXXXX", dir);
  int fd = mkstemp(path);
  TU_CHECK(fd >= 0, "mkstemp in %s", dir);
  if (fd < 0) return tu_finish("test_mapped_output");
  unlink(path);

  TU_CHECK(mapped_output_open(fd) == NULL, "an empty file is refused");
  TU_CHECK_EQ(posix_fallocate(fd, 0, (off_t)SIZE), 0);
  mapped_output *m = mapped_output_open(fd);
  TU_CHECK(m != NULL, "mapped_output_open of an allocated file");
  if (m) {
    pthread_t th[THREADS];
    put_arg args[THREADS];
    for (int t = 0; t < THREADS; t++) {
      args[t] = (put_arg){m, t, 0};
      pthread_create(&th[t], NULL, put_slices, &args[t]);
    }
    for (int t = 0; t < THREADS; t++) {
      pthread_join(th[t], NULL);
      TU_CHECK_EQ(args[t].err, 0);
    }
    const uint8_t x[2] = {1, 2};
    TU_CHECK_EQ(mapped_output_put(m, SIZE, x, 1), EFBIG);
    TU_CHECK_EQ(mapped_output_put(m, SIZE - 1, x, 2), EFBIG);
    TU_CHECK_EQ(mapped_output_finish(m, 0), 0);
  }
  struct stat st;
  TU_CHECK(fstat(fd, &st) == 0 && (size_t)st.st_size == SIZE, "the file keeps its size");
  uint8_t *back = malloc(SIZE);
  TU_CHECK(back && pread(fd, back, SIZE, 0) == (ssize_t)SIZE, "reading the file back");
  size_t wrong = 0;
  for (size_t i = 0; back && i < SIZE; i++)
    wrong += back[i] != byte_at(i);
  TU_CHECK(wrong == 0, "%zu bytes differ from those put", wrong);
  free(back);

  /* a mapping for writing needs the file open for reading too */
  char self[64];
  snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
  int wronly = open(self, O_WRONLY);
  if (wronly >= 0) {
    TU_CHECK(mapped_output_open(wronly) == NULL, "a file open for writing only is refused");
    close(wronly);
  }
  TU_CHECK(mapped_output_new(fd) == NULL, "mapped_output_new refuses a file that is not empty");
  close(fd);
  return tu_finish("test_mapped_output");
}
