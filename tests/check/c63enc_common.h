/* Encoder element tests shared by c63enc and c63cudaenc: each takes the
 * element's factory name, so the CUDA element is held to the same rules.
 *
 * Copyright (C) 2026 gst-c63 contributors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef C63ENC_COMMON_H
#define C63ENC_COMMON_H

#include <glib.h>
#include <gst/check/gstharness.h>

#include "c63/c63.h"

G_BEGIN_DECLS

void c63check_enc_caps(const gchar *element);
void c63check_enc_no_framerate(const gchar *element);
void c63check_enc_flags_timestamps(const gchar *element);
void c63check_enc_keyframe_interval_edges(const gchar *element);
void c63check_enc_quality_mid_stream(const gchar *element);
void c63check_enc_keyframe_interval_mid_stream(const gchar *element);
void c63check_enc_force_key_unit(const gchar *element);
void c63check_enc_eos_drain(const gchar *element);
void c63check_enc_size_change(const gchar *element);
void c63check_enc_strided_input(const gchar *element);
void c63check_enc_allocation(const gchar *element);
void c63check_enc_flush(const gchar *element);
/* Pictures in buffers of the pool the element proposes (of memory type
 * mem_type, when not NULL) give the same bytes as in plain buffers. */
void c63check_enc_pool_input(const gchar *element, const gchar *mem_type);
void c63check_enc_failing_allocator(const gchar *element);
void c63check_enc_bad_caps(const gchar *element);
void c63check_enc_latency(const gchar *element, c63_backend_kind backend);
/* Encoder tags (encoder, codec, version) and the threads property. */
void c63check_enc_tags_threads(const gchar *element);
/* The mode property: exact by default, changed in NULL or READY only; rd
 * streams decode and are smaller, on either backend. */
void c63check_enc_mode(const gchar *element);
/* rate-control abr lands within 10% of a bitrate, follows a bitrate set
 * while PLAYING, and refuses to start without one. */
void c63check_enc_rate_control(const gchar *element);
/* End the stream of the pictures pushed into hh and pull its frames coded
 * frames: their bytes, back to back. */
GByteArray *c63check_enc_pulled(GstHarness *hh, guint frames);
/* Every conformance vector through the element, byte for byte. */
void c63check_enc_conformance(const gchar *element, guint vector);

/* I420 and NV12 pictures through route (e.g. "! cudaupload ! ..." or "")
 * give the bytes of the same pictures in I420 system memory. */
void c63check_enc_formats(const gchar *element, const gchar *route);

G_END_DECLS

#endif /* C63ENC_COMMON_H */
