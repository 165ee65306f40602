/* Deterministic synthetic clip (see synth.h).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "synth.h"

#include "c63/c63.h"

/* 32-bit integer hash (a xorshift-multiply mix) of a lattice point. */
static uint32_t hash2(int32_t x, int32_t y, uint32_t seed)
{
  uint32_t h = (uint32_t)x * 0x8da6b343u ^ (uint32_t)y * 0xd8163841u ^ seed * 0xcb1ab31fu;
  h ^= h >> 15;
  h *= 0x2c1b3c6du;
  h ^= h >> 12;
  h *= 0x297a2d39u;
  h ^= h >> 15;
  return h;
}

/* Value noise: random values on a lattice of cell x cell pixels, bilinearly
 * interpolated, 0..255. Smooth enough that motion search finds the motion. */
static int value_noise(int x, int y, int cell, uint32_t seed)
{
  int gx = x >= 0 ? x / cell : -((-x + cell - 1) / cell);
  int gy = y >= 0 ? y / cell : -((-y + cell - 1) / cell);
  int fx = x - gx * cell, fy = y - gy * cell;
  int v00 = (int)(hash2(gx, gy, seed) & 255), v10 = (int)(hash2(gx + 1, gy, seed) & 255);
  int v01 = (int)(hash2(gx, gy + 1, seed) & 255), v11 = (int)(hash2(gx + 1, gy + 1, seed) & 255);
  int top = v00 * (cell - fx) + v10 * fx;
  int bottom = v01 * (cell - fx) + v11 * fx;

  return (top * (cell - fy) + bottom * fy) / (cell * cell);
}

static uint8_t clamp255(int v)
{
  return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
}

/* Luma of the scene at picture position (x, y) in frame t. */
static uint8_t scene_luma(int x, int y, int width, int height, int t)
{
  /* Background pans 3 px right and 2 px up per frame (in picture terms the
   * texture moves left and down). */
  int u = x + 3 * t, v = y - 2 * t;
  int bg = (value_noise(u, v, 32, 1) * 3 + value_noise(u, v, 8, 2)) / 4;
  /* Object: a quarter-size box moving 4 px left and 1 px down per frame,
   * wrapping around the picture. */
  int bw = width / 4 + 8, bh = height / 4 + 8;
  int bx = ((width - 4 * t) % width + width) % width, by = (height / 3 + t) % height;
  int ox = ((x - bx) % width + width) % width, oy = ((y - by) % height + height) % height;
  int grain = (int)(hash2(x, y, 1000u + (uint32_t)t) % 9) - 4;

  if (ox < bw && oy < bh) bg = 40 + value_noise(ox, oy, 6, 3) * 3 / 4;
  return clamp255(bg + grain);
}

void synth_frame(uint8_t *dst, int width, int height, int t)
{
  int cw = c63_chroma_size(width), ch = c63_chroma_size(height);
  uint8_t *u = dst + (long)width * height, *v = u + (long)cw * ch;

  for (int y = 0; y < height; y++)
    for (int x = 0; x < width; x++)
      dst[(long)y * width + x] = scene_luma(x, y, width, height, t);
  /* Chroma: slow colour gradients drifting with the background. */
  for (int y = 0; y < ch; y++) {
    for (int x = 0; x < cw; x++) {
      int n = value_noise(2 * x + 3 * t, 2 * y - 2 * t, 64, 4);
      u[(long)y * cw + x] = clamp255(96 + n / 2 + (x * 32) / cw);
      v[(long)y * cw + x] = clamp255(160 - n / 3 + (y * 32) / ch);
    }
  }
}

/* ---- The natural-looking scene ---- */

/* Positions in 1/16 pixel, so the camera and the objects move by fractions
 * of a pixel, as in filmed video (the codec's vectors are whole pixels). */
#define SUB 16

/* value_noise for cells too large for its int arithmetic. */
static int value_noise_wide(int x, int y, int cell, uint32_t seed)
{
  int gx = x >= 0 ? x / cell : -((-x + cell - 1) / cell);
  int gy = y >= 0 ? y / cell : -((-y + cell - 1) / cell);
  int64_t fx = x - gx * cell, fy = y - gy * cell;
  int64_t v00 = hash2(gx, gy, seed) & 255, v10 = hash2(gx + 1, gy, seed) & 255;
  int64_t v01 = hash2(gx, gy + 1, seed) & 255, v11 = hash2(gx + 1, gy + 1, seed) & 255;
  int64_t top = v00 * (cell - fx) + v10 * fx, bottom = v01 * (cell - fx) + v11 * fx;
  return (int)((top * (cell - fy) + bottom * fy) / ((int64_t)cell * cell));
}

