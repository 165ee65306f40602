/* c63-element-bench: speed of an encoder element inside one process, without
 * file or parser overhead: pre-made I420 buffers pushed by appsrc through
 *
 *     appsrc ! ELEMENT ! fakesink
 *
 * The clip (a raw file, or the synthetic clip of tools/synth.c) is wrapped
 * in GstBuffers once; each push adds a reference, so the pipeline sees a
 * new buffer per frame at no copying cost, its memory recycled as a buffer
 * pool's is (the same few memories again and again). With --fresh every
 * frame is a copy of the clip's picture in memory allocated for it, as
 * filesrc reads each block into a new buffer: memory seen once; a few
 * threads make them ahead of the pushes, so that the copy, which upstream
 * pays in a pipeline, does not set the pace here. With --pool the clip is copied
 * into memory from the allocator the element proposes (for c63cudaenc,
 * page-locked memory), as an upstream element that honours the proposal
 * would fill it. With --cuda the clip is uploaded once into CUDA memory
 * (through nvcodec's cudaupload), and the encoder shares cudaupload's CUDA
 * context, as in a pipeline of CUDA elements: frames already on the GPU.
 * --device N puts both on CUDA device N (cudaupload's and the encoder's
 * cuda-device-id), so one process per GPU measures several GPUs at once.
 * Prints each run's fps (first
 * push to EOS at the sink) and the median. Speed is measured, never
 * asserted. Load the plugin with GST_PLUGIN_PATH.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/gst.h>
#include <gst/video/video.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "synth.h"

#define MAX_RUNS 64

#define FILLERS 4
#define FILLER_DEPTH 2

/* The buffers a run pushes: the clip's (recycled memory), or fresh copies
 * of them made by FILLERS threads, filler k making frames k, k + FILLERS,
 * ... into ready[k], at most FILLER_DEPTH ahead (room[k] holds a token per
 * free place). */
typedef struct {
  GstBuffer **clip;
  int clip_frames, frames;
  gboolean fresh;
  GAsyncQueue *ready[FILLERS], *room[FILLERS];
  GThread *thread[FILLERS];
  volatile gint stop;
} frame_source;

typedef struct {
  frame_source *src;
  int k;
} filler_arg;

/* A copy of b in memory allocated for it, with b's video meta. */
static GstBuffer *fresh_copy(GstBuffer *b)
{
  const gsize size = gst_buffer_get_size(b);
  guint8 *data = g_malloc(size);
  gst_buffer_extract(b, 0, data, size);
  GstBuffer *out = gst_buffer_new_wrapped(data, size);
  GstVideoMeta *m = gst_buffer_get_video_meta(b);
  gst_buffer_add_video_meta_full(out, m->flags, m->format, m->width, m->height, m->n_planes,
                                 m->offset, m->stride);
  return out;
}

static gpointer filler(gpointer data)
{
  filler_arg *a = data;
  frame_source *s = a->src;
  for (int i = a->k; i < s->frames; i += FILLERS) {
    g_async_queue_pop(s->room[a->k]);
    if (g_atomic_int_get(&s->stop)) break;
    g_async_queue_push(s->ready[a->k], fresh_copy(s->clip[i % s->clip_frames]));
  }
  g_free(a);
  return NULL;
}

static void source_start(frame_source *s)
{
  s->stop = 0;
  if (!s->fresh) return;
  for (int k = 0; k < FILLERS; k++) {
    s->ready[k] = g_async_queue_new_full((GDestroyNotify)gst_buffer_unref);
    s->room[k] = g_async_queue_new();
    for (int d = 0; d < FILLER_DEPTH; d++)
      g_async_queue_push(s->room[k], GINT_TO_POINTER(1));
    filler_arg *a = g_new(filler_arg, 1);
    a->src = s;
    a->k = k;
    s->thread[k] = g_thread_new("filler", filler, a);
  }
}

/* Frame i's buffer (transfer full). */
static GstBuffer *source_next(frame_source *s, int i)
{
  if (!s->fresh) return gst_buffer_copy(s->clip[i % s->clip_frames]); /* shares the memory */
  const int k = i % FILLERS;
  GstBuffer *b = g_async_queue_pop(s->ready[k]);
  g_async_queue_push(s->room[k], GINT_TO_POINTER(1));
  return b;
}

static void source_stop(frame_source *s)
{
  if (!s->fresh) return;
  g_atomic_int_set(&s->stop, 1);
  for (int k = 0; k < FILLERS; k++) {
    g_async_queue_push(s->room[k], GINT_TO_POINTER(1)); /* wakes a waiting filler */
    g_thread_join(s->thread[k]);
    g_async_queue_unref(s->ready[k]);
    g_async_queue_unref(s->room[k]);
  }
}

