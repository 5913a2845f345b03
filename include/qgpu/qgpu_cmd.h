/* SPDX-License-Identifier: MIT */
/*
 * qgpu device contract, part 2: what the engines execute. The GPU address
 * space, the engines, and the command encoding of the rings and of DMA
 * buffers, with the one table of command lengths that the device, the
 * kernel's parser and libqgpu all decode with. Plain definitions, usable
 * from the kernel, QEMU and user space. docs/hw-spec.md is the prose
 * contract; keep the two in step.
 */
#ifndef QGPU_CMD_H
#define QGPU_CMD_H

#define QGPU_PAGE_SHIFT			12
#define QGPU_PAGE_SIZE			(1u << QGPU_PAGE_SHIFT)

/* Engines */
#define QGPU_ENGINE_PAGING		0
#define QGPU_ENGINE_RENDER		1
#define QGPU_NUM_ENGINES		2

/*
 * Fault reasons: what the device records (FAULT_REASON, and passed on to
 * user space as a context's fault) when a command or register access is
 * bad.
 */
#define QGPU_FAULT_NONE			0
#define QGPU_FAULT_BAD_OPCODE		1
#define QGPU_FAULT_BAD_LENGTH		2
#define QGPU_FAULT_BAD_ADDRESS		3
#define QGPU_FAULT_GART_UNMAPPED	4
#define QGPU_FAULT_BAD_ALIGN		5
#define QGPU_FAULT_BAD_SLOT		6
#define QGPU_FAULT_SLOT_BOUNDS		7
#define QGPU_FAULT_BAD_CONTEXT		8
#define QGPU_FAULT_BAD_RING		9
#define QGPU_FAULT_HAP_RANGE		10
#define QGPU_FAULT_BAD_REGISTER		11
#define QGPU_FAULT_DMA_ERROR		12
#define QGPU_FAULT_HAP_UNMAPPED		13
#define QGPU_FAULT_PAGE_NOT_PRESENT	14	/* 1.2: invalid entry in a walk */
#define QGPU_FAULT_PAGE_READ_ONLY	15	/* 1.2: write through READ_ONLY */
#define QGPU_FAULT_ENGINE_MMIO		0xff

/* GPU address space seen by the engines */
#define QGPU_GART_BASE			(1ull << 40)
#define QGPU_SYS_BIT			(1ull << 63)	/* | guest-physical address */

/*
 * Command encoding: a stream of little-endian 32-bit dwords. Every command
 * starts with a header dword: opcode in bits 7:0, flags in 15:8 and the
 * command length in dwords (header included) in 31:16.
 */
#define QGPU_CMD_HDR(op, flags, len)	(((op)) | ((flags) << 8) | \
					 ((len) << 16))
#define QGPU_CMD_OPCODE(hdr)		((hdr) & 0xff)
#define QGPU_CMD_FLAGS(hdr)		(((hdr) >> 8) & 0xff)
#define QGPU_CMD_LEN(hdr)		((hdr) >> 16)

/* Ring commands (both engines) */
#define QGPU_CMD_NOP			0x00	/* len >= 1: skip */
#define QGPU_CMD_FENCE			0x01	/* addr lo, hi, value lo, hi */
#define QGPU_CMD_FENCE_LEN		5
#define QGPU_FENCE_FLAG_IRQ		0x01

