/* The CUDA backend (c63_backend_ops): the whole encoder on the GPU, from
 * the visible pixels to the stuffed entropy-coded data, with the reference
 * frame resident on the device.
 *
 * Everything is allocated in create for the geometry. Per in-flight slot:
 * pinned staging for the visible planes, the padded frame on the device (so
 * the upload of one frame runs ahead of the kernels of another), the
 * coefficients and vectors, a device payload buffer, and mapped pinned
 * memory the GPU writes the coded frame into. Shared: two reconstructions
 * (ping-pong) and the entropy coder's buffers.
 *
 * Per frame: the host copies the picture into the slot's staging (the only
 * per-frame CPU work; skipped when the picture is in page-locked or device
 * memory already; for a borrowed picture the pool's threads copy it after
 * submit returns, and the copy stream waits for them), the copy stream
 * uploads it row by row into the slot's zero-padded frame (on a GPU that
 * shares the host's memory, c63_cuda_zero_copy, a kernel on that stream
 * reads the page-locked picture or staging in place instead), the compute
 * stream waits for that upload, searches, transforms and reconstructs, and
 * the coding stream then entropy codes, writes the payload to the host and
 * records the slot's event.
 * The search and transform of a frame depend on the previous frame's
 * reconstruction, so one stream orders them (and the reconstructions are
 * safe); entropy coding depends only on the frame's own coefficients, so it
 * runs on a stream of its own, beside the next frame's search: its small,
 * latency-bound kernels fill the multiprocessors the search leaves idle.
 * The coding stream orders the frames' entropy coding (its buffers are
 * shared); the coefficients and vectors are the slot's.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "c63/c63.h"
#include "cuda/c63_cuda.h"
#include "cuda/c63_cuda_internal.h"
#include "cuda/c63_cuda_policy.cuh"

#include "c63/rd.h"

extern "C" {
#include "c63/frame_syntax.h"
#include "c63/stream_copy.h"
#include "c63/threadpool.h"
}

namespace
{

/* The backend's tuning (c63_cuda_policy.cuh). */
using policy = c63_cuda_backend_policy;
constexpr int kMaxSlots = policy::kMaxSlots;
/* The payload starts 16-byte aligned (copy_out stores 16 bytes at a time)
 * with room for the headers before it. */
constexpr size_t kHeaderRoom = (C63_FRAME_HEADER_BYTES + 15) & ~(size_t)15;

enum {
  EV_START,    /* copy stream: before the upload */
  EV_UPLOADED, /* copy stream */
  EV_COMPUTE,  /* compute stream: the upload is in, kernels start */
  EV_SEARCHED, /* motion search */
  EV_RECONSTRUCTED,
  EV_CODED, /* entropy coding and stuffing */
  EV_END,   /* payload written to the host */
  EV_COUNT
};

double now_ms()
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

/* A picture's copy into a slot's staging: what its slices read and write. */
struct copy_task {
  const c63_backend *be;
  const c63_frame_job *job;
  uint8_t *dst;
  int slices;
};

/* A borrowed picture's copy into a slot's staging, by the pool's threads
 * while the caller goes on; the copy stream waits for it (wait_staging)
 * before it uploads the staging. */
struct staging_copy {
  copy_task task;
  c63_task tasks[policy::kLentCopySlices];
  int queued; /* slices queued and not yet waited for */
};

struct slot {
  uint8_t *h_in;      /* pinned: visible Y, U, V back to back, tight */
  uint8_t *h_in_dev;  /* h_in as the device sees it (zero-copy: mapped) */
  uint8_t *d_cur;     /* device: the padded frame; uploads write only the
                         visible pixels, so the padding stays zero */
  uint8_t *d_uv;      /* device: NV12's interleaved chroma, before the split */
  uint8_t *h_out;     /* pinned, mapped: header room, payload, trailer room */
  uint8_t *h_out_dev; /* h_out as the device sees it */
  uint32_t *h_size;   /* pinned, mapped: the payload's size */
  uint32_t *h_size_dev;
  uint8_t *d_out;     /* device: the frame's coefficients, then its vectors */
  uint8_t *d_payload; /* device: the stuffed payload, kept until collect */
  uint32_t *d_size;
  staging_copy staging;
  cudaEvent_t uploaded, transformed, done;
  cudaEvent_t ev[EV_COUNT];
  bool timed;
  double submit_ms; /* host time spent in submit */
  c63_frame_job *job;
};

} // namespace

