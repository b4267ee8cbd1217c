// SPDX-License-Identifier: GPL-2.0
/*
 * ops_optimizer.c - the optimizer steps, each over @count elements in
 * place, the tensors of one parameter in one task.
 *
 * ADAM: one Adam or AdamW step: param at dst, grad at src0 (read only),
 * exp_avg at src1 and exp_avg_sq at src2.
 *
 * CPU torch's fused Adam (aten::_fused_adam_, _fused_adamw_) element by
 * element, in float32 (its opmath type for float32, float16 and
 * bfloat16), the host having computed the bias corrections in float64
 * and rounded each hyperparameter once to float32 (the block's fields):
 *
 *	g = maximize ? -grad : grad
 *	g = g + param * weight_decay		(only when weight_decay != 0)
 *	p = param * decay			(AdamW; decay 1 for Adam: exact)
 *	d = g - m
 *	m = |w| < 0.5 ? m + w * d : g - d * (1 - w)	(lerp, w = 1 - beta1)
 *	v = v * beta2
 *	v = v + (c * g) * g			(c = 1 - beta2)
 *	p = p - (step_size * m) / (sqrt(v) / bias_correction2_sqrt + eps)
 *
 * in this order, each operation rounded (no contraction: the kernel
 * and userspace builds give the same bytes). m and v are rounded once to
 * the storage type when stored; the update of p uses their float32
 * values, as CPU torch's does.
 *
 * SGD_MOMENTUM: one SGD step with momentum, param at dst, grad at src0
 * (read only), momentum_buffer at src1, CPU torch's fused SGD
 * (aten::_fused_sgd_) in float32 with momentum != 0:
 *
 *	g = maximize ? -grad : grad
 *	g = g + param * weight_decay		(only when weight_decay != 0)
 *	b = first_step ? g : b * momentum + g * dampening_weight
 *	g = nesterov ? g + b * momentum : b
 *	p = param - g * lr
 *
 * b stored rounded to the storage type, its float32 value used for p.
 *
 * NaN results are canonical. Element i depends on element i alone, so
 * chunks give the same bytes. Float code: the kernel builds this file
 * with the FPU enabled.
 */
#include "dv_internal.h"
#include "ops_kernels.h"
#include "numerics.h"

/* float16/bfloat16 elements widened this many at a time (stack: 512 B) */
#define OPT_BLOCK	32

/* The block's hyperparameters as float32. */
struct opt_adam {
	float step_size, bc2_sqrt, eps, w, one_minus_w, beta2, c2, wd, decay;
	bool small, maximize, l2;
};

static void opt_adam_load(const struct davinci_params_adam *p,
			  struct opt_adam *a)
{
	a->step_size = dv_u2f(p->step_size);
	a->bc2_sqrt = dv_u2f(p->bias_correction2_sqrt);
	a->eps = dv_u2f(p->eps);
	a->w = dv_u2f(p->exp_avg_weight);
	a->one_minus_w = 1.0f - a->w;
	a->small = a->w < 0.5f && a->w > -0.5f;
	a->beta2 = dv_u2f(p->beta2);
	a->c2 = dv_u2f(p->exp_avg_sq_weight);
	a->wd = dv_u2f(p->weight_decay);
	a->l2 = a->wd != 0.0f;
	a->decay = dv_u2f(p->decay);
	a->maximize = p->maximize;
}

/* @n elements in float32: @x, @m and @v updated, @g read */
static void opt_adam_f32(const struct opt_adam *a, float *x, const float *g,
			 float *m, float *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		float gi = a->maximize ? -g[i] : g[i];
		float p = x[i], mi = m[i], vi = v[i], d, den;

		if (a->l2)
			gi = gi + p * a->wd;
		p = p * a->decay;
		d = gi - mi;
		if (a->small)
			mi = mi + a->w * d;
		else
			mi = gi - d * a->one_minus_w;
		vi = vi * a->beta2;
		vi = vi + (a->c2 * gi) * gi;
		den = dv_sqrtf(vi) / a->bc2_sqrt + a->eps;
		p = p - (a->step_size * mi) / den;
		x[i] = dv_canon_nan(p);
		m[i] = dv_canon_nan(mi);
		v[i] = dv_canon_nan(vi);
	}
}

