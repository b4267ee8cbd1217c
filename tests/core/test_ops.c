// SPDX-License-Identifier: GPL-2.0
/*
 * test_ops.c - tests of operands and opcodes: validation, compute,
 * alignment, malformed tasks.
 */
#define _GNU_SOURCE
#include "fixtures.h"
#include "dv_internal.h"	/* dv_opcodes[] */

void test_operand_validation(void)
{
	struct fixture fx;
	struct buf a, b, freed, foreign;
	struct stream s;
	struct davinci_task t;
	struct davinci_mem_free f;
	uint64_t seq;

	REQUIRE(fixture_init2(&fx, 0) == 0);
	REQUIRE(buf_alloc(fx.ctx, 8192, 0, &a) == 0);
	REQUIRE(buf_alloc(fx.ctx, 8192, 0, &b) == 0);
	REQUIRE(buf_alloc(fx.ctx, 8192, 0, &freed) == 0);
	REQUIRE(buf_alloc(fx.ctx2, 8192, 0, &foreign) == 0);
	REQUIRE(stream_create(fx.ctx, 0, 16, 16, &s) == 0);
	memset(a.p, 0x11, 8192);
	memset(b.p, 0x22, 8192);
	memset(foreign.p, 0x33, 8192);
	f.handle = freed.a.handle;
	dvc_munmap(freed.map);
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_MEM_FREE, &f), 0);

	struct {
		struct davinci_task t;
		const char *what;
	} bad[] = {
		{ t_memcpy(b.a.dev_addr, a.a.dev_addr, 8193), "src past end" },
		{ t_memcpy(b.a.dev_addr + 1, a.a.dev_addr, 8192), "dst past end" },
		{ t_memcpy(b.a.dev_addr, a.a.dev_addr - 1, 16), "src before" },
		{ t_memcpy(b.a.dev_addr, freed.a.dev_addr, 16), "freed src" },
		{ t_memset(freed.a.dev_addr, 1, 16), "freed dst" },
		{ t_memcpy(b.a.dev_addr, foreign.a.dev_addr, 16), "foreign src" },
		{ t_memset(foreign.a.dev_addr, 0x44, 16), "foreign dst" },
		{ t_memcpy(b.a.dev_addr, a.a.dev_addr, UINT64_MAX), "overflow" },
		{ t_memset(0, 1, 16), "null" },
		{ t_memset(s.c.sq_mmap_offset, 1, 16), "offset not addr" },
		{ t_memcpy(b.a.dev_addr, a.a.dev_addr, 16384), "spans two" },
	};
	size_t i;

	/* a and b are adjacent: a copy spanning both must still fail. */
	CHECK_EQ(a.a.dev_addr + 8192, b.a.dev_addr);
	bad[10].t = t_memcpy(freed.a.dev_addr, a.a.dev_addr, 16384);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		t = bad[i].t;
		CHECK_EQ(submit(fx.ctx, &s, &t, 1, &seq), 0);
		CHECK_EQ(swait(fx.ctx, &s, seq, 5000, NULL), 0);
		if (tstatus(fx.ctx, &s, seq) != DAVINCI_STATUS_INVALID_ADDRESS) {
			fprintf(stdout, "  case %s\n", bad[i].what);
			CHECK_EQ(tstatus(fx.ctx, &s, seq),
				 DAVINCI_STATUS_INVALID_ADDRESS);
		}
		CHECK_EQ(stream_reset(fx.ctx, &s), 0);
	}
	CHECK(all_set(a.p, 0x11, 8192));
	CHECK(all_set(b.p, 0x22, 8192));
	CHECK(all_set(foreign.p, 0x33, 8192));
	/* The last byte of the allocation is fine. */
	t = t_memset(b.a.dev_addr + 8191, 0x55, 1);
	CHECK_EQ(submit(fx.ctx, &s, &t, 1, &seq), 0);
	CHECK_EQ(swait(fx.ctx, &s, seq, 5000, NULL), 0);
	CHECK_EQ(tstatus(fx.ctx, &s, seq), 0);
	CHECK_EQ(b.p[8191], 0x55);
	/*
	 * Freed while queued behind a NOP: the task took its buffers at the
	 * doorbell, so it still runs on the memory it was given.
	 */
	{
		struct davinci_task tt[2] = { t_nop(50000),
					      t_memset(a.a.dev_addr, 9, 16) };

		CHECK_EQ(submit(fx.ctx, &s, tt, 2, &seq), 0);
		dvc_munmap(a.map);
		a.map = NULL;
		f.handle = a.a.handle;
		CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_MEM_FREE, &f), 0);
		CHECK_EQ(swait(fx.ctx, &s, seq, 5000, NULL), 0);
		CHECK_EQ(tstatus(fx.ctx, &s, seq), DAVINCI_STATUS_OK);
	}
	stream_destroy(fx.ctx, &s);
	buf_free(fx.ctx, &b);
	buf_free(fx.ctx2, &foreign);
	fixture_exit(&fx);
}

