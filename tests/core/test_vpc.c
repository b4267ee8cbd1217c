// SPDX-License-Identifier: GPL-2.0
/*
 * test_vpc.c - the DVPP VPC engine (kmod/core/vpc.c): its parameter-block
 * check refuses every rule of DOC: DVPP VPC one at a time, and its runs
 * stay inside pictures given as heap blocks of exactly their size (the
 * ASan build sees any access outside them), at VPC's extremes: the
 * smallest pictures, 16x up and 1/32 down, odd YUV420SP inputs, each
 * format; a same-size resize and a conversion there and back are exact.
 */
#define _GNU_SOURCE
#include "fixtures.h"
#include "ops.h"
#include "vpc.h"

static struct davinci_params_vpc_crop vpc_block(u32 sfmt, u32 sw, u32 sh,
						u32 dfmt, u32 dw, u32 dh)
{
	static const u32 bpp[14] = { [1] = 1, [2] = 1, [7] = 2, [12] = 3,
				     [13] = 3 };
	struct davinci_params_vpc_crop p;
	u32 sws = (sw * bpp[sfmt] + 15) / 16 * 16;
	u32 dws = (dw * bpp[dfmt] + 15) / 16 * 16;

	memset(&p, 0, sizeof(p));
	p.src_format = sfmt;
	p.src_width = sw;
	p.src_height = sh;
	p.src_width_stride = sws < 32 ? 32 : sws;
	p.src_height_stride = (sh + 1) / 2 * 2;
	p.dst_format = dfmt;
	p.dst_width = dw;
	p.dst_height = dh;
	p.dst_width_stride = dws < 32 ? 32 : dws;
	p.dst_height_stride = (dh + 1) / 2 * 2;
	p.crop_right = sw - 1;
	p.crop_bottom = sh - 1;
	p.paste_right = dw - 1;
	p.paste_bottom = dh - 1;
	return p;
}

static int vpc_check(u16 opcode, const struct davinci_params_vpc_crop *p)
{
	struct davinci_task t;

	memset(&t, 0, sizeof(t));
	t.opcode = opcode;
	return dv_op_check_vpc_crop(&t, p);
}

void test_vpc_block_checks(void)
{
	struct davinci_params_vpc_crop good, p;

	good = vpc_block(DAVINCI_VPC_FMT_NV12, 64, 48, DAVINCI_VPC_FMT_NV12,
			 32, 24);
	CHECK_EQ(vpc_check(DAVINCI_OP_VPC_RESIZE, &good), 0);
	CHECK_EQ(vpc_check(DAVINCI_OP_VPC_CROP, &good), 0);
	/* a conversion keeps the size */
	CHECK_EQ(vpc_check(DAVINCI_OP_VPC_CONVERT_COLOR, &good), -EINVAL);

#define REFUSED(op, field, value) do {					\
		p = good;						\
		p.field = (value);					\
		CHECK_EQ(vpc_check(op, &p), -EINVAL);			\
	} while (0)
	REFUSED(DAVINCI_OP_VPC_RESIZE, src_format, 3);
	REFUSED(DAVINCI_OP_VPC_RESIZE, dst_format, 0);
	REFUSED(DAVINCI_OP_VPC_RESIZE, dst_format, DAVINCI_VPC_FMT_RGB);
	REFUSED(DAVINCI_OP_VPC_RESIZE, src_width_stride, 72);
	REFUSED(DAVINCI_OP_VPC_RESIZE, src_width_stride, 16);
	REFUSED(DAVINCI_OP_VPC_RESIZE, dst_width_stride, 16);
	REFUSED(DAVINCI_OP_VPC_RESIZE, src_height_stride, 49);
	REFUSED(DAVINCI_OP_VPC_RESIZE, src_height_stride, 46);
	REFUSED(DAVINCI_OP_VPC_RESIZE, src_height_stride, 16386);
	REFUSED(DAVINCI_OP_VPC_RESIZE, dst_height_stride, 4098);
	REFUSED(DAVINCI_OP_VPC_RESIZE, dst_width, 9);
	REFUSED(DAVINCI_OP_VPC_RESIZE, dst_height, 4);
	REFUSED(DAVINCI_OP_VPC_RESIZE, interpolation, 2);
	REFUSED(DAVINCI_OP_VPC_RESIZE, pad, 1);
	REFUSED(DAVINCI_OP_VPC_RESIZE, crop_right, 61);
	REFUSED(DAVINCI_OP_VPC_RESIZE, paste_left, 16);
	REFUSED(DAVINCI_OP_VPC_CROP, crop_left, 1);
	REFUSED(DAVINCI_OP_VPC_CROP, crop_top, 3);
	REFUSED(DAVINCI_OP_VPC_CROP, crop_right, 62);
	REFUSED(DAVINCI_OP_VPC_CROP, crop_bottom, 48);	/* outside */
	REFUSED(DAVINCI_OP_VPC_CROP, crop_left, 56);	/* 8 wide */
	REFUSED(DAVINCI_OP_VPC_CROP, paste_left, 8);
	REFUSED(DAVINCI_OP_VPC_CROP, paste_right, 32);
