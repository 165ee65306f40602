/* One step of Codec63's entropy decoding from an explicit state, for the
 * self-synchronising parallel decoder (huff_sync_model.c, and its CUDA
 * port): static inline functions on plain integers, no libc.
 *
 * How the data parses depends on the codes alone, never on decoded values
 * (docs/design.md, "Parallel entropy decoding"), so the state below fixes
 * everything that follows it: two decoders that reach the same state decode
 * the same from there on. The plane and block are not part of it: which
 * block of the frame a step belongs to is a count, placed afterwards by a
 * prefix sum.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef C63_HUFF_SYNC_H
#define C63_HUFF_SYNC_H

#include <stdint.h>

#include "huff_lut.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The field a step decodes (docs/format.md 4.2). */
enum {
  C63_HS_USE_MV = 0,
  C63_HS_REUSE = 1,
  C63_HS_MV_X = 2,
  C63_HS_MV_Y = 3,
  C63_HS_DC = 4,
  C63_HS_AC = 5,
  C63_HS_BAD = 0xff /* no code, or syntax a GPU leaves to the CPU */
};

/* Where a decoder stands: the bit position in the unstuffed data, the block
 * within the MCU (0..3 luma, 4 U, 5 V), the field, and for AC the next
 * zig-zag index (1..63; 0 elsewhere). */
typedef struct c63_hs_state {
  uint32_t pos;
  uint8_t k, field, z, pad_;
} c63_hs_state;

/* What a step decoded: `field` and `value` (a flag bit, a vector component,
 * a DC difference or an AC coefficient, then at index z), or field
 * C63_HS_AC with value 0 for EOB and ZRL, which give no coefficient. */
typedef struct c63_hs_out {
  uint8_t field, z;
  int16_t value;
} c63_hs_out;

C63_HUFF_FN c63_hs_state c63_hs_block_start(uint32_t pos, int k)
{
  c63_hs_state s = {pos, (uint8_t)k, C63_HS_USE_MV, 0, 0};
  return s;
}

C63_HUFF_FN int c63_hs_equal(c63_hs_state a, c63_hs_state b)
{
  return a.pos == b.pos && a.k == b.k && a.field == b.field && a.z == b.z;
}

/* The 32 bits of the unstuffed data from bit pos on; data has at least four
 * readable bytes past pos / 8 (zero padding after its end). */
C63_HUFF_FN uint32_t c63_hs_peek(const uint8_t *data, uint32_t pos)
{
  const uint8_t *p = data + (pos >> 3);
  const uint64_t w = (uint64_t)p[0] << 32 | (uint64_t)p[1] << 24 | (uint64_t)p[2] << 16 |
                     (uint64_t)p[3] << 8 | p[4];
  return (uint32_t)(w >> (8 - (pos & 7)));
}

/* Past the block's last field: the next block of the MCU cycle. */
C63_HUFF_FN void c63_hs_next_block(c63_hs_state *s)
{
  s->k = (uint8_t)(s->k == 5 ? 0 : s->k + 1);
  s->field = C63_HS_USE_MV;
  s->z = 0;
}

/* Decode one field at s from `bits` (c63_hs_peek at s->pos) with the tables
 * luts (index C63_HUFF_DC0 .. AC1) and advance s. A bit pattern that is no
 * code, an AC symbol that does not exist, and a run past coefficient 63 (a
 * write into the next block, which only the sequential decoder models) set
 * s->field to C63_HS_BAD. */
C63_HUFF_FN void c63_hs_step(const c63_huff_lut *luts, uint32_t bits, c63_hs_state *s,
                             c63_hs_out *out)
{
  const int chroma = s->k >= 4;
  out->field = s->field;
  out->z = 0;
  out->value = 0;
  if (s->field == C63_HS_USE_MV || s->field == C63_HS_REUSE) {
    const int bit = (int)(bits >> 31);
    out->value = (int16_t)bit;
    s->pos += 1;
    if (s->field == C63_HS_USE_MV)
      s->field = bit ? C63_HS_REUSE : C63_HS_DC;
    else
      s->field = bit ? C63_HS_DC : C63_HS_MV_X;
    return;
  }
  const int table = s->field == C63_HS_AC ? (chroma ? 3 : 2) : s->field == C63_HS_DC ? chroma : 0;
  const uint32_t e = c63_huff_entry(&luts[table], bits);
  if (e == C63_HUFF_LUT_NONE) {
    s->field = C63_HS_BAD;
    return;
  }
  s->pos += (uint32_t)c63_huff_entry_bits(e);
  const int sym = c63_huff_entry_symbol(e);
  if (s->field != C63_HS_AC) {
    out->value = (int16_t)c63_huff_entry_value(e);
    s->field = s->field == C63_HS_MV_X ? C63_HS_MV_Y : C63_HS_DC + (s->field == C63_HS_DC);
    if (s->field == C63_HS_AC) s->z = 1;
    return;
  }
  if ((sym & 15) == 0) {
    if (sym == 0xf0 && s->z + 16 <= 63) {
      s->z = (uint8_t)(s->z + 16); /* ZRL */
    } else if (sym == 0x00 || sym == 0xf0) {
      c63_hs_next_block(s); /* EOB, or a ZRL past the end */
    } else {
      s->field = C63_HS_BAD;
    }
    return;
  }
  const int z = s->z + (sym >> 4);
  if (z > 63) {
    s->field = C63_HS_BAD;
    return;
  }
  out->z = (uint8_t)z;
  out->value = (int16_t)c63_huff_entry_value(e);
  if (z == 63)
    c63_hs_next_block(s);
  else
    s->z = (uint8_t)(z + 1);
}

#ifdef __cplusplus
}
#endif

#endif
