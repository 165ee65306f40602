/* Rate control: the quality of each frame chosen so that the stream keeps a
 * bitrate (c63_enc_params.rate_control). Backend-independent: it sees only
 * the frame types it decides for and the sizes of the packets that come
 * back, which may be a few frames later (frames in flight).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef C63_RATECTL_H
#define C63_RATECTL_H

#include "c63.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct c63_ratectl {
  c63_rate_control mode;
  double fps;         /* the framerate that turns the bitrate into bits per frame */
  double frame_bits;  /* the target per frame: bitrate / framerate */
  double buffer_bits; /* CBR: the decoder's buffer */
  double fullness;    /* CBR: bits in it after the last frame came back */
  double debt;        /* ABR: bits the stream may still spend over the target so far */
  double pending;     /* bits predicted for frames sent but not back yet */
  /* The model, per frame type (0 delta, 1 key): bits = scale * quality^kExp,
   * kept as a running mean of what came back. */
  double scale[2];
  int known[2];
  int quality; /* the last choice (the start: the quality parameter) */
  /* The frames that came back in a row at quality 1 (side -1) or 50 (+1),
   * and their bits, for c63_ratectl_reach. */
  int bound_side, bound_run;
  double bound_bits;
} c63_ratectl;

/* Set up from the parameters (rate_control, bitrate, buffer_ms, fps,
 * quality as the starting point). */
void c63_ratectl_init(c63_ratectl *rc, const c63_enc_params *p);
/* A new target bitrate (kbit/s) from the next frame on. */
void c63_ratectl_set_bitrate(c63_ratectl *rc, const c63_enc_params *p);
/* The quality for the next frame, which is a keyframe or not, and the bits
 * the model predicts for it (to hand back to c63_ratectl_update). */
int c63_ratectl_choose(c63_ratectl *rc, int keyframe, double *predicted);
/* A frame sent with that quality and prediction came back with bits bits. */
void c63_ratectl_update(c63_ratectl *rc, int keyframe, int quality, double predicted, double bits);
/* -1 when the last C63_TARGET_REACH_FRAMES frames came back at quality 1
 * and still spent more than 5% over the target, +1 when at quality 50 and
 * more than 5% under it, else 0; with kbps (if not NULL) the bitrate of
 * those frames. Always 0 in constant-quality mode. */
int c63_ratectl_reach(const c63_ratectl *rc, double *kbps);

#ifdef __cplusplus
}
#endif

#endif
