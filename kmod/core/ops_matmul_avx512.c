// SPDX-License-Identifier: GPL-2.0
/*
 * ops_matmul_avx512.c - the MATMUL kernel for AVX-512F: 16-lane vectors,
 * an 8 x 32 register block (16 of the 32 zmm registers accumulate).
 *
 * Only dv_opk_matmul() calls it, when os_simd_level() says the CPU and
 * the OS have AVX-512F, between os_fpu_begin() and os_fpu_end(). The
 * target is set here rather than by build flags so that every build of the
 * core (Kbuild, the Makefile, setup.py, the fuzzer's clang) compiles this
 * unit the same way; AVX-512F does not include FMA and -ffp-contract=off
 * is on, so no multiply and add fuse. Empty on other architectures.
 */
#include "ops_matmul.h"

#if defined(__x86_64__)
#define MMK_W	16
#define MMK_MR	8
#define MMK_NV	2
#define MMK_FN	dv_mm_rows_avx512
#define MMK_TARGET "avx512f"
#include "ops_matmul_kernel.h"
#endif /* __x86_64__ */
