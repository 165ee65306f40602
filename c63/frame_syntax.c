/* Frame headers: writing, and parsing with every field validated and every
 * read bounds-checked (docs/format.md section 2).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "frame_syntax.h"

#include <stdio.h>
#include <string.h>

#include "c63/c63.h"
#include "entropy.h"
#include "geometry.h"
#include "marker_scan.h"
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

/* The reference decoder (griwodz/in5050-codec63, c63dec) reads a frame as
 * SOI, then marker segments in any order until EOI; docs/decoder-tolerance.md
 * lists each of its rules and ours. In short: one 00 byte may stand before
 * any marker; DQT is three tables with ids 0, 1, 2 whatever its length says;
 * SOF0 is 16 bytes after the length whatever the length says, with
 * precision 8, any component bytes and any non-zero keyframe byte for a
 * keyframe; DHT and SOS are skipped by their lengths (the tables are the
 * static ones whatever DHT says); the entropy-coded data follows SOS; later
 * segments override earlier ones. */

enum { SOI = 0xd8, EOI = 0xd9, DQT = 0xdb, SOF0 = 0xc0, DHT = 0xc4, SOS = 0xda };

/* Bytes after the marker: DQT and SOF0 have a fixed size (their length
 * fields are ignored), DHT and SOS the size their length says. */
#define DQT_BYTES (2 + 3 * 65)
#define SOF_BYTES (2 + 16)

/* A marker at buf[pos], after at most one 00 byte. Returns the marker byte
 * and sets *next past it, or a negative status. */
static int read_marker(const uint8_t *buf, size_t len, size_t pos, size_t *next)
{
  if (pos < len && buf[pos] == 0x00) pos++;
  if (pos + 2 > len) return C63_ERR_TRUNCATED;
  if (buf[pos] != 0xff) return C63_ERR_BITSTREAM;
  *next = pos + 2;
  return buf[pos + 1];
}

/* A segment with a length field: the length (>= 2, it counts itself). */
static int segment_length(const uint8_t *buf, size_t len, size_t pos, size_t *n, char *msg,
                          size_t msg_size, const char *name)
{
  if (pos + 2 > len) FAIL(C63_ERR_TRUNCATED, "truncated %s", name);
  *n = (size_t)rd16(buf + pos);
  if (*n < 2) FAIL(C63_ERR_BITSTREAM, "%s length %zu is below 2", name, *n);
  if (pos + *n > len) FAIL(C63_ERR_TRUNCATED, "truncated %s", name);
  return C63_OK;
}

static int parse_dqt(const uint8_t *buf, size_t len, size_t pos, c63_frame_header *hdr, char *msg,
                     size_t msg_size)
{
  if (pos + DQT_BYTES > len) FAIL(C63_ERR_TRUNCATED, "truncated DQT");
  pos += 2; /* the length: the reference writes 195 where JPEG says 197 */
  for (int c = 0; c < 3; c++) {
    if (buf[pos] != c) FAIL(C63_ERR_BITSTREAM, "DQT table id %d where %d expected", buf[pos], c);
    memcpy(hdr->quant[c], buf + pos + 1, 64);
    pos += 65;
  }
  hdr->has_quant = 1;
  return C63_OK;
}

static int parse_sof(const uint8_t *buf, size_t len, size_t pos, c63_frame_header *hdr, char *msg,
                     size_t msg_size)
{
  if (pos + SOF_BYTES > len) FAIL(C63_ERR_TRUNCATED, "truncated SOF0");
  const uint8_t *sof = buf + pos + 2;
  if (sof[0] != 8) FAIL(C63_ERR_BITSTREAM, "SOF0 precision %d, only 8 is decodable", sof[0]);
  hdr->height = rd16(sof + 1);
  hdr->width = rd16(sof + 3);
  if (hdr->width < C63_MIN_SIZE || hdr->width > C63_MAX_SIZE || hdr->height < C63_MIN_SIZE ||
      hdr->height > C63_MAX_SIZE)
    FAIL(C63_ERR_BITSTREAM, "picture size %dx%d outside %d..%d", hdr->width, hdr->height,
         C63_MIN_SIZE, C63_MAX_SIZE);
  /* sof[5..14]: components, sampling and table ids, which the reference
   * skips (the layout is always 4:2:0 with tables 0, 1, 2). */
  hdr->keyframe = sof[15] != 0;
  return C63_OK;
}

/* The entropy-coded data from pos. Encoders follow every FF in it with a
 * 00; the reference decoder drops the byte after an FF whatever it is. So
 * the data ends at the first FF followed by a marker this format has (the
 * EOI, or a segment after the data), and an FF followed by any other byte
 * is part of the data. Sets *end to that FF. (An FF followed by a marker
 * byte inside the data, which the reference would drop too, ends it here:
 * without that rule the end could only be found by decoding.) */
