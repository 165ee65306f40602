/* libc63: the public API of the Codec63 codec core.
 *
 * Copyright (C) 2026 gst-c63 contributors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Nothing here knows GStreamer. Every function returns a status (c63_status)
 * and, on failure, leaves a human-readable message that c63_*_error() returns;
 * nothing calls exit() or abort().
 *
 * NULL for a required pointer gives C63_ERR_INVALID_ARG (never a crash).
 * Optional pointers are named as such below: the msg buffers of the
 * functions that take one, the picture of c63_encoder_send_picture (NULL
 * drains), the params of c63_decoder_new (NULL: defaults) and the output of
 * c63_decoder_decode. The few functions that return no status say what they
 * do with NULL: c63_*_free, c63_decoder_reset, c63_decoder_flush,
 * c63_frame_scanner_init and c63_*_params_init do nothing, c63_*_error and
 * c63_*_backend_name return a static string.
 *
 * ABI: programs built against this header keep working with later
 * libc63.so.1 releases. Parameter structs carry their size (set by
 * c63_*_params_init) and grow only at the end; the frame scanner's state is
 * opaque; other structs are fixed for the soname (docs/design.md, "Public
 * API and ABI").
 */
#ifndef C63_H
#define C63_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Status codes ------------------------------------------------------- */

typedef enum c63_status {
  C63_OK = 0,
  C63_ERR_INVALID_ARG = -1,  /* a parameter is out of range */
  C63_ERR_NOMEM = -2,        /* host or device allocation failed */
  C63_ERR_BITSTREAM = -3,    /* corrupt data: bad marker, table id, code, value */
  C63_ERR_TRUNCATED = -4,    /* the data ends before the frame does */
  C63_ERR_AGAIN = -5,        /* send/receive: the other call must run first */
  C63_ERR_EOF = -6,          /* receive: drained, no more packets */
  C63_ERR_NO_REFERENCE = -7, /* a delta frame without a preceding keyframe */
  C63_ERR_BACKEND = -8,      /* the backend failed (e.g. a CUDA error) */
  C63_ERR_NO_DEVICE = -9,    /* the requested backend has no usable device */
  C63_ERR_UNSUPPORTED = -10  /* valid but unsupported by this build */
} c63_status;

/* A short static description of a status code. */
const char *c63_status_string(int status);

/* ---- Limits ------------------------------------------------------------- */

/* The ranges the library accepts (c63_enc_params_validate, the setters);
 * the tools' messages and the elements' property specs use the same names. */
#define C63_MIN_SIZE 8
#define C63_MAX_SIZE 8192
#define C63_MIN_QUALITY 1
#define C63_MAX_QUALITY 50
#define C63_MIN_SEARCH_RANGE 1
#define C63_MAX_SEARCH_RANGE 64
#define C63_MIN_BITRATE_KBPS 1
#define C63_MAX_BITRATE_KBPS 1000000
#define C63_MIN_BUFFER_MS 1
#define C63_MAX_BUFFER_MS 60000
#define C63_MAX_THREADS 256
#define C63_DEFAULT_QUALITY 25
#define C63_DEFAULT_KEYFRAME_INTERVAL 100
#define C63_DEFAULT_SEARCH_RANGE 16
#define C63_DEFAULT_BUFFER_MS 1000
#define C63_DEFAULT_FPS_NUM 25
#define C63_DEFAULT_FPS_DEN 1

/* ---- Version ------------------------------------------------------------ */

/* The version of the libc63 the program runs with (not the one it was
 * built against): major << 16 | minor << 8 | micro. */
unsigned c63_version(void);
/* The same as a static string, e.g. "0.1.0". */
const char *c63_version_string(void);

/* ---- Pictures and packets ---------------------------------------------- */

/* Layouts of the pictures an encoder takes. */
typedef enum c63_pixel_format {
  C63_FORMAT_I420 = 0, /* planes Y, U, V */
  C63_FORMAT_NV12 = 1, /* planes Y and interleaved UV (data[1]); data[2] unused */
} c63_pixel_format;

