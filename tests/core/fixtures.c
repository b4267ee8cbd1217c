// SPDX-License-Identifier: GPL-2.0
/*
 * fixtures.c - helpers shared by the core tests, and the standard fixture
 * (a device and one context) with its init/exit.
 */
#define _GNU_SOURCE
#include "fixtures.h"

struct dv_device *mkdev(uint32_t timeout_ms)
{
	return mkdev_idx(0, timeout_ms);
}

int stats_zero(void)
{
	struct dv_stats st;

	dvc_stats(&st);
	if (st.objects || st.devices || st.contexts || st.buffers ||
	    st.streams || st.events || st.tasks || st.mappings ||
	    st.hbm_used || st.host_used) {
		fprintf(stdout, "  stats: objects %llu devices %llu contexts %llu "
			"buffers %llu streams %llu events %llu tasks %llu "
			"mappings %llu hbm %llu host %llu\n",
			(unsigned long long)st.objects,
			(unsigned long long)st.devices,
			(unsigned long long)st.contexts,
			(unsigned long long)st.buffers,
			(unsigned long long)st.streams,
			(unsigned long long)st.events,
			(unsigned long long)st.tasks,
			(unsigned long long)st.mappings,
			(unsigned long long)st.hbm_used,
			(unsigned long long)st.host_used);
		return 0;
	}
	return 1;
}

int mem_alloc(struct dv_context *ctx, uint64_t size, uint32_t flags,
	      struct davinci_mem_alloc *a)
{
	memset(a, 0, sizeof(*a));
	a->size = size;
	a->flags = flags;
	return dvc_ioctl(ctx, DAVINCI_IOCTL_MEM_ALLOC, a);
}

int buf_alloc(struct dv_context *ctx, uint64_t size, uint32_t flags,
	      struct buf *b)
{
	int ret;

	memset(b, 0, sizeof(*b));
	ret = mem_alloc(ctx, size, flags, &b->a);
	if (ret)
		return ret;
	b->map = dvc_mmap(ctx, b->a.mmap_offset, b->a.alloc_size);
	if (!b->map)
		return -errno;
	b->p = dvc_mapping_addr(b->map);
	return 0;
}

void buf_free(struct dv_context *ctx, struct buf *b)
{
	struct davinci_mem_free f = { .handle = b->a.handle };

	if (b->map)
		dvc_munmap(b->map);
	b->map = NULL;
	dvc_ioctl(ctx, DAVINCI_IOCTL_MEM_FREE, &f);
}

int stream_create(struct dv_context *ctx, uint32_t prio, uint32_t sqe,
		  uint32_t cqe, struct stream *s)
{
	return stream_create_flags(ctx, prio, sqe, cqe, 0, s);
}

int stream_create_flags(struct dv_context *ctx, uint32_t prio, uint32_t sqe,
			uint32_t cqe, uint32_t flags, struct stream *s)
{
	int ret;

	memset(s, 0, sizeof(*s));
	s->c.flags = flags;
	s->c.priority = prio;
	s->c.sq_entries = sqe;
	s->c.cq_entries = cqe;
	ret = dvc_ioctl(ctx, DAVINCI_IOCTL_STREAM_CREATE, &s->c);
	if (ret)
		return ret;
	s->sqm = dvc_mmap(ctx, s->c.sq_mmap_offset, s->c.sq_size);
	s->cqm = dvc_mmap(ctx, s->c.cq_mmap_offset, s->c.cq_size);
	if (!s->sqm || !s->cqm)
		return -ENOMEM;
	s->sq = dvc_mapping_addr(s->sqm);
	s->cq = dvc_mapping_addr(s->cqm);
	return 0;
}

void stream_unmap(struct stream *s)
{
	if (s->sqm)
		dvc_munmap(s->sqm);
	if (s->cqm)
		dvc_munmap(s->cqm);
	s->sqm = s->cqm = NULL;
}

void stream_destroy(struct dv_context *ctx, struct stream *s)
{
	struct davinci_stream_id id = { .stream_id = s->c.stream_id };

	stream_unmap(s);
	dvc_ioctl(ctx, DAVINCI_IOCTL_STREAM_DESTROY, &id);
}

struct davinci_task *sq_slot(struct stream *s, uint32_t idx)
{
	return (struct davinci_task *)((uint8_t *)s->sq +
		DAVINCI_RING_ENTRIES_OFFSET +
		(idx & (s->c.sq_entries - 1)) * sizeof(struct davinci_task));
}

struct davinci_completion *cq_slot(struct stream *s, uint32_t idx)
{
	return (struct davinci_completion *)((uint8_t *)s->cq +
		DAVINCI_RING_ENTRIES_OFFSET +
		(idx & (s->c.cq_entries - 1)) *
		sizeof(struct davinci_completion));
}

/* Wait (at most 10 s after @t0) until the core holds no task at all. */
void wait_tasks_gone(double t0)
{
	struct dv_stats st;

	for (;;) {
		dvc_stats(&st);
		if (!st.tasks || th_now() - t0 > 10)
			return;
		usleep(1000);
	}
}

