/* Conformance against the reference encoder and decoder
 * (tests/data/conformance/MANIFEST.tsv):
 *  - encode: encoding the listed input with the listed parameters through
 *    libc63 gives the listed .c63 file byte for byte;
 *  - decode: decoding the .c63 file gives output whose SHA-256 is the listed
 *    decoded_sha256, every frame exactly width x height.
 * Usage: test_conformance encode|decode|all [STREAM...]  (default: all rows)
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdlib.h>
#include <string.h>

#include "sha256.h"
#include "tutil.h"

#define MAX_ROWS 64

/* Known answers from FIPS 180-4, so a wrong SHA-256 cannot hide a mismatch. */
static void check_sha256(void)
{
  char hex[65];
  static char million[1000000];

  sha256_hex("abc", 3, hex);
  TU_CHECK(strcmp(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad") == 0,
           "sha256(abc) = %s", hex);
  sha256_hex("", 0, hex);
  TU_CHECK(strcmp(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855") == 0,
           "sha256('') = %s", hex);
  memset(million, 'a', sizeof million);
  sha256_hex(million, sizeof million, hex);
  TU_CHECK(strcmp(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0") == 0,
           "sha256(a x 1e6) = %s", hex);
}

/* Index of the frame that contains byte offset off of a stream. */
static int frame_at(const uint8_t *s, size_t len, size_t off)
{
  size_t pos = 0;
  int n = 0;
  while (pos < len) {
    c63_frame_header hdr;
    char msg[128];
    if (c63_parse_frame_header(s + pos, len - pos, &hdr, msg, sizeof msg) != C63_OK) return -1;
    if (off < pos + hdr.frame_size) return n;
    pos += hdr.frame_size;
    n++;
  }
  return -1;
}

static int test_encode(const tu_manifest_row *r)
{
  char path[1024], msg[256] = "", hex[65];
  size_t golden_len, yuv_len, fsize = tu_i420_size(r->width, r->height);
  uint8_t *golden, *yuv;
  c63_enc_params p;
  tu_buf out = {0};
  int ret, before = tu_failures;

  tu_data_path(path, sizeof path, r->stream);
  golden = tu_read_file(path, &golden_len);
  tu_yuv_path(path, sizeof path, r->input);
  yuv = tu_read_file(path, &yuv_len);
  TU_CHECK(golden != NULL && yuv != NULL, "%s: missing data", r->stream);
  if (golden == NULL || yuv == NULL) goto done;
  sha256_hex(golden, golden_len, hex);
  TU_CHECK(strcmp(hex, r->stream_sha256) == 0, "%s: the golden file itself has SHA-256 %s",
           r->stream, hex);
  TU_CHECK(yuv_len == fsize * (size_t)r->frames, "%s: input has %zu bytes, expected %d frames",
           r->input, yuv_len, r->frames);
  if (yuv_len < fsize * (size_t)r->frames) goto done;

  c63_enc_params_init(&p);
  p.width = r->width;
  p.height = r->height;
  p.quality = r->quality;
  p.keyframe_interval = r->keyframe_interval;
  p.search_range = r->search_range;
  ret = tu_encode(&p, yuv, r->frames, &out, msg, sizeof msg);
  TU_CHECK(ret == C63_OK, "%s: encoding failed: %s", r->stream, msg);
  if (ret != C63_OK) goto done;
  if (out.size != golden_len || memcmp(out.data, golden, golden_len) != 0) {
    size_t n = out.size < golden_len ? out.size : golden_len, i = 0;
    while (i < n && out.data[i] == golden[i])
      i++;
    TU_CHECK(0, "%s: encoded %zu bytes, golden %zu; first difference at byte %zu (frame %d)",
             r->stream, out.size, golden_len, i, frame_at(golden, golden_len, i));
  }
done:
  printf("encode %-24s %s\n", r->stream, tu_failures == before ? "exact" : "MISMATCH");
  free(golden);
  free(yuv);
  tu_buf_free(&out);
  return tu_failures == before;
}

static int test_decode(const tu_manifest_row *r)
{
  char path[1024], hex[65];
  size_t len;
  uint8_t *stream;
  tu_buf out = {0};
  tu_decode_result res;
  int before = tu_failures;

  tu_data_path(path, sizeof path, r->stream);
  stream = tu_read_file(path, &len);
  TU_CHECK(stream != NULL, "%s: missing", r->stream);
  if (stream == NULL) goto done;
  tu_decode_stream(stream, len, &out, &res);
  TU_CHECK(res.frames_ok == r->frames && res.frames_bad == 0 && res.header_errors == 0 &&
               res.garbage_bytes == 0,
           "%s: decoded %d frames (%d bad, %d header errors, %zu garbage bytes), expected %d; "
           "last error: %s",
           r->stream, res.frames_ok, res.frames_bad, res.header_errors, res.garbage_bytes,
           r->frames, res.last_error);
  TU_CHECK(res.width == r->width && res.height == r->height, "%s: decoded size %dx%d", r->stream,
           res.width, res.height);
  TU_CHECK(out.size == tu_i420_size(r->width, r->height) * (size_t)r->frames,
           "%s: decoded %zu bytes", r->stream, out.size);
  sha256_hex(out.data, out.size, hex);
  TU_CHECK(strcmp(hex, r->decoded_sha256) == 0, "%s: decoded SHA-256 %s, expected %s", r->stream,
           hex, r->decoded_sha256);
done:
  printf("decode %-24s %s\n", r->stream, tu_failures == before ? "exact" : "MISMATCH");
  free(stream);
  tu_buf_free(&out);
  return tu_failures == before;
}

int main(int argc, char **argv)
{
  static tu_manifest_row rows[MAX_ROWS];
  const char *mode = argc > 1 ? argv[1] : "all";
  int n = tu_read_manifest(rows, MAX_ROWS), enc_ok = 0, dec_ok = 0, selected = 0;
  int do_enc = strcmp(mode, "encode") == 0 || strcmp(mode, "all") == 0;
  int do_dec = strcmp(mode, "decode") == 0 || strcmp(mode, "all") == 0;

  if (!do_enc && !do_dec) {
    fprintf(stderr, "usage: %s encode|decode|all [STREAM...]\n", argv[0]);
    return 2;
  }
  check_sha256();
  TU_CHECK(n > 0, "no manifest rows");
  for (int i = 0; i < n; i++) {
    int wanted = argc <= 2;
    for (int a = 2; a < argc; a++)
      wanted |= strcmp(argv[a], rows[i].stream) == 0;
    if (!wanted) continue;
    selected++;
    if (do_enc) enc_ok += test_encode(&rows[i]);
    if (do_dec) dec_ok += test_decode(&rows[i]);
  }
  TU_CHECK(selected == (argc <= 2 ? n : argc - 2), "a named stream is not in the manifest");
  if (do_enc) printf("conformance: %d of %d streams encode byte-exact\n", enc_ok, selected);
  if (do_dec) printf("conformance: %d of %d streams decode exactly\n", dec_ok, selected);
  return tu_finish("conformance");
}