struct c63_backend {
  c63_geometry g;
  c63_device dev;                    /* the context everything below lives in */
  int device;                        /* its ordinal */
  bool zero_copy;                    /* kernels read pictures in host memory in place */
  cudaStream_t copy, stream, coding; /* uploads; search and transform; entropy coding */
  size_t in_bytes;                   /* visible Y + U + V */
  size_t frame_bytes;                /* padded Y + U + V */
  size_t mv_offset;                  /* of the vectors in a slot's d_out */
  size_t out_capacity;               /* payload bytes that fit into a slot's h_out */
  uint8_t *d_rec[2];
  int rec;       /* index of the latest reconstruction in d_rec */
  bool have_ref; /* d_rec[rec] holds a reconstruction */
  c63_cuda_planes planes;
  size_t in_off[3]; /* of each visible plane in a slot's h_in */
  c63_cuda_entropy *entropy;
  c63_cuda_rd *rd; /* the rd mode's buffers, from its first frame on */
  /* A payload larger than out_capacity (noise at fine quantisers) comes
   * back through this buffer instead, with the same room around it. */
  uint8_t *big;
  size_t big_size;
  /* Copying the caller's picture into pinned staging is the backend's only
   * per-frame CPU work; large frames split it over the pool's threads. */
  c63_threadpool *pool; /* the encoder's, borrowed */
  int copy_slices;      /* of a copy the caller waits for */
  int lent_copy_slices; /* of a borrowed picture's copy */
  slot slots[kMaxSlots];
  int n_slots; /* in use: the policy's, or C63_CUDA_ENCODE_SLOTS */
  int head, count;
  /* Stage timings (c63_stage_stats), while timing is on. */
  bool timing;
  c63_stage_stats stats;
};

