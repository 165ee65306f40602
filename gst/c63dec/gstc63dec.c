/* c63dec: the Codec63 decoder element (see gstc63dec.h).
 *
 * Copyright (C) 2026 gst-c63 contributors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Input is packetized (one frame per buffer, caps with parsed=true, as
 * c63enc sends it) or a plain byte stream (filesrc, typefind), which the
 * parse step splits with GstC63Framer. The frame header carries the picture
 * size, so output caps follow the stream and are renegotiated when it
 * changes. Frames go through libc63's send/receive API: several are
 * entropy-decoded at once on the decoder's threads while earlier ones are
 * reconstructed, so pictures come out c63_decoder_delay() frames after their
 * input (reported as latency), the rest at EOS (drain); a flush drops them.
 * Every corrupt frame is counted with GST_VIDEO_DECODER_ERROR,
 * which honours the max-errors property; libc63 then drops its reference,
 * and delta frames are skipped until the next keyframe. A stream that
 * yields no picture at all ends in an error at EOS.
 */

/**
 * SECTION:element-c63dec
 * @title: c63dec
 *
 * Decodes Codec63 into I420 pictures, on the GPU when one is usable
 * (#GstC63Dec:backend, default auto) and otherwise on the CPU; both give the
 * same pixels as the reference decoder, which it is as liberal as (see
 * docs/decoder-tolerance.md). Takes parsed frames (from #c63parse or an
 * encoder) or a raw byte stream, which it splits itself. The picture size
 * comes from each frame, so the output caps follow the stream; framerate
 * and pixel aspect ratio come from the input caps. Corrupt frames are
 * dropped and counted with GStreamer's max-errors mechanism, and a keyframe
 * is requested upstream. With the CUDA backend, the pictures can stay on
 * the GPU (`memory:CUDAMemory` output) when downstream takes them.
 *
 * ## Example launch lines
 * |[
 * gst-launch-1.0 filesrc location=clip.c63 ! c63parse ! c63dec ! videoconvert ! autovideosink
 * ]| Play a Codec63 file.
 * |[
 * gst-launch-1.0 filesrc location=clip.c63 ! c63dec backend=cpu ! filesink location=clip.yuv
 * ]| Decode on the CPU to a raw file (rows padded as GStreamer lays out I420).
 *
 * Since: 0.1
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "gstc63dec.h"
#include "common/gstc63pinnedallocator.h"
#include "common/gstc63videolayout.h"
#ifdef HAVE_GST_CUDA
#include "common/gstc63cuda.h"
#endif

GST_DEBUG_CATEGORY_STATIC(gst_c63_dec_debug);
#define GST_CAT_DEFAULT gst_c63_dec_debug

static GstStaticPadTemplate sink_template =
    GST_STATIC_PAD_TEMPLATE("sink", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS("video/x-c63"));
#define SRC_CAPS                                                                                   \
  "video/x-raw, format = (string) I420, width = (int) [ 8, 8192 ], "                               \
  "height = (int) [ 8, 8192 ], framerate = (fraction) [ 0/1, MAX ]"
#ifdef HAVE_GST_CUDA
/* On the CUDA backend pictures can stay on the GPU for downstream CUDA
 * elements (negotiated when downstream takes CUDA memory). */
#define ALL_SRC_CAPS                                                                               \
  "video/x-raw(" GST_C63_CAPS_FEATURE_CUDA "), format = (string) I420, "                           \
  "width = (int) [ 8, 8192 ], height = (int) [ 8, 8192 ], "                                        \
  "framerate = (fraction) [ 0/1, MAX ]; " SRC_CAPS
#else
#define ALL_SRC_CAPS SRC_CAPS
#endif
static GstStaticPadTemplate src_template =
    GST_STATIC_PAD_TEMPLATE("src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS(ALL_SRC_CAPS));

G_DEFINE_TYPE(GstC63Dec, gst_c63_dec, GST_TYPE_VIDEO_DECODER);

/* ---- Output memory that may fail ---------------------------------------- */

/* GStreamer 1.22's system memory allocator takes its blocks from
 * g_slice_alloc, i.e. g_malloc, which aborts the process when memory runs
 * out. The output pool allocates pictures (3 MB at 1080p, 100 MB at
 * 8192x8192) from this allocator instead: the same system memory, but from
 * g_try_malloc, so a failure becomes an error flow and an error message
 * (gst_c63_dec_allocate_output). Each block is wrapped as ordinary system
 * memory, which frees it with g_free: mapping, sharing and copying are
 * GStreamer's own. */
typedef GstAllocator GstC63TryAllocator;
typedef GstAllocatorClass GstC63TryAllocatorClass;
G_DEFINE_TYPE(GstC63TryAllocator, gst_c63_try_allocator, GST_TYPE_ALLOCATOR);

static GstMemory *gst_c63_try_allocator_alloc(G_GNUC_UNUSED GstAllocator *allocator, gsize size,
                                              GstAllocationParams *params)
{
  gsize align = params->align | gst_memory_alignment;
  gsize maxsize, shift;
  guint8 *data;

  /* prefix + size + padding + alignment slack must not overflow */
  if (size > G_MAXSIZE / 4 || params->prefix > G_MAXSIZE / 4 || params->padding > G_MAXSIZE / 4 ||
      align > G_MAXSIZE / 8)
    return NULL;
  maxsize = params->prefix + size + params->padding;
  data = g_try_malloc(maxsize + align);
  if (!data) {
    GST_WARNING("out of memory allocating %" G_GSIZE_FORMAT " bytes", maxsize + align);
    return NULL;
  }
  shift = ((guintptr)data & align) ? align + 1 - ((guintptr)data & align) : 0;
  if (params->prefix && (params->flags & GST_MEMORY_FLAG_ZERO_PREFIXED))
    memset(data + shift, 0, params->prefix);
  if (params->padding && (params->flags & GST_MEMORY_FLAG_ZERO_PADDED))
    memset(data + shift + params->prefix + size, 0, params->padding);
  return gst_memory_new_wrapped(params->flags, data + shift, maxsize, params->prefix, size, data,
                                g_free);
}

static void gst_c63_try_allocator_free(G_GNUC_UNUSED GstAllocator *allocator,
                                       G_GNUC_UNUSED GstMemory *memory)
{
  /* Never called: the memory belongs to the system allocator (see alloc). */
  g_return_if_reached();
}

static void gst_c63_try_allocator_class_init(GstC63TryAllocatorClass *klass)
{
  klass->alloc = gst_c63_try_allocator_alloc;
  klass->free = gst_c63_try_allocator_free;
}

static void gst_c63_try_allocator_init(GstC63TryAllocator *allocator)
{
  allocator->mem_type = GST_ALLOCATOR_SYSMEM;
}

/* ---- The decoder --------------------------------------------------------- */

/* Where pictures are reconstructed: "auto" takes the GPU when one is
 * usable; every choice gives the same pictures. */
enum { BACKEND_AUTO, BACKEND_CPU, BACKEND_CUDA };
enum { PROP_0, PROP_BACKEND, PROP_DEVICE_ID, PROP_THREADS };
#define DEFAULT_BACKEND BACKEND_AUTO
#define DEFAULT_DEVICE_ID 0

static GType gst_c63_dec_backend_get_type(void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
      {BACKEND_AUTO, "The GPU when a CUDA device is usable, else the CPU", "auto"},
      {BACKEND_CPU, "The CPU, on one thread per core", "cpu"},
      {BACKEND_CUDA, "The GPU, the reference frame resident on it", "cuda"},
      {0, NULL, NULL},
  };
  if (g_once_init_enter(&type))
    g_once_init_leave(&type, g_enum_register_static("GstC63DecBackend", values));
  return type;
}

