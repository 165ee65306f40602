/* Memory for pictures that the CUDA backend can upload by DMA straight from
 * where they are (c63_picture_memory_alloc in c63.h), and the caller's own
 * memory registered for that (c63_picture_memory_register).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "encode_backend.h"
#include "c63/c63.h"

/* A header in front of each block says how it was allocated; 64 bytes keep
 * the picture aligned for any SIMD load. */
#define HEADER 64
enum { KIND_HOST = 1, KIND_PINNED = 2 };

void *c63_picture_memory_alloc(size_t size)
{
  if (size > SIZE_MAX - HEADER) return NULL;
  uint8_t *p = NULL;
  int kind = KIND_HOST;
  const c63_backend_ops *gpu = c63_backend_lookup(C63_BACKEND_CUDA);
  if (gpu && gpu->host_alloc && (p = gpu->host_alloc(size + HEADER))) kind = KIND_PINNED;
  if (!p && posix_memalign((void **)&p, HEADER, size + HEADER) != 0) return NULL;
  *(int *)p = kind;
  return p + HEADER;
}

void c63_picture_memory_free(void *ptr)
{
  if (!ptr) return;
  uint8_t *p = (uint8_t *)ptr - HEADER;
  if (*(int *)p == KIND_PINNED) {
    c63_backend_lookup(C63_BACKEND_CUDA)->host_free(p);
    return;
  }
  free(p);
}

/* The backend that registers memory, or NULL with msg set. */
static const c63_backend_ops *registering_backend(char *msg, size_t msg_size)
{
  const c63_backend_ops *gpu = c63_backend_lookup(C63_BACKEND_CUDA);
  if (gpu && gpu->host_register) return gpu;
  if (msg && msg_size)
    snprintf(msg, msg_size, "this build of libc63 has no CUDA backend (nvcc was not found)");
  return NULL;
}

int c63_picture_memory_register(void *ptr, size_t size, char *msg, size_t msg_size)
{
  const c63_backend_ops *gpu = registering_backend(msg, msg_size);
  if (!gpu) return C63_ERR_UNSUPPORTED;
  char why[256];
  if (!gpu->probe(0, why, sizeof why)) {
    if (msg && msg_size) snprintf(msg, msg_size, "%s", why);
    return C63_ERR_NO_DEVICE;
  }
  return gpu->host_register(ptr, size, msg, msg_size);
}

int c63_picture_memory_unregister(void *ptr)
{
  const c63_backend_ops *gpu = registering_backend(NULL, 0);
  return gpu ? gpu->host_unregister(ptr) : C63_ERR_UNSUPPORTED;
}
