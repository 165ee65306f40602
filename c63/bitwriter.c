/* Byte buffer, bit concatenation, byte stuffing and the flush rule.
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

void c63_bw_init(c63_bitwriter *bw, uint8_t *buf)
{
  bw->start = bw->p = buf;
  bw->acc = 0;
  bw->nbits = 0;
}

void c63_bw_append(c63_bitwriter *bw, const c63_bitwriter *src)
{
  /* src holds whole 32-bit words, then fewer than 32 pending bits */
  for (const uint8_t *w = src->start; w < src->p; w += 4)
    c63_bw_put(bw, (uint32_t)w[0] << 24 | (uint32_t)w[1] << 16 | (uint32_t)w[2] << 8 | w[3], 32);
  if (src->nbits) c63_bw_put(bw, (uint32_t)src->acc & ((1u << src->nbits) - 1), src->nbits);
}

void c63_bw_flush_bytes(c63_bitwriter *bw)
{
  while (bw->nbits >= 8) {
    bw->nbits -= 8;
    *bw->p++ = (uint8_t)(bw->acc >> bw->nbits);
  }
}

int c63_write_stuffed(c63_bytebuf *out, const uint8_t *data, size_t n, uint32_t pending,
                      int pending_bits)
{
  /* worst case: every byte an FF with its stuffing, plus the flush byte */
  if (c63_bytebuf_reserve(out, 2 * n + 1) < 0) return -1;

  /* FF is rare in coded data: copy the runs between them whole */
  uint8_t *dst = out->data + out->size;
  const uint8_t *q = data, *end = data + n;
  while (q < end) {
    const uint8_t *f = memchr(q, 0xff, (size_t)(end - q));
    size_t run = f ? (size_t)(f - q) + 1 : (size_t)(end - q);
    memcpy(dst, q, run);
    dst += run;
    q += run;
    if (f) *dst++ = 0x00;
  }

  /* The register: the last 32 bits of the frame's data. */
  uint64_t reg = 0;
  for (size_t i = n > 4 ? n - 4 : 0; i < n; i++)
    reg = reg << 8 | data[i];
  pending &= (1u << pending_bits) - 1;
  reg = reg << pending_bits | pending;
  if ((uint32_t)reg != 0) *dst++ = (uint8_t)(pending << (8 - pending_bits));
  out->size = (size_t)(dst - out->data);
  return 0;
}
