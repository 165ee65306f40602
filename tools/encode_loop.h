/* The loop that feeds an encoder the frames a frame_reader delivers,
 * lending each picture (c63_encoder_send_picture_borrowed: its buffer goes
 * back to the reader with its packet, so it is neither copied nor waited
 * for), and hands the packets to a frame_writer, or writes them in the
 * caller's thread. c63-enc's loop, and that of c63-farm's workers.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef CLI_ENCODE_LOOP_H
#define CLI_ENCODE_LOOP_H

#include <stddef.h>

#include "c63/c63.h"
#include "cliutil.h"
#include "frame_reader.h"
#include "frame_writer.h"

typedef struct encode_loop {
  c63_encoder *enc;
  frame_reader *reader;
  frame_writer *writer; /* NULL: packets written to out in the caller's thread */
  cli_output *out;
  const char *prog; /* for the writer's messages */
  int width, height;
  /* The first picture a keyframe: a chunk of a longer stream, coded by an
   * encoder kept from the chunk before, starts as a fresh encoder would. */
  int keyframe_first;
  /* Each packet, once queued for writing (NULL: none). */
  void (*packet)(void *ctx, const c63_packet *pkt);
  /* The encoder failed: why, as one line without the program's name. */
  void (*failed)(void *ctx, const char *why);
  void *ctx;
} encode_loop;

/* Frame buffers for a reader feeding enc with readers threads: one a
 * thread and a few more read ahead (a slow read is covered while the GPU
 * encodes), besides those the encoder holds until their packets (its
 * delay, and the one it is given). */
int encode_loop_depth(const c63_encoder *enc, int readers);

/* Whether the reader's buffers should be page-locked for enc: for a
 * backend that uploads its pictures to a GPU. The CPU backend reads them
 * where they are, and page-locked memory would cost it a CUDA context. */
int encode_loop_page_locked(const c63_encoder *enc);

/* Encode every frame the reader delivers. Returns 0, or 1 after failed()
 * or a write's message; *partial and *read_errno as frame_reader_next
 * leaves them. */
int encode_loop_frames(encode_loop *l, size_t *partial, int *read_errno);

/* The end of the stream: every packet left written. Returns 0, or 1 after
 * failed() or a write's message. */
int encode_loop_drain(encode_loop *l);

#endif
