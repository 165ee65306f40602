/* The Codec63 encoders' abstract base class, GstC63EncBase, shared by c63enc
 * (CPU) and c63cudaenc.
 *
 * Copyright (C) 2026 gst-c63 contributors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * GstC63EncBase is abstract: it holds all element logic (caps, properties,
 * keyframes, draining, errors). gst_c63_enc_register() derives one concrete
 * type per libc63 backend, the way nvcodec registers one element per device
 * kind, so the CUDA element differs from the CPU one only in class data.
 */
#ifndef GST_C63_ENC_BASE_H
#define GST_C63_ENC_BASE_H

#include <gst/gst.h>
#include <gst/video/video.h>

#include "c63/c63.h"

G_BEGIN_DECLS

#define GST_TYPE_C63_ENC_BASE (gst_c63_enc_base_get_type())
#define GST_C63_ENC_BASE(obj)                                                                      \
  (G_TYPE_CHECK_INSTANCE_CAST((obj), GST_TYPE_C63_ENC_BASE, GstC63EncBase))
#define GST_C63_ENC_BASE_CLASS(klass)                                                              \
  (G_TYPE_CHECK_CLASS_CAST((klass), GST_TYPE_C63_ENC_BASE, GstC63EncBaseClass))
#define GST_C63_ENC_BASE_GET_CLASS(obj)                                                            \
  (G_TYPE_INSTANCE_GET_CLASS((obj), GST_TYPE_C63_ENC_BASE, GstC63EncBaseClass))

typedef struct _GstC63EncBase GstC63EncBase;
typedef struct _GstC63EncBaseClass GstC63EncBaseClass;

struct _GstC63EncBase {
  GstVideoEncoder parent;

  /* Properties, guarded by the object lock: they are set from the
   * application thread while the streaming thread encodes. */
  gint quality;
  guint changed; /* GST_C63_ENC_CHANGED_* of properties to apply before the next picture */
  gint keyframe_interval;
  gint search_range;
  gint device_id;
  gint threads;
  c63_enc_mode mode;             /* fixed while the element is above READY */
  c63_rate_control rate_control; /* fixed while the element is above READY */
  guint bitrate;                 /* kbit/s; changes apply from the next picture */
  guint buffer_ms;               /* the same */

  /* The CUDA element's GstCudaContext (gstc63cuda.h), shared with the
   * pipeline's other CUDA elements; set between start and stop. */
  gpointer cuda_ctx;

  /* Streaming thread only. */
  c63_encoder *enc;
  /* The pictures sent borrowed, mapped: libc63 may read each until its
   * packet, or its failure, is received. A ring of lent_cap frames, those
   * the encoder holds and the one mapped for the next send; lent_count
   * of them lent, the oldest at lent_head. */
  GstVideoFrame *lent;
  guint lent_cap, lent_head, lent_count;
  GstVideoCodecState *input_state;
  /* Rate control's reports already posted as warnings: the current
   * target out of reach, and frames over the current buffer (beyond
   * overflows_before, the count when the target or buffer last changed). */
  gboolean warned_reach, warned_overflow;
  gint64 overflows_before;
};

struct _GstC63EncBaseClass {
  GstVideoEncoderClass parent_class;

  c63_backend_kind backend; /* set by the concrete registered type */
  GstDebugCategory *debug;  /* the element's own debug category */
};

GType gst_c63_enc_base_get_type(void);

/* The GEnum of the mode property ("exact", "rd"). */
#define GST_TYPE_C63_ENC_MODE (gst_c63_enc_mode_get_type())
GType gst_c63_enc_mode_get_type(void);
#define GST_TYPE_C63_ENC_RATE_CONTROL (gst_c63_enc_rate_control_get_type())
GType gst_c63_enc_rate_control_get_type(void);

/* Register the encoder element for one backend: "c63enc" for
 * C63_BACKEND_CPU, "c63cudaenc" (with a cuda-device-id property) for
 * C63_BACKEND_CUDA. */
gboolean gst_c63_enc_register(GstPlugin *plugin, c63_backend_kind backend, guint rank);
/* c63enc, for GST_ELEMENT_REGISTER (c63cudaenc is registered in plugin.c,
 * where its device check lives). */
GST_ELEMENT_REGISTER_DECLARE(c63enc);

G_END_DECLS

#endif /* GST_C63_ENC_BASE_H */
