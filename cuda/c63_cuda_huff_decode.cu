/* Entropy decoding on the GPU (c63_cuda_huff.h), the port of the C model
 * c63/huff_sync_model.c with the same per-field step (c63/huff_sync.h), as
 * short kernels in five stages:
 *   1. unstuff: a max-scan finds each run of FF bytes, the byte after each
 *      odd FF of a run is dropped, a sum-scan places the kept bytes;
 *   2. synchronise: six candidate decoders per subsequence (one per MCU
 *      position); per subsequence a map from its predecessor's six
 *      candidates to the one of its own that the true decoding meets; a
 *      composition scan over the maps chains them from the frame's start,
 *      and where it breaks one thread decodes on until a candidate is met;
 *   3. place: fields and coefficients counted per subsequence from its true
 *      start, sum-scans, then decoded into their places;
 *   4. predict: DC prediction (a scan adding the differences per plane)
 *      and vector reuse (a scan carrying the last vector set);
 *   5. the sparse frame, with the verdict the C model gives.
 * Every write is bounded by its buffer, whatever the data: a frame whose
 * decoding would go past one is handed to the CPU.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <cub/device/device_scan.cuh>

#include <new>
#include <stdlib.h>
#include <string.h>

#include "c63/c63.h"
#include "cuda/c63_cuda_huff.h"
#include "cuda/c63_cuda_huff_kernels.cuh"

/* ---- host side ---- */

/* A device array that only grows. */
template <typename T> struct dev_array {
  T *p = nullptr;
  size_t cap = 0;
  cudaError_t reserve(size_t n)
  {
    if (n <= cap) return cudaSuccess;
    cudaFree(p);
    p = nullptr;
    cap = 0;
    const size_t want = n + n / 4 + 64;
    cudaError_t e = cudaMalloc(&p, want * sizeof(T));
    if (e == cudaSuccess) cap = want;
    return e;
  }
  void release()
  {
    cudaFree(p);
    p = nullptr;
    cap = 0;
  }
};

struct c63_cuda_huff {
  c63_huff_lut *luts = nullptr;
  frame_info *info = nullptr;      /* device */
  frame_info *info_host = nullptr; /* page-locked */
  dev_array<uint8_t> input, bits;
  dev_array<int32_t> mark, last_non_ff;
  dev_array<uint32_t> keep, dst;
  dev_array<c63_hs_state> cand_end, start, frame_end;
  dev_array<uint8_t> map;
  dev_array<uint32_t> blocks, block_base, acs, ac_base;
  /* per block */
  dev_array<uint8_t> use, reuse, count;
  dev_array<int8_t> mv_x, mv_y;
  dev_array<int16_t> dc_diff, dc;
  dev_array<uint32_t> n_ac, ac_first, n_entries, entry_base, ac, mv_src, mv_last, start_out,
      entries;
  dev_array<uint64_t> dc_lanes, dc_sum;
  dev_array<c63_mv> mvs;
  dev_array<uint8_t> temp; /* CUB's */
  /* A batch, a frame at a time: one stage and one verdict a frame. */
  c63_cuda_huff *frame_stage[C63_CUDA_HUFF_MAX_BATCH] = {};
  int verdict[C63_CUDA_HUFF_MAX_BATCH] = {};
  c63_cuda_huff_out result[C63_CUDA_HUFF_MAX_BATCH] = {};
  int n_batch = 0;
};

