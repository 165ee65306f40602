/* Splitting a Codec63 byte stream into frames, incrementally (c63.h,
 * c63_frame_scan).
 *
 * A frame runs from SOI to EOI (FF D9). Its headers are parsed first, so
 * bytes inside them (a quantiser table may hold FF D8 FF DB, or FF D9) are
 * never taken for a boundary; then, in the entropy-coded data, every FF is
 * followed by a stuffed 00, so an FF D8 there is the start of the next frame
 * (this one was cut short) and an FF D9 the end, confirmed with
 * c63_parse_frame_header(). Memory is bounded by the picture: a frame longer
 * than the largest its header's size allows (c63_max_frame_bytes) is given
 * up on, and so are headers longer than any valid ones.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>

#include "c63/c63.h"
#include "marker_scan.h"

/* Headers (DQT, SOF0, DHT and SOS, a DHT or SOS at most 64 KiB each) never
 * take more; a frame whose headers are longer is broken. */
#define MAX_HEADER_BYTES (4u * 65540u)

/* What c63_frame_scanner's opaque storage holds between calls. */
typedef struct scan_state {
  int synced, have_header, broken_header;
  size_t scan_pos, data_offset, limit;
  int width, height;
} scan_state;

_Static_assert(sizeof(scan_state) <= sizeof(c63_frame_scanner),
               "the scanner's state outgrew C63_FRAME_SCANNER_SIZE");

static void state_init(scan_state *s)
{
  memset(s, 0, sizeof *s);
  s->limit = MAX_HEADER_BYTES;
}

void c63_frame_scanner_init(c63_frame_scanner *scanner)
{
  scan_state s;
  if (!scanner) return;
  memset(scanner, 0, sizeof *scanner);
  state_init(&s);
  memcpy(scanner->opaque, &s, sizeof s);
}

static int done(scan_state *s, c63_frame_scan_result *res, int status, size_t size)
{
  res->size = size;
  state_init(s);
  return status;
}

/* The markers that may follow SOI (after at most one 00): DQT, SOF0, DHT,
 * SOS. */
static int is_segment_marker(uint8_t m)
{
  return m == 0xdb || m == 0xc0 || m == 0xc4 || m == 0xda;
}

/* The offset of the next frame start in buf (SOI, an optional 00, then FF
 * and a segment marker: 4 or 5 bytes), of a possible partial one at the
 * very end, or len. */
static size_t frame_start(const uint8_t *buf, size_t len)
{
  for (size_t i = 0; i < len; i++) {
    if (buf[i] != 0xff) continue;
    const size_t have = len - i;
    if (have < 2) return i; /* a partial candidate at the end: wait for more */
    if (buf[i + 1] != 0xd8) continue;
    size_t j = i + 2;
    if (j < len && buf[j] == 0x00) j++;
    if (j >= len) return i;
    if (buf[j] != 0xff) continue;
    if (j + 1 >= len) return i;
    if (is_segment_marker(buf[j + 1])) return i;
  }
  return len;
}

/* Not in a frame: skip to the next frame start. */
static int sync(scan_state *s, const uint8_t *buf, size_t len, int at_end,
                c63_frame_scan_result *res)
{
  size_t off = frame_start(buf, len);

  if (off == 0 && len >= 5) { /* SOI, an optional 00, FF and a segment marker */
    s->synced = 1;
    s->scan_pos = 2; /* past our own SOI */
    return C63_SCAN_NEED_DATA;
  }
  if (off == 0 && at_end) off = len; /* a partial frame start at the end */
  if (off == 0) return C63_SCAN_NEED_DATA;
  return done(s, res, C63_SCAN_SKIP, off);
}

/* Parse the frame's headers once they are all there. */
static void headers(scan_state *s, const uint8_t *buf, size_t len, int at_end)
{
  c63_frame_header hdr;
  int status;

  if (s->have_header || s->broken_header) return;
  status = c63_parse_frame_headers_only(buf, len, &hdr, NULL, 0);
  if (status == C63_OK) {
    s->have_header = 1;
    s->data_offset = hdr.data_offset;
    s->limit = c63_max_frame_bytes(hdr.width, hdr.height);
    if (s->scan_pos < s->data_offset) s->scan_pos = s->data_offset;
    s->width = hdr.width;
    s->height = hdr.height;
  } else if (status != C63_ERR_TRUNCATED || at_end || len > MAX_HEADER_BYTES) {
    /* A broken frame, ending where the next one starts: searched for from
     * its SOI on, so the result does not depend on how the bytes came. */
    s->broken_header = 1;
  }
}

/* have_header once a segment marker followed an FF in the data: the data
 * may have ended there, with segments after it, so an FF D9 further on is
 * only an end when the whole frame parses. */
