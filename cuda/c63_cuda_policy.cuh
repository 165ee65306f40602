/* The CUDA backend's tuning: launch shapes, work per thread and per CTA,
 * and the host-side splits, one policy type per part, as CUB keeps its
 * agents' tuning in policy types. Each value was chosen by measurement on
 * the GPU; docs/performance.md has the figures and the commands that
 * reproduce them. A value here changes speed only, never the bytes coded:
 * the kernels are exact whatever their shape. Constants that follow from
 * the format or from the hardware (key layouts, shared memory limits) stay
 * beside the code that needs them.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef C63_CUDA_POLICY_CUH
#define C63_CUDA_POLICY_CUH

#include <stddef.h>

/* The motion search (c63_cuda_me.cu). */
struct c63_cuda_me_policy {
  /* Searches that fit one warp or half a warp (every range up to 16) run in
   * kWarpGroups warps per plane of a CTA, each group on its own blocks of
   * the strip. */
  static constexpr int kWarpGroups = 4;
  /* Blocks per strip at most (strip_length): longer strips share more of
   * the window, but past about a dozen blocks the saving stops paying for
   * the longer CTAs. */
  static constexpr int kMaxStrip = 12;
  /* Candidate rows per thread: luma 32 (a warp searches a block at the
   * default range, each thread a whole column of candidates, so its fixed
   * costs spread over 512 VABSDIFF4); chroma 16 up to kChromaNarrowRange
   * (half a warp a block, likewise), 8 beyond. */
  static constexpr int kLumaRows = 32;
  static constexpr int kChromaRows = 16;
  static constexpr int kChromaWideRows = 8;
  static constexpr int kChromaNarrowRange = 8;
};

/* Launch bounds of a search with G candidate rows per thread: wide row
 * groups (G = 32) hold 32 SADs per thread (64 registers: 8 CTAs of four
 * warps fill a multiprocessor); G = 16 (chroma, two planes of four warps)
 * gets 64 registers too, G = 8 keeps 40. */
template <int G> struct c63_cuda_me_bounds {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
  /* Turing; on Volta too, whose 2048 would leave 32 registers a thread */
  static constexpr int sm_threads = 1024;
#else
  static constexpr int sm_threads = 1536;
#endif
  static constexpr int threads =
      G >= 32 ? 32 * c63_cuda_me_policy::kWarpGroups : 64 * c63_cuda_me_policy::kWarpGroups;
  static constexpr int min_ctas = G >= 16 ? 1024 / threads : sm_threads / threads;
};

/* The exact mode's transform (c63_cuda_transform.cu): two threads an 8x8
 * block, kBlocks blocks a CTA. Two threads a block sit between the
 * alternatives' costs: a thread per block row spends most of its
 * instructions on addresses, barriers and per-row set-up; a thread per
 * block either unrolls into more code than the instruction cache holds
 * or, rolled up, leaves too few warps to hide latencies. */
struct c63_cuda_transform_policy {
  static constexpr int kBlocks = 64;
  static constexpr int kThreads = 2 * kBlocks;
};

/* The entropy coder (c63_cuda_entropy.cu). */
struct c63_cuda_entropy_policy {
  static constexpr int kBlockThreads = 256; /* code_bits: a tile of blocks a CTA */
  static constexpr int kStuffThreads = 256; /* count_ff and stuff */
  static constexpr int kWordsPerThread = 8; /* stuff: words of a chunk per thread */
  /* copy_out: enough 16-byte stores in flight to fill PCIe; the loop
   * covers the rest */
  static constexpr int kCopyCtas = 128;
  static constexpr int kCopyThreads = 256;
  /* Lanes of a block's coding group (kLanes threads, 64 / kLanes
   * positions each): at the usual qualities a block has a few non-zero
   * coefficients, so a warp's time is mostly the blocks' heads and the
   * set-up, which a warp of 8 blocks does once for all 8 (eight lanes of 8
   * repeat that set-up for half as many blocks). Fewer, longer lanes run
   * fewer instructions still but leave too few warps to hide latencies. */
  static constexpr int kLanes = 4;
};

/* The rd mode (c63_cuda_rd.cu, c63_cuda_rd_trial.cuh). */
struct c63_cuda_rd_policy {
  static constexpr int kChromaSearchThreads = 128;
  static constexpr int kTablesThreads = 256; /* tables_kernel, one CTA */
  static constexpr int kListThreads = 256;
  /* Trials per CTA of the trials kernel: 32, a warp holding four; and
   * CTAs per multiprocessor: 4, which leaves a thread 64 registers, enough
   * for the trial without spills. */
  static constexpr int kTrialsPerCta = 32;
  static constexpr int kTrialCtas = 4;
  static constexpr int kTableThreads = 128;
  static constexpr int kResolveThreads = 256;
  /* Blocks per CTA of the coding kernel: 16, a warp holding four. */
  static constexpr int kCodeBlocks = 16;
};

