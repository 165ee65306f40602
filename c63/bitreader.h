/* Bounds-checked MSB-first bit reader over entropy-coded data, removing the
 * 00 stuffing byte after every FF. Reading past the end yields zero bits
 * and sets overrun, so a corrupt stream can never read out of bounds.
 * A refill tops the accumulator up to at least 57 bits, eight bytes at a
 * time where the next eight hold no FF.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef C63_BITREADER_H
#define C63_BITREADER_H

#include <stddef.h>
#include <stdint.h>

typedef struct c63_bitreader {
  const uint8_t *p, *end;
  uint64_t acc; /* bits, left-aligned in the top nbits; below them zeros or
                   the bits that follow (from an eight-byte load) */
  int nbits;
  int pad_bits;           /* zero bits appended past the end, at the bottom of acc */
  int bad_stuff;          /* the data ended with an FF (the byte it drops is missing) */
  uint64_t bits_in;       /* bits put into acc since the start, padding included */
  uint64_t bad_stuff_bit; /* with bad_stuff: where that FF starts in the bits */
} c63_bitreader;

void c63_br_init(c63_bitreader *br, const uint8_t *data, size_t size);
/* Top acc up to at least 57 bits (zeros past the end). */
void c63_br_refill(c63_bitreader *br);

/* The next n (1..32) bits. */
static inline uint32_t c63_br_peek(c63_bitreader *br, int n)
{
  if (br->nbits < n) c63_br_refill(br);
  return (uint32_t)(br->acc >> (64 - n));
}

static inline void c63_br_skip(c63_bitreader *br, int n)
{
  br->acc <<= n;
  br->nbits -= n;
}

/* Bits consumed since the start. */
static inline uint64_t c63_br_position(const c63_bitreader *br)
{
  return br->bits_in - (uint64_t)br->nbits;
}

/* Whether bits beyond the end of the data were consumed. */
static inline int c63_br_overrun(const c63_bitreader *br)
{
  return br->pad_bits > br->nbits;
}

static inline uint32_t c63_br_get(c63_bitreader *br, int n)
{
  if (n == 0) return 0;
  uint32_t v = c63_br_peek(br, n);
  c63_br_skip(br, n);
  return v;
}

#endif
