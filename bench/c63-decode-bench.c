/* c63-decode-bench: the library's decoding speed in frames per second.
 *
 * Holds a stream in memory and decodes its frames, repeated to --frames
 * (the stream must start with a keyframe, so every repetition does),
 * through send/receive several times, with pictures into system memory or
 * left in CUDA memory (--device-out); reports each run and the median, so
 * disk speed does not count. The CUDA backend entropy-decodes on the GPU
 * unless --cpu-entropy (C63_CUDA_CPU_ENTROPY=1) leaves that to the CPU
 * threads; --batch and --batches set the size and number in flight of its
 * batches (C63_CUDA_DECODE_BATCH, C63_CUDA_DECODE_BATCHES), to tune them.
 * --copy-out does what c63dec does with each picture: it is copied with
 * c63_decoder_copy_picture_async into one of 16 page-locked buffers (as
 * c63dec's pool into system memory; --copy-out=cuda: 16 device buffers,
 * as downstream's CUDA memory), and a second thread waits for each copy in
 * turn (c63_decoder_copy_wait, as c63dec's output task), so the library's
 * part of the element is timed without GStreamer.
 * A first run, not timed, prints a checksum of the pictures
 * (system memory only), which must be the same on every backend. Speed is
 * measured, never asserted.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c63/c63.h"
#include "bench_util.h"
#include "cliutil.h"
#ifdef C63_BENCH_CUDA
#include <cuda_runtime_api.h>
#endif

#define MAX_RUNS 100

static const char *prog = "c63-decode-bench";

/* --host-work: microseconds of busy work a picture. */
static int host_work_us;

static void usage(FILE *out)
{
  fprintf(out,
          "Usage: %s [options] STREAM.c63\n"
          "Decode a stream held in memory several times and print the median speed.\n"
          "\n"
          "  -f, --frames N         frames per run, the stream's repeated (default 3000)\n"
          "  -n, --runs N           runs, the median is reported (default 5)\n"
          "      --backend cpu|cuda decoding backend (default cuda)\n"
          "      --cpu-entropy      CUDA backend: entropy decoding on the CPU threads\n"
          "      --device-out       CUDA backend: pictures left in CUDA memory\n"
          "      --copy-out[=host|cuda]  each picture copied out without waiting, into one\n"
          "                         of 16 page-locked (host) or device (cuda) buffers,\n"
          "                         waited for on a second thread\n"
          "      --batch N          CUDA backend: frames per GPU entropy batch (1-64)\n"
          "      --batches N        CUDA backend: batches in flight (1-8)\n"
          "      --host-work US     each picture also keeps the receiving thread busy for\n"
          "                         US microseconds, as a framework's per-frame work keeps\n"
          "                         an element's thread (how the GPU's work overlaps it)\n"
          "  -t, --threads N        CPU threads (default 0: one per core, up to 16)\n"
          "      --help             show this text\n",
          prog);
}

typedef struct stream {
  const uint8_t *frame[4096];
  size_t size[4096];
  int n, width, height; /* of the first frame */
} stream;

