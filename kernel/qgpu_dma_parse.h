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
 * @slot: the slot the kernel writes into the BIND (the entry's SlotId)
 * @tiled: the allocation is a QGPU_GEM_TILED one
 * @avail: bytes the allocation has from the entry's offset on (0 for the
 *	NULL allocation): the BIND's size is cut to it
 */
struct qgpu_parse_patch {
	unsigned int patch_offset;
	unsigned int split_offset;
	unsigned int slot;
	unsigned int tiled;
	unsigned long long avail;
};

/**
 * struct qgpu_parse_slot - a slot's binding at a point of the walk
 * @size: the bound size as the kernel patches it; 0 when unbound
 * @tiled: bound to a QGPU_GEM_TILED allocation
 */
struct qgpu_parse_slot {
	unsigned long long size;
	unsigned int tiled;
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
 * @QGPU_PARSE_TILE_GEOMETRY: a TILE or VTILE whose width, height or pitch
 *	fails qgpu_tile_check()
 * @QGPU_PARSE_TILE_SLOT: a TILE naming a slot that no earlier BIND of the
 *	buffer bound (or that one beyond the slot table)
 * @QGPU_PARSE_TILE_RANGE: a TILE whose range does not fit its slot's bound
 *	size
 * @QGPU_PARSE_TILE_LAYOUT: a TILE whose tiled side is not bound to a tiled
 *	allocation, or whose linear side is
 */
enum qgpu_parse_rule {
	QGPU_PARSE_OK,
	QGPU_PARSE_BAD_COMMAND,
	QGPU_PARSE_UNPATCHED_BIND,
	QGPU_PARSE_STRAY_PATCH,
	QGPU_PARSE_BAD_SPLIT,
	QGPU_PARSE_TILE_GEOMETRY,
	QGPU_PARSE_TILE_SLOT,
	QGPU_PARSE_TILE_RANGE,
	QGPU_PARSE_TILE_LAYOUT,
};

/* Words of the command-start bitmap for a buffer of @ndw dwords */
#define QGPU_PARSE_STARTS_WORDS(ndw)	((ndw) / 32 + 1)

enum qgpu_parse_rule qgpu_dma_parse(const unsigned int *dw, unsigned int ndw,
				    const struct qgpu_parse_patch *pe,
				    unsigned int npe, unsigned int *starts,
				    unsigned int *at, int virtual_ctx,
				    struct qgpu_parse_slot *slots,
				    unsigned int nslots);
const char *qgpu_parse_rule_name(enum qgpu_parse_rule rule);

#endif /* QGPU_DMA_PARSE_H */
