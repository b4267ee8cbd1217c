// SPDX-License-Identifier: GPL-2.0
/*
 * jpegd.c - the JPEG decoder of the DVPP JPEGD engine (jpegd.h): ITU-T
 * T.81 Huffman-coded sequential and progressive JPEG, 8-bit, to NV12.
 *
 * Integer code only. The inverse DCT is libjpeg's "islow" (jidctint.c,
 * the Loeffler-Ligtenberg-Moschytz algorithm with 13-bit constants, two
 * passes, 64-bit intermediates, NUMERICS.md "JPEGD"): its rounding is
 * libjpeg-turbo's default, so on the files an encoder writes the samples
 * are those libjpeg-turbo decodes, bit for bit.
 *
 * Flow: dv_jpegd_parse() walks the markers up to the first scan. A
 * sequential file whose first scan carries every component is decoded in
 * one pass, an MCU row of coefficients at a time, each row turned into
 * samples and written out before the next ("streaming"); a progressive
 * file, or a sequential one with a scan per component, keeps every
 * coefficient of the picture in the scratch buffer until EOI, then writes
 * the picture out an MCU row at a time the same way.
 *
 * Hostile input: every segment length is checked against the data and
 * its marker's own rule; the bit reader never reads past the end of the
 * data or across a marker (it supplies zero bits there, and a scan that
 * consumes any of them is truncated: -EINVAL); Huffman tables must be
 * complete prefix codes without the all-ones code; a run of coefficients
 * past the end of a block, a progressive scan that refines bits never
 * sent, a restart marker out of sequence: -EINVAL.
 */
#include "jpegd.h"

#define JD_LOOKAHEAD 9
#define JD_NCOMP 3

/* the zig-zag order: k-th coefficient of a block's scan -> its position */
static const u8 jd_natural[64] = {
	0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5,
	12, 19, 26, 33, 40, 48, 41, 34, 27, 20, 13, 6, 7, 14, 21, 28,
	35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51,
	58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63,
};

/* markers (T.81 table B.1) */
enum {
	M_SOF0 = 0xc0, M_SOF1 = 0xc1, M_SOF2 = 0xc2, M_DHT = 0xc4,
	M_JPG = 0xc8, M_DAC = 0xcc, M_RST0 = 0xd0, M_RST7 = 0xd7,
	M_SOI = 0xd8, M_EOI = 0xd9, M_SOS = 0xda, M_DQT = 0xdb,
	M_DNL = 0xdc, M_DRI = 0xdd, M_DHP = 0xde, M_EXP = 0xdf,
	M_APP0 = 0xe0, M_APP15 = 0xef, M_JPG0 = 0xf0, M_JPG13 = 0xfd,
	M_COM = 0xfe,
};

/* a component as the frame header and the scans declare it */
struct jd_hcomp {
	u8 id, h, v, tq;	/* identifier, sampling factors, quant table */
	u8 td, ta;		/* Huffman tables of the current scan */
	bool latched;		/* its quant table is fixed (first scan) */
	bool coded;		/* sequential: its scan has come */
	u32 width, height;	/* samples */
	u32 cw, ch;		/* blocks holding samples */
	u32 bw, bh;		/* blocks of the MCU grid */
};

/* the headers: small, so that dv_jpegd_parse() keeps it on the stack */
struct jd_hdr {
	const u8 *data;
	size_t size, pos;
	u32 max_dim;
	u32 width, height, ncomp;
	u32 hmax, vmax, mcus_x, mcus_y;
	u32 ri;			/* restart interval (DRI) */
	u8 sof;			/* the SOF marker, 0 before it */
	u8 qt_defined;		/* bit per quant table */
	u8 huff_defined;	/* bit per (class * 4 + id) */
	u32 scans;
	u32 first_ns;		/* components of the first scan */
	/* the current scan */
	u32 ns, scan_ri;
	u8 scomp[JD_NCOMP];	/* its components' indices */
	u8 ss, se, ah, al;
	struct jd_hcomp comp[JD_NCOMP];
	/* progressive: each coefficient's last Al, -1 before its first scan */
	s8 bits[JD_NCOMP][64];
};

struct jd_huff {
	u16 look[1 << JD_LOOKAHEAD];	/* (length << 8) | symbol, 0: longer */
	/*
	 * AC tables: (value << 16) | (run << 8) | bits, when a code and its
	 * value bits fit in the lookahead (0: decode the symbol)
	 */
	s32 fast[1 << JD_LOOKAHEAD];
	s32 maxcode[17];		/* largest code of each length, -1 none */
	s32 valoff[17];			/* symbol index - code, per length */
	u8 val[256];
};

struct jd_bits {
	const u8 *p, *end;
	u64 acc;		/* bits, most significant first */
	int nbits;		/* valid bits in acc */
	int zeros;		/* of them, the zero bits past the data */
};

struct jd_comp {
	s16 *coef;
	u8 *band;		/* 8 * v rows of bw * 8 samples */
	u16 q[64];		/* latched quant table, natural order */
	s32 pred;		/* DC predictor */
};

/* the decoder's state, at the start of the scratch buffer */
struct jd {
	struct jd_hdr h;
	struct jd_huff huff[2][4];
	u16 qt[4][64];
	struct jd_comp c[JD_NCOMP];
	struct jd_bits br;
	u32 eobrun;
	bool streaming;
	bool planes;		/* dv_jpegd_decode_planes() */
	u8 *out;
	u32 ws, hs;
};

static inline u32 jd_min(u32 a, u32 b)
{
	return a < b ? a : b;
}

static inline u32 jd_div_up(u32 a, u32 b)
{
	return (a + b - 1) / b;
}

static inline u64 jd_align64(u64 x)
{
	return (x + 63) & ~63ULL;
}

static inline u32 jd_be16(const u8 *p)
{
	return (u32)p[0] << 8 | p[1];
}

