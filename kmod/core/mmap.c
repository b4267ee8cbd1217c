// SPDX-License-Identifier: GPL-2.0
/*
 * mmap.c - mappings of buffers and rings, holding buffer references.
 */
#include "dv_internal.h"

/**
 * struct dv_mapping - one mmap() of a buffer or ring
 * @buf: the buffer, referenced
 * @addr: address of the first mapped byte
 */
struct dv_mapping {
	struct dv_buffer *buf;
	void *addr;
};

/* Look up and reference the buffer under [@offset, +@len) (dev->lock held). */
static int dv_mmap_ref_locked(struct dv_context *ctx, u64 offset, u64 len,
			      struct dv_mapping *map)
{
	u64 arena = DAVINCI_MMAP_ARENA(offset);
	u64 off = DAVINCI_MMAP_ARENA_OFFSET(offset);
	struct dv_list *pos;
	u64 end;

	os_mutex_assert_held(ctx->dev->lock);
	if (arena >= DAVINCI_ARENAS || !len || (off & (DV_PAGE_SIZE - 1)) ||
	    len > U64_MAX - (DV_PAGE_SIZE - 1))
		return -EINVAL;
	len = (len + DV_PAGE_SIZE - 1) & ~(DV_PAGE_SIZE - 1);
	if (dv_add_overflows(off, len, &end))
		return -EINVAL;
	if (dv_ctx_lost(ctx))
		return -ENODEV;
	for (pos = ctx->buffers.next; pos != &ctx->buffers; pos = pos->next) {
		struct dv_buffer *b = DV_CONTAINER_OF(pos, struct dv_buffer,
						      node);

		if (b->pool->index != arena || off < b->off ||
		    off >= b->off + b->alloc_size)
			continue;
		if (end > b->off + b->alloc_size)
			return -EINVAL;
		dv_buffer_get(b);
		map->buf = b;
		map->addr = (u8 *)dv_buffer_kaddr(b) + (off - b->off);
		dv_stat_add(DV_STAT_MAPPINGS, 1);
		return 0;
	}
	return -EINVAL;
}

/**
 * dv_mmap_get_locked() - dv_mmap_get() with dev->lock held
 * @ctx: the context
 * @offset: page aligned mmap offset inside one live buffer or ring
 * @len: bytes, > 0
 * @out: the new mapping
 *
 * Return: 0, -EINVAL, -ENODEV or -ENOMEM (checked first).
 */
static int dv_mmap_get_locked(struct dv_context *ctx, u64 offset, u64 len,
			      struct dv_mapping **out)
{
	struct dv_mapping *map = dv_zalloc_account(sizeof(*map));
	int ret;

	os_mutex_assert_held(ctx->dev->lock);
	if (!map)
		return -ENOMEM;
	ret = dv_mmap_ref_locked(ctx, offset, len, map);
	if (ret)
		dv_free(map);
	else
		*out = map;
	return ret;
}

/* Drop a mapping dv_mmap_get_locked() made (dev->lock held). */
static void dv_mmap_put_locked(struct dv_mapping *map)
{
	os_mutex_assert_held(map->buf->dev->lock);
	dv_buffer_put(map->buf);
	dv_stat_add(DV_STAT_MAPPINGS, -1);
	dv_free(map);
}

/**
 * dv_mmap_get() - map @len bytes at mmap offset @offset
 * @ctx: the context
 * @offset: page aligned mmap offset inside one live buffer or ring
 * @len: bytes, > 0; rounded up to pages, must not run past the buffer
 * @out: the mapping
 *
 * Return: 0, -EINVAL, -ENODEV or -ENOMEM.
 */
int dv_mmap_get(struct dv_context *ctx, u64 offset, u64 len,
		struct dv_mapping **out)
{
	int ret;

	os_mutex_lock(ctx->dev->lock);
	ret = dv_mmap_get_locked(ctx, offset, len, out);
	os_mutex_unlock(ctx->dev->lock);
	return ret;
}

/**
 * dv_mapping_addr() - address of a mapping's first byte
 * @map: the mapping
 *
 * Return: page aligned address in the arena.
 */
void *dv_mapping_addr(struct dv_mapping *map)
{
	return map->addr;
}

/**
 * dv_mmap_put() - drop a mapping
 * @map: the mapping
 */
void dv_mmap_put(struct dv_mapping *map)
{
	struct dv_device *dev = map->buf->dev;

	os_mutex_lock(dev->lock);
	dv_mmap_put_locked(map);
	os_mutex_unlock(dev->lock);
}

/**
 * dv_ioctl_map_hold() - DAVINCI_IOCTL_MAP_HOLD
 * @ctx: the context (dev->lock held)
 * @arg: struct davinci_map_hold
 *
 * A hold is a mapping the client made of a backing file: it references
 * the buffer as a vma would, until released or the context closes.
 *
 * Return: 0, -EINVAL, -ENODEV, -ENOMEM or -ENOSPC.
 */
int dv_ioctl_map_hold(struct dv_context *ctx, void *arg)
{
	struct davinci_map_hold *h = arg;
	struct dv_mapping *map;
	int ret;

	os_mutex_assert_held(ctx->dev->lock);
	if (ctx->map_ids.n >= DAVINCI_MAX_MAP_HOLDS)
		return -ENOSPC;
	ret = dv_id_reserve(&ctx->map_ids);
	if (ret)
		return ret;
	ret = dv_mmap_get_locked(ctx, h->mmap_offset, h->length, &map);
	if (ret)
		return ret;
	h->handle = dv_id_alloc(&ctx->map_ids, map);
	return 0;
}

/**
 * dv_ioctl_map_release() - DAVINCI_IOCTL_MAP_RELEASE
 * @ctx: the context (dev->lock held)
 * @arg: struct davinci_map_release
 *
 * Return: 0 or -ENOENT.
 */
int dv_ioctl_map_release(struct dv_context *ctx, void *arg)
{
	struct davinci_map_release *r = arg;
	struct dv_mapping *map;

	os_mutex_assert_held(ctx->dev->lock);
	map = dv_id_remove(&ctx->map_ids, r->handle);
	if (!map)
		return -ENOENT;
	dv_mmap_put_locked(map);
	return 0;
}

/**
 * dv_context_release_holds() - drop every hold of a closing context
 * @ctx: the context (dev->lock held)
 */
void dv_context_release_holds(struct dv_context *ctx)
{
	struct dv_mapping *map;

	os_mutex_assert_held(ctx->dev->lock);
	while (ctx->map_ids.n) {
		map = dv_id_remove(&ctx->map_ids, ctx->map_ids.e[0].id);
		dv_mmap_put_locked(map);
	}
	dv_id_destroy(&ctx->map_ids);
}
