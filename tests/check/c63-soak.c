/* c63-soak: long-running and load checks of the elements, for the GPU
 * machine (docs/soak.md). Three modes:
 *
 *   c63-soak soak [-e ENC] [-w W -h H] [-c CLIP] [-f FRAMES] [-s EVERY]
 *       FRAMES frames through  appsrc ! ENC ! c63dec ! appsink  in one
 *       pipeline. The clip of CLIP synthetic frames repeats and the encoder
 *       starts a keyframe with every repetition, so every decoded frame must
 *       equal the one at the same clip position in the first repetition:
 *       each is checked (a 64-bit hash of its planes). Every EVERY frames it
 *       prints the process's resident memory and the GPU's used memory
 *       (nvidia-smi's per-process figure), and at the end fails unless both
 *       stayed flat after the first sample.
 *   c63-soak restart [-e ENC] [-n COUNT]
 *       builds, runs to EOS and frees  videotestsrc ! ENC ! c63dec ! fakesink
 *       COUNT times; run it under GST_TRACERS=leaks to see what survives.
 *   c63-soak oom [-e ENC] [-w W -h H] [-m MAX]
 *       keeps a 1080p pipeline encoding while it starts W x H encoders (one
 *       frame each, then they stay PLAYING, holding their memory) until one
 *       fails: that one must post a resource error from the encoder, and
 *       the 1080p pipeline must go on encoding. Then everything is freed.
 *
 * Load the plugin with GST_PLUGIN_PATH. Exit status 0 when every check
 * passed, 1 when one failed, 2 on usage errors.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/gst.h>
#include <gst/video/video.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "synth.h"

/* Memory may grow this much after the first sample before a soak fails:
 * allocator caches and GStreamer's lazily built state settle early. */
#define RSS_SLACK_KIB (16 * 1024)
#define GPU_SLACK_MIB 2

static long rss_kib(void)
{
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long kib = -1;
  if (!f) return -1;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "VmRSS: %ld", &kib) == 1) break;
  fclose(f);
  return kib;
}

/* Memory in MiB from nvidia-smi, or -1 without it: the process's own
 * (per-process figure, so other processes on the GPU do not count) when
 * own is set, else all that GPU 0 uses. */
static long nvidia_smi_mib(int own)
{
  FILE *p = popen(own ? "nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,"
                        "nounits 2>/dev/null"
                      : "nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -i 0 "
                        "2>/dev/null",
                  "r");
  long pid = 0, mib, found = -1;
  if (!p) return -1;
  while (own ? fscanf(p, "%ld, %ld", &pid, &mib) == 2 : fscanf(p, "%ld", &mib) == 1)
    if (!own || pid == (long)getpid()) found = mib;
  pclose(p);
  return found;
}

static long gpu_used_mib(void)
{
  return nvidia_smi_mib(1);
}

static long gpu_total_used_mib(void)
{
  return nvidia_smi_mib(0);
}

/* The synthetic clip as I420 buffers laid out as GstVideoInfo says. */
static GstBuffer **make_clip(const GstVideoInfo *info, int frames)
{
  const int w = GST_VIDEO_INFO_WIDTH(info), h = GST_VIDEO_INFO_HEIGHT(info);
  const int cw = (w + 1) / 2, ch = (h + 1) / 2;
  guint8 *packed = g_malloc((gsize)w * h + 2 * (gsize)cw * ch);
  GstBuffer **clip = g_new0(GstBuffer *, frames);
  for (int t = 0; t < frames; t++) {
    synth_frame(packed, w, h, t);
    clip[t] = gst_buffer_new_allocate(NULL, GST_VIDEO_INFO_SIZE(info), NULL);
    GstVideoFrame vf;
    gst_video_frame_map(&vf, (GstVideoInfo *)info, clip[t], GST_MAP_WRITE);
    const guint8 *src = packed;
    for (int c = 0; c < 3; c++) {
      const int pw = c ? cw : w, ph = c ? ch : h;
      guint8 *dst = GST_VIDEO_FRAME_COMP_DATA(&vf, c);
      const int stride = GST_VIDEO_FRAME_COMP_STRIDE(&vf, c);
      for (int y = 0; y < ph; y++)
        memcpy(dst + (gsize)y * stride, src + (gsize)y * pw, pw);
      src += (gsize)pw * ph;
    }
    gst_video_frame_unmap(&vf);
  }
  g_free(packed);
  return clip;
}

