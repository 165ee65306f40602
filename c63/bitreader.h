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
  uintptr_t fast_end; /* the last p with eight bytes left; 0 if none */
  uint64_t acc;       /* bits, left-aligned in the top nbits; below them zeros or
                         the bits that follow (from an eight-byte load) */
  int nbits;
  int pad_bits;  /* zero bits appended past the end, at the bottom of acc */
  int bad_stuff; /* the data ended with an FF (the byte it drops is missing) */
  const uint8_t *start;
  size_t dropped;         /* stuffing bytes dropped so far */
  uint64_t bad_stuff_bit; /* with bad_stuff: where that FF starts in the bits */
} c63_bitreader;

void c63_br_init(c63_bitreader *br, const uint8_t *data, size_t size);
/* Top acc up to at least 57 bits (zeros past the end). */
void c63_br_refill(c63_bitreader *br);

/* The eight bytes at p, most significant first. */
static inline uint64_t c63_load_be64(const uint8_t *p)
{
  uint64_t w;
  __builtin_memcpy(&w, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  w = __builtin_bswap64(w);
#endif
  return w;
}

/* Whether any byte of w is FF. */
static inline int c63_has_ff(uint64_t w)
{
  const uint64_t x = ~w;
  return ((x - 0x0101010101010101ull) & ~x & 0x8080808080808080ull) != 0;
}

/* The refill's common case, for a caller that keeps acc and nbits in
 * locals: whole bytes up to 56..63 bits from eight that hold no FF (the top
 * bits of the next byte land below nbits too; the next refill ORs the same
 * bits again). Returns 0 where that does not apply: then c63_br_refill. */
static inline int c63_br_refill_fast(c63_bitreader *br, uint64_t *acc, int *nbits)
{
  if ((uintptr_t)br->p > br->fast_end) return 0;
  const uint64_t w = c63_load_be64(br->p);
  if (c63_has_ff(w)) return 0;
  *acc |= w >> *nbits;
  br->p += 7 - (*nbits >> 3); /* (63 - nbits) / 8 whole bytes */
  *nbits |= 56;               /* nbits + 8 * those: nbits < 64 */
  return 1;
}

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

/* Bits put into acc since the start, padding included. */
static inline uint64_t c63_br_bits_in(const c63_bitreader *br)
{
  return 8 * (uint64_t)((size_t)(br->p - br->start) - br->dropped) + (uint64_t)br->pad_bits;
}

/* Bits consumed since the start. */
static inline uint64_t c63_br_position(const c63_bitreader *br)
{
  return c63_br_bits_in(br) - (uint64_t)br->nbits;
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
