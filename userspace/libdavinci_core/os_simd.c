// SPDX-License-Identifier: GPL-2.0
/*
 * os_simd.c - the os.h seam's SIMD half for userspace: which SIMD level
 * the op kernels may use (the CPU's, capped by DAVINCI_SIMD) and their
 * per-thread scratch memory.
 */
#include <stdlib.h>
#include <string.h>

#include "os.h"

static enum os_simd_level os_simd_cpu(void)
{
#if defined(__x86_64__) || defined(__i386__)
	/* libgcc's checks include the OS saving the ymm/zmm state (XCR0) */
	if (__builtin_cpu_supports("avx512f"))
		return OS_SIMD_AVX512;
	if (__builtin_cpu_supports("avx2"))
		return OS_SIMD_AVX2;
#endif
	return OS_SIMD_BASE;
}

static const char *const os_simd_names[] = OS_SIMD_NAMES;

enum os_simd_level os_simd_level(void)
{
	enum os_simd_level cpu = os_simd_cpu();
	const char *want = getenv("DAVINCI_SIMD");
	int l;

	if (!want || !*want)
		return cpu;
	for (l = 0; l < OS_SIMD_LEVELS; l++)
		if (!strcmp(want, os_simd_names[l]))
			return (enum os_simd_level)l < cpu ?
			       (enum os_simd_level)l : cpu;
	return cpu;	/* unknown names ("auto") mean the CPU's best */
}

/* Dynamic TLS in the shared library: allocated in a thread's first use. */
static __thread unsigned char os_scratch[OS_FPU_SCRATCH_SIZE]
	__attribute__((aligned(64)));

void *os_fpu_scratch(void)
{
	return os_scratch;
}
