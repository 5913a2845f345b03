// SPDX-License-Identifier: MIT
/*
 * libqgpu: allocations, dumb buffers, contexts and syncobjs.
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

int qgpu_bo_lock(int fd, uint32_t handle, uint64_t *offset)
{
	struct drm_qgpu_gem_lock a = { .handle = handle };
	int ret = qgpu_ioctl(fd, DRM_IOCTL_QGPU_GEM_LOCK, &a);

	if (!ret)
		*offset = a.offset;
	return ret;
}

int qgpu_bo_unlock(int fd, uint32_t handle)
{
	struct drm_qgpu_gem_unlock a = { .handle = handle };

	return qgpu_ioctl(fd, DRM_IOCTL_QGPU_GEM_UNLOCK, &a);
}

int qgpu_bo_map(int fd, uint32_t handle, uint64_t size, void **ptr)
{
	uint64_t offset;
	void *p;
	int ret;

	ret = qgpu_bo_lock(fd, handle, &offset);
	if (ret)
		return ret;
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 (off_t)offset);
	if (p == MAP_FAILED) {
		ret = -errno;
		qgpu_bo_unlock(fd, handle);
		errno = -ret;
		return ret;
	}
	*ptr = p;
	return 0;
}

int qgpu_bo_unmap(int fd, uint32_t handle, void *ptr, uint64_t size)
{
	int ret = 0;

	if (ptr && munmap(ptr, size))
		ret = -errno;
	if (qgpu_bo_unlock(fd, handle) && !ret)
		ret = -errno;
	return ret;
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
