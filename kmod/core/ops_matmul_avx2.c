// SPDX-License-Identifier: GPL-2.0
/*
 * ops_matmul_avx2.c - the MATMUL kernel for AVX2: 8-lane vectors, a 6 x 16
 * register block (12 of the 16 ymm registers accumulate).
 *
 * Only dv_opk_matmul() calls it, when os_simd_level() says the CPU and
 * the OS have AVX2, between os_fpu_begin() and os_fpu_end(). The target
 * is set here (MMK_TARGET) rather than by build flags so that every build of the core
 * (Kbuild, the Makefile, setup.py, the fuzzer's clang) compiles this unit
 * the same way; AVX2 does not include FMA and -ffp-contract=off is on, so
 * no multiply and add fuse. Empty on other architectures.
 */
#include "ops_matmul.h"

#if defined(__x86_64__)
#define MMK_W	8
#define MMK_MR	6
#define MMK_NV	2
#define MMK_FN	dv_mm_rows_avx2
#define MMK_TARGET "avx2"
#include "ops_matmul_kernel.h"
#endif /* __x86_64__ */
