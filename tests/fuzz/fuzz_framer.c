/* libFuzzer target: libc63's framer (c63_frame_scan, which c63parse, c63dec
 * and c63-dec split streams with) fed in random chunks. The first 8 bytes
 * choose the chunk sizes (1 byte to 4 KiB, a few very small ones more
 * likely), the rest is the stream. It is split twice: with every byte there
 * from the start, and with the bytes arriving chunk by chunk, the scanner
 * asking for more with NEED_DATA as a GStreamer element's adapter would.
 * Both must give the same frames, and the same bytes skipped between them
 * (junk may be skipped in more pieces when it arrives in pieces), each
 * inside the stream, and
 * the bytes a NEED_DATA result says belong to the frame under way must be
 * part of the frame that comes out. A crash, undefined behaviour or a
 * difference is a finding.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "c63/c63.h"

/* The outcomes of one split: status, size, complete and too_long of each
 * SKIP or FRAME, in order. */
typedef struct {
  size_t n, cap;
  size_t *v;
} outcomes;

static void record(outcomes *o, int status, const c63_frame_scan_result *r)
{
  /* Junk arriving in pieces is skipped in pieces: consecutive skips count
   * as one. */
  if (status == C63_SCAN_SKIP && o->n && o->v[o->n - 4] == C63_SCAN_SKIP) {
    o->v[o->n - 3] += r->size;
    return;
  }
  if (o->n + 4 > o->cap) {
    o->cap = o->cap ? 2 * o->cap : 64;
    o->v = realloc(o->v, o->cap * sizeof *o->v);
    if (!o->v) abort();
  }
  o->v[o->n++] = (size_t)status;
  o->v[o->n++] = r->size;
  o->v[o->n++] = (size_t)r->complete;
  o->v[o->n++] = (size_t)r->too_long;
}

/* xorshift64*: the chunk sizes. */
static uint64_t next_random(uint64_t *s)
{
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * 2685821657736338717ull;
}

static size_t chunk_size(uint64_t *s)
{
  const uint64_t r = next_random(s);
  return (r & 3) == 0 ? 1 + (r >> 8) % 4 : 1 + (r >> 8) % 4096;
}

/* Split data[0..len) with avail bytes there at first and more arriving in
 * chunks (all at once when seed is 0). */
static void split(const uint8_t *data, size_t len, uint64_t seed, outcomes *o)
{
  c63_frame_scanner s;
  c63_frame_scanner_init(&s);
  size_t pos = 0, avail = seed ? 0 : len;
  /* bytes of the frame under way that a NEED_DATA said are the frame's */
  size_t promised = 0;

  while (pos < len || avail < len) {
    const int at_end = avail == len;
    c63_frame_scan_result r;
    const int status = c63_frame_scan(&s, data + pos, avail - pos, at_end, &r);
    if (status == C63_SCAN_NEED_DATA) {
      if (r.size > avail - pos || r.size < promised) abort();
      promised = r.size;
      if (at_end) {
        /* with every byte there, only an empty rest may ask for more */
        if (pos != len) abort();
        break;
      }
      const size_t c = chunk_size(&seed);
      avail = c < len - avail ? avail + c : len;
      continue;
    }
    if (status != C63_SCAN_SKIP && status != C63_SCAN_FRAME) abort();
    if (r.size == 0 || r.size > avail - pos) abort();
    /* what was promised to a frame is in it */
    if (promised && (status != C63_SCAN_FRAME || r.size < promised)) abort();
    promised = 0;
    record(o, status, &r);
    pos += r.size;
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  if (size < 8) return 0;
  uint64_t seed;
  memcpy(&seed, data, 8);
  seed |= 1; /* xorshift needs a non-zero state; 0 means all at once */
  data += 8;
  size -= 8;

  outcomes whole = {0}, chunked = {0};
  split(data, size, 0, &whole);
  split(data, size, seed, &chunked);
  if (whole.n != chunked.n || (whole.n && memcmp(whole.v, chunked.v, whole.n * sizeof *whole.v)))
    abort();
  free(whole.v);
  free(chunked.v);
  return 0;
}
