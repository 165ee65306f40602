/* Reader threads over a ring of frame buffers (frame_reader.h).
 *
 * Frame k goes to slot k % depth. A regular file is read with pread by
 * several threads at once, each a whole frame at its offset (a single copy
 * out of the page cache is slower than the GPU encodes); a pipe or
 * terminal by one thread with fread, in order.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "frame_reader.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "c63/c63.h"
#include "cliutil.h"

typedef struct slot {
  uint8_t *buf;
  long frame; /* the frame it holds or is being read into, -1 when free */
  int ready;
} slot;

struct frame_reader {
  FILE *in;
  int fd;     /* >= 0: a regular file, read with pread */
  off_t base; /* its offset when reading started */
  size_t frame_size;
  long max_frames; /* < 0: no limit */
  int depth;
  int page_locked; /* the buffers are c63_picture_memory_alloc's */
  slot *slots;
  long next_read; /* the next frame a thread takes */
  long next_take; /* the next frame the caller gets */
  long next_out;  /* the oldest frame the caller has not released */
  long end;       /* frames that exist (LONG_MAX until known) */
  size_t partial; /* bytes of an incomplete last frame */
  int read_errno;
  int stop;
  int nthreads;
  pthread_t threads[FRAME_READER_MAX_THREADS];
  pthread_mutex_t lock;
  pthread_cond_t cond;
};

/* Read frame k into buf: the bytes read (less than a frame at the end). */
static size_t read_frame(frame_reader *r, long k, uint8_t *buf, int *err)
{
  if (r->fd < 0) { /* sequential: one thread, frames in order */
    size_t got = cli_read_full(r->in, buf, r->frame_size);
    *err = ferror(r->in) ? errno : 0;
    return got;
  }
  size_t got = 0;
  const off_t base = r->base + (off_t)k * (off_t)r->frame_size;
  while (got < r->frame_size) {
    ssize_t n = pread(r->fd, buf + got, r->frame_size - got, base + (off_t)got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      *err = n < 0 ? errno : 0;
      return got;
    }
    got += (size_t)n;
  }
  *err = 0;
  return got;
}

static void *read_loop(void *arg)
{
  frame_reader *r = arg;
  pthread_mutex_lock(&r->lock);
  for (;;) {
    const long k = r->next_read;
    slot *s = &r->slots[k % r->depth];
    if (r->stop || k >= r->end || (r->max_frames >= 0 && k >= r->max_frames)) break;
    if (s->frame >= 0) { /* the slot still holds an earlier frame */
      pthread_cond_wait(&r->cond, &r->lock);
      continue;
    }
    s->frame = k;
    s->ready = 0;
    r->next_read++;
    pthread_mutex_unlock(&r->lock);

    int err;
    const size_t got = read_frame(r, k, s->buf, &err);

    pthread_mutex_lock(&r->lock);
    if (got < r->frame_size && k < r->end) {
      /* the input ends in this frame: the frames after it do not exist */
      r->end = k;
      r->partial = got;
      r->read_errno = err;
    }
    s->ready = 1;
    pthread_cond_broadcast(&r->cond);
  }
  pthread_cond_broadcast(&r->cond);
  pthread_mutex_unlock(&r->lock);
  return NULL;
}

static void free_reader(frame_reader *r)
{
  for (int i = 0; r->slots && i < r->depth; i++) {
    if (r->page_locked)
      c63_picture_memory_free(r->slots[i].buf);
    else
      free(r->slots[i].buf);
  }
  free(r->slots);
  free(r);
}

frame_reader *frame_reader_new(size_t frame_size, int depth, int page_locked)
{
  frame_reader *r = calloc(1, sizeof *r);
  if (!r) return NULL;
  r->frame_size = frame_size;
  r->depth = depth;
  r->page_locked = page_locked;
  r->slots = calloc((size_t)depth, sizeof *r->slots);
  if (!r->slots) {
    free_reader(r);
    return NULL;
  }
  for (int i = 0; i < depth; i++)
    if (!(r->slots[i].buf = page_locked ? c63_picture_memory_alloc(frame_size)
                                        : aligned_alloc(64, (frame_size + 63) & ~(size_t)63))) {
      free_reader(r);
      return NULL;
    }
  pthread_mutex_init(&r->lock, NULL);
  pthread_cond_init(&r->cond, NULL);
  return r;
}

