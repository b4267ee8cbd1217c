// SPDX-License-Identifier: GPL-2.0
/*
 * test_jpege.c - the JPEG encoder (kmod/core/jpege.h): a synthetic NV12
 * picture encoded at several qualities and sizes decodes through our
 * JPEGD with its luma's mean squared error under a bound (PSNR above
 * 30 dB at quality 50 and up); every output capacity short of the file
 * is -ENOSPC with nothing written past it; bad strides, sizes and
 * qualities are -EINVAL; the bytes are the same on a second run.
 */
#define _GNU_SOURCE
#include "fixtures.h"
#include "jpege.h"
#include "jpegd.h"

static void je_picture(u8 *pic, const struct dv_jpege_params *p)
{
	u8 *uv = pic + p->width_stride * p->height_stride;
	u32 x, y;

	memset(pic, 0, p->width_stride * p->height_stride * 3 / 2);
	for (y = 0; y < p->height; y++)
		for (x = 0; x < p->width; x++)
			pic[y * p->width_stride + x] =
				(x * 255 / p->width + y * 2) & 0xff;
	for (y = 0; y < (p->height + 1) / 2; y++)
		for (x = 0; x < (p->width + 1) / 2; x++) {
			uv[y * p->width_stride + 2 * x] = 64 + x;
			uv[y * p->width_stride + 2 * x + 1] = 192 - y;
		}
}

static void je_one(u32 w, u32 h, u32 q)
{
	struct dv_jpege_params p = { w, h, (w + 15) / 16 * 16,
				     (h + 1) / 2 * 2, false, q };
	u64 n = (u64)p.width_stride * p.height_stride * 3 / 2;
	u64 cap = dv_jpege_predict_size(&p), got = 0, again = 0, cut;
	u8 *pic = malloc(n), *out = malloc(cap), *out2 = malloc(cap);
	struct dv_jpegd_info info;
	u8 *dec, *scratch;
	u64 se = 0;
	u32 x, y;

	je_picture(pic, &p);
	CHECK_EQ(dv_jpege_encode(&p, pic, n, out, cap, &got), 0);
	CHECK(got > 0 && got <= cap);
	CHECK_EQ(dv_jpege_encode(&p, pic, n, out2, cap, &again), 0);
	CHECK_EQ(got, again);
	CHECK(!memcmp(out, out2, got));
	CHECK_EQ(dv_jpegd_parse(out, got, 0, &info), 0);
	CHECK_EQ(info.width, w);
	CHECK_EQ(info.height, h);
	CHECK_EQ(info.subsampling, DV_JPEGD_420);
	dec = malloc(info.out_size);
	scratch = malloc(info.scratch_size);
	CHECK_EQ(dv_jpegd_decode(out, got, 0, dec, info.out_size, scratch,
				 info.scratch_size, NULL), 0);
	for (y = 0; y < h; y++)
		for (x = 0; x < w; x++) {
			int d = (int)dec[y * info.width_stride + x] -
				pic[y * p.width_stride + x];

			se += d * d;
		}
	/* PSNR 30 dB: MSE 65025 / 1000 */
	if (q >= 50)
		CHECK(se * 1000 < 65025ull * w * h);
	for (cut = 0; cut < got; cut += (cut < 700 ? 1 : 97)) {
		memset(out2, 0xa5, cap);
		CHECK_EQ(dv_jpege_encode(&p, pic, n, out2, cut, &again),
			 -ENOSPC);
		for (x = cut; x < cap; x++)
			CHECK_EQ(out2[x], 0xa5);
	}
	free(dec);
	free(scratch);
	free(pic);
	free(out);
	free(out2);
}

void test_jpege_roundtrip(void)
{
	je_one(64, 48, 75);
	je_one(33, 17, 90);
	je_one(17, 9, 10);
	je_one(200, 150, 50);
	je_one(128, 128, 100);
	je_one(1, 1, 1);
}

void test_jpege_refused(void)
{
	struct dv_jpege_params p = { 64, 48, 64, 48, false, 75 };
	u8 pic[64 * 48 * 3 / 2], out[16];
	u64 got = 0;

	memset(pic, 0, sizeof(pic));

	p.width_stride = 72;	/* not a multiple of 16 */
	CHECK_EQ(dv_jpege_encode(&p, pic, sizeof(pic), out, 16, &got),
		 -EINVAL);
	p.width_stride = 64;
	p.height_stride = 49;
	CHECK_EQ(dv_jpege_encode(&p, pic, sizeof(pic), out, 16, &got),
		 -EINVAL);
	p.height_stride = 48;
	p.quality = 0;
	CHECK_EQ(dv_jpege_encode(&p, pic, sizeof(pic), out, 16, &got),
		 -EINVAL);
	p.quality = 101;
	CHECK_EQ(dv_jpege_encode(&p, pic, sizeof(pic), out, 16, &got),
		 -EINVAL);
	p.quality = 75;
	p.width = 0;
	CHECK_EQ(dv_jpege_encode(&p, pic, sizeof(pic), out, 16, &got),
		 -EINVAL);
	p.width = 80;	/* above the stride */
	CHECK_EQ(dv_jpege_encode(&p, pic, sizeof(pic), out, 16, &got),
		 -EINVAL);
	p.width = 64;
	CHECK_EQ(dv_jpege_encode(&p, pic, sizeof(pic) - 1, out, 16, &got),
		 -EINVAL);
	CHECK_EQ(got, 0);
}
