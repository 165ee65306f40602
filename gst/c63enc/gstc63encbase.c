/* The Codec63 encoders' abstract base class (see gstc63encbase.h).
 *
 * Copyright (C) 2026 gst-c63 contributors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The element is a thin adapter between GstVideoEncoder and libc63's
 * send/receive encoder: each input frame is sent as a picture tagged with its
 * system_frame_number, and every packet received is matched back to its
 * GstVideoCodecFrame by that tag. Keyframe decisions (first frame, interval,
 * forced) are libc63's; the element only forwards force-key-unit requests.
 */

/**
 * SECTION:element-c63enc
 * @title: c63enc
 *
 * Encodes raw I420 or NV12 video into Codec63 (`video/x-c63, parsed=true`)
 * on the CPU, byte for byte as the public reference encoder does at the same
 * settings (#GstC63EncBase:quality, #GstC63EncBase:keyframe-interval,
 * #GstC63EncBase:search-range), or with #GstC63EncBase:mode `rd` in fewer
 * bits for the same quality. Any size from 8x8 to 8192x8192. Motion
 * search, transform and entropy coding run in stripes on a pool of
 * #GstC63EncBase:threads threads. Force-key-unit events start a keyframe.
 *
 * ## Example launch lines
 * |[
 * gst-launch-1.0 videotestsrc num-buffers=250 ! video/x-raw,format=I420,width=1280,height=720 ! \
 *     c63enc quality=25 keyframe-interval=25 ! filesink location=test.c63
 * ]| Encode 10 seconds of a test pattern.
 * |[
 * gst-launch-1.0 videotestsrc num-buffers=250 ! video/x-raw,format=I420,width=1280,height=720 ! \
 *     c63enc mode=rd ! filesink location=test-rd.c63
 * ]| The same in fewer bits (rate-distortion choices; any Codec63 decoder plays it).
 *
 * Since: 0.1
 */

/**
 * SECTION:element-c63cudaenc
 * @title: c63cudaenc
 *
 * The same encoder on an NVIDIA GPU, with the same properties and the same
 * output bytes as #c63enc: motion search, transform, reconstruction,
 * entropy coding and byte stuffing all run on the device, and only the
 * coded frame comes back. Takes CUDA memory (`memory:CUDAMemory`, I420 or
 * NV12, e.g. from `nvh264dec` or `cudaupload`) in the pipeline's shared CUDA
 * context, or system memory, for which it proposes a pool of page-locked
 * buffers. Registered only when a CUDA device is usable at plugin load
 * (`GST_DEBUG=c63:4 gst-inspect-1.0 c63` says why not); `cuda-device-id`
 * picks the GPU. Both values of #GstC63EncBase:mode run on the GPU, with
 * the same bytes as c63enc.
 *
 * ## Example launch lines
 * |[
 * gst-launch-1.0 filesrc location=in.yuv ! rawvideoparse width=1920 height=1080 format=i420 ! \
 *     queue ! c63cudaenc ! filesink location=out.c63
 * ]| Encode a raw 1080p file on the GPU.
 * |[
 * gst-launch-1.0 filesrc location=in.mp4 ! qtdemux ! h264parse ! nvh264dec ! c63cudaenc ! \
 *     filesink location=out.c63
 * ]| Transcode H.264 without the pictures leaving the GPU.
 *
 * Since: 0.1
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "gstc63encbase.h"
#include "gstc63memoryregistry.h"
#include "common/gstc63pinnedallocator.h"
#include "common/gstc63videolayout.h"
#ifdef HAVE_GST_CUDA
#include "common/gstc63cuda.h"
#endif

/* One debug category per element ("c63enc", "c63cudaenc"): each log call
 * takes its element's from the class. */
GST_DEBUG_CATEGORY_STATIC(gst_c63_enc_debug);
GST_DEBUG_CATEGORY_STATIC(gst_c63_cudaenc_debug);
#define GST_CAT_DEFAULT (GST_C63_ENC_BASE_GET_CLASS(self)->debug)

enum {
  PROP_0,
  PROP_QUALITY,
  PROP_KEYFRAME_INTERVAL,
  PROP_SEARCH_RANGE,
  PROP_THREADS,
  PROP_DEVICE_ID,
  PROP_MODE,
  PROP_RATE_CONTROL,
  PROP_BITRATE,
  PROP_BUFFER_SIZE,
};

/* Properties changed while the encoder runs, applied before the next
 * picture (gst_c63_enc_base_apply_settings). */
enum {
  CHANGED_QUALITY = 1 << 0,
  CHANGED_KEYFRAME_INTERVAL = 1 << 1,
  CHANGED_SEARCH_RANGE = 1 << 2,
  CHANGED_BITRATE = 1 << 3,
  CHANGED_BUFFER_SIZE = 1 << 4,
};

#define DEFAULT_DEVICE_ID 0

/* The media type is documented in docs/elements.md. "parsed" tells c63dec
 * that every buffer holds exactly one frame (as for jpegparse/jpegdec).
 *
 * Neither template names a framerate: any rate is encoded, and so is input
 * without one (appsrc, image sources), whose rate GstVideoInfo reads as 0/1
 * ("unknown"), which the output caps then carry. A framerate field in the
 * src template would make it required on the sink side too, because
 * GstVideoEncoder proxies downstream's framerate into the sink caps. */
#define SINK_CAPS                                                                                  \
  "video/x-raw, format = (string) { I420, NV12 }, width = (int) [ 8, 8192 ], "                     \
  "height = (int) [ 8, 8192 ]"
#define SRC_CAPS                                                                                   \
  "video/x-c63, width = (int) [ 8, 8192 ], height = (int) [ 8, 8192 ], parsed = (boolean) true"

/* c63cudaenc also takes CUDA memory, and prefers it. */
#define CUDA_SINK_CAPS                                                                             \
  "video/x-raw(" GST_C63_CAPS_FEATURE_CUDA "), format = (string) { I420, NV12 }, "                 \
  "width = (int) [ 8, 8192 ], height = (int) [ 8, 8192 ]; " SINK_CAPS

static GstStaticPadTemplate sink_template =
    GST_STATIC_PAD_TEMPLATE("sink", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS(SINK_CAPS));
