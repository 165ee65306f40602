/* Counting the frames of a Codec63 stream file in a thread of its own, so
 * that c63-dec's status line can show a total without delaying the first
 * picture: the stream is split as the decoder splits it (c63_frame_scan),
 * through its own reads at offsets (pread), leaving the decoder's file
 * position alone.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef CLI_FRAME_COUNT_H
#define CLI_FRAME_COUNT_H

#include <stdio.h>

typedef struct frame_count frame_count;

/* Start counting the frames of in from its current offset. NULL when in
 * is not a regular file (a pipe: the total stays unknown) or out of memory
 * or threads. */
frame_count *frame_count_start(FILE *in);

/* The frames (complete or broken: each one c63_frame_scan returns as a
 * frame) once the whole file has been counted; -1 before, or when a read
 * failed. */
long frame_count_total(frame_count *c);

/* Wait until the whole file has been counted; then frame_count_total. */
long frame_count_wait(frame_count *c);

/* Stop counting (also before the end) and free everything. */
void frame_count_stop(frame_count *c);

#endif
