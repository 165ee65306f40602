/* GStreamer's CUDA memory for the c63 elements (see gstc63cuda.h).
 *
 * Copyright (C) 2026 gst-c63 contributors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * GStreamer 1.22's CUDA memory carries no stream: producers (cudaupload,
 * nvh264dec, cudaconvert) finish their work on it before they push, and
 * libc63 finishes its copies before it returns, so a mapped picture is
 * complete on either side.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/cuda/gstcudabufferpool.h>
#include <gst/cuda/gstcudacontext.h>
#include <gst/cuda/gstcudaloader.h>
#include <gst/cuda/gstcudamemory.h>
#include <gst/cuda/gstcudautils.h>

#include "c63/c63.h"
#include "gstc63cuda.h"

GST_DEBUG_CATEGORY_STATIC(gst_c63_cuda_debug);
#define GST_CAT_DEFAULT gst_c63_cuda_debug

static void init_debug(void)
{
  static gsize done = 0;
  if (g_once_init_enter(&done)) {
    GST_DEBUG_CATEGORY_INIT(gst_c63_cuda_debug, "c63cuda", 0, "c63 elements' CUDA memory");
    g_once_init_leave(&done, 1);
  }
}

gboolean gst_c63_cuda_open(GstElement *element, gint device_id, GstObject **ctx)
{
  init_debug();
  /* GStreamer's CUDA calls abort without a loaded driver */
  if (!gst_cuda_load_library()) {
    GST_ELEMENT_ERROR(element, RESOURCE, NOT_FOUND,
                      ("No usable CUDA driver for a CUDA context (cuda-device-id %d)", device_id),
                      ("gst_cuda_load_library failed"));
    return FALSE;
  }
  /* a device that is not there (a wrong cuda-device-id) is told apart from
   * one whose context cannot be made */
  char why[256] = "";
  if (c63_backend_available(C63_BACKEND_CUDA, device_id, why, sizeof why) != 1) {
    GST_ELEMENT_ERROR(element, RESOURCE, NOT_FOUND,
                      ("No usable CUDA device (cuda-device-id %d): %s. Check the driver, "
                       "CUDA_VISIBLE_DEVICES and the cuda-device-id property.",
                       device_id, why),
                      ("c63_backend_available failed"));
    return FALSE;
  }
  /* CUDA buffer pools need the allocator registered (nvcodec registers it
   * too, but a pipeline may hold no nvcodec element) */
  gst_cuda_memory_init_once();
  if (!gst_cuda_ensure_element_context(element, device_id, (GstCudaContext **)ctx)) {
    /* The device exists when the element was registered for it, so the
     * usual cause is a GPU whose memory is used up (a context takes some). */
    GST_ELEMENT_ERROR(element, RESOURCE, NO_SPACE_LEFT,
                      ("Could not create a CUDA context on cuda-device-id %d: the GPU's memory "
                       "may be used up, or the device is missing. Free GPU memory (fewer or "
                       "smaller encoders) or choose another cuda-device-id.",
                       device_id),
                      ("gst_cuda_ensure_element_context failed"));
    return FALSE;
  }
  GST_INFO_OBJECT(element, "CUDA context %" GST_PTR_FORMAT, *ctx);
  return TRUE;
}

void gst_c63_cuda_set_context(GstElement *element, GstContext *context, gint device_id,
                              GstObject **ctx)
{
  gst_cuda_handle_set_context(element, context, device_id, (GstCudaContext **)ctx);
}

gboolean gst_c63_cuda_handle_query(GstElement *element, GstQuery *query, GstObject *ctx)
{
  if (GST_QUERY_TYPE(query) != GST_QUERY_CONTEXT) return FALSE;
  return gst_cuda_handle_context_query(element, query, (GstCudaContext *)ctx);
}

void *gst_c63_cuda_handle(GstObject *ctx)
{
  return ctx ? gst_cuda_context_get_handle(GST_CUDA_CONTEXT(ctx)) : NULL;
}

gboolean gst_c63_cuda_caps_are_cuda(GstCaps *caps)
{
  GstCapsFeatures *features;

  if (!caps || gst_caps_is_empty(caps) || gst_caps_is_any(caps)) return FALSE;
  features = gst_caps_get_features(caps, 0);
  return features && gst_caps_features_contains(features, GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY);
}

GstBufferPool *gst_c63_cuda_pool_new(GstObject *ctx, GstCaps *caps, guint *size)
{
  GstVideoInfo info;
  GstBufferPool *pool;
  GstStructure *config;

  if (!ctx || !gst_video_info_from_caps(&info, caps)) return NULL;
  pool = gst_cuda_buffer_pool_new(GST_CUDA_CONTEXT(ctx));
  config = gst_buffer_pool_get_config(pool);
  gst_buffer_pool_config_add_option(config, GST_BUFFER_POOL_OPTION_VIDEO_META);
  gst_buffer_pool_config_set_params(config, caps, GST_VIDEO_INFO_SIZE(&info), 0, 0);
  if (!gst_buffer_pool_set_config(pool, config)) {
    GST_WARNING_OBJECT(pool, "the CUDA buffer pool rejected its configuration");
    gst_object_unref(pool);
    return NULL;
  }
  /* the pool may have changed the size (pitched rows) */
  config = gst_buffer_pool_get_config(pool);
  *size = GST_VIDEO_INFO_SIZE(&info);
  gst_buffer_pool_config_get_params(config, NULL, size, NULL, NULL);
  gst_structure_free(config);
  return pool;
}

gboolean gst_c63_cuda_map(GstObject *ctx, GstBuffer *buffer, const GstVideoInfo *info,
                          GstVideoFrame *frame, GstMapFlags flags)
{
  guint i, n = gst_buffer_n_memory(buffer);

  if (!ctx || n == 0) return FALSE;
  /* Device pointers of another context (another GPU) are not ours: such
   * memory is mapped in host memory instead (GStreamer copies it). */
  for (i = 0; i < n; i++) {
    GstMemory *mem = gst_buffer_peek_memory(buffer, i);
    if (!gst_is_cuda_memory(mem) || GST_CUDA_MEMORY_CAST(mem)->context != (GstCudaContext *)ctx)
      return FALSE;
  }
  return gst_video_frame_map(frame, info, buffer, flags | GST_MAP_CUDA);
}
