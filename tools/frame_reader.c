/* A reader thread over a ring of frame buffers (frame_reader.h).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "frame_reader.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "c63.h"
#include "cliutil.h"

struct frame_reader {
  FILE *in;
  size_t frame_size;
  long max_frames;
  int depth;
  uint8_t **buf;
  /* Frames [head, head + filled) of the ring are read and not released. */
  int head, filled;
  int done;       /* the reader read its last frame */
  int stop;       /* the caller asks the reader to stop */
  size_t partial; /* bytes of an incomplete last frame */
  int read_errno;
  pthread_mutex_t lock;
  pthread_cond_t cond;
  pthread_t thread;
};

static void *read_loop(void *arg)
{
  frame_reader *r = arg;
  for (long n = 0; r->max_frames < 0 || n < r->max_frames; n++) {
    pthread_mutex_lock(&r->lock);
    while (r->filled == r->depth && !r->stop)
      pthread_cond_wait(&r->cond, &r->lock);
    const int slot = (r->head + r->filled) % r->depth, stop = r->stop;
    pthread_mutex_unlock(&r->lock);
    if (stop) break;

    /* Only this thread touches a slot between release and filled++. */
    const size_t got = cli_read_full(r->in, r->buf[slot], r->frame_size);
    const int err = ferror(r->in) ? errno : 0;
    pthread_mutex_lock(&r->lock);
    if (got == r->frame_size) r->filled++;
    if (got < r->frame_size) {
      r->partial = got;
      r->read_errno = err;
    }
    pthread_cond_broadcast(&r->cond);
    pthread_mutex_unlock(&r->lock);
    if (got < r->frame_size) break;
  }
  pthread_mutex_lock(&r->lock);
  r->done = 1;
  pthread_cond_broadcast(&r->cond);
  pthread_mutex_unlock(&r->lock);
  return NULL;
}

static void free_reader(frame_reader *r)
{
  for (int i = 0; r->buf && i < r->depth; i++)
    c63_picture_memory_free(r->buf[i]);
  free(r->buf);
  free(r);
}

frame_reader *frame_reader_start(FILE *in, size_t frame_size, long max_frames, int depth)
{
  frame_reader *r = calloc(1, sizeof *r);
  if (!r) return NULL;
  r->in = in;
  r->frame_size = frame_size;
  r->max_frames = max_frames;
  r->depth = depth;
  r->buf = calloc((size_t)depth, sizeof *r->buf);
  for (int i = 0; r->buf && i < depth; i++)
    if (!(r->buf[i] = c63_picture_memory_alloc(frame_size))) {
      free_reader(r);
      return NULL;
    }
  if (!r->buf) {
    free_reader(r);
    return NULL;
  }
  pthread_mutex_init(&r->lock, NULL);
  pthread_cond_init(&r->cond, NULL);
  if (pthread_create(&r->thread, NULL, read_loop, r) != 0) {
    pthread_mutex_destroy(&r->lock);
    pthread_cond_destroy(&r->cond);
    free_reader(r);
    return NULL;
  }
  return r;
}

const uint8_t *frame_reader_next(frame_reader *r, size_t *partial, int *read_errno)
{
  const uint8_t *frame = NULL;
  pthread_mutex_lock(&r->lock);
  while (r->filled == 0 && !r->done)
    pthread_cond_wait(&r->cond, &r->lock);
  if (r->filled > 0) frame = r->buf[r->head];
  *partial = r->partial;
  *read_errno = r->read_errno;
  pthread_mutex_unlock(&r->lock);
  return frame;
}

void frame_reader_release(frame_reader *r)
{
  pthread_mutex_lock(&r->lock);
  if (r->filled > 0) {
    r->head = (r->head + 1) % r->depth;
    r->filled--;
  }
  pthread_cond_broadcast(&r->cond);
  pthread_mutex_unlock(&r->lock);
}

void frame_reader_stop(frame_reader *r)
{
  if (!r) return;
  pthread_mutex_lock(&r->lock);
  r->stop = 1;
  pthread_cond_broadcast(&r->cond);
  pthread_mutex_unlock(&r->lock);
  pthread_join(r->thread, NULL);
  pthread_mutex_destroy(&r->lock);
  pthread_cond_destroy(&r->cond);
  free_reader(r);
}
