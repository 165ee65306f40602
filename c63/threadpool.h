/* A small fixed pool of worker threads. It runs batches of n independent
 * tasks and waits for them (slices of a frame in parallel), and single tasks
 * in the background (whole frames the decoder entropy-decodes while it
 * reconstructs earlier ones). Batches go first: they are what a caller
 * waits for.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef C63_THREADPOOL_H
#define C63_THREADPOOL_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct c63_threadpool c63_threadpool;

/* threads: total workers including the caller; <= 1 gives a pool that runs
 * tasks on the calling thread. Returns NULL only when out of memory. */
c63_threadpool *c63_threadpool_new(int threads);
void c63_threadpool_free(c63_threadpool *pool);
int c63_threadpool_size(const c63_threadpool *pool);

/* The pool's size when a caller leaves it to the library (threads 0): one
 * thread per online core, at most `most`, or at most 16 for most 0. */
int c63_threadpool_default_size(int most);

/* Run fn(arg, i) for i in 0..n-1 and return when all have finished. One
 * batch at a time: calls must not overlap. */
void c63_threadpool_run(c63_threadpool *pool, void (*fn)(void *arg, int i), void *arg, int n);

/* A background task. The caller owns the struct; it must stay in place
 * until c63_task_wait has returned. The fields are the pool's. */
typedef struct c63_task {
  void (*fn)(void *arg);
  void (*fn_i)(void *arg, int i); /* instead of fn: one of c63_threadpool_submit_n's */
  void *arg;
  int i;
  struct c63_task *next;
  int state;
} c63_task;

/* Queue fn(arg) for a worker thread (in submission order). */
void c63_threadpool_submit(c63_threadpool *pool, c63_task *t, void (*fn)(void *arg), void *arg);
/* Queue fn(arg, i) for i in 0..n-1 as the background tasks tasks[i],
 * under one lock, waking up to n workers: c63_threadpool_run's batch for a
 * caller that does not wait for it (the slices of a picture copied while
 * the caller goes on). */
void c63_threadpool_submit_n(c63_threadpool *pool, c63_task *tasks, int n,
                             void (*fn)(void *arg, int i), void *arg);
/* Whether the task has finished (without waiting). */
int c63_task_done(c63_threadpool *pool, c63_task *t);
/* Wait until the task has finished; one that no worker has started yet
 * runs on the calling thread (so a pool without workers still works). A
 * task never submitted counts as finished. */
void c63_task_wait(c63_threadpool *pool, c63_task *t);

#ifdef __cplusplus
}
#endif

#endif