/* The SGD block's hyperparameters as float32. */
struct opt_sgd {
	float lr, momentum, damp_w, wd;
	bool l2, nesterov, maximize, first;
};

static void opt_sgd_load(const struct davinci_params_sgd_momentum *p,
			 struct opt_sgd *a)
{
	a->lr = dv_u2f(p->lr);
	a->momentum = dv_u2f(p->momentum);
	a->damp_w = dv_u2f(p->dampening_weight);
	a->wd = dv_u2f(p->weight_decay);
	a->l2 = a->wd != 0.0f;
	a->nesterov = p->nesterov;
	a->maximize = p->maximize;
	a->first = p->first_step;
}

/* @n elements in float32: @x and @b updated, @g read */
static void opt_sgd_f32(const struct opt_sgd *a, float *x, const float *g,
			float *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		float gi = a->maximize ? -g[i] : g[i];
		float p = x[i], bi;

		if (a->l2)
			gi = gi + p * a->wd;
		bi = a->first ? gi : b[i] * a->momentum + gi * a->damp_w;
		gi = a->nesterov ? gi + bi * a->momentum : bi;
		p = p - gi * a->lr;
		x[i] = dv_canon_nan(p);
		b[i] = dv_canon_nan(bi);
	}
}

/* SGD_MOMENTUM of units [@begin, @end) */
static void opt_sgd(const struct davinci_task *t, const void *params,
		    void *dst, const void *src0, const void *src1, u64 begin,
		    u64 end)
{
	struct opt_sgd a;
	float x[OPT_BLOCK], g[OPT_BLOCK], b[OPT_BLOCK];
	u64 i, n;

	opt_sgd_load(params, &a);
	/* src1 is this op's momentum buffer, which it writes (ops.toml) */
	if (t->dtype == DAVINCI_DTYPE_FLOAT32) {
		opt_sgd_f32(&a, (float *)dst + begin,
			    (const float *)src0 + begin,
			    (float *)src1 + begin, end - begin);
		return;
	}
	for (i = begin; i < end; i += n) {
		n = end - i < OPT_BLOCK ? end - i : OPT_BLOCK;
		dv_widen(t->dtype, dst, i, x, n);
		dv_widen(t->dtype, src0, i, g, n);
		dv_widen(t->dtype, src1, i, b, n);
		opt_sgd_f32(&a, x, g, b, n);
		dv_narrow(t->dtype, dst, i, x, n);
		dv_narrow(t->dtype, (void *)src1, i, b, n);
	}
}

DV_OP_KERNEL(optimizer)
{
	struct opt_adam a;
	float x[OPT_BLOCK], g[OPT_BLOCK], m[OPT_BLOCK], v[OPT_BLOCK];
	u64 i, n;

	if (t->opcode == DAVINCI_OP_SGD_MOMENTUM) {
		opt_sgd(t, params, dst, src0, src1, begin, end);
		return;
	}
	opt_adam_load(params, &a);
	if (t->dtype == DAVINCI_DTYPE_FLOAT32) {
		opt_adam_f32(&a, (float *)dst + begin,
			     (const float *)src0 + begin,
			     (float *)src1 + begin, (float *)src2 + begin,
			     end - begin);
		return;
	}
	/* src1 is this op's exp_avg, which it writes (DOC: ops.toml) */
	for (i = begin; i < end; i += n) {
		n = end - i < OPT_BLOCK ? end - i : OPT_BLOCK;
		dv_widen(t->dtype, dst, i, x, n);
		dv_widen(t->dtype, src0, i, g, n);
		dv_widen(t->dtype, src1, i, m, n);
		dv_widen(t->dtype, src2, i, v, n);
		opt_adam_f32(&a, x, g, m, v, n);
		dv_narrow(t->dtype, dst, i, x, n);
		dv_narrow(t->dtype, (void *)src1, i, m, n);
		dv_narrow(t->dtype, src2, i, v, n);
	}
}
