// SPDX-License-Identifier: GPL-2.0
/*
 * qgpu: ring command encoding (docs/hw-spec.md, "Ring commands"). The
 * lengths come from the contract's one table, qgpu_cmd_len().
 */
#include <linux/kernel.h>
#include <qgpu/qgpu_cmd.h>

#include "qgpu_ring_cmd.h"

/* Write header and operands of @op; the operand count is the table's. */
static u32 qgpu_enc(u32 *dw, u32 op, u32 flags, const u32 *args)
{
	u32 len = qgpu_cmd_len(op), i;

	if (dw) {
		dw[0] = QGPU_CMD_HDR(op, flags, len);
		for (i = 1; i < len; i++)
			dw[i] = args[i - 1];
	}
	return len;
}

u32 qgpu_enc_nop(u32 *dw)
{
	return qgpu_enc(dw, QGPU_CMD_NOP, 0, NULL);
}

static u32 qgpu_enc_fence_flags(u32 *dw, u64 addr, u64 value, u32 flags)
{
	const u32 a[] = {
		lower_32_bits(addr), upper_32_bits(addr),
		lower_32_bits(value), upper_32_bits(value),
	};

	return qgpu_enc(dw, QGPU_CMD_FENCE, flags, a);
}

/* A FENCE that raises the engine's interrupt. */
u32 qgpu_enc_fence(u32 *dw, u64 addr, u64 value)
{
	return qgpu_enc_fence_flags(dw, addr, value, QGPU_FENCE_FLAG_IRQ);
}

/* A FENCE that only writes (a monitored fence; the job's fence follows). */
u32 qgpu_enc_fence_write(u32 *dw, u64 addr, u64 value)
{
	return qgpu_enc_fence_flags(dw, addr, value, 0);
}

u32 qgpu_enc_transfer(u32 *dw, u64 size, u64 src, u64 dst, u32 flags)
{
	const u32 a[] = {
		lower_32_bits(size), upper_32_bits(size),
		lower_32_bits(src), upper_32_bits(src),
		lower_32_bits(dst), upper_32_bits(dst),
	};

	return qgpu_enc(dw, QGPU_CMD_TRANSFER, flags, a);
}

u32 qgpu_enc_fill(u32 *dw, u64 size, u64 dst, u32 pattern)
{
	const u32 a[] = {
		lower_32_bits(size), upper_32_bits(size),
		lower_32_bits(dst), upper_32_bits(dst), pattern,
	};

	return qgpu_enc(dw, QGPU_CMD_FILL, 0, a);
}

u32 qgpu_enc_discard(u32 *dw, u64 size, u64 addr)
{
	const u32 a[] = {
		lower_32_bits(size), upper_32_bits(size),
		lower_32_bits(addr), upper_32_bits(addr),
	};

	return qgpu_enc(dw, QGPU_CMD_DISCARD, 0, a);
}

u32 qgpu_enc_map_aperture(u32 *dw, u32 first, u32 count, u64 list)
{
	const u32 a[] = {
		first, count, lower_32_bits(list), upper_32_bits(list),
	};

	return qgpu_enc(dw, QGPU_CMD_MAP_APERTURE, 0, a);
}

u32 qgpu_enc_unmap_aperture(u32 *dw, u32 first, u32 count)
{
	const u32 a[] = { first, count };

	return qgpu_enc(dw, QGPU_CMD_UNMAP_APERTURE, 0, a);
}

u32 qgpu_enc_exec(u32 *dw, u32 ctx, u64 buf, u32 start, u32 end)
{
	const u32 a[] = {
		ctx, lower_32_bits(buf), upper_32_bits(buf), start, end,
	};

	return qgpu_enc(dw, QGPU_CMD_EXEC, 0, a);
}

u32 qgpu_enc_ctx_clear(u32 *dw, u32 ctx)
{
	const u32 a[] = { ctx };

	return qgpu_enc(dw, QGPU_CMD_CTX_CLEAR, 0, a);
}

u32 qgpu_enc_ctx_unbind(u32 *dw, u32 ctx, u32 first, u32 count)
{
	const u32 a[] = { ctx, first, count };

	return qgpu_enc(dw, QGPU_CMD_CTX_UNBIND, 0, a);
}

/*
 * UPDATE_PAGE_TABLE of @count entries at @dst (a paging-space VA with
 * QGPU_PT_DST_VIRTUAL in @flags): from the list at @list, or with
 * QGPU_PT_INLINE from @entries written into the command itself. Returns
 * the command's length, which for inline entries is 6 + 2 * @count.
 */
u32 qgpu_enc_update_pt(u32 *dw, u64 dst, u32 count, u64 list,
		       const u64 *entries, u32 flags)
{
	const u32 a[] = {
		lower_32_bits(dst), upper_32_bits(dst), count,
		lower_32_bits(list), upper_32_bits(list),
	};
	u32 len = qgpu_cmd_len(QGPU_CMD_UPDATE_PT), i;

	if (!(flags & QGPU_PT_INLINE))
		return qgpu_enc(dw, QGPU_CMD_UPDATE_PT, flags, a);
	if (dw) {
		qgpu_enc(dw, QGPU_CMD_UPDATE_PT, flags, a);
		dw[0] = QGPU_CMD_HDR(QGPU_CMD_UPDATE_PT, flags,
				     len + 2 * count);
		for (i = 0; i < count; i++) {
			dw[len + 2 * i] = lower_32_bits(entries[i]);
			dw[len + 2 * i + 1] = upper_32_bits(entries[i]);
		}
	}
	return len + 2 * count;
}

/* FLUSH_TLB of the address space whose root descriptor is @root. */
u32 qgpu_enc_flush_tlb(u32 *dw, u64 root)
{
	const u32 a[] = { lower_32_bits(root), upper_32_bits(root) };

	return qgpu_enc(dw, QGPU_CMD_FLUSH_TLB, 0, a);
}

u32 qgpu_enc_transfer_virtual(u32 *dw, u64 size, u64 src, u64 dst)
{
	const u32 a[] = {
		lower_32_bits(size), upper_32_bits(size),
		lower_32_bits(src), upper_32_bits(src),
		lower_32_bits(dst), upper_32_bits(dst),
	};

	return qgpu_enc(dw, QGPU_CMD_TRANSFER_VIRTUAL, 0, a);
}

u32 qgpu_enc_fill_virtual(u32 *dw, u64 size, u64 dst, u32 pattern)
{
	const u32 a[] = {
		lower_32_bits(size), upper_32_bits(size),
		lower_32_bits(dst), upper_32_bits(dst), pattern,
	};

	return qgpu_enc(dw, QGPU_CMD_FILL_VIRTUAL, 0, a);
}

/* Bind context @ctx to the address space at @root (0: physical mode). */
u32 qgpu_enc_ctx_set_vm(u32 *dw, u32 ctx, u64 root)
{
	const u32 a[] = { ctx, lower_32_bits(root), upper_32_bits(root) };

	return qgpu_enc(dw, QGPU_CMD_CTX_SET_VM, 0, a);
}