/* ------------------------------------------------------------------ */
/* markers and segments */

/* The marker at h->pos (fill bytes 0xff before it allowed). */
static int jd_marker(struct jd_hdr *h, u8 *m)
{
	if (h->pos >= h->size || h->data[h->pos] != 0xff)
		return -EINVAL;
	while (h->pos < h->size && h->data[h->pos] == 0xff)
		h->pos++;
	if (h->pos >= h->size)
		return -EINVAL;
	*m = h->data[h->pos++];
	return 0;
}

/* A segment's body: [*seg, *seg + *len), h->pos moved past it. */
static int jd_segment(struct jd_hdr *h, const u8 **seg, u32 *len)
{
	u32 l;

	if (h->size - h->pos < 2)
		return -EINVAL;
	l = jd_be16(h->data + h->pos);
	if (l < 2 || l > h->size - h->pos)
		return -EINVAL;
	*seg = h->data + h->pos + 2;
	*len = l - 2;
	h->pos += l;
	return 0;
}

/*
 * Check the code lengths @counts (T.81 annex C) and, when @t is set,
 * build the table from them and @vals: codes assigned in order of
 * length, none may be all ones (libjpeg's rule too).
 */
static int jd_huff_build(struct jd_huff *t, const u8 *counts, const u8 *vals)
{
	u32 code = 0, p = 0, l, i, j;

	if (t)
		memset(t->look, 0, sizeof(t->look));
	for (l = 1; l <= 16; l++) {
		if (t) {
			t->valoff[l] = (s32)p - (s32)code;
			t->maxcode[l] = counts[l - 1] ?
				(s32)(code + counts[l - 1] - 1) : -1;
		}
		if (code + counts[l - 1] >= (1U << l))
			return -EINVAL;
		for (i = 0; i < counts[l - 1]; i++, p++, code++) {
			if (!t || l > JD_LOOKAHEAD)
				continue;
			for (j = 0; j < 1U << (JD_LOOKAHEAD - l); j++)
				t->look[(code << (JD_LOOKAHEAD - l)) | j] =
					(u16)(l << 8 | vals[p]);
		}
		code <<= 1;
	}
	if (t)
		memcpy(t->val, vals, p);
	return 0;
}

/* An AC table's fast entries: a whole (run, value) in the lookahead. */
static void jd_huff_fast(struct jd_huff *t)
{
	u32 i, l, rs, s, v;

	for (i = 0; i < 1U << JD_LOOKAHEAD; i++) {
		t->fast[i] = 0;
		l = t->look[i] >> 8;
		rs = t->look[i] & 0xff;
		s = rs & 15;
		if (!l || !s || l + s > JD_LOOKAHEAD)
			continue;
		v = (i >> (JD_LOOKAHEAD - l - s)) & ((1U << s) - 1);
		v = (u32)(v < (1U << (s - 1)) ? (s32)v - (s32)(1U << s) + 1 :
			  (s32)v);
		t->fast[i] = (s32)(v * 65536) | (rs >> 4) << 8 | (l + s);
	}
}

static int jd_dht(struct jd_hdr *h, struct jd *d, const u8 *s, u32 len)
{
	u32 i, total, tc, th;
	int ret;

	while (len) {
		if (len < 17)
			return -EINVAL;
		tc = s[0] >> 4;
		th = s[0] & 15;
		if (tc > 1 || th > 3)
			return -EINVAL;
		for (i = 0, total = 0; i < 16; i++)
			total += s[1 + i];
		if (total > 256 || total > len - 17)
			return -EINVAL;
		ret = jd_huff_build(d ? &d->huff[tc][th] : NULL, s + 1, s + 17);
		if (ret)
			return ret;
		if (d && tc)
			jd_huff_fast(&d->huff[tc][th]);
		h->huff_defined |= 1U << (tc * 4 + th);
		s += 17 + total;
		len -= 17 + total;
	}
	return 0;
}

static int jd_dqt(struct jd_hdr *h, struct jd *d, const u8 *s, u32 len)
{
	u32 pq, tq, i, n;

	while (len) {
		pq = s[0] >> 4;
		tq = s[0] & 15;
		if (pq > 1 || tq > 3)
			return -EINVAL;
		n = 1 + 64 * (pq + 1);
		if (len < n)
			return -EINVAL;
		for (i = 0; d && i < 64; i++)
			d->qt[tq][jd_natural[i]] = pq ? jd_be16(s + 1 + 2 * i) :
						   s[1 + i];
		h->qt_defined |= 1U << tq;
		s += n;
		len -= n;
	}
	return 0;
}

/* The sampling this decoder takes: luma at the largest factors, chroma at 1/1 or 1/2. */
static int jd_sampling(struct jd_hdr *h)
{
	const struct jd_hcomp *y = &h->comp[0], *cb = &h->comp[1];
	const struct jd_hcomp *cr = &h->comp[2];

	if (h->ncomp == 1)
		return 0;
	if (y->h != h->hmax || y->v != h->vmax || cb->h != cr->h ||
	    cb->v != cr->v)
		return -EOPNOTSUPP;
	if ((y->h != cb->h && y->h != 2 * cb->h) ||
	    (y->v != cb->v && y->v != 2 * cb->v))
		return -EOPNOTSUPP;
	return 0;
}

