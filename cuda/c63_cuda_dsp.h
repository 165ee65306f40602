/* Host-callable versions of each CUDA stage, with the semantics and data
 * layout of the matching c63_dsp function (c63/dsp.h), so tests can compare
 * every GPU kernel with its CPU twin byte for byte. Each call allocates
 * device memory, uploads, runs the very kernel the backend runs, downloads
 * and frees, synchronously on the current CUDA device: for tests, not for
 * speed. They return C63_OK or a c63_status with msg set.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef C63_CUDA_DSP_H
#define C63_CUDA_DSP_H

#include <stddef.h>
#include <stdint.h>

#include "c63/dsp.h"

#ifdef __cplusplus
extern "C" {
#endif

/* w, h: padded plane size (multiples of 8); stride = w. quant: zig-zag
 * order, 1..255 for c63_cuda_test_fdct_quant (as c63_make_quant_tables makes
 * them; a zero entry is C63_ERR_INVALID_ARG). */
int c63_cuda_test_motion_search(const uint8_t *cur, const uint8_t *ref, int w, int h, int range,
                                c63_mv *mvs, char *msg, size_t msg_size);
int c63_cuda_test_motion_compensate(const uint8_t *ref, int w, int h, const c63_mv *mvs,
                                    uint8_t *pred, char *msg, size_t msg_size);
int c63_cuda_test_fdct_quant(const uint8_t *cur, const uint8_t *pred, int w, int h,
                             const uint8_t quant[64], int ac_limit, int16_t *coeffs, char *msg,
                             size_t msg_size);
int c63_cuda_test_dequant_idct_recon(const int16_t *coeffs, const uint8_t *pred, int w, int h,
                                     const uint8_t quant[64], uint8_t *recon, char *msg,
                                     size_t msg_size);

/* Entropy coding of a whole frame of width x height (c63/entropy.h's
 * c63_entropy_encode: coefficients and vectors per plane, data stuffed and
 * flushed) into out (capacity bytes); *size is the payload's length. */
int c63_cuda_test_entropy_encode(int width, int height, const int16_t *const coeffs[3],
                                 const c63_mv *const mvs[3], uint8_t *out, size_t capacity,
                                 size_t *size, char *msg, size_t msg_size);

/* Stuffing and the flush rule alone (c63_write_stuffed in c63/bitwriter.h):
 * n bytes of unstuffed data, then pending_bits (0..7) bits in the low bits
 * of pending. */
int c63_cuda_test_write_stuffed(const uint8_t *data, size_t n, uint32_t pending, int pending_bits,
                                uint8_t *out, size_t capacity, size_t *size, char *msg,
                                size_t msg_size);

/* Test support for pictures in device memory: a CUDA context of the
 * test's own (cuCtxCreate on device, as GstCudaContext makes; NULL when
 * that fails), and a device copy of host bytes made in a context (NULL:
 * device 0's primary context). NULL on failure. */
void *c63_cuda_test_context_new(int device);
void c63_cuda_test_context_free(void *ctx);
void *c63_cuda_test_upload(void *ctx, const void *host, size_t size);
void c63_cuda_test_device_free(void *ctx, void *ptr);

#ifdef __cplusplus
}
#endif

#endif
