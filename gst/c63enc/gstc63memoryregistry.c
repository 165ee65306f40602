/* Page-locking of upstream memory that comes back (gstc63memoryregistry.h).
 *
 * Copyright (C) 2026 gst-c63 contributors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A memory's state is qdata on its root GstMemory (the parent of a share,
 * since shares of one block come and go while the block stays): "seen" after
 * the first picture in it, "failed" when it cannot be registered, or the
 * registered address, whose destroy notify unregisters. GStreamer calls a
 * mini object's qdata notifies before its free function, so the pages are
 * unpinned before the block goes back to the allocator, and an address that
 * malloc hands out again is never taken for registered memory. Pool memory
 * comes back with its qdata; filesrc's fresh blocks are seen once each.
 */
#include "gstc63memoryregistry.h"

#include "c63/c63.h"

GST_DEBUG_CATEGORY_STATIC(gst_c63_memory_registry_debug);
#define GST_CAT_DEFAULT gst_c63_memory_registry_debug

/* Markers of the states that hold no registration. */
static const char seen_marker, failed_marker;
#define SEEN ((gpointer)&seen_marker)
#define FAILED ((gpointer)&failed_marker)

/* The check and the change of a memory's state are one step, so two
 * encoders that see one memory at once (after a tee) register it once. */
static GMutex lock;
static gint registrations;

static GQuark gst_c63_memory_registry_quark(void)
{
  static gsize once = 0;
  static GQuark quark;

  if (g_once_init_enter(&once)) {
    GST_DEBUG_CATEGORY_INIT(gst_c63_memory_registry_debug, "c63memoryregistry", 0,
                            "page-locking of recurring upstream memory for c63cudaenc");
    quark = g_quark_from_static_string("GstC63MemoryRegistration");
    g_once_init_leave(&once, 1);
  }
  return quark;
}

static void gst_c63_memory_unregister(gpointer base)
{
  c63_picture_memory_unregister(base);
  g_atomic_int_add(&registrations, -1);
}

/* Register root's whole block; its new state. Called with lock held. */
static gpointer gst_c63_memory_register(GstMemory *root)
{
  GstMapInfo map;
  char msg[256] = "";
  guint8 *base;

  if (!gst_memory_map(root, &map, GST_MAP_READ)) return FAILED;
  base = map.data - root->offset;
  gst_memory_unmap(root, &map);
  if (c63_picture_memory_register(base, root->maxsize, msg, sizeof msg) != C63_OK) {
    GST_DEBUG("memory %p (%" G_GSIZE_FORMAT " bytes) stays staged: %s", root, root->maxsize, msg);
    return FAILED;
  }
  g_atomic_int_inc(&registrations);
  GST_DEBUG("memory %p (%" G_GSIZE_FORMAT " bytes at %p) registered", root, root->maxsize, base);
  return base;
}

void gst_c63_memory_register_recurring(GstBuffer *buffer)
{
  const GQuark quark = gst_c63_memory_registry_quark();
  guint i, n = gst_buffer_n_memory(buffer);

  for (i = 0; i < n; i++) {
    GstMemory *mem = gst_buffer_peek_memory(buffer, i);
    GstMemory *root = mem->parent ? mem->parent : mem;
    GstMiniObject *obj = GST_MINI_OBJECT_CAST(root);
    gpointer state;

    /* Plain host memory only: other allocators' memory is page-locked
     * already (c63pinnedallocator), on the device, or mapped from a
     * driver, which page-locking must not touch. */
    if (!gst_memory_is_type(root, GST_ALLOCATOR_SYSMEM)) continue;
    g_mutex_lock(&lock);
    state = gst_mini_object_get_qdata(obj, quark);
    if (!state) {
      gst_mini_object_set_qdata(obj, quark, SEEN, NULL);
    } else if (state == SEEN) {
      state = gst_c63_memory_register(root);
      gst_mini_object_set_qdata(obj, quark, state,
                                state == FAILED ? NULL : gst_c63_memory_unregister);
    }
    g_mutex_unlock(&lock);
  }
}

guint gst_c63_memory_registrations(void)
{
  return (guint)g_atomic_int_get(&registrations);
}