static gboolean gst_c63_dec_start(GstVideoDecoder *vdec)
{
  GstC63Dec *self = GST_C63_DEC(vdec);
  c63_dec_params params;
  char msg[256] = "";
  int status;

  c63_dec_params_init(&params);
  GST_OBJECT_LOCK(self);
  params.device_id = self->device_id;
  params.threads = self->threads;
  params.backend = self->backend == BACKEND_CPU ? C63_BACKEND_CPU : C63_BACKEND_CUDA;
  if (self->backend == BACKEND_AUTO &&
      !c63_backend_available(C63_BACKEND_CUDA, params.device_id, NULL, 0))
    params.backend = C63_BACKEND_CPU;
  GST_OBJECT_UNLOCK(self);
#ifdef HAVE_GST_CUDA
  /* The GPU backend works in the pipeline's shared CUDA context, so its
   * pictures can go to downstream CUDA elements without leaving the GPU. */
  if (params.backend == C63_BACKEND_CUDA &&
      c63_backend_available(C63_BACKEND_CUDA, params.device_id, NULL, 0)) {
    if (!gst_c63_cuda_open(GST_ELEMENT(self), params.device_id, &self->cuda_ctx)) return FALSE;
    params.cuda_context = gst_c63_cuda_handle(self->cuda_ctx);
  }
#endif
  /* Delta frames before the first keyframe are dropped by the base class,
   * which asks upstream for a keyframe. */
  gst_video_decoder_set_needs_sync_point(vdec, TRUE);
  status = c63_decoder_new(&params, &self->dec, msg, sizeof msg);
  if (status == C63_ERR_NO_DEVICE) {
    GST_ELEMENT_ERROR(self, RESOURCE, NOT_FOUND,
                      ("No usable CUDA device %d for backend=cuda: %s. Use backend=cpu or auto.",
                       params.device_id, msg),
                      (NULL));
    return FALSE;
  }
  if (status != C63_OK) {
    GST_ELEMENT_ERROR(
        self, RESOURCE, NO_SPACE_LEFT,
        ("Could not create the Codec63 decoder: %s", msg[0] ? msg : c63_status_string(status)),
        (NULL));
    return FALSE;
  }
  GST_INFO_OBJECT(self, "reconstructing on the %s backend", c63_decoder_backend_name(self->dec));
  gst_c63_framer_reset(&self->framer);
  self->bytes_in = self->bytes_skipped = 0;
  self->frames_in = self->frames_out = self->frames_corrupt = self->frames_no_ref = 0;
  self->delta_units_in = 0;
  self->error_run = self->failed = FALSE;
  self->last_key_sent = -1;
  gst_c63_dec_output_start(&self->output, self->dec);
  return TRUE;
}

static gboolean gst_c63_dec_stop(GstVideoDecoder *vdec)
{
  GstC63Dec *self = GST_C63_DEC(vdec);

  g_clear_pointer(&self->dec, c63_decoder_free);
  g_clear_pointer(&self->input_state, gst_video_codec_state_unref);
  gst_clear_object(&self->cuda_ctx);
  self->cuda_output = FALSE;
  return TRUE;
}

#ifdef HAVE_GST_CUDA
/* Whether downstream takes CUDA memory (ANY caps do not count: a fakesink
 * or an appsink gets system memory unless it asks for CUDA memory). */
static gboolean gst_c63_dec_downstream_takes_cuda(GstC63Dec *self, const GstVideoInfo *info)
{
  GstCaps *peer = gst_pad_peer_query_caps(GST_VIDEO_DECODER_SRC_PAD(self), NULL);
  GstCaps *want = gst_video_info_to_caps(info);
  gboolean cuda = FALSE;
  guint i;

  gst_caps_set_features(want, 0, gst_caps_features_new(GST_C63_CAPS_FEATURE_CUDA, NULL));
  for (i = 0; peer && !gst_caps_is_any(peer) && i < gst_caps_get_size(peer) && !cuda; i++) {
    GstCapsFeatures *f = gst_caps_get_features(peer, i);
    cuda = f && gst_caps_features_contains(f, GST_C63_CAPS_FEATURE_CUDA);
  }
  cuda = cuda && gst_caps_can_intersect(want, peer);
  gst_caps_unref(want);
  if (peer) gst_caps_unref(peer);
  return cuda;
}
#endif

/* Output in CUDA memory when the GPU backend runs and downstream takes it.
 * libc63 leaves the pictures on the GPU when the GPU copies them straight
 * into the output buffers: CUDA memory, or page-locked system memory of
 * our pool (decide_allocation); other system memory is filled from
 * libc63's page-locked pictures by the CPU. */