namespace
{

int16_t *d_coeffs(const slot &s)
{
  return reinterpret_cast<int16_t *>(s.d_out);
}

c63_mv *d_mvs(const c63_backend *be, const slot &s)
{
  return reinterpret_cast<c63_mv *>(s.d_out + be->mv_offset);
}

/* Wait until a slot's staging copy is done (none queued: at once). Runs on
 * CUDA's host-function thread as a gate on the copy stream, and on the
 * caller's where the slot is collected or freed. */
void wait_staging(staging_copy &c)
{
  for (int i = 0; i < c.queued; i++)
    c63_task_wait(c.task.be->pool, &c.tasks[i]);
}

/* Inside the backend's context. */
void release(c63_backend *be)
{
  for (slot &s : be->slots)
    wait_staging(s.staging);
  if (be->copy) cudaStreamSynchronize(be->copy);
  if (be->stream) cudaStreamSynchronize(be->stream);
  if (be->coding) cudaStreamSynchronize(be->coding);
  for (int i = 0; i < kMaxSlots; i++) {
    slot &s = be->slots[i];
    cudaFreeHost(s.h_in);
    cudaFreeHost(s.h_out);
    cudaFreeHost(s.h_size);
    cudaFree(s.d_cur);
    cudaFree(s.d_uv);
    cudaFree(s.d_out);
    cudaFree(s.d_payload);
    cudaFree(s.d_size);
    if (s.uploaded) cudaEventDestroy(s.uploaded);
    if (s.transformed) cudaEventDestroy(s.transformed);
    if (s.done) cudaEventDestroy(s.done);
    for (int e = 0; e < EV_COUNT; e++)
      if (s.ev[e]) cudaEventDestroy(s.ev[e]);
  }
  c63_cuda_entropy_destroy(be->entropy);
  c63_cuda_rd_destroy(be->rd);
  cudaFree(be->d_rec[0]);
  cudaFree(be->d_rec[1]);
  if (be->copy) cudaStreamDestroy(be->copy);
  if (be->stream) cudaStreamDestroy(be->stream);
  if (be->coding) cudaStreamDestroy(be->coding);
  free(be->big);
  free(be);
}

void init_layout(c63_backend *be, const c63_geometry *g)
{
  const c63_cuda_planes &P = be->planes;
  be->frame_bytes = c63_cuda_planes_init(g, &be->planes);
  size_t in = 0;
  for (int p = 0; p < 3; p++) {
    be->in_off[p] = in;
    in += (size_t)g->pic_w[p] * g->pic_h[p];
  }
  be->in_bytes = in;
  be->mv_offset = ((size_t)P.total_blocks * 64 * sizeof(int16_t) + 255) & ~(size_t)255;
  /* Coded frames rarely reach the raw frame's size; twice that covers
   * noise at quality 50, and anything larger takes the slow path. */
  be->out_capacity = (2 * be->frame_bytes + 4096) & ~(size_t)15;
}

cudaError_t alloc_slot(c63_backend *be, slot &s, size_t payload_bytes, const char **what)
{
  *what = "allocating pinned host buffers";
  cudaError_t err = cudaHostAlloc(&s.h_in, be->in_bytes,
                                  be->zero_copy ? cudaHostAllocMapped : cudaHostAllocDefault);
  if (err == cudaSuccess && be->zero_copy) err = cudaHostGetDevicePointer(&s.h_in_dev, s.h_in, 0);
  if (err == cudaSuccess)
    err = cudaHostAlloc(&s.h_out, kHeaderRoom + be->out_capacity + 16, cudaHostAllocMapped);
  if (err == cudaSuccess) err = cudaHostAlloc(&s.h_size, sizeof(uint32_t), cudaHostAllocMapped);
  if (err == cudaSuccess) err = cudaHostGetDevicePointer(&s.h_out_dev, s.h_out, 0);
  if (err == cudaSuccess) err = cudaHostGetDevicePointer(&s.h_size_dev, s.h_size, 0);
  if (err != cudaSuccess) return err;
  *what = "allocating device buffers";
  err = cudaMalloc(&s.d_cur, be->frame_bytes);
  if (err == cudaSuccess) err = cudaMemset(s.d_cur, 0, be->frame_bytes);
  if (err == cudaSuccess) err = cudaMalloc(&s.d_uv, 2 * (size_t)be->g.pic_w[1] * be->g.pic_h[1]);
  if (err == cudaSuccess)
    err = cudaMalloc(&s.d_out, be->mv_offset + (size_t)be->planes.total_blocks * sizeof(c63_mv));
  /* +16: copy_out reads whole 16-byte words, the last one past the
   * payload's end: zeroed once, so no read is of uninitialised memory */
  if (err == cudaSuccess) err = cudaMalloc(&s.d_payload, payload_bytes + 16);
  if (err == cudaSuccess) err = cudaMemset(s.d_payload, 0, payload_bytes + 16);
  if (err == cudaSuccess) err = cudaMalloc(&s.d_size, sizeof(uint32_t));
  if (err != cudaSuccess) return err;
  *what = "creating CUDA events";
  err = cudaEventCreateWithFlags(&s.done, cudaEventDisableTiming);
  if (err == cudaSuccess) err = cudaEventCreateWithFlags(&s.uploaded, cudaEventDisableTiming);
  if (err == cudaSuccess) err = cudaEventCreateWithFlags(&s.transformed, cudaEventDisableTiming);
  for (int e = 0; e < EV_COUNT && err == cudaSuccess; e++)
    err = cudaEventCreate(&s.ev[e]);
  return err;
}

/* Slices of the staging copy of a picture of in_bytes: one a thread, each
 * at least kCopySliceBytes. */
int copy_slices(size_t in_bytes, int threads)
{
  size_t n = in_bytes / policy::kCopySliceBytes;
  if (n > (size_t)policy::kCopySlices) n = policy::kCopySlices;
  if (n > (size_t)threads) n = (size_t)threads;
  return n < 1 ? 1 : (int)n;
}

int cu_create(const c63_geometry *g, const c63_device *dev, c63_threadpool *pool, c63_backend **out,
              char *msg, size_t msg_size)
{
  *out = nullptr;
  char why[256];
  if (c63_cuda_device_count(why, sizeof why) <= 0) {
    snprintf(msg, msg_size, "CUDA backend unavailable: %s", why);
    return C63_ERR_NO_DEVICE;
  }
  int count = 0;
  cudaGetDeviceCount(&count);
  const int device_id = c63_cuda_context_device(*dev);
  if (device_id < 0 || device_id >= count) {
    if (dev->cuda_context)
      snprintf(msg, msg_size, "the CUDA context given is not usable");
    else
      snprintf(msg, msg_size, "CUDA device %d does not exist (%d device%s found)", device_id, count,
               count == 1 ? "" : "s");
    return C63_ERR_NO_DEVICE;
  }
  c63_cuda_scope scope(*dev);
  cudaError_t err = scope.error();
  if (err != cudaSuccess) return c63_cuda_error(err, "entering the CUDA context", msg, msg_size);

  c63_backend *be = static_cast<c63_backend *>(calloc(1, sizeof *be));
  if (!be) {
    snprintf(msg, msg_size, "out of host memory");
    return C63_ERR_NOMEM;
  }
  be->g = *g;
  be->dev = *dev;
  be->device = device_id;
  be->zero_copy = c63_cuda_zero_copy(device_id);
  init_layout(be, g);

  /* The encoder's pool copies pageable input into pinned staging, a slice
   * per thread for large frames (c63_cuda_backend_policy). */
  be->pool = pool;
  be->copy_slices = copy_slices(be->in_bytes, c63_threadpool_size(pool));
  /* the caller does not take part in a borrowed picture's copy */
  be->lent_copy_slices = copy_slices(be->in_bytes, c63_threadpool_size(pool) - 1);
  if (be->lent_copy_slices > policy::kLentCopySlices)
    be->lent_copy_slices = policy::kLentCopySlices;

  const char *what = "creating the CUDA streams";
  err = cudaStreamCreateWithFlags(&be->stream, cudaStreamNonBlocking);
  if (err == cudaSuccess) err = cudaStreamCreateWithFlags(&be->copy, cudaStreamNonBlocking);
  if (err == cudaSuccess) err = cudaStreamCreateWithFlags(&be->coding, cudaStreamNonBlocking);
  what = "allocating device buffers";
  for (int i = 0; i < 2 && err == cudaSuccess; i++) {
    err = cudaMalloc(&be->d_rec[i], be->frame_bytes + C63_CUDA_REF_TAIL);
    if (err == cudaSuccess) err = cudaMemset(be->d_rec[i] + be->frame_bytes, 0, C63_CUDA_REF_TAIL);
  }
  if (err == cudaSuccess) {
    what = "allocating the entropy coder's device buffers";
    err = c63_cuda_entropy_create(c63_cuda_entropy_layout(g), &be->entropy);
  }
  be->n_slots = c63_cuda_tuning("C63_CUDA_ENCODE_SLOTS", policy::kSlots, 1, kMaxSlots);
  for (int i = 0; i < be->n_slots && err == cudaSuccess; i++)
    err = alloc_slot(be, be->slots[i], c63_cuda_entropy_max_payload(be->entropy), &what);
  /* The frames' zero padding is cleared by cudaMemset on the legacy default
   * stream, which may still be running when it returns; the uploads go on
   * streams that do not wait for that one. */
  if (err == cudaSuccess) {
    what = "clearing device buffers";
    err = cudaStreamSynchronize(0);
  }
  if (err != cudaSuccess) {
    char cuda_msg[256];
    int status = c63_cuda_error(err, what, cuda_msg, sizeof cuda_msg);
    snprintf(msg, msg_size, "CUDA device %d: %s for %dx%d: %s", device_id, what, g->width,
             g->height, cuda_msg);
    cudaGetLastError();
    release(be);
    return status;
  }
  *out = be;
  return C63_OK;
}

void cu_destroy(c63_backend *be)
{
  if (!be) return;
  c63_cuda_scope scope(be->dev);
  release(be);
}

/* One slice of the staging copy: rows [y0, y1) of every visible plane. */
void copy_slice(void *arg, int i)
{
  const copy_task *t = static_cast<const copy_task *>(arg);
  const bool nv12 = t->job->nv12;
  for (int p = 0; p < (nv12 ? 2 : 3); p++) {
    /* NV12's interleaved chroma takes the room of U and V (back to back) */
    const int w = nv12 && p ? 2 * t->be->g.pic_w[1] : t->be->g.pic_w[p];
    const int h = t->be->g.pic_h[p];
    const int y0 = (int)((long)h * i / t->slices), y1 = (int)((long)h * (i + 1) / t->slices);
    const uint8_t *src = t->job->src[p] + (size_t)y0 * t->job->src_stride[p];
    uint8_t *dst = t->dst + t->be->in_off[p] + (size_t)y0 * w;
    /* read next by the DMA engines, not the CPU (stream_copy.h) */
    c63_copy_streaming_rows(dst, (size_t)w, src, (size_t)t->job->src_stride[p], (size_t)w,
                            (size_t)(y1 - y0));
  }
}

/* Queue a borrowed picture's copy into the slot's staging on the pool:
 * the slices run while the caller goes on. */
void start_staging(c63_backend *be, const c63_frame_job *job, slot &s)
{
  staging_copy &c = s.staging;
  c.task = {be, job, s.h_in, be->lent_copy_slices};
  c.queued = c.task.slices;
  c63_threadpool_submit_n(be->pool, c.tasks, c.queued, copy_slice, &c.task);
}

void CUDART_CB staging_gate(void *arg)
{
  wait_staging(*static_cast<staging_copy *>(arg));
}

/* Whether the DMA engines can read every plane of the picture where it is:
 * page-locked host memory (registered, or from cudaHostAlloc, as a pinned
 * buffer pool gives) or device memory. Then it is uploaded straight from
 * there, without the staging copy on the CPU. */
/* Whether a plane of the picture lies in memory registered through libc63,
 * whose unregistering waits only for the copies bracketed at the time. */
bool in_registration(const c63_frame_job *job)
{
  for (int p = 0; p < (job->nv12 ? 2 : 3); p++)
    if (c63_cuda_host_in_registration(job->src[p])) return true;
  return false;
}

bool dma_readable(const c63_frame_job *job)
{
  for (int p = 0; p < (job->nv12 ? 2 : 3); p++) {
    cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, job->src[p]) != cudaSuccess) {
      cudaGetLastError();
      return false;
    }
    if (a.type != cudaMemoryTypeHost && a.type != cudaMemoryTypeDevice) return false;
  }
  return true;
}

