/* The GPU entropy decoder's kernels (cuda/c63_cuda_huff_kernels.cuh) run on
 * the CPU, for machines without a GPU, on batches of frames as
 * c63_cuda_huff_decode.cu launches them: the kernels with a thread per
 * candidate or subsequence run their CTAs' threads one after the other;
 * the kernels with a CTA a frame run each CTA's threads as real threads
 * with a barrier for __syncthreads and a stand-in for CUB's block scan
 * (CTAs smaller than the GPU's, so frames take several tiles). Every
 * buffer is exactly as large as plan_batch sizes it (run it under ASan to
 * catch a read past one) and filled with a different pattern before each
 * batch (the GPU's buffers hold whatever the last batch left). Each frame's
 * result must equal c63_entropy_decode's sparse frame, and its verdict the
 * C model's (c63/huff_sync_model.c), whatever its neighbours in the batch:
 * batches of a stream's frames (keyframes and delta frames), of one frame,
 * and of corrupt copies between good frames; on conformance streams and
 * generated clips. The fallbacks' detours (build_maps) are of the GPU's
 * depth and of 2 subsequences in turn, and the test fails unless the
 * chain both copies detours and walks on past one.
 * tests/cuda/test_cuda_huff.c holds the real thing to the same on a GPU.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <barrier>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

extern "C" {
#include "c63/entropy.h"
#include "c63/huff_sync_model.h"
#include "tutil.h"
}

/* What the kernels need of CUDA. */
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(x)
#define __shared__ static
struct host_dim {
  unsigned x, y;
};
static thread_local host_dim blockIdx, threadIdx, blockDim;
static std::barrier<> *cta_barrier;
static std::mutex atomics;
static void __syncthreads()
{
  cta_barrier->arrive_and_wait();
}
static unsigned atomicMin(uint32_t *p, uint32_t v)
{
  std::lock_guard<std::mutex> l(atomics);
  const unsigned o = *p;
  if (v < o) *p = v;
  return o;
}
static unsigned atomicOr(uint32_t *p, uint32_t v)
{
  std::lock_guard<std::mutex> l(atomics);
  const unsigned o = *p;
  *p |= v;
  return o;
}
namespace cub
{
/* BlockScan's scans that the kernels use, through shared storage. */
template <class T, int N> struct BlockScan {
  struct TempStorage {
    T v[N];
  };
  TempStorage &s;
  explicit BlockScan(TempStorage &t) : s(t) {}
  template <class Op> void InclusiveScan(T in, T &out, Op op, T &aggregate)
  {
    s.v[threadIdx.x] = in;
    __syncthreads();
    T acc = s.v[0];
    for (unsigned i = 1; i <= threadIdx.x; i++)
      acc = op(acc, s.v[i]);
    out = acc;
    T all = s.v[0];
    for (int i = 1; i < N; i++)
      all = op(all, s.v[i]);
    aggregate = all;
    __syncthreads();
  }
  /* Blocked arrangement: thread i holds items i * K ..; the aggregate
   * leaves the initial value out, as CUB's. */
  template <int K, class Op>
  void ExclusiveScan(T (&in)[K], T (&out)[K], T init, Op op, T &aggregate)
  {
    T local = in[0];
    for (int j = 1; j < K; j++)
      local = op(local, in[j]);
    s.v[threadIdx.x] = local;
    __syncthreads();
    T acc = init;
    for (unsigned i = 0; i < threadIdx.x; i++)
      acc = op(acc, s.v[i]);
    for (int j = 0; j < K; j++) {
      out[j] = acc;
      acc = op(acc, in[j]);
    }
    T all = s.v[0];
    for (int i = 1; i < N; i++)
      all = op(all, s.v[i]);
    aggregate = all;
    __syncthreads();
  }
};
} // namespace cub

#include "cuda/c63_cuda_huff_kernels.cuh"

/* A launch of grid_x * grid_y CTAs of cta threads, each thread after the
 * other (kernels without barriers on the host). */
template <class F, class... A>
static void launch(unsigned grid_x, unsigned grid_y, unsigned cta, F kernel, A... args)
{
  blockDim.x = cta;
  for (unsigned y = 0; y < grid_y; y++)
    for (unsigned x = 0; x < grid_x; x++)
      for (unsigned i = 0; i < cta; i++) {
        blockIdx = {x, y};
        threadIdx = {i, 0};
        kernel(args...);
      }
}

/* A launch of grid_x * grid_y CTAs (one or more a frame), their threads
 * real ones: the CTAs one after the other (their shared memory is the
 * kernel's statics). */
