/* Fixed thread pool: workers wait on a condition variable for a batch of
 * tasks, take indices from a shared counter, and the caller takes part too.
 * Between batches they run background tasks from a FIFO queue.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "threadpool.h"

#include <pthread.h>
#include <stdlib.h>

struct c63_threadpool {
  pthread_mutex_t lock;
  pthread_cond_t work, done;
  pthread_t *threads;
  int nthreads; /* workers besides the caller */
  void (*fn)(void *, int);
  void *arg;
  int next, n, running; /* next task index, tasks in batch, tasks not finished */
  unsigned generation;
  int quit;
  c63_task *queue_head, *queue_tail; /* background tasks not started */
  pthread_cond_t task_done;
};

enum { TASK_QUEUED = 1, TASK_RUNNING, TASK_DONE };

/* Take and run tasks of the current batch until none are left. Called with
 * the lock held; returns with it held. */
static void run_tasks(c63_threadpool *p)
{
  while (p->next < p->n) {
    int i = p->next++;
    pthread_mutex_unlock(&p->lock);
    p->fn(p->arg, i);
    pthread_mutex_lock(&p->lock);
    if (--p->running == 0) pthread_cond_broadcast(&p->done);
  }
}

static c63_task *pop_task(c63_threadpool *p)
{
  c63_task *t = p->queue_head;
  p->queue_head = t->next;
  if (!p->queue_head) p->queue_tail = NULL;
  t->next = NULL;
  return t;
}

/* Run a background task taken off the queue. Called with the lock held;
 * returns with it held. */
static void run_task(c63_threadpool *p, c63_task *t)
{
  t->state = TASK_RUNNING;
  pthread_mutex_unlock(&p->lock);
  if (t->fn_i)
    t->fn_i(t->arg, t->i);
  else
    t->fn(t->arg);
  pthread_mutex_lock(&p->lock);
  t->state = TASK_DONE;
  pthread_cond_broadcast(&p->task_done);
}

static void *worker(void *data)
{
  c63_threadpool *p = data;
  unsigned seen = 0;
#ifdef __GLIBC__
  /* a name of its own, so per-thread profiles tell the pool from its caller */
  pthread_setname_np(pthread_self(), "c63-pool");
#endif
  pthread_mutex_lock(&p->lock);
  for (;;) {
    while (!p->quit && p->generation == seen && !p->queue_head)
      pthread_cond_wait(&p->work, &p->lock);
    if (p->quit) break;
    if (p->generation != seen) {
      seen = p->generation;
      run_tasks(p);
    } else {
      run_task(p, pop_task(p));
    }
  }
  pthread_mutex_unlock(&p->lock);
  return NULL;
}

c63_threadpool *c63_threadpool_new(int threads)
{
  c63_threadpool *p = calloc(1, sizeof(*p));
  if (!p) return NULL;
  pthread_mutex_init(&p->lock, NULL);
  pthread_cond_init(&p->work, NULL);
  pthread_cond_init(&p->done, NULL);
  pthread_cond_init(&p->task_done, NULL);
  if (threads > 1) p->threads = calloc((size_t)threads - 1, sizeof(pthread_t));
  for (int i = 0; p->threads && i < threads - 1; i++) {
    if (pthread_create(&p->threads[i], NULL, worker, p) != 0) break;
    p->nthreads++;
  }
  return p; /* fewer workers than asked is still a working pool */
}

void c63_threadpool_free(c63_threadpool *p)
{
  if (!p) return;
  pthread_mutex_lock(&p->lock);
  p->quit = 1;
  pthread_cond_broadcast(&p->work);
  pthread_mutex_unlock(&p->lock);
  for (int i = 0; i < p->nthreads; i++)
    pthread_join(p->threads[i], NULL);
  free(p->threads);
  pthread_cond_destroy(&p->work);
  pthread_cond_destroy(&p->done);
  pthread_cond_destroy(&p->task_done);
  pthread_mutex_destroy(&p->lock);
  free(p);
}

int c63_threadpool_size(const c63_threadpool *p)
{
  return p->nthreads + 1;
}

void c63_threadpool_run(c63_threadpool *p, void (*fn)(void *arg, int i), void *arg, int n)
{
  pthread_mutex_lock(&p->lock);
  p->fn = fn;
  p->arg = arg;
  p->next = 0;
  p->n = n;
  p->running = n;
  p->generation++;
  pthread_cond_broadcast(&p->work);
  run_tasks(p);
  while (p->running > 0)
    pthread_cond_wait(&p->done, &p->lock);
  pthread_mutex_unlock(&p->lock);
}

/* Append t, whose function and argument are set, to the queue. Called
 * with the lock held. */
static void enqueue(c63_threadpool *p, c63_task *t)
{
  t->next = NULL;
  t->state = TASK_QUEUED;
  if (p->queue_tail)
    p->queue_tail->next = t;
  else
    p->queue_head = t;
  p->queue_tail = t;
}

void c63_threadpool_submit(c63_threadpool *p, c63_task *t, void (*fn)(void *arg), void *arg)
{
  t->fn = fn;
  t->fn_i = NULL;
  t->arg = arg;
  pthread_mutex_lock(&p->lock);
  enqueue(p, t);
  pthread_cond_signal(&p->work);
  pthread_mutex_unlock(&p->lock);
}

void c63_threadpool_submit_n(c63_threadpool *p, c63_task *tasks, int n,
                             void (*fn)(void *arg, int i), void *arg)
{
  for (int i = 0; i < n; i++) {
    tasks[i].fn = NULL;
    tasks[i].fn_i = fn;
    tasks[i].arg = arg;
    tasks[i].i = i;
  }
  pthread_mutex_lock(&p->lock);
  /* a worker a task: the others would only wake to find the queue empty */
  for (int i = 0; i < n; i++) {
    enqueue(p, &tasks[i]);
    pthread_cond_signal(&p->work);
  }
  pthread_mutex_unlock(&p->lock);
}

int c63_task_done(c63_threadpool *p, c63_task *t)
{
  pthread_mutex_lock(&p->lock);
  int done = t->state == TASK_DONE;
  pthread_mutex_unlock(&p->lock);
  return done;
}

void c63_task_wait(c63_threadpool *p, c63_task *t)
{
  pthread_mutex_lock(&p->lock);
  if (t->state == TASK_QUEUED) {
    /* Not started: take it out of the queue and run it here. */
    c63_task **link = &p->queue_head, *prev = NULL;
    while (*link != t) {
      prev = *link;
      link = &(*link)->next;
    }
    *link = t->next;
    if (p->queue_tail == t) p->queue_tail = prev;
    t->next = NULL;
    run_task(p, t);
  }
  while (t->state == TASK_RUNNING)
    pthread_cond_wait(&p->task_done, &p->lock);
  pthread_mutex_unlock(&p->lock);
}
