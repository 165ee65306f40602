/* The rd encoder mode on the CPU backend:
 *  - rd streams of the synthetic clip (tools/synth.c) at several qualities,
 *    search ranges and sizes (odd ones included) decode with our decoder,
 *    and every decoded picture equals the encoder's reconstruction, the
 *    reference it predicts the next frame from;
 *  - the streams really use the rd mode's freedom: intra blocks in delta
 *    frames, reused vectors, zero vectors, and fewer bytes than the exact
 *    mode at the same quality;
 *  - the stream does not depend on the number of threads;
 *  - the bit counts the decisions rest on (rd.h) are the bits the entropy
 *    coder writes; trellis quantisation never costs more than the format's
 *    plain quantisation, and spends fewer bits as lambda grows;
 *  - the block decision counts every trial's bits, its DC's included.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "c63/encode_backend.h"
#include "c63/entropy.h"
#include "c63/rd.h"
#include "c63/sparse.h"
#include "synth.h"
#include "c63/tables.h"
#include "tutil.h"

#define FRAMES 7
#define KEYFRAME_INTERVAL 4

/* What the delta frames of a stream use. */
typedef struct usage {
  long blocks, intra, reused, zero_vectors;
} usage;

/* Count the kinds of blocks of a coded delta frame, from its bytes. */
static void count_usage(const uint8_t *frame, size_t size, usage *u)
{
  c63_frame_header hdr;
  c63_geometry g;
  c63_sparse_frame sp = {0};
  char msg[256];

  if (c63_parse_frame_header(frame, size, &hdr, msg, sizeof msg) != C63_OK || hdr.keyframe) return;
  c63_geometry_init(&g, hdr.width, hdr.height);
  TU_CHECK(c63_sparse_frame_reserve(&sp, c63_frame_blocks(&g),
                                    c63_sparse_entries_bound(&g, hdr.data_size), 0) == C63_OK,
           "out of memory");
  int r = c63_entropy_decode(frame + hdr.data_offset, hdr.data_size, &g, 0, &sp, msg, sizeof msg);
  TU_CHECK(r == C63_OK, "entropy decoding an rd frame: %s", msg);
  for (int c = 0; c < 3 && r == C63_OK; c++) {
    const c63_mv *mvs = sp.mvs + c63_block_offset(&g, c);
    for (int b = 0; b < g.blocks_w[c] * g.blocks_h[c]; b++) {
      const c63_mv *mv = &mvs[b], *left = b % g.blocks_w[c] ? &mvs[b - 1] : NULL;
      u->blocks++;
      u->intra += !mv->use_mv;
      /* the entropy coder writes reuse exactly then (format 4.4) */
      u->reused += mv->use_mv && left && left->use_mv && left->x == mv->x && left->y == mv->y;
      u->zero_vectors += mv->use_mv && !mv->x && !mv->y;
    }
  }
  c63_sparse_frame_free(&sp);
}

/* Whether the decoded picture is the encoder's reconstruction (visible part). */
static int picture_is_reference(const c63_decoded_picture *pic, c63_encoder *enc)
{
  const c63_backend *be = c63_encoder_backend(enc);
  c63_geometry g;
  c63_geometry_init(&g, pic->width, pic->height);
  for (int c = 0; c < 3; c++) {
    const uint8_t *ref = c63_backend_cpu_reference(be, c);
    for (int y = 0; y < g.pic_h[c]; y++)
      if (memcmp(pic->data[c] + (size_t)y * pic->stride[c], ref + (size_t)y * g.pad_w[c],
                 (size_t)g.pic_w[c]) != 0)
        return 0;
  }
  return 1;
}

/* Encode the synthetic clip in rd mode, decode each frame as it comes and
 * compare it with the encoder's reconstruction. Appends the stream to out. */
