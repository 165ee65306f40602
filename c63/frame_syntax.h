/* Frame headers: SOI, DQT, SOF0 (+ keyframe byte), DHT, SOS; EOI.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef C63_FRAME_SYNTAX_H
#define C63_FRAME_SYNTAX_H

#include <stdint.h>

#include "bitwriter.h"

/* Bytes before a frame's entropy-coded data (SOI, DQT, SOF0 with the
 * keyframe byte, DHT, SOS) and after it (EOI): the same for every frame. */
#define C63_FRAME_HEADER_BYTES 655
#define C63_FRAME_TRAILER_BYTES 2

/* Write everything before the entropy-coded data (C63_FRAME_HEADER_BYTES). */
void c63_write_frame_headers(c63_bytebuf *out, int width, int height, int keyframe,
                             const uint8_t quant[3][64]);
/* The EOI marker (C63_FRAME_TRAILER_BYTES) at p. */
static inline void c63_put_eoi(uint8_t *p)
{
  p[0] = 0xff;
  p[1] = 0xd9;
}

#endif
