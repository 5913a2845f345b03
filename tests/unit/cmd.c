// SPDX-License-Identifier: MIT
/*
 * Host unit tests for the decoding helpers of include/qgpu/qgpu_cmd.h, the
 * one table of command lengths that the device, the kernel and libqgpu
 * decode with: which engine runs which ring command (docs/hw-spec.md 8.3 to
 * 8.5), which commands a DMA buffer may hold (9.3), that every fixed
 * length fits QGPU_CMD_MAX_FIXED_LEN (the device's command buffers), and
 * the fault reason names.
 */
#include <string.h>

#include "igt.h"
#include "qgpu_cmd.h"

static int is_paging_op(unsigned int op)
{
	return op == QGPU_CMD_TRANSFER || op == QGPU_CMD_FILL ||
	       op == QGPU_CMD_DISCARD || op == QGPU_CMD_MAP_APERTURE ||
	       op == QGPU_CMD_UNMAP_APERTURE || op == QGPU_CMD_UPDATE_PT ||
	       op == QGPU_CMD_FLUSH_TLB || op == QGPU_CMD_TRANSFER_VIRTUAL ||
	       op == QGPU_CMD_FILL_VIRTUAL;
}

static int is_render_op(unsigned int op)
{
	return op == QGPU_CMD_EXEC || op == QGPU_CMD_CTX_CLEAR ||
	       op == QGPU_CMD_CTX_UNBIND || op == QGPU_CMD_CTX_SET_VM;
}

igt_main
{
	igt_subtest("fixed-lengths-fit") {
		unsigned int op, longest = 0;

		for (op = 0; op < 256; op++) {
			unsigned int len = qgpu_cmd_len(op);

			igt_assert(len <= QGPU_CMD_MAX_FIXED_LEN);
			if (len > longest)
				longest = len;
		}
		/* the bound is the longest command, not a guess above it */
		igt_assert_eq(longest, QGPU_CMD_MAX_FIXED_LEN);
	}

	igt_subtest("ring-commands-per-engine") {
		unsigned int op;

		for (op = 0; op < 256; op++) {
			unsigned int p = qgpu_ring_cmd_len(QGPU_ENGINE_PAGING, op);
			unsigned int r = qgpu_ring_cmd_len(QGPU_ENGINE_RENDER, op);
			int both = op == QGPU_CMD_NOP || op == QGPU_CMD_FENCE;

			igt_assert_eq(!!p, both || is_paging_op(op));
			igt_assert_eq(!!r, both || is_render_op(op));
			if (p)
				igt_assert_eq(p, qgpu_cmd_len(op));
			if (r)
				igt_assert_eq(r, qgpu_cmd_len(op));
			igt_assert_eq(qgpu_ring_cmd_len(QGPU_NUM_ENGINES, op), 0);
		}
		igt_assert_eq(qgpu_ring_cmd_len(QGPU_ENGINE_PAGING,
						QGPU_CMD_TRANSFER), 7);
		igt_assert_eq(qgpu_ring_cmd_len(QGPU_ENGINE_RENDER,
						QGPU_CMD_EXEC), 6);
		igt_assert_eq(qgpu_ring_cmd_len(QGPU_ENGINE_RENDER,
						QGPU_CMD_FENCE), 5);
	}

	igt_subtest("dma-commands") {
		unsigned int op;

		for (op = 0; op < 256; op++) {
			int slot = op >= QGPU_DMA_BIND &&
				   op <= QGPU_DMA_TILE;
			int virt = op >= QGPU_DMA_VCOPY &&
				   op <= QGPU_DMA_VTILE;
			int dma = op == QGPU_DMA_NOP || slot || virt;

			igt_assert_eq(!!qgpu_dma_cmd_len(op), dma);
			igt_assert_eq(qgpu_dma_cmd_is_virtual(op), virt);
			/* each context kind runs NOP and its own commands */
			igt_assert_eq(qgpu_dma_cmd_in_mode(op, 0),
				      op == QGPU_DMA_NOP || slot);
			igt_assert_eq(qgpu_dma_cmd_in_mode(op, 1),
				      op == QGPU_DMA_NOP || virt);
			/* no ring command but NOP is valid in a DMA buffer */
			if (op != QGPU_CMD_NOP && (is_paging_op(op) ||
						   is_render_op(op) ||
						   op == QGPU_CMD_FENCE))
				igt_assert_eq(qgpu_dma_cmd_len(op), 0);
		}
		igt_assert_eq(qgpu_dma_cmd_len(QGPU_DMA_ADD), 8);
		igt_assert_eq(qgpu_dma_cmd_len(QGPU_DMA_BIND), 6);
		/* 1.3: TILE (0x49) and VTILE (0x58), 8 dwords each */
		igt_assert_eq(qgpu_dma_cmd_len(0x49), 8);
		igt_assert_eq(qgpu_dma_cmd_len(0x58), 8);
		igt_assert(qgpu_dma_cmd_in_mode(0x49, 0));
		igt_assert(!qgpu_dma_cmd_in_mode(0x49, 1));
		igt_assert(qgpu_dma_cmd_in_mode(0x58, 1));
		igt_assert(!qgpu_dma_cmd_in_mode(0x58, 0));
		igt_assert_eq(qgpu_dma_cmd_len(0x4a), 0);
		igt_assert_eq(qgpu_dma_cmd_len(0x59), 0);
		igt_assert(QGPU_DMA_TILE_LEN <= QGPU_CMD_MAX_FIXED_LEN);
	}

	igt_subtest("u64-parameters") {
		const unsigned int dw[] = { 0, 0x89abcdef, 0x01234567 };

		igt_assert(qgpu_cmd_u64(dw, 1) == 0x0123456789abcdefull);
	}

	igt_subtest("fault-reason-names") {
		unsigned int i, j;

		for (i = QGPU_FAULT_NONE; i <= QGPU_FAULT_PAGE_READ_ONLY; i++) {
			igt_assert(strcmp(qgpu_fault_reason_name(i), "?"));
			for (j = 0; j < i; j++)
				igt_assert(strcmp(qgpu_fault_reason_name(i),
						  qgpu_fault_reason_name(j)));
		}
		igt_assert(!strcmp(qgpu_fault_reason_name(QGPU_FAULT_BAD_OPCODE),
				   "bad-opcode"));
		igt_assert(!strcmp(qgpu_fault_reason_name(16), "?"));
		igt_assert(!strcmp(qgpu_fault_reason_name(QGPU_FAULT_ENGINE_MMIO),
				   "?"));
	}
}
