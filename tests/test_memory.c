/* The decoder's memory follows the data, not the header: a frame that
 * claims 8192x8192 but brings a few bytes is rejected before the buffers for
 * that size are allocated (checked under an address-space limit far below
 * them), and buffers are kept for smaller pictures, which must still decode
 * exactly in them.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "tutil.h"

/* One keyframe of w x h. */
static void keyframe(int w, int h, int seed, tu_buf *out)
{
  c63_enc_params p;
  char msg[256];
  uint8_t *yuv = malloc(tu_i420_size(w, h));
  for (size_t i = 0; i < tu_i420_size(w, h); i++)
    yuv[i] = (uint8_t)(i * 3 + (size_t)seed * 17 + i / (size_t)w);
  c63_enc_params_init(&p);
  p.width = w;
  p.height = h;
  out->size = 0;
  TU_CHECK(tu_encode(&p, yuv, 1, out, msg, sizeof msg) == C63_OK, "%dx%d: %s", w, h, msg);
  free(yuv);
}

static void decode_to(c63_decoder *dec, const tu_buf *f, tu_buf *pic, const char *what)
{
  c63_decoded_picture p;
  int r = c63_decoder_decode(dec, f->data, f->size, &p);
  TU_CHECK(r == C63_OK, "%s: %s", what, c63_decoder_error(dec));
  pic->size = 0;
  if (r == C63_OK) tu_append_picture(pic, &p);
}

/* Large, small, large again on one decoder: each as on a fresh decoder. */
static void test_alternating_sizes(void)
{
  static const int sizes[][2] = {{200, 120}, {64, 48}, {200, 120}, {8, 8}, {96, 200}};
  c63_decoder *dec;
  tu_buf f = {0}, got = {0}, want = {0};
  c63_decoder_new(NULL, &dec, NULL, 0);
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    c63_decoder *fresh;
    char what[64];
    snprintf(what, sizeof what, "%dx%d after other sizes", sizes[i][0], sizes[i][1]);
    keyframe(sizes[i][0], sizes[i][1], (int)i, &f);
    c63_decoder_new(NULL, &fresh, NULL, 0);
    decode_to(fresh, &f, &want, "fresh decoder");
    c63_decoder_free(fresh);
    decode_to(dec, &f, &got, what);
    TU_CHECK(got.size == want.size && memcmp(got.data, want.data, got.size) == 0,
             "%s: pictures differ from a fresh decoder's", what);
  }
  c63_decoder_free(dec);
  tu_buf_free(&f);
  tu_buf_free(&got);
  tu_buf_free(&want);
}

/* An 8192x8192 header over a 64x48 frame's data. Run last: it lowers the
 * address-space limit of the process. */
static void test_huge_header_short_data(void)
{
  tu_buf f = {0};
  c63_frame_header hdr;
  char msg[256];
  keyframe(64, 48, 1, &f);
  c63_parse_frame_header(f.data, f.size, &hdr, msg, sizeof msg);
  for (size_t p = 0; p + 1 < f.size; p++)
    if (f.data[p] == 0xff && f.data[p + 1] == 0xc0) {
      f.data[p + 5] = f.data[p + 7] = 0x20; /* height and width 0x2000 = 8192 */
      f.data[p + 6] = f.data[p + 8] = 0x00;
      break;
    }
  c63_decoder *dec;
  c63_decoder_new(NULL, &dec, NULL, 0);
  /* The buffers for 8192x8192 take about 480 MiB; allow far less. The
   * decoder's threads are running already. */
  struct rlimit lim = {256u << 20, 256u << 20};
  struct rlimit old;
  getrlimit(RLIMIT_AS, &old);
  if (old.rlim_cur != RLIM_INFINITY && old.rlim_cur < lim.rlim_cur) lim = old;
  int limited = setrlimit(RLIMIT_AS, &lim) == 0;
  int r = c63_decoder_decode(dec, f.data, f.size, NULL);
  TU_CHECK(r == C63_ERR_TRUNCATED, "8192x8192 header over %zu bytes: %d (%s)", f.size, r,
           c63_decoder_error(dec));
  printf("8192x8192 header, %zu bytes%s: %s\n", f.size, limited ? " (256 MiB address space)" : "",
         c63_decoder_error(dec));
  c63_decoder_free(dec);
  tu_buf_free(&f);
}

int main(void)
{
  test_alternating_sizes();
  test_huge_header_short_data();
  return tu_finish("test_memory");
}