#undef REFUSED
	/* an odd output of YUV420SP, an odd YUYV */
	p = vpc_block(DAVINCI_VPC_FMT_NV12, 64, 48, DAVINCI_VPC_FMT_NV12, 31,
		      24);
	CHECK_EQ(vpc_check(DAVINCI_OP_VPC_RESIZE, &p), -EINVAL);
	p = vpc_block(DAVINCI_VPC_FMT_NV12, 63, 47, DAVINCI_VPC_FMT_NV12, 32,
		      24);
	CHECK_EQ(vpc_check(DAVINCI_OP_VPC_RESIZE, &p), 0);
	p = vpc_block(DAVINCI_VPC_FMT_YUYV, 63, 48, DAVINCI_VPC_FMT_NV12, 32,
		      24);
	CHECK_EQ(vpc_check(DAVINCI_OP_VPC_RESIZE, &p), -EINVAL);
	/* the scale range: 16 up, 1/32 down, no further */
	p = vpc_block(DAVINCI_VPC_FMT_RGB, 10, 6, DAVINCI_VPC_FMT_RGB, 160,
		      96);
	CHECK_EQ(vpc_check(DAVINCI_OP_VPC_RESIZE, &p), 0);
	p = vpc_block(DAVINCI_VPC_FMT_RGB, 10, 6, DAVINCI_VPC_FMT_RGB, 162,
		      96);
	CHECK_EQ(vpc_check(DAVINCI_OP_VPC_RESIZE, &p), -EINVAL);
	p = vpc_block(DAVINCI_VPC_FMT_NV12, 320, 192, DAVINCI_VPC_FMT_NV12,
		      10, 6);
	CHECK_EQ(vpc_check(DAVINCI_OP_VPC_RESIZE, &p), 0);
	p = vpc_block(DAVINCI_VPC_FMT_NV12, 322, 192, DAVINCI_VPC_FMT_NV12,
		      10, 6);
	CHECK_EQ(vpc_check(DAVINCI_OP_VPC_RESIZE, &p), -EINVAL);
	/* DVPP's 8K mode: a YUV420SP input up to 8192, height stride 16384 */
	p = vpc_block(DAVINCI_VPC_FMT_NV12, 4098, 48, DAVINCI_VPC_FMT_NV12,
		      256, 24);
	CHECK_EQ(vpc_check(DAVINCI_OP_VPC_RESIZE, &p), 0);
	p = vpc_block(DAVINCI_VPC_FMT_NV21, 64, 8192, DAVINCI_VPC_FMT_NV21,
		      64, 256);
	CHECK_EQ(vpc_check(DAVINCI_OP_VPC_RESIZE, &p), 0);
	p.src_height_stride = 16384;
	CHECK_EQ(vpc_check(DAVINCI_OP_VPC_RESIZE, &p), 0);
	p = vpc_block(DAVINCI_VPC_FMT_NV12, 8194, 48, DAVINCI_VPC_FMT_NV12,
		      512, 24);
	CHECK_EQ(vpc_check(DAVINCI_OP_VPC_RESIZE, &p), -EINVAL);
	/* ... for no other format, no output, no crop above 4096 */
	p = vpc_block(DAVINCI_VPC_FMT_YUYV, 4098, 48, DAVINCI_VPC_FMT_YUYV,
		      256, 24);
	CHECK_EQ(vpc_check(DAVINCI_OP_VPC_RESIZE, &p), -EINVAL);
	p = vpc_block(DAVINCI_VPC_FMT_NV12, 4096, 48, DAVINCI_VPC_FMT_NV12,
		      4098, 48);
	CHECK_EQ(vpc_check(DAVINCI_OP_VPC_RESIZE, &p), -EINVAL);
	p = vpc_block(DAVINCI_VPC_FMT_NV12, 8192, 48, DAVINCI_VPC_FMT_NV12,
		      256, 48);
	CHECK_EQ(vpc_check(DAVINCI_OP_VPC_CROP, &p), -EINVAL);
	p.crop_right = 4095;
	CHECK_EQ(vpc_check(DAVINCI_OP_VPC_CROP, &p), 0);
	/* every pair of formats converts */
	p = vpc_block(DAVINCI_VPC_FMT_YUYV, 64, 48, DAVINCI_VPC_FMT_BGR, 64,
		      48);
	CHECK_EQ(vpc_check(DAVINCI_OP_VPC_CONVERT_COLOR, &p), 0);
	p.interpolation = DAVINCI_VPC_NEAREST;
	CHECK_EQ(vpc_check(DAVINCI_OP_VPC_CONVERT_COLOR, &p), -EINVAL);
}

