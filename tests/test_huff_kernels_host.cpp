/* The GPU entropy decoder's kernels (cuda/c63_cuda_huff_kernels.cuh) run on
 * the CPU, for machines without a GPU: every thread of a launch one after
 * the other, the one CTA that chains the subsequences as real threads with
 * a barrier for __syncthreads (and a stand-in for CUB's block scan; the
 * CTA smaller than the GPU's), the
 * device-wide scans by std::inclusive_scan / exclusive_scan, every buffer
 * exactly as large as the stage sizes it (run it under ASan to catch a read
 * past one). The stages in the order c63_cuda_huff_decode.cu runs them;
 * the result must equal c63_entropy_decode's sparse frame, and the verdict
 * the C model's (c63/huff_sync_model.c): on conformance streams, generated
 * clips and corrupt copies. tests/cuda/test_cuda_huff.c holds the real
 * thing to the same on a GPU.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <barrier>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <numeric>
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
  unsigned x;
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
static unsigned atomicAdd(uint32_t *p, uint32_t v)
{
  std::lock_guard<std::mutex> l(atomics);
  const unsigned o = *p;
  *p += v;
  return o;
}
namespace cub
{
/* BlockScan's inclusive scan with an aggregate, through shared storage. */
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
};
} // namespace cub

#include "cuda/c63_cuda_huff_kernels.cuh"

/* A launch of n threads (rounded up to whole CTAs, as on the GPU). */
template <class F, class... A> static void launch(size_t n, F kernel, A... args)
{
  const size_t rounded = (n + policy::kThreads - 1) / policy::kThreads * policy::kThreads;
  blockIdx.x = 0;
  blockDim.x = 1u << 31;
  for (size_t i = 0; i < rounded; i++) {
    threadIdx.x = (unsigned)i;
    kernel(args...);
  }
}

/* The chaining CTA, smaller than on the GPU: its threads are real ones
 * here, and a frame's subsequences then take several tiles. */
constexpr int kChainCta = 32;

static void launch_chain(bits_view v, const frame_info *fi, const c63_hs_state *cand_end,
                         const uint8_t *map, c63_hs_state *start)
{
  const int n = kChainCta;
  std::barrier<> bar(n);
  cta_barrier = &bar;
  std::vector<std::thread> threads;
  for (int i = 0; i < n; i++)
    threads.emplace_back([=] {
      blockIdx.x = 0;
      blockDim.x = n;
      threadIdx.x = (unsigned)i;
      chain_starts<kChainCta>(v, fi, cand_end, map, start);
    });
  for (auto &t : threads)
    t.join();
}

