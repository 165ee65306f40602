/* The CUDA backend of libc63, as seen from C. Built only when nvcc is found
 * (HAVE_CUDA); nothing here knows GStreamer.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef C63_CUDA_H
#define C63_CUDA_H

#include <stddef.h>

#include "../c63/backend.h"
#include "../c63/decode_backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The CUDA backend (c63_backend_ops: create/destroy/submit/collect). */
extern const c63_backend_ops c63_backend_cuda;
/* The CUDA decoding backend (c63_decode_backend_ops). */
extern const c63_decode_backend_ops c63_decode_backend_cuda;

/* Number of usable CUDA devices; 0 with a message when there is no driver or
 * no device. Never aborts. */
int c63_cuda_device_count(char *msg, size_t msg_size);

/* Page-lock size bytes at ptr (cudaHostRegister) so pictures there are
 * uploaded by DMA straight from the caller's memory, without the staging
 * copy on the CPU; c63_cuda_unpin undoes it. Returns C63_OK or a status with
 * msg set. */
int c63_cuda_pin(void *ptr, size_t size, char *msg, size_t msg_size);
void c63_cuda_unpin(void *ptr);

/* Page-locked host memory (cudaHostAlloc), or NULL when there is no usable
 * driver or no memory. */
void *c63_cuda_host_alloc(size_t size);
void c63_cuda_host_free(void *ptr);

#ifdef __cplusplus
}
#endif

#endif