static GstStaticPadTemplate src_template =
    GST_STATIC_PAD_TEMPLATE("src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS(SRC_CAPS));

/* The mode property's values: libc63's c63_enc_mode. */
GType gst_c63_enc_mode_get_type(void)
{
  static GType type;
  static const GEnumValue values[] = {
      {C63_MODE_EXACT, "The reference encoder's choices, byte for byte its stream", "exact"},
      {C63_MODE_RD,
       "Fewer bits for the same quality: rate-distortion choices of vectors, intra "
       "blocks and coefficients (the same stream on the CPU and the GPU)",
       "rd"},
      {0, NULL, NULL},
  };
  if (g_once_init_enter(&type))
    g_once_init_leave(&type, g_enum_register_static("GstC63EncMode", values));
  return type;
}

GType gst_c63_enc_rate_control_get_type(void)
{
  static GType type;
  static const GEnumValue values[] = {
      {C63_RC_QUALITY, "Constant quality: the quality property for every frame", "quality"},
      {C63_RC_ABR, "Average bitrate: each frame's quality chosen for the bitrate property", "abr"},
      {C63_RC_CBR,
       "Constant bitrate: as abr, and no frame overflows a decoder buffer of buffer-size", "cbr"},
      {0, NULL, NULL},
  };
  if (g_once_init_enter(&type))
    g_once_init_leave(&type, g_enum_register_static("GstC63EncRateControl", values));
  return type;
}

/* The abstract base is GstC63EncBase, so that the CPU element's own type
 * can be "GstC63Enc", whose instances are then named c63enc0, ... as users
 * expect from the element name. */
G_DEFINE_ABSTRACT_TYPE(GstC63EncBase, gst_c63_enc_base, GST_TYPE_VIDEO_ENCODER);

/* ---- Errors ------------------------------------------------------------- */

/* Post a libc63 failure as an element error a user can act on, and return
 * the flow to hand back. what says what the element was doing. */
static GstFlowReturn gst_c63_enc_base_post_error(GstC63EncBase *self, int status, const char *what,
                                                 const char *detail)
{
  const char *backend =
      GST_C63_ENC_BASE_GET_CLASS(self)->backend == C63_BACKEND_CUDA ? "CUDA" : "CPU";

  switch (status) {
  case C63_ERR_NO_DEVICE:
    GST_ELEMENT_ERROR(self, RESOURCE, NOT_FOUND,
                      ("No usable %s device (cuda-device-id %d): %s. Check the driver, "
                       "CUDA_VISIBLE_DEVICES and the cuda-device-id property, or use c63enc.",
                       backend, self->device_id, detail),
                      ("%s failed: %s", what, c63_status_string(status)));
    break;
  case C63_ERR_NOMEM:
    GST_ELEMENT_ERROR(
        self, RESOURCE, NO_SPACE_LEFT,
        ("Out of %s memory encoding %dx%d: %s. Free memory or use a smaller size.",
         GST_C63_ENC_BASE_GET_CLASS(self)->backend == C63_BACKEND_CUDA ? "GPU" : "host",
         self->input_state ? GST_VIDEO_INFO_WIDTH(&self->input_state->info) : 0,
         self->input_state ? GST_VIDEO_INFO_HEIGHT(&self->input_state->info) : 0, detail),
        ("%s failed: %s", what, c63_status_string(status)));
    break;
  case C63_ERR_INVALID_ARG:
  case C63_ERR_UNSUPPORTED:
    GST_ELEMENT_ERROR(
        self, LIBRARY, SETTINGS,
        ("Unsupported encoder settings: %s. Check the properties and input caps.", detail),
        ("%s failed: %s", what, c63_status_string(status)));
    break;
  case C63_ERR_BACKEND:
    GST_ELEMENT_ERROR(self, RESOURCE, FAILED,
                      ("The %s backend failed: %s. If the GPU was lost or reset, restart the "
                       "pipeline.",
                       backend, detail),
                      ("%s failed: %s", what, c63_status_string(status)));
    break;
  default:
    GST_ELEMENT_ERROR(self, STREAM, ENCODE, ("Encoding failed: %s", detail),
                      ("%s failed: %s (%d)", what, c63_status_string(status), status));
    break;
  }
  return GST_FLOW_ERROR;
}

/* ---- Encoder lifetime --------------------------------------------------- */

static void gst_c63_enc_base_set_latency(GstC63EncBase *self)
{
  const GstVideoInfo *info = &self->input_state->info;
  int delay = c63_encoder_delay(self->enc);
  GstClockTime latency = 0;

  /* Without a framerate a frame's duration is unknown: assume 25 fps, so a
   * live pipeline still budgets for the frames in flight. A delay-free
   * backend (the CPU one) has no latency either way. */
  gint fps_n = GST_VIDEO_INFO_FPS_N(info), fps_d = GST_VIDEO_INFO_FPS_D(info);
  if (fps_n <= 0 || fps_d <= 0) {
    fps_n = C63_DEFAULT_FPS_NUM;
    fps_d = C63_DEFAULT_FPS_DEN;
  }
  if (delay > 0) latency = gst_util_uint64_scale(delay, GST_SECOND * fps_d, fps_n);
  gst_video_encoder_set_latency(GST_VIDEO_ENCODER(self), latency, latency);
}

/* Create the libc63 encoder for the negotiated size and current settings. */
static gboolean gst_c63_enc_base_open_encoder(GstC63EncBase *self)
{
  c63_enc_params params;
  char msg[256] = "";
  int status;

  c63_enc_params_init(&params);
  params.width = GST_VIDEO_INFO_WIDTH(&self->input_state->info);
  params.height = GST_VIDEO_INFO_HEIGHT(&self->input_state->info);
  params.backend = GST_C63_ENC_BASE_GET_CLASS(self)->backend;
  GST_OBJECT_LOCK(self);
  params.quality = self->quality;
  params.keyframe_interval = self->keyframe_interval;
  params.search_range = self->search_range;
  params.device_id = self->device_id;
  params.threads = self->threads;
  params.mode = self->mode;
  params.rate_control = self->rate_control;
  params.bitrate = (int)self->bitrate;
  params.buffer_ms = (int)self->buffer_ms;
  self->changed = 0;
  GST_OBJECT_UNLOCK(self);
  /* The bitrate needs a framerate; the stream carries none, so without
   * one in the caps 25/1 is assumed, as for the latency. */
  if (GST_VIDEO_INFO_FPS_N(&self->input_state->info) > 0 &&
      GST_VIDEO_INFO_FPS_D(&self->input_state->info) > 0) {
    params.fps_num = GST_VIDEO_INFO_FPS_N(&self->input_state->info);
    params.fps_den = GST_VIDEO_INFO_FPS_D(&self->input_state->info);
  }
#ifdef HAVE_GST_CUDA
  /* the pipeline's shared context: CUDA memory of it is read in place */
  if (params.backend == C63_BACKEND_CUDA) params.cuda_context = gst_c63_cuda_handle(self->cuda_ctx);
#endif

  self->warned_reach = self->warned_overflow = FALSE;
  self->overflows_before = 0;
  status = c63_encoder_new(&params, &self->enc, msg, sizeof msg);
  if (status != C63_OK) {
    self->enc = NULL;
    gst_c63_enc_base_post_error(self, status, "c63_encoder_new", msg[0] ? msg : "unknown reason");
    return FALSE;
  }
  GST_INFO_OBJECT(self, "%s encoder %dx%d quality %d keyframe-interval %d search-range %d mode %s",
                  c63_encoder_backend_name(self->enc), params.width, params.height, params.quality,
                  params.keyframe_interval, params.search_range,
                  params.mode == C63_MODE_RD ? "rd" : "exact");
  self->lent_cap = (guint)c63_encoder_delay(self->enc) + 2;
  self->lent = g_new0(GstVideoFrame, self->lent_cap);
  self->lent_head = self->lent_count = 0;
  gst_c63_enc_base_set_latency(self);
  return TRUE;
}

/* Where the next picture is mapped before it is lent. */
static GstVideoFrame *gst_c63_enc_base_next_picture(GstC63EncBase *self)
{
  return &self->lent[(self->lent_head + self->lent_count) % self->lent_cap];
}

/* The oldest picture lent to libc63 is its own again: unmapped. */
static void gst_c63_enc_base_return_picture(GstC63EncBase *self)
{
  if (self->lent_count == 0) return;
  gst_video_frame_unmap(&self->lent[self->lent_head]);
  self->lent_head = (self->lent_head + 1) % self->lent_cap;
  self->lent_count--;
}

static void gst_c63_enc_base_close_encoder(GstC63EncBase *self)
{
  if (self->enc) {
    c63_encoder_free(self->enc);
    self->enc = NULL;
  }
  /* freed, the encoder reads none of them */
  while (self->lent_count > 0)
    gst_c63_enc_base_return_picture(self);
  g_clear_pointer(&self->lent, g_free);
}

/* ---- Packets out -------------------------------------------------------- */

/* A buffer for a coded frame, or NULL when there is no memory for it.
 * gst_video_encoder_allocate_output_buffer() is not used: when
 * downstream's allocator fails it falls back to system memory, which
 * GStreamer 1.22 allocates with g_malloc and so aborts the process when
 * memory runs out. Here system memory comes from g_try_malloc instead. */
static GstBuffer *gst_c63_enc_base_new_output_buffer(GstC63EncBase *self, gsize size)
{
  GstAllocator *allocator = NULL;
  GstAllocationParams params;
  GstBuffer *buf = NULL;
  gpointer data;

  gst_video_encoder_get_allocator(GST_VIDEO_ENCODER(self), &allocator, &params);
  if (allocator && g_strcmp0(allocator->mem_type, GST_ALLOCATOR_SYSMEM) != 0) {
    buf = gst_buffer_new_allocate(allocator, size, &params);
    if (!buf)
      GST_INFO_OBJECT(self,
                      "downstream allocator failed for %" G_GSIZE_FORMAT " bytes, "
                      "trying system memory",
                      size);
  }
  if (allocator) gst_object_unref(allocator);
  if (buf) return buf;
  data = g_try_malloc(MAX(size, 1));
  return data ? gst_buffer_new_wrapped(data, size) : NULL;
}

static GstFlowReturn gst_c63_enc_base_push_packet(GstC63EncBase *self, const c63_packet *pkt)
{
  GstVideoEncoder *venc = GST_VIDEO_ENCODER(self);
  GstVideoCodecFrame *frame = gst_video_encoder_get_frame(venc, (int)pkt->user);

  if (!frame) {
    /* Only possible if the base class dropped the frame meanwhile. */
    GST_WARNING_OBJECT(self, "no pending frame %" G_GINT64_FORMAT " for packet", pkt->user);
    return GST_FLOW_OK;
  }
  frame->output_buffer = gst_c63_enc_base_new_output_buffer(self, pkt->size);
  if (!frame->output_buffer) {
    /* Host memory for either backend, so not gst_c63_enc_base_post_error. */
    GST_ELEMENT_ERROR(self, RESOURCE, NO_SPACE_LEFT,
                      ("Out of host memory: could not allocate an output buffer of %" G_GSIZE_FORMAT
                       " bytes for a coded frame",
                       pkt->size),
                      ("frame %u", frame->system_frame_number));
    gst_video_codec_frame_unref(frame);
    return GST_FLOW_ERROR;
  }
  gst_buffer_fill(frame->output_buffer, 0, pkt->data, pkt->size);
  if (pkt->keyframe)
    GST_VIDEO_CODEC_FRAME_SET_SYNC_POINT(frame);
  else
    GST_BUFFER_FLAG_SET(frame->output_buffer, GST_BUFFER_FLAG_DELTA_UNIT);
  GST_LOG_OBJECT(self, "frame %u: %" G_GSIZE_FORMAT " bytes%s", frame->system_frame_number,
                 pkt->size, pkt->keyframe ? ", keyframe" : "");
  return gst_video_encoder_finish_frame(venc, frame);
}

/* With rate control, warn once per target when the encoder finds it out of
 * reach of every quality on this input, naming the target the library
 * judged (c63_rate_status: the property may already say another); and
 * once per target and buffer when frames overflow the CBR buffer even at
 * quality 1. */
static void gst_c63_enc_base_check_rate(GstC63EncBase *self)
{
  c63_rate_status st;

  if (c63_encoder_rate_status(self->enc, &st) != C63_OK) return;
  if (st.reach != 0 && !self->warned_reach) {
    self->warned_reach = TRUE;
    if (st.reach < 0)
      GST_ELEMENT_WARNING(self, STREAM, ENCODE,
                          ("The target bitrate of %d kbit/s is out of reach: quality %d, the "
                           "coarsest, spends more on this input",
                           st.bitrate, C63_MIN_QUALITY),
                          ("%d frames in a row at quality %d averaged %.0f kbit/s%s",
                           C63_TARGET_REACH_FRAMES, C63_MIN_QUALITY, st.reach_kbps,
                           self->mode == C63_MODE_EXACT ? "; mode=rd reaches lower bitrates" : ""));
    else
      GST_ELEMENT_WARNING(self, STREAM, ENCODE,
                          ("The target bitrate of %d kbit/s is out of reach: quality %d, the "
                           "finest, spends less on this input",
                           st.bitrate, C63_MAX_QUALITY),
                          ("%d frames in a row at quality %d averaged %.0f kbit/s",
                           C63_TARGET_REACH_FRAMES, C63_MAX_QUALITY, st.reach_kbps));
  }
  if (st.overflows > self->overflows_before && !self->warned_overflow) {
    self->warned_overflow = TRUE;
    GST_ELEMENT_WARNING(self, STREAM, ENCODE,
                        ("A frame overflowed the decoder buffer of %d ms at %d kbit/s even at "
                         "quality %d, the coarsest: raise buffer-size or bitrate%s",
                         st.buffer_ms, st.bitrate, C63_MIN_QUALITY,
                         self->mode == C63_MODE_EXACT ? ", or use mode=rd" : ""),
                        ("%" G_GINT64_FORMAT " frames over the buffer so far",
                         st.overflows - self->overflows_before));
  }
}

/* Receive and push packets until the encoder wants input (AGAIN) or is
 * drained (EOF). Every packet is finished even after a downstream failure,
 * so no frame is lost or left pending; the first failure is returned.
 * *received counts the packets. */
static GstFlowReturn gst_c63_enc_base_receive_packets(GstC63EncBase *self, guint *received)
{
  GstFlowReturn ret = GST_FLOW_OK;

  *received = 0;
  for (;;) {
    c63_packet pkt;
    int status = c63_encoder_receive_packet(self->enc, &pkt);
    GstFlowReturn r;

    if (status == C63_ERR_AGAIN || status == C63_ERR_EOF) return ret;
    /* a packet or a failure: either way its picture is read no more */
    gst_c63_enc_base_return_picture(self);
    if (status != C63_OK)
      return gst_c63_enc_base_post_error(self, status, "c63_encoder_receive_packet",
                                         c63_encoder_error(self->enc));
    (*received)++;
    gst_c63_enc_base_check_rate(self);
    r = gst_c63_enc_base_push_packet(self, &pkt);
    if (r == GST_FLOW_ERROR) return r;
    if (ret == GST_FLOW_OK) ret = r;
  }
}

/* Send a picture (or NULL to drain), receiving first whenever the encoder
 * has packets waiting, then push whatever became ready. The picture is
 * lent: its mapping (gst_c63_enc_base_next_picture) counts as lent once
 * libc63 has taken it, and is unmapped when its packet is out (the base
 * class keeps the frame's input buffer until then anyway). Returning
 * pictures meanwhile leaves the next one's place where it is. */
static GstFlowReturn gst_c63_enc_base_send(GstC63EncBase *self, const c63_picture *pic)
{
  GstFlowReturn ret = GST_FLOW_OK, r;
  guint received;
  int status;

  while ((status = c63_encoder_send_picture_borrowed(self->enc, pic)) == C63_ERR_AGAIN) {
    r = gst_c63_enc_base_receive_packets(self, &received);
    if (r == GST_FLOW_ERROR) return r;
    if (ret == GST_FLOW_OK) ret = r;
    if (received == 0) /* AGAIN both ways would loop forever */
      return gst_c63_enc_base_post_error(self, C63_ERR_BACKEND, "c63_encoder_send_picture",
                                         "the encoder accepts no input and gives no output");
  }
  if (status != C63_OK)
    return gst_c63_enc_base_post_error(self, status, "c63_encoder_send_picture",
                                       c63_encoder_error(self->enc));
  if (pic) self->lent_count++;
  r = gst_c63_enc_base_receive_packets(self, &received);
  return ret == GST_FLOW_OK ? r : ret;
}

/* Push every frame the encoder still holds; it then accepts pictures again. */
static GstFlowReturn gst_c63_enc_base_drain(GstC63EncBase *self)
{
  if (!self->enc) return GST_FLOW_OK;
  GST_DEBUG_OBJECT(self, "draining");
  return gst_c63_enc_base_send(self, NULL);
}

/* ---- GstVideoEncoder vfuncs --------------------------------------------- */

#ifdef HAVE_GST_CUDA
/* The CUDA element's context is found (or made) when it opens, so that
 * upstream's allocation query can be answered with a CUDA pool of it. */
static gboolean gst_c63_enc_base_open(GstVideoEncoder *venc)
{
  GstC63EncBase *self = GST_C63_ENC_BASE(venc);

  gint device_id;

  if (GST_C63_ENC_BASE_GET_CLASS(self)->backend != C63_BACKEND_CUDA) return TRUE;
  GST_OBJECT_LOCK(self);
  device_id = self->device_id;
  GST_OBJECT_UNLOCK(self);
  return gst_c63_cuda_open(GST_ELEMENT(self), device_id, (GstObject **)&self->cuda_ctx);
}

static gboolean gst_c63_enc_base_close(GstVideoEncoder *venc)
{
  gst_clear_object((GstObject **)&GST_C63_ENC_BASE(venc)->cuda_ctx);
  return TRUE;
}

static gboolean gst_c63_enc_base_sink_query(GstVideoEncoder *venc, GstQuery *query)
{
  GstC63EncBase *self = GST_C63_ENC_BASE(venc);

  if (GST_C63_ENC_BASE_GET_CLASS(self)->backend == C63_BACKEND_CUDA &&
      gst_c63_cuda_handle_query(GST_ELEMENT(self), query, self->cuda_ctx))
    return TRUE;
  return GST_VIDEO_ENCODER_CLASS(gst_c63_enc_base_parent_class)->sink_query(venc, query);
}

static gboolean gst_c63_enc_base_src_query(GstVideoEncoder *venc, GstQuery *query)
{
  GstC63EncBase *self = GST_C63_ENC_BASE(venc);

  if (GST_C63_ENC_BASE_GET_CLASS(self)->backend == C63_BACKEND_CUDA &&
      gst_c63_cuda_handle_query(GST_ELEMENT(self), query, self->cuda_ctx))
    return TRUE;
  return GST_VIDEO_ENCODER_CLASS(gst_c63_enc_base_parent_class)->src_query(venc, query);
}

static void gst_c63_enc_base_set_context(GstElement *element, GstContext *context)
{
  GstC63EncBase *self = GST_C63_ENC_BASE(element);
  gint device_id;

  GST_OBJECT_LOCK(self);
  device_id = self->device_id;
  GST_OBJECT_UNLOCK(self);
  gst_c63_cuda_set_context(element, context, device_id, (GstObject **)&self->cuda_ctx);
  GST_ELEMENT_CLASS(gst_c63_enc_base_parent_class)->set_context(element, context);
}
#endif

static gboolean gst_c63_enc_base_stop(GstVideoEncoder *venc)
{
  GstC63EncBase *self = GST_C63_ENC_BASE(venc);

  gst_c63_enc_base_close_encoder(self);
  g_clear_pointer(&self->input_state, gst_video_codec_state_unref);
  return TRUE;
}

static gboolean gst_c63_enc_base_set_format(GstVideoEncoder *venc, GstVideoCodecState *state)
{
  GstC63EncBase *self = GST_C63_ENC_BASE(venc);
  const GstVideoInfo *info = &state->info;
  GstVideoCodecState *out;
  GstCaps *caps;

  /* A caps change mid-stream: finish the old stream first. The encoder for
   * the new size is created with the first frame, so it starts on a
   * keyframe and takes the properties set until then. */
  if (self->enc) {
    if (gst_c63_enc_base_drain(self) == GST_FLOW_ERROR) return FALSE;
    gst_c63_enc_base_close_encoder(self);
  }
  g_clear_pointer(&self->input_state, gst_video_codec_state_unref);
  self->input_state = gst_video_codec_state_ref(state);

  caps = gst_caps_new_simple("video/x-c63", "width", G_TYPE_INT, GST_VIDEO_INFO_WIDTH(info),
                             "height", G_TYPE_INT, GST_VIDEO_INFO_HEIGHT(info), "framerate",
                             GST_TYPE_FRACTION, GST_VIDEO_INFO_FPS_N(info),
                             GST_VIDEO_INFO_FPS_D(info), "parsed", G_TYPE_BOOLEAN, TRUE, NULL);
  out = gst_video_encoder_set_output_state(venc, caps, state);
  gst_video_codec_state_unref(out);
  {
    GstTagList *tags = gst_tag_list_new(
        GST_TAG_ENCODER, GST_ELEMENT_NAME(gst_element_get_factory(GST_ELEMENT(self))),
        GST_TAG_ENCODER_VERSION, (guint)c63_version(), GST_TAG_VIDEO_CODEC, "Codec63", NULL);
    gst_video_encoder_merge_tags(venc, tags, GST_TAG_MERGE_REPLACE);
    gst_tag_list_unref(tags);
  }
  return gst_video_encoder_negotiate(venc);
}

/* A new target or buffer: rate control's reports are warned about afresh. */
static void gst_c63_enc_base_rate_changed(GstC63EncBase *self, gboolean bitrate)
{
  c63_rate_status st;

  if (bitrate) self->warned_reach = FALSE;
  self->warned_overflow = FALSE;
  if (c63_encoder_rate_status(self->enc, &st) == C63_OK) self->overflows_before = st.overflows;
}

/* Apply the properties changed while the encoder runs, before the next
 * picture is sent; each applies from that picture on. */
static gboolean gst_c63_enc_base_apply_settings(GstC63EncBase *self)
{
  gint quality, keyframe_interval, search_range;
  guint bitrate, buffer_ms, changed;
  c63_rate_control rate_control;
  int status = C63_OK;

  GST_OBJECT_LOCK(self);
  changed = self->changed;
  quality = self->quality;
  keyframe_interval = self->keyframe_interval;
  search_range = self->search_range;
  bitrate = self->bitrate;
  buffer_ms = self->buffer_ms;
  rate_control = self->rate_control;
  self->changed = 0;
  GST_OBJECT_UNLOCK(self);
  if (!changed) return TRUE;
  /* with rate control the quality is where the controller goes on from */
  if (changed & CHANGED_QUALITY) status = c63_encoder_set_quality(self->enc, quality);
  if (status == C63_OK && (changed & CHANGED_KEYFRAME_INTERVAL))
    status = c63_encoder_set_keyframe_interval(self->enc, keyframe_interval);
  if (status == C63_OK && (changed & CHANGED_SEARCH_RANGE))
    status = c63_encoder_set_search_range(self->enc, search_range);
  /* unused in constant quality (bitrate) or outside cbr (buffer-size) */
  if (status == C63_OK && (changed & CHANGED_BITRATE) && rate_control != C63_RC_QUALITY &&
      (status = c63_encoder_set_bitrate(self->enc, (int)bitrate)) == C63_OK)
    gst_c63_enc_base_rate_changed(self, TRUE);
  if (status == C63_OK && (changed & CHANGED_BUFFER_SIZE) && rate_control == C63_RC_CBR &&
      (status = c63_encoder_set_buffer(self->enc, (int)buffer_ms)) == C63_OK)
    gst_c63_enc_base_rate_changed(self, FALSE);
  if (status != C63_OK) {
    gst_c63_enc_base_post_error(self, status, "applying new settings",
                                c63_encoder_error(self->enc));
    return FALSE;
  }
  GST_DEBUG_OBJECT(self,
                   "from this frame: quality %d, keyframe interval %d, search range %d, "
                   "bitrate %u, buffer-size %u",
                   quality, keyframe_interval, search_range, bitrate, buffer_ms);
  return TRUE;
}

/* Map the input picture, CUDA memory of our context on the device (libc63
 * reads it there), anything else in host memory. Mapping as a
 * GstVideoFrame honours GstVideoMeta, so any stride and plane offset
 * upstream chose is taken, once checked against the memory: a layout that
 * does not fit its buffer is an error, never a read past its end. */
static gboolean gst_c63_enc_base_map_input(GstC63EncBase *self, GstBuffer *buffer,
                                           GstVideoFrame *vframe)
{
  const GstVideoInfo *info = &self->input_state->info;
  gboolean mapped = FALSE;
  gchar *why = NULL;

  if (gst_c63_video_layout_check_meta(info, buffer, &why)) {
#ifdef HAVE_GST_CUDA
    if (GST_C63_ENC_BASE_GET_CLASS(self)->backend == C63_BACKEND_CUDA)
      mapped = gst_c63_cuda_map(self->cuda_ctx, buffer, info, vframe, GST_MAP_READ);
#endif
    if (!mapped && !gst_video_frame_map(vframe, info, buffer, GST_MAP_READ)) {
      GST_ELEMENT_ERROR(
          self, STREAM, FORMAT,
          ("Could not map the input frame: a buffer of %" G_GSIZE_FORMAT
           " bytes for %s %dx%d, which needs %" G_GSIZE_FORMAT ". Check the caps upstream.",
           gst_buffer_get_size(buffer), GST_VIDEO_INFO_NAME(info), GST_VIDEO_INFO_WIDTH(info),
           GST_VIDEO_INFO_HEIGHT(info), GST_VIDEO_INFO_SIZE(info)),
          ("gst_video_frame_map failed"));
      return FALSE;
    }
    if (gst_c63_video_layout_check_frame(info, vframe, &why)) return TRUE;
    gst_video_frame_unmap(vframe);
  }
  GST_ELEMENT_ERROR(self, STREAM, FORMAT,
                    ("The input picture does not fit its buffer: %s. The element upstream sent a "
                     "GstVideoMeta (strides, plane offsets) that disagrees with its memory or "
                     "the caps; fix it, or convert the pictures before the encoder.",
                     why),
                    ("%s %dx%d in a buffer of %" G_GSIZE_FORMAT " bytes", GST_VIDEO_INFO_NAME(info),
                     GST_VIDEO_INFO_WIDTH(info), GST_VIDEO_INFO_HEIGHT(info),
                     gst_buffer_get_size(buffer)));
  g_free(why);
  return FALSE;
}

static GstFlowReturn gst_c63_enc_base_handle_frame(GstVideoEncoder *venc, GstVideoCodecFrame *frame)
{
  GstC63EncBase *self = GST_C63_ENC_BASE(venc);
  GstVideoFrame *vframe;
  c63_picture pic;
  GstFlowReturn ret;
  int i;

  if (!self->input_state) {
    gst_video_codec_frame_unref(frame);
    GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, (NULL), ("input frame before caps"));
    return GST_FLOW_NOT_NEGOTIATED;
  }
  /* Created for the first frame after caps, a flush or a restart. */
  if (!self->enc && !gst_c63_enc_base_open_encoder(self)) {
    gst_video_codec_frame_unref(frame);
    return GST_FLOW_ERROR;
  }
  if (!gst_c63_enc_base_apply_settings(self)) {
    gst_video_codec_frame_unref(frame);
    return GST_FLOW_ERROR;
  }

  vframe = gst_c63_enc_base_next_picture(self);
  if (!gst_c63_enc_base_map_input(self, frame->input_buffer, vframe)) {
    gst_video_codec_frame_unref(frame);
    return GST_FLOW_ERROR;
  }
  /* Upstream memory that comes back (a pool's) is uploaded straight from
   * where it is once registered; the rest is staged by libc63's threads. */
  if (GST_C63_ENC_BASE_GET_CLASS(self)->backend == C63_BACKEND_CUDA)
    gst_c63_memory_register_recurring(frame->input_buffer);
  memset(&pic, 0, sizeof pic);
  pic.format =
      GST_VIDEO_FRAME_FORMAT(vframe) == GST_VIDEO_FORMAT_NV12 ? C63_FORMAT_NV12 : C63_FORMAT_I420;
  for (i = 0; i < (int)GST_VIDEO_FRAME_N_PLANES(vframe) && i < 3; i++) {
    pic.data[i] = GST_VIDEO_FRAME_PLANE_DATA(vframe, i);
    pic.stride[i] = GST_VIDEO_FRAME_PLANE_STRIDE(vframe, i);
  }
  pic.user = frame->system_frame_number;
  pic.force_keyframe = GST_VIDEO_CODEC_FRAME_IS_FORCE_KEYFRAME(frame) ? 1 : 0;
  if (pic.force_keyframe)
    GST_DEBUG_OBJECT(self, "forcing a keyframe at frame %u", frame->system_frame_number);

  /* The base class keeps the frame in its list; the packet finds it again
   * by system_frame_number. */
  gst_video_codec_frame_unref(frame);
  ret = gst_c63_enc_base_send(self, &pic);
  if (vframe == gst_c63_enc_base_next_picture(self)) /* not taken: still the next one's place */
    gst_video_frame_unmap(vframe);
  return ret;
}

