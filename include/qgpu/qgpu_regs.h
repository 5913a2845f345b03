/* SPDX-License-Identifier: MIT */
/*
 * qgpu device contract, part 1: PCI identity, BARs and the register map
 * (BAR0). Shared by the QEMU device (qemu-device/) and the kernel driver's
 * hardware half (kernel/qgpu_hw.c and the engine, fence and scheduler
 * files); nothing else programs registers. The commands the engines run
 * are in qgpu_cmd.h. docs/hw-spec.md is the prose contract; keep the
 * three in step.
 */
#ifndef QGPU_REGS_H
#define QGPU_REGS_H

#include "qgpu_cmd.h"
#include "qgpu_mmu.h"

/* PCI identity */
#define QGPU_PCI_VENDOR_ID		0x1234
#define QGPU_PCI_DEVICE_ID		0x5147
#define QGPU_PCI_REVISION		0x01
#define QGPU_PCI_CLASS			0x0302	/* 3D controller */

/* BARs */
#define QGPU_BAR_MMIO			0	/* registers, 64 KiB */
#define QGPU_BAR_VRAM			2	/* CPU-visible VRAM window */
#define QGPU_BAR_HAP			4	/* CPU host aperture */
#define QGPU_MMIO_SIZE			0x10000

/* Identity and capabilities */
#define QGPU_REG_ID			0x000	/* RO: QGPU_ID_MAGIC */
#define QGPU_ID_MAGIC			0x51475055	/* "UPGQ" */
#define QGPU_REG_VERSION		0x004	/* RO: major << 16 | minor */
#define QGPU_VERSION_MAJOR		1
#define QGPU_VERSION_MINOR		4
#define QGPU_REG_CAPS			0x008	/* RO: QGPU_CAP_* */
#define QGPU_CAP_FENCE			(1u << 0)
#define QGPU_CAP_GART			(1u << 1)
#define QGPU_CAP_HOST_APERTURE		(1u << 2)
#define QGPU_CAP_PAGING			(1u << 3)
#define QGPU_CAP_RENDER			(1u << 4)
#define QGPU_CAP_CTX_SAVE		(1u << 5)
#define QGPU_CAP_FAULT_QUEUE		(1u << 6)	/* 1.1: fault FIFO, CTX_STATUS */
#define QGPU_CAP_MMU			(1u << 7)	/* 1.2: GPU MMU (qgpu_mmu.h) */
#define QGPU_CAP_TILING			(1u << 8)	/* 1.3: tiled surfaces, DMA TILE/VTILE */
#define QGPU_CAP_IO_COHERENT		(1u << 9)	/* 1.3: snoops CPU caches (io-coherent) */
#define QGPU_CAP_PING			(1u << 10)	/* 1.4: PING doorbell, INT_PING */
#define QGPU_CAP_VRAM_COMMITTED		(1u << 11)	/* 1.4: VRAM_COMMITTED */

#define QGPU_REG_VRAM_SIZE_LO		0x010	/* RO */
#define QGPU_REG_VRAM_SIZE_HI		0x014
#define QGPU_REG_VISIBLE_SIZE_LO	0x018	/* RO: size of BAR2 */
#define QGPU_REG_VISIBLE_SIZE_HI	0x01c
#define QGPU_REG_GART_SIZE_LO		0x020	/* RO: bytes of GART range */
#define QGPU_REG_GART_SIZE_HI		0x024
#define QGPU_REG_HAP_SIZE_LO		0x028	/* RO: size of BAR4 */
#define QGPU_REG_HAP_SIZE_HI		0x02c
#define QGPU_REG_NUM_ENGINES		0x030	/* RO */
#define QGPU_REG_MAX_SLOTS		0x034	/* RO: MaxAllocationListSlotId */
#define QGPU_REG_MAX_CONTEXTS		0x038	/* RO */
#define QGPU_REG_SCRATCH		0x03c	/* RW */

