/* Bit writer and reader: MSB-first packing, FF 00 stuffing, the reference's
 * end-of-frame flush rule, overrun detection, and Huffman round trips.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdlib.h>
#include <string.h>

#include "c63/bitreader.h"
#include "c63/bitwriter.h"
#include "c63/tables.h"
#include "tutil.h"

/* Deterministic, so failures reproduce. */
static uint64_t rng = 0x12345678u;

/* A bit writer into a local buffer; finish() stuffs its bytes into a frame
 * buffer and applies the flush rule, as the entropy coder does. */
typedef struct {
  uint8_t bits[1024];
  c63_bitwriter bw;
  c63_bytebuf buf;
} writer;

static void writer_init(writer *w)
{
  memset(w, 0, sizeof(*w));
  c63_bw_init(&w->bw, w->bits);
}

static void finish(writer *w)
{
  c63_bw_flush_bytes(&w->bw);
  TU_CHECK_EQ(c63_write_stuffed(&w->buf, w->bw.start, (size_t)(w->bw.p - w->bw.start),
                                (uint32_t)w->bw.acc, w->bw.nbits),
              0);
}

static void test_packing(void)
{
  writer w;
  writer_init(&w);
  c63_bw_put(&w.bw, 0x5, 3); /* 101 */
  c63_bw_put(&w.bw, 0x0, 2); /* 00 */
  c63_bw_put(&w.bw, 0x7, 3); /* 111 -> 1010 0111 = A7 */
  c63_bw_put(&w.bw, 0xf, 4); /* 1111 */
  c63_bw_flush_bytes(&w.bw);
  TU_CHECK_EQ(w.bw.p - w.bw.start, 1);
  TU_CHECK_EQ(w.bits[0], 0xa7);
  finish(&w); /* pending 1111 left-aligned, zero-padded: F0 */
  TU_CHECK_EQ(w.buf.size, 2);
  TU_CHECK_EQ(w.buf.data[0], 0xa7);
  TU_CHECK_EQ(w.buf.data[1], 0xf0);
  c63_bytebuf_free(&w.buf);

  /* 32-bit words go out big-endian, whatever the alignment of the puts */
  writer_init(&w);
  c63_bw_put(&w.bw, 0x1, 1);
  c63_bw_put(&w.bw, 0x12345678, 32);
  c63_bw_put(&w.bw, 0x7f, 7);
  c63_bw_flush_bytes(&w.bw);
  const uint8_t want[5] = {0x89, 0x1a, 0x2b, 0x3c, 0x7f};
  TU_CHECK_EQ(w.bw.p - w.bw.start, 5);
  TU_CHECK_TRUE(memcmp(w.bits, want, 5) == 0);
}

/* Concatenating writers gives the same bits as writing them in one. */
static void test_append(void)
{
  writer one, a, b, cat;
  writer_init(&one);
  writer_init(&a);
  writer_init(&b);
  writer_init(&cat);
  for (int i = 0; i < 300; i++) {
    uint32_t v = tu_rand(&rng), n = 1 + v % 31;
    v &= (1u << n) - 1;
    c63_bw_put(&one.bw, v, (int)n);
    c63_bw_put(i < 137 ? &a.bw : &b.bw, v, (int)n);
  }
  c63_bw_append(&cat.bw, &a.bw);
  c63_bw_append(&cat.bw, &b.bw);
  c63_bw_flush_bytes(&one.bw);
  c63_bw_flush_bytes(&cat.bw);
  TU_CHECK_EQ(cat.bw.p - cat.bw.start, one.bw.p - one.bw.start);
  TU_CHECK_TRUE(memcmp(cat.bits, one.bits, (size_t)(one.bw.p - one.bw.start)) == 0);
  TU_CHECK_EQ(cat.bw.nbits, one.bw.nbits);
  TU_CHECK_EQ(cat.bw.acc & 0xff, one.bw.acc & 0xff);
}