/* run @op on heap pictures of exactly their size; the output returned */
static u8 *vpc_run_exact(u16 opcode, const struct davinci_params_vpc_crop *p,
			 const u8 *in)
{
	u64 sn = dv_vpc_picture_bytes(p->src_format, p->src_width_stride,
				      p->src_height_stride);
	u64 dn = dv_vpc_picture_bytes(p->dst_format, p->dst_width_stride,
				      p->dst_height_stride);
	struct davinci_task t;
	u8 *src = malloc(sn), *dst = malloc(dn);
	u64 i;

	CHECK_EQ(vpc_check(opcode, p), 0);
	for (i = 0; i < sn; i++)
		src[i] = in ? in[i] : (u8)(i * 37 + (i >> 7));
	memset(dst, 0, dn);
	memset(&t, 0, sizeof(t));
	t.opcode = opcode;
	CHECK_EQ(dv_vpc_run(&t, p, dst, src), 0);
	free(src);
	return dst;
}

void test_vpc_runs_inside_exact_buffers(void)
{
	static const u32 fmts[5] = { DAVINCI_VPC_FMT_NV12, DAVINCI_VPC_FMT_NV21,
				     DAVINCI_VPC_FMT_YUYV, DAVINCI_VPC_FMT_RGB,
				     DAVINCI_VPC_FMT_BGR };
	static const u32 sizes[][4] = {
		{ 10, 6, 160, 96 }, { 320, 192, 10, 6 }, { 11, 7, 10, 6 },
		{ 333, 250, 224, 224 }, { 64, 48, 64, 48 },
	};
	struct davinci_params_vpc_crop p, q;
	u8 *a, *b, *c;
	u32 i, j, k, interp;
	u64 n;

	for (i = 0; i < 5; i++) {
		for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
			if (fmts[i] == DAVINCI_VPC_FMT_YUYV && sizes[k][0] % 2)
				continue;
			for (interp = 0; interp < 2; interp++) {
				p = vpc_block(fmts[i], sizes[k][0], sizes[k][1],
					      fmts[i], sizes[k][2],
					      sizes[k][3]);
				p.interpolation = interp;
				free(vpc_run_exact(DAVINCI_OP_VPC_RESIZE, &p,
						   NULL));
			}
		}
		for (j = 0; j < 5; j++) {
			p = vpc_block(fmts[i], 64, 48, fmts[j], 64, 48);
			free(vpc_run_exact(DAVINCI_OP_VPC_CONVERT_COLOR, &p,
					   NULL));
		}
	}
	/* a crop into a paste rect at the output's corner */
	p = vpc_block(DAVINCI_VPC_FMT_NV12, 64, 48, DAVINCI_VPC_FMT_NV12, 64,
		      48);
	p.crop_left = 2;
	p.crop_top = 4;
	p.paste_left = 48;
	p.paste_top = 42;
	free(vpc_run_exact(DAVINCI_OP_VPC_CROP, &p, NULL));

	/* a same-size resize is the picture, either interpolation */
	p = vpc_block(DAVINCI_VPC_FMT_NV12, 64, 48, DAVINCI_VPC_FMT_NV12, 64,
		      48);
	n = dv_vpc_picture_bytes(p.src_format, p.src_width_stride,
				 p.src_height_stride);
	a = vpc_run_exact(DAVINCI_OP_VPC_CONVERT_COLOR, &p, NULL);
	for (interp = 0; interp < 2; interp++) {
		p.interpolation = interp;
		b = vpc_run_exact(DAVINCI_OP_VPC_RESIZE, &p, a);
		CHECK(!memcmp(a, b, n));
		free(b);
	}
	free(a);
	/* RGB -> BGR -> RGB and NV12 -> NV21 -> NV12 are exact */
	p = vpc_block(DAVINCI_VPC_FMT_RGB, 30, 20, DAVINCI_VPC_FMT_BGR, 30, 20);
	q = vpc_block(DAVINCI_VPC_FMT_BGR, 30, 20, DAVINCI_VPC_FMT_RGB, 30, 20);
	a = vpc_run_exact(DAVINCI_OP_VPC_CONVERT_COLOR, &q, NULL);
	b = vpc_run_exact(DAVINCI_OP_VPC_CONVERT_COLOR, &p, a);
	c = vpc_run_exact(DAVINCI_OP_VPC_CONVERT_COLOR, &q, b);
	for (i = 0; i < 20; i++)
		CHECK(!memcmp(a + i * p.src_width_stride,
			      c + i * p.src_width_stride, 90));
	free(a);
	free(b);
	free(c);
}

