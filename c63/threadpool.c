/* Fixed thread pool: workers wait for a batch of tasks, take indices from
 * a shared counter, and the caller takes part too. Between batches they
 * run background tasks from a FIFO queue.
 *
 * An idle worker waits on a condition variable of its own, on a stack of
 * idle workers. A background task wakes the worker on top, the one idle
 * for the shortest time: its core is the likeliest to be awake and its
 * caches warm, so a short task (a slice of a picture copied) starts
 * soonest, and the rest of the pool sleeps on. The one idle longest
 * (whom a shared condition variable's signal wakes) is the likeliest to
 * be on a sleeping core; waking every worker for a few tasks sends most of
 * them back to sleep.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "threadpool.h"

#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

typedef struct pool_worker {
  struct c63_threadpool *pool;
  pthread_cond_t wake;
  int idle; /* on the idle stack; whoever takes it off clears this */
  pthread_t thread;
} pool_worker;

struct c63_threadpool {
  pthread_mutex_t lock;
  pthread_cond_t done;
  pool_worker *workers;
  pool_worker **idle; /* stack of idle workers, the latest on top */
  int nidle;
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

/* Wake the worker idle for the shortest time, if any is. Called with the
 * lock held. */
static void wake_one(c63_threadpool *p)
{
  if (p->nidle == 0) return;
  pool_worker *w = p->idle[--p->nidle];
  w->idle = 0;
  pthread_cond_signal(&w->wake);
}

/* Sleep on the idle stack until woken. Called with the lock held. */
static void wait_idle(c63_threadpool *p, pool_worker *w)
{
  w->idle = 1;
  p->idle[p->nidle++] = w;
  while (w->idle)
    pthread_cond_wait(&w->wake, &p->lock);
}

static void *worker(void *data)
{
  pool_worker *w = data;
  c63_threadpool *p = w->pool;
  unsigned seen = 0;
#ifdef __GLIBC__
  /* a name of its own, so per-thread profiles tell the pool from its caller */
  pthread_setname_np(pthread_self(), "c63-pool");
#endif
  pthread_mutex_lock(&p->lock);
  while (!p->quit) {
    if (p->generation != seen) {
      seen = p->generation;
      run_tasks(p);
    } else if (p->queue_head) {
      run_task(p, pop_task(p));
    } else {
      wait_idle(p, w);
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
  pthread_cond_init(&p->done, NULL);
  pthread_cond_init(&p->task_done, NULL);
  if (threads > 1) {
    p->workers = calloc((size_t)threads - 1, sizeof(*p->workers));
    p->idle = calloc((size_t)threads - 1, sizeof(*p->idle));
  }
  for (int i = 0; p->workers && p->idle && i < threads - 1; i++) {
    pool_worker *w = &p->workers[i];
    w->pool = p;
    pthread_cond_init(&w->wake, NULL);
    if (pthread_create(&w->thread, NULL, worker, w) != 0) {
      pthread_cond_destroy(&w->wake);
      break;
    }
    p->nthreads++;
  }
  return p; /* fewer workers than asked is still a working pool */
}

void c63_threadpool_free(c63_threadpool *p)
{
  if (!p) return;
  pthread_mutex_lock(&p->lock);
  p->quit = 1;
  while (p->nidle > 0)
    wake_one(p);
  pthread_mutex_unlock(&p->lock);
  for (int i = 0; i < p->nthreads; i++) {
    pthread_join(p->workers[i].thread, NULL);
    pthread_cond_destroy(&p->workers[i].wake);
  }
  free(p->workers);
  free(p->idle);
  pthread_cond_destroy(&p->done);
  pthread_cond_destroy(&p->task_done);
  pthread_mutex_destroy(&p->lock);
  free(p);
}

int c63_threadpool_size(const c63_threadpool *p)
{
  return p->nthreads + 1;
}

int c63_threadpool_default_size(int most)
{
  if (most <= 0) most = 16;
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  return cores < 1 ? 1 : cores > most ? most : (int)cores;
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
  for (int k = 1; k < n && p->nidle > 0; k++) /* the caller takes one */
    wake_one(p);
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
  wake_one(p);
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
  for (int i = 0; i < n; i++) {
    enqueue(p, &tasks[i]);
    wake_one(p);
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
