/* The per-block arithmetic of the rd mode (docs/rd.md) that the CPU coder
 * (rd.c, rd_code.c) and the CUDA one (cuda/c63_cuda_rd.cu) share, written
 * once so that both decide alike to the bit: the bits the entropy coder
 * spends on a block's vector and coefficients, the cost of a vector in the
 * search, and the trellis over a quantised block's AC levels. The Huffman
 * code lengths come in as arrays (c63_huff_enc.len: host tables on the CPU,
 * a device copy on the GPU). Float sums and products are written in the
 * order the CPU evaluates them; the CUDA build forbids FMA contraction
 * (-fmad=false) as the C build does (-ffp-contract=off).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef C63_RD_BLOCK_H
#define C63_RD_BLOCK_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "bit_width.h"
#include "dsp.h"

#ifdef __CUDACC__
#define C63_RD_FN __host__ __device__ __forceinline__
#else
#define C63_RD_FN static inline
#endif

/* Bits of a value coded as its size with a table of code lengths, then the
 * size's bits. */
C63_RD_FN int c63_rd_value_bits(const uint8_t *len, int v)
{
  const int s = c63_bit_width(v);
  return len[s] + s;
}

/* Bits of a block's motion fields (c63_rd_mv_bits); mv_len: the MV table;
 * left counts where has_left is set. (Values, not pointers: a GPU thread
 * keeps them in registers.) */
C63_RD_FN int c63_rd_mv_bits_of(const uint8_t *mv_len, c63_mv mv, int has_left, c63_mv left)
{
  if (!mv.use_mv) return 1;
  if (has_left && left.use_mv && left.x == mv.x && left.y == mv.y) return 2;
  return 2 + c63_rd_value_bits(mv_len, mv.x) + c63_rd_value_bits(mv_len, mv.y);
}

/* The same with left NULL in the first column. */
C63_RD_FN int c63_rd_mv_bits_len(const uint8_t *mv_len, const c63_mv *mv, const c63_mv *left)
{
  const c63_mv none = {0, 0, 0, 0};
  return c63_rd_mv_bits_of(mv_len, *mv, left != NULL, left ? *left : none);
}

/* Bits of the DC difference, which wraps in int16_t as the coder writes it. */
C63_RD_FN int c63_rd_dc_bits(const uint8_t *dc_len, int dc, int prev_dc)
{
  return c63_rd_value_bits(dc_len, (int16_t)(dc - prev_dc));
}

/* Bits of the AC coefficients: run/size codes, ZRLs, and the EOB unless the
 * last coefficient is non-zero. */
C63_RD_FN int c63_rd_ac_bits(const uint8_t *ac_len, const int16_t coef[64])
{
  int bits = 0, run = 0, last = 0;
  for (int z = 1; z < 64; z++) {
    if (!coef[z]) {
      run++;
      continue;
    }
    const int s = c63_bit_width(coef[z]);
    bits += (run >> 4) * ac_len[0xf0] + ac_len[(run & 15) << 4 | s] + s;
    run = 0;
    last = z;
  }
  return last < 63 ? bits + ac_len[0x00] : bits;
}

/* ---- The rd mode's transform and quantisation (docs/rd.md) ----
 *
 * Any levels are valid in the format, so the rd mode need not quantise the
 * format's float transform: its forward transform is in integers (exact on
 * every processor whatever the order of its sums, and a fraction of the
 * float one's work: each output of a pass sums four products of the
 * symmetric and antisymmetric halves of its input), 8 times the orthonormal
 * 2-D DCT, rounded (twice c63_fdct_block's output give or take 1). Its
 * largest magnitude is 8 * 8 * 255 = 16320 (the orthonormal transform keeps
 * the norm), so it fits an int16_t. The reconstruction stays the decoder's. */

/* The constants k[u][x] = round(2^13 * c(u) / 2 * cos((2x + 1) u pi / 16)),
 * c(0) = 1 / sqrt(2), c(u > 0) = 1, for x < 4: the other half of a row is
 * the same times (-1)^u. The initialiser of c63_rd_fdct_k (rd.c), the
 * oracle's matrix form, and of the GPU's immediates (rd_fdct_pass in
 * cuda/c63_cuda_rd_trial.cuh, which factors the even half). */
