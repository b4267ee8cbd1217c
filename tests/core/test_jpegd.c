// SPDX-License-Identifier: GPL-2.0
/*
 * test_jpegd.c - the JPEG decoder (kmod/core/jpegd.h) on hostile input:
 * each sample (jpegd_samples.h) cut at every byte, every byte set to
 * values that break markers, lengths and entropy-coded data, and
 * hand-made bad headers. The buffers are heap blocks of exactly the size
 * dv_jpegd_parse() asks for, so that the ASan build (make test-core runs
 * both) sees any access outside them; every refusal must be one of the
 * documented errnos, and a refused file must be refused the same way
 * whatever buffers are given.
 */
#define _GNU_SOURCE
#include "fixtures.h"
#include "jpegd.h"
#include "jpegd_samples.h"

static const struct {
	const char *name;
	const unsigned char *data;
	size_t size;
	u32 subsampling;
} jd_samples[] = {
	{ "baseline_420_rst", jpeg_baseline_420_rst,
	  sizeof(jpeg_baseline_420_rst), DV_JPEGD_420 },
	{ "progressive_444", jpeg_progressive_444,
	  sizeof(jpeg_progressive_444), DV_JPEGD_444 },
	{ "progressive_422_rst", jpeg_progressive_422_rst,
	  sizeof(jpeg_progressive_422_rst), DV_JPEGD_422 },
	{ "grey", jpeg_grey, sizeof(jpeg_grey), DV_JPEGD_GREY },
};

#define JD_NSAMPLES (sizeof(jd_samples) / sizeof(jd_samples[0]))

static bool jd_documented(int ret)
{
	return ret == 0 || ret == -EINVAL || ret == -EOPNOTSUPP ||
	       ret == -E2BIG;
}

/*
 * Decode @size bytes (a heap copy of exactly that size) into exactly
 * sized heap buffers; the result, which parse and decode must agree on.
 */
static int jd_try(const unsigned char *src, size_t size)
{
	struct dv_jpegd_info info, got;
	unsigned char *data = malloc(size ? size : 1);
	void *out = NULL, *scratch = NULL;
	int pret, ret;

	memcpy(data, src, size);
	pret = dv_jpegd_parse(data, size, 0, &info);
	if (pret) {
		/* refused before any buffer is looked at */
		unsigned char one[1];

		ret = dv_jpegd_decode(data, size, 0, one, 0, one, 0, &got);
		CHECK_EQ(ret, pret);
		free(data);
		return pret;
	}
	CHECK(info.width && info.height);
	CHECK(info.width <= DV_JPEGD_MAX_DIM && info.height <= DV_JPEGD_MAX_DIM);
	CHECK_EQ(info.out_size,
		 (u64)info.width_stride * info.height_stride * 3 / 2);
	out = malloc(info.out_size);
	scratch = malloc(info.scratch_size);
	ret = dv_jpegd_decode(data, size, 0, out, info.out_size, scratch,
			      info.scratch_size, &got);
	CHECK(ret != -ENOSPC);
	free(out);
	free(scratch);
	free(data);
	return ret;
}

void test_jpegd_samples(void)
{
	struct dv_jpegd_info info;
	size_t i;

	for (i = 0; i < JD_NSAMPLES; i++) {
		REQUIRE(dv_jpegd_parse(jd_samples[i].data, jd_samples[i].size,
				       0, &info) == 0);
		CHECK_EQ(info.width, 21);
		CHECK_EQ(info.height, 13);
		CHECK_EQ(info.width_stride, 128);
		CHECK_EQ(info.height_stride, 16);
		CHECK_EQ(info.subsampling, jd_samples[i].subsampling);
		CHECK_EQ(jd_try(jd_samples[i].data, jd_samples[i].size), 0);
		/* the caller's limit */
		CHECK_EQ(dv_jpegd_parse(jd_samples[i].data, jd_samples[i].size,
					20, &info), -E2BIG);
		CHECK_EQ(dv_jpegd_parse(jd_samples[i].data, jd_samples[i].size,
					21, &info), 0);
	}
}

