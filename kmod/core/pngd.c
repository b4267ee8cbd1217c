// SPDX-License-Identifier: GPL-2.0
/*
 * pngd.c - the PNG decoder of the DVPP PNGD engine (pngd.h).
 *
 * dv_pngd_parse() walks the chunks once, checking the order PNG requires
 * and each CRC-32 but the IDATs' (the bulk of the file, checked once, by
 * dv_pngd_decode() as it reads them). dv_pngd_decode() then inflates the
 * zlib stream the IDAT chunks carry (RFC 1950/1951: stored, fixed and
 * dynamic Huffman
 * blocks, canonical codes looked up 9 bits at a time and longer ones
 * decoded bit by bit as zlib's puff does, a 32 KiB window in the
 * scratch), and hands each byte to the row assembler, which
 * undoes each row's filter against the previous row of its pass and
 * writes the row's pixels at their places in the output (Adam7: the
 * pass's start and step). The whole picture is never held inflated: the
 * scratch is the window, the tables and two rows.
 */
#include "pngd.h"

#define PD_WINDOW 32768u
#define PD_MAXBITS 15
#define PD_NLEN 288
#define PD_NDIST 30
#define PD_FAST 9		/* bits of the first-level lookup */

static const u32 pd_crc_table[256] = {
	0x00000000, 0x77073096, 0xee0e612c, 0x990951ba,
	0x076dc419, 0x706af48f, 0xe963a535, 0x9e6495a3,
	0x0edb8832, 0x79dcb8a4, 0xe0d5e91e, 0x97d2d988,
	0x09b64c2b, 0x7eb17cbd, 0xe7b82d07, 0x90bf1d91,
	0x1db71064, 0x6ab020f2, 0xf3b97148, 0x84be41de,
	0x1adad47d, 0x6ddde4eb, 0xf4d4b551, 0x83d385c7,
	0x136c9856, 0x646ba8c0, 0xfd62f97a, 0x8a65c9ec,
	0x14015c4f, 0x63066cd9, 0xfa0f3d63, 0x8d080df5,
	0x3b6e20c8, 0x4c69105e, 0xd56041e4, 0xa2677172,
	0x3c03e4d1, 0x4b04d447, 0xd20d85fd, 0xa50ab56b,
	0x35b5a8fa, 0x42b2986c, 0xdbbbc9d6, 0xacbcf940,
	0x32d86ce3, 0x45df5c75, 0xdcd60dcf, 0xabd13d59,
	0x26d930ac, 0x51de003a, 0xc8d75180, 0xbfd06116,
	0x21b4f4b5, 0x56b3c423, 0xcfba9599, 0xb8bda50f,
	0x2802b89e, 0x5f058808, 0xc60cd9b2, 0xb10be924,
	0x2f6f7c87, 0x58684c11, 0xc1611dab, 0xb6662d3d,
	0x76dc4190, 0x01db7106, 0x98d220bc, 0xefd5102a,
	0x71b18589, 0x06b6b51f, 0x9fbfe4a5, 0xe8b8d433,
	0x7807c9a2, 0x0f00f934, 0x9609a88e, 0xe10e9818,
	0x7f6a0dbb, 0x086d3d2d, 0x91646c97, 0xe6635c01,
	0x6b6b51f4, 0x1c6c6162, 0x856530d8, 0xf262004e,
	0x6c0695ed, 0x1b01a57b, 0x8208f4c1, 0xf50fc457,
	0x65b0d9c6, 0x12b7e950, 0x8bbeb8ea, 0xfcb9887c,
	0x62dd1ddf, 0x15da2d49, 0x8cd37cf3, 0xfbd44c65,
	0x4db26158, 0x3ab551ce, 0xa3bc0074, 0xd4bb30e2,
	0x4adfa541, 0x3dd895d7, 0xa4d1c46d, 0xd3d6f4fb,
	0x4369e96a, 0x346ed9fc, 0xad678846, 0xda60b8d0,
	0x44042d73, 0x33031de5, 0xaa0a4c5f, 0xdd0d7cc9,
	0x5005713c, 0x270241aa, 0xbe0b1010, 0xc90c2086,
	0x5768b525, 0x206f85b3, 0xb966d409, 0xce61e49f,
	0x5edef90e, 0x29d9c998, 0xb0d09822, 0xc7d7a8b4,
	0x59b33d17, 0x2eb40d81, 0xb7bd5c3b, 0xc0ba6cad,
	0xedb88320, 0x9abfb3b6, 0x03b6e20c, 0x74b1d29a,
	0xead54739, 0x9dd277af, 0x04db2615, 0x73dc1683,
	0xe3630b12, 0x94643b84, 0x0d6d6a3e, 0x7a6a5aa8,
	0xe40ecf0b, 0x9309ff9d, 0x0a00ae27, 0x7d079eb1,
	0xf00f9344, 0x8708a3d2, 0x1e01f268, 0x6906c2fe,
	0xf762575d, 0x806567cb, 0x196c3671, 0x6e6b06e7,
	0xfed41b76, 0x89d32be0, 0x10da7a5a, 0x67dd4acc,
	0xf9b9df6f, 0x8ebeeff9, 0x17b7be43, 0x60b08ed5,
	0xd6d6a3e8, 0xa1d1937e, 0x38d8c2c4, 0x4fdff252,
	0xd1bb67f1, 0xa6bc5767, 0x3fb506dd, 0x48b2364b,
	0xd80d2bda, 0xaf0a1b4c, 0x36034af6, 0x41047a60,
	0xdf60efc3, 0xa867df55, 0x316e8eef, 0x4669be79,
	0xcb61b38c, 0xbc66831a, 0x256fd2a0, 0x5268e236,
	0xcc0c7795, 0xbb0b4703, 0x220216b9, 0x5505262f,
	0xc5ba3bbe, 0xb2bd0b28, 0x2bb45a92, 0x5cb36a04,
	0xc2d7ffa7, 0xb5d0cf31, 0x2cd99e8b, 0x5bdeae1d,
	0x9b64c2b0, 0xec63f226, 0x756aa39c, 0x026d930a,
	0x9c0906a9, 0xeb0e363f, 0x72076785, 0x05005713,
	0x95bf4a82, 0xe2b87a14, 0x7bb12bae, 0x0cb61b38,
	0x92d28e9b, 0xe5d5be0d, 0x7cdcefb7, 0x0bdbdf21,
	0x86d3d2d4, 0xf1d4e242, 0x68ddb3f8, 0x1fda836e,
	0x81be16cd, 0xf6b9265b, 0x6fb077e1, 0x18b74777,
	0x88085ae6, 0xff0f6a70, 0x66063bca, 0x11010b5c,
	0x8f659eff, 0xf862ae69, 0x616bffd3, 0x166ccf45,
	0xa00ae278, 0xd70dd2ee, 0x4e048354, 0x3903b3c2,
	0xa7672661, 0xd06016f7, 0x4969474d, 0x3e6e77db,
	0xaed16a4a, 0xd9d65adc, 0x40df0b66, 0x37d83bf0,
	0xa9bcae53, 0xdebb9ec5, 0x47b2cf7f, 0x30b5ffe9,
	0xbdbdf21c, 0xcabac28a, 0x53b39330, 0x24b4a3a6,
	0xbad03605, 0xcdd70693, 0x54de5729, 0x23d967bf,
	0xb3667a2e, 0xc4614ab8, 0x5d681b02, 0x2a6f2b94,
	0xb40bbe37, 0xc30c8ea1, 0x5a05df1b, 0x2d02ef8d,
};

