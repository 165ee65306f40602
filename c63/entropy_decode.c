/* Entropy decoder: the inverse of entropy_encode.c, validating every code,
 * coefficient index and vector so corrupt data yields an error, never an
 * out-of-bounds access.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <string.h>

#include "bitreader.h"
#include "c63/c63.h"
#include "entropy.h"
#include "sparse.h"
#include "tables.h"

/* Returns the symbol, or -1 for a bit pattern that is no code. */
static int decode_symbol(c63_bitreader *br, const c63_huff_dec *t)
{
  uint32_t look = c63_br_peek(br, 16);
  int len = t->look_len[look >> 8];
  if (len) {
    c63_br_skip(br, len);
    return t->look_sym[look >> 8];
  }
  for (len = 9; len <= 16; len++) {
    int32_t code = (int32_t)(look >> (16 - len));
    if (t->maxcode[len] >= 0 && code <= t->maxcode[len] && code >= t->mincode[len]) {
      c63_br_skip(br, len);
      return t->vals[t->valptr[len] + code - t->mincode[len]];
    }
  }
  return -1;
}

/* JPEG sign extension of `size` raw bits. */
static inline int get_value(c63_bitreader *br, int size)
{
  if (size == 0) return 0;
  int v = (int)c63_br_get(br, size);
  return v >= (1 << (size - 1)) ? v : v - ((1 << size) - 1);
}

typedef struct decode_ctx {
  c63_bitreader br;
  const c63_huff_dec *tabs;
  char *msg;
  size_t msg_size;
} decode_ctx;

#define FAIL(code, ...)                                                                            \
  do {                                                                                             \
    if (d->msg && d->msg_size) snprintf(d->msg, d->msg_size, __VA_ARGS__);                         \
    return code;                                                                                   \
  } while (0)

/* Any size of the table (0..11), kept in an int8_t as the reference keeps
 * it: values past +-127 wrap (two's complement), as there. */
static int get_mv_component(decode_ctx *d, int8_t *v)
{
  int size = decode_symbol(&d->br, &d->tabs[C63_HUFF_MV]);
  if (size < 0) FAIL(C63_ERR_BITSTREAM, "invalid motion vector code");
  *v = (int8_t)(uint8_t)(get_value(&d->br, size) & 0xff);
  return C63_OK;
}

/* Decoding order of block (bx, by) of plane c within the plane: MCUs in
 * raster order, in an MCU the luma blocks row by row. */
static long mcu_order(const c63_geometry *g, int c, int bx, int by)
{
  if (c) return (long)by * g->mcus_w + bx;
  return ((long)(by >> 1) * g->mcus_w + (bx >> 1)) * 4 + (by & 1) * 2 + (bx & 1);
}

/* Set coefficient `index` of block `blk` to `value`: the block's entries
 * are written again at the end of the array, in index order, with it. */
static int sparse_set(decode_ctx *d, c63_sparse_frame *f, size_t blk, int index, int value)
{
  if (f->entries_cap - f->n_entries < 64)
    FAIL(C63_ERR_BITSTREAM, "more coefficients than frame data of this size can code");
  const uint32_t *src = f->entries + f->start[blk];
  uint32_t *dst = f->entries + f->n_entries, *e = dst;
  int k = 0, n = f->count[blk];
  while (k < n && (int)(src[k] >> 16) < index)
    *e++ = src[k++];
  *e++ = c63_sparse_entry(index, value);
  if (k < n && (int)(src[k] >> 16) == index) k++;
  while (k < n)
    *e++ = src[k++];
  f->start[blk] = (uint32_t)f->n_entries;
  f->count[blk] = (uint8_t)(e - dst);
  f->n_entries += (size_t)(e - dst);
  return C63_OK;
}

/* An AC run that ends past coefficient 63, at 64 + `spill`: the reference
 * writes the value into the coefficient memory after the block, which is
 * the next block of the plane's row (or the first of the next row). A block
 * decoded later clears it; one decoded already (the first block of the
 * second luma row of an MCU row, after the last block of the first) keeps
 * it as its coefficient `spill`; after the plane's last block the write
 * lands outside the reference's buffer, which is rejected. */
static int spill_ac(decode_ctx *d, const c63_geometry *g, int c, int bx, int by,
                    c63_sparse_frame *f, size_t blk, int spill, int value)
{
  const int bw = g->blocks_w[c];
  int tx = bx + 1, ty = by;
  if (tx == bw) {
    tx = 0;
    ty++;
  }
  if (ty == g->blocks_h[c])
    FAIL(C63_ERR_BITSTREAM, "AC coefficients run past the end of plane %d (block %d,%d)", c, bx,
         by);
  if (mcu_order(g, c, tx, ty) > mcu_order(g, c, bx, by)) return C63_OK;
  return sparse_set(d, f, blk + 1, spill, value); /* the next block in raster order */
}

/* One block, appended to f's entries. mvs is the plane's vectors, all zero
 * before the frame: the reference decodes into a zeroed array, and a reused
 * vector is the one of the block before this one in the plane's raster
 * order whether that block was decoded yet or not (at the left edge of the
 * second luma row of an MCU row it was not: zero), had a vector or not
 * (then zero). */