static gboolean gst_c63_dec_negotiate(GstVideoDecoder *vdec)
{
  GstC63Dec *self = GST_C63_DEC(vdec);
  gboolean ok;
#ifdef HAVE_GST_CUDA
  GstVideoCodecState *state = gst_video_decoder_get_output_state(vdec);
  gboolean cuda = FALSE;

  if (state && self->cuda_ctx && gst_c63_dec_downstream_takes_cuda(self, &state->info)) {
    GstCaps *caps = gst_video_info_to_caps(&state->info);
    gst_caps_set_features(caps, 0, gst_caps_features_new(GST_C63_CAPS_FEATURE_CUDA, NULL));
    gst_caps_replace(&state->caps, caps);
    gst_caps_unref(caps);
    cuda = TRUE;
  }
  if (state) gst_video_codec_state_unref(state);
  self->cuda_output = cuda;
  GST_DEBUG_OBJECT(self, "output in %s memory", cuda ? "CUDA" : "system");
#endif
  self->pinned_output = FALSE;
  ok = GST_VIDEO_DECODER_CLASS(gst_c63_dec_parent_class)->negotiate(vdec);
  if (self->dec)
    c63_decoder_set_output(self->dec, self->cuda_output || self->pinned_output ? C63_MEMORY_CUDA
                                                                               : C63_MEMORY_HOST);
  return ok;
}

#ifdef HAVE_GST_CUDA
static gboolean gst_c63_dec_sink_query(GstVideoDecoder *vdec, GstQuery *query)
{
  GstC63Dec *self = GST_C63_DEC(vdec);

  if (gst_c63_cuda_handle_query(GST_ELEMENT(self), query, self->cuda_ctx)) return TRUE;
  return GST_VIDEO_DECODER_CLASS(gst_c63_dec_parent_class)->sink_query(vdec, query);
}

static gboolean gst_c63_dec_src_query(GstVideoDecoder *vdec, GstQuery *query)
{
  GstC63Dec *self = GST_C63_DEC(vdec);

  if (gst_c63_cuda_handle_query(GST_ELEMENT(self), query, self->cuda_ctx)) return TRUE;
  return GST_VIDEO_DECODER_CLASS(gst_c63_dec_parent_class)->src_query(vdec, query);
}

static void gst_c63_dec_set_context(GstElement *element, GstContext *context)
{
  GstC63Dec *self = GST_C63_DEC(element);
  gint device_id;

  GST_OBJECT_LOCK(self);
  device_id = self->device_id;
  GST_OBJECT_UNLOCK(self);
  gst_c63_cuda_set_context(element, context, device_id, &self->cuda_ctx);
  GST_ELEMENT_CLASS(gst_c63_dec_parent_class)->set_context(element, context);
}

/* CUDA memory output comes from a CUDA buffer pool of the shared context
 * (downstream's if it offers one, else ours). */
static gboolean gst_c63_dec_decide_cuda_allocation(GstC63Dec *self, GstQuery *query)
{
  GstCaps *caps = NULL;
  GstBufferPool *pool;
  guint size = 0;

  gst_query_parse_allocation(query, &caps, NULL);
  pool = gst_c63_cuda_pool_new(self->cuda_ctx, caps, &size);
  if (!pool) return FALSE;
  if (gst_query_get_n_allocation_pools(query) > 0)
    gst_query_set_nth_allocation_pool(query, 0, pool, size, 0, 0);
  else
    gst_query_add_allocation_pool(query, pool, size, 0, 0);
  gst_object_unref(pool);
  return TRUE;
}
#endif

/* Pictures leave c63_decoder_delay() frames after their input: that many
 * frame durations, at the library's default rate when the input caps carry no framerate (a
 * Codec63 stream has none of its own). */
static void gst_c63_dec_update_latency(GstC63Dec *self)
{
  gint fps_n = C63_DEFAULT_FPS_NUM, fps_d = C63_DEFAULT_FPS_DEN;
  GstClockTime latency;

  if (self->input_state && GST_VIDEO_INFO_FPS_N(&self->input_state->info) > 0) {
    fps_n = GST_VIDEO_INFO_FPS_N(&self->input_state->info);
    fps_d = GST_VIDEO_INFO_FPS_D(&self->input_state->info);
  }
  latency = gst_util_uint64_scale(GST_SECOND, (guint64)c63_decoder_delay(self->dec) * fps_d, fps_n);
  GST_DEBUG_OBJECT(self, "latency %" GST_TIME_FORMAT " (%d frames)", GST_TIME_ARGS(latency),
                   c63_decoder_delay(self->dec));
  gst_video_decoder_set_latency(GST_VIDEO_DECODER(self), latency, latency);
}

static gboolean gst_c63_dec_set_format(GstVideoDecoder *vdec, GstVideoCodecState *state)
{
  GstC63Dec *self = GST_C63_DEC(vdec);
  GstStructure *s = gst_caps_get_structure(state->caps, 0);
  gboolean parsed = FALSE;

  /* Only a parsed stream is one frame per buffer; anything else (a file,
   * a network byte stream) goes through our own parse step. */
  gst_structure_get_boolean(s, "parsed", &parsed);
  gst_video_decoder_set_packetized(vdec, parsed);
  GST_DEBUG_OBJECT(self, "input %s", parsed ? "packetized" : "byte stream");

  g_clear_pointer(&self->input_state, gst_video_codec_state_unref);
  self->input_state = gst_video_codec_state_ref(state);
  gst_c63_dec_update_latency(self);
  return TRUE;
}

static GstFlowReturn gst_c63_dec_parse(GstVideoDecoder *vdec, GstVideoCodecFrame *frame,
                                       GstAdapter *adapter, gboolean at_eos)
{
  GstC63Dec *self = GST_C63_DEC(vdec);

  for (;;) {
    gsize size = 0;
    gboolean keyframe, complete;

    switch (gst_c63_framer_next(&self->framer, adapter, at_eos, &size, &keyframe, &complete)) {
    case GST_C63_FRAMER_NEED_DATA:
      if (size > 0) gst_video_decoder_add_to_frame(vdec, (int)size);
      return GST_VIDEO_DECODER_FLOW_NEED_DATA;
    case GST_C63_FRAMER_SKIP:
      GST_DEBUG_OBJECT(self, "skipping %" G_GSIZE_FORMAT " bytes of non-frame data", size);
      self->bytes_in += size;
      self->bytes_skipped += size;
      gst_adapter_flush(adapter, size);
      continue;
    case GST_C63_FRAMER_FRAME:
      GST_LOG_OBJECT(self, "frame%s%s", keyframe ? ", keyframe" : "", complete ? "" : " (broken)");
      if (size > 0) gst_video_decoder_add_to_frame(vdec, (int)size);
      if (keyframe) GST_VIDEO_CODEC_FRAME_SET_SYNC_POINT(frame);
      return gst_video_decoder_have_frame(vdec);
    }
  }
}

