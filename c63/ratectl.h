/* Rate control: the quality of each frame chosen so that the stream keeps a
 * bitrate (c63_enc_params.rate_control). Backend-independent: it sees only
 * the frame types it decides for and the sizes of the packets that come
 * back, which may be a few frames later (frames in flight).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef C63_RATECTL_H
#define C63_RATECTL_H

#include <stdint.h>

#include "c63/c63.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct c63_ratectl {
  c63_rate_control mode;
  int bitrate;        /* kbit/s: the target, as reported with its judgement */
  double fps;         /* the framerate that turns the bitrate into bits per frame */
  double frame_bits;  /* the target per frame: bitrate / framerate */
  int buffer_ms;      /* CBR: the decoder's buffer, in ms of the bitrate */
  double buffer_bits; /* the same in bits */
  double fullness;    /* CBR: bits in it after the last frame came back */
  double debt;        /* ABR: bits the stream may still spend over the target so far */
  double pending;     /* bits predicted for frames sent but not back yet */
  /* The model, per frame type (0 delta, 1 key): bits = scale * quality^kExp,
   * kept as a running mean of what came back. */
  double scale[2];
  int known[2];
  int quality[2]; /* the last choice per type (the start: the quality parameter) */
  int last_key;   /* the last frame chosen was a keyframe */
  /* The frames that came back in a row at quality 1 (side -1) or 50 (+1),
   * and their bits, for c63_ratectl_reach. */
  int bound_side, bound_run;
  double bound_bits;
  int64_t recoded;   /* CBR: frames coded again at a lower quality to fit the buffer */
  int64_t overflows; /* CBR: frames over the buffer although coded at quality 1 */
} c63_ratectl;

/* One frame's choice: what c63_ratectl_choose decided and predicted, and
 * the room the buffer had for it (CBR; HUGE_VAL otherwise). */
typedef struct c63_ratectl_frame {
  int keyframe, quality, tries;
  double predicted, room;
} c63_ratectl_frame;

/* Set up from the parameters (rate_control, bitrate, buffer_ms, fps,
 * quality as the starting point). */
void c63_ratectl_init(c63_ratectl *rc, const c63_enc_params *p);
/* A new target bitrate (kbit/s) from the next frame on, judged afresh. */
void c63_ratectl_set_bitrate(c63_ratectl *rc, const c63_enc_params *p);
/* CBR: a new buffer of buffer_ms from the next frame on (the bits in it
 * kept, up to its new size). */
void c63_ratectl_set_buffer(c63_ratectl *rc, int buffer_ms);
/* The quality of the next frame after a c63_encoder_set_quality. */
void c63_ratectl_set_quality(c63_ratectl *rc, int quality);
/* Choose the quality for the next frame, a keyframe or not. */
void c63_ratectl_choose(c63_ratectl *rc, int keyframe, c63_ratectl_frame *f);
/* CBR: the frame f, coded in bits, overflows the buffer: the lower quality
 * to code it again at (f updated), or 0 when it fits, or when it is at
 * quality 1 already or cannot be coded again (can_redo 0; both then
 * counted in overflows). Always 0 outside CBR. */
int c63_ratectl_retry(c63_ratectl *rc, c63_ratectl_frame *f, double bits, int can_redo);
/* The frame f came back with bits bits. */
void c63_ratectl_update(c63_ratectl *rc, const c63_ratectl_frame *f, double bits);
/* -1 when the last C63_TARGET_REACH_FRAMES frames came back at quality 1
 * and still spent more than 5% over the target, +1 when at quality 50 and
 * more than 5% under it, else 0; with kbps (if not NULL) the bitrate of
 * those frames. Always 0 in constant-quality mode. */
int c63_ratectl_reach(const c63_ratectl *rc, double *kbps);

#ifdef __cplusplus
}
#endif

#endif
