// SPDX-License-Identifier: GPL-2.0
/*
 * buffer.c - device memory buffers: allocation, handles, references,
 * lookup by device address with ownership, and the memory ioctls.
 */
#include "dv_internal.h"

static enum dv_stat dv_pool_stat(const struct dv_pool *p)
{
	return p->index == DV_ARENA_HBM ? DV_STAT_HBM_USED : DV_STAT_HOST_USED;
}

/**
 * dv_buffer_dev_addr() - device virtual address of a buffer
 * @buf: the buffer
 *
 * Return: the address of its first byte.
 */
u64 dv_buffer_dev_addr(const struct dv_buffer *buf)
{
	return buf->pool->va_base + buf->off;
}

/**
 * dv_buffer_mmap_offset() - mmap() offset of a buffer
 * @buf: the buffer
 *
 * Return: (arena << DAVINCI_MMAP_ARENA_SHIFT) | offset in the arena.
 */
u64 dv_buffer_mmap_offset(const struct dv_buffer *buf)
{
	return ((u64)buf->pool->index << DAVINCI_MMAP_ARENA_SHIFT) | buf->off;
}

/**
 * dv_buffer_kaddr() - address of the buffer's memory in this address space
 * @buf: the buffer
 *
 * Return: pointer to its first byte.
 */
void *dv_buffer_kaddr(const struct dv_buffer *buf)
{
	return buf->pool->base + buf->off;
}

static int dv_try_alloc(struct dv_pool *pool, u64 size, u64 gran,
			struct dv_range *spare, u64 *off, u64 *rounded)
{
	if (size > U64_MAX - (gran - 1))
		return -ENOMEM;
	*rounded = (size + gran - 1) & ~(gran - 1);
	return dv_pool_alloc(pool, *rounded, gran, spare, off);
}

/*
 * New memory is zeroed before anyone can reach it. A large range is zeroed
 * without dev->lock: nothing refers to it yet (no handle, not in the
 * context's list), and its range is taken out of the pool, so the device
 * goes on meanwhile. The caller's context stays open across the window: an
 * ioctl of its own is running.
 */
#define DV_ZERO_UNLOCKED	(256U << 10)

static void dv_buffer_zero(struct dv_device *dev, u8 *p, u64 len)
{
	os_mutex_assert_held(dev->lock);
	if (len < DV_ZERO_UNLOCKED) {
		memset(p, 0, len);
		return;
	}
	os_mutex_unlock(dev->lock);
	memset(p, 0, len);
	os_mutex_lock(dev->lock);
}

/**
 * dv_buffer_create() - allocate a buffer for @ctx (dev->lock held)
 * @ctx: owner
 * @size: bytes requested, > 0
 * @flags: DAVINCI_MEM_* (validated by the caller)
 * @is_ring: a stream ring: no handle, not in the context's usage
 * @out: the buffer, holding one reference for the context
 *
 * Return: 0, -ENOMEM (nothing changed) or -ENOSPC.
 */
