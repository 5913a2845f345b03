// SPDX-License-Identifier: MIT
/*
 * libqgpu: allocations, dumb buffers, contexts and syncobjs. The CPU
 * access paths (lock/map, unlock/unmap) also do the user-mode driver's
 * part of I/O coherency ("Allocation Usage Tracking"): on a device that
 * does not snoop CPU caches, a cached allocation's cache lines are written
 * back and invalidated between CPU and GPU accesses (InvalidateCache).
 */
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "qgpu_priv.h"

int qgpu_bo_create(int fd, uint64_t size, uint32_t segment_mask,
		   uint32_t flags, uint32_t preferred, uint32_t *handle)
{
	struct drm_qgpu_gem_create a = {
		.size = size,
		.segment_mask = segment_mask,
		.flags = flags,
		.preferred = preferred,
	};
	int ret = qgpu_ioctl(fd, DRM_IOCTL_QGPU_GEM_CREATE, &a);

	if (!ret)
		*handle = a.handle;
	return ret;
}

int qgpu_bo_destroy(int fd, uint32_t handle)
{
	struct drm_gem_close a = { .handle = handle };

	return qgpu_ioctl(fd, DRM_IOCTL_GEM_CLOSE, &a);
}

int qgpu_bo_destroy_flags(int fd, uint32_t handle, uint32_t flags)
{
	struct drm_qgpu_gem_destroy a = { .handle = handle, .flags = flags };

	return qgpu_ioctl(fd, DRM_IOCTL_QGPU_GEM_DESTROY, &a);
}

int qgpu_invalidate_cache(int fd, uint32_t handle, uint64_t offset,
			  uint64_t size)
{
	struct drm_qgpu_invalidate_cache a = {
		.handle = handle,
		.offset = offset,
		.size = size,
	};

	return qgpu_ioctl(fd, DRM_IOCTL_QGPU_INVALIDATE_CACHE, &a);
}

/*
 * Whether CPU and GPU accesses to @handle need InvalidateCache between
 * them: a cached allocation on a device that is not I/O coherent. 1 (and
 * the allocation's size in *@size), 0, or a negative errno.
 */
static int qgpu_bo_needs_invalidate(int fd, uint32_t handle, uint64_t *size)
{
	struct drm_qgpu_device_info dev;
	struct drm_qgpu_gem_info info;
	int ret;

	ret = qgpu_bo_info(fd, handle, &info);
	if (ret)
		return ret;
	if (!(info.flags & QGPU_GEM_CPU_CACHED))
		return 0;
	ret = qgpu_query_device(fd, &dev);
	if (ret)
		return ret;
	*size = info.size;
	return !(dev.caps & QGPU_INFO_CAP_IO_COHERENT);
}

/* InvalidateCache of the whole allocation, when it needs it at all */
static int qgpu_bo_cache_maintain(int fd, uint32_t handle)
{
	uint64_t size = 0;
	int ret = qgpu_bo_needs_invalidate(fd, handle, &size);

	if (ret <= 0)
		return ret;
	return qgpu_invalidate_cache(fd, handle, 0, size);
}

static int qgpu_bo_lock_raw(int fd, uint32_t handle, uint64_t *offset)
{
	struct drm_qgpu_gem_lock a = { .handle = handle };
	int ret = qgpu_ioctl(fd, DRM_IOCTL_QGPU_GEM_LOCK, &a);

	if (!ret)
		*offset = a.offset;
	return ret;
}

static int qgpu_bo_unlock_raw(int fd, uint32_t handle)
{
	struct drm_qgpu_gem_unlock a = { .handle = handle };

	return qgpu_ioctl(fd, DRM_IOCTL_QGPU_GEM_UNLOCK, &a);
}

/*
 * The CPU is about to read what the GPU may have written: invalidate the
 * lines it may hold (even speculatively read ones). On failure the lock
 * is undone.
 */
