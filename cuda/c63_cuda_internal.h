/* Internal interface between the CUDA translation units (C++ only): the plane
 * descriptors the kernels take by value, and the kernel launchers.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef C63_CUDA_INTERNAL_H
#define C63_CUDA_INTERNAL_H

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

#include "c63/device.h"
#include "c63/dsp.h"
#include "c63/geometry.h"

/* One padded plane inside a frame buffer. Frames keep their planes back to
 * back (Y, U, V); coefficients and vectors are indexed by a global block
 * number, the plane's blocks starting at blk_off. */
struct c63_cuda_plane {
  int w, h;     /* padded size; stride = w */
  int bw, bh;   /* 8x8 blocks per row / column */
  int pix_off;  /* offset of the plane's first pixel in a frame buffer */
  int blk_off;  /* global index of the plane's first block */
  int range;    /* motion search range of this plane */
  int ac_limit; /* largest AC magnitude (c63_ac_limit) */
  uint8_t quant[64];
};

/* Up to three planes, passed by value to the kernels (no per-frame copy of
 * the quantiser tables). */
struct c63_cuda_planes {
  int n;
  int total_blocks;
  c63_cuda_plane p[3];
};

/* Block gb of a frame: its plane and its position in blocks. */
struct c63_cuda_block {
  int plane, bx, by;
};

__device__ __forceinline__ c63_cuda_block c63_cuda_locate(const c63_cuda_planes &P, int gb)
{
  int p = 0;
  if (P.n > 1 && gb >= P.p[1].blk_off) p = 1;
  if (P.n > 2 && gb >= P.p[2].blk_off) p = 2;
  const int b = gb - P.p[p].blk_off, by = b / P.p[p].bw;
  return {p, b - by * P.p[p].bw, by};
}

/* Programmatic dependent launch (sm_90 on). c63_cuda_launch_after with early
 * set launches a kernel that may start before the stream's kernel before
 * it has ended: its CTAs are placed once every CTA of that one has started
 * (or called c63_cuda_let_next_launch), and it waits in
 * c63_cuda_wait_for_previous until that one has ended and its writes are
 * visible. Both device calls do nothing in a kernel launched otherwise. */
__device__ __forceinline__ void c63_cuda_let_next_launch()
{
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;");
#endif
}

