/* c63-enc: encode raw I420 video into a Codec63 stream.
 *
 * Takes the reference encoder's arguments (-w -h -o -f, input file) and ours
 * (-q quality, -k keyframe interval, -r search range, -m mode, --backend).
 * Uses only the public API of libc63 (c63.h).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c63/c63.h"
#include "cliutil.h"
#include "frame_reader.h"
#include "encode_loop.h"
#include "progress.h"

/* Reader threads for a regular input file, unless --readers says: one a
 * core up to this many. A page-cache read is one thread's copy, so the GPU
 * backend needs several readers to be fed; many more only contend for the
 * kernel's page-cache lists. */
#define DEFAULT_READERS_MAX 8
/* Packets queued for the writer thread. */
#define WRITE_QUEUE 8
#define MAX_WRITERS 8

static const char *prog = "c63-enc";

static void usage(FILE *out)
{
  fprintf(out,
          "Usage: %s -w WIDTH -h HEIGHT [options] -o OUTPUT.c63 INPUT.yuv\n"
          "Encode raw I420 video (planar 4:2:0, 8 bit, chroma ceil(w/2) x ceil(h/2))\n"
          "into a Codec63 stream. Use - for standard input or output.\n"
          "\n"
          "  -w, --width W            picture width, %d..%d (required)\n"
          "  -h, --height H           picture height, %d..%d (required)\n"
          "  -o, --output FILE        output stream (required)\n"
          "  -f, --frames N           encode at most N frames, N >= 1 (default: all)\n"
          "  -q, --quality Q          quality %d..%d, higher is finer (default %d)\n"
          "  -k, --keyframe-interval K  keyframe every K frames; 1 = all keyframes,\n"
          "                           0 = only the first (default %d)\n"
          "  -r, --search-range R     motion search range %d..%d pixels (default %d)\n"
          "  -m, --mode exact|rd      exact: the reference encoder's stream, byte for\n"
          "                           byte (default); rd: fewer bits for the same\n"
          "                           quality (rate-distortion choices; both backends)\n"
          "  -b, --bitrate KBPS       target bitrate in kbit/s: the quality of each frame\n"
          "                           is chosen for it (average bitrate unless\n"
          "                           --rate-control says otherwise); -q is the start\n"
          "      --rate-control quality|abr|cbr  constant quality (default), average\n"
          "                           bitrate, or constant bitrate within --buffer\n"
          "      --buffer MS          cbr: the decoder's buffer, in ms of the bitrate\n"
          "                           (default 1000)\n"
          "      --fps N[/D]          framerate for the bitrate (default 25)\n"
          "      --backend cpu|cuda   encoder backend (default cpu)\n"
          "      --device N           CUDA device ordinal (default 0)\n"
          "  -t, --threads N          encoder threads on the CPU (default 0: one per\n"
          "                           core, at most 16; 5 with --backend cuda)\n"
          "      --allow-partial      encode the complete frames of an input that ends\n"
          "                           with a partial frame (dropped, with a warning)\n"
          "      --readers N          threads that read a regular input file, each a\n"
          "                           whole frame at its offset, 1..%d (default one a\n"
          "                           core, up to %d; standard input and pipes are\n"
          "                           read by one)\n"
          "      --writers N          threads that write the stream behind the encoder:\n"
          "                           0 = the encoder's own thread, 1 = one thread\n"
          "                           (default), 2..%d write a regular output file\n"
          "                           through mappings, in parallel\n"
          "      --quiet              no status line and no summary on standard error\n"
          "      --help               show this text\n"
          "\n"
          "On a terminal a status line on standard error shows the frames done (of\n"
          "the total, for a regular input file or with -f), the speed, the bitrate\n"
          "so far at --fps and the time left; nothing of it when standard error is\n"
          "not a terminal.\n"
          "\n"
          "The output only appears when encoding succeeded: it is written under a\n"
          "temporary name and renamed. An input without a complete frame, -f 0, or\n"
          "an input that ends with a partial frame (unless --allow-partial), is an\n"
          "error that leaves an old output as it was. A signal that ends the run\n"
          "(SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGXFSZ) removes the temporary. Exit\n"
          "status: 0 on success, 1 on errors, 2 on bad arguments (the output being the\n"
          "input included).\n",
          prog, C63_MIN_SIZE, C63_MAX_SIZE, C63_MIN_SIZE, C63_MAX_SIZE, C63_MIN_QUALITY,
          C63_MAX_QUALITY, C63_DEFAULT_QUALITY, C63_DEFAULT_KEYFRAME_INTERVAL, C63_MIN_SEARCH_RANGE,
          C63_MAX_SEARCH_RANGE, C63_DEFAULT_SEARCH_RANGE, FRAME_READER_MAX_THREADS,
          DEFAULT_READERS_MAX, MAX_WRITERS);
}