static void encode_rd(const uint8_t *clip, int w, int h, int quality, int range, int threads,
                      tu_buf *out, usage *u)
{
  const int cw = c63_chroma_size(w), ch = c63_chroma_size(h);
  c63_enc_params p;
  c63_encoder *enc = NULL;
  c63_decoder *dec = NULL;
  char msg[256];
  int same = 0, frames = 0;

  c63_enc_params_init(&p);
  p.mode = C63_MODE_RD;
  p.width = w, p.height = h, p.quality = quality, p.search_range = range;
  p.threads = threads, p.keyframe_interval = KEYFRAME_INTERVAL;
  int r = c63_encoder_new(&p, &enc, msg, sizeof msg);
  TU_CHECK(r == C63_OK, "creating an rd encoder: %s", msg);
  TU_CHECK(c63_decoder_new(NULL, &dec, NULL, 0) == C63_OK, "creating a decoder");
  if (r != C63_OK || !dec) goto done;
  for (int t = 0; t < FRAMES; t++) {
    const uint8_t *y = clip + (size_t)t * tu_i420_size(w, h), *cb = y + (size_t)w * h;
    c63_picture pic = {.data = {y, cb, cb + (size_t)cw * ch}, .stride = {w, cw, cw}};
    c63_packet pkt;
    c63_decoded_picture dp;
    TU_CHECK(c63_encoder_send_picture(enc, &pic) == C63_OK, "sending: %s", c63_encoder_error(enc));
    if (c63_encoder_receive_packet(enc, &pkt) != C63_OK) {
      TU_CHECK(0, "frame %d: no packet: %s", t, c63_encoder_error(enc));
      break;
    }
    tu_buf_append(out, pkt.data, pkt.size);
    count_usage(pkt.data, pkt.size, u);
    r = c63_decoder_decode(dec, pkt.data, pkt.size, &dp);
    TU_CHECK(r == C63_OK, "%dx%d q%d frame %d: decoding: %s", w, h, quality, t,
             c63_decoder_error(dec));
    if (r != C63_OK) break;
    frames++;
    same += picture_is_reference(&dp, enc);
  }
  TU_CHECK(frames == FRAMES && same == FRAMES,
           "%dx%d q%d range %d: %d of %d decoded pictures equal the encoder's reconstruction", w, h,
           quality, range, same, FRAMES);
  printf("  %4dx%-4d q%-2d range %-2d threads %d: %zu bytes, %d/%d pictures equal\n", w, h, quality,
         range, threads, out->size, same, FRAMES);
done:
  c63_decoder_free(dec);
  c63_encoder_free(enc);
}

static uint8_t *make_clip(int w, int h)
{
  uint8_t *clip = malloc(tu_i420_size(w, h) * FRAMES);
  for (int t = 0; t < FRAMES; t++)
    synth_frame(clip + (size_t)t * tu_i420_size(w, h), w, h, t);
  return clip;
}

static void test_streams(void)
{
  static const struct {
    int w, h, quality, range;
  } cases[] = {
      {160, 96, 10, 16}, {160, 96, 25, 16}, {160, 96, 50, 16}, {160, 96, 5, 4},
      {100, 75, 25, 16}, {33, 17, 40, 8},   {64, 48, 25, 1},
  };
  usage u = {0};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    uint8_t *clip = make_clip(cases[i].w, cases[i].h);
    tu_buf s = {0};
    encode_rd(clip, cases[i].w, cases[i].h, cases[i].quality, cases[i].range, 2, &s, &u);
    tu_buf_free(&s);
    free(clip);
  }
  printf("  delta-frame blocks %ld: intra %ld, reused vectors %ld, zero vectors %ld\n", u.blocks,
         u.intra, u.reused, u.zero_vectors);
  TU_CHECK(u.intra > 0, "no intra block in any delta frame");
  TU_CHECK(u.reused > 0, "no reused vector");
  TU_CHECK(u.zero_vectors > 0, "no zero vector");
  TU_CHECK(u.intra < u.blocks, "every block intra");
}

/* The same stream on 1 and 3 threads; fewer bytes than exact. */
static void test_threads_and_size(void)
{
  const int w = 160, h = 96;
  uint8_t *clip = make_clip(w, h);
  tu_buf one = {0}, three = {0}, exact = {0};
  usage u = {0};
  char msg[256];
  encode_rd(clip, w, h, 25, 16, 1, &one, &u);
  encode_rd(clip, w, h, 25, 16, 3, &three, &u);
  TU_CHECK(one.size == three.size && memcmp(one.data, three.data, one.size) == 0,
           "the rd stream depends on the number of threads");
  c63_enc_params p;
  c63_enc_params_init(&p);
  p.width = w;
  p.height = h;
  p.keyframe_interval = KEYFRAME_INTERVAL;
  TU_CHECK(tu_encode(&p, clip, FRAMES, &exact, msg, sizeof msg) == C63_OK, "exact: %s", msg);
  printf("  quality 25: exact %zu bytes, rd %zu bytes\n", exact.size, one.size);
  TU_CHECK(one.size < exact.size, "rd (%zu bytes) is not smaller than exact (%zu)", one.size,
           exact.size);
  tu_buf_free(&one);
  tu_buf_free(&three);
  tu_buf_free(&exact);
  free(clip);
}

