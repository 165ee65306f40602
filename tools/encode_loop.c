/* The encoding loop of c63-enc and c63-farm's workers (encode_loop.h).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "encode_loop.h"

#include <stdio.h>
#include <string.h>

/* Frames read ahead beyond one a reader thread. */
#define READ_AHEAD 4

int encode_loop_depth(const c63_encoder *enc, int readers)
{
  return readers + READ_AHEAD + c63_encoder_delay(enc) + 1;
}

int encode_loop_page_locked(const c63_encoder *enc)
{
  return strcmp(c63_encoder_backend_name(enc), "cuda") == 0;
}

static int encoding_failed(encode_loop *l)
{
  char why[512];
  snprintf(why, sizeof why, "encoding failed: %s", c63_encoder_error(l->enc));
  l->failed(l->ctx, why);
  return 1;
}

/* Write one packet: queued for the writer thread, or written here.
 * Returns 0, or -1 after a message. */
static int write_packet(encode_loop *l, const c63_packet *pkt)
{
  if (!l->writer) return cli_output_write(l->out, l->prog, pkt->data, pkt->size);
  uint8_t *dst = frame_writer_buffer(l->writer, pkt->size);
  if (!dst) return -1;
  memcpy(dst, pkt->data, pkt->size);
  return frame_writer_queue(l->writer, pkt->size);
}

/* Write every packet the encoder has ready. Returns 0, or 1 on failure. */
static int drain_packets(encode_loop *l, int *eof)
{
  for (;;) {
    c63_packet pkt;
    int ret = c63_encoder_receive_packet(l->enc, &pkt);

    if (ret == C63_ERR_AGAIN) return 0;
    if (ret == C63_ERR_EOF) {
      *eof = 1;
      return 0;
    }
    if (ret != C63_OK) return encoding_failed(l);
    frame_reader_release(l->reader); /* the encoder reads its picture no more */
    if (write_packet(l, &pkt) != 0) return 1;
    if (l->packet) l->packet(l->ctx, &pkt);
  }
}

/* Send one picture (or NULL to drain), receiving packets while the encoder
 * asks for that first. */
static int send_picture(encode_loop *l, const c63_picture *pic, int *eof)
{
  for (;;) {
    int ret = c63_encoder_send_picture_borrowed(l->enc, pic);
    if (ret == C63_OK) break;
    if (ret != C63_ERR_AGAIN) return encoding_failed(l);
    if (drain_packets(l, eof) != 0) return 1;
  }
  return drain_packets(l, eof);
}

int encode_loop_frames(encode_loop *l, size_t *partial, int *read_errno)
{
  const int cw = c63_chroma_size(l->width), ch = c63_chroma_size(l->height);
  const size_t ysize = (size_t)l->width * (size_t)l->height;
  int eof = 0;

  for (long n = 0;; n++) {
    c63_picture pic;
    const uint8_t *frame = frame_reader_next(l->reader, partial, read_errno);

    if (frame == NULL) return 0;
    memset(&pic, 0, sizeof pic);
    pic.data[0] = frame;
    pic.data[1] = frame + ysize;
    pic.data[2] = frame + ysize + (size_t)cw * (size_t)ch;
    pic.stride[0] = l->width;
    pic.stride[1] = pic.stride[2] = cw;
    pic.user = n;
    pic.force_keyframe = l->keyframe_first && n == 0;
    if (send_picture(l, &pic, &eof) != 0) return 1;
  }
}

int encode_loop_drain(encode_loop *l)
{
  int eof = 0;
  if (send_picture(l, NULL, &eof) != 0) return 1;
  /* everything must come out, up to the end marker */
  if (eof) return 0;
  l->failed(l->ctx, "the encoder did not finish draining");
  return 1;
}
