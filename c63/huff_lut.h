/* Lookahead decoding tables of the four Huffman tables (docs/format.md 6),
 * shared by the CPU entropy decoder (entropy_decode.c), the model of the
 * parallel decoder (huff_sync.h) and the CUDA port: static inline functions
 * on plain integers, no libc.
 *
 * One lookup of the next C63_HUFF_LUT_BITS bits of the stream gives the code
 * length and symbol and, where the code and the value's extra bits (a size
 * symbol's size, an AC symbol's low four bits) fit in the window together,
 * the value too: most DC differences, vectors and AC coefficients decode with
 * one lookup. Longer codes take the canonical slow path (JPEG F.2.2.3).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef C63_HUFF_LUT_H
#define C63_HUFF_LUT_H

#include <stdint.h>

#ifdef __CUDACC__
#define C63_HUFF_FN __host__ __device__ __forceinline__
#else
#define C63_HUFF_FN static inline
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* 11 bits: every AC code of a common coefficient (run 0..2, size 1..4) and
 * its value fit in one lookup; the four tables (32 KiB) fit a core's L1. */
#define C63_HUFF_LUT_BITS 11

/* An entry of c63_huff_lut.fast: bits 0..4: the bits to consume (0: the
 * code is longer than the window, or no code); 8..11: the symbol's low four
 * bits (the value's size); 12..27: the value (with C63_HUFF_LUT_VALUE);
 * 28..31: the symbol's high four bits (an AC run). An AC coefficient's entry
 * shifted right by 12 is thus run << 16 | value: added to index << 16, it
 * gives the coefficient's sparse entry. */
#define C63_HUFF_LUT_VALUE 0x20u   /* the value's extra bits are included */
#define C63_HUFF_LUT_SPECIAL 0x40u /* size 0: EOB, ZRL, a zero DC or vector */
/* c63_huff_entry's answer for a bit pattern that is no code: special, with
 * a symbol (10) that no table has. */
#define C63_HUFF_LUT_NONE (C63_HUFF_LUT_SPECIAL | 1u << 28)

C63_HUFF_FN uint32_t c63_huff_make_entry(int bits, int sym, int value, uint32_t flags)
{
  return (uint32_t)bits | (uint32_t)(sym & 15) << 8 | (uint32_t)(uint16_t)value << 12 |
         (uint32_t)(sym >> 4) << 28 | flags | ((sym & 15) ? 0u : C63_HUFF_LUT_SPECIAL);
}

typedef struct c63_huff_lut {
  uint32_t fast[1 << C63_HUFF_LUT_BITS];
  /* Codes longer than the window: the largest code of each length (-1:
   * none), and vals index = code + valoff[length]. */
  int32_t maxcode[17];
  int32_t valoff[17];
  uint8_t vals[256];
} c63_huff_lut;

/* The tables of c63_huff_specs (index as there: C63_HUFF_DC0 .. AC1), built
 * once, thread-safely. */
const c63_huff_lut *c63_huff_luts(void);

/* The value of `size` extra bits b (JPEG sign extension, docs/format.md 4.3). */
C63_HUFF_FN int c63_huff_extend(uint32_t b, int size)
{
  if (size == 0) return 0;
  return (b >> (size - 1)) ? (int)b : (int)b - ((1 << size) - 1);
}

/* Symbol of the code at the top of `bits` (the next 32 bits of the stream,
 * the first in bit 31) that the window does not hold: returns length << 8 |
 * symbol, or -1 when no code of up to 16 bits matches. */
C63_HUFF_FN int c63_huff_slow(const c63_huff_lut *t, uint32_t bits)
{
  for (int len = C63_HUFF_LUT_BITS + 1; len <= 16; len++) {
    int32_t code = (int32_t)(bits >> (32 - len));
    if (code <= t->maxcode[len]) return len << 8 | t->vals[code + t->valoff[len]];
  }
  return -1;
}

/* The entry, value included, of the code at the top of `bits` (the next 32
 * bits of the stream; at least 27 valid: a 16-bit code and 11 extra bits)
 * when the window does not hold it whole: 0 for a bit pattern that is no
 * code. The size of a symbol is its low four bits (DC, vector: 0..11; AC: 0
 * for EOB and ZRL). */
C63_HUFF_FN int c63_huff_entry_bits(uint32_t e)
{
  return (int)(e & 31);
}

C63_HUFF_FN int c63_huff_entry_symbol(uint32_t e)
{
  return (int)(e >> 28 << 4 | (e >> 8 & 15));
}

C63_HUFF_FN int c63_huff_entry_value(uint32_t e)
{
  return (int)(int16_t)(uint16_t)(e >> 12);
}

/* The entry, value included, of the code at the top of `bits` (the next 32
 * bits of the stream; at least 27 valid: a 16-bit code and 11 extra bits)
 * when the window does not hold it whole (e: the window's entry):
 * C63_HUFF_LUT_NONE for a bit pattern that is no code. */
C63_HUFF_FN uint32_t c63_huff_entry_long(const c63_huff_lut *t, uint32_t bits, uint32_t e)
{
  int len, sym;
  if (e) {
    len = c63_huff_entry_bits(e);
    sym = c63_huff_entry_symbol(e);
  } else {
    const int r = c63_huff_slow(t, bits);
    if (r < 0) return C63_HUFF_LUT_NONE;
    len = r >> 8;
    sym = r & 0xff;
  }
  const int size = sym & 15;
  const int value = size ? c63_huff_extend((bits << len) >> (32 - size), size) : 0;
  return c63_huff_make_entry(len + size, sym, value, C63_HUFF_LUT_VALUE);
}

/* The entry of the code at the top of `bits` (as above), value included. */
C63_HUFF_FN uint32_t c63_huff_entry(const c63_huff_lut *t, uint32_t bits)
{
  const uint32_t e = t->fast[bits >> (32 - C63_HUFF_LUT_BITS)];
  return (e & C63_HUFF_LUT_VALUE) ? e : c63_huff_entry_long(t, bits, e);
}

#ifdef __cplusplus
}
#endif

#endif
