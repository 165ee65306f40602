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

/* The states a decoder passed through, in bit order, its end state last. */
typedef struct hs_path {
  c63_hs_state *st;
  uint32_t n, cap;
} hs_path;

static int push_state(hs_path *p, c63_hs_state s)
{
  if (p->n == p->cap) {
    uint32_t cap = p->cap ? 2 * p->cap : 64;
    c63_hs_state *st = realloc(p->st, cap * sizeof(*st));
    if (!st) return -1;
    p->st = st;
    p->cap = cap;
  }
  p->st[p->n++] = s;
  return 0;
}

/* Candidate k of thread t: from the subsequence's first bit at a block
 * start of MCU position k to the first field boundary past its end. */
static int run_candidate(const hs_ctx *c, int t, int k, hs_path *p)
{
  const uint32_t limit = thread_limit(c, t);
  c63_hs_state s = c63_hs_block_start((uint32_t)t * c->subseq_bits, k);
  p->n = 0;
  while (s.field != C63_HS_BAD && s.pos < limit) {
    if (push_state(p, s)) return -1;
    c63_hs_out o;
    c63_hs_step(c->luts, c63_hs_peek(c->bits, s.pos), &s, &o);
  }
  return push_state(p, s);
}

/* Whether path p passed through state s. */
static int on_path(const hs_path *p, c63_hs_state s)
{
  uint32_t lo = 0, hi = p->n;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (p->st[mid].pos < s.pos)
      lo = mid + 1;
    else
      hi = mid;
  }
  for (; lo < p->n && p->st[lo].pos == s.pos; lo++)
    if (c63_hs_equal(p->st[lo], s)) return 1;
  return 0;
}

/* Decode from `from` (where subsequence t truly begins: its predecessor's
 * end) until the state is one that a candidate of thread t passed through:
 * from there that candidate's decoding is the true one. Returns the
 * candidate and the bits decoded into subsequence t (*bits), or -1 when none
 * is met by the subsequence's end. */
static int meet(const hs_ctx *c, int t, c63_hs_state from, const hs_path *cand, uint32_t *bits)
{
  const uint32_t limit = thread_limit(c, t);
  c63_hs_state s = from;
  for (;;) {
    for (int k = 0; k < C63_HS_PHASES; k++) {
      if (on_path(&cand[k], s)) {
        *bits = s.pos - (uint32_t)t * c->subseq_bits;
        return k;
      }
    }
    if (s.field == C63_HS_BAD || s.pos >= limit) return -1;
    c63_hs_out o;
    c63_hs_step(c->luts, c63_hs_peek(c->bits, s.pos), &s, &o);
  }
}

/* Find where each thread truly starts. Every thread runs six candidate
 * decoders, one per MCU position, over its subsequence. Its predecessor's
 * true end then needs only to be decoded until it meets one of them, whose
 * end is then the thread's true end (on the GPU: the meeting for each of the
 * predecessor's six candidates, and a scan over the six-entry maps); where
 * it meets none, the thread decodes again from its true start (a fallback
 * pass). Returns 0, or -1 when out of memory. */
static int synchronise(hs_ctx *c, c63_hs_stats *st)
{
  hs_path *paths = calloc((size_t)c->n_threads * C63_HS_PHASES, sizeof(hs_path));
  int r = -1;
  if (!paths) return -1;
  for (int t = 0; t < c->n_threads; t++)
    for (int k = 0; k < C63_HS_PHASES; k++)
      if (run_candidate(c, t, k, &paths[t * C63_HS_PHASES + k])) goto out;
  /* thread 0 truly starts as its candidate 0 */
  c->th[0].start = c63_hs_block_start(0, 0);
  int cand = 0, run = 0;
  for (int t = 1; t < c->n_threads; t++) {
    c63_hs_state from;
    if (cand >= 0) {
      const hs_path *p = &paths[(t - 1) * C63_HS_PHASES + cand];
      from = p->st[p->n - 1];
    } else {
      run_thread(c, t - 1, NULL);
      from = c->th[t - 1].end;
    }
    c->th[t].start = from;
    uint32_t bits = 0;
    cand = meet(c, t, from, &paths[t * C63_HS_PHASES], &bits);
    if (cand < 0) {
      st->fallbacks++;
      if (++run > st->fallback_run_max) st->fallback_run_max = run;
      continue;
    }
    run = 0;
    st->met++;
    st->meet_bits_sum += bits;
    if (bits > st->meet_bits_max) st->meet_bits_max = bits;
  }
  r = 0;
out:
  for (int i = 0; i < c->n_threads * C63_HS_PHASES; i++)
    free(paths[i].st);
  free(paths);
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
