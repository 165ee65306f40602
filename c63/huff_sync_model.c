/* The C model of the parallel entropy decoder (huff_sync_model.h).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "huff_sync_model.h"

#include <stdlib.h>
#include <string.h>

#include "c63/c63.h"
#include "huff_sync.h"

/* A decoded field with the state it began at. */
typedef struct hs_elem {
  c63_hs_state at;
  c63_hs_out out;
} hs_elem;

/* One thread: where it starts and ends, and what it decoded in between. */
typedef struct hs_thread {
  c63_hs_state start, end;
  uint32_t steps, blocks; /* fields decoded, blocks begun */
} hs_thread;

typedef struct hs_ctx {
  const c63_huff_lut *luts;
  uint8_t *bits; /* unstuffed, with 8 zero bytes after its end */
  uint32_t total_bits, subseq_bits;
  int n_threads;
  hs_thread *th;
} hs_ctx;

/* The data without its stuffing bytes, and whether it ends with an FF whose
 * stuffing byte is missing. NULL when out of memory. */
static uint8_t *unstuff(const uint8_t *data, size_t size, size_t *n, int *unpaired_ff)
{
  uint8_t *out = calloc(size + 8, 1);
  if (!out) return NULL;
  size_t k = 0;
  *unpaired_ff = 0;
  for (size_t i = 0; i < size; i++) {
    out[k++] = data[i];
    if (data[i] == 0xff) {
      if (i + 1 < size)
        i++;
      else
        *unpaired_ff = 1;
    }
  }
  *n = k;
  return out;
}

static uint32_t thread_limit(const hs_ctx *c, int t)
{
  const uint64_t end = (uint64_t)(t + 1) * c->subseq_bits;
  return end < c->total_bits ? (uint32_t)end : c->total_bits;
}

/* Decode from th->start to the first field boundary at or past the end of
 * subsequence t (or until no code), writing the fields to out if not NULL. */
static void run_thread(const hs_ctx *c, int t, hs_elem *out)
{
  hs_thread *th = &c->th[t];
  const uint32_t limit = thread_limit(c, t);
  c63_hs_state s = th->start;
  uint32_t steps = 0, blocks = 0;
  while (s.field != C63_HS_BAD && s.pos < limit) {
    const c63_hs_state at = s;
    c63_hs_out o;
    c63_hs_step(c->luts, c63_hs_peek(c->bits, s.pos), &s, &o);
    if (s.field == C63_HS_BAD) break;
    if (out) out[steps] = (hs_elem){at, o};
    blocks += at.field == C63_HS_USE_MV;
    steps++;
  }
  th->end = s;
  th->steps = steps;
  th->blocks = blocks;
}

/* Decode from s to the first field boundary at or past subsequence t's end
 * (or to no code): the state there. */
static c63_hs_state run_to(const hs_ctx *c, int t, c63_hs_state s)
{
  const uint32_t limit = thread_limit(c, t);
  while (s.field != C63_HS_BAD && s.pos < limit) {
    c63_hs_out o;
    c63_hs_step(c->luts, c63_hs_peek(c->bits, s.pos), &s, &o);
  }
  return s;
}

/* The candidate of subsequence t whose end state is `end`, or -1. Two
 * decoders in the same state decode the same from there on, so a decoding
 * that reaches t's end in the state a candidate ends in has followed that
 * candidate since they met. */
static int matching_candidate(const c63_hs_state *cand_end, c63_hs_state end)
{
  for (int k = 0; k < C63_HS_PHASES; k++)
    if (c63_hs_equal(cand_end[k], end)) return k;
  return -1;
}

/* For the figures only: the bits into subsequence t after which the
 * decodings from `from` and from candidate k's start share a state (they
 * end alike, so they meet at the latest there). */
static uint32_t meeting_bits_with(const hs_ctx *c, int t, c63_hs_state from, int k)
{
  const uint32_t limit = thread_limit(c, t);
  c63_hs_state a = from, b = c63_hs_block_start((uint32_t)t * c->subseq_bits, k);
  c63_hs_out o;
  while (!c63_hs_equal(a, b)) {
    c63_hs_state *behind = a.pos <= b.pos ? &a : &b;
    if (behind->field == C63_HS_BAD || behind->pos >= limit) break;
    c63_hs_step(c->luts, c63_hs_peek(c->bits, behind->pos), behind, &o);
  }
  return a.pos - (uint32_t)t * c->subseq_bits;
}

