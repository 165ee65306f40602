/* Counting a stream file's frames in a thread (frame_count.h).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "frame_count.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "c63/c63.h"

/* Bytes read at a time; a frame longer than that grows the buffer. */
#define READ_BYTES ((size_t)4 << 20)

struct frame_count {
  int fd;
  off_t offset; /* of the next read */
  uint8_t *buf;
  size_t cap;
  atomic_long total; /* -1 until known */
  atomic_int stop;
  pthread_t thread;
  int joined;
};

/* Append up to READ_BYTES to buf[0..*len), growing it as needed. Returns
 * the bytes read (0 at the end), or -1 on an error. */
static ssize_t read_more(frame_count *c, size_t *len)
{
  if (c->cap - *len < READ_BYTES) {
    uint8_t *b = realloc(c->buf, c->cap * 2);
    if (!b) return -1;
    c->buf = b;
    c->cap *= 2;
  }
  ssize_t n;
  do
    n = pread(c->fd, c->buf + *len, READ_BYTES, c->offset);
  while (n < 0 && errno == EINTR);
  if (n > 0) {
    *len += (size_t)n;
    c->offset += n;
  }
  return n;
}

/* The frames of the file, or -1 when a read failed or counting stopped. */
static long count_frames(frame_count *c)
{
  c63_frame_scanner scanner;
  size_t pos = 0, len = 0;
  int at_end = 0;
  long frames = 0;

  c63_frame_scanner_init(&scanner);
  while (!atomic_load(&c->stop)) {
    c63_frame_scan_result res;
    const int ret = c63_frame_scan(&scanner, c->buf + pos, len - pos, at_end, &res);
    if (ret == C63_SCAN_NEED_DATA) {
      if (at_end) return frames;                /* cannot happen at the end (c63.h) */
      memmove(c->buf, c->buf + pos, len - pos); /* the frame under way to the front */
      len -= pos;
      pos = 0;
      const ssize_t n = read_more(c, &len);
      if (n < 0) return -1;
      at_end = n == 0;
      continue;
    }
    if (ret == C63_SCAN_FRAME)
      frames++;
    else if (ret != C63_SCAN_SKIP)
      return -1;
    pos += res.size;
    if (at_end && pos == len) return frames;
  }
  return -1;
}

static void *count_main(void *arg)
{
  frame_count *c = arg;
  atomic_store(&c->total, count_frames(c));
  return NULL;
}

frame_count *frame_count_start(FILE *in)
{
  struct stat st;
  const int fd = fileno(in);
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return NULL;
  frame_count *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->fd = fd;
  c->offset = lseek(fd, 0, SEEK_CUR);
  c->cap = 2 * READ_BYTES;
  c->buf = malloc(c->cap);
  atomic_init(&c->total, -1);
  atomic_init(&c->stop, 0);
  if (c->offset < 0 || !c->buf || pthread_create(&c->thread, NULL, count_main, c) != 0) {
    free(c->buf);
    free(c);
    return NULL;
  }
  return c;
}

long frame_count_total(frame_count *c)
{
  return c ? atomic_load(&c->total) : -1;
}

long frame_count_wait(frame_count *c)
{
  if (!c) return -1;
  if (!c->joined) pthread_join(c->thread, NULL);
  c->joined = 1;
  return frame_count_total(c);
}

void frame_count_stop(frame_count *c)
{
  if (!c) return;
  atomic_store(&c->stop, 1);
  if (!c->joined) pthread_join(c->thread, NULL);
  free(c->buf);
  free(c);
}
