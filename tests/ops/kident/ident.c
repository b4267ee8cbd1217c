// SPDX-License-Identifier: GPL-2.0
/* bit-identity check: same op outputs hashed in the kernel and userspace */
#ifdef __KERNEL__
#include <linux/module.h>
#include <linux/vmalloc.h>
#include <linux/sched.h>
#include <asm/fpu/api.h>
#define PR(...) pr_info(__VA_ARGS__)
#define ALLOC(n) vzalloc(n)
#define FREE(p) vfree(p)
#define FPU_BEGIN() kernel_fpu_begin()
#define FPU_END() do { kernel_fpu_end(); cond_resched(); } while (0)
#else
#include <stdio.h>
#include <stdlib.h>
#define PR(...) printf(__VA_ARGS__)
#define ALLOC(n) calloc(1, n)
#define FREE(p) free(p)
#define FPU_BEGIN() do { } while (0)
#define FPU_END() do { } while (0)
#endif
#include "ops.h"

static u64 lcg_state;
static u32 lcg(void)
{
	lcg_state = lcg_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (u32)(lcg_state >> 32);
}

static u64 fnv(const u8 *p, u64 n)
{
	u64 h = 14695981039346656037ULL;
	u64 i;

	for (i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ULL;
	return h;
}

/* random "sane" float bits: |x| in about [2^-8, 2^8] */
static u32 sane_f32(void)
{
	u32 r = lcg();

	return (r & 0x807fffffu) | ((119u + (r >> 23) % 17u) << 23);
}

static void run_task(const char *name, struct davinci_task *t, u8 *dst,
		     u8 *s0, u8 *s1)
{
	struct dv_op_extent e;
	u64 u, ch, b;

	t->dst = (u64)(unsigned long)dst;
	t->src0 = (u64)(unsigned long)s0;
	t->src1 = s1 ? (u64)(unsigned long)s1 : 0;
	if (dv_op_validate(t) || dv_op_extent(t, &e)) {
		PR("opsfp: %s INVALID\n", name);
		return;
	}
	u = dv_op_units(t);
	ch = dv_op_chunk_units(t);
	for (b = 0; b < u; b += ch) {
		FPU_BEGIN();
		dv_op_run(t, dst, s0, s1, b, b + ch < u ? b + ch : u);
		FPU_END();
	}
	PR("opsfp: %-12s %016llx\n", name, (unsigned long long)fnv(dst, e.dst));
}

static int ident_main(void)
{
	const u64 N = 1 << 20;
	u8 *a = ALLOC(N * 4), *b = ALLOC(N * 4), *c = ALLOC(N * 4);
	u64 i;
	struct davinci_task t;

	if (!a || !b || !c)
		return -1;
	lcg_state = 42;
	for (i = 0; i < N; i++)
		((u32 *)a)[i] = lcg();	/* every kind of float32 */
	for (i = 0; i < N; i++)
		((u32 *)b)[i] = sane_f32();

#define T0() memset(&t, 0, sizeof(t))
	T0(); t.opcode = DAVINCI_OP_EXP; t.count = N;
	run_task("exp_any", &t, c, a, NULL);
	T0(); t.opcode = DAVINCI_OP_EXP; t.count = N;
	run_task("exp_sane", &t, c, b, NULL);
	T0(); t.opcode = DAVINCI_OP_AXPY; t.count = N; t.imm = 0x3fc00001;
	run_task("axpy", &t, c, a, b);
	T0(); t.opcode = DAVINCI_OP_DIV; t.count = N;
	run_task("div", &t, c, b, a);
	T0(); t.opcode = DAVINCI_OP_MAX; t.count = N;
	run_task("max", &t, c, a, b);
	T0(); t.opcode = DAVINCI_OP_MUL; t.count = N; t.dtype = DAVINCI_DTYPE_FLOAT16;
	run_task("mul_f16", &t, c, a, b);
	T0(); t.opcode = DAVINCI_OP_ADD; t.count = N; t.dtype = DAVINCI_DTYPE_BFLOAT16;
	run_task("add_bf16", &t, c, a, b);
	T0(); t.opcode = DAVINCI_OP_DIV; t.count = N; t.dtype = DAVINCI_DTYPE_INT32;
	run_task("div_i32", &t, c, a, b);
	T0(); t.opcode = DAVINCI_OP_MATMUL; t.m = 200; t.n = 190; t.k = 300;
	run_task("matmul", &t, c, b, b + 200 * 300 * 4);
	T0(); t.opcode = DAVINCI_OP_MATMUL; t.m = 67; t.n = 45; t.k = 129;
	t.flags = DAVINCI_TASK_F_TRANS_A | DAVINCI_TASK_F_TRANS_B;
	run_task("matmul_tt", &t, c, b, b + 67 * 129 * 4);
	T0(); t.opcode = DAVINCI_OP_MATMUL; t.m = 64; t.n = 72; t.k = 80;
	t.dtype = DAVINCI_DTYPE_BFLOAT16;
	run_task("matmul_bf16", &t, c, b, b + 64 * 80 * 2);
	T0(); t.opcode = DAVINCI_OP_SOFTMAX; t.m = 300; t.n = 1001;
	run_task("softmax", &t, c, b, NULL);
	T0(); t.opcode = DAVINCI_OP_SOFTMAX; t.m = 100; t.n = 333;
	t.dtype = DAVINCI_DTYPE_FLOAT16;
	run_task("softmax_f16", &t, c, b, NULL);
	T0(); t.opcode = DAVINCI_OP_REDUCE_SUM; t.m = 1000; t.n = 1000;
	run_task("reduce", &t, c, b, NULL);
	T0(); t.opcode = DAVINCI_OP_CAST; t.count = N;
	t.dst_dtype = DAVINCI_DTYPE_FLOAT16;
	run_task("cast_f16", &t, c, a, NULL);
	T0(); t.opcode = DAVINCI_OP_CAST; t.count = N;
	t.dst_dtype = DAVINCI_DTYPE_BFLOAT16;
	run_task("cast_bf16", &t, c, a, NULL);
	T0(); t.opcode = DAVINCI_OP_CAST; t.count = N;
	t.dst_dtype = DAVINCI_DTYPE_INT32;
	run_task("cast_i32", &t, c, a, NULL);
	T0(); t.opcode = DAVINCI_OP_CAST; t.count = N; t.dtype = DAVINCI_DTYPE_INT32;
	t.dst_dtype = DAVINCI_DTYPE_BFLOAT16;
	run_task("cast_i2bf", &t, c, a, NULL);
	T0(); t.opcode = DAVINCI_OP_CAST; t.count = N; t.dtype = DAVINCI_DTYPE_FLOAT16;
	t.dst_dtype = DAVINCI_DTYPE_FLOAT32;
	run_task("cast_h2f", &t, c, a, NULL);
	FREE(a);
	FREE(b);
	FREE(c);
	PR("opsfp: done\n");
	return 0;
}

#ifdef __KERNEL__
static int __init ident_init(void)
{
	ident_main();
	return -EAGAIN;	/* do not stay loaded */
}
module_init(ident_init);
MODULE_LICENSE("GPL");
#else
int main(void)
{
	return ident_main();
}
#endif
