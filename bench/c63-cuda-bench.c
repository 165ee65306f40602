/* c63-cuda-bench: speed of the CUDA encoder, whole and per GPU stage.
 *
 * Holds a clip in memory (a raw I420 file, cycled, or a synthetic 1080p
 * clip), encodes it through libc63 with the CUDA backend several times and
 * prints the median fps and the median GPU time of each stage per frame,
 * measured with CUDA events (c63_stage_stats, c63/encode_backend.h). Speed is measured, never
 * asserted. For the GStreamer element see c63-cuda-bench-gst.sh.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "c63/c63.h"
#include "c63/encoder_stats.h"
#include "cliutil.h"
#include "cuda/c63_cuda.h"
#include "synth.h"

#define MAX_RUNS 64

static void usage(FILE *out)
{
  fprintf(out,
          "Usage: c63-cuda-bench [options] [INPUT.yuv]\n"
          "Encode frames held in memory with the CUDA backend; print the median fps and\n"
          "GPU stage times. Without INPUT a synthetic clip is used; INPUT is cycled.\n"
          "\n"
          "  -w W, -h H   picture size (default 1920x1080)\n"
          "  -f N         frames per run (default 300)\n"
          "  -n N         runs, medians are reported (default 5)\n"
          "  -q Q         quality (default %d)\n"
          "  -r R         search range (default %d)\n"
          "  -k K         keyframe interval (default %d)\n"
          "  -m MODE      exact (default) or rd\n"
          "  -d N         CUDA device (default 0)\n"
          "  -t N         encoder threads (default 0: the library's, one per core up to 5)\n"
          "  -p           page-lock the clip, as a pinned buffer pool would: frames are\n"
          "               uploaded straight from it (default: pageable, copied into\n"
          "               staging by the encoder's threads)\n"
          "  -R           register the clip (c63_picture_memory_register), as an\n"
          "               application registers the buffers it recycles: frames are\n"
          "               uploaded straight from it\n"
          "  -b           send the pictures borrowed (c63_encoder_send_picture_borrowed),\n"
          "               as c63cudaenc does: pageable pictures are copied into staging\n"
          "               by the encoder's threads while the caller goes on\n"
          "  -W US        the caller also works US microseconds a picture before sending\n"
          "               it (an application's or a script's own work: how much of\n"
          "               the library's time a frame overlaps it)\n"
          "  -z           the integrated-GPU path on any GPU (C63_CUDA_ZERO_COPY=1): kernels\n"
          "               read the pictures in host memory in place (with -p: the clip\n"
          "               itself), no copy-engine upload\n",
          C63_DEFAULT_QUALITY, C63_DEFAULT_SEARCH_RANGE, C63_DEFAULT_KEYFRAME_INTERVAL);
}

/* -b: pictures sent borrowed (the clip stays as it is throughout). */
static int borrowed;
/* -W: the caller's own work a picture, in microseconds. */
static int caller_work_us;

/* One run: encode frames pictures cycling through the clip. Returns the wall
 * time in seconds (encoder creation excluded) or a negative value. */
