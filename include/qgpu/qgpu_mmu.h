/* SPDX-License-Identifier: MIT */
/*
 * qgpu device contract, part 3: the GPU MMU (device version 1.2,
 * QGPU_CAP_MMU). The page-table format the device walks and the driver
 * writes: virtual-address layout, entry bits, and the index arithmetic of
 * a walk. Plain definitions, usable from the kernel, QEMU, user space and
 * host unit tests. docs/hw-spec.md section 15 is the prose contract; keep
 * the two in step.
 *
 * A GPU virtual address (VA) has QGPU_MMU_VA_BITS bits and is translated
 * through QGPU_MMU_LEVELS levels of 4 KiB tables of 512 64-bit entries:
 * level 2 (the root, indexed by VA bits 38:30), level 1 (bits 29:21) and
 * level 0 (the leaf, bits 20:12). A root descriptor and every entry have
 * the same format: QGPU_PTE_* flags in bits 11:0, the 4 KiB-aligned
 * address of the next table (levels 2 and 1) or of the page (level 0) in
 * bits 63:12, in VRAM (a VRAM offset) or, with QGPU_PTE_SYSTEM, in guest
 * memory (a guest-physical address).
 */
#ifndef QGPU_MMU_H
#define QGPU_MMU_H

#define QGPU_MMU_VA_BITS		39
#define QGPU_MMU_VA_SIZE		(1ull << QGPU_MMU_VA_BITS)
#define QGPU_MMU_LEVELS			3
#define QGPU_MMU_LEVEL_BITS		9
#define QGPU_MMU_ENTRIES		(1u << QGPU_MMU_LEVEL_BITS)
#define QGPU_MMU_PTE_SIZE		8
#define QGPU_MMU_TABLE_SIZE		4096
#define QGPU_MMU_TLB_ENTRIES		64	/* per engine */

/* Page sizes: 4 KiB, and 64 KiB (16 leaf entries, the first one used) */
#define QGPU_MMU_PAGE_4K		0x1000ull
#define QGPU_MMU_PAGE_64K		0x10000ull
#define QGPU_MMU_64K_ENTRIES		16
/* MMU_PAGE_SIZES register: bit n set = pages of 4 KiB << n supported */
#define QGPU_MMU_PAGE_SIZES		((1u << 0) | (1u << 4))

/* Root descriptor, directory entry (levels 2, 1) and page entry (level 0) */
#define QGPU_PTE_VALID			(1ull << 0)
#define QGPU_PTE_SYSTEM			(1ull << 1)	/* guest memory, else VRAM */
#define QGPU_PTE_READ_ONLY		(1ull << 2)	/* level 0 only: no writes */
#define QGPU_PTE_64K			(1ull << 3)	/* level 0 only, see below */
#define QGPU_PTE_ADDR_MASK		(~0xfffull)
/*
 * QGPU_PTE_64K counts only in the first entry of an aligned group of 16
 * leaf entries: there it maps the whole 64 KiB VA page to the 64 KiB page
 * at (address & ~0xffff), and the other 15 entries are not read. In any
 * other entry the bit is ignored.
 */

/* FAULT_INFO register (faults of virtual accesses, 1.2) */
#define QGPU_FAULT_INFO_WRITE		(1u << 0)	/* the access was a write */
#define QGPU_FAULT_INFO_VIRTUAL		(1u << 1)	/* FAULT_ADDR is a VA */
#define QGPU_FAULT_INFO_LEVEL_SHIFT	4		/* bits 7:4 */
#define QGPU_FAULT_INFO_LEVEL(info)	(((info) >> 4) & 0xf)
#define QGPU_FAULT_LEVEL_ROOT		3	/* the root descriptor itself */
#define QGPU_FAULT_LEVEL_NONE		0xf	/* not a walk fault (VA range) */

/* Index of @va's entry in its level-@level table (2 = root, 0 = leaf) */
static inline unsigned int qgpu_mmu_index(unsigned long long va,
					  unsigned int level)
{
	return (va >> (12 + QGPU_MMU_LEVEL_BITS * level)) &
	       (QGPU_MMU_ENTRIES - 1);
}

/* Bytes of VA one entry of a level-@level table covers */
static inline unsigned long long qgpu_mmu_entry_span(unsigned int level)
{
	return 1ull << (12 + QGPU_MMU_LEVEL_BITS * level);
}

/* An entry: @addr (4 KiB aligned) with QGPU_PTE_* @flags */
static inline unsigned long long qgpu_mmu_pte(unsigned long long addr,
					      unsigned long long flags)
{
	return (addr & QGPU_PTE_ADDR_MASK) | flags;
}

#endif /* QGPU_MMU_H */
