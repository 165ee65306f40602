/* The CUDA backend (c63_backend_ops): the pixel stages of the encoder on the
 * GPU, with the reference frame resident on the device.
 *
 * Everything is allocated in create for the geometry: device buffers for the
 * current frame, two reconstructions (ping-pong: the previous one is the
 * reference while the new one is written), and one block of coefficients +
 * vectors; per in-flight slot, pinned host staging for the input frame and
 * for the outputs. Per frame: one upload, the kernels on the backend's own
 * stream, one download, one event. Nothing allocates or synchronises the
 * whole device per frame.
 *
 * Two slots let the GPU work on frame N+1 while the CPU entropy-codes frame
 * N. One stream orders everything, so the single set of device buffers is
 * safe: frame N+1's upload into the current-frame buffer runs after frame N's
 * kernels, its kernels after frame N's download.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>


#include "c63/c63.h"
#include "cuda/c63_cuda.h"
#include "cuda/c63_cuda_internal.h"
#include "cuda/c63_cuda_stats.h"

extern "C" {
#include "c63/threadpool.h"
}

namespace
{

constexpr int kSlots = 2;

enum { EV_START, EV_UPLOADED, EV_SEARCHED, EV_TRANSFORMED, EV_RECONSTRUCTED, EV_END, EV_COUNT };

double now_ms()
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

struct slot {
  uint8_t *h_in;  /* pinned: padded Y, U, V back to back */
  uint8_t *h_out; /* pinned: coefficients, then vectors */
  cudaEvent_t done;
  cudaEvent_t ev[EV_COUNT];
  bool timed;
  double submit_ms; /* host time spent in submit */
  c63_frame_job *job;
};

/* Process-wide stage timings (c63_cuda_stats.h). */
pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;
c63_cuda_stage_stats stats;
volatile int stats_on;

} // namespace

struct c63_backend {
  c63_geometry g;
  int device;
  cudaStream_t stream;
  size_t frame_bytes; /* padded Y + U + V */
  size_t mv_offset;   /* of the vectors in the output block */
  size_t out_bytes;   /* coefficients + vectors */
  uint8_t *d_cur;
  uint8_t *d_rec[2];
  uint8_t *d_out;
  int rec;       /* index of the latest reconstruction in d_rec */
  bool have_ref; /* d_rec[rec] holds a reconstruction */
  c63_cu_planes planes;
  /* Padding the caller's picture into pinned staging is the backend's only
   * per-frame CPU work; large frames split it over a few threads. */
  c63_threadpool *pool; /* the encoder's, borrowed */
  int pad_slices;
  slot slots[kSlots];
  int head, count;
};