/*
 * a canonical Huffman code: codes per length, symbols in code order, and
 * for each PD_FAST bits of input (least significant first) the symbol
 * and length of the code they start with, when it is no longer (symbol
 * << 4 | length; 0: decode bit by bit)
 */
struct pd_huff {
	u16 count[PD_MAXBITS + 1];
	u16 symbol[PD_NLEN];
	u16 fast[1 << PD_FAST];
};

/* what the chunk walk found */
struct pd_hdr {
	u32 width, height;
	u8 depth, ctype, interlace;
	u8 spp;			/* samples per pixel */
	u32 bpp_bits;		/* bits per pixel */
	u32 npal;		/* PLTE entries */
	const u8 *pal;
	u32 ntrns;		/* tRNS bytes */
	const u8 *trns;
	size_t idat;		/* offset of the first IDAT chunk's header */
};

/* the decoder's state, at the start of the scratch buffer */
struct pd {
	struct pd_hdr h;
	/* input: the IDAT chunks as one stream */
	const u8 *data;
	size_t size;
	size_t pos;		/* next byte */
	u32 left;		/* bytes of the current IDAT after pos */
	size_t next;		/* header of the chunk after the current one */
	u32 bitbuf, bitcnt;
	u32 crc;		/* of the current IDAT so far */
	bool in_idat;		/* pos is in an IDAT whose CRC is unchecked */
	bool crc_bad;		/* an IDAT's CRC did not match */
	int err;
	/* inflate */
	u32 wpos;		/* bytes inflated so far (window position) */
	u32 s1, s2;		/* Adler-32 */
	struct pd_huff lencode, distcode;
	u16 lengths[PD_NLEN + PD_NDIST];
	u8 window[PD_WINDOW];
	/* rows */
	u8 *out;
	u32 ws;			/* output row stride */
	u32 ch;			/* output channels */
	u32 pass;		/* Adam7 pass, 0 .. 6 (0 only when not interlaced) */
	u32 pw, ph;		/* this pass's width and rows */
	u32 row;		/* row of the pass being assembled */
	u32 rl;			/* its bytes, the filter byte included */
	u32 rpos;		/* bytes of it assembled */
	bool done;		/* every row of every pass is in */
	u8 *cur, *prev;		/* rl bytes each; prev's filter byte unused */
};

