/* c63_frame_scan: splitting a byte stream into frames incrementally. Any
 * chunking gives the same frames as one call on the whole stream and as
 * c63_parse_frame_header frame after frame; junk before and between frames
 * is skipped; marker bytes inside a quantiser table do not split a frame; a
 * truncated last frame comes out broken; a frame that never ends is cut at
 * the bound its size allows.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdlib.h>
#include <string.h>

#include "tutil.h"

#define MAX_EVENTS 4096

/* One SKIP or FRAME result. */
typedef struct event {
  int status, complete, too_long, keyframe;
  size_t off, size;
} event;

typedef struct events {
  event e[MAX_EVENTS];
  int n;
  unsigned long calls;
} events;

/* Scan s[0..len), handing the scanner chunk more bytes at a time. */
static void scan_chunked(const uint8_t *s, size_t len, size_t chunk, events *out)
{
  c63_frame_scanner sc;
  size_t pos = 0, have = 0; /* stream offset of the scan, bytes given so far */

  out->n = 0;
  out->calls = 0;
  c63_frame_scanner_init(&sc);
  for (;;) {
    c63_frame_scan_result res;
    int at_end = have == len;
    int r = c63_frame_scan(&sc, s + pos, have - pos, at_end, &res);

    out->calls++;
    if (r == C63_SCAN_NEED_DATA) {
      TU_CHECK(res.size <= have - pos, "NEED_DATA claims %zu of %zu bytes", res.size, have - pos);
      if (at_end) {
        TU_CHECK(have == pos, "NEED_DATA at the end with %zu bytes left", have - pos);
        return;
      }
      have = len - have < chunk ? len : have + chunk;
      continue;
    }
    TU_CHECK(r == C63_SCAN_SKIP || r == C63_SCAN_FRAME, "status %d", r);
    TU_CHECK(res.size > 0 && res.size <= have - pos, "size %zu of %zu", res.size, have - pos);
    if (r < 0 || res.size == 0 || res.size > have - pos || out->n == MAX_EVENTS) return;
    if (r == C63_SCAN_SKIP && out->n > 0 && out->e[out->n - 1].status == C63_SCAN_SKIP)
      out->e[out->n - 1].size += res.size; /* junk comes in pieces as the chunks do */
    else
      out->e[out->n++] = (event){r, res.complete, res.too_long, res.hdr.keyframe, pos, res.size};
    pos += res.size;
  }
}

static int same_events(const events *a, const events *b)
{
  if (a->n != b->n) return 0;
  for (int i = 0; i < a->n; i++)
    if (memcmp(&a->e[i], &b->e[i], sizeof a->e[i]) != 0) return 0;
  return 1;
}

static uint8_t *read_vector(const char *name, size_t *len)
{
  char path[1024];
  tu_data_path(path, sizeof path, name);
  return tu_read_file(path, len);
}

/* Every conformance vector: the same complete frames at any chunking, as
 * c63_parse_frame_header splits them (tu_split_frames checks that too). */
static void test_vectors(void)
{
  static const char *names[] = {"pan_176x144.c63", "pan_352x288_q10k7.c63", "testsrc_640x200.c63"};
  static const size_t chunks[] = {1, 7, 4096, 65536};
  static events whole, part;

  for (size_t v = 0; v < sizeof names / sizeof names[0]; v++) {
    size_t len, pos = 0;
    uint8_t *s = read_vector(names[v], &len);
    TU_CHECK(s != NULL, "cannot read %s", names[v]);
    if (!s) continue;
    scan_chunked(s, len, len, &whole);
    for (int i = 0; i < whole.n; i++) {
      c63_frame_header hdr;
      const event *e = &whole.e[i];
      TU_CHECK(e->status == C63_SCAN_FRAME && e->complete && e->off == pos, "%s: event %d",
               names[v], i);
      TU_CHECK(c63_parse_frame_header(s + pos, len - pos, &hdr, NULL, 0) == C63_OK &&
                   hdr.frame_size == e->size && hdr.keyframe == e->keyframe,
               "%s: frame %d differs from c63_parse_frame_header's", names[v], i);
      pos += e->size;
    }
    TU_CHECK(pos == len && whole.n > 1, "%s: %d frames cover %zu of %zu bytes", names[v], whole.n,
             pos, len);
    for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++) {
      scan_chunked(s, len, chunks[c], &part);
      TU_CHECK(same_events(&whole, &part), "%s: other frames with %zu-byte chunks", names[v],
               chunks[c]);
    }
    free(s);
  }
}