static GstFlowReturn gst_c63_enc_base_finish(GstVideoEncoder *venc)
{
  return gst_c63_enc_base_drain(GST_C63_ENC_BASE(venc));
}

static gboolean gst_c63_enc_base_flush(GstVideoEncoder *venc)
{
  /* Pending frames are discarded by the base class; a new encoder starts
   * the next segment cleanly with a keyframe. */
  gst_c63_enc_base_close_encoder(GST_C63_ENC_BASE(venc));
  return TRUE;
}

/* Offer upstream a video buffer pool with GstVideoMeta, so producers can
 * write straight into buffers of their preferred layout. The CUDA element's
 * pool allocates page-locked memory, which the backend uploads by DMA
 * without copying it into its staging first. */
static gboolean gst_c63_enc_base_propose_allocation(GstVideoEncoder *venc, GstQuery *query)
{
  GstC63EncBase *self = GST_C63_ENC_BASE(venc);
  GstCaps *caps = NULL;
  gboolean need_pool = FALSE;
  GstVideoInfo info;
  GstAllocator *allocator = NULL;
  GstAllocationParams params;

#ifdef HAVE_GST_CUDA
  /* CUDA memory caps: a CUDA pool of the shared context */
  gst_query_parse_allocation(query, &caps, &need_pool);
  if (GST_C63_ENC_BASE_GET_CLASS(venc)->backend == C63_BACKEND_CUDA &&
      gst_c63_cuda_caps_are_cuda(caps)) {
    guint size;
    GstBufferPool *pool = gst_query_get_n_allocation_pools(query) == 0
                              ? gst_c63_cuda_pool_new(GST_C63_ENC_BASE(venc)->cuda_ctx, caps, &size)
                              : NULL;
    if (pool) {
      gst_query_add_allocation_pool(query, pool, size, 0, 0);
      gst_object_unref(pool);
    }
    gst_query_add_allocation_meta(query, GST_VIDEO_META_API_TYPE, NULL);
    return TRUE;
  }
#endif
  gst_allocation_params_init(&params);
  if (GST_C63_ENC_BASE_GET_CLASS(venc)->backend == C63_BACKEND_CUDA) {
    allocator = gst_c63_pinned_allocator_get();
    gst_query_add_allocation_param(query, allocator, &params);
  }
  gst_query_parse_allocation(query, &caps, &need_pool);
  if (caps && gst_video_info_from_caps(&info, caps) &&
      gst_query_get_n_allocation_pools(query) == 0) {
    GstBufferPool *pool = gst_video_buffer_pool_new();
    GstStructure *config = gst_buffer_pool_get_config(pool);

    gst_buffer_pool_config_set_params(config, caps, GST_VIDEO_INFO_SIZE(&info), 0, 0);
    gst_buffer_pool_config_add_option(config, GST_BUFFER_POOL_OPTION_VIDEO_META);
    if (allocator) gst_buffer_pool_config_set_allocator(config, allocator, &params);
    if (gst_buffer_pool_set_config(pool, config))
      gst_query_add_allocation_pool(query, need_pool ? pool : NULL, GST_VIDEO_INFO_SIZE(&info), 0,
                                    0);
    else
      GST_WARNING_OBJECT(self, "video buffer pool rejected its configuration");
    gst_object_unref(pool);
  }
  if (allocator) gst_object_unref(allocator);
  gst_query_add_allocation_meta(query, GST_VIDEO_META_API_TYPE, NULL);
  return GST_VIDEO_ENCODER_CLASS(gst_c63_enc_base_parent_class)->propose_allocation(venc, query);
}