static int jd_sof(struct jd_hdr *h, u8 marker, const u8 *s, u32 len)
{
	u32 i, j, nf;
	struct jd_hcomp *c;

	if (h->sof || len < 6)
		return -EINVAL;
	nf = s[5];
	if (!nf || len != 6 + 3 * nf)
		return -EINVAL;
	if (s[0] != 8)
		return -EOPNOTSUPP;	/* 12-bit */
	h->height = jd_be16(s + 1);
	h->width = jd_be16(s + 3);
	if (!h->width)
		return -EINVAL;
	if (!h->height || (nf != 1 && nf != 3))
		return -EOPNOTSUPP;	/* DNL; 2 or 4 components */
	if (h->width > h->max_dim || h->height > h->max_dim)
		return -E2BIG;
	h->sof = marker;
	h->ncomp = nf;
	h->hmax = 1;
	h->vmax = 1;
	for (i = 0; i < nf; i++) {
		c = &h->comp[i];
		c->id = s[6 + 3 * i];
		c->h = s[7 + 3 * i] >> 4;
		c->v = s[7 + 3 * i] & 15;
		c->tq = s[8 + 3 * i];
		if (c->h < 1 || c->h > 4 || c->v < 1 || c->v > 4 || c->tq > 3)
			return -EINVAL;
		for (j = 0; j < i; j++)
			if (h->comp[j].id == c->id)
				return -EINVAL;
		/* one component: its factors do not shape anything */
		if (nf == 1) {
			c->h = 1;
			c->v = 1;
		}
		if (c->h > h->hmax)
			h->hmax = c->h;
		if (c->v > h->vmax)
			h->vmax = c->v;
	}
	h->mcus_x = jd_div_up(h->width, 8 * h->hmax);
	h->mcus_y = jd_div_up(h->height, 8 * h->vmax);
	for (i = 0; i < nf; i++) {
		c = &h->comp[i];
		c->width = jd_div_up(h->width * c->h, h->hmax);
		c->height = jd_div_up(h->height * c->v, h->vmax);
		c->cw = jd_div_up(c->width, 8);
		c->ch = jd_div_up(c->height, 8);
		c->bw = h->mcus_x * c->h;
		c->bh = h->mcus_y * c->v;
	}
	memset(h->bits, -1, sizeof(h->bits));
	return jd_sampling(h);
}

/* A progressive scan's parameters and its place in the progression. */
static int jd_sos_progressive(struct jd_hdr *h)
{
	u32 i, k, ci;
	s8 *bits;

	if (h->ss == 0 ? h->se != 0 : (h->se < h->ss || h->se > 63 ||
				       h->ns != 1))
		return -EINVAL;
	if ((h->ah && h->al != h->ah - 1) || h->al > 13)
		return -EINVAL;
	for (i = 0; i < h->ns; i++) {
		ci = h->scomp[i];
		bits = h->bits[ci];
		if (h->ss && bits[0] < 0)
			return -EINVAL;	/* AC before the DC scan */
		for (k = h->ss; k <= h->se; k++) {
			if (h->ah != (bits[k] < 0 ? 0 : bits[k]))
				return -EINVAL;
			bits[k] = (s8)h->al;
		}
		if ((h->ss ? !(h->huff_defined & 1U << (4 + h->comp[ci].ta)) :
		     (!h->ah && !(h->huff_defined & 1U << h->comp[ci].td))))
			return -EINVAL;
	}
	return 0;
}

static int jd_sos(struct jd_hdr *h, struct jd *d, const u8 *s, u32 len)
{
	u32 i, ci, blocks = 0;
	int prev = -1;
	struct jd_hcomp *c;

	if (!h->sof || len < 1)
		return -EINVAL;
	h->ns = s[0];
	if (h->ns < 1 || h->ns > h->ncomp || len != 4 + 2 * h->ns)
		return -EINVAL;
	for (i = 0; i < h->ns; i++) {
		for (ci = 0; ci < h->ncomp; ci++)
			if (h->comp[ci].id == s[1 + 2 * i])
				break;
		/* in the frame header's order, each once */
		if (ci == h->ncomp || (int)ci <= prev)
			return -EINVAL;
		prev = ci;
		c = &h->comp[ci];
		c->td = s[2 + 2 * i] >> 4;
		c->ta = s[2 + 2 * i] & 15;
		if (c->td > 3 || c->ta > 3)
			return -EINVAL;
		h->scomp[i] = (u8)ci;
		blocks += c->h * c->v;
		if (!c->latched) {
			if (!(h->qt_defined & 1U << c->tq))
				return -EINVAL;
			c->latched = true;
			if (d)
				memcpy(d->c[ci].q, d->qt[c->tq],
				       sizeof(d->c[ci].q));
		}
	}
	if (h->ns > 1 && blocks > 10)
		return -EINVAL;
	s += 1 + 2 * h->ns;
	h->ss = s[0];
	h->se = s[1];
	h->ah = s[2] >> 4;
	h->al = s[2] & 15;
	h->scan_ri = h->ri;
	if (!h->scans++)
		h->first_ns = h->ns;
	if (h->sof == M_SOF2)
		return jd_sos_progressive(h);
	if (h->ss != 0 || h->se != 63 || h->ah || h->al)
		return -EINVAL;
	for (i = 0; i < h->ns; i++) {
		c = &h->comp[h->scomp[i]];
		if (c->coded || !(h->huff_defined & 1U << c->td) ||
		    !(h->huff_defined & 1U << (4 + c->ta)))
			return -EINVAL;
		c->coded = true;
	}
	return 0;
}

/*
 * The markers from h->pos to the next scan (1, h->pos at its entropy-
 * coded data) or EOI (0). @d: where the tables go; NULL only checks.
 */
static int jd_headers(struct jd_hdr *h, struct jd *d)
{
	const u8 *s;
	u32 len;
	u8 m;
	int ret;

	for (;;) {
		ret = jd_marker(h, &m);
		if (ret)
			return ret;
		if (m == M_EOI)
			return h->scans ? 0 : -EINVAL;
		if ((m >= M_RST0 && m <= M_RST7) || m == M_SOI || m < M_SOF0)
			return -EINVAL;	/* RSTn, TEM, reserved */
		ret = jd_segment(h, &s, &len);
		if (ret)
			return ret;
		switch (m) {
		case M_SOF0:
		case M_SOF1:
		case M_SOF2:
			ret = jd_sof(h, m, s, len);
			break;
		case M_DHT:
			ret = jd_dht(h, d, s, len);
			break;
		case M_DQT:
			ret = jd_dqt(h, d, s, len);
			break;
		case M_DRI:
			if (len != 2)
				return -EINVAL;
			h->ri = jd_be16(s);
			break;
		case M_SOS:
			ret = jd_sos(h, d, s, len);
			return ret ? ret : 1;
		case M_COM:
			break;
		default:
			if (m >= M_APP0 && m <= M_APP15)
				break;
			/*
			 * SOF3 and SOF5..15 (lossless, hierarchical,
			 * arithmetic), DAC, DNL, DHP, EXP, JPG, JPGn
			 */
			return -EOPNOTSUPP;
		}
		if (ret)
			return ret;
	}
}