/* Interrupts: level, MSI (one vector) or INTx */
#define QGPU_REG_INT_STATUS		0x040	/* RO: pending QGPU_INT_* */
#define QGPU_REG_INT_MASK		0x044	/* RW: 1 = enabled */
#define QGPU_REG_INT_ACK		0x048	/* W1C */
#define QGPU_INT_ENGINE(n)		(1u << (n))	/* fence on engine n */
#define QGPU_INT_FAULT			(1u << 8)
#define QGPU_INT_PING			(1u << 9)	/* 1.4: PING answered */
#define QGPU_INT_ALL			(QGPU_INT_ENGINE(0) | QGPU_INT_ENGINE(1) | \
					 QGPU_INT_FAULT | QGPU_INT_PING)

#define QGPU_REG_RESET			0x04c	/* WO: write 1 = device reset */

/*
 * Fault queue: a FIFO of fault records. The FAULT_REASON..FAULT_OFFSET
 * registers show the oldest record still queued (all 0 when empty);
 * FAULT_COUNT counts every fault recorded, queued or not.
 */
#define QGPU_REG_FAULT_COUNT		0x050	/* RO */
#define QGPU_REG_FAULT_REASON		0x054	/* RO: QGPU_FAULT_* */
#define QGPU_REG_FAULT_ENGINE		0x058	/* RO: engine, 0xff = MMIO */
#define QGPU_REG_FAULT_CONTEXT		0x05c	/* RO */
#define QGPU_REG_FAULT_ADDR_LO		0x060	/* RO */
#define QGPU_REG_FAULT_ADDR_HI		0x064
#define QGPU_REG_FAULT_OFFSET		0x068	/* RO: ring or DMA-buffer offset */
#define QGPU_REG_HAP_FAULT_COUNT	0x06c	/* RO: unmapped aperture accesses */
#define QGPU_REG_FAULTQ_COUNT		0x070	/* RO: records queued, 0..DEPTH */
#define QGPU_REG_FAULTQ_POP		0x074	/* WO: 1 = remove the oldest record */
#define QGPU_REG_FAULTQ_LOST		0x078	/* RO: faults not queued (queue full) */
#define QGPU_FAULTQ_DEPTH		64
/* fault reasons (QGPU_FAULT_*): qgpu_cmd.h */

/* GART: 64-bit entries in guest memory, one per 4 KiB GART page */
#define QGPU_REG_GART_BASE_LO		0x080	/* RW: table address (guest phys) */
#define QGPU_REG_GART_BASE_HI		0x084
#define QGPU_REG_GART_CTRL		0x088	/* RW: bit 0 = enable */
#define QGPU_GART_CTRL_ENABLE		(1u << 0)
#define QGPU_GART_ENTRY_VALID		(1ull << 0)
#define QGPU_GART_ENTRY_ADDR_MASK	(~0xfffull)

/* CPU host aperture (BAR4) page mapping */
#define QGPU_REG_HAP_INDEX		0x0a0	/* RW: first aperture page */
#define QGPU_REG_HAP_COUNT		0x0a4	/* RW: number of pages */
#define QGPU_REG_HAP_VRAM_PAGE_LO	0x0a8	/* RW: first VRAM page (offset >> 12) */
#define QGPU_REG_HAP_VRAM_PAGE_HI	0x0ac
#define QGPU_REG_HAP_CMD		0x0b0	/* WO: QGPU_HAP_CMD_* */
#define QGPU_HAP_CMD_MAP		1
#define QGPU_HAP_CMD_UNMAP		2
#define QGPU_REG_HAP_MAPPED		0x0b4	/* RO: pages currently mapped */

/* Per-context fault state */
#define QGPU_REG_CTX_SEL		0x0b8	/* RW: context id for CTX_STATUS */
#define QGPU_REG_CTX_STATUS		0x0bc	/* RO: QGPU_CTX_STATUS_* of CTX_SEL */
#define QGPU_CTX_STATUS_FAULTED		(1u << 0)	/* EXECs skipped until CTX_CLEAR */