namespace
{

int status_of(cudaError_t e)
{
  return e == cudaSuccess                 ? C63_OK
         : e == cudaErrorMemoryAllocation ? C63_ERR_NOMEM
                                          : C63_ERR_BACKEND;
}

unsigned grid_for(size_t n)
{
  return (unsigned)((n + policy::kThreads - 1) / policy::kThreads);
}

/* CUB's scans with the workspace's temporary storage. */
template <typename In, typename Out, typename Op>
cudaError_t inclusive_scan(c63_cuda_huff *h, In in, Out out, Op op, size_t n, cudaStream_t s)
{
  size_t bytes = 0;
  cudaError_t e = cub::DeviceScan::InclusiveScan(nullptr, bytes, in, out, op, (int)n, s);
  if (e == cudaSuccess) e = h->temp.reserve(bytes);
  if (e == cudaSuccess)
    e = cub::DeviceScan::InclusiveScan(h->temp.p, bytes, in, out, op, (int)n, s);
  return e;
}

cudaError_t exclusive_sum(c63_cuda_huff *h, const uint32_t *in, uint32_t *out, size_t n,
                          cudaStream_t s)
{
  size_t bytes = 0;
  cudaError_t e = cub::DeviceScan::ExclusiveSum(nullptr, bytes, in, out, (int)n, s);
  if (e == cudaSuccess) e = h->temp.reserve(bytes);
  if (e == cudaSuccess) e = cub::DeviceScan::ExclusiveSum(h->temp.p, bytes, in, out, (int)n, s);
  return e;
}

#define TRY(x)                                                                                     \
  do {                                                                                             \
    const cudaError_t e_ = (x);                                                                    \
    if (e_ != cudaSuccess) return e_;                                                              \
  } while (0)

cudaError_t reserve_all(c63_cuda_huff *h, size_t size, size_t max_threads, size_t n_blocks,
                        size_t entries_cap, size_t ac_cap)
{
  TRY(h->bits.reserve(size + 8));
  TRY(h->mark.reserve(size));
  TRY(h->last_non_ff.reserve(size));
  TRY(h->keep.reserve(size + 1));
  TRY(h->dst.reserve(size + 1));
  TRY(h->cand_end.reserve(max_threads * kPhases));
  TRY(h->map.reserve(max_threads * kPhases));
  TRY(h->start.reserve(max_threads));
  TRY(h->frame_end.reserve(1));
  TRY(h->blocks.reserve(max_threads + 1));
  TRY(h->block_base.reserve(max_threads + 1));
  TRY(h->acs.reserve(max_threads + 1));
  TRY(h->ac_base.reserve(max_threads + 1));
  TRY(h->use.reserve(n_blocks));
  TRY(h->reuse.reserve(n_blocks));
  TRY(h->count.reserve(n_blocks));
  TRY(h->mv_x.reserve(n_blocks));
  TRY(h->mv_y.reserve(n_blocks));
  TRY(h->dc_diff.reserve(n_blocks));
  TRY(h->dc.reserve(n_blocks));
  TRY(h->n_ac.reserve(n_blocks));
  TRY(h->ac_first.reserve(n_blocks));
  TRY(h->n_entries.reserve(n_blocks + 1));
  TRY(h->entry_base.reserve(n_blocks + 1));
  TRY(h->mv_src.reserve(n_blocks));
  TRY(h->mv_last.reserve(n_blocks));
  TRY(h->start_out.reserve(n_blocks));
  TRY(h->dc_lanes.reserve(n_blocks));
  TRY(h->dc_sum.reserve(n_blocks));
  TRY(h->mvs.reserve(n_blocks));
  TRY(h->ac.reserve(ac_cap));
  TRY(h->entries.reserve(entries_cap));
  return cudaSuccess;
}

/* Stage 1: the unstuffed bits, zero-padded, and the frame's info. */
cudaError_t unstuff(c63_cuda_huff *h, const uint8_t *data, uint32_t n, cudaStream_t s)
{
  mark_non_ff<<<grid_for(n), policy::kThreads, 0, s>>>(data, n, h->mark.p);
  TRY(cudaGetLastError());
  TRY(inclusive_scan(h, h->mark.p, h->last_non_ff.p, max_op(), n, s));
  flag_kept<<<grid_for(n + 1), policy::kThreads, 0, s>>>(data, n, h->last_non_ff.p, h->keep.p);
  TRY(cudaGetLastError());
  TRY(exclusive_sum(h, h->keep.p, h->dst.p, n + 1, s));
  TRY(cudaMemsetAsync(h->bits.p, 0, n + 8, s));
  scatter_kept<<<grid_for(n), policy::kThreads, 0, s>>>(data, n, h->keep.p, h->dst.p, h->bits.p);
  frame_begin<<<1, 1, 0, s>>>(data, n, h->last_non_ff.p, h->dst.p, h->info);
  return cudaGetLastError();
}

/* Stage 2: each subsequence's true start. */
cudaError_t synchronise(c63_cuda_huff *h, bits_view v, uint32_t max_threads, cudaStream_t s)
{
  const size_t n_cand = (size_t)max_threads * kPhases;
  run_candidates<<<grid_for(n_cand), policy::kThreads, 0, s>>>(v, h->info, max_threads,
                                                               h->cand_end.p);
  build_maps<<<grid_for(n_cand), policy::kThreads, 0, s>>>(v, h->info, max_threads, h->cand_end.p,
                                                           h->map.p);
  chain_starts<policy::kChainThreads>
      <<<1, policy::kChainThreads, 0, s>>>(v, h->info, h->cand_end.p, h->map.p, h->start.p);
  return cudaGetLastError();
}

block_fields fields_of(c63_cuda_huff *h)
{
  return {h->use.p, h->reuse.p, h->mv_x.p, h->mv_y.p, h->dc_diff.p, h->n_ac.p, h->ac.p};
}

/* Stage 3: the fields at their places. */
cudaError_t place(c63_cuda_huff *h, bits_view v, const frame_shape &sh, uint32_t max_threads,
                  cudaStream_t s)
{
  const size_t nb = (size_t)sh.n_blocks;
  count_fields<<<grid_for(max_threads + 1), policy::kThreads, 0, s>>>(
      v, h->info, max_threads, h->start.p, h->blocks.p, h->acs.p, h->frame_end.p);
  TRY(exclusive_sum(h, h->blocks.p, h->block_base.p, max_threads + 1, s));
  TRY(exclusive_sum(h, h->acs.p, h->ac_base.p, max_threads + 1, s));
  TRY(cudaMemsetAsync(h->use.p, 0, nb, s));
  TRY(cudaMemsetAsync(h->reuse.p, 0, nb, s));
  TRY(cudaMemsetAsync(h->mv_x.p, 0, nb, s));
  TRY(cudaMemsetAsync(h->mv_y.p, 0, nb, s));
  TRY(cudaMemsetAsync(h->dc_diff.p, 0, nb * sizeof(int16_t), s));
  TRY(cudaMemsetAsync(h->n_ac.p, 0, nb * sizeof(uint32_t), s));
  decode_fields<<<grid_for(max_threads), policy::kThreads, 0, s>>>(
      v, h->info, sh, h->start.p, h->block_base.p, h->ac_base.p, fields_of(h));
  return cudaGetLastError();
}

/* Stages 4 and 5: predictions, then the sparse frame. */
cudaError_t assemble(c63_cuda_huff *h, const frame_shape &sh, cudaStream_t s)
{
  const size_t nb = (size_t)sh.n_blocks;
  prepare_blocks<<<grid_for(nb), policy::kThreads, 0, s>>>(h->info, sh, fields_of(h), h->dc_lanes.p,
                                                           h->mv_src.p);
  TRY(cudaGetLastError());
  TRY(inclusive_scan(h, h->dc_lanes.p, h->dc_sum.p, lane_add_op(), nb, s));
  TRY(inclusive_scan(h, h->mv_src.p, h->mv_last.p, last_set_op(), nb, s));
  count_entries<<<grid_for(nb + 1), policy::kThreads, 0, s>>>(sh, fields_of(h), h->dc_sum.p,
                                                              h->dc.p, h->n_entries.p);
  TRY(cudaGetLastError());
  TRY(exclusive_sum(h, h->n_entries.p, h->entry_base.p, nb + 1, s));
  TRY(exclusive_sum(h, h->n_ac.p, h->ac_first.p, nb, s));
  const sparse_view out = {h->start_out.p, h->entries.p, h->count.p, h->mvs.p};
  write_blocks<<<grid_for(nb), policy::kThreads, 0, s>>>(
      h->info, sh, fields_of(h), h->dc.p, h->entry_base.p, h->ac_first.p, h->mv_last.p, out);
  final_verdict<<<1, 1, 0, s>>>(h->info, sh, h->block_base.p, h->frame_end.p);
  return cudaGetLastError();
}

} // namespace

