/* SPDX-License-Identifier: MIT */
/*
 * qgpu user-space API.
 *
 * Conventions: every struct is naturally aligned with explicit padding; every
 * pad and reserved field must be zero (EINVAL otherwise); every flags field
 * rejects unknown bits with EINVAL; user pointers are __u64. The DOC
 * sections below say what the objects are (model), what the kernel
 * guarantees (memory rules), which ioctls exist (ioctls) and how this
 * interface grows without breaking old binaries (growth).
 */
#ifndef QGPU_DRM_H
#define QGPU_DRM_H

/**
 * DOC: qgpu model
 *
 * qgpu implements the video memory manager of the Windows display driver
 * model, as the Windows Driver Kit documents "Initializing Use of Memory
 * Segments", "Mapping Virtual Addresses to a Memory Segment", "Splitting a
 * DMA Buffer", "Allocation Usage Tracking" and "GpuMmu Example Scenarios"
 * describe it (with SetAllocationPriority, QueryVideoMemoryInfo,
 * OfferAllocations and ReclaimAllocations, "qgpu priorities, budgets and
 * offers"), behind a DRM render node. The user-mode driver (libqgpu)
 * builds DMA buffers; the kernel is the memory manager and the scheduler.
 * The objects, in those documents' words:
 *
 * - Segment ("Initializing Use of Memory Segments"): a range of the GPU's
 *   address space the memory manager places allocations in, described by
 *   &struct drm_qgpu_segment (after DXGK_SEGMENTDESCRIPTOR) and read with
 *   the same two-call pattern (%QGPU_QUERY_SEGMENTS: the count first, then
 *   the descriptors). qgpu has at most three, by stable id: CPU-visible
 *   VRAM (%QGPU_SEG_VISIBLE, a memory-space segment the CPU reaches
 *   linearly through BAR2, as "Mapping Virtual Addresses to a Memory
 *   Segment" describes), VRAM the CPU cannot see (%QGPU_SEG_LOCAL, reached
 *   only page by page through the CPU host aperture, BAR4) and the aperture
 *   segment (%QGPU_SEG_APERTURE, aperture space: a GART over system pages).
 *   Id 0 (%QGPU_SEG_SYSTEM) is not a segment: an allocation there is not
 *   resident. The paging buffer's segment and size (PagingBufferSegmentId,
 *   PagingBufferSize) are in &struct drm_qgpu_device_info.
 * - Allocation: a GEM object, named by a handle of the DRM file. It is
 *   created (%DRM_IOCTL_QGPU_GEM_CREATE) with its supported segment set and
 *   its preferred segments, and is not resident at first; it reads as
 *   zeros wherever it is first placed. The memory manager commits it to a
 *   segment when a DMA buffer needs it and evicts it (to the aperture
 *   segment when its set allows, else to system memory) when another needs
 *   the room, moving the content with paging buffers on the paging engine
 *   (engine 0): the transfers and fills of "GpuMmu Example Scenarios". It
 *   is destroyed by closing its last handle (DRM_IOCTL_GEM_CLOSE); see the
 *   memory rules for deferred destruction.
 * - Residency operation: %DRM_IOCTL_QGPU_GEM_RESIDE commits an allocation
 *   to a segment or evicts it, as D3DKMTMakeResident and Evict would, for
 *   tests and tools. It pins nothing: the memory manager may move the
 *   allocation again at once. %DRM_IOCTL_QGPU_GEM_INFO says where an
 *   allocation is and how a CPU mapping reaches it (QGPU_CPU_PATH_*).
 * - Lock2 ("Allocation Usage Tracking"): %DRM_IOCTL_QGPU_GEM_LOCK sets an
 *   allocation up for CPU access and returns the offset to mmap() on the
 *   DRM file; %DRM_IOCTL_QGPU_GEM_UNLOCK ends it. The mapping follows the
 *   allocation wherever it moves. It must be MAP_SHARED: a private
 *   (copy-on-write) mapping of an allocation, through this offset or
 *   through its dma-buf, fails with EINVAL. Allocations created without
 *   %QGPU_GEM_CPU_ACCESS are restricted while locked (the memory rules).
 * - Context: %DRM_IOCTL_QGPU_CTX_CREATE makes a GPU context, a queue of
 *   DMA buffers that run in order, with a resource table in the device
 *   (a slot table of &drm_qgpu_device_info.max_slots rows, saved per
 *   context, see %QGPU_INFO_CAP_CTX_SAVE). A device fault or a hang in one
 *   of its DMA buffers makes the context lost (%QGPU_QUERY_CONTEXT says
 *   why); a lost context accepts no more submits (ECANCELED).
 * - DMA buffer: the command stream a submit runs on a context (QGPU_DMA_*
 *   commands, docs/hw-spec.md section 9). Commands reach memory only
 *   through slots: a BIND command binds a slot of the resource table to a
 *   range of GPU addresses, and the other commands name a slot and an
 *   offset in it. User space never writes a GPU address: the kernel patches
 *   every BIND with the address of the allocation its patch entry names.
 * - Allocation list (&struct drm_qgpu_alloc_entry): the allocations a DMA
 *   buffer uses, by handle, each marked %QGPU_ALLOC_WRITE when the buffer
 *   writes it. Handle 0 is the NULL allocation, which unbinds a slot.
 * - Patch-location list (&struct drm_qgpu_patch_entry, after
 *   D3DDDI_PATCHLOCATIONLIST): exactly one entry per BIND, in buffer
 *   order. An entry names an allocation-list entry (AllocationIndex), the
 *   slot the BIND programs (SlotId), the offset in the allocation, where
 *   in the buffer the BIND's address is (PatchOffset) and from where in the
 *   buffer on the allocation is needed (SplitOffset).
 * - Split point ("Splitting a DMA Buffer"): each distinct split offset of
 *   the patch-location list. The kernel walks the list in order, making
 *   each allocation resident and patching its BIND; when an allocation
 *   cannot be brought in, the portion from the previous split point up to
 *   that entry's split offset is queued, only the allocations of the
 *   resource table at that point stay where they are (slots reprogrammed
 *   at that split point carry no restriction), and the walk goes on. A
 *   paging buffer may run between two portions, so a DMA buffer must
 *   reprogram (BIND again) every slot it still uses after a split point;
 *   every other slot is unbound there, and using it faults. The portions
 *   of one buffer run back to back on its context;
 *   &drm_qgpu_submit.portions says how many there were.
 * - Syncobj: a DRM syncobj (binary, or a timeline point) that a submit
 *   waits for before its first portion runs (&drm_qgpu_submit.in_syncs) or
 *   signals when its last portion is done (&drm_qgpu_submit.out_syncs).
 *   Following "Allocation Usage Tracking", synchronising CPU access with
 *   GPU work is the user-mode driver's job, done with syncobjs; the kernel
 *   only keeps each allocation's content safe across its own moves (and
 *   adds implicit synchronisation for sharing, see the memory rules).
 *
 * - GPU virtual addressing ("GpuMmu Example Scenarios"; device
 *   capability %QGPU_INFO_CAP_MMU, %QGPU_QUERY_MMU): the second addressing
 *   model, beside the physical one above. Each DRM file is a process with
 *   its own GPU virtual address space (a VM), whose page tables the kernel
 *   keeps in VRAM and writes only through paging buffers run by the
 *   paging process (the kernel's own address space). A process reserves
 *   ranges of its address space (%DRM_IOCTL_QGPU_VM_RESERVE), maps
 *   allocations, or parts of them, into them read-only or read-write
 *   (%DRM_IOCTL_QGPU_VM_MAP) and unmaps them (%DRM_IOCTL_QGPU_VM_UNMAP,
 *   %DRM_IOCTL_QGPU_VM_FREE). An allocation mapped into a VM stays
 *   reachable at its virtual addresses wherever the memory manager moves
 *   it: its page-table entries point at VRAM while it is resident in a
 *   VRAM segment and at its system pages otherwise.
 * - Residency in the virtual model is the process's job:
 *   %DRM_IOCTL_QGPU_MAKE_RESIDENT commits allocations to VRAM, or evicts
 *   them, and returns at once with a paging fence value: the point of the
 *   process's paging-fence timeline (a syncobj, %QGPU_QUERY_VM_INFO) that
 *   signals when the paging engine has done the paging (page table
 *   updates, transfers, zero fills). Every DMA buffer of a virtual
 *   context waits for the process's latest paging fence before it runs.
 * - Virtual context: a context created with %QGPU_CTX_CREATE_VIRTUAL runs
 *   in its file's VM. Its DMA buffers carry GPU virtual addresses directly
 *   (the QGPU_DMA_V* commands); they have no allocation list and no
 *   patch-location list, and are never split. Contexts of both models run
 *   side by side on one device.
 *
 * How they relate: a DRM file owns allocations, contexts and syncobjs. One
 * %DRM_IOCTL_QGPU_SUBMIT names a context, a DMA buffer, an allocation list
 * of the file's handles, a patch-location list whose entries index the
 * allocation list and point at the buffer's BINDs, and the syncobjs to wait
 * for and to signal. The whole request is checked and the walk over the
 * patch-location list is planned before anything runs; then the buffer is
 * queued as one or more portions, with the paging its split points need in
 * between.
 */

/**
 * DOC: qgpu memory rules
 *
 * Allocations (GEM objects) live in segments (%QGPU_QUERY_SEGMENTS) or in
 * system memory; the kernel moves them with paging buffers on the paging
 * engine. The rules a user-mode driver can rely on:
 *
 * - Deferred destruction: closing the last handle of an allocation never
 *   waits for the GPU. Work already queued may still use it; its segment
 *   range and pages are released once that work is done (until then the
 *   range may already be reused, behind that work).
 * - CPU access follows Lock2 ("Allocation Usage Tracking", WDK): a CPU
 *   mapping follows its allocation wherever it moves. An allocation
 *   created without %QGPU_GEM_CPU_ACCESS is never mapped onto VRAM: when
 *   one of its mappings is touched while it is in VRAM, it is first moved
 *   to the aperture segment or system memory, whichever path created the
 *   mapping. A CPU fault waits only for a move of the allocation in
 *   flight, never for rendering that uses it; synchronising CPU access
 *   with rendering is the user-mode driver's job (syncobjs). A mapping
 *   already valid never waits.
 * - Host-aperture pages are lent to CPU mappings of non-visible VRAM and
 *   taken back from the least recently used mapping when needed.
 * - CPU caching ("Allocation Usage Tracking"): a CPU mapping of an
 *   allocation's system pages (not resident, or in the aperture segment)
 *   is cached (write-back) for an allocation created with
 *   %QGPU_GEM_CPU_CACHED and write-combined for any other; a mapping of
 *   VRAM (BAR2 or the host aperture) is always write-combined: CPU caches
 *   cannot be kept coherent with VRAM. So a cached allocation is locked
 *   only while it is in the aperture segment or not resident: Lock2, and
 *   a CPU fault on any of its mappings, first move it out of VRAM, and it
 *   is not committed to VRAM while locked. The exception is a device whose
 *   VRAM is all CPU-visible (a resizable BAR:
 *   &drm_qgpu_device_info.visible_vram_size equal to vram_size): there it
 *   is locked where it is, and while in VRAM it is mapped write-combined.
 *   %DRM_IOCTL_QGPU_GEM_INFO reports the caching of the mapping
 *   (&drm_qgpu_gem_info.cpu_caching).
 * - I/O coherency ("Allocation Usage Tracking"): a device with
 *   %QGPU_INFO_CAP_IO_COHERENT snoops the CPU caches when it reads or
 *   writes system memory, and its aperture segment has
 *   %QGPU_SEGF_CACHE_COHERENT. On a device without it (docs/hw-spec.md,
 *   section 16) no segment has the flag, and the user-mode driver must
 *   call %DRM_IOCTL_QGPU_INVALIDATE_CACHE on a cached allocation after CPU
 *   writes and before GPU reads, and after GPU writes and before CPU reads
 *   (libqgpu does both in its lock/map and unlock/unmap paths).
 *   Write-combined allocations need nothing.
 * - Implicit synchronisation: every allocation's GPU work is in its GEM
 *   object's reservation object (its dma-buf's, once exported). A DMA
 *   buffer's fence goes in as a write for allocation-list entries with
 *   %QGPU_ALLOC_WRITE and as a read otherwise; it waits for earlier writes
 *   (and, if it writes, reads) by anyone, including fences another driver
 *   or a sync_file (DMA_BUF_IOCTL_IMPORT_SYNC_FILE) put there. Moves are
 *   kernel-usage fences. poll() and DMA_BUF_IOCTL_EXPORT_SYNC_FILE on the
 *   dma-buf see all of it. The paging engine, which every process shares,
 *   waits only for qgpu's own fences: a foreign fence holds back the DMA
 *   buffers that use the allocation, never another process's paging.
 * - PRIME: an exported allocation can be passed to another process and
 *   imported back into qgpu (the same allocation, wherever it resides),
 *   and mmapped through the dma-buf (the mapping follows moves like any
 *   other). Another device may attach to it only if its supported segment
 *   set has the aperture segment (EINVAL otherwise): it is given the
 *   allocation's system pages, and while any device is attached the
 *   allocation stays in system memory or the aperture segment (a request
 *   for VRAM fails with EBUSY). A dma-buf of another device imported into
 *   qgpu stays the exporter's memory: it is only ever mapped into the
 *   aperture segment, never copied into VRAM (its supported segment set is
 *   the aperture segment alone), and its CPU mappings are the exporter's.
 * - Submission (%DRM_IOCTL_QGPU_SUBMIT) follows "Splitting a DMA Buffer"
 *   (WDK). The kernel parses the whole DMA buffer; every split offset must
 *   be the start of a command it parsed. The walk over the patch-location
 *   list is planned completely before anything is queued: when it fails
 *   (ENOSPC: some split point's allocations cannot be resident at once;
 *   EBUSY: a locked allocation may not go where it must) nothing ran,
 *   nothing moved and no syncobj was signalled. Between split portions the
 *   device's slot table keeps only the bindings of allocations the kernel
 *   keeps in place; every other slot is unbound, and using it faults.
 * - Virtual addresses: a process's DMA buffers reach only what its own VM
 *   maps: there is no way to name another process's memory. An access to
 *   a virtual address that is not mapped, or a write to a read-only
 *   mapping, is a device fault: the context is lost (ECANCELED on its next
 *   submit) with the faulting address in &drm_qgpu_context_status, and
 *   other contexts go on. Unmapping writes invalid entries and flushes
 *   the device's TLB behind all of the process's queued work on the
 *   allocation, before the memory can be given to anyone else.
 * - Virtual residency: the memory manager may still evict an allocation
 *   a process made resident, but only once that process's queued work is
 *   complete; it moves the content, rewrites the page-table entries and
 *   flushes the TLB, so the next DMA buffer finds the same bytes at the
 *   same virtual address. Mapped allocations must be the file's own (not
 *   imported from another device).
 */