template <int kCta, class F, class... A>
static void launch_ctas(unsigned grid_x, unsigned grid_y, F kernel, A... args)
{
  for (unsigned n = 0; n < grid_x * grid_y; n++) {
    const unsigned x = n % grid_x, y = n / grid_x;
    std::barrier<> bar(kCta);
    cta_barrier = &bar;
    std::vector<std::thread> threads;
    for (int i = 0; i < kCta; i++)
      threads.emplace_back([=] {
        blockIdx = {x, y};
        blockDim.x = kCta;
        threadIdx = {(unsigned)i, 0};
        kernel(args...);
      });
    for (auto &t : threads)
      t.join();
  }
}

/* The CTA kernels' shapes here: small, so frames take several tiles. */
constexpr int kCta = 16;
constexpr int kUnstuffItems = 64, kAssembleItems = 32;

/* A buffer exactly as large as asked, holding garbage. */
template <class T> static std::vector<T> garbage(size_t n, uint64_t *rng)
{
  std::vector<T> v(n);
  for (auto &x : v)
    memset(&x, (int)(tu_rand(rng) & 0xff), sizeof(T));
  return v;
}

/* Detours of 2 subsequences in every other batch, for runs of fallbacks
 * longer than that (walked on by one thread); the GPU's in the others. */
constexpr int kShortDepth = 2;

/* The stage's kernels, in c63_cuda_huff_enqueue's order, for a batch of n
 * frames whose longest has max_sub subsequences. */
template <int kDepth>
static void run_stage(const batch &b, const stage_buffers &B, uint32_t max_sub)
{
  constexpr unsigned kT = policy::kDecodeThreads;
  launch_ctas<kCta>(b.n, 1, unstuff_frames<kCta, kUnstuffItems>, b, B);
  launch((max_sub * kPhases + kT - 1) / kT, b.n, kT, run_candidates, b, B);
  launch((max_sub * kPhases + kT - 1) / kT, b.n, kT, build_maps<kDepth>, b, B);
  launch_ctas<kCta>(b.n, 1, chain_and_count<kCta, kDepth>, b, B);
  launch((max_sub + kT - 1) / kT, b.n, kT, decode_fields, b, B);
  launch_ctas<kCta>(b.n, 2, assemble_frames<kCta, kAssembleItems>, b, B);
}

/* How the chain went on the true parse, from a batch's true starts: the
 * subsequences whose true end is no candidate's (fallbacks), their runs
 * (each a detour copied), and the runs longer than the detours (walked on
 * by one thread). */
struct chain_counts {
  long fallbacks, runs, runs_past_depth;
};
static chain_counts counts_short, counts_long;

static void count_chain(const frame_info &fi, const c63_hs_state *cand_end,
                        const c63_hs_state *start, int depth, chain_counts *cc)
{
  uint32_t run = 0;
  for (uint32_t t = 0; t + 1 < fi.n_threads; t++) {
    const int fell_back = matching_candidate(cand_end + t * kPhases, start[t + 1]) == kNoMeet;
    cc->fallbacks += fell_back;
    run = fell_back ? run + 1 : 0;
    cc->runs += run == 1;
    /* the detour is walked past when its start's run goes on, and the
     * frame too */
    cc->runs_past_depth += run == (uint32_t)depth + 1;
  }
}

/* One frame of a batch: what the test holds it to. */
struct test_frame {
  const uint8_t *data;
  size_t size;
  int keyframe, corrupt;
  const char *what;
};

static c63_sparse_frame cpu, model;
static int frames, corrupt_frames, handed, batches;

/* c63_cuda_huff_enqueue's kernels on the host for a batch of frames of
 * geometry g; each frame's result checked. */
