/* Per-stage entry points for tests (c63_cuda_dsp.h): one plane, synchronous,
 * through the same kernels as the backend.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <string.h>

#include "c63/c63.h"
#include "cuda/c63_cuda_dsp.h"
#include "cuda/c63_cuda_internal.h"

extern "C" {
#include "c63/entropy.h"
#include "c63/geometry.h"
}

namespace
{

/* Device allocations of one call, freed together. */
struct scratch {
  void *ptr[8] = {};
  int n = 0;
  ~scratch()
  {
    for (int i = 0; i < n; i++)
      cudaFree(ptr[i]);
  }
  template <typename T> cudaError_t alloc(T **p, size_t bytes)
  {
    cudaError_t err = cudaMalloc(reinterpret_cast<void **>(p), bytes ? bytes : 1);
    if (err == cudaSuccess) ptr[n++] = *p;
    return err;
  }
  template <typename T> cudaError_t upload(T **p, const void *src, size_t bytes)
  {
    cudaError_t err = alloc(p, bytes);
    if (err == cudaSuccess) err = cudaMemcpy(*p, src, bytes, cudaMemcpyHostToDevice);
    return err;
  }
  /* A reference plane for the transform kernels, followed by the
   * C63_CUDA_REF_TAIL bytes their displaced reads may touch. */
  cudaError_t upload_ref(uint8_t **p, const uint8_t *src, size_t bytes)
  {
    cudaError_t err = alloc(p, bytes + C63_CUDA_REF_TAIL);
    if (err == cudaSuccess) err = cudaMemset(*p + bytes, 0, C63_CUDA_REF_TAIL);
    if (err == cudaSuccess) err = cudaMemcpy(*p, src, bytes, cudaMemcpyHostToDevice);
    return err;
  }
};

bool check_size(int w, int h, char *msg, size_t msg_size)
{
  if (w < 8 || h < 8 || w % 8 || h % 8 || w > 2 * C63_MAX_SIZE || h > 2 * C63_MAX_SIZE) {
    snprintf(msg, msg_size, "plane size %dx%d is not a positive multiple of 8", w, h);
    return false;
  }
  return true;
}

c63_cuda_planes one_plane(int w, int h, int range, int ac_limit, const uint8_t *quant)
{
  c63_cuda_planes P;
  memset(&P, 0, sizeof P);
  P.n = 1;
  c63_cuda_plane &pl = P.p[0];
  pl.w = w;
  pl.h = h;
  pl.bw = w / 8;
  pl.bh = h / 8;
  pl.range = range;
  pl.ac_limit = ac_limit;
  if (quant) memcpy(pl.quant, quant, 64);
  P.total_blocks = pl.bw * pl.bh;
  return P;
}

int finish(cudaError_t err, const char *what, char *msg, size_t msg_size)
{
  if (err == cudaSuccess) err = cudaDeviceSynchronize();
  if (err != cudaSuccess) {
    int status = c63_cuda_error(err, what, msg, msg_size);
    cudaGetLastError();
    return status;
  }
  return C63_OK;
}

/* A zero vector with use_mv = 1 for every block: lets the fused
 * compensation of the transform kernels read a given prediction as is. */
cudaError_t identity_vectors(scratch &sc, int blocks, c63_mv **out)
{
  cudaError_t err = sc.alloc(out, (size_t)blocks * sizeof(c63_mv));
  /* Bytes {0, 0, 1, 0}: x = 0, y = 0, use_mv = 1. */
  if (err == cudaSuccess) err = cudaMemset(*out, 0, (size_t)blocks * sizeof(c63_mv));
  if (err == cudaSuccess)
    err = cudaMemset2D(reinterpret_cast<uint8_t *>(*out) + 2, sizeof(c63_mv), 1, 1, blocks);
  return err;
}

} // namespace

extern "C" int c63_cuda_test_motion_search(const uint8_t *cur, const uint8_t *ref, int w, int h,
                                           int range, c63_mv *mvs, char *msg, size_t msg_size)
{
  if (!check_size(w, h, msg, msg_size)) return C63_ERR_INVALID_ARG;
  if (range < 0 || range > C63_MAX_SEARCH_RANGE) {
    snprintf(msg, msg_size, "search range %d outside 0..%d", range, C63_MAX_SEARCH_RANGE);
    return C63_ERR_INVALID_ARG;
  }
  const size_t n = (size_t)w * h;
  const c63_cuda_planes P = one_plane(w, h, range, 0, nullptr);
  scratch sc;
  uint8_t *d_cur, *d_ref;
  c63_mv *d_mvs;
  cudaError_t err = sc.upload(&d_cur, cur, n);
  if (err == cudaSuccess) err = sc.upload(&d_ref, ref, n);
  if (err == cudaSuccess) err = sc.alloc(&d_mvs, P.total_blocks * sizeof(c63_mv));
  if (err == cudaSuccess) err = c63_cuda_motion_search(d_cur, d_ref, P.p[0], d_mvs, 0);
  if (err == cudaSuccess)
    err = cudaMemcpy(mvs, d_mvs, P.total_blocks * sizeof(c63_mv), cudaMemcpyDeviceToHost);
  return finish(err, "motion search", msg, msg_size);
}

