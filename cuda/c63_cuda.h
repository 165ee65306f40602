/* CUDA helpers of libc63 for its tools and tests, as seen from C. Built
 * only when nvcc is found (HAVE_CUDA); nothing here knows GStreamer. The
 * backends themselves are declared by the core (c63/encode_backend.h,
 * c63/decode_backend.h).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef C63_CUDA_H
#define C63_CUDA_H

#include <stddef.h>

#include "c63/encode_backend.h"
#include "c63/decode_backend.h"

#ifdef __cplusplus
extern "C" {
#endif

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

/* The process's counted registrations of callers' picture memory
 * (c63_picture_memory_register, cuda/c63_cuda_register.cu): register
 * returns C63_OK or a status with msg set, unregister C63_OK or
 * C63_ERR_INVALID_ARG for memory not registered there; registrations
 * says how many references ptr's entry holds (0: none), for tests. */
int c63_cuda_host_register(void *ptr, size_t size, char *msg, size_t msg_size);
int c63_cuda_host_unregister(void *ptr);
long c63_cuda_host_registrations(const void *ptr);

/* Whether backends created now on device_id take the integrated-GPU path
 * (no picture copies: kernels read and write page-locked host memory in
 * place): on a GPU that shares the host's memory, or as the environment
 * variable C63_CUDA_ZERO_COPY (1 or 0) says (docs/jetson.md). */
int c63_cuda_zero_copy_on(int device_id);

/* Name of a CUDA device as the driver reports it, with its compute
 * capability and multiprocessor count ("<name> (sm_XY, N SMs)"); returns 0,
 * or a c63_status with the CUDA error in name. */
int c63_cuda_device_name(int device_id, char *name, size_t size);

#ifdef __cplusplus
}
#endif

#endif
