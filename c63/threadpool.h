/* A small fixed pool of worker threads that runs n independent tasks and
 * waits for them (used to entropy-code slices of a frame in parallel).
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

/* Run fn(arg, i) for i in 0..n-1 and return when all have finished. */
void c63_threadpool_run(c63_threadpool *pool, void (*fn)(void *arg, int i), void *arg, int n);

#ifdef __cplusplus
}
#endif

#endif
