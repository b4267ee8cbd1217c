// SPDX-License-Identifier: GPL-2.0
/*
 * test_strided.c - DAVINCI_TASK_F_STRIDED (DOC: strided operands): the
 * elementwise ops, CAST and IDENTITY on strided tensors (broadcast with
 * stride 0, transposed, sliced with a step, in place, a strided dst) give
 * the bytes the dense op gives on the same values and touch no other
 * byte of dst; any chunking of the walk gives the same bytes; every
 * malformed block fails the task touching nothing, and a descriptor that
 * names no strided block as the op needs is refused at the doorbell.
 */
#define _GNU_SOURCE
#include "fixtures.h"
#include "dv_internal.h"	/* dv_op_run(), dv_dtype_size() */

/* the case tables leave the strides and in_place they do not need zero */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#define ST_BYTES	65536
#define ST_JUNK		0xa5

struct st_bufs {
	struct buf a, b, d, x, y, r, p;
	struct stream s;
};

struct st_case {
	const char *what;
	uint16_t opcode;
	uint8_t dtype;
	uint8_t dst_dtype;
	uint32_t imm;
	uint32_t ndim;
	uint64_t sizes[8];
	uint64_t strides[3][8];
	bool in_place;		/* dst is src0 (buffer a) */
};

/* Element offset of row-major unit @u in operand @o. */
static uint64_t st_offset(const struct davinci_params_strided *p, uint32_t o,
			  uint64_t u)
{
	uint64_t off = 0;
	int d;

	for (d = (int)p->ndim - 1; d >= 0; d--) {
		off += (u % p->sizes[d]) * p->strides[o][d];
		u /= p->sizes[d];
	}
	return off;
}

static struct davinci_params_strided st_params(const struct st_case *c)
{
	struct davinci_params_strided p;

	memset(&p, 0, sizeof(p));
	p.ndim = c->ndim;
	memcpy(p.sizes, c->sizes, sizeof(p.sizes));
	memcpy(p.strides, c->strides, sizeof(p.strides));
	return p;
}

static uint64_t st_count(const struct davinci_params_strided *p)
{
	uint64_t n = 1;
	uint32_t d;

	for (d = 0; d < p->ndim && d < DV_ARRAY_SIZE(p->sizes); d++)
		n *= p->sizes[d];
	return n;
}

static bool st_binary(uint16_t opcode)
{
	return dv_opcodes[opcode].shape == DV_SHAPE_BINARY;
}

/* Run @t (one task) and return its status (~0: not taken in). */
static uint32_t st_run(struct fixture *fx, struct stream *s,
		       struct davinci_task t)
{
	uint64_t seq;

	if (submit(fx->ctx, s, &t, 1, &seq)) {
		CHECK(0);
		return ~0U;
	}
	CHECK_EQ(swait(fx->ctx, s, seq, 5000, NULL), 0);
	return tstatus(fx->ctx, s, seq);
}

/* The strided task of @c on @bb's buffers, its block written to bb->p. */
static struct davinci_task st_task(struct st_bufs *bb, const struct st_case *c,
				   const struct davinci_params_strided *p)
{
	struct davinci_task t = {
		.opcode = c->opcode, .dtype = c->dtype,
		.dst_dtype = c->dst_dtype, .imm = c->imm,
		.flags = DAVINCI_TASK_F_STRIDED,
		.dst = c->in_place ? bb->a.a.dev_addr : bb->d.a.dev_addr,
		.src0 = bb->a.a.dev_addr,
		.src1 = st_binary(c->opcode) ? bb->b.a.dev_addr : 0,
		.count = st_count(p),
		.params = bb->p.a.dev_addr,
		.params_size = sizeof(*p),
		.params_version = DAVINCI_PARAMS_STRIDED_VERSION,
	};

	memcpy(bb->p.p, p, sizeof(*p));
	return t;
}

/*
 * Case @c against the dense op: its sources gathered into x and y, the
 * dense task run into r, then the strided one; each element of dst must
 * be r's, every other byte of dst's buffer as it was.
 */
