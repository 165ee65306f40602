/* GstHarness tests of c63dec: packetized and byte-stream input (down to
 * 1-byte chunks), output caps and size changes, timestamps, skipping delta
 * frames before the first keyframe, corrupt frames and recovery, the
 * warnings and errors bad input posts (bounded however long the garbage, an
 * error when nothing decodes), failing output allocation.
 *
 * Copyright (C) 2026 gst-c63 contributors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>

#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/video/video.h>

#include "c63/c63.h"
#include "c63check.h"

#define FRAME_DURATION (GST_SECOND / 25)
#define PACKETIZED_CAPS "video/x-c63, parsed=(boolean)true, framerate=25/1"
#define BYTESTREAM_CAPS "video/x-c63"

/* The q10k7 vector has keyframes at 0, 7, 14, 21 and 28 of its 30 frames. */
#define K7_STREAM "pan_352x288_q10k7.c63"

static GPtrArray *load_frames(const gchar *stream_name)
{
  GBytes *stream = c63check_read_file(c63check_vector(stream_name)->stream);
  GPtrArray *frames = c63check_split_frames(stream);

  g_bytes_unref(stream);
  return frames;
}

/* A started c63dec (`desc` is a launch line such as "c63dec threads=1":
 * properties read at start must be given here). */
static GstHarness *dec_harness_parse(const gchar *desc, const gchar *caps)
{
  GstHarness *hh = gst_harness_new_parse(desc);

  gst_harness_set_src_caps_str(hh, caps);
  return hh;
}

static GstHarness *dec_harness(const gchar *caps)
{
  GstHarness *hh = gst_harness_new("c63dec");

  gst_harness_set_src_caps_str(hh, caps);
  return hh;
}

static GstFlowReturn push_frame(GstHarness *hh, GBytes *frame, guint n)
{
  GstBuffer *buf = gst_buffer_new_wrapped_bytes(frame);

  GST_BUFFER_PTS(buf) = n * FRAME_DURATION;
  GST_BUFFER_DURATION(buf) = FRAME_DURATION;
  return gst_harness_push(hh, buf);
}

/* Push frames from `first` on, then EOS: the decoder keeps frames in
 * flight (its latency), and EOS drains them. */
static void push_frames_eos(GstHarness *hh, GPtrArray *frames, guint first)
{
  guint n;

  for (n = first; n < frames->len; n++)
    fail_unless_equals_int(push_frame(hh, g_bytes_ref(frames->pdata[n]), n), GST_FLOW_OK);
  fail_unless(gst_harness_push_event(hh, gst_event_new_eos()));
}

/* Push bytes in chunks of the given sizes (cycled), then EOS. */
static void push_chunked(GstHarness *hh, GBytes *data, const gsize *chunks, guint n_chunks)
{
  gsize len = g_bytes_get_size(data), pos = 0;
  guint i = 0;

  while (pos < len) {
    gsize want = chunks[i++ % n_chunks], n = MIN(want, len - pos); /* MIN evaluates twice */
    GstBuffer *buf = gst_buffer_new_wrapped_bytes(g_bytes_new_from_bytes(data, pos, n));
    fail_unless_equals_int(gst_harness_push(hh, buf), GST_FLOW_OK);
    pos += n;
  }
  fail_unless(gst_harness_push_event(hh, gst_event_new_eos()));
}

/* Pull every output picture: SHA-256 of all, and each one's hex. */
static gchar *pull_pictures(GstHarness *hh, GPtrArray *each, gint *width, gint *height)
{
  GChecksum *sum = g_checksum_new(G_CHECKSUM_SHA256);
  GstBuffer *buf;
  gchar *hex;

  while ((buf = gst_harness_try_pull(hh))) {
    GstCaps *caps = gst_pad_get_current_caps(hh->sinkpad);
    GstVideoInfo info;

    fail_unless(gst_video_info_from_caps(&info, caps));
    fail_unless_equals_int(GST_VIDEO_INFO_FORMAT(&info), GST_VIDEO_FORMAT_I420);
    c63check_hash_video(sum, &info, buf);
    if (each) g_ptr_array_add(each, c63check_picture_sha256(&info, buf));
    if (width) *width = GST_VIDEO_INFO_WIDTH(&info);
    if (height) *height = GST_VIDEO_INFO_HEIGHT(&info);
    gst_caps_unref(caps);
    gst_buffer_unref(buf);
  }
  hex = g_strdup(g_checksum_get_string(sum));
  g_checksum_free(sum);
  return hex;
}

/* Decoded pictures of a whole vector, decoded packetized and cleanly. */
static GPtrArray *clean_pictures(GPtrArray *frames)
{
  GstHarness *hh = dec_harness(PACKETIZED_CAPS);
  GPtrArray *each = g_ptr_array_new_with_free_func(g_free);

  push_frames_eos(hh, frames, 0);
  g_free(pull_pictures(hh, each, NULL, NULL));
  fail_unless_equals_int(each->len, frames->len);
  gst_harness_teardown(hh);
  return each;
}

/* Messages the element posted, popped from its bus. */
typedef struct {
  guint warnings, errors;
  GError *error; /* the first error */
  gchar *error_debug;
} BusMessages;

static void pop_messages(GstBus *bus, BusMessages *m)
{
  GstMessage *msg;

  memset(m, 0, sizeof *m);
  while ((msg = gst_bus_pop_filtered(bus, GST_MESSAGE_WARNING | GST_MESSAGE_ERROR))) {
    if (GST_MESSAGE_TYPE(msg) == GST_MESSAGE_WARNING) {
      m->warnings++;
    } else if (m->errors++ == 0) {
      gst_message_parse_error(msg, &m->error, &m->error_debug);
      GST_INFO("error: %s (%s)", m->error->message, m->error_debug);
    }
    gst_message_unref(msg);
  }
}

static void clear_messages(BusMessages *m)
{
  g_clear_error(&m->error);
  g_free(m->error_debug);
}

/* A harness whose element posts to a bus of ours. */
static GstHarness *dec_harness_bus(const gchar *caps, GstBus **bus)
{
  GstHarness *hh = dec_harness(caps);

  *bus = gst_bus_new();
  gst_element_set_bus(hh->element, *bus);
  return hh;
}

static void teardown_bus(GstHarness *hh, GstBus *bus)
{
  gst_element_set_bus(hh->element, NULL);
  gst_object_unref(bus);
  gst_harness_teardown(hh);
}