static int rand_range(uint64_t *st, int lo, int hi)
{
  return lo + (int)(tu_rand(st) % (uint64_t)(hi - lo + 1));
}

/* A frame of random coefficients and vectors (reuse included). */
static void random_frame(const c63_geometry *g, int16_t *coeffs[3], c63_mv *mvs[3], uint64_t *st)
{
  for (int c = 0; c < 3; c++) {
    const int n = g->blocks_w[c] * g->blocks_h[c];
    for (int b = 0; b < n; b++) {
      int16_t *blk = coeffs[c] + (size_t)b * 64;
      const int density = rand_range(st, 0, 8), lim = c63_ac_limit(c);
      blk[0] = (int16_t)rand_range(st, -680, 680);
      for (int z = 1; z < 64; z++) {
        int v = rand_range(st, 0, 8) < density ? rand_range(st, -lim, lim) : 0;
        blk[z] = (int16_t)(rand_range(st, 0, 3) ? v / 32 : v);
      }
      c63_mv *mv = &mvs[c][b];
      memset(mv, 0, sizeof *mv);
      mv->use_mv = (uint8_t)(rand_range(st, 0, 3) != 0);
      if (b % g->blocks_w[c] && rand_range(st, 0, 2) == 0) {
        *mv = mvs[c][b - 1];
      } else if (mv->use_mv) {
        mv->x = (int8_t)rand_range(st, -64, 64);
        mv->y = (int8_t)rand_range(st, -64, 64);
      }
    }
  }
  /* the last block ends in a 1 bit, so the flush writes one byte (4.8) */
  coeffs[2][(size_t)(g->blocks_w[2] * g->blocks_h[2] - 1) * 64 + 63] = 1;
}

/* rd.h's bit counts, summed over a frame in coding order, are the length
 * of the bit string the entropy coder writes: its data, without stuffing,
 * is that many bits and the flush byte. */
static void test_bit_counts(void)
{
  uint64_t st = 0x5eed;
  int ok = 0, runs = 0;
  for (int i = 0; i < 40; i++, runs++) {
    c63_geometry g;
    c63_geometry_init(&g, i % 2 ? 48 : 160, i % 2 ? 32 : 96);
    int16_t *coeffs[3];
    c63_mv *mvs[3];
    for (int c = 0; c < 3; c++) {
      coeffs[c] = calloc((size_t)g.blocks_w[c] * g.blocks_h[c], 64 * sizeof(int16_t));
      mvs[c] = calloc((size_t)g.blocks_w[c] * g.blocks_h[c], sizeof(c63_mv));
    }
    random_frame(&g, coeffs, mvs, &st);
    long bits = 0;
    int prev_dc[3] = {0, 0, 0};
    for (int my = 0; my < g.mcus_h; my++)
      for (int mx = 0; mx < g.mcus_w; mx++)
        for (int k = 0; k < 6; k++) {
          int c, bx, by;
          c63_mcu_block(mx, my, k, &c, &bx, &by);
          const size_t b = (size_t)by * g.blocks_w[c] + bx;
          bits += c63_rd_mv_bits(&mvs[c][b], bx ? &mvs[c][b - 1] : NULL);
          bits += c63_rd_coef_bits(coeffs[c] + b * 64, c != 0, prev_dc[c]);
          prev_dc[c] = coeffs[c][b * 64];
        }
    c63_threadpool *pool = c63_threadpool_new(1);
    c63_entropy_encoder *ee = c63_entropy_encoder_new(&g, pool);
    c63_bytebuf out = {0};
    c63_entropy_encode(ee, &out, (const int16_t *const *)coeffs, (const c63_mv *const *)mvs);
    size_t unstuffed = out.size;
    for (size_t j = 0; j + 1 < out.size; j++)
      if (out.data[j] == 0xff) unstuffed--, j++;
    ok += (long)unstuffed == bits / 8 + 1;
    if ((long)unstuffed != bits / 8 + 1)
      fprintf(stderr, "  frame %d: %ld bits counted, %zu bytes written\n", i, bits, unstuffed);
    c63_bytebuf_free(&out);
    c63_entropy_encoder_free(ee);
    c63_threadpool_free(pool);
    for (int c = 0; c < 3; c++) {
      free(coeffs[c]);
      free(mvs[c]);
    }
  }
  printf("  %d of %d random frames: bits counted = bits written\n", ok, runs);
  TU_CHECK(ok == runs, "bit counts differ from the entropy coder's output");
}