/* Whether kernels can read every plane of the picture where it is, and
 * the addresses they read it through (zero-copy path). */
bool mapped_readable(const c63_frame_job *job, const uint8_t *dev[3])
{
  for (int p = 0; p < (job->nv12 ? 2 : 3); p++) {
    dev[p] = c63_cuda_mapped(job->src[p]);
    if (!dev[p]) return false;
  }
  return true;
}

void record(const slot &s, int e, cudaStream_t st)
{
  if (s.timed) cudaEventRecord(s.ev[e], st);
}

/* A frame on its way through submit (upload, compute, code, download):
 * its job and slot, the planes with the frame's quantisers and ranges,
 * and the stage running, for an error message. */
struct submit_frame {
  c63_backend *be;
  c63_frame_job *job;
  slot &s;
  c63_cuda_planes P;
  bool direct;           /* uploaded straight from the caller's picture */
  bool lent_direct;      /* direct, and the upload may outlive submit */
  const uint8_t *src[3]; /* zero-copy: where the kernels read each plane */
  const uint8_t *ref;    /* the previous reconstruction; NULL for a keyframe */
  const c63_mv *mvs;     /* the vectors the transform reads; NULL for a keyframe */
  uint8_t *recon;        /* the frame's reconstruction, the next reference */
  const char *what;
};

