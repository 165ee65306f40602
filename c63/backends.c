/* The table of backends built into libc63: the one place that knows which
 * exist in this build (c63/encode_backend.h, c63/decode_backend.h).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "encode_backend.h"
#include "decode_backend.h"

const c63_backend_ops *c63_backend_lookup(c63_backend_kind kind)
{
  switch (kind) {
  case C63_BACKEND_CPU:
    return &c63_backend_cpu;
#if HAVE_CUDA
  case C63_BACKEND_CUDA:
    return &c63_backend_cuda;
#endif
  default:
    return NULL;
  }
}

const c63_decode_backend_ops *c63_decode_backend_lookup(c63_backend_kind kind)
{
  switch (kind) {
  case C63_BACKEND_CPU:
    return &c63_decode_backend_cpu;
#if HAVE_CUDA
  case C63_BACKEND_CUDA:
    return &c63_decode_backend_cuda;
#endif
  default:
    return NULL;
  }
}