extern "C" int c63_cuda_test_motion_compensate(const uint8_t *ref, int w, int h, const c63_mv *mvs,
                                               uint8_t *pred, char *msg, size_t msg_size)
{
  if (!check_size(w, h, msg, msg_size)) return C63_ERR_INVALID_ARG;
  const size_t n = (size_t)w * h;
  const c63_cuda_planes P = one_plane(w, h, 0, 0, nullptr);
  scratch sc;
  uint8_t *d_ref, *d_pred;
  c63_mv *d_mvs;
  cudaError_t err = sc.upload_ref(&d_ref, ref, n);
  if (err == cudaSuccess) err = sc.upload(&d_mvs, mvs, P.total_blocks * sizeof(c63_mv));
  if (err == cudaSuccess) err = sc.alloc(&d_pred, n);
  if (err == cudaSuccess) err = c63_cuda_motion_compensate(d_ref, d_mvs, P, d_pred, 0);
  if (err == cudaSuccess) err = cudaMemcpy(pred, d_pred, n, cudaMemcpyDeviceToHost);
  return finish(err, "motion compensation", msg, msg_size);
}

extern "C" int c63_cuda_test_fdct_quant(const uint8_t *cur, const uint8_t *pred, int w, int h,
                                        const uint8_t quant[64], int ac_limit, int16_t *coeffs,
                                        char *msg, size_t msg_size)
{
  if (!check_size(w, h, msg, msg_size)) return C63_ERR_INVALID_ARG;
  for (int z = 0; z < 64; z++)
    if (!quant[z]) {
      snprintf(msg, msg_size, "quantiser %d is zero (the tables hold 1 to 255)", z);
      return C63_ERR_INVALID_ARG;
    }
  const size_t n = (size_t)w * h;
  const c63_cuda_planes P = one_plane(w, h, 0, ac_limit, quant);
  scratch sc;
  uint8_t *d_cur, *d_pred = nullptr;
  c63_mv *d_mvs = nullptr;
  int16_t *d_coeffs;
  cudaError_t err = sc.upload(&d_cur, cur, n);
  if (err == cudaSuccess && pred) err = sc.upload_ref(&d_pred, pred, n);
  if (err == cudaSuccess && pred) err = identity_vectors(sc, P.total_blocks, &d_mvs);
  if (err == cudaSuccess) err = sc.alloc(&d_coeffs, n * sizeof(int16_t));
  if (err == cudaSuccess) err = c63_cuda_fdct_quant(d_cur, d_pred, d_mvs, P, d_coeffs, 0);
  if (err == cudaSuccess)
    err = cudaMemcpy(coeffs, d_coeffs, n * sizeof(int16_t), cudaMemcpyDeviceToHost);
  return finish(err, "forward transform", msg, msg_size);
}

extern "C" int c63_cuda_test_dequant_idct_recon(const int16_t *coeffs, const uint8_t *pred, int w,
                                                int h, const uint8_t quant[64], uint8_t *recon,
                                                char *msg, size_t msg_size)
{
  if (!check_size(w, h, msg, msg_size)) return C63_ERR_INVALID_ARG;
  const size_t n = (size_t)w * h;
  const c63_cuda_planes P = one_plane(w, h, 0, 0, quant);
  scratch sc;
  uint8_t *d_pred = nullptr, *d_recon;
  c63_mv *d_mvs = nullptr;
  int16_t *d_coeffs;
  cudaError_t err = sc.upload(&d_coeffs, coeffs, n * sizeof(int16_t));
  if (err == cudaSuccess && pred) err = sc.upload_ref(&d_pred, pred, n);
  if (err == cudaSuccess && pred) err = identity_vectors(sc, P.total_blocks, &d_mvs);
  if (err == cudaSuccess) err = sc.alloc(&d_recon, n);
  if (err == cudaSuccess) err = c63_cuda_dequant_idct_recon(d_coeffs, d_pred, d_mvs, P, d_recon, 0);
  if (err == cudaSuccess) err = cudaMemcpy(recon, d_recon, n, cudaMemcpyDeviceToHost);
  return finish(err, "reconstruction", msg, msg_size);
}