/* A picture of width x height; chroma planes are ceil(width/2) x
 * ceil(height/2) (for NV12, ceil(width/2) UV pairs per row). Strides are in
 * bytes and must be >= the plane's row. The planes may be anywhere the
 * backend reads: host memory, or for the CUDA backend device memory of its
 * context (then the picture must be complete on the device when sent). */
typedef struct c63_picture {
  const uint8_t *data[3];
  int stride[3];
  c63_pixel_format format; /* 0: I420 */
  int64_t user;            /* passed through to the packet made from this picture */
  int force_keyframe;
} c63_picture;

/* One coded frame. data stays valid until the next c63_encoder_* call. */
typedef struct c63_packet {
  const uint8_t *data;
  size_t size;
  int keyframe;
  int64_t user;
  int64_t frame_number; /* 0-based count of pictures sent */
} c63_packet;

/* ---- Encoder ------------------------------------------------------------ */

typedef enum c63_backend_kind {
  C63_BACKEND_CPU = 0,
  C63_BACKEND_CUDA = 1,
} c63_backend_kind;

/* How the encoder chooses what it codes (docs/rd.md). */
typedef enum c63_enc_mode {
  /* The reference encoder's choices: a vector for every block of a delta
   * frame by SAD alone, every coefficient as quantised. Streams are byte
   * for byte the reference encoder's. The default. */
  C63_MODE_EXACT = 0,
  /* Fewer bits for the same quality: vectors by SAD and their cost in bits
   * (favouring the zero vector and reuse of the left neighbour's), intra or
   * inter per block by squared error + lambda * bits, and trellis
   * quantisation, with lambda tied to the quantiser. Decodes in any Codec63
   * decoder, the same bytes from both backends (docs/rd.md). */
  C63_MODE_RD = 1,
} c63_enc_mode;

/* What sets each frame's quality (c63/ratectl.c). */
typedef enum c63_rate_control {
  /* The quality parameter, for every frame: constant quality, the
   * reference's behaviour. The default. */
  C63_RC_QUALITY = 0,
  /* Average bitrate: the quality of each frame chosen so that the stream's
   * bitrate converges to `bitrate`; the balance so far is paid back over
   * about 25 frames. */
  C63_RC_ABR = 1,
  /* Constant bitrate: as ABR, and no frame overflows a decoder buffer of
   * buffer_ms at the bitrate (a leaky bucket, kept about half full) where
   * quality 1 fits, from the first frame: a frame that overflows is coded
   * again lower (so one frame is in flight at a time), and one that
   * overflows even at quality 1 is counted (c63_rate_status). */
  C63_RC_CBR = 2,
} c63_rate_control;

/* Parameters are caller-allocated and grow at the end: `size` says which
 * layout the caller was built with (c63_enc_params_init sets it), and the
 * library takes fields it knows that lie beyond a smaller (older) size at
 * their defaults. A size smaller than the first layout or larger than the
 * library's gives C63_ERR_INVALID_ARG. Always start from
 * c63_enc_params_init, then set fields. */
