/* The CUDA decoder's verdicts frame by frame against the CPU backend's, on
 * streams with corrupt frames (bit flips in the entropy-coded data and in
 * the headers, cut data) among good ones, with resets and flushes while
 * batches of the GPU entropy stage are under way: each frame must fail
 * with the CPU's status and message, or give the CPU's picture. The
 * reference is the CPU backend decoding one frame at a time
 * (c63_decoder_decode), which does not depend on how many frames are in
 * flight; the runs checked are the CUDA backend through send/receive (GPU
 * entropy decoding in the policy's batches, in batches of 5 with 3 in
 * flight, and in batches of 6 one at a time, so that the streams here go
 * through many batches and flushes come with several in flight; and with
 * C63_CUDA_CPU_ENTROPY=1), through c63_decoder_decode, and the CPU backend
 * through send/receive. A flush drops the frames in flight, which
 * depend on the backend's depth: the reference leaves out the frames the
 * run checked dropped.
 *
 * `test_cuda_decode_errors replay FILE...` sends every frame of each file
 * (a fuzz corpus, split by c63_frame_scan) through the same runs, for
 * compute-sanitizer's memcheck on the GPU machine. Without a CUDA device it
 * prints SKIP and exits 77.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c63/c63.h"
#include "cuda/c63_cuda.h"
#include "sha256.h"
#include "tutil.h"

#define MAX_FRAMES 4096
/* Outcomes besides the statuses: a frame the run did not send, or sent and
 * dropped by a flush. */
enum { NOT_SENT = 1000, DROPPED = 1001 };

typedef struct frames {
  const uint8_t *data[MAX_FRAMES];
  size_t size[MAX_FRAMES];
  int n;
} frames;

enum { OP_SEND, OP_RESET, OP_FLUSH };
typedef struct op {
  int kind, frame;
} op;

typedef struct script {
  op ops[MAX_FRAMES + 64];
  int n;
} script;

typedef struct verdict {
  int status;
  char msg[256];
  char picture[65]; /* SHA-256 of the picture as tight I420 */
} verdict;

static void record(verdict *v, int r, c63_decoder *dec, const c63_decoded_picture *pic)
{
  v->status = r;
  snprintf(v->msg, sizeof v->msg, "%s", r ? c63_decoder_error(dec) : "");
  v->picture[0] = '\0';
  if (r) return;
  tu_buf b = {0};
  if (pic->memory == C63_MEMORY_HOST) tu_append_picture(&b, pic);
  sha256_hex(b.data, b.size, v->picture);
  tu_buf_free(&b);
}

static c63_decoder *new_decoder(c63_backend_kind kind, const tu_cuda_decoding *setup)
{
  c63_dec_params p;
  c63_decoder *dec = NULL;
  char msg[256];
  c63_dec_params_init(&p);
  p.backend = kind;
  const int r = tu_decoder_new(&p, setup, &dec, msg, sizeof msg);
  TU_CHECK(r == C63_OK, "decoder: %s", msg);
  return r ? NULL : dec;
}

static void receive_one(c63_decoder *dec, const frames *f, verdict *out)
{
  c63_decoded_picture pic;
  const int r = c63_decoder_receive_picture(dec, &pic);
  TU_CHECK(r != C63_ERR_AGAIN && r != C63_ERR_EOF, "receive with the queue full: %d", r);
  if (r == C63_ERR_AGAIN || r == C63_ERR_EOF) return;
  TU_CHECK(pic.user >= 0 && pic.user < f->n, "picture of frame %lld", (long long)pic.user);
  if (pic.user >= 0 && pic.user < f->n) record(&out[pic.user], r, dec, &pic);
}

/* A reset or a flush: done, and 1; 0 for a frame to send. Every run starts
 * with all frames NOT_SENT. */
static int control(c63_decoder *dec, const op *o)
{
  if (o->kind == OP_RESET) c63_decoder_reset(dec);
  if (o->kind == OP_FLUSH) c63_decoder_flush(dec);
  return o->kind != OP_SEND;
}

static void start_run(const frames *f, verdict *out)
{
  for (int i = 0; i < f->n; i++)
    out[i].status = NOT_SENT;
}

/* The script through send/receive; frames in flight at a flush stay
 * DROPPED. */
