/* Frame headers: writing, and parsing with every field validated and every
 * read bounds-checked (c63-format.md section 2).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "frame_syntax.h"

#include <stdio.h>
#include <string.h>

#include "c63.h"
#include "tables.h"

/* DQT says 195 (the payload without its length bytes; JPEG would say 197). */
#define DQT_LENGTH 0x00c3
#define SOF_LENGTH 0x0012
#define DHT_LENGTH 0x01a2
#define SOS_LENGTH 0x000c

/* The fixed parts of SOF0 and SOS: three components, Y sampled 2x2 with
 * quantiser table 0, U and V 1x1 with tables 1 and 2; Huffman tables 0/0
 * for Y and 1/1 for U and V; spectral selection 0..63. */
static const uint8_t sof_components[10] = {3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 2};
static const uint8_t sos_payload[10] = {3, 1, 0x00, 2, 0x11, 3, 0x11, 0, 63, 0};

static void put16(c63_bytebuf *out, int v)
{
  uint8_t b[2] = {(uint8_t)(v >> 8), (uint8_t)v};
  c63_bytebuf_put(out, b, 2);
}

static void put_marker(c63_bytebuf *out, uint8_t m)
{
  uint8_t b[2] = {0xff, m};
  c63_bytebuf_put(out, b, 2);
}

void c63_write_frame_headers(c63_bytebuf *out, int width, int height, int keyframe,
                             const uint8_t quant[3][64])
{
  put_marker(out, 0xd8); /* SOI */

  put_marker(out, 0xdb); /* DQT */
  put16(out, DQT_LENGTH);
  for (int c = 0; c < 3; c++) {
    uint8_t id = (uint8_t)c;
    c63_bytebuf_put(out, &id, 1);
    c63_bytebuf_put(out, quant[c], 64);
  }

  put_marker(out, 0xc0); /* SOF0 + keyframe flag */
  put16(out, SOF_LENGTH);
  const uint8_t precision = 8;
  c63_bytebuf_put(out, &precision, 1);
  put16(out, height);
  put16(out, width);
  c63_bytebuf_put(out, sof_components, sizeof(sof_components));
  uint8_t kf = keyframe ? 1 : 0;
  c63_bytebuf_put(out, &kf, 1);

  put_marker(out, 0xc4); /* DHT */
  put16(out, DHT_LENGTH);
  for (int t = 0; t < 4; t++) {
    const c63_huff_spec *s = &c63_huff_specs[t];
    c63_bytebuf_put(out, &s->id, 1);
    c63_bytebuf_put(out, s->bits, 16);
    c63_bytebuf_put(out, s->vals, s->nvals);
  }

  put_marker(out, 0xda); /* SOS */
  put16(out, SOS_LENGTH);
  c63_bytebuf_put(out, sos_payload, sizeof(sos_payload));
}

void c63_write_eoi(c63_bytebuf *out)
{
  put_marker(out, 0xd9);
}

/* ---- Parsing ---- */

#define FAIL(code, ...)                                                                            \
  do {                                                                                             \
    if (msg && msg_size) snprintf(msg, msg_size, __VA_ARGS__);                                     \
    return code;                                                                                   \
  } while (0)

static int rd16(const uint8_t *p)
{
  return p[0] << 8 | p[1];
}

/* Expect marker m at buf[*pos]; returns 0, or a status. */
static int expect_marker(const uint8_t *buf, size_t len, size_t pos, uint8_t m)
{
  if (pos + 2 > len) return C63_ERR_TRUNCATED;
  if (buf[pos] != 0xff || buf[pos + 1] != m) return C63_ERR_BITSTREAM;
  return C63_OK;
}

/* Decoders use the static tables of the format (section 6), so a DHT that
 * says anything else cannot be decoded correctly: reject it. */
static int check_dht(const uint8_t *p, char *msg, size_t msg_size)
{
  for (int t = 0; t < 4; t++) {
    const c63_huff_spec *s = &c63_huff_specs[t];
    if (p[0] != s->id)
      FAIL(C63_ERR_BITSTREAM, "DHT table %d has class/id 0x%02X, expected 0x%02X", t, p[0], s->id);
    if (memcmp(p + 1, s->bits, 16) != 0 || memcmp(p + 17, s->vals, s->nvals) != 0)
      FAIL(C63_ERR_BITSTREAM, "DHT table 0x%02X differs from the static Codec63 table", s->id);
    p += 17 + s->nvals;
  }
  return C63_OK;
}