static int qgpu_bo_begin_read(int fd, uint32_t handle)
{
	int ret = qgpu_bo_cache_maintain(fd, handle);

	if (ret) {
		qgpu_bo_unlock_raw(fd, handle);
		errno = -ret;
	}
	return ret;
}

int qgpu_bo_lock(int fd, uint32_t handle, uint64_t *offset)
{
	int ret = qgpu_bo_lock_raw(fd, handle, offset);

	return ret ? ret : qgpu_bo_begin_read(fd, handle);
}

int qgpu_bo_unlock(int fd, uint32_t handle)
{
	/* the CPU may have written: write back before the GPU reads */
	int ret = qgpu_bo_cache_maintain(fd, handle);

	/* a bad handle: the unlock itself says so */
	if (ret && ret != -ENOENT)
		return ret;
	return qgpu_bo_unlock_raw(fd, handle);
}

int qgpu_bo_map_flags(int fd, uint32_t handle, uint64_t size,
		      uint32_t flags, void **ptr)
{
	int prot = 0;
	uint64_t offset;
	void *p;
	int ret;

	if (!flags || flags & ~(QGPU_BO_MAP_READ | QGPU_BO_MAP_WRITE)) {
		errno = EINVAL;
		return -EINVAL;
	}
	if (flags & QGPU_BO_MAP_READ)
		prot |= PROT_READ;
	if (flags & QGPU_BO_MAP_WRITE)
		prot |= PROT_WRITE;
	ret = qgpu_bo_lock_raw(fd, handle, &offset);
	if (ret)
		return ret;
	if (flags & QGPU_BO_MAP_READ) {
		ret = qgpu_bo_begin_read(fd, handle);
		if (ret)
			return ret;
	}
	p = mmap(NULL, size, prot, MAP_SHARED, fd, (off_t)offset);
	if (p == MAP_FAILED) {
		ret = -errno;
		qgpu_bo_unlock_raw(fd, handle);
		errno = -ret;
		return ret;
	}
	*ptr = p;
	return 0;
}

int qgpu_bo_unmap_flags(int fd, uint32_t handle, void *ptr, uint64_t size,
			uint32_t flags)
{
	int ret = 0, r;

	/* the CPU wrote through the mapping: write back before the GPU reads */
	if (flags & QGPU_BO_MAP_WRITE) {
		r = qgpu_bo_cache_maintain(fd, handle);
		if (r && r != -ENOENT)
			ret = r;
	}
	if (ptr && munmap(ptr, size) && !ret)
		ret = -errno;
	if (qgpu_bo_unlock_raw(fd, handle) && !ret)
		ret = -errno;
	if (ret)
		errno = -ret;
	return ret;
}

int qgpu_bo_map(int fd, uint32_t handle, uint64_t size, void **ptr)
{
	return qgpu_bo_map_flags(fd, handle, size,
				 QGPU_BO_MAP_READ | QGPU_BO_MAP_WRITE, ptr);
}

int qgpu_bo_unmap(int fd, uint32_t handle, void *ptr, uint64_t size)
{
	return qgpu_bo_unmap_flags(fd, handle, ptr, size,
				   QGPU_BO_MAP_READ | QGPU_BO_MAP_WRITE);
}

int qgpu_bo_reside(int fd, uint32_t handle, uint32_t op, uint32_t segment,
		   uint32_t *out_segment)
{
	struct drm_qgpu_gem_reside a = {
		.handle = handle,
		.op = op,
		.segment = segment,
	};
	int ret = qgpu_ioctl(fd, DRM_IOCTL_QGPU_GEM_RESIDE, &a);

	if (!ret && out_segment)
		*out_segment = a.segment;
	return ret;
}

int qgpu_bo_info(int fd, uint32_t handle, struct drm_qgpu_gem_info *info)
{
	memset(info, 0, sizeof(*info));
	info->handle = handle;
	return qgpu_ioctl(fd, DRM_IOCTL_QGPU_GEM_INFO, info);
}

