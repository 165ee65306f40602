/* The thread pool: batches run every index once; background tasks run
 * once each, whether a worker or the waiting caller takes them, also while
 * batches run, queued one by one or many at once, and with a pool that has
 * no workers. The size left to the library is one a core within the
 * caller's bound.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "c63/threadpool.h"
#include "tutil.h"

#define TASKS 200
#define BATCH 64

typedef struct job {
  c63_task task;
  unsigned seed;
  unsigned result;
  int runs;
} job;

/* A little work, so workers and waiters overlap. */
static unsigned churn(unsigned x)
{
  for (int i = 0; i < 2000; i++)
    x = x * 1664525u + 1013904223u;
  return x;
}

static void task_fn(void *arg)
{
  job *j = arg;
  j->result = churn(j->seed);
  j->runs++;
}

/* Task i of an array of jobs. */
static void indexed_fn(void *arg, int i)
{
  task_fn((job *)arg + i);
}

static void batch_fn(void *arg, int i)
{
  int *hits = arg;
  churn((unsigned)i);
  hits[i]++;
}

static void test_pool(int threads)
{
  c63_threadpool *pool = c63_threadpool_new(threads);
  TU_CHECK_TRUE(pool != NULL);
  job *jobs = calloc(TASKS, sizeof *jobs);
  for (int i = 0; i < TASKS; i++) {
    jobs[i].seed = (unsigned)i * 7919u;
    c63_threadpool_submit(pool, &jobs[i].task, task_fn, &jobs[i]);
  }
  /* a batch while background tasks are queued */
  int hits[BATCH];
  memset(hits, 0, sizeof hits);
  c63_threadpool_run(pool, batch_fn, hits, BATCH);
  for (int i = 0; i < BATCH; i++)
    TU_CHECK_EQ(hits[i], 1);
  /* wait in an order of our own: from the back, then the rest */
  for (int i = TASKS - 1; i >= TASKS / 2; i--)
    c63_task_wait(pool, &jobs[i].task);
  for (int i = 0; i < TASKS / 2; i++)
    c63_task_wait(pool, &jobs[i].task);
  for (int i = 0; i < TASKS; i++) {
    TU_CHECK_TRUE(c63_task_done(pool, &jobs[i].task));
    TU_CHECK_EQ(jobs[i].runs, 1);
    TU_CHECK_EQ(jobs[i].result, churn(jobs[i].seed));
  }
  /* a task can be submitted again once waited for */
  c63_threadpool_submit(pool, &jobs[0].task, task_fn, &jobs[0]);
  c63_task_wait(pool, &jobs[0].task);
  TU_CHECK_EQ(jobs[0].runs, 2);
  /* fn(arg, i) queued at once for i in 0..BATCH-1; none for n = 0 */
  c63_task many[BATCH];
  c63_threadpool_submit_n(pool, many, BATCH, indexed_fn, jobs);
  c63_threadpool_submit_n(pool, many, 0, indexed_fn, jobs);
  for (int i = BATCH - 1; i >= 0; i--)
    c63_task_wait(pool, &many[i]);
  for (int i = 0; i < BATCH; i++)
    TU_CHECK_EQ(jobs[i].runs, i == 0 ? 3 : 2);
  free(jobs);
  c63_threadpool_free(pool);
}

/* One thread per online core, at most the bound given (16 for none). */
static void test_default_size(void)
{
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  const int bounds[] = {0, 1, 5, 16, 64};
  for (size_t i = 0; i < sizeof bounds / sizeof bounds[0]; i++) {
    const int most = bounds[i] ? bounds[i] : 16;
    const int want = cores < 1 ? 1 : cores > most ? most : (int)cores;
    TU_CHECK_EQ(c63_threadpool_default_size(bounds[i]), want);
  }
}

int main(void)
{
  test_default_size();
  const int threads[] = {1, 2, 3, 8};
  for (size_t i = 0; i < sizeof threads / sizeof threads[0]; i++)
    test_pool(threads[i]);
  return tu_finish("test_threadpool");
}