/* c63_cuda_huff_decode's stages on the host, into f. */
static int decode(const uint8_t *data, size_t size, const c63_geometry *g, int keyframe,
                  size_t entries_cap, c63_sparse_frame *f)
{
  const size_t nb = c63_frame_blocks(g);
  if (size == 0 || size > UINT32_MAX / 8 - 8) return C63_HS_HAND_TO_CPU;
  const uint32_t n = (uint32_t)size;
  const uint32_t nt = (8 * n + policy::kSubseqBits - 1) / policy::kSubseqBits;
  const size_t ac_cap = (size_t)8 * n / 3 + 64;
  std::vector<uint8_t> bits(size + 8), map(nt * kPhases);
  std::vector<int32_t> mark(size), last(size);
  std::vector<uint32_t> keep(size + 1), dst(size + 1);
  std::vector<c63_hs_state> cand_end(nt * kPhases), start(nt), frame_end(1);
  std::vector<uint32_t> blocks(nt + 1), block_base(nt + 1), acs(nt + 1), ac_base(nt + 1);
  std::vector<uint8_t> use(nb), reuse(nb), count(nb);
  std::vector<int8_t> mv_x(nb), mv_y(nb);
  std::vector<int16_t> dc_diff(nb), dc(nb);
  std::vector<uint32_t> n_ac(nb), ac_first(nb), n_entries(nb + 1), entry_base(nb + 1), ac(ac_cap),
      mv_src(nb), mv_last(nb), start_out(nb), entries(entries_cap);
  std::vector<uint64_t> dc_lanes(nb), dc_sum(nb);
  std::vector<c63_mv> mvs(nb);
  frame_info fi{};
  /* 1 */
  launch(n, mark_non_ff, data, n, mark.data());
  std::inclusive_scan(mark.begin(), mark.end(), last.begin(), max_op());
  launch(n + 1, flag_kept, data, n, (const int32_t *)last.data(), keep.data());
  std::exclusive_scan(keep.begin(), keep.end(), dst.begin(), 0u);
  launch(n, scatter_kept, data, n, (const uint32_t *)keep.data(), (const uint32_t *)dst.data(),
         bits.data());
  launch(1, frame_begin, data, n, (const int32_t *)last.data(), (const uint32_t *)dst.data(), &fi);
  const bits_view v = {c63_huff_luts(), bits.data()};
  /* 2 */
  launch(nt * kPhases, run_candidates, v, (const frame_info *)&fi, nt, cand_end.data());
  launch(nt * kPhases, build_maps, v, (const frame_info *)&fi, nt,
         (const c63_hs_state *)cand_end.data(), map.data());
  launch_chain(v, &fi, cand_end.data(), map.data(), start.data());
  /* 3 */
  launch(nt + 1, count_fields, v, (const frame_info *)&fi, nt, (const c63_hs_state *)start.data(),
         blocks.data(), acs.data(), frame_end.data());
  std::exclusive_scan(blocks.begin(), blocks.end(), block_base.begin(), 0u);
  std::exclusive_scan(acs.begin(), acs.end(), ac_base.begin(), 0u);
  const frame_shape sh = shape_of(g, keyframe, entries_cap, ac_cap);
  const block_fields bf = {use.data(),     reuse.data(), mv_x.data(), mv_y.data(),
                           dc_diff.data(), n_ac.data(),  ac.data()};
  launch(nt, decode_fields, v, &fi, sh, (const c63_hs_state *)start.data(),
         (const uint32_t *)block_base.data(), (const uint32_t *)ac_base.data(), bf);
  /* 4 */
  launch(nb, prepare_blocks, &fi, sh, bf, dc_lanes.data(), mv_src.data());
  std::inclusive_scan(dc_lanes.begin(), dc_lanes.end(), dc_sum.begin(), lane_add_op());
  std::inclusive_scan(mv_src.begin(), mv_src.end(), mv_last.begin(), last_set_op());
  launch(nb + 1, count_entries, sh, bf, (const uint64_t *)dc_sum.data(), dc.data(),
         n_entries.data());
  std::exclusive_scan(n_entries.begin(), n_entries.end(), entry_base.begin(), 0u);
  std::exclusive_scan(n_ac.begin(), n_ac.end(), ac_first.begin(), 0u);
  /* 5 */
  const sparse_view out = {start_out.data(), entries.data(), count.data(), mvs.data()};
  launch(nb, write_blocks, &fi, sh, bf, (const int16_t *)dc.data(),
         (const uint32_t *)entry_base.data(), (const uint32_t *)ac_first.data(),
         (const uint32_t *)mv_last.data(), out);
  launch(1, final_verdict, &fi, sh, (const uint32_t *)block_base.data(),
         (const c63_hs_state *)frame_end.data());
  if (fi.bad || fi.unpaired_ff) return C63_HS_HAND_TO_CPU;
  memcpy(f->start, start_out.data(), nb * sizeof(uint32_t));
  memcpy(f->count, count.data(), nb);
  memcpy(f->mvs, mvs.data(), nb * sizeof(c63_mv));
  memcpy(f->entries, entries.data(), fi.n_entries * sizeof(uint32_t));
  f->n_entries = fi.n_entries;
  return C63_OK;
}

