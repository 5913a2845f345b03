/* SPDX-License-Identifier: MIT */
/*
 * libqgpu - the user-mode driver side of qgpu, on top of libdrm.
 *
 * What it does, in WDDM terms:
 *  - opens the device (render node or primary node) and reads its identity,
 *    segment descriptors (the two-call QUERYSEGMENT pattern) and counters;
 *  - creates allocations (GEM objects with a supported segment set and a
 *    preferred segment order), locks and maps them for the CPU (Lock2; the
 *    mapping follows the allocation when the memory manager moves it),
 *    moves them on request (test interface) and reports where they are;
 *  - builds DMA buffers: a command stream of QGPU_DMA_* commands together
 *    with its allocation list and patch-location list, with split points
 *    placed at every binding change as "Splitting a DMA Buffer" asks, so
 *    that the kernel can split the buffer when its allocations do not fit
 *    at once;
 *  - submits them on a context with in/out syncobjs and waits for them;
 *  - GPU virtual addressing ("GpuMmu Example Scenarios"), on devices with
 *    QGPU_INFO_CAP_MMU: reserves ranges of the file's GPU virtual address
 *    space, maps allocations into them, makes allocations resident or
 *    evicts them (MakeResident/Evict) and waits for the paging fence, and
 *    builds and submits virtual-mode DMA buffers (QGPU_DMA_V* commands on
 *    a virtual context: no allocation or patch-location list).
 *
 * Conventions: every function that can fail returns 0 (or a non-negative
 * value) on success and a negative errno on failure, like libdrm; errno is
 * also left set. Nothing here prints. All sizes are bytes.
 */
#ifndef LIBQGPU_H
#define LIBQGPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "qgpu_drm.h"
#include "qgpu_cmd.h"

#if defined(__cplusplus)
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Device                                                                    */
/* ------------------------------------------------------------------------ */

/** Which DRM node qgpu_open() looks for. */
enum qgpu_node {
	QGPU_NODE_RENDER = 0,	/* /dev/dri/renderD*: unprivileged, no master */
	QGPU_NODE_PRIMARY = 1,	/* /dev/dri/card*: DRM master / auth rules */
};

/**
 * struct qgpu_dev - an open qgpu device
 * @fd: the DRM file descriptor (owned; closed by qgpu_close())
 * @info: identity and capabilities (QGPU_QUERY_DEVICE), read at open
 * @segs: segment descriptors (QGPU_QUERY_SEGMENTS), ordered by id
 * @nsegs: entries used in @segs
 * @path: the device node that was opened
 */
struct qgpu_dev {
	int fd;
	struct drm_qgpu_device_info info;
	struct drm_qgpu_segment segs[QGPU_SEG_MAX];
	unsigned int nsegs;
	char path[64];
};

/**
 * qgpu_find_node - find the path of a qgpu DRM node
 * @node: which kind of node
 * @index: 0 for the first qgpu device, 1 for the second, ...
 * @path: receives the path
 * @len: size of @path
 *
 * Scans /dev/dri and keeps the nodes whose DRM driver name is "qgpu".
 * Return: 0, or -ENODEV when there is no such node.
 */
int qgpu_find_node(enum qgpu_node node, unsigned int index, char *path,
		   size_t len);

/**
 * qgpu_find_driver_node - find the path of another DRM driver's node
 * @driver: its DRM driver name (drmGetVersion()), e.g. "virtio_gpu", "vgem"
 * @node: which kind of node
 * @index: 0 for the first such device, 1 for the second, ...
 * @path: receives the path
 * @len: size of @path
 *
 * What qgpu_find_node() does for "qgpu", for any driver: benchmarks and
 * tests that put qgpu beside another GPU (PRIME with vgem, virtio-gpu's
 * round trip) find that one the same way.
 * Return: 0, or -ENODEV when there is no such node.
 */
int qgpu_find_driver_node(const char *driver, enum qgpu_node node,
			  unsigned int index, char *path, size_t len);

/**
 * qgpu_open - open the first qgpu device's node of the given kind
 * @dev: filled in on success
 * @node: QGPU_NODE_RENDER or QGPU_NODE_PRIMARY
 *
 * The environment variable QGPU_DEVICE, when set, names the node to open
 * instead. Reads the device info and segment descriptors.
 * Return: 0 or a negative errno (-ENODEV when no qgpu device exists).
 */
int qgpu_open(struct qgpu_dev *dev, enum qgpu_node node);

/**
 * qgpu_open_path - open a given DRM node as a qgpu device
 * @dev: filled in on success
 * @path: e.g. "/dev/dri/renderD128"
 *
 * Return: 0, -ENODEV when the node is not driven by qgpu, or another
 * negative errno.
 */
int qgpu_open_path(struct qgpu_dev *dev, const char *path);

/**
 * qgpu_dev_from_fd - wrap an already open DRM fd (the fd is not dup'ed)
 * @dev: filled in on success; qgpu_close() will close @fd
 * @fd: DRM file descriptor of a qgpu node
 */
int qgpu_dev_from_fd(struct qgpu_dev *dev, int fd);

/** qgpu_close - close the device's fd (allocations of this fd go away). */
void qgpu_close(struct qgpu_dev *dev);

/**
 * qgpu_is_qgpu_fd - whether @fd is a DRM node driven by qgpu
 */
bool qgpu_is_qgpu_fd(int fd);

/**
 * qgpu_dev_segment - the descriptor of segment @id, or NULL if absent
 */
const struct drm_qgpu_segment *qgpu_dev_segment(const struct qgpu_dev *dev,
						uint32_t id);

/**
 * qgpu_vram_usable - bytes of memory-segment space (VISIBLE + LOCAL) that
 *	allocations can use (segment sizes minus driver reservations)
 */
uint64_t qgpu_vram_usable(const struct qgpu_dev *dev);

/* ------------------------------------------------------------------------ */
/* Queries                                                                   */
/* ------------------------------------------------------------------------ */

/**
 * qgpu_query - the raw query ioctl
 * @fd: DRM fd
 * @type: QGPU_QUERY_*
 * @arg: type argument (context id for QGPU_QUERY_CONTEXT, else 0)
 * @buf: output buffer, or NULL to only learn @size and @count
 * @size: in: bytes at @buf; out: bytes the answer needs
 * @count: out (may be NULL): number of elements
 *
 * Return: 0 or a negative errno (-ENOSPC when @size is too small, with
 * @size updated).
 */
int qgpu_query(int fd, uint32_t type, uint32_t arg, void *buf,
	       uint32_t *size, uint32_t *count);
/**
 * qgpu_query_array - an array answer (segments, VM layout) with the
 *	two-call pattern, into a malloc'ed buffer the caller frees
 * Return: 0, or a negative errno (*@out NULL then).
 */
int qgpu_query_array(int fd, uint32_t type, void **out, unsigned int *count);

/** qgpu_query_device - identity and capabilities */
int qgpu_query_device(int fd, struct drm_qgpu_device_info *info);

/**
 * qgpu_ping - one round trip through the device's PING doorbell
 *	(DRM_IOCTL_QGPU_PING): the kernel rings it and sleeps until the
 *	device's interrupt answers; the floor of every submit-to-signal
 *	round trip
 * @fd: DRM fd
 * @seqno: if not NULL, receives the sequence number that was answered
 * Return: 0, -EOPNOTSUPP (a device without QGPU_INFO_CAP_PING),
 * -ETIMEDOUT, or another negative errno.
 */