/* Why a job cannot be submitted (a c63_status with msg set), or 0. */
int check_submit(const c63_backend *be, const c63_frame_job *job, char *msg, size_t msg_size)
{
  if (be->count >= be->n_slots) {
    snprintf(msg, msg_size, "CUDA backend: more than %d frames in flight", be->n_slots);
    return C63_ERR_AGAIN;
  }
  if (!job->keyframe && !be->have_ref) {
    snprintf(msg, msg_size, "CUDA backend: a delta frame needs a preceding keyframe");
    return C63_ERR_INVALID_ARG;
  }
  if (job->search_range < C63_MIN_SEARCH_RANGE || job->search_range > C63_MAX_SEARCH_RANGE) {
    snprintf(msg, msg_size, "CUDA backend: search range %d outside %d..%d", job->search_range,
             C63_MIN_SEARCH_RANGE, C63_MAX_SEARCH_RANGE);
    return C63_ERR_INVALID_ARG;
  }
  return C63_OK;
}

/* The frame's picture into the slot's staging unless the DMA engines can
 * read it where it is, and what its kernels read and write. The slot's
 * previous frame was collected, so its buffers are free. A picture read
 * where it is keeps registrations from ending (c63_cuda_host_copy_begin)
 * until wait_for_direct_upload: the driver's answer holds until then. */
submit_frame prepare_frame(c63_backend *be, c63_frame_job *job, slot &s)
{
  submit_frame f = {be,      job,     s,       be->planes,           false, false, {},
                    nullptr, nullptr, nullptr, "uploading the frame"};
  c63_cuda_host_copy_begin();
  f.direct = be->zero_copy ? mapped_readable(job, f.src) : dma_readable(job);
  f.lent_direct = f.direct && job->borrowed && !in_registration(job);
  s.staging.queued = 0;
  if (!f.direct) {
    c63_cuda_host_copy_end();
    /* A pool without workers would copy only when the gate waits, on
     * CUDA's thread: there the caller's thread copies at once. */
    if (job->borrowed && c63_threadpool_size(be->pool) > 1) {
      start_staging(be, job, s);
    } else {
      copy_task task = {be, job, s.h_in, be->copy_slices};
      c63_threadpool_run(be->pool, copy_slice, &task, task.slices);
    }
  }
  for (int p = 0; p < 3; p++) {
    memcpy(f.P.p[p].quant, job->quant[p], 64);
    f.P.p[p].range = p == 0 ? job->search_range : job->search_range / 2;
  }
  f.ref = job->keyframe ? nullptr : be->d_rec[be->rec];
  f.mvs = job->keyframe ? nullptr : d_mvs(be, s);
  f.recon = be->d_rec[be->have_ref ? be->rec ^ 1 : be->rec];
  return f;
}

/* Zero-copy upload, on the copy stream: kernels read the picture (or the
 * staging) in place through its mapped address and write the padded frame
 * the search and transform read many times over, in device memory. */
cudaError_t read_in_place(submit_frame &f)
{
  c63_backend *be = f.be;
  const c63_frame_job *job = f.job;
  cudaError_t err = cudaSuccess;
  for (int p = 0; p < (job->nv12 ? 2 : 3) && err == cudaSuccess; p++) {
    const uint8_t *src = f.direct ? f.src[p] : f.s.h_in_dev + be->in_off[p];
    const int w = be->g.pic_w[p];
    const size_t pitch =
        f.direct ? (size_t)job->src_stride[p] : (size_t)(job->nv12 && p ? 2 * w : w);
    uint8_t *dst = f.s.d_cur + f.P.p[p].pix_off;
    if (job->nv12 && p == 1)
      err = c63_cuda_split_uv(src, pitch, w, be->g.pic_h[1], dst, f.s.d_cur + f.P.p[2].pix_off,
                              f.P.p[1].w, be->copy);
    else
      err = c63_cuda_copy_plane(src, pitch, dst, f.P.p[p].w, w, be->g.pic_h[p], be->copy);
  }
  return err;
}

/* Upload, on the copy stream: row by row into the padded frame (the copy
 * engine does the padding); NV12's chroma goes up as it is and is split
 * on the GPU. */