GST_START_TEST(test_dec_packetized)
{
  const C63Vector *v = c63check_vector("pan_176x144.c63");
  GPtrArray *frames = load_frames(v->name);
  GstHarness *hh = dec_harness(PACKETIZED_CAPS);
  GChecksum *sum = g_checksum_new(G_CHECKSUM_SHA256);
  guint n;

  push_frames_eos(hh, frames, 0);
  /* One picture per frame, of the stream's size, timestamps passed through. */
  fail_unless_equals_int(gst_harness_buffers_in_queue(hh), frames->len);
  for (n = 0; n < frames->len; n++) {
    GstBuffer *buf = gst_harness_pull(hh);
    GstCaps *caps = gst_pad_get_current_caps(hh->sinkpad);
    GstVideoInfo info;

    fail_unless(gst_video_info_from_caps(&info, caps));
    fail_unless_equals_int(GST_VIDEO_INFO_FORMAT(&info), GST_VIDEO_FORMAT_I420);
    fail_unless_equals_int(GST_VIDEO_INFO_WIDTH(&info), v->width);
    fail_unless_equals_int(GST_VIDEO_INFO_HEIGHT(&info), v->height);
    fail_unless_equals_uint64(GST_BUFFER_PTS(buf), n * FRAME_DURATION);
    c63check_hash_video(sum, &info, buf);
    gst_caps_unref(caps);
    gst_buffer_unref(buf);
  }
  fail_unless_equals_string(g_checksum_get_string(sum), v->decoded_sha256);
  g_checksum_free(sum);
  g_ptr_array_unref(frames);
  gst_harness_teardown(hh);
}
GST_END_TEST;

/* New input caps with another framerate and pixel aspect ratio mid-stream
 * renew the output caps (same picture size). */
GST_START_TEST(test_dec_caps_renewed)
{
  GPtrArray *frames = load_frames("pan_176x144.c63");
  GstHarness *hh = dec_harness(PACKETIZED_CAPS);
  GstEvent *ev;
  GstCaps *first = NULL, *last = NULL;
  guint n, half = frames->len / 2;

  for (n = 0; n < half; n++)
    fail_unless_equals_int(push_frame(hh, g_bytes_ref(frames->pdata[n]), n), GST_FLOW_OK);
  gst_harness_set_src_caps_str(
      hh, "video/x-c63, parsed=(boolean)true, framerate=50/1, pixel-aspect-ratio=4/3");
  push_frames_eos(hh, frames, half);
  fail_unless_equals_int(gst_harness_buffers_in_queue(hh), frames->len);
  while ((ev = gst_harness_try_pull_event(hh))) {
    if (GST_EVENT_TYPE(ev) == GST_EVENT_CAPS) {
      GstCaps *caps;
      gst_event_parse_caps(ev, &caps);
      if (!first) first = gst_caps_ref(caps);
      gst_caps_replace(&last, caps);
    }
    gst_event_unref(ev);
  }
  fail_unless(first && last);
  GstVideoInfo a, b;
  fail_unless(gst_video_info_from_caps(&a, first) && gst_video_info_from_caps(&b, last));
  fail_unless_equals_int(GST_VIDEO_INFO_FPS_N(&a), 25);
  fail_unless_equals_int(GST_VIDEO_INFO_FPS_N(&b), 50);
  fail_unless_equals_int(GST_VIDEO_INFO_PAR_N(&b), 4);
  fail_unless_equals_int(GST_VIDEO_INFO_PAR_D(&b), 3);
  fail_unless_equals_int(GST_VIDEO_INFO_WIDTH(&b), 176);
  gst_caps_unref(first);
  gst_caps_unref(last);
  g_ptr_array_unref(frames);
  gst_harness_teardown(hh);
}
GST_END_TEST;

static void check_bytestream(const gsize *chunks, guint n_chunks)
{
  const C63Vector *v = c63check_vector(K7_STREAM);
  GBytes *stream = c63check_read_file(v->stream);
  GstHarness *hh = dec_harness(BYTESTREAM_CAPS);
  GPtrArray *each = g_ptr_array_new_with_free_func(g_free);
  gchar *sha;

  push_chunked(hh, stream, chunks, n_chunks);
  sha = pull_pictures(hh, each, NULL, NULL);
  fail_unless_equals_int(each->len, v->frames);
  fail_unless_equals_string(sha, v->decoded_sha256);
  g_free(sha);
  g_ptr_array_unref(each);
  g_bytes_unref(stream);
  gst_harness_teardown(hh);
}

GST_START_TEST(test_dec_bytestream_1byte)
{
  static const gsize one[] = {1};
  check_bytestream(one, 1);
}
GST_END_TEST;

GST_START_TEST(test_dec_bytestream_chunks)
{
  /* Sizes that split markers, headers and FF 00 pairs in every way. */
  static const gsize mixed[] = {2, 3, 4096, 1, 655, 7, 65536, 5, 1000, 13};
  check_bytestream(mixed, G_N_ELEMENTS(mixed));
}
GST_END_TEST;

GST_START_TEST(test_dec_bytestream_junk)
{
  /* Garbage before the first frame and between two frames is skipped. */
  GPtrArray *frames = load_frames(K7_STREAM);
  GPtrArray *clean = clean_pictures(frames);
  GstHarness *hh = dec_harness(BYTESTREAM_CAPS);
  static const guint8 junk[] = {0x00, 0xff, 0xd8, 0x12, 0xff, 0xff, 0xd9, 0x42, 0xff};
  GByteArray *data = g_byte_array_new();
  GPtrArray *each = g_ptr_array_new_with_free_func(g_free);
  static const gsize chunks[] = {3};
  GBytes *bytes;
  guint n;

  g_byte_array_append(data, junk, sizeof junk);
  for (n = 0; n < 8; n++) {
    gsize len;
    const guint8 *d = g_bytes_get_data(frames->pdata[n], &len);
    g_byte_array_append(data, d, len);
    if (n == 3) g_byte_array_append(data, junk, sizeof junk);
  }
  bytes = g_byte_array_free_to_bytes(data);
  push_chunked(hh, bytes, chunks, 1);
  g_free(pull_pictures(hh, each, NULL, NULL));
  fail_unless_equals_int(each->len, 8);
  for (n = 0; n < 8; n++)
    fail_unless_equals_string(each->pdata[n], clean->pdata[n]);
  g_bytes_unref(bytes);
  g_ptr_array_unref(each);
  g_ptr_array_unref(clean);
  g_ptr_array_unref(frames);
  gst_harness_teardown(hh);
}
GST_END_TEST;

/* Quantiser tables may hold any byte values, FF D8 FF DB (a frame start)
 * and FF D9 (EOI) too, since each frame sends its own: the byte-stream
 * framer must not split a frame there. */
static void check_markers_in_dqt(const gsize *chunks, guint n_chunks)
{
  static const guint8 start[4] = {0xff, 0xd8, 0xff, 0xdb}, end[2] = {0xff, 0xd9};
  GPtrArray *frames = load_frames(K7_STREAM),
            *odd = g_ptr_array_new_with_free_func((GDestroyNotify)g_bytes_unref);
  GByteArray *stream = g_byte_array_new();
  GPtrArray *want, *got = g_ptr_array_new_with_free_func(g_free);
  GstHarness *hh = dec_harness(BYTESTREAM_CAPS);
  GBytes *all;
  guint n;

  for (n = 0; n < frames->len; n++) {
    gsize len;
    const guint8 *src = g_bytes_get_data(frames->pdata[n], &len);
    guint8 *d = g_memdup2(src, len);

    memcpy(d + 2 + 4 + 65 + 1 + 10, start, sizeof start); /* in the U table */
    memcpy(d + 2 + 4 + 1 + 20, end, sizeof end);          /* in the Y table */
    g_byte_array_append(stream, d, len);
    g_ptr_array_add(odd, g_bytes_new_take(d, len));
  }
  want = clean_pictures(odd);
  all = g_byte_array_free_to_bytes(stream);
  push_chunked(hh, all, chunks, n_chunks);
  g_free(pull_pictures(hh, got, NULL, NULL));
  fail_unless_equals_int(got->len, frames->len);
  for (n = 0; n < got->len; n++)
    fail_unless_equals_string(got->pdata[n], want->pdata[n]);
  g_bytes_unref(all);
  g_ptr_array_unref(want);
  g_ptr_array_unref(got);
  g_ptr_array_unref(odd);
  g_ptr_array_unref(frames);
  gst_harness_teardown(hh);
}

