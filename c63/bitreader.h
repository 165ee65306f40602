/* Bounds-checked MSB-first bit reader over entropy-coded data, removing the
 * 00 stuffing byte after every FF. Reading past the end yields zero bits
 * and sets overrun, so a corrupt stream can never read out of bounds.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef C63_BITREADER_H
#define C63_BITREADER_H

#include <stddef.h>
#include <stdint.h>

typedef struct c63_bitreader {
  const uint8_t *p, *end;
  uint64_t acc; /* bits, left-aligned in the top nbits */
  int nbits;
  int pad_bits;  /* zero bits appended past the end, at the bottom of acc */
  int bad_stuff; /* the data ended with an FF (the byte it drops is missing) */
} c63_bitreader;

void c63_br_init(c63_bitreader *br, const uint8_t *data, size_t size);
/* Ensure at least n (<= 32) bits are in acc (zeros past the end). */
void c63_br_refill(c63_bitreader *br, int n);

static inline uint32_t c63_br_peek(c63_bitreader *br, int n)
{
  if (br->nbits < n) c63_br_refill(br, n);
  return (uint32_t)(br->acc >> (64 - n));
}

static inline void c63_br_skip(c63_bitreader *br, int n)
{
  br->acc <<= n;
  br->nbits -= n;
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
