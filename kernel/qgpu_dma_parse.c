// SPDX-License-Identifier: GPL-2.0
/*
 * qgpu: the DMA-buffer parser. It walks a DMA buffer the way the device
 * will: known commands only, each with the length the contract's one table
 * gives (qgpu_cmd_len()) and of the context's kind (physical or virtual
 * addressing, qgpu_dma_cmd_in_mode()), every BIND covered by exactly one patch entry at
 * its address, every split offset a command start this walk reached. So a
 * portion the device runs always starts where the kernel parsed it, and
 * the device executes nothing the kernel did not parse.
 *
 * TILE (tiled surfaces, docs/hw-spec.md section 17) is checked in full
 * against the bindings the walk has seen: each BIND's slot and size as the
 * kernel will patch them, and whether its allocation is tiled. A TILE
 * reaches the device only with a good geometry, both slots bound, both
 * ranges inside the bound sizes, and its tiled side on a tiled allocation
 * and its linear side on a linear one.
 */
#include <qgpu/qgpu_cmd.h>

#include "qgpu_dma_parse.h"

static void qgpu_parse_mark(unsigned int *starts, unsigned int i)
{
	starts[i / 32] |= 1u << (i % 32);
}

static int qgpu_parse_is_start(const unsigned int *starts, unsigned int i)
{
	return (starts[i / 32] >> (i % 32)) & 1;
}

/* Header flags a command may carry: only TILE's and VTILE's direction */
static unsigned int qgpu_parse_flags(unsigned int op)
{
	if (op == QGPU_DMA_TILE || op == QGPU_DMA_VTILE)
		return QGPU_TILE_UNTILE;
	return 0;
}

/* The BIND at @b, patched from entry @pe: the slot's binding from here on */
static void qgpu_parse_bind(const unsigned int *b,
			    const struct qgpu_parse_patch *pe,
			    struct qgpu_parse_slot *slots, unsigned int nslots)
{
	unsigned long long want = b[4] | (unsigned long long)b[5] << 32;

	if (!slots || pe->slot >= nslots)
		return;
	/* as the kernel patches it: the size asked for, cut to the allocation */
	slots[pe->slot].size = want < pe->avail ? want : pe->avail;
	slots[pe->slot].tiled = pe->tiled;
}

/* One side of a TILE: (slot, offset) for @len bytes of a @tiled layout */
static enum qgpu_parse_rule qgpu_parse_tile_side(const struct qgpu_parse_slot *slots,
						 unsigned int nslots,
						 unsigned int slot,
						 unsigned int off,
						 unsigned long long len,
						 unsigned int tiled)
{
	if (!slots || slot >= nslots || !slots[slot].size)
		return QGPU_PARSE_TILE_SLOT;
	if (off > slots[slot].size || len > slots[slot].size - off)
		return QGPU_PARSE_TILE_RANGE;
	if (!slots[slot].tiled != !tiled)
		return QGPU_PARSE_TILE_LAYOUT;
	return QGPU_PARSE_OK;
}

/* TILE @c (dslot, doff, sslot, soff, width, height, pitch) */
static enum qgpu_parse_rule qgpu_parse_tile(const unsigned int *c,
					    const struct qgpu_parse_slot *slots,
					    unsigned int nslots)
{
	int untile = QGPU_CMD_FLAGS(c[0]) & QGPU_TILE_UNTILE;
	unsigned long long tiled = qgpu_tiled_size(c[5], c[6]);
	unsigned long long linear = qgpu_linear_span(c[5], c[6], c[7]);
	enum qgpu_parse_rule rule;
	unsigned int bad;

	if (qgpu_tile_check(c[5], c[6], c[7], &bad) != QGPU_FAULT_NONE)
		return QGPU_PARSE_TILE_GEOMETRY;
	rule = qgpu_parse_tile_side(slots, nslots, c[1], c[2],
				    untile ? linear : tiled, !untile);
	if (rule == QGPU_PARSE_OK)
		rule = qgpu_parse_tile_side(slots, nslots, c[3], c[4],
					    untile ? tiled : linear, untile);
	return rule;
}

