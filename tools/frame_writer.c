/* Pictures written by threads of their own (frame_writer.h).
 *
 * A regular output file (c63-dec's temporary) is written through shared
 * mappings by several threads, each picture at its own offset
 * (mapped_output.h says why). Anything else (standard output, a pipe, a
 * device) is written by one thread with write(), in order: pwrite from
 * several threads gains nothing there, since the kernel takes the file's
 * lock for each.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "frame_writer.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "mapped_output.h"

#define MAX_MAP_THREADS 8
#define WRITER_STACK ((size_t)256 << 10)

enum { SLOT_FREE, SLOT_QUEUED, SLOT_WRITING };

typedef struct slot {
  uint8_t *data;
  size_t cap, size;
  uint64_t offset; /* in the output */
  int state;
} slot;

struct frame_writer {
  cli_output *out;
  const char *prog;
  mapped_output *map; /* NULL: write() in order, one thread */
  pthread_t threads[MAX_MAP_THREADS];
  int n_threads;
  pthread_mutex_t lock;
  pthread_cond_t changed;
  slot *ring;
  int depth;
  int next_fill, next_write; /* ring positions */
  uint64_t queued_bytes;     /* the output's size once all is written */
  int done, failed;
};

/* Write one slot; 0, or -1 after the message (once for the writer). */
static int write_slot(frame_writer *w, const slot *s)
{
  if (!w->map) return cli_output_write(w->out, w->prog, s->data, s->size);
  const int err = mapped_output_put(w->map, s->offset, s->data, s->size);
  if (err == 0) return 0;
  pthread_mutex_lock(&w->lock); /* several threads may fail at once */
  cli_output_report(w->out, w->prog, err);
  pthread_mutex_unlock(&w->lock);
  return -1;
}

/* Each thread takes the next queued slot; with one thread (write()) that
 * keeps the order, with several each picture goes to its own offset. */
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
    int bad = !skip && write_slot(w, s) != 0;
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

/* Stop the threads after everything queued is written. */
static void join_threads(frame_writer *w)
{
  pthread_mutex_lock(&w->lock);
  w->done = 1;
  pthread_cond_broadcast(&w->changed);
  pthread_mutex_unlock(&w->lock);
  for (int i = 0; i < w->n_threads; i++)
    pthread_join(w->threads[i], NULL);
  w->n_threads = 0;
}

frame_writer *frame_writer_start(cli_output *out, const char *prog, int depth, int threads)
{
  frame_writer *w = calloc(1, sizeof *w);
  if (!w) return NULL;
  if (threads > MAX_MAP_THREADS) threads = MAX_MAP_THREADS;
  if (threads > 1 && out->tmp_path != NULL) w->map = mapped_output_new(fileno(out->f));
  if (w->map) {
    if (depth < 2 * threads) depth = 2 * threads; /* a picture each, and as many filling */
  } else {
    threads = 1;
  }
  w->ring = calloc((size_t)depth, sizeof *w->ring);
  if (!w->ring) {
    mapped_output_finish(w->map, 0);
    free(w);
    return NULL;
  }
  w->out = out;
  w->prog = prog;
  w->depth = depth;
  pthread_mutex_init(&w->lock, NULL);
  pthread_cond_init(&w->changed, NULL);
  /* The threads only copy and print: a small stack each keeps c63-dec
   * within small address-space limits (ulimit -v) as well. */
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, WRITER_STACK);
  for (int i = 0; i < threads; i++) {
    if (pthread_create(&w->threads[i], &attr, writer_main, w) != 0) break;
    w->n_threads++;
  }
  pthread_attr_destroy(&attr);
  if (w->n_threads == 0) {
    mapped_output_finish(w->map, 0);
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
  s->offset = w->queued_bytes;
  w->queued_bytes += size;
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
  join_threads(w);
  int failed = w->failed;
  if (w->map) {
    /* The file grew ahead of the pictures: cut it to what was written. */
    const int err = mapped_output_finish(w->map, failed ? 0 : w->queued_bytes);
    if (err != 0 && !failed) {
      cli_output_report(w->out, w->prog, err);
      failed = 1;
    }
  }
  free_writer(w);
  return failed ? -1 : 0;
}
