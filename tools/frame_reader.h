/* Reading raw pictures in a thread of its own, so the encoder never waits
 * for the disk or a pipe: a ring of frame buffers that the reader fills
 * ahead while the caller encodes. For an encoder that uploads its pictures
 * (encode_loop_page_locked) the buffers come from c63_picture_memory_alloc,
 * so the CUDA backend uploads them by DMA without a staging copy; others
 * get plain memory, which needs no CUDA context.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef CLI_FRAME_READER_H
#define CLI_FRAME_READER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct frame_reader frame_reader;

/* The most reader threads frame_reader_start takes. */
#define FRAME_READER_MAX_THREADS 16

/* Start reading frames of frame_size bytes from in (at most max_frames
 * when >= 0) into depth buffers (page-locked ones when page_locked), with
 * threads threads (1..FRAME_READER_MAX_THREADS, at most depth) when in is
 * a regular file, one otherwise. NULL when out of memory or threads. */
frame_reader *frame_reader_start(FILE *in, size_t frame_size, long max_frames, int depth,
                                 int threads, int page_locked);

/* The same in two steps, for a caller that reads several inputs (or
 * several ranges of one) through one ring: the buffers (NULL when out of
 * memory), then the threads reading in from its position (0, or -1 when
 * no thread could start). frame_reader_end stops them (every frame the
 * caller holds is then its own until the next begin, which takes them all
 * back); frame_reader_stop ends and frees. */
frame_reader *frame_reader_new(size_t frame_size, int depth, int page_locked);
int frame_reader_begin(frame_reader *r, FILE *in, long max_frames, int threads);
void frame_reader_end(frame_reader *r);
/* The frames the reader will deliver when the input is a regular file:
 * its whole frames from where reading started, at most max_frames; -1
 * when unknown (a pipe, a terminal). */
long frame_reader_frames(const frame_reader *r);

/* The next whole frame, or NULL at the end of the input. Then *partial is
 * the length of an incomplete last frame (0 if none) and *read_errno the
 * errno of a read error (0 if none; EDEADLK when the caller holds every
 * buffer, so that no frame could come). A frame stays valid until released: the caller may
 * hold several (an encoder reads a borrowed picture until its packet),
 * and frame_reader_release releases the oldest it holds. */
const uint8_t *frame_reader_next(frame_reader *r, size_t *partial, int *read_errno);
void frame_reader_release(frame_reader *r);

/* Stop the thread (also before the end) and free everything. */
void frame_reader_stop(frame_reader *r);

#endif