/* One encoder's run; with st, its stage timings. */
static double run_once(const c63_enc_params *p, const uint8_t *clip, int clip_frames, int frames,
                       size_t *bytes, c63_stage_stats *st)
{
  char msg[512];
  c63_encoder *enc;
  int r = c63_encoder_new(p, &enc, msg, sizeof msg);
  if (r != C63_OK) {
    fprintf(stderr, "c63-cuda-bench: %s\n", msg);
    return -1;
  }
  if (st) c63_encoder_set_stage_timing(enc, 1);
  const int cw = c63_chroma_size(p->width), ch = c63_chroma_size(p->height);
  const size_t ysize = (size_t)p->width * p->height, fsize = ysize + 2 * (size_t)cw * ch;
  c63_packet pkt;
  *bytes = 0;
  const double t0 = cli_now();
  for (int i = 0; i <= frames && r == C63_OK; i++) {
    c63_picture pic, *pp = NULL;
    if (i < frames) {
      memset(&pic, 0, sizeof pic);
      pic.data[0] = clip + (size_t)(i % clip_frames) * fsize;
      pic.data[1] = pic.data[0] + ysize;
      pic.data[2] = pic.data[1] + (size_t)cw * ch;
      pic.stride[0] = p->width;
      pic.stride[1] = pic.stride[2] = cw;
      pp = &pic;
      bench_busy_us(caller_work_us);
    }
    while ((r = borrowed ? c63_encoder_send_picture_borrowed(enc, pp)
                         : c63_encoder_send_picture(enc, pp)) == C63_ERR_AGAIN) {
      while ((r = c63_encoder_receive_packet(enc, &pkt)) == C63_OK)
        *bytes += pkt.size;
      if (r != C63_ERR_AGAIN && r != C63_ERR_EOF) break;
    }
    if (r != C63_OK) break;
    while ((r = c63_encoder_receive_packet(enc, &pkt)) == C63_OK)
      *bytes += pkt.size;
    if (r == C63_ERR_AGAIN || (r == C63_ERR_EOF && !pp)) r = C63_OK;
  }
  const double t = cli_now() - t0;
  if (r != C63_OK) fprintf(stderr, "c63-cuda-bench: %s\n", c63_encoder_error(enc));
  if (st) c63_encoder_get_stage_stats(enc, st, 0);
  c63_encoder_free(enc);
  return r == C63_OK ? t : -1;
}