namespace
{

/* An entropy coder for a geometry, freed with the call. */
struct entropy_holder {
  c63_cuda_entropy *e = nullptr;
  ~entropy_holder()
  {
    c63_cuda_entropy_destroy(e);
  }
};

cudaError_t download_payload(const uint8_t *d_payload, const uint32_t *d_size, uint8_t *out,
                             size_t capacity, size_t *size, bool *fits)
{
  uint32_t n = 0;
  cudaError_t err = cudaMemcpy(&n, d_size, sizeof n, cudaMemcpyDeviceToHost);
  *size = n;
  *fits = n <= capacity;
  if (err == cudaSuccess && *fits) err = cudaMemcpy(out, d_payload, n, cudaMemcpyDeviceToHost);
  return err;
}

} // namespace

extern "C" int c63_cuda_test_entropy_encode(int width, int height, const int16_t *const coeffs[3],
                                            const c63_mv *const mvs[3], uint8_t *out,
                                            size_t capacity, size_t *size, char *msg,
                                            size_t msg_size)
{
  if (width < C63_MIN_SIZE || height < C63_MIN_SIZE || width > C63_MAX_SIZE ||
      height > C63_MAX_SIZE) {
    snprintf(msg, msg_size, "picture size %dx%d out of range", width, height);
    return C63_ERR_INVALID_ARG;
  }
  c63_geometry g;
  c63_geometry_init(&g, width, height);
  const c63_cuda_entropy_geometry G = c63_cuda_entropy_layout(&g);
  entropy_holder h;
  scratch sc;
  int16_t *d_coeffs;
  c63_mv *d_mvs;
  uint8_t *d_payload;
  uint32_t *d_size;
  cudaError_t err = c63_cuda_entropy_create(G, &h.e);
  if (err == cudaSuccess) err = sc.alloc(&d_coeffs, (size_t)G.blocks * 64 * sizeof(int16_t));
  if (err == cudaSuccess) err = sc.alloc(&d_mvs, (size_t)G.blocks * sizeof(c63_mv));
  if (err == cudaSuccess) err = sc.alloc(&d_payload, c63_cuda_entropy_max_payload(h.e) + 16);
  if (err == cudaSuccess) err = sc.alloc(&d_size, sizeof(uint32_t));
  for (int p = 0; p < 3 && err == cudaSuccess; p++) {
    const size_t n = (size_t)g.blocks_w[p] * g.blocks_h[p];
    err = cudaMemcpy(d_coeffs + (size_t)G.blk_off[p] * 64, coeffs[p], n * 64 * sizeof(int16_t),
                     cudaMemcpyHostToDevice);
    if (err == cudaSuccess)
      err = cudaMemcpy(d_mvs + G.blk_off[p], mvs[p], n * sizeof(c63_mv), cudaMemcpyHostToDevice);
  }
  if (err == cudaSuccess) err = c63_cuda_entropy_encode(h.e, d_coeffs, d_mvs, d_payload, d_size, 0);
  bool fits = true;
  if (err == cudaSuccess) err = download_payload(d_payload, d_size, out, capacity, size, &fits);
  int r = finish(err, "entropy coding", msg, msg_size);
  if (r == C63_OK && !fits) {
    snprintf(msg, msg_size, "payload of %zu bytes exceeds the %zu-byte buffer", *size, capacity);
    return C63_ERR_INVALID_ARG;
  }
  return r;
}