cudaError_t upload(submit_frame &f)
{
  c63_backend *be = f.be;
  const c63_frame_job *job = f.job;
  slot &s = f.s;
  cudaError_t err = cudaSuccess;
  if (s.staging.queued) err = cudaLaunchHostFunc(be->copy, staging_gate, &s.staging);
  if (err != cudaSuccess) return err;
  record(s, EV_START, be->copy);
  if (be->zero_copy) {
    err = read_in_place(f);
    record(s, EV_UPLOADED, be->copy);
    return err == cudaSuccess ? cudaEventRecord(s.uploaded, be->copy) : err;
  }
  for (int p = 0; p < (job->nv12 ? 2 : 3) && err == cudaSuccess; p++) {
    const bool uv = job->nv12 && p == 1;
    const int row = uv ? 2 * be->g.pic_w[1] : be->g.pic_w[p];
    const uint8_t *src = f.direct ? job->src[p] : s.h_in + be->in_off[p];
    const size_t pitch = f.direct ? (size_t)job->src_stride[p] : (size_t)row;
    if (uv)
      err = cudaMemcpy2DAsync(s.d_uv, row, src, pitch, row, be->g.pic_h[1], cudaMemcpyDefault,
                              be->copy);
    else
      err = cudaMemcpy2DAsync(s.d_cur + f.P.p[p].pix_off, f.P.p[p].w, src, pitch, row,
                              be->g.pic_h[p], cudaMemcpyDefault, be->copy);
  }
  if (err == cudaSuccess && job->nv12)
    err = c63_cuda_split_uv(s.d_uv, 2 * (size_t)be->g.pic_w[1], be->g.pic_w[1], be->g.pic_h[1],
                            s.d_cur + f.P.p[1].pix_off, s.d_cur + f.P.p[2].pix_off, f.P.p[1].w,
                            be->copy);
  record(s, EV_UPLOADED, be->copy);
  if (err == cudaSuccess) err = cudaEventRecord(s.uploaded, be->copy);
  return err;
}

/* The rd mode's search, decisions, transform and reconstruction in one
 * (the stage timings count it all as the search). */
cudaError_t compute_rd(submit_frame &f, cudaStream_t st)
{
  c63_backend *be = f.be;
  cudaError_t err = cudaSuccess;
  if (!be->rd) {
    f.what = "allocating the rd mode's device buffers";
    err = c63_cuda_rd_create(f.P, &be->rd);
  }
  if (err == cudaSuccess) {
    f.what = "rd coding";
    c63_rd_lambda lambda;
    c63_rd_lambda_init(f.job->quant, &lambda);
    err = c63_cuda_rd_code(be->rd, f.s.d_cur, f.ref, f.P, lambda.ssd, lambda.sad_16, d_coeffs(f.s),
                           d_mvs(be, f.s), f.recon, st);
  }
  record(f.s, EV_SEARCHED, st);
  return err;
}

/* The exact mode's motion search (keyframes: zero vectors), then the
 * transform and reconstruction. */
cudaError_t compute_exact(submit_frame &f, cudaStream_t st)
{
  c63_backend *be = f.be;
  slot &s = f.s;
  cudaError_t err;
  f.what = "motion search";
  if (f.job->keyframe) {
    err = cudaMemsetAsync(d_mvs(be, s), 0, (size_t)f.P.total_blocks * sizeof(c63_mv), st);
  } else {
    err = c63_cuda_motion_search(s.d_cur, f.ref, f.P.p[0], d_mvs(be, s), st);
    if (err == cudaSuccess)
      err = c63_cuda_motion_search_pair(s.d_cur, f.ref, f.P.p[1], f.P.p[2], d_mvs(be, s), st);
  }
  record(s, EV_SEARCHED, st);
  if (err == cudaSuccess) {
    f.what = "transform and reconstruction";
    err = c63_cuda_fdct_quant_recon(s.d_cur, f.ref, f.mvs, f.P, d_coeffs(s), f.recon, st);
  }
  return err;
}

/* Compute, on the compute stream once the upload is in. */
cudaError_t compute(submit_frame &f)
{
  cudaStream_t st = f.be->stream;
  cudaError_t err = cudaStreamWaitEvent(st, f.s.uploaded, 0);
  record(f.s, EV_COMPUTE, st);
  if (err == cudaSuccess)
    err = f.job->mode == C63_MODE_RD ? compute_rd(f, st) : compute_exact(f, st);
  record(f.s, EV_RECONSTRUCTED, st);
  return err;
}

/* Entropy coding, on the coding stream once the coefficients are in. */
cudaError_t code(submit_frame &f)
{
  c63_backend *be = f.be;
  slot &s = f.s;
  cudaStream_t cs = be->coding;
  cudaError_t err = cudaEventRecord(s.transformed, be->stream);
  if (err == cudaSuccess) err = cudaStreamWaitEvent(cs, s.transformed, 0);
  if (err == cudaSuccess) {
    f.what = "entropy coding";
    err =
        c63_cuda_entropy_encode(be->entropy, d_coeffs(s), d_mvs(be, s), s.d_payload, s.d_size, cs);
  }
  record(s, EV_CODED, cs);
  return err;
}

