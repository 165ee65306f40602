/* A frame's coefficients as the entropy decoder produces them: only the
 * non-zero ones. The dense int16 coefficients of a 1080p frame are 6.3 MB,
 * nearly all zeros; these are typically well under 1 MB, so a GPU backend
 * uploads little, and the decoder's threads do not clear and refill
 * megabytes per frame.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef C63_SPARSE_H
#define C63_SPARSE_H

#include <stddef.h>
#include <stdint.h>

#include "dsp.h"
#include "geometry.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Blocks are numbered through the frame: Y in raster order, then U, then V
 * (c63_block_offset), the numbering of the GPU backends' buffers too. */
typedef struct c63_sparse_frame {
  uint32_t *start; /* per block: its first entry */
  uint8_t *count;  /* per block: its entries, 0..64 */
  c63_mv *mvs;     /* per block */
  /* zig-zag index << 16 | (uint16_t)value, in increasing index per block */
  uint32_t *entries;
  size_t n_entries;               /* entries of the frame */
  size_t blocks_cap, entries_cap; /* what the arrays hold (entries: and
                                     C63_SPARSE_SLACK more, see there) */
  int pinned;                     /* allocated as picture memory (for a GPU backend) */
} c63_sparse_frame;

/* Entries allocated past entries_cap: the entropy decoder writes up to two
 * entries past a block's last, unconditionally, and never counts them. */
#define C63_SPARSE_SLACK 2

static inline uint32_t c63_sparse_entry(int zigzag_index, int value)
{
  return (uint32_t)zigzag_index << 16 | (uint16_t)value;
}

/* First block of plane c in the frame's numbering. */
static inline size_t c63_block_offset(const c63_geometry *g, int c)
{
  size_t off = 0;
  for (int p = 0; p < c; p++)
    off += (size_t)g->blocks_w[p] * g->blocks_h[p];
  return off;
}

static inline size_t c63_frame_blocks(const c63_geometry *g)
{
  return c63_block_offset(g, 3);
}

/* Most entries entropy-coded data of `size` bytes can give: one DC per
 * block, and each non-zero AC takes at least 3 bits (a 2-bit code and a
 * value bit); a block may run up to 63 AC into the zero bits past the end
 * before the decoder sees the truncation; and room to rewrite one block per
 * block row (an AC run past a block's end, entropy_decode.c). */
size_t c63_sparse_entries_bound(const c63_geometry *g, size_t data_size);

/* Make room for `blocks` blocks and `entries` entries; arrays only grow
 * (their contents are lost when they do). pinned: allocate as picture
 * memory, which a GPU backend uploads by DMA without a staging copy.
 * Returns C63_OK or C63_ERR_NOMEM. */
int c63_sparse_frame_reserve(c63_sparse_frame *f, size_t blocks, size_t entries, int pinned);
void c63_sparse_frame_free(c63_sparse_frame *f);

/* Dense coefficients (dsp.h layout, 64 per block in zig-zag order) of the
 * n blocks from `first` on. */
void c63_sparse_expand(const c63_sparse_frame *f, size_t first, size_t n, int16_t *dense);

#ifdef __cplusplus
}
#endif

#endif