/* Publish @n tasks from a polled ring's tail on, with no system call. */
void publish(struct stream *s, const struct davinci_task *t, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		*sq_slot(s, s->tail + i) = t[i];
	s->tail += n;
	__atomic_store_n(&s->sq->tail, s->tail, __ATOMIC_RELEASE);
}

/* GRAPH_CAPTURE or GRAPH_END (@cmd) on @s, @c zeroed but for the stream. */
int graph_ioctl(struct dv_context *ctx, unsigned long cmd,
		struct stream *s, struct davinci_graph_capture *c)
{
	memset(c, 0, sizeof(*c));
	c->stream_id = s->c.stream_id;
	return dvc_ioctl(ctx, cmd, c);
}

/* Launch @graph on @s; @l gets the sequence numbers. */
int graph_launch(struct dv_context *ctx, uint32_t graph, struct stream *s,
		 struct davinci_graph_launch *l)
{
	memset(l, 0, sizeof(*l));
	l->graph_id = graph;
	l->stream_id = s->c.stream_id;
	return dvc_ioctl(ctx, DAVINCI_IOCTL_GRAPH_LAUNCH, l);
}

/* Write @n tasks and ring the doorbell; returns the doorbell's result. */
int submit(struct dv_context *ctx, struct stream *s,
	   const struct davinci_task *t, uint32_t n, uint64_t *last)
{
	struct davinci_doorbell d = { 0 };
	uint32_t i;
	int ret;

	if (last)
		*last = 0;
	for (i = 0; i < n; i++)
		*sq_slot(s, s->tail + i) = t[i];
	d.stream_id = s->c.stream_id;
	d.sq_tail = s->tail + n;
	ret = dvc_ioctl(ctx, DAVINCI_IOCTL_DOORBELL, &d);
	if (!ret) {
		s->tail += n;
		if (last)
			*last = d.last_seq;
	}
	return ret;
}

int swait(struct dv_context *ctx, struct stream *s, uint64_t seq,
	  uint32_t timeout_ms, struct davinci_stream_wait *out)
{
	struct davinci_stream_wait w = {
		.stream_id = s->c.stream_id,
		.timeout_ms = timeout_ms,
		.seq = seq,
	};
	int ret = dvc_ioctl(ctx, DAVINCI_IOCTL_STREAM_WAIT, &w);

	if (out)
		*out = w;
	return ret;
}

int tquery(struct dv_context *ctx, struct stream *s, uint64_t seq,
	   struct davinci_task_query *q)
{
	memset(q, 0, sizeof(*q));
	q->stream_id = s->c.stream_id;
	q->seq = seq;
	return dvc_ioctl(ctx, DAVINCI_IOCTL_TASK_QUERY, q);
}

/* Wait until task @seq of @s has left the queue (a worker took it). */
void wait_running(struct dv_context *ctx, struct stream *s,
		  uint64_t seq)
{
	struct davinci_task_query q;
	int i;

	for (i = 0; i < 5000; i++) {
		if (tquery(ctx, s, seq, &q) || q.state != DAVINCI_TASK_QUEUED)
			return;
		usleep(1000);
	}
}

uint32_t tstatus(struct dv_context *ctx, struct stream *s,
		 uint64_t seq)
{
	struct davinci_task_query q;

	if (tquery(ctx, s, seq, &q) || q.state != DAVINCI_TASK_DONE)
		return 0xffff;
	return q.status;
}

int stream_reset(struct dv_context *ctx, struct stream *s)
{
	struct davinci_stream_id id = { .stream_id = s->c.stream_id };

	return dvc_ioctl(ctx, DAVINCI_IOCTL_STREAM_RESET, &id);
}

struct davinci_task t_nop(uint64_t us)
{
	struct davinci_task t = { .opcode = DAVINCI_OP_NOP, .count = us };

	return t;
}

struct davinci_task t_memcpy(uint64_t dst, uint64_t src, uint64_t n)
{
	struct davinci_task t = { .opcode = DAVINCI_OP_MEMCPY, .dst = dst,
				  .src0 = src, .count = n };

	return t;
}

struct davinci_task t_memset(uint64_t dst, uint8_t v, uint64_t n)
{
	struct davinci_task t = { .opcode = DAVINCI_OP_MEMSET, .dst = dst,
				  .imm = v, .count = n };

	return t;
}

struct davinci_task t_event(uint16_t op, uint32_t ev)
{
	struct davinci_task t = { .opcode = op, .event_id = ev };

	return t;
}

int mem_info(struct dv_context *ctx, uint32_t flags,
	     struct davinci_mem_info *m)
{
	memset(m, 0, sizeof(*m));
	m->flags = flags;
	return dvc_ioctl(ctx, DAVINCI_IOCTL_MEM_INFO, m);
}

int all_set(const uint8_t *p, uint8_t v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != v)
			return 0;
	return 1;
}


struct dv_device_config fx_device_config(uint32_t index, uint32_t timeout_ms)
{
	struct dv_device_config cfg = {
		.index = index,
		.aicores = 2,
		.hbm_bytes = HBM_BYTES,
		.host_bytes = HOST_BYTES,
		.task_timeout_ms = timeout_ms,
		.backend = "lib",
	};

