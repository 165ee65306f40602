/* GstC63PinnedAllocator: page-locked picture memory from libc63, so the
 * GPU reads and writes buffers by DMA where they are: c63cudaenc's input
 * that upstream fills, c63dec's pictures for system memory.
 *
 * Copyright (C) 2026 gst-c63 contributors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>

#include "gstc63pinnedallocator.h"

#include "c63/c63.h"

GST_DEBUG_CATEGORY_STATIC(gst_c63_pinned_allocator_debug);
#define GST_CAT_DEFAULT gst_c63_pinned_allocator_debug

struct _GstC63PinnedAllocator {
  GstAllocator parent;
};

/* A block from c63_picture_memory_alloc, or a share of its parent's. */
typedef struct {
  GstMemory mem;
  guint8 *data;
} GstC63PinnedMemory;

G_DEFINE_TYPE(GstC63PinnedAllocator, gst_c63_pinned_allocator, GST_TYPE_ALLOCATOR)

static GstMemory *gst_c63_pinned_alloc(GstAllocator *allocator, gsize size,
                                       GstAllocationParams *params)
{
  /* The block is 64-byte aligned; a larger alignment is not offered. */
  const gsize maxsize = size + params->prefix + params->padding;
  GstC63PinnedMemory *m = g_new0(GstC63PinnedMemory, 1);

  m->data = c63_picture_memory_alloc(maxsize);
  if (!m->data) {
    GST_WARNING_OBJECT(allocator, "cannot allocate %" G_GSIZE_FORMAT " bytes", maxsize);
    g_free(m);
    return NULL;
  }
  gst_memory_init(GST_MEMORY_CAST(m), params->flags, allocator, NULL, maxsize, params->align & 63,
                  params->prefix, size);
  /* as GStreamer's system allocator: the block may be one freed before */
  if (params->prefix && (params->flags & GST_MEMORY_FLAG_ZERO_PREFIXED))
    memset(m->data, 0, params->prefix);
  if (params->padding && (params->flags & GST_MEMORY_FLAG_ZERO_PADDED))
    memset(m->data + params->prefix + size, 0, params->padding);
  return GST_MEMORY_CAST(m);
}

static void gst_c63_pinned_free(GstAllocator *allocator, GstMemory *mem)
{
  GstC63PinnedMemory *m = (GstC63PinnedMemory *)mem;

  (void)allocator;
  if (!mem->parent) c63_picture_memory_free(m->data);
  g_free(m);
}

static gpointer gst_c63_pinned_map(GstMemory *mem, gsize maxsize, GstMapFlags flags)
{
  (void)maxsize;
  (void)flags;
  return ((GstC63PinnedMemory *)mem)->data;
}

static void gst_c63_pinned_unmap(GstMemory *mem)
{
  (void)mem;
}

static GstMemory *gst_c63_pinned_share(GstMemory *mem, gssize offset, gssize size)
{
  GstMemory *parent = mem->parent ? mem->parent : mem;
  GstC63PinnedMemory *sub = g_new0(GstC63PinnedMemory, 1);

  if (size == -1) size = (gssize)mem->size - offset;
  sub->data = ((GstC63PinnedMemory *)mem)->data;
  gst_memory_init(
      GST_MEMORY_CAST(sub), GST_MINI_OBJECT_FLAGS(parent) | GST_MINI_OBJECT_FLAG_LOCK_READONLY,
      mem->allocator, parent, mem->maxsize, mem->align, mem->offset + offset, (gsize)size);
  return GST_MEMORY_CAST(sub);
}

static void gst_c63_pinned_allocator_class_init(GstC63PinnedAllocatorClass *klass)
{
  GstAllocatorClass *alloc_class = GST_ALLOCATOR_CLASS(klass);

  alloc_class->alloc = gst_c63_pinned_alloc;
  alloc_class->free = gst_c63_pinned_free;
  GST_DEBUG_CATEGORY_INIT(gst_c63_pinned_allocator_debug, "c63pinnedallocator", 0,
                          "page-locked picture memory for c63cudaenc and c63dec");
}

static void gst_c63_pinned_allocator_init(GstC63PinnedAllocator *self)
{
  GstAllocator *alloc = GST_ALLOCATOR_CAST(self);

  alloc->mem_type = GST_C63_PINNED_MEMORY_TYPE;
  alloc->mem_map = gst_c63_pinned_map;
  alloc->mem_unmap = gst_c63_pinned_unmap;
  alloc->mem_share = gst_c63_pinned_share;
  GST_OBJECT_FLAG_SET(self, GST_ALLOCATOR_FLAG_CUSTOM_ALLOC);
}

GstAllocator *gst_c63_pinned_allocator_get(void)
{
  static gsize once = 0;
  static GstAllocator *instance;

  if (g_once_init_enter(&once)) {
    instance = g_object_new(GST_TYPE_C63_PINNED_ALLOCATOR, NULL);
    /* held for the life of the process, like GStreamer's system allocator */
    gst_object_ref_sink(instance);
    GST_OBJECT_FLAG_SET(instance, GST_OBJECT_FLAG_MAY_BE_LEAKED);
    g_once_init_leave(&once, 1);
  }
  return gst_object_ref(instance);
}
