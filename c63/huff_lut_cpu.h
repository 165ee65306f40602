/* Multi-symbol lookahead tables of the CPU entropy decoder
 * (entropy_decode.c), built from the shared tables of huff_lut.h.
 *
 * One lookup of the next C63_STEP_BITS bits gives a whole "step": every
 * symbol whose code and extra bits lie entirely in the window, up to two AC
 * coefficients and a closing EOB (or a block's DC difference, its first AC
 * coefficient and an EOB), with the bits they take together. A block of
 * short codes thus decodes with a lookup per two or three symbols, and the
 * chain from one lookup to the next (the latency that bounds a sequential
 * Huffman decoder) gets shorter. Symbols a step cannot hold (long codes,
 * ZRL, no code) are decoded one at a time with huff_lut.h.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef C63_HUFF_LUT_CPU_H
#define C63_HUFF_LUT_CPU_H

#include <stdint.h>

#define C63_STEP_BITS 11

/* A step (uint64_t): bits 0..5: the bits it takes (0: a DC step whose DC
 * does not fit, then decoded alone), a shift count as it stands; 6: STOP,
 * the decoder leaves the fast loop (EOB, or an AC symbol to decode alone);
 * 7..8: its AC coefficients (0..2); 9: the step ends with EOB; 16..21: how
 * far they advance the coefficient index, already shifted as the decoder's
 * index << 16 (63 with STOP, past any block's end: the decoder tests one
 * bound); 44..63 and 23..43: their sparse entries relative to the index
 * where the step starts, (index offset) << 16 | (uint16_t)value, to add to
 * index << 16; 32..43: a DC step's difference (signed; a DC step holds one
 * coefficient at most). Each field the AC loop reads takes one shift or
 * one mask. */
#define C63_STEP_STOP 0x40u
#define C63_STEP_EOB 0x200u
#define C63_STEP_COEFS 0x180u

static inline int c63_step_bits(uint64_t s)
{
  return (int)(s & 63);
}

static inline unsigned c63_step_coefs(uint64_t s)
{
  return (unsigned)(s >> 7 & 3);
}

static inline uint32_t c63_step_advance(uint64_t s)
{
  return (uint32_t)s & 0x3f0000u;
}

static inline uint32_t c63_step_first(uint64_t s)
{
  return (uint32_t)(s >> 44);
}

static inline uint32_t c63_step_second(uint64_t s)
{
  return (uint32_t)(s >> 23) & 0x1fffff;
}

static inline int c63_step_dc(uint64_t s)
{
  return (int)((int64_t)(s << 20) >> 52);
}

/* The motion-vector code's window: every code of sizes 0..7 (the
 * reference's vector table, docs/format.md 6.3) fits with its value. */
#define C63_MV_BITS 12

/* A vector component's entry (uint16_t): bits 0..7: the value (int8_t),
 * 8..15: the bits of code and value together; C63_MV_NONE where the window
 * holds no code of size 0..7 with its value (a longer DC code, or no code),
 * which the decoder then takes with huff_lut.h. Its 32 bits make the two
 * components' sum larger than any the table holds, so that one test finds
 * either (and the shift by it stays inside 64 bits). */
#define C63_MV_NONE (32u << 8)
static inline int c63_mv_entry_bits(uint32_t e)
{
  return (int)(e >> 8);
}

typedef struct c63_huff_steps {
  uint64_t dc[2][1 << C63_STEP_BITS]; /* luma, chroma: DC, then AC */
  uint64_t ac[2][1 << C63_STEP_BITS];
  uint16_t mv[1 << C63_MV_BITS];
} c63_huff_steps;

/* The tables, built once, thread-safely. */
const c63_huff_steps *c63_huff_steps_get(void);

/* Tables whose every step leaves the fast loop at once (DC steps and
 * vector entries: C63_MV_NONE), so that the decoder takes every symbol alone: what the multi-symbol
 * steps must decode the same as (tests/test_entropy_steps.c). */
const c63_huff_steps *c63_huff_steps_symbolwise(void);

#endif
