/* CUDA memory in c63cudaenc (see gstc63enccuda.h).
 *
 * Copyright (C) 2026 gst-c63 contributors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * GStreamer 1.22's CUDA memory carries no stream: producers (cudaupload,
 * nvh264dec, cudaconvert) finish their work on it before they push, so a
 * mapped picture is complete and libc63's copy engine reads it at once.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/cuda/gstcudabufferpool.h>
#include <gst/cuda/gstcudacontext.h>
#include <gst/cuda/gstcudamemory.h>
#include <gst/cuda/gstcudautils.h>

#include "gstc63enccuda.h"

GST_DEBUG_CATEGORY_EXTERN(gst_c63_enc_debug);
#define GST_CAT_DEFAULT gst_c63_enc_debug

#define FORMATS "{ I420, NV12 }"
#define SIZES "width = (int) [ 8, 8192 ], height = (int) [ 8, 8192 ]"

GstCaps *gst_c63_enc_cuda_sink_caps(void)
{
  return gst_caps_from_string("video/x-raw(" GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY
                              "), format = (string) " FORMATS ", " SIZES "; "
                              "video/x-raw, format = (string) " FORMATS ", " SIZES);
}

static GstCudaContext **context_slot(GstC63Enc *self)
{
  return (GstCudaContext **)&self->cuda_ctx;
}

gboolean gst_c63_enc_cuda_open(GstC63Enc *self)
{
  gint device_id;

  GST_OBJECT_LOCK(self);
  device_id = self->device_id;
  GST_OBJECT_UNLOCK(self);
  if (!gst_cuda_ensure_element_context(GST_ELEMENT(self), device_id, context_slot(self))) {
    GST_ELEMENT_ERROR(self, RESOURCE, NOT_FOUND,
                      ("No usable CUDA device (cuda-device-id %d) for a CUDA context", device_id),
                      ("gst_cuda_ensure_element_context failed"));
    return FALSE;
  }
  GST_INFO_OBJECT(self, "CUDA context %" GST_PTR_FORMAT, self->cuda_ctx);
  return TRUE;
}

void gst_c63_enc_cuda_close(GstC63Enc *self)
{
  gst_clear_object(context_slot(self));
}

void gst_c63_enc_cuda_set_context(GstElement *element, GstContext *context)
{
  GstC63Enc *self = GST_C63_ENC(element);
  gint device_id;

  GST_OBJECT_LOCK(self);
  device_id = self->device_id;
  GST_OBJECT_UNLOCK(self);
  gst_cuda_handle_set_context(element, context, device_id, context_slot(self));
}

gboolean gst_c63_enc_cuda_handle_query(GstC63Enc *self, GstQuery *query)
{
  if (GST_QUERY_TYPE(query) != GST_QUERY_CONTEXT) return FALSE;
  return gst_cuda_handle_context_query(GST_ELEMENT(self), query, *context_slot(self));
}

void *gst_c63_enc_cuda_handle(GstC63Enc *self)
{
  GstCudaContext *ctx = *context_slot(self);
  return ctx ? gst_cuda_context_get_handle(ctx) : NULL;
}

gboolean gst_c63_enc_cuda_propose_allocation(GstC63Enc *self, GstQuery *query)
{
  GstCaps *caps = NULL;
  GstCapsFeatures *features;
  GstVideoInfo info;
  GstBufferPool *pool;
  GstStructure *config;
  gboolean need_pool = FALSE;

  gst_query_parse_allocation(query, &caps, &need_pool);
  if (!caps || gst_caps_is_empty(caps)) return FALSE;
  features = gst_caps_get_features(caps, 0);
  if (!features || !gst_caps_features_contains(features, GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY))
    return FALSE;
  if (!gst_video_info_from_caps(&info, caps) || !*context_slot(self)) return TRUE;
  if (gst_query_get_n_allocation_pools(query) == 0) {
    pool = gst_cuda_buffer_pool_new(*context_slot(self));
    config = gst_buffer_pool_get_config(pool);
    gst_buffer_pool_config_add_option(config, GST_BUFFER_POOL_OPTION_VIDEO_META);
    gst_buffer_pool_config_set_params(config, caps, GST_VIDEO_INFO_SIZE(&info), 0, 0);
    if (gst_buffer_pool_set_config(pool, config)) {
      /* the pool may have changed the size (pitched rows) */
      config = gst_buffer_pool_get_config(pool);
      guint size = GST_VIDEO_INFO_SIZE(&info);
      gst_buffer_pool_config_get_params(config, NULL, &size, NULL, NULL);
      gst_structure_free(config);
      gst_query_add_allocation_pool(query, pool, size, 0, 0);
    } else {
      GST_WARNING_OBJECT(self, "the CUDA buffer pool rejected its configuration");
    }
    gst_object_unref(pool);
  }
  gst_query_add_allocation_meta(query, GST_VIDEO_META_API_TYPE, NULL);
  return TRUE;
}

gboolean gst_c63_enc_cuda_map(GstC63Enc *self, GstBuffer *buffer, const GstVideoInfo *info,
                              GstVideoFrame *frame)
{
  GstCudaContext *ctx = *context_slot(self);
  guint i, n = gst_buffer_n_memory(buffer);

  if (!ctx || n == 0) return FALSE;
  /* Device pointers of another context (another GPU) are not ours to read:
   * such memory is mapped in host memory instead (GStreamer downloads it). */
  for (i = 0; i < n; i++) {
    GstMemory *mem = gst_buffer_peek_memory(buffer, i);
    if (!gst_is_cuda_memory(mem) || GST_CUDA_MEMORY_CAST(mem)->context != ctx) return FALSE;
  }
  if (!gst_video_frame_map(frame, info, buffer, GST_MAP_READ | GST_MAP_CUDA)) {
    GST_DEBUG_OBJECT(self, "CUDA memory would not map on the device");
    return FALSE;
  }
  return TRUE;
}
