/* Entropy decoder: the inverse of entropy_encode.c, validating every code,
 * coefficient index and vector so corrupt data yields an error, never an
 * out-of-bounds access.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "bitreader.h"
#include "c63/c63.h"
#include "entropy.h"
#include "huff_lut.h"
#include "huff_lut_cpu.h"
#include "sparse.h"
#include "tables.h"

#if defined(__GNUC__)
#define ALWAYS_INLINE inline __attribute__((always_inline))
#define NOINLINE __attribute__((noinline))
#define UNLIKELY(x) __builtin_expect(!!(x), 0)
#define LIKELY(x) __builtin_expect(!!(x), 1)
#else
#define ALWAYS_INLINE inline
#define NOINLINE
#define UNLIKELY(x) (x)
#define LIKELY(x) (x)
#endif

/* What the error paths need. */
typedef struct decode_ctx {
  const c63_geometry *g;
  c63_sparse_frame *f;
  char *msg;
  size_t msg_size;
} decode_ctx;

/* The decoder's state and what it reads for every block: a local of
 * c63_entropy_decode whose address never leaves the inlined block decoder,
 * so that it stays in registers (or in stack slots of its own) although
 * the stores of counts and vectors (uint8_t, which may alias anything)
 * would otherwise make every field a reload from memory. */
typedef struct frame_state {
  c63_bitreader br;
  uint32_t *out; /* the next entry */
  int prev_dc[3];
  /* Bits the reader held when the last AC code began
   * (ends_with_unpaired_ff): a block's last code is an AC code. */
  int last_code_nbits;
  const c63_huff_lut *luts;
  const c63_huff_steps *steps;
  uint32_t *entries, *entries_end; /* the array, and entries_cap past it */
  /* Per plane, at its first block: what the block decoder stores. */
  uint32_t *start[3];
  uint8_t *count[3];
  c63_mv *mvs[3];
  int pad_w[3], pad_h[3];
  /* Whether the vectors of the current MCU row need the check that they
   * read inside their plane: bit 0, 1: the two luma block rows; 2: the
   * chroma rows. */
  unsigned check_rows;
} frame_state;

/* Returns code with the message set: out of line, off the decoder's path. */
static NOINLINE int fail(const decode_ctx *d, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static NOINLINE int fail(const decode_ctx *d, int code, const char *fmt, ...)
{
  if (d->msg && d->msg_size) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->msg, d->msg_size, fmt, ap);
    va_end(ap);
  }
  return code;
}

#define FAIL(code, ...) return fail(d, code, __VA_ARGS__)

/* The refill where the next eight bytes hold an FF or the data ends, by
 * value: the frame state's address does not escape. */
static NOINLINE c63_bitreader refill_slow(c63_bitreader br)
{
  c63_br_refill(&br);
  return br;
}

/* At least n (<= 56) bits in the reader. */
static ALWAYS_INLINE void fill_to(c63_bitreader *br, int n)
{
  if (br->nbits >= n || c63_br_refill_fast(br, &br->acc, &br->nbits)) return;
  *br = refill_slow(*br);
}

/* At least n (<= 56) bits in the reader, topped up by eight bytes whenever
 * they hold no FF whatever the count: a branch on the count, taken every
 * few codes, would be mispredicted often. */
static ALWAYS_INLINE void top_up(c63_bitreader *br, int n)
{
  if (LIKELY(c63_br_refill_fast(br, &br->acc, &br->nbits)) || br->nbits >= n) return;
  *br = refill_slow(*br);
}

/* At least 32 bits in the reader (a code and its extra bits take at most 27). */
static ALWAYS_INLINE void fill(c63_bitreader *br)
{
  fill_to(br, 32);
}

static ALWAYS_INLINE void skip(c63_bitreader *br, int n)
{
  br->acc <<= n;
  br->nbits -= n;
}

/* The entry (huff_lut.h) of the next code of table t, value included, and
 * the bits it takes consumed; 0 (nothing consumed) when there is no code. */
