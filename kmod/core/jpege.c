// SPDX-License-Identifier: GPL-2.0
/*
 * jpege.c - baseline JPEG encoder of the DVPP JPEGE engine (jpege.h).
 */
#include "jpege.h"

static const u8 zigzag[64] = {
	0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5,
	12, 19, 26, 33, 40, 48, 41, 34, 27, 20, 13, 6, 7, 14, 21, 28,
	35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51,
	58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63,
};

static const u8 std_lum_q[64] = {
	16, 11, 10, 16, 24, 40, 51, 61, 12, 12, 14, 19, 26, 58, 60, 55,
	14, 13, 16, 24, 40, 57, 69, 56, 14, 17, 22, 29, 51, 87, 80, 62,
	18, 22, 37, 56, 68, 109, 103, 77, 24, 35, 55, 64, 81, 104, 113, 92,
	49, 64, 78, 87, 103, 121, 120, 101, 72, 92, 95, 98, 112, 100, 103, 99,
};

static const u8 std_chr_q[64] = {
	17, 18, 24, 47, 99, 99, 99, 99, 18, 21, 26, 66, 99, 99, 99, 99,
	24, 26, 56, 99, 99, 99, 99, 99, 47, 66, 99, 99, 99, 99, 99, 99,
	99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99,
	99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99,
};

static const u8 dc_lum_bits[16] = { 0, 1, 5, 1, 1, 1, 1, 1, 1 };
static const u8 dc_lum_val[12] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 };
static const u8 dc_chr_bits[16] = { 0, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1 };
static const u8 dc_chr_val[12] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 };
static const u8 ac_lum_bits[16] = { 0, 2, 1, 3, 3, 2, 4, 3, 5, 5, 4, 4,
				    0, 0, 1, 0x7d };
static const u8 ac_lum_val[162] = {
	0x01, 0x02, 0x03, 0x00, 0x04, 0x11, 0x05, 0x12, 0x21, 0x31, 0x41,
	0x06, 0x13, 0x51, 0x61, 0x07, 0x22, 0x71, 0x14, 0x32, 0x81, 0x91,
	0xa1, 0x08, 0x23, 0x42, 0xb1, 0xc1, 0x15, 0x52, 0xd1, 0xf0, 0x24,
	0x33, 0x62, 0x72, 0x82, 0x09, 0x0a, 0x16, 0x17, 0x18, 0x19, 0x1a,
	0x25, 0x26, 0x27, 0x28, 0x29, 0x2a, 0x34, 0x35, 0x36, 0x37, 0x38,
	0x39, 0x3a, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48, 0x49, 0x4a, 0x53,
	0x54, 0x55, 0x56, 0x57, 0x58, 0x59, 0x5a, 0x63, 0x64, 0x65, 0x66,
	0x67, 0x68, 0x69, 0x6a, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x79,
	0x7a, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89, 0x8a, 0x92, 0x93,
	0x94, 0x95, 0x96, 0x97, 0x98, 0x99, 0x9a, 0xa2, 0xa3, 0xa4, 0xa5,
	0xa6, 0xa7, 0xa8, 0xa9, 0xaa, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6, 0xb7,
	0xb8, 0xb9, 0xba, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7, 0xc8, 0xc9,
	0xca, 0xd2, 0xd3, 0xd4, 0xd5, 0xd6, 0xd7, 0xd8, 0xd9, 0xda, 0xe1,
	0xe2, 0xe3, 0xe4, 0xe5, 0xe6, 0xe7, 0xe8, 0xe9, 0xea, 0xf1, 0xf2,
	0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8, 0xf9, 0xfa,
};
static const u8 ac_chr_bits[16] = { 0, 2, 1, 2, 4, 4, 3, 4, 7, 5, 4, 4,
				    0, 1, 2, 0x77 };