/*
 * Every prefix of every sample is refused, and read within its bytes; so
 * is every prefix given an EOI marker, unless it was cut at a marker (a
 * progressive file's first scans are a picture; a lone 0xff before the
 * EOI is a fill byte): a scan whose
 * data ends early is truncated even when the file ends properly.
 */
void test_jpegd_truncated(void)
{
	const unsigned char *data;
	unsigned char *buf;
	size_t i, n;
	bool at_marker;
	int ret;

	for (i = 0; i < JD_NSAMPLES; i++) {
		data = jd_samples[i].data;
		buf = malloc(jd_samples[i].size + 2);
		for (n = 0; n < jd_samples[i].size; n++) {
			ret = jd_try(data, n);
			if (ret != -EINVAL) {
				printf("  %s cut at %zu: %d\n",
				       jd_samples[i].name, n, ret);
				CHECK_EQ(ret, -EINVAL);
			}
			if (n + 2 >= jd_samples[i].size)
				continue;
			memcpy(buf, data, n);
			buf[n] = 0xff;
			buf[n + 1] = 0xd9;
			ret = jd_try(buf, n + 2);
			/* before a marker or between its 0xff and code */
			at_marker = (data[n] == 0xff && data[n + 1] &&
				     data[n + 1] != 0xff) ||
				    (n && data[n - 1] == 0xff && data[n] &&
				     data[n] != 0xff);
			if (ret != -EINVAL && !(at_marker && ret == 0)) {
				printf("  %s cut at %zu, then EOI: %d\n",
				       jd_samples[i].name, n, ret);
				CHECK_EQ(ret, -EINVAL);
			}
		}
		free(buf);
	}
}

/*
 * Each byte set to values that turn it into a marker, a huge or zero
 * length, a bad table entry or broken entropy-coded data: any result but
 * a documented one, or an access outside the buffers (ASan), fails.
 */
void test_jpegd_corrupt_bytes(void)
{
	static const unsigned char values[] = { 0x00, 0xff, 0x01, 0x80, 0xd9,
						0xda, 0xc4, 0x7f };
	unsigned char *copy;
	size_t i, pos, v, refused = 0, decoded = 0;
	int ret;

	for (i = 0; i < JD_NSAMPLES; i++) {
		copy = malloc(jd_samples[i].size);
		for (pos = 0; pos < jd_samples[i].size; pos++)
			for (v = 0; v < sizeof(values) + 1; v++) {
				memcpy(copy, jd_samples[i].data,
				       jd_samples[i].size);
				copy[pos] = v < sizeof(values) ? values[v] :
					    copy[pos] ^ 0x10;
				ret = jd_try(copy, jd_samples[i].size);
				CHECK(jd_documented(ret));
				if (ret)
					refused++;
				else
					decoded++;
			}
		free(copy);
	}
	/* both happen: corrupt entropy data often still decodes */
	CHECK(refused > 0);
	CHECK(decoded > 0);
}

/* The offset of the first segment with @marker in @d, or -1. */
static long jd_find(const unsigned char *d, size_t n, unsigned char marker)
{
	size_t i;

	for (i = 2; i + 1 < n; i++)
		if (d[i] == 0xff && d[i + 1] == marker)
			return (long)i;
	return -1;
}

