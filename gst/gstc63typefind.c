/* The video/x-c63 typefinder (see gstc63typefind.h).
 *
 * Copyright (C) 2026 gst-c63 contributors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A Codec63 frame starts like a baseline JPEG (FF D8 FF DB), so the JPEG
 * typefinder claims .c63 files too, with POSSIBLE or LIKELY. The Codec63
 * headers are fixed byte for byte apart from the quantiser values, the size
 * and the keyframe flag (c63-format.md section 2), so matching all of them
 * up to the DHT marker is proof enough for GST_TYPE_FIND_MAXIMUM, which no
 * JPEG typefinder result reaches for these bytes.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "gstc63typefind.h"

#include "c63/c63.h"

/* Offsets in the fixed header. */
#define DQT_OFFSET 2
#define DQT_BYTES (4 + 3 * 65)
#define SOF_OFFSET (DQT_OFFSET + DQT_BYTES)
#define SOF_BYTES (4 + 16)
#define DHT_OFFSET (SOF_OFFSET + SOF_BYTES)
#define PEEK_BYTES (DHT_OFFSET + 4)

static GstStaticCaps c63_caps = GST_STATIC_CAPS("video/x-c63");

static gboolean gst_c63_typefind_dqt(const guint8 *d)
{
  static const guint8 head[] = {0xff, 0xd8, 0xff, 0xdb, 0x00, 0xc3};
  int t, i;

  if (memcmp(d, head, sizeof head) != 0) return FALSE;
  for (t = 0; t < 3; t++) {
    const guint8 *table = d + DQT_OFFSET + 4 + t * 65;

    if (table[0] != t) return FALSE;
    for (i = 1; i <= 64; i++) /* a zero divisor is never written */
      if (table[i] == 0) return FALSE;
  }
  return TRUE;
}

static gboolean gst_c63_typefind_sof(const guint8 *d, int *width, int *height)
{
  static const guint8 head[] = {0xff, 0xc0, 0x00, 0x12, 0x08};
  static const guint8 components[] = {0x03, 0x01, 0x22, 0x00, 0x02, 0x11, 0x01, 0x03, 0x11, 0x02};
  const guint8 *s = d + SOF_OFFSET;

  if (memcmp(s, head, sizeof head) != 0 || memcmp(s + 9, components, sizeof components) != 0)
    return FALSE;
  *height = GST_READ_UINT16_BE(s + 5);
  *width = GST_READ_UINT16_BE(s + 7);
  return *width >= C63_MIN_SIZE && *width <= C63_MAX_SIZE && *height >= C63_MIN_SIZE &&
         *height <= C63_MAX_SIZE && s[19] <= 1; /* keyframe flag */
}

static void gst_c63_typefind(GstTypeFind *tf, G_GNUC_UNUSED gpointer user_data)
{
  static const guint8 dht[] = {0xff, 0xc4, 0x01, 0xa2};
  const guint8 *d = gst_type_find_peek(tf, 0, PEEK_BYTES);
  int width, height;

  if (!d || !gst_c63_typefind_dqt(d) || !gst_c63_typefind_sof(d, &width, &height) ||
      memcmp(d + DHT_OFFSET, dht, sizeof dht) != 0)
    return;
  gst_type_find_suggest_simple(tf, GST_TYPE_FIND_MAXIMUM, "video/x-c63", "width", G_TYPE_INT, width,
                               "height", G_TYPE_INT, height, NULL);
}

gboolean gst_c63_typefind_register(GstPlugin *plugin)
{
  /* Ranked above the JPEG typefinder (PRIMARY) so it is tried first. */
  return gst_type_find_register(plugin, "video/x-c63", GST_RANK_PRIMARY + 1, gst_c63_typefind,
                                "c63", gst_static_caps_get(&c63_caps), NULL, NULL);
}