/* ---- GObject ------------------------------------------------------------ */

/* Properties that only take effect when the encoder starts are refused
 * while it may be running (above READY), with a warning, and keep their
 * value; so is a bitrate of 0 with abr or cbr, which have no target
 * without one. Every other change applies from the next frame. */
static void gst_c63_enc_base_set_property(GObject *object, guint prop_id, const GValue *value,
                                          GParamSpec *pspec)
{
  GstC63EncBase *self = GST_C63_ENC_BASE(object);
  const char *refused = NULL;

  GST_OBJECT_LOCK(self);
  const gboolean running = GST_STATE(self) > GST_STATE_READY;
  switch (prop_id) {
  case PROP_QUALITY:
    self->quality = g_value_get_int(value);
    self->changed |= CHANGED_QUALITY;
    break;
  case PROP_KEYFRAME_INTERVAL:
    self->keyframe_interval = g_value_get_int(value);
    self->changed |= CHANGED_KEYFRAME_INTERVAL;
    break;
  case PROP_SEARCH_RANGE:
    self->search_range = g_value_get_int(value);
    self->changed |= CHANGED_SEARCH_RANGE;
    break;
  case PROP_THREADS:
    if (running)
      refused = "it applies when the encoder starts: set it in the NULL or READY state";
    else
      self->threads = g_value_get_int(value);
    break;
  case PROP_DEVICE_ID:
    if (running)
      refused = "it applies when the encoder starts: set it in the NULL or READY state";
    else
      self->device_id = g_value_get_int(value);
    break;
  case PROP_RATE_CONTROL:
    if (running)
      refused = "the stream keeps one rate control: set it in the NULL or READY state";
    else
      self->rate_control = g_value_get_enum(value);
    break;
  case PROP_BITRATE:
    if (running && self->rate_control != C63_RC_QUALITY && g_value_get_uint(value) == 0) {
      refused = "abr and cbr need a target: constant quality is rate-control=quality, set in "
                "the NULL or READY state";
    } else {
      self->bitrate = g_value_get_uint(value);
      self->changed |= CHANGED_BITRATE;
    }
    break;
  case PROP_BUFFER_SIZE:
    self->buffer_ms = g_value_get_uint(value);
    self->changed |= CHANGED_BUFFER_SIZE;
    break;
  case PROP_MODE:
    /* The stream keeps one mode: a change is only taken before it starts. */
    if (running)
      refused = "the stream keeps one mode: set it in the NULL or READY state";
    else
      self->mode = g_value_get_enum(value);
    break;
  default:
    G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
    break;
  }
  GST_OBJECT_UNLOCK(self);
  /* posting takes the object lock */
  if (refused) {
    gchar *val = g_strdup_value_contents(value);
    GST_ELEMENT_WARNING(self, LIBRARY, SETTINGS,
                        ("%s=%s refused while %s: %s; the old value is kept.", pspec->name, val,
                         gst_element_state_get_name(GST_STATE(self)), refused),
                        (NULL));
    g_free(val);
  }
}

