// SPDX-License-Identifier: GPL-2.0
/*
 * test_jpege.c - the JPEG encoder (kmod/core/jpege.h): a synthetic NV12
 * picture encoded at several qualities and sizes decodes through our
 * JPEGD with its luma's mean squared error under a bound (PSNR above
 * 30 dB at quality 50 and up); every output capacity short of the file
 * is -ENOSPC with nothing written past it; bad strides, sizes and
 * qualities are -EINVAL; the bytes are the same on a second run; noise
 * at quality 100, the largest files there are, fits in exactly
 * dv_jpege_predict_size() bytes.
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
	size_t ss = dv_jpege_scratch_size();
	void *es = malloc(ss);
	struct dv_jpegd_info info;
	u8 *dec, *scratch;
	u64 se = 0;
	u32 x, y;

	je_picture(pic, &p);
	CHECK_EQ(dv_jpege_encode(&p, pic, n, out, cap, es, ss, &got), 0);
	CHECK(got > 0 && got <= cap);
	CHECK_EQ(dv_jpege_encode(&p, pic, n, out2, cap, es, ss, &again), 0);
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
		CHECK_EQ(dv_jpege_encode(&p, pic, n, out2, cut, es, ss,
					 &again),
			 -ENOSPC);
		for (x = cut; x < cap; x++)
			CHECK_EQ(out2[x], 0xa5);
	}
	free(es);
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

static u64 je_scratch[4096];	/* 8-byte aligned, and larger than needed */

static int je_enc(const struct dv_jpege_params *p, const u8 *pic, u64 n,
		  u8 *out, u64 cap, u64 *got)
{
	CHECK(dv_jpege_scratch_size() <= sizeof(je_scratch));
	return dv_jpege_encode(p, pic, n, out, cap, je_scratch,
			       sizeof(je_scratch), got);
}

void test_jpege_refused(void)
{
	struct dv_jpege_params p = { 64, 48, 64, 48, false, 75 };
	u8 pic[64 * 48 * 3 / 2], out[16];
	size_t ss = dv_jpege_scratch_size();
	u64 got = 0;

	memset(pic, 0, sizeof(pic));

	p.width_stride = 72;	/* not a multiple of 16 */
	CHECK_EQ(je_enc(&p, pic, sizeof(pic), out, 16, &got), -EINVAL);
	p.width_stride = 64;
	p.height_stride = 49;
	CHECK_EQ(je_enc(&p, pic, sizeof(pic), out, 16, &got), -EINVAL);
	p.height_stride = 48;
	p.quality = 0;
	CHECK_EQ(je_enc(&p, pic, sizeof(pic), out, 16, &got), -EINVAL);
	p.quality = 101;
	CHECK_EQ(je_enc(&p, pic, sizeof(pic), out, 16, &got), -EINVAL);
	p.quality = 75;
	p.width = 0;
	CHECK_EQ(je_enc(&p, pic, sizeof(pic), out, 16, &got), -EINVAL);
	p.width = 80;	/* above the stride */
	CHECK_EQ(je_enc(&p, pic, sizeof(pic), out, 16, &got), -EINVAL);
	p.width = 64;
	CHECK_EQ(je_enc(&p, pic, sizeof(pic) - 1, out, 16, &got), -EINVAL);
	/* no scratch, too little, or misaligned */
	CHECK_EQ(dv_jpege_encode(&p, pic, sizeof(pic), out, 16, NULL, ss,
				 &got), -EINVAL);
	CHECK_EQ(dv_jpege_encode(&p, pic, sizeof(pic), out, 16, je_scratch,
				 ss - 1, &got), -EINVAL);
	CHECK_EQ(dv_jpege_encode(&p, pic, sizeof(pic), out, 16,
				 (u8 *)je_scratch + 4, ss, &got), -EINVAL);
	CHECK_EQ(got, 0);
	/* the state is in the scratch: a small one, not the stack's 16 KiB */
	CHECK(ss < 8192);
}

/*
 * Uniform noise in every plane at quality 100 (quantizers of 1: the
 * coefficients' largest categories) into exactly the predicted size.
 */
void test_jpege_noise_bound(void)
{
	static const u32 sizes[][2] = { { 1, 1 }, { 16, 16 }, { 17, 9 },
					{ 64, 64 }, { 250, 130 },
					{ 640, 480 } };
	u64 worst_mcu = 0;
	u32 i, seed = 12345;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		u32 w = sizes[i][0], h = sizes[i][1], q;

		for (q = 95; q <= 100; q += 5) {
			struct dv_jpege_params p = { w, h, (w + 15) / 16 * 16,
						     (h + 1) / 2 * 2, false,
						     q };
			u64 n = (u64)p.width_stride * p.height_stride * 3 / 2;
			u64 cap = dv_jpege_predict_size(&p), got = 0, k;
			u64 mcus = (u64)((w + 15) / 16) * ((h + 15) / 16);
			u8 *pic = malloc(n), *out = malloc(cap);

			for (k = 0; k < n; k++) {
				seed = seed * 1103515245u + 12345u;
				/* bytes, then only 0 and 255 */
				pic[k] = i & 1 ? (seed >> 31) * 255 :
					 seed >> 23;
			}
			CHECK_EQ(je_enc(&p, pic, n, out, cap, &got), 0);
			CHECK(got <= cap);
			if ((got - 625) / mcus > worst_mcu)
				worst_mcu = (got - 625) / mcus;
			free(pic);
			free(out);
		}
	}
	/*
	 * 0/255 noise takes about 700 bytes an MCU (libjpeg's files of it
	 * about 670): its coefficients are in the largest categories, and
	 * the bound, 2498 bytes an MCU, is a worst case far above them.
	 */
	CHECK(worst_mcu > 600);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct dv_jpege_params p = { sizes[i][0], sizes[i][1], 0, 0,
					     false, 100 };
		u64 mcus = (u64)((p.width + 15) / 16) *
			   ((p.height + 15) / 16);

		CHECK_EQ(dv_jpege_predict_size(&p),
			 625 + 2 * ((mcus * 6 * 1665 + 7 + 7) / 8));
	}
}
