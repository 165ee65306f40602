/* Pictures written in threads of their own (frame_writer.h).
 *
 * A file the tool created (written under a temporary name) is written by
 * several threads with pwrite, each picture at its own offset: one thread
 * copying into tmpfs pages manages about 2 GB/s, less than the GPU decoder
 * gives at 1080p. Anything else (standard output, a pipe) is written in
 * order by one thread.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "frame_writer.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_THREADS 4

enum { SLOT_FREE, SLOT_QUEUED, SLOT_WRITING };

typedef struct slot {
  uint8_t *data;
  size_t cap, size;
  unsigned long long offset;
  int state;
} slot;

struct frame_writer {
  cli_output *out;
  const char *prog;
  int fd;      /* for pwrite; -1: in order through out */
  int threads; /* started */
  pthread_t thread[MAX_THREADS];
  pthread_mutex_t lock;
  pthread_cond_t changed;
  slot *ring;
  int depth;
  int next_fill, next_write; /* ring positions */
  unsigned long long offset; /* of the next picture queued */
  int done, failed;
};

/* Write all of a picture at its offset. Returns 0 or an errno. */
static int write_at(int fd, const uint8_t *p, size_t n, unsigned long long off)
{
  while (n > 0) {
    ssize_t r = pwrite(fd, p, n, (off_t)off);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return errno;
    if (r == 0) return EIO;
    p += r;
    n -= (size_t)r;
    off += (unsigned long long)r;
  }
  return 0;
}

static void *writer_main(void *arg)
{
  frame_writer *w = arg;
  pthread_mutex_lock(&w->lock);
  for (;;) {
    slot *s = &w->ring[w->next_write];
    while (s->state != SLOT_QUEUED && !w->done) {
      pthread_cond_wait(&w->changed, &w->lock);
      s = &w->ring[w->next_write];
    }
    if (s->state != SLOT_QUEUED) break; /* done, and nothing left */
    s->state = SLOT_WRITING;
    w->next_write = (w->next_write + 1) % w->depth;
    int skip = w->failed, err = 0;
    pthread_mutex_unlock(&w->lock);
    if (skip)
      err = 0;
    else if (w->fd >= 0)
      err = write_at(w->fd, s->data, s->size, s->offset);
    else if (cli_output_write(w->out, w->prog, s->data, s->size) != 0)
      err = -1; /* reported */
    pthread_mutex_lock(&w->lock);
    if (err && !w->failed) {
      w->failed = 1;
      if (err > 0)
        fprintf(stderr, "%s: error writing %s: %s\n", w->prog, w->out->path, strerror(err));
      w->out->reported = 1;
    }
    s->state = SLOT_FREE;
    pthread_cond_broadcast(&w->changed);
  }
  pthread_mutex_unlock(&w->lock);
  return NULL;
}

static void free_writer(frame_writer *w)
{
  for (int i = 0; i < w->depth; i++)
    free(w->ring[i].data);
  free(w->ring);
  pthread_cond_destroy(&w->changed);
  pthread_mutex_destroy(&w->lock);
  free(w);
}

frame_writer *frame_writer_start(cli_output *out, const char *prog, int depth)
{
  frame_writer *w = calloc(1, sizeof *w);
  if (!w) return NULL;
  w->ring = calloc((size_t)depth, sizeof *w->ring);
  if (!w->ring) {
    free(w);
    return NULL;
  }
  w->out = out;
  w->prog = prog;
  w->depth = depth;
  w->fd = -1;
  pthread_mutex_init(&w->lock, NULL);
  pthread_cond_init(&w->changed, NULL);
  int want = 1;
  if (out->tmp_path && fflush(out->f) == 0) {
    /* Our own new file, empty so far: pictures go at their offsets. */
    w->fd = fileno(out->f);
    want = depth - 1 < MAX_THREADS ? depth - 1 : MAX_THREADS;
    if (want < 1) want = 1;
  }
  for (; w->threads < want; w->threads++)
    if (pthread_create(&w->thread[w->threads], NULL, writer_main, w) != 0) break;
  if (w->threads == 0) {
    free_writer(w);
    return NULL;
  }
  return w;
}

uint8_t *frame_writer_buffer(frame_writer *w, size_t size)
{
  slot *s = &w->ring[w->next_fill];
  pthread_mutex_lock(&w->lock);
  while (s->state != SLOT_FREE)
    pthread_cond_wait(&w->changed, &w->lock);
  pthread_mutex_unlock(&w->lock);
  if (size > s->cap) {
    free(s->data);
    s->cap = 0;
    s->data = malloc(size);
    if (!s->data) {
      fprintf(stderr, "%s: out of memory for a %zu-byte picture\n", w->prog, size);
      return NULL;
    }
    s->cap = size;
  }
  return s->data;
}

int frame_writer_queue(frame_writer *w, size_t size)
{
  slot *s = &w->ring[w->next_fill];
  pthread_mutex_lock(&w->lock);
  s->size = size;
  s->offset = w->offset;
  s->state = SLOT_QUEUED;
  w->offset += size;
  w->next_fill = (w->next_fill + 1) % w->depth;
  int failed = w->failed;
  pthread_cond_broadcast(&w->changed);
  pthread_mutex_unlock(&w->lock);
  return failed ? -1 : 0;
}

int frame_writer_finish(frame_writer *w)
{
  if (!w) return 0;
  pthread_mutex_lock(&w->lock);
  w->done = 1;
  pthread_cond_broadcast(&w->changed);
  pthread_mutex_unlock(&w->lock);
  for (int i = 0; i < w->threads; i++)
    pthread_join(w->thread[i], NULL);
  int failed = w->failed;
  free_writer(w);
  return failed ? -1 : 0;
}
