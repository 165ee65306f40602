/* The CUDA decoding backend (c63/decode_backend.h): entropy decoding,
 * dequantisation, inverse transform, motion compensation and
 * reconstruction on the GPU, with the reference frame resident on the
 * device, through the very kernel the encoder reconstructs with (so its
 * bytes are the CPU decoder's).
 *
 * Entropy decoding (unless C63_CUDA_CPU_ENTROPY=1 leaves it to the
 * decoder's CPU threads): submitted frames' bytes are staged into a batch
 * (c63_cuda_decode_batch.h), which is uploaded and handed to the GPU
 * entropy stage (c63_cuda_huff.h) on the batch's own stream when it is
 * full, when the oldest frame is collected from it, or at a drain (start),
 * but never before the reconstructions of all frames of its previous
 * launch are enqueued, as its stage overwrites their sparse frames. The
 * batches are used in turn, so the stages of several run at once while the
 * oldest one's sparse frames, left in device memory by its stage, are
 * reconstructed. A frame the stage hands back is entropy-decoded here by
 * c63_entropy_decode (its verdict, error and message are the frame's) into
 * a page-locked sparse frame, which is uploaded.
 *
 * Reconstruction: collecting a frame enqueues the reconstructions of the
 * frames from it on, up to kPictures, on the reconstruction stream, each
 * once its batch's verdicts are read (a batch whose stage has not run yet
 * is not waited for, except the collected frame's), after the batch's
 * decoded event on the GPU; each expands its sparse frame, reconstructs
 * into the device picture of its place in a ring of kPictures (the next
 * frame's reference), and the picture comes down into that place's pinned
 * buffer on the download stream while later frames reconstruct, or stays
 * on the device (device_out). A frame that fails stops the enqueueing
 * until it is collected: the decoder then corrects the frames after it
 * (their tables) before they are reconstructed. On a GPU that shares the
 * host's memory (c63_cuda_zero_copy) the output buffers are mapped and a
 * kernel writes the picture into them where the CPU reads it.
 *
 * Device buffers and pinned host buffers are allocated for the largest
 * geometry seen and kept; nothing is allocated per frame.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c63/c63.h"
#include "c63/entropy.h"
#include "c63/huff_sync_model.h"
#include "cuda/c63_cuda.h"
#include "cuda/c63_cuda_decode_batch.h"
#include "cuda/c63_cuda_internal.h"
#include "cuda/c63_cuda_policy.cuh"

namespace
{

constexpr int kPictures = c63_cuda_decoder_policy::kPictures;
constexpr int kExpandBlocks = c63_cuda_decoder_policy::kExpandBlocks;
constexpr int kMaxBatches = c63_cuda_decoder_policy::kMaxBatches;

/* One place of the picture ring. */
struct picture {
  uint8_t *rec;          /* the reconstruction, on the device */
  uint8_t *host;         /* pinned; the picture for system memory */
  uint8_t *host_dev;     /* host as the device sees it (zero-copy: mapped) */
  const uint8_t *device; /* the picture left on the device instead (device_out) */
  cudaEvent_t reconstructed, ready;
  cudaEvent_t copied; /* the caller's copies out of this place are done (cu_copy_async) */
};

/* A frame submitted and not collected. */
struct frame_rec {
  const c63_decode_job *job; /* the decoder's, in place until collected */
  int batch;                 /* its batch (an index); -1: the job carries coefficients */
  bool resolved;             /* verdict and out are set */
  int verdict;               /* of the GPU entropy stage */
  c63_cuda_huff_out out;
  int status; /* of the enqueueing: a failure is the frame's */
  char msg[256];
};

} // namespace

