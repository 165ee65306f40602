/* Finding markers in entropy-coded data. Encoders follow every FF in the
 * data with a stuffed 00, so the bytes that need a second look are the FFs
 * followed by anything else: a marker, or a byte the reference drops.
 * Stuffed FFs are common in coded data, so a search that stops at every FF
 * (memchr) spends its time in calls; this one stops only where the next
 * byte is not 00, several bytes a step.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef C63_MARKER_SCAN_H
#define C63_MARKER_SCAN_H

#include <stddef.h>
#include <stdint.h>

/* The offset of the first FF in buf[from, len - 1) whose next byte is not
 * 00 (so the next byte is in buf), or len when there is none. */
size_t c63_find_marker(const uint8_t *buf, size_t from, size_t len);

/* The same a byte at a time: the oracle of the tests. */
size_t c63_find_marker_c(const uint8_t *buf, size_t from, size_t len);

#endif /* C63_MARKER_SCAN_H */