int qgpu_bo_set_priority(int fd, const uint32_t *handles,
			 const uint32_t *priorities, uint32_t count)
{
	struct drm_qgpu_gem_set_priority a = {
		.handles = (uintptr_t)handles,
		.priorities = (uintptr_t)priorities,
		.count = count,
	};

	return qgpu_ioctl(fd, DRM_IOCTL_QGPU_GEM_SET_PRIORITY, &a);
}

int qgpu_bo_offer(int fd, const uint32_t *handles, uint32_t count,
		  uint32_t priority)
{
	struct drm_qgpu_gem_offer a = {
		.handles = (uintptr_t)handles,
		.count = count,
		.priority = priority,
	};

	return qgpu_ioctl(fd, DRM_IOCTL_QGPU_GEM_OFFER, &a);
}

int qgpu_bo_reclaim(int fd, const uint32_t *handles, uint32_t count,
		    uint32_t *results, uint32_t *discarded)
{
	struct drm_qgpu_gem_reclaim a = {
		.handles = (uintptr_t)handles,
		.results = (uintptr_t)results,
		.count = count,
	};
	int ret = qgpu_ioctl(fd, DRM_IOCTL_QGPU_GEM_RECLAIM, &a);

	if (!ret && discarded)
		*discarded = a.discarded;
	return ret;
}

int qgpu_dumb_create(int fd, uint32_t width, uint32_t height, uint32_t bpp,
		     uint32_t *handle, uint32_t *pitch, uint64_t *size)
{
	struct drm_mode_create_dumb a = {
		.width = width,
		.height = height,
		.bpp = bpp,
	};
	int ret = qgpu_ioctl(fd, DRM_IOCTL_MODE_CREATE_DUMB, &a);

	if (ret)
		return ret;
	*handle = a.handle;
	if (pitch)
		*pitch = a.pitch;
	if (size)
		*size = a.size;
	return 0;
}

int qgpu_dumb_map_offset(int fd, uint32_t handle, uint64_t *offset)
{
	struct drm_mode_map_dumb a = { .handle = handle };
	int ret = qgpu_ioctl(fd, DRM_IOCTL_MODE_MAP_DUMB, &a);

	if (!ret)
		*offset = a.offset;
	return ret;
}

int qgpu_dumb_destroy(int fd, uint32_t handle)
{
	struct drm_mode_destroy_dumb a = { .handle = handle };

	return qgpu_ioctl(fd, DRM_IOCTL_MODE_DESTROY_DUMB, &a);
}

/* ------------------------------------------------------------------------ */

int qgpu_ctx_create(int fd, uint32_t *ctx)
{
	struct drm_qgpu_ctx_create a = { 0 };
	int ret = qgpu_ioctl(fd, DRM_IOCTL_QGPU_CTX_CREATE, &a);

	if (!ret)
		*ctx = a.ctx;
	return ret;
}

int qgpu_ctx_destroy(int fd, uint32_t ctx)
{
	struct drm_qgpu_ctx_destroy a = { .ctx = ctx };

	return qgpu_ioctl(fd, DRM_IOCTL_QGPU_CTX_DESTROY, &a);
}

int qgpu_syncobj_create(int fd, uint32_t *handle)
{
	errno = 0;
	return qgpu_drm_ret(drmSyncobjCreate(fd, 0, handle));
}

int qgpu_syncobj_destroy(int fd, uint32_t handle)
{
	errno = 0;
	return qgpu_drm_ret(drmSyncobjDestroy(fd, handle));
}

int64_t qgpu_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

int qgpu_syncobj_wait(int fd, uint32_t handle, uint64_t point,
		      int64_t timeout_ns)
{
	int64_t deadline = qgpu_now_ns() + timeout_ns;
	uint32_t first;
	int ret;

	errno = 0;
	if (point)
		ret = drmSyncobjTimelineWait(fd, &handle, &point, 1, deadline,
				DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT,
				&first);
	else
		ret = drmSyncobjWait(fd, &handle, 1, deadline,
				     DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT,
				     &first);
	return qgpu_drm_ret(ret);
}
