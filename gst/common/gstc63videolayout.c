/* Picture layouts checked against their memory (see gstc63videolayout.h).
 *
 * Copyright (C) 2026 gst-c63 contributors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstc63videolayout.h"

gboolean gst_c63_video_layout_check_meta(const GstVideoInfo *info, GstBuffer *buffer, gchar **why)
{
  GstVideoMeta *meta = gst_buffer_get_video_meta(buffer);
  gsize size = gst_buffer_get_size(buffer);
  guint p;

  /* Without a meta gst_video_frame_map() lays the planes out from info
   * and checks the buffer's size itself. */
  if (!meta) return TRUE;
  if (meta->format != GST_VIDEO_INFO_FORMAT(info)) {
    *why = g_strdup_printf("its video meta says format %s, the caps %s",
                           gst_video_format_to_string(meta->format),
                           gst_video_format_to_string(GST_VIDEO_INFO_FORMAT(info)));
    return FALSE;
  }
  if (meta->n_planes != GST_VIDEO_INFO_N_PLANES(info)) {
    *why = g_strdup_printf("its video meta has %u planes, %s has %u", meta->n_planes,
                           GST_VIDEO_INFO_NAME(info), GST_VIDEO_INFO_N_PLANES(info));
    return FALSE;
  }
  if (meta->width < (guint)GST_VIDEO_INFO_WIDTH(info) ||
      meta->height < (guint)GST_VIDEO_INFO_HEIGHT(info)) {
    *why = g_strdup_printf("its video meta is %ux%u, smaller than the caps' %dx%d", meta->width,
                           meta->height, GST_VIDEO_INFO_WIDTH(info), GST_VIDEO_INFO_HEIGHT(info));
    return FALSE;
  }
  for (p = 0; p < meta->n_planes; p++) {
    if (meta->offset[p] >= size) {
      *why = g_strdup_printf("plane %u starts at byte %" G_GSIZE_FORMAT
                             " (video meta offset) of a buffer of %" G_GSIZE_FORMAT " bytes",
                             p, meta->offset[p], size);
      return FALSE;
    }
  }
  return TRUE;
}

gboolean gst_c63_video_layout_check_frame(const GstVideoInfo *info, const GstVideoFrame *frame,
                                          gchar **why)
{
  guint p;

  for (p = 0; p < GST_VIDEO_INFO_N_PLANES(info); p++) {
    gint comp[GST_VIDEO_MAX_COMPONENTS];
    /* With a meta each plane has the map of the memory holding it,
     * without one all planes lie in map[0] (the whole buffer). */
    const GstMapInfo *map = frame->meta ? &frame->map[p] : &frame->map[0];
    guintptr base = (guintptr)map->data, start = (guintptr)GST_VIDEO_FRAME_PLANE_DATA(frame, p);
    gint stride = GST_VIDEO_FRAME_PLANE_STRIDE(frame, p);
    guint64 row, rows, need, avail;

    gst_video_format_info_component(info->finfo, p, comp);
    /* Widths and heights are at most 8192 and strides below 2^31: the
     * products fit in 64 bits. */
    row = (guint64)GST_VIDEO_INFO_COMP_WIDTH(info, comp[0]) *
          GST_VIDEO_INFO_COMP_PSTRIDE(info, comp[0]);
    rows = (guint64)GST_VIDEO_INFO_COMP_HEIGHT(info, comp[0]);
    if (stride < 0 || (guint64)stride < row) {
      *why = g_strdup_printf(
          "plane %u has a stride of %d bytes, less than its row of %" G_GUINT64_FORMAT " bytes", p,
          stride, row);
      return FALSE;
    }
    if (start < base || start - base > map->size) {
      *why = g_strdup_printf("plane %u starts outside the memory mapped for it", p);
      return FALSE;
    }
    avail = map->size - (start - base);
    need = (guint64)stride * (rows - 1) + row;
    if (need > avail) {
      *why = g_strdup_printf("plane %u needs %" G_GUINT64_FORMAT " bytes (%" G_GUINT64_FORMAT
                             " rows of stride %d) but its memory holds %" G_GUINT64_FORMAT
                             " from the plane's start",
                             p, need, rows, stride, avail);
      return FALSE;
    }
  }
  return TRUE;
}
