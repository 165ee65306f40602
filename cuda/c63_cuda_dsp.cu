/* Per-stage entry points for tests (c63_cuda_dsp.h): one plane, synchronous,
 * through the same kernels as the backend.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <string.h>

#include "c63/c63.h"
#include "cuda/c63_cuda_dsp.h"
#include "cuda/c63_cuda_internal.h"

namespace
{

/* Device allocations of one call, freed together. */
struct scratch {
  void *ptr[4] = {};
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
};

bool check_size(int w, int h, char *msg, size_t msg_size)
{
  if (w < 8 || h < 8 || w % 8 || h % 8 || w > 2 * C63_MAX_SIZE || h > 2 * C63_MAX_SIZE) {
    snprintf(msg, msg_size, "plane size %dx%d is not a positive multiple of 8", w, h);
    return false;
  }
  return true;
}

c63_cu_planes one_plane(int w, int h, int range, int ac_limit, const uint8_t *quant)
{
  c63_cu_planes P;
  memset(&P, 0, sizeof P);
  P.n = 1;
  c63_cu_plane &pl = P.p[0];
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
    int status = c63_cu_error(err, what, msg, msg_size);
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

extern "C" int c63_cuda_motion_search(const uint8_t *cur, const uint8_t *ref, int w, int h,
                                      int range, c63_mv *mvs, char *msg, size_t msg_size)
{
  if (!check_size(w, h, msg, msg_size)) return C63_ERR_INVALID_ARG;
  if (range < 0 || range > C63_MAX_SEARCH_RANGE) {
    snprintf(msg, msg_size, "search range %d outside 0..%d", range, C63_MAX_SEARCH_RANGE);
    return C63_ERR_INVALID_ARG;
  }
  const size_t n = (size_t)w * h;
  const c63_cu_planes P = one_plane(w, h, range, 0, nullptr);
  scratch sc;
  uint8_t *d_cur, *d_ref;
  c63_mv *d_mvs;
  cudaError_t err = sc.upload(&d_cur, cur, n);
  if (err == cudaSuccess) err = sc.upload(&d_ref, ref, n);
  if (err == cudaSuccess) err = sc.alloc(&d_mvs, P.total_blocks * sizeof(c63_mv));
  if (err == cudaSuccess) err = c63_cu_motion_search(d_cur, d_ref, P.p[0], d_mvs, 0);
  if (err == cudaSuccess)
    err = cudaMemcpy(mvs, d_mvs, P.total_blocks * sizeof(c63_mv), cudaMemcpyDeviceToHost);
  return finish(err, "motion search", msg, msg_size);
}

extern "C" int c63_cuda_motion_compensate(const uint8_t *ref, int w, int h, const c63_mv *mvs,
                                          uint8_t *pred, char *msg, size_t msg_size)
{
  if (!check_size(w, h, msg, msg_size)) return C63_ERR_INVALID_ARG;
  const size_t n = (size_t)w * h;
  const c63_cu_planes P = one_plane(w, h, 0, 0, nullptr);
  scratch sc;
  uint8_t *d_ref, *d_pred;
  c63_mv *d_mvs;
  cudaError_t err = sc.upload(&d_ref, ref, n);
  if (err == cudaSuccess) err = sc.upload(&d_mvs, mvs, P.total_blocks * sizeof(c63_mv));
  if (err == cudaSuccess) err = sc.alloc(&d_pred, n);
  if (err == cudaSuccess) err = c63_cu_motion_compensate(d_ref, d_mvs, P, d_pred, 0);
  if (err == cudaSuccess) err = cudaMemcpy(pred, d_pred, n, cudaMemcpyDeviceToHost);
  return finish(err, "motion compensation", msg, msg_size);
}

extern "C" int c63_cuda_fdct_quant(const uint8_t *cur, const uint8_t *pred, int w, int h,
                                   const uint8_t quant[64], int ac_limit, int16_t *coeffs,
                                   char *msg, size_t msg_size)
{
  if (!check_size(w, h, msg, msg_size)) return C63_ERR_INVALID_ARG;
  const size_t n = (size_t)w * h;
  const c63_cu_planes P = one_plane(w, h, 0, ac_limit, quant);
  scratch sc;
  uint8_t *d_cur, *d_pred = nullptr;
  c63_mv *d_mvs = nullptr;
  int16_t *d_coeffs;
  cudaError_t err = sc.upload(&d_cur, cur, n);
  if (err == cudaSuccess && pred) err = sc.upload(&d_pred, pred, n);
  if (err == cudaSuccess && pred) err = identity_vectors(sc, P.total_blocks, &d_mvs);
  if (err == cudaSuccess) err = sc.alloc(&d_coeffs, n * sizeof(int16_t));
  if (err == cudaSuccess) err = c63_cu_fdct_quant(d_cur, d_pred, d_mvs, P, d_coeffs, 0);
  if (err == cudaSuccess)
    err = cudaMemcpy(coeffs, d_coeffs, n * sizeof(int16_t), cudaMemcpyDeviceToHost);
  return finish(err, "forward transform", msg, msg_size);
}

extern "C" int c63_cuda_dequant_idct_recon(const int16_t *coeffs, const uint8_t *pred, int w, int h,
                                           const uint8_t quant[64], uint8_t *recon, char *msg,
                                           size_t msg_size)
{
  if (!check_size(w, h, msg, msg_size)) return C63_ERR_INVALID_ARG;
  const size_t n = (size_t)w * h;
  const c63_cu_planes P = one_plane(w, h, 0, 0, quant);
  scratch sc;
  uint8_t *d_pred = nullptr, *d_recon;
  c63_mv *d_mvs = nullptr;
  int16_t *d_coeffs;
  cudaError_t err = sc.upload(&d_coeffs, coeffs, n * sizeof(int16_t));
  if (err == cudaSuccess && pred) err = sc.upload(&d_pred, pred, n);
  if (err == cudaSuccess && pred) err = identity_vectors(sc, P.total_blocks, &d_mvs);
  if (err == cudaSuccess) err = sc.alloc(&d_recon, n);
  if (err == cudaSuccess) err = c63_cu_dequant_idct_recon(d_coeffs, d_pred, d_mvs, P, d_recon, 0);
  if (err == cudaSuccess) err = cudaMemcpy(recon, d_recon, n, cudaMemcpyDeviceToHost);
  return finish(err, "reconstruction", msg, msg_size);
}