static void st_check(struct fixture *fx, struct st_bufs *bb,
		     const struct st_case *c)
{
	struct davinci_params_strided p = st_params(c);
	struct davinci_task t = st_task(bb, c, &p);
	uint64_t es = dv_dtype_size(t.dtype);
	uint64_t des = dv_dtype_size(dv_op_dst_dtype(&t));
	uint64_t n = t.count, u, off;
	uint8_t *dst = c->in_place ? bb->a.p : bb->d.p;
	static uint8_t before[ST_BYTES], want[ST_BYTES];
	struct davinci_task dense = t;
	bool bad = false;

	for (u = 0; u < n; u++) {
		memcpy(bb->x.p + u * es, bb->a.p + st_offset(&p, 1, u) * es, es);
		memcpy(bb->y.p + u * es, bb->b.p + st_offset(&p, 2, u) * es, es);
	}
	dense.flags = 0;
	dense.params = 0;
	dense.params_size = 0;
	dense.params_version = 0;
	dense.dst = bb->r.a.dev_addr;
	dense.src0 = bb->x.a.dev_addr;
	dense.src1 = st_binary(c->opcode) ? bb->y.a.dev_addr : 0;
	CHECK_EQ(st_run(fx, &bb->s, dense), DAVINCI_STATUS_OK);

	if (!c->in_place)
		memset(bb->d.p, ST_JUNK, ST_BYTES);
	memcpy(before, dst, ST_BYTES);
	memcpy(want, before, ST_BYTES);
	for (u = 0; u < n; u++) {
		off = st_offset(&p, 0, u) * des;
		memcpy(want + off, bb->r.p + u * des, des);
	}
	CHECK_EQ(st_run(fx, &bb->s, t), DAVINCI_STATUS_OK);
	if (memcmp(dst, want, ST_BYTES)) {
		for (off = 0; off < ST_BYTES && !bad; off++)
			if (dst[off] != want[off]) {
				fprintf(stdout, "  %s: byte %llu is %#x, not %#x\n",
					c->what, (unsigned long long)off,
					dst[off], want[off]);
				bad = true;
			}
		CHECK(!bad);
	}
}

static void st_fill(struct st_bufs *bb)
{
	uint32_t i, *a = (uint32_t *)bb->a.p, *b = (uint32_t *)bb->b.p;
	float f;

	for (i = 0; i < ST_BYTES / 4; i++) {
		f = (float)((int)(i * 37 % 101) - 50) / 8.0f;
		memcpy(&a[i], &f, 4);
		f = (float)((int)(i * 53 % 89) - 40) / 4.0f + 0.5f;
		memcpy(&b[i], &f, 4);
	}
}

static int st_setup(struct fixture *fx, struct st_bufs *bb)
{
	if (fixture_init(fx, 0) ||
	    fx_bufs(fx, ST_BYTES, 0, &bb->a, &bb->b, &bb->d, &bb->x, &bb->y,
		    &bb->r, &bb->p, NULL) ||
	    fx_stream(fx, 0, 16, 16, &bb->s))
		return -1;
	st_fill(bb);
	return 0;
}

#define F32	DAVINCI_DTYPE_FLOAT32
#define F16	DAVINCI_DTYPE_FLOAT16
#define BF16	DAVINCI_DTYPE_BFLOAT16
#define I32	DAVINCI_DTYPE_INT32

