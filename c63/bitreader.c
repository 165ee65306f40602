/* Bit reader refill.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "bitreader.h"

void c63_br_init(c63_bitreader *br, const uint8_t *data, size_t size)
{
  br->p = data;
  br->end = data + size;
  br->fast_end = size >= 8 ? (uintptr_t)(data + size - 8) : 0;
  br->acc = 0;
  br->nbits = 0;
  br->pad_bits = 0;
  br->bad_stuff = 0;
  br->start = data;
  br->dropped = 0;
  br->bad_stuff_bit = 0;
}

void c63_br_refill(c63_bitreader *br)
{
  if (c63_br_refill_fast(br, &br->acc, &br->nbits)) return;
  while (br->nbits <= 56) {
    uint64_t byte = 0;
    if (br->p < br->end) {
      byte = *br->p++;
      /* The byte after an FF is dropped, as the reference decoder drops
       * it: 00 from an encoder, anything in a crafted stream. */
      if (byte == 0xff) {
        if (br->p < br->end) {
          br->p++;
          br->dropped++;
        } else {
          br->bad_stuff = 1;
          br->bad_stuff_bit = c63_br_bits_in(br) - 8;
        }
      }
    } else {
      br->pad_bits += 8;
    }
    br->acc |= byte << (56 - br->nbits);
    br->nbits += 8;
  }
}