static void test_stuffing(void)
{
  writer w;
  writer_init(&w);
  c63_bw_put(&w.bw, 0xff, 8);
  c63_bw_put(&w.bw, 0x1, 1);
  c63_bw_put(&w.bw, 0x7f, 7); /* second FF built from two puts */
  c63_bw_put(&w.bw, 0x12, 8);
  finish(&w);
  const uint8_t want[6] = {0xff, 0x00, 0xff, 0x00, 0x12, 0x00};
  TU_CHECK_EQ(w.buf.size, 6);
  TU_CHECK_TRUE(memcmp(w.buf.data, want, 6) == 0);
  c63_bytebuf_free(&w.buf);
}

/* Every byte an FF, with the flush byte after it, into a buffer whose free
 * space is exactly twice the data: the buffer grows to hold all of it. */
static void test_stuffing_worst_case(void)
{
  uint8_t data[2047];
  c63_bytebuf b = {0};

  memset(data, 0xff, sizeof data);
  c63_bytebuf_put(&b, "ab", 2);
  TU_CHECK_EQ(b.capacity - b.size, 2 * sizeof data);
  TU_CHECK_EQ(c63_write_stuffed(&b, data, sizeof data, 0, 0), 0);
  TU_CHECK_EQ(b.size, 2 + 2 * sizeof data + 1);
  TU_CHECK_TRUE(b.size <= b.capacity);
  for (size_t i = 0; i < sizeof data; i++)
    TU_CHECK_TRUE(b.data[2 + 2 * i] == 0xff && b.data[3 + 2 * i] == 0x00);
  TU_CHECK_EQ(b.data[b.size - 1], 0x00);
  c63_bytebuf_free(&b);
}

static void test_flush_rule(void)
{
  writer w;

  /* Data ending on a byte boundary: the non-zero register still makes the
   * reference write a 00 byte. */
  writer_init(&w);
  c63_bw_put(&w.bw, 0x12, 8);
  finish(&w);
  TU_CHECK_EQ(w.buf.size, 2);
  TU_CHECK_EQ(w.buf.data[1], 0x00);
  c63_bytebuf_free(&w.buf);

  /* The last 32 bits all zero: no flush byte, even with bits pending. */
  writer_init(&w);
  c63_bw_put(&w.bw, 0x1, 1);
  c63_bw_put(&w.bw, 0, 20);
  c63_bw_put(&w.bw, 0, 20); /* 41 bits, last 32 zero, 1 bit pending */
  finish(&w);
  TU_CHECK_EQ(w.buf.size, 5);
  c63_bytebuf_free(&w.buf);

  /* One set bit among the last 32: the pending bits are written. */
  writer_init(&w);
  c63_bw_put(&w.bw, 0x1, 1);
  c63_bw_put(&w.bw, 0, 30); /* 31 bits: register non-zero, 7 pending zero bits */
  finish(&w);
  TU_CHECK_EQ(w.buf.size, 4);
  TU_CHECK_EQ(w.buf.data[3], 0x00);
  c63_bytebuf_free(&w.buf);

  /* Fewer than 32 bits in the frame: the register started at zero. */
  writer_init(&w);
  c63_bw_put(&w.bw, 0x5, 3);
  finish(&w);
  TU_CHECK_EQ(w.buf.size, 1);
  TU_CHECK_EQ(w.buf.data[0], 0xa0);
  c63_bytebuf_free(&w.buf);
}

static void test_reader(void)
{
  /* 1010 0111, FF 00 (stuffed FF), 1100 0000 */
  const uint8_t data[4] = {0xa7, 0xff, 0x00, 0xc0};
  c63_bitreader br;
  c63_br_init(&br, data, sizeof(data));
  TU_CHECK_EQ(c63_br_get(&br, 3), 0x5);
  TU_CHECK_EQ(c63_br_get(&br, 5), 0x07);
  TU_CHECK_EQ(c63_br_get(&br, 8), 0xff); /* the 00 after FF is skipped */
  TU_CHECK_EQ(c63_br_get(&br, 2), 0x3);
  TU_CHECK_TRUE(!c63_br_overrun(&br));
  TU_CHECK_EQ(c63_br_get(&br, 6), 0);
  TU_CHECK_TRUE(!c63_br_overrun(&br));
  TU_CHECK_EQ(c63_br_get(&br, 16), 0); /* past the end: zeros, flagged */
  TU_CHECK_TRUE(c63_br_overrun(&br));
  TU_CHECK_TRUE(!br.bad_stuff);

  /* the byte after FF is dropped whatever it is, as the reference does */
  const uint8_t odd[3] = {0xff, 0x12, 0x34};
  c63_br_init(&br, odd, sizeof(odd));
  TU_CHECK_EQ(c63_br_get(&br, 16), 0xff34);
  TU_CHECK_TRUE(!br.bad_stuff);

  /* an FF at the very end has no byte to drop */
  const uint8_t bad[2] = {0x12, 0xff};
  c63_br_init(&br, bad, sizeof(bad));
  c63_br_get(&br, 16);
  TU_CHECK_TRUE(br.bad_stuff);
}

