/* Memory for pictures that the CUDA backend can upload by DMA straight from
 * where they are (c63_picture_memory_alloc in c63.h).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdint.h>
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