typedef struct c63_enc_params {
  size_t size;           /* sizeof(c63_enc_params), set by c63_enc_params_init */
  int width, height;     /* C63_MIN_SIZE..C63_MAX_SIZE, any value in between */
  int quality;           /* C63_MIN_QUALITY..C63_MAX_QUALITY; below 5 quantiser
                            entries saturate at 255 */
  int keyframe_interval; /* 0: only the first frame; 1: every frame; n: every n */
  int search_range;      /* C63_MIN_SEARCH_RANGE..C63_MAX_SEARCH_RANGE luma
                            pixels; chroma uses search_range / 2 */
  c63_backend_kind backend;
  int device_id; /* CUDA device ordinal */
  int threads;   /* CPU threads: the CPU backend's whole work, the CUDA backend's
                    copies of pageable pictures into its staging; 0 = one per
                    core, up to 16 for the CPU backend and 5 for the CUDA one
                    (more only take cores from the caller's own work); at
                    most C63_MAX_THREADS */
  /* A CUDA context (CUcontext) the CUDA backend works in, e.g. a
   * GstCudaContext's; NULL: device_id's primary context. The encoder pushes
   * it around each of its calls and pops it after (never cudaSetDevice), so
   * pictures may then be device pointers of that context, and the caller's
   * current context is left as it was. It must outlive the encoder. */
  void *cuda_context;
  c63_enc_mode mode; /* C63_MODE_EXACT (default) or C63_MODE_RD */
  /* Rate control: with ABR or CBR, quality is only where it starts. */
  c63_rate_control rate_control;
  int bitrate;   /* kbit/s, C63_MIN_BITRATE_KBPS..C63_MAX_BITRATE_KBPS (ABR, CBR) */
  int buffer_ms; /* CBR: the decoder's buffer, C63_MIN_BUFFER_MS..C63_MAX_BUFFER_MS
                    ms of the bitrate (default C63_DEFAULT_BUFFER_MS) */
  /* The framerate that turns the bitrate into bits per frame (default
   * C63_DEFAULT_FPS_NUM/C63_DEFAULT_FPS_DEN; the stream itself carries none). */
  int fps_num, fps_den;
} c63_enc_params;

typedef struct c63_encoder c63_encoder;

/* Set p->size and fill p with the reference encoder's defaults (the
 * C63_DEFAULT_* values, CPU backend, exact mode, constant quality); width
 * and height are 0. Does nothing when p is NULL. */
void c63_enc_params_init(c63_enc_params *p);

/* Check p (its size included). On failure (p NULL included) returns C63_ERR_INVALID_ARG and
 * writes a message naming the bad field into msg (if msg is not NULL). */
int c63_enc_params_validate(const c63_enc_params *p, char *msg, size_t msg_size);

/* Create an encoder. On failure *out is NULL (when out is not NULL) and msg,
 * if not NULL, says why (C63_ERR_UNSUPPORTED: a mode the backend does not
 * implement). */
int c63_encoder_new(const c63_enc_params *p, c63_encoder **out, char *msg, size_t msg_size);
void c63_encoder_free(c63_encoder *enc);

/* Change the quality, keyframe interval or search range; each applies from
 * the next picture sent (a new interval counts from the last keyframe). */
int c63_encoder_set_quality(c63_encoder *enc, int quality);
int c63_encoder_set_keyframe_interval(c63_encoder *enc, int keyframe_interval);
int c63_encoder_set_search_range(c63_encoder *enc, int search_range);
/* A new target bitrate (kbit/s) for ABR or CBR, from the next picture sent;
 * C63_ERR_INVALID_ARG in constant-quality mode or outside
 * C63_MIN_BITRATE_KBPS..C63_MAX_BITRATE_KBPS. */
int c63_encoder_set_bitrate(c63_encoder *enc, int bitrate);
/* A new decoder buffer (buffer_ms) for CBR, from the next picture sent (the
 * bits in the old one kept, up to the new size); C63_ERR_INVALID_ARG
 * outside CBR or outside C63_MIN_BUFFER_MS..C63_MAX_BUFFER_MS. */
int c63_encoder_set_buffer(c63_encoder *enc, int buffer_ms);
/* The quality (1..50) the frame of the last packet received was coded at:
 * the rate controller's choice with ABR or CBR, else the quality set; 0
 * before the first packet, C63_ERR_INVALID_ARG when enc is NULL. */
int c63_encoder_last_quality(const c63_encoder *enc);
/* Frames in a row at the coarsest or finest quality after which a target
 * they miss is out of reach: the rate controller moves the quality a few
 * steps a frame, so a run this long (two seconds at 25 fps) means that no
 * quality reaches it. */