/* Device counters (RO, 64-bit) */
#define QGPU_REG_CYCLES_LO		0x0c0	/* device work units executed */
#define QGPU_REG_CYCLES_HI		0x0c4
#define QGPU_REG_VRAM_COMMITTED_LO	0x0c8	/* 1.4: VRAM bytes in host memory */
#define QGPU_REG_VRAM_COMMITTED_HI	0x0cc

/*
 * Ping (1.4, QGPU_CAP_PING): a doorbell the device answers inside the
 * register write, with no engine work: PING_ACK = the value, then
 * INT_PING. The cheapest interrupt round trip the device allows.
 */
#define QGPU_REG_PING			0x0d0	/* WO: value to answer */
#define QGPU_REG_PING_ACK		0x0d4	/* RO: last value answered */

/*
 * GPU MMU (1.2, QGPU_CAP_MMU): capabilities after DXGK_GPUMMUCAPS, the
 * paging process's address space, virtual-fault details, TLB counters.
 */
#define QGPU_REG_MMU_VA_BITS		0x100	/* RO: QGPU_MMU_VA_BITS */
#define QGPU_REG_MMU_LEVELS		0x104	/* RO: QGPU_MMU_LEVELS */
#define QGPU_REG_MMU_PAGE_SIZES		0x108	/* RO: QGPU_MMU_PAGE_SIZES */
#define QGPU_REG_MMU_PTE_SIZE		0x10c	/* RO: QGPU_MMU_PTE_SIZE */
#define QGPU_REG_MMU_TLB_ENTRIES	0x110	/* RO: per engine */
#define QGPU_REG_MMU_PAGING_ROOT_LO	0x114	/* RW: address space 0's root */
#define QGPU_REG_MMU_PAGING_ROOT_HI	0x118
#define QGPU_REG_FAULT_INFO		0x120	/* RO: QGPU_FAULT_INFO_* of the record */
#define QGPU_REG_FAULT_VM_LO		0x124	/* RO: root descriptor of the record */
#define QGPU_REG_FAULT_VM_HI		0x128
#define QGPU_REG_TLB_HITS_LO		0x130	/* RO, 64-bit, both engines */
#define QGPU_REG_TLB_HITS_HI		0x134
#define QGPU_REG_TLB_MISSES_LO		0x138	/* RO: walks */
#define QGPU_REG_TLB_MISSES_HI		0x13c
#define QGPU_REG_TLB_FLUSHES_LO		0x140	/* RO: FLUSH_TLB commands */
#define QGPU_REG_TLB_FLUSHES_HI		0x144

/* Engines: register block per engine (engine ids: qgpu_cmd.h) */
#define QGPU_ENGINE_BASE(n)		(0x1000 + (n) * 0x100)
#define QGPU_ENG_RING_BASE_LO		0x00	/* RW: guest phys, 4 KiB aligned */
#define QGPU_ENG_RING_BASE_HI		0x04
#define QGPU_ENG_RING_SIZE		0x08	/* RW: bytes, power of 2, 4K..1M */
#define QGPU_ENG_RING_HEAD		0x0c	/* RO: byte offset of next command */
#define QGPU_ENG_RING_TAIL		0x10	/* RW: doorbell */
#define QGPU_ENG_CTRL			0x14	/* RW */
#define QGPU_ENG_CTRL_ENABLE		(1u << 0)
#define QGPU_ENG_CTRL_RESET		(1u << 1)	/* WO: self-clearing */
#define QGPU_ENG_CTRL_STALL		(1u << 2)	/* RW: execute nothing */
#define QGPU_ENG_STATUS			0x18	/* RO */
#define QGPU_ENG_STATUS_BUSY		(1u << 0)
#define QGPU_ENG_STATUS_HALTED		(1u << 1)
#define QGPU_ENG_CMDS_LO		0x20	/* RO: commands executed */
#define QGPU_ENG_CMDS_HI		0x24
#define QGPU_ENG_BYTES_LO		0x28	/* RO: bytes moved/filled */
#define QGPU_ENG_BYTES_HI		0x2c
#define QGPU_RING_SIZE_MIN		0x1000
#define QGPU_RING_SIZE_MAX		0x100000

#endif /* QGPU_REGS_H */