/* ... and with the first of the candidates that end as the decoding from
 * `from` does. */
static uint32_t meeting_bits(const hs_ctx *c, int t, c63_hs_state from, const c63_hs_state *ends,
                             c63_hs_state end)
{
  uint32_t best = UINT32_MAX;
  for (int k = 0; k < C63_HS_PHASES; k++) {
    if (!c63_hs_equal(ends[k], end)) continue;
    const uint32_t bits = meeting_bits_with(c, t, from, k);
    if (bits < best) best = bits;
  }
  return best;
}

/* Find where each thread truly starts, as the GPU does (docs/design.md,
 * "Entropy decoding"). Every subsequence runs six candidate decoders, one
 * per MCU position, to its end. Its map sends each candidate j of its
 * predecessor to the candidate k whose end state equals that of the
 * decoding from j's end: the state after j then is the state after k.
 * Chained from the frame's start (candidate 0 of subsequence 0), the maps
 * give every subsequence's true start; where the chain breaks (no
 * candidate ends as the true decoding does), the true decoding runs on,
 * one subsequence at a time, until its end is a candidate's again (a
 * fallback). Returns 0, or -1 when out of memory. */
static int synchronise(hs_ctx *c, c63_hs_stats *st)
{
  const int n = c->n_threads;
  c63_hs_state *cand_end = malloc((size_t)n * C63_HS_PHASES * sizeof(*cand_end));
  int8_t *map = malloc((size_t)n * C63_HS_PHASES);
  int r = -1;
  if (!cand_end || !map) goto out;
  for (int t = 0; t < n; t++)
    for (int k = 0; k < C63_HS_PHASES; k++)
      cand_end[t * C63_HS_PHASES + k] =
          run_to(c, t, c63_hs_block_start((uint32_t)t * c->subseq_bits, k));
  for (int t = 1; t < n; t++)
    for (int j = 0; j < C63_HS_PHASES; j++)
      map[t * C63_HS_PHASES + j] = (int8_t)matching_candidate(
          &cand_end[t * C63_HS_PHASES], run_to(c, t, cand_end[(t - 1) * C63_HS_PHASES + j]));
  /* subsequence 0 truly starts as its candidate 0 */
  c->th[0].start = c63_hs_block_start(0, 0);
  int cand = 0, run = 0;
  c63_hs_state end = cand_end[0];
  for (int t = 1; t < n; t++) {
    c->th[t].start = end;
    int k = cand >= 0 ? map[t * C63_HS_PHASES + cand] : -1;
    const c63_hs_state next = k >= 0 ? cand_end[t * C63_HS_PHASES + k] : run_to(c, t, end);
    if (k < 0) k = matching_candidate(&cand_end[t * C63_HS_PHASES], next);
    if (k >= 0) {
      const uint32_t bits = meeting_bits(c, t, end, &cand_end[t * C63_HS_PHASES], next);
      run = 0;
      st->met++;
      st->meet_bits_sum += bits;
      if (bits > st->meet_bits_max) st->meet_bits_max = bits;
    } else {
      st->fallbacks++;
      if (++run > st->fallback_run_max) st->fallback_run_max = run;
    }
    end = next;
    cand = k;
  }
  r = 0;
out:
  free(map);
  free(cand_end);
  return r;
}

/* The true state at bit pos, if a field begins there (elems sorted by pos). */
static const hs_elem *field_at(const hs_elem *elems, size_t n, uint32_t pos)
{
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (elems[mid].at.pos < pos)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < n && elems[lo].at.pos == pos ? &elems[lo] : NULL;
}

/* Bits from `from` until a decoder that begins there at a block start of
 * MCU position k is in step with the true parse (the same state at the same
 * bit); -1 when it is not within the data or C63_HS_SYNC_WINDOW bits. */
