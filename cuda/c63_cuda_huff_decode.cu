/* Entropy decoding on the GPU (c63_cuda_huff.h), the port of the C model
 * c63/huff_sync_model.c with the same per-field step (c63/huff_sync.h),
 * for a batch of frames at a time in six kernels (c63_cuda_huff_kernels.cuh):
 *   1. unstuff_frames (a CTA a frame): a scan of what each run of bytes
 *      does to the unstuffing places the kept bytes;
 *   2. run_candidates: six candidate decoders per subsequence (one per MCU
 *      position), to the first field boundary past its end;
 *   3. build_maps: per subsequence, a map from its predecessor's six
 *      candidates to the one of its own whose end state is the end of the
 *      decoding from theirs, and where none is, the decoding on through
 *      the next subsequences until it ends in a candidate's end state
 *      (a detour, its states stored);
 *   4. chain_and_count (a CTA a frame): a composition scan over the maps
 *      chains them from the frame's start, and where it breaks the detour
 *      of the entry on the true parse gives the next true starts (one
 *      thread decodes on past a detour's end); then fields and
 *      coefficients counted per subsequence from its true start and placed
 *      by a sum scan;
 *   5. decode_fields: the fields decoded into per-block arrays;
 *   6. assemble_frames (two CTAs a frame): DC prediction and the entries
 *      placed by scans in decoding order, vector reuse by a scan in raster
 *      order, the verdict the C model gives;
 * then one copy of the frames' verdicts to page-locked memory. Every write
 * is bounded by its buffer, whatever the data: a frame whose decoding would
 * go past one is handed to the CPU.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <new>
#include <stdlib.h>
#include <string.h>

#include "c63/c63.h"
#include "cuda/c63_cuda_huff.h"
#include "cuda/c63_cuda_huff_kernels.cuh"

/* A device array that only grows. Growing frees the old one, which waits
 * for the work that uses it: a warm stage allocates nothing. */
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
  frame_info *info = nullptr;      /* device, a batch's */
  frame_info *info_host = nullptr; /* page-locked */
  dev_array<uint8_t> input, bits;
  dev_array<c63_hs_state> cand_end, start;
  dev_array<uint8_t> map;
  dev_array<uint16_t> detour;
  dev_array<c63_hs_state> detour_states;
  dev_array<uint32_t> block_base, ac_base;
  /* per block */
  dev_array<uint8_t> use, reuse, count;
  dev_array<int8_t> mv_x, mv_y;
  dev_array<int16_t> dc_diff;
  dev_array<uint32_t> ac_first, ac, start_out, entries;
  dev_array<c63_mv> mvs;
  /* the batch in flight */
  batch plan;
  int handed[C63_CUDA_HUFF_MAX_BATCH] = {};
  size_t n_blocks = 0;
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

#define TRY(x)                                                                                     \
  do {                                                                                             \
    const cudaError_t e_ = (x);                                                                    \
    if (e_ != cudaSuccess) return e_;                                                              \
  } while (0)

cudaError_t reserve_all(c63_cuda_huff *h, const batch_sizes &sz, size_t n_frames)
{
  const size_t nb = sz.blocks;
  TRY(h->bits.reserve(sz.bits));
  TRY(h->cand_end.reserve(sz.subseqs * kPhases));
  TRY(h->map.reserve(sz.subseqs * kPhases));
  TRY(h->detour.reserve(sz.subseqs * kPhases));
  TRY(h->detour_states.reserve(sz.subseqs * kPhases * policy::kDetourDepth));
  TRY(h->start.reserve(sz.subseqs));
  TRY(h->block_base.reserve(sz.subseqs));
  TRY(h->ac_base.reserve(sz.subseqs));
  TRY(h->use.reserve(nb));
  TRY(h->reuse.reserve(nb));
  TRY(h->mv_x.reserve(nb));
  TRY(h->mv_y.reserve(nb));
  TRY(h->dc_diff.reserve(nb));
  TRY(h->ac_first.reserve(nb));
  TRY(h->ac.reserve(sz.ac));
  TRY(h->entries.reserve(sz.entries));
  /* the outputs: n_blocks a frame */
  TRY(h->start_out.reserve(nb - n_frames));
  TRY(h->count.reserve(nb - n_frames));
  TRY(h->mvs.reserve(nb - n_frames));
  return cudaSuccess;
}

stage_buffers buffers_of(c63_cuda_huff *h)
{
  stage_buffers B;
  B.luts = h->luts;
  B.bits = h->bits.p;
  B.info = h->info;
  B.cand_end = h->cand_end.p;
  B.start = h->start.p;
  B.map = h->map.p;
  B.detour = h->detour.p;
  B.detour_states = h->detour_states.p;
  B.block_base = h->block_base.p;
  B.ac_base = h->ac_base.p;
  B.bf = {h->use.p, h->reuse.p, h->mv_x.p, h->mv_y.p, h->dc_diff.p, h->ac_first.p, h->ac.p};
  B.out = {h->start_out.p, h->entries.p, h->count.p, h->mvs.p};
  return B;
}

