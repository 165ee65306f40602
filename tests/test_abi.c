/* The public API's ABI checks (c63.h, docs/design.md "Public API and ABI"):
 * parameter structs are read by their size, older (smaller) layouts keep
 * the defaults of the fields they lack and sizes no layout has are refused;
 * the version functions agree with the build; the frame scanner keeps its
 * whole state in the opaque storage it was given.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "c63-config.h"
#include "c63/c63.h"
#include "c63/params.h"
#include "tutil.h"

/* A parameter struct as it will grow: v2 appends a field to v1. */
typedef struct toy_v1 {
  size_t size;
  int a;
} toy_v1;
typedef struct toy_v2 {
  size_t size;
  int a;
  int64_t added; /* default 7 */
} toy_v2;

static void test_load_older_layout(void)
{
  toy_v1 old = {sizeof(toy_v1), 3};
  toy_v2 full = {0, 0, 7};
  char msg[256] = "";

  /* A program built with v1 against a library with v2: its field is read,
   * the field it does not know keeps its default, and the size is the
   * library's. */
  TU_CHECK_EQ(c63_params_load(&full, sizeof full, sizeof old, &old, "toy", msg, sizeof msg),
              C63_OK);
  TU_CHECK_EQ(full.a, 3);
  TU_CHECK_EQ(full.added, 7);
  TU_CHECK_EQ(full.size, sizeof full);
  /* A program built with v2 against a library with only v1 is refused. */
  toy_v2 newer = {sizeof(toy_v2), 3, 9};
  toy_v1 lib = {0, 0};
  TU_CHECK_EQ(c63_params_load(&lib, sizeof lib, sizeof lib, &newer, "toy", msg, sizeof msg),
              C63_ERR_INVALID_ARG);
  TU_CHECK_TRUE(strstr(msg, "toy_init") != NULL);
}

/* Creating an encoder or a decoder with params of a given size: the
 * status, and the message in msg. */
typedef int (*create_fn)(size_t size, char *msg, size_t msg_size);

static int create_encoder(size_t size, char *msg, size_t msg_size)
{
  c63_enc_params p;
  c63_encoder *enc = (c63_encoder *)&enc; /* must be set to NULL on failure */

  c63_enc_params_init(&p);
  p.width = 64;
  p.height = 48;
  p.threads = 1;
  p.size = size;
  int r = c63_encoder_new(&p, &enc, msg, msg_size);
  TU_CHECK_TRUE((r == C63_OK) == (enc != NULL));
  c63_encoder_free(r == C63_OK ? enc : NULL);
  /* validate answers as creation does */
  TU_CHECK_EQ(c63_enc_params_validate(&p, NULL, 0), r);
  return r;
}

static int create_decoder(size_t size, char *msg, size_t msg_size)
{
  c63_dec_params p;
  c63_decoder *dec = (c63_decoder *)&dec;

  c63_dec_params_init(&p);
  p.threads = 1;
  p.size = size;
  int r = c63_decoder_new(&p, &dec, msg, msg_size);
  TU_CHECK_TRUE((r == C63_OK) == (dec != NULL));
  c63_decoder_free(r == C63_OK ? dec : NULL);
  return r;
}

/* Sizes no layout of a struct has are refused with a message that names
 * its init function: never set (0), smaller than its first layout, from a
 * newer library, garbage. The first layout is taken, which every later
 * library does too. */
static void check_sizes(create_fn create, size_t first, size_t current, const char *init)
{
  const size_t bad[] = {0, 1, sizeof(size_t), first - 1, current + 1, (size_t)-1};
  char msg[256];

  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    msg[0] = '\0';
    TU_CHECK_EQ(create(bad[i], msg, sizeof msg), C63_ERR_INVALID_ARG);
    TU_CHECK_TRUE(strstr(msg, init) != NULL);
  }
  TU_CHECK_EQ(create(first, msg, sizeof msg), C63_OK);
  TU_CHECK_EQ(create(current, msg, sizeof msg), C63_OK);
}

/* c63_dec_params as soname 1's first c63.h declared it. */
typedef struct dec_params_v1 {
  size_t size;
  c63_backend_kind backend;
  int device_id;
  int threads;
  void *cuda_context;
} dec_params_v1;

static void test_params_size(void)
{
  c63_enc_params ep;
  c63_dec_params dp;
  c63_decoder *dec = NULL;

  c63_enc_params_init(&ep);
  TU_CHECK_EQ(ep.size, sizeof ep);
  c63_dec_params_init(&dp);
  TU_CHECK_EQ(dp.size, sizeof dp);
  check_sizes(create_encoder, C63_ENC_PARAMS_SIZE_V1, sizeof ep, "c63_enc_params_init");
  check_sizes(create_decoder, C63_DEC_PARAMS_SIZE_V1, sizeof dp, "c63_dec_params_init");

  /* A program built against the first c63.h passes its own struct. */
  TU_CHECK_EQ(C63_DEC_PARAMS_SIZE_V1, sizeof(dec_params_v1));
  dec_params_v1 old = {sizeof old, C63_BACKEND_CPU, 0, 1, NULL};
  TU_CHECK_EQ(c63_decoder_new((const c63_dec_params *)&old, &dec, NULL, 0), C63_OK);
  c63_decoder_free(dec);
}

static void test_version(void)
{
  unsigned major, minor, micro;
  char tail;

  TU_CHECK_TRUE(strcmp(c63_version_string(), C63_VERSION) == 0);
  TU_CHECK_EQ(sscanf(c63_version_string(), "%u.%u.%u%c", &major, &minor, &micro, &tail), 3);
  TU_CHECK_EQ(c63_version(), major << 16 | minor << 8 | micro);
}

/* The scanner's state lives in its storage: a copy taken in the middle of
 * a frame goes on exactly as the original. */
static void test_scanner_storage(void)
{
  /* SOI, a DQT (with FF D8 inside, never a boundary) and a short frame
   * that is cut by the next SOI. */
  static const uint8_t stream[] = {0x00, 0x11, 0xff, 0xd8, 0xff, 0xdb, 0x00, 0x04,
                                   0xff, 0xd8, 0x12, 0x34, 0xff, 0xd8, 0xff, 0xdb};
  c63_frame_scanner a, b;
  c63_frame_scan_result ra, rb;

  TU_CHECK_EQ(sizeof(c63_frame_scanner), C63_FRAME_SCANNER_SIZE);
  c63_frame_scanner_init(&a);
  TU_CHECK_EQ(c63_frame_scan(&a, stream, sizeof stream, 0, &ra), C63_SCAN_SKIP);
  TU_CHECK_EQ(ra.size, 2);
  TU_CHECK_EQ(c63_frame_scan(&a, stream + 2, 6, 0, &ra), C63_SCAN_NEED_DATA);
  memcpy(&b, &a, sizeof a);
  int sa = c63_frame_scan(&a, stream + 2, sizeof stream - 2, 1, &ra);
  int sb = c63_frame_scan(&b, stream + 2, sizeof stream - 2, 1, &rb);
  TU_CHECK_EQ(sa, C63_SCAN_FRAME);
  TU_CHECK_EQ(sa, sb);
  TU_CHECK_EQ(ra.size, rb.size);
  TU_CHECK_EQ(ra.complete, rb.complete);
}

int main(void)
{
  test_load_older_layout();
  test_params_size();
  test_version();
  test_scanner_storage();
  return tu_finish("test_abi");
}