/**
 * DOC: qgpu VRAM and host memory
 *
 * On a device with %QGPU_INFO_CAP_VRAM_COMMITTED, VRAM takes host memory
 * only where something was written (docs/hw-spec.md section 19), and the
 * driver keeps it so: once a destroyed allocation's last work is done, its
 * VRAM range is discarded (given back to the host; counted in
 * &drm_qgpu_stats.vram_discards and &drm_qgpu_stats.vram_discarded_bytes),
 * and a new allocation, zero-filled, takes no host memory for that until
 * it is written. A range that an eviction frees is not discarded: what
 * needed the room takes it at once. &drm_qgpu_stats.vram_committed is the
 * device's own count of VRAM bytes in host memory, so a process can watch
 * the host's memory for VRAM follow what it allocates and frees. Nothing a
 * process reads changes: a new allocation reads zero either way.
 */

/**
 * DOC: qgpu device lost
 *
 * An engine that stops making progress is reset after the job timeout (2
 * s without a command completed or a byte moved, looked at twice). A
 * render engine's hang loses the guilty context (%QGPU_CTX_LOST_HANG) and
 * runs the other contexts' jobs again. The paging engine's cannot be
 * undone that way: a paging job that never completed leaves allocations
 * where the memory manager's books no longer say what they hold, so a
 * paging-engine failure (a paging job that hangs, or that cannot be
 * written to the ring) loses the device. From then on every context is
 * lost (%QGPU_CTX_LOST_DEVICE: its submits fail with ECANCELED, its queued
 * DMA buffers are cancelled, their fences signalled with an error), no job
 * reaches the device, a CPU access to an allocation's mapping faults
 * (SIGBUS; monitored-fence pages stay readable), %DRM_IOCTL_QGPU_CTX_CREATE
 * fails with EIO and &drm_qgpu_stats.device_lost reads 1. Everything else
 * keeps working, so that processes can look and clean up: queries,
 * closing handles and files, waits (they end). Unbinding the device and
 * binding it again (or reloading the module) starts afresh. The kernel
 * log says "device lost" and why.
 */

/**
 * DOC: qgpu ioctls
 *
 * Each ioctl takes one struct, documented below with every rule the kernel
 * enforces and the errno it answers with. All are allowed on render nodes
 * and, on the primary node, to authenticated clients (EACCES otherwise).
 * Besides the errnos listed, any of them may fail with EFAULT (the struct
 * or an array it points to cannot be read or written), ENOMEM, and ENODEV
 * once the device is gone (unplugged): one under way when it goes is
 * finished before the device is taken down, or fails with ENODEV; a
 * sleeping %DRM_IOCTL_QGPU_MFENCE_WAIT or %DRM_IOCTL_QGPU_PING returns
 * then. An unknown ioctl number is EINVAL.
 *
 * - %DRM_IOCTL_QGPU_QUERY, &struct drm_qgpu_query: device information,
 *   segments, statistics, a context's status and the file's video memory
 *   budget and usage (&enum qgpu_query_type).
 *   EINVAL (type, arg), ENOENT (context), ENOSPC (buffer too small).
 * - %DRM_IOCTL_QGPU_GEM_CREATE, &struct drm_qgpu_gem_create: create an
 *   allocation (not resident) and return its handle. EINVAL.
 * - %DRM_IOCTL_QGPU_GEM_LOCK, &struct drm_qgpu_gem_lock: Lock2, set an
 *   allocation up for CPU access; returns the mmap() offset. EINVAL,
 *   ENOENT, EBUSY, EOVERFLOW.
 * - %DRM_IOCTL_QGPU_GEM_UNLOCK, &struct drm_qgpu_gem_unlock: end one
 *   Lock2. EINVAL (also: not locked), ENOENT.
 * - %DRM_IOCTL_QGPU_GEM_RESIDE, &struct drm_qgpu_gem_reside: commit an
 *   allocation to a segment or evict it (residency operation). EINVAL,
 *   ENOENT, EBUSY, ENOSPC.
 * - %DRM_IOCTL_QGPU_GEM_INFO, &struct drm_qgpu_gem_info: where an
 *   allocation is, its lock count and CPU path. ENOENT.
 * - %DRM_IOCTL_QGPU_SUBMIT, &struct drm_qgpu_submit: check, plan and queue
 *   a DMA buffer with its allocation and patch-location lists and
 *   syncobjs. EINVAL, ENOENT, E2BIG, ECANCELED, ENOSPC, EBUSY, EINTR.
 * - %DRM_IOCTL_QGPU_CTX_CREATE, &struct drm_qgpu_ctx_create: create a GPU
 *   context. EINVAL (flags), ENODEV (the device has no context for user
 *   space), ENOSPC (every context id is in use, or the user's share),
 *   EIO (the device is lost).
 * - %DRM_IOCTL_QGPU_CTX_DESTROY, &struct drm_qgpu_ctx_destroy: destroy a
 *   context without waiting for its work. EINVAL (pad), ENOENT.
 * - %DRM_IOCTL_QGPU_VM_RESERVE, &struct drm_qgpu_vm_reserve: reserve a
 *   range of the file's GPU virtual address space. EINVAL, ENODEV (no
 *   MMU), ENOSPC, EEXIST.
 * - %DRM_IOCTL_QGPU_VM_FREE, &struct drm_qgpu_vm_range: free a reserved
 *   range, unmapping what it holds. EINVAL, ENOENT, ENODEV (no MMU).
 * - %DRM_IOCTL_QGPU_VM_MAP, &struct drm_qgpu_vm_map: map (part of) an
 *   allocation at a virtual address. EINVAL, ENOENT, EEXIST, ENOSPC.
 * - %DRM_IOCTL_QGPU_VM_UNMAP, &struct drm_qgpu_vm_range: unmap a range.
 *   EINVAL, ENODEV (no MMU), ENOSPC (a hole in one mapping past the
 *   mapping limits).
 * - %DRM_IOCTL_QGPU_MAKE_RESIDENT, &struct drm_qgpu_make_resident:
 *   MakeResident or Evict a list of allocations; returns a paging fence
 *   value. EINVAL, ENOENT, ENODEV, EBUSY, ENOSPC (the address space's
 *   page tables cannot be set up).
 * - %DRM_IOCTL_QGPU_INVALIDATE_CACHE, &struct drm_qgpu_invalidate_cache:
 *   InvalidateCache, write back and invalidate the CPU cache lines of a
 *   range of a cached allocation. EINVAL, ENOENT, EINTR.
 * - %DRM_IOCTL_QGPU_GEM_DESTROY, &struct drm_qgpu_gem_destroy: destroy an
 *   allocation's handle without waiting (DestroyAllocation2, with
 *   AssumeNotInUse). EINVAL, ENOENT.
 * - %DRM_IOCTL_QGPU_MFENCE_CREATE, &struct drm_qgpu_mfence_create: create
 *   a monitored fence (see "qgpu monitored fences"). EINVAL, ENOSPC.
 * - %DRM_IOCTL_QGPU_MFENCE_DESTROY, &struct drm_qgpu_mfence_destroy: close
 *   its handle. EINVAL, ENOENT.
 * - %DRM_IOCTL_QGPU_MFENCE_WAIT, &struct drm_qgpu_mfence_wait: sleep until
 *   monitored fences reach values. EINVAL, ENOENT, ETIME, EINTR.
 * - %DRM_IOCTL_QGPU_MFENCE_EXPORT, &struct drm_qgpu_mfence_export: a
 *   monitored fence value as a syncobj fence. EINVAL, ENOENT.
 * - %DRM_IOCTL_QGPU_GEM_SET_PRIORITY, &struct drm_qgpu_gem_set_priority:
 *   SetAllocationPriority, the priorities of allocations (see "qgpu
 *   priorities, budgets and offers"). EINVAL, ENOENT.
 * - %DRM_IOCTL_QGPU_GEM_OFFER, &struct drm_qgpu_gem_offer:
 *   OfferAllocations, let the memory manager discard allocations' content
 *   under pressure. EINVAL, EPERM, ENOENT.
 * - %DRM_IOCTL_QGPU_GEM_RECLAIM, &struct drm_qgpu_gem_reclaim:
 *   ReclaimAllocations, take offered allocations back and learn whether
 *   their content survived. EINVAL, EPERM, ENOENT.
 * - %DRM_IOCTL_QGPU_PING, &struct drm_qgpu_ping: one round trip through
 *   the device's PING doorbell (%QGPU_INFO_CAP_PING), the floor submission
 *   latency is measured against. EINVAL, EOPNOTSUPP, ETIMEDOUT, EINTR,
 *   ENODEV.
 *
 * Everything else is the DRM core's: closing handles (DRM_IOCTL_GEM_CLOSE),
 * dumb buffers, PRIME, and syncobjs (DRM_IOCTL_SYNCOBJ_*).
 */

/**
 * DOC: qgpu UAPI growth
 *
 * Old binaries keep working on new kernels, and new binaries can find out
 * what an old kernel lacks, because the interface only grows in these ways:
 *
 * - Nothing that exists changes: not a struct's layout, an ioctl number, a
 *   constant's value or meaning, an errno a documented rule answers with.
 *   A retired value is never reused.
 * - Flags: every flags field an ioctl reads (&drm_qgpu_gem_create.flags,
 *   &drm_qgpu_gem_lock.flags, &drm_qgpu_gem_unlock.flags,
 *   &drm_qgpu_gem_reside.flags, &drm_qgpu_submit.flags,
 *   &drm_qgpu_ctx_create.flags, &drm_qgpu_alloc_entry.flags,
 *   &drm_qgpu_sync_entry.flags, &drm_qgpu_vm_reserve.flags,
 *   &drm_qgpu_vm_map.flags, &drm_qgpu_make_resident.flags,
 *   &drm_qgpu_invalidate_cache.flags,
 *   &drm_qgpu_gem_set_priority.flags, &drm_qgpu_gem_offer.flags,
 *   &drm_qgpu_gem_reclaim.flags, &drm_qgpu_ping.flags) rejects unknown bits with EINVAL. A new
 *   behaviour is a new bit: old binaries never set it, and an old kernel
 *   refuses it, which is how new user space detects it.
 * - Pad and reserved inputs: every pad field an ioctl reads
 *   (&drm_qgpu_patch_entry.pad, &drm_qgpu_ctx_destroy.pad,
 *   &drm_qgpu_gem_offer.pad, &drm_qgpu_gem_reclaim.pad,
 *   &drm_qgpu_ping.pad) and every input
 *   that must be zero today (&drm_qgpu_gem_create.handle,
 *   &drm_qgpu_query.arg for types without an argument,
 *   &drm_qgpu_gem_reside.segment for evictions) is rejected with EINVAL
 *   when not zero, so it can become a field whose zero value means today's
 *   behaviour. Output pads (&drm_qgpu_device_info.pad,
 *   &drm_qgpu_context_status.pad) are written as zero and may carry a value
 *   later.
 * - Arrays in a submit (allocation list, patch-location list, sync entries)
 *   have fixed element sizes: a new element layout comes with a new
 *   &drm_qgpu_submit.flags bit that announces it.
 * - Queries: new information is a new &enum qgpu_query_type value (an old
 *   kernel answers EINVAL). The answer of an existing type keeps its layout
 *   and size, since a caller may pass exactly that size and a smaller
 *   buffer fails with ENOSPC; array answers grow only in their count (a
 *   device with more segments). The one exception is &struct
 *   drm_qgpu_stats, which gains counters at its end (the cache counters
 *   were appended): size it with the two-call pattern, and find the
 *   segment array of %QGPU_QUERY_STATS at the end of the answer, at
 *   &drm_qgpu_query.size minus &drm_qgpu_query.count times the size of
 *   &struct drm_qgpu_segment_stats.
 * - Ioctl structs may grow at their end: the DRM core copies as much as
 *   the caller's ioctl number says and zero-fills the rest, so fields
 *   appended with "zero means as before" keep old binaries working. An old
 *   kernel ignores what a new binary appends: a field that must not be
 *   ignored comes with a flags bit that asks for it.
 * - Reserved values: 0 is not a valid query type, residency operation or
 *   context id, and DMA-buffer opcodes the kernel does not know, or
 *   command flags it does not know, are rejected (EINVAL). New ioctls take
 *   the next free DRM_QGPU_* numbers (0x18 and up). Segment ids are stable;
 *   new segments take new ids. User space must ignore unknown
 *   QGPU_INFO_CAP_* and QGPU_SEGF_* bits, must treat unknown QGPU_CTX_*
 *   states as lost and unknown QGPU_CPU_PATH_* values as "some other path".
 *   New device features are announced by new QGPU_INFO_CAP_* bits.
 */

