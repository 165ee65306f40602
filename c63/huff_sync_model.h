/* A C model of the self-synchronising parallel entropy decoder (Weißenberger
 * and Schmidt): the frame's unstuffed bits are cut into subsequences of
 * subseq_bits; each "thread" decodes its own six times from a guessed
 * state (a block start at its first bit, at each of the six positions in the
 * MCU) to the first field boundary past its end; the true decoding from a
 * thread's predecessor's end has followed one of those six since they met
 * exactly when it ends in the same state, and that end is the thread's (a
 * thread whose true end is none of the six decodes again); a prefix sum of
 * the counts places each thread's output; a last pass builds the sparse
 * frame (DC prediction, vector reuse). The threads run one after the other
 * here; the steps are huff_sync.h's, which the GPU port shares: it is the
 * oracle the GPU stage is checked against. docs/design.md, "Entropy
 * decoding".
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef C63_HUFF_SYNC_MODEL_H
#define C63_HUFF_SYNC_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "geometry.h"
#include "sparse.h"

/* The model's verdict besides C63_OK: the frame holds something only the
 * sequential decoder judges (an invalid code on the decoding path, data
 * that ends too early, an unpaired FF at the end, a run past coefficient 63,
 * a vector the reference would read outside the plane with): decode it with
 * c63_entropy_decode. */
#define C63_HS_HAND_TO_CPU 1

/* Candidate decoders per thread: one per block position in the MCU. */
#define C63_HS_PHASES 6

/* How far the synchronisation figures follow a decoder. */
#define C63_HS_SYNC_WINDOW 16384

typedef struct c63_hs_stats {
  int subsequences;
  /* Subsequences after the first whose true end (the decoding from the
   * predecessor's end) is one of the thread's candidates' ends (and after
   * how many bits of the subsequence the two decodings met), and where it
   * is none (the thread decoded again). */
  long met, fallbacks;
  int fallback_run_max; /* the most consecutive subsequences that met none */
  uint64_t meet_bits_sum;
  uint32_t meet_bits_max;
  /* Per subsequence after the first: bits from its start until the decoder
   * that began there with a guessed state (MCU position 0) is in step with
   * the true parse, or never within C63_HS_SYNC_WINDOW bits. */
  long synced;       /* subsequences whose guessed decoder fell into step */
  long never_synced; /* ... that did not within the data */
  uint64_t sync_bits_sum;
  uint32_t sync_bits_max;
  /* The same for the best of six decoders, one per MCU position. */
  long synced6, never_synced6;
  uint64_t sync6_bits_sum;
  uint32_t sync6_bits_max;
} c63_hs_stats;

/* Decode the entropy-coded data (stuffed, as c63_entropy_decode takes it)
 * into f (reserved as for c63_entropy_decode). Returns C63_OK with f exactly
 * as c63_entropy_decode leaves it, C63_HS_HAND_TO_CPU, or C63_ERR_NOMEM.
 * stats, if not NULL, receives the synchronisation figures (with C63_OK). */
int c63_hs_model_decode(const uint8_t *data, size_t size, const c63_geometry *g, int keyframe,
                        uint32_t subseq_bits, c63_sparse_frame *f, c63_hs_stats *stats);

#endif
