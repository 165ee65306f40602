/* Entropy decoder: the inverse of entropy_encode.c, validating every code,
 * coefficient index and vector so corrupt data yields an error, never an
 * out-of-bounds access.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <string.h>

#include "bitreader.h"
#include "c63/c63.h"
#include "entropy.h"
#include "huff_lut.h"
#include "sparse.h"
#include "tables.h"

typedef struct decode_ctx {
  c63_bitreader br;
  const c63_huff_lut *luts;
  /* Bits the reader held when the last AC code began (end_of_data_verdict):
   * a block's last code is an AC code. */
  int last_code_nbits;
  char *msg;
  size_t msg_size;
} decode_ctx;

#define FAIL(code, ...)                                                                            \
  do {                                                                                             \
    if (d->msg && d->msg_size) snprintf(d->msg, d->msg_size, __VA_ARGS__);                         \
    return code;                                                                                   \
  } while (0)

/* The reader's accumulator, held in locals while a block is decoded: in
 * registers, as stores through the output pointers cannot alias them. */
typedef struct acc_bits {
  uint64_t acc;
  int nbits;
} acc_bits;

/* At least n (<= 56) bits in b. */
static inline void fill_to(c63_bitreader *br, acc_bits *b, int n)
{
  if (b->nbits >= n || c63_br_refill_fast(br, &b->acc, &b->nbits)) return;
  br->acc = b->acc;
  br->nbits = b->nbits;
  c63_br_refill(br);
  b->acc = br->acc;
  b->nbits = br->nbits;
}

/* At least 32 bits in b (a code and its extra bits take at most 27). */
static inline void fill(c63_bitreader *br, acc_bits *b)
{
  fill_to(br, b, 32);
}

static inline void skip(acc_bits *b, int n)
{
  b->acc <<= n;
  b->nbits -= n;
}

/* The entry (huff_lut.h) of the next code of table t, value included, and
 * the bits it takes consumed; 0 (nothing consumed) when there is no code. */
static inline uint32_t next_code(c63_bitreader *br, acc_bits *b, const c63_huff_lut *t)
{
  fill(br, b);
  const uint32_t e = c63_huff_entry(t, (uint32_t)(b->acc >> 32));
  skip(b, c63_huff_entry_bits(e));
  return e;
}

/* The AC coefficients of a block, appended at *pe (docs/format.md 4.6). A
 * run past coefficient 63 ends the block with *spill = index - 64 and its
 * value. Returns 0, or -1 for a bit pattern that is no code (the tables
 * have no other symbols of size 0 than EOB and ZRL). The index is kept as
 * index << 16, to which an entry >> 12 adds run << 16 | value (huff_lut.h). */
