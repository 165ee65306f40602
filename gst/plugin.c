/* The c63 plugin: Codec63 encoders, parser, decoder and typefinder.
 *
 * Copyright (C) 2026 gst-c63 contributors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/gst.h>
#ifdef HAVE_GST_CUDA
#include <gst/cuda/gstcudaloader.h>
#include <gst/cuda/gstcudamemory.h>
#endif

#include "c63enc/gstc63encbase.h"
#include "c63dec/gstc63dec.h"
#include "c63parse/gstc63parse.h"
#include "gstc63typefind.h"

GST_DEBUG_CATEGORY_STATIC(gst_c63_plugin_debug);
#define GST_CAT_DEFAULT gst_c63_plugin_debug

/* c63cudaenc exists only where a CUDA device is usable (the nvcodec
 * convention), so autoplugging never picks an encoder that cannot run. */
static gboolean plugin_register_cuda(GstPlugin *plugin)
{
  char msg[256] = "";

  /* The registry caches features; rescan when the visible devices change. */
  gst_plugin_add_dependency_simple(plugin, "CUDA_VISIBLE_DEVICES", "/dev", "nvidiactl",
                                   GST_PLUGIN_DEPENDENCY_FLAG_NONE);
  if (!c63_backend_available(C63_BACKEND_CUDA, 0, msg, sizeof msg)) {
    GST_INFO("c63cudaenc not registered: %s", msg[0] ? msg : "no CUDA device");
    return TRUE;
  }
#ifdef HAVE_GST_CUDA
  /* GStreamer's CUDA library (contexts, CUDA memory) loads the driver
   * itself; without it c63cudaenc cannot share CUDA memory. */
  if (!gst_cuda_load_library()) {
    GST_INFO("c63cudaenc not registered: GStreamer's CUDA library could not load the driver");
    return TRUE;
  }
  gst_cuda_memory_init_once(); /* the CUDA allocator, for our CUDA buffer pools */
#endif
  return gst_c63_enc_register(plugin, C63_BACKEND_CUDA, GST_RANK_PRIMARY + 1);
}

/* For static builds too: GST_ELEMENT_REGISTER(c63cudaenc, plugin) registers
 * it only where a CUDA device is usable. */
GST_ELEMENT_REGISTER_DEFINE_CUSTOM(c63cudaenc, plugin_register_cuda);

static gboolean plugin_init(GstPlugin *plugin)
{
  gboolean ok = TRUE;

  GST_DEBUG_CATEGORY_INIT(gst_c63_plugin_debug, "c63", 0, "Codec63 plugin");
  ok &= GST_ELEMENT_REGISTER(c63enc, plugin);
  ok &= GST_ELEMENT_REGISTER(c63cudaenc, plugin);
  ok &= GST_ELEMENT_REGISTER(c63dec, plugin);
  /* Ranked above c63dec, so decodebin puts it in front of the decoder. */
  ok &= GST_ELEMENT_REGISTER(c63parse, plugin);
  ok &= gst_c63_typefind_register(plugin);
  return ok;
}

GST_PLUGIN_DEFINE(
    GST_VERSION_MAJOR, GST_VERSION_MINOR, c63,
    "Codec63 (IN5050) video encoder and decoder, on the CPU and CUDA (c63cudaenc only "
    "where a CUDA device is usable: GST_DEBUG=c63:4 says why not)",
    plugin_init, PACKAGE_VERSION, "LGPL", "gst-c63", "https://github.com/gst-c63/gst-c63")
