/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pngd.h - the PNG decoder of the DVPP PNGD engine: every colour type and
 * bit depth of PNG 1.2 (grey 1/2/4/8/16, RGB 8/16, palette 1/2/4/8, grey
 * with alpha 8/16, RGBA 8/16), filters None/Sub/Up/Average/Paeth, Adam7
 * interlace, tRNS transparency, into RGB888 or RGBA8888 at DVPP PNGD's
 * alignment. The zlib stream is inflated here (stored, fixed and dynamic
 * Huffman blocks), its Adler-32 checked, and every chunk's CRC-32.
 *
 * Integers only (no FPU section needed), no allocation, no recursion,
 * small stack frames: it runs in the kernel. The caller gives the output
 * buffer and a scratch buffer of the size dv_pngd_parse() reports (the
 * inflate window, the Huffman tables and two rows: about 100 KiB at most).
 *
 * Input: 1 x 1 up to the caller's limit (DVPP's is 4096 x 4096; DVPP's 32
 * x 32 minimum is a rule of its API, acl.media checks it, not of this
 * decoder). Ancillary chunks other than tRNS are skipped (gAMA, cHRM,
 * sRGB, iCCP ... do not change the samples, as DVPP's and Pillow's
 * decodes); an unknown critical chunk is -EOPNOTSUPP.
 *
 * Output: DV_PNGD_RGB writes R, G, B bytes per pixel (any alpha dropped),
 * DV_PNGD_RGBA R, G, B, A, and DV_PNGD_AUTO the second for a file with
 * alpha (colour type 4 or 6, or a tRNS chunk) and the first otherwise.
 * Samples go to 8 bits exactly, as libpng's and Pillow's decodes: a 16-bit
 * sample is its high byte, a grey sample of 1, 2 or 4 bits is scaled by
 * 255, 85 or 17 (v * 255 / (2^depth - 1)), grey is R = G = B, a palette
 * index its PLTE entry. Alpha: the file's (high byte at 16 bits), else from
 * tRNS (a palette entry's, or 0 where a grey or RGB pixel equals the key
 * at the file's depth), else 255. width_stride = ALIGN(width, 128) *
 * channels bytes (3 or 4), height_stride = ALIGN(height, 16); out_size =
 * width_stride * height_stride. The padding right of each row and the
 * rows below the picture are zeros.
 *
 * Errors: -EINVAL for data that is not a PNG the standard allows (a bad
 * signature, chunk length, order or CRC, IHDR values, a zlib stream that
 * is corrupt, truncated, fails its Adler-32 or holds more or fewer bytes
 * than the picture's rows, a filter type above 4, a palette index past
 * PLTE's entries, no IEND chunk); -EOPNOTSUPP for an unknown critical
 * chunk; -E2BIG for a side above the caller's limit (refused from IHDR,
 * before any scratch is asked for); -ENOSPC for an output or scratch
 * buffer too small. Bytes after the zlib stream's Adler-32 in the last
 * IDAT, and after IEND, are ignored. Nothing is read outside @data and
 * nothing written outside @out and @scratch; after an error the contents
 * of @out are unspecified.
 */
#ifndef _DAVINCI_PNGD_H
#define _DAVINCI_PNGD_H

#include "os.h"

/* DVPP PNGD's largest picture, each side. */
#define DV_PNGD_MAX_DIM 4096
/* Output alignment: pixels per row of the stride, rows (DVPP PNGD's). */
#define DV_PNGD_WIDTH_ALIGN 128
#define DV_PNGD_HEIGHT_ALIGN 16

/* The output's pixel format. */
enum dv_pngd_format {
	DV_PNGD_RGB,		/* RGB888 */
	DV_PNGD_RGBA,		/* RGBA8888 */
	DV_PNGD_AUTO,		/* RGBA8888 for a file with alpha, else RGB888 */
	DV_PNGD_FORMATS,
};

/**
 * struct dv_pngd_info - what the header says about a picture
 * @width: pixels per row
 * @height: rows
 * @bit_depth: IHDR's: 1, 2, 4, 8 or 16
 * @colour_type: IHDR's: 0 grey, 2 RGB, 3 palette, 4 grey + alpha, 6 RGBA
 * @interlace: 1 for Adam7
 * @components: the file's colour type's: 1 grey, 2 grey + alpha, 3 RGB or
 *	palette, 4 RGBA (as acldvppPngGetImageInfo's; tRNS sets @alpha)
 * @alpha: the file has alpha (colour type 4 or 6, or tRNS)
 * @channels: of the output, 3 (RGB888) or 4 (RGBA8888)
 * @width_stride: bytes per output row, ALIGN(@width, 128) * @channels
 * @height_stride: ALIGN(@height, 16)
 * @out_size: @width_stride * @height_stride
 * @scratch_size: bytes of scratch dv_pngd_decode() needs
 */
struct dv_pngd_info {
	u32 width;
	u32 height;
	u32 bit_depth;
	u32 colour_type;
	u32 interlace;
	u32 components;
	u32 alpha;
	u32 channels;
	u32 width_stride;
	u32 height_stride;
	u64 out_size;
	u64 scratch_size;
};

/*
 * dv_pngd_parse() - walk the chunks of @data (the order and lengths, the
 * CRC of every chunk but IDAT, IHDR, PLTE, tRNS, IEND) and fill @info for
 * output @format (enum dv_pngd_format). @max_dim: the largest width and
 * height taken (0: DV_PNGD_MAX_DIM); -E2BIG above. The IDATs' CRCs and
 * the zlib stream are checked by dv_pngd_decode(), as it reads them.
 */
int dv_pngd_parse(const void *data, size_t size, u32 max_dim, u32 format,
		  struct dv_pngd_info *info);

/*
 * dv_pngd_decode() - decode @data into @out (@out_size >= info.out_size)
 * with @scratch of @scratch_size >= info.scratch_size bytes (any
 * alignment; its contents on entry do not matter). @max_dim and @format as
 * dv_pngd_parse(). Fills @info when not NULL. Returns 0 or a negative
 * errno (above).
 */
int dv_pngd_decode(const void *data, size_t size, u32 max_dim, u32 format,
		   void *out, size_t out_size, void *scratch,
		   size_t scratch_size, struct dv_pngd_info *info);

#endif /* _DAVINCI_PNGD_H */
