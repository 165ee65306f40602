/* Sparse frame coefficients: allocation and expansion (sparse.h).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "sparse.h"

#include <stdlib.h>
#include <string.h>

#include "c63/c63.h"

size_t c63_sparse_entries_bound(const c63_geometry *g, size_t data_size)
{
  /* plus a rewritten block per block row, for AC runs past a block's end
   * into one decoded already (entropy_decode.c) */
  const size_t rows = (size_t)g->blocks_h[0] + g->blocks_h[1] + g->blocks_h[2];
  return c63_frame_blocks(g) + data_size / 3 * 8 + (data_size % 3) * 8 / 3 + 64 + rows * 64;
}

static void *alloc(size_t size, int pinned)
{
  return pinned ? c63_picture_memory_alloc(size) : malloc(size);
}

static void release(void *p, int pinned)
{
  if (pinned)
    c63_picture_memory_free(p);
  else
    free(p);
}

static void free_blocks(c63_sparse_frame *f)
{
  release(f->start, f->pinned);
  release(f->count, f->pinned);
  release(f->mvs, f->pinned);
  f->start = NULL;
  f->count = NULL;
  f->mvs = NULL;
  f->blocks_cap = 0;
}

static void free_entries(c63_sparse_frame *f)
{
  release(f->entries, f->pinned);
  f->entries = NULL;
  f->entries_cap = 0;
}

void c63_sparse_frame_free(c63_sparse_frame *f)
{
  free_blocks(f);
  free_entries(f);
  f->n_entries = 0;
}

int c63_sparse_frame_reserve(c63_sparse_frame *f, size_t blocks, size_t entries, int pinned)
{
  if (pinned != f->pinned) {
    c63_sparse_frame_free(f);
    f->pinned = pinned;
  }
  if (blocks > f->blocks_cap) {
    free_blocks(f);
    if (blocks > SIZE_MAX / sizeof(uint32_t)) return C63_ERR_NOMEM;
    f->start = alloc(blocks * sizeof(uint32_t), pinned);
    f->count = alloc(blocks, pinned);
    f->mvs = alloc(blocks * sizeof(c63_mv), pinned);
    if (!f->start || !f->count || !f->mvs) {
      free_blocks(f);
      return C63_ERR_NOMEM;
    }
    f->blocks_cap = blocks;
  }
  if (entries > f->entries_cap) {
    free_entries(f);
    /* Entries are indexed by uint32_t starts. */
    if (entries > UINT32_MAX) return C63_ERR_NOMEM;
    /* Some headroom, so a stream whose frames grow a little does not
     * reallocate (page-locked allocation is slow) every frame. */
    size_t want = entries + entries / 4;
    if (want > UINT32_MAX) want = UINT32_MAX;
    f->entries = alloc((want + C63_SPARSE_SLACK) * sizeof(uint32_t), pinned);
    if (!f->entries) return C63_ERR_NOMEM;
    f->entries_cap = want;
  }
  return C63_OK;
}

void c63_sparse_expand(const c63_sparse_frame *f, size_t first, size_t n, int16_t *dense)
{
  memset(dense, 0, n * 64 * sizeof(*dense));
  for (size_t b = 0; b < n; b++) {
    const uint32_t *e = f->entries + f->start[first + b];
    int16_t *blk = dense + b * 64;
    for (int k = 0; k < f->count[first + b]; k++)
      blk[e[k] >> 16] = (int16_t)(uint16_t)e[k];
  }
}