static void gst_c63_enc_base_get_property(GObject *object, guint prop_id, GValue *value,
                                          GParamSpec *pspec)
{
  GstC63EncBase *self = GST_C63_ENC_BASE(object);

  GST_OBJECT_LOCK(self);
  switch (prop_id) {
  case PROP_QUALITY:
    g_value_set_int(value, self->quality);
    break;
  case PROP_KEYFRAME_INTERVAL:
    g_value_set_int(value, self->keyframe_interval);
    break;
  case PROP_SEARCH_RANGE:
    g_value_set_int(value, self->search_range);
    break;
  case PROP_THREADS:
    g_value_set_int(value, self->threads);
    break;
  case PROP_DEVICE_ID:
    g_value_set_int(value, self->device_id);
    break;
  case PROP_MODE:
    g_value_set_enum(value, self->mode);
    break;
  case PROP_RATE_CONTROL:
    g_value_set_enum(value, self->rate_control);
    break;
  case PROP_BITRATE:
    g_value_set_uint(value, self->bitrate);
    break;
  case PROP_BUFFER_SIZE:
    g_value_set_uint(value, self->buffer_ms);
    break;
  default:
    G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
    break;
  }
  GST_OBJECT_UNLOCK(self);
}

static void gst_c63_enc_base_finalize(GObject *object)
{
  GstC63EncBase *self = GST_C63_ENC_BASE(object);

  gst_c63_enc_base_close_encoder(self);
  g_clear_pointer(&self->input_state, gst_video_codec_state_unref);
  G_OBJECT_CLASS(gst_c63_enc_base_parent_class)->finalize(object);
}