int qgpu_ping(int fd, uint64_t *seqno);

/**
 * qgpu_query_segments - segment descriptors, with the two-call pattern
 * @fd: DRM fd
 * @segs: receives a malloc'ed array (free() it), ordered by id
 * @count: receives the number of elements
 */
int qgpu_query_segments(int fd, struct drm_qgpu_segment **segs,
			unsigned int *count);

/**
 * qgpu_query_stats - global counters and per-segment usage
 * @fd: DRM fd
 * @st: receives the global counters
 * @seg: receives up to @max segment entries (may be NULL when @max is 0)
 * @max: capacity of @seg
 * @nseg: receives the number of segments (may be NULL)
 */
int qgpu_query_stats(int fd, struct drm_qgpu_stats *st,
		     struct drm_qgpu_segment_stats *seg, unsigned int max,
		     unsigned int *nseg);

/** qgpu_query_file_stats - the calling file's own counters */
int qgpu_query_file_stats(int fd, struct drm_qgpu_stats *st);

/**
 * qgpu_query_vidmem - QueryVideoMemoryInfo: the calling file's budget and
 *	usage in one segment group (QGPU_QUERY_VIDMEM_INFO)
 * @group: QGPU_SEGMENT_GROUP_LOCAL or QGPU_SEGMENT_GROUP_NON_LOCAL
 */
int qgpu_query_vidmem(int fd, uint32_t group,
		      struct drm_qgpu_vidmem_info *info);

/** qgpu_query_context - a context's health and counters */
int qgpu_query_context(int fd, uint32_t ctx,
		       struct drm_qgpu_context_status *st);

/** Names for printing. Never NULL. */
const char *qgpu_segment_name(uint32_t id);
const char *qgpu_fault_name(uint32_t reason);
const char *qgpu_ctx_state_name(uint32_t state);
const char *qgpu_cpu_path_name(uint32_t path);	/* QGPU_CPU_PATH_* */
const char *qgpu_stat_name(unsigned int index);	/* index into the struct */

/**
 * qgpu_format_flags - "CPU_VISIBLE|APERTURE|..." for segment flags
 * @flags: QGPU_SEGF_* bits
 * @buf: output
 * @len: size of @buf
 * Return: @buf
 */
char *qgpu_format_segment_flags(uint32_t flags, char *buf, size_t len);

/** qgpu_format_caps - "FENCE|GART|..." for QGPU_INFO_CAP_* bits */
char *qgpu_format_caps(uint32_t caps, char *buf, size_t len);

/** Number of __u64 counters in struct drm_qgpu_stats. */
#define QGPU_NUM_STATS (sizeof(struct drm_qgpu_stats) / sizeof(__u64))

/* ------------------------------------------------------------------------ */
/* Allocations                                                               */
/* ------------------------------------------------------------------------ */

/** Segment-set bit of a segment id. */
#define QGPU_SEGBIT(id)		(1u << (id))
/** Pack up to three preferred segment ids (least significant first). */
#define QGPU_PREF(a, b, c)	((uint32_t)(a) | (uint32_t)(b) << 8 | \
				 (uint32_t)(c) << 16)

/**
 * qgpu_bo_create - create an allocation (DRM_IOCTL_QGPU_GEM_CREATE)
 * @fd: DRM fd
 * @size: bytes (rounded up to 4 KiB by the kernel)
 * @segment_mask: supported segment set (QGPU_SEGBIT() of each id)
 * @flags: QGPU_GEM_* flags
 * @preferred: QGPU_PREF() packed ids, or 0
 * @handle: receives the GEM handle
 */
int qgpu_bo_create(int fd, uint64_t size, uint32_t segment_mask,
		   uint32_t flags, uint32_t preferred, uint32_t *handle);

/** qgpu_bo_destroy - drop the handle (DRM_IOCTL_GEM_CLOSE) */
int qgpu_bo_destroy(int fd, uint32_t handle);
/**
 * qgpu_bo_destroy_flags - DestroyAllocation2 (DRM_IOCTL_QGPU_GEM_DESTROY):
 *	returns at once; the caller's mappings of the allocation go behind
 *	the work queued so far, or at once with
 *	QGPU_GEM_DESTROY_ASSUME_NOT_IN_USE (then a queued DMA buffer that
 *	does use it faults its own context)
 * Return: 0, -EINVAL (@flags), -ENOENT.
 */
int qgpu_bo_destroy_flags(int fd, uint32_t handle, uint32_t flags);

/*
 * I/O coherency ("Allocation Usage Tracking"): on a device without
 * QGPU_INFO_CAP_IO_COHERENT, a QGPU_GEM_CPU_CACHED allocation needs
 * InvalidateCache after CPU writes and before GPU reads, and after GPU
 * writes and before CPU reads. The lock/map and unlock/unmap functions
 * below do it (over the whole allocation): the lock and map paths before
 * the CPU reads (a mapping for reading), the unlock and unmap paths before
 * the GPU reads what the CPU wrote (a mapping for writing). The caller
 * still waits for the GPU work itself (syncobjs) before locking or
 * mapping. Nothing is done for write-combined allocations or on a
 * coherent device.
 */

/**
 * qgpu_bo_lock - Lock2: set the allocation up for CPU access
 * @offset: receives the fake offset to mmap() on @fd
 *
 * On a device that is not I/O coherent, a cached allocation's CPU cache
 * lines are invalidated once it is locked (the CPU is about to read).
 */
int qgpu_bo_lock(int fd, uint32_t handle, uint64_t *offset);

/**
 * qgpu_bo_unlock - end a Lock2
 *
 * On a device that is not I/O coherent, a cached allocation's CPU cache
 * lines are written back and invalidated first (the CPU may have written).
 */
int qgpu_bo_unlock(int fd, uint32_t handle);

/* qgpu_bo_map_flags() flags: what the CPU does through the mapping */
#define QGPU_BO_MAP_READ	(1u << 0)
#define QGPU_BO_MAP_WRITE	(1u << 1)

/**
 * qgpu_bo_map - lock the allocation and mmap @size bytes of it
 * @ptr: receives the mapping (shared, read/write)
 *
 * The mapping keeps working while the memory manager moves the
 * allocation. Undo with qgpu_bo_unmap(). As qgpu_bo_map_flags() with
 * QGPU_BO_MAP_READ | QGPU_BO_MAP_WRITE.
 */
int qgpu_bo_map(int fd, uint32_t handle, uint64_t size, void **ptr);

/** qgpu_bo_unmap - munmap and unlock what qgpu_bo_map() set up */
int qgpu_bo_unmap(int fd, uint32_t handle, void *ptr, uint64_t size);

/**
 * qgpu_bo_map_flags - lock and mmap for reading, writing or both
 * @flags: QGPU_BO_MAP_READ and/or QGPU_BO_MAP_WRITE (the mapping's
 *	protection: PROT_READ, PROT_WRITE)
 *
 * With QGPU_BO_MAP_READ, on a device that is not I/O coherent, a cached
 * allocation's cache lines are invalidated before the mapping is returned
 * (after GPU writes, before CPU reads). Return: 0, -EINVAL (@flags), or
 * the lock's or mmap()'s errno.
 */
int qgpu_bo_map_flags(int fd, uint32_t handle, uint64_t size,
		      uint32_t flags, void **ptr);

