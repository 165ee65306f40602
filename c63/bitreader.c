/* Bit reader refill.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "bitreader.h"

void c63_br_init(c63_bitreader *br, const uint8_t *data, size_t size)
{
  br->p = data;
  br->end = data + size;
  br->acc = 0;
  br->nbits = 0;
  br->pad_bits = 0;
  br->bad_stuff = 0;
  br->bits_in = 0;
  br->bad_stuff_bit = 0;
}

static inline uint64_t load_be64(const uint8_t *p)
{
  uint64_t w = 0;
  for (int i = 0; i < 8; i++)
    w = w << 8 | p[i];
  return w;
}

/* Whether any byte of w is FF. */
static inline int has_ff(uint64_t w)
{
  const uint64_t x = ~w;
  return ((x - 0x0101010101010101ull) & ~x & 0x8080808080808080ull) != 0;
}

void c63_br_refill(c63_bitreader *br)
{
  if (br->end - br->p >= 8) {
    const uint64_t w = load_be64(br->p);
    if (!has_ff(w)) {
      /* Whole bytes up to 56..63 bits; the top bits of the next byte land
       * below nbits too, and the next refill ORs the same bits again. */
      const int bytes = (63 - br->nbits) >> 3;
      br->acc |= w >> br->nbits;
      br->p += bytes;
      br->nbits += bytes * 8;
      br->bits_in += (uint64_t)bytes * 8;
      return;
    }
  }
  while (br->nbits <= 56) {
    uint64_t byte = 0;
    if (br->p < br->end) {
      byte = *br->p++;
      /* The byte after an FF is dropped, as the reference decoder drops
       * it: 00 from an encoder, anything in a crafted stream. */
      if (byte == 0xff) {
        if (br->p < br->end) {
          br->p++;
        } else {
          br->bad_stuff = 1;
          br->bad_stuff_bit = br->bits_in;
        }
      }
    } else {
      br->pad_bits += 8;
    }
    br->acc |= byte << (56 - br->nbits);
    br->nbits += 8;
    br->bits_in += 8;
  }
}
