/* Bad picture layouts (GstVideoMeta strides, offsets, planes) pushed into
 * an encoder element: shared by c63enc and c63cudaenc.
 *
 * Copyright (C) 2026 gst-c63 contributors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef C63LAYOUT_COMMON_H
#define C63LAYOUT_COMMON_H

#include <glib.h>

G_BEGIN_DECLS

/* Every layout of c63check_bad_layouts, in its own harness: the push
 * returns GST_FLOW_ERROR and a stream-format error naming the fault is on
 * the bus (no crash, no read past the buffer). */
void c63check_enc_bad_layouts(const gchar *element);

G_END_DECLS

#endif /* C63LAYOUT_COMMON_H */