/* Print a message about a bad argument, the usage, and return the exit code. */
static int bad_usage(const char *fmt, const char *arg)
{
  fprintf(stderr, "%s: ", prog);
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\n\n");
  usage(stderr);
  return 2;
}

typedef struct enc_stats {
  long frames, keyframes;
  int reach;           /* the last c63_encoder_target_reach that was not 0 */
  double reach_kbps;   /* its frames' bitrate */
  long long overflows; /* cbr: frames over the buffer (c63_rate_status) */
  unsigned long long bytes;
} enc_stats;

/* What c63-enc keeps of the packets: the statistics and the status line. */
typedef struct enc_sink {
  c63_encoder *enc;
  cli_progress progress;
  enc_stats st;
} enc_sink;

static void count_packet(void *ctx, const c63_packet *pkt)
{
  enc_sink *sink = ctx;
  enc_stats *st = &sink->st;
  st->frames++;
  st->keyframes += pkt->keyframe != 0;
  c63_rate_status rs;
  if (c63_encoder_rate_status(sink->enc, &rs) == C63_OK) {
    if (rs.reach) {
      st->reach = rs.reach;
      st->reach_kbps = rs.reach_kbps;
    }
    st->overflows = rs.overflows;
  }
  st->bytes += pkt->size;
  cli_progress_update(&sink->progress, st->frames, st->bytes);
}

/* A message on a line of its own, below the status line. */
static void encoder_failed(void *ctx, const char *why)
{
  enc_sink *sink = ctx;
  cli_progress_hide(&sink->progress);
  fprintf(stderr, "%s: %s\n", prog, why);
}

/* The bitrate reached at the framerate given (the stream carries none), and
 * a warning when the encoder found the target out of reach of every
 * quality (c63_encoder_target_reach). */
static void report_bitrate(const c63_enc_params *p, const enc_stats *st)
{
  const double kbps =
      8.0 * (double)st->bytes * p->fps_num / p->fps_den / (double)st->frames / 1000.0;
  const double frame_ms = 1000.0 * p->fps_den / p->fps_num;
  fprintf(stderr, "%s: %.1f kbit/s at %d/%d fps (target %d)\n", prog, kbps, p->fps_num, p->fps_den,
          p->bitrate);
  /* a buffer shorter than a frame caps every frame near its share, so
   * what a small frame leaves unspent is lost */
  if (p->rate_control == C63_RC_CBR && !st->reach && kbps < 0.95 * p->bitrate &&
      p->buffer_ms < frame_ms)
    fprintf(stderr,
            "%s: warning: under the target: a buffer of %d ms, shorter than a frame (%.0f ms), "
            "lets no frame make up for a smaller one before it; give a larger --buffer\n",
            prog, p->buffer_ms, frame_ms);
  if (st->reach)
    fprintf(stderr,
            "%s: warning: the target is out of reach: %d frames in a row at quality %d, the %s, "
            "averaged %.1f kbit/s%s\n",
            prog, C63_TARGET_REACH_FRAMES, st->reach < 0 ? C63_MIN_QUALITY : C63_MAX_QUALITY,
            st->reach < 0 ? "coarsest" : "finest", st->reach_kbps,
            st->reach < 0 && p->mode == C63_MODE_EXACT ? "; -m rd reaches lower bitrates" : "");
  if (st->overflows)
    fprintf(stderr,
            "%s: warning: %lld frames overflowed the buffer of %d ms even at quality %d, the "
            "coarsest: give a larger --buffer or bitrate%s\n",
            prog, st->overflows, p->buffer_ms, C63_MIN_QUALITY,
            p->mode == C63_MODE_EXACT ? ", or -m rd, which codes smaller frames" : "");
}