static void free_clip(GstBuffer **clip, int frames)
{
  for (int i = 0; i < frames; i++)
    gst_buffer_unref(clip[i]);
  g_free(clip);
}

/* A 64-bit hash of the visible pixels of a decoded frame: eight bytes at
 * a time, so hashing keeps up with a GPU decoder. */
static guint64 frame_hash(GstSample *s)
{
  GstVideoInfo info;
  GstVideoFrame vf;
  guint64 h = 1469598103934665603ull;
  if (!gst_video_info_from_caps(&info, gst_sample_get_caps(s)) ||
      !gst_video_frame_map(&vf, &info, gst_sample_get_buffer(s), GST_MAP_READ))
    return 0;
  for (guint c = 0; c < GST_VIDEO_FRAME_N_COMPONENTS(&vf); c++) {
    const guint8 *p = GST_VIDEO_FRAME_COMP_DATA(&vf, c);
    const int stride = GST_VIDEO_FRAME_COMP_STRIDE(&vf, c);
    const int width = GST_VIDEO_FRAME_COMP_WIDTH(&vf, c);
    for (int y = 0; y < GST_VIDEO_FRAME_COMP_HEIGHT(&vf, c); y++) {
      const guint8 *row = p + (gsize)y * stride;
      int x = 0;
      for (; x + 8 <= width; x += 8) {
        guint64 v;
        memcpy(&v, row + x, 8);
        h = (h ^ v) * 1099511628211ull;
        h ^= h >> 31;
      }
      for (; x < width; x++)
        h = (h ^ row[x]) * 1099511628211ull;
    }
  }
  gst_video_frame_unmap(&vf);
  return h;
}

/* A pipeline fed by a thread that pushes frames of a clip. */
typedef struct {
  GstElement *pipe, *src, *sink;
  GstBuffer **clip;
  int clip_frames;
  gint64 frames; /* to push; -1: until stopped */
  GstClockTime dur;
  volatile gint stop;
  GThread *thread;
} feeder;

static gpointer feed(gpointer data)
{
  feeder *f = data;
  for (gint64 i = 0; (f->frames < 0 || i < f->frames) && !g_atomic_int_get(&f->stop); i++) {
    GstBuffer *b = gst_buffer_copy(f->clip[i % f->clip_frames]); /* shares the memory */
    GST_BUFFER_PTS(b) = i * f->dur;
    GST_BUFFER_DURATION(b) = f->dur;
    if (gst_app_src_push_buffer(GST_APP_SRC(f->src), b) != GST_FLOW_OK) break;
  }
  gst_app_src_end_of_stream(GST_APP_SRC(f->src));
  return NULL;
}

/* Build  appsrc ! middle ! appsink  for info's caps; NULL (and a message)
 * on failure. */
static gboolean feeder_init(feeder *f, const char *middle, const GstVideoInfo *info,
                            GstBuffer **clip, int clip_frames, gint64 frames)
{
  gchar *desc = g_strdup_printf("appsrc name=src is-live=false format=time max-buffers=4 block=true"
                                " ! %s ! appsink name=sink sync=false max-buffers=8",
                                middle);
  GError *err = NULL;
  memset(f, 0, sizeof *f);
  f->pipe = gst_parse_launch(desc, &err);
  g_free(desc);
  if (!f->pipe) {
    fprintf(stderr, "c63-soak: %s\n", err ? err->message : "cannot build the pipeline");
    g_clear_error(&err);
    return FALSE;
  }
  f->src = gst_bin_get_by_name(GST_BIN(f->pipe), "src");
  f->sink = gst_bin_get_by_name(GST_BIN(f->pipe), "sink");
  GstCaps *caps = gst_video_info_to_caps(info);
  g_object_set(f->src, "caps", caps, NULL);
  gst_caps_unref(caps);
  f->clip = clip;
  f->clip_frames = clip_frames;
  f->frames = frames;
  f->dur = gst_util_uint64_scale(GST_SECOND, info->fps_d, info->fps_n);
  return TRUE;
}