#include "drm.h"

#if defined(__cplusplus)
extern "C" {
#endif

#define DRM_QGPU_QUERY		0x00
#define DRM_QGPU_GEM_CREATE	0x01
#define DRM_QGPU_GEM_LOCK	0x02
#define DRM_QGPU_GEM_UNLOCK	0x03
#define DRM_QGPU_GEM_RESIDE	0x04
#define DRM_QGPU_GEM_INFO	0x05
#define DRM_QGPU_SUBMIT		0x06
#define DRM_QGPU_CTX_CREATE	0x07
#define DRM_QGPU_CTX_DESTROY	0x08
#define DRM_QGPU_VM_RESERVE	0x09
#define DRM_QGPU_VM_FREE	0x0a
#define DRM_QGPU_VM_MAP		0x0b
#define DRM_QGPU_VM_UNMAP	0x0c
#define DRM_QGPU_MAKE_RESIDENT	0x0d
#define DRM_QGPU_MFENCE_CREATE	0x0e
#define DRM_QGPU_MFENCE_DESTROY	0x0f
#define DRM_QGPU_MFENCE_WAIT	0x10
#define DRM_QGPU_MFENCE_EXPORT	0x11
#define DRM_QGPU_GEM_DESTROY	0x12
#define DRM_QGPU_INVALIDATE_CACHE	0x13
#define DRM_QGPU_GEM_SET_PRIORITY	0x14
#define DRM_QGPU_GEM_OFFER	0x15
#define DRM_QGPU_GEM_RECLAIM	0x16
#define DRM_QGPU_PING		0x17

/**
 * enum qgpu_query_type - what &struct drm_qgpu_query asks for
 * @QGPU_QUERY_DEVICE: &struct drm_qgpu_device_info.
 * @QGPU_QUERY_SEGMENTS: an array of &struct drm_qgpu_segment, one per
 *	segment, ordered by id. The two-call pattern: call first with
 *	&drm_qgpu_query.ptr zero to learn count and size, then again with a
 *	buffer of at least that size.
 * @QGPU_QUERY_STATS: &struct drm_qgpu_stats (global counters) followed by
 *	an array of &struct drm_qgpu_segment_stats, one per segment.
 * @QGPU_QUERY_FILE_STATS: &struct drm_qgpu_stats for the calling file only
 *	(no segment array): submissions, split portions, and the paging
 *	(paging buffers, bytes moved, evictions) its submits and
 *	%DRM_IOCTL_QGPU_GEM_RESIDE calls caused. Allocation counts stay 0.
 * @QGPU_QUERY_CONTEXT: &struct drm_qgpu_context_status for the context
 *	given in &drm_qgpu_query.arg.
 * @QGPU_QUERY_MMU: &struct drm_qgpu_mmu_info: the GPU MMU's capabilities
 *	and the device-wide virtual-addressing counters. ENODEV without an
 *	MMU.
 * @QGPU_QUERY_VM_INFO: &struct drm_qgpu_vm_info: the calling file's
 *	address space. ENODEV without an MMU.
 * @QGPU_QUERY_VM_LAYOUT: an array of &struct drm_qgpu_vm_layout_entry,
 *	the calling file's reserved ranges and mappings in address order
 *	(two-call pattern). ENODEV without an MMU.
 * @QGPU_QUERY_VIDMEM_INFO: QueryVideoMemoryInfo: an array of &struct
 *	drm_qgpu_vidmem_info, the calling file's budget and usage, one entry
 *	per segment group (%QGPU_SEGMENT_GROUP_LOCAL first, then
 *	%QGPU_SEGMENT_GROUP_NON_LOCAL; two-call pattern). Every device has
 *	it, with or without an MMU.
 */
enum qgpu_query_type {
	QGPU_QUERY_DEVICE = 1,
	QGPU_QUERY_SEGMENTS = 2,
	QGPU_QUERY_STATS = 3,
	QGPU_QUERY_FILE_STATS = 4,
	QGPU_QUERY_CONTEXT = 5,
	QGPU_QUERY_MMU = 6,
	QGPU_QUERY_VM_INFO = 7,
	QGPU_QUERY_VM_LAYOUT = 8,
	QGPU_QUERY_VIDMEM_INFO = 9
};

/**
 * struct drm_qgpu_query - read device information (two-call pattern)
 * @type: one of &enum qgpu_query_type.
 * @arg: type-specific argument (the context id for %QGPU_QUERY_CONTEXT,
 *	otherwise must be zero).
 * @count: out: number of array elements the answer holds (1 for single
 *	structs).
 * @size: in: bytes available at @ptr; out: bytes the full answer needs.
 *	When @ptr is zero nothing is copied and only @count and @size are
 *	returned. When @size is smaller than needed the call fails with
 *	ENOSPC, copies nothing and reports the needed @size.
 * @ptr: user pointer to the output buffer, or zero.
 *
 * The input value of @count is ignored. Errors: EINVAL (@type unknown,
 * @arg not zero for a type without an argument), ENOENT (%QGPU_QUERY_CONTEXT
 * for an id that is not a context of this file), ENOSPC (above), EFAULT.
 */
struct drm_qgpu_query {
	__u32 type;
	__u32 arg;
	__u32 count;
	__u32 size;
	__u64 ptr;
};

/* Capability bits reported in &drm_qgpu_device_info.caps */
#define QGPU_INFO_CAP_FENCE		(1u << 0)
#define QGPU_INFO_CAP_GART		(1u << 1)
#define QGPU_INFO_CAP_HOST_APERTURE	(1u << 2)
#define QGPU_INFO_CAP_PAGING		(1u << 3)
#define QGPU_INFO_CAP_RENDER		(1u << 4)
/* Split portions of different contexts may interleave (slot tables saved) */
#define QGPU_INFO_CAP_CTX_SAVE		(1u << 5)
#define QGPU_INFO_CAP_FAULT_QUEUE	(1u << 6)
/* GPU MMU: virtual contexts and the VM ioctls (%QGPU_QUERY_MMU) */
#define QGPU_INFO_CAP_MMU		(1u << 7)
/* Tiled surfaces: %QGPU_GEM_TILED, the DMA commands TILE and VTILE */
#define QGPU_INFO_CAP_TILING		(1u << 8)
/* The device snoops CPU caches (docs/hw-spec.md section 16; memory rules) */
#define QGPU_INFO_CAP_IO_COHERENT	(1u << 9)
/* The PING doorbell: %DRM_IOCTL_QGPU_PING (docs/hw-spec.md section 18) */
#define QGPU_INFO_CAP_PING		(1u << 10)
/*
 * The device reports its VRAM in host memory (&drm_qgpu_stats.vram_committed)
 * and gives destroyed allocations' VRAM back (docs/hw-spec.md section 19)
 */
#define QGPU_INFO_CAP_VRAM_COMMITTED	(1u << 11)

/**
 * struct drm_qgpu_device_info - identity and capabilities
 * @vendor_id: PCI vendor id.
 * @device_id: PCI device id.
 * @revision: PCI revision.
 * @version: device version register (major << 16 | minor).
 * @caps: QGPU_INFO_CAP_* bits (the device's capability register).
 * @num_engines: engines the device has (paging engine is engine 0).
 * @max_slots: MaxAllocationListSlotId: slots per context resource table.
 * @max_contexts: hardware contexts (slot tables) the device saves.
 * @vram_size: bytes of VRAM.
 * @visible_vram_size: bytes of VRAM the CPU can reach through BAR2.
 * @gart_size: bytes of the GART aperture range.
 * @host_aperture_size: bytes of the CPU host aperture (BAR4), 0 if none.
 * @paging_buffer_segment: PagingBufferSegmentId: segment holding the
 *	paging buffer.
 * @paging_buffer_size: PagingBufferSize in bytes.
 * @num_segments: number of segments (%QGPU_QUERY_SEGMENTS count).
 * @pad: zero.
 */
struct drm_qgpu_device_info {
	__u32 vendor_id;
	__u32 device_id;
	__u32 revision;
	__u32 version;
	__u32 caps;
	__u32 num_engines;
	__u32 max_slots;
	__u32 max_contexts;
	__u64 vram_size;
	__u64 visible_vram_size;
	__u64 gart_size;
	__u64 host_aperture_size;
	__u32 paging_buffer_segment;
	__u32 paging_buffer_size;
	__u32 num_segments;
	__u32 pad;
};

/* Segment ids: stable; absent segments are simply not reported. */
#define QGPU_SEG_SYSTEM		0	/* not a segment: not resident */
#define QGPU_SEG_VISIBLE	1	/* CPU-visible local VRAM */
#define QGPU_SEG_LOCAL		2	/* non-CPU-visible local VRAM */
#define QGPU_SEG_APERTURE	3	/* GART aperture over system pages */
#define QGPU_SEG_MAX		3
#define QGPU_SEG_MASK_ALL	((1u << QGPU_SEG_VISIBLE) | \
				 (1u << QGPU_SEG_LOCAL) | \
				 (1u << QGPU_SEG_APERTURE))

/* Segment flags, after DXGK_SEGMENTFLAGS */
#define QGPU_SEGF_APERTURE		(1u << 0)  /* aperture-space segment */
#define QGPU_SEGF_CPU_VISIBLE		(1u << 1)  /* CPU may map linearly */
#define QGPU_SEGF_CACHE_COHERENT	(1u << 2)  /* snooped: QGPU_INFO_CAP_IO_COHERENT */
#define QGPU_SEGF_USE_BANKING		(1u << 3)  /* never set by qgpu */
#define QGPU_SEGF_CPU_HOST_APERTURE	(1u << 4)  /* reachable via host aperture */
#define QGPU_SEGF_POPULATED_FROM_SYS	(1u << 5)  /* aperture: system pages */
#define QGPU_SEGF_PAGING_BUFFER		(1u << 6)  /* holds the paging buffer */

/**
 * struct drm_qgpu_segment - a segment descriptor (DXGK_SEGMENTDESCRIPTOR)
 * @id: segment id, one of QGPU_SEG_*.
 * @flags: QGPU_SEGF_* bits.
 * @base: GPU physical base address of the segment.
 * @size: bytes in the segment.
 * @cpu_bar_offset: for CPU-visible segments, the offset of the segment's
 *	first byte in BAR2 (linear mapping); otherwise zero.
 * @reserved_size: bytes the driver reserved for itself (paging buffer).
 */
struct drm_qgpu_segment {
	__u32 id;
	__u32 flags;
	__u64 base;
	__u64 size;
	__u64 cpu_bar_offset;
	__u64 reserved_size;
};

/**
 * struct drm_qgpu_segment_stats - usage of one segment
 * @id: segment id.
 * @allocations: allocations resident in the segment.
 * @size: bytes in the segment.
 * @used: bytes in use (allocations plus driver reservations).
 */
struct drm_qgpu_segment_stats {
	__u32 id;
	__u32 allocations;
	__u64 size;
	__u64 used;
};

