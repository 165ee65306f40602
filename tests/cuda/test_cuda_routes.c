/* The CUDA encoder's routes for pictures in host memory, each against the
 * CPU encoder byte for byte, and the registrations that choose between them:
 *
 *   staged        ordinary (pageable) memory, copied into page-locked staging
 *                 by the encoder's threads (1, 3 and one a core), at odd
 *                 addresses and strides
 *   borrowed      the same sent with c63_encoder_send_picture_borrowed (the
 *                 threads copy while the caller goes on), each picture in
 *                 its own memory, overwritten as soon as its packet is out;
 *                 and from page-locked memory (uploaded while the caller
 *                 goes on) and registered memory (uploaded within the send)
 *   registered    the caller's memory registered (c63_picture_memory_register)
 *                 and written picture after picture, as a pool recycles it,
 *                 uploaded straight from there
 *   page-locked   c63_picture_memory_alloc's memory
 *   freed         registered memory unregistered and freed, new memory at
 *                 (most likely) the same address, not registered: staged
 *   shared        four encoders on four threads, each registering the same
 *                 memory and encoding from it, in turn and then at once;
 *                 then four encoding from memory the main thread
 *                 registered and unregisters halfway through the clip
 *   registry      the counting: the same range twice, another size, an
 *                 overlapping range, unregistering what is not registered
 *
 * Device memory is tested by test_cuda_encode layouts. Without a CUDA
 * device prints SKIP and exits 77.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c63/c63.h"
#include "cuda/c63_cuda.h"
#include "synth.h"
#include "tutil.h"

#define FRAMES 7
#define PAD 40
#define SHARERS 4

/* A clip of FRAMES synthetic pictures of w x h. */
typedef struct {
  int w, h;
  uint8_t *yuv;
  tu_buf cpu; /* the CPU encoder's stream of it */
} clip;

static c63_enc_params params(const clip *c, c63_backend_kind backend, int threads)
{
  c63_enc_params p;
  c63_enc_params_init(&p);
  p.width = c->w;
  p.height = c->h;
  p.keyframe_interval = 4;
  p.backend = backend;
  p.threads = threads;
  return p;
}

static int clip_init(clip *c, int w, int h)
{
  const size_t fsize = tu_i420_size(w, h);
  char msg[256];
  memset(c, 0, sizeof *c);
  c->w = w;
  c->h = h;
  c->yuv = malloc(fsize * FRAMES);
  for (int t = 0; t < FRAMES; t++)
    synth_frame(c->yuv + fsize * t, w, h, t);
  c63_enc_params p = params(c, C63_BACKEND_CPU, 0);
  const int r = tu_encode(&p, c->yuv, FRAMES, &c->cpu, msg, sizeof msg);
  TU_CHECK(r == C63_OK, "%dx%d on the CPU: %s", w, h, msg);
  return r == C63_OK;
}

static void clip_free(clip *c)
{
  tu_buf_free(&c->cpu);
  free(c->yuv);
}

/* Pictures written one after another at offset into one block of memory, as
 * a producer recycles its buffer. */
typedef struct {
  const clip *c;
  uint8_t *block;
  size_t offset;
} writer;

/* Room for a picture at any offset below 64. */
static size_t block_size(const clip *c)
{
  return tu_padded_size(c->w, c->h, 0, PAD) + 64;
}

static void write_picture(void *arg, int i, c63_picture *pic)
{
  const writer *wr = arg;
  const clip *c = wr->c;
  tu_padded_picture(c->yuv + tu_i420_size(c->w, c->h) * (size_t)i, c->w, c->h, 0, PAD,
                    wr->block + wr->offset, pic);
}

/* Encode the clip from block on the GPU and compare with the CPU. */
static int same_as_cpu(const clip *c, uint8_t *block, size_t offset, int threads, const char *route)
{
  writer wr = {c, block, offset};
  c63_enc_params p = params(c, C63_BACKEND_CUDA, threads);
  tu_buf gpu = {0};
  char msg[512];
  const int r = tu_encode_pictures(&p, write_picture, &wr, FRAMES, &gpu, msg, sizeof msg);
  TU_CHECK(r == C63_OK, "%dx%d %s: %s", c->w, c->h, route, msg);
  const int ok = r == C63_OK && gpu.size == c->cpu.size && !memcmp(gpu.data, c->cpu.data, gpu.size);
  TU_CHECK(ok, "%dx%d %s: the stream differs from the CPU's", c->w, c->h, route);
  printf("%4dx%-4d %-44s %s\n", c->w, c->h, route, ok ? "identical" : "DIFFERENT");
  tu_buf_free(&gpu);
  return ok;
}