#define C63_TARGET_REACH_FRAMES 50
/* Whether the target bitrate (ABR, CBR) is out of reach on this input, as
 * of the last packet received. *reach is -1 when the last
 * C63_TARGET_REACH_FRAMES frames were coded at quality 1, the coarsest,
 * and still spent more than 5% over the target (in exact mode the rd mode
 * reaches lower bitrates), +1 when they were at quality 50, the finest,
 * and spent more than 5% under it, else 0 (always in constant-quality
 * mode); where it is not 0 and kbps is not NULL, *kbps is those frames'
 * bitrate. Judged afresh after c63_encoder_set_bitrate.
 * C63_ERR_INVALID_ARG when enc or reach is NULL. */
int c63_encoder_target_reach(const c63_encoder *enc, int *reach, double *kbps);

/* What rate control reports, as of the last packet received. */
typedef struct c63_rate_status {
  int bitrate;       /* kbit/s: the target the judgement below is of (0 in
                        constant-quality mode) */
  int buffer_ms;     /* CBR: the buffer the counts below are of (else 0) */
  int reach;         /* c63_encoder_target_reach's answer for that target */
  double reach_kbps; /* where reach is not 0: those frames' bitrate */
  /* CBR: frames coded again at a lower quality because they overflowed
   * the buffer, and frames that overflowed it all the same, coded at
   * quality 1, the coarsest. Counted since the encoder was created. */
  int64_t recoded, overflows;
} c63_rate_status;
/* Fill *st; C63_ERR_INVALID_ARG when enc or st is NULL. */
int c63_encoder_rate_status(const c63_encoder *enc, c63_rate_status *st);

/* Send a picture (the encoder copies what it needs before returning), or
 * NULL to drain. Returns C63_ERR_AGAIN when packets must be received first. */
int c63_encoder_send_picture(c63_encoder *enc, const c63_picture *pic);
/* The same for a caller that keeps the picture (a GStreamer element holds
 * each frame's input buffer until its packet is out): its memory may be
 * read until the picture's packet is received or the encoder is freed, and
 * must stay unchanged until then (and page-locked, where it was so when
 * sent). Where a picture in ordinary memory is copied into the CUDA
 * backend's page-locked staging, the encoder's threads copy it while the
 * caller goes on, rather than before this returns; a picture in
 * page-locked or device memory is uploaded while the caller goes on too,
 * except from memory registered with c63_picture_memory_register (its
 * unregistering waits only for uploads within a send). The bytes coded
 * are the same either way. */
int c63_encoder_send_picture_borrowed(c63_encoder *enc, const c63_picture *pic);

/* Receive the next packet in order. Returns C63_ERR_AGAIN when more input is
 * needed, C63_ERR_EOF once drained (then the encoder accepts pictures again). */
int c63_encoder_receive_packet(c63_encoder *enc, c63_packet *pkt);

/* Pictures that may be held before the first packet comes out (latency);
 * C63_ERR_INVALID_ARG (negative) when enc is NULL. */
int c63_encoder_delay(const c63_encoder *enc);

/* The message of the last failure, or "" if none; a static message when enc
 * is NULL. */
const char *c63_encoder_error(const c63_encoder *enc);

/* Name of the backend in use ("cpu", "cuda"); "none" when enc is NULL. */
const char *c63_encoder_backend_name(const c63_encoder *enc);

/* Memory for pictures (size bytes, 64-byte aligned) that the CUDA backend
 * uploads by DMA straight from where they are, without copying them into
 * its staging first: page-locked host memory when this build has the CUDA
 * backend and a driver, plain memory otherwise (pictures there are then
 * staged as usual). For producers that allocate their own picture buffers,
 * such as a GStreamer buffer pool. NULL when out of memory. */
void *c63_picture_memory_alloc(size_t size);
void c63_picture_memory_free(void *ptr);