/**
 * struct drm_qgpu_stats - memory-manager counters (monotonic unless noted)
 * @allocations: live allocations (current value).
 * @allocated_bytes: bytes of live allocations (current value).
 * @bytes_to_vram: bytes paged into VRAM.
 * @bytes_from_vram: bytes paged out of VRAM.
 * @bytes_vram_to_vram: bytes moved within VRAM.
 * @bytes_filled: bytes written by FILL commands.
 * @evictions: allocations evicted from a segment.
 * @aperture_maps: MAP_APERTURE_SEGMENT operations.
 * @aperture_unmaps: UNMAP_APERTURE_SEGMENT operations.
 * @hap_maps: CPU host aperture map operations.
 * @hap_unmaps: CPU host aperture unmap operations.
 * @paging_buffers: paging buffers submitted to the paging engine.
 * @submissions: submit ioctls that queued work.
 * @split_portions: DMA-buffer portions executed (1 per unsplit submit).
 * @faults: device faults seen.
 * @resets: engine resets after a timeout.
 * @cache_invalidations: %DRM_IOCTL_QGPU_INVALIDATE_CACHE calls that wrote
 *	back and invalidated CPU cache lines (a call with nothing to do is not
 *	counted). Appended to the struct, see "qgpu UAPI growth".
 * @cache_invalidated_bytes: bytes those calls wrote back and invalidated.
 * @offer_discards: offered allocations whose content the memory manager
 *	discarded instead of copying it out of VRAM (%DRM_IOCTL_QGPU_GEM_OFFER;
 *	also counted in @evictions). Appended, see "qgpu UAPI growth".
 * @offer_discarded_bytes: their bytes (not counted in @bytes_from_vram:
 *	nothing was copied).
 * @migrations_back: allocations moved back from the aperture segment to a
 *	VRAM segment when they were used again and that segment had room
 *	(see "qgpu priorities, budgets and offers"; also counted in
 *	@bytes_to_vram). Appended, see "qgpu UAPI growth".
 * @migrated_back_bytes: their bytes.
 * @vram_discards: destroyed allocations whose VRAM range the driver gave
 *	back to the host with a DISCARD once their last work was done (so
 *	that VRAM no live allocation holds takes no host memory; see "qgpu
 *	VRAM and host memory"). Appended, see "qgpu UAPI growth".
 * @vram_discarded_bytes: their bytes.
 * @vram_committed: bytes of VRAM the device holds in host memory now
 *	(current value, the device's VRAM_COMMITTED register; device-wide:
 *	0 in %QGPU_QUERY_FILE_STATS).
 * @device_lost: 1 once the device is lost (see "qgpu device lost"), else
 *	0 (device-wide: 0 in %QGPU_QUERY_FILE_STATS). Appended, see "qgpu
 *	UAPI growth".
 */
struct drm_qgpu_stats {
	__u64 allocations;
	__u64 allocated_bytes;
	__u64 bytes_to_vram;
	__u64 bytes_from_vram;
	__u64 bytes_vram_to_vram;
	__u64 bytes_filled;
	__u64 evictions;
	__u64 aperture_maps;
	__u64 aperture_unmaps;
	__u64 hap_maps;
	__u64 hap_unmaps;
	__u64 paging_buffers;
	__u64 submissions;
	__u64 split_portions;
	__u64 faults;
	__u64 resets;
	__u64 cache_invalidations;
	__u64 cache_invalidated_bytes;
	__u64 offer_discards;
	__u64 offer_discarded_bytes;
	__u64 migrations_back;
	__u64 migrated_back_bytes;
	__u64 vram_discards;
	__u64 vram_discarded_bytes;
	__u64 vram_committed;
	__u64 device_lost;
};

/* &drm_qgpu_gem_create.flags */
#define QGPU_GEM_CPU_ACCESS	(1u << 0)  /* allocation will be CPU-locked */
#define QGPU_GEM_CPU_CACHED	(1u << 1)  /* cached CPU mappings (else WC) */
#define QGPU_GEM_TILED		(1u << 2)  /* holds tiled (swizzled) content */
#define QGPU_GEM_CREATE_FLAGS	(QGPU_GEM_CPU_ACCESS | QGPU_GEM_CPU_CACHED | \
				 QGPU_GEM_TILED)

/**
 * struct drm_qgpu_gem_create - create an allocation
 * @size: bytes, > 0; rounded up to the page size.
 * @segment_mask: supported segment set: bit (1 << id) per QGPU_SEG_* id;
 *	must be non-empty and only name segments the device has.
 * @flags: QGPU_GEM_* flags (%QGPU_GEM_CREATE_FLAGS are all there are).
 * @preferred: ordered preferred segment ids, one per byte, least
 *	significant byte first, terminated by a zero byte; each must be in
 *	@segment_mask. Zero means "in the order of @segment_mask's ids".
 * @handle: in: must be zero; out: GEM handle.
 *
 * The allocation starts in system memory (not resident). Rules, each
 * EINVAL when broken: @flags has only known bits; @handle is zero; @size
 * is not zero and at most the larger of VRAM and the GART range, and at
 * most 4 GiB; @segment_mask is not empty, has only bits of
 * %QGPU_SEG_MASK_ALL, and names only segments the device has; @preferred
 * has no id after its terminator, no id above %QGPU_SEG_MAX, and only ids
 * in @segment_mask; a %QGPU_GEM_CPU_ACCESS allocation whose set has
 * %QGPU_SEG_LOCAL also has %QGPU_SEG_APERTURE ("Allocation Usage
 * Tracking": it must be placeable where the CPU can reach it).
 *
 * %QGPU_GEM_CPU_CACHED makes CPU mappings of the allocation's system pages
 * cached (write-back); without it they are write-combined (the default).
 * CPU mappings of VRAM are write-combined either way. A cached allocation
 * follows the Lock2 rule for cached allocations (&struct drm_qgpu_gem_lock)
 * and, on a device without %QGPU_INFO_CAP_IO_COHERENT, needs
 * %DRM_IOCTL_QGPU_INVALIDATE_CACHE between CPU and GPU accesses.
 *
 * %QGPU_GEM_TILED marks an allocation that holds tiled ("swizzled")
 * surfaces, the layout of docs/hw-spec.md section 17: the tiled side of a
 * TILE command must be bound to one, its linear side must not (see
 * &struct drm_qgpu_submit). The memory manager moves its bytes as they
 * are, so its content stays tiled wherever it is, and a CPU mapping of it
 * shows tiled bytes. So, after "Mapping Virtual Addresses to a Memory
 * Segment" ("a CPU-accessible allocation located in an aperture-space
 * segment cannot be swizzled"), %QGPU_GEM_TILED together with
 * %QGPU_GEM_CPU_ACCESS is EINVAL: a CPU-accessible allocation may always
 * be evicted to the aperture segment or system memory, where the
 * application would read it directly. A surface the CPU accesses is two
 * allocations instead, a tiled one for the GPU and a linear
 * CPU-accessible one that a lock untiles into (libqgpu's
 * qgpu_surface_create()). %QGPU_GEM_TILED on a device without
 * %QGPU_INFO_CAP_TILING is EINVAL too.
 * Errors: EINVAL, ENOMEM.
 */
struct drm_qgpu_gem_create {
	__u64 size;
	__u32 segment_mask;
	__u32 flags;
	__u32 preferred;
	__u32 handle;
};

/**
 * struct drm_qgpu_gem_lock - Lock2: set up an allocation for CPU access
 * @handle: GEM handle.
 * @flags: must be zero (Lock2 has no flags yet: "Allocation Usage
 *	Tracking" reserves them, all 0).
 * @offset: out: fake offset to pass to mmap() on the DRM fd (MAP_SHARED;
 *	a private mapping fails with EINVAL). The mapping follows the
 *	allocation wherever it moves.
 *
 * An allocation created without %QGPU_GEM_CPU_ACCESS is locked through
 * the aperture segment (it is moved there, or to system memory) or while
 * it is in system memory; when it is in VRAM and its supported set lacks
 * the aperture segment, locking fails with EBUSY (evict it to system
 * memory first). While locked it is not committed to a VRAM segment.
 * A CPU-accessible allocation carries no placement restriction, unless it
 * is cached.
 *
 * A %QGPU_GEM_CPU_CACHED allocation is locked only while it is in the
 * aperture segment or not resident ("Allocation Usage Tracking": cache
 * coherency between the CPU and VRAM cannot be guaranteed): when it is in
 * VRAM it is first moved to the aperture segment, if its set has it, or to
 * system memory, its content preserved; while locked it is not committed
 * to a VRAM segment. On a device whose VRAM is all CPU-visible (resizable
 * BAR: &drm_qgpu_device_info.visible_vram_size equal to vram_size) it is
 * locked where it is instead, and a mapping of it in VRAM is
 * write-combined through BAR2 (qgpu never maps BAR memory cacheable).
 *
 * Locks are the file's: the allocation's lock count is the sum of every
 * file's, a file unlocks only its own, and a file's locks of an
 * allocation end with its handle of it (GEM_CLOSE, or the file closed),
 * so that a process that imported a shared allocation cannot keep it
 * locked for the others once it let it go.
 *
 * Errors: EINVAL (flags), ENOENT (handle), EBUSY (above), EOVERFLOW (lock
 * count), ENOMEM.
 */
struct drm_qgpu_gem_lock {
	__u32 handle;
	__u32 flags;
	__u64 offset;
};

/**
 * struct drm_qgpu_gem_unlock - end a Lock2
 * @handle: GEM handle.
 * @flags: must be zero.
 *
 * Ends one %DRM_IOCTL_QGPU_GEM_LOCK; existing mappings stay valid (they
 * follow the allocation whatever its lock count).
 *
 * Errors: EINVAL (@flags, or this file holds no lock of the allocation),
 * ENOENT (handle).
 */
struct drm_qgpu_gem_unlock {
	__u32 handle;
	__u32 flags;
};

/* &drm_qgpu_gem_reside.op */
#define QGPU_RESIDE_MAKE_RESIDENT	1  /* commit to @segment (0: preferred) */
#define QGPU_RESIDE_EVICT		2  /* evict (aperture if allowed, else system) */
#define QGPU_RESIDE_EVICT_SYSTEM	3  /* evict to system memory */

/**
 * struct drm_qgpu_gem_reside - move an allocation (test and tool interface)
 * @handle: GEM handle.
 * @op: QGPU_RESIDE_* operation.
 * @segment: in: target segment for MAKE_RESIDENT (0 = by preference);
 *	must be 0 for the evictions. Out: the segment the allocation is in
 *	afterwards (0 = system).
 * @flags: must be zero.
 *
 * MAKE_RESIDENT with @segment 0 leaves an allocation that is resident
 * anywhere where it is; otherwise it tries the preferred segments, then
 * the rest of the supported set, evicting what is not in use. Nothing is
 * pinned: the memory manager may move the allocation again at any time.
 *
 * Errors: EINVAL (@flags; @op unknown; @segment above %QGPU_SEG_MAX, absent,
 * not in the supported set, or not 0 for an eviction), ENOENT (handle),
 * EBUSY (the Lock2 rules, or another device attached through PRIME, keep it
 * out of VRAM), ENOSPC (no room even after evicting everything evictable).
 */
struct drm_qgpu_gem_reside {
	__u32 handle;
	__u32 op;
	__u32 segment;
	__u32 flags;
};

/*
 * &drm_qgpu_gem_info.cpu_path: how a CPU mapping of an allocation reaches
 * its content where the allocation is now, as the allocation's state is:
 * BAR whenever it is in CPU-visible VRAM, HAP only while host-aperture
 * pages are lent to it (a CPU fault lends them), NONE in hidden VRAM
 * otherwise. A CPU fault may first move the allocation (one without
 * %QGPU_GEM_CPU_ACCESS leaves VRAM; "DOC: qgpu memory rules"), so the path
 * a mapping takes is the one reported after the fault.
 */
#define QGPU_CPU_PATH_NONE	0	/* none now: hidden VRAM, no aperture pages */
#define QGPU_CPU_PATH_BAR	1	/* BAR2, linear: CPU-visible VRAM */
#define QGPU_CPU_PATH_HAP	2	/* host aperture (BAR4) pages over hidden VRAM */
#define QGPU_CPU_PATH_SYSTEM	3	/* system pages: not resident, or aperture */

/* &drm_qgpu_gem_info.cpu_caching: the page protection of a CPU mapping */
#define QGPU_CPU_CACHING_NONE	0	/* no mapping now, or another device's */
#define QGPU_CPU_CACHING_WC	1	/* write-combined */
#define QGPU_CPU_CACHING_CACHED	2	/* cached (write-back) */

/**
 * struct drm_qgpu_gem_info - where an allocation is
 * @handle: GEM handle.
 * @segment: out: segment id, or 0 when only in system memory.
 * @size: out: bytes.
 * @gpu_addr: out: GPU physical address when resident, else 0.
 * @segment_mask: out: supported segment set.
 * @lock_count: out: outstanding Lock2 calls.
 * @cpu_path: out: how a CPU mapping reaches it where it is now, one of
 *	QGPU_CPU_PATH_*.
 * @flags: out: QGPU_GEM_* creation flags.
 * @cpu_caching: out: the caching of a CPU mapping where the allocation is
 *	now, one of QGPU_CPU_CACHING_*: CACHED for a %QGPU_GEM_CPU_CACHED
 *	allocation reached through its system pages (%QGPU_CPU_PATH_SYSTEM),
 *	WC for any other allocation there and for every allocation reached
 *	through BAR2 or the host aperture, NONE when no mapping reaches it
 *	now (%QGPU_CPU_PATH_NONE) or when its mappings are another device's
 *	(a dma-buf imported into qgpu). Appended to the struct: callers built
 *	against an older header do not see it.
 * @pad: out: zero.
 *
 * Every field but @handle is output only. Errors: ENOENT (handle).
 */
struct drm_qgpu_gem_info {
	__u32 handle;
	__u32 segment;
	__u64 size;
	__u64 gpu_addr;
	__u32 segment_mask;
	__u32 lock_count;
	__u32 cpu_path;
	__u32 flags;
	__u32 cpu_caching;
	__u32 pad;
};