/* One run: push frames buffers cycling through the clip, wait for EOS or an
 * error. Returns seconds, or a negative value on failure. */
static double run_once(const char *element, const GstVideoInfo *info, frame_source *source,
                       int frames, GstContext *context)
{
  gchar *desc = g_strdup_printf("appsrc name=src is-live=false format=time ! %s ! "
                                "fakesink name=sink sync=false",
                                element);
  GError *err = NULL;
  GstElement *pipe = gst_parse_launch(desc, &err);
  g_free(desc);
  if (!pipe) {
    fprintf(stderr, "c63-element-bench: %s\n", err ? err->message : "cannot build the pipeline");
    g_clear_error(&err);
    return -1;
  }
  GstElement *src = gst_bin_get_by_name(GST_BIN(pipe), "src");
  if (context) gst_element_set_context(pipe, context);
  GstCaps *caps = gst_video_info_to_caps(info);
  if (context) gst_caps_set_features(caps, 0, gst_caps_features_new("memory:CUDAMemory", NULL));
  /* A few frames queued in appsrc keep the encoder fed without copying. */
  g_object_set(src, "caps", caps, "max-buffers", (guint64)8, "block", TRUE, NULL);
  gst_caps_unref(caps);
  gst_element_set_state(pipe, GST_STATE_PLAYING);

  const GstClockTime dur = gst_util_uint64_scale(GST_SECOND, info->fps_d, info->fps_n);
  source->frames = frames;
  source_start(source);
  const gint64 t0 = g_get_monotonic_time();
  for (int i = 0; i < frames; i++) {
    GstBuffer *b = source_next(source, i);
    GST_BUFFER_PTS(b) = i * dur;
    GST_BUFFER_DURATION(b) = dur;
    if (gst_app_src_push_buffer(GST_APP_SRC(src), b) != GST_FLOW_OK) break;
  }
  gst_app_src_end_of_stream(GST_APP_SRC(src));
  GstBus *bus = gst_element_get_bus(pipe);
  GstMessage *msg =
      gst_bus_timed_pop_filtered(bus, GST_CLOCK_TIME_NONE, GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  const gint64 t1 = g_get_monotonic_time();
  source_stop(source);
  double t = (t1 - t0) / 1e6;
  if (GST_MESSAGE_TYPE(msg) == GST_MESSAGE_ERROR) {
    gchar *dbg = NULL;
    gst_message_parse_error(msg, &err, &dbg);
    fprintf(stderr, "c63-element-bench: %s (%s)\n", err->message, dbg ? dbg : "");
    g_clear_error(&err);
    g_free(dbg);
    t = -1;
  }
  gst_message_unref(msg);
  gst_object_unref(bus);
  gst_element_set_state(pipe, GST_STATE_NULL);
  gst_object_unref(src);
  gst_object_unref(pipe);
  return t;
}

/* Upload the clip into CUDA memory with cudaupload, once: appsrc !
 * cudaupload ! appsink. The buffers replace clip[]; *context gets
 * cudaupload's CUDA context, for the encoder to share. */
static gboolean upload_clip(const GstVideoInfo *info, GstBuffer **clip, int n, int device,
                            GstContext **context)
{
  GError *err = NULL;
  gchar *desc = g_strdup_printf("appsrc name=src format=time ! cudaupload name=up "
                                "cuda-device-id=%d ! video/x-raw(memory:CUDAMemory) ! "
                                "appsink name=sink",
                                device);
  GstElement *pipe = gst_parse_launch(desc, &err);
  g_free(desc);
  if (!pipe) {
    fprintf(stderr, "c63-element-bench: --cuda needs cudaupload: %s\n", err ? err->message : "?");
    g_clear_error(&err);
    return FALSE;
  }
  GstElement *src = gst_bin_get_by_name(GST_BIN(pipe), "src");
  GstElement *sink = gst_bin_get_by_name(GST_BIN(pipe), "sink");
  GstElement *up = gst_bin_get_by_name(GST_BIN(pipe), "up");
  GstCaps *caps = gst_video_info_to_caps(info);
  g_object_set(src, "caps", caps, NULL);
  g_object_set(sink, "max-buffers", (guint)0, "sync", FALSE, NULL);
  gst_caps_unref(caps);
  gst_element_set_state(pipe, GST_STATE_PLAYING);
  gboolean ok = TRUE;
  for (int t = 0; t < n; t++)
    gst_app_src_push_buffer(GST_APP_SRC(src), gst_buffer_ref(clip[t]));
  gst_app_src_end_of_stream(GST_APP_SRC(src));
  for (int t = 0; t < n && ok; t++) {
    GstSample *s = gst_app_sink_pull_sample(GST_APP_SINK(sink));
    if (!s) {
      fprintf(stderr, "c63-element-bench: cudaupload gave %d of %d frames\n", t, n);
      ok = FALSE;
      break;
    }
    gst_buffer_unref(clip[t]);
    clip[t] = gst_buffer_ref(gst_sample_get_buffer(s));
    gst_sample_unref(s);
  }
  GstQuery *q = gst_query_new_context("gst.cuda.context");
  if (ok && gst_element_query(up, q)) gst_query_parse_context(q, context);
  if (ok && *context) gst_context_ref(*context);
  gst_query_unref(q);
  if (ok && !*context) {
    fprintf(stderr, "c63-element-bench: cudaupload shares no CUDA context\n");
    ok = FALSE;
  }
  gst_element_set_state(pipe, GST_STATE_NULL);
  gst_object_unref(up);
  gst_object_unref(src);
  gst_object_unref(sink);
  gst_object_unref(pipe);
  return ok;
}

/* The allocator the element proposes for its input (NULL: the default). */
static gboolean proposed_allocator(const char *element, const GstVideoInfo *info,
                                   GstAllocator **allocator, GstAllocationParams *params)
{
  gchar **words = g_strsplit(element, " ", 2);
  GstElement *enc = gst_element_factory_make(words[0], NULL);
  g_strfreev(words);
  if (!enc) {
    fprintf(stderr, "c63-element-bench: no element %s\n", element);
    return FALSE;
  }
  GstPad *pad = gst_element_get_static_pad(enc, "sink");
  GstCaps *caps = gst_video_info_to_caps(info);
  GstQuery *query = gst_query_new_allocation(caps, TRUE);
  gboolean ok = gst_pad_query(pad, query);
  if (ok && gst_query_get_n_allocation_params(query) > 0)
    gst_query_parse_nth_allocation_param(query, 0, allocator, params);
  gst_query_unref(query);
  gst_caps_unref(caps);
  gst_object_unref(pad);
  gst_object_unref(enc);
  if (!ok) fprintf(stderr, "c63-element-bench: %s answered no allocation query\n", element);
  return ok;
}

int main(int argc, char **argv)
{
  int width = 1920, height = 1080, frames = 1000, runs = 5, device = -1;
  gboolean use_pool = FALSE, use_cuda = FALSE, fresh = FALSE;
  const char *element = "c63cudaenc", *input = NULL;
  GOptionEntry entries[] = {
      {"width", 'w', 0, G_OPTION_ARG_INT, &width, "picture width (default 1920)", "W"},
      {"height", 'h', 0, G_OPTION_ARG_INT, &height, "picture height (default 1080)", "H"},
      {"frames", 'f', 0, G_OPTION_ARG_INT, &frames, "frames per run (default 1000)", "N"},
      {"runs", 'n', 0, G_OPTION_ARG_INT, &runs, "runs; the median is reported (default 5)", "N"},
      {"element", 'e', 0, G_OPTION_ARG_STRING, &element,
       "element and its properties (default c63cudaenc)", "DESC"},
      {"pool", 'p', 0, G_OPTION_ARG_NONE, &use_pool,
       "hold the clip in memory from the element's proposed allocator", NULL},
      {"fresh", 'a', 0, G_OPTION_ARG_NONE, &fresh,
       "a copy of each frame in memory allocated for it, as filesrc gives (default: the clip's "
       "buffers again and again, as a buffer pool gives)",
       NULL},
      {"cuda", 'c', 0, G_OPTION_ARG_NONE, &use_cuda,
       "hold the clip in CUDA memory (cudaupload), sharing its CUDA context", NULL},
      {"device", 'd', 0, G_OPTION_ARG_INT, &device,
       "CUDA device: the encoder's (and cudaupload's) cuda-device-id (default: the element's)",
       "N"},
      {NULL, 0, 0, 0, NULL, NULL, NULL}};
  GOptionContext *ctx = g_option_context_new("[INPUT.yuv] - encoder element speed in-process");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_option_context_add_group(ctx, gst_init_get_option_group());
  GError *err = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
    fprintf(stderr, "c63-element-bench: %s\n", err->message);
    return 2;
  }
  g_option_context_free(ctx);
  if (argc > 1) input = argv[1];
  if (width < 8 || height < 8 || width > 8192 || height > 8192 || frames < 1 || runs < 1 ||
      runs > MAX_RUNS || device < -1) {
    fprintf(stderr, "c63-element-bench: bad size, frame, run count or device\n");
    return 2;
  }
  if (fresh && (use_pool || use_cuda)) {
    fprintf(stderr, "c63-element-bench: --fresh is plain memory: not with --pool or --cuda\n");
    return 2;
  }
  gchar *element_desc =
      device >= 0 ? g_strdup_printf("%s cuda-device-id=%d", element, device) : g_strdup(element);
  element = element_desc;
  gst_init(NULL, NULL);

  GstVideoInfo info;
  gst_video_info_set_format(&info, GST_VIDEO_FORMAT_I420, width, height);
  info.fps_n = 25;
  info.fps_d = 1;
  /* Tight planes as tools/synth.c writes them; GstVideoMeta tells the
   * element the strides, so any width is right. */
  const int cw = (width + 1) / 2, ch = (height + 1) / 2;
  const gsize fsize = (gsize)width * height + 2 * (gsize)cw * ch;
  gsize offsets[GST_VIDEO_MAX_PLANES] = {0, (gsize)width * height,
                                         (gsize)width * height + (gsize)cw * ch, 0};
  gint strides[GST_VIDEO_MAX_PLANES] = {width, cw, cw, 0};

  int clip_frames = 25;
  guint8 *data = NULL;
  if (input) {
    gsize len = 0;
    if (!g_file_get_contents(input, (gchar **)&data, &len, &err)) {
      fprintf(stderr, "c63-element-bench: %s\n", err->message);
      return 1;
    }
    clip_frames = (int)(len / fsize);
    if (clip_frames < 1) {
      fprintf(stderr, "c63-element-bench: %s holds no whole %dx%d frame\n", input, width, height);
      return 1;
    }
  } else {
    data = g_malloc(fsize * clip_frames);
    for (int t = 0; t < clip_frames; t++)
      synth_frame(data + fsize * t, width, height, t);
  }
  GstAllocator *allocator = NULL;
  GstAllocationParams params;
  gst_allocation_params_init(&params);
  if (use_pool && !proposed_allocator(element, &info, &allocator, &params)) return 1;
  GstBuffer **clip = g_new(GstBuffer *, clip_frames);
  for (int t = 0; t < clip_frames; t++) {
    if (use_pool) {
      clip[t] = gst_buffer_new_allocate(allocator, fsize, &params);
      if (!clip[t]) {
        fprintf(stderr, "c63-element-bench: the proposed allocator gave no memory\n");
        return 1;
      }
      gst_buffer_fill(clip[t], 0, data + fsize * t, fsize);
    } else {
      clip[t] = gst_buffer_new_wrapped_full(GST_MEMORY_FLAG_READONLY, data + fsize * t, fsize, 0,
                                            fsize, NULL, NULL);
    }
    gst_buffer_add_video_meta_full(clip[t], GST_VIDEO_FRAME_FLAG_NONE, GST_VIDEO_FORMAT_I420, width,
                                   height, 3, offsets, strides);
  }

  GstContext *context = NULL;
  if (use_cuda && !upload_clip(&info, clip, clip_frames, device < 0 ? 0 : device, &context))
    return 1;
  printf("appsrc ! %s ! fakesink: %dx%d, %d frames per run (clip of %d, %s)\n", element, width,
         height, frames, clip_frames,
         use_cuda    ? "CUDA memory"
         : allocator ? allocator->mem_type
         : use_pool  ? "default allocator"
         : fresh     ? "plain memory, allocated per frame"
                     : "plain memory, recycled");
  frame_source source = {clip, clip_frames, 0, fresh, {NULL}, {NULL}, {NULL}, 0};
  if (run_once(element, &info, &source, frames < 20 ? frames : 20, context) < 0) return 1;
  double fps[MAX_RUNS];
  for (int i = 0; i < runs; i++) {
    double t = run_once(element, &info, &source, frames, context);
    if (t < 0) return 1;
    fps[i] = frames / t;
    printf("run %d: %.1f fps\n", i + 1, fps[i]);
  }
  printf("median of %d runs: %.1f fps\n", runs, bench_median(fps, runs));
  for (int t = 0; t < clip_frames; t++)
    gst_buffer_unref(clip[t]);
  g_free(clip);
  g_free(data);
  if (allocator) gst_object_unref(allocator);
  if (context) gst_context_unref(context);
  g_free(element_desc);
  return 0;
}
