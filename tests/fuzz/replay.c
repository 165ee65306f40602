/* A main() for the fuzz targets when libFuzzer is not there (gcc builds):
 * runs the target once on each file named on the command line, so the
 * seed corpus is checked in every build.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
  for (int i = 1; i < argc; i++) {
    FILE *f = fopen(argv[i], "rb");
    if (!f) {
      fprintf(stderr, "cannot open %s\n", argv[i]);
      return 1;
    }
    uint8_t *buf = NULL;
    size_t n = 0, cap = 0, got;
    do {
      if (n == cap) {
        cap = cap ? cap * 2 : 65536;
        uint8_t *p = realloc(buf, cap);
        if (!p) return 1;
        buf = p;
      }
      got = fread(buf + n, 1, cap - n, f);
      n += got;
    } while (got > 0);
    fclose(f);
    LLVMFuzzerTestOneInput(buf, n);
    free(buf);
  }
  printf("%d inputs ran\n", argc - 1);
  return 0;
}
