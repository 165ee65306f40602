/* Bjøntegaard delta rate: the average bitrate difference of two encoder
 * configurations at equal quality, from a few (rate, PSNR) points of each
 * (ITU-T VCEG-M33): log-rate is fitted as a cubic polynomial of PSNR for
 * each curve, both are integrated over the PSNR range they share, and the
 * difference of the averages is turned back into a ratio.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef C63_BDRATE_H
#define C63_BDRATE_H

/* Rate change of B against A in percent (negative: B needs fewer bits for
 * the same PSNR). n_a, n_b >= 4 points each, rates > 0. Returns 0 and sets
 * *percent, or -1 when the curves cannot be compared (too few points, a
 * singular fit, or no overlapping PSNR range). */
int bd_rate(const double *rate_a, const double *psnr_a, int n_a, const double *rate_b,
            const double *psnr_b, int n_b, double *percent);

#endif
