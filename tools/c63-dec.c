/* c63-dec: decode a Codec63 stream into raw I420 video.
 *
 * Reads the stream in chunks, splits it into frames with libc63's framer
 * (c63_frame_scan, as the GStreamer elements do) and decodes each with the
 * library's decoder. A corrupt frame is reported and skipped: the framer
 * resynchronises at the next frame start and the decoder resumes at the
 * next keyframe (a delta frame after lost data would be predicted from the
 * wrong picture, so it is reported and skipped too). Uses only the public
 * API of libc63 (c63.h).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "c63/c63.h"
#include "cliutil.h"
#include "frame_count.h"
#include "frame_writer.h"
#include "progress.h"

static const char *prog = "c63-dec";

/* The status line on a terminal (progress.h): messages during the run go
 * through report, which takes it off the screen first. */
static cli_progress progress;

/* Print "c63-dec: " and the message on a line of its own. */
static void report(const char *fmt, ...)
{
  va_list ap;
  cli_progress_hide(&progress);
  fprintf(stderr, "%s: ", prog);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
}

/* Read this much at a time; frames larger than that just take several reads. */
#define CHUNK_SIZE (64 * 1024)

static void usage(FILE *out)
{
  fprintf(out,
          "Usage: %s [-q] [--backend cpu|cuda] [--device N] [-t N] [--writers N]\n"
          "       INPUT.c63 OUTPUT.yuv\n"
          "Decode a Codec63 stream into raw I420 video (planar 4:2:0, 8 bit, the\n"
          "stream's width x height, chroma ceil(w/2) x ceil(h/2)). Use - for\n"
          "standard input or output. Corrupt frames are reported and skipped;\n"
          "decoding resumes at the next keyframe.\n"
          "\n"
          "The output holds every frame that decoded, also when others were corrupt\n"
          "(as a player would show them). On I/O errors, or when no frame decoded at\n"
          "all, no output file is left (it is written under a temporary name and\n"
          "renamed at the end), and an old one is left as it was; so too when a\n"
          "signal (SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGXFSZ) ends the run.\n"
          "\n"
          "Exit status: 0 when the whole stream decoded cleanly, 1 when frames\n"
          "were corrupt or missing (an empty stream included) or on I/O errors, 2 on\n"
          "bad arguments (the output being the input included).\n"
          "\n"
          "On a terminal a status line on standard error shows the frames done (of\n"
          "the total, counted ahead for a regular input file), the speed, the\n"
          "bitrate so far at %d/%d fps (the stream carries no frame rate) and the\n"
          "time left; nothing of it when standard error is not a terminal.\n"
          "\n"
          "      --backend cpu|cuda  reconstruct on the CPU (default) or the GPU, with\n"
          "                          the same pictures\n"
          "      --device N          CUDA device (default 0)\n"
          "  -t, --threads N         CPU threads that parse and entropy-decode (and\n"
          "                          reconstruct on the CPU): 0 = one per core, at\n"
          "                          most 16 (default 0)\n"
          "      --writers N         threads that write the pictures, 1..8; more\n"
          "                          than one write a regular output file through\n"
          "                          mappings, in parallel (default: 1 on the CPU\n"
          "                          backend, whose decoding takes every core; 4\n"
          "                          on CUDA, with 8 cores or more)\n"
          "  -q, --quiet             no status line; only report errors\n"
          "      --help              show this text\n",
          prog, C63_DEFAULT_FPS_NUM, C63_DEFAULT_FPS_DEN);
}

/* The bytes read but not consumed yet: buf[pos..len). */
typedef struct reader {
  FILE *f;
  uint8_t *buf;
  size_t pos, len, cap;
  unsigned long long consumed; /* stream offset of buf[pos] */
  int eof, error, error_code;  /* error_code: errno of the failed read */
} reader;

/* Append up to max(CHUNK_SIZE, bytes pending) bytes, but no more than
 * limit bytes pending in all (limit > pending): growing the read with the
 * pending data keeps the number of reads for one large frame logarithmic,
 * and the limit keeps the buffer within the largest legal frame.
 * Returns 0, or -1 on allocation failure. */
static int reader_fill(reader *r, size_t limit)
{
  size_t n, want;

  if (r->pos > 0) { /* move the pending bytes to the front */
    memmove(r->buf, r->buf + r->pos, r->len - r->pos);
    r->len -= r->pos;
    r->pos = 0;
  }
  want = r->len > CHUNK_SIZE ? r->len : CHUNK_SIZE;
  if (limit > r->len && want > limit - r->len) want = limit - r->len;
  if (r->cap - r->len < want) {
    size_t cap = r->cap ? r->cap : 4 * CHUNK_SIZE;
    uint8_t *b;
    while (cap - r->len < want)
      cap *= 2;
    b = realloc(r->buf, cap);
    if (b == NULL) return -1;
    r->buf = b;
    r->cap = cap;
  }
  n = cli_read_full(r->f, r->buf + r->len, want);
  r->len += n;
  if (n < want) {
    r->eof = 1;
    r->error = ferror(r->f) != 0;
    r->error_code = errno;
  }
  return 0;
}