#define SEGMENT_AFTER_DATA 2

/* The FF D9 at p ends the frame's data as c63_parse_frame_header finds it
 * (the first FF followed by a marker, FF pairs read two bytes at a time)
 * when no segment marker came before it in the data and the byte before it
 * is no FF; the frame is then the headers, the data and this EOI, and only
 * the headers are parsed again, not the data. */
static int plain_end(const scan_state *s, const uint8_t *buf, size_t p, c63_frame_header *hdr)
{
  if (s->have_header != 1 || (p > s->data_offset && buf[p - 1] == 0xff)) return 0;
  if (c63_parse_frame_headers_only(buf, p + 2, hdr, NULL, 0) != C63_OK ||
      hdr->data_offset != s->data_offset)
    return 0;
  hdr->data_size = p - hdr->data_offset;
  hdr->frame_size = p + 2;
  return 1;
}

static int scan(scan_state *s, const uint8_t *buf, size_t len, int at_end,
                c63_frame_scan_result *res)
{
  size_t p, end;

  memset(res, 0, sizeof *res);
  if (!s->synced) {
    int r = sync(s, buf, len, at_end, res);
    if (!s->synced) {
      res->limit = s->limit;
      return r;
    }
  }
  headers(s, buf, len, at_end);
  res->limit = s->limit;
  res->hdr.width = s->width;
  res->hdr.height = s->height;
  if (!s->have_header && !s->broken_header) { /* headers still arriving */
    res->size = s->scan_pos;
    return C63_SCAN_NEED_DATA;
  }
  /* The frame is at most limit bytes: an FF D8 at limit - 1 still ends
   * it, anything after that is too far. */
  end = len < s->limit + 1 ? len : s->limit + 1;
  for (p = s->scan_pos; p + 1 < end; p++) {
    p = c63_find_marker(buf, p, end); /* FF 00 (stuffing) is passed over */
    if (p >= end) {
      p = end - 1;
      break;
    }
    if (buf[p + 1] == 0xd8) { /* a new frame: this one was cut short */
      return done(s, res, C63_SCAN_FRAME, p);
    } else if (buf[p + 1] == 0xd9 && p + 2 <= s->limit) {
      c63_frame_header hdr;
      int status;

      if (plain_end(s, buf, p, &hdr)) {
        res->complete = 1;
        res->hdr = hdr;
        return done(s, res, C63_SCAN_FRAME, hdr.frame_size);
      }
      status = c63_parse_frame_header(buf, p + 2, &hdr, NULL, 0);

      if (status == C63_ERR_TRUNCATED) /* FF D9 in a segment after the data */
        continue;
      if (status != C63_OK) return done(s, res, C63_SCAN_FRAME, p + 2);
      res->complete = 1;
      res->hdr = hdr;
      return done(s, res, C63_SCAN_FRAME, hdr.frame_size);
    } else if (is_segment_marker(buf[p + 1])) {
      s->have_header = SEGMENT_AFTER_DATA;
    }
  }
  s->scan_pos = p > s->scan_pos ? p : s->scan_pos;
  if (len > s->limit) { /* no end within the bound: given up on */
    res->too_long = 1;
    return done(s, res, C63_SCAN_FRAME, s->limit);
  }
  if (at_end) return done(s, res, C63_SCAN_FRAME, len); /* the stream ends inside it */
  res->size = s->scan_pos;
  return C63_SCAN_NEED_DATA;
}

int c63_frame_scan(c63_frame_scanner *scanner, const uint8_t *buf, size_t len, int at_end,
                   c63_frame_scan_result *res)
{
  scan_state s;
  int r;

  if (!scanner || !res || (!buf && len > 0)) return C63_ERR_INVALID_ARG;
  /* Copied in and out rather than cast, so the caller's storage is only
   * ever accessed as its own type. */
  memcpy(&s, scanner->opaque, sizeof s);
  r = scan(&s, buf, len, at_end, res);
  memcpy(scanner->opaque, &s, sizeof s);
  return r;
}

size_t c63_find_frame_start(const uint8_t *buf, size_t len)
{
  c63_frame_scanner scanner;
  c63_frame_scan_result res;

  /* Where a fresh scanner resynchronises: it skips the bytes before a
   * start; at one (at 0) it goes on with the frame, or waits for more. */
  c63_frame_scanner_init(&scanner);
  switch (c63_frame_scan(&scanner, buf, len, 0, &res)) {
  case C63_SCAN_SKIP:
    return res.size;
  case C63_SCAN_NEED_DATA:
  case C63_SCAN_FRAME:
    return 0;
  default: /* NULL buf: nothing to search, no frame start, as for garbage */
    return len;
  }
}