/* pan_176x144.c63 (NULL after a failed check), with its first two frames' headers. */
static uint8_t *first_two_frames(size_t *len, c63_frame_header *h0, c63_frame_header *h1)
{
  uint8_t *s = read_vector("pan_176x144.c63", len);

  TU_CHECK(s != NULL, "no vector");
  if (!s) return NULL;
  c63_parse_frame_header(s, *len, h0, NULL, 0);
  c63_parse_frame_header(s + h0->frame_size, *len - h0->frame_size, h1, NULL, 0);
  return s;
}

/* Junk before, between and after frames is skipped, whatever the chunks. */
static void test_junk(void)
{
  static const uint8_t junk[] = {0x00, 0xff, 0xd8, 0x12, 0xff, 0xff, 0xd9, 0xff, 0xd8, 0x00, 0x55};
  static events whole, part;
  size_t len;
  c63_frame_header h0, h1;
  uint8_t *s = first_two_frames(&len, &h0, &h1);
  tu_buf b = {0};

  if (!s) return;
  tu_buf_append(&b, junk, sizeof junk);
  tu_buf_append(&b, s, h0.frame_size);
  tu_buf_append(&b, junk, sizeof junk);
  tu_buf_append(&b, s + h0.frame_size, h1.frame_size);
  tu_buf_append(&b, junk, sizeof junk);
  scan_chunked(b.data, b.size, b.size, &whole);
  TU_CHECK(whole.n == 5, "%d events", whole.n);
  if (whole.n == 5) {
    TU_CHECK(whole.e[0].status == C63_SCAN_SKIP && whole.e[0].size == sizeof junk, "junk first");
    TU_CHECK(whole.e[1].complete && whole.e[1].size == h0.frame_size, "frame 0");
    TU_CHECK(whole.e[2].status == C63_SCAN_SKIP && whole.e[2].size == sizeof junk, "junk between");
    TU_CHECK(whole.e[3].complete && whole.e[3].size == h1.frame_size, "frame 1");
    TU_CHECK(whole.e[4].status == C63_SCAN_SKIP && whole.e[4].size == sizeof junk, "junk after");
  }
  for (size_t c = 1; c <= 9; c += 2) {
    scan_chunked(b.data, b.size, c, &part);
    TU_CHECK(same_events(&whole, &part), "junk: other events with %zu-byte chunks", c);
  }
  tu_buf_free(&b);
  free(s);
}

/* FF D8 FF DB and FF D9 inside a quantiser table (any bytes are allowed
 * there) belong to the frame. */
static void test_markers_in_dqt(void)
{
  static events whole, part;
  size_t len;
  c63_frame_header h0, h1;
  uint8_t *s = first_two_frames(&len, &h0, &h1);
  tu_buf b = {0};

  if (!s) return;
  tu_buf_append(&b, s, h0.frame_size + h1.frame_size);
  /* SOI, DQT marker and length, table id 0: the table's values follow. */
  TU_CHECK(b.data[2] == 0xff && b.data[3] == 0xdb, "DQT first");
  memcpy(b.data + 7, (const uint8_t[]){0xff, 0xd8, 0xff, 0xdb, 0x00, 0xff, 0xd9, 0xff, 0xd8}, 9);
  memcpy(b.data + h0.frame_size + 7, (const uint8_t[]){0xff, 0xd9, 0xff, 0xd8, 0x00, 0xff, 0xc0},
         7);
  for (size_t c = 1; c <= 4097; c += 4096) {
    scan_chunked(b.data, b.size, c, c == 1 ? &part : &whole);
  }
  TU_CHECK(whole.n == 2 && whole.e[0].complete && whole.e[0].size == h0.frame_size &&
               whole.e[1].complete && whole.e[1].size == h1.frame_size,
           "markers in DQT split the frames: %d events", whole.n);
  TU_CHECK(same_events(&whole, &part), "markers in DQT: other events with 1-byte chunks");
  tu_buf_free(&b);
  free(s);
}