GST_START_TEST(test_dec_markers_in_dqt)
{
  static const gsize one[] = {1}, mixed[] = {7, 4096, 3, 300};
  check_markers_in_dqt(one, 1);
  check_markers_in_dqt(mixed, G_N_ELEMENTS(mixed));
}
GST_END_TEST;

/* backend=cpu and backend=cuda give the same pictures; without a usable
 * CUDA device, cuda fails to start with an error and auto takes the CPU. */
static gchar *decode_k7_with(const gchar *backend)
{
  GPtrArray *frames = load_frames(K7_STREAM);
  gchar *desc = g_strdup_printf("c63dec backend=%s", backend);
  GstHarness *hh = gst_harness_new_parse(desc);
  gchar *sha;

  gst_harness_set_src_caps_str(hh, PACKETIZED_CAPS);
  push_frames_eos(hh, frames, 0);
  sha = pull_pictures(hh, NULL, NULL, NULL);
  g_ptr_array_unref(frames);
  g_free(desc);
  gst_harness_teardown(hh);
  return sha;
}

GST_START_TEST(test_dec_backends)
{
  const C63Vector *v = c63check_vector(K7_STREAM);
  gchar *cpu = decode_k7_with("cpu"), *other;

  fail_unless_equals_string(cpu, v->decoded_sha256);
  other = decode_k7_with("auto");
  fail_unless_equals_string(other, cpu);
  g_free(other);
  if (c63_backend_available(C63_BACKEND_CUDA, 0, NULL, 0)) {
    other = decode_k7_with("cuda");
    fail_unless_equals_string(other, cpu);
    g_free(other);
  } else {
    /* cuda without a device: the element does not start, and says why */
    GstElement *dec = gst_element_factory_make("c63dec", NULL);
    GstBus *bus = gst_bus_new();
    GstMessage *msg;

    gst_element_set_bus(dec, bus);
    gst_util_set_object_arg(G_OBJECT(dec), "backend", "cuda");
    fail_unless_equals_int(gst_element_set_state(dec, GST_STATE_PAUSED), GST_STATE_CHANGE_FAILURE);
    msg = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
    fail_unless(msg != NULL, "no error message");
    gst_message_unref(msg);
    gst_element_set_state(dec, GST_STATE_NULL);
    gst_object_unref(dec);
    gst_object_unref(bus);
  }
  g_free(cpu);
}
GST_END_TEST;

GST_START_TEST(test_dec_skip_until_keyframe)
{
  GPtrArray *frames = load_frames(K7_STREAM);
  GPtrArray *clean = clean_pictures(frames);
  GstHarness *hh = dec_harness(PACKETIZED_CAPS);
  GPtrArray *each = g_ptr_array_new_with_free_func(g_free);
  guint n;

  /* Start at frame 1: frames 1..6 have no reference and are skipped. */
  push_frames_eos(hh, frames, 1);
  {
    GstBuffer *head = gst_harness_pull(hh);
    fail_unless_equals_uint64(GST_BUFFER_PTS(head), 7 * FRAME_DURATION);
    gst_buffer_unref(head);
  }
  g_free(pull_pictures(hh, each, NULL, NULL));
  fail_unless_equals_int(each->len, frames->len - 8);
  for (n = 0; n < each->len; n++)
    fail_unless_equals_string(each->pdata[n], clean->pdata[n + 8]);
  g_ptr_array_unref(each);
  g_ptr_array_unref(clean);
  g_ptr_array_unref(frames);
  gst_harness_teardown(hh);
}
GST_END_TEST;

/* On the GPU backend the output is CUDA memory when downstream takes it:
 * c63dec ! cudadownload gives the pictures of system memory output, and
 * c63dec ! c63cudaenc (GPU to GPU) the bytes of a CPU re-encode. Skipped
 * without a CUDA device or nvcodec's cudadownload. */
GST_START_TEST(test_dec_cuda_memory_output)
{
  const C63Vector *v = c63check_vector(K7_STREAM);
  GstElementFactory *down = gst_element_factory_find("cudadownload");
  C63Run sys, cuda;
  gchar *desc;

  if (!down || !c63_backend_available(C63_BACKEND_CUDA, 0, NULL, 0)) {
    GST_INFO("no CUDA device or no cudadownload: CUDA memory output not tested");
    if (down) gst_object_unref(down);
    return;
  }
  gst_object_unref(down);
  desc =
      g_strdup_printf("filesrc location=%s ! c63dec ! video/x-raw ! fakesink name=sink", v->stream);
  c63check_run(desc, &sys);
  g_free(desc);
  desc = g_strdup_printf("filesrc location=%s ! c63dec ! video/x-raw(memory:CUDAMemory) ! "
                         "cudadownload ! video/x-raw ! fakesink name=sink",
                         v->stream);
  c63check_run(desc, &cuda);
  g_free(desc);
  fail_unless(sys.eos && cuda.eos, "%s / %s", sys.error, cuda.error);
  fail_unless_equals_int(cuda.buffers, v->frames);
  fail_unless_equals_string(g_checksum_get_string(cuda.video), g_checksum_get_string(sys.video));
  c63check_run_clear(&sys);
  c63check_run_clear(&cuda);

  down = gst_element_factory_find("c63cudaenc");
  if (down) {
    gst_object_unref(down);
    desc = g_strdup_printf("filesrc location=%s ! c63dec ! video/x-raw ! c63enc ! fakesink "
                           "name=sink",
                           v->stream);
    c63check_run(desc, &sys);
    g_free(desc);
    desc = g_strdup_printf("filesrc location=%s ! c63dec ! video/x-raw(memory:CUDAMemory) ! "
                           "c63cudaenc ! fakesink name=sink",
                           v->stream);
    c63check_run(desc, &cuda);
    g_free(desc);
    fail_unless(sys.eos && cuda.eos, "%s / %s", sys.error, cuda.error);
    fail_unless(sys.bytes->len > 0 && sys.bytes->len == cuda.bytes->len &&
                    memcmp(sys.bytes->data, cuda.bytes->data, sys.bytes->len) == 0,
                "GPU-to-GPU re-encode differs from the CPU's");
    c63check_run_clear(&sys);
    c63check_run_clear(&cuda);
  }
}
GST_END_TEST;

/* Pictures leave the decoder c63_decoder_delay() frames after their input
 * (pushed from the element's own thread, so a picture is waited for, and
 * none comes earlier), and the latency query says so (that many frame
 * durations of the caps); the threads property sets how many are in
 * flight. */
