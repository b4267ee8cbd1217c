// SPDX-License-Identifier: GPL-2.0
/*
 * test_pngd.c - the PNG decoder (kmod/core/pngd.h) on hostile input: each
 * sample (pngd_samples.h) cut at every byte, its zlib stream cut at every
 * byte inside a well-formed file, every byte set to values that break
 * chunks, lengths, Huffman tables and filters (with each chunk's CRC
 * left broken, and recomputed so that the bytes reach the inflater), and
 * hand-made bad headers. The buffers are heap blocks of exactly the size
 * dv_pngd_parse() asks for, so that the ASan build (make test-core runs
 * both) sees any access outside them; every refusal must be one of the
 * documented errnos, parse and decode must agree, and a side above the
 * limit is refused before any buffer is looked at.
 */
#define _GNU_SOURCE
#include "fixtures.h"
#include "pngd.h"
#include "pngd_samples.h"

static const struct {
	const char *name;
	const unsigned char *data;
	size_t size;
	u32 colour_type, bit_depth, interlace;
} pd_samples[] = {
	{ "rgb_dynamic", png_rgb_dynamic, sizeof(png_rgb_dynamic), 2, 8, 0 },
	{ "palette4_adam7_trns", png_palette4_adam7_trns,
	  sizeof(png_palette4_adam7_trns), 3, 4, 1 },
	{ "grey16_stored", png_grey16_stored, sizeof(png_grey16_stored),
	  0, 16, 0 },
	{ "rgba_fixed", png_rgba_fixed, sizeof(png_rgba_fixed), 6, 8, 0 },
	{ "grey1_adam7_split", png_grey1_adam7_split,
	  sizeof(png_grey1_adam7_split), 0, 1, 1 },
};

#define PD_NSAMPLES (sizeof(pd_samples) / sizeof(pd_samples[0]))

static bool pd_documented(int ret)
{
	return ret == 0 || ret == -EINVAL || ret == -EOPNOTSUPP ||
	       ret == -E2BIG;
}

/*
 * Decode @size bytes (a heap copy of exactly that size) in every output
 * format into exactly sized heap buffers; the result, which parse and
 * decode must agree on (and every format).
 */
static int pd_try(const unsigned char *src, size_t size)
{
	unsigned char *data = malloc(size ? size : 1);
	int first = 1, ret = 0;
	u32 fmt;

	memcpy(data, src, size);
	for (fmt = 0; fmt < DV_PNGD_FORMATS; fmt++) {
		struct dv_pngd_info info, got;
		void *out, *scratch;
		int pret;

		pret = dv_pngd_parse(data, size, 0, fmt, &info);
		if (pret) {
			/* refused before any buffer is looked at */
			ret = dv_pngd_decode(data, size, 0, fmt, NULL, 0, NULL,
					     0, &got);
			CHECK_EQ(ret, pret);
		} else {
			CHECK(info.width && info.height);
			CHECK(info.width <= DV_PNGD_MAX_DIM &&
			      info.height <= DV_PNGD_MAX_DIM);
			CHECK_EQ(info.out_size, (u64)info.width_stride *
				 info.height_stride);
			out = malloc(info.out_size);
			scratch = malloc(info.scratch_size);
			ret = dv_pngd_decode(data, size, 0, fmt, out,
					     info.out_size, scratch,
					     info.scratch_size, &got);
			CHECK(ret != -ENOSPC);
			CHECK(!memcmp(&got, &info, sizeof(info)));
			free(out);
			free(scratch);
		}
		CHECK(pd_documented(ret));
		if (first != 1)
			CHECK_EQ(ret, first);
		first = ret;
	}
	free(data);
	return ret;
}

static u32 pd_be32(const unsigned char *p)
{
	return (u32)p[0] << 24 | (u32)p[1] << 16 | (u32)p[2] << 8 | p[3];
}

