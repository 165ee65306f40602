/* Stage timings of an encoder's backend, for benchmarks and tests (not
 * part of the installed API): c63_stage_stats in encode_backend.h says what each
 * figure covers. Only backends that time their stages (CUDA) have them.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef C63_ENCODER_STATS_H
#define C63_ENCODER_STATS_H

#include "encode_backend.h"
#include "c63/c63.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Start (on) or stop timing the stages of frames submitted from now on.
 * Returns C63_OK, or C63_ERR_UNSUPPORTED when the backend has no timings. */
int c63_encoder_set_stage_timing(c63_encoder *enc, int on);
/* The sums since the last reset; reset starts them again. */
int c63_encoder_get_stage_stats(c63_encoder *enc, c63_stage_stats *out, int reset);

#ifdef __cplusplus
}
#endif

#endif