/*
 * &drm_qgpu_alloc_entry.flags. QGPU_ALLOC_WRITE declares that the DMA
 * buffer writes the allocation: its fence goes into the allocation's
 * reservation object as a write (else as a read), which is what implicit
 * synchronisation with other users of the allocation follows. The memory
 * manager never relies on it for the content: it moves an allocation only
 * after all of qgpu's work on it, whatever the flags said.
 */
#define QGPU_ALLOC_WRITE	(1u << 0)

/**
 * struct drm_qgpu_alloc_entry - one allocation-list entry
 * @handle: GEM handle, or 0 for a NULL allocation (unbinds its slots).
 * @flags: QGPU_ALLOC_* flags.
 *
 * Errors: EINVAL (unknown @flags bits), ENOENT (a non-zero @handle that is
 * not an allocation of this file). The same allocation may be listed more
 * than once; it is written when any of its entries says so.
 */
struct drm_qgpu_alloc_entry {
	__u32 handle;
	__u32 flags;
};

/**
 * struct drm_qgpu_patch_entry - one patch-location list entry
 * @alloc_index: index into the allocation list (AllocationIndex),
 *	< &drm_qgpu_submit.num_allocs.
 * @slot: resource-table row (SlotId), < &drm_qgpu_device_info.max_slots.
 * @alloc_offset: byte offset into the allocation added to its address;
 *	a multiple of 4 and below the allocation's size, or 0 for the NULL
 *	allocation.
 * @patch_offset: byte offset in the DMA buffer of the 64-bit address to
 *	patch: the address field of a BIND, the BIND's own offset plus 8
 *	(%QGPU_DMA_BIND_ADDR_DW dwords).
 * @split_offset: byte offset in the DMA buffer from which the allocation
 *	is required (SplitOffset): the start of a command at or before the
 *	BIND this entry patches.
 * @pad: must be zero.
 *
 * Rules over the list, each EINVAL when broken: every BIND of the DMA
 * buffer is covered by exactly one entry, and every entry covers a BIND
 * (no entry points anywhere else); @patch_offset strictly increases from
 * entry to entry (buffer order); @split_offset never decreases; every
 * @split_offset is a multiple of 4, at most @patch_offset - 8, and the
 * byte offset of a command the kernel's parse of the buffer reached (not
 * the inside of a command); @alloc_index, @slot, @alloc_offset and @pad as
 * above. At most %QGPU_MAX_SPLIT_POINTS distinct split offsets (E2BIG).
 *
 * The kernel writes the BIND this entry covers: its slot becomes @slot,
 * its address the allocation's GPU address plus @alloc_offset, its size
 * the size the BIND asked for, cut to what the allocation has from
 * @alloc_offset on. For the NULL allocation address and size are 0: the
 * BIND unbinds the slot.
 */
struct drm_qgpu_patch_entry {
	__u32 alloc_index;
	__u32 slot;
	__u64 alloc_offset;
	__u32 patch_offset;
	__u32 split_offset;
	__u32 pad[2];
};

/* &drm_qgpu_sync_entry.flags */
#define QGPU_SYNC_MONITORED	(1u << 0)	/* a monitored fence, not a syncobj */
#define QGPU_SYNC_FLAGS		QGPU_SYNC_MONITORED

/**
 * struct drm_qgpu_sync_entry - a syncobj or monitored fence to wait on or
 *	signal
 * @handle: syncobj handle, or with %QGPU_SYNC_MONITORED a monitored fence
 *	handle (&drm_qgpu_mfence_create).
 * @flags: 0 or %QGPU_SYNC_MONITORED.
 * @point: timeline point, or 0 for a binary syncobj; with
 *	%QGPU_SYNC_MONITORED the fence value to wait for (in-sync) or to
 *	write (out-sync).
 *
 * Errors: EINVAL (@flags; an in-sync with no fence yet at @point, or a
 * monitored value not queued yet: the kernel does not wait for a submit;
 * a monitored out value not above the fence's last queued one; a
 * monitored out value of 2^64 - 1 for the submitting context's own fence,
 * which the submission then advances by one more), ENOENT
 * (@handle). Out-syncs are all looked up before anything is queued, so a
 * bad one changes nothing.
 */
struct drm_qgpu_sync_entry {
	__u32 handle;
	__u32 flags;
	__u64 point;
};

/* Submit limits: EINVAL beyond, except the split points (E2BIG) */
#define QGPU_MAX_DMA_SIZE	(1u << 20)	/* bytes of one DMA buffer */
#define QGPU_MAX_ALLOCS		4096	/* allocation-list entries */
#define QGPU_MAX_PATCHES	16384	/* patch-location list entries */
#define QGPU_MAX_SYNCS		64	/* in-syncs, and out-syncs */
/* Distinct split offsets in one patch-location list (E2BIG beyond) */
#define QGPU_MAX_SPLIT_POINTS	4096
/*
 * Bytes of DMA buffers one file may have queued and not yet done (each
 * counted in whole 4 KiB pages): a submit beyond it waits, interruptibly
 * (EINTR), until earlier ones are done.
 */
#define QGPU_MAX_QUEUED_DMA	(64u << 20)

/**
 * struct drm_qgpu_submit - queue a DMA buffer on a context
 * @dma: user pointer to the DMA buffer (QGPU_DMA_* commands).
 * @dma_size: bytes, multiple of 4, 4..%QGPU_MAX_DMA_SIZE.
 * @ctx: context id from &drm_qgpu_ctx_create.
 * @allocs: user pointer to &struct drm_qgpu_alloc_entry array.
 * @num_allocs: entries in @allocs, <= %QGPU_MAX_ALLOCS.
 * @num_patches: entries in @patches, <= %QGPU_MAX_PATCHES and <= the
 *	buffer's dwords (@dma_size / 4).
 * @patches: user pointer to &struct drm_qgpu_patch_entry array.
 * @in_syncs: user pointer to &struct drm_qgpu_sync_entry array to wait on.
 * @out_syncs: user pointer to &struct drm_qgpu_sync_entry array signalled
 *	when the whole buffer (its last portion) completes.
 * @num_in_syncs: entries in @in_syncs, <= %QGPU_MAX_SYNCS.
 * @num_out_syncs: entries in @out_syncs, <= %QGPU_MAX_SYNCS.
 * @flags: must be zero.
 * @portions: out: number of split portions the buffer was queued as (its
 *	input value is ignored).
 * @fence_value: out: the value the context's monitored fence
 *	(&drm_qgpu_ctx_create.mfence) reaches when this submission is done
 *	(its input value is ignored; appended in 1.3 of this header: older
 *	callers do not see it). The fence never wraps: once its queued value
 *	is 2^64 - 1, every submit on the context fails with EINVAL.
 *
 * The kernel parses the whole DMA buffer the way the device will run it,
 * from offset 0: each command's opcode must be a DMA-buffer command, its
 * header flags zero (TILE and VTILE: only %QGPU_TILE_UNTILE), its length
 * exactly the command's length (NOP: at least 1) and inside the buffer;
 * EINVAL otherwise. The allocation list
 * (&struct drm_qgpu_alloc_entry), the patch-location list (&struct
 * drm_qgpu_patch_entry: one entry per BIND, increasing patch offsets,
 * non-decreasing split offsets on command boundaries the parse reached)
 * and the sync entries (&struct drm_qgpu_sync_entry) carry their own rules.
 * Then the walk of "Splitting a DMA Buffer" is planned over the whole
 * patch-location list before anything is queued.
 *
 * On a virtual context (%QGPU_CTX_CREATE_VIRTUAL) the buffer may hold only
 * NOP and the virtual commands (QGPU_DMA_V*, addresses in the file's VM),
 * and on a physical context only NOP and the slot commands (EINVAL
 * otherwise). A virtual context's submit has no allocation or patch list
 * (@num_allocs and @num_patches zero, EINVAL otherwise), is one portion,
 * and runs after the file's latest paging fence and its in-syncs; its
 * fence is added to every allocation mapped in the file's VM, so that the
 * memory manager moves none of them before it is done.
 *
 * Tiled surfaces (%QGPU_INFO_CAP_TILING; docs/hw-spec.md section 17): the
 * kernel checks every TILE (QGPU_DMA_TILE) before the device sees it,
 * EINVAL when a rule breaks: its width, height and pitch pass
 * qgpu_tile_check() (width and height at most %QGPU_TILE_MAX_DIM, pitch a
 * multiple of 4 and at least 4 * width); both its slots are bound at that
 * point of the buffer by an earlier BIND of the same buffer (to an
 * allocation, not the NULL allocation) whose size, as the kernel patches
 * it (the BIND's size cut to the allocation), holds the command's range:
 * qgpu_tiled_size() bytes from its offset on the tiled side,
 * qgpu_linear_span() on the linear side; the tiled side (the destination,
 * or the source with %QGPU_TILE_UNTILE) is bound to a %QGPU_GEM_TILED
 * allocation and the linear side to one without. A VTILE's width, height
 * and pitch are checked the same way (its addresses, like those of every
 * virtual command, by the device through the file's page tables).
 *
 * Errors, after which nothing was queued, moved or signalled: EINVAL
 * (@flags, @dma_size, a count above its limit, a command, an allocation,
 * patch or sync entry), ENOENT (context, handle or syncobj), E2BIG (more
 * than %QGPU_MAX_SPLIT_POINTS split points), EFAULT, ECANCELED (the
 * context is lost; for a virtual context also: an unmap of the file's
 * address space ran out of memory after its mappings were gone, so their
 * page-table entries could not be rewritten, and nothing runs in that
 * address space any more), ENOSPC (some split point's allocations cannot be
 * resident at once), EBUSY (a locked allocation, or one another device is
 * attached to, may not be placed where it must), EINTR (also while it
 * waited because the file's queued DMA buffers were at
 * %QGPU_MAX_QUEUED_DMA bytes). ENOMEM usually
 * means the same; when the kernel runs out of memory (or, with ENODEV, the
 * device goes away) while queueing a planned buffer, the portions queued
 * before run, @portions says how many, and the out-syncobjs are left as
 * they were. On every other error nothing was queued and no syncobj was
 * touched.
 */
struct drm_qgpu_submit {
	__u64 dma;
	__u32 dma_size;
	__u32 ctx;
	__u64 allocs;
	__u32 num_allocs;
	__u32 num_patches;
	__u64 patches;
	__u64 in_syncs;
	__u64 out_syncs;
	__u32 num_in_syncs;
	__u32 num_out_syncs;
	__u32 flags;
	__u32 portions;
	__u64 fence_value;
};

/* &drm_qgpu_ctx_create.flags */
#define QGPU_CTX_CREATE_VIRTUAL	(1u << 0)  /* runs in the file's VM */
#define QGPU_CTX_CREATE_FLAGS	QGPU_CTX_CREATE_VIRTUAL

/**
 * struct drm_qgpu_ctx_create - create a GPU context
 * @flags: QGPU_CTX_CREATE_* flags. With %QGPU_CTX_CREATE_VIRTUAL the
 *	context runs in the file's GPU virtual address space: its DMA
 *	buffers use the virtual commands, with no allocation or patch list.
 * @ctx: out: context id, 1 .. &drm_qgpu_device_info.max_contexts - 1
 *	(context 0 is the kernel's); its input value is ignored. Ids are
 *	handed out in turn: a destroyed context's id comes back only after
 *	the others free at the time.
 * @mfence: out: the handle of the context's monitored fence (starting at
 *	0; each submission on the context advances it by one, see
 *	&drm_qgpu_submit.fence_value); its input value is ignored.
 * @mfence_offset: out: byte offset of its value in its page.
 * @mfence_mmap_offset: out: mmap() offset of that page (read-only, as
 *	&drm_qgpu_mfence_create.mmap_offset).
 *
 * Errors: EINVAL (@flags), ENODEV (the device saves fewer than two
 * contexts, or %QGPU_CTX_CREATE_VIRTUAL without an MMU), EIO (the device
 * is lost, see "qgpu device lost"), ENOSPC (every
 * context id is in use, by any file; or the user holds a quarter of them,
 * &drm_qgpu_device_info.max_contexts - 1 over 4 and at least one: the
 * real uid that opened the file, whichever process uses it, counting the
 * contexts of all its files together, files opened with CAP_SYS_ADMIN
 * not counted; or the file has %QGPU_MFENCE_MAX
 * monitored fences; or, for a virtual context, no VRAM or no window slot
 * for the address space's root table: see the page-table limits of
 * &struct drm_qgpu_vm_map).
 */
struct drm_qgpu_ctx_create {
	__u32 flags;
	__u32 ctx;
	__u32 mfence;
	__u32 mfence_offset;
	__u64 mfence_mmap_offset;
};

/**
 * struct drm_qgpu_ctx_destroy - destroy a GPU context
 * @ctx: context id.
 * @pad: must be zero.
 *
 * Never waits for the GPU. DMA buffers already queued on the context get
 * a grace period to complete; one that has not started by then is
 * cancelled, its fences signalled with an error. The id is given out again
 * once the context's work has left the device. Errors: EINVAL (@pad),
 * ENOENT (@ctx is not a context of this file).
 */
struct drm_qgpu_ctx_destroy {
	__u32 ctx;
	__u32 pad;
};