extern "C" int c63_cuda_huff_new(c63_cuda_huff **out)
{
  *out = nullptr;
  c63_cuda_huff *h = new (std::nothrow) c63_cuda_huff();
  if (!h) return C63_ERR_NOMEM;
  cudaError_t e = cudaMalloc(&h->luts, 4 * sizeof(c63_huff_lut));
  if (e == cudaSuccess) e = cudaMalloc(&h->info, sizeof(frame_info));
  if (e == cudaSuccess) e = cudaMallocHost(&h->info_host, sizeof(frame_info));
  if (e == cudaSuccess)
    e = cudaMemcpy(h->luts, c63_huff_luts(), 4 * sizeof(c63_huff_lut), cudaMemcpyHostToDevice);
  if (e != cudaSuccess) {
    c63_cuda_huff_free(h);
    return status_of(e);
  }
  *out = h;
  return C63_OK;
}

extern "C" void c63_cuda_huff_free(c63_cuda_huff *h)
{
  if (!h) return;
  cudaFree(h->luts);
  cudaFree(h->info);
  cudaFreeHost(h->info_host);
  h->input.release();
  h->bits.release();
  h->mark.release();
  h->last_non_ff.release();
  h->keep.release();
  h->dst.release();
  h->cand_end.release();
  h->start.release();
  h->frame_end.release();
  h->map.release();
  h->blocks.release();
  h->block_base.release();
  h->acs.release();
  h->ac_base.release();
  h->use.release();
  h->reuse.release();
  h->count.release();
  h->mv_x.release();
  h->mv_y.release();
  h->dc_diff.release();
  h->dc.release();
  h->n_ac.release();
  h->ac_first.release();
  h->n_entries.release();
  h->entry_base.release();
  h->ac.release();
  h->mv_src.release();
  h->mv_last.release();
  h->start_out.release();
  h->entries.release();
  h->dc_lanes.release();
  h->dc_sum.release();
  h->mvs.release();
  h->temp.release();
  for (int i = 0; i < C63_CUDA_HUFF_MAX_BATCH; i++)
    c63_cuda_huff_free(h->frame_stage[i]);
  delete h;
}