/* Paging engine commands (engine 0) */
#define QGPU_CMD_TRANSFER		0x10	/* size lo,hi, src lo,hi, dst lo,hi */
#define QGPU_CMD_TRANSFER_LEN		7
#define QGPU_CMD_FILL			0x11	/* size lo,hi, dst lo,hi, pattern */
#define QGPU_CMD_FILL_LEN		6
#define QGPU_CMD_DISCARD		0x12	/* size lo,hi, addr lo,hi */
#define QGPU_CMD_DISCARD_LEN		5
#define QGPU_CMD_MAP_APERTURE		0x13	/* first, count, list lo,hi */
#define QGPU_CMD_MAP_APERTURE_LEN	5
#define QGPU_CMD_UNMAP_APERTURE		0x14	/* first, count */
#define QGPU_CMD_UNMAP_APERTURE_LEN	3
#define QGPU_XFER_SRC_PAGELIST		0x01	/* flags: src is a page list */
#define QGPU_XFER_DST_PAGELIST		0x02	/* flags: dst is a page list */
/* GPU MMU paging commands (1.2, QGPU_CAP_MMU; qgpu_mmu.h) */
#define QGPU_CMD_UPDATE_PT		0x15	/* dst lo,hi, count, list lo,hi[, entries] */
#define QGPU_CMD_UPDATE_PT_LEN		6
#define QGPU_PT_DST_VIRTUAL		0x01	/* flags: dst is a paging-space VA */
#define QGPU_PT_INLINE			0x02	/* flags: entries follow at dword 6 */
#define QGPU_CMD_FLUSH_TLB		0x16	/* root lo,hi */
#define QGPU_CMD_FLUSH_TLB_LEN		3
#define QGPU_FLUSH_TLB_ALL		0x01	/* flags: every address space */
#define QGPU_CMD_TRANSFER_VIRTUAL	0x17	/* size lo,hi, src lo,hi, dst lo,hi */
#define QGPU_CMD_TRANSFER_VIRTUAL_LEN	7
#define QGPU_CMD_FILL_VIRTUAL		0x18	/* size lo,hi, dst lo,hi, pattern */
#define QGPU_CMD_FILL_VIRTUAL_LEN	6

/* Render engine ring commands (engine 1) */
#define QGPU_CMD_EXEC			0x20	/* ctx, buf lo,hi, start, end */
#define QGPU_CMD_EXEC_LEN		6
#define QGPU_CMD_CTX_CLEAR		0x21	/* ctx */
#define QGPU_CMD_CTX_CLEAR_LEN		2
#define QGPU_CMD_CTX_UNBIND		0x22	/* ctx, first slot, count */
#define QGPU_CMD_CTX_UNBIND_LEN		4
#define QGPU_CMD_CTX_SET_VM		0x23	/* ctx, root lo,hi (1.2) */
#define QGPU_CMD_CTX_SET_VM_LEN		4

/* DMA-buffer commands (inside EXEC) */
#define QGPU_DMA_NOP			0x00
#define QGPU_DMA_BIND			0x40	/* slot, addr lo,hi, size lo,hi */
#define QGPU_DMA_BIND_LEN		6
#define QGPU_DMA_COPY			0x41	/* dslot, doff, sslot, soff, size */
#define QGPU_DMA_COPY_LEN		6
#define QGPU_DMA_FILL			0x42	/* slot, off, size, pattern */
#define QGPU_DMA_FILL_LEN		5
#define QGPU_DMA_ADD			0x43	/* dslot,doff, aslot,aoff, bslot,boff, n */
#define QGPU_DMA_XOR			0x44
#define QGPU_DMA_ALU_LEN		8
#define QGPU_DMA_CHECKSUM		0x45	/* sslot, soff, size, dslot, doff */
#define QGPU_DMA_CHECKSUM_LEN		6
#define QGPU_DMA_FENCE			0x46	/* slot, off, value lo,hi */
#define QGPU_DMA_FENCE_LEN		5
#define QGPU_DMA_WAIT			0x47	/* slot, off, value lo,hi: until >= */
#define QGPU_DMA_WAIT_LEN		5
#define QGPU_DMA_TIMESTAMP		0x48	/* slot, off */
#define QGPU_DMA_TIMESTAMP_LEN		3
#define QGPU_DMA_TILE			0x49	/* dslot, doff, sslot, soff, w, h, pitch (1.3) */
#define QGPU_DMA_TILE_LEN		8
#define QGPU_TILE_UNTILE		0x01	/* flags: tiled -> linear, else linear -> tiled */
#define QGPU_DMA_BIND_ADDR_DW		2	/* dword index of the patched address */

/*
 * Virtual DMA-buffer commands (1.2): in a context bound to an address
 * space (CTX_SET_VM) they name GPU virtual addresses directly; there the
 * slot commands above (BIND..TILE) are BAD_OPCODE, and in a physical
 * context these are.
 */