#define C63_RD_FDCT_K                                                                              \
  {                                                                                                \
    {2896, 2896, 2896, 2896}, {4017, 3406, 2276, 799}, {3784, 1567, -1567, -3784},                 \
        {3406, -799, -4017, -2276}, {2896, -2896, -2896, 2896}, {2276, -4017, 799, 3406},          \
        {1567, -3784, 3784, -1567}, {799, -2276, 3406, -4017},                                     \
  }
#define C63_RD_FDCT_BITS 13
/* The passes' shifts: the first keeps 4 bits below the unit (16 times the
 * 1-D transform, 11552 at most), the second gives 8 times the 2-D one. */
#define C63_RD_FDCT_SHIFT1 (C63_RD_FDCT_BITS - 4)
#define C63_RD_FDCT_SHIFT2 (C63_RD_FDCT_BITS + 1)

/* Output u of a pass over the 8 values in: the sum over x < 4 of k[x] *
 * (in[x] +- in[7 - x]) (+ for even u; k: row u of the constants), rounded
 * and shifted down (sums stay below 2^28). */
C63_RD_FN int c63_rd_fdct_out(const int32_t k[4], const int in[8], int u, int shift)
{
  int acc = 1 << (shift - 1);
  for (int x = 0; x < 4; x++)
    acc += k[x] * (u & 1 ? in[x] - in[7 - x] : in[x] + in[7 - x]);
  return acc >> shift;
}

/* The reciprocal of 8q that c63_rd_quantise_level multiplies by:
 * ceil(2^32 / 8q), exact for the numerators it sees (below 2^15, so n * 8q
 * < 2^32: floor(n * recip / 2^32) = floor(n / 8q)). */
C63_RD_FN uint32_t c63_rd_recip(int q)
{
  return (uint32_t)((0x100000000ull + 8u * (unsigned)q - 1) / (8u * (unsigned)q));
}

/* The level of y (the rd transform's output, 8 times orthonormal) with
 * quantiser q (1..255, recip = c63_rd_recip(q)): |y| / 8q, rounded up
 * from round8 eighths of a step (4: to nearest, half away from zero, as
 * the format's quantisation rounds its float transform; fewer: a dead zone,
 * for levels nearer those the trellis keeps), at most limit, with y's
 * sign. */
C63_RD_FN int c63_rd_quantise_level(int y, int q, uint32_t recip, int round8, int limit)
{
  const unsigned n = (unsigned)(abs(y) + round8 * q);
#ifdef __CUDA_ARCH__
  int l = (int)__umulhi(n, recip);
#else
  int l = (int)(((uint64_t)n * recip) >> 32);
#endif
  if (l > limit) l = limit;
  return y < 0 ? -l : l;
}

/* Rounding of the levels that a block's trials are priced with: AC levels
 * with a dead zone (3/8: they come nearer the levels the trellis then
 * chooses for the block than rounding to nearest; measured in docs/rd.md),
 * the DC to nearest, as the trellis leaves it. */
#define C63_RD_TRIAL_ROUND_AC 3
#define C63_RD_ROUND_NEAREST 4

/* ---- The decision of a delta-frame block (docs/rd.md) ---- */

/* The ways a block of a delta frame is tried: intra, its searched vector,
 * the zero vector, and the searched vector of the block to its left (a
 * reused vector is often that one). */
enum { C63_RD_T_INTRA, C63_RD_T_SEARCH, C63_RD_T_ZERO, C63_RD_T_LEFT_SEARCH, C63_RD_T_COUNT };

/* What a decision needs of one trial (16 bytes: one load on the GPU). */
typedef struct c63_rd_sum {
  int ssd;         /* of the reconstruction */
  int16_t ac_bits; /* c63_rd_ac_bits of the coefficients */
  int16_t dc;      /* the quantised DC */
  c63_mv mv;
  uint16_t sad; /* of the prediction, for the vector choice */
  uint16_t valid;
} c63_rd_sum;

