/* SPDX-License-Identifier: GPL-2.0 */
/*
 * qgpu: the DMA-buffer parser. Plain C with no kernel headers (only the
 * device contract, include/qgpu/qgpu_cmd.h) so that the same file builds
 * into host unit tests (tests/unit/dma_parse.c).
 */
#ifndef QGPU_DMA_PARSE_H
#define QGPU_DMA_PARSE_H

/**
 * struct qgpu_parse_patch - what the parser needs of a patch entry
 * @patch_offset: byte offset of the patched address
 * @split_offset: byte offset of the split point
 */
struct qgpu_parse_patch {
	unsigned int patch_offset;
	unsigned int split_offset;
};

/**
 * enum qgpu_parse_rule - the rule a DMA buffer broke
 * @QGPU_PARSE_OK: none
 * @QGPU_PARSE_BAD_COMMAND: unknown opcode or one of the other addressing
 *	model (a virtual command in a physical context or the reverse), flags
 *	set, or a length that is
 *	not the command's (NOP: at least 1) or runs past the buffer's end
 * @QGPU_PARSE_UNPATCHED_BIND: a BIND with no patch entry at its address
 * @QGPU_PARSE_STRAY_PATCH: a patch entry that is not at a BIND's address
 * @QGPU_PARSE_BAD_SPLIT: a split offset that is not a command start
 */
enum qgpu_parse_rule {
	QGPU_PARSE_OK,
	QGPU_PARSE_BAD_COMMAND,
	QGPU_PARSE_UNPATCHED_BIND,
	QGPU_PARSE_STRAY_PATCH,
	QGPU_PARSE_BAD_SPLIT,
};

/* Words of the command-start bitmap for a buffer of @ndw dwords */
#define QGPU_PARSE_STARTS_WORDS(ndw)	((ndw) / 32 + 1)

enum qgpu_parse_rule qgpu_dma_parse(const unsigned int *dw, unsigned int ndw,
				    const struct qgpu_parse_patch *pe,
				    unsigned int npe, unsigned int *starts,
				    unsigned int *at, int virtual_ctx);
const char *qgpu_parse_rule_name(enum qgpu_parse_rule rule);

#endif /* QGPU_DMA_PARSE_H */