/* Every symbol of every table through the writer and back through the
 * canonical decoding tables. */
static void test_huffman_roundtrip(void)
{
  const c63_huff_enc *enc = c63_huff_enc_tables();
  const c63_huff_dec *dec = c63_huff_dec_tables();
  for (int t = 0; t < 4; t++) {
    const c63_huff_spec *s = &c63_huff_specs[t];
    writer w;
    writer_init(&w);
    for (int i = 0; i < s->nvals; i++) {
      TU_CHECK_TRUE(enc[t].len[s->vals[i]] >= 1 && enc[t].len[s->vals[i]] <= 16);
      c63_bw_put(&w.bw, enc[t].code[s->vals[i]], enc[t].len[s->vals[i]]);
    }
    finish(&w);
    c63_bitreader br;
    c63_br_init(&br, w.buf.data, w.buf.size);
    for (int i = 0; i < s->nvals; i++) {
      /* decode by walking lengths, as the entropy decoder does */
      uint32_t look = c63_br_peek(&br, 16);
      int sym = -1;
      for (int len = 1; len <= 16 && sym < 0; len++) {
        int32_t code = (int32_t)(look >> (16 - len));
        if (dec[t].maxcode[len] >= 0 && code >= dec[t].mincode[len] &&
            code <= dec[t].maxcode[len]) {
          sym = dec[t].vals[dec[t].valptr[len] + code - dec[t].mincode[len]];
          c63_br_skip(&br, len);
        }
      }
      TU_CHECK_EQ(sym, s->vals[i]);
    }
    c63_bytebuf_free(&w.buf);
  }
  /* Format section 6: the motion-vector codes are the luma DC codes. */
  const uint16_t mv_code[8] = {0x0, 0x2, 0x3, 0x4, 0x5, 0x6, 0xe, 0x1e};
  const uint8_t mv_len[8] = {2, 3, 3, 3, 3, 3, 4, 5};
  for (int i = 0; i < 8; i++) {
    TU_CHECK_EQ(enc[0].code[i], mv_code[i]);
    TU_CHECK_EQ(enc[0].len[i], mv_len[i]);
  }
  /* Standard luma AC code of (run 0, size 10) is FF83; FF82 decodes as size 9. */
  TU_CHECK_EQ(enc[2].code[0x0a], 0xff83);
  TU_CHECK_EQ(enc[2].code[0x09], 0xff82);
}

static void test_quant_tables(void)
{
  uint8_t q[3][64];
  c63_make_quant_tables(25, q);
  TU_CHECK_EQ(q[0][0], 6); /* 16 / 2.5 = 6.4 */
  TU_CHECK_EQ(q[1][0], 6); /* 17 / 2.5 = 6.8 */
  TU_CHECK_EQ(q[2][63], 39);
  c63_make_quant_tables(1, q); /* 16 / 0.1 = 160, 99 / 0.1 = 990 saturates */
  TU_CHECK_EQ(q[0][0], 160);
  TU_CHECK_EQ(q[1][63], 255);
  c63_make_quant_tables(50, q);
  TU_CHECK_EQ(q[0][5], 2);
}

int main(void)
{
  test_packing();
  test_append();
  test_stuffing();
  test_stuffing_worst_case();
  test_flush_rule();
  test_reader();
  test_huffman_roundtrip();
  test_quant_tables();
  return tu_finish("test_bits");
}