/* Fractal noise at a sub-pixel position: octaves of value noise from
 * 256-pixel cells down to 4-pixel ones, each of 5/8 the amplitude of the
 * one before, near the 1/f spectrum of natural pictures. 0..255, mostly
 * within 128 +- 50. */
static int fractal(int x16, int y16, uint32_t seed)
{
  int sum = 0, weight = 0;
  for (int cell = 256, amp = 4096; cell >= 4; cell /= 2, amp = amp * 5 / 8) {
    sum += amp * value_noise_wide(x16, y16, cell * SUB, seed + (uint32_t)cell);
    weight += amp;
  }
  return sum / weight;
}

/* How much of a soft disc of radius r (pixels, edge 2 pixels wide) covers
 * the point (dx16, dy16) from its centre: 0..256. */
static int disc_cover(int dx16, int dy16, int r)
{
  const long d2 = (long)dx16 * dx16 + (long)dy16 * dy16;
  const long in = (long)(r - 1) * SUB, out = (long)(r + 1) * SUB;
  if (d2 <= in * in) return 256;
  if (d2 >= out * out) return 0;
  /* linear across the edge, in squared distance (close enough) */
  return (int)(256 * (out * out - d2) / (out * out - in * in));
}

static int mix(int a, int b, int cover)
{
  return (a * (256 - cover) + b * cover) / 256;
}

/* The scene's luma (c = 0) or chroma (1, 2) at luma position (x16, y16)
 * in frame t of a width x height picture. */
static int natural_sample(int c, int x16, int y16, int width, int height, int t)
{
  /* camera: 1.375 px right and 0.4375 px up per frame */
  const int u = x16 + t * 22, v = y16 - t * 7;
  /* a hilly horizon at two fifths of the height, with its own detail */
  const int horizon = height * SUB * 2 / 5 + (fractal(u, 0, 50) - 128) * height * SUB / 256;
  const int tex = fractal(u, v, 11), hue = fractal(u, v, 12);
  /* sky: brighter upward (far away: fixed in the picture), faint clouds,
   * blue; ground: a contrasty texture of grass and soil */
  const int sky[3] = {200 - y16 / (SUB * 4) + (fractal(u / 2, v, 60) - 128) / 3, 150, 105};
  const int ground[3] = {128 + (tex - 128) * 5 / 2 - 20, 108 + (hue - 128) / 4,
                         124 + (hue - 128) / 5 + (tex - 128) / 6};
  const int edge = v - horizon; /* 1/16 pixels below the horizon */
  int val = mix(sky[c], ground[c], edge <= -SUB ? 0 : edge >= SUB ? 256 : (edge + SUB) * 8);
  /* a ball rolling right and down at (2.3, 0.8) px per frame, wrapping */
  const int r = height / 6 + 4;
  const int bx = (width / 5 * SUB + t * 37) % (width * SUB), by = height / 3 * SUB + t * 13;
  int cover = disc_cover(x16 - bx, y16 - by % (height * SUB), r);
  if (cover) {
    const int ball = fractal(x16 - bx + 4096, y16 - by + 4096, 31);
    const int obj[3] = {40 + ball * 3 / 4, 100 + ball / 8, 170 - ball / 8};
    val = mix(val, obj[c], cover);
  }
  /* a smaller, bright disc crossing the other way at 3.5 px per frame */
  const int r2 = height / 10 + 3;
  const int cx = ((width * 4 / 5) * SUB - t * 56) % (width * SUB) + width * SUB;
  cover = disc_cover(x16 - cx % (width * SUB), y16 - height * 2 / 3 * SUB, r2);
  if (cover) {
    const int obj[3] = {220 - fractal(x16, y16, 41) / 8, 150, 90};
    val = mix(val, obj[c], cover);
  }
  return val;
}

void synth_natural_frame(uint8_t *dst, int width, int height, int t)
{
  int cw = c63_chroma_size(width), ch = c63_chroma_size(height);
  uint8_t *u = dst + (long)width * height, *v = u + (long)cw * ch;

  for (int y = 0; y < height; y++)
    for (int x = 0; x < width; x++) {
      /* sensor noise of a few levels, stronger in the dark */
      int n = (int)(hash2(x, y, 5000u + (uint32_t)t) % 5) - 2;
      int l = natural_sample(0, x * SUB, y * SUB, width, height, t);
      dst[(long)y * width + x] = clamp255(l + (l < 80 ? n * 2 : n));
    }
  /* chroma sited between its two luma columns and rows */
  for (int y = 0; y < ch; y++)
    for (int x = 0; x < cw; x++) {
      const int x16 = 2 * x * SUB + SUB / 2, y16 = 2 * y * SUB + SUB / 2;
      u[(long)y * cw + x] = clamp255(natural_sample(1, x16, y16, width, height, t));
      v[(long)y * cw + x] = clamp255(natural_sample(2, x16, y16, width, height, t));
    }
}
