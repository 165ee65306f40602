/* Reading a caller's parameter struct whatever layout it was built with
 * (c63.h: c63_enc_params, c63_dec_params).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef C63_PARAMS_H
#define C63_PARAMS_H

#include <stddef.h>

/* The first layouts of the parameter structs, those of soname 1: the
 * smallest size the library accepts. Fields are only ever added after
 * these, so the bounds stay where they are. */
#define C63_ENC_PARAMS_SIZE_V1 (offsetof(c63_enc_params, fps_den) + sizeof(int))
#define C63_DEC_PARAMS_SIZE_V1 (offsetof(c63_dec_params, cuda_context) + sizeof(void *))

/* Copy a caller's parameters into dst (dst_size bytes, a struct whose
 * first member is its size_t size, already holding the defaults): the
 * first src->size bytes are the caller's, the fields beyond them keep their
 * defaults, and dst's size becomes dst_size. C63_ERR_INVALID_ARG (with msg
 * set, if not NULL) when src's size is under min_size or over dst_size: a
 * struct not set up by its init function, or one from a newer libc63 whose
 * fields this one cannot honour. */
int c63_params_load(void *dst, size_t dst_size, size_t min_size, const void *src, const char *what,
                    char *msg, size_t msg_size);

#endif /* C63_PARAMS_H */