/**
 * qgpu_bo_unmap_flags - munmap and unlock what qgpu_bo_map_flags() set up
 * @flags: the flags it was mapped with
 *
 * With QGPU_BO_MAP_WRITE, on a device that is not I/O coherent, a cached
 * allocation's cache lines are written back and invalidated before the
 * unlock (after CPU writes, before GPU reads).
 */
int qgpu_bo_unmap_flags(int fd, uint32_t handle, void *ptr, uint64_t size,
			uint32_t flags);

/**
 * qgpu_invalidate_cache - InvalidateCache (DRM_IOCTL_QGPU_INVALIDATE_CACHE):
 *	write back and invalidate the CPU cache lines of [@offset, @offset +
 *	@size) of an allocation
 * @offset: a multiple of 4096
 * @size: > 0, a multiple of 4096, within the allocation
 *
 * What libqgpu's lock/map and unlock/unmap paths call for cached
 * allocations on a device that is not I/O coherent; for callers that keep
 * a mapping across GPU work. A write-combined allocation, or one in VRAM,
 * has nothing to flush (0). Return: 0, -EINVAL, -ENOENT, -EINTR.
 */
int qgpu_invalidate_cache(int fd, uint32_t handle, uint64_t offset,
			  uint64_t size);

/**
 * qgpu_bo_reside - move an allocation (test and tool interface)
 * @op: QGPU_RESIDE_MAKE_RESIDENT, _EVICT or _EVICT_SYSTEM
 * @segment: target segment for MAKE_RESIDENT (0: by preference), else 0
 * @out_segment: receives where it is afterwards (may be NULL)
 */
int qgpu_bo_reside(int fd, uint32_t handle, uint32_t op, uint32_t segment,
		   uint32_t *out_segment);

/** qgpu_bo_info - where an allocation is */
int qgpu_bo_info(int fd, uint32_t handle, struct drm_qgpu_gem_info *info);

/**
 * qgpu_bo_set_priority - SetAllocationPriority
 *	(DRM_IOCTL_QGPU_GEM_SET_PRIORITY): priorities[i] for handles[i]
 * @handles: @count GEM handles
 * @priorities: @count priorities, QGPU_PRIORITY_MINIMUM..MAXIMUM
 * @count: 1..QGPU_MAX_PRIORITY_HANDLES
 */
int qgpu_bo_set_priority(int fd, const uint32_t *handles,
			 const uint32_t *priorities, uint32_t count);

/**
 * qgpu_bo_offer - OfferAllocations (DRM_IOCTL_QGPU_GEM_OFFER): the kernel
 *	may discard the content of these allocations under pressure; do not
 *	use them until qgpu_bo_reclaim()
 * @priority: QGPU_OFFER_PRIORITY_LOW (discarded first), _NORMAL or _HIGH
 */
int qgpu_bo_offer(int fd, const uint32_t *handles, uint32_t count,
		  uint32_t priority);

/**
 * qgpu_bo_reclaim - ReclaimAllocations (DRM_IOCTL_QGPU_GEM_RECLAIM)
 * @results: receives QGPU_RECLAIM_OK or _DISCARDED per handle (may be NULL)
 * @discarded: receives how many were discarded (may be NULL)
 */
int qgpu_bo_reclaim(int fd, const uint32_t *handles, uint32_t count,
		    uint32_t *results, uint32_t *discarded);

/* Dumb buffers (DRM_IOCTL_MODE_*_DUMB on any qgpu node). */
int qgpu_dumb_create(int fd, uint32_t width, uint32_t height, uint32_t bpp,
		     uint32_t *handle, uint32_t *pitch, uint64_t *size);
int qgpu_dumb_map_offset(int fd, uint32_t handle, uint64_t *offset);
int qgpu_dumb_destroy(int fd, uint32_t handle);

/* ------------------------------------------------------------------------ */
/* Contexts and synchronisation                                              */
/* ------------------------------------------------------------------------ */

/** qgpu_ctx_create - a physical context (slot commands) */
int qgpu_ctx_create(int fd, uint32_t *ctx);
/**
 * qgpu_ctx_create_flags - DRM_IOCTL_QGPU_CTX_CREATE with QGPU_CTX_CREATE_*
 *	@flags
 * Return: 0, -EINVAL (flags), -ENODEV (no context for user space, or
 * QGPU_CTX_CREATE_VIRTUAL without an MMU), -ENOSPC.
 */
int qgpu_ctx_create_flags(int fd, uint32_t flags, uint32_t *ctx);
/**
 * qgpu_ctx_create_virtual - a context that runs in the file's GPU virtual
 *	address space (QGPU_CTX_CREATE_VIRTUAL): submit qgpu_vcb buffers on it
 */
int qgpu_ctx_create_virtual(int fd, uint32_t *ctx);
int qgpu_ctx_destroy(int fd, uint32_t ctx);

/** qgpu_syncobj_create - a binary/timeline syncobj (unsignalled) */
int qgpu_syncobj_create(int fd, uint32_t *handle);
int qgpu_syncobj_destroy(int fd, uint32_t handle);

/**
 * qgpu_syncobj_wait - wait for a syncobj (point 0: binary) to signal
 * @timeout_ns: relative timeout; waits for the fence to be submitted too
 * Return: 0, -ETIME on timeout, or another negative errno.
 */
int qgpu_syncobj_wait(int fd, uint32_t handle, uint64_t point,
		      int64_t timeout_ns);

/** Monotonic clock in ns (what drmSyncobjWait's deadlines use). */
int64_t qgpu_now_ns(void);

/* ------------------------------------------------------------------------ */
/* Command-buffer builder                                                    */
/* ------------------------------------------------------------------------ */

/** Size to pass to qgpu_cb_bind() for "the rest of the allocation". */
#define QGPU_CB_WHOLE		(~0ull)

/** struct qgpu_cb_slot - what the builder last bound to a slot */
struct qgpu_cb_slot {
	uint32_t handle;	/* 0: unbound */
	uint32_t flags;		/* QGPU_ALLOC_* */
	uint64_t offset;
	uint64_t size;
	uint32_t run;		/* binding change it was last bound in */
};

/**
 * struct qgpu_cb - a DMA buffer being built, with its allocation list and
 *	patch-location list
 * @dw: the command stream
 * @ndw: dwords used
 * @allocs: allocation list (one entry per distinct handle, 0 = NULL alloc)
 * @nallocs: entries used
 * @patches: patch-location list, in buffer order
 * @npatches: entries used
 * @slots: per-slot state, @max_slots entries
 * @max_slots: MaxAllocationListSlotId of the device
 * @split: split offset given to the BINDs of the current binding change
 * @run: number of the current binding change (counts from 1)
 * @in_bind_run: the last command emitted was a BIND (same binding change)
 * @error: sticky: first error (negative errno) hit while building; the
 *	submit helpers refuse to submit a buffer with an error
 *
 * Split points ("Splitting a DMA Buffer"): every binding change is a split
 * point. A run of consecutive BINDs is one binding change: all its patch
 * entries carry the byte offset of the first BIND of the run as SplitOffset,
 * so the kernel can run everything before the run, page, and then reprogram
 * all those slots with no placement restriction. qgpu_cb_split_point() ends a
 * run; qgpu_cb_rebind_all() starts a new one that re-binds every live slot.
 *
 * The fields are public so that tests can craft malformed submissions.
 */