static const u8 ac_chr_val[162] = {
	0x00, 0x01, 0x02, 0x03, 0x11, 0x04, 0x05, 0x21, 0x31, 0x06, 0x12,
	0x41, 0x51, 0x07, 0x61, 0x71, 0x13, 0x22, 0x32, 0x81, 0x08, 0x14,
	0x42, 0x91, 0xa1, 0xb1, 0xc1, 0x09, 0x23, 0x33, 0x52, 0xf0, 0x15,
	0x62, 0x72, 0xd1, 0x0a, 0x16, 0x24, 0x34, 0xe1, 0x25, 0xf1, 0x17,
	0x18, 0x19, 0x1a, 0x26, 0x27, 0x28, 0x29, 0x2a, 0x35, 0x36, 0x37,
	0x38, 0x39, 0x3a, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48, 0x49, 0x4a,
	0x53, 0x54, 0x55, 0x56, 0x57, 0x58, 0x59, 0x5a, 0x63, 0x64, 0x65,
	0x66, 0x67, 0x68, 0x69, 0x6a, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78,
	0x79, 0x7a, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89, 0x8a,
	0x92, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98, 0x99, 0x9a, 0xa2, 0xa3,
	0xa4, 0xa5, 0xa6, 0xa7, 0xa8, 0xa9, 0xaa, 0xb2, 0xb3, 0xb4, 0xb5,
	0xb6, 0xb7, 0xb8, 0xb9, 0xba, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7,
	0xc8, 0xc9, 0xca, 0xd2, 0xd3, 0xd4, 0xd5, 0xd6, 0xd7, 0xd8, 0xd9,
	0xda, 0xe2, 0xe3, 0xe4, 0xe5, 0xe6, 0xe7, 0xe8, 0xe9, 0xea, 0xf2,
	0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8, 0xf9, 0xfa,
};

struct huff {
	u16 code[256];
	u8 len[256];
};

struct enc {
	u8 *out;
	u64 cap, pos;
	u64 acc;	/* bits, msb first: < 8 left over, <= 27 put */
	int nbits;
	bool full;
	u8 q[2][64];	/* natural order */
	u32 rq[2][64];	/* ceil(2^32 / (q << 3)): quantizing by a multiply */
	struct huff dc[2], ac[2];
	int pred[3];
	s32 blk[64];	/* the block being encoded */
	s32 zz[64];	/* its quantized coefficients, in zigzag order */
};

size_t dv_jpege_scratch_size(void)
{
	return sizeof(struct enc);
}

static void put8(struct enc *e, u8 b)
{
	if (e->pos >= e->cap) {
		e->full = true;
		return;
	}
	e->out[e->pos++] = b;
}

static void put16(struct enc *e, u16 v)
{
	put8(e, v >> 8);
	put8(e, v & 0xff);
}

/* @len <= 27 bits of @code, its high bits ignored */
static inline void put_bits(struct enc *e, u32 code, int len)
{
	e->acc = (e->acc << len) | (code & (((u64)1 << len) - 1));
	e->nbits += len;
	while (e->nbits >= 8) {
		u8 b = (e->acc >> (e->nbits - 8)) & 0xff;

		put8(e, b);
		if (b == 0xff)
			put8(e, 0);
		e->nbits -= 8;
	}
}

static void build_huff(struct huff *h, const u8 *bits, const u8 *val)
{
	u32 code = 0;
	int k = 0, l, i;

	for (l = 1; l <= 16; l++) {
		for (i = 0; i < bits[l - 1]; i++) {
			h->code[val[k]] = code++;
			h->len[val[k]] = l;
			k++;
		}
		code <<= 1;
	}
}

static void scale_q(u8 *dst, const u8 *std, u32 quality)
{
	int scale = quality < 50 ? 5000 / (int)quality : 200 - (int)quality * 2;
	int i;

	for (i = 0; i < 64; i++) {
		int t = ((int)std[i] * scale + 50) / 100;

		if (t <= 0)
			t = 1;
		if (t > 255)
			t = 255;
		dst[i] = t;
	}
}