static int find_data_end(const uint8_t *buf, size_t len, size_t pos, size_t *end, char *msg,
                         size_t msg_size)
{
  for (;;) {
    /* FF 00 (stuffing) is passed over in the search */
    size_t ff = c63_find_marker(buf, pos, len);
    if (ff >= len) FAIL(C63_ERR_TRUNCATED, "frame data ends before EOI");
    switch (buf[ff + 1]) {
    case SOI:
    case EOI:
    case DQT:
    case SOF0:
    case DHT:
    case SOS:
      *end = ff;
      return C63_OK;
    default: /* a byte the reference drops just the same */
      pos = ff + 2;
    }
  }
}

/* The frame's segments up to its data (headers_only) or up to its EOI. */
static int parse_frame(const uint8_t *buf, size_t len, c63_frame_header *hdr, int headers_only,
                       char *msg, size_t msg_size)
{
  size_t pos = 0, n;
  int have_sof = 0, have_data = 0, r;

  if (!buf || !hdr) FAIL(C63_ERR_INVALID_ARG, "no %s (NULL)", !buf ? "data" : "header to fill");
  memset(hdr, 0, sizeof(*hdr));
  if (len < 2) FAIL(C63_ERR_TRUNCATED, "frame shorter than SOI");
  if (buf[0] != 0xff || buf[1] != SOI) FAIL(C63_ERR_BITSTREAM, "frame does not start with SOI");
  pos = 2;
  for (;;) {
    int m = read_marker(buf, len, pos, &pos);
    if (m == C63_ERR_TRUNCATED) FAIL(m, "frame ends before EOI");
    if (m < 0) FAIL(m, "expected a marker at byte %zu", pos);
    switch (m) {
    case DQT:
      if ((r = parse_dqt(buf, len, pos, hdr, msg, msg_size))) return r;
      pos += DQT_BYTES;
      break;
    case SOF0:
      /* A second SOF0 after the data starts another picture in the
       * reference (new buffers, the coefficients read are dropped). */
      if (have_data) FAIL(C63_ERR_BITSTREAM, "SOF0 after the frame's data");
      if ((r = parse_sof(buf, len, pos, hdr, msg, msg_size))) return r;
      have_sof = 1;
      pos += SOF_BYTES;
      break;
    case DHT: /* the static tables are used whatever it says */
      if ((r = segment_length(buf, len, pos, &n, msg, msg_size, "DHT"))) return r;
      pos += n;
      break;
    case SOS:
      if (have_data) FAIL(C63_ERR_BITSTREAM, "a second SOS in one frame");
      if (!have_sof) FAIL(C63_ERR_BITSTREAM, "SOS before SOF0: the picture size is unknown");
      if ((r = segment_length(buf, len, pos, &n, msg, msg_size, "SOS"))) return r;
      hdr->data_offset = pos + n;
      if (headers_only) return C63_OK;
      if ((r = find_data_end(buf, len, hdr->data_offset, &pos, msg, msg_size))) return r;
      hdr->data_size = pos - hdr->data_offset;
      have_data = 1;
      break;
    case EOI:
      if (!have_data) FAIL(C63_ERR_BITSTREAM, "EOI before any frame data (no SOS)");
      hdr->frame_size = pos;
      return C63_OK;
    default:
      FAIL(C63_ERR_BITSTREAM, "unexpected marker FF %02X", m);
    }
  }
}

int c63_parse_frame_header(const uint8_t *buf, size_t len, c63_frame_header *hdr, char *msg,
                           size_t msg_size)
{
  return parse_frame(buf, len, hdr, 0, msg, msg_size);
}

int c63_parse_frame_headers_only(const uint8_t *buf, size_t len, c63_frame_header *hdr, char *msg,
                                 size_t msg_size)
{
  return parse_frame(buf, len, hdr, 1, msg, msg_size);
}

size_t c63_max_frame_bytes(int width, int height)
{
  c63_geometry g;
  if (width < C63_MIN_SIZE || height < C63_MIN_SIZE || width > C63_MAX_SIZE ||
      height > C63_MAX_SIZE)
    return 0;
  c63_geometry_init(&g, width, height);
  const size_t blocks = (size_t)g.mcus_w * g.mcus_h * 6;
  /* Headers: SOI, EOI, DQT and SOF0 of fixed size, DHT and SOS up to 65535
   * bytes each, one 00 before each marker, and a DQT or DHT after the data;
   * data: every block at its worst, every byte an FF with its stuffing, and
   * the flush byte. */
  const size_t headers = 4 + 4 * (DQT_BYTES + 3) + 2 * (SOF_BYTES + 3) + 4 * (65535 + 3);
  return headers + 2 * blocks * C63_MAX_BLOCK_BYTES + 1;
}
