/* c63-farm's workers' chunk encoder (farm_worker.h).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "farm_worker.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "encode_loop.h"
#include "mapped_output.h"

#define PROG "c63-farm worker"
/* Packets queued for the writer thread, as c63-enc's. */
#define WRITE_QUEUE 8

struct c63farm_chunks {
  c63_encoder *enc;
  int width, height;
  int readers;
  frame_reader *ring;
};

/* One chunk's count, and where its failure is told. */
typedef struct chunk {
  long frames;
  uint64_t bytes;
  char *msg;
  size_t msg_size;
} chunk;

static void count_packet(void *ctx, const c63_packet *pkt)
{
  chunk *c = ctx;
  c->frames++;
  c->bytes += pkt->size;
}

static void encoder_failed(void *ctx, const char *why)
{
  chunk *c = ctx;
  snprintf(c->msg, c->msg_size, "%s", why);
}

c63farm_chunks *c63farm_chunks_new(c63_encoder *enc, int width, int height, int readers)
{
  c63farm_chunks *c = malloc(sizeof *c);
  if (!c) return NULL;
  *c = (c63farm_chunks){enc, width, height, readers, NULL};
  c->ring = frame_reader_new(cli_i420_size(width, height), encode_loop_depth(enc, readers),
                             encode_loop_page_locked(enc));
  if (!c->ring) {
    free(c);
    return NULL;
  }
  return c;
}

void c63farm_chunks_free(c63farm_chunks *c)
{
  if (!c) return;
  frame_reader_stop(c->ring);
  free(c);
}

/* A stdio stream on a duplicate of fd, at offset when offset >= 0. */
static FILE *stream_on(int fd, int64_t offset, const char *mode)
{
  const int dup_fd = dup(fd);
  if (dup_fd < 0) return NULL;
  if (offset >= 0 && lseek(dup_fd, (off_t)offset, SEEK_SET) < 0) {
    close(dup_fd);
    return NULL;
  }
  FILE *f = fdopen(dup_fd, mode);
  if (!f) close(dup_fd);
  return f;
}

int c63farm_encode_chunk(c63farm_chunks *chunks, int in_fd, int64_t offset, long frames, int out_fd,
                         uint64_t *bytes, char *msg, size_t msg_size)
{
  chunk c = {0, 0, msg, msg_size};
  cli_output out = {0};
  encode_loop loop = {0};
  size_t partial = 0;
  int read_errno = 0, ret = -1;
  frame_reader *reader = chunks->ring;
  FILE *in = stream_on(in_fd, offset, "rb");

  msg[0] = '\0';
  out.f = stream_on(out_fd, -1, "wb");
  out.path = "the chunk's output";
  if (!in || !out.f) {
    snprintf(msg, msg_size, "cannot open the chunk's files: %s", strerror(errno));
    goto done;
  }
  if (frame_reader_begin(reader, in, frames, chunks->readers) != 0) {
    snprintf(msg, msg_size, "cannot start the reading threads");
    goto done;
  }
  loop.enc = chunks->enc;
  loop.reader = reader;
  loop.out = &out;
  loop.prog = PROG;
  loop.width = chunks->width;
  loop.height = chunks->height;
  loop.keyframe_first = 1;
  loop.packet = count_packet;
  loop.failed = encoder_failed;
  loop.ctx = &c;
  if (!(loop.writer = frame_writer_start(&out, PROG, WRITE_QUEUE, 1))) {
    snprintf(msg, msg_size, "out of memory");
    goto done;
  }
  if (encode_loop_frames(&loop, &partial, &read_errno) != 0) goto done;
  if (read_errno) {
    snprintf(msg, msg_size, "error reading the input: %s", strerror(read_errno));
    goto done;
  }
  if (encode_loop_drain(&loop) != 0) goto done;
  if (frame_writer_finish(loop.writer) != 0) {
    loop.writer = NULL;
    snprintf(msg, msg_size, "error writing the chunk (the worker's log says why)");
    goto done;
  }
  loop.writer = NULL;
  if (c.frames != frames) {
    snprintf(msg, msg_size, "the input is shorter than when the job started");
    goto done;
  }
  if (fflush(out.f) != 0 || ferror(out.f)) {
    snprintf(msg, msg_size, "error writing the chunk: %s", strerror(errno));
    goto done;
  }
  *bytes = c.bytes;
  ret = 0;

done:
  if (ret != 0 && !msg[0]) snprintf(msg, msg_size, "error writing the chunk");
  frame_writer_finish(loop.writer);
  frame_reader_end(reader); /* the ring stays lent to the encoder on failure */
  if (in) fclose(in);
  if (out.f) fclose(out.f);
  return ret;
}

/* c63farm_output is the worker's name for a mapped_output opened over the
 * allocated file. */
c63farm_output *c63farm_output_open(int fd)
{
  return (c63farm_output *)mapped_output_open(fd);
}

int c63farm_output_put(c63farm_output *o, uint64_t off, const void *data, size_t n)
{
  return mapped_output_put((mapped_output *)o, off, data, n);
}

int c63farm_output_close(c63farm_output *o)
{
  return mapped_output_finish((mapped_output *)o, 0);
}