/* Download, on the coding stream: the payload into the slot's mapped host
 * buffer, then the frame's event. */
cudaError_t download(submit_frame &f)
{
  c63_backend *be = f.be;
  slot &s = f.s;
  cudaStream_t cs = be->coding;
  f.what = "writing the coded frame to the host";
  cudaError_t err = c63_cuda_copy_payload(s.d_payload, s.d_size, s.h_out_dev + kHeaderRoom,
                                          s.h_size_dev, be->out_capacity, cs);
  record(s, EV_END, cs);
  if (err == cudaSuccess) {
    f.what = "recording the frame event";
    err = cudaEventRecord(s.done, cs);
  }
  return err;
}

/* The caller may reuse its picture once submit returns, so an upload
 * straight from it must be over by then (on errors too); then
 * registrations may end again (prepare_frame). A borrowed picture stays
 * the caller's until its packet, so its upload runs on past submit, beside
 * the caller's next picture (collect and destroy wait for the GPU), unless
 * it lies in a registration of libc63, whose end waits only for the
 * uploads bracketed at the time. Waiting here,
 * after the launches rather than before them, lets the host enqueue the
 * frame's kernels while the copy engine reads the picture: a wait before
 * them would make submit take the upload plus the launches, about as long
 * as the GPU's whole frame. Returns err, or the upload's error. */
cudaError_t wait_for_direct_upload(submit_frame &f, cudaError_t err)
{
  if (!f.direct) return err;
  if (f.lent_direct && err == cudaSuccess) {
    c63_cuda_host_copy_end();
    return err;
  }
  const cudaError_t werr = cudaStreamSynchronize(f.be->copy);
  c63_cuda_host_copy_end();
  if (err == cudaSuccess && werr != cudaSuccess) {
    f.what = "uploading the frame";
    return werr;
  }
  return err;
}

/* Submit in stages: upload (copy stream), compute (compute stream), code
 * and download (coding stream). */
int cu_submit(c63_backend *be, c63_frame_job *job, char *msg, size_t msg_size)
{
  const int status = check_submit(be, job, msg, msg_size);
  if (status) return status;
  c63_cuda_scope scope(be->dev);
  cudaError_t err = scope.error();
  if (err != cudaSuccess) return c63_cuda_error(err, "entering the CUDA context", msg, msg_size);

  slot &s = be->slots[(be->head + be->count) % be->n_slots];
  s.timed = be->timing;
  const double t_submit = s.timed ? now_ms() : 0.0;
  submit_frame f = prepare_frame(be, job, s);
  err = upload(f);
  if (err == cudaSuccess) err = compute(f);
  if (err == cudaSuccess) err = code(f);
  if (err == cudaSuccess) err = download(f);
  err = wait_for_direct_upload(f, err);
  if (err != cudaSuccess) {
    /* the frame is not the backend's: the caller has its picture back */
    wait_staging(s.staging);
    return c63_cuda_error(err, f.what, msg, msg_size);
  }

  if (s.timed) s.submit_ms = now_ms() - t_submit;
  be->rec = f.recon == be->d_rec[0] ? 0 : 1;
  be->have_ref = true;
  s.job = job;
  be->count++;
  return C63_OK;
}

float elapsed(const slot &s, int from, int to)
{
  float t = 0.0f;
  if (cudaEventElapsedTime(&t, s.ev[from], s.ev[to]) != cudaSuccess) t = 0.0f;
  return t;
}

void add_stats(c63_backend *be, slot &s, double wait_ms)
{
  const float upload = elapsed(s, EV_START, EV_UPLOADED);
  const float compute = elapsed(s, EV_COMPUTE, EV_END);
  cudaGetLastError();
  c63_stage_stats &stats = be->stats;
  stats.frames++;
  stats.upload_ms += upload;
  stats.motion_ms += elapsed(s, EV_COMPUTE, EV_SEARCHED);
  stats.transform_ms += elapsed(s, EV_SEARCHED, EV_RECONSTRUCTED);
  stats.entropy_ms += elapsed(s, EV_RECONSTRUCTED, EV_CODED);
  stats.download_ms += elapsed(s, EV_CODED, EV_END);
  stats.total_ms += upload + compute;
  stats.submit_host_ms += s.submit_ms;
  stats.collect_wait_ms += wait_ms;
}

/* The payload did not fit the slot's mapped buffer: fetch it from the
 * slot's device copy into a host buffer with the same room around it. */
