/* c63-bench: encoder speed in frames per second.
 *
 * Holds a clip in memory (a deterministic synthetic 1080p clip, or a raw I420
 * file), encodes it through libc63 several times and reports the median fps,
 * so disk and pipe speed do not count. It also prints a checksum of the
 * coded stream, which must not change when an optimisation keeps the output
 * identical. Speed is measured, never asserted.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c63/c63.h"
#include "bench_util.h"
#include "cliutil.h"
#include "synth.h"

static const char *prog = "c63-bench";

static void usage(FILE *out)
{
  fprintf(out,
          "Usage: %s [options] [INPUT.yuv]\n"
          "Encode a clip held in memory several times and print the median speed.\n"
          "Without INPUT, a synthetic moving pattern is generated.\n"
          "\n"
          "  -w, --width W            width (default 1920)\n"
          "  -h, --height H           height (default 1080)\n"
          "  -f, --frames N           frames per run (default 10; with INPUT: all, at most N)\n"
          "  -n, --runs N             runs, the median is reported (default 3)\n"
          "  -q, --quality Q          quality (default %d)\n"
          "  -k, --keyframe-interval K  keyframe interval (default %d)\n"
          "  -r, --search-range R     search range (default %d)\n"
          "  -m, --mode exact|rd      encoder mode (default exact)\n"
          "      --backend cpu|cuda   encoder backend (default cpu)\n"
          "      --device N           CUDA device ordinal (default 0)\n"
          "  -t, --threads N          encoder threads on the CPU (default 0: one per core)\n"
          "      --help               show this text\n",
          prog, C63_DEFAULT_QUALITY, C63_DEFAULT_KEYFRAME_INTERVAL, C63_DEFAULT_SEARCH_RANGE);
}

static int bad_usage(const char *fmt, const char *arg)
{
  fprintf(stderr, "%s: ", prog);
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\n\n");
  usage(stderr);
  return 2;
}

/* 64-bit FNV-1a, continued over the packets of one run. */
static uint64_t fnv1a(uint64_t h, const uint8_t *p, size_t n)
{
  for (size_t i = 0; i < n; i++)
    h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

typedef struct run_result {
  double seconds;
  uint64_t checksum;
  size_t bytes;
} run_result;

static int receive_all(c63_encoder *enc, run_result *res, int *eof)
{
  for (;;) {
    c63_packet pkt;
    int ret = c63_encoder_receive_packet(enc, &pkt);
    if (ret == C63_ERR_AGAIN) return 0;
    if (ret == C63_ERR_EOF) {
      *eof = 1;
      return 0;
    }
    if (ret != C63_OK) return ret;
    res->checksum = fnv1a(res->checksum, pkt.data, pkt.size);
    res->bytes += pkt.size;
  }
}

/* Encode all frames once; time from the first picture sent to the last
 * packet received (encoder creation, i.e. allocation, is not counted). */
static int encode_run(const c63_enc_params *params, const uint8_t *clip, int frames,
                      run_result *res)
{
  int w = params->width, h = params->height;
  int cw = c63_chroma_size(w), ch = c63_chroma_size(h);
  size_t fsize = cli_i420_size(w, h);
  c63_encoder *enc;
  char msg[256];
  int ret, eof = 0;
  double t0;

  if (c63_encoder_new(params, &enc, msg, sizeof msg) != C63_OK) {
    fprintf(stderr, "%s: cannot create the encoder: %s\n", prog, msg);
    return -1;
  }
  res->checksum = 0xcbf29ce484222325ull;
  res->bytes = 0;
  t0 = cli_now();
  for (int i = 0; i <= frames; i++) {
    c63_picture pic, *pp = NULL;
    if (i < frames) {
      const uint8_t *f = clip + (size_t)i * fsize;
      memset(&pic, 0, sizeof pic);
      pic.data[0] = f;
      pic.data[1] = f + (size_t)w * (size_t)h;
      pic.data[2] = pic.data[1] + (size_t)cw * (size_t)ch;
      pic.stride[0] = w;
      pic.stride[1] = pic.stride[2] = cw;
      pic.user = i;
      pp = &pic;
    }
    while ((ret = c63_encoder_send_picture(enc, pp)) == C63_ERR_AGAIN) {
      if ((ret = receive_all(enc, res, &eof)) != C63_OK) break;
    }
    if (ret == C63_OK) ret = receive_all(enc, res, &eof);
    /* After the drain call everything must come out before EOF; AGAIN there
     * would be a library bug, so do not wait for it forever. */
    if (ret == C63_OK && pp == NULL && !eof) {
      fprintf(stderr, "%s: the encoder did not finish draining\n", prog);
      c63_encoder_free(enc);
      return -1;
    }
    if (ret != C63_OK) {
      fprintf(stderr, "%s: encoding failed: %s\n", prog, c63_encoder_error(enc));
      c63_encoder_free(enc);
      return -1;
    }
  }
  res->seconds = cli_now() - t0;
  c63_encoder_free(enc);
  return 0;
}

int main(int argc, char **argv)
{
  static const struct option long_opts[] = {
      CLI_ENC_LONG_OPTS,
      {"frames", required_argument, NULL, 'f'},
      {"runs", required_argument, NULL, 'n'},
      {"help", no_argument, NULL, 'H'},
      {NULL, 0, NULL, 0},
  };
  c63_enc_params params;
  int frames = -1, runs = 3, opt, status = 1;
  const char *in_path = NULL;
  uint8_t *clip = NULL;
  size_t fsize;
  run_result *res = NULL;
  double *fps = NULL;
  char msg[256];

  c63_enc_params_init(&params);
  params.width = 1920;
  params.height = 1080;
  opterr = 0;
  if (cli_version(prog, argc, argv)) return 0;
  while ((opt = getopt_long(argc, argv, ":" CLI_ENC_OPTSTRING "f:n:", long_opts, NULL)) != -1) {
    int r = cli_enc_option(opt, optarg, &params, msg, sizeof msg);
    if (r < 0) return bad_usage("%s", msg);
    if (r > 0) continue;
    switch (opt) {
    case 'f':
    case 'n':
      if (cli_parse_int(optarg, opt == 'f' ? &frames : &runs) != 0)
        return bad_usage("'%s' is not a whole number", optarg);
      break;
    case 'H':
      usage(stdout);
      return 0;
    case ':':
      return bad_usage("option %s needs a value", argv[optind - 1]);
    default:
      return bad_usage("unknown option %s", argv[optind - 1]);
    }
  }
  if (argc - optind > 1) return bad_usage("%s", "more than one input file");
  if (optind < argc) in_path = argv[optind];
  if (runs < 1 || runs > 1000) return bad_usage("%s", "--runs must be 1..1000");
  if (frames == 0 || frames < -1) return bad_usage("%s", "--frames must be at least 1");
  if (c63_enc_params_validate(&params, msg, sizeof msg) != C63_OK) return bad_usage("%s", msg);
  fsize = cli_i420_size(params.width, params.height);

  if (in_path != NULL) {
    FILE *f = cli_open(prog, in_path, "rb", stdin);
    size_t cap = 0, have = 0;
    if (f == NULL) return 1;
    /* Read whole frames until EOF (or the frame limit). */
    for (;;) {
      if (frames > 0 && have == (size_t)frames) break;
      if (have == cap) {
        uint8_t *c;
        cap = cap ? cap * 2 : 8;
        c = realloc(clip, cap * fsize);
        if (c == NULL) {
          fprintf(stderr, "%s: out of memory\n", prog);
          goto done;
        }
        clip = c;
      }
      if (cli_read_full(f, clip + have * fsize, fsize) < fsize) break;
      have++;
    }
    if (f != stdin) fclose(f);
    if (have == 0) {
      fprintf(stderr, "%s: %s holds no complete %dx%d frame\n", prog, in_path, params.width,
              params.height);
      goto done;
    }
    frames = (int)have;
  } else {
    if (frames < 0) frames = 10;
    clip = malloc((size_t)frames * fsize);
    if (clip == NULL) {
      fprintf(stderr, "%s: out of memory\n", prog);
      goto done;
    }
    for (int i = 0; i < frames; i++)
      synth_frame(clip + (size_t)i * fsize, params.width, params.height, i);
  }

  res = calloc((size_t)runs, sizeof *res);
  fps = calloc((size_t)runs, sizeof *fps);
  if (res == NULL || fps == NULL) {
    fprintf(stderr, "%s: out of memory\n", prog);
    goto done;
  }
  printf("clip: %s, %dx%d, %d frames; quality %d, keyframe interval %d, search range %d, "
         "mode %s, backend %s, threads %d (0 = one per core)\n",
         in_path ? in_path : "synthetic", params.width, params.height, frames, params.quality,
         params.keyframe_interval, params.search_range, params.mode == C63_MODE_RD ? "rd" : "exact",
         params.backend == C63_BACKEND_CUDA ? "cuda" : "cpu", params.threads);
  for (int r = 0; r < runs; r++) {
    if (encode_run(&params, clip, frames, &res[r]) != 0) goto done;
    fps[r] = res[r].seconds > 0 ? frames / res[r].seconds : 0;
    printf("run %d: %.3f s, %.3f fps, %zu bytes, stream checksum %016llx\n", r + 1, res[r].seconds,
           fps[r], res[r].bytes, (unsigned long long)res[r].checksum);
    fflush(stdout);
    if (res[r].checksum != res[0].checksum) {
      fprintf(stderr, "%s: run %d produced a different stream than run 1\n", prog, r + 1);
      goto done;
    }
  }
  {
    double med = bench_median(fps, runs);
    printf("median: %.3f fps (%.1f ms/frame) over %d runs\n", med, med > 0 ? 1000.0 / med : 0.0,
           runs);
  }
  status = 0;

done:
  free(clip);
  free(res);
  free(fps);
  return status;
}