static inline int decode_ac(decode_ctx *d, acc_bits *b, const c63_huff_lut *t, uint32_t **pe,
                            int *spill, int *spill_value)
{
  const uint32_t end = 64u << 16;
  uint32_t at = 1u << 16, *e = *pe;
  int code_nbits, bad = 0;
  for (;;) {
    fill(&d->br, b);
    code_nbits = b->nbits;
    const uint32_t en = c63_huff_entry(t, (uint32_t)(b->acc >> 32));
    skip(b, c63_huff_entry_bits(en));
    if (en & C63_HUFF_LUT_SPECIAL) {
      const int sym = c63_huff_entry_symbol(en);
      if (sym == 0x00) break; /* EOB */
      if (sym != 0xf0) {
        bad = -1;
        break;
      }
      at += 16u << 16; /* ZRL */
      if (at >= end) break;
      continue;
    }
    const uint32_t entry = at + (en >> 12);
    if (entry >= end) {
      *spill = (int)(entry >> 16) - 64;
      *spill_value = c63_huff_entry_value(en);
      break; /* the reference's loop ends here too, without an EOB */
    }
    *e++ = entry;              /* size >= 1: never zero */
    at = (entry | 0xffff) + 1; /* the next index, << 16 */
    if (at >= end) break;
  }
  d->last_code_nbits = code_nbits;
  *pe = e;
  return bad;
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
  int chroma = c != 0, spill = -1, spill_value = 0;
  acc_bits b = {d->br.acc, d->br.nbits};

  /* The flags and both vector codes decoded from one window whatever the
   * flags say, and the taken bits and the vector chosen without a branch:
   * whether a block reuses its neighbour's vector is unpredictable. */
  fill_to(&d->br, &b, 56); /* 2 flags and two codes with extra bits: 56 */
  const uint64_t a = b.acc;
  const int use = (int)(a >> 63), reuse = (int)(a >> 62) & 1, coded = use & !reuse;
  const c63_huff_lut *mvt = &d->luts[C63_HUFF_MV];
  const uint32_t ex = c63_huff_entry(mvt, (uint32_t)(a >> 30));
  const int lx = c63_huff_entry_bits(ex);
  const uint32_t ey = c63_huff_entry(mvt, (uint32_t)((a << 2 << lx) >> 32));
  const int ly = c63_huff_entry_bits(ey);
  /* The reference reads before the start of its array here. */
  if (use && reuse && idx == 0)
    FAIL(C63_ERR_BITSTREAM, "vector reuse at the first block of plane %d", c);
  if (coded && (ex == C63_HUFF_LUT_NONE || ey == C63_HUFF_LUT_NONE))
    FAIL(C63_ERR_BITSTREAM, "invalid motion vector code");
  skip(&b, use ? (coded ? 2 + lx + ly : 2) : 1);
  const c63_mv left = mvs[idx - (idx != 0)]; /* unused at idx 0 */
  /* Any size of the table (0..11), kept in an int8_t as the reference keeps
   * it: values past +-127 wrap (two's complement), as there. */
  const int8_t vx = (int8_t)(uint8_t)(c63_huff_entry_value(ex) & 0xff);
  const int8_t vy = (int8_t)(uint8_t)(c63_huff_entry_value(ey) & 0xff);
  const c63_mv mv = {.x = (int8_t)(use ? (reuse ? left.x : vx) : 0),
                     .y = (int8_t)(use ? (reuse ? left.y : vy) : 0),
                     .use_mv = (uint8_t)use};
  mvs[idx] = mv;
  /* Keyframes are not predicted: their vectors are read and ignored.
   * In a delta frame the reference reads ref[(y + mv_y) * w + x + mv_x]
   * for the block's pixels: a vector past the left or right edge goes on
   * in the neighbouring row, which is fine while the reads stay inside the
   * plane's buffer (c63_mv_reads_inside); beyond it they are not. */
  if (use && !keyframe && !c63_mv_reads_inside(g->pad_w[c], g->pad_h[c], bx, by, mv.x, mv.y))
    FAIL(C63_ERR_BITSTREAM, "motion vector (%d,%d) of block %d,%d reads outside plane %d", mv.x,
         mv.y, bx, by, c);

  /* A block adds at most 64 entries; c63_sparse_entries_bound sizes the
   * array so that this never fails on a frame of the bound's size. */
  if (f->entries_cap - f->n_entries < 64)
    FAIL(C63_ERR_BITSTREAM, "more coefficients than frame data of this size can code");
  uint32_t *e = f->entries + f->n_entries, *e0 = e;
  const uint32_t dc = next_code(&d->br, &b, &d->luts[chroma ? C63_HUFF_DC1 : C63_HUFF_DC0]);
  if (dc == C63_HUFF_LUT_NONE)
    FAIL(C63_ERR_BITSTREAM, "invalid DC code (plane %d block %d,%d)", c, bx, by);
  /* The reference keeps DC values in int16_t. */
  *prev_dc = (int16_t)(*prev_dc + c63_huff_entry_value(dc));
  *e = c63_sparse_entry(0, *prev_dc);
  e += *prev_dc != 0;

  const int bad =
      decode_ac(d, &b, &d->luts[chroma ? C63_HUFF_AC1 : C63_HUFF_AC0], &e, &spill, &spill_value);
  if (bad) FAIL(C63_ERR_BITSTREAM, "invalid AC code (plane %d block %d,%d)", c, bx, by);
  d->br.acc = b.acc;
  d->br.nbits = b.nbits;
  if (c63_br_overrun(&d->br))
    FAIL(C63_ERR_TRUNCATED, "frame data ends inside block %d,%d of plane %d", bx, by, c);
  f->start[blk] = (uint32_t)f->n_entries;
  f->count[blk] = (uint8_t)(e - e0);
  f->n_entries += (size_t)(e - e0);
  return spill < 0 ? C63_OK : spill_ac(d, g, c, bx, by, f, blk, spill, spill_value);
}

/* Whether the data ends with an FF whose stuffing byte is missing, and the
 * decoding reached that FF. The reference-compatible verdict counts it as
 * reached when the decoder looked at it: every read looks at the bits it
 * takes, and a Huffman code at the 16 bits from its start (the longest
 * code), whatever the code's length. Reading ahead further (as the refill
 * does) does not count. */
static int ends_with_unpaired_ff(const decode_ctx *d)
{
  if (!d->br.bad_stuff) return 0;
  /* No refill since the last code: the reader's count still holds. */
  const uint64_t last_code_at = c63_br_bits_in(&d->br) - (uint64_t)d->last_code_nbits;
  uint64_t seen = c63_br_position(&d->br);
  if (last_code_at + 16 > seen) seen = last_code_at + 16;
  return seen > d->br.bad_stuff_bit;
}

int c63_entropy_decode(const uint8_t *data, size_t size, const c63_geometry *g, int keyframe,
                       c63_sparse_frame *f, char *msg, size_t msg_size)
{
  decode_ctx ctx = {.luts = c63_huff_luts(), .msg = msg, .msg_size = msg_size};
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
  if (ends_with_unpaired_ff(d)) FAIL(C63_ERR_BITSTREAM, "frame data ends with an FF byte");
  return C63_OK;
}