#define QGPU_DMA_VCOPY			0x50	/* dst lo,hi, src lo,hi, size */
#define QGPU_DMA_VCOPY_LEN		6
#define QGPU_DMA_VFILL			0x51	/* dst lo,hi, size, pattern */
#define QGPU_DMA_VFILL_LEN		5
#define QGPU_DMA_VADD			0x52	/* d lo,hi, a lo,hi, b lo,hi, n */
#define QGPU_DMA_VXOR			0x53
#define QGPU_DMA_VALU_LEN		8
#define QGPU_DMA_VCHECKSUM		0x54	/* src lo,hi, size, dst lo,hi */
#define QGPU_DMA_VCHECKSUM_LEN		6
#define QGPU_DMA_VFENCE			0x55	/* addr lo,hi, value lo,hi */
#define QGPU_DMA_VFENCE_LEN		5
#define QGPU_DMA_VWAIT			0x56	/* addr lo,hi, value lo,hi: until >= */
#define QGPU_DMA_VWAIT_LEN		5
#define QGPU_DMA_VTIMESTAMP		0x57	/* addr lo,hi */
#define QGPU_DMA_VTIMESTAMP_LEN		3
#define QGPU_DMA_VTILE			0x58	/* dst lo,hi, src lo,hi, w, h, pitch (1.3) */
#define QGPU_DMA_VTILE_LEN		8

/*
 * Tiled surfaces (1.3, QGPU_CAP_TILING; docs/hw-spec.md section 17):
 * 32-bit pixels in 8x8-pixel tiles of 256 bytes, pixels row-major inside a
 * tile, tiles row-major over the surface; edge tiles are padded to a whole
 * tile. TILE/VTILE convert between that layout and a linear surface with a
 * pitch; width and height are at most QGPU_TILE_MAX_DIM pixels.
 */
#define QGPU_TILE_W			8	/* pixels per tile row */
#define QGPU_TILE_H			8	/* rows per tile */
#define QGPU_TILE_CPP			4	/* bytes per pixel */
#define QGPU_TILE_BYTES			256	/* W * H * CPP */
#define QGPU_TILE_MAX_DIM		16384

/* Tiles per row of a surface @width pixels wide */
static inline unsigned long long qgpu_tile_cols(unsigned int width)
{
	return ((unsigned long long)width + QGPU_TILE_W - 1) / QGPU_TILE_W;
}

/* Bytes of the tiled image of a @width x @height surface (0 if empty) */
static inline unsigned long long qgpu_tiled_size(unsigned int width,
						 unsigned int height)
{
	return qgpu_tile_cols(width) *
	       (((unsigned long long)height + QGPU_TILE_H - 1) / QGPU_TILE_H) *
	       QGPU_TILE_BYTES;
}

/* Byte offset of pixel (@x, @y) in the tiled image of a surface @width wide */
static inline unsigned long long qgpu_tiled_offset(unsigned int width,
						   unsigned int x,
						   unsigned int y)
{
	return ((y / QGPU_TILE_H) * qgpu_tile_cols(width) + x / QGPU_TILE_W) *
	       QGPU_TILE_BYTES +
	       ((y % QGPU_TILE_H) * QGPU_TILE_W + x % QGPU_TILE_W) *
	       QGPU_TILE_CPP;
}

/*
 * Bytes the linear side of a TILE spans: (@height - 1) rows of @pitch and
 * one of @width pixels; 0 if empty
 */
static inline unsigned long long qgpu_linear_span(unsigned int width,
						  unsigned int height,
						  unsigned int pitch)
{
	if (!width || !height)
		return 0;
	return (unsigned long long)(height - 1) * pitch +
	       (unsigned long long)width * QGPU_TILE_CPP;
}

/*
 * The device's checks of a TILE's geometry, in its order (hw-spec 17.3):
 * the fault reason, QGPU_FAULT_NONE if the width, height and pitch are
 * good; *@bad is the value the fault reports (FAULT_ADDR)
 */
static inline int qgpu_tile_check(unsigned int width, unsigned int height,
				  unsigned int pitch, unsigned int *bad)
{
	if (width > QGPU_TILE_MAX_DIM) {
		*bad = width;
		return QGPU_FAULT_BAD_LENGTH;
	}
	if (height > QGPU_TILE_MAX_DIM) {
		*bad = height;
		return QGPU_FAULT_BAD_LENGTH;
	}
	if (pitch % QGPU_TILE_CPP) {
		*bad = pitch;
		return QGPU_FAULT_BAD_ALIGN;
	}
	if (pitch < width * QGPU_TILE_CPP) {
		*bad = pitch;
		return QGPU_FAULT_BAD_LENGTH;
	}
	return QGPU_FAULT_NONE;
}

