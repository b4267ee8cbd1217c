/* SPDX-License-Identifier: GPL-2.0 */
/*
 * jpegd.h - the JPEG decoder of the DVPP JPEGD engine: Huffman-coded
 * baseline, extended sequential and progressive JPEG (SOF0, SOF1, SOF2),
 * 8-bit samples, one component (grey) or three (YCbCr), into YUV420SP
 * NV12 at DVPP JPEGD's alignment.
 *
 * Integers only (no FPU section needed), no allocation, no recursion,
 * small stack frames: it runs in the kernel. The caller gives the output
 * buffer and a scratch buffer of the size dv_jpegd_parse() reports.
 *
 * Input: any size from 1 x 1 up to the caller's limit (DVPP's is 8192 x
 * 8192; DVPP's 32 x 32 minimum is a rule of its API, not of this
 * decoder). Sampling factors: 4:4:4, 4:2:2 (chroma half width), 4:2:0
 * (half width and height) and 4:4:0 (half height), with luma at the
 * largest factors; restart markers; APPn and COM segments skipped.
 * Everything else defined by the standard (arithmetic coding, lossless,
 * hierarchical, 12-bit, DNL, 2 or 4 components, 4:1:1) is -EOPNOTSUPP.
 *
 * Output (NV12): width_stride = ALIGN(width, 128), height_stride =
 * ALIGN(height, 16); a Y plane of width_stride x height_stride bytes,
 * then width_stride x height_stride / 2 bytes of interleaved U, V pairs
 * (one pair per 2 x 2 pixels). out_size = width_stride * height_stride *
 * 3 / 2. Chroma goes to 4:2:0 by this fixed rule (NUMERICS.md, JPEGD),
 * the decoded samples themselves wherever the file's chroma already has
 * the 4:2:0 resolution in a direction, else the rounded mean of the two
 * samples (or four, for 4:4:4) the output sample covers:
 *	4:2:0	U[i][j] = Cb[i][j]
 *	4:2:2	U[i][j] = (Cb[2i][j] + Cb[2i+1][j] + 1) >> 1
 *	4:4:0	U[i][j] = (Cb[i][2j] + Cb[i][2j+1] + 1) >> 1
 *	4:4:4	U[i][j] = (Cb[2i][2j] + Cb[2i][2j+1] + Cb[2i+1][2j] +
 *			   Cb[2i+1][2j+1] + 2) >> 2
 *	grey	U = V = 128
 * where a sample past the picture's last row or column (odd width or
 * height) is the last one repeated. Padding: each row of both planes is
 * filled out to width_stride by repeating its last pixel (Y byte, U-V
 * pair), and the rows below the picture repeat its last row, in both
 * planes: the picture looks edge-extended to the strides.
 *
 * Errors: -EINVAL for data that is not a JPEG the standard allows
 * (a bad marker, length, table, scan order or entropy-coded data, or a
 * truncated file: every file must reach its EOI marker); -EOPNOTSUPP for
 * a valid JPEG this decoder does not take; -E2BIG for a picture above the
 * caller's limit; -ENOSPC for an output or scratch buffer too small.
 * Nothing is read outside @data and nothing written outside @out and
 * @scratch; after an error the contents of @out are unspecified.
 */
#ifndef _DAVINCI_JPEGD_H
#define _DAVINCI_JPEGD_H

#include "os.h"

/* DVPP JPEGD's largest picture, each side. */
#define DV_JPEGD_MAX_DIM 8192
/* Output alignment of the NV12 planes (DVPP JPEGD's). */
#define DV_JPEGD_WIDTH_ALIGN 128
#define DV_JPEGD_HEIGHT_ALIGN 16

/* The file's sampling (struct dv_jpegd_info.subsampling). */
enum dv_jpegd_subsampling {
	DV_JPEGD_GREY,
	DV_JPEGD_444,
	DV_JPEGD_422,
	DV_JPEGD_420,
	DV_JPEGD_440,
};

/**
 * struct dv_jpegd_info - what the header says about a picture
 * @width: pixels per row
 * @height: rows
 * @components: 1 (grey) or 3 (YCbCr)
 * @subsampling: enum dv_jpegd_subsampling
 * @progressive: SOF2
 * @restart_interval: MCUs between restart markers at the first scan (0:
 *	none)
 * @width_stride: ALIGN(@width, DV_JPEGD_WIDTH_ALIGN)
 * @height_stride: ALIGN(@height, DV_JPEGD_HEIGHT_ALIGN)
 * @out_size: bytes of the NV12 output, @width_stride * @height_stride *
 *	3 / 2
 * @scratch_size: bytes of scratch dv_jpegd_decode() needs: its state,
 *	one band of samples and, for progressive files and sequential ones
 *	whose components come in separate scans, every DCT coefficient of
 *	the picture (2 bytes each); else only one band of them
 */
struct dv_jpegd_info {
	u32 width;
	u32 height;
	u32 components;
	u32 subsampling;
	u32 progressive;
	u32 restart_interval;
	u32 width_stride;
	u32 height_stride;
	u64 out_size;
	u64 scratch_size;
};

/*
 * dv_jpegd_parse() - read the markers of @data up to its first scan and
 * fill @info. @max_dim: the largest width and height taken (0:
 * DV_JPEGD_MAX_DIM); -E2BIG above. Checks everything before the first
 * scan (dv_jpegd_decode() checks the rest).
 */
int dv_jpegd_parse(const void *data, size_t size, u32 max_dim,
		   struct dv_jpegd_info *info);

/*
 * dv_jpegd_decode() - decode @data into @out (NV12, @out_size >=
 * info.out_size), with @scratch of @scratch_size >= info.scratch_size
 * bytes (any alignment; its contents on entry do not matter). @max_dim as
 * dv_jpegd_parse(). Fills @info when not NULL. Returns 0 or a negative
 * errno (above).
 */
int dv_jpegd_decode(const void *data, size_t size, u32 max_dim,
		    void *out, size_t out_size, void *scratch,
		    size_t scratch_size, struct dv_jpegd_info *info);

/*
 * dv_jpegd_decode_planes() - as dv_jpegd_decode(), but @out gets each
 * component's samples at its own sampling, unresampled and unpadded: Y
 * (width x height), then Cb and Cr (each ceil(width * h / hmax) x
 * ceil(height * v / vmax) of its factors: (width + 1) / 2 columns for
 * 4:2:2 and 4:2:0, (height + 1) / 2 rows for 4:2:0 and 4:4:0), rows
 * packed. @out_size >= width * height * components. What the tests
 * compare with libjpeg-turbo's planes; a later YUV422/444 output's source.
 */
int dv_jpegd_decode_planes(const void *data, size_t size, u32 max_dim,
			   void *out, size_t out_size, void *scratch,
			   size_t scratch_size, struct dv_jpegd_info *info);

#endif /* _DAVINCI_JPEGD_H */
