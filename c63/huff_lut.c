/* Building the lookahead decoding tables (huff_lut.h).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "huff_lut.h"

#include <pthread.h>
#include <string.h>

#include "tables.h"

static c63_huff_lut luts[4];
static pthread_once_t luts_once = PTHREAD_ONCE_INIT;

/* The entries of every window that starts with `code` of `len` bits: with
 * the value where the extra bits fit too. */
static void fill_windows(c63_huff_lut *t, int code, int len, int sym)
{
  const int size = sym & 15, free_bits = C63_HUFF_LUT_BITS - len;
  const int first = code << free_bits, n = 1 << free_bits;
  for (int j = 0; j < n; j++) {
    uint32_t e = c63_huff_make_entry(len, sym, 0, 0);
    if (size <= free_bits) {
      uint32_t extra = (uint32_t)j >> (free_bits - size);
      e = c63_huff_make_entry(len + size, sym, c63_huff_extend(extra, size), C63_HUFF_LUT_VALUE);
    }
    t->fast[first + j] = e;
  }
}

/* Canonical code assignment (JPEG C.2), as tables.c does for the encoder. */
static void build_lut(const c63_huff_spec *s, c63_huff_lut *t)
{
  int code = 0, k = 0;
  memset(t, 0, sizeof(*t));
  memcpy(t->vals, s->vals, s->nvals);
  for (int len = 1; len <= 16; len++) {
    t->valoff[len] = k - code;
    for (int i = 0; i < s->bits[len - 1]; i++, k++, code++)
      if (len <= C63_HUFF_LUT_BITS) fill_windows(t, code, len, s->vals[k]);
    t->maxcode[len] = s->bits[len - 1] ? code - 1 : -1;
    code <<= 1;
  }
}

static void build_all(void)
{
  for (int i = 0; i < 4; i++)
    build_lut(&c63_huff_specs[i], &luts[i]);
}

const c63_huff_lut *c63_huff_luts(void)
{
  pthread_once(&luts_once, build_all);
  return luts;
}