static int jd_start(struct jd_hdr *h, const void *data, size_t size,
		    u32 max_dim)
{
	memset(h, 0, sizeof(*h));
	h->data = data;
	h->size = size;
	h->max_dim = max_dim ? max_dim : DV_JPEGD_MAX_DIM;
	if (size < 2 || h->data[0] != 0xff || h->data[1] != M_SOI)
		return -EINVAL;
	h->pos = 2;
	return 0;
}

/* Decoding one MCU row at a time: a sequential file's first scan has every component. */
static bool jd_streams(const struct jd_hdr *h)
{
	return h->sof != M_SOF2 && h->first_ns == h->ncomp;
}

static u64 jd_scratch_layout(const struct jd_hdr *h, u64 *coef, u64 *band)
{
	u64 off = jd_align64(sizeof(struct jd));
	u32 i;

	for (i = 0; i < h->ncomp; i++) {
		const struct jd_hcomp *c = &h->comp[i];
		u64 rows = jd_streams(h) ? c->v : c->bh;

		if (coef)
			coef[i] = off;
		off += jd_align64((u64)c->bw * rows * 64 * sizeof(s16));
	}
	for (i = 0; i < h->ncomp; i++) {
		const struct jd_hcomp *c = &h->comp[i];

		if (band)
			band[i] = off;
		off += jd_align64((u64)c->bw * 8 * 8 * c->v);
	}
	return off + 63;	/* for aligning the buffer's start */
}

int dv_jpegd_parse(const void *data, size_t size, u32 max_dim,
		   struct dv_jpegd_info *info)
{
	static const u8 sub[3][3] = {
		[1][1] = DV_JPEGD_444, [2][1] = DV_JPEGD_422,
		[2][2] = DV_JPEGD_420, [1][2] = DV_JPEGD_440,
	};
	struct jd_hdr h;
	int ret;

	ret = jd_start(&h, data, size, max_dim);
	if (ret)
		return ret;
	ret = jd_headers(&h, NULL);
	if (ret <= 0)
		return ret ? ret : -EINVAL;
	memset(info, 0, sizeof(*info));
	info->width = h.width;
	info->height = h.height;
	info->components = h.ncomp;
	info->subsampling = h.ncomp == 1 ? DV_JPEGD_GREY :
		sub[h.hmax / h.comp[1].h][h.vmax / h.comp[1].v];
	info->progressive = h.sof == M_SOF2;
	info->restart_interval = h.scan_ri;
	info->width_stride = (h.width + DV_JPEGD_WIDTH_ALIGN - 1) &
			     ~(DV_JPEGD_WIDTH_ALIGN - 1);
	info->height_stride = (h.height + DV_JPEGD_HEIGHT_ALIGN - 1) &
			      ~(DV_JPEGD_HEIGHT_ALIGN - 1);
	info->out_size = (u64)info->width_stride * info->height_stride * 3 / 2;
	info->scratch_size = jd_scratch_layout(&h, NULL, NULL);
	return 0;
}

/* ------------------------------------------------------------------ */
/* entropy-coded data */

/* Top up @b to more than 56 bits; zero bits past the data or a marker. */
static void jd_fill(struct jd_bits *b)
{
	u32 c;

	/* the common case: no 0xff among the next bytes, 8 of them left */
	if (b->end - b->p >= 8) {
		while (b->nbits <= 56 && b->p[0] != 0xff) {
			b->acc |= (u64)*b->p++ << (56 - b->nbits);
			b->nbits += 8;
		}
	}
	while (b->nbits <= 56) {
		if (b->p < b->end && (b->p[0] != 0xff ||
				      (b->end - b->p >= 2 && b->p[1] == 0))) {
			c = b->p[0];
			b->p += c == 0xff ? 2 : 1;
			b->acc |= (u64)c << (56 - b->nbits);
		} else {
			b->zeros += 8;
		}
		b->nbits += 8;
	}
}

/* The next @n bits (1..16): at least @n must be buffered. */
static inline u32 jd_get(struct jd_bits *b, int n)
{
	u32 v = (u32)(b->acc >> (64 - n));

	b->acc <<= n;
	b->nbits -= n;
	return v;
}

/* T.81 F.2.2.1 EXTEND: @v's @s bits as a signed value (@s >= 1) */
static inline s32 jd_extend(u32 v, int s)
{
	return v < (1U << (s - 1)) ? (s32)v - (s32)(1U << s) + 1 : (s32)v;
}

/* One Huffman symbol; at least 16 bits must be buffered. */
static inline int jd_decode(struct jd_bits *b, const struct jd_huff *t)
{
	u32 look = t->look[b->acc >> (64 - JD_LOOKAHEAD)], code;
	int l;

	if (look) {
		b->acc <<= look >> 8;
		b->nbits -= look >> 8;
		return look & 0xff;
	}
	for (l = JD_LOOKAHEAD + 1; l <= 16; l++) {
		code = (u32)(b->acc >> (64 - l));
		if ((s32)code <= t->maxcode[l]) {
			b->acc <<= l;
			b->nbits -= l;
			return t->val[code + t->valoff[l]];
		}
	}
	return -EINVAL;
}