/* 64-bit FNV-1a. */
static uint64_t fnv1a(uint64_t h, const uint8_t *p, size_t n)
{
  for (size_t i = 0; i < n; i++)
    h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

static uint64_t picture_sum(uint64_t h, const c63_decoded_picture *pic)
{
  for (int c = 0; c < 3; c++) {
    const int w = c ? c63_chroma_size(pic->width) : pic->width;
    const int rows = c ? c63_chroma_size(pic->height) : pic->height;
    for (int y = 0; y < rows; y++)
      h = fnv1a(h, pic->data[c] + (size_t)y * pic->stride[c], (size_t)w);
  }
  return h;
}

/* --copy-out: pictures copied into a ring of page-locked (or device)
 * buffers, each copy waited for in turn by a second thread. */
enum { kCopies = 16 };
/* --copy-out not given (else the copies' C63_MEMORY_*) */
enum { NO_COPY = -1 };

typedef struct copy_out {
  c63_decoder *dec;
  int memory; /* C63_MEMORY_HOST or C63_MEMORY_CUDA */
  pthread_mutex_t lock;
  pthread_cond_t cond;
  pthread_t waiter;
  uint8_t *buf[kCopies];
  uint64_t ticket[kCopies];
  int head, count, done, failed;
} copy_out;

static void *wait_copies(void *arg)
{
  copy_out *c = arg;
  pthread_mutex_lock(&c->lock);
  for (;;) {
    while (c->count == 0 && !c->done)
      pthread_cond_wait(&c->cond, &c->lock);
    if (c->count == 0) break;
    const uint64_t ticket = c->ticket[c->head];
    pthread_mutex_unlock(&c->lock);
    const int r = c63_decoder_copy_wait(c->dec, ticket);
    pthread_mutex_lock(&c->lock);
    if (r != C63_OK) c->failed = 1;
    c->head = (c->head + 1) % kCopies;
    c->count--;
    pthread_cond_broadcast(&c->cond);
  }
  pthread_mutex_unlock(&c->lock);
  return NULL;
}

static void *buffer_alloc(int memory, size_t size)
{
#ifdef C63_BENCH_CUDA
  if (memory == C63_MEMORY_CUDA) {
    void *p;
    return cudaMalloc(&p, size) == cudaSuccess ? p : NULL;
  }
#endif
  return memory == C63_MEMORY_HOST ? c63_picture_memory_alloc(size) : NULL;
}

static void buffer_free(int memory, void *p)
{
#ifdef C63_BENCH_CUDA
  if (memory == C63_MEMORY_CUDA) {
    cudaFree(p);
    return;
  }
#else
  (void)memory;
#endif
  c63_picture_memory_free(p);
}

static int copy_out_start(copy_out *c, c63_decoder *dec, int memory, const stream *s)
{
  const size_t luma = (size_t)s->width * s->height;
  const size_t chroma = (size_t)c63_chroma_size(s->width) * c63_chroma_size(s->height);
  memset(c, 0, sizeof *c);
  c->dec = dec;
  c->memory = memory;
  for (int k = 0; k < kCopies; k++)
    if (!(c->buf[k] = buffer_alloc(memory, luma + 2 * chroma))) {
      while (k-- > 0)
        buffer_free(memory, c->buf[k]);
      return -1;
    }
  pthread_mutex_init(&c->lock, NULL);
  pthread_cond_init(&c->cond, NULL);
  return pthread_create(&c->waiter, NULL, wait_copies, c) ? -1 : 0;
}

/* Whether every copy was done without failure; frees the buffers. */
static int copy_out_finish(copy_out *c)
{
  pthread_mutex_lock(&c->lock);
  c->done = 1;
  pthread_cond_broadcast(&c->cond);
  pthread_mutex_unlock(&c->lock);
  pthread_join(c->waiter, NULL);
  pthread_cond_destroy(&c->cond);
  pthread_mutex_destroy(&c->lock);
  for (int k = 0; k < kCopies; k++)
    buffer_free(c->memory, c->buf[k]);
  return !c->failed;
}

/* The copy of pic into the next free buffer, started. */
static int copy_picture(copy_out *c, const c63_decoded_picture *pic, const stream *s)
{
  if (pic->width != s->width || pic->height != s->height) {
    fprintf(stderr, "%s: --copy-out needs pictures of one size\n", prog);
    return -1;
  }
  pthread_mutex_lock(&c->lock);
  while (c->count == kCopies)
    pthread_cond_wait(&c->cond, &c->lock);
  const int k = (c->head + c->count) % kCopies;
  pthread_mutex_unlock(&c->lock);
  const int cw = c63_chroma_size(pic->width), ch = c63_chroma_size(pic->height);
  uint8_t *dst[3] = {c->buf[k], c->buf[k] + (size_t)pic->width * pic->height, NULL};
  dst[2] = dst[1] + (size_t)cw * ch;
  const int stride[3] = {pic->width, cw, cw};
  uint64_t ticket;
  if (c63_decoder_copy_picture_async(c->dec, pic, dst, stride, c->memory, &ticket) != C63_OK) {
    fprintf(stderr, "%s: %s\n", prog, c63_decoder_error(c->dec));
    return -1;
  }
  pthread_mutex_lock(&c->lock);
  c->ticket[k] = ticket;
  c->count++;
  pthread_cond_broadcast(&c->cond);
  pthread_mutex_unlock(&c->lock);
  return 0;
}

/* Receive what is ready (each picture copied out with --copy-out);
 * returns -1 on a failed frame. */
static int receive(c63_decoder *dec, copy_out *copies, const stream *s, int checksum, uint64_t *sum,
                   int *got)
{
  for (;;) {
    c63_decoded_picture pic;
    const int r = c63_decoder_receive_picture(dec, &pic);
    if (r == C63_ERR_AGAIN || r == C63_ERR_EOF) return 0;
    if (r != C63_OK) {
      fprintf(stderr, "%s: frame %lld: %s\n", prog, (long long)pic.user, c63_decoder_error(dec));
      return -1;
    }
    if (checksum) *sum = picture_sum(*sum, &pic);
    if (copies && copy_picture(copies, &pic, s)) return -1;
    bench_busy_us(host_work_us);
    (*got)++;
  }
}

/* One run of `frames` frames; seconds from the first send to the last
 * picture, or a negative value on failure. */
static double run(const c63_dec_params *p, int device_out, int copy_memory, const stream *s,
                  int frames, int checksum, uint64_t *sum)
{
  copy_out copies;
  c63_decoder *dec;
  char msg[256];
  if (c63_decoder_new(p, &dec, msg, sizeof msg) != C63_OK) {
    fprintf(stderr, "%s: cannot create the decoder: %s\n", prog, msg);
    return -1;
  }
  if (device_out && c63_decoder_set_output(dec, C63_MEMORY_CUDA) != C63_OK) {
    fprintf(stderr, "%s: %s\n", prog, c63_decoder_error(dec));
    c63_decoder_free(dec);
    return -1;
  }
  if (copy_memory != NO_COPY && copy_out_start(&copies, dec, copy_memory, s)) {
    fprintf(stderr, "%s: out of %s memory for the copies\n", prog,
            copy_memory == C63_MEMORY_CUDA ? "device" : "page-locked");
    c63_decoder_free(dec);
    return -1;
  }
  copy_out *c = copy_memory != NO_COPY ? &copies : NULL;
  int got = 0, bad = 0;
  *sum = 0xcbf29ce484222325ull;
  const double t0 = cli_now();
  for (int i = 0; i < frames && !bad; i++) {
    const int k = i % s->n;
    int r;
    while ((r = c63_decoder_send_packet(dec, s->frame[k], s->size[k], i)) == C63_ERR_AGAIN)
      if (receive(dec, c, s, checksum, sum, &got)) bad = 1;
    if (r != C63_OK) bad = 1;
  }
  c63_decoder_send_packet(dec, NULL, 0, 0);
  if (!bad && receive(dec, c, s, checksum, sum, &got)) bad = 1;
  if (c && !copy_out_finish(c)) {
    fprintf(stderr, "%s: a copy out failed\n", prog);
    bad = 1;
  }
  const double t = cli_now() - t0;
  c63_decoder_free(dec);
  if (bad || got != frames) {
    fprintf(stderr, "%s: %d of %d frames decoded\n", prog, got, frames);
    return -1;
  }
  return t;
}

static int load(const char *path, uint8_t **data, stream *s)
{
  FILE *f = cli_open(prog, path, "rb", stdin);
  if (!f) return -1;
  size_t cap = 1 << 20, len = 0;
  uint8_t *buf = malloc(cap);
  for (size_t got; buf && (got = fread(buf + len, 1, cap - len, f)) > 0;) {
    len += got;
    if (len == cap) {
      uint8_t *b = realloc(buf, cap *= 2);
      if (!b) free(buf);
      buf = b;
    }
  }
  if (f != stdin) fclose(f);
  if (!buf) {
    fprintf(stderr, "%s: out of memory\n", prog);
    return -1;
  }
  s->n = 0;
  for (size_t off = 0; off < len && s->n < 4096;) {
    c63_frame_header hdr;
    char msg[256];
    if (c63_parse_frame_header(buf + off, len - off, &hdr, msg, sizeof msg) != C63_OK) {
      fprintf(stderr, "%s: %s: frame %d: %s\n", prog, path, s->n, msg);
      free(buf);
      return -1;
    }
    if (s->n == 0) {
      s->width = hdr.width;
      s->height = hdr.height;
    }
    if (s->n == 0 && !hdr.keyframe) {
      fprintf(stderr, "%s: %s does not start with a keyframe\n", prog, path);
      free(buf);
      return -1;
    }
    s->frame[s->n] = buf + off;
    s->size[s->n++] = hdr.frame_size;
    off += hdr.frame_size;
  }
  *data = buf;
  return s->n ? 0 : -1;
}

int main(int argc, char **argv)
{
  enum {
    OPT_BACKEND = 256,
    OPT_CPU_ENTROPY,
    OPT_DEVICE_OUT,
    OPT_COPY_OUT,
    OPT_BATCH,
    OPT_BATCHES,
    OPT_HOST_WORK,
    OPT_HELP
  };
  static const struct option long_opts[] = {
      {"frames", required_argument, NULL, 'f'},
      {"runs", required_argument, NULL, 'n'},
      {"threads", required_argument, NULL, 't'},
      {"backend", required_argument, NULL, OPT_BACKEND},
      {"cpu-entropy", no_argument, NULL, OPT_CPU_ENTROPY},
      {"device-out", no_argument, NULL, OPT_DEVICE_OUT},
      {"copy-out", optional_argument, NULL, OPT_COPY_OUT},
      {"batch", required_argument, NULL, OPT_BATCH},
      {"batches", required_argument, NULL, OPT_BATCHES},
      {"host-work", required_argument, NULL, OPT_HOST_WORK},
      {"help", no_argument, NULL, OPT_HELP},
      {NULL, 0, NULL, 0},
  };
  c63_dec_params p;
  int frames = 3000, runs = 5, device_out = 0, copy_memory = NO_COPY;
  int cpu_entropy = 0, opt;
  c63_dec_params_init(&p);
  p.backend = C63_BACKEND_CUDA;
  if (cli_version(prog, argc, argv)) return 0;
  while ((opt = getopt_long(argc, argv, "f:n:t:", long_opts, NULL)) != -1) {
    switch (opt) {
    case 'f':
    case 'n':
    case 't':
      if (cli_parse_int(optarg, opt == 'f' ? &frames : opt == 'n' ? &runs : &p.threads)) {
        fprintf(stderr, "%s: '%s' is not a whole number\n", prog, optarg);
        return 2;
      }
      break;
    case OPT_BACKEND:
      if (strcmp(optarg, "cpu") && strcmp(optarg, "cuda")) {
        fprintf(stderr, "%s: backend cpu or cuda, not %s\n", prog, optarg);
        return 2;
      }
      p.backend = strcmp(optarg, "cpu") ? C63_BACKEND_CUDA : C63_BACKEND_CPU;
      break;
    case OPT_CPU_ENTROPY:
      cpu_entropy = 1;
      break;
    case OPT_DEVICE_OUT:
      device_out = 1;
      break;
    case OPT_COPY_OUT:
      if (!optarg || !strcmp(optarg, "host")) {
        copy_memory = C63_MEMORY_HOST;
      } else if (!strcmp(optarg, "cuda")) {
#ifdef C63_BENCH_CUDA
        copy_memory = C63_MEMORY_CUDA;
#else
        fprintf(stderr, "%s: --copy-out=cuda needs a build with the CUDA backend\n", prog);
        return 2;
#endif
      } else {
        fprintf(stderr, "%s: --copy-out=host or cuda, not %s\n", prog, optarg);
        return 2;
      }
      break;
    case OPT_BATCH:
    case OPT_BATCHES: {
      int v;
      if (cli_parse_int(optarg, &v) || v < 1 || v > (opt == OPT_BATCH ? 64 : 8)) {
        fprintf(stderr, "%s: --%s out of range: %s\n", prog, opt == OPT_BATCH ? "batch" : "batches",
                optarg);
        return 2;
      }
      setenv(opt == OPT_BATCH ? "C63_CUDA_DECODE_BATCH" : "C63_CUDA_DECODE_BATCHES", optarg, 1);
      break;
    }
    case OPT_HOST_WORK:
      if (cli_parse_int(optarg, &host_work_us) || host_work_us < 0 || host_work_us > 1000000) {
        fprintf(stderr, "%s: --host-work 0 to 1000000 microseconds, not %s\n", prog, optarg);
        return 2;
      }
      break;
    case OPT_HELP:
      usage(stdout);
      return 0;
    default:
      usage(stderr);
      return 2;
    }
  }
  if (optind + 1 != argc || frames < 1 || runs < 1 || runs > MAX_RUNS) {
    usage(stderr);
    return 2;
  }
  if (cpu_entropy) setenv("C63_CUDA_CPU_ENTROPY", "1", 1);
  static stream s;
  uint8_t *data = NULL;
  if (load(argv[optind], &data, &s)) return 1;
  printf("%s: %d frames (%dx%d), repeated to %d; backend %s%s, pictures into %s%s\n", argv[optind],
         s.n, s.width, s.height, frames, p.backend == C63_BACKEND_CUDA ? "cuda" : "cpu",
         p.backend == C63_BACKEND_CUDA ? (cpu_entropy ? " (CPU entropy)" : " (GPU entropy)") : "",
         device_out ? "CUDA memory" : "system memory",
         copy_memory == NO_COPY ? ""
         : copy_memory == C63_MEMORY_CUDA
             ? ", each copied out into device memory, waited for on a second thread"
             : ", each copied out into page-locked memory, waited for on a second thread");
  const char *batch = getenv("C63_CUDA_DECODE_BATCH"), *batches = getenv("C63_CUDA_DECODE_BATCHES");
  if (p.backend == C63_BACKEND_CUDA && !cpu_entropy && (batch || batches))
    printf("tuning: C63_CUDA_DECODE_BATCH=%s C63_CUDA_DECODE_BATCHES=%s\n",
           batch ? batch : "(policy)", batches ? batches : "(policy)");
  uint64_t sum;
  int status = 1;
  if (run(&p, device_out, copy_memory, &s, frames < 100 ? frames : 100, !device_out, &sum) < 0)
    goto done;
  if (!device_out)
    printf("pictures checksum (first 100 frames) %016llx\n", (unsigned long long)sum);
  double fps[MAX_RUNS];
  for (int i = 0; i < runs; i++) {
    const double t = run(&p, device_out, copy_memory, &s, frames, 0, &sum);
    if (t <= 0) goto done;
    fps[i] = frames / t;
    printf("run %d: %.3f s, %.1f fps\n", i + 1, t, fps[i]);
    fflush(stdout);
  }
  printf("median: %.1f fps over %d runs\n", bench_median(fps, runs), runs);
  status = 0;
done:
  free(data);
  return status;
}
