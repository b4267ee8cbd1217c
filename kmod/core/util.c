// SPDX-License-Identifier: GPL-2.0
/*
 * util.c - small portable helpers (no libc beyond mem* in the core).
 */
#include "dv_internal.h"

/**
 * dv_strscpy() - copy a string into a sized buffer, always terminated
 * @dst: destination
 * @src: NUL-terminated source
 * @size: bytes at @dst, > 0
 *
 * The rest of @dst is zero-filled, so no stale bytes reach userspace.
 *
 * Return: characters copied.
 */
size_t dv_strscpy(char *dst, const char *src, size_t size)
{
	size_t i = 0;

	if (!size)
		return 0;
	if (src)
		for (; i + 1 < size && src[i]; i++)
			dst[i] = src[i];
	memset(dst + i, 0, size - i);
	return i;
}

/**
 * dv_fmt_hex32() - format @v as 8 upper-case hex digits plus NUL
 * @dst: at least 9 bytes
 * @v: value
 */
void dv_fmt_hex32(char *dst, u32 v)
{
	static const char digits[] = "0123456789ABCDEF";
	int i;

	for (i = 7; i >= 0; i--) {
		dst[i] = digits[v & 0xf];
		v >>= 4;
	}
	dst[8] = '\0';
}

/**
 * dv_fmt_u32() - format @v in decimal
 * @dst: destination
 * @size: bytes at @dst (11 always suffice)
 * @v: value
 */
void dv_fmt_u32(char *dst, size_t size, u32 v)
{
	char tmp[11];
	size_t n = 0, i;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (i = 0; i < n && i + 1 < size; i++)
		dst[i] = tmp[n - 1 - i];
	if (size)
		dst[i < size ? i : size - 1] = '\0';
}

/**
 * dv_add_overflows() - @a + @b with an overflow check
 * @a: first addend
 * @b: second addend
 * @res: sum when it fits
 *
 * Return: true when the sum does not fit in u64.
 */
bool dv_add_overflows(u64 a, u64 b, u64 *res)
{
	if (a > U64_MAX - b)
		return true;
	*res = a + b;
	return false;
}

/**
 * dv_ranges_overlap() - whether two byte ranges share a byte
 * @a: start of the first range
 * @alen: its length; 0 overlaps nothing
 * @b: start of the second range
 * @blen: its length; 0 overlaps nothing
 *
 * Overflow safe: a range may end at the top of the address space.
 *
 * Return: true when [@a, @a + @alen) and [@b, @b + @blen) overlap.
 */
bool dv_ranges_overlap(u64 a, u64 alen, u64 b, u64 blen)
{
	if (!alen || !blen)
		return false;
	return a <= b ? b - a < alen : a - b < blen;
}

/**
 * dv_named() - the object an ioctl names by id, with a must-be-zero pad
 * @obj: what looking the id up found, or NULL
 * @pad: the argument's pad field
 * @ret: 0, -EINVAL for a non-zero pad, -ENOENT when nothing was found
 *
 * Return: @obj, or NULL when *@ret is an error.
 */
void *dv_named(void *obj, u32 pad, int *ret)
{
	*ret = pad ? -EINVAL : obj ? 0 : -ENOENT;
	return *ret ? NULL : obj;
}