struct qgpu_cb {
	uint32_t *dw;
	uint32_t ndw, cap_dw;
	struct drm_qgpu_alloc_entry *allocs;
	uint32_t nallocs, cap_allocs;
	struct drm_qgpu_patch_entry *patches;
	uint32_t npatches, cap_patches;
	struct qgpu_cb_slot *slots;
	uint32_t max_slots;
	uint32_t split;
	uint32_t run;
	bool in_bind_run;
	int error;
};

/**
 * qgpu_cb_init - start an empty DMA buffer
 * @max_slots: the device's max_slots (qgpu_dev.info.max_slots)
 */
int qgpu_cb_init(struct qgpu_cb *cb, uint32_t max_slots);
/** qgpu_cb_reset - empty it again (keeps the memory) */
void qgpu_cb_reset(struct qgpu_cb *cb);
void qgpu_cb_fini(struct qgpu_cb *cb);

/** Byte offset of the next command. */
static inline uint32_t qgpu_cb_offset(const struct qgpu_cb *cb)
{
	return cb->ndw * 4;
}

/**
 * qgpu_cb_bind - bind [offset, offset + size) of an allocation to a slot
 * @slot: resource-table row, < max_slots
 * @handle: GEM handle (0 is qgpu_cb_unbind())
 * @offset: byte offset into the allocation (4-byte aligned)
 * @size: bytes, or QGPU_CB_WHOLE; the kernel clamps it to the allocation
 *
 * Emits a BIND, adds @handle to the allocation list (once per handle,
 * marked QGPU_ALLOC_WRITE) and a patch entry for it with the current split
 * point. Return: the byte offset of the BIND, or a negative errno.
 */
int qgpu_cb_bind(struct qgpu_cb *cb, uint32_t slot, uint32_t handle,
		 uint64_t offset, uint64_t size);

/**
 * qgpu_cb_bind_flags - qgpu_cb_bind() with explicit allocation-list flags
 * @flags: QGPU_ALLOC_* (0 = read only). Flags of the same handle are or'ed.
 */
int qgpu_cb_bind_flags(struct qgpu_cb *cb, uint32_t slot, uint32_t handle,
		       uint64_t offset, uint64_t size, uint32_t flags);

/**
 * qgpu_cb_unbind - unbind a slot (a BIND patched from a NULL allocation);
 *	a split point like any binding change
 */
int qgpu_cb_unbind(struct qgpu_cb *cb, uint32_t slot);

/** qgpu_cb_split_point - end the current binding change (next BIND starts
 *	a new split point) */
void qgpu_cb_split_point(struct qgpu_cb *cb);

/**
 * qgpu_cb_rebind_all - reprogram every bound slot at a split point
 *
 * "Splitting a DMA Buffer": "reprogram large resources at every split point"
 * so that the memory manager may move them between portions. Re-binds every
 * live slot as part of the current binding change when called right after
 * BINDs (slots already bound in it are left alone), else at a new split
 * point. So "bind what changes, then qgpu_cb_rebind_all()" makes one split
 * point at which the whole resource table is reprogrammed. Return: number of
 * slots re-bound, or a negative errno.
 */
int qgpu_cb_rebind_all(struct qgpu_cb *cb);

/* Commands. Offsets and sizes are bytes within the bound slot ranges. */
int qgpu_cb_nop(struct qgpu_cb *cb, uint32_t ndw);
int qgpu_cb_copy(struct qgpu_cb *cb, uint32_t dslot, uint32_t doff,
		 uint32_t sslot, uint32_t soff, uint32_t size);
int qgpu_cb_fill(struct qgpu_cb *cb, uint32_t slot, uint32_t off,
		 uint32_t size, uint32_t pattern);
/* dst[i] = a[i] + b[i] (ADD) or a[i] ^ b[i] (XOR), @n 32-bit words */
int qgpu_cb_add(struct qgpu_cb *cb, uint32_t dslot, uint32_t doff,
		uint32_t aslot, uint32_t aoff, uint32_t bslot, uint32_t boff,
		uint32_t n);
int qgpu_cb_xor(struct qgpu_cb *cb, uint32_t dslot, uint32_t doff,
		uint32_t aslot, uint32_t aoff, uint32_t bslot, uint32_t boff,
		uint32_t n);
/* 32-bit FNV-1a (qgpu_csum()) of @size bytes written at dslot:doff */
int qgpu_cb_checksum(struct qgpu_cb *cb, uint32_t sslot, uint32_t soff,
		     uint32_t size, uint32_t dslot, uint32_t doff);
/* 64-bit value write (8-byte aligned address) */
int qgpu_cb_fence(struct qgpu_cb *cb, uint32_t slot, uint32_t off,
		  uint64_t value);
/* stall until the 64-bit value at slot:off is >= @value */
int qgpu_cb_wait(struct qgpu_cb *cb, uint32_t slot, uint32_t off,
		 uint64_t value);
/* 64-bit device time in ns */
int qgpu_cb_timestamp(struct qgpu_cb *cb, uint32_t slot, uint32_t off);
/**
 * qgpu_cb_tile - TILE (QGPU_INFO_CAP_TILING): a @width x @height surface
 *	of 32-bit pixels between the tiled layout (docs/hw-spec.md section
 *	17) and a linear one @pitch bytes per row
 * @untile: false: linear sslot:soff -> tiled dslot:doff; true: tiled
 *	sslot:soff -> linear dslot:doff
 *
 * The kernel refuses the submit (-EINVAL) unless the tiled side's slot is
 * bound to a QGPU_GEM_TILED allocation and the linear side's to one
 * without, both by earlier BINDs of the buffer, with the ranges
 * (qgpu_tiled_size(), qgpu_linear_span()) inside the bound sizes.
 */
int qgpu_cb_tile(struct qgpu_cb *cb, bool untile, uint32_t dslot,
		 uint32_t doff, uint32_t sslot, uint32_t soff, uint32_t width,
		 uint32_t height, uint32_t pitch);

/** qgpu_cb_emit_raw - append raw dwords (no validation; for tests) */
int qgpu_cb_emit_raw(struct qgpu_cb *cb, const uint32_t *dw, uint32_t n);

/* ------------------------------------------------------------------------ */
/* Submission                                                                */
/* ------------------------------------------------------------------------ */

/**
 * qgpu_cb_to_submit - fill a submit ioctl argument from a built buffer
 * @args: zeroed and filled (dma, allocs, patches, ctx); syncs left empty
 */
void qgpu_cb_to_submit(const struct qgpu_cb *cb, uint32_t ctx,
		       struct drm_qgpu_submit *args);

/** qgpu_submit_raw - DRM_IOCTL_QGPU_SUBMIT as is */
int qgpu_submit_raw(int fd, struct drm_qgpu_submit *args);

/**
 * qgpu_submit - submit a built DMA buffer on a context
 * @in: syncobjs to wait on first (may be NULL)
 * @nin: entries in @in
 * @out: syncobjs to signal when the whole buffer completed (may be NULL)
 * @nout: entries in @out
 * @portions: receives the number of split portions (may be NULL)
 */
int qgpu_submit(int fd, uint32_t ctx, const struct qgpu_cb *cb,
		const struct drm_qgpu_sync_entry *in, uint32_t nin,
		const struct drm_qgpu_sync_entry *out, uint32_t nout,
		uint32_t *portions);

