/* c63-farm's workers' chunk encoder (farm_worker.h).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "farm_worker.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "encode_loop.h"

#define PROG "c63-farm worker"
/* Packets queued for the writer thread, as c63-enc's. */
#define WRITE_QUEUE 8

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

void *c63farm_ring_new(size_t frame_size, int depth)
{
  return frame_reader_new(frame_size, depth);
}

void c63farm_ring_free(void *ring)
{
  frame_reader_stop(ring);
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

int c63farm_encode_chunk(c63_encoder *enc, void *ring, int width, int height, int in_fd,
                         int64_t offset, long frames, int readers, int out_fd, uint64_t *bytes,
                         char *msg, size_t msg_size)
{
  chunk c = {0, 0, msg, msg_size};
  cli_output out = {0};
  encode_loop loop = {0};
  size_t partial = 0;
  int read_errno = 0, ret = -1;
  frame_reader *reader = ring;
  FILE *in = stream_on(in_fd, offset, "rb");

  msg[0] = '\0';
  out.f = stream_on(out_fd, -1, "wb");
  out.path = "the chunk's output";
  if (!in || !out.f) {
    snprintf(msg, msg_size, "cannot open the chunk's files: %s", strerror(errno));
    goto done;
  }
  if (frame_reader_begin(reader, in, frames, readers) != 0) {
    snprintf(msg, msg_size, "cannot start the reading threads");
    goto done;
  }
  loop.enc = enc;
  loop.reader = reader;
  loop.out = &out;
  loop.prog = PROG;
  loop.width = width;
  loop.height = height;
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