/* &drm_qgpu_context_status.state */
#define QGPU_CTX_OK		0
#define QGPU_CTX_LOST_HANG	1  /* a job timed out (engine reset) or never reached the ring */
#define QGPU_CTX_LOST_FAULT	2  /* a DMA buffer faulted */
#define QGPU_CTX_LOST_DEVICE	3  /* the device is lost ("qgpu device lost") */

/**
 * struct drm_qgpu_context_status - a context's health (QGPU_QUERY_CONTEXT)
 * @state: QGPU_CTX_* state; a lost context's submits fail with ECANCELED.
 * @fault_reason: device fault reason (QGPU_FAULT_* of hw-spec) if faulted.
 * @fault_offset: DMA-buffer byte offset of the faulting command.
 * @submissions: submits on this context.
 * @portions: split portions queued on this context.
 * @pad: zero.
 * @fault_addr: faulting GPU address.
 */
struct drm_qgpu_context_status {
	__u32 state;
	__u32 fault_reason;
	__u32 fault_offset;
	__u32 pad;
	__u64 submissions;
	__u64 portions;
	__u64 fault_addr;
};

/**
 * struct drm_qgpu_mmu_info - the GPU MMU (%QGPU_QUERY_MMU), after
 *	DXGK_GPUMMUCAPS, and device-wide virtual-addressing counters
 * @va_bits: bits of a GPU virtual address.
 * @levels: page-table levels (the root included).
 * @page_sizes: supported page sizes: bit n set means 4 KiB << n.
 * @pte_size: bytes of a page-table entry.
 * @tlb_entries: translations each engine's TLB holds.
 * @pad: zero.
 * @va_start: first virtual address a process may reserve.
 * @va_end: end (exclusive) of what a process may reserve.
 * @page_tables: page tables that exist now, the paging process's included
 *	(current value).
 * @page_table_bytes: VRAM they take (current value; also counted in the
 *	segments' used bytes).
 * @pte_writes: page-table entries written by UPDATE_PAGE_TABLE.
 * @update_pt_cmds: UPDATE_PAGE_TABLE commands queued.
 * @tlb_flushes: FLUSH_TLB commands queued.
 * @transfer_virtual_bytes: bytes moved by TRANSFER_VIRTUAL.
 * @fill_virtual_bytes: bytes written by FILL_VIRTUAL.
 * @make_resident_calls: %DRM_IOCTL_QGPU_MAKE_RESIDENT calls.
 */
struct drm_qgpu_mmu_info {
	__u32 va_bits;
	__u32 levels;
	__u32 page_sizes;
	__u32 pte_size;
	__u32 tlb_entries;
	__u32 pad;
	__u64 va_start;
	__u64 va_end;
	__u64 page_tables;
	__u64 page_table_bytes;
	__u64 pte_writes;
	__u64 update_pt_cmds;
	__u64 tlb_flushes;
	__u64 transfer_virtual_bytes;
	__u64 fill_virtual_bytes;
	__u64 make_resident_calls;
};

/**
 * struct drm_qgpu_vm_info - the calling file's address space
 *	(%QGPU_QUERY_VM_INFO)
 * @paging_fence_syncobj: handle of the file's paging-fence timeline
 *	syncobj (created with the file's VM; the file may wait on it). The
 *	VM keeps its own reference: destroying the handle changes nothing
 *	for the paging fences, but DRM may give its number to a syncobj
 *	created later, which this field then still names.
 * @pad: zero.
 * @paging_fence: the last paging fence value handed out (0: none yet).
 * @reserved_bytes: bytes of reserved ranges.
 * @mapped_bytes: bytes mapped.
 * @page_tables: the file's page tables (its root included).
 * @page_table_bytes: VRAM they take.
 * @root: the device address of the file's root page table (a root
 *	descriptor, docs/hw-spec.md), for tools; 0 until it exists.
 */
struct drm_qgpu_vm_info {
	__u32 paging_fence_syncobj;
	__u32 pad;
	__u64 paging_fence;
	__u64 reserved_bytes;
	__u64 mapped_bytes;
	__u64 page_tables;
	__u64 page_table_bytes;
	__u64 root;
};

/* &drm_qgpu_vm_layout_entry.kind */
#define QGPU_VM_LAYOUT_RESERVED	1	/* a reserved range */
#define QGPU_VM_LAYOUT_MAPPING	2	/* a mapping inside one */

/**
 * struct drm_qgpu_vm_layout_entry - one range of a file's address space
 *	(%QGPU_QUERY_VM_LAYOUT)
 * @start: first virtual address.
 * @size: bytes.
 * @kind: QGPU_VM_LAYOUT_*.
 * @flags: for a mapping, its QGPU_VM_MAP_* flags; else 0.
 * @offset: for a mapping, the offset in the allocation; else 0.
 * @segment: for a mapping, where its allocation is now (QGPU_SEG_*, 0 =
 *	system memory, reached through system page-table entries); else 0.
 * @pad: zero.
 */
struct drm_qgpu_vm_layout_entry {
	__u64 start;
	__u64 size;
	__u32 kind;
	__u32 flags;
	__u64 offset;
	__u32 segment;
	__u32 pad;
};

/* &drm_qgpu_vm_reserve.flags */
#define QGPU_VM_RESERVE_FIXED	(1u << 0)  /* at @addr exactly */

/**
 * struct drm_qgpu_vm_reserve - reserve a range of GPU virtual addresses
 * @addr: in: with %QGPU_VM_RESERVE_FIXED, the start (64 KiB aligned),
 *	else must be zero; out: the start of the reserved range.
 * @size: bytes, > 0, a multiple of 64 KiB.
 * @flags: QGPU_VM_RESERVE_* flags.
 * @pad: must be zero.
 *
 * The range lies inside [&drm_qgpu_mmu_info.va_start,
 * &drm_qgpu_mmu_info.va_end) and overlaps no other reservation. Without
 * %QGPU_VM_RESERVE_FIXED the kernel picks the lowest free range, 64 KiB
 * aligned (so that 64 KiB pages can map it). Nothing is mapped: an access
 * to a reserved but unmapped address faults.
 *
 * Errors: EINVAL (@flags, @pad, @size, @addr alignment, or a fixed range
 * outside the process's part of the address space), ENODEV (no MMU),
 * EEXIST (a fixed range overlaps a reservation), ENOSPC (no free range,
 * or the file holds 65536 reservations already).
 */
struct drm_qgpu_vm_reserve {
	__u64 addr;
	__u64 size;
	__u32 flags;
	__u32 pad;
};

/**
 * struct drm_qgpu_vm_range - a range of GPU virtual addresses
 * @addr: first address, 4 KiB aligned.
 * @size: bytes, > 0, a multiple of 4 KiB.
 *
 * The range must lie in the process's part of the address space,
 * [&drm_qgpu_mmu_info.va_start, &drm_qgpu_mmu_info.va_end) (EINVAL
 * otherwise). For %DRM_IOCTL_QGPU_VM_FREE it must be exactly one
 * reservation (ENOENT otherwise); every mapping in it is unmapped first.
 * For %DRM_IOCTL_QGPU_VM_UNMAP it may cover any part of that space: every
 * mapping, or part of one, inside it is unmapped (the rest of a mapping
 * cut by the range stays mapped) and nothing else changes; a range with no
 * mapping in it is not an error. The range is free again at once; the
 * device's entries become invalid (and its TLB is flushed) behind the work
 * already queued on the unmapped allocations, so that work still finds
 * them, and DMA buffers queued after the call fault on the range.
 *
 * A VM_UNMAP that cuts a hole in the middle of one mapping leaves two of
 * it: with %QGPU_VM_MAX_MAPPINGS mappings in the address space already,
 * or %QGPU_BO_MAX_MAPPINGS of that mapping's allocation, it fails with
 * ENOSPC and changes nothing.
 *
 * ENOMEM: when the kernel could not build the paging buffer, nothing
 * changed; when it ran out splitting a mapping cut by the range, the
 * entries of the whole range are invalid already, but a mapping it could
 * not take out stays mapped (and faults until its allocation moves):
 * unmap the range again.
 *
 * Errors: EINVAL (alignment, zero size, wrap, outside the process's part
 * of the address space), ENODEV (no MMU), ENOENT (VM_FREE, above), ENOSPC
 * (VM_UNMAP, above), ENOMEM.
 */
struct drm_qgpu_vm_range {
	__u64 addr;
	__u64 size;
};

/* &drm_qgpu_vm_map.flags */
#define QGPU_VM_MAP_READ_ONLY	(1u << 0)  /* device writes fault */
#define QGPU_VM_MAP_FLAGS	QGPU_VM_MAP_READ_ONLY

/*
 * Most page tables one file's address space holds, its root included, and
 * all the address spaces of one user together
 */
#define QGPU_VM_MAX_PAGE_TABLES		1024
/* Most mappings one file's address space holds */
#define QGPU_VM_MAX_MAPPINGS		65536
/*
 * Most mappings of one allocation, in every address space together: each
 * is rewritten when the allocation moves
 */
#define QGPU_BO_MAX_MAPPINGS		4096

/**
 * struct drm_qgpu_vm_map - map an allocation into the file's address space
 * @handle: GEM handle of one of the file's own allocations.
 * @flags: QGPU_VM_MAP_* flags.
 * @addr: virtual address, 4 KiB aligned.
 * @offset: offset in the allocation, 4 KiB aligned.
 * @size: bytes, > 0, a multiple of 4 KiB; @offset + @size at most the
 *	allocation's size.
 *
 * [@addr, @addr + @size) must lie inside one reservation and overlap no
 * mapping. The page-table entries are written by a paging buffer queued
 * now; the process's next paging fence (%DRM_IOCTL_QGPU_MAKE_RESIDENT)
 * and every later DMA buffer of its virtual contexts come after it.
 * Where VRAM and virtual address are both 64 KiB aligned, the kernel uses
 * 64 KiB pages.
 *
 * Page tables: every GiB of address space with a mapping in it takes a
 * level-1 table, every 2 MiB a leaf, each 4 KiB of VRAM that stays until
 * the file is closed. One address space holds at most
 * %QGPU_VM_MAX_PAGE_TABLES of them, its root included, and so do all the
 * address spaces one user holds together (the real uid of the process
 * that opened the file, whichever process uses it), so that no process,
 * and no user with many files, can take the tables of every other. Files
 * opened with CAP_SYS_ADMIN count only against their own limit.
 *
 * Errors: EINVAL (@flags, alignment, size, range not inside one
 * reservation, an allocation imported from another device), ENOENT
 * (handle), ENODEV (no MMU), EEXIST (overlaps a mapping), ENOSPC (no
 * VRAM for page tables, or more than %QGPU_VM_MAX_PAGE_TABLES of them in
 * the address space or in the user's address spaces together;
 * %QGPU_VM_MAX_MAPPINGS mappings in the address space already, or
 * %QGPU_BO_MAX_MAPPINGS of the allocation in every address space
 * together: each of them is rewritten when the allocation moves).
 */
struct drm_qgpu_vm_map {
	__u32 handle;
	__u32 flags;
	__u64 addr;
	__u64 offset;
	__u64 size;
};

/* &drm_qgpu_make_resident.flags */
#define QGPU_MAKE_RESIDENT_EVICT	(1u << 0)  /* Evict instead */
#define QGPU_MAKE_RESIDENT_FLAGS	QGPU_MAKE_RESIDENT_EVICT
/* Most allocations one call names */
#define QGPU_MAX_RESIDENT		4096

/**
 * struct drm_qgpu_make_resident - MakeResident or Evict a list of
 *	allocations ("GpuMmu Example Scenarios")
 * @handles: user pointer to an array of @count __u32 GEM handles.
 * @count: entries, 1..%QGPU_MAX_RESIDENT.
 * @flags: QGPU_MAKE_RESIDENT_* flags.
 * @paging_fence: out: the paging fence value: the point of the file's
 *	paging-fence timeline (&drm_qgpu_vm_info.paging_fence_syncobj) that
 *	signals when the paging is done.
 *
 * The kernel checks the list, takes the system pages the allocations
 * need, and queues the paging that commits each allocation to its
 * preferred VRAM segment (evicting others that are not in use by queued
 * work), or with %QGPU_MAKE_RESIDENT_EVICT moves it to system memory,
 * updates the page-table entries of every mapping of it and flushes the
 * TLB, and fills an allocation placed in VRAM for the first time with
 * zeros; then it takes a new paging fence value, which signals once that
 * paging (and everything queued on the paging engine before it) is done,
 * and returns without waiting for it. The value exists only once its
 * paging is queued, so a DMA buffer made to wait for it (an in-sync, a
 * sync_file imported into a dma-buf) can never be among what it waits
 * for. A request the kernel cannot complete (no room in VRAM)
 * signals the paging fence with an error; the allocations it did place
 * stay placed, and the rest stay reachable in system memory. An
 * allocation that an eviction put in the aperture segment moves back to
 * VRAM when there is room (see "qgpu priorities, budgets and offers").
 * Nothing is pinned: under pressure an allocation can be evicted again
 * once the process's queued work on it is done.
 *
 * Errors: EINVAL (@flags, @count, a duplicate handle), ENOENT (a handle),
 * ENODEV (no MMU), EBUSY (an allocation that may not go to VRAM now:
 * Lock2, PRIME attachments, imported), EINTR.
 */
