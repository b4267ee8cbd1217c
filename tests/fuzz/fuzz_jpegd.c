// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_jpegd.c - libFuzzer harness over the JPEG decoder (jpegd.h).
 *
 * Each input is a JPEG file: dv_jpegd_parse(), then dv_jpegd_decode()
 * into heap blocks of exactly the sizes parse asks for (ASan borders
 * each), the input copied into one of its own size. Results must be 0 or
 * a documented errno, and parse and decode must agree. Pictures above
 * 2048 x 2048 are refused by the limit (-E2BIG) to keep each run short.
 * Seeds: tests/fuzz/corpus-jpeg (the samples of tests/core/test_jpegd.c).
 *
 *   make build/fuzz_jpegd && build/fuzz_jpegd -max_total_time=30 \
 *	build/fuzz-corpus-jpeg tests/fuzz/corpus-jpeg
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jpegd.h"

#define FUZZ_MAX_DIM 2048

static int documented(int ret)
{
	return ret == 0 || ret == -EINVAL || ret == -EOPNOTSUPP ||
	       ret == -E2BIG;
}

int LLVMFuzzerTestOneInput(const uint8_t *in, size_t size)
{
	struct dv_jpegd_info info, got;
	uint8_t *data = malloc(size ? size : 1);
	void *out, *scratch;
	int pret, ret;

	memcpy(data, in, size);
	pret = dv_jpegd_parse(data, size, FUZZ_MAX_DIM, &info);
	if (!documented(pret))
		abort();
	if (pret) {
		if (dv_jpegd_decode(data, size, FUZZ_MAX_DIM, NULL, 0, NULL, 0,
				    NULL) != pret)
			abort();
		free(data);
		return 0;
	}
	out = malloc(info.out_size);
	scratch = malloc(info.scratch_size);
	ret = dv_jpegd_decode(data, size, FUZZ_MAX_DIM, out, info.out_size,
			      scratch, info.scratch_size, &got);
	if (!documented(ret) || memcmp(&got, &info, sizeof(info)))
		abort();
	free(scratch);
	free(out);
	free(data);
	return 0;
}
