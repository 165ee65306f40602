/* Copies into memory that the CPU will not read again soon: a picture
 * copied into page-locked staging is read next by the GPU's DMA engines.
 * Stores that bypass the caches (non-temporal) neither read each
 * destination line first nor push out of the caches what the threads
 * beside the copy work on (the caller's next frame, the data a GStreamer
 * source reads into). The bytes are memcpy's.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef C63_STREAM_COPY_H
#define C63_STREAM_COPY_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* rows rows of width bytes, src_pitch and dst_pitch bytes apart, as
 * memcpy row by row would copy them, with non-temporal stores where the
 * CPU has them (x86-64: SSE2): one run where both are tight, and the
 * stores ordered once, before the function returns, not after every row. */
void c63_copy_streaming_rows(void *dst, size_t dst_pitch, const void *src, size_t src_pitch,
                             size_t width, size_t rows);

#ifdef __cplusplus
}
#endif

#endif /* C63_STREAM_COPY_H */