static void run_staged(const clip *c)
{
  static const int threads[] = {1, 3, 0};
  uint8_t *block = malloc(block_size(c));
  for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
    char route[64];
    snprintf(route, sizeof route, "staged, odd address, %d thread%s", threads[t],
             threads[t] == 1 ? "" : "s");
    if (!threads[t]) snprintf(route, sizeof route, "staged, odd address, a thread a core");
    same_as_cpu(c, block, 1, threads[t], route);
  }
  free(block);
}

/* Borrowed pictures, each in a block of its own at an odd address: */
enum lent_memory {
  LENT_PAGEABLE,    /* malloc's: copied into staging by the pool */
  LENT_PAGE_LOCKED, /* c63_picture_memory_alloc's: uploaded after send returns */
  LENT_REGISTERED,  /* registered through libc63: uploaded within the send */
};

typedef struct {
  const clip *c;
  enum lent_memory memory;
  uint8_t *block[FRAMES];
} lender;

static void lend(lender *l, const clip *c, enum lent_memory memory)
{
  l->c = c;
  l->memory = memory;
  for (int i = 0; i < FRAMES; i++) {
    char msg[256];
    l->block[i] = memory == LENT_PAGE_LOCKED ? c63_picture_memory_alloc(block_size(c))
                                             : malloc(block_size(c));
    TU_CHECK(l->block[i] != NULL, "%zu bytes for a picture", block_size(c));
    if (l->block[i] && memory == LENT_REGISTERED)
      TU_CHECK(c63_picture_memory_register(l->block[i], block_size(c), msg, sizeof msg) == C63_OK,
               "registering a picture: %s", msg);
  }
}

static void lender_free(lender *l)
{
  for (int i = 0; i < FRAMES; i++) {
    if (l->memory == LENT_PAGE_LOCKED) {
      c63_picture_memory_free(l->block[i]);
      continue;
    }
    if (l->memory == LENT_REGISTERED && l->block[i]) c63_picture_memory_unregister(l->block[i]);
    free(l->block[i]);
  }
}

static void lent_picture(void *arg, int i, c63_picture *pic)
{
  const lender *l = arg;
  const clip *c = l->c;
  tu_padded_picture(c->yuv + tu_i420_size(c->w, c->h) * (size_t)i, c->w, c->h, 0, PAD,
                    l->block[i] + 1, pic);
}

/* The packet is out: the encoder reads the picture no more, so changing
 * it changes nothing coded. */
static void lent_back(void *arg, int i)
{
  const lender *l = arg;
  memset(l->block[i], 0x5a, block_size(l->c));
}

static void run_borrowed_from(const clip *c, enum lent_memory memory, const char *what)
{
  static const int threads[] = {1, 3, 0};
  lender l;
  lend(&l, c, memory);
  for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
    c63_enc_params p = params(c, C63_BACKEND_CUDA, threads[t]);
    tu_buf gpu = {0};
    char msg[512], route[80];
    snprintf(route, sizeof route, "borrowed, %s, odd address, %d thread%s", what, threads[t],
             threads[t] == 1 ? "" : "s");
    if (!threads[t])
      snprintf(route, sizeof route, "borrowed, %s, odd address, a thread a core", what);
    const int r =
        tu_encode_borrowed(&p, lent_picture, lent_back, &l, FRAMES, &gpu, msg, sizeof msg);
    TU_CHECK(r == C63_OK, "%dx%d %s: %s", c->w, c->h, route, msg);
    const int ok =
        r == C63_OK && gpu.size == c->cpu.size && !memcmp(gpu.data, c->cpu.data, gpu.size);
    TU_CHECK(ok, "%dx%d %s: the stream differs from the CPU's", c->w, c->h, route);
    printf("%4dx%-4d %-52s %s\n", c->w, c->h, route, ok ? "identical" : "DIFFERENT");
    tu_buf_free(&gpu);
  }
  /* freed with pictures in flight: it waits for their copies and uploads
   * before the memory goes */
  c63_enc_params p = params(c, C63_BACKEND_CUDA, 0);
  c63_encoder *enc;
  char msg[256];
  if (c63_encoder_new(&p, &enc, msg, sizeof msg) == C63_OK) {
    for (int i = 0; i < FRAMES; i++) {
      c63_picture pic;
      memset(&pic, 0, sizeof pic);
      lent_picture(&l, i, &pic);
      if (c63_encoder_send_picture_borrowed(enc, &pic) != C63_OK) break;
    }
    c63_encoder_free(enc);
  }
  lender_free(&l);
}