struct c63_decode_backend {
  c63_device dev;           /* the context everything below lives in */
  bool zero_copy;           /* pictures written into mapped host memory by a kernel */
  bool gpu_entropy;         /* jobs carry bytes, decoded by the GPU stage */
  cudaStream_t stream;      /* reconstruction */
  cudaStream_t down_stream; /* pictures to system memory */
  cudaStream_t copy_stream; /* copy: pictures copied out (collected: their work is done) */
  /* Copies the caller waits for (cu_copy_async), on copy_stream in turn:
   * ticket t's event is copy_done[t % C63_COPIES_IN_FLIGHT]. done is the
   * last ticket known complete, read and raised by any thread. */
  cudaEvent_t copy_done[C63_COPIES_IN_FLIGHT];
  uint64_t copies_started;
  uint64_t copies_done; /* atomic (__atomic builtins): the struct is calloc'd */
  c63_geometry g;
  c63_cuda_planes planes;
  size_t frame_bytes, blocks;   /* of the current geometry */
  size_t cap_bytes, cap_blocks; /* what the buffers hold */
  size_t cap_entries;
  int16_t *d_coeffs; /* dense, expanded on the device */
  /* A sparse frame from the host (the decoder's, or the CPU fall-back's) */
  uint32_t *d_start, *d_entries;
  uint8_t *d_count;
  c63_mv *d_mvs;
  c63_sparse_frame fallback; /* pinned: the CPU's decoding of a frame the stage handed back */
  cudaEvent_t fallback_free; /* its last upload done */
  picture pic[kPictures];
  /* Used in turn, each on its stream. A batch is launched again only once
   * the reconstructions of all frames of its last launch are enqueued
   * (launch_if_free). Frames submitted and not collected are at most
   * n_batches full batches (the depth), so a batch filled up has its
   * earlier frames collected (the batches between are full, or the oldest
   * frame of one of them was collected); one closed early at a drain
   * (cu_start) may not, and waits as due. */
  c63_cuda_decode_batch batch[kMaxBatches];
  c63_threadpool *pool;        /* the decoder's: copies frames into the batches */
  int n_batches, batch_frames; /* the policy's, or the environment's */
  int filling;                 /* the batch that takes submitted frames */
  frame_rec *frames;           /* ring of `ring` (at least depth) */
  int ring;
  int depth;
  long long submitted, enqueued, collected; /* sequence numbers */
};