void test_compute_smoke(void)
{
	struct fixture fx;
	struct stream s;
	struct buf a, b, c;
	struct davinci_task t = { .opcode = DAVINCI_OP_ADD,
				  .dtype = DAVINCI_DTYPE_INT32 };
	uint64_t last;
	int32_t *pa, *pb, *pc;
	int i, n = 100000;

	REQUIRE(fixture_init(&fx, 0) == 0);
	REQUIRE(fx_bufs(&fx, (uint64_t)n * 4, 0, &a, &b, NULL) == 0);
	REQUIRE(fx_buf(&fx, (uint64_t)n * 4, DAVINCI_MEM_HOST, &c) == 0);
	REQUIRE(fx_stream(&fx, 0, 0, 0, &s) == 0);
	pa = (int32_t *)a.p;
	pb = (int32_t *)b.p;
	pc = (int32_t *)c.p;
	for (i = 0; i < n; i++) {
		pa[i] = i;
		pb[i] = 3 * i + 1;
	}
	t.dst = c.a.dev_addr;
	t.src0 = a.a.dev_addr;
	t.src1 = b.a.dev_addr;
	t.count = (uint64_t)n;
	CHECK_EQ(submit(fx.ctx, &s, &t, 1, &last), 0);
	CHECK_EQ(swait(fx.ctx, &s, last, 5000, NULL), 0);
	CHECK_EQ(tstatus(fx.ctx, &s, last), 0);
	for (i = 0; i < n; i++)
		if (pc[i] != 4 * i + 1) {
			CHECK(0 && "add result");
			break;
		}
	/* Operands past their buffers: INVALID_ADDRESS, dst untouched. */
	CHECK_EQ(stream_reset(fx.ctx, &s), 0);
	memset(c.p, 0x77, (size_t)n * 4);
	t.count = (uint64_t)n + 2000;
	CHECK_EQ(submit(fx.ctx, &s, &t, 1, &last), 0);
	CHECK_EQ(swait(fx.ctx, &s, last, 5000, NULL), 0);
	CHECK_EQ(tstatus(fx.ctx, &s, last), DAVINCI_STATUS_INVALID_ADDRESS);
	CHECK(all_set(c.p, 0x77, (size_t)n * 4));
	/* Sizes that overflow. */
	CHECK_EQ(stream_reset(fx.ctx, &s), 0);
	t.count = UINT64_MAX / 2;
	if (!submit(fx.ctx, &s, &t, 1, &last)) {
		CHECK_EQ(swait(fx.ctx, &s, last, 5000, NULL), 0);
		CHECK(tstatus(fx.ctx, &s, last) == DAVINCI_STATUS_INVALID_TASK ||
		      tstatus(fx.ctx, &s, last) ==
		      DAVINCI_STATUS_INVALID_ADDRESS);
	}
	CHECK(all_set(c.p, 0x77, (size_t)n * 4));
	fixture_exit(&fx);
}

/*
 * Every compute opcode, every operand it uses: an address that is not a
 * multiple of the operand's element size (dst of CAST: dst_dtype's) fails
 * the task with MISALIGNED at the head of its stream, writing nothing; the
 * aligned neighbour (one element further) runs.
 */
