/* SPDX-License-Identifier: MIT */
/* libqgpu internals shared between its source files. */
#ifndef QGPU_PRIV_H
#define QGPU_PRIV_H

#include <errno.h>
#include <xf86drm.h>

#include "libqgpu.h"

/* drmIoctl (restarts on EINTR/EAGAIN) returning 0 or a negative errno */
static inline int qgpu_ioctl(int fd, unsigned long req, void *arg)
{
	return drmIoctl(fd, req, arg) ? -errno : 0;
}

/* negative errno from a libdrm return value (which may be -1 or -errno) */
static inline int qgpu_drm_ret(int ret)
{
	if (ret >= 0)
		return ret;
	if (ret == -1 && errno)
		return -errno;
	errno = -ret;
	return ret;
}

/* Grow *arr (of @elem bytes, capacity *cap) to hold @need elements (util.c) */
int qgpu_grow_array(void **arr, uint32_t *cap, uint32_t need, size_t elem);

/* The submit helpers' common tail (cb.c): syncs, then the ioctl ... */
int qgpu_submit_syncs(int fd, struct drm_qgpu_submit *args,
		      const struct drm_qgpu_sync_entry *in, uint32_t nin,
		      const struct drm_qgpu_sync_entry *out, uint32_t nout,
		      uint32_t *portions);
/* ... and the same with a temporary out-syncobj waited for. */
int qgpu_submit_args_wait(int fd, struct drm_qgpu_submit *args,
			  int64_t timeout_ns, uint32_t *portions);

#endif /* QGPU_PRIV_H */
