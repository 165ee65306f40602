/* Building the CPU decoder's multi-symbol tables (huff_lut_cpu.h).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "huff_lut_cpu.h"

#include <pthread.h>

#include "huff_lut.h"
#include "tables.h"

static c63_huff_steps steps, symbolwise;
static pthread_once_t steps_once = PTHREAD_ONCE_INIT, symbolwise_once = PTHREAD_ONCE_INIT;

/* The entry of the code at the top of `bits` when it and its extra bits lie
 * in the first `avail` bits (the rest of `bits` is zero padding, which a
 * code and value that fit do not depend on); 0 otherwise. */
static uint32_t entry_within(const c63_huff_lut *t, uint32_t bits, int avail)
{
  const uint32_t e = c63_huff_entry(t, bits);
  if (e == C63_HUFF_LUT_NONE || c63_huff_entry_bits(e) > avail) return 0;
  return e;
}

/* The step of window w (C63_STEP_BITS bits): a DC difference first when dc
 * is given, then AC symbols of ac while they fit, at most max_coefs
 * coefficients, ending at EOB or at a symbol that is no coefficient. */
static uint64_t build_step(const c63_huff_lut *dc, const c63_huff_lut *ac, uint32_t w,
                           int max_coefs)
{
  const uint32_t bits = w << (32 - C63_STEP_BITS);
  uint64_t s = 0;
  int pos = 0, n = 0, adv = 0;
  if (dc) {
    const uint32_t e = entry_within(dc, bits, C63_STEP_BITS);
    if (!e) return 0;
    pos = c63_huff_entry_bits(e);
    s |= (uint64_t)(c63_huff_entry_value(e) & 0xfff) << 32;
  }
  for (;;) {
    const uint32_t e = entry_within(ac, bits << pos, C63_STEP_BITS - pos);
    if (!e) break;
    if (e & C63_HUFF_LUT_SPECIAL) {
      if (c63_huff_entry_symbol(e) == 0x00) { /* EOB; ZRL is decoded alone */
        pos += c63_huff_entry_bits(e);
        s |= C63_STEP_STOP | C63_STEP_EOB;
      }
      break;
    }
    if (n == max_coefs) break;
    /* e >> 12 is run << 16 | value (huff_lut.h) */
    const uint32_t entry = (e >> 12) + ((uint32_t)adv << 16);
    s |= (uint64_t)entry << (n ? 23 : 44);
    adv = (int)(entry >> 16) + 1;
    pos += c63_huff_entry_bits(e);
    n++;
  }
  if (!dc && pos == 0) s |= C63_STEP_STOP; /* the symbol is decoded alone */
  /* A step that leaves the loop advances past the block's end. */
  if (s & C63_STEP_STOP) adv = 63;
  return s | (uint64_t)pos | (uint64_t)n << 7 | (uint64_t)adv << 16;
}

/* The vector component entry of window w (C63_MV_BITS bits). */
static uint16_t build_mv(const c63_huff_lut *mv, uint32_t w)
{
  const uint32_t e = entry_within(mv, w << (32 - C63_MV_BITS), C63_MV_BITS);
  if (!e) return C63_MV_NONE;
  return (uint16_t)(c63_huff_entry_bits(e) << 8 | (uint8_t)c63_huff_entry_value(e));
}

static void build_all(void)
{
  const c63_huff_lut *luts = c63_huff_luts();
  for (uint32_t w = 0; w < 1u << C63_MV_BITS; w++)
    steps.mv[w] = build_mv(&luts[C63_HUFF_MV], w);
  for (uint32_t w = 0; w < 1u << C63_STEP_BITS; w++) {
    for (int chroma = 0; chroma < 2; chroma++) {
      const c63_huff_lut *dc = &luts[chroma ? C63_HUFF_DC1 : C63_HUFF_DC0];
      const c63_huff_lut *ac = &luts[chroma ? C63_HUFF_AC1 : C63_HUFF_AC0];
      steps.dc[chroma][w] = build_step(dc, ac, w, 1);
      steps.ac[chroma][w] = build_step(NULL, ac, w, 2);
    }
  }
}

const c63_huff_steps *c63_huff_steps_get(void)
{
  pthread_once(&steps_once, build_all);
  return &steps;
}

static void build_symbolwise(void)
{
  for (uint32_t w = 0; w < 1u << C63_STEP_BITS; w++) {
    for (int chroma = 0; chroma < 2; chroma++) {
      symbolwise.dc[chroma][w] = 0;
      symbolwise.ac[chroma][w] = C63_STEP_STOP | 63u << 16;
    }
  }
  for (uint32_t w = 0; w < 1u << C63_MV_BITS; w++)
    symbolwise.mv[w] = C63_MV_NONE;
}

const c63_huff_steps *c63_huff_steps_symbolwise(void)
{
  pthread_once(&symbolwise_once, build_symbolwise);
  return &symbolwise;
}