	return cfg;
}

struct dv_device *mkdev_idx(uint32_t index, uint32_t timeout_ms)
{
	struct dv_device_config cfg = fx_device_config(index, timeout_ms);

	return dvc_device_create(&cfg);
}

/* ---- fixture ---------------------------------------------------------- */

int fixture_init(struct fixture *f, uint32_t timeout_ms)
{
	struct dv_device_config cfg = fx_device_config(0, timeout_ms);

	return fixture_init_cfg(f, &cfg);
}

/**
 * fixture_init_cfg() - fixture_init() on a device made from @cfg
 * @f: the fixture
 * @cfg: the device's configuration (dv_device_create())
 *
 * Return: 0, or -errno with nothing left to release.
 */
int fixture_init_cfg(struct fixture *f, const struct dv_device_config *cfg)
{
	memset(f, 0, sizeof(*f));
	if (dv_device_create(cfg, &f->dev))
		return -ENODEV;
	f->ctx = dvc_context_open(f->dev, 1);
	if (!f->ctx) {
		dvc_device_destroy(f->dev);
		f->dev = NULL;
		return -ENOMEM;
	}
	return 0;
}

int fixture_init2(struct fixture *f, uint32_t timeout_ms)
{
	int ret = fixture_init(f, timeout_ms);

	if (ret)
		return ret;
	f->ctx2 = dvc_context_open(f->dev, 2);
	if (!f->ctx2) {
		fixture_exit(f);
		return -ENOMEM;
	}
	return 0;
}

/**
 * fixture_init_stream() - fixture_init() and a stream the fixture owns
 * @f: the fixture
 * @timeout_ms: the device's watchdog timeout, as for fixture_init()
 * @s: the stream, on @f->ctx, with priority 0 and the default ring sizes
 *
 * Return: 0, or -errno with nothing left to release.
 */
int fixture_init_stream(struct fixture *f, uint32_t timeout_ms,
			struct stream *s)
{
	int ret = fixture_init(f, timeout_ms);

	if (ret)
		return ret;
	ret = fx_stream(f, 0, 0, 0, s);
	if (ret)
		fixture_exit(f);
	return ret;
}

/**
 * fx_has_feature() - whether the fixture's device lists a feature
 * @f: the fixture
 * @feature: a DAVINCI_FEAT_* bit
 *
 * Return: 1 when GET_VERSION on @f->ctx succeeds and its features have
 * @feature, else 0.
 */
int fx_has_feature(struct fixture *f, uint64_t feature)
{
	struct davinci_version v = { 0 };

	return !dvc_ioctl(f->ctx, DAVINCI_IOCTL_GET_VERSION, &v) &&
	       (v.features & feature);
}

/* A stream on f->ctx that fixture_exit() destroys: 0 or -errno. */
int fx_stream(struct fixture *f, uint32_t prio, uint32_t sqe, uint32_t cqe,
	      struct stream *s)
{
	int ret;

	if (f->nstreams == FX_MAX_OWNED)
		return -ENOSPC;
	ret = stream_create(f->ctx, prio, sqe, cqe, s);
	if (!ret)
		f->streams[f->nstreams++] = s;
	return ret;
}

/* A buffer on f->ctx that fixture_exit() frees: 0 or -errno. */
int fx_buf(struct fixture *f, uint64_t size, uint32_t flags, struct buf *b)
{
	int ret;

	if (f->nbufs == FX_MAX_OWNED)
		return -ENOSPC;
	ret = buf_alloc(f->ctx, size, flags, b);
	if (!ret)
		f->bufs[f->nbufs++] = b;
	return ret;
}

/**
 * fx_bufs() - buffers of one size and kind that the fixture frees
 * @f: the fixture
 * @size: the size of each, in bytes
 * @flags: DAVINCI_MEM_* flags of each
 * @...: the struct buf pointers to fill, then NULL
 *
 * fx_buf() for each of them in turn.
 *
 * Return: 0, or the -errno of the first that failed (the ones before it
 * stay the fixture's).
 */
int fx_bufs(struct fixture *f, uint64_t size, uint32_t flags, ...)
{
	struct buf *b;
	va_list ap;
	int ret = 0;

	va_start(ap, flags);
	while (!ret && (b = va_arg(ap, struct buf *)))
		ret = fx_buf(f, size, flags, b);
	va_end(ap);
	return ret;
}

void fixture_exit(struct fixture *f)
{
	unsigned int i;

	for (i = 0; i < f->nstreams; i++)
		stream_destroy(f->ctx, f->streams[i]);
	for (i = 0; i < f->nbufs; i++)
		buf_free(f->ctx, f->bufs[i]);
	f->nstreams = f->nbufs = 0;
	if (f->ctx2)
		dvc_context_close(f->ctx2);
	f->ctx2 = NULL;
	if (f->ctx)
		dvc_context_close(f->ctx);
	dvc_device_destroy(f->dev);
	f->ctx = NULL;
	f->dev = NULL;
	CHECK(stats_zero());
}