static const struct st_case st_cases[] = {
	{ "row broadcast", DAVINCI_OP_ADD, F32, 0, 0, 2, { 5, 7 },
	  { { 7, 1 }, { 7, 1 }, { 0, 1 } } },
	{ "column broadcast", DAVINCI_OP_SUB, F32, 0, 0, 2, { 5, 7 },
	  { { 7, 1 }, { 7, 1 }, { 1, 0 } } },
	{ "scalar broadcast", DAVINCI_OP_MUL, F16, 0, 0, 1, { 300 },
	  { { 1 }, { 1 }, { 0 } } },
	{ "transposed source", DAVINCI_OP_DIV, F32, 0, 0, 2, { 6, 9 },
	  { { 9, 1 }, { 1, 6 }, { 9, 1 } } },
	{ "sliced with a step", DAVINCI_OP_MAX, BF16, 0, 0, 2, { 4, 5 },
	  { { 11, 2 }, { 30, 3 }, { 5, 1 } } },
	{ "3-d, every operand strided", DAVINCI_OP_MIN, I32, 0, 0, 3,
	  { 3, 4, 5 }, { { 1, 3, 12 }, { 40, 10, 2 }, { 0, 7, 1 } } },
	{ "in place", DAVINCI_OP_ADD, F32, 0, 0, 2, { 6, 10 },
	  { { 40, 2 }, { 40, 2 }, { 10, 1 } }, true },
	{ "in place, size-1 strides differ", DAVINCI_OP_RELU, F32, 0, 0, 3,
	  { 4, 1, 8 }, { { 16, 5, 2 }, { 16, 99, 2 } }, true },
	{ "runs longer than a block", DAVINCI_OP_AXPY, F32, 0, 0x40400000, 2,
	  { 3, 500 }, { { 500, 1 }, { 1000, 2 }, { 0, 1 } } },
	{ "unary from a broadcast", DAVINCI_OP_EXP, F16, 0, 0, 2, { 3, 4 },
	  { { 4, 1 }, { 0, 2 } } },
	{ "sqrt, transposed dst", DAVINCI_OP_SQRT, F32, 0, 0, 2, { 8, 16 },
	  { { 1, 8 }, { 16, 1 } } },
	{ "abs", DAVINCI_OP_ABS, I32, 0, 0, 1, { 77 }, { { 3 }, { 5 } } },
	{ "leaky relu", DAVINCI_OP_LEAKY_RELU, BF16, 0, 0x3dcccccd, 2,
	  { 7, 9 }, { { 9, 1 }, { 1, 7 } } },
	{ "relu grad", DAVINCI_OP_RELU_GRAD, F32, 0, 0, 2, { 9, 9 },
	  { { 9, 1 }, { 1, 9 }, { 0, 1 } } },
	{ "cmp", DAVINCI_OP_CMP, F32, 0, DAVINCI_CMP_LT, 2, { 10, 6 },
	  { { 6, 1 }, { 6, 1 }, { 1, 0 } } },
	{ "cast, strided dst", DAVINCI_OP_CAST, F32, F16, 0, 2, { 8, 8 },
	  { { 1, 8 }, { 8, 1 } } },
	{ "cast, sliced", DAVINCI_OP_CAST, I32, BF16, 0, 2, { 5, 6 },
	  { { 12, 2 }, { 1, 5 } } },
	{ "identity: view.copy_(src)", DAVINCI_OP_IDENTITY, I32, 0, 0, 2,
	  { 4, 6 }, { { 12, 2 }, { 6, 1 } } },
	{ "identity: expand", DAVINCI_OP_IDENTITY, F16, 0, 0, 3, { 2, 3, 4 },
	  { { 12, 4, 1 }, { 0, 1, 0 } } },
	{ "empty", DAVINCI_OP_ADD, F32, 0, 0, 2, { 3, 0 },
	  { { 1, 1 }, { 1, 1 }, { 1, 1 } } },
};

void test_strided_ops(void)
{
	struct fixture fx;
	struct st_bufs bb;
	size_t i;

	REQUIRE(st_setup(&fx, &bb) == 0);
	for (i = 0; i < DV_ARRAY_SIZE(st_cases); i++) {
		st_fill(&bb);
		st_check(&fx, &bb, &st_cases[i]);
	}
	fixture_exit(&fx);
}

/*
 * dv_op_run() over [0, count) in chunks of @chunk units gives the bytes
 * of one call: chunk boundaries fall inside runs and inside blocks.
 */
static void st_chunked(const struct davinci_task *t,
		       const struct davinci_params_strided *p, uint8_t *dst,
		       const uint8_t *a, const uint8_t *b, uint64_t chunk)
{
	uint64_t u;

	os_fpu_begin();
	for (u = 0; u < t->count; u += chunk)
		dv_op_run(t, p, dst, a, b, NULL, u, u + chunk);
	os_fpu_end();
}

void test_strided_chunks(void)
{
	static const uint64_t chunks[] = { 1, 3, 64, 95, 96, 97, 149, 151,
					   1000 };
	static const struct st_case c = {
		"chunks", DAVINCI_OP_AXPY, F32, 0, 0x3fc00000, 3, { 2, 7, 150 },
		{ { 1, 2, 14 }, { 3000, 300, 2 }, { 0, 0, 1 } } };
	struct davinci_params_strided p = st_params(&c);
	struct davinci_task t = {
		.opcode = c.opcode, .dtype = c.dtype, .imm = c.imm,
		.flags = DAVINCI_TASK_F_STRIDED, .count = st_count(&p),
		.params_size = sizeof(p),
		.params_version = DAVINCI_PARAMS_STRIDED_VERSION,
	};
	uint8_t *a = calloc(1, ST_BYTES), *b = calloc(1, ST_BYTES);
	uint8_t *one = calloc(1, ST_BYTES), *many = calloc(1, ST_BYTES);
	size_t i;

	REQUIRE(a && b && one && many);
	for (i = 0; i < ST_BYTES / 4; i++) {
		((float *)a)[i] = (float)i / 3.0f;
		((float *)b)[i] = 1.0f / (float)(i + 1);
	}
	CHECK_EQ(dv_op_check_params(&t, &p), 0);
	st_chunked(&t, &p, one, a, b, t.count);
	CHECK(!all_set(one, 0, (size_t)t.count * 4));
	for (i = 0; i < DV_ARRAY_SIZE(chunks); i++) {
		memset(many, 0, ST_BYTES);
		st_chunked(&t, &p, many, a, b, chunks[i]);
		if (memcmp(one, many, ST_BYTES)) {
			fprintf(stdout, "  chunks of %llu differ\n",
				(unsigned long long)chunks[i]);
			CHECK(0);
		}
	}
	free(a);
	free(b);
	free(one);
	free(many);
}

