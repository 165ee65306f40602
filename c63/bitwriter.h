/* Bit writing in two steps (docs/format.md section 4):
 *  1. c63_bitwriter packs bits MSB first into plain, unstuffed bytes, 32
 *     bits at a time (one writer per slice, and one that concatenates them);
 *  2. c63_write_stuffed copies those bytes into the frame, inserting a 00
 *     after every FF, and applies the reference's end-of-frame flush rule.
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
  uint8_t *start, *p; /* caller's buffer: p - start bytes written */
  uint64_t acc;       /* pending bits, right-aligned */
  int nbits;          /* pending bits (< 32 between calls) */
} c63_bitwriter;

/* buf must hold every byte that will be written, plus 8. */
void c63_bw_init(c63_bitwriter *bw, uint8_t *buf);

static inline void c63_bw_store32(uint8_t *p, uint32_t w)
{
  p[0] = (uint8_t)(w >> 24);
  p[1] = (uint8_t)(w >> 16);
  p[2] = (uint8_t)(w >> 8);
  p[3] = (uint8_t)w;
}

/* Append the n bits of value (n <= 32; bits above n must be 0). */
static inline void c63_bw_put(c63_bitwriter *bw, uint32_t value, int n)
{
  bw->acc = (bw->acc << n) | value;
  bw->nbits += n;
  if (bw->nbits >= 32) {
    bw->nbits -= 32;
    c63_bw_store32(bw->p, (uint32_t)(bw->acc >> bw->nbits));
    bw->p += 4;
  }
}

/* Append the bits another writer wrote (its buffer and pending bits). */
void c63_bw_append(c63_bitwriter *bw, const c63_bitwriter *src);

/* Write out the complete bytes still pending; afterwards [start, p) holds
 * them all and 0..7 bits stay pending in the low bits of acc. */
void c63_bw_flush_bytes(c63_bitwriter *bw);

/* Append n bytes of entropy-coded data to out with a 00 after every FF, then
 * the end-of-frame byte: the reference keeps the last 32 bits written in a
 * register and, if it is non-zero (almost always), writes the pending bits
 * (0..7, the low pending_bits of pending) left-aligned and zero-padded, which
 * is 00 when the data ended on a byte boundary. Returns 0 or -1 (no memory). */
int c63_write_stuffed(c63_bytebuf *out, const uint8_t *data, size_t n, uint32_t pending,
                      int pending_bits);

#endif