static void reader_skip(reader *r, size_t n)
{
  r->pos += n;
  r->consumed += n;
}

/* Delta frames skipped while waiting for a keyframe are reported as one run
 * instead of one line each. */
typedef struct skip_run {
  long first, count;
} skip_run;

static void flush_skip_run(skip_run *run)
{
  if (run->count == 1)
    report("frame %ld: delta frame without its reference (skipped)\n", run->first);
  else if (run->count > 1)
    report("frames %ld..%ld: %ld delta frames without their reference (skipped)\n", run->first,
           run->first + run->count - 1, run->count);
  run->count = 0;
}

/* Copy the picture (without the decoder's padding) into a buffer of the
 * writer thread and queue it. Returns 0, or -1 after a message. */
static int write_picture(const c63_decoded_picture *pic, frame_writer *fw)
{
  const int cw = c63_chroma_size(pic->width), ch = c63_chroma_size(pic->height);
  uint8_t *dst = frame_writer_buffer(fw, (size_t)pic->width * pic->height + 2 * (size_t)cw * ch);
  if (!dst) return -1;
  uint8_t *p = dst;
  for (int c = 0; c < 3; c++) {
    const size_t w = (size_t)(c ? cw : pic->width);
    const int h = c ? ch : pic->height;
    for (int y = 0; y < h; y++, p += w)
      memcpy(p, pic->data[c] + (size_t)y * (size_t)pic->stride[c], w);
  }
  return frame_writer_queue(fw, (size_t)(p - dst));
}

/* Threads that write the pictures, unless --writers says. The CPU
 * backend decodes on every core, so one thread with write() takes the
 * fewest of them. With the CUDA backend the cores are mostly free, and
 * several threads writing a regular file through mappings lift the
 * kernel's one-writer-per-file limit (docs/performance.md). */
static int writer_threads(const c63_decoder *dec)
{
  if (strcmp(c63_decoder_backend_name(dec), "cuda") != 0) return 1;
  const int cores = cli_cores();
  return cores >= 8 ? 4 : cores >= 4 ? 2 : 1;
}

/* Frames are sent to the decoder, which parses and entropy-decodes several
 * at once, and come back in order: a frame's result is reported when it is
 * received, so messages about the bytes between frames wait until every
 * frame sent before them has been received (drain). */
#define OFFSET_RING 64 /* more than the decoder keeps in flight */

typedef struct decode_state {
  c63_decoder *dec;
  frame_writer *writer;
  long frames, bad_frames;
  int last_w, last_h;
  skip_run noref;
  unsigned long long offset[OFFSET_RING]; /* of frame n at [n % OFFSET_RING] */
  int write_failed;
} decode_state;

/* Report one received frame, and write its picture. */
static void take_result(decode_state *st, int ret, const c63_decoded_picture *pic)
{
  const long n = (long)pic->user;
  if (ret == C63_OK) {
    flush_skip_run(&st->noref);
    if (st->frames > 0 && (pic->width != st->last_w || pic->height != st->last_h))
      report("frame %ld: size changes from %dx%d to %dx%d\n", n, st->last_w, st->last_h, pic->width,
             pic->height);
    st->last_w = pic->width;
    st->last_h = pic->height;
    if (!st->write_failed && write_picture(pic, st->writer) != 0) st->write_failed = 1;
    st->frames++;
  } else if (ret == C63_ERR_NO_REFERENCE) {
    if (st->noref.count++ == 0) st->noref.first = n;
    st->bad_frames++;
  } else {
    flush_skip_run(&st->noref);
    report("frame %ld at offset %llu: %s (skipped)\n", n, st->offset[n % OFFSET_RING],
           c63_decoder_error(st->dec));
    st->bad_frames++;
  }
}

/* Receive what the decoder has ready. Returns the last receive status. */
static int receive_ready(decode_state *st)
{
  for (;;) {
    c63_decoded_picture pic;
    int ret = c63_decoder_receive_picture(st->dec, &pic);
    if (ret == C63_ERR_AGAIN || ret == C63_ERR_EOF) return ret;
    take_result(st, ret, &pic);
  }
}

static void send_frame(decode_state *st, const uint8_t *data, size_t size, long n,
                       unsigned long long offset)
{
  st->offset[n % OFFSET_RING] = offset;
  int ret;
  while ((ret = c63_decoder_send_packet(st->dec, data, size, n)) == C63_ERR_AGAIN)
    receive_ready(st);
  if (ret != C63_OK) { /* out of memory copying the frame: it is lost */
    flush_skip_run(&st->noref);
    report("frame %ld at offset %llu: %s (skipped)\n", n, offset, c63_decoder_error(st->dec));
    st->bad_frames++;
    c63_decoder_reset(st->dec);
  }
}