/* The end of a frame's data as c63_parse_frame_header finds it, whichever
 * way the scanner gets there: an FF D9 after an FF (read as a pair, no end)
 * leaves the frame unfinished until the next one starts; a segment after
 * the data holding FF D9 does not end it, the EOI after the segment does. */
static void test_data_end(void)
{
  static const uint8_t dht_with_eoi[] = {0xff, 0xc4, 0x00, 0x06, 0xff, 0xd9, 0x00, 0x00};
  static events whole, part;
  size_t len;
  c63_frame_header h0, h1;
  uint8_t *s = first_two_frames(&len, &h0, &h1);

  if (!s) return;
  for (int variant = 0; variant < 2; variant++) {
    tu_buf b = {0};
    size_t f0 = h0.frame_size - 2; /* frame 0 without its EOI */

    tu_buf_append(&b, s, f0);
    if (variant == 0)
      b.data[f0 - 1] = 0xff; /* the data's last byte, so FF FF D9 follows */
    else
      tu_buf_append(&b, dht_with_eoi, sizeof dht_with_eoi);
    tu_buf_append(&b, s + f0, 2 + h1.frame_size);
    f0 = b.size - h1.frame_size;
    for (size_t c = 1; c <= 4097; c += 4096)
      scan_chunked(b.data, b.size, c, c == 1 ? &part : &whole);
    TU_CHECK(whole.n == 2 && whole.e[0].size == f0 && whole.e[0].complete == (variant == 1) &&
                 whole.e[1].complete && whole.e[1].size == h1.frame_size,
             "data end variant %d: %d events, first %zu bytes complete %d", variant, whole.n,
             whole.e[0].size, whole.e[0].complete);
    TU_CHECK(same_events(&whole, &part), "data end variant %d: other events in 1-byte chunks",
             variant);
    tu_buf_free(&b);
  }
  free(s);
}

/* A stream cut inside its last frame: that frame comes out broken, with all
 * the bytes left. */
static void test_truncated(void)
{
  static events whole, part;
  size_t len;
  uint8_t *s = read_vector("pan_176x144.c63", &len);
  c63_frame_header h0;

  TU_CHECK(s != NULL, "no vector");
  if (!s) return;
  c63_parse_frame_header(s, len, &h0, NULL, 0);
  /* Cut in the data, and in the headers, of the second frame. */
  for (size_t cut = h0.frame_size + 100; cut > h0.frame_size; cut -= 50) {
    scan_chunked(s, cut, cut, &whole);
    TU_CHECK(whole.n == 2 && whole.e[0].complete && !whole.e[1].complete &&
                 whole.e[1].status == C63_SCAN_FRAME && whole.e[1].size == cut - h0.frame_size &&
                 !whole.e[1].too_long,
             "cut at %zu: %d events", cut, whole.n);
    scan_chunked(s, cut, 7, &part);
    TU_CHECK(same_events(&whole, &part), "cut at %zu: other events in 7-byte chunks", cut);
  }
  free(s);
}

/* A grey 8x8 frame, encoded, and its headers. */
static void encode_8x8(tu_buf *enc, c63_frame_header *hdr)
{
  uint8_t yuv[8 * 8 * 3 / 2];
  c63_enc_params p;
  char msg[256];

  memset(yuv, 0x80, sizeof yuv);
  c63_enc_params_init(&p);
  p.width = p.height = 8;
  TU_CHECK(tu_encode(&p, yuv, 1, enc, msg, sizeof msg) == C63_OK, "encode: %s", msg);
  TU_CHECK(c63_parse_frame_headers_only(enc->data, enc->size, hdr, NULL, 0) == C63_OK, "headers");
}

/* An 8x8 frame whose data never ends is cut at c63_max_frame_bytes(8, 8);
 * the scan then resynchronises on the frame after it. */