GST_START_TEST(test_dec_latency)
{
  GPtrArray *frames = load_frames(K7_STREAM);
  GstHarness *hh = gst_harness_new_parse("c63dec threads=3");
  c63_dec_params p;
  c63_decoder *ref;
  gint delay;
  guint n;

  /* the element's backend (the GPU when usable), three threads */
  c63_dec_params_init(&p);
  p.threads = 3;
  gst_harness_set_src_caps_str(hh, PACKETIZED_CAPS);
  if (c63_backend_available(C63_BACKEND_CUDA, 0, NULL, 0)) p.backend = C63_BACKEND_CUDA;
  fail_unless_equals_int(c63_decoder_new(&p, &ref, NULL, 0), C63_OK);
  delay = c63_decoder_delay(ref);
  c63_decoder_free(ref);
  fail_unless(delay >= 1);

  for (n = 0; n < (guint)delay + 3 && n < frames->len; n++) {
    fail_unless_equals_int(push_frame(hh, g_bytes_ref(frames->pdata[n]), n), GST_FLOW_OK);
    /* frame n comes out when frame n + delay goes in, not before */
    if (n + 1 > (guint)delay) gst_buffer_unref(gst_harness_pull(hh));
    fail_unless(gst_harness_try_pull(hh) == NULL, "a picture before its time, at frame %u", n);
    fail_unless_equals_int(gst_harness_buffers_received(hh),
                           n + 1 > (guint)delay ? n + 1 - delay : 0);
  }
  fail_unless_equals_uint64(gst_harness_query_latency(hh), delay * FRAME_DURATION);
  g_ptr_array_unref(frames);
  gst_harness_teardown(hh);
}
GST_END_TEST;

/* Frames the element's decoder holds before the first picture comes out,
 * as the element makes it (its default properties). */
static gint element_delay(void)
{
  c63_dec_params p;
  c63_decoder *ref;
  gint delay;

  c63_dec_params_init(&p);
  if (c63_backend_available(C63_BACKEND_CUDA, 0, NULL, 0)) p.backend = C63_BACKEND_CUDA;
  fail_unless_equals_int(c63_decoder_new(&p, &ref, NULL, 0), C63_OK);
  delay = c63_decoder_delay(ref);
  c63_decoder_free(ref);
  return delay;
}

/* A flush (seek) drops the frames in flight: after it, a keyframe and the
 * frames after it decode exactly as in a clean run, and nothing of before
 * comes out. The pictures due before it are waited for (the element pushes
 * them from a thread of its own). */
GST_START_TEST(test_dec_flush_in_flight)
{
  GPtrArray *frames = load_frames(K7_STREAM);
  GPtrArray *clean = clean_pictures(frames);
  GstHarness *hh = dec_harness(PACKETIZED_CAPS);
  GPtrArray *each = g_ptr_array_new_with_free_func(g_free);
  const gint due = 5 - element_delay();
  GstSegment segment;
  gint n;

  for (n = 0; n < 5; n++)
    fail_unless_equals_int(push_frame(hh, g_bytes_ref(frames->pdata[n]), n), GST_FLOW_OK);
  for (n = 0; n < due; n++)
    gst_buffer_unref(gst_harness_pull(hh));
  fail_unless(gst_harness_try_pull(hh) == NULL, "a picture before its time");

  fail_unless(gst_harness_push_event(hh, gst_event_new_flush_start()));
  fail_unless(gst_harness_push_event(hh, gst_event_new_flush_stop(TRUE)));
  gst_segment_init(&segment, GST_FORMAT_TIME);
  fail_unless(gst_harness_push_event(hh, gst_event_new_segment(&segment)));
  for (n = 7; n < 14; n++) /* 7 is a keyframe */
    fail_unless_equals_int(push_frame(hh, g_bytes_ref(frames->pdata[n]), n), GST_FLOW_OK);
  fail_unless(gst_harness_push_event(hh, gst_event_new_eos()));
  g_free(pull_pictures(hh, each, NULL, NULL));
  fail_unless_equals_int(each->len, 7);
  for (n = 0; n < (gint)each->len; n++)
    fail_unless_equals_string(each->pdata[n], clean->pdata[n + 7]);
  g_ptr_array_unref(each);
  g_ptr_array_unref(clean);
  g_ptr_array_unref(frames);
  gst_harness_teardown(hh);
}
GST_END_TEST;

/* Push every frame, frames bad_a and bad_b with a broken DHT marker, then
 * EOS. */
static void push_frames_bad_dht(GstHarness *hh, GPtrArray *frames, guint bad_a, guint bad_b)
{
  guint n;

  for (n = 0; n < frames->len; n++) {
    GBytes *frame = g_bytes_ref(frames->pdata[n]);
    if (n == bad_a || n == bad_b) {
      gsize len;
      const guint8 *good = g_bytes_get_data(frame, &len);
      guint8 *bad = g_memdup2(good, len);
      bad[222] ^= 0xff; /* the C4 of the DHT marker, after SOI, DQT and SOF */
      g_bytes_unref(frame);
      frame = g_bytes_new_take(bad, len);
    }
    fail_unless_equals_int(push_frame(hh, frame, n), GST_FLOW_OK);
  }
  fail_unless(gst_harness_push_event(hh, gst_event_new_eos()));
}

/* Frame 3 with a broken DHT marker: a warning, frames 3..6 are missing, and
 * from keyframe 7 on the pictures are exactly the clean ones. */
GST_START_TEST(test_dec_corrupt_recovery)
{
  GPtrArray *frames = load_frames(K7_STREAM);
  GPtrArray *clean = clean_pictures(frames);
  GstHarness *hh = dec_harness(PACKETIZED_CAPS);
  GPtrArray *each = g_ptr_array_new_with_free_func(g_free);
  GstBus *bus = gst_bus_new();
  GstMessage *msg;
  guint n;

  gst_element_set_bus(hh->element, bus);
  push_frames_bad_dht(hh, frames, 3, 3);
  g_free(pull_pictures(hh, each, NULL, NULL));
  fail_unless_equals_int(each->len, frames->len - 4);
  for (n = 0; n < 3; n++)
    fail_unless_equals_string(each->pdata[n], clean->pdata[n]);
  for (n = 3; n < each->len; n++)
    fail_unless_equals_string(each->pdata[n], clean->pdata[n + 4]);
  msg = gst_bus_pop_filtered(bus, GST_MESSAGE_WARNING);
  fail_unless(msg != NULL, "no warning for the corrupt frame");
  {
    GError *err = NULL;
    gst_message_parse_warning(msg, &err, NULL);
    fail_unless(g_error_matches(err, GST_STREAM_ERROR, GST_STREAM_ERROR_DECODE), "%s",
                err->message);
    g_error_free(err);
  }
  gst_message_unref(msg);
  gst_element_set_bus(hh->element, NULL);
  gst_object_unref(bus);
  g_ptr_array_unref(each);
  g_ptr_array_unref(clean);
  g_ptr_array_unref(frames);
  gst_harness_teardown(hh);
}
GST_END_TEST;

/* Two glitches with pictures between them (frames 3 and 10, keyframe 7
 * decoded in between): each one is news, a warning each. */