/* Hand-made header faults, each with the errno it must get. */
void test_jpegd_bad_headers(void)
{
	const unsigned char *base = jpeg_baseline_420_rst;
	size_t n = sizeof(jpeg_baseline_420_rst);
	unsigned char *d = malloc(n);
	long sof = jd_find(base, n, 0xc0), dht = jd_find(base, n, 0xc4);
	long sos = jd_find(base, n, 0xda), rst = jd_find(base, n, 0xd0);
	long dri = jd_find(base, n, 0xdd);

	REQUIRE(sof > 0 && dht > 0 && sos > 0 && rst > 0 && dri > 0);
#define RESET() memcpy(d, base, n)
	/* not starting with SOI */
	RESET();
	d[1] = 0xd9;
	CHECK_EQ(jd_try(d, n), -EINVAL);
	/* huge dimensions: 65535 x 65535 */
	RESET();
	memset(d + sof + 5, 0xff, 4);
	CHECK_EQ(jd_try(d, n), -E2BIG);
	/* zero width; zero height (DNL) */
	RESET();
	memset(d + sof + 7, 0, 2);
	CHECK_EQ(jd_try(d, n), -EINVAL);
	RESET();
	memset(d + sof + 5, 0, 2);
	CHECK_EQ(jd_try(d, n), -EOPNOTSUPP);
	/* sampling factor 0; 4:1:1 */
	RESET();
	d[sof + 11] = 0x02;
	CHECK_EQ(jd_try(d, n), -EINVAL);
	RESET();
	d[sof + 11] = 0x41;
	CHECK_EQ(jd_try(d, n), -EOPNOTSUPP);
	/* a quant table that was never defined */
	RESET();
	d[sof + 12] = 3;
	CHECK_EQ(jd_try(d, n), -EINVAL);
	/* a segment length past the end of the file */
	RESET();
	d[dht + 2] = 0xff;
	CHECK_EQ(jd_try(d, n), -EINVAL);
	/* a Huffman table with more codes than its lengths hold */
	RESET();
	d[dht + 5] = 2;		/* two 1-bit codes: the second is all ones */
	CHECK_EQ(jd_try(d, n), -EINVAL);
	/*
	 * A complete code without the all-ones rule: two 1-bit codes
	 * (libjpeg refuses them too). Pillow writes a DHT per table.
	 */
	{
		static const unsigned char dht2[] = {
			0xff, 0xc4, 0x00, 0x15, 0x00, 0x02, 0, 0, 0, 0, 0,
			0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x00, 0x01,
		};
		size_t old = 2 + ((size_t)base[dht + 2] << 8 | base[dht + 3]);
		unsigned char *f = malloc(n + sizeof(dht2));
		struct dv_jpegd_info info;

		memcpy(f, base, dht);
		memcpy(f + dht, dht2, sizeof(dht2));
		memcpy(f + dht + sizeof(dht2), base + dht + old, n - dht - old);
		CHECK_EQ(dv_jpegd_parse(f, n - old + sizeof(dht2), 0, &info),
			 -EINVAL);
		/* one 1-bit code, and 2-bit ones up to but not all ones: fine */
		f[dht + 5] = 1;
		f[dht + 6] = 1;
		CHECK_EQ(dv_jpegd_parse(f, n - old + sizeof(dht2), 0, &info),
			 0);
		free(f);
	}
	/* a scan naming a component the frame lacks */
	RESET();
	d[sos + 5] = 9;
	CHECK_EQ(jd_try(d, n), -EINVAL);
	/* a sequential scan with progressive parameters */
	RESET();
	d[sos + 5 + 2 * d[sos + 4] + 1] = 5;
	CHECK_EQ(jd_try(d, n), -EINVAL);
	/* a restart marker out of sequence */
	RESET();
	d[rst + 1] = 0xd3;
	CHECK_EQ(jd_try(d, n), -EINVAL);
	/* a restart interval longer than the picture: RST0 is then garbage */
	RESET();
	d[dri + 4] = 0x00;
	d[dri + 5] = 0x40;
	CHECK(jd_documented(jd_try(d, n)));
	/* SOF3 (lossless) */
	RESET();
	d[sof + 1] = 0xc3;
	CHECK_EQ(jd_try(d, n), -EOPNOTSUPP);
	/* no EOI */
	CHECK_EQ(jd_try(base, n - 2), -EINVAL);
#undef RESET
	free(d);
}