/* Set (or change) the output caps to the stream's picture size, and the
 * framerate and pixel aspect ratio of the input caps (renewed when new
 * input caps change them mid-stream). */
static gboolean gst_c63_dec_ensure_output(GstC63Dec *self, int width, int height)
{
  GstVideoDecoder *vdec = GST_VIDEO_DECODER(self);
  GstVideoCodecState *out = gst_video_decoder_get_output_state(vdec);
  const GstVideoInfo *in = self->input_state ? &self->input_state->info : NULL;
  gboolean same = out && GST_VIDEO_INFO_WIDTH(&out->info) == width &&
                  GST_VIDEO_INFO_HEIGHT(&out->info) == height &&
                  (!in || (GST_VIDEO_INFO_FPS_N(&out->info) == GST_VIDEO_INFO_FPS_N(in) &&
                           GST_VIDEO_INFO_FPS_D(&out->info) == GST_VIDEO_INFO_FPS_D(in) &&
                           GST_VIDEO_INFO_PAR_N(&out->info) == GST_VIDEO_INFO_PAR_N(in) &&
                           GST_VIDEO_INFO_PAR_D(&out->info) == GST_VIDEO_INFO_PAR_D(in)));

  if (out) gst_video_codec_state_unref(out);
  if (same) return TRUE;
  GST_INFO_OBJECT(self, "output %dx%d", width, height);
  out = gst_video_decoder_set_output_state(vdec, GST_VIDEO_FORMAT_I420, width, height,
                                           self->input_state);
  gst_video_codec_state_unref(out);
  return gst_video_decoder_negotiate(vdec);
}

/* Negotiate from the first frame's header, before its picture exists:
 * downstream then chooses CUDA or system memory before libc63 decodes,
 * so the first pictures of an all-GPU pipeline never pass through host
 * memory. A header that does not parse is left to the decoder to report. */
static void gst_c63_dec_negotiate_early(GstC63Dec *self, const uint8_t *data, size_t size)
{
  GstVideoCodecState *out = gst_video_decoder_get_output_state(GST_VIDEO_DECODER(self));
  c63_frame_header hdr;

  if (out) {
    gst_video_codec_state_unref(out);
    return;
  }
  if (c63_parse_frame_headers_only(data, size, &hdr, NULL, 0) != C63_OK) return;
  if (!gst_c63_dec_ensure_output(self, hdr.width, hdr.height))
    GST_DEBUG_OBJECT(self, "early negotiation failed; retried with the first picture");
}

/* Map an output buffer for writing: CUDA memory of our context on the
 * device (*where says which), else in host memory. The buffer comes from
 * a pool, possibly downstream's, whose GstVideoMeta is checked against
 * the caps and the memory before libc63 writes a row: a layout that does
 * not fit is an error (posted here), never a write past the buffer. */
static gboolean gst_c63_dec_map_output(GstC63Dec *self, const GstVideoInfo *info, GstBuffer *buffer,
                                       GstVideoFrame *vframe, c63_memory *where)
{
  gboolean mapped = FALSE;
  gchar *why = NULL;

  *where = C63_MEMORY_HOST;
  if (gst_c63_video_layout_check_meta(info, buffer, &why)) {
#ifdef HAVE_GST_CUDA
    mapped =
        self->cuda_output && gst_c63_cuda_map(self->cuda_ctx, buffer, info, vframe, GST_MAP_WRITE);
    if (mapped) *where = C63_MEMORY_CUDA;
#endif
    if (!mapped && !gst_video_frame_map(vframe, info, buffer, GST_MAP_WRITE)) {
      GST_ELEMENT_ERROR(self, RESOURCE, WRITE, ("Could not map the output buffer"), (NULL));
      return FALSE;
    }
    if (gst_c63_video_layout_check_frame(info, vframe, &why)) return TRUE;
    gst_video_frame_unmap(vframe);
  }
  GST_ELEMENT_ERROR(self, RESOURCE, WRITE,
                    ("The output buffer does not fit a %dx%d picture: %s. The buffer pool "
                     "(downstream's, when it offers one) made a GstVideoMeta that disagrees "
                     "with its memory or the caps.",
                     GST_VIDEO_INFO_WIDTH(info), GST_VIDEO_INFO_HEIGHT(info), why),
                    ("buffer of %" G_GSIZE_FORMAT " bytes", gst_buffer_get_size(buffer)));
  g_free(why);
  return FALSE;
}

/* Start the copy of libc63's picture into the output buffer, whatever its
 * layout: on the GPU when the output is CUDA memory (libc63 copies device
 * to device in the shared context), by DMA into page-locked system memory,
 * else by the CPU. *ticket names the copy for the output task (0: done).
 * FALSE: an error was posted. */
static gboolean gst_c63_dec_copy_picture(GstC63Dec *self, const c63_decoded_picture *pic,
                                         GstVideoCodecFrame *frame, guint64 *ticket)
{
  GstVideoCodecState *out = gst_video_decoder_get_output_state(GST_VIDEO_DECODER(self));
  GstVideoFrame vframe;
  c63_memory where;
  gboolean ok;
  uint8_t *dst[3];
  int stride[3], c, status;

  ok = gst_c63_dec_map_output(self, &out->info, frame->output_buffer, &vframe, &where);
  gst_video_codec_state_unref(out);
  if (!ok) return FALSE;
  for (c = 0; c < 3; c++) {
    dst[c] = GST_VIDEO_FRAME_COMP_DATA(&vframe, c);
    stride[c] = GST_VIDEO_FRAME_COMP_STRIDE(&vframe, c);
  }
  status = c63_decoder_copy_picture_async(self->dec, pic, dst, stride, where, ticket);
  gst_video_frame_unmap(&vframe);
  if (status != C63_OK) {
    GST_ELEMENT_ERROR(self, RESOURCE, WRITE, ("Could not copy the picture to the output buffer"),
                      ("%s", c63_decoder_error(self->dec)));
    return FALSE;
  }
  return TRUE;
}

/* A frame came out without a picture: unless a keyframe was sent after it
 * (frames are in flight), ask upstream for one (a force-key-unit event) and
 * have the base class drop the input until it comes, as nothing can be
 * predicted from what follows. */