int c63_parse_frame_header(const uint8_t *buf, size_t len, c63_frame_header *hdr, char *msg,
                           size_t msg_size)
{
  size_t pos = 0;
  int r;

  if (!buf || !hdr) FAIL(C63_ERR_INVALID_ARG, "no %s (NULL)", !buf ? "data" : "header to fill");
  memset(hdr, 0, sizeof(*hdr));
  if ((r = expect_marker(buf, len, pos, 0xd8))) FAIL(r, "frame does not start with SOI (FF D8)");
  pos += 2;

  if ((r = expect_marker(buf, len, pos, 0xdb))) FAIL(r, "missing DQT (FF DB) after SOI");
  /* The length field is not reliable (the reference writes 195 instead of
   * 197); the segment is always three tables of 1 + 64 bytes. */
  pos += 4;
  if (pos + 3 * 65 > len) FAIL(C63_ERR_TRUNCATED, "truncated DQT");
  for (int c = 0; c < 3; c++) {
    if (buf[pos] != c) FAIL(C63_ERR_BITSTREAM, "DQT table id %d where %d expected", buf[pos], c);
    memcpy(hdr->quant[c], buf + pos + 1, 64);
    pos += 65;
  }

  if ((r = expect_marker(buf, len, pos, 0xc0))) FAIL(r, "missing SOF0 (FF C0) after DQT");
  if (pos + 4 + 16 > len) FAIL(C63_ERR_TRUNCATED, "truncated SOF0");
  const uint8_t *sof = buf + pos + 4;
  if (rd16(buf + pos + 2) != SOF_LENGTH || sof[0] != 8 || sof[5] != 3)
    FAIL(C63_ERR_BITSTREAM, "unsupported SOF0 (length %d, precision %d, %d components)",
         rd16(buf + pos + 2), sof[0], sof[5]);
  if (memcmp(sof + 5, sof_components, sizeof(sof_components)) != 0)
    FAIL(C63_ERR_BITSTREAM,
         "SOF0 component ids, sampling factors or quantiser table ids are not those of Codec63 "
         "(Y 2x2 table 0, U 1x1 table 1, V 1x1 table 2)");
  hdr->height = rd16(sof + 1);
  hdr->width = rd16(sof + 3);
  if (hdr->width < C63_MIN_SIZE || hdr->width > C63_MAX_SIZE || hdr->height < C63_MIN_SIZE ||
      hdr->height > C63_MAX_SIZE)
    FAIL(C63_ERR_BITSTREAM, "picture size %dx%d outside %d..%d", hdr->width, hdr->height,
         C63_MIN_SIZE, C63_MAX_SIZE);
  if (sof[15] > 1) FAIL(C63_ERR_BITSTREAM, "keyframe flag %d is neither 0 nor 1", sof[15]);
  hdr->keyframe = sof[15];
  pos += 2 + SOF_LENGTH;

  /* The Huffman tables are static (format section 6); the segment is
   * skipped by its length. */
  if ((r = expect_marker(buf, len, pos, 0xc4))) FAIL(r, "missing DHT (FF C4) after SOF0");
  if (pos + 4 > len) FAIL(C63_ERR_TRUNCATED, "truncated DHT");
  if (rd16(buf + pos + 2) != DHT_LENGTH)
    FAIL(C63_ERR_BITSTREAM, "DHT length %d, expected %d", rd16(buf + pos + 2), DHT_LENGTH);
  if (pos + 2 + DHT_LENGTH > len) FAIL(C63_ERR_TRUNCATED, "truncated DHT");
  if ((r = check_dht(buf + pos + 4, msg, msg_size))) return r;
  pos += 2 + DHT_LENGTH;

  if ((r = expect_marker(buf, len, pos, 0xda))) FAIL(r, "missing SOS (FF DA) after DHT");
  if (pos + 4 > len) FAIL(C63_ERR_TRUNCATED, "truncated SOS");
  if (rd16(buf + pos + 2) != SOS_LENGTH)
    FAIL(C63_ERR_BITSTREAM, "SOS length %d, expected %d", rd16(buf + pos + 2), SOS_LENGTH);
  if (pos + 2 + SOS_LENGTH > len) FAIL(C63_ERR_TRUNCATED, "truncated SOS");
  if (memcmp(buf + pos + 4, sos_payload, sizeof(sos_payload)) != 0)
    FAIL(C63_ERR_BITSTREAM, "SOS component or Huffman table selectors are not those of Codec63 "
                            "(Y tables 0/0, U and V tables 1/1)");
  pos += 2 + SOS_LENGTH;

  /* Entropy-coded data: every FF is followed by a 00 stuffing byte, so the
   * first FF followed by anything else is the EOI marker. */
  hdr->data_offset = pos;
  const uint8_t *p = buf + pos;
  for (;;) {
    const uint8_t *ff = memchr(p, 0xff, (size_t)(buf + len - p));
    if (!ff || ff + 1 >= buf + len) FAIL(C63_ERR_TRUNCATED, "frame data ends before EOI");
    if (ff[1] == 0x00) {
      p = ff + 2;
      continue;
    }
    if (ff[1] != 0xd9) FAIL(C63_ERR_BITSTREAM, "unexpected marker FF %02X in frame data", ff[1]);
    hdr->data_size = (size_t)(ff - (buf + pos));
    hdr->frame_size = (size_t)(ff + 2 - buf);
    return C63_OK;
  }
}

size_t c63_find_frame_start(const uint8_t *buf, size_t len)
{
  if (!buf) return len; /* nothing to search: no frame start, as for garbage */
  for (size_t i = 0; i < len; i++) {
    if (buf[i] != 0xff) continue;
    /* Partial candidate at the end: the caller must wait for more data. */
    if (i + 4 > len) {
      static const uint8_t sig[4] = {0xff, 0xd8, 0xff, 0xdb};
      if (memcmp(buf + i, sig, len - i) == 0) return i;
      continue;
    }
    if (buf[i + 1] == 0xd8 && buf[i + 2] == 0xff && buf[i + 3] == 0xdb) return i;
  }
  return len;
}
