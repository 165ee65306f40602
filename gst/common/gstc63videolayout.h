/* Picture layouts from upstream (or from a downstream pool) checked
 * against the memory that holds them, before libc63 reads or writes it.
 *
 * Copyright (C) 2026 gst-c63 contributors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * gst_video_frame_map() trusts a GstVideoMeta: it maps the memory that
 * holds each plane's offset, but never checks that stride x rows fits in
 * it, and it g_return_if_fails (a critical, then a failed map) when the
 * meta's format, size or plane count disagrees with the caps. The
 * elements check a buffer in two steps, for system and CUDA memory alike:
 * the meta against the caps before mapping, and every plane of the mapped
 * frame against its mapped memory after.
 */
#ifndef GST_C63_VIDEO_LAYOUT_H
#define GST_C63_VIDEO_LAYOUT_H

#include <gst/gst.h>
#include <gst/video/video.h>

G_BEGIN_DECLS

/* Whether buffer's GstVideoMeta (if any) describes a picture of info:
 * the same format and plane count, at least info's width and height, and
 * every plane's offset inside the buffer. On FALSE *why (g_free it) says
 * what is wrong. */
gboolean gst_c63_video_layout_check_meta(const GstVideoInfo *info, GstBuffer *buffer, gchar **why);

/* Whether every plane of a mapped frame lies in the memory mapped for it:
 * stride >= the plane's row bytes of info, and the plane's start +
 * stride x (rows - 1) + row bytes within the map, computed without
 * overflow. On FALSE *why (g_free it) says what is wrong. */
gboolean gst_c63_video_layout_check_frame(const GstVideoInfo *info, const GstVideoFrame *frame,
                                          gchar **why);

G_END_DECLS

#endif /* GST_C63_VIDEO_LAYOUT_H */