/*
 * Length in dwords of command @op, ring or DMA buffer (the minimum for
 * NOP, whose length is its header's), 0 for an unknown opcode. The one
 * table of command lengths: the device, the kernel and libqgpu all use it.
 */
static inline unsigned int qgpu_cmd_len(unsigned int op)
{
	switch (op) {
	case QGPU_CMD_NOP:
		return 1;
	case QGPU_CMD_FENCE:
		return QGPU_CMD_FENCE_LEN;
	case QGPU_CMD_TRANSFER:
		return QGPU_CMD_TRANSFER_LEN;
	case QGPU_CMD_FILL:
		return QGPU_CMD_FILL_LEN;
	case QGPU_CMD_DISCARD:
		return QGPU_CMD_DISCARD_LEN;
	case QGPU_CMD_MAP_APERTURE:
		return QGPU_CMD_MAP_APERTURE_LEN;
	case QGPU_CMD_UNMAP_APERTURE:
		return QGPU_CMD_UNMAP_APERTURE_LEN;
	case QGPU_CMD_UPDATE_PT:
		return QGPU_CMD_UPDATE_PT_LEN;
	case QGPU_CMD_FLUSH_TLB:
		return QGPU_CMD_FLUSH_TLB_LEN;
	case QGPU_CMD_TRANSFER_VIRTUAL:
		return QGPU_CMD_TRANSFER_VIRTUAL_LEN;
	case QGPU_CMD_FILL_VIRTUAL:
		return QGPU_CMD_FILL_VIRTUAL_LEN;
	case QGPU_CMD_EXEC:
		return QGPU_CMD_EXEC_LEN;
	case QGPU_CMD_CTX_CLEAR:
		return QGPU_CMD_CTX_CLEAR_LEN;
	case QGPU_CMD_CTX_UNBIND:
		return QGPU_CMD_CTX_UNBIND_LEN;
	case QGPU_CMD_CTX_SET_VM:
		return QGPU_CMD_CTX_SET_VM_LEN;
	case QGPU_DMA_BIND:
		return QGPU_DMA_BIND_LEN;
	case QGPU_DMA_COPY:
		return QGPU_DMA_COPY_LEN;
	case QGPU_DMA_FILL:
		return QGPU_DMA_FILL_LEN;
	case QGPU_DMA_ADD:
	case QGPU_DMA_XOR:
		return QGPU_DMA_ALU_LEN;
	case QGPU_DMA_CHECKSUM:
		return QGPU_DMA_CHECKSUM_LEN;
	case QGPU_DMA_FENCE:
		return QGPU_DMA_FENCE_LEN;
	case QGPU_DMA_WAIT:
		return QGPU_DMA_WAIT_LEN;
	case QGPU_DMA_TIMESTAMP:
		return QGPU_DMA_TIMESTAMP_LEN;
	case QGPU_DMA_TILE:
		return QGPU_DMA_TILE_LEN;
	case QGPU_DMA_VCOPY:
		return QGPU_DMA_VCOPY_LEN;
	case QGPU_DMA_VFILL:
		return QGPU_DMA_VFILL_LEN;
	case QGPU_DMA_VADD:
	case QGPU_DMA_VXOR:
		return QGPU_DMA_VALU_LEN;
	case QGPU_DMA_VCHECKSUM:
		return QGPU_DMA_VCHECKSUM_LEN;
	case QGPU_DMA_VFENCE:
		return QGPU_DMA_VFENCE_LEN;
	case QGPU_DMA_VWAIT:
		return QGPU_DMA_VWAIT_LEN;
	case QGPU_DMA_VTIMESTAMP:
		return QGPU_DMA_VTIMESTAMP_LEN;
	case QGPU_DMA_VTILE:
		return QGPU_DMA_VTILE_LEN;
	default:
		return 0;
	}
}

/* Is @op a virtual DMA-buffer command (a context bound to a VM only)? */
static inline int qgpu_dma_cmd_is_virtual(unsigned int op)
{
	return op >= QGPU_DMA_VCOPY && op <= QGPU_DMA_VTILE;
}

