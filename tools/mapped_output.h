/* Writing a regular output file through shared mappings, from several
 * threads at once (frame_writer.c uses it for c63-dec's pictures).
 *
 * Why: write() into one file takes the inode's lock, so the kernel fills
 * the file's new pages one writer at a time, which bounds a fast decoder
 * to what one writer reaches. Pages faulted in through a mapping are
 * allocated and filled without that lock, in parallel (the figures:
 * docs/performance.md, "Decoder").
 *
 * A page that cannot be allocated (a full file system) raises SIGBUS in the
 * copying thread instead of returning ENOSPC; the copy is guarded so that
 * it fails with the reason instead of killing the program.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef CLI_MAPPED_OUTPUT_H
#define CLI_MAPPED_OUTPUT_H

#include <stddef.h>
#include <stdint.h>

typedef struct mapped_output mapped_output;

/* Write into fd, an empty regular file open for writing, which the caller
 * keeps open. NULL when fd is not such a file, its file system cannot map
 * it, or memory is short: write it with write() instead. */
mapped_output *mapped_output_new(int fd);

/* Write into fd, a regular file of its final size open for reading and
 * writing (its pages allocated ahead: c63-farm's decoded pictures, each
 * worker its own range), which the caller keeps open. Puts must lie within
 * it; mapped_output_finish leaves its size. NULL as mapped_output_new. */
mapped_output *mapped_output_open(int fd);

/* Copy n bytes to offset off, growing the file as needed (EFBIG past the
 * end of one opened with mapped_output_open). Safe to call from
 * several threads at once for disjoint ranges. Returns 0, or an errno value
 * (ENOSPC when a page could not be had). */
int mapped_output_put(mapped_output *m, uint64_t off, const void *data, size_t n);

/* Set the file's size to size (the end of the last range put; not for one
 * opened with mapped_output_open, whose size stays) and free m. Returns 0
 * or an errno value. */
int mapped_output_finish(mapped_output *m, uint64_t size);

#endif