/**
 * qgpu_dma_parse - check a DMA buffer and its patch entries
 * @dw: the buffer (a kernel copy), @ndw dwords
 * @ndw: its length in dwords
 * @pe: the patch entries, in increasing @patch_offset order (checked by
 *	the caller)
 * @npe: number of patch entries
 * @starts: QGPU_PARSE_STARTS_WORDS(@ndw) zeroed words; returns the bitmap
 *	of command starts
 * @at: returns the byte offset (buffer or split offset) where a rule broke
 * @virtual_ctx: the buffer runs in a context bound to an address space
 *	(only NOP and the virtual commands), else in a physical context (only
 *	NOP and the slot commands)
 * @slots: @nslots zeroed entries, the slot table as the walk binds it
 *	(the buffer starts with every slot unbound); NULL for a virtual
 *	context
 * @nslots: entries in @slots (the device's slots per context)
 *
 * Return: QGPU_PARSE_OK, or the rule the buffer broke.
 */
enum qgpu_parse_rule qgpu_dma_parse(const unsigned int *dw, unsigned int ndw,
				    const struct qgpu_parse_patch *pe,
				    unsigned int npe, unsigned int *starts,
				    unsigned int *at, int virtual_ctx,
				    struct qgpu_parse_slot *slots,
				    unsigned int nslots)
{
	unsigned int i = 0, p = 0, binds = 0;

	*at = 0;
	while (i < ndw) {
		unsigned int hdr = dw[i], op = QGPU_CMD_OPCODE(hdr);
		unsigned int len = QGPU_CMD_LEN(hdr);
		unsigned int need = qgpu_dma_cmd_in_mode(op, virtual_ctx) ?
				    qgpu_dma_cmd_len(op) : 0;

		*at = i * 4;
		if (!need || QGPU_CMD_FLAGS(hdr) & ~qgpu_parse_flags(op) ||
		    len < need || len > ndw - i ||
		    (op != QGPU_DMA_NOP && len != need))
			return QGPU_PARSE_BAD_COMMAND;
		qgpu_parse_mark(starts, i);
		if (op == QGPU_DMA_BIND) {
			unsigned int addr = (i + QGPU_DMA_BIND_ADDR_DW) * 4;

			/* the patch entries for BINDs come in buffer order */
			while (p < npe && pe[p].patch_offset < addr)
				p++;
			if (p >= npe || pe[p].patch_offset != addr)
				return QGPU_PARSE_UNPATCHED_BIND;
			qgpu_parse_bind(dw + i, &pe[p], slots, nslots);
			binds++;
		} else if (op == QGPU_DMA_TILE) {
			enum qgpu_parse_rule rule;

			rule = qgpu_parse_tile(dw + i, slots, nslots);
			if (rule != QGPU_PARSE_OK)
				return rule;
		} else if (op == QGPU_DMA_VTILE) {
			unsigned int bad;

			if (qgpu_tile_check(dw[i + 5], dw[i + 6], dw[i + 7],
					    &bad) != QGPU_FAULT_NONE)
				return QGPU_PARSE_TILE_GEOMETRY;
		}
		i += len;
	}
	/* no patch entry may point anywhere but a BIND's address */
	if (binds != npe) {
		*at = 0;
		return QGPU_PARSE_STRAY_PATCH;
	}
	for (p = 0; p < npe; p++) {
		*at = pe[p].split_offset;
		if (pe[p].split_offset / 4 >= ndw ||
		    !qgpu_parse_is_start(starts, pe[p].split_offset / 4))
			return QGPU_PARSE_BAD_SPLIT;
	}
	*at = 0;
	return QGPU_PARSE_OK;
}

const char *qgpu_parse_rule_name(enum qgpu_parse_rule rule)
{
	switch (rule) {
	case QGPU_PARSE_OK:
		return "ok";
	case QGPU_PARSE_BAD_COMMAND:
		return "unknown command, flags or length";
	case QGPU_PARSE_UNPATCHED_BIND:
		return "BIND without a patch entry at its address";
	case QGPU_PARSE_STRAY_PATCH:
		return "patch entry not at a BIND's address";
	case QGPU_PARSE_BAD_SPLIT:
		return "split offset not at a command start";
	case QGPU_PARSE_TILE_GEOMETRY:
		return "TILE width, height or pitch out of bounds";
	case QGPU_PARSE_TILE_SLOT:
		return "TILE slot not bound by an earlier BIND";
	case QGPU_PARSE_TILE_RANGE:
		return "TILE range beyond its slot's bound size";
	case QGPU_PARSE_TILE_LAYOUT:
		return "TILE side bound to an allocation of the other layout";
	}
	return "?";
}
