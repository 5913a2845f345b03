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

#endif /* QGPU_PRIV_H */
