// SPDX-License-Identifier: GPL-2.0
/*
 * hbm.c - range allocator for device memory pools (HBM and pinned host).
 *
 * First fit over a free list sorted by address; neighbours coalesce on
 * free. The caller hands in a spare range node with every call, so
 * neither call allocates and a failed allocation changes nothing.
 */
#include "dv_internal.h"

/**
 * dv_pool_init() - create a pool over a fresh arena
 * @p: the pool
 * @index: arena index (mmap offset bits)
 * @size: bytes, page aligned
 * @va_base: device virtual address of the first byte
 * @dir: backing directory for the POSIX backend, or NULL
 * @name: backing file name
 *
 * Return: 0 or -ENOMEM.
 */
int dv_pool_init(struct dv_pool *p, u32 index, u64 size, u64 va_base,
		 const char *dir, const char *name)
{
	struct dv_range *r;

	memset(p, 0, sizeof(*p));
	dv_list_init(&p->free_list);
	r = dv_zalloc(sizeof(*r));
	if (!r)
		return -ENOMEM;
	p->arena = os_arena_create(size, dir, name);
	if (!p->arena) {
		dv_free(r);
		return -ENOMEM;
	}
	p->base = os_arena_base(p->arena);
	p->va_base = va_base;
	p->index = index;
	p->total = size;
	dv_pool_free(p, 0, size, r);	/* all of it, as one free range */
	return 0;
}

/**
 * dv_pool_fini() - free the pool's arena and free list
 * @p: the pool (may be partly initialised)
 */
void dv_pool_fini(struct dv_pool *p)
{
	struct dv_list *pos, *tmp;

	if (!p->free_list.next)
		return;
	dv_list_for_each_safe(pos, tmp, &p->free_list) {
		dv_list_del(pos);
		dv_free(DV_CONTAINER_OF(pos, struct dv_range, node));
	}
	if (p->arena)
		os_arena_destroy(p->arena);
	p->arena = NULL;
}

/**
 * dv_pool_alloc() - reserve @size bytes aligned to @align
 * @p: the pool
 * @size: bytes, a multiple of the page size
 * @align: power of two
 * @spare: a node the pool keeps when it splits a range, or frees, on
 *	success; left to the caller on failure
 * @off: out: offset of the range
 *
 * Return: 0, or -ENOMEM with the pool unchanged.
 */
int dv_pool_alloc(struct dv_pool *p, u64 size, u64 align,
		  struct dv_range *spare, u64 *off)
{
	struct dv_list *pos, *tmp;

	if (!size || size > p->free)
		return -ENOMEM;
	dv_list_for_each_safe(pos, tmp, &p->free_list) {
		struct dv_range *r = DV_CONTAINER_OF(pos, struct dv_range,
						     node);
		u64 a = (r->start + align - 1) & ~(align - 1);
		u64 end = r->start + r->size;
		u64 pre, post;

		if (a < r->start || a >= end || end - a < size)
			continue;
		pre = a - r->start;
		post = end - a - size;
		if (!pre && !post) {
			dv_list_del(&r->node);
			dv_free(r);
			dv_free(spare);
		} else if (!pre) {
			r->start += size;
			r->size -= size;
			dv_free(spare);
		} else if (!post) {
			r->size = pre;
			dv_free(spare);
		} else {
			r->size = pre;
			spare->start = a + size;
			spare->size = post;
			dv_list_insert(&spare->node, &r->node, r->node.next);
		}
		p->free -= size;
		*off = a;
		return 0;
	}
	return -ENOMEM;
}

/**
 * dv_pool_free() - return a range, coalescing with its neighbours
 * @p: the pool
 * @off: offset from dv_pool_alloc()
 * @size: its size
 * @spare: a node the pool keeps or frees
 */
void dv_pool_free(struct dv_pool *p, u64 off, u64 size,
		  struct dv_range *spare)
{
	struct dv_list *pos = p->free_list.next;
	struct dv_range *prev = NULL, *next = NULL;

	/* Find the first free range after @off. */
	while (pos != &p->free_list) {
		struct dv_range *r = DV_CONTAINER_OF(pos, struct dv_range,
						     node);
		if (r->start > off) {
			next = r;
			break;
		}
		pos = pos->next;
	}
	if (pos->prev != &p->free_list)
		prev = DV_CONTAINER_OF(pos->prev, struct dv_range, node);

	p->free += size;
	if (prev && prev->start + prev->size == off) {
		prev->size += size;
		if (next && prev->start + prev->size == next->start) {
			prev->size += next->size;
			dv_list_del(&next->node);
			dv_free(next);
		}
		dv_free(spare);
		return;
	}
	if (next && off + size == next->start) {
		next->start = off;
		next->size += size;
		dv_free(spare);
		return;
	}
	spare->start = off;
	spare->size = size;
	dv_list_insert(&spare->node, pos->prev, pos);
}

/**
 * dv_pool_largest_free() - size of the largest free range
 * @p: the pool
 *
 * Return: bytes.
 */
u64 dv_pool_largest_free(const struct dv_pool *p)
{
	const struct dv_list *pos;
	u64 best = 0;

	for (pos = p->free_list.next; pos != &p->free_list; pos = pos->next) {
		const struct dv_range *r =
			DV_CONTAINER_OF(pos, struct dv_range, node);

		if (r->size > best)
			best = r->size;
	}
	return best;
}
