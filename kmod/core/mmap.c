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
	struct dv_device *dev = ctx->dev;
	u64 arena = DAVINCI_MMAP_ARENA(offset);
	u64 off = DAVINCI_MMAP_ARENA_OFFSET(offset);
	struct dv_mapping *map;
	struct dv_list *pos;
	u64 end;
	int ret = -EINVAL;

	if (arena >= DAVINCI_ARENAS || !len || (off & (DV_PAGE_SIZE - 1)) ||
	    len > U64_MAX - (DV_PAGE_SIZE - 1))
		return -EINVAL;
	len = (len + DV_PAGE_SIZE - 1) & ~(DV_PAGE_SIZE - 1);
	if (dv_add_overflows(off, len, &end))
		return -EINVAL;
	map = dv_zalloc(sizeof(*map));
	if (!map)
		return -ENOMEM;
	os_mutex_lock(dev->lock);
	if (dv_ctx_lost(ctx)) {
		ret = -ENODEV;
		goto out;
	}
	for (pos = ctx->buffers.next; pos != &ctx->buffers; pos = pos->next) {
		struct dv_buffer *b = DV_CONTAINER_OF(pos, struct dv_buffer,
						      node);

		if (b->pool->index != arena || off < b->off ||
		    off >= b->off + b->alloc_size)
			continue;
		if (end > b->off + b->alloc_size)
			break;
		dv_buffer_get(b);
		map->buf = b;
		map->addr = (u8 *)dv_buffer_kaddr(b) + (off - b->off);
		dv_stat_add(DV_STAT_MAPPINGS, 1);
		*out = map;
		ret = 0;
		break;
	}
out:
	os_mutex_unlock(dev->lock);
	if (ret)
		dv_free(map);
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
	dv_buffer_put(map->buf);
	dv_stat_add(DV_STAT_MAPPINGS, -1);
	os_mutex_unlock(dev->lock);
	dv_free(map);
}
