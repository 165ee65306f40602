/* Which device a backend works on: an ordinal, or a CUDA context the
 * caller created (a GstCudaContext's, an FFmpeg CUDA device context's), in
 * which the backend then allocates and runs everything.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef C63_DEVICE_H
#define C63_DEVICE_H

typedef struct c63_device {
  int id;             /* CUDA device ordinal (ignored when cuda_context is set) */
  void *cuda_context; /* a CUcontext, or NULL for the device's primary context */
} c63_device;

#endif