GST_START_TEST(test_dec_warning_per_glitch)
{
  GPtrArray *frames = load_frames(K7_STREAM);
  GstBus *bus;
  GstHarness *hh = dec_harness_bus(PACKETIZED_CAPS, &bus);
  BusMessages m;

  push_frames_bad_dht(hh, frames, 3, 10);
  g_free(pull_pictures(hh, NULL, NULL, NULL));
  pop_messages(bus, &m);
  fail_unless_equals_int(m.warnings, 2);
  fail_unless_equals_int(m.errors, 0);
  clear_messages(&m);
  g_ptr_array_unref(frames);
  teardown_bus(hh, bus);
}
GST_END_TEST;

/* A corrupt frame makes the decoder ask upstream for a keyframe (a
 * force-key-unit event) and drop the delta frames until one comes; with
 * the input flagged like c63parse's output, the pictures are those of a
 * clean decode but for frames 1 to 6. The decoder asks only when no
 * keyframe was sent after the corrupt frame, so the test keeps fewer
 * frames in flight than there are between the corrupt frame and the next
 * keyframe: threads=1, and on the CUDA backend entropy decoding on that
 * thread (C63_CUDA_CPU_ENTROPY=1: at most 4 more; the GPU's batches hold
 * 32). */
GST_START_TEST(test_dec_corrupt_requests_keyframe)
{
  g_setenv("C63_CUDA_CPU_ENTROPY", "1", TRUE);
  GPtrArray *frames = load_frames(K7_STREAM);
  GPtrArray *clean = clean_pictures(frames);
  GstHarness *hh = dec_harness_parse("c63dec threads=1", PACKETIZED_CAPS);
  GPtrArray *each = g_ptr_array_new_with_free_func(g_free);
  GstEvent *ev;
  gboolean forced = FALSE;
  guint n;

  for (n = 0; n < frames->len; n++) {
    GstBuffer *buf;
    gboolean key = FALSE;
    gsize len;
    const guint8 *good = g_bytes_get_data(frames->pdata[n], &len);
    guint8 *d = g_memdup2(good, len);

    buf = gst_buffer_new_wrapped(d, len);
    c63check_frame_info(buf, NULL, NULL, &key, NULL);
    if (n == 1) d[222] ^= 0xff; /* the C4 of the DHT marker */
    if (!key) GST_BUFFER_FLAG_SET(buf, GST_BUFFER_FLAG_DELTA_UNIT);
    GST_BUFFER_PTS(buf) = n * FRAME_DURATION;
    GST_BUFFER_DURATION(buf) = FRAME_DURATION;
    fail_unless_equals_int(gst_harness_push(hh, buf), GST_FLOW_OK);
  }
  fail_unless(gst_harness_push_event(hh, gst_event_new_eos()));
  while ((ev = gst_harness_try_pull_upstream_event(hh))) {
    if (gst_video_event_is_force_key_unit(ev)) forced = TRUE;
    gst_event_unref(ev);
  }
  fail_unless(forced, "no force-key-unit event upstream");
  g_free(pull_pictures(hh, each, NULL, NULL));
  fail_unless_equals_int(each->len, frames->len - 6);
  for (n = 0; n < each->len; n++)
    fail_unless_equals_string(each->pdata[n], clean->pdata[n < 1 ? n : n + 6]);
  g_ptr_array_unref(each);
  g_ptr_array_unref(clean);
  g_ptr_array_unref(frames);
  gst_harness_teardown(hh);
  g_unsetenv("C63_CUDA_CPU_ENTROPY");
}
GST_END_TEST;

/* With max-errors=0 the first corrupt frame is fatal. */
GST_START_TEST(test_dec_corrupt_fatal)
{
  GPtrArray *frames = load_frames(K7_STREAM);
  GstHarness *hh = dec_harness(PACKETIZED_CAPS);
  GstBus *bus = gst_bus_new();
  GstMessage *msg;
  gsize len;
  const guint8 *d = g_bytes_get_data(frames->pdata[1], &len);
  GBytes *truncated = g_bytes_new(d, len / 2);

  gst_element_set_bus(hh->element, bus);
  g_object_set(hh->element, "max-errors", 0, NULL);
  fail_unless_equals_int(push_frame(hh, g_bytes_ref(frames->pdata[0]), 0), GST_FLOW_OK);
  /* The failure shows when the frame leaves the decoder: at once, or at
   * EOS, which drains the frames in flight. */
  if (push_frame(hh, truncated, 1) == GST_FLOW_OK) gst_harness_push_event(hh, gst_event_new_eos());
  msg = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
  fail_unless(msg != NULL);
  {
    GError *err = NULL;

    /* past max-errors decoding stops: no promise of the next keyframe */
    gst_message_parse_error(msg, &err, NULL);
    fail_unless(strstr(err->message, "decoding stops") != NULL, "%s", err->message);
    fail_unless(strstr(err->message, "max-errors") != NULL, "%s", err->message);
    fail_if(strstr(err->message, "skipping") != NULL, "%s", err->message);
    g_error_free(err);
  }
  gst_message_unref(msg);
  gst_element_set_bus(hh->element, NULL);
  gst_object_unref(bus);
  g_ptr_array_unref(frames);
  gst_harness_teardown(hh);
}
GST_END_TEST;

/* A stream whose size changes at a keyframe renegotiates the output. */
static void check_size_change(const gchar *caps)
{
  GPtrArray *small = load_frames("pan_176x144.c63");
  GPtrArray *large = load_frames("pan_352x288.c63");
  GstHarness *hh = dec_harness(caps);
  GstEvent *ev;
  gint sizes[4], n_caps = 0;
  guint n;

  for (n = 0; n < 10; n++) {
    GBytes *frame = n < 5 ? small->pdata[n] : large->pdata[n - 5];
    fail_unless_equals_int(push_frame(hh, g_bytes_ref(frame), n), GST_FLOW_OK);
  }
  fail_unless(gst_harness_push_event(hh, gst_event_new_eos()));
  fail_unless_equals_int(gst_harness_buffers_received(hh), 10);
  for (n = 0; n < 10; n++) {
    GstBuffer *buf = gst_harness_pull(hh);
    fail_unless_equals_int(gst_buffer_get_size(buf), n < 5 ? 176 * 144 * 3 / 2 : 352 * 288 * 3 / 2);
    gst_buffer_unref(buf);
  }
  while ((ev = gst_harness_try_pull_event(hh))) {
    if (GST_EVENT_TYPE(ev) == GST_EVENT_CAPS && n_caps < 2) {
      GstCaps *c;
      gst_event_parse_caps(ev, &c);
      gst_structure_get_int(gst_caps_get_structure(c, 0), "width", &sizes[2 * n_caps]);
      gst_structure_get_int(gst_caps_get_structure(c, 0), "height", &sizes[2 * n_caps + 1]);
      n_caps++;
    }
    gst_event_unref(ev);
  }
  fail_unless_equals_int(n_caps, 2);
  fail_unless(sizes[0] == 176 && sizes[1] == 144 && sizes[2] == 352 && sizes[3] == 288);
  g_ptr_array_unref(small);
  g_ptr_array_unref(large);
  gst_harness_teardown(hh);
}