/**
 * qgpu_submit_wait - submit, then wait for completion (temporary syncobj)
 * @timeout_ns: relative wait timeout
 * @portions: receives the number of split portions (may be NULL)
 * Return: 0, the submit's error, or the wait's (-ETIME).
 */
int qgpu_submit_wait(int fd, uint32_t ctx, const struct qgpu_cb *cb,
		     int64_t timeout_ns, uint32_t *portions);

/* ------------------------------------------------------------------------ */
/* GPU virtual addressing ("GpuMmu Example Scenarios")                       */
/* ------------------------------------------------------------------------ */

/*
 * Every DRM file is a process with its own GPU virtual address space (VM).
 * The usual sequence: qgpu_vm_reserve() a range, qgpu_vm_map() (part of) an
 * allocation into it, qgpu_make_resident() it (or leave it in system
 * memory: its entries then point at its system pages), then submit
 * qgpu_vcb buffers on a virtual context; they wait for the file's latest
 * paging fence by themselves. All of these fail with -ENODEV on a device
 * without an MMU (see qgpu_dev_has_mmu()).
 */

/**
 * qgpu_dev_io_coherent - whether the device snoops CPU caches
 *	(QGPU_INFO_CAP_IO_COHERENT); without it cached allocations need
 *	InvalidateCache between CPU and GPU accesses
 */
static inline bool qgpu_dev_io_coherent(const struct qgpu_dev *dev)
{
	return dev->info.caps & QGPU_INFO_CAP_IO_COHERENT;
}

/** qgpu_dev_has_mmu - whether the device has a GPU MMU (QGPU_INFO_CAP_MMU) */
static inline bool qgpu_dev_has_mmu(const struct qgpu_dev *dev)
{
	return dev->info.caps & QGPU_INFO_CAP_MMU;
}

/**
 * qgpu_query_mmu - the MMU's capabilities and the device-wide virtual
 *	addressing counters (QGPU_QUERY_MMU)
 */
int qgpu_query_mmu(int fd, struct drm_qgpu_mmu_info *mmu);

/**
 * qgpu_query_vm_info - the calling file's address space: its paging-fence
 *	syncobj, last paging fence, reserved and mapped bytes, page tables
 *	(QGPU_QUERY_VM_INFO)
 */
int qgpu_query_vm_info(int fd, struct drm_qgpu_vm_info *vm);

/**
 * qgpu_query_vm_layout - the file's reserved ranges and mappings in address
 *	order, with the two-call pattern (QGPU_QUERY_VM_LAYOUT)
 * @entries: receives a malloc'ed array (free() it; NULL when empty)
 * @count: receives the number of elements
 */
int qgpu_query_vm_layout(int fd, struct drm_qgpu_vm_layout_entry **entries,
			 unsigned int *count);

/** qgpu_vm_layout_kind_name - "reserved", "mapping" or "?". Never NULL. */
const char *qgpu_vm_layout_kind_name(uint32_t kind);

/**
 * qgpu_vm_reserve - reserve a range of the file's address space
 * @addr: with QGPU_VM_RESERVE_FIXED the start (64 KiB aligned), else 0
 * @size: bytes, a multiple of 64 KiB
 * @flags: QGPU_VM_RESERVE_* flags
 * @out_addr: receives the start of the range (may be NULL)
 *
 * Without QGPU_VM_RESERVE_FIXED the kernel picks the lowest free range.
 * Return: 0, -EINVAL, -EEXIST (a fixed range overlaps a reservation),
 * -ENOSPC, -ENODEV.
 */
int qgpu_vm_reserve(int fd, uint64_t addr, uint64_t size, uint32_t flags,
		    uint64_t *out_addr);

/**
 * qgpu_vm_free - free a reservation (exactly one), unmapping what it holds
 * Return: 0, -EINVAL (alignment, size), -ENOENT (not a reservation).
 */
int qgpu_vm_free(int fd, uint64_t addr, uint64_t size);

/**
 * qgpu_vm_map - map [@offset, @offset + @size) of an allocation at @addr
 * @handle: GEM handle of one of the file's own allocations
 * @addr: virtual address (4 KiB aligned) inside one reservation
 * @offset: offset in the allocation (4 KiB aligned)
 * @size: bytes, a multiple of 4 KiB
 * @flags: QGPU_VM_MAP_* flags (QGPU_VM_MAP_READ_ONLY: device writes fault)
 *
 * The entries are written by a paging buffer queued now, which the file's
 * next paging fence and virtual DMA buffers come after.
 * Return: 0, -EINVAL, -ENOENT (handle), -EEXIST (overlaps a mapping),
 * -ENOSPC (no VRAM for page tables), -ENODEV.
 */
int qgpu_vm_map(int fd, uint32_t handle, uint64_t addr, uint64_t offset,
		uint64_t size, uint32_t flags);

/**
 * qgpu_vm_unmap - unmap every mapping, or part of one, in [@addr, @addr +
 *	@size); a range with nothing mapped is not an error
 * Return: 0, -EINVAL (alignment, zero size, beyond the VA size).
 */
int qgpu_vm_unmap(int fd, uint64_t addr, uint64_t size);

/**
 * qgpu_make_resident - MakeResident: commit allocations to VRAM
 * @handles: @count GEM handles, no duplicates
 * @count: 1..QGPU_MAX_RESIDENT
 * @paging_fence: receives the paging fence value (may be NULL): the point
 *	of the file's paging-fence timeline that signals when the paging is
 *	done (qgpu_paging_fence_wait())
 *
 * Returns at once; the memory manager's worker does the paging.
 * Return: 0, -EINVAL, -ENOENT (a handle), -EBUSY (an allocation that may
 * not go to VRAM now: Lock2, PRIME), -ENODEV.
 */
int qgpu_make_resident(int fd, const uint32_t *handles, uint32_t count,
		       uint64_t *paging_fence);

/**
 * qgpu_evict - Evict: move allocations to system memory (their mappings
 *	then reach them through system page-table entries); as
 *	qgpu_make_resident() with QGPU_MAKE_RESIDENT_EVICT
 */
int qgpu_evict(int fd, const uint32_t *handles, uint32_t count,
	       uint64_t *paging_fence);

/**
 * qgpu_paging_fence_wait - wait until the file's paging fence reaches
 *	@value (drmSyncobjTimelineWait on its paging-fence syncobj)
 * @value: a value qgpu_make_resident()/qgpu_evict() returned; 0 returns at
 *	once
 * @timeout_ns: relative timeout
 * Return: 0, -ETIME on timeout, or another negative errno.
 */
int qgpu_paging_fence_wait(int fd, uint64_t value, int64_t timeout_ns);

/* ------------------------------------------------------------------------ */
/* Virtual-mode DMA-buffer builder                                           */
/* ------------------------------------------------------------------------ */

/**
 * struct qgpu_vcb - a virtual-mode DMA buffer being built: QGPU_DMA_V*
 *	commands naming GPU virtual addresses of the file's address space
 * @dw: the command stream
 * @ndw: dwords used
 * @cap_dw: dwords allocated
 * @error: sticky: first error (negative errno) hit while building; the
 *	submit helpers refuse to submit a buffer with an error
 *
 * A virtual context runs it as it is: no allocation list, no patch-location
 * list, never split. The fields are public so that tests can craft
 * malformed submissions.
 */
struct qgpu_vcb {
	uint32_t *dw;
	uint32_t ndw, cap_dw;
	int error;
};