int dv_buffer_create(struct dv_context *ctx, u64 size, u32 flags,
		     bool is_ring, struct dv_buffer **out)
{
	struct dv_device *dev = ctx->dev;
	u32 policy = flags & DAVINCI_MEM_POLICY_MASK;
	struct dv_pool *pool;
	struct dv_buffer *buf;
	struct dv_range *spare;
	u64 off = 0, rounded = 0;
	int ret;

	os_mutex_assert_held(dev->lock);
	pool = &dev->pools[(flags & DAVINCI_MEM_HOST) ? DV_ARENA_HOST :
			   DV_ARENA_HBM];
	buf = dv_zalloc_account(sizeof(*buf));
	spare = dv_zalloc_account(sizeof(*spare));
	if (buf)
		buf->spare = dv_zalloc_account(sizeof(*buf->spare));
	if (!buf || !spare || !buf->spare) {
		ret = -ENOMEM;
		goto fail;
	}
	ret = -ENOMEM;
	if (policy == DAVINCI_MEM_HUGE_ONLY ||
	    (policy == DAVINCI_MEM_HUGE_FIRST && size >= DV_HUGE_SIZE))
		ret = dv_try_alloc(pool, size, DV_HUGE_SIZE, spare, &off,
				   &rounded);
	if (ret && policy != DAVINCI_MEM_HUGE_ONLY)
		ret = dv_try_alloc(pool, size, DV_PAGE_SIZE, spare, &off,
				   &rounded);
	if (ret)
		goto fail;
	/* Last, so that a failure before it leaves the table as it was. */
	if (!is_ring) {
		ret = dv_id_reserve(&ctx->buf_ids);
		if (ret) {
			dv_pool_free(pool, off, rounded, buf->spare);
			buf->spare = NULL;
			spare = NULL;	/* the pool kept or freed it */
			goto fail;
		}
	}
	spare = NULL;

	buf->dev = dev;
	buf->ctx = ctx;
	buf->pool = pool;
	buf->off = off;
	buf->size = size;
	buf->alloc_size = rounded;
	buf->flags = flags;
	buf->refs = 1;
	buf->is_ring = is_ring;
	dv_buffer_zero(dev, pool->base + off, rounded);
	if (!is_ring) {
		buf->handle = dv_id_alloc(&ctx->buf_ids, buf);
		ctx->used[pool->index] += rounded;
		ctx->allocs[pool->index]++;
	}
	dv_list_add_tail(&buf->node, &ctx->buffers);
	dv_stat_add(DV_STAT_BUFFERS, 1);
	dv_stat_add(dv_pool_stat(pool), (s64)rounded);
	dv_trace_mem(buf, DAVINCI_TRACE_MEM_ALLOC);
	*out = buf;
	return 0;
fail:
	dv_free(spare);
	if (buf)
		dv_free(buf->spare);
	dv_free(buf);
	return ret;
}

/**
 * dv_buffer_get() - take a reference (dev->lock held)
 * @buf: the buffer
 */
void dv_buffer_get(struct dv_buffer *buf)
{
	os_mutex_assert_held(buf->dev->lock);
	buf->refs++;
}

/**
 * dv_buffer_put() - drop a reference; the last returns the memory
 * @buf: the buffer (dev->lock held)
 */
void dv_buffer_put(struct dv_buffer *buf)
{
	struct dv_pool *pool = buf->pool;

	os_mutex_assert_held(buf->dev->lock);
	if (--buf->refs)
		return;
	dv_pool_free(pool, buf->off, buf->alloc_size, buf->spare);
	dv_trace_mem(buf, DAVINCI_TRACE_MEM_FREE);
	dv_stat_add(dv_pool_stat(pool), -(s64)buf->alloc_size);
	dv_stat_add(DV_STAT_BUFFERS, -1);
	dv_free(buf);
}

/**
 * dv_buffer_release() - the context lets go of a live buffer
 * @buf: the buffer (dev->lock held), or NULL
 *
 * Tasks and mappings still holding references keep the memory.
 */
void dv_buffer_release(struct dv_buffer *buf)
{
	struct dv_context *ctx;

	if (!buf)
		return;
	os_mutex_assert_held(buf->dev->lock);
	ctx = buf->ctx;
	dv_list_del(&buf->node);
	if (!buf->is_ring) {
		dv_id_remove(&ctx->buf_ids, buf->handle);
		ctx->used[buf->pool->index] -= buf->alloc_size;
		ctx->allocs[buf->pool->index]--;
	}
	buf->ctx = NULL;
	dv_buffer_put(buf);
}

/**
 * dv_buffer_lookup() - the live allocation of @ctx holding a byte range
 * @ctx: the context (dev->lock held)
 * @addr: device virtual address of the first byte
 * @len: bytes, > 0
 *
 * Return: the buffer, or NULL when the range is not inside exactly one
 * live allocation of @ctx.
 */
struct dv_buffer *dv_buffer_lookup(struct dv_context *ctx, u64 addr,
				   u64 len)
{
	struct dv_list *pos;
	u64 end;

	os_mutex_assert_held(ctx->dev->lock);
	if (!len || dv_add_overflows(addr, len, &end))
		return NULL;
	for (pos = ctx->buffers.next; pos != &ctx->buffers; pos = pos->next) {
		struct dv_buffer *b = DV_CONTAINER_OF(pos, struct dv_buffer,
						      node);
		u64 start = dv_buffer_dev_addr(b);

		if (b->is_ring)
			continue;
		if (addr >= start && end <= start + b->alloc_size)
			return b;
	}
	return NULL;
}