/* The search's choice for a block: the vector of least 16 * SAD + sad_16 *
 * bits over the window (the left neighbour not counted), its cost and its
 * raster index in the window (for the comparison with the left
 * neighbour's vector). An empty window leaves the zero vector at cost
 * INT32_MAX. */
typedef struct c63_rd_searched {
  int cost;
  int index;
  c63_mv mv;
} c63_rd_searched;

C63_RD_FN int c63_rd_same_vector(c63_mv a, c63_mv b)
{
  return a.x == b.x && a.y == b.y;
}

/* Whether the block at pixel (mx, my) of a w x h plane, displaced by v,
 * lies inside the plane (format 3.3). */
C63_RD_FN int c63_rd_vector_inside(int w, int h, int mx, int my, c63_mv v)
{
  return mx + v.x >= 0 && mx + v.x <= w - 8 && my + v.y >= 0 && my + v.y <= h - 8;
}

/* The vector slot k (not C63_RD_T_INTRA) of the block in column bx tries:
 * own, its search's choice; own1, that of the block to its left (bx >= 1).
 * Each vector is tried once; returns 0 where the slot tries none. */
C63_RD_FN int c63_rd_trial_vector(int k, int bx, c63_mv own, c63_mv own1, int w, int h, int mx,
                                  int my, c63_mv *mv)
{
  c63_mv v = {0, 0, 1, 0};
  if (k == C63_RD_T_SEARCH) v = own;
  if (k == C63_RD_T_LEFT_SEARCH) {
    if (bx < 1) return 0;
    v = own1;
  }
  v.use_mv = 1;
  v.pad_ = 0;
  if (k != C63_RD_T_SEARCH && c63_rd_same_vector(v, own)) return 0;
  if (k > C63_RD_T_ZERO && !v.x && !v.y) return 0;
  if (!c63_rd_vector_inside(w, h, mx, my, v)) return 0;
  *mv = v;
  return 1;
}

/* The slot of t that tried vector v (use_mv = 1), or -1. */
C63_RD_FN int c63_rd_find_slot(const c63_rd_searched *s, const c63_rd_sum t[C63_RD_T_COUNT],
                               c63_mv v)
{
  if (c63_rd_same_vector(v, s->mv)) return C63_RD_T_SEARCH;
  if (!v.x && !v.y) return C63_RD_T_ZERO;
  if (t[C63_RD_T_LEFT_SEARCH].valid && c63_rd_same_vector(v, t[C63_RD_T_LEFT_SEARCH].mv))
    return C63_RD_T_LEFT_SEARCH;
  return -1;
}

/* A block's window and the constants of its decision. */
typedef struct c63_rd_place {
  int w, h;           /* the plane */
  int mx, my;         /* the block's pixel */
  int x0, y0, x1, y1; /* its search window, [x0, x1) x [y0, y1) */
} c63_rd_place;

/* The rd mode's chroma search: no full search of the window, but the
 * vectors the searches of the co-located luma blocks (the MCU's four, in
 * coding order) chose, halved toward zero, and the zero vector, each where
 * it lies in the window (c63_me_window). Candidate k (0..4) of the block
 * at p; 0 where it has none. Candidates may repeat: a repeat has the same
 * cost and raster index, and c63_rd_chroma_consider keeps the first. */
C63_RD_FN int c63_rd_chroma_candidate(const c63_mv luma[4], int k, const c63_rd_place *p, c63_mv *v)
{
  c63_mv c = {0, 0, 1, 0};
  if (k < 4) {
    c.x = (int8_t)(luma[k].x / 2);
    c.y = (int8_t)(luma[k].y / 2);
  }
  const int x = p->mx + c.x, y = p->my + c.y;
  if (x < p->x0 || x >= p->x1 || y < p->y0 || y >= p->y1) return 0;
  *v = c;
  return 1;
}

