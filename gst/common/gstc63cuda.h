/* GStreamer's CUDA memory for the c63 elements: a GstCudaContext shared
 * with the pipeline's other CUDA elements (nvcodec's conventions: the
 * context query and set_context, made at open when nobody has one), CUDA
 * buffer pools, and buffers of CUDA memory mapped as device pointers of
 * that context, which libc63 reads and writes in place. Built with
 * gstreamer-cuda-1.0 (HAVE_GST_CUDA).
 *
 * Copyright (C) 2026 gst-c63 contributors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef GST_C63_CUDA_H
#define GST_C63_CUDA_H

#include <gst/gst.h>
#include <gst/video/video.h>

G_BEGIN_DECLS

/* The caps feature of CUDA memory. */
#define GST_C63_CAPS_FEATURE_CUDA "memory:CUDAMemory"

/* *ctx: the element's GstCudaContext (a GstObject, NULL when none). */
gboolean gst_c63_cuda_open(GstElement *element, gint device_id, GstObject **ctx);
void gst_c63_cuda_set_context(GstElement *element, GstContext *context, gint device_id,
                              GstObject **ctx);
/* Answer a context query; FALSE when it is not one for a CUDA context. */
gboolean gst_c63_cuda_handle_query(GstElement *element, GstQuery *query, GstObject *ctx);
/* The context's CUcontext, for libc63's cuda_context (NULL: none). */
void *gst_c63_cuda_handle(GstObject *ctx);

/* Whether the first structure of caps is CUDA memory. */
gboolean gst_c63_cuda_caps_are_cuda(GstCaps *caps);
/* A CUDA buffer pool of ctx configured for caps (with GstVideoMeta);
 * *size: its buffer size. NULL when it refuses the configuration. */
GstBufferPool *gst_c63_cuda_pool_new(GstObject *ctx, GstCaps *caps, guint *size);
/* Map a buffer whose memory is all CUDA memory of ctx on the device
 * (plane pointers are then device pointers); FALSE (nothing mapped) for
 * any other buffer. flags: GST_MAP_READ or GST_MAP_WRITE. */
gboolean gst_c63_cuda_map(GstObject *ctx, GstBuffer *buffer, const GstVideoInfo *info,
                          GstVideoFrame *frame, GstMapFlags flags);

G_END_DECLS

#endif /* GST_C63_CUDA_H */