static void run_send_receive(c63_decoder *dec, const frames *f, const script *s, verdict *out)
{
  start_run(f, out);
  for (int k = 0; k < s->n; k++) {
    const op *o = &s->ops[k];
    if (control(dec, o)) continue;
    out[o->frame].status = DROPPED;
    int r;
    while ((r = c63_decoder_send_packet(dec, f->data[o->frame], f->size[o->frame], o->frame)) ==
           C63_ERR_AGAIN)
      receive_one(dec, f, out);
    TU_CHECK(r == C63_OK, "send of frame %d: %d", o->frame, r);
  }
  c63_decoder_send_packet(dec, NULL, 0, 0);
  c63_decoded_picture pic;
  int r;
  while ((r = c63_decoder_receive_picture(dec, &pic)) != C63_ERR_EOF) {
    TU_CHECK(r != C63_ERR_AGAIN, "AGAIN while draining");
    if (r == C63_ERR_AGAIN) break;
    if (pic.user >= 0 && pic.user < f->n) record(&out[pic.user], r, dec, &pic);
  }
}

/* The script a frame at a time, leaving out the frames `skip` says were
 * dropped (NULL: none). */
static void run_one_by_one(c63_decoder *dec, const frames *f, const script *s, const verdict *skip,
                           verdict *out)
{
  start_run(f, out);
  for (int k = 0; k < s->n; k++) {
    const op *o = &s->ops[k];
    if (control(dec, o)) continue;
    if (skip && skip[o->frame].status == DROPPED) {
      out[o->frame].status = DROPPED;
    } else {
      c63_decoded_picture pic;
      const int r = c63_decoder_decode(dec, f->data[o->frame], f->size[o->frame], &pic);
      record(&out[o->frame], r, dec, &pic);
    }
  }
}

/* Frame by frame against the CPU's one-by-one verdicts; returns the
 * frames that failed (as the CPU's did too). */
static int compare_verdicts(const char *what, const char *run, const frames *f, const verdict *ref,
                            const verdict *got)
{
  int bad = 0;
  for (int i = 0; i < f->n; i++) {
    const verdict *a = &ref[i], *b = &got[i];
    const int same =
        a->status == b->status && !strcmp(a->msg, b->msg) && !strcmp(a->picture, b->picture);
    TU_CHECK(same, "%s, %s: frame %d: CPU %d \"%s\" %.12s, here %d \"%s\" %.12s", what, run, i,
             a->status, a->msg, a->picture, b->status, b->msg, b->picture);
    bad += a->status != C63_OK && a->status != DROPPED && a->status != NOT_SENT;
  }
  return bad;
}

/* The script through each run, each against the CPU one by one. */
static void check_script(const char *what, const frames *f, const script *s)
{
  verdict *ref = calloc((size_t)f->n, sizeof *ref), *got = calloc((size_t)f->n, sizeof *got);
  static const struct {
    const char *name;
    c63_backend_kind kind;
    tu_cuda_decoding setup;
    int send_receive;
  } runs[] = {
      {"cuda send/receive", C63_BACKEND_CUDA, {0, 0, 0}, 1},
      {"cuda send/receive, batches of 5, 3 in flight", C63_BACKEND_CUDA, {0, 5, 3}, 1},
      {"cuda send/receive, one batch of 6 in flight", C63_BACKEND_CUDA, {0, 6, 1}, 1},
      {"cuda one by one", C63_BACKEND_CUDA, {0, 0, 0}, 0},
      {"cuda, CPU entropy, send/receive", C63_BACKEND_CUDA, {1, 0, 0}, 1},
      {"cpu send/receive", C63_BACKEND_CPU, {0, 0, 0}, 1},
  };
  int failed = 0;
  for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
    c63_decoder *dec = new_decoder(runs[i].kind, &runs[i].setup);
    c63_decoder *cpu = new_decoder(C63_BACKEND_CPU, NULL);
    if (!dec || !cpu) {
      c63_decoder_free(dec);
      c63_decoder_free(cpu);
      break;
    }
    if (runs[i].send_receive)
      run_send_receive(dec, f, s, got);
    else
      run_one_by_one(dec, f, s, NULL, got);
    run_one_by_one(cpu, f, s, got, ref);
    failed = compare_verdicts(what, runs[i].name, f, ref, got);
    c63_decoder_free(dec);
    c63_decoder_free(cpu);
  }
  printf("%-52s %4d frames, %3d failing: verdicts as the CPU's\n", what, f->n, failed);
  free(ref);
  free(got);
}

static void send_all(script *s, int from, int to)
{
  for (int i = from; i < to; i++)
    s->ops[s->n++] = (op){OP_SEND, i};
}