/*
 * Hostile blocks: good ones with one to four fields set to values near
 * theirs (0 .. twice theirs + 16); every block the check passes runs
 * inside exactly sized heap pictures (ASan sees the rest).
 */
/* xorshift64* */
static u32 vpc_rand(u64 *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return (u32)((*s * 0x2545f4914f6cdd1dull) >> 32);
}

void test_vpc_mutated_blocks(void)
{
	static const u16 opcodes[3] = { DAVINCI_OP_VPC_RESIZE,
					DAVINCI_OP_VPC_CROP,
					DAVINCI_OP_VPC_CONVERT_COLOR };
	struct davinci_params_vpc_crop good[4], p;
	u32 *f, nf = sizeof(p) / sizeof(u32), i, j, k, n, ran = 0;
	u64 seed = 0x9e3779b97f4a7c15ull;

	good[0] = vpc_block(DAVINCI_VPC_FMT_NV12, 64, 48, DAVINCI_VPC_FMT_NV21,
			    32, 24);
	good[1] = vpc_block(DAVINCI_VPC_FMT_YUYV, 40, 30, DAVINCI_VPC_FMT_NV12,
			    48, 32);
	good[2] = vpc_block(DAVINCI_VPC_FMT_RGB, 33, 21, DAVINCI_VPC_FMT_BGR,
			    33, 21);
	good[3] = vpc_block(DAVINCI_VPC_FMT_NV12, 63, 47, DAVINCI_VPC_FMT_RGB,
			    63, 47);
	for (i = 0; i < 60000; i++) {
		p = good[i % 4];
		f = (u32 *)&p;
		n = 1 + vpc_rand(&seed) % 4;
		for (j = 0; j < n; j++) {
			k = vpc_rand(&seed) % nf;
			f[k] = vpc_rand(&seed) % (2 * f[k] + 17);
		}
		if (!vpc_check(opcodes[i % 3], &p)) {
			free(vpc_run_exact(opcodes[i % 3], &p, NULL));
			ran++;
		}
	}
	printf("     %u of 60000 mutated blocks passed the check and ran\n", ran);
	CHECK(ran > 500);
}
