/* SPDX-License-Identifier: GPL-2.0 */
#ifndef QGPU_RING_CMD_H
#define QGPU_RING_CMD_H

#include <linux/types.h>

/*
 * Encoders of the engines' ring commands (include/qgpu/qgpu_cmd.h). Each
 * writes its command at @dw (when @dw is not NULL) and returns its length
 * in dwords. The only place in the driver that encodes ring commands.
 */
u32 qgpu_enc_nop(u32 *dw);
u32 qgpu_enc_fence(u32 *dw, u64 addr, u64 value);
u32 qgpu_enc_fence_write(u32 *dw, u64 addr, u64 value);
u32 qgpu_enc_transfer(u32 *dw, u64 size, u64 src, u64 dst, u32 flags);
u32 qgpu_enc_fill(u32 *dw, u64 size, u64 dst, u32 pattern);
u32 qgpu_enc_discard(u32 *dw, u64 size, u64 addr);
u32 qgpu_enc_map_aperture(u32 *dw, u32 first, u32 count, u64 list);
u32 qgpu_enc_unmap_aperture(u32 *dw, u32 first, u32 count);
u32 qgpu_enc_exec(u32 *dw, u32 ctx, u64 buf, u32 start, u32 end);
u32 qgpu_enc_ctx_clear(u32 *dw, u32 ctx);
u32 qgpu_enc_ctx_unbind(u32 *dw, u32 ctx, u32 first, u32 count);
u32 qgpu_enc_update_pt(u32 *dw, u64 dst, u32 count, u64 list,
		       const u64 *entries, u32 flags);
u32 qgpu_enc_flush_tlb(u32 *dw, u64 root);
u32 qgpu_enc_transfer_virtual(u32 *dw, u64 size, u64 src, u64 dst);
u32 qgpu_enc_fill_virtual(u32 *dw, u64 size, u64 dst, u32 pattern);
u32 qgpu_enc_ctx_set_vm(u32 *dw, u32 ctx, u64 root);

#endif /* QGPU_RING_CMD_H */
