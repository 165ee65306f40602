/* Padded plane geometry (docs/format.md section 1).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "geometry.h"

void c63_geometry_init(c63_geometry *g, int width, int height)
{
  int ypw = (width + 15) / 16 * 16, yph = (height + 15) / 16 * 16;

  g->width = width;
  g->height = height;
  for (int c = 0; c < 3; c++) {
    g->pic_w[c] = c ? (width + 1) / 2 : width;
    g->pic_h[c] = c ? (height + 1) / 2 : height;
    g->pad_w[c] = c ? ypw / 2 : ypw;
    g->pad_h[c] = c ? yph / 2 : yph;
    g->blocks_w[c] = g->pad_w[c] / 8;
    g->blocks_h[c] = g->pad_h[c] / 8;
  }
  g->mcus_w = ypw / 16;
  g->mcus_h = yph / 16;
}

void c63_stripes_init(c63_stripes *s, const c63_geometry *g, int threads)
{
  for (int c = 0; c < 3; c++) {
    int n = threads > 1 ? 2 * threads : 1;
    s->n[c] = n < g->blocks_h[c] ? n : g->blocks_h[c];
  }
}

void c63_stripe_rows(const c63_stripes *s, const c63_geometry *g, int i, int *c, int *by0, int *by1)
{
  int p = 0;
  while (i >= s->n[p])
    i -= s->n[p++];
  *c = p;
  *by0 = g->blocks_h[p] * i / s->n[p];
  *by1 = g->blocks_h[p] * (i + 1) / s->n[p];
}
