// SPDX-License-Identifier: GPL-2.0
/*
 * qgpu: the DMA-buffer parser. It walks a DMA buffer the way the device
 * will: known commands only, each with the length the contract's one table
 * gives (qgpu_cmd_len()) and of the context's kind (physical or virtual
 * addressing, qgpu_dma_cmd_in_mode()), every BIND covered by exactly one patch entry at
 * its address, every split offset a command start this walk reached. So a
 * portion the device runs always starts where the kernel parsed it, and
 * the device executes nothing the kernel did not parse.
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
 *
 * Return: QGPU_PARSE_OK, or the rule the buffer broke.
 */
enum qgpu_parse_rule qgpu_dma_parse(const unsigned int *dw, unsigned int ndw,
				    const struct qgpu_parse_patch *pe,
				    unsigned int npe, unsigned int *starts,
				    unsigned int *at, int virtual_ctx)
{
	unsigned int i = 0, p = 0, binds = 0;

	*at = 0;
	while (i < ndw) {
		unsigned int hdr = dw[i], op = QGPU_CMD_OPCODE(hdr);
		unsigned int len = QGPU_CMD_LEN(hdr);
		unsigned int need = qgpu_dma_cmd_in_mode(op, virtual_ctx) ?
				    qgpu_dma_cmd_len(op) : 0;

		*at = i * 4;
		if (!need || QGPU_CMD_FLAGS(hdr) || len < need ||
		    len > ndw - i || (op != QGPU_DMA_NOP && len != need))
			return QGPU_PARSE_BAD_COMMAND;
		qgpu_parse_mark(starts, i);
		if (op == QGPU_DMA_BIND) {
			unsigned int addr = (i + QGPU_DMA_BIND_ADDR_DW) * 4;

			/* the patch entries for BINDs come in buffer order */
			while (p < npe && pe[p].patch_offset < addr)
				p++;
			if (p >= npe || pe[p].patch_offset != addr)
				return QGPU_PARSE_UNPATCHED_BIND;
			binds++;
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
	}
	return "?";
}
