// SPDX-License-Identifier: GPL-2.0
/*
 * idtable.c - per-context id tables (a portable stand-in for IDR).
 *
 * Ids grow monotonically from 1 and are never reused, so a stale id never
 * names a newer object. Entries are kept sorted by id in an array; lookup
 * is a binary search.
 */
#include "dv_internal.h"

/**
 * dv_id_init() - initialise an empty table
 * @t: the table
 * @max_id: largest id it may hand out
 */
void dv_id_init(struct dv_idtable *t, u64 max_id)
{
	t->e = NULL;
	t->n = 0;
	t->cap = 0;
	t->next_id = 1;
	t->max_id = max_id;
}

/**
 * dv_id_reserve() - make room for one more entry
 * @t: the table
 *
 * After success dv_id_alloc() cannot fail.
 *
 * Return: 0, -ENOMEM, or -ENOSPC when the ids are exhausted.
 */
int dv_id_reserve(struct dv_idtable *t)
{
	struct dv_identry *e;
	u32 cap;

	if (t->next_id > t->max_id)
		return -ENOSPC;
	if (t->n < t->cap)
		return 0;
	if (t->cap > (1U << 24))
		return -ENOSPC;
	cap = t->cap ? t->cap * 2 : 16;
	e = dv_zalloc_account((size_t)cap * sizeof(*e));
	if (!e)
		return -ENOMEM;
	if (t->n)
		memcpy(e, t->e, (size_t)t->n * sizeof(*e));
	dv_free(t->e);
	t->e = e;
	t->cap = cap;
	return 0;
}

/**
 * dv_id_alloc() - give @ptr the next id
 * @t: the table; dv_id_reserve() succeeded on it since its last
 *	dv_id_alloc()
 * @ptr: the object
 *
 * Cannot fail.
 *
 * Return: the id.
 */
u64 dv_id_alloc(struct dv_idtable *t, void *ptr)
{
	t->e[t->n].id = t->next_id;
	t->e[t->n].ptr = ptr;
	t->n++;
	return t->next_id++;
}

static long dv_id_index(const struct dv_idtable *t, u64 id)
{
	u32 lo = 0, hi = t->n;

	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;

		if (t->e[mid].id == id)
			return mid;
		if (t->e[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/**
 * dv_id_find() - look up an id
 * @t: the table
 * @id: the id
 *
 * Return: the object or NULL.
 */
void *dv_id_find(const struct dv_idtable *t, u64 id)
{
	long i = dv_id_index(t, id);

	return i < 0 ? NULL : t->e[i].ptr;
}

/**
 * dv_id_remove() - drop an id
 * @t: the table
 * @id: the id
 *
 * Return: the object it named, or NULL.
 */
void *dv_id_remove(struct dv_idtable *t, u64 id)
{
	long i = dv_id_index(t, id);
	void *ptr;

	if (i < 0)
		return NULL;
	ptr = t->e[i].ptr;
	memmove(&t->e[i], &t->e[i + 1],
		(size_t)(t->n - (u32)i - 1) * sizeof(t->e[0]));
	t->n--;
	return ptr;
}

/**
 * dv_id_destroy() - free the table's memory
 * @t: the table
 */
void dv_id_destroy(struct dv_idtable *t)
{
	dv_free(t->e);
	t->e = NULL;
	t->n = 0;
	t->cap = 0;
}