namespace
{

int16_t *d_coeffs(c63_backend *be)
{
  return reinterpret_cast<int16_t *>(be->d_out);
}

c63_mv *d_mvs(c63_backend *be)
{
  return reinterpret_cast<c63_mv *>(be->d_out + be->mv_offset);
}

void release(c63_backend *be)
{
  cudaSetDevice(be->device);
  if (be->stream) cudaStreamSynchronize(be->stream);
  for (int i = 0; i < kSlots; i++) {
    slot &s = be->slots[i];
    if (s.h_in) cudaFreeHost(s.h_in);
    if (s.h_out) cudaFreeHost(s.h_out);
    if (s.done) cudaEventDestroy(s.done);
    for (int e = 0; e < EV_COUNT; e++)
      if (s.ev[e]) cudaEventDestroy(s.ev[e]);
  }
  cudaFree(be->d_cur);
  cudaFree(be->d_rec[0]);
  cudaFree(be->d_rec[1]);
  cudaFree(be->d_out);
  if (be->stream) cudaStreamDestroy(be->stream);
  free(be);
}

int cu_create(const c63_geometry *g, int device_id, c63_threadpool *pool, c63_backend **out,
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
  if (device_id < 0 || device_id >= count) {
    snprintf(msg, msg_size, "CUDA device %d does not exist (%d device%s found)", device_id, count,
             count == 1 ? "" : "s");
    return C63_ERR_NO_DEVICE;
  }
  cudaError_t err = cudaSetDevice(device_id);
  if (err != cudaSuccess) return c63_cu_error(err, "selecting the CUDA device", msg, msg_size);

  c63_backend *be = static_cast<c63_backend *>(calloc(1, sizeof *be));
  if (!be) {
    snprintf(msg, msg_size, "out of host memory");
    return C63_ERR_NOMEM;
  }
  be->g = *g;
  be->device = device_id;

  c63_cu_planes &P = be->planes;
  P.n = 3;
  size_t pix = 0;
  int blocks = 0;
  for (int p = 0; p < 3; p++) {
    c63_cu_plane &pl = P.p[p];
    pl.w = g->pad_w[p];
    pl.h = g->pad_h[p];
    pl.bw = g->blocks_w[p];
    pl.bh = g->blocks_h[p];
    pl.pix_off = (int)pix;
    pl.blk_off = blocks;
    pl.ac_limit = c63_ac_limit(p);
    pix += (size_t)pl.w * pl.h;
    blocks += pl.bw * pl.bh;
  }
  P.total_blocks = blocks;
  be->frame_bytes = pix;
  be->mv_offset = ((size_t)blocks * 64 * sizeof(int16_t) + 255) & ~(size_t)255;
  be->out_bytes = be->mv_offset + (size_t)blocks * sizeof(c63_mv);

  /* The encoder's pool pads the input into pinned memory: up to 4 slices
   * for frames over 1 MiB (more do not help a memory-bound copy). */
  be->pool = pool;
  const int threads = c63_threadpool_size(pool);
  be->pad_slices = be->frame_bytes >= (1u << 20) ? (threads < 4 ? threads : 4) : 1;

  const char *what = "creating the CUDA stream";
  err = cudaStreamCreateWithFlags(&be->stream, cudaStreamNonBlocking);
  if (err == cudaSuccess) {
    what = "allocating device buffers";
    err = cudaMalloc(&be->d_cur, be->frame_bytes);
  }
  for (int i = 0; i < 2 && err == cudaSuccess; i++)
    err = cudaMalloc(&be->d_rec[i], be->frame_bytes);
  if (err == cudaSuccess) err = cudaMalloc(&be->d_out, be->out_bytes);
  for (int i = 0; i < kSlots && err == cudaSuccess; i++) {
    slot &s = be->slots[i];
    what = "allocating pinned host buffers";
    err = cudaHostAlloc(&s.h_in, be->frame_bytes, cudaHostAllocDefault);
    if (err == cudaSuccess) err = cudaHostAlloc(&s.h_out, be->out_bytes, cudaHostAllocDefault);
    if (err == cudaSuccess) {
      what = "creating CUDA events";
      err = cudaEventCreateWithFlags(&s.done, cudaEventDisableTiming);
    }
    for (int e = 0; e < EV_COUNT && err == cudaSuccess; e++)
      err = cudaEventCreate(&s.ev[e]);
  }
  if (err != cudaSuccess) {
    char cuda_msg[256];
    int status = c63_cu_error(err, what, cuda_msg, sizeof cuda_msg);
    const double mib = (3.0 * be->frame_bytes + be->out_bytes) / (1024.0 * 1024.0);
    snprintf(msg, msg_size,
             "CUDA device %d: %s for %dx%d (%.1f MiB device, %.1f MiB pinned host): %s", device_id,
             what, g->width, g->height, mib,
             kSlots * (double)(be->frame_bytes + be->out_bytes) / (1024.0 * 1024.0), cuda_msg);
    cudaGetLastError();
    release(be);
    return status;
  }
  *out = be;
  return C63_OK;
}

void cu_destroy(c63_backend *be)
{
  if (be) release(be);
}

/* One slice of the padding copy: rows [y0, y1) of every padded plane. */
struct pad_task {
  const c63_backend *be;
  const c63_frame_job *job;
  uint8_t *dst;
  int slices;
};

void pad_slice(void *arg, int i)
{
  const pad_task *t = static_cast<const pad_task *>(arg);
  for (int p = 0; p < 3; p++) {
    const c63_cu_plane &pl = t->be->planes.p[p];
    const int y0 = (int)((long)pl.h * i / t->slices), y1 = (int)((long)pl.h * (i + 1) / t->slices);
    const int pic_h = t->be->g.pic_h[p];
    const int pic_rows = y0 >= pic_h ? 0 : (y1 < pic_h ? y1 : pic_h) - y0;
    if (y1 <= y0) continue;
    const uint8_t *src = t->job->src[p] + (pic_rows > 0 ? (size_t)y0 * t->job->src_stride[p] : 0);
    c63_pad_plane(src, t->job->src_stride[p], t->be->g.pic_w[p], pic_rows,
                  t->dst + pl.pix_off + (size_t)y0 * pl.w, pl.w, y1 - y0);
  }
}

int cu_submit(c63_backend *be, c63_frame_job *job, char *msg, size_t msg_size)
{
  if (be->count >= kSlots) {
    snprintf(msg, msg_size, "CUDA backend: more than %d frames in flight", kSlots);
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
  cudaError_t err = cudaSetDevice(be->device);
  if (err != cudaSuccess) return c63_cu_error(err, "selecting the CUDA device", msg, msg_size);

  slot &s = be->slots[(be->head + be->count) % kSlots];
  s.timed = stats_on != 0;
  const double t_submit = s.timed ? now_ms() : 0.0;
  /* The slot's previous frame was collected, so its copies are finished. */
  c63_cu_planes P = be->planes;
  pad_task task = {be, job, s.h_in, be->pad_slices};
  c63_threadpool_run(be->pool, pad_slice, &task, task.slices);
  for (int p = 0; p < 3; p++) {
    memcpy(P.p[p].quant, job->quant[p], 64);
    P.p[p].range = p == 0 ? job->search_range : job->search_range / 2;
  }

  cudaStream_t st = be->stream;
  const uint8_t *ref = job->keyframe ? nullptr : be->d_rec[be->rec];
  const c63_mv *mvs = job->keyframe ? nullptr : d_mvs(be);
  uint8_t *recon = be->d_rec[be->have_ref ? be->rec ^ 1 : be->rec];
  const char *what = "uploading the frame";
  if (s.timed) cudaEventRecord(s.ev[EV_START], st);
  err = cudaMemcpyAsync(be->d_cur, s.h_in, be->frame_bytes, cudaMemcpyHostToDevice, st);
  if (s.timed) cudaEventRecord(s.ev[EV_UPLOADED], st);
  if (err == cudaSuccess) {
    what = "motion search";
    if (job->keyframe) {
      err = cudaMemsetAsync(d_mvs(be), 0, (size_t)P.total_blocks * sizeof(c63_mv), st);
    } else {
      err = c63_cu_motion_search(be->d_cur, ref, P.p[0], d_mvs(be), st);
      if (err == cudaSuccess)
        err = c63_cu_motion_search_pair(be->d_cur, ref, P.p[1], P.p[2], d_mvs(be), st);
    }
  }
  if (s.timed) cudaEventRecord(s.ev[EV_SEARCHED], st);
  if (err == cudaSuccess) {
    what = "forward transform";
    err = c63_cu_fdct_quant(be->d_cur, ref, mvs, P, d_coeffs(be), st);
  }
  if (s.timed) cudaEventRecord(s.ev[EV_TRANSFORMED], st);
  if (err == cudaSuccess) {
    what = "reconstruction";
    err = c63_cu_dequant_idct_recon(d_coeffs(be), ref, mvs, P, recon, st);
  }
  if (s.timed) cudaEventRecord(s.ev[EV_RECONSTRUCTED], st);
  if (err == cudaSuccess) {
    what = "downloading coefficients";
    err = cudaMemcpyAsync(s.h_out, be->d_out, be->out_bytes, cudaMemcpyDeviceToHost, st);
  }
  if (s.timed) cudaEventRecord(s.ev[EV_END], st);
  if (err == cudaSuccess) {
    what = "recording the frame event";
    err = cudaEventRecord(s.done, st);
  }
  if (err != cudaSuccess) return c63_cu_error(err, what, msg, msg_size);

  if (s.timed) s.submit_ms = now_ms() - t_submit;
  be->rec = recon == be->d_rec[0] ? 0 : 1;
  be->have_ref = true;
  s.job = job;
  be->count++;
  return C63_OK;
}

void add_stats(slot &s, double wait_ms)
{
  float t[EV_COUNT - 1], total = 0.0f;
  for (int e = 0; e + 1 < EV_COUNT; e++)
    if (cudaEventElapsedTime(&t[e], s.ev[e], s.ev[e + 1]) != cudaSuccess) t[e] = 0.0f;
  if (cudaEventElapsedTime(&total, s.ev[EV_START], s.ev[EV_END]) != cudaSuccess) total = 0.0f;
  cudaGetLastError();
  pthread_mutex_lock(&stats_lock);
  stats.frames++;
  stats.upload_ms += t[0];
  stats.motion_ms += t[1];
  stats.transform_ms += t[2];
  stats.recon_ms += t[3];
  stats.download_ms += t[4];
  stats.total_ms += total;
  stats.submit_host_ms += s.submit_ms;
  stats.collect_wait_ms += wait_ms;
  pthread_mutex_unlock(&stats_lock);
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
  cudaError_t err = cudaSetDevice(be->device);
  if (err == cudaSuccess) err = cudaEventSynchronize(s.done);
  if (err != cudaSuccess) return c63_cu_error(err, "encoding a frame on the GPU", msg, msg_size);
  if (s.timed) add_stats(s, now_ms() - t_wait);

  const int16_t *coeffs = reinterpret_cast<const int16_t *>(s.h_out);
  const c63_mv *mvs = reinterpret_cast<const c63_mv *>(s.h_out + be->mv_offset);
  for (int p = 0; p < 3; p++) {
    job->coeffs[p] = coeffs + (size_t)be->planes.p[p].blk_off * 64;
    job->mvs[p] = mvs + be->planes.p[p].blk_off;
  }
  s.job = nullptr;
  be->head = (be->head + 1) % kSlots;
  be->count--;
  return C63_OK;
}

} // namespace

extern "C" const c63_backend_ops c63_backend_cuda = {
    "cuda", kSlots, cu_create, cu_destroy, cu_submit, cu_collect,
};

extern "C" void c63_cuda_stats_enable(int on)
{
  stats_on = on ? 1 : 0;
}

extern "C" void c63_cuda_stats_reset(void)
{
  pthread_mutex_lock(&stats_lock);
  memset(&stats, 0, sizeof stats);
  pthread_mutex_unlock(&stats_lock);
}

extern "C" void c63_cuda_stats_get(c63_cuda_stage_stats *out)
{
  pthread_mutex_lock(&stats_lock);
  *out = stats;
  pthread_mutex_unlock(&stats_lock);
}

extern "C" int c63_cuda_device_name(int device_id, char *name, size_t size)
{
  cudaDeviceProp prop;
  cudaError_t err = cudaGetDeviceProperties(&prop, device_id);
  if (err != cudaSuccess) return c63_cu_error(err, "querying the CUDA device", name, size);
  snprintf(name, size, "%s (sm_%d%d, %d SMs)", prop.name, prop.major, prop.minor,
           prop.multiProcessorCount);
  return C63_OK;
}