namespace
{

/* kExpandBlocks coefficient blocks per CUDA block: each thread clears one
 * coefficient in shared memory, the block's entries land on theirs, and
 * the block is written out whole (coalesced). Entries come from an entropy
 * decoder of the library (the GPU stage's are c63_entropy_decode's):
 * indices below 64, starts in range. */
__global__ void expand_sparse(const uint32_t *__restrict__ start, const uint8_t *__restrict__ count,
                              const uint32_t *__restrict__ entries, int blocks,
                              int16_t *__restrict__ dense)
{
  __shared__ int16_t s[kExpandBlocks][64];
  const int lb = threadIdx.x >> 6, k = threadIdx.x & 63;
  const int b = blockIdx.x * kExpandBlocks + lb;
  s[lb][k] = 0;
  __syncthreads();
  if (b < blocks && k < count[b]) {
    const uint32_t e = entries[start[b] + k];
    s[lb][(e >> 16) & 63] = (int16_t)(uint16_t)e;
  }
  __syncthreads();
  if (b < blocks) dense[(size_t)b * 64 + k] = s[lb][k];
}

void free_entries(c63_decode_backend *be)
{
  cudaFree(be->d_entries);
  be->d_entries = nullptr;
  be->cap_entries = 0;
}

void free_buffers(c63_decode_backend *be)
{
  cudaFree(be->d_coeffs);
  cudaFree(be->d_start);
  cudaFree(be->d_count);
  cudaFree(be->d_mvs);
  for (auto &o : be->pic) {
    cudaFree(o.rec);
    cudaFreeHost(o.host);
    o.rec = o.host = o.host_dev = nullptr;
  }
  be->d_coeffs = nullptr;
  be->d_start = nullptr;
  be->d_count = nullptr;
  be->d_mvs = nullptr;
  be->cap_bytes = be->cap_blocks = 0;
  free_entries(be);
}

void destroy_streams(c63_decode_backend *be)
{
  for (auto &o : be->pic) {
    if (o.reconstructed) cudaEventDestroy(o.reconstructed);
    if (o.ready) cudaEventDestroy(o.ready);
    if (o.copied) cudaEventDestroy(o.copied);
  }
  for (cudaEvent_t e : be->copy_done)
    if (e) cudaEventDestroy(e);
  if (be->fallback_free) cudaEventDestroy(be->fallback_free);
  for (auto &b : be->batch)
    c63_cuda_decode_batch_release(&b);
  for (cudaStream_t s : {be->stream, be->down_stream, be->copy_stream})
    if (s) cudaStreamDestroy(s);
}

cudaError_t create_streams(c63_decode_backend *be)
{
  /* The reconstruction and the download at the highest priority: the
   * caller waits for them, while a batch's stage, on a stream of default
   * priority, is launched well before its frames are needed and takes the
   * multiprocessors they leave. */
  int least, greatest;
  cudaError_t err = cudaDeviceGetStreamPriorityRange(&least, &greatest);
  for (cudaStream_t *s : {&be->stream, &be->down_stream})
    if (err == cudaSuccess) err = cudaStreamCreateWithPriority(s, cudaStreamNonBlocking, greatest);
  if (err == cudaSuccess) err = cudaStreamCreateWithFlags(&be->copy_stream, cudaStreamNonBlocking);
  for (auto &o : be->pic) {
    if (err == cudaSuccess)
      err = cudaEventCreateWithFlags(&o.reconstructed, cudaEventDisableTiming);
    if (err == cudaSuccess) err = cudaEventCreateWithFlags(&o.ready, cudaEventDisableTiming);
    if (err == cudaSuccess) err = cudaEventCreateWithFlags(&o.copied, cudaEventDisableTiming);
  }
  for (cudaEvent_t &e : be->copy_done)
    if (err == cudaSuccess) err = cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
  if (err == cudaSuccess)
    err = cudaEventCreateWithFlags(&be->fallback_free, cudaEventDisableTiming);
  for (int i = 0; i < be->n_batches && err == cudaSuccess && be->gpu_entropy; i++)
    err = c63_cuda_decode_batch_init(&be->batch[i], be->batch_frames, be->pool);
  return err;
}

/* C63_CUDA_CPU_ENTROPY=1 leaves entropy decoding to the decoder's CPU
 * threads (to compare the two; docs/design.md). */
bool entropy_on_cpu()
{
  const char *v = getenv("C63_CUDA_CPU_ENTROPY");
  return v && !strcmp(v, "1");
}

/* The batches' shape, the depth, and the ring of frames that holds it. */
bool plan_frames(c63_decode_backend *be)
{
  be->gpu_entropy = !entropy_on_cpu();
  be->batch_frames = c63_cuda_tuning("C63_CUDA_DECODE_BATCH", c63_cuda_decoder_policy::kBatch, 1,
                                     C63_CUDA_HUFF_MAX_BATCH);
  be->n_batches =
      c63_cuda_tuning("C63_CUDA_DECODE_BATCHES", c63_cuda_decoder_policy::kBatches, 1, kMaxBatches);
  be->depth = be->gpu_entropy ? be->n_batches * be->batch_frames : kPictures;
  be->ring = be->depth > kPictures ? be->depth : kPictures;
  be->frames = static_cast<frame_rec *>(calloc((size_t)be->ring, sizeof *be->frames));
  return be->frames != nullptr;
}

int cu_create(const c63_device *dev, c63_threadpool *pool, c63_decode_backend **out,
              c63_decode_backend_info *info, char *msg, size_t msg_size)
{
  *out = nullptr;
  c63_cuda_scope scope(*dev);
  cudaError_t err = scope.error();
  if (err != cudaSuccess) return c63_cuda_error(err, "entering the CUDA context", msg, msg_size);
  c63_decode_backend *be = static_cast<c63_decode_backend *>(calloc(1, sizeof *be));
  if (!be) {
    snprintf(msg, msg_size, "out of host memory");
    return C63_ERR_NOMEM;
  }
  be->dev = *dev;
  be->pool = pool;
  const int device = c63_cuda_context_device(*dev);
  be->zero_copy = device >= 0 && c63_cuda_zero_copy(device);
  if (!plan_frames(be)) {
    free(be);
    snprintf(msg, msg_size, "out of host memory");
    return C63_ERR_NOMEM;
  }
  err = create_streams(be);
  if (err != cudaSuccess) {
    destroy_streams(be);
    free(be->frames);
    free(be);
    return c63_cuda_error(err, "creating CUDA streams and the entropy stage", msg, msg_size);
  }
  info->depth = be->depth;
  info->entropy = be->gpu_entropy;
  *out = be;
  return C63_OK;
}

void sync_all(c63_decode_backend *be)
{
  for (int i = 0; i < be->n_batches && be->gpu_entropy; i++)
    cudaStreamSynchronize(be->batch[i].stream);
  for (cudaStream_t s : {be->stream, be->down_stream, be->copy_stream})
    cudaStreamSynchronize(s);
}

void cu_destroy(c63_decode_backend *be)
{
  if (!be) return;
  c63_cuda_scope scope(be->dev);
  sync_all(be);
  free_buffers(be);
  c63_sparse_frame_free(&be->fallback);
  destroy_streams(be);
  free(be->frames);
  free(be);
}

int alloc_failed(c63_decode_backend *be, cudaError_t err, const char *what, char *msg,
                 size_t msg_size)
{
  char cuda_msg[256];
  int status = c63_cuda_error(err, what, cuda_msg, sizeof cuda_msg);
  snprintf(msg, msg_size, "CUDA device %d: %s for %dx%d: %.160s", c63_cuda_context_device(be->dev),
           what, be->g.width, be->g.height, cuda_msg);
  cudaGetLastError();
  return status;
}

int cu_resize(c63_decode_backend *be, const c63_geometry *g, char *msg, size_t msg_size)
{
  c63_cuda_scope scope(be->dev);
  cudaError_t err = scope.error();
  if (err != cudaSuccess) return c63_cuda_error(err, "entering the CUDA context", msg, msg_size);
  const size_t pix = c63_cuda_planes_init(g, &be->planes);
  const int blocks = be->planes.total_blocks;
  be->g = *g;
  be->frame_bytes = pix;
  be->blocks = (size_t)blocks;
  if (pix <= be->cap_bytes && (size_t)blocks <= be->cap_blocks) return C63_OK;

  free_buffers(be);
  const char *what = "allocating device buffers";
  err = cudaMalloc(&be->d_coeffs, (size_t)blocks * 64 * sizeof(int16_t));
  if (err == cudaSuccess) err = cudaMalloc(&be->d_start, (size_t)blocks * sizeof(uint32_t));
  if (err == cudaSuccess) err = cudaMalloc(&be->d_count, (size_t)blocks);
  if (err == cudaSuccess) err = cudaMalloc(&be->d_mvs, (size_t)blocks * sizeof(c63_mv));
  /* references: the reconstruction reads a displaced row as three aligned
   * words, which may reach past the frame; cleared, as a delta frame after
   * a failed one reads a reference that was never written (its picture is
   * not shown) */
  for (int i = 0; i < kPictures && err == cudaSuccess; i++) {
    err = cudaMalloc(&be->pic[i].rec, pix + C63_CUDA_REF_TAIL);
    if (err == cudaSuccess) err = cudaMemset(be->pic[i].rec, 0, pix + C63_CUDA_REF_TAIL);
  }
  if (err == cudaSuccess) what = "allocating pinned host buffers";
  for (int i = 0; i < kPictures && err == cudaSuccess; i++) {
    picture &o = be->pic[i];
    err = cudaHostAlloc(&o.host, pix, be->zero_copy ? cudaHostAllocMapped : cudaHostAllocDefault);
    if (err == cudaSuccess && be->zero_copy) err = cudaHostGetDevicePointer(&o.host_dev, o.host, 0);
  }
  if (err != cudaSuccess) {
    int status = alloc_failed(be, err, what, msg, msg_size);
    free_buffers(be);
    return status;
  }
  be->cap_bytes = pix;
  be->cap_blocks = (size_t)blocks;
  return C63_OK;
}

/* Room on the device for a host sparse frame's entries (they vary with
 * the frame). */
int reserve_entries(c63_decode_backend *be, size_t n, char *msg, size_t msg_size)
{
  if (n <= be->cap_entries) return C63_OK;
  /* Frames in flight may still read the old array. */
  cudaError_t err = cudaStreamSynchronize(be->stream);
  if (err != cudaSuccess) return c63_cuda_error(err, "reconstruction", msg, msg_size);
  free_entries(be);
  const size_t want = n + n / 4 + 4096; /* headroom: frames vary a little */
  err = cudaMalloc(&be->d_entries, want * sizeof(uint32_t));
  if (err != cudaSuccess) return alloc_failed(be, err, "allocating device buffers", msg, msg_size);
  be->cap_entries = want;
  return C63_OK;
}

/* The reconstruction rec into the output buffer o: by the copy engine, or
 * on the zero-copy path by a kernel writing the mapped buffer in place. */
cudaError_t write_out(const c63_decode_backend *be, const uint8_t *rec, picture &o, cudaStream_t st)
{
  if (!be->zero_copy)
    return cudaMemcpyAsync(o.host, rec, be->frame_bytes, cudaMemcpyDeviceToHost, st);
  c63_cuda_planes_copy c;
  for (int p = 0; p < 3; p++) {
    const c63_cuda_plane &pl = be->planes.p[p];
    c.src[p] = rec + pl.pix_off;
    c.dst[p] = o.host_dev + pl.pix_off;
    c.src_pitch[p] = c.dst_pitch[p] = (size_t)pl.w;
    c.w[p] = pl.w;
    c.h[p] = pl.h;
  }
  return c63_cuda_copy_planes(c, st);
}

/* A sparse frame on the device, as expand_sparse and the reconstruction
 * read it. */
struct device_sparse {
  const uint32_t *start, *entries;
  const uint8_t *count;
  const c63_mv *mvs;
};

/* Upload a host sparse frame (page-locked) into the backend's arrays. */
int upload_sparse(c63_decode_backend *be, const c63_sparse_frame *sp, device_sparse *out, char *msg,
                  size_t msg_size)
{
  int r = reserve_entries(be, sp->n_entries, msg, msg_size);
  if (r) return r;
  const size_t nb = be->blocks;
  cudaStream_t st = be->stream;
  cudaError_t err =
      cudaMemcpyAsync(be->d_start, sp->start, nb * sizeof(uint32_t), cudaMemcpyHostToDevice, st);
  if (err == cudaSuccess)
    err = cudaMemcpyAsync(be->d_count, sp->count, nb, cudaMemcpyHostToDevice, st);
  if (err == cudaSuccess)
    err = cudaMemcpyAsync(be->d_mvs, sp->mvs, nb * sizeof(c63_mv), cudaMemcpyHostToDevice, st);
  if (err == cudaSuccess && sp->n_entries)
    err = cudaMemcpyAsync(be->d_entries, sp->entries, sp->n_entries * sizeof(uint32_t),
                          cudaMemcpyHostToDevice, st);
  if (err != cudaSuccess) return c63_cuda_error(err, "uploading coefficients", msg, msg_size);
  *out = {be->d_start, be->d_entries, be->d_count, be->d_mvs};
  return C63_OK;
}

/* A frame the GPU stage handed back: c63_entropy_decode on this thread
 * into the pinned fall-back frame (once its last upload is done), then up.
 * Its failure is the frame's, as on the CPU backend. */
int decode_on_cpu(c63_decode_backend *be, frame_rec &f, device_sparse *out)
{
  const c63_decode_job *job = f.job;
  cudaError_t err = cudaEventSynchronize(be->fallback_free);
  if (err != cudaSuccess) return c63_cuda_error(err, "uploading coefficients", f.msg, sizeof f.msg);
  if (c63_sparse_frame_reserve(&be->fallback, c63_frame_blocks(job->g), job->entries_bound, 1)) {
    snprintf(f.msg, sizeof f.msg, "out of memory for a %dx%d picture", job->g->width,
             job->g->height);
    return C63_ERR_NOMEM;
  }
  int r = c63_entropy_decode(job->data, job->data_size, job->g, job->keyframe, &be->fallback, f.msg,
                             sizeof f.msg);
  if (r == C63_OK) r = upload_sparse(be, &be->fallback, out, f.msg, sizeof f.msg);
  if (r == C63_OK && (err = cudaEventRecord(be->fallback_free, be->stream)) != cudaSuccess)
    r = c63_cuda_error(err, "uploading coefficients", f.msg, sizeof f.msg);
  return r;
}

/* Frame f's sparse frame on the device: the stage's result (the
 * reconstruction stream waits for the batch's stage on the GPU), or a host
 * sparse frame uploaded. */
int sparse_of(c63_decode_backend *be, frame_rec &f, device_sparse *out)
{
  if (f.batch < 0) return upload_sparse(be, f.job->coeffs, out, f.msg, sizeof f.msg);
  if (f.verdict != C63_OK) return decode_on_cpu(be, f, out);
  const cudaError_t err = cudaStreamWaitEvent(be->stream, be->batch[f.batch].decoded, 0);
  if (err != cudaSuccess) return c63_cuda_error(err, "entropy decoding", f.msg, sizeof f.msg);
  *out = {f.out.start, f.out.entries, f.out.count, f.out.mvs};
  return C63_OK;
}

/* Enqueue frame seq's reconstruction, and its download unless it stays on
 * the device; a failure is recorded as the frame's. */
void enqueue_frame(c63_decode_backend *be, long long seq)
{
  frame_rec &f = be->frames[seq % be->ring];
  const c63_decode_job *job = f.job;
  picture &o = be->pic[seq % kPictures];
  device_sparse sp;
  if ((f.status = sparse_of(be, f, &sp)) != C63_OK) return;
  c63_cuda_planes P = be->planes;
  for (int p = 0; p < 3; p++)
    memcpy(P.p[p].quant, job->quant[p], 64);
  const uint8_t *ref = job->keyframe ? nullptr : be->pic[(seq + kPictures - 1) % kPictures].rec;
  const c63_mv *mvs = job->keyframe ? nullptr : sp.mvs;
  const size_t nb = be->blocks;
  cudaStream_t st = be->stream;
  const char *what = "reconstruction";
  /* this place's previous picture has come down, and the caller's copies
   * of it are done */
  cudaError_t err = cudaStreamWaitEvent(st, o.ready, 0);
  if (err == cudaSuccess) err = cudaStreamWaitEvent(st, o.copied, 0);
  if (err == cudaSuccess) {
    expand_sparse<<<(unsigned)((nb + kExpandBlocks - 1) / kExpandBlocks), 64 * kExpandBlocks, 0,
                    st>>>(sp.start, sp.count, sp.entries, (int)nb, be->d_coeffs);
    err = cudaGetLastError();
  }
  if (err == cudaSuccess) err = c63_cuda_dequant_idct_recon(be->d_coeffs, ref, mvs, P, o.rec, st);
  if (err == cudaSuccess) err = cudaEventRecord(o.reconstructed, st);
  if (err == cudaSuccess && !job->device_out) {
    what = "downloading the picture";
    err = cudaStreamWaitEvent(be->down_stream, o.reconstructed, 0);
    if (err == cudaSuccess) err = write_out(be, o.rec, o, be->down_stream);
    if (err == cudaSuccess) err = cudaEventRecord(o.ready, be->down_stream);
  } else if (err == cudaSuccess) {
    err = cudaEventRecord(o.ready, st);
  }
  if (err != cudaSuccess) {
    f.status = c63_cuda_error(err, what, f.msg, sizeof f.msg);
    return;
  }
  o.device = job->device_out ? o.rec : nullptr;
}

/* Launch a due batch once the reconstructions of all frames of its last
 * launch are enqueued (consumed is recorded after the last of them): its
 * stage overwrites their sparse frames in device memory. */
void launch_if_free(c63_decode_backend *be, c63_cuda_decode_batch *b)
{
  if (b->state == c63_batch_state::due && be->enqueued >= b->readers_end)
    c63_cuda_decode_batch_launch(b, &be->g);
}

/* The filling batch takes no more frames, and is launched as soon as it
 * may be; the next one in turn takes the next frames. */
void close_filling(c63_decode_backend *be)
{
  c63_cuda_decode_batch *b = &be->batch[be->filling];
  b->state = c63_batch_state::due;
  be->filling = (be->filling + 1) % be->n_batches;
  launch_if_free(be, b);
}

/* Frame seq's reconstruction was just enqueued (or failed): if it was the
 * last reader of its batch's results, record consumed after it, which the
 * batch's next stage waits for, and launch the batch if it is due. */
void results_read(c63_decode_backend *be, long long seq)
{
  const frame_rec &f = be->frames[seq % be->ring];
  if (f.batch < 0) return;
  c63_cuda_decode_batch *b = &be->batch[f.batch];
  if (seq + 1 != b->readers_end) return;
  if (cudaEventRecord(b->consumed, be->stream) != cudaSuccess) {
    cudaGetLastError();
    b->unordered = true;
  }
  launch_if_free(be, b);
}

/* Read a launched batch's verdicts into its frames; wait for its stage or
 * not. Returns false while it runs. */
bool resolve_batch(c63_decode_backend *be, c63_cuda_decode_batch *b, bool wait)
{
  if (b->state != c63_batch_state::launched) return true;
  if (c63_cuda_decode_batch_resolve(b, wait) == cudaErrorNotReady) return false;
  for (int i = 0; i < b->n; i++) {
    frame_rec &f = be->frames[(b->first + i) % be->ring];
    f.verdict = c63_cuda_decode_batch_verdict(b, i, &f.out);
    f.resolved = true;
  }
  return true;
}

/* Whether frame seq's sparse frame can be had: its batch launched (the
 * collected frame's is, at once: every frame before it was collected, so
 * its batch is free) and decoded (waited for by the collected frame
 * only). */
bool frame_decoded(c63_decode_backend *be, long long seq)
{
  frame_rec &f = be->frames[seq % be->ring];
  if (f.batch < 0 || f.resolved) return true;
  const bool oldest = seq == be->collected;
  c63_cuda_decode_batch *b = &be->batch[f.batch];
  if (b->state == c63_batch_state::filling) {
    if (!oldest) return false;
    close_filling(be);
  }
  if (b->state == c63_batch_state::due) return false;
  return resolve_batch(be, b, oldest);
}

/* Enqueue the frames from the oldest on, up to kPictures of them, as far as
 * their entropy decoding allows; never past a failed frame that is not
 * collected yet. */
void fill_window(c63_decode_backend *be)
{
  const long long limit = be->collected + kPictures;
  while (be->enqueued < be->submitted && be->enqueued < limit) {
    if (be->enqueued > be->collected && be->frames[(be->enqueued - 1) % be->ring].status != C63_OK)
      return;
    if (!frame_decoded(be, be->enqueued)) return;
    enqueue_frame(be, be->enqueued);
    results_read(be, be->enqueued++);
  }
}

/* Stage a job's bytes into the filling batch (its stage's earlier results
 * go to their frames first); a full batch is launched. Sets the frame's
 * batch. */
int stage_bytes(c63_decode_backend *be, const c63_decode_job *job, int *batch, char *msg,
                size_t msg_size)
{
  c63_cuda_decode_batch *b = &be->batch[be->filling];
  if (b->state == c63_batch_state::launched || b->state == c63_batch_state::resolved) {
    resolve_batch(be, b, true);
    b->state = c63_batch_state::empty;
  }
  if (b->state == c63_batch_state::empty) c63_cuda_decode_batch_begin(b, be->submitted);
  if (c63_cuda_decode_batch_add(b, job->data, job->data_size, job->keyframe, job->entries_bound) <
      0) {
    snprintf(msg, msg_size, "out of page-locked memory for a %zu-byte frame", job->data_size);
    if (!b->n) b->state = c63_batch_state::empty;
    return C63_ERR_NOMEM;
  }
  *batch = be->filling;
  if (b->n == b->capacity) close_filling(be);
  return C63_OK;
}

int cu_submit(c63_decode_backend *be, const c63_decode_job *job, char *msg, size_t msg_size)
{
  if (be->submitted - be->collected == be->depth) {
    snprintf(msg, msg_size, "more than %d frames submitted", be->depth);
    return C63_ERR_INVALID_ARG;
  }
  if (!job->coeffs != be->gpu_entropy) {
    snprintf(msg, msg_size, "a job with%s coefficients", job->coeffs ? "" : "out");
    return C63_ERR_INVALID_ARG;
  }
  c63_cuda_scope scope(be->dev);
  cudaError_t err = scope.error();
  if (err != cudaSuccess) return c63_cuda_error(err, "entering the CUDA context", msg, msg_size);
  int batch = -1;
  if (be->gpu_entropy) {
    int r = stage_bytes(be, job, &batch, msg, msg_size);
    if (r) return r;
  }
  frame_rec &f = be->frames[be->submitted % be->ring];
  f.job = job; /* read until collected: the decoder may correct its tables */
  f.batch = batch;
  f.resolved = false;
  f.status = C63_OK;
  f.msg[0] = '\0';
  be->submitted++;
  return C63_OK;
}

int cu_collect(c63_decode_backend *be, c63_decode_job *job, char *msg, size_t msg_size)
{
  if (be->collected == be->submitted) {
    snprintf(msg, msg_size, "no frame submitted");
    return C63_ERR_INVALID_ARG;
  }
  c63_cuda_scope scope(be->dev);
  cudaError_t err = scope.error();
  if (err != cudaSuccess) return c63_cuda_error(err, "entering the CUDA context", msg, msg_size);
  const long long seq = be->collected;
  fill_window(be);
  frame_rec &f = be->frames[seq % be->ring];
  be->collected++;
  if (f.status != C63_OK) {
    snprintf(msg, msg_size, "%s", f.msg);
    return f.status;
  }
  picture &o = be->pic[seq % kPictures];
  err = cudaEventSynchronize(o.ready);
  if (err != cudaSuccess) return c63_cuda_error(err, "reconstruction", msg, msg_size);
  const uint8_t *base = o.device ? o.device : o.host;
  for (int p = 0; p < 3; p++) {
    job->out[p] = base + be->planes.p[p].pix_off;
    job->out_stride[p] = be->planes.p[p].w;
  }
  return C63_OK;
}

/* The caller drains, and submits nothing more until every frame is
 * collected: the filling batch is closed now, so that its stage runs while
 * the frames before it are reconstructed. It is launched once the frames
 * of its previous launch are enqueued, which a partial batch's are not
 * yet: frames after them are still held. */
void cu_start(c63_decode_backend *be)
{
  if (!be->gpu_entropy || be->batch[be->filling].state != c63_batch_state::filling) return;
  c63_cuda_scope scope(be->dev);
  if (scope.error() == cudaSuccess) close_filling(be);
}

/* Everything in flight is dropped: the streams are let finish, the batches
 * emptied. */
void cu_drop(c63_decode_backend *be)
{
  c63_cuda_scope scope(be->dev);
  sync_all(be);
  for (int i = 0; i < be->n_batches; i++) {
    c63_cuda_decode_batch_wait_copies(&be->batch[i]);
    be->batch[i].state = c63_batch_state::empty;
    be->batch[i].readers_end = 0;
    be->batch[i].unordered = false;
  }
  be->filling = 0;
  be->submitted = be->enqueued = be->collected = 0;
}

/* Planes between host and device memory, in any direction (unified
 * addressing tells the copy engine which). */
int cu_copy(c63_decode_backend *be, const uint8_t *const src[3], const int src_stride[3],
            uint8_t *const dst[3], const int dst_stride[3], const int w[3], const int h[3],
            char *msg, size_t msg_size)
{
  c63_cuda_scope scope(be->dev);
  cudaError_t err = scope.error();
  c63_cuda_host_copy_begin(); /* the host side may be registered memory */
  for (int p = 0; p < 3 && err == cudaSuccess; p++)
    err = cudaMemcpy2DAsync(dst[p], dst_stride[p], src[p], src_stride[p], w[p], h[p],
                            cudaMemcpyDefault, be->copy_stream);
  if (err == cudaSuccess) err = cudaStreamSynchronize(be->copy_stream);
  c63_cuda_host_copy_end();
  if (err != cudaSuccess) return c63_cuda_error(err, "copying a picture", msg, msg_size);
  return C63_OK;
}

/* The place of the ring whose picture src is, or nullptr. */
picture *place_of(c63_decode_backend *be, const uint8_t *src)
{
  const size_t bytes = be->frame_bytes;
  for (picture &o : be->pic)
    for (const uint8_t *base : {(const uint8_t *)o.rec, (const uint8_t *)o.host})
      if (base && src >= base && src < base + bytes) return &o;
  return nullptr;
}

int cu_copy_wait(c63_decode_backend *be, uint64_t ticket)
{
  uint64_t done = __atomic_load_n(&be->copies_done, __ATOMIC_ACQUIRE);
  if (ticket <= done) return C63_OK;
  c63_cuda_scope scope(be->dev);
  cudaError_t err = scope.error();
  /* An event recorded again meanwhile (a later ticket) is waited for
   * instead: later, never too early. */
  if (err == cudaSuccess) err = cudaEventSynchronize(be->copy_done[ticket % C63_COPIES_IN_FLIGHT]);
  if (err != cudaSuccess) return C63_ERR_BACKEND;
  while (done < ticket && !__atomic_compare_exchange_n(&be->copies_done, &done, ticket, true,
                                                       __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
    ;
  return C63_OK;
}

/* Copies the caller waits for later: each on the copy stream after the
 * previous ones, with its ticket's event recorded behind it, and the
 * picture's place (when it is one) told to wait for it before it is
 * written again. */
int cu_copy_async(c63_decode_backend *be, const uint8_t *const src[3], const int src_stride[3],
                  uint8_t *const dst[3], const int dst_stride[3], const int w[3], const int h[3],
                  uint64_t *ticket, char *msg, size_t msg_size)
{
  const uint64_t t = be->copies_started + 1;
  if (t > C63_COPIES_IN_FLIGHT && cu_copy_wait(be, t - C63_COPIES_IN_FLIGHT) != C63_OK) {
    snprintf(msg, msg_size, "the GPU failed an earlier copy of a picture");
    return C63_ERR_BACKEND;
  }
  c63_cuda_scope scope(be->dev);
  cudaError_t err = scope.error();
  /* By the copy engine whatever the memory, device to device too: a
   * kernel would wait for multiprocessors behind the blocks of the batches'
   * entropy stages, and the ring place, and with it the decoding, behind
   * the kernel. */
  c63_cuda_host_copy_begin();
  for (int p = 0; p < 3 && err == cudaSuccess; p++)
    err = cudaMemcpy2DAsync(dst[p], dst_stride[p], src[p], src_stride[p], w[p], h[p],
                            cudaMemcpyDefault, be->copy_stream);
  c63_cuda_host_copy_end();
  if (err == cudaSuccess)
    err = cudaEventRecord(be->copy_done[t % C63_COPIES_IN_FLIGHT], be->copy_stream);
  picture *o = place_of(be, src[0]);
  if (err == cudaSuccess && o) err = cudaEventRecord(o->copied, be->copy_stream);
  if (err != cudaSuccess) return c63_cuda_error(err, "copying a picture", msg, msg_size);
  be->copies_started = t;
  *ticket = t;
  return C63_OK;
}

} // namespace

extern "C" const c63_decode_backend_ops c63_decode_backend_cuda = {
    "cuda",  1,       cu_create, cu_destroy, cu_resize,     cu_submit,    cu_collect,
    cu_drop, cu_copy, 1,         cu_start,   cu_copy_async, cu_copy_wait,
};