static inline void jd_need(struct jd_bits *b)
{
	/* a symbol (<= 16 bits) and its value bits (<= 16) */
	if (b->nbits < 32)
		jd_fill(b);
}

/* A sequential scan's block: DC difference, then run-length ACs. */
static int jd_block_seq(struct jd *d, u32 ci, s16 *blk)
{
	const struct jd_hcomp *hc = &d->h.comp[ci];
	const struct jd_huff *dc = &d->huff[0][hc->td];
	const struct jd_huff *ac = &d->huff[1][hc->ta];
	struct jd_bits *b = &d->br;
	struct jd_comp *c = &d->c[ci];
	int s, r, k;

	jd_need(b);
	s = jd_decode(b, dc);
	if (s < 0 || s > 15)
		return -EINVAL;
	if (s)
		s = jd_extend(jd_get(b, s), s);
	/* the predictor wraps as libjpeg's 16-bit coefficients do */
	c->pred = (s16)(c->pred + s);
	blk[0] = (s16)c->pred;
	for (k = 1; k < 64; k++) {
		s32 f;

		jd_need(b);
		f = ac->fast[b->acc >> (64 - JD_LOOKAHEAD)];
		if (f) {
			k += (f >> 8) & 15;
			if (k > 63)
				return -EINVAL;
			b->acc <<= f & 0xff;
			b->nbits -= f & 0xff;
			blk[jd_natural[k]] = (s16)(f >> 16);
			continue;
		}
		s = jd_decode(b, ac);
		if (s < 0)
			return s;
		r = s >> 4;
		s &= 15;
		if (s) {
			k += r;
			if (k > 63)
				return -EINVAL;
			blk[jd_natural[k]] = (s16)jd_extend(jd_get(b, s), s);
		} else if (r == 15) {
			k += 15;
		} else {
			break;
		}
	}
	return 0;
}

static int jd_block_dc_first(struct jd *d, u32 ci, s16 *blk)
{
	const struct jd_huff *dc = &d->huff[0][d->h.comp[ci].td];
	struct jd_bits *b = &d->br;
	struct jd_comp *c = &d->c[ci];
	int s;

	jd_need(b);
	s = jd_decode(b, dc);
	if (s < 0 || s > 15)
		return -EINVAL;
	if (s)
		s = jd_extend(jd_get(b, s), s);
	c->pred = (s16)(c->pred + s);
	blk[0] = (s16)(c->pred * (1 << d->h.al));
	return 0;
}

static int jd_block_dc_refine(struct jd *d, s16 *blk)
{
	if (d->br.nbits < 1)
		jd_fill(&d->br);
	if (jd_get(&d->br, 1))
		blk[0] = (s16)(blk[0] | 1 << d->h.al);
	return 0;
}

static int jd_block_ac_first(struct jd *d, u32 ci, s16 *blk)
{
	const struct jd_huff *ac = &d->huff[1][d->h.comp[ci].ta];
	struct jd_bits *b = &d->br;
	int s, r, k;

	if (d->eobrun) {
		d->eobrun--;
		return 0;
	}
	for (k = d->h.ss; k <= d->h.se; k++) {
		jd_need(b);
		s = jd_decode(b, ac);
		if (s < 0)
			return s;
		r = s >> 4;
		s &= 15;
		if (s) {
			k += r;
			if (k > d->h.se)
				return -EINVAL;
			blk[jd_natural[k]] = (s16)(jd_extend(jd_get(b, s), s) *
						   (1 << d->h.al));
		} else if (r == 15) {
			k += 15;
		} else {
			/* EOBn: this block and 2^r + bits - 1 more end here */
			d->eobrun = 1U << r;
			if (r)
				d->eobrun += jd_get(b, r);
			d->eobrun--;
			break;
		}
	}
	return 0;
}

/* Give a nonzero coefficient its correction bit (T.81 G.1.2.3). */
static inline void jd_refine(struct jd_bits *b, s16 *coef, s32 p1)
{
	if (b->nbits < 1)
		jd_fill(b);
	if (jd_get(b, 1) && !(*coef & p1))
		*coef = (s16)(*coef >= 0 ? *coef + p1 : *coef - p1);
}

static int jd_block_ac_refine(struct jd *d, u32 ci, s16 *blk)
{
	const struct jd_huff *ac = &d->huff[1][d->h.comp[ci].ta];
	struct jd_bits *b = &d->br;
	s32 p1 = 1 << d->h.al, v;
	int s, r, k = d->h.ss, se = d->h.se;
	s16 *coef;

	for (; !d->eobrun && k <= se; k++) {
		jd_need(b);
		s = jd_decode(b, ac);
		if (s < 0)
			return s;
		r = s >> 4;
		s &= 15;
		v = 0;
		if (s) {
			if (s != 1)
				return -EINVAL;
			v = jd_get(b, 1) ? p1 : -p1;
		} else if (r != 15) {
			d->eobrun = 1U << r;
			if (r)
				d->eobrun += jd_get(b, r);
			break;
		}
		/*
		 * Skip r zero coefficients (the new one goes after them),
		 * refining the nonzero ones on the way.
		 */
		for (; k <= se; k++) {
			coef = &blk[jd_natural[k]];
			if (*coef)
				jd_refine(b, coef, p1);
			else if (--r < 0)
				break;
		}
		if (v) {
			if (k > se)
				return -EINVAL;
			blk[jd_natural[k]] = (s16)v;
		}
	}
	if (d->eobrun) {
		/* the band's rest: only refinement bits */
		for (; k <= se; k++) {
			coef = &blk[jd_natural[k]];
			if (*coef)
				jd_refine(b, coef, p1);
		}
		d->eobrun--;
	}
	return 0;
}

static int jd_block(struct jd *d, u32 ci, s16 *blk)
{
	const struct jd_hdr *h = &d->h;

	if (h->sof != M_SOF2)
		return jd_block_seq(d, ci, blk);
	if (h->ss == 0)
		return h->ah ? jd_block_dc_refine(d, blk) :
			       jd_block_dc_first(d, ci, blk);
	return h->ah ? jd_block_ac_refine(d, ci, blk) :
		       jd_block_ac_first(d, ci, blk);
}