/** qgpu_vcb_init - start an empty virtual DMA buffer */
int qgpu_vcb_init(struct qgpu_vcb *vcb);
/** qgpu_vcb_reset - empty it again (keeps the memory) */
void qgpu_vcb_reset(struct qgpu_vcb *vcb);
/** qgpu_vcb_fini - free its memory */
void qgpu_vcb_fini(struct qgpu_vcb *vcb);

/** Byte offset of the next command. */
static inline uint32_t qgpu_vcb_offset(const struct qgpu_vcb *vcb)
{
	return vcb->ndw * 4;
}

/*
 * Commands (QGPU_DMA_V*). Addresses are GPU virtual addresses; an address
 * the file's VM does not map, or a write through a read-only mapping, is a
 * device fault that makes the context lost.
 */
/** qgpu_vcb_nop - NOP of @ndw dwords (1..0xffff) */
int qgpu_vcb_nop(struct qgpu_vcb *vcb, uint32_t ndw);
/** qgpu_vcb_copy - VCOPY @size bytes from @src to @dst */
int qgpu_vcb_copy(struct qgpu_vcb *vcb, uint64_t dst, uint64_t src,
		  uint32_t size);
/** qgpu_vcb_fill - VFILL @size bytes (a multiple of 4) at @dst */
int qgpu_vcb_fill(struct qgpu_vcb *vcb, uint64_t dst, uint32_t size,
		  uint32_t pattern);
/** qgpu_vcb_add - VADD: d[i] = a[i] + b[i] for @n 32-bit words */
int qgpu_vcb_add(struct qgpu_vcb *vcb, uint64_t d, uint64_t a, uint64_t b,
		 uint32_t n);
/** qgpu_vcb_xor - VXOR: d[i] = a[i] ^ b[i] for @n 32-bit words */
int qgpu_vcb_xor(struct qgpu_vcb *vcb, uint64_t d, uint64_t a, uint64_t b,
		 uint32_t n);
/**
 * qgpu_vcb_checksum - VCHECKSUM: the 32-bit FNV-1a (qgpu_csum()) of @size
 *	bytes at @src, written at @dst
 */
int qgpu_vcb_checksum(struct qgpu_vcb *vcb, uint64_t src, uint32_t size,
		      uint64_t dst);
/** qgpu_vcb_fence - VFENCE: write the 64-bit @value at @addr (8-aligned) */
int qgpu_vcb_fence(struct qgpu_vcb *vcb, uint64_t addr, uint64_t value);
/** qgpu_vcb_wait - VWAIT: stall until the 64-bit value at @addr >= @value */
int qgpu_vcb_wait(struct qgpu_vcb *vcb, uint64_t addr, uint64_t value);
/** qgpu_vcb_timestamp - VTIMESTAMP: 64-bit device time in ns at @addr */
int qgpu_vcb_timestamp(struct qgpu_vcb *vcb, uint64_t addr);
/**
 * qgpu_vcb_tile - VTILE: qgpu_cb_tile() with GPU virtual addresses, @dst
 *	written and @src read (QGPU_INFO_CAP_TILING)
 */
int qgpu_vcb_tile(struct qgpu_vcb *vcb, bool untile, uint64_t dst,
		  uint64_t src, uint32_t width, uint32_t height,
		  uint32_t pitch);
/** qgpu_vcb_emit_raw - append raw dwords (no validation; for tests) */
int qgpu_vcb_emit_raw(struct qgpu_vcb *vcb, const uint32_t *dw, uint32_t n);

/**
 * qgpu_vcb_to_submit - fill a submit ioctl argument from a virtual buffer
 * @args: zeroed and filled (dma, dma_size, ctx); no lists, syncs empty
 */
void qgpu_vcb_to_submit(const struct qgpu_vcb *vcb, uint32_t ctx,
			struct drm_qgpu_submit *args);

/**
 * qgpu_vcb_submit - submit a virtual DMA buffer on a virtual context
 * @in: syncobjs to wait on first (may be NULL)
 * @nin: entries in @in
 * @out: syncobjs to signal when the buffer completed (may be NULL)
 * @nout: entries in @out
 *
 * The buffer also waits for the file's latest paging fence.
 * Return: 0 or a negative errno (-ECANCELED: the context is lost).
 */
int qgpu_vcb_submit(int fd, uint32_t ctx, const struct qgpu_vcb *vcb,
		    const struct drm_qgpu_sync_entry *in, uint32_t nin,
		    const struct drm_qgpu_sync_entry *out, uint32_t nout);

/**
 * qgpu_vcb_submit_wait - submit, then wait for completion (temporary
 *	syncobj)
 * @timeout_ns: relative wait timeout
 * Return: 0, the submit's error, or the wait's (-ETIME).
 */
int qgpu_vcb_submit_wait(int fd, uint32_t ctx, const struct qgpu_vcb *vcb,
			 int64_t timeout_ns);

/* ------------------------------------------------------------------------ */
/* Tiled surfaces ("Mapping Virtual Addresses to a Memory Segment")          */
/* ------------------------------------------------------------------------ */

/*
 * The GPU renders surfaces in a tiled ("swizzled") layout (docs/hw-spec.md
 * section 17); an application reads and writes them linearly. A
 * CPU-accessible allocation cannot be tiled (the kernel refuses
 * QGPU_GEM_TILED with QGPU_GEM_CPU_ACCESS: such an allocation may be
 * evicted to the aperture segment or system memory, where the application
 * reads its bytes as they are), so a surface is two allocations, as the
 * Windows Driver Kit's "Mapping Virtual Addresses to a Memory Segment"
 * lays out: a tiled one the GPU uses and a linear CPU-accessible one, each
 * with private data describing its format. Locking the surface submits the
 * untile into the linear allocation, waits for it and maps the linear
 * allocation; unlocking after a write tiles it back.
 *
 * Every surface has its own context (physical, or virtual with
 * QGPU_SURFACE_VIRTUAL), s->ctx, on which the untiles and tiles run in
 * order. Work on other physical contexts is ordered with them by implicit
 * synchronisation (an untile reads the tiled allocation, so it waits for
 * every earlier write to it, and a tile writes it, so it waits for earlier
 * reads too); work on virtual contexts is ordered only by its own context
 * or by syncobjs, as for every virtual DMA buffer. All functions need
 * QGPU_INFO_CAP_TILING (-ENODEV without it).
 */

/** Layouts of a surface's allocations (&struct qgpu_surface_format) */
enum qgpu_surface_layout {
	QGPU_SURFACE_LAYOUT_LINEAR = 1,	/* rows @pitch bytes apart */
	QGPU_SURFACE_LAYOUT_TILED = 2,	/* 8x8-pixel tiles, hw-spec 17.1 */
};

/**
 * struct qgpu_surface_format - the private data of one allocation of a
 *	surface (what D3DDDI_ALLOCATIONINFO's pPrivateDriverData carries): its
 *	format, which the memory manager never looks at
 * @layout: QGPU_SURFACE_LAYOUT_*
 * @width: pixels per row
 * @height: rows
 * @cpp: bytes per pixel (QGPU_TILE_CPP: 32-bit pixels)
 * @pitch: bytes from one row to the next (linear); 0 for the tiled layout
 * @bytes: bytes the layout takes: qgpu_tiled_size() for the tiled one,
 *	@pitch * @height for the linear one
 */
