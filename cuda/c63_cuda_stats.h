/* GPU stage timings of the CUDA backend, for benchmarks: when enabled, every
 * frame's stages are bracketed with CUDA events and the GPU times are summed
 * process-wide (all CUDA encoders together). Costs a few event records per
 * frame, so it is off by default.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef C63_CUDA_STATS_H
#define C63_CUDA_STATS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct c63_cuda_stage_stats {
  long frames;         /* frames timed since the last reset */
  double upload_ms;    /* sums over those frames: host-to-device copy of the frame */
  double motion_ms;    /* motion search (keyframes: clearing the vectors) */
  double transform_ms; /* compensation, transform and quantisation, and the
                          reconstruction from them (one kernel) */
  double entropy_ms;   /* entropy coding, byte stuffing and the flush byte */
  double download_ms;  /* writing the coded frame into mapped host memory */
  double total_ms;     /* the upload plus the compute stream's time for the frame */
  /* Host side, wall clock: time in submit (padding the picture into pinned
   * staging, enqueueing) and time collect waited for the GPU. A wait near
   * zero means the GPU keeps up and the caller's CPU work sets the pace. */
  double submit_host_ms;
  double collect_wait_ms;
} c63_cuda_stage_stats;

void c63_cuda_stats_enable(int on);
void c63_cuda_stats_reset(void);
void c63_cuda_stats_get(c63_cuda_stage_stats *out);

/* Name of a CUDA device ("NVIDIA H100 80GB HBM3"); returns 0, or a c63_status
 * with the CUDA error in name. */
int c63_cuda_device_name(int device_id, char *name, size_t size);

#ifdef __cplusplus
}
#endif

#endif
