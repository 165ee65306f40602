/* Page-locking of upstream memory that comes back (gstc63memoryregistry.h).
 *
 * Copyright (C) 2026 gst-c63 contributors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A memory's state is qdata on its root GstMemory (the parent of a share,
 * since shares of one block come and go while the block stays): seen once,
 * with the timestamp of the picture it held; registered, with the block's
 * address; or failed, when it cannot be registered. The state's destroy
 * notify unregisters, and GStreamer calls a mini object's qdata notifies
 * before its free function, so the pages are unpinned before the block goes
 * back to the allocator, and an address that malloc hands out again is
 * never taken for registered memory. Pool memory comes back with its state
 * and another picture; filesrc's fresh blocks are seen once each, and a
 * buffer that a tee hands to several encoders comes to each with the same
 * picture, which is not a second one.
 */
#include "gstc63memoryregistry.h"

#include "c63/c63.h"

GST_DEBUG_CATEGORY_STATIC(gst_c63_memory_registry_debug);
#define GST_CAT_DEFAULT gst_c63_memory_registry_debug

typedef enum { MEMORY_SEEN, MEMORY_REGISTERED, MEMORY_FAILED } GstC63MemoryKind;

typedef struct {
  GstC63MemoryKind kind;
  GstClockTime pts; /* of the first picture seen in the memory */
  guint8 *base;     /* registered: the block's address */
} GstC63MemoryState;

/* The check and the change of a memory's state are one step, so two
 * encoders that see one memory at once (after a tee) register it once. */
static GMutex lock;

static GQuark gst_c63_memory_registry_quark(void)
{
  static gsize once = 0;
  static GQuark quark;

  if (g_once_init_enter(&once)) {
    GST_DEBUG_CATEGORY_INIT(gst_c63_memory_registry_debug, "c63memoryregistry", 0,
                            "page-locking of recurring upstream memory for c63cudaenc");
    quark = g_quark_from_static_string("GstC63MemoryState");
    g_once_init_leave(&once, 1);
  }
  return quark;
}

static void gst_c63_memory_state_free(gpointer data)
{
  GstC63MemoryState *state = data;

  if (state->kind == MEMORY_REGISTERED) c63_picture_memory_unregister(state->base);
  g_free(state);
}

/* Register root's whole block into state. Called with lock held. */
static void gst_c63_memory_register(GstMemory *root, GstC63MemoryState *state)
{
  GstMapInfo map;
  char msg[256] = "";
  guint8 *base;

  state->kind = MEMORY_FAILED;
  if (!gst_memory_map(root, &map, GST_MAP_READ)) return;
  base = map.data - root->offset;
  gst_memory_unmap(root, &map);
  if (c63_picture_memory_register(base, root->maxsize, msg, sizeof msg) != C63_OK) {
    GST_DEBUG("memory %p (%" G_GSIZE_FORMAT " bytes) stays staged: %s", root, root->maxsize, msg);
    return;
  }
  state->kind = MEMORY_REGISTERED;
  state->base = base;
  GST_DEBUG("memory %p (%" G_GSIZE_FORMAT " bytes at %p) registered", root, root->maxsize, base);
}

/* Whether a picture of timestamp pts is another than the one first seen in
 * state's memory. Without timestamps every sighting counts as another. */
static gboolean gst_c63_memory_another_picture(const GstC63MemoryState *state, GstClockTime pts)
{
  return !GST_CLOCK_TIME_IS_VALID(pts) || !GST_CLOCK_TIME_IS_VALID(state->pts) || pts != state->pts;
}

void gst_c63_memory_register_recurring(GstBuffer *buffer)
{
  const GQuark quark = gst_c63_memory_registry_quark();
  const GstClockTime pts = GST_BUFFER_PTS(buffer);
  guint i, n = gst_buffer_n_memory(buffer);

  for (i = 0; i < n; i++) {
    GstMemory *mem = gst_buffer_peek_memory(buffer, i);
    GstMemory *root = mem->parent ? mem->parent : mem;
    GstMiniObject *obj = GST_MINI_OBJECT_CAST(root);
    GstC63MemoryState *state;

    /* Plain host memory only: other allocators' memory is page-locked
     * already (c63pinnedallocator), on the device, or mapped from a
     * driver, which page-locking must not touch. */
    if (!gst_memory_is_type(root, GST_ALLOCATOR_SYSMEM)) continue;
    g_mutex_lock(&lock);
    state = gst_mini_object_get_qdata(obj, quark);
    if (!state) {
      state = g_new0(GstC63MemoryState, 1);
      state->kind = MEMORY_SEEN;
      state->pts = pts;
      gst_mini_object_set_qdata(obj, quark, state, gst_c63_memory_state_free);
    } else if (state->kind == MEMORY_SEEN && gst_c63_memory_another_picture(state, pts)) {
      gst_c63_memory_register(root, state);
    }
    g_mutex_unlock(&lock);
  }
}
