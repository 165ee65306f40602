/* Padded plane geometry of a Codec63 picture (docs/format.md section 1).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef C63_GEOMETRY_H
#define C63_GEOMETRY_H

#ifdef __cplusplus
extern "C" {
#endif

/* Plane indices. */
enum { C63_Y = 0, C63_U = 1, C63_V = 2 };

typedef struct c63_geometry {
  int width, height;            /* picture */
  int pic_w[3], pic_h[3];       /* visible plane sizes: luma w x h, chroma ceil(w/2) x ceil(h/2) */
  int pad_w[3], pad_h[3];       /* padded (coded) plane sizes, multiples of 8 (luma of 16) */
  int blocks_w[3], blocks_h[3]; /* 8x8 blocks per row / column of each plane */
  int mcus_w, mcus_h;           /* 16x16 luma MCUs */
} c63_geometry;

void c63_geometry_init(c63_geometry *g, int width, int height);

/* Stripes of block rows, so the pixel stages of a frame can run on several
 * threads (each stripe reads the previous reconstruction and writes only its
 * own rows). Stripes are numbered through Y, then U, then V. */
typedef struct c63_stripes {
  int n[3];
} c63_stripes;

/* A few stripes per thread balance uneven rows; no more than there are rows. */
void c63_stripes_init(c63_stripes *s, const c63_geometry *g, int threads);
static inline int c63_stripes_total(const c63_stripes *s)
{
  return s->n[0] + s->n[1] + s->n[2];
}
/* Plane and block rows [by0, by1) of stripe i. */
void c63_stripe_rows(const c63_stripes *s, const c63_geometry *g, int i, int *c, int *by0,
                     int *by1);

/* Coding order inside a 16x16 MCU (format section 4): block k of 0..5 is
 * luma (0,0) (8,0) (0,8) (8,8), then U, then V. Padded luma is a multiple
 * of 16 and chroma of 8, so every MCU is complete. */
static inline void c63_mcu_block(int mx, int my, int k, int *c, int *bx, int *by)
{
  if (k < 4) {
    *c = 0;
    *bx = mx * 2 + (k & 1);
    *by = my * 2 + (k >> 1);
  } else {
    *c = k - 3;
    *bx = mx;
    *by = my;
  }
}

/* Whether the prediction of block (bx, by) with vector (mx, my) reads only
 * inside a w x h plane, as the reference reads it: pixel (x, y) of the block
 * from ref[(y + my) * w + x + mx], so that past the left or right edge a row
 * goes on in the neighbouring one. The first and last reads bound them all. */
#ifdef __CUDACC__
__host__ __device__
#endif
    static inline int
    c63_mv_reads_inside(int w, int h, int bx, int by, int mx, int my)
{
  const long first = (long)(by * 8 + my) * w + bx * 8 + mx;
  return first >= 0 && first + 7L * w + 7 < (long)w * h;
}

#ifdef __cplusplus
}
#endif

#endif
