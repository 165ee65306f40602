/* The library's version (c63.h), as this build of it was configured.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "c63-config.h"
#include "c63/c63.h"

unsigned c63_version(void)
{
  return (unsigned)C63_VERSION_MAJOR << 16 | (unsigned)C63_VERSION_MINOR << 8 |
         (unsigned)C63_VERSION_MICRO;
}

const char *c63_version_string(void)
{
  return C63_VERSION;
}