/* libjpeg's jfdctint.c (islow), CONST_BITS 13, PASS1_BITS 2. */
#define CONST_BITS 13
#define PASS1_BITS 2
#define FIX_0_298631336 2446
#define FIX_0_390180644 3196
#define FIX_0_541196100 4433
#define FIX_0_765366865 6270
#define FIX_0_899976223 7373
#define FIX_1_175875602 9633
#define FIX_1_501321110 12299
#define FIX_1_847759065 15137
#define FIX_1_961570560 16069
#define FIX_2_053119869 16819
#define FIX_2_562915447 20995
#define FIX_3_072711026 25172
#define DESCALE(x, n) (((x) + ((s32)1 << ((n) - 1))) >> (n))

static void fdct(s32 *d)
{
	s32 t0, t1, t2, t3, t4, t5, t6, t7, t10, t11, t12, t13, z1, z2, z3,
		z4, z5;
	s32 *p;
	int i;

	for (p = d, i = 0; i < 8; i++, p += 8) {
		t0 = p[0] + p[7];
		t7 = p[0] - p[7];
		t1 = p[1] + p[6];
		t6 = p[1] - p[6];
		t2 = p[2] + p[5];
		t5 = p[2] - p[5];
		t3 = p[3] + p[4];
		t4 = p[3] - p[4];
		t10 = t0 + t3;
		t13 = t0 - t3;
		t11 = t1 + t2;
		t12 = t1 - t2;
		p[0] = (t10 + t11) * (1 << PASS1_BITS);
		p[4] = (t10 - t11) * (1 << PASS1_BITS);
		z1 = (t12 + t13) * FIX_0_541196100;
		p[2] = DESCALE(z1 + t13 * FIX_0_765366865,
			       CONST_BITS - PASS1_BITS);
		p[6] = DESCALE(z1 + t12 * -FIX_1_847759065,
			       CONST_BITS - PASS1_BITS);
		z1 = t4 + t7;
		z2 = t5 + t6;
		z3 = t4 + t6;
		z4 = t5 + t7;
		z5 = (z3 + z4) * FIX_1_175875602;
		t4 *= FIX_0_298631336;
		t5 *= FIX_2_053119869;
		t6 *= FIX_3_072711026;
		t7 *= FIX_1_501321110;
		z1 *= -FIX_0_899976223;
		z2 *= -FIX_2_562915447;
		z3 *= -FIX_1_961570560;
		z4 *= -FIX_0_390180644;
		z3 += z5;
		z4 += z5;
		p[7] = DESCALE(t4 + z1 + z3, CONST_BITS - PASS1_BITS);
		p[5] = DESCALE(t5 + z2 + z4, CONST_BITS - PASS1_BITS);
		p[3] = DESCALE(t6 + z2 + z3, CONST_BITS - PASS1_BITS);
		p[1] = DESCALE(t7 + z1 + z4, CONST_BITS - PASS1_BITS);
	}
	for (p = d, i = 0; i < 8; i++, p++) {
		t0 = p[0] + p[56];
		t7 = p[0] - p[56];
		t1 = p[8] + p[48];
		t6 = p[8] - p[48];
		t2 = p[16] + p[40];
		t5 = p[16] - p[40];
		t3 = p[24] + p[32];
		t4 = p[24] - p[32];
		t10 = t0 + t3;
		t13 = t0 - t3;
		t11 = t1 + t2;
		t12 = t1 - t2;
		p[0] = DESCALE(t10 + t11, PASS1_BITS);
		p[32] = DESCALE(t10 - t11, PASS1_BITS);
		z1 = (t12 + t13) * FIX_0_541196100;
		p[16] = DESCALE(z1 + t13 * FIX_0_765366865,
				CONST_BITS + PASS1_BITS);
		p[48] = DESCALE(z1 + t12 * -FIX_1_847759065,
				CONST_BITS + PASS1_BITS);
		z1 = t4 + t7;
		z2 = t5 + t6;
		z3 = t4 + t6;
		z4 = t5 + t7;
		z5 = (z3 + z4) * FIX_1_175875602;
		t4 *= FIX_0_298631336;
		t5 *= FIX_2_053119869;
		t6 *= FIX_3_072711026;
		t7 *= FIX_1_501321110;
		z1 *= -FIX_0_899976223;
		z2 *= -FIX_2_562915447;
		z3 *= -FIX_1_961570560;
		z4 *= -FIX_0_390180644;
		z3 += z5;
		z4 += z5;
		p[56] = DESCALE(t4 + z1 + z3, CONST_BITS + PASS1_BITS);
		p[40] = DESCALE(t5 + z2 + z4, CONST_BITS + PASS1_BITS);
		p[24] = DESCALE(t6 + z2 + z3, CONST_BITS + PASS1_BITS);
		p[8] = DESCALE(t7 + z1 + z4, CONST_BITS + PASS1_BITS);
	}
}