static void check_batch(const std::vector<test_frame> &in, const c63_geometry *g, uint64_t *rng)
{
  const int n = (int)in.size();
  const size_t nb = c63_frame_blocks(g);
  std::vector<c63_cuda_huff_frame> frames_in(n);
  for (int i = 0; i < n; i++)
    frames_in[i] = {in[i].data, in[i].size, in[i].keyframe,
                    c63_sparse_entries_bound(g, in[i].size)};
  batch b;
  batch_sizes sz;
  int handed_by_plan[C63_CUDA_HUFF_MAX_BATCH];
  plan_batch(frames_in.data(), n, g, &b, &sz, handed_by_plan);
  auto bits = garbage<uint8_t>(sz.bits, rng), map = garbage<uint8_t>(sz.subseqs * kPhases, rng);
  const int depth = batches % 2 ? kShortDepth : policy::kDetourDepth;
  auto cand_end = garbage<c63_hs_state>(sz.subseqs * kPhases, rng),
       start = garbage<c63_hs_state>(sz.subseqs, rng);
  auto detour = garbage<uint16_t>(sz.subseqs * kPhases, rng);
  auto detour_states = garbage<c63_hs_state>(sz.subseqs * kPhases * depth, rng);
  auto block_base = garbage<uint32_t>(sz.subseqs, rng),
       ac_base = garbage<uint32_t>(sz.subseqs, rng);
  auto use = garbage<uint8_t>(sz.blocks, rng), reuse = garbage<uint8_t>(sz.blocks, rng);
  auto mv_x = garbage<int8_t>(sz.blocks, rng), mv_y = garbage<int8_t>(sz.blocks, rng);
  auto dc_diff = garbage<int16_t>(sz.blocks, rng);
  auto ac_first = garbage<uint32_t>(sz.blocks, rng), ac = garbage<uint32_t>(sz.ac, rng);
  auto start_out = garbage<uint32_t>(n * nb, rng), entries = garbage<uint32_t>(sz.entries, rng);
  auto count = garbage<uint8_t>(n * nb, rng);
  auto mvs = garbage<c63_mv>(n * nb, rng);
  auto info = garbage<frame_info>(n, rng);
  stage_buffers B;
  B.luts = c63_huff_luts();
  B.bits = bits.data();
  B.info = info.data();
  B.cand_end = cand_end.data();
  B.start = start.data();
  B.map = map.data();
  B.detour = detour.data();
  B.detour_states = detour_states.data();
  B.block_base = block_base.data();
  B.ac_base = ac_base.data();
  B.bf = {use.data(),     reuse.data(),    mv_x.data(), mv_y.data(),
          dc_diff.data(), ac_first.data(), ac.data()};
  B.out = {start_out.data(), entries.data(), count.data(), mvs.data()};
  uint32_t max_sub = 1;
  for (int i = 0; i < n; i++) {
    const uint32_t s = (8 * b.f[i].size + policy::kSubseqBits - 1) / policy::kSubseqBits;
    if (s > max_sub) max_sub = s;
  }
  if (depth == kShortDepth)
    run_stage<kShortDepth>(b, B, max_sub);
  else
    run_stage<policy::kDetourDepth>(b, B, max_sub);
  batches++;
  for (int i = 0; i < n; i++) {
    const test_frame &fr = in[i];
    const int got =
        handed_by_plan[i] || info[i].bad || info[i].unpaired_ff ? C63_HS_HAND_TO_CPU : C63_OK;
    const size_t bound = c63_sparse_entries_bound(g, fr.size);
    if (c63_sparse_frame_reserve(&cpu, nb, bound, 0) ||
        c63_sparse_frame_reserve(&model, nb, bound, 0))
      abort();
    /* exactly the stage's room for entries */
    c63_sparse_frame cpu_f = cpu, model_f = model;
    cpu_f.entries_cap = model_f.entries_cap = bound;
    char msg[256];
    const int want = c63_entropy_decode(fr.data, fr.size, g, fr.keyframe, &cpu_f, msg, sizeof msg);
    const int verdict =
        c63_hs_model_decode(fr.data, fr.size, g, fr.keyframe, policy::kSubseqBits, &model_f, NULL);
    fr.corrupt ? corrupt_frames++ : frames++;
    if (!fr.corrupt && verdict == C63_OK)
      count_chain(info[i], cand_end.data() + (size_t)b.f[i].sub_off * kPhases,
                  start.data() + b.f[i].sub_off, depth,
                  depth == kShortDepth ? &counts_short : &counts_long);
    TU_CHECK(got == verdict, "%s (%d of a batch of %d): verdict %d, the C model's %d", fr.what, i,
             n, got, verdict);
    if (!fr.corrupt)
      TU_CHECK(want == C63_OK && got == C63_OK, "%s: %d, %d (%s)", fr.what, want, got, msg);
    if (got != C63_OK) {
      handed++;
      continue;
    }
    TU_CHECK(want == C63_OK, "%s: a picture where the CPU says: %s", fr.what, msg);
    if (want != C63_OK) continue;
    const c63_sparse_frame &cpu = cpu_f;
    const uint32_t *e = entries.data() + b.f[i].entries_off;
    const size_t first = (size_t)i * nb;
    for (size_t k = 0; k < nb; k++) {
      const uint32_t at = start_out[first + k];
      const int same = cpu.count[k] == count[first + k] &&
                       !memcmp(&cpu.mvs[k], &mvs[first + k], 4) &&
                       (size_t)at + cpu.count[k] <= b.f[i].entries_cap &&
                       !memcmp(cpu.entries + cpu.start[k], e + at, cpu.count[k] * 4u);
      TU_CHECK(same, "%s (%d of a batch of %d): block %zu differs", fr.what, i, n, k);
      if (!same) break;
    }
    TU_CHECK(cpu_f.n_entries == info[i].n_entries, "%s: entries differ", fr.what);
  }
}

/* Corrupt copies of a frame: flipped bits, flipped bytes, cut short. */
static std::vector<uint8_t> corrupt_copy(const uint8_t *d, size_t size, int trial, uint64_t *rng,
                                         size_t *cut)
{
  std::vector<uint8_t> copy(d, d + size);
  *cut = size;
  if (trial % 4 == 3)
    *cut = tu_rand(rng) % size;
  else
    for (int k = 0; k <= trial % 4; k++)
      copy[tu_rand(rng) % size] ^= (uint8_t)(trial & 1 ? 0xff : 1 << (tu_rand(rng) % 8));
  return copy;
}

