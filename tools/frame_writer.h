/* Writing pictures in threads of their own, so the decoder never waits
 * for the disk or a pipe: the caller copies each picture into a free buffer
 * of a small ring and goes on while the thread writes it, whole, with one
 * call (row by row through stdio's small buffer cost more than the decoding
 * of a 1080p frame).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef CLI_FRAME_WRITER_H
#define CLI_FRAME_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "cliutil.h"

typedef struct frame_writer frame_writer;

/* Start writing to out (which the caller leaves alone until
 * frame_writer_finish) through depth buffers, in the order queued. With
 * threads > 1 (at most 8) and a regular file (out's temporary), that many
 * threads write it through mappings (mapped_output.h), each picture at its
 * offset; otherwise one thread writes with write(). NULL when out of memory
 * or threads. */
frame_writer *frame_writer_start(cli_output *out, const char *prog, int depth, int threads);

/* A buffer of at least size bytes for the next picture, once one is free;
 * NULL when out of memory (with a message). */
uint8_t *frame_writer_buffer(frame_writer *w, size_t size);
/* Queue that buffer's first size bytes. Returns -1 when a write has failed
 * (its message printed): nothing more is written. */
int frame_writer_queue(frame_writer *w, size_t size);

/* Write everything queued, stop the thread and free the writer. Returns 0,
 * or -1 when a write failed. */
int frame_writer_finish(frame_writer *w);

#endif
