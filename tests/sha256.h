/* A small SHA-256 (FIPS 180-4) for the tests, so the core tests need no
 * GLib or GStreamer.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef C63_TEST_SHA256_H
#define C63_TEST_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct sha256_ctx {
  uint32_t h[8];
  uint64_t total; /* bytes hashed */
  uint8_t block[64];
  size_t fill; /* bytes in block */
} sha256_ctx;

void sha256_init(sha256_ctx *c);
void sha256_update(sha256_ctx *c, const void *data, size_t len);
/* Finish and write the digest as 64 lowercase hex digits plus NUL. */
void sha256_final_hex(sha256_ctx *c, char hex[65]);
/* One-shot helper. */
void sha256_hex(const void *data, size_t len, char hex[65]);

#endif
