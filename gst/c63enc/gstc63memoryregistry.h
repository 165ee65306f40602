/* Page-locking of upstream memory that comes back again and again, for
 * c63cudaenc: libc63's registrations (c63_picture_memory_register) kept on
 * the GstMemory they are of.
 *
 * Copyright (C) 2026 gst-c63 contributors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef GST_C63_MEMORY_REGISTRY_H
#define GST_C63_MEMORY_REGISTRY_H

#include <gst/gst.h>

G_BEGIN_DECLS

/* Where the memory a picture is in comes back: register it, so the CUDA
 * backend uploads it by DMA straight from there. Each system memory of
 * buffer (its parent's, for a share) is marked when first seen and
 * registered when seen again with another picture (another timestamp); the
 * registration lives as long as the memory and ends before the memory is
 * freed. Memory seen once (a fresh allocation a frame, as filesrc's, even
 * when a tee hands it to several encoders) is only marked, and the backend
 * copies it into its staging. Thread-safe: encoders in one process share
 * the registrations. */
void gst_c63_memory_register_recurring(GstBuffer *buffer);

G_END_DECLS

#endif