struct align_case {
	const char *what;
	uint16_t opcode;
	uint8_t dtype;
	uint8_t dst_dtype;
	uint32_t flags;
	uint64_t count;
	uint32_t m, n, k, imm;
	int src1;	/* uses src1 */
};

static uint64_t dt_size(uint8_t dt)
{
	return dt == DAVINCI_DTYPE_FLOAT16 || dt == DAVINCI_DTYPE_BFLOAT16 ?
	       2 : 4;
}

void test_misaligned_operands(void)
{
	enum { F32 = DAVINCI_DTYPE_FLOAT32, F16 = DAVINCI_DTYPE_FLOAT16,
	       BF16 = DAVINCI_DTYPE_BFLOAT16, I32 = DAVINCI_DTYPE_INT32 };
	static const struct align_case cases[] = {
		{ "add f16", DAVINCI_OP_ADD, F16, 0, 0, 64, 0, 0, 0, 0, 1 },
		{ "sub f32", DAVINCI_OP_SUB, F32, 0, 0, 64, 0, 0, 0, 0, 1 },
		{ "mul bf16", DAVINCI_OP_MUL, BF16, 0, 0, 64, 0, 0, 0, 0, 1 },
		{ "div i32", DAVINCI_OP_DIV, I32, 0, 0, 64, 0, 0, 0, 0, 1 },
		{ "max f16", DAVINCI_OP_MAX, F16, 0, 0, 64, 0, 0, 0, 0, 1 },
		{ "min i32", DAVINCI_OP_MIN, I32, 0, 0, 64, 0, 0, 0, 0, 1 },
		{ "relu i32", DAVINCI_OP_RELU, I32, 0, 0, 64, 0, 0, 0, 0, 0 },
		{ "exp bf16", DAVINCI_OP_EXP, BF16, 0, 0, 64, 0, 0, 0, 0, 0 },
		{ "relu_grad f16", DAVINCI_OP_RELU_GRAD, F16, 0, 0, 64, 0, 0, 0,
		  0, 1 },
		{ "axpy f32", DAVINCI_OP_AXPY, F32, 0, 0, 64, 0, 0, 0,
		  0x3f800000, 1 },
		{ "matmul f16", DAVINCI_OP_MATMUL, F16, 0, DAVINCI_TASK_F_TRANS_B,
		  0, 8, 8, 8, 0, 1 },
		{ "matmul f32", DAVINCI_OP_MATMUL, F32, 0, 0, 0, 8, 8, 8, 0, 1 },
		{ "softmax f32", DAVINCI_OP_SOFTMAX, F32, 0, 0, 0, 4, 16, 0, 0,
		  0 },
		{ "softmax bf16", DAVINCI_OP_SOFTMAX, BF16, 0, 0, 0, 4, 16, 0, 0,
		  0 },
		{ "reduce_sum f16", DAVINCI_OP_REDUCE_SUM, F16, 0, 0, 0, 4, 16,
		  0, 0, 0 },
		{ "reduce_sum f32", DAVINCI_OP_REDUCE_SUM, F32, 0, 0, 0, 4, 16,
		  0, 0, 0 },
		{ "cast f16->f32", DAVINCI_OP_CAST, F16, F32, 0, 64, 0, 0, 0, 0,
		  0 },
		{ "cast f32->f16", DAVINCI_OP_CAST, F32, F16, 0, 64, 0, 0, 0, 0,
		  0 },
		{ "cast i32->bf16", DAVINCI_OP_CAST, I32, BF16, 0, 64, 0, 0, 0,
		  0, 0 },
		{ "cast bf16->i32", DAVINCI_OP_CAST, BF16, I32, 0, 64, 0, 0, 0,
		  0, 0 },
	};
	static const char *const opnd[3] = { "dst", "src0", "src1" };
	struct fixture fx;
	struct stream s;
	struct buf bd, b0, b1;
	size_t c, nbad = 0;
	const size_t sz = 65536;
	uint64_t seq;
	int i;

	REQUIRE(fixture_init(&fx, 0) == 0);
	REQUIRE(fx_bufs(&fx, sz, 0, &bd, &b0, NULL) == 0);
	REQUIRE(fx_buf(&fx, sz, DAVINCI_MEM_HOST, &b1) == 0);
	REQUIRE(fx_stream(&fx, 0, 16, 16, &s) == 0);
	/* finite, non-zero in every dtype: 0x3c3c... */
	memset(b0.p, 0x3c, sz);
	memset(b1.p, 0x3c, sz);
	for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		const struct align_case *k = &cases[c];

		for (i = 0; i < (k->src1 ? 3 : 2); i++) {
			uint64_t es = dt_size(i == 0 && k->opcode ==
					      DAVINCI_OP_CAST ?
					      k->dst_dtype : k->dtype);
			uint64_t off;

			/* every misaligned offset, then the aligned one */
			for (off = 1; off <= es; off++) {
				struct davinci_task t = {
					.opcode = k->opcode,
					.dtype = k->dtype,
					.dst_dtype = k->dst_dtype,
					.flags = k->flags,
					.count = k->count,
					.m = k->m, .n = k->n, .k = k->k,
					.imm = k->imm,
					.dst = bd.a.dev_addr + 64,
					.src0 = b0.a.dev_addr + 64,
					.src1 = k->src1 ? b1.a.dev_addr + 64 : 0,
				};
				__u64 *addr[3] = { &t.dst, &t.src0, &t.src1 };
				uint32_t want = off == es ? DAVINCI_STATUS_OK :
					DAVINCI_STATUS_MISALIGNED;
				uint32_t got;

				*addr[i] += off;
				memset(bd.p, 0xee, sz);
				CHECK_EQ(submit(fx.ctx, &s, &t, 1, &seq), 0);
				CHECK_EQ(swait(fx.ctx, &s, seq, 5000, NULL), 0);
				got = tstatus(fx.ctx, &s, seq);
				if (got != want) {
					fprintf(stdout, "  case %s, %s + %llu\n",
						k->what, opnd[i],
						(unsigned long long)off);
					CHECK_EQ(got, want);
				}
				if (want == DAVINCI_STATUS_OK) {
					CHECK(!all_set(bd.p, 0xee, sz));
				} else {
					nbad++;
					if (!all_set(bd.p, 0xee, sz)) {
						fprintf(stdout, "  case %s, %s + "
							"%llu wrote dst\n",
							k->what, opnd[i],
							(unsigned long long)off);
						CHECK(0 && "dst untouched");
					}
					CHECK_EQ(stream_reset(fx.ctx, &s), 0);
				}
				CHECK(all_set(b0.p, 0x3c, sz));
				CHECK(all_set(b1.p, 0x3c, sz));
			}
		}
	}
	/* one misaligned offset per 2-byte operand, three per 4-byte one */
	CHECK_EQ(nbad, 100);
	/*
	 * A misaligned task queued behind good ones fails at the head of its
	 * stream only; the ones before it complete.
	 */
	{
		struct davinci_task tt[3] = {
			t_memset(bd.a.dev_addr, 1, 16),
			{ .opcode = DAVINCI_OP_REDUCE_SUM,
			  .dtype = DAVINCI_DTYPE_FLOAT16,
			  .dst = bd.a.dev_addr + 1024,
			  .src0 = b0.a.dev_addr + 1, .m = 4, .n = 16 },
			t_memset(bd.a.dev_addr + 16, 2, 16),
		};

		memset(bd.p, 0xee, sz);
		CHECK_EQ(submit(fx.ctx, &s, tt, 3, &seq), 0);
		CHECK_EQ(swait(fx.ctx, &s, seq, 5000, NULL), 0);
		CHECK_EQ(tstatus(fx.ctx, &s, seq - 2), DAVINCI_STATUS_OK);
		CHECK_EQ(tstatus(fx.ctx, &s, seq - 1), DAVINCI_STATUS_MISALIGNED);
		CHECK_EQ(tstatus(fx.ctx, &s, seq), DAVINCI_STATUS_ABORTED);
		CHECK(all_set(bd.p, 1, 16));
		CHECK(all_set(bd.p + 16, 0xee, sz - 16));
		CHECK_EQ(stream_reset(fx.ctx, &s), 0);
	}
	fixture_exit(&fx);
}

