/* Rate control (ratectl.h).
 *
 * The model: a frame's bits grow with the quality q roughly as q^0.9 (the
 * quantiser steps are the defaults times 10 / q, format section 5.8, and
 * the bits of JPEG-like coding grow a little slower than the inverse step),
 * with a scale per frame type learnt from the frames that came back. The
 * choice inverts it for a target:
 *  - average bitrate: the per-frame target plus the bits saved (or minus
 *    those overspent) so far, spread over the next second, so the long-run
 *    average converges whatever the model's error;
 *  - constant bitrate: a leaky bucket of buffer_ms at the bitrate (the
 *    decoder's buffer, drained by one frame's target each frame): the
 *    target steers the fullness towards half the buffer, no frame may be
 *    predicted to overflow it, and a frame that still does once coded is
 *    coded again lower (c63_ratectl_retry), down to quality 1.
 * A keyframe among delta frames costs several of them; it gets the quality
 * of the delta frames around it as long as that fits a share of four
 * frames' targets (ABR) or the buffer (CBR); the following frames then pay
 * the difference. Keyframes that follow keyframes (a keyframe interval of
 * 1) are controlled as delta frames are, with a quality of their own.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "ratectl.h"

#include <math.h>

static const double kExp = 0.9;
/* ABR: frames over which the balance so far is paid back. */
static const double kHorizon = 25.0;
/* CBR: a first choice aims this far below the room, for the model's error. */
static const double kPredictMargin = 0.9;
/* CBR: a frame coded again aims this far below the room it overflowed, so
 * that one more try is rare. */
static const double kRetryMargin = 0.85;
/* CBR: tries after which a frame that still overflows goes to quality 1. */
static const int kModelTries = 3;

void c63_ratectl_set_buffer(c63_ratectl *rc, int buffer_ms)
{
  rc->buffer_ms = buffer_ms;
  rc->buffer_bits = rc->bitrate * (double)buffer_ms;
  if (rc->fullness > rc->buffer_bits) rc->fullness = rc->buffer_bits;
}

void c63_ratectl_set_bitrate(c63_ratectl *rc, const c63_enc_params *p)
{
  rc->bitrate = p->bitrate;
  rc->fps = p->fps_num > 0 && p->fps_den > 0 ? (double)p->fps_num / p->fps_den
                                             : (double)C63_DEFAULT_FPS_NUM / C63_DEFAULT_FPS_DEN;
  rc->frame_bits = p->bitrate * 1000.0 / rc->fps;
  c63_ratectl_set_buffer(rc, p->buffer_ms);
  rc->debt = 0;                       /* a new target: the old balance no longer applies */
  rc->bound_side = rc->bound_run = 0; /* and is judged afresh */
  rc->bound_bits = 0;
}

void c63_ratectl_init(c63_ratectl *rc, const c63_enc_params *p)
{
  *rc = (c63_ratectl){0};
  rc->mode = p->rate_control;
  rc->quality[0] = rc->quality[1] = p->quality;
  c63_ratectl_set_bitrate(rc, p);
  rc->fullness = rc->buffer_bits / 2; /* the decoder's buffer starts half full */
}

void c63_ratectl_set_quality(c63_ratectl *rc, int quality)
{
  rc->quality[0] = rc->quality[1] = quality;
}

static double predict(const c63_ratectl *rc, int type, int q)
{
  return rc->scale[type] * pow(q, kExp);
}

/* The quality whose predicted size is closest to bits. */
static int quality_for(const c63_ratectl *rc, int type, double bits)
{
  double q = pow((bits > 1 ? bits : 1) / rc->scale[type], 1.0 / kExp);
  return q < C63_MIN_QUALITY   ? C63_MIN_QUALITY
         : q > C63_MAX_QUALITY ? C63_MAX_QUALITY
                               : (int)lround(q);
}

/* The finest quality up to q predicted to fit in cap (1 if none). */
static int fit_under(const c63_ratectl *rc, int type, int q, double cap)
{
  while (q > C63_MIN_QUALITY && predict(rc, type, q) > cap)
    q--;
  return q;
}

/* CBR: the most bits the next frame may have without overflowing the
 * buffer, once the frames in flight are back (it drains one frame's target
 * while the frame arrives). */
static double room(const c63_ratectl *rc)
{
  const double full = rc->fullness + rc->pending;
  return rc->buffer_bits - full + rc->frame_bits;
}