/* The first frames of a stream (of one geometry): in one batch, each
 * alone, and with corrupt copies of two of them between them. */
static void check_stream(const uint8_t *s, size_t len, const char *what, int max_frames)
{
  uint64_t rng = 0x63c63 ^ len;
  std::vector<test_frame> good;
  std::vector<std::string> names;
  c63_geometry g{};
  names.reserve(64);
  size_t off = 0;
  for (int n = 0; off < len && n < max_frames; n++) {
    c63_frame_header hdr;
    TU_CHECK(c63_parse_frame_header(s + off, len - off, &hdr, NULL, 0) == C63_OK,
             "%s: frame %d does not parse", what, n);
    if (tu_failures) return;
    c63_geometry_init(&g, hdr.width, hdr.height);
    names.push_back(std::string(what) + " frame " + std::to_string(n));
    good.push_back({s + off + hdr.data_offset, hdr.data_size, hdr.keyframe, 0, nullptr});
    off += hdr.frame_size;
  }
  for (size_t i = 0; i < good.size(); i++)
    good[i].what = names[i].c_str();
  check_batch(good, &g, &rng);
  check_batch({good[0]}, &g, &rng);
  std::vector<std::vector<uint8_t>> copies;
  std::vector<std::string> copy_names;
  copy_names.reserve(64);
  std::vector<test_frame> mixed;
  for (size_t i = 0; i < good.size() && i < 2; i++)
    for (int trial = 0; trial < 12; trial++) {
      size_t cut;
      copies.push_back(corrupt_copy(good[i].data, good[i].size, trial, &rng, &cut));
      copy_names.push_back(names[i] + " corruption " + std::to_string(trial));
      mixed.push_back({copies.back().data(), cut, good[i].keyframe, 1, copy_names.back().c_str()});
      mixed.push_back(good[(trial + i) % good.size()]);
    }
  /* without the last byte: where that is the flush byte alone, the data
   * ends right at the start of the block past the last */
  for (size_t i = 0; i < good.size(); i++) {
    copy_names.push_back(names[i] + " without its last byte");
    mixed.push_back(
        {good[i].data, good[i].size - 1, good[i].keyframe, 1, copy_names.back().c_str()});
  }
  check_batch(mixed, &g, &rng);
}

int main()
{
  static const char *const streams[] = {"pan_176x144.c63",       "pan_352x288.c63",
                                        "testsrc_640x200.c63",   "pan_352x288_q10k7.c63",
                                        "pan_352x288_q50r8.c63", "mandel_1920x1080.c63"};
  for (const char *name : streams) {
    char path[512];
    size_t len;
    tu_data_path(path, sizeof path, name);
    uint8_t *s = tu_read_file(path, &len);
    TU_CHECK(s != NULL, "cannot read %s", path);
    if (s) check_stream(s, len, name, 4);
    free(s);
  }
  /* odd sizes, one MCU wide, film-grain keyframes (long fallback runs) */
  static const int clips[][4] = {{50, 38, 5, 0},    {50, 38, 50, 1},   {200, 120, 25, 1},
                                 {330, 190, 10, 0}, {640, 360, 40, 1}, {16, 16, 1, 0}};
  for (const auto &c : clips) {
    tu_buf out{};
    char msg[256], what[64];
    TU_CHECK(tu_encode_synth(c[0], c[1], c[2], c[3], 6, 4, &out, msg, sizeof msg) == C63_OK,
             "encode: %s", msg);
    snprintf(what, sizeof what, "%s %dx%d q%d", c[3] ? "natural" : "pan", c[0], c[1], c[2]);
    if (!tu_failures) check_stream(out.data, out.size, what, 6);
    tu_buf_free(&out);
  }
  printf("%d batches: %d frames, %d corrupt copies (%d handed to the CPU)\n", batches, frames,
         corrupt_frames, handed);
  for (const chain_counts *cc : {&counts_short, &counts_long})
    printf("detours of %d: %ld fallbacks in %ld runs, %ld runs longer\n",
           cc == &counts_short ? kShortDepth : policy::kDetourDepth, cc->fallbacks, cc->runs,
           cc->runs_past_depth);
  /* the test must take each way through a fallback */
  TU_CHECK(counts_short.runs > 0 && counts_long.runs > 0, "no detour copied");
  TU_CHECK(counts_short.runs_past_depth > 0, "no run of fallbacks longer than a detour");
  c63_sparse_frame_free(&cpu);
  c63_sparse_frame_free(&model);
  return tu_finish("huff_kernels_host");
}
