// SPDX-License-Identifier: GPL-2.0
/*
 * os_simd.c - the os.h seam's SIMD half for the kernel: which SIMD level
 * the op kernels may use (the CPU's, capped by the module parameter simd)
 * and their per-CPU scratch memory, used between kernel_fpu_begin() and
 * kernel_fpu_end() (kernel_neon_begin/end on arm64), which keep the
 * caller on its CPU.
 */
#include <linux/cpumask.h>
#include <linux/moduleparam.h>
#include <linux/percpu.h>
#include <linux/string.h>
#include <linux/topology.h>
#include <linux/vmalloc.h>
#ifdef CONFIG_X86
#include <asm/cpufeature.h>
#include <asm/fpu/api.h>
#include <asm/fpu/xstate.h>
#endif

#include "dv_linux.h"

static const char * const dv_simd_names[] = OS_SIMD_NAMES;

/* OS_SIMD_LEVELS: no cap */
static int dv_simd_cap = OS_SIMD_LEVELS;

static int dv_simd_set(const char *val, const struct kernel_param *kp)
{
	int l = sysfs_match_string(dv_simd_names, val);

	if (l < 0)
		return -EINVAL;
	WRITE_ONCE(dv_simd_cap, l);
	return 0;
}

static int dv_simd_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n", dv_simd_names[READ_ONCE(dv_simd_cap)]);
}

static const struct kernel_param_ops dv_simd_ops = {
	.set = dv_simd_set,
	.get = dv_simd_get,
};
module_param_cb(simd, &dv_simd_ops, NULL, 0644);
MODULE_PARM_DESC(simd,
		 "Highest SIMD level of the op kernels: sse2 (neon), avx2, avx512 or auto (default); results are the same at every level");

static enum os_simd_level dv_simd_cpu(void)
{
#ifdef CONFIG_X86
	if (boot_cpu_has(X86_FEATURE_AVX512F) &&
	    cpu_has_xfeatures(XFEATURE_MASK_SSE | XFEATURE_MASK_YMM |
			      XFEATURE_MASK_AVX512, NULL))
		return OS_SIMD_AVX512;
	if (boot_cpu_has(X86_FEATURE_AVX2) &&
	    cpu_has_xfeatures(XFEATURE_MASK_SSE | XFEATURE_MASK_YMM, NULL))
		return OS_SIMD_AVX2;
#endif
	return OS_SIMD_BASE;
}

enum os_simd_level os_simd_level(void)
{
	enum os_simd_level cpu = dv_simd_cpu();
	int cap = READ_ONCE(dv_simd_cap);

	return cap < cpu ? cap : cpu;
}

static DEFINE_PER_CPU(void *, dv_simd_scratch);

void *os_fpu_scratch(void)
{
	return this_cpu_read(dv_simd_scratch);
}

/**
 * dv_simd_init() - allocate every possible CPU's op scratch memory
 *
 * Return: 0 or -ENOMEM (nothing left allocated).
 */
int dv_simd_init(void)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		void *p = vmalloc_node(OS_FPU_SCRATCH_SIZE, cpu_to_node(cpu));

		if (!p) {
			dv_simd_exit();
			return -ENOMEM;
		}
		per_cpu(dv_simd_scratch, cpu) = p;
	}
	return 0;
}

void dv_simd_exit(void)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		vfree(per_cpu(dv_simd_scratch, cpu));
		per_cpu(dv_simd_scratch, cpu) = NULL;
	}
}