static void encode_block(struct enc *e, s32 *blk, int t, int c)
{
	const u8 *q = e->q[t];
	const u32 *rq = e->rq[t];
	s32 *zz = e->zz;
	int k, run, v, a, n, diff, last = 0;
	u64 nonzero = 0;

	fdct(blk);
	for (k = 0; k < 64; k++) {
		/*
		 * libjpeg's quantize: (|x| + d / 2) / d, d = q << 3, the sign
		 * put back (round half away from zero). The multiply by
		 * rq = ceil(2^32 / d) = 2^32 / d + e / d, e < d <= 2040, is
		 * that quotient while |x| + d / 2 < 2^32 / e, above 2^21:
		 * |x| is at most 8 * 1024 (islow's 8x scaled coefficients).
		 */
		s32 x = blk[zigzag[k]];
		u32 i = zigzag[k];
		u32 m = (u32)(x < 0 ? -x : x) + ((u32)q[i] << 2);
		s32 y = (s32)(((u64)m * rq[i]) >> 32);

		zz[k] = x < 0 ? -y : y;
		nonzero |= (u64)(y != 0) << k;
	}
	diff = zz[0] - e->pred[c];
	e->pred[c] = zz[0];
	a = diff < 0 ? -diff : diff;
	n = a ? 32 - __builtin_clz(a) : 0;	/* its category */
	/* the code (<= 16 bits) and the magnitude (<= 11) at once */
	put_bits(e, ((u32)e->dc[t].code[n] << n) |
		 ((diff < 0 ? diff - 1 : diff) & ((1u << n) - 1)),
		 e->dc[t].len[n] + n);
	/* the nonzero AC coefficients, by the bits of their positions */
	nonzero &= ~(u64)1;
	while (nonzero) {
		k = __builtin_ctzll(nonzero);
		nonzero &= nonzero - 1;
		run = k - last - 1;
		while (run > 15) {
			put_bits(e, e->ac[t].code[0xf0], e->ac[t].len[0xf0]);
			run -= 16;
		}
		v = zz[k];
		a = v < 0 ? -v : v;
		n = 32 - __builtin_clz(a);
		put_bits(e, ((u32)e->ac[t].code[(run << 4) | n] << n) |
			 ((v < 0 ? v - 1 : v) & ((1u << n) - 1)),
			 e->ac[t].len[(run << 4) | n] + n);
		last = k;
	}
	if (last != 63)
		put_bits(e, e->ac[t].code[0], e->ac[t].len[0]);
}

/*
 * A luma block of a partial MCU wholly outside the picture, as libjpeg
 * codes one (jccoefct.c's dummy blocks): no AC coefficients and the DC of
 * the block coded before it (to its left, or for the bottom row the
 * MCU's top right), a difference of 0.
 */
static void encode_dummy(struct enc *e)
{
	put_bits(e, e->dc[0].code[0], e->dc[0].len[0]);
	put_bits(e, e->ac[0].code[0], e->ac[0].len[0]);
}

static void put_dht(struct enc *e, int cls, int id, const u8 *bits,
		    const u8 *val)
{
	int n = 0, i;

	for (i = 0; i < 16; i++)
		n += bits[i];
	put16(e, 0xffc4);
	put16(e, 2 + 1 + 16 + n);
	put8(e, (cls << 4) | id);
	for (i = 0; i < 16; i++)
		put8(e, bits[i]);
	for (i = 0; i < n; i++)
		put8(e, val[i]);
}

