/* A deterministic synthetic test clip: a textured background panning at a
 * constant speed with film-grain noise, and a second textured object moving
 * the other way. Integer arithmetic only, so every machine produces the same
 * bytes. Used by c63-bench (a 1080p clip held in memory) and c63-synth.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef C63_SYNTH_H
#define C63_SYNTH_H

#include <stdint.h>

/* Write frame number t of a width x height clip as one contiguous I420
 * picture (Y, then U and V of ceil(w/2) x ceil(h/2)) into dst. */
void synth_frame(uint8_t *dst, int width, int height, int t);

/* Frame t of a natural-looking clip, laid out as synth_frame's: a
 * landscape of fractal noise (the 1/f spectrum of natural pictures: smooth
 * gradients with detail at every scale) under a sky, which the camera pans
 * across by fractions of a pixel per frame, two soft-edged objects moving
 * across it, and light sensor noise. */
void synth_natural_frame(uint8_t *dst, int width, int height, int t);

#endif