static ALWAYS_INLINE uint32_t next_code(c63_bitreader *br, const c63_huff_lut *t)
{
  fill(br);
  const uint32_t e = c63_huff_entry(t, (uint32_t)(br->acc >> 32));
  skip(br, c63_huff_entry_bits(e));
  return e;
}

/* The length of EOB's code: 1010 in the luma table, 00 in the chroma one
 * (JPEG K.5). */
static ALWAYS_INLINE int eob_bits(int chroma)
{
  return chroma ? 2 : 4;
}

/* One AC symbol of table t decoded alone at *at (index << 16), its entry
 * appended at *pe (docs/format.md 4.6). A run past coefficient 63 ends the
 * block with *spill = index - 64 and its value. Returns 0 to go on, 1 when
 * the block ends, -1 for a bit pattern that is no code (the tables have no
 * other symbols of size 0 than EOB and ZRL). An entry >> 12 adds
 * run << 16 | value to the index << 16 (huff_lut.h). */
static ALWAYS_INLINE int ac_symbol_alone(frame_state *s, const c63_huff_lut *t, uint32_t *at,
                                         uint32_t **pe, int *spill, int *spill_value)
{
  const uint32_t end = 64u << 16;
  fill(&s->br);
  s->last_code_nbits = s->br.nbits;
  const uint32_t en = c63_huff_entry(t, (uint32_t)(s->br.acc >> 32));
  skip(&s->br, c63_huff_entry_bits(en));
  if (en & C63_HUFF_LUT_SPECIAL) {
    const int sym = c63_huff_entry_symbol(en);
    if (sym == 0x00) return 1; /* EOB */
    if (sym != 0xf0) return -1;
    *at += 16u << 16; /* ZRL */
    return *at >= end;
  }
  const uint32_t entry = *at + (en >> 12);
  if (entry >= end) {
    *spill = (int)(entry >> 16) - 64;
    *spill_value = c63_huff_entry_value(en);
    return 1; /* the reference's loop ends here too, without an EOB */
  }
  *(*pe)++ = entry;           /* size >= 1: never zero */
  *at = (entry | 0xffff) + 1; /* the next index, << 16 */
  return *at >= end;
}

/* Step st (huff_lut_cpu.h) of a block's AC coefficients at *at (index <<
 * 16), appended at *pe. A step is taken whole where its coefficients end
 * before index 63; otherwise, and for what no step holds, the next symbol
 * is decoded alone, so every block decodes as symbol by symbol. Both
 * entries are written whatever the step holds: the only branch that
 * depends on the data is the one that leaves the loop. Returns 0 to go on
 * (the step took at most C63_STEP_BITS bits), 2 to go on after a symbol
 * decoded alone (up to 27 bits), or as ac_symbol_alone: 1 when the block
 * ends, -1 for a bit pattern that is no code. */
static ALWAYS_INLINE int take_step(frame_state *s, int chroma, uint64_t st, uint32_t *at,
                                   uint32_t **pe, int *spill, int *spill_value)
{
  const uint32_t end = 64u << 16;
  const unsigned n = c63_step_coefs(st);
  const uint32_t x1 = *at + c63_step_first(st), x2 = *at + c63_step_second(st);
  const uint32_t next = *at + c63_step_advance(st);
  uint32_t *e = *pe;
  e[0] = x1;
  e[1] = x2;
  if (LIKELY(next < end)) {
    *pe = e + n;
    *at = next;
    skip(&s->br, c63_step_bits(st));
    return 0;
  }
  /* STOP, or past coefficient 62 */
  const uint32_t last = n == 2 ? x2 : x1;
  if ((st & C63_STEP_EOB) && ((n == 0) | (last < 63u << 16))) {
    *pe = e + n;
    skip(&s->br, c63_step_bits(st));
    s->last_code_nbits = s->br.nbits + eob_bits(chroma);
    return 1;
  }
  const int r = ac_symbol_alone(s, s->luts + C63_HUFF_AC0 + chroma, at, pe, spill, spill_value);
  return r ? r : 2;
}