static void gst_c63_dec_request_keyframe(GstC63Dec *self, GstVideoCodecFrame *frame)
{
  if ((gint64)frame->system_frame_number < self->last_key_sent) return;
  gst_video_decoder_request_sync_point(GST_VIDEO_DECODER(self), frame,
                                       GST_VIDEO_DECODER_REQUEST_SYNC_POINT_DISCARD_INPUT);
}

/* Drop a corrupt frame. GST_VIDEO_DECODER_ERROR is the one mechanism that
 * counts bad frames: once more than max-errors frames in a row were bad it
 * posts an error message and returns GST_FLOW_ERROR. Below that limit
 * GStreamer 1.22's GstVideoDecoder only writes a debug log line, so the
 * element posts one warning itself, for the first corrupt frame after a
 * picture: a glitch shows on the bus, but a run of garbage (200 KB of
 * repeated frame starts is 50,000 broken frames) does not flood it. */
static GstFlowReturn gst_c63_dec_drop_corrupt(GstC63Dec *self, GstVideoCodecFrame *frame,
                                              int status)
{
  GstFlowReturn ret = GST_FLOW_OK;

  self->frames_corrupt++;
  /* The text is posted only when the frame is one more than max-errors
   * allows, which ends decoding; below that the base class only logs it. */
  GST_VIDEO_DECODER_ERROR(self, 1, STREAM, DECODE,
                          ("Corrupt Codec63 frame, more than max-errors (%d) allows: decoding "
                           "stops",
                           gst_video_decoder_get_max_errors(GST_VIDEO_DECODER(self))),
                          ("%s: %s", c63_status_string(status), c63_decoder_error(self->dec)), ret);
  if (ret != GST_FLOW_OK)
    self->failed = TRUE;
  else if (!self->error_run)
    GST_ELEMENT_WARNING(self, STREAM, DECODE,
                        ("Corrupt Codec63 frame, skipping to the next keyframe"),
                        ("%s: %s (further corrupt frames before the next picture are not "
                         "reported, but count against max-errors)",
                         c63_status_string(status), c63_decoder_error(self->dec)));
  self->error_run = TRUE;
  gst_c63_dec_request_keyframe(self, frame);
  gst_video_decoder_drop_frame(GST_VIDEO_DECODER(self), frame);
  return ret;
}

/* Allocate the frame's output buffer. Under memory pressure the pool (ours
 * or downstream's) fails with GST_FLOW_ERROR and the base class posts
 * nothing, so the element says which size could not be had. Other flows
 * (FLUSHING, NOT_NEGOTIATED) are passed on as they are. */
static GstFlowReturn gst_c63_dec_allocate_output(GstC63Dec *self, GstVideoCodecFrame *frame)
{
  GstVideoDecoder *vdec = GST_VIDEO_DECODER(self);
  GstBufferPoolAcquireParams params = {.flags = GST_BUFFER_POOL_ACQUIRE_FLAG_DONTWAIT};
  GstFlowReturn ret;
  GstVideoCodecState *out;

  /* A pool with a limit may have all its buffers in frames the output task
   * has yet to push: push them here (the task would need the stream lock
   * this thread holds while it waits for a buffer), then wait as usual for
   * downstream to give one back. */
  while ((ret = gst_video_decoder_allocate_output_frame_with_params(vdec, frame, &params)) ==
             GST_FLOW_EOS &&
         gst_c63_dec_output_finish_one(&self->output))
    ;
  if (ret == GST_FLOW_EOS) ret = gst_video_decoder_allocate_output_frame(vdec, frame);

  if (ret != GST_FLOW_ERROR) return ret;
  out = gst_video_decoder_get_output_state(vdec);
  GST_ELEMENT_ERROR(
      self, RESOURCE, NO_SPACE_LEFT,
      ("Out of memory: could not allocate an output picture of %dx%d (%" G_GSIZE_FORMAT " bytes)",
       GST_VIDEO_INFO_WIDTH(&out->info), GST_VIDEO_INFO_HEIGHT(&out->info),
       GST_VIDEO_INFO_SIZE(&out->info)),
      ("gst_video_decoder_allocate_output_frame: %s", gst_flow_get_name(ret)));
  gst_video_codec_state_unref(out);
  self->failed = TRUE;
  return ret;
}

/* One picture (or failure) out of libc63, for the frame it was sent with. */
static GstFlowReturn gst_c63_dec_output(GstC63Dec *self, int status, const c63_decoded_picture *pic)
{
  GstVideoDecoder *vdec = GST_VIDEO_DECODER(self);
  GstVideoCodecFrame *frame = gst_video_decoder_get_frame(vdec, (int)pic->user);
  GstFlowReturn ret;
  guint64 ticket;

  if (!frame) {
    /* The base class let go of it (it cannot while we hold it in flight). */
    GST_WARNING_OBJECT(self, "no frame %d for a decoded picture", (int)pic->user);
    return GST_FLOW_OK;
  }
  if (status == C63_ERR_NO_REFERENCE) {
    /* A delta frame before the first keyframe (or after an error): there is
     * nothing to predict from, so it is skipped, not shown broken. */
    GST_DEBUG_OBJECT(self, "skipping delta frame without a preceding keyframe");
    self->frames_no_ref++;
    gst_c63_dec_request_keyframe(self, frame);
    gst_video_decoder_release_frame(vdec, frame);
    return GST_FLOW_OK;
  }
  if (status != C63_OK) {
    /* the pictures before it go first, an error after them */
    ret = gst_c63_dec_output_drain(&self->output);
    if (ret != GST_FLOW_OK) {
      gst_video_decoder_release_frame(vdec, frame);
      return ret;
    }
    if (status == C63_ERR_NOMEM) {
      gst_video_decoder_drop_frame(vdec, frame);
      GST_ELEMENT_ERROR(self, RESOURCE, NO_SPACE_LEFT, ("Out of memory decoding a frame"),
                        ("%s", c63_decoder_error(self->dec)));
      self->failed = TRUE;
      return GST_FLOW_ERROR;
    }
    return gst_c63_dec_drop_corrupt(self, frame, status);
  }
  if (!gst_c63_dec_ensure_output(self, pic->width, pic->height)) {
    gst_video_decoder_drop_frame(vdec, frame);
    return GST_FLOW_NOT_NEGOTIATED;
  }
  ret = gst_c63_dec_allocate_output(self, frame);
  if (ret != GST_FLOW_OK) {
    gst_video_decoder_drop_frame(vdec, frame);
    return ret;
  }
  if (!gst_c63_dec_copy_picture(self, pic, frame, &ticket)) {
    gst_video_decoder_drop_frame(vdec, frame);
    self->failed = TRUE;
    return GST_FLOW_ERROR;
  }
  self->frames_out++;
  self->error_run = FALSE;
  return gst_c63_dec_output_queue(&self->output, frame, ticket);
}