int frame_reader_begin(frame_reader *r, FILE *in, long max_frames, int threads)
{
  struct stat st;
  r->in = in;
  r->fd = fstat(fileno(in), &st) == 0 && S_ISREG(st.st_mode) ? fileno(in) : -1;
  /* stdin may be a file opened at some offset: frames start there */
  r->base = 0;
  if (r->fd >= 0 && (r->base = lseek(r->fd, 0, SEEK_CUR)) < 0) r->fd = -1;
  r->max_frames = max_frames;
  r->end = max_frames >= 0 ? max_frames : (long)(~0ul >> 1);
  r->next_read = r->next_take = r->next_out = 0;
  r->partial = 0;
  r->read_errno = 0;
  r->stop = 0;
  for (int i = 0; i < r->depth; i++)
    r->slots[i].frame = -1;
  if (threads > FRAME_READER_MAX_THREADS) threads = FRAME_READER_MAX_THREADS;
  if (threads > r->depth) threads = r->depth;
  const int want = r->fd >= 0 && threads > 1 ? threads : 1;
  for (r->nthreads = 0; r->nthreads < want; r->nthreads++)
    if (pthread_create(&r->threads[r->nthreads], NULL, read_loop, r) != 0) break;
  return r->nthreads > 0 ? 0 : -1;
}

frame_reader *frame_reader_start(FILE *in, size_t frame_size, long max_frames, int depth,
                                 int threads, int page_locked)
{
  frame_reader *r = frame_reader_new(frame_size, depth, page_locked);
  if (r && frame_reader_begin(r, in, max_frames, threads) != 0) {
    frame_reader_stop(r);
    return NULL;
  }
  return r;
}

long frame_reader_frames(const frame_reader *r)
{
  struct stat st;
  if (r->fd < 0 || fstat(r->fd, &st) != 0 || st.st_size < r->base) return -1;
  const long whole = (long)((st.st_size - r->base) / (off_t)r->frame_size);
  return r->max_frames >= 0 && r->max_frames < whole ? r->max_frames : whole;
}

const uint8_t *frame_reader_next(frame_reader *r, size_t *partial, int *read_errno)
{
  const uint8_t *frame = NULL;
  int held_all = 0;
  pthread_mutex_lock(&r->lock);
  for (;;) {
    slot *s = &r->slots[r->next_take % r->depth];
    if (r->next_take >= r->end) break;
    /* every buffer held by the caller: no frame could ever come */
    if ((held_all = r->next_take - r->next_out >= r->depth)) break;
    if (s->frame == r->next_take && s->ready) {
      frame = s->buf;
      r->next_take++;
      break;
    }
    pthread_cond_wait(&r->cond, &r->lock);
  }
  *partial = frame == NULL && !held_all ? r->partial : 0;
  *read_errno = held_all ? EDEADLK : frame == NULL ? r->read_errno : 0;
  pthread_mutex_unlock(&r->lock);
  return frame;
}

void frame_reader_release(frame_reader *r)
{
  if (!r) return;
  pthread_mutex_lock(&r->lock);
  slot *s = &r->slots[r->next_out % r->depth];
  if (r->next_out < r->next_take && s->frame == r->next_out) {
    s->frame = -1;
    r->next_out++;
  }
  pthread_cond_broadcast(&r->cond);
  pthread_mutex_unlock(&r->lock);
}

void frame_reader_end(frame_reader *r)
{
  if (!r) return;
  pthread_mutex_lock(&r->lock);
  r->stop = 1;
  pthread_cond_broadcast(&r->cond);
  pthread_mutex_unlock(&r->lock);
  for (int i = 0; i < r->nthreads; i++)
    pthread_join(r->threads[i], NULL);
  r->nthreads = 0;
}

void frame_reader_stop(frame_reader *r)
{
  if (!r) return;
  frame_reader_end(r);
  pthread_mutex_destroy(&r->lock);
  pthread_cond_destroy(&r->cond);
  free_reader(r);
}