GST_START_TEST(test_dec_size_change)
{
  check_size_change(PACKETIZED_CAPS);
}
GST_END_TEST;

GST_START_TEST(test_dec_size_change_bytestream)
{
  check_size_change(BYTESTREAM_CAPS);
}
GST_END_TEST;

/* A frame cut short at EOS is reported, the rest is decoded. */
GST_START_TEST(test_dec_truncated_at_eos)
{
  const C63Vector *v = c63check_vector(K7_STREAM);
  GBytes *stream = c63check_read_file(v->stream);
  GBytes *cut = g_bytes_new_from_bytes(stream, 0, g_bytes_get_size(stream) - 100);
  GstHarness *hh = dec_harness(BYTESTREAM_CAPS);
  static const gsize chunks[] = {4096};

  push_chunked(hh, cut, chunks, 1);
  fail_unless_equals_int(gst_harness_buffers_received(hh), v->frames - 1);
  g_bytes_unref(cut);
  g_bytes_unref(stream);
  gst_harness_teardown(hh);
}
GST_END_TEST;

/* 200 KB of repeated frame starts (FF D8 FF DB): 50,000 broken frames. Each
 * is counted against max-errors, but they are one run of corrupt data, so
 * the bus gets one warning, not 50,000; and since nothing decodes, EOS
 * ends in an error. */
GST_START_TEST(test_dec_garbage_warnings_bounded)
{
  static const guint8 start[] = {0xff, 0xd8, 0xff, 0xdb};
  GByteArray *data = g_byte_array_new();
  GstBus *bus;
  GstHarness *hh = dec_harness_bus(BYTESTREAM_CAPS, &bus);
  BusMessages m;
  GBytes *bytes;
  guint i;

  for (i = 0; i < 200 * 1024 / sizeof start; i++)
    g_byte_array_append(data, start, sizeof start);
  bytes = g_byte_array_free_to_bytes(data);
  fail_unless_equals_int(gst_harness_push(hh, gst_buffer_new_wrapped_bytes(g_bytes_ref(bytes))),
                         GST_FLOW_OK);
  gst_harness_push_event(hh, gst_event_new_eos());
  pop_messages(bus, &m);
  fail_unless(m.warnings <= 2, "%u warnings", m.warnings);
  fail_unless_equals_int(m.errors, 1);
  fail_unless(g_error_matches(m.error, GST_STREAM_ERROR, GST_STREAM_ERROR_DECODE), "%s",
              m.error->message);
  clear_messages(&m);
  fail_unless_equals_int(gst_harness_buffers_received(hh), 0);
  teardown_bus(hh, bus);

  /* With max-errors=10 the 11th broken frame in a row is fatal: at most
   * max-errors warnings before the error, however long the garbage. */
  hh = dec_harness_bus(BYTESTREAM_CAPS, &bus);
  g_object_set(hh->element, "max-errors", 10, NULL);
  fail_unless_equals_int(gst_harness_push(hh, gst_buffer_new_wrapped_bytes(g_bytes_ref(bytes))),
                         GST_FLOW_ERROR);
  pop_messages(bus, &m);
  fail_unless(m.warnings <= 10 + 1, "%u warnings", m.warnings);
  fail_unless_equals_int(m.errors, 1);
  fail_unless(strstr(m.error->message, "Corrupt Codec63 frame") != NULL, "%s", m.error->message);
  clear_messages(&m);
  teardown_bus(hh, bus);
  g_bytes_unref(bytes);
}
GST_END_TEST;

/* Frame starts separated by kilobytes of junk: one error count per frame
 * start the framer resynchronised on, none for the junk bytes, whatever the
 * chunking. With max-errors=3, three broken frames are tolerated (EOS then
 * fails only because nothing decoded); a fourth is fatal. Returns the first
 * flow that was not OK (the pushing stops there), then EOS is sent. */
static GstFlowReturn push_junk_frames(GstHarness *hh, guint n_starts)
{
  static const gsize chunks[] = {1, 7, 4096, 3};
  GRand *rand = g_rand_new_with_seed(5050);
  GByteArray *data = g_byte_array_new();
  GstFlowReturn ret = GST_FLOW_OK;
  gsize len, pos = 0;
  GBytes *bytes;
  guint i, j;

  for (i = 0; i < n_starts; i++) {
    static const guint8 start[] = {0xff, 0xd8, 0xff, 0xdb};

    g_byte_array_append(data, start, sizeof start);
    for (j = 0; j < 20000; j++) {
      guint8 b = (guint8)g_rand_int_range(rand, 0, 256);
      /* any bytes, but no further frame start */
      if (b == 0xd8 && data->data[data->len - 1] == 0xff) b = 0;
      g_byte_array_append(data, &b, 1);
    }
  }
  bytes = g_byte_array_free_to_bytes(data);
  len = g_bytes_get_size(bytes);
  for (i = 0; pos < len && ret == GST_FLOW_OK; i++) {
    gsize n = MIN(chunks[i % G_N_ELEMENTS(chunks)], len - pos);

    ret = gst_harness_push(hh, gst_buffer_new_wrapped_bytes(g_bytes_new_from_bytes(bytes, pos, n)));
    pos += n;
  }
  gst_harness_push_event(hh, gst_event_new_eos());
  g_bytes_unref(bytes);
  g_rand_free(rand);
  return ret;
}

GST_START_TEST(test_dec_garbage_error_per_resync)
{
  GstBus *bus;
  GstHarness *hh = dec_harness_bus(BYTESTREAM_CAPS, &bus);
  BusMessages m;

  g_object_set(hh->element, "max-errors", 3, NULL);
  fail_unless_equals_int(push_junk_frames(hh, 3), GST_FLOW_OK);
  pop_messages(bus, &m);
  fail_unless_equals_int(m.errors, 1);
  fail_unless(strstr(m.error->message, "No frame could be decoded") != NULL, "%s",
              m.error->message);
  clear_messages(&m);
  teardown_bus(hh, bus);

  hh = dec_harness_bus(BYTESTREAM_CAPS, &bus);
  g_object_set(hh->element, "max-errors", 3, NULL);
  /* the fourth frame ends at EOS or at a junk FF D9, whichever comes first */
  push_junk_frames(hh, 4);
  pop_messages(bus, &m);
  fail_unless_equals_int(m.errors, 1);
  fail_unless(strstr(m.error->message, "Corrupt Codec63 frame") != NULL, "%s", m.error->message);
  clear_messages(&m);
  teardown_bus(hh, bus);
}
GST_END_TEST;

/* Input that yields no picture at all ends in one error at EOS, so
 * gst-launch-1.0 fails instead of writing an empty file: */
static void check_nothing_decoded_says(GstHarness *hh, GstBus *bus, const gchar *text)
{
  BusMessages m;

  fail_unless_equals_int(gst_harness_buffers_received(hh), 0);
  pop_messages(bus, &m);
  fail_unless_equals_int(m.errors, 1);
  fail_unless(g_error_matches(m.error, GST_STREAM_ERROR, GST_STREAM_ERROR_DECODE), "%s",
              m.error->message);
  fail_unless(strstr(m.error->message, text) != NULL, "%s", m.error->message);
  clear_messages(&m);
  teardown_bus(hh, bus);
}