static int decode_one(c63_cuda_huff *h, const uint8_t *data, size_t size, const c63_geometry *g,
                      int keyframe, size_t entries_cap, void *stream, c63_cuda_huff_out *out)
{
  cudaStream_t s = (cudaStream_t)stream;
  const size_t n_blocks = c63_frame_blocks(g);
  /* as the C model: sizes whose bit positions need more than 32 bits */
  if (size == 0 || size > UINT32_MAX / 8 - 8 || n_blocks >= INT32_MAX / 2)
    return C63_HS_HAND_TO_CPU;
  const uint32_t n = (uint32_t)size;
  const uint32_t max_threads = (8 * n + policy::kSubseqBits - 1) / policy::kSubseqBits;
  /* a non-zero AC coefficient takes at least three bits */
  const size_t ac_cap = (size_t)8 * n / 3 + 64;
  cudaError_t e = reserve_all(h, size, max_threads, n_blocks, entries_cap, ac_cap);
  if (e != cudaSuccess) return status_of(e);
  const frame_shape sh = shape_of(g, keyframe, entries_cap, ac_cap);
  const bits_view v = {h->luts, h->bits.p};
  if ((e = unstuff(h, data, n, s)) != cudaSuccess || (e = synchronise(h, v, max_threads, s)) ||
      (e = place(h, v, sh, max_threads, s)) || (e = assemble(h, sh, s)) ||
      (e = cudaMemcpyAsync(h->info_host, h->info, sizeof(frame_info), cudaMemcpyDeviceToHost, s)) ||
      (e = cudaStreamSynchronize(s)))
    return status_of(e);
  const frame_info *fi = h->info_host;
  if (fi->bad || fi->unpaired_ff) return C63_HS_HAND_TO_CPU;
  *out = {h->start_out.p, h->count.p, h->mvs.p, h->entries.p, fi->n_entries, n_blocks};
  return C63_OK;
}