static const u8 pd_sig[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };

/* Adam7: first column and row, column and row steps of each pass */
static const u8 pd_adam7[7][4] = {
	{ 0, 0, 8, 8 }, { 4, 0, 8, 8 }, { 0, 4, 4, 8 }, { 2, 0, 4, 4 },
	{ 0, 2, 2, 4 }, { 1, 0, 2, 2 }, { 0, 1, 1, 2 },
};

static inline u32 pd_be32(const u8 *p)
{
	return (u32)p[0] << 24 | (u32)p[1] << 16 | (u32)p[2] << 8 | p[3];
}

static u32 pd_crc(const u8 *p, size_t n)
{
	u32 c = 0xffffffffu;

	while (n--)
		c = pd_crc_table[(c ^ *p++) & 0xff] ^ (c >> 8);
	return c ^ 0xffffffffu;
}

static inline u64 pd_align64(u64 x)
{
	return (x + 63) & ~(u64)63;
}

/* bytes of one row of @w pixels, the filter byte not included */
static inline u64 pd_rowbytes(const struct pd_hdr *h, u32 w)
{
	return ((u64)w * h->bpp_bits + 7) / 8;
}

static bool pd_depth_ok(u32 ctype, u32 depth)
{
	switch (ctype) {
	case 0:
		return depth == 1 || depth == 2 || depth == 4 || depth == 8 ||
		       depth == 16;
	case 3:
		return depth == 1 || depth == 2 || depth == 4 || depth == 8;
	case 2:
	case 4:
	case 6:
		return depth == 8 || depth == 16;
	}
	return false;
}

static bool pd_is_type(const u8 *t, const char *name)
{
	return t[0] == name[0] && t[1] == name[1] && t[2] == name[2] &&
	       t[3] == name[3];
}

