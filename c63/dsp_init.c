/* Picks the fastest implementation of each DSP function for this CPU.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "c63-config.h"
#include "dsp.h"

#if C63_ARCH_AARCH64
int c63_dsp_init_neon(c63_dsp *dsp)
{
  c63_dsp_init_me_neon(dsp);
  c63_dsp_init_idct_neon(dsp);
  return 1;
}
#endif

void c63_dsp_init(c63_dsp *dsp)
{
  *dsp = c63_dsp_c;
#if C63_ARCH_X86
  c63_dsp_init_sse41(dsp);
  c63_dsp_init_avx2(dsp);
#endif
#if C63_ARCH_AARCH64
  c63_dsp_init_neon(dsp);
#endif
}