/* The rd transform against the format's float one: twice that, give or
 * take the rounding of its passes (1) and of its 13-bit constants (which
 * grows with the residual's magnitudes); its range (the
 * largest magnitude fits an int16_t); and its quantisation against a plain
 * division at every value and quantiser. */
static void test_rd_transform(void)
{
  uint64_t st = 0x7d7;
  int worst = 0, peak = 0;
  for (int i = 0; i < 20000; i++) {
    int16_t residual[64], y[64];
    float dct[64];
    const int amp = rand_range(&st, 0, 255), pattern = i % 4;
    for (int j = 0; j < 64; j++) {
      const int sign = pattern == 1 ? 1 : pattern == 2 ? ((j % 8 + j / 8) & 1 ? -1 : 1) : 0;
      residual[j] = (int16_t)(sign ? sign * amp : rand_range(&st, -amp, amp));
    }
    c63_rd_fdct(residual, y);
    c63_fdct_block(residual, dct);
    int sum = 0;
    for (int j = 0; j < 64; j++)
      sum += abs(residual[j]);
    for (int z = 0; z < 64; z++) {
      /* beyond the tolerance: 1 + the residual's sum of magnitudes / 4096 */
      const int d = abs(y[z] - (int)lrintf(2.0f * dct[z])) - sum / 4096;
      worst = d > worst ? d : worst;
      peak = abs(y[z]) > peak ? abs(y[z]) : peak;
    }
  }
  printf("  rd transform: within %d + sum |residual| / 4096 of twice the float one, largest "
         "magnitude %d\n",
         worst, peak);
  TU_CHECK(worst <= 1,
           "the rd transform is %d + sum |residual| / 4096 away from twice the float one", worst);
  TU_CHECK(peak <= 16384, "the rd transform reached %d", peak);
  long wrong = 0;
  for (int q = 1; q < 256; q++) {
    const uint32_t recip = c63_rd_recip(q);
    for (int yv = -16400; yv <= 16400; yv++)
      for (int round8 = C63_RD_TRIAL_ROUND_AC; round8 <= C63_RD_ROUND_NEAREST; round8++) {
        const int l = (abs(yv) + round8 * q) / (8 * q),
                  want = yv < 0 ? -(l > 511 ? 511 : l) : (l > 511 ? 511 : l);
        wrong += c63_rd_quantise_level(yv, q, recip, round8, 511) != want;
      }
  }
  printf("  rd quantisation: %ld of %d values differ from a division\n", wrong, 255 * 32801 * 2);
  TU_CHECK(wrong == 0, "the rd quantisation differs from a division in %ld values", wrong);
}

/* Squared error (orthonormal units, relative to an all-zero block) plus
 * lambda * bits of a block's AC levels: what the trellis minimises. */
static double ac_cost(const float dct[64], const int16_t q[64], const uint8_t quant[64], int chroma,
                      float lambda)
{
  double d = 0;
  for (int z = 1; z < 64; z++) {
    const double o = dct[z] / 4.0;
    const int a = abs(q[z]);
    const double rec = (q[z] < 0 ? -4.0 : 4.0) * ((a * quant[z] + 2) >> 2);
    d += (o - rec) * (o - rec);
  }
  /* prev_dc = DC: the DC difference costs the same for both */
  return d + lambda * c63_rd_coef_bits(q, chroma, q[0]);
}

/* Trellis quantisation: never worse than plain quantisation by its own
 * measure, levels only move toward zero, and a larger lambda spends fewer
 * bits (for optimal choices at lambdas l1 < l2 with rates R1, R2, adding
 * the two optimality conditions gives (l1 - l2)(R1 - R2) <= 0). */