static bool pd_letter(u8 c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

static int pd_ihdr(struct pd_hdr *h, const u8 *d, u32 max_dim)
{
	static const u8 spp[7] = { 1, 0, 3, 1, 2, 0, 4 };

	h->width = pd_be32(d);
	h->height = pd_be32(d + 4);
	h->depth = d[8];
	h->ctype = d[9];
	h->interlace = d[12];
	if (!h->width || !h->height || h->width > 0x7fffffffu ||
	    h->height > 0x7fffffffu || !pd_depth_ok(h->ctype, h->depth) ||
	    d[10] || d[11] || h->interlace > 1)
		return -EINVAL;
	if (h->width > max_dim || h->height > max_dim)
		return -E2BIG;
	h->spp = spp[h->ctype];
	h->bpp_bits = (u32)h->spp * h->depth;
	return 0;
}

/* walk the chunks; fills @h */
static int pd_walk(const u8 *data, size_t size, u32 max_dim,
		   struct pd_hdr *h)
{
	size_t pos = 8;
	bool idat_seen = false, idat_ended = false, last_idat = false;
	bool plte_seen = false;
	int err;

	memset(h, 0, sizeof(*h));
	if (size < 8 || memcmp(data, pd_sig, 8))
		return -EINVAL;
	for (;;) {
		const u8 *c = data + pos, *t, *d;
		u32 len;

		if (size - pos < 12)
			return -EINVAL;		/* no IEND */
		len = pd_be32(c);
		if (len > 0x7fffffffu || size - pos - 12 < len)
			return -EINVAL;
		t = c + 4;
		d = c + 8;
		if (!pd_letter(t[0]) || !pd_letter(t[1]) || !pd_letter(t[2]) ||
		    !pd_letter(t[3]))
			return -EINVAL;
		/* IDAT's: dv_pngd_decode() checks them as it reads them */
		if (!pd_is_type(t, "IDAT") &&
		    pd_crc(t, (size_t)len + 4) != pd_be32(d + len))
			return -EINVAL;
		if (pos == 8) {
			if (!pd_is_type(t, "IHDR") || len != 13)
				return -EINVAL;
			err = pd_ihdr(h, d, max_dim);
			if (err)
				return err;
		} else if (pd_is_type(t, "IHDR")) {
			return -EINVAL;
		} else if (pd_is_type(t, "IDAT")) {
			if (idat_ended || (h->ctype == 3 && !plte_seen))
				return -EINVAL;
			if (!idat_seen)
				h->idat = pos;
			idat_seen = true;
		} else if (pd_is_type(t, "IEND")) {
			if (!idat_seen || len)
				return -EINVAL;
			return 0;
		} else if (pd_is_type(t, "PLTE")) {
			if (plte_seen || idat_seen || h->trns || !len ||
			    len % 3 || len > 768 || h->ctype == 0 ||
			    h->ctype == 4)
				return -EINVAL;
			plte_seen = true;
			h->pal = d;
			h->npal = len / 3;
		} else if (pd_is_type(t, "tRNS")) {
			if (h->trns || idat_seen || h->ctype == 4 ||
			    h->ctype == 6 ||
			    (h->ctype == 0 && len != 2) ||
			    (h->ctype == 2 && len != 6) ||
			    (h->ctype == 3 && (!plte_seen || len > h->npal)))
				return -EINVAL;
			h->trns = d;
			h->ntrns = len;
		} else if (!(t[0] & 0x20)) {
			return -EOPNOTSUPP;	/* an unknown critical chunk */
		}
		if (last_idat && !pd_is_type(t, "IDAT"))
			idat_ended = true;
		last_idat = pd_is_type(t, "IDAT");
		pos += (size_t)len + 12;
	}
}

static void pd_fill_info(const struct pd_hdr *h, u32 format,
			 struct dv_pngd_info *info)
{
	static const u8 comps[7] = { 1, 0, 3, 3, 2, 0, 4 };
	u64 rl = pd_rowbytes(h, h->width) + 1;

	memset(info, 0, sizeof(*info));
	info->width = h->width;
	info->height = h->height;
	info->bit_depth = h->depth;
	info->colour_type = h->ctype;
	info->interlace = h->interlace;
	info->components = comps[h->ctype];
	info->alpha = h->ctype == 4 || h->ctype == 6 || h->trns;
	info->channels = format == DV_PNGD_RGBA ||
			 (format == DV_PNGD_AUTO && info->alpha) ? 4 : 3;
	info->width_stride = ((h->width + DV_PNGD_WIDTH_ALIGN - 1) &
			      ~(DV_PNGD_WIDTH_ALIGN - 1)) * info->channels;
	info->height_stride = (h->height + DV_PNGD_HEIGHT_ALIGN - 1) &
			      ~(DV_PNGD_HEIGHT_ALIGN - 1);
	info->out_size = (u64)info->width_stride * info->height_stride;
	info->scratch_size = pd_align64(sizeof(struct pd)) + 2 * pd_align64(rl) +
			     63;
}

int dv_pngd_parse(const void *data, size_t size, u32 max_dim, u32 format,
		  struct dv_pngd_info *info)
{
	struct pd_hdr h;
	int err;

	if (!max_dim || max_dim > DV_PNGD_MAX_DIM)
		max_dim = DV_PNGD_MAX_DIM;
	if (format >= DV_PNGD_FORMATS)
		return -EINVAL;
	err = pd_walk(data, size, max_dim, &h);
	if (!err)
		pd_fill_info(&h, format, info);
	return err;
}

/* ---- rows ---- */

static void pd_start_pass(struct pd *s)
{
	const struct pd_hdr *h = &s->h;

	for (; s->pass < 7; s->pass++) {
		const u8 *a = pd_adam7[s->pass];

		if (!h->interlace) {
			s->pw = h->width;
			s->ph = h->height;
		} else {
			s->pw = h->width > a[0] ?
				(h->width - a[0] + a[2] - 1) / a[2] : 0;
			s->ph = h->height > a[1] ?
				(h->height - a[1] + a[3] - 1) / a[3] : 0;
		}
		if (s->pw && s->ph)
			break;
	}
	if (s->pass == 7) {
		s->done = true;
		return;
	}
	s->row = 0;
	s->rpos = 0;
	s->rl = (u32)pd_rowbytes(h, s->pw) + 1;
	memset(s->prev, 0, s->rl);
}

static inline u8 pd_paeth(u8 a, u8 b, u8 c)
{
	int p = (int)a + b - c;
	int pa = p > a ? p - a : a - p;
	int pb = p > b ? p - b : b - p;
	int pc = p > c ? p - c : c - p;

	if (pa <= pb && pa <= pc)
		return a;
	return pb <= pc ? b : c;
}

/* undo the filter of s->cur (its filter byte first) against s->prev */
static int pd_unfilter(struct pd *s)
{
	u32 bpp = s->h.bpp_bits >= 8 ? s->h.bpp_bits / 8 : 1;
	u8 *x = s->cur + 1;
	const u8 *b = s->prev + 1;
	u32 n = s->rl - 1, i;

	switch (s->cur[0]) {
	case 0:
		break;
	case 1:
		for (i = bpp; i < n; i++)
			x[i] = (u8)(x[i] + x[i - bpp]);
		break;
	case 2:
		for (i = 0; i < n; i++)
			x[i] = (u8)(x[i] + b[i]);
		break;
	case 3:
		for (i = 0; i < bpp && i < n; i++)
			x[i] = (u8)(x[i] + (b[i] >> 1));
		for (; i < n; i++)
			x[i] = (u8)(x[i] + ((x[i - bpp] + b[i]) >> 1));
		break;
	case 4:
		for (i = 0; i < bpp && i < n; i++)
			x[i] = (u8)(x[i] + b[i]);
		for (; i < n; i++)
			x[i] = (u8)(x[i] + pd_paeth(x[i - bpp], b[i],
						    b[i - bpp]));
		break;
	default:
		return -EINVAL;
	}
	return 0;
}

/* sample @i (of the row's samples) of depth below 8 */
static inline u32 pd_small(const u8 *x, u32 i, u32 depth)
{
	u32 bit = i * depth;

	return (x[bit >> 3] >> (8 - depth - (bit & 7))) & ((1u << depth) - 1);
}

/* write the pixels of the unfiltered row s->cur at their places */
static int pd_put_row(struct pd *s)
{
	const struct pd_hdr *h = &s->h;
	const u8 *a7 = pd_adam7[s->pass];
	u32 x0 = h->interlace ? a7[0] : 0, dx = h->interlace ? a7[2] : 1;
	u32 y = h->interlace ? a7[1] + s->row * a7[3] : s->row;
	const u8 *x = s->cur + 1;
	u8 *o = s->out + (u64)y * s->ws + (u64)x0 * s->ch;
	u64 step = (u64)dx * s->ch;
	u32 d = h->depth, i;
	u32 r, g, b, al;

	/* 8-bit grey, RGB and RGBA without tRNS: the samples as they are */
	if (d == 8 && !h->trns && h->ctype != 3 && h->ctype != 4) {
		u32 spp = h->spp;

		for (i = 0; i < s->pw; i++, o += step, x += spp) {
			o[0] = x[0];
			o[1] = x[spp >= 3];
			o[2] = x[spp >= 3 ? 2 : 0];
			if (s->ch == 4)
				o[3] = spp == 4 ? x[3] : 255;
		}
		return 0;
	}
	for (i = 0; i < s->pw; i++, o += step) {
		al = 255;
		switch (h->ctype) {
		case 0:
			if (d == 16) {
				r = x[2 * i];
				if (h->trns && h->trns[0] == x[2 * i] &&
				    h->trns[1] == x[2 * i + 1])
					al = 0;
			} else {
				u32 v = d == 8 ? x[i] : pd_small(x, i, d);

				if (h->trns && v == ((u32)h->trns[0] << 8 |
						     h->trns[1]))
					al = 0;
				r = d == 8 ? v : v * (255 / ((1u << d) - 1));
			}
			g = b = r;
			break;
		case 2:
			if (d == 16) {
				const u8 *p = x + 6 * i;

				r = p[0];
				g = p[2];
				b = p[4];
				if (h->trns && !memcmp(p, h->trns, 6))
					al = 0;
			} else {
				const u8 *p = x + 3 * i;

				r = p[0];
				g = p[1];
				b = p[2];
				if (h->trns && !h->trns[0] && !h->trns[2] &&
				    !h->trns[4] && h->trns[1] == r &&
				    h->trns[3] == g && h->trns[5] == b)
					al = 0;
			}
			break;
		case 3: {
			u32 v = d == 8 ? x[i] : pd_small(x, i, d);

			if (v >= h->npal)
				return -EINVAL;
			r = h->pal[3 * v];
			g = h->pal[3 * v + 1];
			b = h->pal[3 * v + 2];
			if (v < h->ntrns)
				al = h->trns[v];
			break;
		}
		case 4:
			r = g = b = x[(d / 8) * 2 * i];
			al = x[(d / 8) * (2 * i + 1)];
			break;
		default:	/* 6 */
			r = x[(d / 8) * 4 * i];
			g = x[(d / 8) * (4 * i + 1)];
			b = x[(d / 8) * (4 * i + 2)];
			al = x[(d / 8) * (4 * i + 3)];
			break;
		}
		o[0] = (u8)r;
		o[1] = (u8)g;
		o[2] = (u8)b;
		if (s->ch == 4)
			o[3] = (u8)al;
	}
	return 0;
}

/*
 * The Adler-32 of the stream goes on over the @n bytes at @p (a row: the
 * stream is the rows, each filter byte first). zlib's rule: at most 5552
 * bytes between reductions keeps s2 within 32 bits.
 */
static void pd_adler(struct pd *s, const u8 *p, u32 n)
{
	u32 s1 = s->s1, s2 = s->s2, k;

	while (n) {
		k = n < 5552 ? n : 5552;
		n -= k;
		while (k--) {
			s1 += *p++;
			s2 += s1;
		}
		s1 %= 65521;
		s2 %= 65521;
	}
	s->s1 = s1;
	s->s2 = s2;
}

/* a row is in: its checksum, its filter undone, its pixels out */
static int pd_row_done(struct pd *s)
{
	u8 *t;
	int err;

	pd_adler(s, s->cur, s->rl);
	err = pd_unfilter(s);
	if (!err)
		err = pd_put_row(s);
	if (err)
		return err;
	t = s->cur;
	s->cur = s->prev;
	s->prev = t;
	s->rpos = 0;
	if (++s->row == s->ph) {
		s->pass++;
		if (s->h.interlace)
			pd_start_pass(s);
		else
			s->done = true;
	}
	return 0;
}

/* one inflated byte: into the window and the row */
static inline int pd_emit(struct pd *s, u8 v)
{
	if (s->done)
		return -EINVAL;		/* more data than the picture's rows */
	s->window[s->wpos++ & (PD_WINDOW - 1)] = v;
	s->cur[s->rpos++] = v;
	return s->rpos < s->rl ? 0 : pd_row_done(s);
}

/* ---- inflate ---- */

/*
 * The next byte of the IDAT stream, or -1 at its end or at an IDAT whose
 * CRC-32 (checked as each chunk's last byte is read) does not match
 * (s->crc_bad).
 */
static int pd_byte(struct pd *s)
{
	u8 v;

	while (!s->left) {
		const u8 *c;

		if (s->in_idat) {
			s->in_idat = false;
			if ((s->crc ^ 0xffffffffu) != pd_be32(s->data + s->pos))
				s->crc_bad = true;
		}
		if (s->crc_bad || s->size - s->next < 12)
			return -1;
		c = s->data + s->next;
		if (!pd_is_type(c + 4, "IDAT"))
			return -1;
		s->pos = s->next + 8;
		s->left = pd_be32(c);
		s->next = s->pos + s->left + 4;
		s->in_idat = true;
		s->crc = ~pd_crc(c + 4, 4);
	}
	s->left--;
	v = s->data[s->pos++];
	s->crc = pd_crc_table[(s->crc ^ v) & 0xff] ^ (s->crc >> 8);
	return v;
}

/*
 * The next whole byte after the bits taken so far (the stored block's
 * and the Adler-32's): those a lookup read ahead first, or -1.
 */
static int pd_aligned_byte(struct pd *s)
{
	int c;

	s->bitbuf >>= s->bitcnt & 7;
	s->bitcnt &= ~7u;
	if (!s->bitcnt)
		return pd_byte(s);
	c = s->bitbuf & 0xff;
	s->bitbuf >>= 8;
	s->bitcnt -= 8;
	return c;
}

static u32 pd_bits(struct pd *s, u32 n)
{
	u32 v;

	while (s->bitcnt < n) {
		int c = pd_byte(s);

		if (c < 0) {
			s->err = -EINVAL;	/* truncated */
			return 0;
		}
		s->bitbuf |= (u32)c << s->bitcnt;
		s->bitcnt += 8;
	}
	v = s->bitbuf & ((1u << n) - 1);
	s->bitbuf >>= n;
	s->bitcnt -= n;
	return v;
}

/* the next symbol of code @h, or -1 (s->err set) */
static int pd_decode(struct pd *s, const struct pd_huff *h)
{
	int code = 0, first = 0, index = 0, count, len;
	u32 e;

	/* read ahead up to PD_FAST bits; the stream may end before */
	while (s->bitcnt < PD_FAST) {
		int c = pd_byte(s);

		if (c < 0)
			break;
		s->bitbuf |= (u32)c << s->bitcnt;
		s->bitcnt += 8;
	}
	if (s->bitcnt >= PD_FAST) {
		e = h->fast[s->bitbuf & ((1u << PD_FAST) - 1)];
		if (e) {
			s->bitbuf >>= e & 15;
			s->bitcnt -= e & 15;
			return (int)(e >> 4);
		}
	}
	for (len = 1; len <= PD_MAXBITS; len++) {
		code |= (int)pd_bits(s, 1);
		if (s->err)
			return -1;
		count = h->count[len];
		if (code - count < first)
			return h->symbol[index + (code - first)];
		index += count;
		first += count;
		first <<= 1;
		code <<= 1;
	}
	s->err = -EINVAL;		/* a code the table does not have */
	return -1;
}

/* fill @h->fast from its counts and symbols (codes in canonical order) */
static void pd_fast_table(struct pd_huff *h)
{
	u32 code = 0, index = 0, len, i, rev, k;

	for (len = 1; len <= PD_FAST; len++) {
		for (i = 0; i < h->count[len]; i++, code++, index++) {
			/* the code's bits come first bit first: reversed */
			for (rev = 0, k = 0; k < len; k++)
				rev |= ((code >> k) & 1) << (len - 1 - k);
			for (k = rev; k < (1u << PD_FAST); k += 1u << len)
				h->fast[k] = (u16)(h->symbol[index] << 4 | len);
		}
		code <<= 1;
	}
}

/*
 * Build @h from @n code lengths; the codes left unused: 0 for a complete
 * code, > 0 for an incomplete one, < 0 for an over-subscribed one.
 */
static int pd_construct(struct pd_huff *h, const u16 *length, u32 n)
{
	u16 offs[PD_MAXBITS + 1];
	int left;
	u32 len, sym;

	memset(h->count, 0, sizeof(h->count));
	memset(h->fast, 0, sizeof(h->fast));
	for (sym = 0; sym < n; sym++)
		h->count[length[sym]]++;
	if (h->count[0] == n)
		return 0;
	left = 1;
	for (len = 1; len <= PD_MAXBITS; len++) {
		left <<= 1;
		left -= h->count[len];
		if (left < 0)
			return left;
	}
	offs[1] = 0;
	for (len = 1; len < PD_MAXBITS; len++)
		offs[len + 1] = offs[len] + h->count[len];
	for (sym = 0; sym < n; sym++)
		if (length[sym])
			h->symbol[offs[length[sym]]++] = (u16)sym;
	pd_fast_table(h);
	return left;
}

static const u16 pd_lbase[29] = {
	3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31,
	35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258 };
static const u8 pd_lext[29] = {
	0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2,
	3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0 };
static const u16 pd_dbase[30] = {
	1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193,
	257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145,
	8193, 12289, 16385, 24577 };
static const u8 pd_dext[30] = {
	0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6,
	7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13 };

/* the symbols of one Huffman-coded block */
static int pd_codes(struct pd *s)
{
	int sym, err;
	u32 len, dist;

	for (;;) {
		sym = pd_decode(s, &s->lencode);
		if (sym < 0)
			return s->err;
		if (sym < 256) {
			err = pd_emit(s, (u8)sym);
			if (err)
				return err;
			continue;
		}
		if (sym == 256)
			return 0;
		sym -= 257;
		if (sym >= 29)
			return -EINVAL;
		len = pd_lbase[sym] + pd_bits(s, pd_lext[sym]);
		sym = pd_decode(s, &s->distcode);
		if (sym < 0)
			return s->err;
		if (sym >= 30)
			return -EINVAL;
		dist = pd_dbase[sym] + pd_bits(s, pd_dext[sym]);
		if (s->err)
			return s->err;
		if (dist > s->wpos)
			return -EINVAL;		/* before the stream's start */
		while (len--) {
			err = pd_emit(s, s->window[(s->wpos - dist) &
						   (PD_WINDOW - 1)]);
			if (err)
				return err;
		}
	}
}

static int pd_stored(struct pd *s)
{
	int c[4], i, err;
	u32 len;

	for (i = 0; i < 4; i++) {
		c[i] = pd_aligned_byte(s);
		if (c[i] < 0)
			return -EINVAL;
	}
	len = (u32)c[0] | (u32)c[1] << 8;
	if (((u32)c[2] | (u32)c[3] << 8) != (~len & 0xffff))
		return -EINVAL;
	while (len--) {
		i = pd_aligned_byte(s);
		if (i < 0)
			return -EINVAL;
		err = pd_emit(s, (u8)i);
		if (err)
			return err;
	}
	return 0;
}

static int pd_fixed(struct pd *s)
{
	u32 sym;

	for (sym = 0; sym < 144; sym++)
		s->lengths[sym] = 8;
	for (; sym < 256; sym++)
		s->lengths[sym] = 9;
	for (; sym < 280; sym++)
		s->lengths[sym] = 7;
	for (; sym < PD_NLEN; sym++)
		s->lengths[sym] = 8;
	pd_construct(&s->lencode, s->lengths, PD_NLEN);
	for (sym = 0; sym < PD_NDIST; sym++)
		s->lengths[sym] = 5;
	pd_construct(&s->distcode, s->lengths, PD_NDIST);
	return pd_codes(s);
}

static int pd_dynamic(struct pd *s)
{
	static const u8 order[19] = {
		16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1,
		15 };
	u32 nlen, ndist, ncode, index, len, sym;
	int err;

	nlen = pd_bits(s, 5) + 257;
	ndist = pd_bits(s, 5) + 1;
	ncode = pd_bits(s, 4) + 4;
	if (s->err)
		return s->err;
	if (nlen > 286 || ndist > 30)
		return -EINVAL;
	for (index = 0; index < ncode; index++)
		s->lengths[order[index]] = (u16)pd_bits(s, 3);
	for (; index < 19; index++)
		s->lengths[order[index]] = 0;
	if (s->err)
		return s->err;
	if (pd_construct(&s->lencode, s->lengths, 19))
		return -EINVAL;		/* the code length code is incomplete */
	index = 0;
	while (index < nlen + ndist) {
		int c = pd_decode(s, &s->lencode);

		if (c < 0)
			return s->err;
		if (c < 16) {
			s->lengths[index++] = (u16)c;
			continue;
		}
		len = 0;
		if (c == 16) {
			if (!index)
				return -EINVAL;
			len = s->lengths[index - 1];
			sym = 3 + pd_bits(s, 2);
		} else if (c == 17) {
			sym = 3 + pd_bits(s, 3);
		} else {
			sym = 11 + pd_bits(s, 7);
		}
		if (s->err)
			return s->err;
		if (index + sym > nlen + ndist)
			return -EINVAL;
		while (sym--)
			s->lengths[index++] = (u16)len;
	}
	if (!s->lengths[256])
		return -EINVAL;		/* no end-of-block code */
	err = pd_construct(&s->lencode, s->lengths, nlen);
	if (err && (err < 0 || nlen != s->lencode.count[0] +
		    s->lencode.count[1]))
		return -EINVAL;
	err = pd_construct(&s->distcode, s->lengths + nlen, ndist);
	if (err && (err < 0 || ndist != s->distcode.count[0] +
		    s->distcode.count[1]))
		return -EINVAL;
	return pd_codes(s);
}

static int pd_inflate(struct pd *s)
{
	int cmf, flg, i, err;
	u32 last, type, adler = 0;

	cmf = pd_byte(s);
	flg = pd_byte(s);
	if (cmf < 0 || flg < 0 || (cmf & 15) != 8 || (cmf >> 4) > 7 ||
	    ((cmf << 8) | flg) % 31 || (flg & 0x20))
		return -EINVAL;
	s->s1 = 1;
	s->s2 = 0;
	do {
		last = pd_bits(s, 1);
		type = pd_bits(s, 2);
		if (s->err)
			return s->err;
		if (type == 0)
			err = pd_stored(s);
		else if (type == 1)
			err = pd_fixed(s);
		else if (type == 2)
			err = pd_dynamic(s);
		else
			err = -EINVAL;
		if (err)
			return err;
	} while (!last);
	for (i = 0; i < 4; i++) {
		int c = pd_aligned_byte(s);

		if (c < 0)
			return -EINVAL;
		adler = adler << 8 | (u32)c;
	}
	if (adler != (s->s2 << 16 | s->s1) || !s->done)
		return -EINVAL;		/* bad checksum, or rows missing */
	/* the CRCs of the rest of this IDAT and of any after it */
	while (pd_byte(s) >= 0)
		;
	return s->crc_bad ? -EINVAL : 0;
}

/* zero the padding right of each row and the rows below the picture */
static void pd_pad(struct pd *s, const struct dv_pngd_info *info)
{
	u64 used = (u64)info->width * info->channels;
	u32 y;

	if (used < info->width_stride)
		for (y = 0; y < info->height; y++)
			memset(s->out + (u64)y * s->ws + used, 0,
			       info->width_stride - used);
	if (info->height < info->height_stride)
		memset(s->out + (u64)info->height * s->ws, 0,
		       (u64)(info->height_stride - info->height) * s->ws);
}

int dv_pngd_decode(const void *data, size_t size, u32 max_dim, u32 format,
		   void *out, size_t out_size, void *scratch,
		   size_t scratch_size, struct dv_pngd_info *info)
{
	struct dv_pngd_info in;
	struct pd_hdr h;
	struct pd *s;
	u8 *base;
	u64 rl;
	int err;

	if (!max_dim || max_dim > DV_PNGD_MAX_DIM)
		max_dim = DV_PNGD_MAX_DIM;
	if (format >= DV_PNGD_FORMATS)
		return -EINVAL;
	err = pd_walk(data, size, max_dim, &h);
	if (err)
		return err;
	pd_fill_info(&h, format, &in);
	if (info)
		*info = in;
	if (!out || !scratch || out_size < in.out_size ||
	    scratch_size < in.scratch_size)
		return -ENOSPC;
	base = (u8 *)(((uintptr_t)scratch + 63) & ~(uintptr_t)63);
	s = (struct pd *)base;
	memset(s, 0, sizeof(*s));
	s->h = h;
	rl = pd_align64(pd_rowbytes(&h, h.width) + 1);
	s->cur = base + pd_align64(sizeof(*s));
	s->prev = s->cur + rl;
	s->data = data;
	s->size = size;
	s->next = h.idat;
	s->out = out;
	s->ws = in.width_stride;
	s->ch = in.channels;
	pd_start_pass(s);
	err = pd_inflate(s);
	if (!err)
		pd_pad(s, &in);
	return err;
}