static void add_op(script *s, int kind)
{
  s->ops[s->n++] = (op){kind, 0};
}

/* A frame's bytes with the entropy-coded data cut: keep `keep` bytes of it
 * and what follows the data (the end marker). */
static size_t cut_data(const uint8_t *frame, size_t size, size_t keep, uint8_t *out)
{
  c63_frame_header hdr;
  if (c63_parse_frame_header(frame, size, &hdr, NULL, 0) || keep > hdr.data_size) return 0;
  const size_t tail = hdr.data_offset + hdr.data_size;
  memcpy(out, frame, hdr.data_offset + keep);
  memcpy(out + hdr.data_offset + keep, frame + tail, hdr.frame_size - tail);
  return hdr.frame_size - (hdr.data_size - keep);
}

/* Corrupt frame i of f (its bytes copied into buf, which it then points
 * at): `flips` bits flipped, in the entropy-coded data unless anywhere, or
 * the data cut to a fraction (cut > 0). */
static void corrupt(frames *f, int i, uint8_t *buf, int flips, int anywhere, int cut, uint64_t *rng)
{
  c63_frame_header hdr;
  if (c63_parse_frame_header(f->data[i], f->size[i], &hdr, NULL, 0)) return;
  if (cut) {
    f->size[i] = cut_data(f->data[i], f->size[i], hdr.data_size * (size_t)cut / 8, buf);
    f->data[i] = buf;
    return;
  }
  memcpy(buf, f->data[i], f->size[i]);
  for (int k = 0; k < flips; k++) {
    const size_t at =
        anywhere ? tu_rand(rng) % f->size[i] : hdr.data_offset + tu_rand(rng) % hdr.data_size;
    buf[at] ^= (uint8_t)(1u << (tu_rand(rng) % 8));
  }
  f->data[i] = buf;
}

/* Split a stream into frames (every one must parse). */
static int split(const uint8_t *s, size_t len, frames *f)
{
  f->n = 0;
  for (size_t off = 0; off < len && f->n < MAX_FRAMES;) {
    c63_frame_header hdr;
    if (c63_parse_frame_header(s + off, len - off, &hdr, NULL, 0)) break;
    f->data[f->n] = s + off;
    f->size[f->n++] = hdr.frame_size;
    off += hdr.frame_size;
  }
  return f->n;
}

/* Corrupt frames among good ones, in several batches: a bad frame in the
 * middle of a batch of good ones, at a batch's first and last place, a bad
 * keyframe, two bad frames in a row, cut data, flips in the headers; then
 * random damage with several seeds. */
static void corrupt_streams(const uint8_t *s, size_t len, const char *name)
{
  static frames f;
  const int n = split(s, len, &f);
  TU_CHECK(n >= 40, "%s: %d frames", name, n);
  if (n < 40) return;
  uint8_t *bufs = malloc(len * 2);
  size_t used = 0;
  uint64_t rng = 0x5eed;
  static const struct {
    int frame, flips, anywhere, cut;
  } fixed[] = {{5, 1, 0, 0},  {10, 2, 0, 0}, {15, 1, 0, 0}, {16, 3, 0, 0},
               {21, 1, 0, 0}, {22, 1, 0, 0}, {27, 0, 0, 5}, {33, 2, 1, 0}};
  for (size_t k = 0; k < sizeof fixed / sizeof fixed[0]; k++) {
    const int i = fixed[k].frame;
    corrupt(&f, i, bufs + used, fixed[k].flips, fixed[k].anywhere, fixed[k].cut, &rng);
    used += f.size[i];
  }
  script sc = {.n = 0};
  send_all(&sc, 0, n);
  char what[128];
  snprintf(what, sizeof what, "%s, corrupt frames", name);
  check_script(what, &f, &sc);
  for (int seed = 1; seed <= 4; seed++) {
    split(s, len, &f);
    used = 0;
    rng = 0x1234567ull * (uint64_t)seed;
    for (int i = 0; i < n; i++) {
      if (tu_rand(&rng) % 5) continue; /* a fifth of the frames */
      const int kind = (int)(tu_rand(&rng) % 8);
      corrupt(&f, i, bufs + used, 1 + kind % 3, kind == 6,
              kind == 7 ? 1 + (int)(tu_rand(&rng) % 7) : 0, &rng);
      used += f.size[i];
    }
    snprintf(what, sizeof what, "%s, random damage (seed %d)", name, seed);
    check_script(what, &f, &sc);
  }
  free(bufs);
}

