/* Frame headers: SOI, DQT, SOF0 (+ keyframe byte), DHT, SOS; EOI.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef C63_FRAME_SYNTAX_H
#define C63_FRAME_SYNTAX_H

#include <stdint.h>

#include "bitwriter.h"

/* Write everything before the entropy-coded data. */
void c63_write_frame_headers(c63_bytebuf *out, int width, int height, int keyframe,
                             const uint8_t quant[3][64]);
void c63_write_eoi(c63_bytebuf *out);

#endif