int main(int argc, char **argv)
{
  c63_enc_params p;
  c63_enc_params_init(&p);
  p.width = 1920;
  p.height = 1080;
  p.backend = C63_BACKEND_CUDA;
  int frames = 300, runs = 5, opt, pinned = 0, registered = 0, zero_copy = 0;
  while ((opt = getopt(argc, argv, "w:h:f:n:q:r:k:m:d:t:pRbzW:")) != -1) {
    switch (opt) {
    case 'w':
      p.width = atoi(optarg);
      break;
    case 'h':
      p.height = atoi(optarg);
      break;
    case 'f':
      frames = atoi(optarg);
      break;
    case 'n':
      runs = atoi(optarg);
      break;
    case 'q':
      p.quality = atoi(optarg);
      break;
    case 'r':
      p.search_range = atoi(optarg);
      break;
    case 'k':
      p.keyframe_interval = atoi(optarg);
      break;
    case 'm':
      if (!strcmp(optarg, "rd"))
        p.mode = C63_MODE_RD;
      else if (strcmp(optarg, "exact")) {
        fprintf(stderr, "c63-cuda-bench: -m takes exact or rd\n");
        return 2;
      }
      break;
    case 'd':
      p.device_id = atoi(optarg);
      break;
    case 't':
      p.threads = atoi(optarg);
      break;
    case 'p':
      pinned = 1;
      break;
    case 'R':
      registered = 1;
      break;
    case 'b':
      borrowed = 1;
      break;
    case 'z':
      zero_copy = 1;
      break;
    case 'W':
      if (cli_parse_int(optarg, &caller_work_us) || caller_work_us < 0 ||
          caller_work_us > 1000000) {
        fprintf(stderr, "c63-cuda-bench: -W 0 to 1000000 microseconds, not %s\n", optarg);
        return 2;
      }
      break;
    default:
      usage(stderr);
      return 2;
    }
  }
  /* The backend reads the setting when an encoder is created. */
  if (zero_copy) setenv("C63_CUDA_ZERO_COPY", "1", 1);
  char msg[512];
  if (c63_enc_params_validate(&p, msg, sizeof msg) != C63_OK || frames < 1 || runs < 1 ||
      runs > MAX_RUNS) {
    fprintf(stderr, "c63-cuda-bench: %s\n", frames < 1 || runs < 1 ? "bad -f or -n" : msg);
    usage(stderr);
    return 2;
  }
  if (!c63_backend_available(C63_BACKEND_CUDA, p.device_id, msg, sizeof msg)) {
    fprintf(stderr, "c63-cuda-bench: CUDA backend unavailable: %s\n", msg);
    return 1;
  }

  const int cw = c63_chroma_size(p.width), ch = c63_chroma_size(p.height);
  const size_t fsize = (size_t)p.width * p.height + 2 * (size_t)cw * ch;
  uint8_t *clip = NULL;
  int clip_frames = 0;
  if (optind < argc) {
    FILE *f = fopen(argv[optind], "rb");
    if (!f) {
      perror(argv[optind]);
      return 1;
    }
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    clip_frames = (int)(len / (long)fsize);
    if (clip_frames < 1) {
      fprintf(stderr, "c63-cuda-bench: %s holds no whole %dx%d frame\n", argv[optind], p.width,
              p.height);
      return 1;
    }
    clip = malloc(fsize * clip_frames);
    if (!clip || fread(clip, fsize, clip_frames, f) != (size_t)clip_frames) {
      fprintf(stderr, "c63-cuda-bench: cannot read %s\n", argv[optind]);
      return 1;
    }
    fclose(f);
  } else {
    clip_frames = 25;
    clip = malloc(fsize * clip_frames);
    if (!clip) return 1;
    for (int t = 0; t < clip_frames; t++)
      synth_frame(clip + fsize * t, p.width, p.height, t);
  }

  if (pinned && c63_cuda_pin(clip, fsize * clip_frames, msg, sizeof msg) != C63_OK) {
    fprintf(stderr, "c63-cuda-bench: %s\n", msg);
    return 1;
  }
  if (registered &&
      c63_picture_memory_register(clip, fsize * clip_frames, msg, sizeof msg) != C63_OK) {
    fprintf(stderr, "c63-cuda-bench: registering the clip: %s\n", msg);
    return 1;
  }

  char dev[256];
  if (c63_cuda_device_name(p.device_id, dev, sizeof dev) != C63_OK) snprintf(dev, sizeof dev, "?");
  printf("device %d: %s, %s\n", p.device_id, dev,
         c63_cuda_zero_copy_on(p.device_id) ? "integrated-GPU path (no copies)" : "copying path");
  printf("%dx%d, %d frames per run (clip of %d, %s%s), quality %d, range %d, keyframe interval "
         "%d\n",
         p.width, p.height, frames, clip_frames,
         pinned       ? "page-locked"
         : registered ? "registered"
                      : "pageable, staged",
         zero_copy ? ", zero-copy" : "", p.quality, p.search_range, p.keyframe_interval);

  /* Warm-up: context creation, module loading, first-touch of pinned memory. */
  size_t bytes;
  if (run_once(&p, clip, clip_frames, frames < 10 ? frames : 10, &bytes, NULL) < 0) return 1;

  double fps[MAX_RUNS], st[8][MAX_RUNS];
  for (int i = 0; i < runs; i++) {
    c63_stage_stats s = {0};
    double t = run_once(&p, clip, clip_frames, frames, &bytes, &s);
    if (t < 0) return 1;
    const double n = s.frames > 0 ? (double)s.frames : 1.0;
    fps[i] = frames / t;
    st[0][i] = s.upload_ms / n;
    st[1][i] = s.motion_ms / n;
    st[2][i] = s.transform_ms / n;
    st[3][i] = s.entropy_ms / n;
    st[4][i] = s.download_ms / n;
    st[5][i] = s.total_ms / n;
    st[6][i] = s.submit_host_ms / n;
    st[7][i] = s.collect_wait_ms / n;
    printf("run %d: %.1f fps, %.1f KiB/frame, GPU %.3f ms/frame\n", i + 1, fps[i],
           bytes / 1024.0 / frames, st[5][i]);
  }
  static const char *names[6] = {"upload",
                                 "motion search",
                                 "transform + reconstruction",
                                 "entropy coding + stuffing",
                                 "coded frame to host",
                                 "all GPU stages"};
  printf("median of %d runs: %.1f fps\n", runs, bench_median(fps, runs));
  printf("GPU time per frame (CUDA events, median of runs):\n");
  for (int k = 0; k < 6; k++)
    printf("  %-26s %8.3f ms\n", names[k], bench_median(st[k], runs));
  printf("host time per frame (wall clock, median of runs):\n");
  printf("  %-26s %8.3f ms\n", "submit (copy + enqueue)", bench_median(st[6], runs));
  printf("  %-26s %8.3f ms\n", "collect waiting for GPU", bench_median(st[7], runs));
  printf("  %-26s %8.3f ms\n", "whole encoder (1/fps)", 1000.0 / bench_median(fps, runs));
  if (pinned) c63_cuda_unpin(clip);
  if (registered) c63_picture_memory_unregister(clip);
  free(clip);
  return 0;
}