/* Parse a thread count lo..hi for option name. Returns 0, or the exit code
 * after a message. */
static int parse_threads(const char *arg, const char *name, int lo, int hi, int *out)
{
  char what[64];
  if (cli_parse_int(arg, out) == 0 && *out >= lo && *out <= hi) return 0;
  snprintf(what, sizeof what, "%s %%s is not a thread count (%d..%d)", name, lo, hi);
  return bad_usage(what, arg);
}

int main(int argc, char **argv)
{
  static const struct option long_opts[] = {
      CLI_ENC_LONG_OPTS,
      {"output", required_argument, NULL, 'o'},
      {"frames", required_argument, NULL, 'f'},
      {"quiet", no_argument, NULL, 'Q'},
      {"allow-partial", no_argument, NULL, 'P'},
      {"readers", required_argument, NULL, 'E'},
      {"writers", required_argument, NULL, 'W'},
      {"help", no_argument, NULL, 'H'},
      {NULL, 0, NULL, 0},
  };
  c63_enc_params params;
  const char *out_path = NULL, *in_path;
  int max_frames = -1, quiet = 0, allow_partial = 0, opt, status = 1, ret;
  int readers = 0, writers = 1; /* readers 0: one a core, up to DEFAULT_READERS_MAX */
  int have_width = 0, have_height = 0;
  char msg[256];
  c63_encoder *enc = NULL;
  FILE *in = NULL;
  cli_output out;
  frame_reader *reader = NULL;
  size_t frame_size, got = 0;
  int read_errno = 0;
  enc_sink sink;
  encode_loop loop;
  double t0, elapsed;

  if (cli_open_std_fds() != 0) return 1;
  memset(&out, 0, sizeof out);
  memset(&sink, 0, sizeof sink);
  memset(&loop, 0, sizeof loop);
  loop.out = &out;
  loop.prog = prog;
  loop.packet = count_packet;
  loop.failed = encoder_failed;
  loop.ctx = &sink;
  c63_enc_params_init(&params);
  opterr = 0; /* we print our own messages */
  if (cli_version(prog, argc, argv)) return 0;
  while ((opt = getopt_long(argc, argv, ":" CLI_ENC_OPTSTRING "o:f:", long_opts, NULL)) != -1) {
    int r = cli_enc_option(opt, optarg, &params, msg, sizeof msg);
    if (r < 0) return bad_usage("%s", msg);
    have_width |= opt == 'w';
    have_height |= opt == 'h';
    if (r > 0) continue;
    switch (opt) {
    case 'f':
      ret = cli_parse_int(optarg, &max_frames);
      if (ret == CLI_OUT_OF_RANGE)
        return bad_usage("-f %s is out of range (0..2147483647)", optarg);
      if (ret != 0) return bad_usage("'%s' is not a whole number", optarg);
      if (max_frames < 0) return bad_usage("-f FRAMES must not be negative (got %s)", optarg);
      break;
    case 'o':
      out_path = optarg;
      break;
    case 'Q':
      quiet = 1;
      break;
    case 'P':
      allow_partial = 1;
      break;
    case 'E':
      if ((ret = parse_threads(optarg, "--readers", 1, FRAME_READER_MAX_THREADS, &readers)))
        return ret;
      break;
    case 'W':
      if ((ret = parse_threads(optarg, "--writers", 0, MAX_WRITERS, &writers))) return ret;
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
  if (optind != argc - 1)
    return bad_usage("%s", optind >= argc ? "missing input file" : "more than one input file");
  in_path = argv[optind];
  if (!have_width || !have_height) return bad_usage("%s", "-w WIDTH and -h HEIGHT are required");
  if (out_path == NULL) return bad_usage("%s", "-o OUTPUT is required");
  if (c63_enc_params_validate(&params, msg, sizeof msg) != C63_OK) return bad_usage("%s", msg);

  frame_size = cli_i420_size(params.width, params.height);
  in = cli_open(prog, in_path, "rb", stdin);
  if (in == NULL) goto done;
  /* The output before the encoder, whose threads would otherwise be
   * there when its temporary is created (cli_output_open). */
  ret = cli_output_open(&out, prog, out_path, in, in_path);
  if (ret != 0) {
    status = ret;
    goto done;
  }
  if (c63_encoder_new(&params, &enc, msg, sizeof msg) != C63_OK) {
    fprintf(stderr, "%s: cannot create the encoder: %s\n", prog, msg);
    goto done;
  }
  /* Frames are read ahead by threads of their own, into buffers the GPU
   * reads directly when it encodes (encode_loop_page_locked); the packets
   * are written by another behind the encoder. */
  if (readers == 0) readers = cli_cores() < DEFAULT_READERS_MAX ? cli_cores() : DEFAULT_READERS_MAX;
  reader = frame_reader_start(in, frame_size, max_frames, encode_loop_depth(enc, readers), readers,
                              encode_loop_page_locked(enc));
  sink.enc = loop.enc = enc;
  loop.reader = reader;
  loop.width = params.width;
  loop.height = params.height;
  if (reader == NULL ||
      (writers > 0 && !(loop.writer = frame_writer_start(&out, prog, WRITE_QUEUE, writers)))) {
    fprintf(stderr, "%s: out of memory\n", prog);
    goto done;
  }

  cli_progress_start(&sink.progress, prog, quiet,
                     frame_reader_frames(reader) >= 0 ? frame_reader_frames(reader) : max_frames,
                     params.fps_num, params.fps_den);
  t0 = cli_now();
  if (encode_loop_frames(&loop, &got, &read_errno) != 0) goto done;
  if (read_errno) {
    cli_progress_hide(&sink.progress);
    fprintf(stderr, "%s: error reading %s: %s\n", prog, in_path, strerror(read_errno));
    goto done;
  }
  /* A partial frame usually means a wrong -w/-h or a cut file: the stream
   * would silently miss the end, so it is an error unless asked for. */
  if (got > 0 && !allow_partial) {
    cli_progress_hide(&sink.progress);
    fprintf(stderr,
            "%s: input ends with a partial frame (%zu of %zu bytes): wrong size, or a cut file? "
            "(--allow-partial encodes the complete frames)\n",
            prog, got, frame_size);
    goto done;
  }
  if (got > 0) {
    cli_progress_hide(&sink.progress);
    fprintf(stderr, "%s: warning: input ends with a partial frame (%zu of %zu bytes), ignored\n",
            prog, got, frame_size);
  }
  ret = encode_loop_drain(&loop);
  if (frame_writer_finish(loop.writer) != 0) ret = 1;
  loop.writer = NULL;
  elapsed = cli_now() - t0;
  if (ret != 0) goto done;
  /* An empty stream is never what was meant (an empty file, /dev/null,
   * -f 0): it would replace an old output with nothing. */
  if (sink.st.frames == 0) {
    if (max_frames == 0)
      fprintf(stderr, "%s: -f 0: no frame to encode, %s left as it was\n", prog, out.path);
    else
      fprintf(stderr, "%s: no complete frame in %s (a frame of %dx%d is %zu bytes)\n", prog,
              in_path, params.width, params.height, frame_size);
    goto done;
  }
  if (cli_output_commit(&out, prog) != 0) goto done;
  cli_progress_finish(&sink.progress, sink.st.frames, sink.st.bytes);
  if (!quiet) {
    const enc_stats *st = &sink.st;
    fprintf(stderr, "%s: encoded %ld frames (%ld keyframes) of %dx%d, %llu bytes, %.2f fps (%s)\n",
            prog, st->frames, st->keyframes, params.width, params.height, st->bytes,
            elapsed > 0 ? (double)st->frames / elapsed : 0.0, c63_encoder_backend_name(enc));
    /* the bitrate at the framerate given (the stream carries none) */
    if (params.rate_control != C63_RC_QUALITY && params.fps_num > 0 && params.fps_den > 0)
      report_bitrate(&params, st);
  }
  status = 0;

done:
  cli_progress_hide(&sink.progress);
  frame_writer_finish(loop.writer); /* before the output is closed */
  c63_encoder_free(enc);            /* it may read pictures it was lent */
  frame_reader_stop(reader);        /* before the input is closed */
  if (in != NULL && in != stdin) fclose(in);
  cli_output_abort(&out); /* no-op after a commit */
  return status;
}