static void run_borrowed(const clip *c)
{
  run_borrowed_from(c, LENT_PAGEABLE, "pageable");
  run_borrowed_from(c, LENT_PAGE_LOCKED, "page-locked");
  run_borrowed_from(c, LENT_REGISTERED, "registered");
}

/* size bytes from malloc, registered; *registered says whether that worked. */
static uint8_t *malloc_registered(size_t size, int *registered)
{
  uint8_t *block = malloc(size);
  char msg[256];
  const int r = c63_picture_memory_register(block, size, msg, sizeof msg);
  TU_CHECK(r == C63_OK, "registering %zu bytes: %s", size, msg);
  *registered = r == C63_OK;
  TU_CHECK_EQ(c63_cuda_host_registrations(block), *registered);
  return block;
}

static void run_registered(const clip *c)
{
  int registered;
  uint8_t *block = malloc_registered(block_size(c), &registered);
  same_as_cpu(c, block, 3, 0, "registered, recycled, odd address");
  if (registered) TU_CHECK_EQ(c63_picture_memory_unregister(block), C63_OK);
  TU_CHECK_EQ(c63_cuda_host_registrations(block), 0);
  free(block);
}

static void run_page_locked(const clip *c)
{
  uint8_t *block = c63_picture_memory_alloc(block_size(c));
  TU_CHECK(block != NULL, "c63_picture_memory_alloc");
  if (block) same_as_cpu(c, block, 5, 0, "page-locked (c63_picture_memory_alloc)");
  c63_picture_memory_free(block);
}

/* Registered memory unregistered and freed, then memory of the same size
 * allocated (malloc most likely hands out the same address) and used
 * without registering: the encoder must read the new memory, not the pages
 * the old registration pinned. */
static void run_freed(const clip *c)
{
  const size_t size = block_size(c);
  int registered;
  uint8_t *block = malloc_registered(size, &registered);
  same_as_cpu(c, block, 0, 0, "registered, before it is freed");
  if (registered) c63_picture_memory_unregister(block);
  free(block);
  uint8_t *again = malloc(size);
  TU_CHECK_EQ(c63_cuda_host_registrations(again), 0);
  same_as_cpu(c, again, 0, 0,
              again == block ? "new memory at a freed registration's address"
                             : "new memory after a registration was freed");
  free(again);
}

/* The clip's pictures padded, one after another in one block of memory,
 * with GUARD bytes after them that nothing may write. */
#define GUARD 4096

typedef struct {
  uint8_t *block;
  size_t size; /* of the pictures, without the guard */
  c63_picture pics[FRAMES];
} shared_clip;

static void shared_clip_init(shared_clip *sc, const clip *c)
{
  const size_t picture_bytes = tu_padded_size(c->w, c->h, 0, PAD);
  memset(sc, 0, sizeof *sc); /* tu_padded_picture sets only the layout */
  sc->size = picture_bytes * FRAMES;
  sc->block = malloc(sc->size + GUARD);
  memset(sc->block + sc->size, 0xa5, GUARD);
  for (int i = 0; i < FRAMES; i++) {
    const size_t used =
        tu_padded_picture(c->yuv + tu_i420_size(c->w, c->h) * (size_t)i, c->w, c->h, 0, PAD,
                          sc->block + picture_bytes * (size_t)i, &sc->pics[i]);
    TU_CHECK_EQ(used, picture_bytes);
  }
}

