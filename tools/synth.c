/* Deterministic synthetic clip (see synth.h).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "synth.h"

#include "c63.h"

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