/* Register the caller's own memory (size bytes at ptr, e.g. the buffers of a
 * pool it recycles) so that the CUDA backend uploads pictures there by DMA
 * straight from where they are, as from c63_picture_memory_alloc's memory:
 * the memory is page-locked (cudaHostRegister) until unregistered.
 * Registering is slow, about as long as copying the memory a few times: it
 * pays for memory that holds picture after picture, not for memory that
 * holds one. Pictures in memory not registered are copied into the
 * backend's page-locked staging by the encoder's threads, as usual.
 *
 * Registrations belong to the process and are counted: registering the same
 * ptr and size again (another encoder, another thread) takes one more
 * reference, and each c63_picture_memory_unregister drops one; the last
 * unregisters. An encoder uploads a picture from where it is only within
 * the send (a borrowed picture copied later is copied by the CPU, which
 * needs no registration); the last unregister waits for the uploads that
 * other threads' encoders have under way from the memory, so it may come
 * while they send pictures from there (they then copy them into their
 * staging). Memory must be unregistered before it is freed or unmapped
 * (otherwise memory allocated later at the same address would be read
 * from the old pages). Thread-safe. Returns C63_OK;
 * C63_ERR_UNSUPPORTED when this build has no CUDA backend;
 * C63_ERR_NO_DEVICE without a driver or device; C63_ERR_INVALID_ARG for
 * NULL, size 0, the same ptr registered with another size, or memory that
 * overlaps memory page-locked already (a registration of another range,
 * c63_picture_memory_alloc's blocks).
 * Pictures are encoded correctly whatever the answer. msg, if not NULL,
 * says why not. */
int c63_picture_memory_register(void *ptr, size_t size, char *msg, size_t msg_size);
/* Drop one reference of ptr's registration: C63_OK, or C63_ERR_INVALID_ARG
 * when ptr is not registered (C63_ERR_UNSUPPORTED without a CUDA backend). */
int c63_picture_memory_unregister(void *ptr);

/* Whether a backend can be used on this machine (CUDA: built in and a
 * device present): 1 or 0, not a status. msg, if not NULL, says why not. */
int c63_backend_available(c63_backend_kind kind, int device_id, char *msg, size_t msg_size);

/* ---- Frame syntax ------------------------------------------------------- */

typedef struct c63_frame_header {
  int width, height;
  int keyframe;
  int has_quant;        /* the frame has a DQT; without one, the previous frame's tables hold */
  uint8_t quant[3][64]; /* zig-zag order, as sent in DQT */
  size_t data_offset;   /* first byte of the entropy-coded data */
  size_t data_size;     /* bytes of entropy-coded data (stuffed), up to EOI */
  size_t frame_size;    /* whole frame, SOI to EOI inclusive */
} c63_frame_header;

/* Parse the headers of the frame at buf[0] (which must be SOI) and find its
 * EOI. Accepts what the reference decoder accepts (docs/decoder-tolerance.md):
 * segments in any order, one 00 byte before a marker, the lengths of DQT and
 * SOF0 ignored, any DHT and SOS contents. Returns C63_OK,
 * C63_ERR_TRUNCATED when more bytes are needed, or C63_ERR_BITSTREAM (msg,
 * if not NULL, says what is wrong). With C63_ERR_TRUNCATED, hdr->width and
 * hdr->height are already set (non-zero) when SOF0 was complete, so a caller
 * can bound how much more data the frame may take (c63_max_frame_bytes). */
int c63_parse_frame_header(const uint8_t *buf, size_t len, c63_frame_header *hdr, char *msg,
                           size_t msg_size);

/* The same, up to the start of the entropy-coded data only: width, height,
 * keyframe, quant and data_offset are set, data_size and frame_size are 0.
 * For splitting a byte stream: bytes inside the headers (a quantiser table
 * may hold FF D8) are never taken for a frame boundary. */
int c63_parse_frame_headers_only(const uint8_t *buf, size_t len, c63_frame_header *hdr, char *msg,
                                 size_t msg_size);