static long sync_distance(const hs_ctx *c, const hs_elem *elems, size_t n, uint32_t from, int k)
{
  c63_hs_state s = c63_hs_block_start(from, k);
  while (s.field != C63_HS_BAD && s.pos < c->total_bits && s.pos - from <= C63_HS_SYNC_WINDOW) {
    const hs_elem *truth = field_at(elems, n, s.pos);
    if (truth && c63_hs_equal(truth->at, s)) return (long)(s.pos - from);
    c63_hs_out o;
    c63_hs_step(c->luts, c63_hs_peek(c->bits, s.pos), &s, &o);
  }
  return -1;
}

static void add_distance(long d, long *synced, long *never, uint64_t *sum, uint32_t *max)
{
  if (d < 0) {
    (*never)++;
    return;
  }
  (*synced)++;
  *sum += (uint64_t)d;
  if ((uint32_t)d > *max) *max = (uint32_t)d;
}

/* For each subsequence after the first: how far the decoder that began at
 * its first bit with the guessed state (MCU position 0) runs before it is in
 * step with the true parse; and the least of that over the six MCU
 * positions, what a thread that follows six guesses would need. */
static void measure_sync(const hs_ctx *c, const hs_elem *elems, size_t n, c63_hs_stats *st)
{
  for (int t = 1; t < c->n_threads; t++) {
    const uint32_t from = (uint32_t)t * c->subseq_bits;
    long best = -1;
    for (int k = 0; k < C63_HS_PHASES; k++) {
      const long d = sync_distance(c, elems, n, from, k);
      if (k == 0)
        add_distance(d, &st->synced, &st->never_synced, &st->sync_bits_sum, &st->sync_bits_max);
      if (d >= 0 && (best < 0 || d < best)) best = d;
    }
    add_distance(best, &st->synced6, &st->never_synced6, &st->sync6_bits_sum, &st->sync6_bits_max);
  }
}

typedef struct hs_assembly {
  const c63_geometry *g;
  int keyframe;
  c63_sparse_frame *f;
  size_t plane_off[3];
  int prev_dc[3];
  /* the block under way */
  int c, bx, by;
  size_t idx;
  uint32_t *e0, *e;
} hs_assembly;

static void finish_block(hs_assembly *a)
{
  const size_t blk = a->plane_off[a->c] + a->idx;
  a->f->start[blk] = (uint32_t)a->f->n_entries;
  a->f->count[blk] = (uint8_t)(a->e - a->e0);
  a->f->n_entries += (size_t)(a->e - a->e0);
}

/* Start decode-order block b at its use_mv field. */
static int begin_block(hs_assembly *a, long b, const hs_elem *el)
{
  const c63_geometry *g = a->g;
  const long mcu = b / 6;
  const int k = (int)(b % 6);
  if (el->at.k != k) return C63_HS_HAND_TO_CPU; /* never on a chained parse */
  c63_mcu_block((int)(mcu % g->mcus_w), (int)(mcu / g->mcus_w), k, &a->c, &a->bx, &a->by);
  a->idx = (size_t)a->by * g->blocks_w[a->c] + a->bx;
  if (a->f->entries_cap - a->f->n_entries < 64) return C63_HS_HAND_TO_CPU;
  a->e0 = a->e = a->f->entries + a->f->n_entries;
  a->f->mvs[a->plane_off[a->c] + a->idx].use_mv = (uint8_t)el->out.value;
  return C63_OK;
}

/* One field of the block under way: vectors (with the left neighbour's for
 * a reuse), DC prediction, coefficients. */
static int add_field(hs_assembly *a, const hs_elem *el)
{
  c63_mv *mvs = a->f->mvs + a->plane_off[a->c], *mv = &mvs[a->idx];
  const int v = el->out.value;
  switch (el->out.field) {
  case C63_HS_REUSE:
    if (!v) break;
    if (a->idx == 0) return C63_HS_HAND_TO_CPU;
    mv->x = mvs[a->idx - 1].x;
    mv->y = mvs[a->idx - 1].y;
    break;
  case C63_HS_MV_X:
    mv->x = (int8_t)(uint8_t)(v & 0xff);
    break;
  case C63_HS_MV_Y:
    mv->y = (int8_t)(uint8_t)(v & 0xff);
    break;
  case C63_HS_DC:
    if (mv->use_mv && !a->keyframe &&
        !c63_mv_reads_inside(a->g->pad_w[a->c], a->g->pad_h[a->c], a->bx, a->by, mv->x, mv->y))
      return C63_HS_HAND_TO_CPU;
    a->prev_dc[a->c] = (int16_t)(a->prev_dc[a->c] + v);
    if (a->prev_dc[a->c]) *a->e++ = c63_sparse_entry(0, a->prev_dc[a->c]);
    break;
  case C63_HS_AC:
    if (v) *a->e++ = c63_sparse_entry(el->out.z, v);
    break;
  }
  return C63_OK;
}