/* Receive what libc63 has ready (everything, when draining). */
static GstFlowReturn gst_c63_dec_receive(GstC63Dec *self)
{
  for (;;) {
    c63_decoded_picture pic;
    int status = c63_decoder_receive_picture(self->dec, &pic);
    GstFlowReturn ret;

    if (status == C63_ERR_AGAIN || status == C63_ERR_EOF) return GST_FLOW_OK;
    ret = gst_c63_dec_output(self, status, &pic);
    if (ret != GST_FLOW_OK) return ret;
  }
}

/* A frame's input mapped for as long as the frame lives: libc63 reads the
 * bytes where they are until the frame's picture is received, and the
 * base class holds the frame (and its input buffer) until then. */
typedef struct {
  GstBuffer *buffer;
  GstMapInfo map;
} GstC63DecInput;

static void gst_c63_dec_input_free(gpointer data)
{
  GstC63DecInput *in = data;

  gst_buffer_unmap(in->buffer, &in->map);
  gst_buffer_unref(in->buffer);
  g_free(in);
}

static GstFlowReturn gst_c63_dec_handle_frame(GstVideoDecoder *vdec, GstVideoCodecFrame *frame)
{
  GstC63Dec *self = GST_C63_DEC(vdec);
  GstFlowReturn ret = GST_FLOW_OK;
  GstC63DecInput *in = g_new0(GstC63DecInput, 1);
  int status;

  self->frames_in++;
  self->bytes_in += gst_buffer_get_size(frame->input_buffer);
  if (!gst_buffer_map(frame->input_buffer, &in->map, GST_MAP_READ)) {
    g_free(in);
    gst_video_decoder_drop_frame(vdec, frame);
    GST_ELEMENT_ERROR(self, RESOURCE, READ, ("Could not map the input buffer"), (NULL));
    self->failed = TRUE;
    return GST_FLOW_ERROR;
  }
  in->buffer = gst_buffer_ref(frame->input_buffer);
  gst_video_codec_frame_set_user_data(frame, in, gst_c63_dec_input_free);
  if (GST_VIDEO_CODEC_FRAME_IS_SYNC_POINT(frame)) self->last_key_sent = frame->system_frame_number;
  gst_c63_dec_negotiate_early(self, in->map.data, in->map.size);
  /* libc63 reads the bytes in place; the base class keeps the frame in its
   * list until the picture comes back tagged with its number. */
  while ((status = c63_decoder_send_packet_borrowed(self->dec, in->map.data, in->map.size,
                                                    frame->system_frame_number)) == C63_ERR_AGAIN &&
         ret == GST_FLOW_OK) {
    c63_decoded_picture pic;
    status = c63_decoder_receive_picture(self->dec, &pic);
    if (status != C63_ERR_AGAIN && status != C63_ERR_EOF)
      ret = gst_c63_dec_output(self, status, &pic);
  }
  if (ret != GST_FLOW_OK) {
    gst_video_decoder_release_frame(vdec, frame);
    return ret;
  }
  if (status != C63_OK) {
    gst_video_decoder_drop_frame(vdec, frame);
    GST_ELEMENT_ERROR(self, RESOURCE, NO_SPACE_LEFT, ("Out of memory decoding a frame"),
                      ("%s", c63_decoder_error(self->dec)));
    self->failed = TRUE;
    return GST_FLOW_ERROR;
  }
  gst_video_codec_frame_unref(frame);
  ret = gst_c63_dec_receive(self);
  /* a push that failed since, on the output task */
  return ret == GST_FLOW_OK ? gst_c63_dec_output_flow(&self->output) : ret;
}

/* Send nothing more: every frame in flight comes out. */
static GstFlowReturn gst_c63_dec_drain(GstVideoDecoder *vdec)
{
  GstC63Dec *self = GST_C63_DEC(vdec);
  GstFlowReturn ret;

  if (!self->dec) return GST_FLOW_OK;
  c63_decoder_send_packet(self->dec, NULL, 0, 0);
  ret = gst_c63_dec_receive(self);
  if (ret != GST_FLOW_OK) return ret;
  /* every picture pushed before the caller goes on (EOS after them) */
  return gst_c63_dec_output_drain(&self->output);
}

/* At EOS: input that gave no picture at all is an error, not an empty
 * success (gst-launch-1.0 would exit 0 with an empty file). GstVideoDecoder
 * has a check of its own, but it misses streams whose frames were all
 * dropped as corrupt, and says nothing of why; returning an error flow
 * here also keeps it from posting a second message. */
static GstFlowReturn gst_c63_dec_finish(GstVideoDecoder *vdec)
{
  GstC63Dec *self = GST_C63_DEC(vdec);
  GstFlowReturn ret = gst_c63_dec_drain(vdec);

  if (ret != GST_FLOW_OK && ret != GST_FLOW_ERROR) return ret;
  if (self->failed) /* already reported */
    return GST_FLOW_ERROR;
  if (self->frames_out > 0 || (self->bytes_in == 0 && self->delta_units_in == 0))
    return GST_FLOW_OK;
  if (self->frames_in == 0 && self->delta_units_in == 0)
    GST_ELEMENT_ERROR(self, STREAM, DECODE,
                      ("No frame could be decoded: %" G_GUINT64_FORMAT " bytes of input hold no "
                       "Codec63 frame. Is this a Codec63 stream?",
                       self->bytes_in),
                      ("no frame start (FF D8 FF DB) found"));
  else if (self->frames_corrupt == 0)
    GST_ELEMENT_ERROR(self, STREAM, DECODE,
                      ("No keyframe received: the stream must start with a keyframe, and none "
                       "of its frames was one (a stream cut after its last keyframe?)"),
                      ("%u delta frames had no keyframe before them; %u input buffers were "
                       "flagged as delta units (GStreamer discards those before the first "
                       "keyframe without decoding them)",
                       self->frames_no_ref, self->delta_units_in));
  else
    GST_ELEMENT_ERROR(self, STREAM, DECODE,
                      ("No frame could be decoded: of %u frames, %u were corrupt and %u were "
                       "delta frames with no keyframe before them",
                       self->frames_in, self->frames_corrupt, self->frames_no_ref),
                      ("%" G_GUINT64_FORMAT " bytes of input: %" G_GUINT64_FORMAT
                       " in dropped frames, %" G_GUINT64_FORMAT " outside any frame",
                       self->bytes_in, self->bytes_in - self->bytes_skipped, self->bytes_skipped));
  self->failed = TRUE;
  return GST_FLOW_ERROR;
}

