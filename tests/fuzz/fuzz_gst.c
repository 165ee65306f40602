/* libFuzzer target: the elements that read streams, c63dec (CPU backend)
 * and c63parse ! c63dec, in a GstHarness. The first byte picks the
 * pipeline and the next 8 choose the chunk sizes (1 byte to 4 KiB), the
 * rest is the stream: it is pushed in those chunks, then EOS, and every
 * picture is pulled. Whatever the bytes, the elements must answer with
 * pictures, warnings or an error message, never a crash, undefined
 * behaviour or a hang (libFuzzer's -timeout). The elements are compiled
 * into the target (tests/fuzz/run-fuzzer.sh) and registered statically.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <gst/check/gstharness.h>
#include <gst/gst.h>
#include <stdint.h>
#include <string.h>

#include "c63dec/gstc63dec.h"
#include "c63parse/gstc63parse.h"

static uint64_t next_random(uint64_t *s)
{
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * 2685821657736338717ull;
}

static void setup(void)
{
  static int done;
  if (done) return;
  done = 1;
  gst_init(NULL, NULL);
  if (!GST_ELEMENT_REGISTER(c63dec, NULL) || !GST_ELEMENT_REGISTER(c63parse, NULL)) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  if (size < 9) return 0;
  setup();
  const int with_parser = data[0] & 1;
  uint64_t seed;
  memcpy(&seed, data + 1, 8);
  seed |= 1;
  data += 9;
  size -= 9;

  GstHarness *h = with_parser ? gst_harness_new_parse("c63parse ! c63dec backend=cpu")
                              : gst_harness_new_parse("c63dec backend=cpu");
  gst_harness_set_src_caps_str(h, "video/x-c63");
  /* A flow error ends the stream early: the rest is not pushed. */
  for (size_t pos = 0; pos < size;) {
    const uint64_t r = next_random(&seed);
    size_t n = (r & 3) == 0 ? 1 + (r >> 8) % 4 : 1 + (r >> 8) % 4096;
    if (n > size - pos) n = size - pos;
    GstBuffer *buf = gst_buffer_new_memdup(data + pos, n);
    pos += n;
    if (gst_harness_push(h, buf) != GST_FLOW_OK) break;
  }
  gst_harness_push_event(h, gst_event_new_eos());
  GstBuffer *out;
  while ((out = gst_harness_try_pull(h)) != NULL)
    gst_buffer_unref(out);
  gst_harness_teardown(h);
  return 0;
}
