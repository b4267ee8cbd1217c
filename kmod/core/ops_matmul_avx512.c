// SPDX-License-Identifier: GPL-2.0
/*
 * ops_matmul_avx512.c - the MATMUL kernel for AVX-512F: 16-lane vectors
 * and an 8 x 32 register block (16 of the 32 zmm registers accumulate).
 * Without FMA the block needs a broadcast of A per row per p. On Zen 5
 * (family 26, full 512-bit pipes) this block measured 208 GFLOP/s on a
 * 64 x 576 x 3136 float32 GEMM, one core, against 109 for the 6 x 16
 * block of 8-lane vectors this level used before; on Zen 4 (512-bit ops
 * split in two, a 512-bit broadcast taking a floating-point pipe) 16-lane
 * blocks had measured 70 to 84 GFLOP/s on 512 x 512 against 96.
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
