// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_pngd.c - libFuzzer harness over the PNG decoder (pngd.h).
 *
 * Each input is a PNG file, decoded twice: as it is, and with the CRC of
 * every chunk recomputed (else nearly every mutation would stop at a
 * CRC, and the inflater, the Huffman tables and the row filters would
 * never see it). Each time dv_pngd_parse(), then dv_pngd_decode() into
 * heap blocks of exactly the sizes parse asks for (ASan borders each),
 * the input copied into one of its own size, the output format taken
 * from the input's last byte. Results must be 0 or a documented errno,
 * parse and decode must agree, and what decode reports must be what parse
 * did. Pictures above 1024 x 1024 are refused by the limit (-E2BIG) to
 * keep each run short. Seeds: tests/fuzz/corpus-png (the samples of
 * tests/core/test_pngd.c).
 *
 *   make build/fuzz_pngd && build/fuzz_pngd -max_total_time=30 \
 *	build/fuzz-corpus-png tests/fuzz/corpus-png
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pngd.h"

#define FUZZ_MAX_DIM 1024

static int documented(int ret)
{
	return ret == 0 || ret == -EINVAL || ret == -EOPNOTSUPP ||
	       ret == -E2BIG;
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static uint32_t crc32(const uint8_t *p, size_t n)
{
	uint32_t c = 0xffffffffu;
	int k;

	while (n--) {
		c ^= *p++;
		for (k = 0; k < 8; k++)
			c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
	}
	return ~c;
}

static void fix_crcs(uint8_t *d, size_t n)
{
	size_t pos = 8;

	while (pos + 12 <= n) {
		uint32_t len = be32(d + pos), c;

		if (len > n - pos - 12)
			return;
		c = crc32(d + pos + 4, (size_t)len + 4);
		d[pos + 8 + len] = c >> 24;
		d[pos + 9 + len] = c >> 16;
		d[pos + 10 + len] = c >> 8;
		d[pos + 11 + len] = c;
		pos += 12 + (size_t)len;
	}
}

static void one(const uint8_t *data, size_t size, uint32_t fmt)
{
	struct dv_pngd_info info, got;
	void *out, *scratch;
	int pret, ret;

	pret = dv_pngd_parse(data, size, FUZZ_MAX_DIM, fmt, &info);
	if (!documented(pret))
		abort();
	if (pret) {
		if (dv_pngd_decode(data, size, FUZZ_MAX_DIM, fmt, NULL, 0,
				   NULL, 0, NULL) != pret)
			abort();
		return;
	}
	out = malloc(info.out_size);
	scratch = malloc(info.scratch_size);
	ret = dv_pngd_decode(data, size, FUZZ_MAX_DIM, fmt, out,
			     info.out_size, scratch, info.scratch_size, &got);
	if (!documented(ret) || memcmp(&got, &info, sizeof(info)))
		abort();
	free(scratch);
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *in, size_t size)
{
	uint8_t *data = malloc(size ? size : 1);
	uint32_t fmt = size ? in[size - 1] % DV_PNGD_FORMATS : 0;

	memcpy(data, in, size);
	one(data, size, fmt);
	fix_crcs(data, size);
	one(data, size, fmt);
	free(data);
	return 0;
}