static gboolean gst_c63_dec_flush(GstVideoDecoder *vdec)
{
  GstC63Dec *self = GST_C63_DEC(vdec);

  /* After a seek the next frame may be anything: drop the frames in
   * flight (the base class drops its own records of them) and wait for a
   * keyframe. */
  gst_c63_dec_output_flush(&self->output);
  c63_decoder_flush(self->dec);
  gst_c63_framer_reset(&self->framer);
  self->error_run = FALSE; /* a corrupt frame after the seek is news */
  return TRUE;
}

/* A byte stream carries no timing or index: a seek in time that upstream
 * cannot take (filesrc seeks in bytes only) is refused with a message
 * saying what to do, c63parse finding the frames and keyframes. */
static gboolean gst_c63_dec_src_event(GstVideoDecoder *vdec, GstEvent *event)
{
  gboolean byte_stream_seek =
      GST_EVENT_TYPE(event) == GST_EVENT_SEEK && !gst_video_decoder_get_packetized(vdec);
  gboolean ok = GST_VIDEO_DECODER_CLASS(gst_c63_dec_parent_class)->src_event(vdec, event);

  if (byte_stream_seek && !ok)
    GST_ELEMENT_WARNING(vdec, STREAM, NOT_IMPLEMENTED,
                        ("Cannot seek: c63dec reads this Codec63 stream as plain bytes. Put "
                         "c63parse in front of it (filesrc ! c63parse ! c63dec) to seek."),
                        ("upstream refused the seek and the input is not parsed"));
  return ok;
}

/* Use GstVideoMeta downstream when it is supported, so the output pool may
 * pick padded strides; and let a plain video pool of system memory (ours
 * when downstream offers none) allocate page-locked memory on the GPU
 * backend, which the GPU fills by DMA while it decodes on, or else through
 * try_mem: either way running out of memory is an error rather than an
 * abort. Other pools and allocators (downstream's GL, DMA, ...) are left
 * alone. */
static gboolean gst_c63_dec_decide_allocation(GstVideoDecoder *vdec, GstQuery *query)
{
  GstC63Dec *self = GST_C63_DEC(vdec);
  GstBufferPool *pool = NULL;
  GstStructure *config;
  GstAllocator *allocator = NULL, *ours;
  GstAllocationParams params;
  gboolean changed = FALSE, gpu;

#ifdef HAVE_GST_CUDA
  if (self->cuda_output) return gst_c63_dec_decide_cuda_allocation(self, query);
#endif
  if (!GST_VIDEO_DECODER_CLASS(gst_c63_dec_parent_class)->decide_allocation(vdec, query))
    return FALSE;
  if (gst_query_get_n_allocation_pools(query) > 0)
    gst_query_parse_nth_allocation_pool(query, 0, &pool, NULL, NULL, NULL);
  if (!pool) return TRUE;
  config = gst_buffer_pool_get_config(pool);
  if (gst_query_find_allocation_meta(query, GST_VIDEO_META_API_TYPE, NULL)) {
    gst_buffer_pool_config_add_option(config, GST_BUFFER_POOL_OPTION_VIDEO_META);
    changed = TRUE;
  }
  gpu = self->dec && strcmp(c63_decoder_backend_name(self->dec), "cpu") != 0;
  if (G_OBJECT_TYPE(pool) == GST_TYPE_VIDEO_BUFFER_POOL &&
      gst_buffer_pool_config_get_allocator(config, &allocator, &params) &&
      (!allocator || g_strcmp0(allocator->mem_type, GST_ALLOCATOR_SYSMEM) == 0)) {
    ours = gpu ? gst_c63_pinned_allocator_get() : gst_object_ref(self->try_mem);
    gst_buffer_pool_config_set_allocator(config, ours, &params);
    gst_object_unref(ours);
    changed = TRUE;
    self->pinned_output = gpu;
  }
  if (changed && !gst_buffer_pool_set_config(pool, config)) {
    GST_WARNING_OBJECT(self, "the output pool refused video meta or our allocator");
    self->pinned_output = FALSE;
  } else if (!changed) {
    gst_structure_free(config);
  }
  GST_DEBUG_OBJECT(self, "output in %s system memory",
                   self->pinned_output ? "page-locked" : "ordinary");
  gst_object_unref(pool);
  return TRUE;
}

/* The output task waits for frames, and its pushes hold the stream lock:
 * it is stopped before the base class lets the pads go (which waits for
 * streaming to end) and stops libc63. */
static GstStateChangeReturn gst_c63_dec_change_state(GstElement *element, GstStateChange transition)
{
  GstC63Dec *self = GST_C63_DEC(element);

  if (transition == GST_STATE_CHANGE_PAUSED_TO_READY) gst_c63_dec_output_stop(&self->output);
  return GST_ELEMENT_CLASS(gst_c63_dec_parent_class)->change_state(element, transition);
}

static void gst_c63_dec_finalize(GObject *object)
{
  GstC63Dec *self = GST_C63_DEC(object);

  g_clear_pointer(&self->dec, c63_decoder_free);
  g_clear_pointer(&self->input_state, gst_video_codec_state_unref);
  gst_c63_framer_clear(&self->framer);
  gst_clear_object(&self->try_mem);
  gst_c63_dec_output_clear(&self->output);
  G_OBJECT_CLASS(gst_c63_dec_parent_class)->finalize(object);
}

static void gst_c63_dec_set_property(GObject *object, guint prop_id, const GValue *value,
                                     GParamSpec *pspec)
{
  GstC63Dec *self = GST_C63_DEC(object);

  GST_OBJECT_LOCK(self);
  switch (prop_id) {
  case PROP_BACKEND:
    self->backend = g_value_get_enum(value);
    break;
  case PROP_DEVICE_ID:
    self->device_id = g_value_get_int(value);
    break;
  case PROP_THREADS:
    self->threads = g_value_get_int(value);
    break;
  default:
    G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
    break;
  }
  GST_OBJECT_UNLOCK(self);
}