extern "C" int c63_cuda_test_write_stuffed(const uint8_t *data, size_t n, uint32_t pending,
                                           int pending_bits, uint8_t *out, size_t capacity,
                                           size_t *size, char *msg, size_t msg_size)
{
  if (pending_bits < 0 || pending_bits > 7 || n > (1u << 24)) {
    snprintf(msg, msg_size, "bad stuffing input (%zu bytes, %d pending bits)", n, pending_bits);
    return C63_ERR_INVALID_ARG;
  }
  /* Words MSB first: the bytes, then the pending bits left-aligned. */
  const size_t nwords = (n + 1) / 4 + 2;
  uint32_t *words = static_cast<uint32_t *>(calloc(nwords, sizeof(uint32_t)));
  if (!words) {
    snprintf(msg, msg_size, "out of host memory");
    return C63_ERR_NOMEM;
  }
  for (size_t i = 0; i < n; i++)
    words[i / 4] |= (uint32_t)data[i] << (24 - 8 * (i % 4));
  const uint32_t tail =
      pending_bits ? (pending & ((1u << pending_bits) - 1)) << (8 - pending_bits) : 0;
  words[n / 4] |= tail << (24 - 8 * (n % 4));
  const uint32_t total_bits = (uint32_t)(n * 8 + pending_bits);

  /* A geometry whose worst case holds nwords words. */
  c63_cuda_entropy_geometry G = {};
  G.blocks = (int)(nwords / (C63_MAX_BLOCK_BYTES / 4) + 1);
  G.mcus_w = 1;
  entropy_holder h;
  scratch sc;
  uint8_t *d_payload;
  uint32_t *d_size;
  cudaError_t err = c63_cuda_entropy_create(G, &h.e);
  if (err == cudaSuccess) err = sc.alloc(&d_payload, c63_cuda_entropy_max_payload(h.e) + 16);
  if (err == cudaSuccess) err = sc.alloc(&d_size, sizeof(uint32_t));
  if (err == cudaSuccess)
    err = c63_cuda_entropy_stuff_bits(h.e, words, nwords, total_bits, d_payload, d_size, 0);
  free(words);
  bool fits = true;
  if (err == cudaSuccess) err = download_payload(d_payload, d_size, out, capacity, size, &fits);
  int r = finish(err, "stuffing", msg, msg_size);
  if (r == C63_OK && !fits) {
    snprintf(msg, msg_size, "payload of %zu bytes exceeds the %zu-byte buffer", *size, capacity);
    return C63_ERR_INVALID_ARG;
  }
  return r;
}

namespace
{

c63_device test_device(void *ctx)
{
  c63_device d;
  d.id = 0;
  d.cuda_context = ctx;
  return d;
}

/* cuCtxCreate on device, made current. Runtimes from CUDA 12.5 on ask for
 * the ABI of CUDA 3.2, cuCtxCreate_v2 (ctx, flags, device), as GStreamer
 * calls it; older ones hand out their own version's (c63_cuda_driver_entry),
 * which from CUDA 11.4 on is cuCtxCreate_v3, with execution-affinity
 * parameters (none here) before the flags. */
int create_context(void **ctx, int device)
{
#if CUDART_VERSION >= 11040 && CUDART_VERSION < 12050
  typedef int (*create_fn)(void **ctx, void *affinity, int n_affinity, unsigned flags, int dev);
  create_fn create = reinterpret_cast<create_fn>(c63_cuda_driver_entry("cuCtxCreate", 11040));
  return create ? create(ctx, nullptr, 0, 0, device) : -1;
#else
  typedef int (*create_fn)(void **ctx, unsigned flags, int dev);
  create_fn create = reinterpret_cast<create_fn>(c63_cuda_driver_entry("cuCtxCreate", 3020));
  return create ? create(ctx, 0, device) : -1;
#endif
}

} // namespace

extern "C" void *c63_cuda_test_context_new(int device)
{
  typedef int (*pop_fn)(void **ctx);
  pop_fn pop = reinterpret_cast<pop_fn>(c63_cuda_driver_entry("cuCtxPopCurrent", 4000));
  void *ctx = nullptr, *popped;
  if (cudaFree(nullptr) != cudaSuccess || !pop) return nullptr; /* driver init */
  if (create_context(&ctx, device) != 0) return nullptr;
  pop(&popped); /* cuCtxCreate makes it current: leave the thread as it was */
  return ctx;
}

extern "C" void c63_cuda_test_context_free(void *ctx)
{
  typedef int (*destroy_fn)(void *ctx);
  destroy_fn destroy = reinterpret_cast<destroy_fn>(c63_cuda_driver_entry("cuCtxDestroy", 4000));
  if (ctx && destroy) destroy(ctx);
}

extern "C" void *c63_cuda_test_upload(void *ctx, const void *host, size_t size)
{
  c63_cuda_scope scope(test_device(ctx));
  void *d = nullptr;
  if (scope.error() != cudaSuccess || cudaMalloc(&d, size) != cudaSuccess) return nullptr;
  /* cudaMemcpy from pageable memory may return before the DMA into d is
   * over; the encoder reads d on a stream of its own, which does not wait
   * for the legacy default stream, so wait here as a producer would. */
  if (cudaMemcpy(d, host, size, cudaMemcpyHostToDevice) != cudaSuccess ||
      cudaDeviceSynchronize() != cudaSuccess) {
    cudaFree(d);
    return nullptr;
  }
  return d;
}

extern "C" void c63_cuda_test_device_free(void *ctx, void *ptr)
{
  c63_cuda_scope scope(test_device(ctx));
  cudaFree(ptr);
}