/* Find where the next frame starts at or after buf[0], as c63_frame_scan
 * resynchronises (it is a fresh scanner's first call): the offset of the
 * next SOI marker followed (after at most one 00 byte) by a DQT, SOF0, DHT
 * or SOS marker, or len if none (or a possible partial start at the very
 * end, in which case its offset). Returns len when buf is NULL. */
size_t c63_find_frame_start(const uint8_t *buf, size_t len);

/* The largest a coded frame of width x height can be, headers included: a
 * bound for buffering a frame whose end has not been seen (0 for a size
 * outside C63_MIN_SIZE..C63_MAX_SIZE). */
size_t c63_max_frame_bytes(int width, int height);

/* c63_max_frame_bytes(C63_MAX_SIZE, C63_MAX_SIZE): no frame of any size is
 * longer (about 672 MiB). A bound for buffering a frame whose header has not
 * been read yet; tests/test_frame_scan.c checks that the two agree. */
#define C63_MAX_FRAME_BYTES ((size_t)704906071u)

/* ---- Splitting a byte stream into frames ------------------------------- */

/* c63_frame_scan is the way to split a byte stream into frames, whatever
 * its chunking, junk or damage; c63_find_frame_start is a wrapper over it
 * for a caller that only probes a few bytes (a typefinder), and
 * c63_parse_frame_header and c63_parse_frame_headers_only read a frame
 * already in hand. */

typedef enum c63_scan_status {
  C63_SCAN_NEED_DATA = 0, /* call again with more bytes, or with at_end set */
  C63_SCAN_SKIP = 1,      /* buf[0..size) belongs to no frame: drop it */
  C63_SCAN_FRAME = 2      /* buf[0..size) is a frame (complete or broken) */
} c63_scan_status;

/* What c63_frame_scan found. */
typedef struct c63_frame_scan_result {
  /* SKIP, FRAME: the bytes to consume. NEED_DATA: bytes already known to
   * belong to the frame under way whatever follows (0 before a frame start
   * was seen), so a caller may hand them on before the frame is complete. */
  size_t size;
  /* FRAME: 1 when it parsed (c63_parse_frame_header: hdr is set), 0 when it
   * is broken: bad headers, cut short by the next frame's start, no end
   * within limit bytes (too_long) or the stream ended inside it. */
  int complete;
  int too_long;
  /* The most bytes the frame under way may take: c63_max_frame_bytes of its
   * size once its headers parsed, a bound on headers before that. */
  size_t limit;
  /* FRAME, complete: the frame's header. Otherwise width and height of the
   * frame under way once its headers parsed (0 before). */
  c63_frame_header hdr;
} c63_frame_scan_result;

/* The state kept between calls: opaque storage of a fixed size, so that a
 * caller embeds it (no allocation, nothing to free) and the library may
 * change what it keeps without changing the ABI. Only the functions below
 * read or write it. */
#define C63_FRAME_SCANNER_SIZE 64
typedef struct c63_frame_scanner {
  uint64_t opaque[C63_FRAME_SCANNER_SIZE / 8];
} c63_frame_scanner;

/* Start scanning at a new stream position (also after a seek or flush).
 * Does nothing when s is NULL. */
void c63_frame_scanner_init(c63_frame_scanner *s);

/* Find the frame boundary at the front of buf: buf[0..len) is the stream
 * from the position where the last SKIP or FRAME ended (or from the start)
 * and, after NEED_DATA, the same bytes as the last call plus any new ones.
 * Bytes already looked at are not looked at again, so splitting a stream
 * takes time linear in its length whatever the chunking (1-byte chunks
 * included). Junk before a frame start is skipped; a frame's headers are
 * parsed before its end is searched for (bytes inside a quantiser table may
 * be FF D8 FF DB or FF D9); in the entropy-coded data every FF is stuffed,
 * so FF D9 ends the frame and FF D8 starts the next one. With at_end set no
 * more bytes follow: what is left becomes a broken frame or is skipped.
 * After SKIP or FRAME the scanner is ready for buf + size. Returns a
 * c63_scan_status, or C63_ERR_INVALID_ARG for NULL s or res (or a NULL buf
 * with len > 0). */