struct qgpu_surface_format {
	uint32_t layout;
	uint32_t width;
	uint32_t height;
	uint32_t cpp;
	uint32_t pitch;
	uint64_t bytes;
};

/**
 * struct qgpu_surface_alloc - one allocation of a surface
 * @handle: GEM handle
 * @size: bytes of the allocation (@fmt.bytes rounded up to the page)
 * @va: with QGPU_SURFACE_VIRTUAL, the GPU virtual address it is mapped at
 *	in the file's address space; else 0
 * @fmt: its format
 */
struct qgpu_surface_alloc {
	uint32_t handle;
	uint64_t size;
	uint64_t va;
	struct qgpu_surface_format fmt;
};

/* qgpu_surface_create() flags */
/* map both allocations into the file's VM and lock with VTILE */
#define QGPU_SURFACE_VIRTUAL	(1u << 0)

/**
 * struct qgpu_surface - a surface made of a tiled and a linear allocation
 * @fd: the DRM fd it was created on
 * @width: pixels
 * @height: rows
 * @flags: QGPU_SURFACE_* it was created with
 * @ctx: its context: physical, or virtual with QGPU_SURFACE_VIRTUAL
 * @max_slots: the device's slots per context (for its DMA buffers)
 * @tiled: the allocation the GPU uses (QGPU_GEM_TILED, VRAM preferred,
 *	no CPU access)
 * @linear: the allocation the application accesses (QGPU_GEM_CPU_ACCESS,
 *	aperture segment first, then CPU-visible VRAM)
 * @va_base: with QGPU_SURFACE_VIRTUAL, the reservation holding both
 * @va_size: its size
 * @map: while locked, the CPU mapping of @linear; else NULL
 */
struct qgpu_surface {
	int fd;
	uint32_t width, height;
	uint32_t flags;
	uint32_t ctx;
	uint32_t max_slots;
	struct qgpu_surface_alloc tiled;
	struct qgpu_surface_alloc linear;
	uint64_t va_base, va_size;
	void *map;
};

/**
 * qgpu_surface_create - create a surface: its two allocations in one call
 * @dev: the device (QGPU_INFO_CAP_TILING; with QGPU_SURFACE_VIRTUAL also
 *	QGPU_INFO_CAP_MMU)
 * @width: pixels, 1..QGPU_TILE_MAX_DIM
 * @height: rows, 1..QGPU_TILE_MAX_DIM
 * @flags: QGPU_SURFACE_* (QGPU_SURFACE_VIRTUAL: both allocations are
 *	mapped into the file's GPU virtual address space, @s->tiled.va and
 *	@s->linear.va, the tiled one made resident (MakeResident), and the
 *	surface's context is a virtual one that locks with VTILE)
 * @s: filled in
 *
 * Creates the tiled allocation (QGPU_GEM_TILED, every segment the device
 * has, VRAM preferred), the linear one (QGPU_GEM_CPU_ACCESS, the aperture
 * segment and CPU-visible VRAM, the aperture first; pitch: 4 * @width
 * rounded up to 64 bytes), their format descriptions and the context.
 * Contents start as zeros. Return: 0, -EINVAL (@width, @height, @flags),
 * -ENODEV (no tiling, or no MMU for QGPU_SURFACE_VIRTUAL), or the errno of
 * the ioctl that failed (nothing is left behind).
 */
int qgpu_surface_create(struct qgpu_dev *dev, uint32_t width, uint32_t height,
			uint32_t flags, struct qgpu_surface *s);

/**
 * qgpu_surface_lock - untile the surface and map it for the CPU
 * @s: an unlocked surface
 * @ptr: receives the linear pixels: pixel (x, y) is the 32-bit word at
 *	byte y * *@pitch + x * 4
 * @pitch: receives the bytes per row (may be NULL; @s->linear.fmt.pitch)
 *
 * Submits the untile (tiled -> linear) on the surface's context, waits for
 * it to complete (a lock never returns before the GPU has written what the
 * CPU reads: there is no do-not-wait lock), then locks and maps the linear
 * allocation (Lock2). Return: 0, -EBUSY (already locked), -ETIME (the
 * untile did not finish within 60 s), -EIO (the untile faulted: the
 * surface's context is lost, and so is the surface), or the submit's, the
 * wait's or the lock's errno (the surface is then unlocked).
 */
int qgpu_surface_lock(struct qgpu_surface *s, void **ptr, uint32_t *pitch);

/**
 * qgpu_surface_unlock - end a qgpu_surface_lock()
 * @s: a locked surface
 * @written: the CPU wrote pixels: tile the linear allocation back into the
 *	tiled one (submitted on the surface's context; later GPU work on the
 *	tiled allocation comes after it, see above)
 *
 * Unmaps and unlocks the linear allocation first. Return: 0, -EINVAL (not
 * locked), or the errno of the unmap or the submit.
 */
int qgpu_surface_unlock(struct qgpu_surface *s, bool written);

/**
 * qgpu_surface_destroy - unlock if locked (without tiling back), unmap the
 *	VAs, destroy the context and both allocations (deferred destruction:
 *	queued work finishes first); @s is zeroed
 */
void qgpu_surface_destroy(struct qgpu_surface *s);

/* ------------------------------------------------------------------------ */
/* Helpers                                                                   */
/* ------------------------------------------------------------------------ */

/** qgpu_csum - FNV-1a over 32-bit words, as QGPU_DMA_CHECKSUM computes */
uint32_t qgpu_csum(const uint32_t *w, size_t nwords);
/** qgpu_csum_update - continue a checksum (start from QGPU_CSUM_INIT) */
uint32_t qgpu_csum_update(uint32_t h, const uint32_t *w, size_t nwords);

/** qgpu_pattern - deterministic pattern word @i of stream @seed */
static inline uint32_t qgpu_pattern(uint32_t seed, uint64_t i)
{
	uint64_t x = (i + 1) * 0x9e3779b97f4a7c15ull ^ (uint64_t)seed << 32 ^
		     seed;

	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 29;
	return (uint32_t)x;
}

/** Fill / check @size bytes at @p with qgpu_pattern(seed, ...). check
 *  returns the index of the first wrong word, or -1. */
void qgpu_pattern_fill(void *p, uint64_t size, uint32_t seed);
int64_t qgpu_pattern_check(const void *p, uint64_t size, uint32_t seed);

/** qgpu_parse_size - "64M", "4096", "1G", "16k" -> bytes; -1 on error */
int64_t qgpu_parse_size(const char *s);

/* ------------------------------------------------------------------------ */
/* Monitored fences and usage tracking ("Allocation Usage Tracking", WDK)    */

/**
 * struct qgpu_mfence - a monitored fence, mapped for reading
 * @fd: DRM fd it belongs to
 * @handle: its handle (DRM_IOCTL_QGPU_MFENCE_*)
 * @page: the read-only mapping of its page
 * @value: the value the GPU advances; read it with qgpu_mfence_read()
 */
struct qgpu_mfence {
	int fd;
	uint32_t handle;
	void *page;
	const volatile uint64_t *value;
};

/** qgpu_mfence_read - the fence's current value, without a system call */
static inline uint64_t qgpu_mfence_read(const struct qgpu_mfence *mf)
{
	return *mf->value;
}

/**
 * qgpu_mfence_create - a monitored fence starting at @initial, mapped
 * Return: 0, or a negative errno (-ENOSPC: the file has QGPU_MFENCE_MAX).
 */