static void write_headers(struct enc *e, const struct dv_jpege_params *p)
{
	static const u8 jfif[] = { 'J', 'F', 'I', 'F', 0, 1, 1, 0, 0, 1, 0, 1,
				   0, 0 };
	int i, t;

	put16(e, 0xffd8);
	put16(e, 0xffe0);
	put16(e, 16);
	for (i = 0; i < (int)sizeof(jfif); i++)
		put8(e, jfif[i]);
	for (t = 0; t < 2; t++) {
		put16(e, 0xffdb);
		put16(e, 67);
		put8(e, t);
		for (i = 0; i < 64; i++)
			put8(e, e->q[t][zigzag[i]]);
	}
	put16(e, 0xffc0);
	put16(e, 17);
	put8(e, 8);
	put16(e, p->height);
	put16(e, p->width);
	put8(e, 3);
	put8(e, 1);
	put8(e, 0x22);
	put8(e, 0);
	put8(e, 2);
	put8(e, 0x11);
	put8(e, 1);
	put8(e, 3);
	put8(e, 0x11);
	put8(e, 1);
	put_dht(e, 0, 0, dc_lum_bits, dc_lum_val);
	put_dht(e, 1, 0, ac_lum_bits, ac_lum_val);
	put_dht(e, 0, 1, dc_chr_bits, dc_chr_val);
	put_dht(e, 1, 1, ac_chr_bits, ac_chr_val);
	put16(e, 0xffda);
	put16(e, 12);
	put8(e, 3);
	put8(e, 1);
	put8(e, 0x00);
	put8(e, 2);
	put8(e, 0x11);
	put8(e, 3);
	put8(e, 0x11);
	put8(e, 0);
	put8(e, 63);
	put8(e, 0);
}

/*
 * The file's size for any picture of @p's size, a true worst case:
 *   625 bytes of markers (SOI 2, APP0 18, two DQT 138, SOF0 19, four DHT
 *   432, SOS 14, EOI 2)
 * + 2 * ceil((6 * mcus * 1665 + 7) / 8) bytes of entropy-coded data:
 *   an 8x8 block is at most 1665 bits: its DC difference (category 11
 *   at most: a code of <= 16 bits and 11 bits of magnitude) and each of
 *   its 63 AC positions 16 + 10 bits (a nonzero coefficient's code and
 *   at most 10 magnitude bits; a zero one costs nothing but the ZRL of a
 *   run of 16 or the EOB ending the block, codes of <= 16 bits standing
 *   for at least one such position); 6 blocks a 4:2:0 MCU, up to 7 bits
 *   of padding at the end; every 0xFF byte is followed by a stuffed 0x00,
 *   which at most doubles the bytes.
 * About 2.5 KB a 16x16 MCU (NUMERICS.md, JPEGE).
 */
#define JE_MARKER_BYTES 625
#define JE_BLOCK_BITS (16 + 11 + 63 * (16 + 10))

u64 dv_jpege_predict_size(const struct dv_jpege_params *p)
{
	u64 mcus = (u64)((p->width + 15) / 16) * ((p->height + 15) / 16);

	return JE_MARKER_BYTES + 2 * ((mcus * 6 * JE_BLOCK_BITS + 7 + 7) / 8);
}

static int check(const struct dv_jpege_params *p, u64 pic_size)
{
	if (!p->width || !p->height || p->width > DV_JPEGE_MAX_DIM ||
	    p->height > DV_JPEGE_MAX_DIM)
		return -EINVAL;
	if (p->width_stride % DV_JPEGE_WIDTH_ALIGN ||
	    p->height_stride % DV_JPEGE_HEIGHT_ALIGN ||
	    p->width_stride < p->width || p->height_stride < p->height)
		return -EINVAL;
	if (p->quality < 1 || p->quality > 100)
		return -EINVAL;
	if (pic_size < (u64)p->width_stride * p->height_stride * 3 / 2)
		return -EINVAL;
	return 0;
}