static void pd_put32(unsigned char *p, u32 v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

static u32 pd_crc32(const unsigned char *p, size_t n)
{
	u32 c = 0xffffffffu;
	int k;

	while (n--) {
		c ^= *p++;
		for (k = 0; k < 8; k++)
			c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
	}
	return ~c;
}

/* Recompute the CRC of each chunk of @d that lies within its @n bytes. */
static void pd_fix_crcs(unsigned char *d, size_t n)
{
	size_t pos = 8;

	while (pos + 12 <= n) {
		u32 len = pd_be32(d + pos);

		if (len > n - pos - 12)
			return;
		pd_put32(d + pos + 8 + len, pd_crc32(d + pos + 4, len + 4));
		pos += 12 + (size_t)len;
	}
}

/* The offset of the first chunk of @type in @d, or -1. */
static long pd_find(const unsigned char *d, size_t n, const char *type)
{
	size_t pos = 8;

	while (pos + 12 <= n) {
		if (!memcmp(d + pos + 4, type, 4))
			return (long)pos;
		pos += 12 + (size_t)pd_be32(d + pos);
	}
	return -1;
}

void test_pngd_samples(void)
{
	struct dv_pngd_info info;
	size_t i;

	for (i = 0; i < PD_NSAMPLES; i++) {
		REQUIRE(dv_pngd_parse(pd_samples[i].data, pd_samples[i].size,
				      0, DV_PNGD_AUTO, &info) == 0);
		CHECK_EQ(info.width, 13);
		CHECK_EQ(info.height, 9);
		CHECK_EQ(info.colour_type, pd_samples[i].colour_type);
		CHECK_EQ(info.bit_depth, pd_samples[i].bit_depth);
		CHECK_EQ(info.interlace, pd_samples[i].interlace);
		CHECK_EQ(info.width_stride, 128 * info.channels);
		CHECK_EQ(info.height_stride, 16);
		CHECK_EQ(pd_try(pd_samples[i].data, pd_samples[i].size), 0);
		/* the caller's limit, from IHDR */
		CHECK_EQ(dv_pngd_parse(pd_samples[i].data, pd_samples[i].size,
				       12, DV_PNGD_RGB, &info), -E2BIG);
		CHECK_EQ(dv_pngd_parse(pd_samples[i].data, pd_samples[i].size,
				       13, DV_PNGD_RGB, &info), 0);
		CHECK_EQ(dv_pngd_parse(pd_samples[i].data, pd_samples[i].size,
				       0, DV_PNGD_FORMATS, &info), -EINVAL);
	}
}

/*
 * Every prefix of every sample is refused (IEND is required); and every
 * prefix of a one-IDAT sample's zlib stream, in an otherwise well-formed
 * file (IDAT's CRC right, IEND after it), is refused: the stream is
 * truncated, or its Adler-32 is missing.
 */
void test_pngd_truncated(void)
{
	static const unsigned char iend[12] = {
		0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xae, 0x42, 0x60, 0x82 };
	size_t i, n, k;
	int ret;

	for (i = 0; i < PD_NSAMPLES; i++) {
		const unsigned char *data = pd_samples[i].data;
		long idat = pd_find(data, pd_samples[i].size, "IDAT");
		unsigned char *buf;
		u32 len;

		for (n = 0; n < pd_samples[i].size; n++) {
			ret = pd_try(data, n);
			if (ret != -EINVAL) {
				printf("  %s cut at %zu: %d\n",
				       pd_samples[i].name, n, ret);
				CHECK_EQ(ret, -EINVAL);
			}
		}
		REQUIRE(idat > 0);
		len = pd_be32(data + idat);
		if (pd_find(data + idat + 12 + len - 8,
			    pd_samples[i].size - idat - 12 - len + 8,
			    "IDAT") >= 0)
			continue;	/* split: the prefixes above did it */
		buf = malloc(idat + 12 + len + sizeof(iend));
		for (k = 0; k < len; k++) {
			memcpy(buf, data, idat + 8 + k);
			pd_put32(buf + idat, (u32)k);
			pd_put32(buf + idat + 8 + k,
				 pd_crc32(buf + idat + 4, k + 4));
			memcpy(buf + idat + 12 + k, iend, sizeof(iend));
			ret = pd_try(buf, idat + 12 + k + sizeof(iend));
			if (ret != -EINVAL) {
				printf("  %s zlib stream cut at %zu: %d\n",
				       pd_samples[i].name, k, ret);
				CHECK_EQ(ret, -EINVAL);
			}
		}
		free(buf);
	}
}

/*
 * Each byte set to values that break lengths, chunk types, zlib headers,
 * block types, Huffman tables, distances and filter types: with the CRCs
 * as they were (every change caught by one: -EINVAL) and recomputed, so
 * that the inflater and the row filters see the damage. Any result but a
 * documented one, or an access outside the buffers (ASan), fails.
 */
void test_pngd_corrupt_bytes(void)
{
	static const unsigned char values[] = { 0x00, 0xff, 0x01, 0x80, 0x05,
						0x7f, 0x1f, 0xc0 };
	unsigned char *copy;
	size_t i, pos, v, refused = 0, decoded = 0;
	int ret;

	for (i = 0; i < PD_NSAMPLES; i++) {
		size_t n = pd_samples[i].size;

		copy = malloc(n);
		for (pos = 0; pos < n; pos++)
			for (v = 0; v < sizeof(values) + 1; v++) {
				memcpy(copy, pd_samples[i].data, n);
				copy[pos] = v < sizeof(values) ? values[v] :
					    copy[pos] ^ 0x10;
				if (copy[pos] == pd_samples[i].data[pos])
					continue;
				ret = pd_try(copy, n);
				if (ret != -EINVAL) {
					printf("  %s byte %zu = %02x: %d\n",
					       pd_samples[i].name, pos,
					       copy[pos], ret);
					CHECK_EQ(ret, -EINVAL);
				}
				pd_fix_crcs(copy, n);
				ret = pd_try(copy, n);
				CHECK(pd_documented(ret));
				if (ret)
					refused++;
				else
					decoded++;
			}
		free(copy);
	}
	/* both happen: a changed sample byte in a stored block decodes */
	CHECK(refused > 0);
	CHECK(decoded > 0);
}

/* Build a PNG from an IHDR's fields and one IDAT of @z (@zn bytes). */
static size_t pd_make(unsigned char *d, u32 w, u32 h, u8 depth, u8 ctype,
		      u8 interlace, const unsigned char *z, u32 zn)
{
	static const unsigned char sig[8] = { 0x89, 'P', 'N', 'G', '\r', '\n',
					      0x1a, '\n' };
	size_t pos = 0;

	memcpy(d, sig, 8);
	pos = 8;
	pd_put32(d + pos, 13);
	memcpy(d + pos + 4, "IHDR", 4);
	pd_put32(d + pos + 8, w);
	pd_put32(d + pos + 12, h);
	d[pos + 16] = depth;
	d[pos + 17] = ctype;
	d[pos + 18] = 0;
	d[pos + 19] = 0;
	d[pos + 20] = interlace;
	pd_put32(d + pos + 21, pd_crc32(d + pos + 4, 17));
	pos += 25;
	pd_put32(d + pos, zn);
	memcpy(d + pos + 4, "IDAT", 4);
	memcpy(d + pos + 8, z, zn);
	pd_put32(d + pos + 8 + zn, pd_crc32(d + pos + 4, zn + 4));
	pos += 12 + zn;
	pd_put32(d + pos, 0);
	memcpy(d + pos + 4, "IEND", 4);
	pd_put32(d + pos + 8, pd_crc32(d + pos + 4, 4));
	return pos + 12;
}

/* Hand-made faults, each with the errno it must get. */
void test_pngd_bad_headers(void)
{
	/* zlib of the rows of a 2 x 2 grey 8-bit picture: 00 01 02, 00 03 04 */
	static const unsigned char z2x2[] = {
		0x78, 0x01, 0x01, 0x06, 0x00, 0xf9, 0xff, 0x00, 0x01, 0x02,
		0x00, 0x03, 0x04, 0x00, 0x1d, 0x00, 0x0b };
	unsigned char d[256], z[64];
	struct dv_pngd_info info;
	size_t n;

	n = pd_make(d, 2, 2, 8, 0, 0, z2x2, sizeof(z2x2));
	REQUIRE(pd_try(d, n) == 0);
	/* huge sides: refused from IHDR, before any buffer */
	n = pd_make(d, 0x7fffffff, 0x7fffffff, 8, 6, 0, z2x2, sizeof(z2x2));
	CHECK_EQ(pd_try(d, n), -E2BIG);
	CHECK_EQ(dv_pngd_decode(d, n, 0, DV_PNGD_AUTO, NULL, 0, NULL, 0,
				&info), -E2BIG);
	n = pd_make(d, 4097, 1, 8, 0, 0, z2x2, sizeof(z2x2));
	CHECK_EQ(pd_try(d, n), -E2BIG);
	/* above 2^31 - 1, zero: invalid */
	n = pd_make(d, 0x80000000u, 2, 8, 0, 0, z2x2, sizeof(z2x2));
	CHECK_EQ(pd_try(d, n), -EINVAL);
	n = pd_make(d, 2, 0, 8, 0, 0, z2x2, sizeof(z2x2));
	CHECK_EQ(pd_try(d, n), -EINVAL);
	/* bit depths a colour type does not take; colour types 1, 5, 7 */
	n = pd_make(d, 2, 2, 4, 2, 0, z2x2, sizeof(z2x2));
	CHECK_EQ(pd_try(d, n), -EINVAL);
	n = pd_make(d, 2, 2, 16, 3, 0, z2x2, sizeof(z2x2));
	CHECK_EQ(pd_try(d, n), -EINVAL);
	n = pd_make(d, 2, 2, 3, 0, 0, z2x2, sizeof(z2x2));
	CHECK_EQ(pd_try(d, n), -EINVAL);
	n = pd_make(d, 2, 2, 8, 5, 0, z2x2, sizeof(z2x2));
	CHECK_EQ(pd_try(d, n), -EINVAL);
	/* interlace method 2 */
	n = pd_make(d, 2, 2, 8, 0, 2, z2x2, sizeof(z2x2));
	CHECK_EQ(pd_try(d, n), -EINVAL);
	/* a palette picture without PLTE */
	n = pd_make(d, 2, 2, 8, 3, 0, z2x2, sizeof(z2x2));
	CHECK_EQ(pd_try(d, n), -EINVAL);
	/* more rows than the picture: the 2 x 2 stream for a 2 x 1 one */
	n = pd_make(d, 2, 1, 8, 0, 0, z2x2, sizeof(z2x2));
	CHECK_EQ(pd_try(d, n), -EINVAL);
	/* fewer: for a 2 x 3 one; a 2 x 2 Adam7 one needs 3 passes' rows */
	n = pd_make(d, 2, 3, 8, 0, 0, z2x2, sizeof(z2x2));
	CHECK_EQ(pd_try(d, n), -EINVAL);
	n = pd_make(d, 2, 2, 8, 0, 1, z2x2, sizeof(z2x2));
	CHECK_EQ(pd_try(d, n), -EINVAL);
	/* filter type 5 */
	memcpy(z, z2x2, sizeof(z2x2));
	z[7] = 5;
	z[14] = 0x3b;	/* the Adler-32 of 05 01 02 00 03 04 */
	z[16] = 0x10;
	n = pd_make(d, 2, 2, 8, 0, 0, z, sizeof(z2x2));
	CHECK_EQ(pd_try(d, n), -EINVAL);
	/* a bad Adler-32 */
	memcpy(z, z2x2, sizeof(z2x2));
	z[16] ^= 1;
	n = pd_make(d, 2, 2, 8, 0, 0, z, sizeof(z2x2));
	CHECK_EQ(pd_try(d, n), -EINVAL);
	/* stored block's NLEN not LEN's complement */
	memcpy(z, z2x2, sizeof(z2x2));
	z[5] = 0xf8;
	n = pd_make(d, 2, 2, 8, 0, 0, z, sizeof(z2x2));
	CHECK_EQ(pd_try(d, n), -EINVAL);
	/* block type 3; a preset dictionary; window above 32 KiB; not deflate */
	memcpy(z, z2x2, sizeof(z2x2));
	z[2] = 0x07;
	n = pd_make(d, 2, 2, 8, 0, 0, z, sizeof(z2x2));
	CHECK_EQ(pd_try(d, n), -EINVAL);
	memcpy(z, z2x2, sizeof(z2x2));
	z[1] = 0x20 | (31 - ((0x78 << 8 | 0x20) % 31));
	n = pd_make(d, 2, 2, 8, 0, 0, z, sizeof(z2x2));
	CHECK_EQ(pd_try(d, n), -EINVAL);
	memcpy(z, z2x2, sizeof(z2x2));
	z[0] = 0x88;
	z[1] = 31 - ((0x88 << 8) % 31);
	n = pd_make(d, 2, 2, 8, 0, 0, z, sizeof(z2x2));
	CHECK_EQ(pd_try(d, n), -EINVAL);
	memcpy(z, z2x2, sizeof(z2x2));
	z[0] = 0x77;
	z[1] = 31 - ((0x77 << 8) % 31);
	n = pd_make(d, 2, 2, 8, 0, 0, z, sizeof(z2x2));
	CHECK_EQ(pd_try(d, n), -EINVAL);
	/*
	 * a fixed block: literal 0, then length 5 at distance 3, two bytes
	 * before the stream's start (zlib: "distance too far back"); its six
	 * bytes and Adler-32 are those of a 2 x 2 picture of zeros
	 */
	{
		static const unsigned char zf[] = {
			0x78, 0x01, 0x63, 0x00, 0x23, 0x00, 0x00, 0x06, 0x00,
			0x01 };

		n = pd_make(d, 2, 2, 8, 0, 0, zf, sizeof(zf));
		CHECK_EQ(pd_try(d, n), -EINVAL);
	}
	/* an unknown critical chunk after IHDR; an ancillary one is fine */
	n = pd_make(d, 2, 2, 8, 0, 0, z2x2, sizeof(z2x2));
	memmove(d + 33 + 13, d + 33, n - 33);
	pd_put32(d + 33, 1);
	memcpy(d + 37, "ZZZZ", 4);
	d[41] = 'x';
	pd_put32(d + 42, pd_crc32(d + 37, 5));
	CHECK_EQ(pd_try(d, n + 13), -EOPNOTSUPP);
	d[37] = 'z';
	pd_put32(d + 42, pd_crc32(d + 37, 5));
	CHECK_EQ(pd_try(d, n + 13), 0);
	/* a chunk type that is not letters */
	d[38] = '1';
	pd_put32(d + 42, pd_crc32(d + 37, 5));
	CHECK_EQ(pd_try(d, n + 13), -EINVAL);
	/* a chunk length above 2^31 - 1 */
	n = pd_make(d, 2, 2, 8, 0, 0, z2x2, sizeof(z2x2));
	pd_put32(d + 33, 0x80000000u);
	CHECK_EQ(pd_try(d, n), -EINVAL);
	/* a second IHDR; IEND first */
	n = pd_make(d, 2, 2, 8, 0, 0, z2x2, sizeof(z2x2));
	memmove(d + 33 + 25, d + 33, n - 33);
	memcpy(d + 33, d + 8, 25);
	CHECK_EQ(pd_try(d, n + 25), -EINVAL);
	n = pd_make(d, 2, 2, 8, 0, 0, z2x2, sizeof(z2x2));
	CHECK_EQ(pd_try(d, 8), -EINVAL);
	/* IDATs split by another chunk */
	{
		static const unsigned char idat0[12] = {
			0, 0, 0, 0, 'I', 'D', 'A', 'T', 0x35, 0xaf, 0x06, 0x1e };
		static const unsigned char text[16] = {
			0, 0, 0, 4, 't', 'E', 'X', 't', 'a', 0, 'b', 'c',
			0, 0, 0, 0 };
		unsigned char *f = d + 128;

		n = pd_make(d, 2, 2, 8, 0, 0, z2x2, sizeof(z2x2));
		memcpy(f, d, 33);
		memcpy(f + 33, idat0, 12);
		memcpy(f + 45, text, 16);
		pd_put32(f + 57, pd_crc32(f + 49, 8));
		memcpy(f + 61, d + 33, n - 33);
		CHECK_EQ(pd_try(f, n + 28), -EINVAL);
		/* and without tEXt: an empty IDAT first is fine */
		memmove(f + 45, f + 61, n - 33);
		CHECK_EQ(pd_try(f, n + 12), 0);
	}
}