/* Resets and flushes while batches are under way (frame numbers not all
 * multiples of the batches' sizes: with batches of 5, 3 in flight, the
 * flush after frame 19 drops three launched batches, the one after frame
 * 13 two launched and one filling, which holds a corrupt frame). */
static void flush_and_reset(const uint8_t *s, size_t len, const char *name)
{
  static frames f;
  const int n = split(s, len, &f);
  if (n < 60) return;
  script sc = {.n = 0};
  char what[128];
  send_all(&sc, 0, 25);
  add_op(&sc, OP_RESET); /* frame 25 is a delta frame: no reference until 30 */
  send_all(&sc, 25, n);
  snprintf(what, sizeof what, "%s, reset after frame 24", name);
  check_script(what, &f, &sc);

  sc.n = 0;
  send_all(&sc, 0, 20);
  add_op(&sc, OP_FLUSH);
  send_all(&sc, 20, 45);
  add_op(&sc, OP_FLUSH); /* then delta frames: no reference until 50 */
  send_all(&sc, 45, n);
  add_op(&sc, OP_FLUSH);
  send_all(&sc, 0, 7);
  snprintf(what, sizeof what, "%s, flushes after frames 19, 44, the last", name);
  check_script(what, &f, &sc);

  uint8_t *buf = malloc(f.size[12] + f.size[41]);
  uint64_t rng = 7;
  corrupt(&f, 12, buf, 2, 0, 0, &rng);
  corrupt(&f, 41, buf + f.size[12], 1, 0, 0, &rng);
  sc.n = 0;
  send_all(&sc, 0, 14);
  add_op(&sc, OP_FLUSH);
  send_all(&sc, 10, 40);
  add_op(&sc, OP_RESET);
  send_all(&sc, 40, n);
  snprintf(what, sizeof what, "%s, corrupt frames, flush and reset", name);
  check_script(what, &f, &sc);
  free(buf);
}

/* Every frame of each file, as a player would split it (broken ones too:
 * they fail on both). */
static void replay(int n, char **paths)
{
  static frames f;
  int total = 0;
  for (int i = 0; i < n; i++) {
    size_t len;
    uint8_t *s = tu_read_file(paths[i], &len);
    TU_CHECK(s != NULL, "cannot read %s", paths[i]);
    if (!s) continue;
    c63_frame_scanner sc;
    c63_frame_scanner_init(&sc);
    f.n = 0;
    for (size_t off = 0; off < len && f.n < MAX_FRAMES;) {
      c63_frame_scan_result res;
      const int r = c63_frame_scan(&sc, s + off, len - off, 1, &res);
      if ((r != C63_SCAN_SKIP && r != C63_SCAN_FRAME) || res.size == 0) break;
      if (r == C63_SCAN_FRAME) {
        f.data[f.n] = s + off;
        f.size[f.n++] = res.size;
      }
      off += res.size;
    }
    script sc_all = {.n = 0};
    send_all(&sc_all, 0, f.n);
    if (f.n) check_script(paths[i], &f, &sc_all);
    total += f.n;
    free(s);
  }
  printf("%d files, %d frames\n", n, total);
}

int main(int argc, char **argv)
{
  char msg[256];
  if (c63_cuda_device_count(msg, sizeof msg) <= 0) {
    printf("SKIP: %s\n", msg);
    return 77;
  }
  if (argc > 1 && !strcmp(argv[1], "replay")) {
    replay(argc - 2, argv + 2);
    return tu_finish("test_cuda_decode_errors replay");
  }
  static const int sizes[][5] = {{352, 288, 25, 10, 64}, {1280, 720, 50, 8, 48}};
  /* C63_TEST_QUICK (under compute-sanitizer): the small stream alone */
  const size_t n_sizes = getenv("C63_TEST_QUICK") ? 1 : sizeof sizes / sizeof sizes[0];
  for (size_t i = 0; i < n_sizes; i++) {
    tu_buf s = {0};
    char name[64];
    const int *z = sizes[i];
    TU_CHECK(tu_encode_synth(z[0], z[1], z[2], 1, z[4], z[3], &s, msg, sizeof msg) == C63_OK,
             "encode: %s", msg);
    snprintf(name, sizeof name, "%dx%d q%d k%d", z[0], z[1], z[2], z[3]);
    corrupt_streams(s.data, s.size, name);
    flush_and_reset(s.data, s.size, name);
    tu_buf_free(&s);
  }
  return tu_finish("test_cuda_decode_errors");
}
