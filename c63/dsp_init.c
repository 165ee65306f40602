/* Picks the fastest implementation of each DSP function for this CPU.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "dsp.h"

void c63_dsp_init(c63_dsp *dsp)
{
  *dsp = c63_dsp_c;
  c63_dsp_init_sse41(dsp);
  c63_dsp_init_avx2(dsp);
}