/* Candidate v with SAD sad against the best so far (start: cost INT32_MAX,
 * index 0, the zero vector): the search's cost, 16 * SAD + sad_16 * bits,
 * and its raster index in the window, the least cost and then the first
 * index winning, as c63_rd_search_best chooses. */
C63_RD_FN void c63_rd_chroma_consider(int sad, c63_mv v, const c63_rd_place *p, int sad_16,
                                      const uint8_t *mv_len, c63_rd_searched *best)
{
  const int cost =
      16 * sad + sad_16 * (2 + c63_rd_value_bits(mv_len, v.y) + c63_rd_value_bits(mv_len, v.x));
  const int index = (p->my + v.y - p->y0) * (p->x1 - p->x0) + (p->mx + v.x - p->x0);
  if (cost < best->cost || (cost == best->cost && index < best->index)) {
    best->cost = cost;
    best->index = index;
    best->mv = v;
  }
}

/* One inter candidate of c63_rd_decide, vector v, against the best so
 * far: the first of equal costs, but intra only when strictly cheaper. */
C63_RD_FN void c63_rd_consider(const c63_rd_searched *s, const c63_rd_sum t[C63_RD_T_COUNT],
                               c63_mv v, int has_left, c63_mv left, int prev_dc, float lambda,
                               const uint8_t *mv_len, const uint8_t *dc_len, int *best,
                               float *best_cost)
{
  const int slot = c63_rd_find_slot(s, t, v);
  if (slot < 0) return; /* never: every candidate is one of the trials */
  const c63_rd_sum *ti = &t[slot];
  const float cost =
      (float)ti->ssd + lambda * (float)(c63_rd_mv_bits_of(mv_len, v, has_left, left) +
                                        c63_rd_dc_bits(dc_len, ti->dc, prev_dc) + ti->ac_bits);
  if (cost < *best_cost || (*best == C63_RD_T_INTRA && cost == *best_cost)) {
    *best_cost = cost;
    *best = slot;
  }
}

/* The slot of the least SSD + lambda * bits among the block's trials,
 * given its left neighbour's final vector (left where has_left is set,
 * which it is not in the first column; use_mv = 0 for intra; a value, so
 * that a GPU thread keeps it in registers) and the DC before it. The candidates are
 * intra, the searched vector or the left neighbour's where that costs
 * less in the search's terms (its vector coded in 2 bits), the left
 * neighbour's on its own, and the zero vector. The left neighbour's vector
 * competes only where a trial holds it: otherwise it would need a trial of
 * its own (transform, trellis, reconstruction) at decision time. */
C63_RD_FN int c63_rd_decide(const c63_rd_place *p, const c63_rd_searched *s,
                            const c63_rd_sum t[C63_RD_T_COUNT], int has_left, c63_mv left,
                            int prev_dc, float lambda, int sad_16, const uint8_t *mv_len,
                            const uint8_t *dc_len)
{
  int left_slot = -1;
  if (has_left && left.use_mv && c63_rd_vector_inside(p->w, p->h, p->mx, p->my, left))
    left_slot = c63_rd_find_slot(s, t, left);
  /* the searched vector against the left neighbour's at 2 bits; the left
   * one wins a tie when it comes first in raster order */
  c63_mv t1 = s->mv;
  if (left_slot >= 0) {
    const int x = p->mx + left.x, y = p->my + left.y;
    if (x >= p->x0 && x < p->x1 && y >= p->y0 && y < p->y1) {
      const int i = (y - p->y0) * (p->x1 - p->x0) + (x - p->x0);
      const int cost = 16 * t[left_slot].sad + 2 * sad_16;
      if (cost < s->cost || (cost == s->cost && i < s->index)) t1 = left;
    }
  }
  const c63_mv no_mv = {0, 0, 0, 0}, zero = {0, 0, 1, 0};
  const c63_rd_sum *in = &t[C63_RD_T_INTRA];
  float best_cost =
      (float)in->ssd + lambda * (float)(c63_rd_mv_bits_of(mv_len, no_mv, has_left, left) +
                                        c63_rd_dc_bits(dc_len, in->dc, prev_dc) + in->ac_bits);
  int best = C63_RD_T_INTRA;
  /* in this order: the first of equal costs wins */
  c63_rd_consider(s, t, t1, has_left, left, prev_dc, lambda, mv_len, dc_len, &best, &best_cost);
  if (left_slot >= 0 && !c63_rd_same_vector(left, t1))
    c63_rd_consider(s, t, left, has_left, left, prev_dc, lambda, mv_len, dc_len, &best, &best_cost);
  if (t1.x || t1.y)
    c63_rd_consider(s, t, zero, has_left, left, prev_dc, lambda, mv_len, dc_len, &best, &best_cost);
  return best;
}