/* The AC coefficients of a block from step st on, appended at *pe, which
 * has room for 66 entries (64 and C63_SPARSE_SLACK). Steps come in pairs
 * and the reader is topped up once a pair: at least 32 bits hold two steps
 * and the next lookup, so that no branch on the reader's count sits
 * between the steps. st comes with at least 22 bits in the reader. Returns
 * 0, or -1 for a bit pattern that is no code; *spill as ac_symbol_alone. */
static ALWAYS_INLINE int decode_ac(frame_state *s, int chroma, uint64_t st, uint32_t **pe,
                                   int *spill, int *spill_value)
{
  const uint64_t *steps = s->steps->ac[chroma];
  uint32_t at = 1u << 16;
  for (;;) {
    int r = take_step(s, chroma, st, &at, pe, spill, spill_value);
    if (!r) {
      st = steps[s->br.acc >> (64 - C63_STEP_BITS)];
      r = take_step(s, chroma, st, &at, pe, spill, spill_value);
    }
    if (r == 1 || r < 0) return r < 0 ? -1 : 0;
    top_up(&s->br, 32);
    st = steps[s->br.acc >> (64 - C63_STEP_BITS)];
  }
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
static int sparse_set(const decode_ctx *d, c63_sparse_frame *f, size_t blk, int index, int value)
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
 * lands outside the reference's buffer, which is rejected. f->n_entries
 * counts the entries so far. */
static NOINLINE int spill_ac(const decode_ctx *d, int c, int bx, int by, size_t blk, int spill,
                             int value)
{
  const c63_geometry *g = d->g;
  int tx = bx + 1, ty = by;
  if (tx == g->blocks_w[c]) {
    tx = 0;
    ty++;
  }
  if (ty == g->blocks_h[c])
    FAIL(C63_ERR_BITSTREAM, "AC coefficients run past the end of plane %d (block %d,%d)", c, bx,
         by);
  if (mcu_order(g, c, tx, ty) > mcu_order(g, c, bx, by)) return C63_OK;
  return sparse_set(d, d->f, blk + 1, spill, value); /* the next block in raster order */
}

/* A vector as c63_mv's four bytes (x, y, use_mv, 0), stored at once. */
static ALWAYS_INLINE uint32_t mv_word(uint32_t x, uint32_t y, uint32_t use)
{
  return (x & 0xff) | (y & 0xff) << 8 | use << 16;
}

static ALWAYS_INLINE void store_mv(c63_mv *mv, uint32_t w)
{
  memcpy(mv, &w, sizeof(w));
}

/* The two codes of a coded vector at the top of a (after the flags) that
 * the vector table (huff_lut_cpu.h) does not hold: sizes past 7, whose
 * values the vector keeps the low eight bits of, as the reference does,
 * or no code. Returns the vector's word with the bits taken in bits
 * 24..31, or 0 for no code. */
static NOINLINE uint32_t long_vector(const c63_huff_lut *mvt, uint64_t a)
{
  const uint32_t ex = c63_huff_entry(mvt, (uint32_t)(a >> 32));
  const int lx = c63_huff_entry_bits(ex);
  const uint32_t ey = c63_huff_entry(mvt, (uint32_t)((a << lx) >> 32));
  if ((ex == C63_HUFF_LUT_NONE) | (ey == C63_HUFF_LUT_NONE)) return 0;
  return mv_word((uint32_t)c63_huff_entry_value(ex), (uint32_t)c63_huff_entry_value(ey), 1) |
         (uint32_t)(lx + c63_huff_entry_bits(ey)) << 24;
}

/* Both vector flags and codes of a block (docs/format.md 4.5), with the
 * block's first fill of the reader: at least 56 bits, of which a vector
 * that the vector table holds takes at most 26, leaving 30 for the DC step
 * (decode_block) and the first AC lookup after it (decode_ac); a longer one
 * (up to 2 + 2 * 20 bits, DC table 0's longest code with its value) fills
 * the reader again. mvs is the plane's
 * vectors, all zero before the frame: the reference decodes into a zeroed
 * array, and a reused vector is the one of the block before this one in
 * the plane's raster order whether that block was decoded yet or not (at
 * the left edge of the second luma row of an MCU row it was not: zero),
 * had a vector or not (then zero). */
static ALWAYS_INLINE int decode_vector(const decode_ctx *d, frame_state *s, int c, int bx, int by,
                                       size_t idx)
{
  top_up(&s->br, 56);
  const uint64_t a = s->br.acc;
  const uint32_t use = (uint32_t)(a >> 63), reuse = (uint32_t)(a >> 62) & 1;
  c63_mv *mvs = s->mvs[c];
  uint32_t mv;
  if (use & !reuse) { /* a coded vector: both components from the vector table */
    const uint16_t *mvt = s->steps->mv;
    const uint32_t ex = mvt[(a << 2) >> (64 - C63_MV_BITS)];
    const int lx = c63_mv_entry_bits(ex);
    const uint32_t ey = mvt[(a << 2 << lx) >> (64 - C63_MV_BITS)];
    const int bits = 2 + lx + c63_mv_entry_bits(ey);
    mv = mv_word(ex, ey, 1);
    if (UNLIKELY(bits > 2 + 2 * C63_MV_BITS)) { /* one the table does not hold */
      mv = long_vector(&s->luts[C63_HUFF_MV], a << 2);
      if (!mv) FAIL(C63_ERR_BITSTREAM, "invalid motion vector code");
      skip(&s->br, 2 + (int)(mv >> 24));
      fill(&s->br); /* up to 42 bits taken: the DC and AC steps count on 30 left */
      mv &= 0xffffff;
    } else
      skip(&s->br, bits);
  } else { /* none (1 bit), or the left neighbour's (2 bits) */
    /* The reference reads before the start of its array here. */
    if (UNLIKELY(use & (idx == 0)))
      FAIL(C63_ERR_BITSTREAM, "vector reuse at the first block of plane %d", c);
    uint32_t left;
    memcpy(&left, &mvs[idx - (idx != 0)], sizeof(left)); /* unused at idx 0 */
    skip(&s->br, 1 + (int)use);
    mv = use ? mv_word(left, left >> 8, 1) : 0;
  }
  store_mv(&mvs[idx], mv);
  /* Keyframes are not predicted: their vectors are read and ignored.
   * In a delta frame the reference reads ref[(y + mv_y) * w + x + mv_x]
   * for the block's pixels: a vector past the left or right edge goes on
   * in the neighbouring row, which is fine while the reads stay inside the
   * plane's buffer (c63_mv_reads_inside); beyond it they are not. */
  const int mx = (int8_t)(uint8_t)mv, my = (int8_t)(uint8_t)(mv >> 8);
  if (UNLIKELY(use & (s->check_rows >> (c ? 2 : by & 1)) & 1) &&
      !c63_mv_reads_inside(s->pad_w[c], s->pad_h[c], bx, by, mx, my))
    FAIL(C63_ERR_BITSTREAM, "motion vector (%d,%d) of block %d,%d reads outside plane %d", mx, my,
         bx, by, c);
  return C63_OK;
}

/* Block (bx, by) of plane c, idx in the plane's raster order, appended to
 * the frame's entries. */
static ALWAYS_INLINE int decode_block(const decode_ctx *d, frame_state *s, int c, int bx, int by,
                                      size_t idx)
{
  const int chroma = c != 0;
  int spill = -1, spill_value = 0;
  int r = decode_vector(d, s, c, bx, by, idx);
  if (r) return r;

  /* A block adds at most 64 entries; c63_sparse_entries_bound sizes the
   * array so that this never fails on a frame of the bound's size. */
  uint32_t *e0 = s->out, *e = e0;
  if (UNLIKELY(s->entries_end - e0 < 64))
    FAIL(C63_ERR_BITSTREAM, "more coefficients than frame data of this size can code");
  /* decode_ac writes up to two entries past the block's last (sparse.h:
   * C63_SPARSE_SLACK). */
  uint64_t st = s->steps->dc[chroma][s->br.acc >> (64 - C63_STEP_BITS)];
  int diff = c63_step_dc(st);
  if (UNLIKELY(!c63_step_bits(st))) { /* a DC code that the step does not hold */
    const uint32_t dc = next_code(&s->br, s->luts + C63_HUFF_DC0 + chroma);
    if (dc == C63_HUFF_LUT_NONE)
      FAIL(C63_ERR_BITSTREAM, "invalid DC code (plane %d block %d,%d)", c, bx, by);
    diff = c63_huff_entry_value(dc);
    st = 0;       /* an empty step: the AC symbols from the next lookup */
    fill(&s->br); /* which decode_ac makes without a fill */
  }
  /* The reference keeps DC values in int16_t. */
  const int dc = (int16_t)(s->prev_dc[c] + diff);
  s->prev_dc[c] = dc;
  *e = c63_sparse_entry(0, dc);
  e += dc != 0;

  if ((st & (C63_STEP_EOB | C63_STEP_COEFS)) == C63_STEP_EOB) { /* no AC coefficient */
    skip(&s->br, c63_step_bits(st));
    s->last_code_nbits = s->br.nbits + eob_bits(chroma);
  } else if (UNLIKELY(decode_ac(s, chroma, st, &e, &spill, &spill_value)))
    FAIL(C63_ERR_BITSTREAM, "invalid AC code (plane %d block %d,%d)", c, bx, by);
  if (UNLIKELY(c63_br_overrun(&s->br)))
    FAIL(C63_ERR_TRUNCATED, "frame data ends inside block %d,%d of plane %d", bx, by, c);
  s->start[c][idx] = (uint32_t)(e0 - s->entries);
  s->count[c][idx] = (uint8_t)(e - e0);
  s->out = e;
  if (LIKELY(spill < 0)) return C63_OK;
  d->f->n_entries = (size_t)(e - s->entries);
  r = spill_ac(d, c, bx, by, c63_block_offset(d->g, c) + idx, spill, spill_value);
  s->out = s->entries + d->f->n_entries;
  return r;
}

/* Whether the data ends with an FF whose stuffing byte is missing, and the
 * decoding reached that FF. The reference-compatible verdict counts it as
 * reached when the decoder looked at it: every read looks at the bits it
 * takes, and a Huffman code at the 16 bits from its start (the longest
 * code), whatever the code's length. Reading ahead further (as the refill
 * does) does not count. */
static ALWAYS_INLINE int ends_with_unpaired_ff(const frame_state *s)
{
  if (!s->br.bad_stuff) return 0;
  /* No refill since the last code: the reader's count still holds. */
  const uint64_t last_code_at = c63_br_bits_in(&s->br) - (uint64_t)s->last_code_nbits;
  uint64_t seen = c63_br_position(&s->br);
  if (last_code_at + 16 > seen) seen = last_code_at + 16;
  return seen > s->br.bad_stuff_bit;
}

/* Whether any vector of a block in row by of plane c reads inside the
 * plane: from the leftmost block with the vector furthest up and left to
 * the rightmost with the vector furthest down and right. Such rows are
 * consecutive. */
static int row_reads_inside(const c63_geometry *g, int c, int by)
{
  return c63_mv_reads_inside(g->pad_w[c], g->pad_h[c], 0, by, INT8_MIN, INT8_MIN) &&
         c63_mv_reads_inside(g->pad_w[c], g->pad_h[c], g->blocks_w[c] - 1, by, INT8_MAX, INT8_MAX);
}

/* The six blocks of MCU (mx, my) in coding order (c63_mcu_block), each
 * inlined with its plane's constants. */
static ALWAYS_INLINE int decode_mcu(const decode_ctx *d, frame_state *s, int mx, int my)
{
  const int bw = d->g->blocks_w[0];
  const size_t y = (size_t)2 * my * bw + 2 * mx, uv = (size_t)my * d->g->blocks_w[1] + mx;
  int r;
  if ((r = decode_block(d, s, 0, 2 * mx, 2 * my, y)) ||
      (r = decode_block(d, s, 0, 2 * mx + 1, 2 * my, y + 1)) ||
      (r = decode_block(d, s, 0, 2 * mx, 2 * my + 1, y + bw)) ||
      (r = decode_block(d, s, 0, 2 * mx + 1, 2 * my + 1, y + bw + 1)) ||
      (r = decode_block(d, s, 1, mx, my, uv)))
    return r;
  return decode_block(d, s, 2, mx, my, uv);
}

int c63_entropy_decode(const uint8_t *data, size_t size, const c63_geometry *g, int keyframe,
                       c63_sparse_frame *f, char *msg, size_t msg_size)
{
  return c63_entropy_decode_steps(data, size, g, keyframe, c63_huff_steps_get(), f, msg, msg_size);
}

int c63_entropy_decode_steps(const uint8_t *data, size_t size, const c63_geometry *g, int keyframe,
                             const c63_huff_steps *steps, c63_sparse_frame *f, char *msg,
                             size_t msg_size)
{
  const decode_ctx ctx = {.g = g, .f = f, .msg = msg, .msg_size = msg_size};
  const decode_ctx *d = &ctx;
  frame_state s = {.out = f->entries,
                   .luts = c63_huff_luts(),
                   .steps = steps,
                   .entries = f->entries,
                   .entries_end = f->entries + f->entries_cap};
  int safe_first[3], safe_last[3];

  if (f->blocks_cap < c63_frame_blocks(g))
    FAIL(C63_ERR_INVALID_ARG, "coefficient buffers too small for a %dx%d picture", g->width,
         g->height);
  c63_bitreader br; /* initialised apart: s's address never escapes */
  c63_br_init(&br, data, size);
  s.br = br;
  f->n_entries = 0;
  memset(f->mvs, 0, c63_frame_blocks(g) * sizeof(c63_mv));
  for (int c = 0; c < 3; c++) {
    const size_t first = c63_block_offset(g, c);
    s.start[c] = f->start + first;
    s.count[c] = f->count + first;
    s.mvs[c] = f->mvs + first;
    s.pad_w[c] = g->pad_w[c];
    s.pad_h[c] = g->pad_h[c];
    safe_first[c] = 0;
    safe_last[c] = g->blocks_h[c] - 1;
    while (safe_first[c] < g->blocks_h[c] && !row_reads_inside(g, c, safe_first[c]))
      safe_first[c]++;
    while (safe_last[c] >= 0 && !row_reads_inside(g, c, safe_last[c]))
      safe_last[c]--;
  }
  for (int my = 0; my < g->mcus_h; my++) {
    /* Keyframes are not predicted: their vectors are read and ignored. */
    s.check_rows = 0;
    for (int c = 0; c < 3; c++) {
      for (int by = c ? my : 2 * my; by <= (c ? my : 2 * my + 1); by++)
        if (!keyframe && (by < safe_first[c] || by > safe_last[c]))
          s.check_rows |= 1u << (c ? 2 : by & 1);
    }
    for (int mx = 0; mx < g->mcus_w; mx++) {
      const int r = decode_mcu(d, &s, mx, my);
      if (r) {
        f->n_entries = (size_t)(s.out - s.entries); /* the blocks decoded before the error */
        return r;
      }
    }
  }
  f->n_entries = (size_t)(s.out - s.entries);
  if (ends_with_unpaired_ff(&s)) FAIL(C63_ERR_BITSTREAM, "frame data ends with an FF byte");
  return C63_OK;
}