/* The kernels of a batch, in order, on stream s; then the verdicts back. */
cudaError_t launch_batch(c63_cuda_huff *h, cudaStream_t s)
{
  const batch &b = h->plan;
  const stage_buffers B = buffers_of(h);
  uint32_t max_sub = 1;
  for (uint32_t i = 0; i < b.n; i++) {
    const uint32_t n_sub = (8 * b.f[i].size + policy::kSubseqBits - 1) / policy::kSubseqBits;
    if (n_sub > max_sub) max_sub = n_sub;
  }
  constexpr unsigned kT = policy::kDecodeThreads;
  const dim3 per_candidate((max_sub * kPhases + kT - 1) / kT, b.n);
  const dim3 per_subseq((max_sub + kT - 1) / kT, b.n);
  unstuff_frames<policy::kUnstuffThreads, policy::kUnstuffItems>
      <<<b.n, policy::kUnstuffThreads, 0, s>>>(b, B);
  run_candidates<<<per_candidate, kT, 0, s>>>(b, B);
  build_maps<policy::kDetourDepth><<<per_candidate, kT, 0, s>>>(b, B);
  chain_and_count<policy::kChainThreads, policy::kDetourDepth>
      <<<b.n, policy::kChainThreads, 0, s>>>(b, B);
  decode_fields<<<per_subseq, kT, 0, s>>>(b, B);
  assemble_frames<policy::kAssembleThreads, policy::kAssembleItems>
      <<<dim3(b.n, 2), policy::kAssembleThreads, 0, s>>>(b, B);
  TRY(cudaGetLastError());
  return cudaMemcpyAsync(h->info_host, h->info, b.n * sizeof(frame_info), cudaMemcpyDeviceToHost,
                         s);
}

} // namespace

extern "C" int c63_cuda_huff_new(c63_cuda_huff **out)
{
  *out = nullptr;
  c63_cuda_huff *h = new (std::nothrow) c63_cuda_huff();
  if (!h) return C63_ERR_NOMEM;
  cudaError_t e = cudaMalloc(&h->luts, sizeof(lut_tables));
  if (e == cudaSuccess) e = cudaMalloc(&h->info, C63_CUDA_HUFF_MAX_BATCH * sizeof(frame_info));
  if (e == cudaSuccess)
    e = cudaMallocHost(&h->info_host, C63_CUDA_HUFF_MAX_BATCH * sizeof(frame_info));
  if (e == cudaSuccess)
    e = cudaMemcpy(h->luts, c63_huff_luts(), sizeof(lut_tables), cudaMemcpyHostToDevice);
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
  h->cand_end.release();
  h->start.release();
  h->map.release();
  h->detour.release();
  h->detour_states.release();
  h->block_base.release();
  h->ac_base.release();
  h->use.release();
  h->reuse.release();
  h->count.release();
  h->mv_x.release();
  h->mv_y.release();
  h->dc_diff.release();
  h->ac_first.release();
  h->ac.release();
  h->start_out.release();
  h->entries.release();
  h->mvs.release();
  delete h;
}

extern "C" int c63_cuda_huff_enqueue(c63_cuda_huff *h, const c63_cuda_huff_frame *frames, int n,
                                     const c63_geometry *g, void *stream)
{
  h->n_batch = 0;
  if (n < 1 || n > C63_CUDA_HUFF_MAX_BATCH) return C63_ERR_INVALID_ARG;
  batch_sizes sz;
  plan_batch(frames, n, g, &h->plan, &sz, h->handed);
  h->n_blocks = c63_frame_blocks(g);
  int any = 0;
  for (int i = 0; i < n; i++)
    any |= !h->handed[i];
  if (!any) { /* nothing the stage takes (nothing to reserve for) */
    h->n_batch = n;
    return C63_OK;
  }
  cudaError_t e = reserve_all(h, sz, (size_t)n);
  if (e == cudaSuccess) e = launch_batch(h, (cudaStream_t)stream);
  if (e != cudaSuccess) return status_of(e);
  h->n_batch = n;
  return C63_OK;
}

extern "C" int c63_cuda_huff_result(c63_cuda_huff *h, int i, c63_cuda_huff_out *out)
{
  if (i < 0 || i >= h->n_batch) return C63_ERR_INVALID_ARG;
  const frame_info *fi = &h->info_host[i];
  if (h->handed[i] || fi->bad || fi->unpaired_ff) return C63_HS_HAND_TO_CPU;
  const size_t nb = h->n_blocks, first = (size_t)i * nb;
  *out = {h->start_out.p + first, h->count.p + first,
          h->mvs.p + first,       h->entries.p + h->plan.f[i].entries_off,
          fi->n_entries,          nb};
  return C63_OK;
}

extern "C" int c63_cuda_huff_wait(void *stream)
{
  return cudaStreamSynchronize((cudaStream_t)stream) == cudaSuccess ? C63_OK : C63_ERR_BACKEND;
}

extern "C" int c63_cuda_huff_decode(c63_cuda_huff *h, const uint8_t *data, size_t size,
                                    const c63_geometry *g, int keyframe, size_t entries_cap,
                                    void *stream, c63_cuda_huff_out *out)
{
  const c63_cuda_huff_frame frame = {data, size, keyframe, entries_cap};
  int r = c63_cuda_huff_enqueue(h, &frame, 1, g, stream);
  if (r != C63_OK) return r;
  if ((r = c63_cuda_huff_wait(stream)) != C63_OK) return r;
  return c63_cuda_huff_result(h, 0, out);
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