static void test_trellis(void)
{
  uint64_t st = 0x7e111;
  uint8_t quant[3][64];
  int better = 0, worse = 0, moved_away = 0, monotone = 1;
  for (int i = 0; i < 3000; i++) {
    int16_t residual[64], y[64], plain[64], trellis[64], coarse[64];
    float dct[64];
    const int quality = rand_range(&st, 5, 50), chroma = i % 3 == 2, amp = rand_range(&st, 1, 255);
    c63_make_quant_tables(quality, quant);
    for (int j = 0; j < 64; j++) /* a gradient and noise */
      residual[j] = (int16_t)((j % 8 + j / 8) * (amp / 16) + rand_range(&st, -amp, amp) / 2);
    c63_rd_fdct(residual, y);
    c63_rd_quantiser q;
    c63_rd_quantiser_init(&q, quant[chroma], c63_ac_limit(chroma));
    c63_rd_quantise_block(&q, y, C63_RD_ROUND_NEAREST, plain);
    for (int z = 0; z < 64; z++)
      dct[z] = (float)y[z] / 2.0f;
    const float lambda = 0.12f * quant[0][0] * quant[0][0] * (float)rand_range(&st, 1, 4);
    c63_rd_code_levels(&q, y, chroma, lambda, trellis);
    c63_rd_code_levels(&q, y, chroma, 16 * lambda, coarse);
    const double jp = ac_cost(dct, plain, quant[chroma], chroma, lambda);
    const double jt = ac_cost(dct, trellis, quant[chroma], chroma, lambda);
    better += jt < jp - 1e-3;
    worse += jt > jp + 1e-3 * (1 + jp);
    moved_away += trellis[0] != plain[0];
    for (int z = 1; z < 64; z++)
      moved_away +=
          abs(trellis[z]) > abs(plain[z]) || (trellis[z] && (trellis[z] < 0) != (plain[z] < 0));
    /* optimal choices spend no more bits at a larger lambda */
    monotone &= c63_rd_coef_bits(coarse, chroma, 0) <= c63_rd_coef_bits(trellis, chroma, 0);
  }
  printf("  3000 blocks: trellis cheaper than plain in %d, dearer in %d\n", better, worse);
  TU_CHECK(worse == 0, "the trellis cost more than plain quantisation in %d blocks", worse);
  TU_CHECK(better > 0, "the trellis never improved on plain quantisation");
  TU_CHECK(moved_away == 0, "%d levels moved away from zero or changed the DC", moved_away);
  TU_CHECK(monotone, "a larger lambda spent more bits");
}

/* The vector choice: lambda 0 is the least SAD (first in raster order),
 * a large lambda the zero vector; in the decision, the left neighbour's
 * vector (2 bits) beats the searched one when lambda is large. */
static void test_choose_vector(void)
{
  uint64_t st = 0xc0ffee;
  uint16_t sads[32 * 32];
  const int mx = 64, my = 64, x0 = 48, y0 = 48, x1 = 80, y1 = 80;
  const uint8_t *mv_len = c63_huff_enc_tables()[C63_HUFF_MV].len;
  const uint8_t *dc_len = c63_huff_enc_tables()[C63_HUFF_DC0].len;
  int ok = 1;
  for (int i = 0; i < 200; i++) {
    int best = 1 << 30, bx = 0, by = 0;
    for (int j = 0; j < 32 * 32; j++) {
      sads[j] = (uint16_t)rand_range(&st, 100, 400);
      if (sads[j] < best) best = sads[j], bx = x0 + j % 32, by = y0 + j / 32;
    }
    const c63_rd_lambda zero = {0.0f, 0}, big = {1e6f, 1 << 16};
    c63_rd_searched s;
    c63_rd_search_best(sads, x0, y0, x1, y1, mx, my, &zero, &s);
    ok &= s.mv.use_mv && s.mv.x == bx - mx && s.mv.y == by - my && s.cost == 16 * best;
    c63_rd_search_best(sads, x0, y0, x1, y1, mx, my, &big, &s);
    ok &= s.mv.x == 0 && s.mv.y == 0;

    /* every trial alike but for its vector: the vector's bits decide */
    c63_rd_search_best(sads, x0, y0, x1, y1, mx, my, &zero, &s);
    c63_mv left = {(int8_t)rand_range(&st, -16, 15), (int8_t)rand_range(&st, -16, 15), 1, 0};
    if (c63_rd_same_vector(left, s.mv) || (!left.x && !left.y)) left.x = left.x == 5 ? 6 : 5;
    c63_rd_sum t[C63_RD_T_COUNT];
    memset(t, 0, sizeof t);
    for (int k = 0; k < C63_RD_T_COUNT; k++) {
      t[k].ssd = 1000;
      t[k].valid = 1;
    }
    t[C63_RD_T_INTRA].ac_bits = 200; /* intra loses */
    t[C63_RD_T_SEARCH].mv = s.mv;
    t[C63_RD_T_LEFT_SEARCH].mv = left;
    t[C63_RD_T_LEFT_SEARCH].sad = sads[(my + left.y - y0) * 32 + mx + left.x - x0];
    const c63_rd_place p = {128, 128, mx, my, x0, y0, x1, y1};
    ok &=
        c63_rd_decide(&p, &s, t, 1, left, 0, 1e6f, 1 << 16, mv_len, dc_len) == C63_RD_T_LEFT_SEARCH;
    /* without the left neighbour the fewer bits win, the searched vector
     * on a tie */
    const c63_mv zv = {0, 0, 1, 0};
    const int own_bits = c63_rd_mv_bits_len(mv_len, &s.mv, NULL);
    const int zero_bits = c63_rd_mv_bits_len(mv_len, &zv, NULL);
    ok &= c63_rd_decide(&p, &s, t, 0, zv, 0, 1e6f, 1 << 16, mv_len, dc_len) ==
          (own_bits <= zero_bits ? C63_RD_T_SEARCH : C63_RD_T_ZERO);
  }
  printf("  vector choice at lambda 0 and large lambda: %s\n", ok ? "ok" : "WRONG");
  TU_CHECK(ok, "the vector choice does not follow its costs");
}