static c63_sparse_frame cpu, host, model;
static int frames, corrupt_frames, handed;

static void check_frame(const uint8_t *d, size_t size, const c63_geometry *g, int keyframe,
                        int corrupt, const char *what)
{
  const size_t blocks = c63_frame_blocks(g), bound = c63_sparse_entries_bound(g, size);
  if (c63_sparse_frame_reserve(&cpu, blocks, bound, 0) ||
      c63_sparse_frame_reserve(&host, blocks, bound, 0) ||
      c63_sparse_frame_reserve(&model, blocks, bound, 0))
    abort();
  char msg[256];
  const int want = c63_entropy_decode(d, size, g, keyframe, &cpu, msg, sizeof msg);
  const int got = decode(d, size, g, keyframe, cpu.entries_cap, &host);
  const int verdict = c63_hs_model_decode(d, size, g, keyframe, 1024, &model, NULL);
  corrupt ? corrupt_frames++ : frames++;
  TU_CHECK(got == verdict, "%s: verdict %d, the C model's %d", what, got, verdict);
  if (!corrupt) TU_CHECK(want == C63_OK && got == C63_OK, "%s: %d, %d (%s)", what, want, got, msg);
  if (got != C63_OK) {
    handed++;
    return;
  }
  TU_CHECK(want == C63_OK, "%s: a picture where the CPU says: %s", what, msg);
  if (want != C63_OK) return;
  for (size_t i = 0; i < blocks; i++) {
    const int same =
        cpu.count[i] == host.count[i] && !memcmp(&cpu.mvs[i], &host.mvs[i], 4) &&
        !memcmp(cpu.entries + cpu.start[i], host.entries + host.start[i], cpu.count[i] * 4u);
    TU_CHECK(same, "%s: block %zu differs", what, i);
    if (!same) return;
  }
  TU_CHECK(cpu.n_entries == host.n_entries, "%s: entries differ", what);
}

/* The first frames of a stream, and corrupt copies of two. */
static void check_stream(const uint8_t *s, size_t len, const char *what)
{
  uint64_t rng = 0x63c63 ^ len;
  size_t off = 0;
  for (int n = 0; off < len && n < 4; n++) {
    c63_frame_header hdr;
    TU_CHECK(c63_parse_frame_header(s + off, len - off, &hdr, NULL, 0) == C63_OK,
             "%s: frame %d does not parse", what, n);
    if (tu_failures) return;
    c63_geometry g;
    c63_geometry_init(&g, hdr.width, hdr.height);
    const uint8_t *d = s + off + hdr.data_offset;
    const size_t size = hdr.data_size;
    char name[200];
    snprintf(name, sizeof name, "%s frame %d", what, n);
    check_frame(d, size, &g, hdr.keyframe, 0, name);
    std::vector<uint8_t> copy(size + 1);
    for (int trial = 0; n < 2 && trial < 12; trial++) {
      memcpy(copy.data(), d, size);
      size_t cut = size;
      if (trial % 4 == 3)
        cut = tu_rand(&rng) % size;
      else
        for (int k = 0; k <= trial % 4; k++)
          copy[tu_rand(&rng) % size] ^= (uint8_t)(trial & 1 ? 0xff : 1 << (tu_rand(&rng) % 8));
      snprintf(name, sizeof name, "%s frame %d corruption %d", what, n, trial);
      check_frame(copy.data(), cut, &g, hdr.keyframe, 1, name);
    }
    off += hdr.frame_size;
  }
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
    if (s) check_stream(s, len, name);
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
    if (!tu_failures) check_stream(out.data, out.size, what);
    tu_buf_free(&out);
  }
  printf("%d frames, %d corrupt copies (%d handed to the CPU)\n", frames, corrupt_frames, handed);
  c63_sparse_frame_free(&cpu);
  c63_sparse_frame_free(&host);
  c63_sparse_frame_free(&model);
  return tu_finish("huff_kernels_host");
}