/* Is @op a DMA-buffer command (valid inside EXEC, in some context)? */
static inline int qgpu_cmd_is_dma(unsigned int op)
{
	return op == QGPU_DMA_NOP ||
	       (op >= QGPU_DMA_BIND && op <= QGPU_DMA_TILE) ||
	       qgpu_dma_cmd_is_virtual(op);
}

/*
 * Is @op a DMA-buffer command a context of this kind runs: NOP in both,
 * the slot commands in a physical context, the virtual ones in a context
 * bound to an address space?
 */
static inline int qgpu_dma_cmd_in_mode(unsigned int op, int virtual_ctx)
{
	if (op == QGPU_DMA_NOP)
		return 1;
	if (!qgpu_cmd_is_dma(op))
		return 0;
	return !!qgpu_dma_cmd_is_virtual(op) == !!virtual_ctx;
}

/* Length of DMA-buffer command @op as qgpu_cmd_len(), 0 if not one. */
static inline unsigned int qgpu_dma_cmd_len(unsigned int op)
{
	return qgpu_cmd_is_dma(op) ? qgpu_cmd_len(op) : 0;
}

/* The 64-bit parameter in dwords @i (low) and @i + 1 (high) of a command */
static inline unsigned long long qgpu_cmd_u64(const unsigned int *dw,
					      unsigned int i)
{
	return dw[i] | (unsigned long long)dw[i + 1] << 32;
}

/* The longest qgpu_cmd_len(): room for any command's fixed dwords. */
#define QGPU_CMD_MAX_FIXED_LEN		8

/*
 * Is @op a ring command of engine @engine? NOP and FENCE run on both
 * rings; every other ring command on one engine only. 0 for an engine the
 * device does not have.
 */
static inline int qgpu_cmd_is_ring(unsigned int engine, unsigned int op)
{
	if (engine >= QGPU_NUM_ENGINES)
		return 0;
	if (op == QGPU_CMD_NOP || op == QGPU_CMD_FENCE)
		return 1;
	if (engine == QGPU_ENGINE_PAGING)
		return op >= QGPU_CMD_TRANSFER && op <= QGPU_CMD_FILL_VIRTUAL;
	if (engine == QGPU_ENGINE_RENDER)
		return op >= QGPU_CMD_EXEC && op <= QGPU_CMD_CTX_SET_VM;
	return 0;
}

/* Length of ring command @op on engine @engine as qgpu_cmd_len(), 0 if not one. */
static inline unsigned int qgpu_ring_cmd_len(unsigned int engine,
					     unsigned int op)
{
	return qgpu_cmd_is_ring(engine, op) ? qgpu_cmd_len(op) : 0;
}

/* Short name of fault reason @reason for messages, "?" if unknown. */
static inline const char *qgpu_fault_reason_name(unsigned int reason)
{
	switch (reason) {
	case QGPU_FAULT_NONE:
		return "none";
	case QGPU_FAULT_BAD_OPCODE:
		return "bad-opcode";
	case QGPU_FAULT_BAD_LENGTH:
		return "bad-length";
	case QGPU_FAULT_BAD_ADDRESS:
		return "bad-address";
	case QGPU_FAULT_GART_UNMAPPED:
		return "gart-unmapped";
	case QGPU_FAULT_BAD_ALIGN:
		return "bad-align";
	case QGPU_FAULT_BAD_SLOT:
		return "bad-slot";
	case QGPU_FAULT_SLOT_BOUNDS:
		return "slot-bounds";
	case QGPU_FAULT_BAD_CONTEXT:
		return "bad-context";
	case QGPU_FAULT_BAD_RING:
		return "bad-ring";
	case QGPU_FAULT_HAP_RANGE:
		return "hap-range";
	case QGPU_FAULT_BAD_REGISTER:
		return "bad-register";
	case QGPU_FAULT_DMA_ERROR:
		return "dma-error";
	case QGPU_FAULT_HAP_UNMAPPED:
		return "hap-unmapped";
	case QGPU_FAULT_PAGE_NOT_PRESENT:
		return "page-not-present";
	case QGPU_FAULT_PAGE_READ_ONLY:
		return "page-read-only";
	default:
		return "?";
	}
}

/* FNV-1a over 32-bit words, as computed by QGPU_DMA_CHECKSUM */
#define QGPU_CSUM_INIT			0x811c9dc5u
#define QGPU_CSUM_PRIME			0x01000193u

#endif /* QGPU_CMD_H */