static void test_never_ends(void)
{
  static events whole, part;
  tu_buf enc = {0}, b = {0};
  c63_frame_header hdr;
  const size_t limit = c63_max_frame_bytes(8, 8);

  encode_8x8(&enc, &hdr);
  tu_buf_append(&b, enc.data, hdr.data_offset);
  while (b.size < limit + 1000)
    tu_buf_append(&b, (const uint8_t[]){0x12, 0xff, 0x00, 0x34}, 4);
  tu_buf_append(&b, enc.data, enc.size);
  scan_chunked(b.data, b.size, b.size, &whole);
  TU_CHECK(whole.n == 3, "%d events", whole.n);
  if (whole.n == 3) {
    TU_CHECK(whole.e[0].status == C63_SCAN_FRAME && !whole.e[0].complete && whole.e[0].too_long &&
                 whole.e[0].size == limit,
             "the endless frame: %zu bytes, limit %zu", whole.e[0].size, limit);
    TU_CHECK(whole.e[1].status == C63_SCAN_SKIP, "the rest skipped");
    TU_CHECK(whole.e[2].complete && whole.e[2].size == enc.size, "the next frame");
  }
  scan_chunked(b.data, b.size, 1, &part);
  TU_CHECK(same_events(&whole, &part), "endless frame: other events with 1-byte chunks");
  TU_CHECK(part.calls < 2 * b.size, "%lu calls for %zu bytes", part.calls, b.size);
  tu_buf_free(&enc);
  tu_buf_free(&b);
}

/* An 8x8 frame of exactly c63_max_frame_bytes(8, 8) bytes, its EOI the
 * last two, is whole; one byte longer, it is cut at the bound. */
static void test_longest_frame(void)
{
  static events whole, part;
  tu_buf enc = {0};
  c63_frame_header hdr;
  const size_t limit = c63_max_frame_bytes(8, 8);

  encode_8x8(&enc, &hdr);
  for (size_t size = limit; size <= limit + 1; size++) {
    tu_buf b = {0};
    tu_buf_append(&b, enc.data, hdr.data_offset);
    while (b.size < size - 2)
      tu_buf_append(&b, (const uint8_t[]){0x12}, 1);
    tu_buf_append(&b, (const uint8_t[]){0xff, 0xd9}, 2);
    scan_chunked(b.data, b.size, b.size, &whole);
    if (size == limit)
      TU_CHECK(whole.n == 1 && whole.e[0].complete && whole.e[0].size == limit,
               "a frame of the bound's %zu bytes: %d events, complete %d", limit, whole.n,
               whole.n > 0 ? whole.e[0].complete : -1);
    else
      TU_CHECK(whole.n >= 1 && !whole.e[0].complete && whole.e[0].too_long &&
                   whole.e[0].size == limit,
               "a frame one byte past the bound: %d events, the first of %zu bytes", whole.n,
               whole.n > 0 ? whole.e[0].size : 0);
    scan_chunked(b.data, b.size, 1, &part);
    TU_CHECK(same_events(&whole, &part), "a frame of %zu bytes: other events in 1-byte chunks",
             size);
    tu_buf_free(&b);
  }
  tu_buf_free(&enc);
}

static void test_api(void)
{
  c63_frame_scanner sc;
  c63_frame_scan_result res;

  TU_CHECK(C63_MAX_FRAME_BYTES == c63_max_frame_bytes(C63_MAX_SIZE, C63_MAX_SIZE),
           "C63_MAX_FRAME_BYTES %zu, c63_max_frame_bytes %zu", (size_t)C63_MAX_FRAME_BYTES,
           c63_max_frame_bytes(C63_MAX_SIZE, C63_MAX_SIZE));
  c63_frame_scanner_init(NULL);
  c63_frame_scanner_init(&sc);
  TU_CHECK(c63_frame_scan(NULL, NULL, 0, 0, &res) == C63_ERR_INVALID_ARG, "NULL scanner");
  TU_CHECK(c63_frame_scan(&sc, NULL, 0, 0, NULL) == C63_ERR_INVALID_ARG, "NULL result");
  TU_CHECK(c63_frame_scan(&sc, NULL, 1, 0, &res) == C63_ERR_INVALID_ARG, "NULL data");
  TU_CHECK(c63_frame_scan(&sc, NULL, 0, 0, &res) == C63_SCAN_NEED_DATA, "empty");
  TU_CHECK(c63_frame_scan(&sc, NULL, 0, 1, &res) == C63_SCAN_NEED_DATA, "empty at the end");
}

int main(void)
{
  test_api();
  test_vectors();
  test_junk();
  test_markers_in_dqt();
  test_data_end();
  test_truncated();
  test_never_ends();
  test_longest_frame();
  return tu_finish("frame_scan");
}
