/* Entropy coding of a frame's vectors and coefficients (docs/format.md 4).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef C63_ENTROPY_H
#define C63_ENTROPY_H

#include <stddef.h>
#include <stdint.h>

#include "bitwriter.h"
#include "dsp.h"
#include "geometry.h"
#include "sparse.h"
#include "threadpool.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Worst case of one block without stuffing: flags and vectors 26 bits, DC
 * 20, 63 AC of at most 26 bits, EOB: under 1700 bits. */
#define C63_MAX_BLOCK_BYTES 224

/* Entropy encoder of one picture size, coding one slice of MCU rows per
 * thread of pool (which it borrows). NULL when out of memory. */
typedef struct c63_entropy_encoder c63_entropy_encoder;
c63_entropy_encoder *c63_entropy_encoder_new(const c63_geometry *g, c63_threadpool *pool);
void c63_entropy_encoder_free(c63_entropy_encoder *ee);

/* Append the entropy-coded data of a frame, flush included. Returns 0, or
 * C63_ERR_NOMEM. The output is the same whatever the number of threads. */
int c63_entropy_encode(c63_entropy_encoder *ee, c63_bytebuf *out, const int16_t *const coeffs[3],
                       const c63_mv *const mvs[3]);

/* Decode a frame's entropy-coded data (stuffed, up to EOI) into its
 * non-zero coefficients and its vectors (f, reserved for the frame's blocks
 * and c63_sparse_entries_bound entries), validating every code, value and
 * vector. Returns C63_OK or a status with msg set. */
int c63_entropy_decode(const uint8_t *data, size_t size, const c63_geometry *g, int keyframe,
                       c63_sparse_frame *f, char *msg, size_t msg_size);

/* The same with the given multi-symbol tables (huff_lut_cpu.h), which
 * change the speed, never the result. */
struct c63_huff_steps;
int c63_entropy_decode_steps(const uint8_t *data, size_t size, const c63_geometry *g, int keyframe,
                             const struct c63_huff_steps *steps, c63_sparse_frame *f, char *msg,
                             size_t msg_size);

#ifdef __cplusplus
}
#endif

#endif
