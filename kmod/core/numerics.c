// SPDX-License-Identifier: GPL-2.0
/*
 * numerics.c - out-of-line versions of the software numerics in
 * numerics.h. Float code: built with the FPU enabled in the kernel.
 */
#include "numerics.h"

float dv_expf(float x)
{
	return dv_expf_inline(x);
}

float dv_logf(float x)
{
	return dv_logf_inline(x);
}

float dv_num_f16_to_f32(u16 h)
{
	return dv_f16_to_f32(h);
}
