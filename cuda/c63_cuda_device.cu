/* Device discovery and error reporting of the CUDA backend. The runtime is
 * linked statically, so on a machine without a driver these calls fail with
 * an error code, which we turn into a message: never an abort.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>

#include "c63/c63.h"
#include "cuda/c63_cuda.h"
#include "cuda/c63_cuda_internal.h"

int c63_cu_error(cudaError_t err, const char *what, char *msg, size_t msg_size)
{
  int status;
  const char *hint = "";
  switch (err) {
  case cudaErrorMemoryAllocation:
    status = C63_ERR_NOMEM;
    hint = " (out of device memory: use a smaller picture or free the GPU)";
    break;
  case cudaErrorInsufficientDriver:
    status = C63_ERR_NO_DEVICE;
    hint = " (no NVIDIA driver loaded, or one older than this build's CUDA runtime)";
    break;
  case cudaErrorNoDevice:
  case cudaErrorInvalidDevice:
  case cudaErrorDevicesUnavailable:
  case cudaErrorNoKernelImageForDevice:
    status = C63_ERR_NO_DEVICE;
    break;
  case cudaErrorLaunchFailure:
  case cudaErrorIllegalAddress:
  case cudaErrorHardwareStackError:
  case cudaErrorIllegalInstruction:
  case cudaErrorUnknown:
    status = C63_ERR_BACKEND;
    hint = " (the GPU was lost or faulted; the encoder must be recreated)";
    break;
  default:
    status = C63_ERR_BACKEND;
    break;
  }
  if (msg && msg_size)
    snprintf(msg, msg_size, "%s: CUDA error %d, %s%s", what, (int)err, cudaGetErrorString(err),
             hint);
  return status;
}

extern "C" int c63_cuda_device_count(char *msg, size_t msg_size)
{
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    c63_cu_error(err, "no usable CUDA device", msg, msg_size);
    cudaGetLastError(); /* clear the sticky-free error so later calls start clean */
    return 0;
  }
  if (count <= 0) {
    if (msg && msg_size) snprintf(msg, msg_size, "no CUDA device found");
    return 0;
  }
  if (msg && msg_size) msg[0] = '\0';
  return count;
}
