/* Byte buffer and bit writer.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "bitwriter.h"

#include <stdlib.h>
#include <string.h>

void c63_bytebuf_free(c63_bytebuf *b)
{
  free(b->data);
  memset(b, 0, sizeof(*b));
}

int c63_bytebuf_reserve(c63_bytebuf *b, size_t n)
{
  if (b->failed) return -1;
  if (b->capacity - b->size >= n) return 0;
  size_t cap = b->capacity ? b->capacity : 4096;
  while (cap - b->size < n)
    cap *= 2;
  uint8_t *p = realloc(b->data, cap);
  if (!p) {
    b->failed = 1;
    return -1;
  }
  b->data = p;
  b->capacity = cap;
  return 0;
}

void c63_bytebuf_put(c63_bytebuf *b, const void *p, size_t n)
{
  if (c63_bytebuf_reserve(b, n) < 0) return;
  memcpy(b->data + b->size, p, n);
  b->size += n;
}

void c63_bw_init(c63_bitwriter *bw, c63_bytebuf *out)
{
  bw->out = out;
  bw->acc = 0;
  bw->nbits = 0;
  bw->history = 0;
}

void c63_bw_flush(c63_bitwriter *bw)
{
  if (bw->history != 0 && c63_bytebuf_reserve(bw->out, 1) == 0) {
    /* pending bits (0..7) left-aligned, zero-padded; never FF, so no stuffing */
    bw->out->data[bw->out->size++] = (uint8_t)(bw->acc << (8 - bw->nbits));
  }
  bw->acc = 0;
  bw->nbits = 0;
  bw->history = 0;
}