/**
 * dv_ioctl_mem_alloc() - DAVINCI_IOCTL_MEM_ALLOC
 * @ctx: the context (dev->lock held)
 * @arg: struct davinci_mem_alloc
 *
 * Return: 0 or a negative errno.
 */
int dv_ioctl_mem_alloc(struct dv_context *ctx, void *arg)
{
	struct davinci_mem_alloc *a = arg;
	struct dv_buffer *buf;
	int ret;

	os_mutex_assert_held(ctx->dev->lock);
	if (!a->size || a->pad || (a->flags & ~DAVINCI_MEM_FLAGS_ALL) ||
	    (a->flags & DAVINCI_MEM_POLICY_MASK) == DAVINCI_MEM_POLICY_MASK)
		return -EINVAL;
	ret = dv_buffer_create(ctx, a->size, a->flags, false, &buf);
	if (ret)
		return ret;
	a->handle = buf->handle;
	a->dev_addr = dv_buffer_dev_addr(buf);
	a->mmap_offset = dv_buffer_mmap_offset(buf);
	a->alloc_size = buf->alloc_size;
	return 0;
}

/**
 * dv_ioctl_mem_free() - DAVINCI_IOCTL_MEM_FREE
 * @ctx: the context (dev->lock held)
 * @arg: struct davinci_mem_free
 *
 * Return: 0 or -ENOENT.
 */
int dv_ioctl_mem_free(struct dv_context *ctx, void *arg)
{
	struct davinci_mem_free *f = arg;
	struct dv_buffer *buf = dv_id_find(&ctx->buf_ids, f->handle);

	os_mutex_assert_held(ctx->dev->lock);
	if (!buf)
		return -ENOENT;
	/* Tasks published before the free hold the memory, as at a doorbell. */
	dv_ctx_take_in_polled(ctx);
	dv_buffer_release(buf);
	return 0;
}

/**
 * dv_ioctl_mem_query() - DAVINCI_IOCTL_MEM_QUERY
 * @ctx: the context (dev->lock held)
 * @arg: struct davinci_mem_query
 *
 * Return: 0, -EINVAL or -ENOENT.
 */
int dv_ioctl_mem_query(struct dv_context *ctx, void *arg)
{
	struct davinci_mem_query *q = arg;
	struct dv_buffer *buf;

	os_mutex_assert_held(ctx->dev->lock);
	if (q->pad)
		return -EINVAL;
	if (q->handle)
		buf = dv_id_find(&ctx->buf_ids, q->handle);
	else
		buf = dv_buffer_lookup(ctx, q->dev_addr, 1);
	if (!buf)
		return -ENOENT;
	q->handle = buf->handle;
	q->dev_addr = dv_buffer_dev_addr(buf);
	q->size = buf->size;
	q->alloc_size = buf->alloc_size;
	q->mmap_offset = dv_buffer_mmap_offset(buf);
	q->flags = buf->flags;
	return 0;
}

/**
 * dv_ioctl_mem_info() - DAVINCI_IOCTL_MEM_INFO
 * @ctx: the context (dev->lock held)
 * @arg: struct davinci_mem_info
 *
 * Return: 0 or -EINVAL.
 */
int dv_ioctl_mem_info(struct dv_context *ctx, void *arg)
{
	struct davinci_mem_info *m = arg;
	struct dv_pool *pool;
	u32 i;

	os_mutex_assert_held(ctx->dev->lock);
	if (m->pad || (m->flags & ~DAVINCI_MEM_HOST))
		return -EINVAL;
	i = (m->flags & DAVINCI_MEM_HOST) ? DV_ARENA_HOST : DV_ARENA_HBM;
	pool = &ctx->dev->pools[i];
	m->total = pool->total;
	m->free = pool->free;
	m->largest_free = dv_pool_largest_free(pool);
	m->ctx_used = ctx->used[i];
	m->ctx_allocations = ctx->allocs[i];
	return 0;
}