/* A strided task whose block the op refuses fails, touching nothing. */
static void st_refused(struct fixture *fx, struct st_bufs *bb,
		       const struct st_case *c,
		       const struct davinci_params_strided *p, uint64_t count,
		       uint64_t dst_at)
{
	struct davinci_task t = st_task(bb, c, p);

	t.count = count;
	if (dst_at != UINT64_MAX)
		t.dst = dst_at;
	memset(bb->d.p, ST_JUNK, ST_BYTES);
	st_fill(bb);
	memcpy(bb->x.p, bb->a.p, ST_BYTES);
	if (st_run(fx, &bb->s, t) != DAVINCI_STATUS_INVALID_TASK) {
		fprintf(stdout, "  not refused: %s\n", c->what);
		CHECK(0);
	}
	CHECK(all_set(bb->d.p, ST_JUNK, ST_BYTES));
	CHECK(!memcmp(bb->x.p, bb->a.p, ST_BYTES));
	CHECK_EQ(stream_reset(fx->ctx, &bb->s), 0);
}

#define ANY	UINT64_MAX	/* the case's count, or its dst */

void test_strided_refusals(void)
{
	static const struct {
		struct st_case c;
		uint64_t count;		/* ANY: the sizes' product */
		int dst;		/* byte offset of dst in a, -1: d */
		uint32_t pad;
	} bad[] = {
		{ { "no dimension", DAVINCI_OP_ADD, F32, 0, 0, 0, { 0 },
		    { { 0 } } }, 1, -1, 0 },
		{ { "nine dimensions", DAVINCI_OP_ADD, F32, 0, 0, 9, { 1 },
		    { { 0 } } }, 1, -1, 0 },
		{ { "pad set", DAVINCI_OP_ADD, F32, 0, 0, 1, { 4 },
		    { { 1 }, { 1 }, { 1 } } }, ANY, -1, 1 },
		{ { "a size past ndim", DAVINCI_OP_ADD, F32, 0, 0, 1, { 4, 1 },
		    { { 1 }, { 1 }, { 1 } } }, 4, -1, 0 },
		{ { "a dst stride past ndim", DAVINCI_OP_ADD, F32, 0, 0, 1,
		    { 4 }, { { 1, 1 }, { 1 }, { 1 } } }, ANY, -1, 0 },
		{ { "a src1 stride past ndim", DAVINCI_OP_ADD, F32, 0, 0, 1,
		    { 4 }, { { 1 }, { 1 }, { 1, 0, 0, 0, 0, 0, 0, 5 } } },
		  ANY, -1, 0 },
		{ { "src1 strides of a unary op", DAVINCI_OP_RELU, F32, 0, 0, 1,
		    { 4 }, { { 1 }, { 1 }, { 1 } } }, ANY, -1, 0 },
		{ { "src1 strides of a cast", DAVINCI_OP_CAST, F32, F16, 0, 1,
		    { 4 }, { { 1 }, { 1 }, { 1 } } }, ANY, -1, 0 },
		{ { "count not the product", DAVINCI_OP_ADD, F32, 0, 0, 2,
		    { 4, 4 }, { { 4, 1 }, { 4, 1 }, { 4, 1 } } }, 15, -1, 0 },
		{ { "the product overflows", DAVINCI_OP_ADD, F32, 0, 0, 2,
		    { 1ULL << 32, 1ULL << 32 }, { { 0 } } }, 0, -1, 0 },
		{ { "a span past u64", DAVINCI_OP_ADD, F32, 0, 0, 2, { 2, 2 },
		    { { 2, 1 }, { 1ULL << 63, 1ULL << 63 }, { 0, 1 } } },
		  ANY, -1, 0 },
		{ { "a span's bytes past u64", DAVINCI_OP_ADD, F32, 0, 0, 1,
		    { 2 }, { { 1 }, { 1ULL << 62 }, { 1 } } }, ANY, -1, 0 },
		{ { "dst stride 0", DAVINCI_OP_ADD, F32, 0, 0, 2, { 3, 4 },
		    { { 0, 1 }, { 4, 1 }, { 4, 1 } } }, ANY, -1, 0 },
		{ { "dst dims on one stride", DAVINCI_OP_ADD, F32, 0, 0, 2,
		    { 2, 2 }, { { 1, 1 }, { 2, 1 }, { 2, 1 } } }, ANY, -1, 0 },
		{ { "dst rows overlap", DAVINCI_OP_ADD, F32, 0, 0, 2, { 2, 3 },
		    { { 2, 1 }, { 3, 1 }, { 3, 1 } } }, ANY, -1, 0 },
		{ { "dst overlaps src0 shifted", DAVINCI_OP_ADD, F32, 0, 0, 1,
		    { 8 }, { { 1 }, { 1 }, { 1 } } }, ANY, 4, 0 },
		{ { "in place, other strides", DAVINCI_OP_ADD, F32, 0, 0, 2,
		    { 4, 4 }, { { 4, 1 }, { 1, 4 }, { 4, 1 } } }, ANY, 0, 0 },
		{ { "cast in place", DAVINCI_OP_CAST, F32, I32, 0, 1, { 8 },
		    { { 1 }, { 1 } } }, ANY, 0, 0 },
	};
	struct fixture fx;
	struct st_bufs bb;
	size_t i;

	REQUIRE(st_setup(&fx, &bb) == 0);
	for (i = 0; i < DV_ARRAY_SIZE(bad); i++) {
		struct davinci_params_strided p = st_params(&bad[i].c);
		uint64_t count = bad[i].count;

		p.pad = bad[i].pad;
		if (count == ANY)
			count = st_count(&p);
		st_refused(&fx, &bb, &bad[i].c, &p, count, bad[i].dst < 0 ?
			   ANY : bb.a.a.dev_addr + (uint64_t)bad[i].dst);
	}
	fixture_exit(&fx);
}