static int bad_task(struct dv_context *ctx, struct stream *s,
		    struct davinci_task t)
{
	struct davinci_doorbell d = { .stream_id = s->c.stream_id };
	uint32_t head = s->sq->head;
	int ret;

	/* A good task first: a batch with one bad task takes in none. */
	*sq_slot(s, s->tail) = t_nop(0);
	*sq_slot(s, s->tail + 1) = t;
	d.sq_tail = s->tail + 2;
	ret = dvc_ioctl(ctx, DAVINCI_IOCTL_DOORBELL, &d);
	if (ret == 0) {
		s->tail += 2;
		return 0;
	}
	if (s->sq->head != head)
		return 1;
	return ret;
}

void test_malformed(void)
{
	struct fixture fx;
	struct stream s;
	struct davinci_task t;
	struct davinci_stream_create sc;
	struct davinci_stream_query sq;
	struct davinci_mem_alloc a;
	struct davinci_doorbell d;
	struct davinci_stream_id sid;
	struct buf m;
	unsigned int i;

	REQUIRE(fixture_init(&fx, 0) == 0);
	REQUIRE(buf_alloc(fx.ctx, 4096, 0, &m) == 0);
	REQUIRE(stream_create(fx.ctx, 0, 16, 16, &s) == 0);

	/* Descriptors: every bad one is -EINVAL and nothing is taken. */
	t = t_nop(1);
	t.pad0 = 1;
	CHECK_EQ(bad_task(fx.ctx, &s, t), -EINVAL);
	for (i = 0; i < sizeof(t.reserved) / sizeof(t.reserved[0]); i++) {
		t = t_nop(1);
		t.reserved[i] = 1;
		CHECK_EQ(bad_task(fx.ctx, &s, t), -EINVAL);
	}
	/* a parameter block for an op that takes none */
	t = t_nop(1);
	t.params = m.a.dev_addr;
	CHECK_EQ(bad_task(fx.ctx, &s, t), -EINVAL);
	t = t_nop(1);
	t.params_size = 8;
	CHECK_EQ(bad_task(fx.ctx, &s, t), -EINVAL);
	t = t_nop(1);
	t.params_version = 1;
	CHECK_EQ(bad_task(fx.ctx, &s, t), -EINVAL);
	t = t_nop(1);
	t.flags = 1U << 7;
	CHECK_EQ(bad_task(fx.ctx, &s, t), -EINVAL);
	t.flags = DAVINCI_TASK_F_TRANS_A;
	CHECK_EQ(bad_task(fx.ctx, &s, t), -EINVAL);
	t = t_nop(1);
	t.opcode = DAVINCI_OP_COUNT;
	CHECK_EQ(bad_task(fx.ctx, &s, t), -EINVAL);
	t.opcode = 0xffff;
	CHECK_EQ(bad_task(fx.ctx, &s, t), -EINVAL);
	for (i = 0; i < DAVINCI_OP_COUNT; i++) {
		if (dv_opcodes[i].flags)
			continue;
		t.opcode = i;	/* a number no op has (unassigned) */
		CHECK_EQ(bad_task(fx.ctx, &s, t), -EINVAL);
	}
	t = t_nop(1);
	t.dtype = DAVINCI_DTYPE_COUNT;
	CHECK_EQ(bad_task(fx.ctx, &s, t), -EINVAL);
	t = t_nop(1);
	t.dtype = DAVINCI_DTYPE_INT32;	/* NOP has no dtype */
	CHECK_EQ(bad_task(fx.ctx, &s, t), -EINVAL);
	t = t_nop(1);
	t.dst = m.a.dev_addr;		/* unused field */
	CHECK_EQ(bad_task(fx.ctx, &s, t), -EINVAL);
	t = t_nop(UINT64_MAX);		/* huge */
	CHECK_EQ(bad_task(fx.ctx, &s, t), -EINVAL);
	t = t_memset(m.a.dev_addr, 0, 16);
	t.imm = 256;
	CHECK_EQ(bad_task(fx.ctx, &s, t), -EINVAL);
	t = t_memcpy(m.a.dev_addr, m.a.dev_addr, 16);
	t.src1 = 8;
	CHECK_EQ(bad_task(fx.ctx, &s, t), -EINVAL);
	t = t_event(DAVINCI_OP_EVENT_RECORD, 0);
	CHECK_EQ(bad_task(fx.ctx, &s, t), -EINVAL);
	t = t_event(DAVINCI_OP_EVENT_WAIT, 1);
	t.count = 1;
	CHECK_EQ(bad_task(fx.ctx, &s, t), -EINVAL);
	memset(&t, 0, sizeof(t));
	t.opcode = DAVINCI_OP_ADD;
	t.dtype = DAVINCI_DTYPE_FLOAT32;
	t.count = 4;
	t.dst = t.src0 = t.src1 = m.a.dev_addr;
	t.dst_dtype = DAVINCI_DTYPE_INT32;	/* only for CAST */
	CHECK_EQ(bad_task(fx.ctx, &s, t), -EINVAL);
	t.dst_dtype = 0;
	t.event_id = 3;
	CHECK_EQ(bad_task(fx.ctx, &s, t), -EINVAL);
	t.event_id = 0;
	t.dtype = 9;
	CHECK_EQ(bad_task(fx.ctx, &s, t), -EINVAL);
	memset(&sq, 0, sizeof(sq));
	sq.stream_id = s.c.stream_id;
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_STREAM_QUERY, &sq), 0);
	CHECK_EQ(sq.submitted_seq, 0);
	CHECK_EQ(s.sq->head, 0);

	/* Ring tails beyond the ring or behind the head. */
	memset(&d, 0, sizeof(d));
	d.stream_id = s.c.stream_id;
	d.sq_tail = 17;
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_DOORBELL, &d), -EINVAL);
	d.sq_tail = 0xffffffffu;
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_DOORBELL, &d), -EINVAL);
	d.sq_tail = 16;		/* exactly full: fine */
	for (i = 0; i < 16; i++)
		*sq_slot(&s, i) = t_nop(0);
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_DOORBELL, &d), 0);
	CHECK_EQ(d.first_seq, 1);
	CHECK_EQ(d.last_seq, 16);
	s.tail = 16;
	d.sq_tail = 15;		/* behind the head */
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_DOORBELL, &d), -EINVAL);
	d.stream_id = 77;
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_DOORBELL, &d), -ENOENT);

	/* Stream create. */
	memset(&sc, 0, sizeof(sc));
	sc.sq_entries = 3;
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_STREAM_CREATE, &sc), -EINVAL);
	sc.sq_entries = 8192;
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_STREAM_CREATE, &sc), -EINVAL);
	sc.sq_entries = 0;
	sc.cq_entries = 0x80000001u;
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_STREAM_CREATE, &sc), -EINVAL);
	sc.cq_entries = 0;
	sc.priority = 8;
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_STREAM_CREATE, &sc), -EINVAL);
	sc.priority = 0;
	sc.flags = DAVINCI_STREAM_FLAGS_ALL + 1;
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_STREAM_CREATE, &sc), -EINVAL);
	sc.flags = 0;
	sc.pad = 1;
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_STREAM_CREATE, &sc), -EINVAL);

	/* Memory. */
	memset(&a, 0, sizeof(a));
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_MEM_ALLOC, &a), -EINVAL);
	a.size = 4096;
	a.flags = 3;
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_MEM_ALLOC, &a), -EINVAL);
	a.flags = 1U << 9;
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_MEM_ALLOC, &a), -EINVAL);
	a.flags = 0;
	a.pad = 1;
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_MEM_ALLOC, &a), -EINVAL);
	{
		struct davinci_mem_info mi = { .flags = 1 };

		CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_MEM_INFO, &mi), -EINVAL);
		mi.flags = 0;
		mi.pad = 1;
		CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_MEM_INFO, &mi), -EINVAL);
	}
	{
		struct davinci_mem_query q = { .handle = 12345 };

		CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_MEM_QUERY, &q), -ENOENT);
		q.handle = m.a.handle;
		q.pad = 1;
		CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_MEM_QUERY, &q), -EINVAL);
	}

	/* Stale and padded ids. */
	sid.stream_id = s.c.stream_id;
	sid.pad = 1;
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_STREAM_RESET, &sid), -EINVAL);
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_STREAM_DESTROY, &sid), -EINVAL);
	{
		struct davinci_stream_wait w = { .stream_id = s.c.stream_id,
						 .pad = 1 };

		CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_STREAM_WAIT, &w),
			 -EINVAL);
	}
	sid.pad = 0;
	stream_destroy(fx.ctx, &s);
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_STREAM_DESTROY, &sid), -ENOENT);
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_STREAM_RESET, &sid), -ENOENT);
	sid.stream_id = 0;
	CHECK_EQ(dvc_ioctl(fx.ctx, DAVINCI_IOCTL_STREAM_DESTROY, &sid), -ENOENT);

	/* Unknown ioctls; wrong direction. */
	CHECK_EQ(dvc_ioctl(fx.ctx, _IOWR(DAVINCI_IOCTL_BASE, 0x7f, int), &a),
		 -ENOTTY);
	CHECK_EQ(dvc_ioctl(fx.ctx, _IOWR('x', 0x10, struct davinci_mem_alloc),
			   &a), -ENOTTY);
	{
		struct davinci_version v;

		memset(&v, 0, sizeof(v));
		CHECK_EQ(dvc_ioctl(fx.ctx, _IOW(DAVINCI_IOCTL_BASE, 0x00,
					     struct davinci_version), &v),
			 -ENOTTY);
	}
	CHECK_EQ(dv_ioctl_size(_IO(DAVINCI_IOCTL_BASE, 0x99)), -ENOTTY);
	{
		/* A sign-extended command (ctypes, fusepy) still works. */
		struct davinci_version v;
		long cmd = (int)DAVINCI_IOCTL_GET_VERSION;

		CHECK(cmd < 0);
		CHECK_EQ(dvc_ioctl(fx.ctx, (unsigned long)cmd, &v), 0);
		CHECK_EQ(v.abi_major, DAVINCI_ABI_MAJOR);
	}
	CHECK_EQ(dv_ioctl_size(DAVINCI_IOCTL_MEM_ALLOC),
		 (int)sizeof(struct davinci_mem_alloc));

	/* Short (older) and longer (newer) structs. */
	{
		uint64_t shortarg[1] = { 4096 };
		struct {
			struct davinci_mem_alloc a;
			uint64_t extra[4];
		} longarg;
		struct davinci_mem_info mi;

		CHECK_EQ(dvc_ioctl(fx.ctx, _IOC(_IOC_READ | _IOC_WRITE,
					     DAVINCI_IOCTL_BASE, 0x10, 8),
				   shortarg), 0);
		CHECK_EQ(shortarg[0], 4096);
		CHECK_EQ(mem_info(fx.ctx, 0, &mi), 0);
		CHECK_EQ(mi.ctx_allocations, 2);
		memset(&longarg, 0, sizeof(longarg));
		longarg.a.size = 4096;
		longarg.extra[0] = 0xdead;
		CHECK_EQ(dvc_ioctl(fx.ctx, _IOC(_IOC_READ | _IOC_WRITE,
					     DAVINCI_IOCTL_BASE, 0x10,
					     sizeof(longarg)), &longarg), 0);
		CHECK(longarg.a.handle != 0);
		CHECK_EQ(longarg.extra[0], 0xdead);
		CHECK_EQ(dvc_ioctl(fx.ctx, _IOC(_IOC_READ, DAVINCI_IOCTL_BASE, 0,
					     4), shortarg), 0);
		CHECK_EQ(shortarg[0] & 0xffffffffu, DAVINCI_ABI_MAJOR);
	}
	dvc_munmap(m.map);
	fixture_exit(&fx);
}