static void feeder_start(feeder *f)
{
  gst_element_set_state(f->pipe, GST_STATE_PLAYING);
  f->thread = g_thread_new("feed", feed, f);
}

static void feeder_free(feeder *f)
{
  g_atomic_int_set(&f->stop, 1);
  gst_element_set_state(f->pipe, GST_STATE_NULL); /* unblocks a blocked push */
  if (f->thread) g_thread_join(f->thread);
  gst_object_unref(f->src);
  gst_object_unref(f->sink);
  gst_object_unref(f->pipe);
}

/* The first error on the pipeline's bus, or NULL. */
static GstMessage *pipeline_error(GstElement *pipe)
{
  GstBus *bus = gst_element_get_bus(pipe);
  GstMessage *m = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
  gst_object_unref(bus);
  return m;
}

static void print_error(const char *what, GstMessage *m)
{
  GError *err = NULL;
  gchar *dbg = NULL;
  gst_message_parse_error(m, &err, &dbg);
  printf("%s: error from %s: %s [%s %d] (%s)\n", what, GST_OBJECT_NAME(GST_MESSAGE_SRC(m)),
         err->message, g_quark_to_string(err->domain), err->code, dbg ? dbg : "");
  g_clear_error(&err);
  g_free(dbg);
}

static void video_info(GstVideoInfo *info, int w, int h)
{
  gst_video_info_set_format(info, GST_VIDEO_FORMAT_I420, w, h);
  info->fps_n = 25;
  info->fps_d = 1;
}

static int soak(const char *enc, int w, int h, int clip_frames, gint64 frames, gint64 every)
{
  GstVideoInfo info;
  video_info(&info, w, h);
  GstBuffer **clip = make_clip(&info, clip_frames);
  /* Queues give the encoder, the decoder and the checks threads of their
   * own, as in a real pipeline. */
  gchar *middle = g_strdup_printf("queue max-size-buffers=4 ! %s keyframe-interval=%d ! "
                                  "queue max-size-buffers=4 ! c63dec ! queue max-size-buffers=4",
                                  enc, clip_frames);
  feeder f;
  if (!feeder_init(&f, middle, &info, clip, clip_frames, frames)) return 1;
  g_free(middle);
  guint64 *want = g_new0(guint64, clip_frames);
  gint64 got = 0, bad = 0;
  long rss0 = -1, gpu0 = -1, rss = -1, gpu = -1, rss_max = 0, gpu_max = 0;
  const gint64 t0 = g_get_monotonic_time();
  feeder_start(&f);
  for (;;) {
    GstSample *s = gst_app_sink_pull_sample(GST_APP_SINK(f.sink));
    if (!s) break; /* EOS or error */
    const guint64 hash = frame_hash(s);
    gst_sample_unref(s);
    const int pos = (int)(got % clip_frames);
    if (hash == 0 && bad++ < 10) /* unmappable */
      printf("frame %" G_GINT64_FORMAT ": cannot be read\n", got);
    else if (got < clip_frames)
      want[pos] = hash;
    else if (hash != want[pos] && bad++ < 10)
      printf("frame %" G_GINT64_FORMAT ": differs from frame %d\n", got, pos);
    got++;
    if (got % every == 0) {
      rss = rss_kib();
      gpu = gpu_used_mib();
      if (rss0 < 0) {
        rss0 = rss;
        gpu0 = gpu;
      }
      rss_max = MAX(rss_max, rss);
      gpu_max = MAX(gpu_max, gpu);
      const double t = (g_get_monotonic_time() - t0) / 1e6;
      printf("frames %" G_GINT64_FORMAT " time %.0f s fps %.0f rss %ld KiB gpu %ld MiB\n", got, t,
             got / t, rss, gpu);
      fflush(stdout);
    }
  }
  GstMessage *err = pipeline_error(f.pipe);
  int fail = 0;
  if (err) {
    print_error("soak", err);
    gst_message_unref(err);
    fail = 1;
  }
  printf("decoded %" G_GINT64_FORMAT " of %" G_GINT64_FORMAT " frames, %" G_GINT64_FORMAT
         " differing\n",
         got, frames, bad);
  if (got != frames || bad) fail = 1;
  if (rss0 >= 0) {
    printf("resident memory: first sample %ld KiB, largest %ld KiB, last %ld KiB\n", rss0, rss_max,
           rss);
    if (rss_max - rss0 > RSS_SLACK_KIB) fail = 1;
  }
  if (gpu0 >= 0) {
    printf("GPU memory used: first sample %ld MiB, largest %ld MiB, last %ld MiB\n", gpu0, gpu_max,
           gpu);
    if (gpu_max - gpu0 > GPU_SLACK_MIB) fail = 1;
  }
  printf("soak: %s\n", fail ? "FAILED" : "passed");
  feeder_free(&f);
  free_clip(clip, clip_frames);
  g_free(want);
  return fail;
}