/* Receive every frame sent so far. */
static void drain(decode_state *st)
{
  c63_decoder_send_packet(st->dec, NULL, 0, 0);
  while (receive_ready(st) != C63_ERR_EOF) {
  }
}

int main(int argc, char **argv)
{
  static const struct option long_opts[] = {
      {"quiet", no_argument, NULL, 'Q'},
      {"help", no_argument, NULL, 'H'},
      {"backend", required_argument, NULL, 'B'},
      {"device", required_argument, NULL, 'D'},
      {"threads", required_argument, NULL, 't'},
      {"writers", required_argument, NULL, 'W'},
      {NULL, 0, NULL, 0},
  };
  c63_dec_params params;
  const char *in_path, *out_path;
  int quiet = 0, opt, status = 1, ret, writers = 0;
  c63_decoder *dec = NULL;
  reader r;
  cli_output out;
  long frame_index = 0;
  decode_state st;
  frame_count *counter = NULL;
  unsigned long long skipped = 0, total_skipped = 0;
  char msg[256];

  if (cli_open_std_fds() != 0) return 1;
  memset(&r, 0, sizeof r);
  memset(&out, 0, sizeof out);
  memset(&st, 0, sizeof st);
  c63_dec_params_init(&params);
  opterr = 0;
  if (cli_version(prog, argc, argv)) return 0;
  while ((opt = getopt_long(argc, argv, "qt:", long_opts, NULL)) != -1) {
    switch (opt) {
    case 'q':
    case 'Q':
      quiet = 1;
      break;
    case 'H':
      usage(stdout);
      return 0;
    case 'B':
      if (!strcmp(optarg, "cpu") || !strcmp(optarg, "cuda")) {
        params.backend = optarg[1] == 'p' ? C63_BACKEND_CPU : C63_BACKEND_CUDA;
        break;
      }
      fprintf(stderr, "%s: unknown backend '%s' (expected cpu or cuda)\n\n", prog, optarg);
      usage(stderr);
      return 2;
    case 't':
      if (cli_parse_int(optarg, &params.threads) != 0 || params.threads < 0 ||
          params.threads > C63_MAX_THREADS) {
        fprintf(stderr, "%s: '%s' is not a thread count (0..%d)\n\n", prog, optarg,
                C63_MAX_THREADS);
        usage(stderr);
        return 2;
      }
      break;
    case 'W':
      if (cli_parse_int(optarg, &writers) != 0 || writers < 1 || writers > 8) {
        fprintf(stderr, "%s: '%s' is not a writer thread count (1..8)\n\n", prog, optarg);
        usage(stderr);
        return 2;
      }
      break;
    case 'D':
      if (cli_parse_int(optarg, &params.device_id) != 0 || params.device_id < 0) {
        fprintf(stderr, "%s: '%s' is not a device number\n\n", prog, optarg);
        usage(stderr);
        return 2;
      }
      break;
    default:
      fprintf(stderr, "%s: unknown option %s\n\n", prog, argv[optind - 1]);
      usage(stderr);
      return 2;
    }
  }
  if (argc - optind != 2) {
    fprintf(stderr, "%s: expected an input and an output file\n\n", prog);
    usage(stderr);
    return 2;
  }
  in_path = argv[optind];
  out_path = argv[optind + 1];

  r.f = cli_open(prog, in_path, "rb", stdin);
  if (r.f == NULL) goto done;
  /* The output before the decoder, whose threads would otherwise be there
   * when its temporary is created (cli_output_open). */
  ret = cli_output_open(&out, prog, out_path, r.f, in_path);
  if (ret != 0) {
    status = ret;
    goto done;
  }
  msg[0] = '\0';
  if (c63_decoder_new(&params, &dec, msg, sizeof msg) != C63_OK) {
    fprintf(stderr, "%s: cannot create the decoder: %s\n", prog, msg[0] ? msg : "out of memory");
    goto done;
  }
  st.dec = dec;
  st.writer = frame_writer_start(&out, prog, 6, writers ? writers : writer_threads(dec));
  if (!st.writer) goto nomem;
  cli_progress_start(&progress, prog, quiet, -1, C63_DEFAULT_FPS_NUM, C63_DEFAULT_FPS_DEN);
  /* the total only matters to the status line */
  if (progress.enabled) counter = frame_count_start(r.f);

  /* libc63's framer (c63_frame_scan, as c63parse and c63dec use it) splits
   * the stream: junk is skipped, a frame's headers are parsed before its end
   * is looked for, and a frame is given up on at the most bytes a picture
   * of its size can take, so the buffer stays within that bound. */
  c63_frame_scanner scanner;
  c63_frame_scanner_init(&scanner);
  for (;;) {
    const size_t avail = r.len - r.pos;
    c63_frame_scan_result res;

    if (st.write_failed) goto done;
    if (avail == 0 && r.eof) break;
    ret = c63_frame_scan(&scanner, r.buf + r.pos, avail, r.eof, &res);
    if (ret == C63_SCAN_NEED_DATA) {
      if (r.eof) { /* cannot happen at the end (c63.h); do not spin */
        skipped += avail;
        total_skipped += avail;
        reader_skip(&r, avail);
        break;
      }
      /* limit + 1 bytes tell a frame without an end within its bound */
      if (reader_fill(&r, res.limit < SIZE_MAX - 2 ? res.limit + 2 : SIZE_MAX) != 0) goto nomem;
      continue;
    }
    if (ret == C63_SCAN_SKIP) {
      skipped += res.size;
      total_skipped += res.size;
      /* Bytes were lost: a frame may be missing, so the next delta frame
       * could be predicted from the wrong picture. Wait for a keyframe. */
      c63_decoder_reset(dec);
      reader_skip(&r, res.size);
      continue;
    }
    if (skipped > 0) {
      drain(&st);
      flush_skip_run(&st.noref);
      report("skipped %llu bytes of unusable data before offset %llu\n", skipped, r.consumed);
      skipped = 0;
    }
    if (res.complete) {
      send_frame(&st, r.buf + r.pos, res.size, frame_index, r.consumed);
    } else {
      drain(&st);
      flush_skip_run(&st.noref);
      if (res.too_long) {
        snprintf(msg, sizeof msg,
                 "no end of frame marker within %zu bytes, the most a %dx%d frame can take",
                 res.limit, res.hdr.width, res.hdr.height);
      } else if (r.eof && res.size == avail) {
        snprintf(msg, sizeof msg, "stream ends inside the frame (%zu bytes)", res.size);
      } else {
        c63_frame_header hdr;
        if (c63_parse_frame_header(r.buf + r.pos, res.size, &hdr, msg, sizeof msg) ==
            C63_ERR_TRUNCATED)
          snprintf(msg, sizeof msg, "frame cut short by the next frame's start (%zu bytes)",
                   res.size);
      }
      report("frame %ld at offset %llu: %s\n", frame_index, r.consumed, msg);
      st.bad_frames++;
      c63_decoder_reset(dec); /* the frame is lost: resume at a keyframe */
    }
    frame_index++;
    reader_skip(&r, res.size);
    if (progress.total < 0) cli_progress_set_total(&progress, frame_count_total(counter));
    cli_progress_update(&progress, frame_index, r.consumed);
  }

  drain(&st);
  flush_skip_run(&st.noref);
  cli_progress_set_total(&progress, frame_count_wait(counter));
  cli_progress_finish(&progress, frame_index, r.consumed);
  if (frame_writer_finish(st.writer) != 0) st.write_failed = 1;
  st.writer = NULL;
  if (st.write_failed) goto done;
  if (r.error) {
    /* The output would look like the whole stream: leave none. */
    fprintf(stderr, "%s: error reading %s: %s\n", prog, in_path, strerror(r.error_code));
    goto done;
  }
  if (skipped > 0)
    fprintf(stderr, "%s: skipped %llu bytes of unusable data at the end\n", prog, skipped);
  if (st.frames == 0) {
    /* An empty output would pass for a result (an empty or wrong input
     * file): leave none, and fail even when the stream was empty. */
    fprintf(stderr, "%s: no frame decoded from %s%s\n", prog, in_path,
            r.consumed == 0 ? " (empty input)" : "");
  } else if (cli_output_commit(&out, prog) != 0) {
    goto done;
  }
  /* Frames that decoded are kept when others were corrupt, as a player
   * would show them; the exit status says the stream was not clean, and the
   * summary says how many frames came out (with --quiet only then). */
  status = st.frames == 0 || st.bad_frames > 0 || total_skipped > 0 ? 1 : 0;
  if (!quiet || status != 0) {
    fprintf(stderr, "%s: decoded %ld frames", prog, st.frames);
    if (st.frames > 0) fprintf(stderr, " of %dx%d", st.last_w, st.last_h);
    if (st.bad_frames > 0)
      fprintf(stderr, ", %ld frames skipped (corrupt, or without their reference)", st.bad_frames);
    fprintf(stderr, "\n");
  }
  goto done;

nomem:
  fprintf(stderr, "%s: out of memory\n", prog);
done:
  cli_progress_hide(&progress);
  frame_count_stop(counter);
  frame_writer_finish(st.writer);
  if (r.f != NULL && r.f != stdin) fclose(r.f);
  cli_output_abort(&out); /* no-op after a commit */
  free(r.buf);
  c63_decoder_free(dec);
  return status;
}
