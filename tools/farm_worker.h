/* What c63-farm's workers call through ctypes (tools/farm/c63farm/
 * inprocess.py) to encode a chunk of a raw file: c63-enc's loop
 * (encode_loop.h) on the worker's libc63 encoder, over a ring of picture
 * buffers the worker keeps from chunk to chunk, so that no frame passes
 * through Python (whose loop, a few ctypes calls and thread hand-offs a
 * frame, held a worker far below the GPU's pace). And to write decoded
 * pictures into the job's one output file through shared mappings
 * (mapped_output.h), as c63-dec writes its own: every worker writes that
 * file, and write() takes its inode's lock, one writer at a time.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef C63_FARM_WORKER_H
#define C63_FARM_WORKER_H

#include <stddef.h>
#include <stdint.h>

#include "c63/c63.h"

typedef struct c63farm_chunks c63farm_chunks;

/* Chunks of width x height pictures for enc (the caller's, which it frees
 * after this), read by readers threads into a ring of picture memory
 * (page-locked for the CUDA backend, so that the GPU reads them by DMA). NULL
 * when out of memory. */
c63farm_chunks *c63farm_chunks_new(c63_encoder *enc, int width, int height, int readers);
/* Free the ring, after the encoder it lent pictures to. */
void c63farm_chunks_free(c63farm_chunks *c);

/* Encode frames frames from byte offset of in_fd, starting with a
 * keyframe, and write the stream to out_fd (by a thread of its own); the
 * stream is drained at the end, so the encoder takes the next chunk as a
 * fresh one. Returns 0 with the bytes written in *bytes; -1 with msg set
 * (the input shorter than frames, a read or write error, the encoder's
 * failure): then the encoder may still read pictures of the ring, and
 * must be freed before the ring. Neither fd is closed. */
int c63farm_encode_chunk(c63farm_chunks *c, int in_fd, int64_t offset, long frames, int out_fd,
                         uint64_t *bytes, char *msg, size_t msg_size);

/* The job's output file fd (open for reading and writing, allocated to its
 * final size), written through windows of shared mappings, each worker its
 * own range of it, several threads at once. NULL where it cannot be
 * mapped: write it with pwrite instead. */
typedef struct c63farm_output c63farm_output;
c63farm_output *c63farm_output_open(int fd);
/* Copy n bytes to offset off: 0, or an errno value. */
int c63farm_output_put(c63farm_output *o, uint64_t off, const void *data, size_t n);
/* Unmap and free o (the file stays the caller's): 0 or an errno value. */
int c63farm_output_close(c63farm_output *o);

#endif
