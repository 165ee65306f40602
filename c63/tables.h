/* Constant tables of the format: quantiser defaults, zig-zag order, the
 * static Huffman tables (JPEG Annex K) and the codes derived from them.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef C63_TABLES_H
#define C63_TABLES_H

#include <stdint.h>

/* Default quantiser tables in zig-zag order: [0] luma, [1] chroma. */
extern const uint8_t c63_default_quant[2][64];

/* Huffman table specifications as sent in DHT: BITS (codes per length 1..16)
 * and HUFFVAL. Index 0: DC luma, 1: DC chroma, 2: AC luma, 3: AC chroma. */
typedef struct c63_huff_spec {
  uint8_t id; /* DHT table id byte: 0x00, 0x01, 0x10, 0x11 */
  uint8_t bits[16];
  uint8_t nvals;
  const uint8_t *vals;
} c63_huff_spec;
extern const c63_huff_spec c63_huff_specs[4];

/* Encoder view: code and length for each symbol (0..255). */
typedef struct c63_huff_enc {
  uint16_t code[256];
  uint8_t len[256]; /* 0: symbol has no code */
} c63_huff_enc;

/* Decoder view: canonical decoding tables (JPEG F.2.2.3 style). */
typedef struct c63_huff_dec {
  int32_t maxcode[18]; /* largest code of each length, -1 if none */
  int32_t valptr[17];  /* index into vals of the first code of each length */
  int32_t mincode[17];
  uint8_t vals[256];
  /* 8-bit lookahead: symbol+length for codes of up to 8 bits (len 0: slow path) */
  uint8_t look_sym[256];
  uint8_t look_len[256];
} c63_huff_dec;

/* Tables built once (thread-safe, lazily) from c63_huff_specs. Index as
 * c63_huff_specs. The motion-vector table reuses the luma DC codes. */
const c63_huff_enc *c63_huff_enc_tables(void);
const c63_huff_dec *c63_huff_dec_tables(void);

enum { C63_HUFF_DC0 = 0, C63_HUFF_DC1 = 1, C63_HUFF_AC0 = 2, C63_HUFF_AC1 = 3 };
#define C63_HUFF_MV C63_HUFF_DC0

/* quant[c][z] = default / (quality / 10.0), truncated; saturated to 1..255
 * (the reference wraps above 255, i.e. below quality 5; see docs). */
void c63_make_quant_tables(int quality, uint8_t quant[3][64]);

#endif