int c63_frame_scan(c63_frame_scanner *s, const uint8_t *buf, size_t len, int at_end,
                   c63_frame_scan_result *res);

/* ---- Decoder ------------------------------------------------------------ */

typedef struct c63_decoder c63_decoder;

/* Where a decoder leaves its pictures (c63_decoder_set_output). */
typedef enum c63_memory {
  C63_MEMORY_HOST = 0, /* host memory (the default) */
  C63_MEMORY_CUDA = 1, /* device memory of the CUDA backend's context */
} c63_memory;

/* A decoded picture: planes of width x height (chroma ceil(w/2) x ceil(h/2)),
 * owned by the decoder and valid until its next call. */
typedef struct c63_decoded_picture {
  const uint8_t *data[3];
  int stride[3];
  c63_memory memory; /* where data points */
  int width, height;
  int keyframe;
  int64_t user; /* the value sent with the frame (c63_decoder_send_packet) */
} c63_decoded_picture;

/* Grows as c63_enc_params does: start from c63_dec_params_init. */
typedef struct c63_dec_params {
  size_t size;              /* sizeof(c63_dec_params), set by c63_dec_params_init */
  c63_backend_kind backend; /* reconstruction: C63_BACKEND_CPU (default) or C63_BACKEND_CUDA */
  int device_id;            /* CUDA device ordinal */
  int threads;              /* CPU threads: 0 = one per core (up to 16), at most C63_MAX_THREADS */
  void *cuda_context;       /* as in c63_enc_params */
} c63_dec_params;

/* Set p->size; CPU backend, one thread per core, device 0. Does nothing
 * when p is NULL. */
void c63_dec_params_init(c63_dec_params *p);

/* Create a decoder with p, or c63_dec_params_init's defaults when p is
 * NULL. The CUDA backend keeps the reference frame on the GPU and gives the
 * same pictures as the CPU one. On failure *out is NULL and msg (if not
 * NULL) says why: C63_ERR_INVALID_ARG for a bad field or size,
 * C63_ERR_NO_DEVICE when CUDA was asked for and no device is usable. */
int c63_decoder_new(const c63_dec_params *p, c63_decoder **out, char *msg, size_t msg_size);

/* Name of the reconstruction backend ("cpu", "cuda"); "none" for NULL. */
const char *c63_decoder_backend_name(const c63_decoder *dec);
void c63_decoder_free(c63_decoder *dec);

/* Resetting and flushing. c63_decoder_reset marks a discontinuity in the
 * frames sent (a frame was lost): it drops nothing, frames already sent
 * decode against the reference they had, and the next frame sent must be a
 * keyframe. c63_decoder_flush (a seek) drops every frame in flight without
 * returning it, and resets. Both do nothing when dec is NULL. */
void c63_decoder_reset(c63_decoder *dec);
void c63_decoder_flush(c63_decoder *dec);

/* The message of the last failure, or "" if none; a static message when dec
 * is NULL. */
const char *c63_decoder_error(const c63_decoder *dec);

/* Send and receive, the decoding path: each frame sent is parsed and
 * entropy-decoded on one of the decoder's threads while earlier ones are
 * (parsing does not depend on pixels), or on the CUDA backend on the GPU in
 * batches of frames (C63_CUDA_CPU_ENTROPY=1 in the environment when the
 * decoder is made keeps it on the threads), then reconstructed in order. Send
 * one frame (SOI..EOI, copied) tagged with user, or NULL to drain;
 * C63_ERR_AGAIN when pictures must be received first. c63_decoder_reset
 * between sends applies from the next frame sent. Receive gives the frames
 * in order: C63_OK with a picture, or the frame's own failure status
 * (pic->user says which frame; decoding goes on with the next, from a
 * keyframe); C63_ERR_AGAIN when more frames must be sent; C63_ERR_EOF once
 * drained (the decoder then accepts frames again). */