static int get_block(decode_ctx *d, const c63_geometry *g, int c, int bx, int by, int keyframe,
                     c63_sparse_frame *f, size_t blk, c63_mv *mvs, size_t idx, int *prev_dc)
{
  int chroma = c != 0, r, spill = -1, spill_value = 0;
  c63_mv *mv = &mvs[idx];

  mv->use_mv = (uint8_t)c63_br_get(&d->br, 1);
  if (mv->use_mv) {
    if (c63_br_get(&d->br, 1)) {
      /* The reference reads before the start of its array here. */
      if (idx == 0) FAIL(C63_ERR_BITSTREAM, "vector reuse at the first block of plane %d", c);
      mv->x = mvs[idx - 1].x;
      mv->y = mvs[idx - 1].y;
    } else if ((r = get_mv_component(d, &mv->x)) || (r = get_mv_component(d, &mv->y))) {
      return r;
    }
    /* Keyframes are not predicted: their vectors are read and ignored.
     * In a delta frame the reference reads ref[(y + mv_y) * w + x + mv_x]
     * for the block's pixels: a vector past the left or right edge goes on
     * in the neighbouring row, which is fine while the reads stay inside the
     * plane's buffer (c63_mv_reads_inside); beyond it they are not. */
    if (!keyframe && !c63_mv_reads_inside(g->pad_w[c], g->pad_h[c], bx, by, mv->x, mv->y))
      FAIL(C63_ERR_BITSTREAM, "motion vector (%d,%d) of block %d,%d reads outside plane %d", mv->x,
           mv->y, bx, by, c);
  }

  /* A block adds at most 64 entries; c63_sparse_entries_bound sizes the
   * array so that this never fails on a frame of the bound's size. */
  if (f->entries_cap - f->n_entries < 64)
    FAIL(C63_ERR_BITSTREAM, "more coefficients than frame data of this size can code");
  uint32_t *e = f->entries + f->n_entries, *e0 = e;
  int size = decode_symbol(&d->br, &d->tabs[chroma ? C63_HUFF_DC1 : C63_HUFF_DC0]);
  if (size < 0) FAIL(C63_ERR_BITSTREAM, "invalid DC code (plane %d block %d,%d)", c, bx, by);
  /* The reference keeps DC values in int16_t. */
  *prev_dc = (int16_t)(*prev_dc + get_value(&d->br, size));
  if (*prev_dc) *e++ = c63_sparse_entry(0, *prev_dc);

  const c63_huff_dec *act = &d->tabs[chroma ? C63_HUFF_AC1 : C63_HUFF_AC0];
  for (int i = 1; i < 64;) {
    int sym = decode_symbol(&d->br, act);
    if (sym < 0) FAIL(C63_ERR_BITSTREAM, "invalid AC code (plane %d block %d,%d)", c, bx, by);
    if (sym == 0x00) break; /* EOB */
    int run = sym >> 4;
    size = sym & 15;
    if (size == 0) {
      if (run != 15) FAIL(C63_ERR_BITSTREAM, "invalid AC symbol %02X", sym);
      i += 16; /* ZRL */
      continue;
    }
    i += run;
    /* size >= 1: never zero */
    const int value = get_value(&d->br, size);
    if (i > 63) {
      spill = i - 64;
      spill_value = value;
      break; /* the reference's loop ends here too, without an EOB */
    }
    *e++ = c63_sparse_entry(i++, value);
  }
  if (c63_br_overrun(&d->br))
    FAIL(C63_ERR_TRUNCATED, "frame data ends inside block %d,%d of plane %d", bx, by, c);
  f->start[blk] = (uint32_t)f->n_entries;
  f->count[blk] = (uint8_t)(e - e0);
  f->n_entries += (size_t)(e - e0);
  return spill < 0 ? C63_OK : spill_ac(d, g, c, bx, by, f, blk, spill, spill_value);
}

int c63_entropy_decode(const uint8_t *data, size_t size, const c63_geometry *g, int keyframe,
                       c63_sparse_frame *f, char *msg, size_t msg_size)
{
  decode_ctx ctx = {.tabs = c63_huff_dec_tables(), .msg = msg, .msg_size = msg_size};
  decode_ctx *d = &ctx;
  int prev_dc[3] = {0, 0, 0}, r;
  size_t plane_off[3];
  c63_mv *mvs[3];

  if (f->blocks_cap < c63_frame_blocks(g))
    FAIL(C63_ERR_INVALID_ARG, "coefficient buffers too small for a %dx%d picture", g->width,
         g->height);
  c63_br_init(&d->br, data, size);
  f->n_entries = 0;
  memset(f->mvs, 0, c63_frame_blocks(g) * sizeof(c63_mv));
  for (int c = 0; c < 3; c++) {
    plane_off[c] = c63_block_offset(g, c);
    mvs[c] = f->mvs + plane_off[c];
  }
  for (int my = 0; my < g->mcus_h; my++) {
    for (int mx = 0; mx < g->mcus_w; mx++) {
      for (int k = 0; k < 6; k++) {
        int c, bx, by;
        c63_mcu_block(mx, my, k, &c, &bx, &by);
        size_t idx = (size_t)by * g->blocks_w[c] + bx;
        r = get_block(d, g, c, bx, by, keyframe, f, plane_off[c] + idx, mvs[c], idx, &prev_dc[c]);
        if (r) return r;
      }
    }
  }
  if (d->br.bad_stuff) FAIL(C63_ERR_BITSTREAM, "frame data ends with an FF byte");
  return C63_OK;
}
