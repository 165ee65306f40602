/* c63parse: splits a Codec63 byte stream into frames.
 *
 * Copyright (C) 2026 gst-c63 contributors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef GST_C63_PARSE_H
#define GST_C63_PARSE_H

#include <gst/base/gstbaseparse.h>
#include <gst/gst.h>

#include "c63/c63.h"
#include "gstc63indexer.h"

G_BEGIN_DECLS

#define GST_TYPE_C63_PARSE (gst_c63_parse_get_type())
G_DECLARE_FINAL_TYPE(GstC63Parse, gst_c63_parse, GST, C63_PARSE, GstBaseParse)

struct _GstC63Parse {
  GstBaseParse parent;

  c63_frame_scanner scanner; /* the frame under way at the adapter's front */
  gint width, height;        /* of the caps set downstream (0: none yet) */
  gint fps_n, fps_d;         /* in use: upstream caps, else the property */
  gint prop_fps_n, prop_fps_d;
  gboolean upstream_fps; /* the framerate came from upstream caps */
  gint64 upstream_size;  /* bytes, 0: unknown (not asked yet: -1) */
  GstClockTime duration; /* last duration set (estimated in push mode) */
  GArray *keyframes;     /* push mode: times of the keyframes seen, ascending (object lock) */

  /* Pull mode: every frame of the stream, indexed ahead of the frames
   * pushed by a thread of its own; timestamps, frame sizes and seeks go by
   * it. */
  GstC63Indexer indexer;
  gboolean pulled_caps; /* pull mode: upstream's caps were asked for */
  /* Push mode: the number of the next frame, -1 when it is to be taken
   * from the time GstBaseParse gives it (after a segment: a seek). */
  gint64 next_frame;
  GstPadActivateFunction parent_sink_activate; /* GstBaseParse's */
};

GST_ELEMENT_REGISTER_DECLARE(c63parse);

G_END_DECLS

#endif /* GST_C63_PARSE_H */
