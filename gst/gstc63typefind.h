/* The video/x-c63 typefinder.
 *
 * Copyright (C) 2026 gst-c63 contributors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef GST_C63_TYPEFIND_H
#define GST_C63_TYPEFIND_H

#include <gst/gst.h>

G_BEGIN_DECLS

gboolean gst_c63_typefind_register(GstPlugin *plugin);

G_END_DECLS

#endif /* GST_C63_TYPEFIND_H */
