/* libFuzzer target: the frame header parser and the frame-start search on
 * any bytes. The headers-only parse must agree with the full parse on what
 * they share, a frame's size must lie within the input, and the search
 * must stay within it. A crash, undefined behaviour or a disagreement is a
 * finding.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "c63/c63.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  c63_frame_header full, head;
  char msg[256];
  size_t start = c63_find_frame_start(data, size);

  if (start > size) abort();
  int a = c63_parse_frame_header(data, size, &full, msg, sizeof msg);
  int b = c63_parse_frame_headers_only(data, size, &head, msg, sizeof msg);
  if (a == C63_OK) {
    if (full.frame_size > size || full.data_offset + full.data_size > full.frame_size) abort();
    /* a frame that parses whole has parsing headers */
    if (b != C63_OK || head.width != full.width || head.height != full.height ||
        head.keyframe != full.keyframe || head.data_offset != full.data_offset)
      abort();
    if (full.width < C63_MIN_SIZE || full.width > C63_MAX_SIZE || full.height < C63_MIN_SIZE ||
        full.height > C63_MAX_SIZE)
      abort();
  }
  /* any prefix parses to a status, never past the prefix */
  if (size > 0) {
    size_t cut = data[size - 1] % size;
    if (c63_parse_frame_header(data, cut, &full, NULL, 0) == C63_OK && full.frame_size > cut)
      abort();
  }
  return 0;
}