/* The decision with trials whose quantised DCs differ: a DC far from the
 * block before costs bits, which count for every trial, inter ones too.
 * (a) intra with the DC of the block before against the searched vector
 * with a DC far from it, the vector's SSD lower by less than its extra
 * bits cost: intra wins, and would lose were the inter DC's bits left
 * out; (b) the zero vector with the near DC against the searched vector
 * with the far one, the zero vector's SSD higher by less than the DC bits
 * it saves: the zero vector wins. */
static void test_decide_dc(void)
{
  uint64_t st = 0xdc;
  const uint8_t *mv_len = c63_huff_enc_tables()[C63_HUFF_MV].len;
  const uint8_t *dc_len = c63_huff_enc_tables()[C63_HUFF_DC0].len;
  const float lambda = 64.0f;
  const c63_mv no_mv = {0, 0, 0, 0}, zv = {0, 0, 1, 0};
  int ok_a = 1, ok_b = 1;
  for (int i = 0; i < 200; i++) {
    const int prev = (int)rand_range(&st, -500, 500);
    const int far = prev + (i & 1 ? 1 : -1) * (int)rand_range(&st, 64, 1000);
    c63_rd_searched s = {
        0, 0, {(int8_t)rand_range(&st, 1, 15), (int8_t)rand_range(&st, -15, 15), 1, 0}};
    const c63_rd_place p = {128, 128, 64, 64, 48, 48, 80, 80};
    c63_rd_sum t[C63_RD_T_COUNT];
    memset(t, 0, sizeof t);
    for (int k = 0; k < C63_RD_T_COUNT; k++) {
      t[k].ssd = 1 << 20; /* out of the running unless set below */
      t[k].ac_bits = (int16_t)rand_range(&st, 0, 100);
      t[k].dc = (int16_t)prev;
      t[k].valid = k != C63_RD_T_LEFT_SEARCH;
    }
    t[C63_RD_T_SEARCH].mv = s.mv;
    t[C63_RD_T_ZERO].mv = zv;
    const int near_bits = c63_rd_dc_bits(dc_len, prev, prev);
    const int far_bits = c63_rd_dc_bits(dc_len, far, prev);
    const int search_mv = c63_rd_mv_bits_of(mv_len, s.mv, 0, no_mv);
    const int zero_mv = c63_rd_mv_bits_of(mv_len, zv, 0, no_mv);
    const int intra_mv = c63_rd_mv_bits_of(mv_len, no_mv, 0, no_mv);

    /* (a): the searched vector's SSD lower by half its extra bits' cost
     * beyond the DC's, plus half the DC's */
    t[C63_RD_T_INTRA].ssd = 100000;
    t[C63_RD_T_SEARCH].dc = (int16_t)far;
    t[C63_RD_T_SEARCH].ac_bits = t[C63_RD_T_INTRA].ac_bits;
    const float extra = (float)(search_mv - intra_mv + far_bits - near_bits);
    t[C63_RD_T_SEARCH].ssd = 100000 - (int)(lambda * (extra - (far_bits - near_bits) / 2.0f));
    ok_a &=
        c63_rd_decide(&p, &s, t, 0, no_mv, prev, lambda, 1 << 10, mv_len, dc_len) == C63_RD_T_INTRA;

    /* (b): intra out; the zero vector's SSD higher by half the bits it
     * saves */
    t[C63_RD_T_INTRA].ssd = 1 << 20;
    t[C63_RD_T_ZERO].ac_bits = t[C63_RD_T_SEARCH].ac_bits;
    const float saved = (float)(search_mv - zero_mv + far_bits - near_bits);
    t[C63_RD_T_ZERO].ssd = t[C63_RD_T_SEARCH].ssd + (int)(lambda * saved / 2);
    ok_b &= saved > 0 && c63_rd_decide(&p, &s, t, 0, no_mv, prev, lambda, 1 << 10, mv_len,
                                       dc_len) == C63_RD_T_ZERO;
  }
  printf("  decisions with differing DCs: intra against a far inter DC %s, zero vector with the "
         "near DC %s\n",
         ok_a ? "ok" : "WRONG", ok_b ? "ok" : "WRONG");
  TU_CHECK(ok_a, "an inter trial's DC bits are not counted against intra");
  TU_CHECK(ok_b, "the inter trials' DC bits do not decide between vectors");
}