struct drm_qgpu_make_resident {
	__u64 handles;
	__u32 count;
	__u32 flags;
	__u64 paging_fence;
};

#define QGPU_GEM_DESTROY_ASSUME_NOT_IN_USE	(1u << 0)
#define QGPU_GEM_DESTROY_FLAGS	QGPU_GEM_DESTROY_ASSUME_NOT_IN_USE

/**
 * struct drm_qgpu_gem_destroy - destroy an allocation (DestroyAllocation2)
 * @handle: GEM handle of this file.
 * @flags: 0 or %QGPU_GEM_DESTROY_ASSUME_NOT_IN_USE.
 *
 * Deferred destruction ("Allocation Usage Tracking", WDK): the call
 * returns at once and the handle is gone (as DRM_IOCTL_GEM_CLOSE). The
 * kernel assumes that the work queued before the destroy may still use
 * the allocation: the caller's mappings of it in its GPU virtual address
 * space are unmapped (entries invalid, TLB flushed) once that work is
 * done, and until then their range stays taken; the memory is reused only
 * after every DMA buffer that may reach it is done.
 *
 * With %QGPU_GEM_DESTROY_ASSUME_NOT_IN_USE the caller says no queued work
 * uses it: its mappings are unmapped at once, and the memory is released
 * without waiting for the caller's virtual-mode DMA buffers, so a buffer
 * that did use it faults its own context (a lying user-mode driver hurts
 * only itself). The caller's physical-mode DMA buffers that listed the
 * allocation, and every other process's work, are still waited for.
 * Other handles of the allocation (flink, PRIME) keep it alive as usual.
 *
 * Errors: EINVAL (@flags), ENOENT (@handle), ENOMEM.
 */
struct drm_qgpu_gem_destroy {
	__u32 handle;
	__u32 flags;
};

/**
 * DOC: qgpu monitored fences
 *
 * A monitored fence ("context monitoring" in "Allocation Usage Tracking",
 * WDK) is a 64-bit value in memory that the GPU advances and that the CPU
 * reads without a system call:
 *
 * - %DRM_IOCTL_QGPU_MFENCE_CREATE makes one in the calling file and
 *   returns its handle and where to read it: mmap() @mmap_offset of the DRM
 *   file with PROT_READ and MAP_SHARED (one page; a writable mapping is
 *   refused with EACCES) and read the little-endian 64-bit value at byte
 *   @offset of that page. The pages hold only this file's fences.
 * - The GPU advances it: a submission whose out-sync entry has
 *   %QGPU_SYNC_MONITORED writes the entry's value with a FENCE command on
 *   the render ring right after the submission's last portion, whether
 *   that portion ran or was abandoned (fault, lost context, reset); the
 *   value can be seen before the driver has taken in a fault of that work
 *   (&drm_qgpu_context_status is up to date once the submission's syncobj
 *   fence has signalled). A
 *   submission that is never run (its context destroyed first, the device
 *   gone) has the value written by the kernel instead, so that every value
 *   a submission promised is reached, and reached before the submission's
 *   out-syncobjs signal (a waiter they wake reads it). Each value must be
 *   above the last
 *   one queued for that fence (EINVAL): the fence only grows, as long as
 *   the submissions that signal it complete in the order they were queued
 *   (several contexts signalling one fence out of order may make it step
 *   back, as in WDDM: that is the caller's own affair; but only until the
 *   submission that wrote the lower value is done, when the kernel writes
 *   the highest value of a submission done so far again, so that a value
 *   once reached is reached again and what waits for it ends).
 * - Every context has one by default (&drm_qgpu_ctx_create.mfence): each
 *   submission on the context advances it by one, to the value returned in
 *   &drm_qgpu_submit.fence_value. It goes with the context: destroying the
 *   context closes its handle.
 * - %DRM_IOCTL_QGPU_MFENCE_WAIT sleeps until fences reach values: woken by
 *   the device's interrupts, never by polling; an absolute timeout and a
 *   signal end it cleanly.
 * - A submission may wait for one on the GPU side: an in-sync entry with
 *   %QGPU_SYNC_MONITORED holds the submission back until the fence reaches
 *   the value, without the CPU in the loop and without stalling the engine
 *   for other contexts. The value must already be queued (EINVAL
 *   otherwise: the kernel does not wait for a submit).
 * - %DRM_IOCTL_QGPU_MFENCE_EXPORT puts "the fence reached value V" into a
 *   syncobj (binary, or at a timeline point), for anything that speaks
 *   syncobjs or sync files.
 */

/**
 * struct drm_qgpu_mfence_create - create a monitored fence
 * @flags: must be zero.
 * @handle: out: the fence's handle in this file (not a GEM or syncobj
 *	handle: a namespace of its own, 1..%QGPU_MFENCE_MAX).
 * @initial_value: the value it starts at.
 * @mmap_offset: out: mmap() offset of the read-only page that holds it.
 * @offset: out: byte offset of its value in that page (8-aligned).
 * @pad: zero.
 *
 * Errors: EINVAL (@flags, @pad), ENOSPC (the file has %QGPU_MFENCE_MAX
 * fences), ENOMEM.
 */
struct drm_qgpu_mfence_create {
	__u32 flags;
	__u32 handle;
	__u64 initial_value;
	__u64 mmap_offset;
	__u32 offset;
	__u32 pad;
};

/* At most this many monitored fences per file (contexts' included). */
#define QGPU_MFENCE_MAX		4096

/**
 * struct drm_qgpu_mfence_destroy - close a monitored fence's handle
 * @handle: from &drm_qgpu_mfence_create (or a context's, which then has
 *	none until it is destroyed: its submissions still advance the value).
 * @pad: zero.
 *
 * Work already queued still writes it; a mapping of its page stays valid.
 * Errors: EINVAL (@pad), ENOENT.
 */
struct drm_qgpu_mfence_destroy {
	__u32 handle;
	__u32 pad;
};

#define QGPU_MFENCE_WAIT_ANY	(1u << 0)	/* one reached is enough */
#define QGPU_MFENCE_WAIT_FLAGS	QGPU_MFENCE_WAIT_ANY
#define QGPU_MFENCE_WAIT_MAX	64		/* fences per wait */

/**
 * struct drm_qgpu_mfence_wait - wait until monitored fences reach values
 * @handles: user pointer to @count __u32 fence handles.
 * @values: user pointer to @count __u64 values: wait until fence i's value
 *	is at least values[i].
 * @count: 1..%QGPU_MFENCE_WAIT_MAX.
 * @flags: %QGPU_MFENCE_WAIT_ANY: return when one has; otherwise all.
 * @timeout_ns: absolute CLOCK_MONOTONIC deadline in ns, as the syncobj
 *	waits take it; 0 (or a deadline passed) checks once without sleeping.
 * @first: out: with %QGPU_MFENCE_WAIT_ANY, the index of the first fence
 *	found at its value.
 * @pad: zero.
 *
 * The caller sleeps; the device's interrupts wake it. Return 0 when
 * satisfied. Errors: EINVAL (@flags, @count, @pad), ENOENT (a handle),
 * ETIME (the deadline passed first), EINTR/ERESTARTSYS (a signal; the wait
 * can be repeated with the same arguments).
 */
struct drm_qgpu_mfence_wait {
	__u64 handles;
	__u64 values;
	__u32 count;
	__u32 flags;
	__s64 timeout_ns;
	__u32 first;
	__u32 pad;
};

/**
 * struct drm_qgpu_mfence_export - "the fence reached @value" into a syncobj
 * @handle: the monitored fence.
 * @syncobj: a syncobj handle of this file.
 * @value: the value; it must be queued already (EINVAL otherwise), so that
 *	the exported fence signals in finite time.
 * @point: timeline point to add it at, or 0 to replace the syncobj's fence.
 * @flags: must be zero.
 * @pad: zero.
 *
 * Errors: EINVAL (@flags, @pad, @value), ENOENT (@handle, @syncobj),
 * ENOMEM.
 */
struct drm_qgpu_mfence_export {
	__u32 handle;
	__u32 syncobj;
	__u64 value;
	__u64 point;
	__u32 flags;
	__u32 pad;
};

/**
 * struct drm_qgpu_invalidate_cache - InvalidateCache: write back and
 *	invalidate the CPU cache lines of a range of an allocation
 * @handle: GEM handle.
 * @flags: must be zero.
 * @offset: byte offset in the allocation, a multiple of 4096.
 * @size: bytes, > 0, a multiple of 4096; @offset + @size is at most the
 *	allocation's size.
 *
 * "Allocation Usage Tracking" (WDK, "I/O coherency"): on a device without
 * %QGPU_INFO_CAP_IO_COHERENT the user-mode driver calls this for a
 * %QGPU_GEM_CPU_CACHED allocation after CPU writes and before GPU reads,
 * and after GPU writes and before CPU reads. The kernel waits for a move
 * of the allocation in flight, then writes back and invalidates (clflush)
 * every CPU cache line of the range's system pages through the kernel's
 * mapping of each page; CPU caches are physically tagged, so the lines of
 * every user mapping are covered. It does not wait for GPU work: call it
 * once that work is done. It works on any device (a coherent one does not
 * need it).
 *
 * Nothing to do, so 0 is returned and nothing is counted, for: an
 * allocation without %QGPU_GEM_CPU_CACHED (its pages are write-combined in
 * every mapping, the kernel's included: nothing of it is in a cache); one
 * whose content is not in its system pages now (resident in VRAM, which
 * the CPU maps write-combined, or never given pages); and one imported
 * from another device (its pages are the exporter's). A call that flushed
 * counts in &drm_qgpu_stats.cache_invalidations and
 * &drm_qgpu_stats.cache_invalidated_bytes (the device's and the file's);
 * every accepted call shows in the qgpu_invalidate_cache tracepoint, with
 * the bytes flushed (0: nothing to do).
 *
 * Errors: EINVAL (@flags; @offset or @size not a multiple of 4096; @size
 * zero; @offset + @size beyond the allocation, or wrapping), ENOENT
 * (@handle), EINTR (a signal while waiting for a move).
 */
struct drm_qgpu_invalidate_cache {
	__u32 handle;
	__u32 flags;
	__u64 offset;
	__u64 size;
};

/**
 * DOC: qgpu priorities, budgets and offers
 *
 * The user-mode driver tells the memory manager what matters to it and
 * what it may take back, after the Windows display driver model's calls of
 * the same names:
 *
 * - SetAllocationPriority (%DRM_IOCTL_QGPU_GEM_SET_PRIORITY): every
 *   allocation has a priority, %QGPU_PRIORITY_NORMAL when it is created.
 *   When a segment has no room, the memory manager evicts allocations of
 *   lower priority before those of higher priority, whatever the victim
 *   policy (the policy orders allocations of equal priority; docs/driver.md,
 *   "Victim policies"). A priority says what to evict first; it pins
 *   nothing: under enough pressure an allocation of
 *   %QGPU_PRIORITY_MAXIMUM is evicted too, its content kept as always.
 * - QueryVideoMemoryInfo (%QGPU_QUERY_VIDMEM_INFO): every DRM file is a
 *   process with a budget and a current usage per segment group: local
 *   (the VRAM segments, %QGPU_SEG_VISIBLE and %QGPU_SEG_LOCAL) and
 *   non-local (the aperture segment). Its usage is the bytes of the
 *   allocations it created that are resident in the group's segments now
 *   (whoever else shares them; imported ones count for nobody), and of the
 *   page tables of its GPU address space (local group). Its budget
 *   comes from a device-wide policy, the same for every process: a
 *   percentage of each group's usable bytes (the qgpu.budget module
 *   parameter, 1..100, default 100; per device at run time in debugfs,
 *   qgpu_budget). A process may go over its budget (a placement is never
 *   refused for it); when a segment has no room, the allocations of a
 *   process over its budget in that segment's group are evicted first,
 *   as many of them (in the victim policy's order, so the lowest
 *   priorities first) as bring it back to its budget, before any
 *   allocation of a process within its budget whatever its priority: the
 *   process is "trimmed".
 * - OfferAllocations and ReclaimAllocations (%DRM_IOCTL_QGPU_GEM_OFFER,
 *   %DRM_IOCTL_QGPU_GEM_RECLAIM): the user-mode driver offers allocations
 *   whose content it can regenerate (a cache, a buffer it will rewrite)
 *   and does not use meanwhile. When the memory manager evicts an offered
 *   allocation from VRAM, to make room or on request, it discards the
 *   content instead of copying it to system memory; offered allocations
 *   are the first victims of every policy, before anything else (lower
 *   offer priority first). Reclaim makes them ordinary allocations again
 *   and says, for each, whether the content survived
 *   (%QGPU_RECLAIM_OK) or was discarded (%QGPU_RECLAIM_DISCARDED: its
 *   content is undefined until the user-mode driver writes it again; the
 *   allocation itself stays valid). Only the file that created an
 *   allocation offers and reclaims it (EPERM for a process it was shared
 *   with). Content outside VRAM survives (the
 *   aperture segment and system memory hold the allocation's own pages),
 *   and so does the content of an allocation mapped in a GPU virtual
 *   address space (it is evicted with its content, as any other). While
 *   offered, an allocation may not be used: a submit that lists it, a
 *   residency request that would commit it (%DRM_IOCTL_QGPU_GEM_RESIDE,
 *   %DRM_IOCTL_QGPU_MAKE_RESIDENT) and Lock2 fail with EINVAL; CPU
 *   mappings made before keep working, and see undefined content after
 *   a discard.
 * - Migrating back: an allocation evicted under pressure (to make room
 *   for another) to the aperture segment, its set allowing, does not stay
 *   there for good. When it is used again (a submit lists it, or
 *   %DRM_IOCTL_QGPU_MAKE_RESIDENT names it) before anything else moved
 *   it, and a VRAM segment that comes before the aperture segment in its
 *   order (its preferred segments, then its set by id) has room, it moves
 *   back there, before the use; nothing is evicted for that
 *   (&drm_qgpu_stats.migrations_back counts it). An allocation placed in
 *   the aperture segment by a request (%DRM_IOCTL_QGPU_GEM_RESIDE) or by
 *   its preference stays there, and so does one that the submission in
 *   progress pinned or that Lock2's rules or a PRIME attachment keep out
 *   of VRAM; %DRM_IOCTL_QGPU_GEM_RESIDE with segment 0 leaves a resident
 *   allocation where it is, as documented there.
 */