/* Descriptors the doorbell refuses: nothing is taken in. */
void test_strided_doorbell(void)
{
	static const struct st_case add = {
		"add", DAVINCI_OP_ADD, F32, 0, 0, 1, { 4 },
		{ { 1 }, { 1 }, { 1 } } };
	struct davinci_doorbell d;
	struct davinci_params_strided p = st_params(&add);
	struct davinci_task t, good;
	struct fixture fx;
	struct st_bufs bb;
	uint16_t no[] = { DAVINCI_OP_MATMUL, DAVINCI_OP_SOFTMAX,
			  DAVINCI_OP_REDUCE_SUM, DAVINCI_OP_COPY_VIEW,
			  DAVINCI_OP_MEMCPY, DAVINCI_OP_NOP };
	size_t i;

	REQUIRE(st_setup(&fx, &bb) == 0);
	good = st_task(&bb, &add, &p);
	CHECK_EQ(st_run(&fx, &bb.s, good), DAVINCI_STATUS_OK);
	for (i = 0; i < 5; i++) {
		t = good;
		switch (i) {
		case 0: t.params = 0; break;
		case 1: t.params_size -= 8; break;
		case 2: t.params_size = 0; break;
		case 3: t.params_version = 2; break;
		default: t.flags = 0; break;	/* a block for a dense ADD */
		}
		d.stream_id = bb.s.c.stream_id;
		*sq_slot(&bb.s, bb.s.tail) = t;
		d.sq_tail = bb.s.tail + 1;
		CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_DOORBELL, &d),
			 -EINVAL);
	}
	/* ops that take no STRIDED flag */
	for (i = 0; i < DV_ARRAY_SIZE(no); i++) {
		CHECK(!(dv_opcodes[no[i]].flags & DAVINCI_TASK_F_STRIDED));
		t = good;
		t.opcode = no[i];
		d.stream_id = bb.s.c.stream_id;
		*sq_slot(&bb.s, bb.s.tail) = t;
		d.sq_tail = bb.s.tail + 1;
		CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_DOORBELL, &d),
			 -EINVAL);
	}
	fixture_exit(&fx);
}
