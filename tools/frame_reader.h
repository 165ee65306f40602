/* Reading raw pictures in a thread of its own, so the encoder never waits
 * for the disk or a pipe: a ring of frame buffers that the reader fills
 * ahead while the caller encodes. The buffers come from
 * c63_picture_memory_alloc, so the CUDA backend uploads them by DMA
 * without a staging copy.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef CLI_FRAME_READER_H
#define CLI_FRAME_READER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct frame_reader frame_reader;

/* Start reading frames of frame_size bytes from in (at most max_frames
 * when >= 0) into depth buffers. NULL when out of memory or threads. */
frame_reader *frame_reader_start(FILE *in, size_t frame_size, long max_frames, int depth);

/* The next whole frame, or NULL at the end of the input. Then *partial is
 * the length of an incomplete last frame (0 if none) and *read_errno the
 * errno of a read error (0 if none). The frame stays valid until
 * frame_reader_release. */
const uint8_t *frame_reader_next(frame_reader *r, size_t *partial, int *read_errno);
void frame_reader_release(frame_reader *r);

/* Stop the thread (also before the end) and free everything. */
void frame_reader_stop(frame_reader *r);

#endif
