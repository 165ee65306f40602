/* The gst-check element tests' harness, built on the tests' common helpers
 * (tests/tutil.h: the manifest, test data paths): the vectors as GLib
 * values, frame splitting, hashing decoded video, running pipelines,
 * synthetic pictures.
 *
 * Copyright (C) 2026 gst-c63 contributors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef C63CHECK_H
#define C63CHECK_H

#include <gst/gst.h>
#include <gst/video/video.h>

G_BEGIN_DECLS

/* One row of tests/data/conformance/MANIFEST.tsv. */
typedef struct {
  gchar *stream; /* absolute path of the .c63 file */
  gchar *input;  /* absolute path of the decompressed .yuv file (build tree) */
  gchar *name;   /* stream file name, for messages */
  gint width, height, frames, quality, keyframe_interval, search_range;
  gchar *stream_sha256, *decoded_sha256;
} C63Vector;

/* All conformance vectors; the array is owned by the helper. */
const GPtrArray *c63check_vectors(void);
const C63Vector *c63check_vector(const gchar *stream_name);

/* A whole file, or fails the test. */
GBytes *c63check_read_file(const gchar *path);

/* Split a Codec63 stream into its frames (GBytes each), or fail the test. */
GPtrArray *c63check_split_frames(GBytes *stream);

/* Concatenate frames [first, last) of a split stream. */
GBytes *c63check_join_frames(GPtrArray *frames, guint first, guint last);

/* Feed the visible pixels of an I420 buffer into a checksum, row by row,
 * whatever the strides: the layout the conformance SHA-256 sums use. */
void c63check_hash_video(GChecksum *sum, const GstVideoInfo *info, GstBuffer *buf);

/* SHA-256 (hex) of one decoded picture. */
gchar *c63check_picture_sha256(const GstVideoInfo *info, GstBuffer *buf);

/* What c63check_run() saw at the sink named "sink" (a fakesink). */
typedef struct {
  gboolean eos;        /* ended with EOS (else with an error) */
  gchar *error;        /* the error message, if any */
  guint warnings;      /* warning messages posted */
  guint buffers;       /* buffers that reached the sink */
  GByteArray *bytes;   /* their concatenated bytes (non-raw media) */
  GChecksum *video;    /* SHA-256 of the visible pixels (raw video) */
  GPtrArray *pictures; /* SHA-256 hex of each picture (raw video) */
  GPtrArray *caps;     /* distinct caps seen, as strings, in order */
} C63Run;

/* Run a gst-launch description to EOS or error (a timeout fails the test). */
void c63check_run(const gchar *description, C63Run *run);
void c63check_run_clear(C63Run *run);

/* A synthetic I420 picture of w x h, different for every n (moving
 * gradient and texture). With pad > 0 each row gets pad extra bytes and
 * every plane starts pad * 3 bytes after the previous one, described by a
 * GstVideoMeta; with pad == 0 the buffer is tightly packed like GstVideoInfo. */
GstBuffer *c63check_picture(gint w, gint h, guint n, gint pad);

/* Fields of a coded frame's header, or fail the test. */
void c63check_frame_info(GstBuffer *coded, gint *width, gint *height, gboolean *keyframe,
                         guint8 *luma_quant0);

/* Pop the error message that must be on bus and check its domain, code
 * and that its text contains text. */
void c63check_expect_error(GstBus *bus, GQuark domain, gint code, const gchar *text);

/* An allocator that never has memory, as under memory pressure: every
 * allocation returns NULL. (transfer full, floating) */
GstAllocator *c63check_failing_allocator_new(void);

G_END_DECLS

#endif /* C63CHECK_H */