static void gst_c63_dec_get_property(GObject *object, guint prop_id, GValue *value,
                                     GParamSpec *pspec)
{
  GstC63Dec *self = GST_C63_DEC(object);

  GST_OBJECT_LOCK(self);
  switch (prop_id) {
  case PROP_BACKEND:
    g_value_set_enum(value, self->backend);
    break;
  case PROP_DEVICE_ID:
    g_value_set_int(value, self->device_id);
    break;
  case PROP_THREADS:
    g_value_set_int(value, self->threads);
    break;
  default:
    G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
    break;
  }
  GST_OBJECT_UNLOCK(self);
}

static void gst_c63_dec_class_init(GstC63DecClass *klass)
{
  GstElementClass *element_class = GST_ELEMENT_CLASS(klass);
  GstVideoDecoderClass *vdec_class = GST_VIDEO_DECODER_CLASS(klass);
  GObjectClass *gobject_class = G_OBJECT_CLASS(klass);

  gobject_class->finalize = gst_c63_dec_finalize;
  gobject_class->set_property = gst_c63_dec_set_property;
  gobject_class->get_property = gst_c63_dec_get_property;
  g_object_class_install_property(
      gobject_class, PROP_BACKEND,
      g_param_spec_enum("backend", "Backend",
                        "Where pictures are reconstructed: auto (the GPU when a CUDA device is "
                        "usable), cpu or cuda; the pictures are the same. Read when the "
                        "element starts",
                        gst_c63_dec_backend_get_type(), DEFAULT_BACKEND,
                        G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY));
  g_object_class_install_property(
      gobject_class, PROP_DEVICE_ID,
      g_param_spec_int("cuda-device-id", "CUDA device",
                       "CUDA device ordinal for backend=cuda or auto (0..1024, default 0)", 0, 1024,
                       DEFAULT_DEVICE_ID,
                       G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY));
  g_object_class_install_property(
      gobject_class, PROP_THREADS,
      g_param_spec_int("threads", "Threads",
                       "CPU threads that parse and entropy-decode frames (and reconstruct them "
                       "on the CPU backend); 0 = one per core, at most 16. Frames in flight, "
                       "and so the latency, grow with them. Read when the element starts "
                       "(0.." G_STRINGIFY(C63_MAX_THREADS) ", default 0)",
                       0, C63_MAX_THREADS, 0,
                       G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY));

  gst_element_class_add_static_pad_template(element_class, &sink_template);
  gst_element_class_add_static_pad_template(element_class, &src_template);
  gst_element_class_set_static_metadata(
      element_class, "Codec63 decoder", "Codec/Decoder/Video",
      "Decodes Codec63 (IN5050) video, packetized or as a byte stream, to I420",
      "gst-c63 contributors");

  element_class->change_state = GST_DEBUG_FUNCPTR(gst_c63_dec_change_state);
  vdec_class->start = GST_DEBUG_FUNCPTR(gst_c63_dec_start);
  vdec_class->stop = GST_DEBUG_FUNCPTR(gst_c63_dec_stop);
  vdec_class->set_format = GST_DEBUG_FUNCPTR(gst_c63_dec_set_format);
  vdec_class->parse = GST_DEBUG_FUNCPTR(gst_c63_dec_parse);
  vdec_class->handle_frame = GST_DEBUG_FUNCPTR(gst_c63_dec_handle_frame);
  vdec_class->finish = GST_DEBUG_FUNCPTR(gst_c63_dec_finish);
  vdec_class->drain = GST_DEBUG_FUNCPTR(gst_c63_dec_drain);
  vdec_class->flush = GST_DEBUG_FUNCPTR(gst_c63_dec_flush);
  vdec_class->src_event = GST_DEBUG_FUNCPTR(gst_c63_dec_src_event);
  vdec_class->decide_allocation = GST_DEBUG_FUNCPTR(gst_c63_dec_decide_allocation);
  vdec_class->negotiate = GST_DEBUG_FUNCPTR(gst_c63_dec_negotiate);
#ifdef HAVE_GST_CUDA
  vdec_class->sink_query = GST_DEBUG_FUNCPTR(gst_c63_dec_sink_query);
  vdec_class->src_query = GST_DEBUG_FUNCPTR(gst_c63_dec_src_query);
  element_class->set_context = GST_DEBUG_FUNCPTR(gst_c63_dec_set_context);
#endif

  GST_DEBUG_CATEGORY_INIT(gst_c63_dec_debug, "c63dec", 0, "Codec63 decoder");
}

/* Count packetized input flagged as delta units: before the first
 * keyframe GstVideoDecoder discards such buffers without handing them to
 * handle_frame, and gst_c63_dec_finish must still know they came. */
static GstPadProbeReturn gst_c63_dec_count_delta_units(G_GNUC_UNUSED GstPad *pad,
                                                       GstPadProbeInfo *info, gpointer user_data)
{
  GstC63Dec *self = user_data;
  GstBuffer *buf = GST_PAD_PROBE_INFO_BUFFER(info);

  if (gst_video_decoder_get_packetized(GST_VIDEO_DECODER(self)) &&
      GST_BUFFER_FLAG_IS_SET(buf, GST_BUFFER_FLAG_DELTA_UNIT))
    self->delta_units_in++;
  return GST_PAD_PROBE_OK;
}

static void gst_c63_dec_init(GstC63Dec *self)
{
  GstVideoDecoder *vdec = GST_VIDEO_DECODER(self);

  self->backend = DEFAULT_BACKEND;
  self->device_id = DEFAULT_DEVICE_ID;
  gst_c63_framer_init(&self->framer);
  gst_c63_dec_output_init(&self->output, vdec);
  self->try_mem = gst_object_ref_sink(g_object_new(gst_c63_try_allocator_get_type(), NULL));
  gst_video_decoder_set_packetized(vdec, FALSE);
  gst_video_decoder_set_use_default_pad_acceptcaps(vdec, TRUE);
  GST_PAD_SET_ACCEPT_TEMPLATE(GST_VIDEO_DECODER_SINK_PAD(vdec));
  gst_pad_add_probe(GST_VIDEO_DECODER_SINK_PAD(vdec), GST_PAD_PROBE_TYPE_BUFFER,
                    gst_c63_dec_count_delta_units, self, NULL);
}

GST_ELEMENT_REGISTER_DEFINE(c63dec, "c63dec", GST_RANK_PRIMARY, GST_TYPE_C63_DEC);