/* The encoding backend's host side (c63_cuda_backend.cu). */
struct c63_cuda_backend_policy {
  /* Frames in flight: one uploading, one computing, one coding, and one
   * whose borrowed picture the pool copies into staging meanwhile (the
   * encoder holds at most four, MAX_IN_FLIGHT in c63/encoder.c). */
  static constexpr int kSlots = 4;
  /* The most C63_CUDA_ENCODE_SLOTS (a tuning aid) may ask for. */
  static constexpr int kMaxSlots = 8;
  /* The encoder's pool copies pageable input into pinned staging, a slice
   * of kCopySliceBytes or more per thread, up to kCopySlices slices: one
   * thread copies at a fraction of what the host's memory gives, so the
   * copy keeps the page-locked pace only when many threads share it. */
  static constexpr int kCopySlices = 16;
  static constexpr size_t kCopySliceBytes = (size_t)128 << 10;
  /* A borrowed picture's copy runs while the caller goes on and while the
   * copies of other frames run, so it needs fewer slices: each one more is
   * another hand-over to a thread for the same bytes. */
  static constexpr int kLentCopySlices = 4;
  /* The encoder's pool when the caller leaves its size to the encoder
   * (threads 0): the pool only copies pageable input here, and a borrowed
   * picture's slices plus one thread to start the next keep the copies at
   * the GPU's pace; threads beyond that only take cores and memory
   * bandwidth from the caller's own work (upstream's reading and copying
   * in a pipeline). */
  static constexpr int kDefaultThreads = kLentCopySlices + 1;
  /* split_uv (c63_cuda_convert.cu): threads per CTA, a row's UV pairs */
  static constexpr int kSplitThreads = 128;
};

/* The decoding backend (c63_cuda_decoder.cu, c63_cuda_decode_batch.cu). */
struct c63_cuda_decoder_policy {
  /* Frames a batch of the GPU entropy stage decodes at once: one frame
   * leaves most of the GPU idle (a 1080p frame is under a thousand
   * subsequences), and a stage's time is mostly latency, nearly the same
   * for few frames as for many. C63_CUDA_DECODE_BATCH overrides it (1 to
   * C63_CUDA_HUFF_MAX_BATCH), as a tuning aid. */
  static constexpr int kBatch = 32;
  /* Batches in flight, each with its own stream, so that the stages of
   * several run on the GPU at once while the oldest batch's frames are
   * reconstructed: the decoder holds kBatches * kBatch frames, and a batch
   * is launched (kBatches - 1) * kBatch frames before its first is needed.
   * C63_CUDA_DECODE_BATCHES overrides it (1 to kMaxBatches), as a tuning
   * aid. */
  static constexpr int kBatches = 3;
  static constexpr int kMaxBatches = 8;
  /* Pictures in flight: reconstructions enqueued ahead of the one the
   * caller is given, each with a device buffer and (for pictures to system
   * memory) a page-locked one, so downloads overlap later frames'
   * reconstruction. */
  static constexpr int kPictures = 4;
  /* expand_sparse: coefficient blocks per CTA, 64 threads each */
  static constexpr int kExpandBlocks = 4;
};

/* The GPU entropy decoder (c63_cuda_huff_decode.cu, the kernels in
 * c63_cuda_huff_kernels.cuh). */
struct c63_cuda_huff_policy {
  /* Bits of the unstuffed data a thread decodes from, with six candidate
   * decoders: several times the distance after which the true decoding
   * meets one (docs/design.md, "Entropy decoding"). */
  static constexpr unsigned kSubseqBits = 1024;
  /* Threads of a CTA of the kernels with a thread per candidate or
   * subsequence (run_candidates, build_maps, decode_fields): each CTA
   * copies the four tables (34 KiB) into shared memory, so CTAs of 256
   * threads still leave six a multiprocessor. */
  static constexpr int kDecodeThreads = 256;
  /* The CTA a frame that chains the subsequences' maps, a tile at a time,
   * and counts their fields (chain_and_count): 512 threads keep the walks
   * in registers (1024 would spill). */
  static constexpr int kChainThreads = 512;
  /* Subsequences a decoding that meets none of a subsequence's candidates
   * is walked on in build_maps (its detour) until it meets one: runs of
   * such subsequences past it cost chain_and_count one thread's serial
   * walk, and each map entry kDetourDepth stored states (8 bytes each). */
  static constexpr int kDetourDepth = 16;
  /* unstuff_frames: a CTA a frame, kUnstuffItems bytes a thread. */
  static constexpr int kUnstuffThreads = 512;
  static constexpr int kUnstuffItems = 16;
  /* assemble_frames: two CTAs a frame (the entries, the vectors),
   * kAssembleItems blocks a thread. */
  static constexpr int kAssembleThreads = 512;
  static constexpr int kAssembleItems = 8;
};

#endif