/* How SHARERS encoders on threads of their own encode the shared clip:
 * each registering it, one after the other (each thread joined before the
 * next starts) or at once, which tells a fault of the sharing from one of
 * an encoder; or at once without registering it, borrowing the main
 * thread's registration, which it drops halfway through the clip. */
enum sharing { IN_TURN, AT_ONCE, BORROWED };
static const char *const sharing_names[] = {
    "shared by 4 encoders on 4 threads in turn",
    "shared by 4 encoders on 4 threads at once",
    "4 encoders borrowing a registration dropped",
};

/* BORROWED: how many encoders are halfway through the clip (or done). */
typedef struct {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int passed;
} halfway;

typedef struct {
  const clip *c;
  const shared_clip *sc;
  enum sharing how;
  halfway *half;
  int passed; /* whether it is counted in half */
  int status;
  tu_buf out;
  char msg[512];
} sharer;

static void pass_halfway(sharer *s)
{
  if (s->how != BORROWED || s->passed) return;
  s->passed = 1;
  pthread_mutex_lock(&s->half->lock);
  s->half->passed++;
  pthread_cond_signal(&s->half->cond);
  pthread_mutex_unlock(&s->half->lock);
}

static void shared_picture(void *arg, int i, c63_picture *pic)
{
  sharer *s = arg;
  if (i == FRAMES / 2) pass_halfway(s);
  *pic = s->sc->pics[i];
}

static void *share(void *arg)
{
  sharer *s = arg;
  uint8_t *block = s->sc->block;
  const int registers = s->how != BORROWED;
  if (registers) s->status = c63_picture_memory_register(block, s->sc->size, s->msg, sizeof s->msg);
  const int held = registers && s->status == C63_OK;
  if (s->status == C63_OK) {
    c63_enc_params p = params(s->c, C63_BACKEND_CUDA, 2);
    s->status = tu_encode_pictures(&p, shared_picture, s, FRAMES, &s->out, s->msg, sizeof s->msg);
  }
  pass_halfway(s); /* one that failed early counts too */
  const int u = held ? c63_picture_memory_unregister(block) : C63_OK;
  if (s->status == C63_OK && u != C63_OK) {
    s->status = u;
    snprintf(s->msg, sizeof s->msg, "unregistering: status %d", u);
  }
  return NULL;
}

/* BORROWED: once all n encoders are halfway, drop the registration they
 * upload from, while they go on. */
static void unregister_halfway(halfway *half, int n, uint8_t *block)
{
  pthread_mutex_lock(&half->lock);
  while (half->passed < n)
    pthread_cond_wait(&half->cond, &half->lock);
  pthread_mutex_unlock(&half->lock);
  TU_CHECK_EQ(c63_picture_memory_unregister(block), C63_OK);
}

/* The first byte where a and b differ, or the shorter one's size. */
static size_t first_difference(const tu_buf *a, const tu_buf *b)
{
  const size_t n = a->size < b->size ? a->size : b->size;
  size_t i = 0;
  while (i < n && a->data[i] == b->data[i])
    i++;
  return i;
}

/* Whether sharer k's stream is the CPU's; frees it. */
static int sharer_same(const clip *c, sharer *s, int k)
{
  const char *how = sharing_names[s->how];
  TU_CHECK(s->status == C63_OK, "%s: encoder %d: %s", how, k, s->msg);
  const int same = s->status == C63_OK && s->out.size == c->cpu.size &&
                   !memcmp(s->out.data, c->cpu.data, c->cpu.size);
  TU_CHECK(same,
           "%s: encoder %d: the stream differs (%zu bytes, the CPU's %zu, first difference at "
           "byte %zu)",
           how, k, s->out.size, c->cpu.size, first_difference(&s->out, &c->cpu));
  tu_buf_free(&s->out);
  return same;
}