int c63_decoder_send_packet(c63_decoder *dec, const uint8_t *data, size_t size, int64_t user);
/* The same without copying the bytes, for a caller that keeps them (a
 * GStreamer element holds each frame's input buffer until its picture is
 * out): they are read until the frame's picture or failure is received,
 * or the decoder is flushed or freed, and must stay unchanged until then. */
int c63_decoder_send_packet_borrowed(c63_decoder *dec, const uint8_t *data, size_t size,
                                     int64_t user);
int c63_decoder_receive_picture(c63_decoder *dec, c63_decoded_picture *pic);
/* Frames the decoder holds before the first picture comes out (one per
 * thread on the CPU backend; its batches in flight on the CUDA backend). */
int c63_decoder_delay(const c63_decoder *dec);

/* One frame through send/receive, for callers without a pipeline: send
 * data (SOI..EOI; trailing bytes after EOI are ignored, and the bytes are
 * not copied), drain and receive its picture. C63_ERR_AGAIN while frames
 * sent are in flight or a drain awaits its C63_ERR_EOF. On failure the
 * reference is dropped, so decoding resumes at the next keyframe;
 * C63_ERR_NO_REFERENCE means a delta frame came first. out may be NULL:
 * the frame is decoded (and becomes the reference) without being
 * returned. */
int c63_decoder_decode(c63_decoder *dec, const uint8_t *data, size_t size,
                       c63_decoded_picture *out);
/* Where pictures are left from the next frame sent (or decoded) on:
 * C63_MEMORY_CUDA keeps them on the GPU (CUDA backend only; no download),
 * for a caller that copies them on to other device memory. Returns
 * C63_ERR_UNSUPPORTED for C63_MEMORY_CUDA on the CPU backend. */
int c63_decoder_set_output(c63_decoder *dec, c63_memory memory);

/* Copy a picture the decoder gave (visible pixels only) into dst planes
 * with the given strides (>= the plane widths), in dst_memory: host
 * memory, or device memory of the decoder's CUDA context (CUDA backend);
 * the copy is complete on return. Returns C63_OK, or a status with
 * c63_decoder_error set. */
int c63_decoder_copy_picture(c63_decoder *dec, const c63_decoded_picture *pic,
                             uint8_t *const dst[3], const int dst_stride[3], c63_memory dst_memory);

/* Copies that a caller waits for elsewhere (a pipeline that hands each
 * picture on from another thread): as c63_decoder_copy_picture, but on the
 * CUDA backend the copy may still run on return, and the decoder goes on
 * decoding meanwhile (it keeps the picture's memory until the copy is
 * done). *ticket names the copy for c63_decoder_copy_wait; a copy complete
 * on return (host to host, the CPU backend) gets ticket 0. Destinations in
 * page-locked host memory (c63_picture_memory_alloc) or device memory are
 * written by DMA; others before return, as the CUDA driver copies them.
 * At most C63_COPIES_IN_FLIGHT copies are waited for at once: a copy
 * started while that many are waiting first waits for the oldest. */
#define C63_COPIES_IN_FLIGHT 64
int c63_decoder_copy_picture_async(c63_decoder *dec, const c63_decoded_picture *pic,
                                   uint8_t *const dst[3], const int dst_stride[3],
                                   c63_memory dst_memory, uint64_t *ticket);
/* Return once copy ticket (and every copy started before it) is complete:
 * C63_OK, or C63_ERR_BACKEND when the GPU failed (no message is set). The
 * one call that may run on another thread than the decoder's others, at
 * the same time as them; not after c63_decoder_free. */
int c63_decoder_copy_wait(c63_decoder *dec, uint64_t ticket);

/* Plane sizes of an I420 picture, as this library lays them out. */
static inline int c63_chroma_size(int luma)
{
  return (luma + 1) / 2;
}

#ifdef __cplusplus
}
#endif

#endif /* C63_H */