static void gst_c63_enc_base_class_init(GstC63EncBaseClass *klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS(klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS(klass);
  GstVideoEncoderClass *venc_class = GST_VIDEO_ENCODER_CLASS(klass);
  const GParamFlags flags = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS;

  gobject_class->set_property = gst_c63_enc_base_set_property;
  gobject_class->get_property = gst_c63_enc_base_get_property;
  gobject_class->finalize = gst_c63_enc_base_finalize;

  g_object_class_install_property(
      gobject_class, PROP_QUALITY,
      g_param_spec_int("quality", "Quality",
                       "Quantiser scale (the reference encoder's qp): higher means finer "
                       "quantisation, better pictures and more bits. Below 5 quantiser entries "
                       "saturate. May change while PLAYING; applies from the next frame",
                       C63_MIN_QUALITY, C63_MAX_QUALITY, C63_DEFAULT_QUALITY,
                       flags | GST_PARAM_MUTABLE_PLAYING));
  g_object_class_install_property(
      gobject_class, PROP_KEYFRAME_INTERVAL,
      g_param_spec_int("keyframe-interval", "Keyframe interval",
                       "Frames from one keyframe to the next (1 = every frame is a keyframe, "
                       "0 = only the first frame and forced key units). Counting restarts at "
                       "every keyframe, forced ones included. May change while PLAYING; "
                       "applies from the next frame",
                       0, G_MAXINT, C63_DEFAULT_KEYFRAME_INTERVAL,
                       flags | GST_PARAM_MUTABLE_PLAYING));
  g_object_class_install_property(
      gobject_class, PROP_SEARCH_RANGE,
      g_param_spec_int("search-range", "Search range",
                       "Motion search range in luma pixels (chroma uses half). May change "
                       "while PLAYING; applies from the next frame",
                       C63_MIN_SEARCH_RANGE, C63_MAX_SEARCH_RANGE, C63_DEFAULT_SEARCH_RANGE,
                       flags | GST_PARAM_MUTABLE_PLAYING));
  g_object_class_install_property(
      gobject_class, PROP_THREADS,
      g_param_spec_int("threads", "Threads",
                       "CPU threads of the encoder (the CPU encoder's whole work, the CUDA "
                       "encoder's copies of input in system memory); 0 = one per core, at most 16 "
                       "for c63enc and 5 for c63cudaenc (c63-enc -t). "
                       "Applies when the encoder next starts; refused with a warning above the "
                       "READY state (0.." G_STRINGIFY(C63_MAX_THREADS) ", default 0)",
                       0, C63_MAX_THREADS, 0, flags | GST_PARAM_MUTABLE_READY));

  g_object_class_install_property(
      gobject_class, PROP_MODE,
      g_param_spec_enum("mode", "Mode",
                        "How the encoder chooses what it codes: exact, the reference encoder's "
                        "stream byte for byte; rd, fewer bits for the same quality (vectors "
                        "chosen by their cost in bits, intra or inter per block, trellis "
                        "quantisation; any Codec63 decoder plays it; c63enc and c63cudaenc give "
                        "the same bytes). "
                        "Changeable in the NULL or READY state only: refused with a warning "
                        "above it (default exact)",
                        GST_TYPE_C63_ENC_MODE, C63_MODE_EXACT, flags | GST_PARAM_MUTABLE_READY));

  g_object_class_install_property(
      gobject_class, PROP_RATE_CONTROL,
      g_param_spec_enum("rate-control", "Rate control",
                        "What sets each frame's quality: quality, the quality property "
                        "(constant quality); abr, an average of the bitrate property; cbr, the "
                        "bitrate within a decoder buffer of buffer-size. The framerate of the "
                        "caps (25/1 without one) turns the bitrate into bits per frame. "
                        "Changeable in the NULL or READY state only: refused with a warning "
                        "above it (default quality)",
                        GST_TYPE_C63_ENC_RATE_CONTROL, C63_RC_QUALITY,
                        flags | GST_PARAM_MUTABLE_READY));
  g_object_class_install_property(
      gobject_class, PROP_BITRATE,
      g_param_spec_uint("bitrate", "Bitrate",
                        "Target bitrate in kbit/s for rate-control abr or cbr (required there; "
                        "unused for quality). Changes apply from the next frame, also while "
                        "PLAYING, where 0 with abr or cbr is refused with a warning. A target "
                        "no quality reaches on the input is reported with a warning "
                        "(0.." G_STRINGIFY(C63_MAX_BITRATE_KBPS) ", default 0)",
                        0, C63_MAX_BITRATE_KBPS, 0, flags | GST_PARAM_MUTABLE_PLAYING));
  g_object_class_install_property(
      gobject_class, PROP_BUFFER_SIZE,
      g_param_spec_uint("buffer-size", "Buffer size",
                        "Rate-control cbr: the decoder's buffer, in milliseconds of the "
                        "bitrate, that no frame may overflow (frames are coded again lower "
                        "where needed; one that overflows even at quality 1 is reported with a "
                        "warning). Changes apply from the next frame, also while PLAYING "
                        "(" G_STRINGIFY(C63_MIN_BUFFER_MS) ".." G_STRINGIFY(
                            C63_MAX_BUFFER_MS) ", default " G_STRINGIFY(C63_DEFAULT_BUFFER_MS) ")",
                        C63_MIN_BUFFER_MS, C63_MAX_BUFFER_MS, C63_DEFAULT_BUFFER_MS,
                        flags | GST_PARAM_MUTABLE_PLAYING));

  gst_element_class_add_static_pad_template(element_class, &sink_template);
  gst_element_class_add_static_pad_template(element_class, &src_template);

  venc_class->stop = GST_DEBUG_FUNCPTR(gst_c63_enc_base_stop);
  venc_class->set_format = GST_DEBUG_FUNCPTR(gst_c63_enc_base_set_format);
  venc_class->handle_frame = GST_DEBUG_FUNCPTR(gst_c63_enc_base_handle_frame);
  venc_class->finish = GST_DEBUG_FUNCPTR(gst_c63_enc_base_finish);
  venc_class->flush = GST_DEBUG_FUNCPTR(gst_c63_enc_base_flush);
  venc_class->propose_allocation = GST_DEBUG_FUNCPTR(gst_c63_enc_base_propose_allocation);
#ifdef HAVE_GST_CUDA
  venc_class->open = GST_DEBUG_FUNCPTR(gst_c63_enc_base_open);
  venc_class->close = GST_DEBUG_FUNCPTR(gst_c63_enc_base_close);
  venc_class->sink_query = GST_DEBUG_FUNCPTR(gst_c63_enc_base_sink_query);
  venc_class->src_query = GST_DEBUG_FUNCPTR(gst_c63_enc_base_src_query);
#endif

  gst_type_mark_as_plugin_api(GST_TYPE_C63_ENC_BASE, 0);
  gst_type_mark_as_plugin_api(GST_TYPE_C63_ENC_MODE, 0);
  gst_type_mark_as_plugin_api(GST_TYPE_C63_ENC_RATE_CONTROL, 0);
  GST_DEBUG_CATEGORY_INIT(gst_c63_enc_debug, "c63enc", 0, "Codec63 encoder");
  GST_DEBUG_CATEGORY_INIT(gst_c63_cudaenc_debug, "c63cudaenc", 0, "Codec63 CUDA encoder");
}

static void gst_c63_enc_base_init(GstC63EncBase *self)
{
  self->quality = C63_DEFAULT_QUALITY;
  self->keyframe_interval = C63_DEFAULT_KEYFRAME_INTERVAL;
  self->search_range = C63_DEFAULT_SEARCH_RANGE;
  self->device_id = DEFAULT_DEVICE_ID;
  self->mode = C63_MODE_EXACT;
  self->rate_control = C63_RC_QUALITY;
  self->buffer_ms = C63_DEFAULT_BUFFER_MS;
}

/* ---- Concrete element types, one per backend ------------------------------ */

static void gst_c63_enc_base_subclass_init(gpointer klass, gpointer class_data)
{
  GstC63EncBaseClass *enc_class = GST_C63_ENC_BASE_CLASS(klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS(klass);
  c63_backend_kind backend = (c63_backend_kind)GPOINTER_TO_INT(class_data);

  enc_class->backend = backend;
  enc_class->debug = backend == C63_BACKEND_CUDA ? gst_c63_cudaenc_debug : gst_c63_enc_debug;
  /* GObject does not inherit these: each class handles its own properties. */
  G_OBJECT_CLASS(klass)->set_property = gst_c63_enc_base_set_property;
  G_OBJECT_CLASS(klass)->get_property = gst_c63_enc_base_get_property;
  if (backend == C63_BACKEND_CUDA) {
#ifdef HAVE_GST_CUDA
    GstCaps *caps = gst_caps_from_string(CUDA_SINK_CAPS);
    /* replaces the base class's template of the same name */
    gst_element_class_add_pad_template(
        element_class, gst_pad_template_new("sink", GST_PAD_SINK, GST_PAD_ALWAYS, caps));
    gst_caps_unref(caps);
    element_class->set_context = GST_DEBUG_FUNCPTR(gst_c63_enc_base_set_context);
#endif
    g_object_class_install_property(
        G_OBJECT_CLASS(klass), PROP_DEVICE_ID,
        g_param_spec_int("cuda-device-id", "CUDA device",
                         "CUDA device ordinal to encode on (as numbered by the CUDA runtime, "
                         "after CUDA_VISIBLE_DEVICES; the name nvcodec's elements use). A CUDA "
                         "context shared by the pipeline's other CUDA elements takes precedence. "
                         "Applies when the element next starts; refused with a warning above "
                         "the READY state (0..2147483647, default 0)",
                         0, G_MAXINT, DEFAULT_DEVICE_ID,
                         G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY));
    gst_element_class_set_static_metadata(
        element_class, "Codec63 CUDA encoder", "Codec/Encoder/Video/Hardware",
        "Encodes raw I420 or NV12 video, in system or CUDA memory, into Codec63 (IN5050) on an "
        "NVIDIA GPU; output is byte-identical "
        "to c63enc",
        "gst-c63 contributors");
  } else {
    gst_element_class_set_static_metadata(
        element_class, "Codec63 encoder", "Codec/Encoder/Video",
        "Encodes raw I420 or NV12 video into Codec63 (IN5050) on the CPU", "gst-c63 contributors");
  }
}

gboolean gst_c63_enc_register(GstPlugin *plugin, c63_backend_kind backend, guint rank)
{
  const gboolean cuda = backend == C63_BACKEND_CUDA;
  GTypeInfo info = {
      .class_size = sizeof(GstC63EncBaseClass),
      .class_init = gst_c63_enc_base_subclass_init,
      .class_data = GINT_TO_POINTER(backend),
      .instance_size = sizeof(GstC63EncBase),
  };
  const char *type_name = cuda ? "GstC63CudaEnc" : "GstC63Enc";
  GType type = g_type_from_name(type_name);

  if (!type) type = g_type_register_static(GST_TYPE_C63_ENC_BASE, type_name, &info, 0);
  return gst_element_register(plugin, cuda ? "c63cudaenc" : "c63enc", rank, type);
}

static gboolean gst_c63_enc_register_cpu(GstPlugin *plugin)
{
  return gst_c63_enc_register(plugin, C63_BACKEND_CPU, GST_RANK_PRIMARY);
}

GST_ELEMENT_REGISTER_DEFINE_CUSTOM(c63enc, gst_c63_enc_register_cpu);
