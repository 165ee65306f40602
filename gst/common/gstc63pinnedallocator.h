/* A GstAllocator of picture memory that the CUDA backend reads and writes
 * by DMA without a staging copy (libc63's c63_picture_memory_alloc).
 *
 * Copyright (C) 2026 gst-c63 contributors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef GST_C63_PINNED_ALLOCATOR_H
#define GST_C63_PINNED_ALLOCATOR_H

#include <gst/gst.h>

G_BEGIN_DECLS

#define GST_C63_PINNED_MEMORY_TYPE "C63PinnedMemory"

#define GST_TYPE_C63_PINNED_ALLOCATOR (gst_c63_pinned_allocator_get_type())
G_DECLARE_FINAL_TYPE(GstC63PinnedAllocator, gst_c63_pinned_allocator, GST, C63_PINNED_ALLOCATOR,
                     GstAllocator)

/* The process-wide instance (transfer full). */
GstAllocator *gst_c63_pinned_allocator_get(void);

G_END_DECLS

#endif
