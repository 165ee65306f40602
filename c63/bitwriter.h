/* MSB-first bit writer with JPEG byte stuffing and the reference's
 * end-of-frame flush rule (c63-format.md section 4).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef C63_BITWRITER_H
#define C63_BITWRITER_H

#include <stddef.h>
#include <stdint.h>

/* A growable byte buffer. */
typedef struct c63_bytebuf {
  uint8_t *data;
  size_t size, capacity;
  int failed; /* an allocation failed; contents are incomplete */
} c63_bytebuf;

void c63_bytebuf_free(c63_bytebuf *b);
/* Make room for n more bytes; returns 0, or -1 (and sets failed). */
int c63_bytebuf_reserve(c63_bytebuf *b, size_t n);
void c63_bytebuf_put(c63_bytebuf *b, const void *p, size_t n);

typedef struct c63_bitwriter {
  c63_bytebuf *out;
  uint64_t acc;     /* pending bits, right-aligned */
  int nbits;        /* number of pending bits (< 8 between calls) */
  uint32_t history; /* the last 32 bits written this frame (never masked) */
} c63_bitwriter;

void c63_bw_init(c63_bitwriter *bw, c63_bytebuf *out);
/* Append the low n bits of value (n <= 31). The caller has reserved space. */
static inline void c63_bw_put(c63_bitwriter *bw, uint32_t value, int n)
{
  if (n == 0) return;
  value &= (1u << n) - 1;
  bw->acc = (bw->acc << n) | value;
  bw->history = (bw->history << n) | value;
  bw->nbits += n;
  while (bw->nbits >= 8) {
    uint8_t byte = (uint8_t)(bw->acc >> (bw->nbits - 8));
    c63_bytebuf *o = bw->out;
    o->data[o->size++] = byte;
    if (byte == 0xff) o->data[o->size++] = 0x00; /* stuffing */
    bw->nbits -= 8;
  }
}
/* End of frame data: the reference writes one more byte with the pending
 * bits left-aligned and zero-padded if its 32-bit register is non-zero,
 * which is almost always (a 00 byte when the data ended on a byte boundary). */
void c63_bw_flush(c63_bitwriter *bw);

#endif