/* How many nodes back the trellis looks for a level's predecessor (with
 * the start, which every level may follow): keeping a level after zeroing
 * more than that many others before it is never worth it in practice (a
 * window of 8 codes the clips of docs/rd.md as well as an unlimited one),
 * and the GPU then prices a level's nodes in one step of 8 threads. */
#define C63_RD_TRELLIS_WINDOW 8

/* The trellis of c63_rd_code_levels on a block that out already holds
 * rounded to nearest (dct: the transform it came from, 4 times the
 * orthonormal one): each AC level kept, one step nearer zero, or zero, for
 * the least squared error plus lambda * bits over the whole block. */
C63_RD_FN void c63_rd_trellis_levels(const float dct[64], const uint8_t quant[64],
                                     const uint8_t *ac_len, float lambda, int16_t out[64])
{
  const float zrl = lambda * ac_len[0xf0];
  /* Node 0 is the start; node k > 0 is the k-th AC coefficient that the
   * format's quantisation leaves non-zero, the only places a non-zero level
   * can be. cost[k]: the least cost of the coefficients up to pos[k] with
   * pos[k] the last non-zero one so far, as squared error added to that of
   * an all-zero block (so a zero costs nothing) plus lambda * bits. */
  int pos[64], level[64], from[64], n = 1;
  float cost[64];

  pos[0] = 0;
  cost[0] = 0.0f;
  for (int z = 1; z < 64; z++) {
    if (!out[z]) continue;
    /* the nodes it may follow: the start and the last ones */
    const int first = n - C63_RD_TRELLIS_WINDOW > 1 ? n - C63_RD_TRELLIS_WINDOW : 1;
    /* Orthonormal units: the transform is 4 times the orthonormal DCT, and
     * a level l reconstructs as 4 * round(l * quant / 4) (format 5.5). */
    const float o = fabsf(dct[z] / 4.0f);
    const int sign = out[z] < 0 ? -1 : 1;
    float best = INFINITY;
    int best_level = 0, best_from = 0;
    for (int a = abs(out[z]); a > 0 && a >= abs(out[z]) - 1; a--) {
      const float e = o - (float)(4 * ((a * quant[z] + 2) >> 2));
      const int s = c63_bit_width(a);
      const float here = e * e - o * o;
      for (int k = 0; k < n; k = k ? k + 1 : first) {
        const int run = z - pos[k] - 1;
        const float c = cost[k] + (float)(run >> 4) * zrl +
                        lambda * (float)(ac_len[(run & 15) << 4 | s] + s) + here;
        if (c < best) {
          best = c;
          best_level = sign * a;
          best_from = k;
        }
      }
    }
    pos[n] = z;
    cost[n] = best;
    level[n] = best_level;
    from[n] = best_from;
    n++;
  }
  /* the block ends after the best last node, with an EOB unless at 63 */
  float best = INFINITY;
  int last = 0;
  for (int k = 0; k < n; k++) {
    const float c = cost[k] + (pos[k] < 63 ? lambda * ac_len[0x00] : 0.0f);
    if (c < best) {
      best = c;
      last = k;
    }
  }
  for (int z = 1; z < 64; z++)
    out[z] = 0;
  for (int k = last; k > 0; k = from[k])
    out[pos[k]] = (int16_t)level[k];
}

#endif