static void check_nothing_decoded(GstHarness *hh, GstBus *bus)
{
  check_nothing_decoded_says(hh, bus, "No frame could be decoded");
}

GST_START_TEST(test_dec_nothing_decoded)
{
  GPtrArray *frames = load_frames(K7_STREAM);
  GstBus *bus;
  GstHarness *hh;
  guint n;

  /* only delta frames (a stream cut after its last keyframe) */
  hh = dec_harness_bus(PACKETIZED_CAPS, &bus);
  for (n = 1; n < 7; n++)
    fail_unless_equals_int(push_frame(hh, g_bytes_ref(frames->pdata[n]), n), GST_FLOW_OK);
  gst_harness_push_event(hh, gst_event_new_eos());
  check_nothing_decoded_says(hh, bus, "No keyframe received");

  /* the same flagged as delta units, which GstVideoDecoder discards before
   * the decoder sees them: the element's own message, not the base
   * class's generic one */
  hh = dec_harness_bus(PACKETIZED_CAPS, &bus);
  for (n = 1; n < 7; n++) {
    GstBuffer *buf = gst_buffer_new_wrapped_bytes(g_bytes_ref(frames->pdata[n]));

    GST_BUFFER_PTS(buf) = n * FRAME_DURATION;
    GST_BUFFER_FLAG_SET(buf, GST_BUFFER_FLAG_DELTA_UNIT);
    fail_unless_equals_int(gst_harness_push(hh, buf), GST_FLOW_OK);
  }
  gst_harness_push_event(hh, gst_event_new_eos());
  check_nothing_decoded_says(hh, bus,
                             "No keyframe received: the stream must start with a keyframe");

  /* only corrupt frames: the first half of each */
  hh = dec_harness_bus(PACKETIZED_CAPS, &bus);
  for (n = 0; n < 5; n++) {
    GBytes *half =
        g_bytes_new_from_bytes(frames->pdata[n], 0, g_bytes_get_size(frames->pdata[n]) / 2);
    fail_unless_equals_int(push_frame(hh, half, n), GST_FLOW_OK);
  }
  gst_harness_push_event(hh, gst_event_new_eos());
  check_nothing_decoded(hh, bus);

  /* a byte stream without any frame */
  hh = dec_harness_bus(BYTESTREAM_CAPS, &bus);
  {
    static const gsize chunks[] = {4096};
    guint8 junk[10000];
    GBytes *bytes;

    for (n = 0; n < sizeof junk; n++)
      junk[n] = (guint8)(n * 7 + 1);
    bytes = g_bytes_new(junk, sizeof junk);
    push_chunked(hh, bytes, chunks, 1);
    g_bytes_unref(bytes);
  }
  check_nothing_decoded(hh, bus);
  g_ptr_array_unref(frames);
}
GST_END_TEST;

/* An empty stream is no error: there was nothing to decode. */
GST_START_TEST(test_dec_empty_stream)
{
  GstBus *bus;
  GstHarness *hh = dec_harness_bus(BYTESTREAM_CAPS, &bus);
  BusMessages m;

  gst_harness_play(hh);
  gst_harness_push_event(hh, gst_event_new_eos());
  pop_messages(bus, &m);
  fail_unless_equals_int(m.errors, 0);
  fail_unless_equals_int(m.warnings, 0);
  teardown_bus(hh, bus);
}
GST_END_TEST;

/* Downstream proposes an allocator that fails: an error naming the
 * picture size that could not be allocated, no crash. */
GST_START_TEST(test_dec_alloc_failure)
{
  GPtrArray *frames = load_frames(K7_STREAM);
  GstBus *bus;
  GstHarness *hh = dec_harness_bus(PACKETIZED_CAPS, &bus);
  BusMessages m;

  gst_harness_set_propose_allocator(hh, c63check_failing_allocator_new(), NULL);
  /* The allocation fails when the picture leaves the decoder: at once, or
   * at EOS. */
  if (push_frame(hh, g_bytes_ref(frames->pdata[0]), 0) == GST_FLOW_OK)
    gst_harness_push_event(hh, gst_event_new_eos());
  fail_unless_equals_int(gst_harness_buffers_received(hh), 0);
  pop_messages(bus, &m);
  fail_unless_equals_int(m.errors, 1);
  fail_unless(g_error_matches(m.error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_NO_SPACE_LEFT), "%s",
              m.error->message);
  fail_unless(strstr(m.error->message, "352x288") != NULL, "%s", m.error->message);
  clear_messages(&m);
  teardown_bus(hh, bus);
  g_ptr_array_unref(frames);
}
GST_END_TEST;

/* With nothing proposed downstream, output pictures come from the
 * decoder's own pool; its memory must come from an allocation that can
 * fail. (GStreamer 1.22's default system allocator takes its blocks from
 * g_malloc and aborts the process when memory runs out.) */
GST_START_TEST(test_dec_output_memory_can_fail)
{
  GPtrArray *frames = load_frames(K7_STREAM);
  GstHarness *hh = dec_harness(PACKETIZED_CAPS);
  GstBufferPool *pool;
  GstStructure *config;
  GstAllocator *allocator = NULL;
  GstAllocationParams params;
  GstMemory *mem;

  fail_unless_equals_int(push_frame(hh, g_bytes_ref(frames->pdata[0]), 0), GST_FLOW_OK);
  fail_unless(gst_harness_push_event(hh, gst_event_new_eos()));
  gst_buffer_unref(gst_harness_pull(hh));
  pool = gst_video_decoder_get_buffer_pool(GST_VIDEO_DECODER(hh->element));
  fail_unless(pool != NULL);
  config = gst_buffer_pool_get_config(pool);
  fail_unless(gst_buffer_pool_config_get_allocator(config, &allocator, &params));
  /* 1 PiB: refused, not fatal */
  mem = gst_allocator_alloc(allocator, (gsize)1 << 50, &params);
  fail_unless(mem == NULL);
  /* and ordinary sizes still work, with the requested alignment */
  params.align = 63;
  mem = gst_allocator_alloc(allocator, 1000, &params);
  fail_unless(mem != NULL);
  {
    GstMapInfo map;
    fail_unless(gst_memory_map(mem, &map, GST_MAP_WRITE));
    fail_unless_equals_int(map.size, 1000);
    fail_unless_equals_int((guintptr)map.data & 63, 0);
    memset(map.data, 0x5a, map.size);
    gst_memory_unmap(mem, &map);
  }
  gst_memory_unref(mem);
  /* prefix and padding, zeroed on request */
  params.prefix = 16;
  params.padding = 8;
  params.flags = GST_MEMORY_FLAG_ZERO_PREFIXED | GST_MEMORY_FLAG_ZERO_PADDED;
  mem = gst_allocator_alloc(allocator, 1000, &params);
  fail_unless(mem != NULL);
  {
    gsize offset, maxsize, i;
    GstMapInfo map;

    fail_unless_equals_int(gst_memory_get_sizes(mem, &offset, &maxsize), 1000);
    fail_unless_equals_int(offset, 16);
    fail_unless(maxsize >= 16 + 1000 + 8);
    gst_memory_resize(mem, -16, 16 + 1000 + 8);
    fail_unless(gst_memory_map(mem, &map, GST_MAP_READ));
    fail_unless_equals_int((guintptr)map.data & 63, 0);
    for (i = 0; i < 16; i++)
      fail_unless_equals_int(map.data[i], 0);
    for (i = 16 + 1000; i < map.size; i++)
      fail_unless_equals_int(map.data[i], 0);
    gst_memory_unmap(mem, &map);
  }
  gst_memory_unref(mem);
  gst_structure_free(config);
  gst_object_unref(pool);
  gst_harness_teardown(hh);
  g_ptr_array_unref(frames);
}
GST_END_TEST;