extern "C" const uint8_t *c63_cuda_huff_upload(c63_cuda_huff *h, const uint8_t *data, size_t size)
{
  if (h->input.reserve(size + 1) != cudaSuccess ||
      cudaMemcpy(h->input.p, data, size, cudaMemcpyHostToDevice) != cudaSuccess)
    return nullptr;
  return h->input.p;
}

extern "C" int c63_cuda_huff_download(c63_cuda_huff *h, const c63_cuda_huff_out *out,
                                      c63_sparse_frame *f)
{
  (void)h;
  if (f->blocks_cap < out->n_blocks || f->entries_cap < out->n_entries) return C63_ERR_INVALID_ARG;
  cudaError_t e =
      cudaMemcpy(f->start, out->start, out->n_blocks * sizeof(uint32_t), cudaMemcpyDeviceToHost);
  if (e == cudaSuccess) e = cudaMemcpy(f->count, out->count, out->n_blocks, cudaMemcpyDeviceToHost);
  if (e == cudaSuccess)
    e = cudaMemcpy(f->mvs, out->mvs, out->n_blocks * sizeof(c63_mv), cudaMemcpyDeviceToHost);
  if (e == cudaSuccess && out->n_entries)
    e = cudaMemcpy(f->entries, out->entries, out->n_entries * sizeof(uint32_t),
                   cudaMemcpyDeviceToHost);
  f->n_entries = out->n_entries;
  return status_of(e);
}

extern "C" int c63_cuda_huff_enqueue(c63_cuda_huff *h, const c63_cuda_huff_frame *frames, int n,
                                     const c63_geometry *g, void *stream)
{
  if (n < 1 || n > C63_CUDA_HUFF_MAX_BATCH) return C63_ERR_INVALID_ARG;
  h->n_batch = 0;
  for (int i = 0; i < n; i++) {
    int r = h->frame_stage[i] ? C63_OK : c63_cuda_huff_new(&h->frame_stage[i]);
    if (r == C63_OK)
      r = decode_one(h->frame_stage[i], frames[i].data, frames[i].size, g, frames[i].keyframe,
                     frames[i].entries_cap, stream, &h->result[i]);
    if (r != C63_OK && r != C63_HS_HAND_TO_CPU) return r;
    h->verdict[i] = r;
  }
  h->n_batch = n;
  return C63_OK;
}

extern "C" int c63_cuda_huff_result(c63_cuda_huff *h, int i, c63_cuda_huff_out *out)
{
  if (i < 0 || i >= h->n_batch) return C63_ERR_INVALID_ARG;
  if (h->verdict[i] == C63_OK) *out = h->result[i];
  return h->verdict[i];
}

extern "C" int c63_cuda_huff_decode(c63_cuda_huff *h, const uint8_t *data, size_t size,
                                    const c63_geometry *g, int keyframe, size_t entries_cap,
                                    void *stream, c63_cuda_huff_out *out)
{
  return decode_one(h, data, size, g, keyframe, entries_cap, stream, out);
}