/*
 * The next marker at or after @p: the 0xff that starts it (after fill
 * bytes), or NULL when the data ends first. Bytes of entropy-coded data
 * on the way are skipped, as libjpeg does (with a warning).
 */
static const u8 *jd_find_marker(const u8 *p, const u8 *end)
{
	const u8 *q;

	while (p < end) {
		if (*p != 0xff) {
			p++;
			continue;
		}
		for (q = p + 1; q < end && *q == 0xff; q++)
			;
		if (q == end)
			return NULL;
		if (*q)
			return p;
		p = q + 1;
	}
	return NULL;
}

static void jd_bits_at(struct jd_bits *b, const u8 *p, const u8 *end)
{
	b->p = p;
	b->end = end;
	b->acc = 0;
	b->nbits = 0;
	b->zeros = 0;
}

/* RSTn number @n must come next: then the coding starts afresh. */
static int jd_restart(struct jd *d, u32 n)
{
	const u8 *end = d->h.data + d->h.size;
	const u8 *m = jd_find_marker(d->br.p, end);
	u32 i;

	if (!m)
		return -EINVAL;
	while (*m == 0xff)
		m++;
	if (*m != M_RST0 + n)
		return -EINVAL;
	jd_bits_at(&d->br, m + 1, end);
	for (i = 0; i < JD_NCOMP; i++)
		d->c[i].pred = 0;
	d->eobrun = 0;
	return 0;
}

/* ------------------------------------------------------------------ */
/* samples */

#define JD_CONST_BITS 13
#define JD_PASS1_BITS 2
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

/* x / 2^n rounded half up (libjpeg's DESCALE; >> is arithmetic) */
#define JD_DESCALE(x, n) (((x) + (1LL << ((n) - 1))) >> (n))

static inline u8 jd_clamp(s64 v)
{
	v += 128;
	return v < 0 ? 0 : v > 255 ? 255 : (u8)v;
}

/*
 * One 1-D inverse DCT of in[0], in[st], .. in[7 st] into out[0..7],
 * libjpeg's jpeg_idct_islow() pass: even part, odd part, butterfly.
 * Results are scaled by 2^13 * 8 / sqrt(8)... before the caller's
 * descale.
 */
struct jd_idct1 {
	s64 o[8];
};

static inline void jd_idct_1d(s64 i0, s64 i1, s64 i2, s64 i3, s64 i4,
			      s64 i5, s64 i6, s64 i7, struct jd_idct1 *r)
{
	s64 z1, z2, z3, z4, z5, t0, t1, t2, t3, t10, t11, t12, t13;

	z1 = (i2 + i6) * FIX_0_541196100;
	t2 = z1 + i6 * -FIX_1_847759065;
	t3 = z1 + i2 * FIX_0_765366865;
	t0 = (i0 + i4) * (1 << JD_CONST_BITS);
	t1 = (i0 - i4) * (1 << JD_CONST_BITS);
	t10 = t0 + t3;
	t13 = t0 - t3;
	t11 = t1 + t2;
	t12 = t1 - t2;

	z1 = i7 + i1;
	z2 = i5 + i3;
	z3 = i7 + i3;
	z4 = i5 + i1;
	z5 = (z3 + z4) * FIX_1_175875602;
	t0 = i7 * FIX_0_298631336;
	t1 = i5 * FIX_2_053119869;
	t2 = i3 * FIX_3_072711026;
	t3 = i1 * FIX_1_501321110;
	z1 *= -FIX_0_899976223;
	z2 *= -FIX_2_562915447;
	z3 = z3 * -FIX_1_961570560 + z5;
	z4 = z4 * -FIX_0_390180644 + z5;
	t0 += z1 + z3;
	t1 += z2 + z4;
	t2 += z2 + z3;
	t3 += z1 + z4;

	r->o[0] = t10 + t3;
	r->o[7] = t10 - t3;
	r->o[1] = t11 + t2;
	r->o[6] = t11 - t2;
	r->o[2] = t12 + t1;
	r->o[5] = t12 - t1;
	r->o[3] = t13 + t0;
	r->o[4] = t13 - t0;
}

/* Block @blk dequantized by @q into 8 x 8 samples at @out, @stride apart. */
static void jd_idct(const s16 *blk, const u16 *q, u8 *out, u32 stride)
{
	s32 ws[64];
	struct jd_idct1 r;
	u32 i, j, ac = 0;
	s32 dc;

	for (i = 1; i < 64; i++)
		ac |= (u16)blk[i];
	if (!ac) {
		/* what both passes give a lone DC term */
		dc = (s32)blk[0] * q[0];
		memset(out, jd_clamp(JD_DESCALE((s64)dc * 4,
						JD_PASS1_BITS + 3)), 8);
		for (i = 1; i < 8; i++)
			memcpy(out + i * stride, out, 8);
		return;
	}
	/* columns */
	for (i = 0; i < 8; i++) {
		const s16 *c = blk + i;
		const u16 *qc = q + i;

		if (!(c[8] | c[16] | c[24] | c[32] | c[40] | c[48] | c[56])) {
			dc = (s32)((s64)c[0] * qc[0] * (1 << JD_PASS1_BITS));
			for (j = 0; j < 8; j++)
				ws[j * 8 + i] = dc;
			continue;
		}
		jd_idct_1d((s64)c[0] * qc[0], (s64)c[8] * qc[8],
				   (s64)c[16] * qc[16], (s64)c[24] * qc[24],
				   (s64)c[32] * qc[32], (s64)c[40] * qc[40],
				   (s64)c[48] * qc[48], (s64)c[56] * qc[56], &r);
		for (j = 0; j < 8; j++)
			ws[j * 8 + i] = (s32)JD_DESCALE(r.o[j], JD_CONST_BITS -
							JD_PASS1_BITS);
	}
	/* rows */
	for (i = 0; i < 8; i++, out += stride) {
		const s32 *w = ws + i * 8;

		if (!(w[1] | w[2] | w[3] | w[4] | w[5] | w[6] | w[7])) {
			memset(out, jd_clamp(JD_DESCALE((s64)w[0],
							JD_PASS1_BITS + 3)), 8);
			continue;
		}
		jd_idct_1d(w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7], &r);
		for (j = 0; j < 8; j++)
			out[j] = jd_clamp(JD_DESCALE(r.o[j], JD_CONST_BITS +
						     JD_PASS1_BITS + 3));
	}
}

