/* What c63-farm's workers call through ctypes (tools/farm/c63farm/
 * inprocess.py) to encode a chunk of a raw file: c63-enc's loop
 * (encode_loop.h) on the worker's libc63 encoder, over a ring of picture
 * buffers the worker keeps from chunk to chunk, so that no frame passes
 * through Python (whose loop, a few ctypes calls and thread hand-offs a
 * frame, held a worker far below the GPU's pace).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef C63_FARM_WORKER_H
#define C63_FARM_WORKER_H

#include <stddef.h>
#include <stdint.h>

#include "c63/c63.h"

/* The ring: depth picture buffers of frame_size bytes (c63_picture_memory_alloc,
 * so that the GPU reads them by DMA). NULL when out of memory. */
void *c63farm_ring_new(size_t frame_size, int depth);
/* Free it, after the encoder it lent pictures to. */
void c63farm_ring_free(void *ring);

/* Encode frames frames of width x height from byte offset of in_fd (read
 * by readers threads) with enc, which starts the chunk with a keyframe,
 * and write the stream to out_fd (by a thread of its own); the stream is
 * drained at the end, so the encoder takes the next chunk as a fresh one.
 * Returns 0 with the bytes written in *bytes; -1 with msg set (the input
 * shorter than frames, a read or write error, the encoder's failure):
 * then the encoder may still read pictures of the ring, and must be freed
 * before the ring is used again. Neither fd is closed. */
int c63farm_encode_chunk(c63_encoder *enc, void *ring, int width, int height, int in_fd,
                         int64_t offset, long frames, int readers, int out_fd, uint64_t *bytes,
                         char *msg, size_t msg_size);

#endif
