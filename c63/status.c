/* Human-readable status codes.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "c63/c63.h"

const char *c63_status_string(int status)
{
  switch (status) {
  case C63_OK:
    return "success";
  case C63_ERR_INVALID_ARG:
    return "invalid argument";
  case C63_ERR_NOMEM:
    return "out of memory";
  case C63_ERR_BITSTREAM:
    return "corrupt bitstream";
  case C63_ERR_TRUNCATED:
    return "truncated data";
  case C63_ERR_AGAIN:
    return "try again";
  case C63_ERR_EOF:
    return "end of stream";
  case C63_ERR_NO_REFERENCE:
    return "delta frame without reference frame";
  case C63_ERR_BACKEND:
    return "backend failure";
  case C63_ERR_NO_DEVICE:
    return "no usable device";
  case C63_ERR_UNSUPPORTED:
    return "unsupported";
  default:
    return "unknown error";
  }
}