/*
 * The 8x8 block at (@bx, @by) of a plane whose samples are @step bytes
 * apart in rows of @stride bytes, less 128; past the last column @w1 and
 * row @h1 the edge sample repeats (libjpeg's edge expansion).
 */
static void load_block(s32 *blk, const u8 *plane, u32 stride, u32 step,
		       u32 bx, u32 by, u32 w1, u32 h1)
{
	const u8 *row;
	u32 x, y, sx, sy;

	if (bx + 7 <= w1 && by + 7 <= h1) {	/* inside: no edge */
		row = plane + (u64)by * stride + (u64)bx * step;
		for (y = 0; y < 8; y++, row += stride)
			for (x = 0; x < 8; x++)
				blk[y * 8 + x] = row[x * step] - 128;
		return;
	}
	for (y = 0; y < 8; y++) {
		sy = by + y > h1 ? h1 : by + y;
		row = plane + (u64)sy * stride;
		for (x = 0; x < 8; x++) {
			sx = bx + x > w1 ? w1 : bx + x;
			blk[y * 8 + x] = row[(u64)sx * step] - 128;
		}
	}
}

/* The MCU at (@mx, @my): four luma blocks, then Cb and Cr. */
static void encode_mcu(struct enc *e, const struct dv_jpege_params *p,
		       const u8 *pic, u32 mx, u32 my)
{
	const u8 *uv = pic + (u64)p->width_stride * p->height_stride;
	u32 w1 = p->width - 1, h1 = p->height - 1;
	u32 cw1 = (p->width + 1) / 2 - 1, ch1 = (p->height + 1) / 2 - 1;
	u32 b, bx, by;
	int c;

	for (b = 0; b < 4; b++) {
		by = my * 16 + (b >> 1) * 8;
		bx = mx * 16 + (b & 1) * 8;
		if (bx > w1 || by > h1) {
			encode_dummy(e);
			continue;
		}
		load_block(e->blk, pic, p->width_stride, 1, bx, by, w1, h1);
		encode_block(e, e->blk, 0, 0);
	}
	for (c = 0; c < 2; c++) {
		load_block(e->blk, uv + (p->nv21 ? 1 - c : c), p->width_stride,
			   2, mx * 8, my * 8, cw1, ch1);
		encode_block(e, e->blk, 1, c + 1);
	}
}

int dv_jpege_encode(const struct dv_jpege_params *p, const u8 *pic,
		    u64 pic_size, u8 *out, u64 cap, void *scratch,
		    size_t scratch_size, u64 *written)
{
	struct enc *e = scratch;
	int r = check(p, pic_size), b;
	u32 mx, my;

	if (r)
		return r;
	if (!scratch || scratch_size < sizeof(*e) ||
	    (uintptr_t)scratch % 8)
		return -EINVAL;
	memset(e, 0, sizeof(*e));
	e->out = out;
	e->cap = cap;
	scale_q(e->q[0], std_lum_q, p->quality);
	scale_q(e->q[1], std_chr_q, p->quality);
	for (b = 0; b < 128; b++)
		e->rq[b >> 6][b & 63] = 0xffffffffu /
					((u32)e->q[b >> 6][b & 63] << 3) + 1;
	build_huff(&e->dc[0], dc_lum_bits, dc_lum_val);
	build_huff(&e->ac[0], ac_lum_bits, ac_lum_val);
	build_huff(&e->dc[1], dc_chr_bits, dc_chr_val);
	build_huff(&e->ac[1], ac_chr_bits, ac_chr_val);
	write_headers(e, p);
	for (my = 0; my < (p->height + 15) / 16 && !e->full; my++)
		for (mx = 0; mx < (p->width + 15) / 16; mx++)
			encode_mcu(e, p, pic, mx, my);
	if (e->nbits)
		put_bits(e, 0x7f, 8 - e->nbits);
	put16(e, 0xffd9);
	if (e->full)
		return -ENOSPC;
	*written = e->pos;
	return 0;
}