static int restart(const char *enc, int count)
{
  gchar *desc = g_strdup_printf(
      "videotestsrc num-buffers=3 ! video/x-raw,format=I420,width=320,height=240 ! %s ! "
      "c63dec ! fakesink",
      enc);
  int failed = 0;
  const long rss0 = rss_kib();
  for (int i = 0; i < count; i++) {
    GError *err = NULL;
    GstElement *pipe = gst_parse_launch(desc, &err);
    if (!pipe) {
      fprintf(stderr, "c63-soak: %s\n", err ? err->message : "cannot build the pipeline");
      g_clear_error(&err);
      failed++;
      break;
    }
    gst_element_set_state(pipe, GST_STATE_PLAYING);
    GstBus *bus = gst_element_get_bus(pipe);
    GstMessage *m =
        gst_bus_timed_pop_filtered(bus, 30 * GST_SECOND, GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
    if (!m || GST_MESSAGE_TYPE(m) != GST_MESSAGE_EOS) {
      if (m)
        print_error("restart", m);
      else
        printf("restart %d: no EOS within 30 s\n", i);
      failed++;
    }
    if (m) gst_message_unref(m);
    gst_object_unref(bus);
    gst_element_set_state(pipe, GST_STATE_NULL);
    gst_object_unref(pipe);
    if ((i + 1) % 100 == 0) {
      printf("restart %d: resident memory %ld KiB\n", i + 1, rss_kib());
      fflush(stdout);
    }
  }
  g_free(desc);
  printf("restarts: %d, failed %d; resident memory %ld KiB before, %ld KiB after\n", count, failed,
         rss0, rss_kib());
  return failed != 0;
}

#define OOM_MAX 4096

static int oom(const char *enc, int w, int h, int max)
{
  GstVideoInfo small, big;
  video_info(&small, 1920, 1080);
  video_info(&big, w, h);
  GstBuffer **clip = make_clip(&small, 5), **big_clip = make_clip(&big, 1);
  feeder victim;
  if (!feeder_init(&victim, enc, &small, clip, 5, -1)) return 1;
  feeder_start(&victim);
  feeder *big_pipes = g_new0(feeder, max);
  gchar *big_enc = g_strdup_printf("%s threads=2", enc);
  int n = 0, fail = 1;
  const long gpu0 = gpu_total_used_mib();
  gint64 victim_frames = 0;
  for (; n < max; n++) {
    feeder *f = &big_pipes[n];
    /* One frame each, then EOS: the encoder keeps its memory until the
     * pipeline stops. */
    if (!feeder_init(f, big_enc, &big, big_clip, 1, 1)) break;
    /* The first frame allocates everything the encoder keeps; a blocked
     * push afterwards only waits. */
    feeder_start(f);
    GstSample *s = gst_app_sink_try_pull_sample(GST_APP_SINK(f->sink), 60 * GST_SECOND);
    GstMessage *err = pipeline_error(f->pipe);
    const gboolean encoded = s != NULL;
    if (s) gst_sample_unref(s);
    /* Drain the victim's output meanwhile, so it keeps running. */
    while ((s = gst_app_sink_try_pull_sample(GST_APP_SINK(victim.sink), 0))) {
      gst_sample_unref(s);
      victim_frames++;
    }
    if (err || !encoded) {
      if (!err) {
        printf("oom: encoder %d gave neither a frame nor an error within 60 s\n", n + 1);
        n++;
        break;
      }
      GError *e = NULL;
      gst_message_parse_error(err, &e, NULL);
      print_error("oom", err);
      /* What a user can act on: a resource error, from the encoder. */
      fail = !(e->domain == GST_RESOURCE_ERROR && GST_IS_VIDEO_ENCODER(GST_MESSAGE_SRC(err)));
      g_clear_error(&e);
      gst_message_unref(err);
      n++;
      break;
    }
    if ((n + 1) % 10 == 0) {
      printf("%d encoders of %dx%d running, GPU memory used %ld MiB\n", n + 1, w, h,
             gpu_total_used_mib());
      fflush(stdout);
    }
  }
  const long gpu_full = gpu_total_used_mib();
  if (n == max && fail)
    printf("no failure after %d encoders of %dx%d; GPU memory used %ld MiB (before: %ld MiB)\n", n,
           w, h, gpu_full, gpu0);
  else
    printf("encoder %d of %dx%d failed; GPU memory used %ld MiB (before: %ld MiB)\n", n, w, h,
           gpu_full, gpu0);
  /* The 1080p pipeline must still run: 100 more frames, no error. */
  gint64 more = 0;
  GstSample *s;
  while (more < 100 &&
         (s = gst_app_sink_try_pull_sample(GST_APP_SINK(victim.sink), 10 * GST_SECOND))) {
    gst_sample_unref(s);
    more++;
  }
  GstMessage *verr = pipeline_error(victim.pipe);
  printf("1080p pipeline: %" G_GINT64_FORMAT " frames before, %" G_GINT64_FORMAT
         " after the failure, %s\n",
         victim_frames, more, verr ? "an error" : "no error");
  if (verr) {
    print_error("1080p pipeline", verr);
    gst_message_unref(verr);
    fail = 1;
  }
  if (more < 100) fail = 1;
  for (int i = 0; i < n; i++)
    feeder_free(&big_pipes[i]);
  feeder_free(&victim);
  printf("after freeing: GPU memory used %ld MiB\n", gpu_total_used_mib());
  printf("oom: %s\n", fail ? "FAILED" : "passed");
  g_free(big_pipes);
  g_free(big_enc);
  free_clip(clip, 5);
  free_clip(big_clip, 1);
  return fail;
}

static int usage(void)
{
  fprintf(stderr, "usage: c63-soak soak [-e ENC] [-w W -h H] [-c CLIP] [-f FRAMES] [-s EVERY]\n"
                  "       c63-soak restart [-e ENC] [-n COUNT]\n"
                  "       c63-soak oom [-e ENC] [-w W -h H] [-m MAX]\n");
  return 2;
}

int main(int argc, char **argv)
{
  const char *enc = "c63cudaenc";
  int w = 0, h = 0, clip = 25, count = 1000, max = OOM_MAX;
  gint64 frames = 100000, every = 10000;
  gst_init(&argc, &argv);
  if (argc < 2) return usage();
  const char *mode = argv[1];
  for (int i = 2; i < argc; i++) {
    const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!v) return usage();
    if (!strcmp(o, "-e"))
      enc = v;
    else if (!strcmp(o, "-w"))
      w = atoi(v);
    else if (!strcmp(o, "-h"))
      h = atoi(v);
    else if (!strcmp(o, "-c"))
      clip = atoi(v);
    else if (!strcmp(o, "-f"))
      frames = g_ascii_strtoll(v, NULL, 10);
    else if (!strcmp(o, "-s"))
      every = g_ascii_strtoll(v, NULL, 10);
    else if (!strcmp(o, "-n"))
      count = atoi(v);
    else if (!strcmp(o, "-m"))
      max = atoi(v);
    else
      return usage();
    i++;
  }
  if (clip < 1 || frames < 1 || every < 1 || count < 1 || max < 1 || max > OOM_MAX || w < 0 ||
      h < 0)
    return usage();
  int rc;
  if (!strcmp(mode, "soak"))
    rc = soak(enc, w ? w : 1920, h ? h : 1080, clip, frames, every);
  else if (!strcmp(mode, "restart"))
    rc = restart(enc, count);
  else if (!strcmp(mode, "oom"))
    rc = oom(enc, w ? w : 8192, h ? h : 8192, max);
  else
    return usage();
  gst_deinit(); /* the leaks tracer reports here */
  return rc;
}
