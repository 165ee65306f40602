/* Reading a caller's parameter struct (params.h).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <string.h>

#include "c63/c63.h"
#include "params.h"

int c63_params_load(void *dst, size_t dst_size, size_t min_size, const void *src, const char *what,
                    char *msg, size_t msg_size)
{
  size_t size;

  memcpy(&size, src, sizeof size);
  if (size < min_size || size > dst_size) {
    if (msg && msg_size)
      snprintf(msg, msg_size,
               "%s of %zu bytes: this libc63 takes %zu..%zu (start from %s_init, which sets "
               "the size)",
               what, size, min_size, dst_size, what);
    return C63_ERR_INVALID_ARG;
  }
  memcpy(dst, src, size);
  memcpy(dst, &dst_size, sizeof dst_size);
  return C63_OK;
}