/*
 * Allocation priorities (SetAllocationPriority; the values of
 * D3DDDI_ALLOCATIONPRIORITY_*): any value from MINIMUM to MAXIMUM is a
 * priority, the named ones are points in that range.
 */
#define QGPU_PRIORITY_MINIMUM	0x28000000u
#define QGPU_PRIORITY_LOW	0x50000000u
#define QGPU_PRIORITY_NORMAL	0x78000000u
#define QGPU_PRIORITY_HIGH	0xa0000000u
#define QGPU_PRIORITY_MAXIMUM	0xc8000000u
/* Most allocations one %DRM_IOCTL_QGPU_GEM_SET_PRIORITY names */
#define QGPU_MAX_PRIORITY_HANDLES	4096

/**
 * struct drm_qgpu_gem_set_priority - SetAllocationPriority: set the
 *	priority of allocations
 * @handles: user pointer to @count __u32 GEM handles of this file.
 * @priorities: user pointer to @count __u32 priorities: priorities[i] is
 *	given to handles[i]; each from %QGPU_PRIORITY_MINIMUM to
 *	%QGPU_PRIORITY_MAXIMUM.
 * @count: entries, 1..%QGPU_MAX_PRIORITY_HANDLES.
 * @flags: must be zero.
 *
 * All or nothing: every priority is checked and every handle looked up
 * before any priority changes. A handle listed twice gets its last entry's
 * priority. The priority belongs to the allocation, not to the handle:
 * every process sharing it sees the same one. It counts from the next
 * eviction on and moves nothing by itself.
 *
 * Errors: EINVAL (@flags, @count, a priority out of range), ENOENT (a
 * handle).
 */
struct drm_qgpu_gem_set_priority {
	__u64 handles;
	__u64 priorities;
	__u32 count;
	__u32 flags;
};

/* &drm_qgpu_gem_offer.priority (D3DDDI_OFFER_PRIORITY) */
#define QGPU_OFFER_PRIORITY_LOW		1  /* discarded first */
#define QGPU_OFFER_PRIORITY_NORMAL	2
#define QGPU_OFFER_PRIORITY_HIGH	3  /* discarded last */
/* Most allocations one %DRM_IOCTL_QGPU_GEM_OFFER or _RECLAIM names */
#define QGPU_MAX_OFFER_HANDLES		4096

/**
 * struct drm_qgpu_gem_offer - OfferAllocations: the memory manager may
 *	discard the content of these allocations under pressure
 * @handles: user pointer to @count __u32 GEM handles of this file.
 * @count: entries, 1..%QGPU_MAX_OFFER_HANDLES.
 * @priority: QGPU_OFFER_PRIORITY_*: among offered allocations, lower ones
 *	are discarded first.
 * @flags: must be zero.
 * @pad: must be zero.
 *
 * All or nothing: every handle is looked up and checked before any is
 * offered. An offered allocation stays where it is until the memory
 * manager evicts it; see "qgpu priorities, budgets and offers" for what an
 * offer allows and forbids.
 *
 * Only the file that created an allocation may offer it: a process it was
 * shared with (a PRIME handle of this device) holds it but does not decide
 * whether its content may be lost.
 *
 * Errors: EINVAL (@flags, @pad, @count, @priority; a handle listed twice;
 * an allocation offered already; one imported from another device, whose
 * content is the exporter's), EPERM (an allocation another file created),
 * ENOENT (a handle).
 */
struct drm_qgpu_gem_offer {
	__u64 handles;
	__u32 count;
	__u32 priority;
	__u32 flags;
	__u32 pad;
};

/* &drm_qgpu_gem_reclaim.results: one per handle */
#define QGPU_RECLAIM_OK		0  /* the content survived */
#define QGPU_RECLAIM_DISCARDED	1  /* the content was discarded */

/**
 * struct drm_qgpu_gem_reclaim - ReclaimAllocations: take offered
 *	allocations back
 * @handles: user pointer to @count __u32 GEM handles of this file.
 * @results: user pointer to @count __u32 QGPU_RECLAIM_* results, one per
 *	handle, or 0 for none.
 * @count: entries, 1..%QGPU_MAX_OFFER_HANDLES.
 * @flags: must be zero.
 * @discarded: out: how many of them were discarded.
 * @pad: must be zero.
 *
 * All or nothing: every handle is looked up and checked, and @results is
 * checked to be writable, before any allocation is reclaimed. Each one is
 * an ordinary allocation again; its result says whether its content
 * survived the offer. Should @results become unwritable during the call
 * (another thread unmapping it), the allocations are reclaimed and the
 * call fails with EFAULT.
 *
 * As with the offer, only the file that created an allocation may reclaim
 * it.
 *
 * Errors: EINVAL (@flags, @pad, @count; a handle listed twice; an
 * allocation that is not offered), EPERM (an allocation another file
 * created), ENOENT (a handle).
 */
struct drm_qgpu_gem_reclaim {
	__u64 handles;
	__u64 results;
	__u32 count;
	__u32 flags;
	__u32 discarded;
	__u32 pad;
};

/* &drm_qgpu_vidmem_info.group (DXGK_MEMORY_SEGMENT_GROUP) */
#define QGPU_SEGMENT_GROUP_LOCAL	0  /* VRAM: the visible and local segments */
#define QGPU_SEGMENT_GROUP_NON_LOCAL	1  /* the aperture segment */

/**
 * struct drm_qgpu_vidmem_info - QueryVideoMemoryInfo: one segment group
 *	of the calling file (%QGPU_QUERY_VIDMEM_INFO)
 * @group: QGPU_SEGMENT_GROUP_*.
 * @pad: zero.
 * @budget: bytes the file may keep resident in the group's segments
 *	before it is trimmed first: the device's budget percentage of @size,
 *	rounded down to 4 KiB.
 * @current_usage: bytes of the file's allocations resident in the group's
 *	segments now, and of its GPU address space's page tables (4 KiB of
 *	VRAM each, in the local group, until the file is closed;
 *	&drm_qgpu_vm_info.page_table_bytes).
 * @size: usable bytes of the group's segments (their sizes minus what the
 *	driver reserved).
 * @trimmed_bytes: bytes of the file's allocations evicted from the group
 *	while the file was over its budget there (monotonic).
 */
struct drm_qgpu_vidmem_info {
	__u32 group;
	__u32 pad;
	__u64 budget;
	__u64 current_usage;
	__u64 size;
	__u64 trimmed_bytes;
};

/**
 * struct drm_qgpu_ping - one round trip through the device's PING doorbell
 *	(%DRM_IOCTL_QGPU_PING)
 *
 * The kernel writes a sequence number of its own to the device's PING
 * register, which the device answers at once with an interrupt
 * (docs/hw-spec.md section 18), and sleeps until its interrupt handler has
 * seen that number answered. No command, ring, fence or scheduler is
 * involved: the time the call takes is the floor of every submit-to-signal
 * round trip on this device and this kernel, what qgpu-bench's latency
 * benchmark measures submission against. It changes nothing in the device
 * or the memory manager. Any number of callers may ping at once, from any
 * file. Errnos: EINVAL (@flags or @pad not zero), EOPNOTSUPP (a device
 * without %QGPU_INFO_CAP_PING), ETIMEDOUT (no answer within a second: a
 * device that does not answer), EINTR (a signal; the ping is then simply
 * abandoned, and calling again is always safe), ENODEV (unplugged).
 *
 * @flags: zero; no flags are defined yet (EINVAL otherwise).
 * @pad: zero (EINVAL otherwise).
 * @seqno: output: the sequence number this call wrote to the doorbell and
 *	saw answered (device-wide, increasing, wraps at 2^32; informative
 *	only). Its input value is ignored.
 */
struct drm_qgpu_ping {
	__u32 flags;
	__u32 pad;
	__u64 seqno;
};

#define DRM_IOCTL_QGPU_QUERY \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_QGPU_QUERY, struct drm_qgpu_query)
#define DRM_IOCTL_QGPU_GEM_CREATE \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_QGPU_GEM_CREATE, struct drm_qgpu_gem_create)
#define DRM_IOCTL_QGPU_GEM_LOCK \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_QGPU_GEM_LOCK, struct drm_qgpu_gem_lock)
#define DRM_IOCTL_QGPU_GEM_UNLOCK \
	DRM_IOW(DRM_COMMAND_BASE + DRM_QGPU_GEM_UNLOCK, struct drm_qgpu_gem_unlock)
#define DRM_IOCTL_QGPU_GEM_RESIDE \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_QGPU_GEM_RESIDE, struct drm_qgpu_gem_reside)
#define DRM_IOCTL_QGPU_GEM_INFO \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_QGPU_GEM_INFO, struct drm_qgpu_gem_info)
#define DRM_IOCTL_QGPU_SUBMIT \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_QGPU_SUBMIT, struct drm_qgpu_submit)
#define DRM_IOCTL_QGPU_CTX_CREATE \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_QGPU_CTX_CREATE, struct drm_qgpu_ctx_create)
#define DRM_IOCTL_QGPU_CTX_DESTROY \
	DRM_IOW(DRM_COMMAND_BASE + DRM_QGPU_CTX_DESTROY, struct drm_qgpu_ctx_destroy)
#define DRM_IOCTL_QGPU_VM_RESERVE \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_QGPU_VM_RESERVE, struct drm_qgpu_vm_reserve)
#define DRM_IOCTL_QGPU_VM_FREE \
	DRM_IOW(DRM_COMMAND_BASE + DRM_QGPU_VM_FREE, struct drm_qgpu_vm_range)
#define DRM_IOCTL_QGPU_VM_MAP \
	DRM_IOW(DRM_COMMAND_BASE + DRM_QGPU_VM_MAP, struct drm_qgpu_vm_map)
#define DRM_IOCTL_QGPU_VM_UNMAP \
	DRM_IOW(DRM_COMMAND_BASE + DRM_QGPU_VM_UNMAP, struct drm_qgpu_vm_range)
#define DRM_IOCTL_QGPU_MAKE_RESIDENT \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_QGPU_MAKE_RESIDENT, struct drm_qgpu_make_resident)
#define DRM_IOCTL_QGPU_INVALIDATE_CACHE \
	DRM_IOW(DRM_COMMAND_BASE + DRM_QGPU_INVALIDATE_CACHE, struct drm_qgpu_invalidate_cache)
#define DRM_IOCTL_QGPU_GEM_DESTROY \
	DRM_IOW(DRM_COMMAND_BASE + DRM_QGPU_GEM_DESTROY, struct drm_qgpu_gem_destroy)
#define DRM_IOCTL_QGPU_MFENCE_CREATE \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_QGPU_MFENCE_CREATE, struct drm_qgpu_mfence_create)
#define DRM_IOCTL_QGPU_MFENCE_DESTROY \
	DRM_IOW(DRM_COMMAND_BASE + DRM_QGPU_MFENCE_DESTROY, struct drm_qgpu_mfence_destroy)
#define DRM_IOCTL_QGPU_MFENCE_WAIT \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_QGPU_MFENCE_WAIT, struct drm_qgpu_mfence_wait)
#define DRM_IOCTL_QGPU_MFENCE_EXPORT \
	DRM_IOW(DRM_COMMAND_BASE + DRM_QGPU_MFENCE_EXPORT, struct drm_qgpu_mfence_export)
#define DRM_IOCTL_QGPU_GEM_SET_PRIORITY \
	DRM_IOW(DRM_COMMAND_BASE + DRM_QGPU_GEM_SET_PRIORITY, struct drm_qgpu_gem_set_priority)
#define DRM_IOCTL_QGPU_GEM_OFFER \
	DRM_IOW(DRM_COMMAND_BASE + DRM_QGPU_GEM_OFFER, struct drm_qgpu_gem_offer)
#define DRM_IOCTL_QGPU_GEM_RECLAIM \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_QGPU_GEM_RECLAIM, struct drm_qgpu_gem_reclaim)
#define DRM_IOCTL_QGPU_PING \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_QGPU_PING, struct drm_qgpu_ping)

#if defined(__cplusplus)
}
#endif

#endif /* QGPU_DRM_H */