/* The chroma search's candidates: the luma vectors halved toward zero and
 * the zero vector, only inside the window (whose right and bottom ends are
 * excluded), the least cost winning and the first in raster order on a
 * tie. */
static void test_chroma_candidates(void)
{
  const uint8_t *mv_len = c63_huff_enc_tables()[C63_HUFF_MV].len;
  const c63_mv luma[4] = {{-3, 5, 1, 0}, {3, -5, 1, 0}, {-10, 0, 1, 0}, {1, 1, 1, 0}};
  /* block (2, 2) of a 64x64 plane, range 4: window [12, 20) x [12, 20) */
  c63_rd_place p = {64, 64, 16, 16, 12, 12, 20, 20};
  c63_mv v;
  int ok = 1;
  ok &= c63_rd_chroma_candidate(luma, 0, &p, &v) && v.x == -1 && v.y == 2 && v.use_mv;
  ok &= c63_rd_chroma_candidate(luma, 1, &p, &v) && v.x == 1 && v.y == -2;
  ok &= !c63_rd_chroma_candidate(luma, 2, &p, &v); /* x 16 - 5: left of the window */
  ok &= c63_rd_chroma_candidate(luma, 3, &p, &v) && v.x == 0 && v.y == 0;
  ok &= c63_rd_chroma_candidate(luma, 4, &p, &v) && v.x == 0 && v.y == 0 && v.use_mv;
  /* the last column: the window ends at the block, without it */
  const c63_rd_place last = {64, 64, 56, 16, 52, 12, 56, 20};
  ok &= !c63_rd_chroma_candidate(luma, 4, &last, &v);
  ok &= c63_rd_chroma_candidate(luma, 0, &last, &v) && v.x == -1 && v.y == 2;

  /* no bits counted: the least SAD, then the first in raster order */
  c63_rd_searched best = {INT32_MAX, 0, {0, 0, 1, 0}};
  const c63_mv a = {1, -2, 1, 0}, b = {-1, 2, 1, 0}, z = {0, 0, 1, 0};
  c63_rd_chroma_consider(50, b, &p, 0, mv_len, &best);
  c63_rd_chroma_consider(50, a, &p, 0, mv_len, &best);
  ok &= best.mv.x == 1 && best.mv.y == -2 && best.cost == 800 &&
        best.index == (16 - 2 - 12) * 8 + (16 + 1 - 12);
  c63_rd_chroma_consider(49, z, &p, 0, mv_len, &best);
  ok &= best.mv.x == 0 && best.mv.y == 0 && best.cost == 16 * 49;
  /* with bits: the zero vector's fewer bits beat one more of SAD */
  best = (c63_rd_searched){INT32_MAX, 0, {0, 0, 1, 0}};
  c63_rd_chroma_consider(10, a, &p, 64, mv_len, &best);
  c63_rd_chroma_consider(11, z, &p, 64, mv_len, &best);
  ok &= best.mv.x == 0 && best.mv.y == 0 &&
        best.cost == 16 * 11 + 64 * (2 + 2 * c63_rd_value_bits(mv_len, 0));
  printf("  chroma search candidates and choice: %s\n", ok ? "ok" : "WRONG");
  TU_CHECK(ok, "the chroma search's candidates or choice are wrong");
}

