/* CUDA memory in c63cudaenc: a GstCudaContext shared with the other CUDA
 * elements of the pipeline (nvcodec's conventions), a CUDA buffer pool
 * proposed upstream, and pictures in CUDA memory handed to libc63 as
 * device pointers of that context, so a frame already on the GPU never
 * makes the trip through host memory. Built with gstreamer-cuda-1.0.
 *
 * Copyright (C) 2026 gst-c63 contributors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef GST_C63_ENC_CUDA_H
#define GST_C63_ENC_CUDA_H

#include "gstc63enc.h"

G_BEGIN_DECLS

/* The sink pad template's caps: CUDA memory first, then system memory;
 * I420 and NV12 in both. */
GstCaps *gst_c63_enc_cuda_sink_caps(void);

/* Find or make the context for the element's device (at start). */
gboolean gst_c63_enc_cuda_open(GstC63Enc *self);
void gst_c63_enc_cuda_close(GstC63Enc *self);
void gst_c63_enc_cuda_set_context(GstElement *element, GstContext *context);
/* Answer a context query; FALSE when it is not one for a CUDA context. */
gboolean gst_c63_enc_cuda_handle_query(GstC63Enc *self, GstQuery *query);

/* The context's CUcontext for c63_enc_params.cuda_context (NULL: none). */
void *gst_c63_enc_cuda_handle(GstC63Enc *self);

/* Propose a CUDA buffer pool when the caps are CUDA memory. Returns FALSE
 * for other caps (the caller proposes system memory). */
gboolean gst_c63_enc_cuda_propose_allocation(GstC63Enc *self, GstQuery *query);

/* Map a buffer of CUDA memory of our context for reading on the device:
 * the frame's plane pointers are then device pointers. FALSE (nothing
 * mapped) for any other memory, which the caller maps in host memory. */
gboolean gst_c63_enc_cuda_map(GstC63Enc *self, GstBuffer *buffer, const GstVideoInfo *info,
                              GstVideoFrame *frame);

G_END_DECLS

#endif /* GST_C63_ENC_CUDA_H */