__device__ __forceinline__ void c63_cuda_wait_for_previous()
{
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

template <typename... Params, typename... Args>
cudaError_t c63_cuda_launch_after(bool early, void (*kernel)(Params...), dim3 grid, dim3 block,
                                  size_t shmem, cudaStream_t s, Args... args)
{
#if CUDART_VERSION < 11080
  /* No cudaLaunchKernelEx before CUDA 11.8 (JetPack 5's 11.4): an ordinary
   * launch, which is what early launches are on GPUs before sm_90. */
  (void)early;
  kernel<<<grid, block, shmem, s>>>(static_cast<Params>(args)...);
  return cudaGetLastError();
#else
  cudaLaunchAttribute a;
  a.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  a.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t c = {};
  c.gridDim = grid;
  c.blockDim = block;
  c.dynamicSmemBytes = shmem;
  c.stream = s;
  c.attrs = &a;
  c.numAttrs = early ? 1 : 0;
  return cudaLaunchKernelEx(&c, kernel, static_cast<Params>(args)...);
#endif
}

/* The planes of a geometry back to back (Y, U, V), blocks numbered through
 * them in the same order; quantisers and ranges left zero. Returns the
 * frame's padded size in bytes. */
size_t c63_cuda_planes_init(const struct c63_geometry *g, c63_cuda_planes *P);

/* Make the backend's context current on the calling thread: the caller's
 * context pushed, or the device's primary context selected. Every backend
 * call that touches CUDA is bracketed by enter and leave (leave pops a
 * pushed context, so the caller's own current context is restored). */
cudaError_t c63_cuda_enter(const c63_device &dev);
void c63_cuda_leave(const c63_device &dev);
/* A driver API function by name, with the signature it had in CUDA
 * `version` (e.g. 4000 for the _v2 functions); NULL without a driver. */
void *c63_cuda_driver_entry(const char *name, unsigned version);
/* The ordinal of the device dev works on; -1 for an unusable context. */
int c63_cuda_context_device(const c63_device &dev);

/* Brackets a scope with c63_cuda_enter / c63_cuda_leave; ok() says whether
 * entering worked. */
class c63_cuda_scope
{
public:
  explicit c63_cuda_scope(const c63_device &dev) : dev_(dev), err_(c63_cuda_enter(dev)) {}
  ~c63_cuda_scope()
  {
    if (err_ == cudaSuccess) c63_cuda_leave(dev_);
  }
  cudaError_t error() const
  {
    return err_;
  }
  c63_cuda_scope(const c63_cuda_scope &) = delete;
  c63_cuda_scope &operator=(const c63_cuda_scope &) = delete;

private:
  c63_device dev_;
  cudaError_t err_;
};

/* Whether backends on device (an ordinal) work without copies: the GPU
 * shares the CPU's memory (cudaDevAttrIntegrated, as on Jetson boards), or
 * the environment variable C63_CUDA_ZERO_COPY is 1 (0 turns the path off on
 * an integrated GPU). Then kernels read pictures in page-locked host memory
 * in place, through their mapped device address, and write pictures for the
 * CPU into mapped page-locked memory; references stay in device memory. */
bool c63_cuda_zero_copy(int device);

/* A tuning aid (docs/design.md): the environment variable name's value
 * where it is a whole number from lo to hi, else the policy's value def. */
int c63_cuda_tuning(const char *name, int def, int lo, int hi);

/* The address kernels can read the memory at p through: p itself for
 * device memory, the mapped address for page-locked host memory
 * (cudaHostAlloc, or registered with cudaHostRegister); NULL for pageable
 * memory. */
const uint8_t *c63_cuda_mapped(const uint8_t *p);

/* Brackets a copy between the caller's host memory and the GPU, from the
 * driver's answer that the memory is page-locked (or the copy's start)
 * until the copy is over: a registration of c63_cuda_host_register does not
 * end in between, so the copy never loses the pages under it, whichever
 * thread drops the last reference. Not to be nested on one thread. */
void c63_cuda_host_copy_begin();
void c63_cuda_host_copy_end();
/* Whether the byte at ptr lies in a registration of c63_cuda_host_register
 * (whose unregistering waits for copies under way, so a copy from there
 * must be over before its bracket ends). */
bool c63_cuda_host_in_registration(const void *ptr);

/* Up to three planes, each w x h bytes from src (rows src_pitch apart) to
 * dst (rows dst_pitch apart), by one kernel: one launch where 2D copies
 * would cost the host a driver call a plane, and either side may be
 * mapped host memory. A plane with h 0 is none. */
struct c63_cuda_planes_copy {
  const uint8_t *src[3];
  uint8_t *dst[3];
  size_t src_pitch[3], dst_pitch[3];
  int w[3], h[3];
};
cudaError_t c63_cuda_copy_planes(const c63_cuda_planes_copy &c, cudaStream_t s);
/* One plane (c63_cuda_copy_planes). */
cudaError_t c63_cuda_copy_plane(const uint8_t *src, size_t src_pitch, uint8_t *dst,
                                size_t dst_pitch, int w, int h, cudaStream_t s);

/* NV12 chroma: the w x h UV pairs at uv (rows pitch bytes apart) into the
 * planes u and v (rows dst_pitch apart). */
cudaError_t c63_cuda_split_uv(const uint8_t *uv, size_t pitch, int w, int h, uint8_t *u, uint8_t *v,
                              int dst_pitch, cudaStream_t s);

/* Largest byte size of a frame that a plane offset may address. */
#define C63_CUDA_MAX_FRAME_BYTES (3 * 8192 * 8192)

/* Zero bytes after each reconstructed frame (a reference): the transform
 * kernels and the rd mode read a predicted row of 8 pixels as three aligned
 * 32-bit words, which may reach 3 bytes past the row's last pixel. Every
 * ref passed to the launchers below is followed by this many readable
 * bytes. */
#define C63_CUDA_REF_TAIL 16

/* Full search of one plane (format section 3); writes mvs[blk_off ..] with
 * use_mv = 1. cur and ref are frame buffers (the plane at pix_off). */
cudaError_t c63_cuda_motion_search(const uint8_t *cur, const uint8_t *ref, const c63_cuda_plane &pl,
                                   c63_mv *mvs, cudaStream_t s);

/* The same for two planes of equal size and range (U and V) in one launch. */
cudaError_t c63_cuda_motion_search_pair(const uint8_t *cur, const uint8_t *ref,
                                        const c63_cuda_plane &a, const c63_cuda_plane &b,
                                        c63_mv *mvs, cudaStream_t s);

/* The rd mode's luma search (c63/rd.c, c63_rd_search_best) of plane pl:
 * for every block the vector of least 16 * SAD + sad_16 * bits over the
 * reference's window, with its cost and raster index, into out (indexed by
 * global block). mv_len: a device copy of the vector table's code lengths
 * (256 entries). Its CTAs let the next kernel launch early (sm_90). */
cudaError_t c63_cuda_rd_motion_search(const uint8_t *cur, const uint8_t *ref,
                                      const c63_cuda_plane &pl, const uint8_t *mv_len, int sad_16,
                                      struct c63_rd_searched *out, cudaStream_t s);

/* pred = ref displaced by each block's vector, zero for use_mv = 0. */
cudaError_t c63_cuda_motion_compensate(const uint8_t *ref, const c63_mv *mvs,
                                       const c63_cuda_planes &pl, uint8_t *pred, cudaStream_t s);

/* coeffs = quant(fdct(cur - pred)) for every block of every plane, where pred
 * is ref displaced by the block's vector (zero when mvs is NULL or the block
 * has use_mv = 0): compensation is fused into the transform. The planes'
 * quantisers must be 1..255, as c63_make_quant_tables makes them (a zero
 * one divides by zero in the reference's expression; the test entry point
 * c63_cuda_test_fdct_quant refuses tables that hold one). */
cudaError_t c63_cuda_fdct_quant(const uint8_t *cur, const uint8_t *ref, const c63_mv *mvs,
                                const c63_cuda_planes &pl, int16_t *coeffs, cudaStream_t s);

/* Both: coeffs as c63_cuda_fdct_quant, and recon from them as
 * c63_cuda_dequant_idct_recon, in one launch (what the backend runs; the
 * tests compare each half alone with the CPU through the two below). */
cudaError_t c63_cuda_fdct_quant_recon(const uint8_t *cur, const uint8_t *ref, const c63_mv *mvs,
                                      const c63_cuda_planes &pl, int16_t *coeffs, uint8_t *recon,
                                      cudaStream_t s);

/* recon = clamp(pred + idct(dequant(coeffs))), pred as for c63_cuda_fdct_quant. */
cudaError_t c63_cuda_dequant_idct_recon(const int16_t *coeffs, const uint8_t *ref,
                                        const c63_mv *mvs, const c63_cuda_planes &pl,
                                        uint8_t *recon, cudaStream_t s);

/* Entropy coding of a frame on the GPU (c63_cuda_entropy.cu). Coded blocks
 * are numbered in MCU order; the geometry maps them to global block indices
 * (plane p's blocks start at blk_off[p], blocks_w[p] per row). */
struct c63_cuda_entropy_geometry {
  int blocks; /* coded blocks: 6 per MCU */
  int mcus_w;
  int blocks_w[3];
  int blk_off[3];
};
struct c63_cuda_entropy;

/* The entropy coder's view of a geometry laid out by c63_cuda_planes_init. */
c63_cuda_entropy_geometry c63_cuda_entropy_layout(const struct c63_geometry *g);

cudaError_t c63_cuda_entropy_create(const c63_cuda_entropy_geometry &g, c63_cuda_entropy **out);
void c63_cuda_entropy_destroy(c63_cuda_entropy *e);
/* Largest stuffed payload of a frame, in bytes (the size of the payload
 * buffer c63_cuda_entropy_encode writes). */
size_t c63_cuda_entropy_max_payload(const c63_cuda_entropy *e);
/* Code the frame's coefficients and vectors (global block indices, as the
 * transform kernels write them) into payload: the entropy-coded data,
 * stuffed and with the end-of-frame flush byte, and its size in bytes into
 * the device word payload_size. Kernels on s; one frame at a time per e. */
cudaError_t c63_cuda_entropy_encode(c63_cuda_entropy *e, const int16_t *coeffs, const c63_mv *mvs,
                                    uint8_t *payload, uint32_t *payload_size, cudaStream_t s);
/* Stuffing alone, for tests: nwords words of unstuffed data (MSB first)
 * holding total_bits bits, zero past them, stuffed with the flush byte into
 * payload as c63_cuda_entropy_encode does. Synchronous. */
cudaError_t c63_cuda_entropy_stuff_bits(c63_cuda_entropy *e, const uint32_t *words, size_t nwords,
                                        uint32_t total_bits, uint8_t *payload,
                                        uint32_t *payload_size, cudaStream_t s);
/* Copy the payload into host memory the device can write (mapped pinned),
 * and its size into *host_size, when it is at most capacity bytes; only the
 * size otherwise (the caller then copies from payload itself). */
cudaError_t c63_cuda_copy_payload(const uint8_t *payload, const uint32_t *payload_size,
                                  uint8_t *host_dst, uint32_t *host_size, size_t capacity,
                                  cudaStream_t s);

/* The rd mode (c63_cuda_rd.cu): its work buffers for a layout of planes
 * (allocated when a backend first codes a frame in that mode), and one
 * frame coded into coeffs, mvs and recon as c63/rd_code.c codes it; ref is
 * the previous reconstruction (followed by C63_CUDA_REF_TAIL readable bytes),
 * NULL for a keyframe. Kernels on s; one frame
 * at a time per rd. */
struct c63_cuda_rd;
cudaError_t c63_cuda_rd_create(const c63_cuda_planes &P, c63_cuda_rd **out);
void c63_cuda_rd_destroy(c63_cuda_rd *rd);
cudaError_t c63_cuda_rd_code(c63_cuda_rd *rd, const uint8_t *cur, const uint8_t *ref,
                             const c63_cuda_planes &P, float lambda_ssd, int lambda_sad_16,
                             int16_t *coeffs, c63_mv *mvs, uint8_t *recon, cudaStream_t s);

/* Write "what: CUDA error text" into msg and map the error to a c63_status. */
int c63_cuda_error(cudaError_t err, const char *what, char *msg, size_t msg_size);

#endif