int fetch_big(c63_backend *be, slot &s, size_t size, char *msg, size_t msg_size)
{
  const size_t need = kHeaderRoom + size + 16;
  if (need > be->big_size) {
    uint8_t *p = static_cast<uint8_t *>(realloc(be->big, need));
    if (!p) {
      snprintf(msg, msg_size, "out of host memory for a %zu-byte coded frame", size);
      return C63_ERR_NOMEM;
    }
    be->big = p;
    be->big_size = need;
  }
  cudaError_t err = cudaMemcpy(be->big + kHeaderRoom, s.d_payload, size, cudaMemcpyDeviceToHost);
  if (err != cudaSuccess)
    return c63_cuda_error(err, "downloading a large coded frame", msg, msg_size);
  return C63_OK;
}

int cu_collect(c63_backend *be, c63_frame_job *job, char *msg, size_t msg_size)
{
  if (be->count == 0) {
    snprintf(msg, msg_size, "CUDA backend: collect without a submitted frame");
    return C63_ERR_AGAIN;
  }
  slot &s = be->slots[be->head];
  if (s.job != job) {
    snprintf(msg, msg_size, "CUDA backend: frames collected out of submission order");
    return C63_ERR_INVALID_ARG;
  }
  const double t_wait = s.timed ? now_ms() : 0.0;
  /* done where the GPU has run (the copy stream waited for it); the
   * caller may take its picture back even where the GPU failed */
  wait_staging(s.staging);
  c63_cuda_scope scope(be->dev);
  cudaError_t err = scope.error();
  if (err == cudaSuccess) err = cudaEventSynchronize(s.done);
  if (err != cudaSuccess) return c63_cuda_error(err, "encoding a frame on the GPU", msg, msg_size);
  if (s.timed) add_stats(be, s, now_ms() - t_wait);

  const size_t size = *s.h_size;
  job->payload = s.h_out + kHeaderRoom;
  job->payload_size = size;
  if (size > be->out_capacity) {
    int r = fetch_big(be, s, size, msg, msg_size);
    if (r) return r;
    job->payload = be->big + kHeaderRoom;
  }
  s.job = nullptr;
  be->head = (be->head + 1) % be->n_slots;
  be->count--;
  return C63_OK;
}

/* Whether device_id is a usable CUDA device here. */
int cu_probe(int device_id, char *msg, size_t msg_size)
{
  const int n = c63_cuda_device_count(msg, msg_size);
  if (n > 0 && device_id >= n) {
    if (msg && msg_size)
      snprintf(msg, msg_size, "CUDA device %d does not exist (%d device%s found)", device_id, n,
               n == 1 ? "" : "s");
    return 0;
  }
  return n > 0;
}

/* With nothing in flight the reconstruction before the last frame is
 * still in the other slot (a keyframe coded again needs none). */
void cu_rewind(c63_backend *be)
{
  be->rec ^= 1;
}

void cu_set_timing(c63_backend *be, int on)
{
  be->timing = on != 0;
}

int cu_in_flight(const c63_backend *be)
{
  return be->n_slots;
}

void cu_get_stats(c63_backend *be, c63_stage_stats *out, int reset)
{
  *out = be->stats;
  if (reset) memset(&be->stats, 0, sizeof be->stats);
}

} // namespace

extern "C" const c63_backend_ops c63_backend_cuda = {
    "cuda",
    cu_in_flight,
    cu_create,
    cu_destroy,
    cu_submit,
    cu_collect,
    cu_probe,
    c63_cuda_host_alloc,
    c63_cuda_host_free,
    cu_set_timing,
    cu_get_stats,
    1u << C63_MODE_EXACT | 1u << C63_MODE_RD,
    cu_rewind,
    c63_cuda_host_register,
    c63_cuda_host_unregister,
    policy::kDefaultThreads,
};

extern "C" int c63_cuda_pin(void *ptr, size_t size, char *msg, size_t msg_size)
{
  cudaError_t err = cudaHostRegister(ptr, size, cudaHostRegisterDefault);
  if (err != cudaSuccess) {
    int status = c63_cuda_error(err, "page-locking host memory", msg, msg_size);
    cudaGetLastError();
    return status;
  }
  return C63_OK;
}

extern "C" void *c63_cuda_host_alloc(size_t size)
{
  void *p = nullptr;
  /* Portable: usable from every CUDA context, whichever device encodes. */
  if (cudaHostAlloc(&p, size, cudaHostAllocPortable) != cudaSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  return p;
}

extern "C" void c63_cuda_host_free(void *ptr)
{
  if (ptr && cudaFreeHost(ptr) != cudaSuccess) cudaGetLastError();
}

extern "C" void c63_cuda_unpin(void *ptr)
{
  if (cudaHostUnregister(ptr) != cudaSuccess) cudaGetLastError();
}

extern "C" int c63_cuda_device_name(int device_id, char *name, size_t size)
{
  cudaDeviceProp prop;
  cudaError_t err = cudaGetDeviceProperties(&prop, device_id);
  if (err != cudaSuccess) return c63_cuda_error(err, "querying the CUDA device", name, size);
  snprintf(name, size, "%s (sm_%d%d, %d SMs)", prop.name, prop.major, prop.minor,
           prop.multiProcessorCount);
  return C63_OK;
}
