/* The process's registrations of callers' picture memory
 * (c63_picture_memory_register in c63.h): page-locking with cudaHostRegister,
 * counted per range.
 *
 * The driver keeps one registration of a range per process, and refuses a
 * second that overlaps it, so every encoder and element of a process
 * goes through this one table: registering a range again takes a reference,
 * unregistering drops one, and the last one unregisters. One lock guards the
 * table and the driver calls, which are slow (pinning pages) but rare: a
 * registration pays only for memory that comes back again and again.
 *
 * Registrations are portable (every context of every device sees them as
 * page-locked) and mapped (the integrated-GPU path reads them in place).
 * Whether a picture is uploaded straight from its memory is decided per
 * frame by asking the driver (c63_cuda_backend.cu), never by this table, so
 * an entry can only make a frame faster, not change its bytes. A
 * registration ends only between copies from or to host memory, never
 * under one (c63_cuda_host_copy_begin): a thread may drop the last
 * reference while another thread's encoder uploads from the memory, and
 * the unregistering waits for that upload.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "c63/c63.h"
#include "cuda/c63_cuda.h"
#include "cuda/c63_cuda_internal.h"

namespace
{

struct registration {
  void *ptr;
  size_t size;
  long refs;
};

pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
registration *table; /* guarded by lock */
size_t used, capacity;

/* Held for reading by copies from or to callers' host memory
 * (c63_cuda_host_copy_begin), for writing while a registration ends.
 * Writers first: encoders copy frame after frame, on several threads, and
 * would otherwise keep an unregister waiting for as long as they run. */
pthread_rwlock_t copies;
pthread_once_t copies_once = PTHREAD_ONCE_INIT;

void init_copies()
{
  pthread_rwlockattr_t attr;
  pthread_rwlockattr_init(&attr);
#ifdef __GLIBC__
  pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
#endif
  pthread_rwlock_init(&copies, &attr);
  pthread_rwlockattr_destroy(&attr);
}

/* The entry for ptr, or NULL. Called with lock held. */
registration *find(const void *ptr)
{
  for (size_t i = 0; i < used; i++)
    if (table[i].ptr == ptr) return &table[i];
  return nullptr;
}

/* Whether a registration in the table shares bytes with the range, which
 * the driver would refuse: asked first, so that the refusal needs no
 * failing driver call. (A range that shares only a page with one is left
 * to the driver.) Called with lock held. */
bool overlaps(const void *ptr, size_t size)
{
  const uintptr_t first = (uintptr_t)ptr, end = first + size;
  for (size_t i = 0; i < used; i++) {
    const uintptr_t f = (uintptr_t)table[i].ptr;
    if (f < end && first < f + table[i].size) return true;
  }
  return false;
}

/* Room for one more entry. Called with lock held. */
bool reserve()
{
  if (used < capacity) return true;
  const size_t n = capacity ? 2 * capacity : 16;
  registration *t = static_cast<registration *>(realloc(table, n * sizeof *t));
  if (!t) return false;
  table = t;
  capacity = n;
  return true;
}

int set_msg(char *msg, size_t msg_size, int status, const char *text)
{
  if (msg && msg_size) snprintf(msg, msg_size, "%s", text);
  return status;
}

} // namespace

extern "C" int c63_cuda_host_register(void *ptr, size_t size, char *msg, size_t msg_size)
{
  if (!ptr || !size) return set_msg(msg, msg_size, C63_ERR_INVALID_ARG, "no memory to register");
  pthread_mutex_lock(&lock);
  registration *r = find(ptr);
  int status = C63_OK;
  if (r && r->size != size) {
    status = set_msg(msg, msg_size, C63_ERR_INVALID_ARG,
                     "the memory is registered already with another size");
  } else if (r) {
    r->refs++;
  } else if (overlaps(ptr, size)) {
    status = set_msg(msg, msg_size, C63_ERR_INVALID_ARG,
                     "it overlaps memory that is registered already");
  } else if (!reserve()) {
    status = set_msg(msg, msg_size, C63_ERR_NOMEM, "out of host memory");
  } else {
    const cudaError_t err =
        cudaHostRegister(ptr, size, cudaHostRegisterPortable | cudaHostRegisterMapped);
    if (err == cudaSuccess)
      table[used++] = {ptr, size, 1};
    else if (err == cudaErrorHostMemoryAlreadyRegistered)
      status = set_msg(msg, msg_size, C63_ERR_INVALID_ARG,
                       "it overlaps memory that is page-locked already");
    else
      status = c63_cuda_error(err, "page-locking the picture memory", msg, msg_size);
    if (err != cudaSuccess) cudaGetLastError();
  }
  pthread_mutex_unlock(&lock);
  return status;
}

extern "C" int c63_cuda_host_unregister(void *ptr)
{
  pthread_mutex_lock(&lock);
  registration *r = find(ptr);
  int status = r ? C63_OK : C63_ERR_INVALID_ARG;
  if (r && --r->refs == 0) {
    pthread_once(&copies_once, init_copies);
    pthread_rwlock_wrlock(&copies);
    if (cudaHostUnregister(ptr) != cudaSuccess) cudaGetLastError();
    pthread_rwlock_unlock(&copies);
    *r = table[--used];
  }
  pthread_mutex_unlock(&lock);
  return status;
}

bool c63_cuda_host_in_registration(const void *ptr)
{
  pthread_mutex_lock(&lock);
  const bool in = overlaps(ptr, 1);
  pthread_mutex_unlock(&lock);
  return in;
}

extern "C" long c63_cuda_host_registrations(const void *ptr)
{
  pthread_mutex_lock(&lock);
  const registration *r = find(ptr);
  const long refs = r ? r->refs : 0;
  pthread_mutex_unlock(&lock);
  return refs;
}

void c63_cuda_host_copy_begin()
{
  pthread_once(&copies_once, init_copies);
  pthread_rwlock_rdlock(&copies);
}

void c63_cuda_host_copy_end()
{
  pthread_rwlock_unlock(&copies);
}