/* A buffer pool that hands out I420 buffers whose GstVideoMeta says the
 * luma rows are stride bytes apart, in buffers of the caps' size. */
typedef struct {
  GstBufferPool parent;
  gint stride;
} BadPool;
typedef GstBufferPoolClass BadPoolClass;
G_DEFINE_TYPE(BadPool, bad_pool, GST_TYPE_BUFFER_POOL)

static GstFlowReturn bad_pool_alloc(GstBufferPool *pool, GstBuffer **buffer,
                                    G_GNUC_UNUSED GstBufferPoolAcquireParams *params)
{
  GstStructure *config = gst_buffer_pool_get_config(pool);
  GstCaps *caps = NULL;
  GstVideoInfo info;
  gint stride[GST_VIDEO_MAX_PLANES];
  guint p;

  fail_unless(gst_buffer_pool_config_get_params(config, &caps, NULL, NULL, NULL));
  fail_unless(gst_video_info_from_caps(&info, caps));
  gst_structure_free(config);
  for (p = 0; p < GST_VIDEO_MAX_PLANES; p++)
    stride[p] = GST_VIDEO_INFO_PLANE_STRIDE(&info, p);
  stride[0] = ((BadPool *)pool)->stride;
  *buffer = gst_buffer_new_allocate(NULL, GST_VIDEO_INFO_SIZE(&info), NULL);
  gst_buffer_add_video_meta_full(*buffer, GST_VIDEO_FRAME_FLAG_NONE, GST_VIDEO_FORMAT_I420,
                                 GST_VIDEO_INFO_WIDTH(&info), GST_VIDEO_INFO_HEIGHT(&info), 3,
                                 info.offset, stride);
  return GST_FLOW_OK;
}

static void bad_pool_class_init(BadPoolClass *klass)
{
  klass->alloc_buffer = bad_pool_alloc;
}

static void bad_pool_init(G_GNUC_UNUSED BadPool *pool) {}

/* The harness's sink answers allocation queries with a BadPool (its
 * stride in the pad's "stride" data), everything else as before. */
static gboolean bad_pool_query(GstPad *pad, GstObject *parent, GstQuery *query)
{
  GstPadQueryFunction chain = g_object_get_data(G_OBJECT(pad), "query");

  if (GST_QUERY_TYPE(query) == GST_QUERY_ALLOCATION) {
    BadPool *pool = g_object_new(bad_pool_get_type(), NULL);

    pool->stride = GPOINTER_TO_INT(g_object_get_data(G_OBJECT(pad), "stride"));
    gst_query_add_allocation_pool(query, GST_BUFFER_POOL(pool), 0, 0, 0);
    gst_query_add_allocation_meta(query, GST_VIDEO_META_API_TYPE, NULL);
    gst_object_unref(pool);
    return TRUE;
  }
  return chain(pad, parent, query);
}

/* Output buffers from downstream's pool whose meta does not fit their
 * memory (rows of 1,000,000 bytes; rows of 600 bytes, past the end; rows
 * shorter than the picture): an error naming the fault, never a write
 * past the buffer. */
GST_START_TEST(test_dec_bad_output_layout)
{
  static const gint strides[] = {1000000, 600, 100};
  GPtrArray *frames = load_frames(K7_STREAM);
  guint i;

  for (i = 0; i < G_N_ELEMENTS(strides); i++) {
    GstBus *bus;
    GstHarness *hh = dec_harness_bus(PACKETIZED_CAPS, &bus);
    BusMessages m;

    g_object_set_data(G_OBJECT(hh->sinkpad), "query", GST_PAD_QUERYFUNC(hh->sinkpad));
    g_object_set_data(G_OBJECT(hh->sinkpad), "stride", GINT_TO_POINTER(strides[i]));
    gst_pad_set_query_function(hh->sinkpad, bad_pool_query);
    if (push_frame(hh, g_bytes_ref(frames->pdata[0]), 0) == GST_FLOW_OK)
      gst_harness_push_event(hh, gst_event_new_eos());
    fail_unless(gst_harness_buffers_received(hh) == 0, "stride %d: a picture came out", strides[i]);
    pop_messages(bus, &m);
    fail_unless_equals_int(m.errors, 1);
    fail_unless(g_error_matches(m.error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_WRITE), "%s",
                m.error->message);
    fail_unless(strstr(m.error->message, "does not fit a 352x288 picture") != NULL, "%s",
                m.error->message);
    clear_messages(&m);
    teardown_bus(hh, bus);
  }
  g_ptr_array_unref(frames);
}
GST_END_TEST;

static Suite *c63dec_suite(void)
{
  Suite *s = suite_create("c63dec");
  TCase *tc = tcase_create("general");

  suite_add_tcase(s, tc);
  tcase_add_test(tc, test_dec_packetized);
  tcase_add_test(tc, test_dec_caps_renewed);
  tcase_add_test(tc, test_dec_bytestream_1byte);
  tcase_add_test(tc, test_dec_bytestream_chunks);
  tcase_add_test(tc, test_dec_bytestream_junk);
  tcase_add_test(tc, test_dec_markers_in_dqt);
  tcase_add_test(tc, test_dec_backends);
  tcase_add_test(tc, test_dec_skip_until_keyframe);
  tcase_add_test(tc, test_dec_corrupt_recovery);
  tcase_add_test(tc, test_dec_corrupt_requests_keyframe);
  tcase_add_test(tc, test_dec_corrupt_fatal);
  tcase_add_test(tc, test_dec_size_change);
  tcase_add_test(tc, test_dec_size_change_bytestream);
  tcase_add_test(tc, test_dec_truncated_at_eos);
  tcase_add_test(tc, test_dec_garbage_warnings_bounded);
  tcase_add_test(tc, test_dec_warning_per_glitch);
  tcase_add_test(tc, test_dec_garbage_error_per_resync);
  tcase_add_test(tc, test_dec_nothing_decoded);
  tcase_add_test(tc, test_dec_empty_stream);
  tcase_add_test(tc, test_dec_latency);
  tcase_add_test(tc, test_dec_cuda_memory_output);
  tcase_add_test(tc, test_dec_flush_in_flight);
  tcase_add_test(tc, test_dec_alloc_failure);
  tcase_add_test(tc, test_dec_bad_output_layout);
  tcase_add_test(tc, test_dec_output_memory_can_fail);
  return s;
}

GST_CHECK_MAIN(c63dec);
