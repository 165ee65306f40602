/* Internal interface between the CUDA translation units (C++ only): the plane
 * descriptors the kernels take by value, and the kernel launchers.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef C63_CUDA_INTERNAL_H
#define C63_CUDA_INTERNAL_H

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

#include "c63/dsp.h"

/* One padded plane inside a frame buffer. Frames keep their planes back to
 * back (Y, U, V); coefficients and vectors are indexed by a global block
 * number, the plane's blocks starting at blk_off. */
struct c63_cu_plane {
  int w, h;     /* padded size; stride = w */
  int bw, bh;   /* 8x8 blocks per row / column */
  int pix_off;  /* offset of the plane's first pixel in a frame buffer */
  int blk_off;  /* global index of the plane's first block */
  int range;    /* motion search range of this plane */
  int ac_limit; /* largest AC magnitude (c63_ac_limit) */
  uint8_t quant[64];
};

/* Up to three planes, passed by value to the kernels (no per-frame copy of
 * the quantiser tables). */
struct c63_cu_planes {
  int n;
  int total_blocks;
  c63_cu_plane p[3];
};

/* Largest byte size of a frame that a plane offset may address. */
#define C63_CU_MAX_FRAME_BYTES (3 * 8192 * 8192)

/* Full search of one plane (format section 3); writes mvs[blk_off ..] with
 * use_mv = 1. cur and ref are frame buffers (the plane at pix_off). */
cudaError_t c63_cu_motion_search(const uint8_t *cur, const uint8_t *ref, const c63_cu_plane &pl,
                                 c63_mv *mvs, cudaStream_t s);

/* The same for two planes of equal size and range (U and V) in one launch. */
cudaError_t c63_cu_motion_search_pair(const uint8_t *cur, const uint8_t *ref, const c63_cu_plane &a,
                                      const c63_cu_plane &b, c63_mv *mvs, cudaStream_t s);

/* pred = ref displaced by each block's vector, zero for use_mv = 0. */
cudaError_t c63_cu_motion_compensate(const uint8_t *ref, const c63_mv *mvs, const c63_cu_planes &pl,
                                     uint8_t *pred, cudaStream_t s);

/* coeffs = quant(fdct(cur - pred)) for every block of every plane, where pred
 * is ref displaced by the block's vector (zero when mvs is NULL or the block
 * has use_mv = 0): compensation is fused into the transform. */
cudaError_t c63_cu_fdct_quant(const uint8_t *cur, const uint8_t *ref, const c63_mv *mvs,
                              const c63_cu_planes &pl, int16_t *coeffs, cudaStream_t s);

/* recon = clamp(pred + idct(dequant(coeffs))), pred as for c63_cu_fdct_quant. */
cudaError_t c63_cu_dequant_idct_recon(const int16_t *coeffs, const uint8_t *ref, const c63_mv *mvs,
                                      const c63_cu_planes &pl, uint8_t *recon, cudaStream_t s);

/* Write "what: CUDA error text" into msg and map the error to a c63_status. */
int c63_cu_error(cudaError_t err, const char *what, char *msg, size_t msg_size);

#endif
