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
 *    target steers the fullness towards half the buffer, and no frame may be
 *    predicted to overflow it.
 * Keyframes cost several delta frames; they get the quality of the delta
 * frames around them as long as that fits a share of four frames' targets
 * (ABR) or the buffer (CBR); the following frames then pay the difference.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "ratectl.h"

#include <math.h>

static const double kExp = 0.9;
/* ABR: frames over which the balance so far is paid back. */
static const double kHorizon = 25.0;

void c63_ratectl_set_bitrate(c63_ratectl *rc, const c63_enc_params *p)
{
  rc->fps = p->fps_num > 0 && p->fps_den > 0 ? (double)p->fps_num / p->fps_den : 25.0;
  rc->frame_bits = p->bitrate * 1000.0 / rc->fps;
  rc->buffer_bits = p->bitrate * (double)p->buffer_ms;
  if (rc->fullness > rc->buffer_bits) rc->fullness = rc->buffer_bits;
  rc->debt = 0;                       /* a new target: the old balance no longer applies */
  rc->bound_side = rc->bound_run = 0; /* and is judged afresh */
  rc->bound_bits = 0;
}

void c63_ratectl_init(c63_ratectl *rc, const c63_enc_params *p)
{
  *rc = (c63_ratectl){0};
  rc->mode = p->rate_control;
  rc->quality = p->quality;
  c63_ratectl_set_bitrate(rc, p);
  rc->fullness = rc->buffer_bits / 2; /* the decoder's buffer starts half full */
}

/* The quality whose predicted size is closest to bits, and not above cap. */
static int quality_for(const c63_ratectl *rc, int type, double bits, double cap)
{
  const double s = rc->scale[type];
  double q = pow((bits > 1 ? bits : 1) / s, 1.0 / kExp);
  int qi = (int)lround(q);
  qi = qi < C63_MIN_QUALITY ? C63_MIN_QUALITY : qi > C63_MAX_QUALITY ? C63_MAX_QUALITY : qi;
  while (qi > C63_MIN_QUALITY && s * pow(qi, kExp) > cap)
    qi--;
  return qi;
}

int c63_ratectl_choose(c63_ratectl *rc, int keyframe, double *predicted)
{
  const int type = keyframe != 0;
  *predicted = rc->frame_bits;
  /* Until a frame of this type came back, keep the quality (the first
   * frame is a keyframe, and it gives the delta frames a first guess). */
  if (rc->mode == C63_RC_QUALITY || !rc->known[type]) return rc->quality;
  double target, cap;
  if (rc->mode == C63_RC_ABR) {
    target = rc->frame_bits + (rc->debt - rc->pending) / kHorizon;
    cap = keyframe ? 4 * rc->frame_bits + (rc->debt > 0 ? rc->debt : 0) : HUGE_VAL;
  } else {
    /* the fullness once the frames in flight are back */
    const double full = rc->fullness + rc->pending;
    target = rc->frame_bits - (full - rc->buffer_bits / 2) / 8;
    cap = rc->buffer_bits - full;
    if (!keyframe && cap > 2 * rc->frame_bits) cap = 2 * rc->frame_bits;
  }
  if (keyframe) target = rc->scale[1] * pow(rc->quality, kExp); /* the delta frames' quality */
  if (target > cap) target = cap;
  int q = quality_for(rc, type, target, cap);
  if (!keyframe) {
    /* a few steps at a time: one odd frame does not swing the quality */
    if (q > rc->quality + 3) q = rc->quality + 3;
    if (q < rc->quality - 6) q = rc->quality - 6;
    if (q < C63_MIN_QUALITY) q = C63_MIN_QUALITY;
    rc->quality = q;
  }
  *predicted = rc->scale[type] * pow(q, kExp);
  rc->pending += *predicted - rc->frame_bits;
  return q;
}

void c63_ratectl_update(c63_ratectl *rc, int keyframe, int quality, double predicted, double bits)
{
  if (rc->mode == C63_RC_QUALITY) return;
  const int type = keyframe != 0;
  rc->pending -= predicted - rc->frame_bits;
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