static int run_sharers(const clip *c, const shared_clip *sc, enum sharing how)
{
  sharer s[SHARERS];
  pthread_t th[SHARERS];
  int started[SHARERS] = {0}, nstarted = 0, registered = 0;
  halfway half = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
  if (how == BORROWED) {
    char msg[256];
    registered = c63_picture_memory_register(sc->block, sc->size, msg, sizeof msg) == C63_OK;
    TU_CHECK(registered, "%s: registering: %s", sharing_names[how], msg);
  }
  for (int k = 0; k < SHARERS; k++) {
    s[k] = (sharer){c, sc, how, &half, 0, C63_OK, {0}, ""};
    started[k] = pthread_create(&th[k], NULL, share, &s[k]) == 0;
    TU_CHECK(started[k], "%s: starting encoder %d's thread", sharing_names[how], k);
    nstarted += started[k];
    if (how == IN_TURN && started[k]) pthread_join(th[k], NULL);
  }
  if (registered) unregister_halfway(&half, nstarted, sc->block);
  int ok = nstarted == SHARERS;
  for (int k = 0; k < SHARERS; k++) {
    if (how != IN_TURN && started[k]) pthread_join(th[k], NULL);
    ok = sharer_same(c, &s[k], k) && ok;
  }
  TU_CHECK_EQ(c63_cuda_host_registrations(sc->block), 0);
  return ok;
}

static void run_shared(const clip *c)
{
  shared_clip sc;
  shared_clip_init(&sc, c);
  uint8_t *before = malloc(sc.size + GUARD);
  memcpy(before, sc.block, sc.size + GUARD);
  for (int how = IN_TURN; how <= BORROWED; how++) {
    const int ok = run_sharers(c, &sc, how);
    TU_CHECK(!memcmp(before, sc.block, sc.size + GUARD),
             "%s: the pictures or the bytes after them changed while they were encoded",
             sharing_names[how]);
    printf("%4dx%-4d %-44s %s\n", c->w, c->h, sharing_names[how], ok ? "identical" : "DIFFERENT");
  }
  free(before);
  free(sc.block);
}

static void run_registry(void)
{
  const size_t size = (size_t)4 << 20;
  uint8_t *block = malloc(size);
  char msg[256];
  TU_CHECK_EQ(c63_picture_memory_register(NULL, size, msg, sizeof msg), C63_ERR_INVALID_ARG);
  TU_CHECK_EQ(c63_picture_memory_register(block, 0, msg, sizeof msg), C63_ERR_INVALID_ARG);
  TU_CHECK_EQ(c63_picture_memory_register(block, size, msg, sizeof msg), C63_OK);
  TU_CHECK_EQ(c63_picture_memory_register(block, size, msg, sizeof msg), C63_OK);
  TU_CHECK_EQ(c63_cuda_host_registrations(block), 2);
  /* the same address with another size, and pages registered already */
  TU_CHECK_EQ(c63_picture_memory_register(block, size / 2, msg, sizeof msg), C63_ERR_INVALID_ARG);
  TU_CHECK_EQ(c63_picture_memory_register(block + 8192, 4096, msg, sizeof msg),
              C63_ERR_INVALID_ARG);
  TU_CHECK_EQ(c63_cuda_host_registrations(block + 8192), 0);
  TU_CHECK_EQ(c63_picture_memory_unregister(block), C63_OK);
  TU_CHECK_EQ(c63_cuda_host_registrations(block), 1);
  TU_CHECK_EQ(c63_picture_memory_unregister(block), C63_OK);
  TU_CHECK_EQ(c63_cuda_host_registrations(block), 0);
  TU_CHECK_EQ(c63_picture_memory_unregister(block), C63_ERR_INVALID_ARG);
  /* unregistered, the pages can be registered again, in part */
  TU_CHECK_EQ(c63_picture_memory_register(block + 8192, 4096, msg, sizeof msg), C63_OK);
  TU_CHECK_EQ(c63_picture_memory_unregister(block + 8192), C63_OK);
  printf("registry: counted, refused for other sizes and overlaps\n");
  free(block);
}

int main(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  if (tu_cuda_missing()) return 77;
  static const int sizes[][2] = {{1282, 722}, {37, 21}};
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
    clip c;
    if (clip_init(&c, sizes[k][0], sizes[k][1])) {
      run_staged(&c);
      run_borrowed(&c);
      run_registered(&c);
      run_page_locked(&c);
      run_freed(&c);
      run_shared(&c);
    }
    clip_free(&c);
  }
  run_registry();
  return tu_finish("routes");
}
