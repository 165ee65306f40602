/* Pictures written in a thread of their own (frame_writer.h).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "frame_writer.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct slot {
  uint8_t *data;
  size_t cap, size;
} slot;

struct frame_writer {
  cli_output *out;
  const char *prog;
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t changed;
  slot *ring;
  int depth;
  int head, queued; /* oldest queued buffer; buffers queued */
  int done, failed;
};

static void *writer_main(void *arg)
{
  frame_writer *w = arg;
  pthread_mutex_lock(&w->lock);
  for (;;) {
    while (w->queued == 0 && !w->done)
      pthread_cond_wait(&w->changed, &w->lock);
    if (w->queued == 0) break;
    slot *s = &w->ring[w->head];
    int skip = w->failed;
    pthread_mutex_unlock(&w->lock);
    int bad = !skip && cli_output_write(w->out, w->prog, s->data, s->size) != 0;
    pthread_mutex_lock(&w->lock);
    if (bad) w->failed = 1;
    w->head = (w->head + 1) % w->depth;
    w->queued--;
    pthread_cond_broadcast(&w->changed);
  }
  pthread_mutex_unlock(&w->lock);
  return NULL;
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
  pthread_mutex_init(&w->lock, NULL);
  pthread_cond_init(&w->changed, NULL);
  if (pthread_create(&w->thread, NULL, writer_main, w) != 0) {
    pthread_cond_destroy(&w->changed);
    pthread_mutex_destroy(&w->lock);
    free(w->ring);
    free(w);
    return NULL;
  }
  return w;
}

uint8_t *frame_writer_buffer(frame_writer *w, size_t size)
{
  pthread_mutex_lock(&w->lock);
  while (w->queued == w->depth)
    pthread_cond_wait(&w->changed, &w->lock);
  slot *s = &w->ring[(w->head + w->queued) % w->depth];
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
  pthread_mutex_lock(&w->lock);
  w->ring[(w->head + w->queued) % w->depth].size = size;
  w->queued++;
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
  pthread_join(w->thread, NULL);
  int failed = w->failed;
  for (int i = 0; i < w->depth; i++)
    free(w->ring[i].data);
  free(w->ring);
  pthread_cond_destroy(&w->changed);
  pthread_mutex_destroy(&w->lock);
  free(w);
  return failed ? -1 : 0;
}