void c63_ratectl_choose(c63_ratectl *rc, int keyframe, c63_ratectl_frame *f)
{
  const int type = keyframe != 0;
  /* a keyframe after a keyframe has no delta frames to share with */
  const int own = !keyframe || rc->last_key;
  *f = (c63_ratectl_frame){.keyframe = type,
                           .quality = rc->quality[own ? type : 0],
                           .predicted = rc->frame_bits,
                           .room = HUGE_VAL};
  rc->last_key = type;
  if (rc->mode == C63_RC_QUALITY) return;
  if (rc->mode == C63_RC_CBR) f->room = room(rc);
  /* Until a frame of this type came back, keep the quality (the first
   * frame is a keyframe, and it gives the delta frames a first guess); in
   * CBR a first frame that overflows is coded again once its size is
   * known. */
  if (!rc->known[type]) return;
  double target, cap;
  if (rc->mode == C63_RC_ABR) {
    target = rc->frame_bits + (rc->debt - rc->pending) / kHorizon;
    cap = own ? HUGE_VAL : 4 * rc->frame_bits + (rc->debt > 0 ? rc->debt : 0);
  } else {
    const double full = rc->fullness + rc->pending;
    target = rc->frame_bits - (full - rc->buffer_bits / 2) / 8;
    cap = kPredictMargin * f->room;
    if (own && cap > 2 * rc->frame_bits) cap = 2 * rc->frame_bits;
  }
  int q;
  if (own) {
    /* a few steps at a time: one odd frame does not swing the quality */
    const int last = rc->quality[type];
    q = quality_for(rc, type, target < cap ? target : cap);
    if (q > last + 3) q = last + 3;
    if (q < last - 6) q = last - 6;
  } else {
    q = rc->quality[0]; /* the delta frames' quality */
  }
  /* the cap holds however far that is from the last quality */
  q = fit_under(rc, type, q < C63_MIN_QUALITY ? C63_MIN_QUALITY : q, cap);
  rc->quality[type] = q;
  f->quality = q;
  f->predicted = predict(rc, type, q);
  rc->pending += f->predicted - rc->frame_bits;
}

int c63_ratectl_retry(c63_ratectl *rc, c63_ratectl_frame *f, double bits, int can_redo)
{
  if (rc->mode != C63_RC_CBR || bits <= f->room) return 0;
  if (f->quality == C63_MIN_QUALITY || !can_redo) {
    rc->overflows++;
    return 0;
  }
  const int type = f->keyframe;
  /* this frame's own scale, for this frame's next try */
  const double s = bits / pow(f->quality, kExp), saved = rc->scale[type];
  rc->scale[type] = s;
  int q = ++f->tries >= kModelTries ? C63_MIN_QUALITY
                                    : fit_under(rc, type, f->quality - 1, kRetryMargin * f->room);
  rc->scale[type] = saved > s ? saved : s; /* and the model no lower than before */
  rc->known[type] = 1;
  if (f->tries == 1) rc->recoded++;
  rc->pending += predict(rc, type, q) - f->predicted;
  f->predicted = predict(rc, type, q);
  f->quality = q;
  rc->quality[type] = q;
  return q;
}

void c63_ratectl_update(c63_ratectl *rc, const c63_ratectl_frame *f, double bits)
{
  if (rc->mode == C63_RC_QUALITY) return;
  const int type = f->keyframe, quality = f->quality;
  rc->pending -= f->predicted - rc->frame_bits;
  const double s = bits / pow(quality, kExp);
  if (!rc->known[type]) {
    rc->scale[type] = s;
    /* a first guess for delta frames: a quarter of a keyframe */
    if (type == 1 && !rc->known[0]) {
      rc->scale[0] = s / 4;
      rc->known[0] = 1;
    }
  } else {
    rc->scale[type] = 0.7 * rc->scale[type] + 0.3 * s;
  }
  rc->known[type] = 1;
  const int side = quality == C63_MIN_QUALITY ? -1 : quality == C63_MAX_QUALITY ? 1 : 0;
  if (side != rc->bound_side) {
    rc->bound_side = side;
    rc->bound_run = 0;
    rc->bound_bits = 0;
  }
  rc->bound_run++;
  rc->bound_bits += bits;
  rc->debt += rc->frame_bits - bits;
  rc->fullness += bits - rc->frame_bits;
  if (rc->fullness < 0) rc->fullness = 0; /* an empty buffer stays empty */
}

int c63_ratectl_reach(const c63_ratectl *rc, double *kbps)
{
  if (rc->mode == C63_RC_QUALITY || rc->bound_side == 0 || rc->bound_run < C63_TARGET_REACH_FRAMES)
    return 0;
  const double per_frame = rc->bound_bits / rc->bound_run;
  if (kbps) *kbps = per_frame * rc->fps / 1000.0;
  if (rc->bound_side < 0 && per_frame > 1.05 * rc->frame_bits) return -1;
  if (rc->bound_side > 0 && per_frame < 0.95 * rc->frame_bits) return 1;
  return 0;
}