/* The left neighbour's vector is tried only where it keeps the block inside
 * the plane (format 3.3): in the last column of a 64x48 plane (mx 56) a
 * vector 1 to the right, which fitted the neighbour, does not. */
static void test_left_vector_trial(void)
{
  static const struct {
    int mx, my, x, y, tried;
  } cases[] = {
      {56, 16, 1, 0, 0},  {56, 16, -3, 2, 1}, {48, 16, 8, 0, 1},  {48, 16, 9, 0, 0},
      {56, 40, -1, 1, 0}, {56, 40, -1, 0, 1}, {8, 16, -8, -2, 1}, {8, 16, -9, 0, 0},
  };
  const c63_mv own = {0, 0, 1, 0};
  int ok = 1;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const c63_mv own1 = {(int8_t)cases[i].x, (int8_t)cases[i].y, 1, 0};
    c63_mv v = {0, 0, 0, 0};
    const int tried = c63_rd_trial_vector(C63_RD_T_LEFT_SEARCH, cases[i].mx / 8, own, own1, 64, 48,
                                          cases[i].mx, cases[i].my, &v);
    TU_CHECK(tried == cases[i].tried, "block at %d,%d, the left vector (%d,%d): tried %d",
             cases[i].mx, cases[i].my, cases[i].x, cases[i].y, tried);
    ok &= tried == cases[i].tried && (!tried || (c63_rd_same_vector(v, own1) && v.use_mv));
  }
  printf("  the left neighbour's vector tried inside the plane only: %s\n", ok ? "ok" : "WRONG");
  TU_CHECK(ok, "the left neighbour's vector is tried where it leaves the plane");
}

/* The optimised window of SADs equals the C version, windows at the edges
 * of the plane included. */
static void test_sad_window(void)
{
  c63_dsp fast;
  c63_dsp_init(&fast);
  const int w = 72, h = 40;
  uint8_t *cur = malloc((size_t)w * h + 32), *ref = malloc((size_t)w * h + 32);
  uint64_t st = 0x5ad;
  for (int i = 0; i < w * h + 32; i++) {
    cur[i] = (uint8_t)tu_rand(&st);
    ref[i] = (uint8_t)tu_rand(&st);
  }
  uint16_t a[129 * 129], b[129 * 129];
  int ok = 1;
  for (int by = 0; by < h / 8; by++)
    for (int bx = 0; bx < w / 8; bx++)
      for (int range = 1; range <= 64; range *= 4) {
        const int mx = bx * 8, my = by * 8;
        const int x0 = mx - range > 0 ? mx - range : 0, y0 = my - range > 0 ? my - range : 0;
        const int x1 = (mx + range < w - 8 ? mx + range : w - 8) + 1;
        const int y1 = (my + range < h - 8 ? my + range : h - 8) + 1;
        c63_dsp_c.sad_window(cur, ref, w, mx, my, x0, y0, x1, y1, a);
        fast.sad_window(cur, ref, w, mx, my, x0, y0, x1, y1, b);
        ok &= memcmp(a, b, (size_t)(x1 - x0) * (y1 - y0) * sizeof(*a)) == 0;
        ok &= a[(my - y0) * (x1 - x0) + mx - x0] ==
              (uint16_t)c63_sad_8x8(cur + my * w + mx, w, ref + my * w + mx, w);
      }
  printf("  window of SADs, optimised against C: %s\n", ok ? "same" : "DIFFERENT");
  TU_CHECK(ok, "the optimised window of SADs differs from the C version");
  free(cur);
  free(ref);
}

int main(void)
{
  printf("rd streams: decoded pictures against the encoder's reconstruction\n");
  test_streams();
  printf("threads and size\n");
  test_threads_and_size();
  printf("decisions\n");
  test_bit_counts();
  test_rd_transform();
  test_trellis();
  test_choose_vector();
  test_decide_dc();
  test_chroma_candidates();
  test_sad_window();
  test_left_vector_trial();
  return tu_finish("rd");
}