/* Coefficients of component @ci's block (@brow, @bcol). */
static inline s16 *jd_coef(struct jd *d, u32 ci, u32 brow, u32 bcol)
{
	const struct jd_hcomp *c = &d->h.comp[ci];

	if (d->streaming)
		brow %= c->v;
	return d->c[ci].coef + ((u64)brow * c->bw + bcol) * 64;
}

/* Repeat the last @unit bytes before @row + @used up to @row + @stride. */
static void jd_pad_row(u8 *row, u32 used, u32 stride, u32 unit)
{
	u32 i;

	for (i = used; i < stride; i++)
		row[i] = row[i - unit];
}

/* Chroma row @i0/@i1 of the band (the rows an output row covers) into NV12's UV row. */
static void jd_emit_uv(struct jd *d, u8 *uv, u32 r0, u32 r1)
{
	const struct jd_hdr *h = &d->h;
	u32 rh = h->hmax / h->comp[1].h, rv = h->vmax / h->comp[1].v;
	u32 sw = h->comp[1].bw * 8, uw = (h->width + 1) / 2, i, k, i1;
	const u8 *a, *b;

	for (k = 0; k < 2; k++) {
		a = d->c[1 + k].band + (u64)r0 * sw;
		b = d->c[1 + k].band + (u64)r1 * sw;
		if (rh == 2 && rv == 2) {
			for (i = 0; i < uw; i++)
				uv[2 * i + k] = a[i];
		} else if (rh == 2) {
			for (i = 0; i < uw; i++)
				uv[2 * i + k] = (a[i] + b[i] + 1) >> 1;
		} else if (rv == 2) {
			for (i = 0; i < uw; i++) {
				i1 = jd_min(2 * i + 1, h->width - 1);
				uv[2 * i + k] = (a[2 * i] + a[i1] + 1) >> 1;
			}
		} else {
			for (i = 0; i < uw; i++) {
				i1 = jd_min(2 * i + 1, h->width - 1);
				uv[2 * i + k] = (a[2 * i] + a[i1] + b[2 * i] +
						 b[i1] + 2) >> 2;
			}
		}
	}
	jd_pad_row(uv, 2 * uw, d->ws, 2);
}

/* MCU row @band's samples into each component's plane (packed rows). */
static void jd_emit_planes(struct jd *d, u32 band)
{
	const struct jd_hdr *h = &d->h;
	u8 *plane = d->out;
	u32 ci, y, y0, y1;

	for (ci = 0; ci < h->ncomp; ci++) {
		const struct jd_hcomp *c = &h->comp[ci];

		y0 = band * 8 * c->v;
		y1 = jd_min(c->height, y0 + 8 * c->v);
		for (y = y0; y < y1; y++)
			memcpy(plane + (u64)y * c->width,
			       d->c[ci].band + (u64)(y - y0) * c->bw * 8,
			       c->width);
		plane += (u64)c->width * c->height;
	}
}

/* MCU row @band: its blocks to samples, its picture rows to the output. */
static void jd_emit_band(struct jd *d, u32 band)
{
	const struct jd_hdr *h = &d->h;
	u32 ci, by, bx, y, y0, y1, sw, r0, r1, rv;
	u8 *uv = d->out + (u64)d->ws * d->hs;

	for (ci = 0; ci < h->ncomp; ci++) {
		const struct jd_hcomp *c = &h->comp[ci];

		sw = c->bw * 8;
		for (by = 0; by < c->v && band * c->v + by < c->ch; by++)
			for (bx = 0; bx < c->cw; bx++)
				jd_idct(jd_coef(d, ci, band * c->v + by, bx),
					d->c[ci].q,
					d->c[ci].band + (u64)by * 8 * sw + bx * 8,
					sw);
	}
	if (d->planes) {
		jd_emit_planes(d, band);
		return;
	}
	y0 = band * 8 * h->vmax;
	y1 = jd_min(h->height, y0 + 8 * h->vmax);
	sw = h->comp[0].bw * 8;
	for (y = y0; y < y1; y++) {
		u8 *row = d->out + (u64)y * d->ws;

		memcpy(row, d->c[0].band + (u64)(y - y0) * sw, h->width);
		jd_pad_row(row, h->width, d->ws, 1);
	}
	for (y = y0; y < y1; y += 2) {
		u8 *row = uv + (u64)(y / 2) * d->ws;

		if (h->ncomp == 1) {
			memset(row, 128, d->ws);
			continue;
		}
		rv = h->vmax / h->comp[1].v;
		r0 = rv == 2 ? (y - y0) / 2 : y - y0;
		r1 = rv == 2 || y + 1 == h->height ? r0 : r0 + 1;
		jd_emit_uv(d, row, r0, r1);
	}
}

/* The rows below the picture: its last one again, in both planes. */
static void jd_pad_bottom(struct jd *d)
{
	u32 y, rows = (d->h.height + 1) / 2;
	u8 *uv = d->out + (u64)d->ws * d->hs;

	for (y = d->h.height; y < d->hs; y++)
		memcpy(d->out + (u64)y * d->ws,
		       d->out + (u64)(d->h.height - 1) * d->ws, d->ws);
	for (y = rows; y < d->hs / 2; y++)
		memcpy(uv + (u64)y * d->ws, uv + (u64)(rows - 1) * d->ws,
		       d->ws);
}