int qgpu_mfence_create(int fd, uint64_t initial, struct qgpu_mfence *mf);
/** qgpu_mfence_destroy - unmap it and close its handle */
int qgpu_mfence_destroy(struct qgpu_mfence *mf);
/**
 * qgpu_mfence_wait - until @mf reaches @value: no system call if it has,
 *	else a sleep in the kernel woken by the device's interrupt
 * @timeout_ns: relative; <= 0 checks once
 * A signal interrupts the kernel's wait and libdrm restarts it (the
 * deadline is absolute, so it still ends in time).
 * Return: 0, -ETIME, or another negative errno.
 */
int qgpu_mfence_wait(const struct qgpu_mfence *mf, uint64_t value,
		     int64_t timeout_ns);
/**
 * qgpu_mfence_wait_many - DRM_IOCTL_QGPU_MFENCE_WAIT
 * @flags: 0 (all) or QGPU_MFENCE_WAIT_ANY
 * @abs_timeout_ns: CLOCK_MONOTONIC deadline (qgpu_now_ns()), 0 = check once
 * @first: with QGPU_MFENCE_WAIT_ANY, receives the first index reached
 */
int qgpu_mfence_wait_many(int fd, const uint32_t *handles,
			  const uint64_t *values, uint32_t count,
			  uint32_t flags, int64_t abs_timeout_ns,
			  uint32_t *first);
/** qgpu_mfence_export - "@handle reached @value" into a syncobj (point) */
int qgpu_mfence_export(int fd, uint32_t handle, uint64_t value,
		       uint32_t syncobj, uint64_t point);

/**
 * struct qgpu_context - a context with its monitored fence
 * @fd: DRM fd
 * @id: context id
 * @flags: QGPU_CTX_CREATE_* it was created with
 * @fence: its monitored fence: each submission advances it by one
 * @last: the value the last qgpu_context_submit() advances it to
 */
struct qgpu_context {
	int fd;
	uint32_t id;
	uint32_t flags;
	struct qgpu_mfence fence;
	uint64_t last;
};

/** qgpu_context_create - a context (QGPU_CTX_CREATE_* @flags) and its fence */
int qgpu_context_create(int fd, uint32_t flags, struct qgpu_context *c);
/** qgpu_context_destroy - destroy it (its fence handle goes with it) */
int qgpu_context_destroy(struct qgpu_context *c);
/**
 * qgpu_context_submit - submit @args (filled by qgpu_cb_to_submit() or
 *	qgpu_vcb_to_submit()) on @c with syncobjs or monitored fences; sets
 *	@c->last to the submission's fence value
 */
int qgpu_context_submit(struct qgpu_context *c, struct drm_qgpu_submit *args,
			const struct drm_qgpu_sync_entry *in, uint32_t nin,
			const struct drm_qgpu_sync_entry *out, uint32_t nout);

/* Lock flags of qgpu_resource_lock() (Lock2 and the D3D map flags) */
#define QGPU_LOCK_READ_ONLY	(1u << 0)	/* the CPU only reads */
#define QGPU_LOCK_NO_OVERWRITE	(1u << 1)	/* never waits: data in use is not touched */
#define QGPU_LOCK_DISCARD	(1u << 2)	/* renames when busy: never shows pending data */
#define QGPU_LOCK_DO_NOT_WAIT	(1u << 3)	/* WasStillDrawing instead of waiting */
#define QGPU_LOCK_FLAGS		0xfu
/** What a synchronising lock with QGPU_LOCK_DO_NOT_WAIT returns when busy */
#define QGPU_WAS_STILL_DRAWING	(-EAGAIN)

#define QGPU_RES_MAX_CTX	8	/* contexts tracked per allocation */
#define QGPU_RES_MAX_BACKINGS	8	/* allocations per resource (renaming) */

/**
 * struct qgpu_use - when the GPU last used an allocation, for one context
 * @ctx: the context (must outlive the records of the resources it used)
 * @read: its fence value after the last submission that read it (0: none)
 * @write: ... and after the last one that wrote it
 */
struct qgpu_use {
	const struct qgpu_context *ctx;
	uint64_t read;
	uint64_t write;
};

/**
 * struct qgpu_backing - one allocation behind a resource
 * @handle: its GEM handle
 * @use: usage records, one per context that used it
 * @nuse: records in use
 */
struct qgpu_backing {
	uint32_t handle;
	struct qgpu_use use[QGPU_RES_MAX_CTX];
	uint32_t nuse;
};

/**
 * struct qgpu_resource - an application buffer with usage tracking and
 *	renaming; the application binds qgpu_resource_handle() (which changes
 *	after a renaming DISCARD lock) and reports each submission that used
 *	it with qgpu_resource_used()
 * @fd: DRM fd
 * @size: bytes
 * @segment_mask, @flags, @preferred: as qgpu_bo_create() (CPU access added)
 * @max_backings: the renaming ring's limit
 * @nbackings: allocations created so far
 * @cur: the current one
 * @b: the allocations
 * @map: the current lock's mapping, or NULL
 * @renames: DISCARD locks that switched allocation
 * @waits: locks that slept until the GPU was done
 * @still_drawing: DO_NOT_WAIT locks answered QGPU_WAS_STILL_DRAWING
 */
struct qgpu_resource {
	int fd;
	uint64_t size;
	uint32_t segment_mask;
	uint32_t flags;
	uint32_t preferred;
	uint32_t max_backings;
	uint32_t nbackings;
	uint32_t cur;
	struct qgpu_backing b[QGPU_RES_MAX_BACKINGS];
	void *map;
	uint64_t renames;
	uint64_t waits;
	uint64_t still_drawing;
};

/**
 * qgpu_resource_create - a resource of @size bytes, one allocation for now
 * @max_backings: 1..QGPU_RES_MAX_BACKINGS allocations for renaming
 */
int qgpu_resource_create(int fd, uint64_t size, uint32_t segment_mask,
			 uint32_t flags, uint32_t preferred,
			 uint32_t max_backings, struct qgpu_resource *r);
/** qgpu_resource_destroy - close every allocation (the kernel defers it) */
void qgpu_resource_destroy(struct qgpu_resource *r);
/** qgpu_resource_handle - the allocation to bind in the next submission */
uint32_t qgpu_resource_handle(const struct qgpu_resource *r);
/**
 * qgpu_resource_used - record that @c's last submission (@c->last) used
 *	the current allocation, writing it or only reading it
 * Return: 0, or -ENOSPC (more than QGPU_RES_MAX_CTX contexts).
 */
int qgpu_resource_used(struct qgpu_resource *r, const struct qgpu_context *c,
		       bool write);
/** qgpu_resource_busy - would a (@write) synchronising lock wait now? */
bool qgpu_resource_busy(const struct qgpu_resource *r, bool write);
/**
 * qgpu_resource_lock - Lock2 with QGPU_LOCK_* @flags; maps the resource
 * Return: 0 and *@ptr, QGPU_WAS_STILL_DRAWING, -EINVAL (flags, already
 * locked), or the errno of a wait, an allocation or the map.
 */
int qgpu_resource_lock(struct qgpu_resource *r, uint32_t flags, void **ptr);
/** qgpu_resource_unlock - end the lock (unmaps) */
int qgpu_resource_unlock(struct qgpu_resource *r);

#if defined(__cplusplus)
}
#endif

#endif /* LIBQGPU_H */