/* The sparse frame from the placed fields, in decode order. The frame's
 * last block must end within the data (end: the state after the last
 * field). */
static int assemble(const hs_ctx *c, const hs_elem *elems, size_t n, c63_hs_state end,
                    const c63_geometry *g, int keyframe, c63_sparse_frame *f)
{
  hs_assembly a = {.g = g, .keyframe = keyframe, .f = f};
  const long n_blocks = (long)c63_frame_blocks(g);
  long b = -1;
  int r;
  for (int p = 0; p < 3; p++)
    a.plane_off[p] = c63_block_offset(g, p);
  f->n_entries = 0;
  memset(f->mvs, 0, (size_t)n_blocks * sizeof(c63_mv));
  for (size_t i = 0; i < n; i++) {
    const hs_elem *el = &elems[i];
    if (el->at.field == C63_HS_USE_MV) {
      if (b >= 0) finish_block(&a);
      if (++b == n_blocks) {
        end = el->at; /* the rest is the flush byte's bits */
        break;
      }
      if ((r = begin_block(&a, b, el))) return r;
    } else if ((r = add_field(&a, el))) {
      return r;
    }
  }
  if (b < n_blocks) {
    /* the last block ended with the decoding, at a block start */
    if (b != n_blocks - 1 || end.field != C63_HS_USE_MV) return C63_HS_HAND_TO_CPU;
    finish_block(&a);
  }
  return end.pos <= c->total_bits ? C63_OK : C63_HS_HAND_TO_CPU;
}

/* Count each thread's fields from its true start, place them by a prefix
 * sum of the counts and decode them there; NULL when out of memory. */
static hs_elem *place(hs_ctx *c, size_t *n)
{
  size_t total = 0;
  for (int t = 0; t < c->n_threads; t++) {
    run_thread(c, t, NULL); /* the counts, from the true start */
    total += c->th[t].steps;
  }
  hs_elem *elems = malloc((total ? total : 1) * sizeof(hs_elem));
  if (!elems) return NULL;
  size_t off = 0;
  for (int t = 0; t < c->n_threads; t++) {
    run_thread(c, t, elems + off);
    off += c->th[t].steps;
  }
  *n = total;
  return elems;
}

int c63_hs_model_decode(const uint8_t *data, size_t size, const c63_geometry *g, int keyframe,
                        uint32_t subseq_bits, c63_sparse_frame *f, c63_hs_stats *stats)
{
  size_t n_bytes;
  int unpaired_ff, r = C63_ERR_NOMEM;
  if (!subseq_bits || f->blocks_cap < c63_frame_blocks(g) || size > UINT32_MAX / 8 - 8)
    return C63_HS_HAND_TO_CPU;
  hs_ctx c = {.luts = c63_huff_luts(), .subseq_bits = subseq_bits};
  c.bits = unstuff(data, size, &n_bytes, &unpaired_ff);
  if (!c.bits) return C63_ERR_NOMEM;
  c.total_bits = (uint32_t)(8 * n_bytes);
  c.n_threads = (int)((c.total_bits + subseq_bits - 1) / subseq_bits);
  if (c.n_threads < 1) c.n_threads = 1;
  c.th = calloc((size_t)c.n_threads, sizeof(hs_thread));
  hs_elem *elems = NULL;
  size_t n = 0;
  c63_hs_stats st = {.subsequences = c.n_threads};
  if (!c.th || synchronise(&c, &st)) goto out;
  if (!(elems = place(&c, &n))) goto out;
  r = unpaired_ff ? C63_HS_HAND_TO_CPU
                  : assemble(&c, elems, n, c.th[c.n_threads - 1].end, g, keyframe, f);
  if (r == C63_OK && stats) {
    measure_sync(&c, elems, n, &st);
    *stats = st;
  }
out:
  free(elems);
  free(c.th);
  free(c.bits);
  return r;
}