/* Zero the coefficients of MCU row @band (streaming). */
static void jd_clear_band(struct jd *d)
{
	u32 ci;

	for (ci = 0; ci < d->h.ncomp; ci++)
		memset(d->c[ci].coef, 0, (size_t)d->h.comp[ci].bw *
		       d->h.comp[ci].v * 64 * sizeof(s16));
}

/* The MCU at (@mx, @my) of the current scan. */
static int jd_mcu(struct jd *d, u32 mx, u32 my)
{
	const struct jd_hdr *h = &d->h;
	u32 i, ci, bx, by;
	int ret;

	if (h->ns == 1)
		return jd_block(d, h->scomp[0], jd_coef(d, h->scomp[0], my, mx));
	for (i = 0; i < h->ns; i++) {
		const struct jd_hcomp *c = &h->comp[h->scomp[i]];

		ci = h->scomp[i];
		for (by = 0; by < c->v; by++)
			for (bx = 0; bx < c->h; bx++) {
				ret = jd_block(d, ci,
					       jd_coef(d, ci, my * c->v + by,
						       mx * c->h + bx));
				if (ret)
					return ret;
			}
	}
	return 0;
}

/* The current scan's entropy-coded data, from h->pos to the next marker. */
static int jd_scan(struct jd *d)
{
	struct jd_hdr *h = &d->h;
	const u8 *end = h->data + h->size, *m;
	u32 ux, uy, mx, my, left = h->scan_ri, rst = 0, i;
	int ret;

	if (h->ns == 1) {
		ux = h->comp[h->scomp[0]].cw;
		uy = h->comp[h->scomp[0]].ch;
	} else {
		ux = h->mcus_x;
		uy = h->mcus_y;
	}
	jd_bits_at(&d->br, h->data + h->pos, end);
	for (i = 0; i < JD_NCOMP; i++)
		d->c[i].pred = 0;
	d->eobrun = 0;
	for (my = 0; my < uy; my++) {
		if (d->streaming)
			jd_clear_band(d);
		for (mx = 0; mx < ux; mx++) {
			if (h->scan_ri && !left) {
				ret = jd_restart(d, rst);
				if (ret)
					return ret;
				rst = (rst + 1) & 7;
				left = h->scan_ri;
			}
			ret = jd_mcu(d, mx, my);
			if (ret)
				return ret;
			/* bits past the data: truncated or corrupt */
			if (d->br.nbits < d->br.zeros)
				return -EINVAL;
			left--;
		}
		if (d->streaming)
			jd_emit_band(d, my);
	}
	m = jd_find_marker(d->br.p, end);
	if (!m)
		return -EINVAL;
	h->pos = m - h->data;
	return 0;
}

static void jd_layout(struct jd *d, u8 *base)
{
	u64 coef[JD_NCOMP], band[JD_NCOMP];
	u32 i;

	jd_scratch_layout(&d->h, coef, band);
	for (i = 0; i < d->h.ncomp; i++) {
		d->c[i].coef = (s16 *)(base + coef[i]);
		d->c[i].band = base + band[i];
	}
}

static int jd_decode_into(const void *data, size_t size, u32 max_dim,
			  bool planes, void *out, size_t out_size,
			  void *scratch, size_t scratch_size,
			  struct dv_jpegd_info *info)
{
	struct dv_jpegd_info in;
	u8 *base;
	struct jd *d;
	u32 i, band;
	int ret;

	ret = dv_jpegd_parse(data, size, max_dim, &in);
	if (ret)
		return ret;
	if (info)
		*info = in;
	if (out_size < (planes ? (u64)in.width * in.height * in.components :
			in.out_size) || scratch_size < in.scratch_size)
		return -ENOSPC;
	base = (u8 *)(((uintptr_t)scratch + 63) & ~(uintptr_t)63);
	d = (struct jd *)base;
	memset(d, 0, sizeof(*d));
	ret = jd_start(&d->h, data, size, max_dim);
	if (ret)
		return ret;
	d->planes = planes;
	d->out = out;
	d->ws = in.width_stride;
	d->hs = in.height_stride;
	for (;;) {
		ret = jd_headers(&d->h, d);
		if (ret <= 0)
			break;
		if (d->h.scans == 1) {
			d->streaming = jd_streams(&d->h);
			jd_layout(d, base);
			if (!d->streaming)
				for (i = 0; i < d->h.ncomp; i++)
					memset(d->c[i].coef, 0,
					       (size_t)d->h.comp[i].bw *
					       d->h.comp[i].bh * 64 *
					       sizeof(s16));
		}
		ret = jd_scan(d);
		if (ret)
			return ret;
	}
	if (ret)
		return ret;
	for (i = 0; i < d->h.ncomp; i++)
		if (d->h.sof == M_SOF2 ? d->h.bits[i][0] < 0 :
		    !d->h.comp[i].coded)
			return -EINVAL;	/* a component never coded */
	if (!d->streaming)
		for (band = 0; band < d->h.mcus_y; band++)
			jd_emit_band(d, band);
	if (!planes)
		jd_pad_bottom(d);
	return 0;
}

int dv_jpegd_decode(const void *data, size_t size, u32 max_dim,
		    void *out, size_t out_size, void *scratch,
		    size_t scratch_size, struct dv_jpegd_info *info)
{
	return jd_decode_into(data, size, max_dim, false, out, out_size,
			      scratch, scratch_size, info);
}

int dv_jpegd_decode_planes(const void *data, size_t size, u32 max_dim,
			   void *out, size_t out_size, void *scratch,
			   size_t scratch_size, struct dv_jpegd_info *info)
{
	return jd_decode_into(data, size, max_dim, true, out, out_size,
			      scratch, scratch_size, info);
}
