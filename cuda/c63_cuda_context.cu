/* Entering and leaving the context a CUDA backend works in (c63/device.h).
 *
 * A caller's context (cuCtxCreate, as GstCudaContext makes) is pushed onto
 * the calling thread for the duration of each backend call and popped
 * after, so the runtime API works inside it and the caller's own current
 * context is left as it was; without one, the device's primary context is
 * selected with cudaSetDevice, as before. The two driver functions come
 * from the runtime's driver entry points: linking libcuda would stop every
 * program using libc63 from starting on a machine without a driver.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <pthread.h>

#include "cuda/c63_cuda_internal.h"

namespace
{

typedef int (*ctx_push_fn)(void *ctx);
typedef int (*ctx_pop_fn)(void **ctx);
typedef int (*ctx_get_device_fn)(int *device);

ctx_push_fn push_fn;
ctx_pop_fn pop_fn;
ctx_get_device_fn get_device_fn;
pthread_once_t once = PTHREAD_ONCE_INIT;

void load()
{
  push_fn = reinterpret_cast<ctx_push_fn>(c63_cuda_driver_entry("cuCtxPushCurrent", 4000));
  pop_fn = reinterpret_cast<ctx_pop_fn>(c63_cuda_driver_entry("cuCtxPopCurrent", 4000));
  get_device_fn =
      reinterpret_cast<ctx_get_device_fn>(c63_cuda_driver_entry("cuCtxGetDevice", 2000));
}

} // namespace

/* The driver function `name` with the ABI it had in CUDA `version` (later
 * versions may change a signature, as CUDA 12 did cuCtxCreate's). Runtimes
 * before 12.5 (JetPack 5's CUDA 11) cannot ask for a version: they give
 * the one of their own CUDA version, which is the ABI asked for as long as
 * the callers name versions not newer than the oldest runtime built with
 * (the context functions: unchanged since CUDA 4). */
void *c63_cuda_driver_entry(const char *name, unsigned version)
{
  void *fn = nullptr;
#if CUDART_VERSION >= 12050
  cudaDriverEntryPointQueryResult found;
  if (cudaGetDriverEntryPointByVersion(name, &fn, version, cudaEnableDefault, &found) !=
          cudaSuccess ||
      found != cudaDriverEntryPointSuccess) {
#else
  (void)version;
  if (cudaGetDriverEntryPoint(name, &fn, cudaEnableDefault) != cudaSuccess || !fn) {
#endif
    cudaGetLastError();
    return nullptr;
  }
  return fn;
}

cudaError_t c63_cuda_enter(const c63_device &dev)
{
  if (!dev.cuda_context) return cudaSetDevice(dev.id);
  pthread_once(&once, load);
  if (!push_fn || !pop_fn) return cudaErrorInsufficientDriver;
  /* CUDA_SUCCESS is 0; anything else means the context is not usable. */
  return push_fn(dev.cuda_context) == 0 ? cudaSuccess : cudaErrorInvalidResourceHandle;
}

void c63_cuda_leave(const c63_device &dev)
{
  void *ctx;
  if (dev.cuda_context && pop_fn) pop_fn(&ctx);
}

int c63_cuda_context_device(const c63_device &dev)
{
  int device = dev.id;
  if (!dev.cuda_context) return device;
  if (c63_cuda_enter(dev) != cudaSuccess) return -1;
  if (!get_device_fn || get_device_fn(&device) != 0) device = -1;
  c63_cuda_leave(dev);
  return device;
}
