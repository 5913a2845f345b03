// SPDX-License-Identifier: MIT
/*
 * libqgpu: monitored fences ("context monitoring" in "Allocation Usage
 * Tracking", WDK): create, read without a system call through the
 * read-only mapping, wait in the kernel (woken by the device's interrupt),
 * export to a syncobj; contexts with their own monitored fence and
 * submissions that report the value they advance it to.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "qgpu_priv.h"

/* Map the page at @mmap_offset read-only and point @mf at its value. */
static int qgpu_mfence_map(int fd, struct qgpu_mfence *mf, uint32_t handle,
			   uint64_t mmap_offset, uint32_t offset)
{
	long pg = sysconf(_SC_PAGESIZE);
	void *p;

	p = mmap(NULL, pg, PROT_READ, MAP_SHARED, fd, (off_t)mmap_offset);
	if (p == MAP_FAILED)
		return -errno;
	mf->fd = fd;
	mf->handle = handle;
	mf->page = p;
	mf->value = (const volatile uint64_t *)((const char *)p + offset);
	return 0;
}

int qgpu_mfence_create(int fd, uint64_t initial, struct qgpu_mfence *mf)
{
	struct drm_qgpu_mfence_create a = { .initial_value = initial };
	struct drm_qgpu_mfence_destroy d = { 0 };
	int ret;

	memset(mf, 0, sizeof(*mf));
	ret = qgpu_ioctl(fd, DRM_IOCTL_QGPU_MFENCE_CREATE, &a);
	if (ret)
		return ret;
	ret = qgpu_mfence_map(fd, mf, a.handle, a.mmap_offset, a.offset);
	if (ret) {
		d.handle = a.handle;
		qgpu_ioctl(fd, DRM_IOCTL_QGPU_MFENCE_DESTROY, &d);
	}
	return ret;
}

/* Unmap; with @close also close the handle. */
static int qgpu_mfence_release(struct qgpu_mfence *mf, bool close)
{
	struct drm_qgpu_mfence_destroy d = { .handle = mf->handle };
	int ret = 0;

	if (mf->page)
		munmap(mf->page, sysconf(_SC_PAGESIZE));
	if (close && mf->handle)
		ret = qgpu_ioctl(mf->fd, DRM_IOCTL_QGPU_MFENCE_DESTROY, &d);
	memset(mf, 0, sizeof(*mf));
	return ret;
}

int qgpu_mfence_destroy(struct qgpu_mfence *mf)
{
	return qgpu_mfence_release(mf, true);
}

int qgpu_mfence_wait_many(int fd, const uint32_t *handles,
			  const uint64_t *values, uint32_t count,
			  uint32_t flags, int64_t abs_timeout_ns,
			  uint32_t *first)
{
	struct drm_qgpu_mfence_wait a = {
		.handles = (uintptr_t)handles,
		.values = (uintptr_t)values,
		.count = count,
		.flags = flags,
		.timeout_ns = abs_timeout_ns,
	};
	int ret = qgpu_ioctl(fd, DRM_IOCTL_QGPU_MFENCE_WAIT, &a);

	if (!ret && first)
		*first = a.first;
	return ret;
}

int qgpu_mfence_wait(const struct qgpu_mfence *mf, uint64_t value,
		     int64_t timeout_ns)
{
	int64_t deadline;

	/* the point of a monitored fence: no system call when it is there */
	if (qgpu_mfence_read(mf) >= value)
		return 0;
	deadline = timeout_ns > 0 ? qgpu_now_ns() + timeout_ns : 0;
	return qgpu_mfence_wait_many(mf->fd, &mf->handle, &value, 1, 0,
				     deadline, NULL);
}

int qgpu_mfence_export(int fd, uint32_t handle, uint64_t value,
		       uint32_t syncobj, uint64_t point)
{
	struct drm_qgpu_mfence_export a = {
		.handle = handle, .syncobj = syncobj, .value = value,
		.point = point,
	};

	return qgpu_ioctl(fd, DRM_IOCTL_QGPU_MFENCE_EXPORT, &a);
}

int qgpu_context_create(int fd, uint32_t flags, struct qgpu_context *c)
{
	struct drm_qgpu_ctx_create a = { .flags = flags };
	struct drm_qgpu_ctx_destroy d = { 0 };
	int ret;

	memset(c, 0, sizeof(*c));
	ret = qgpu_ioctl(fd, DRM_IOCTL_QGPU_CTX_CREATE, &a);
	if (ret)
		return ret;
	c->fd = fd;
	c->id = a.ctx;
	c->flags = flags;
	ret = qgpu_mfence_map(fd, &c->fence, a.mfence, a.mfence_mmap_offset,
			      a.mfence_offset);
	if (ret) {
		d.ctx = a.ctx;
		qgpu_ioctl(fd, DRM_IOCTL_QGPU_CTX_DESTROY, &d);
	}
	return ret;
}

int qgpu_context_destroy(struct qgpu_context *c)
{
	struct drm_qgpu_ctx_destroy d = { .ctx = c->id };
	int ret;

	/* the context's fence handle goes with the context */
	qgpu_mfence_release(&c->fence, false);
	ret = qgpu_ioctl(c->fd, DRM_IOCTL_QGPU_CTX_DESTROY, &d);
	memset(c, 0, sizeof(*c));
	return ret;
}

int qgpu_context_submit(struct qgpu_context *c, struct drm_qgpu_submit *args,
			const struct drm_qgpu_sync_entry *in, uint32_t nin,
			const struct drm_qgpu_sync_entry *out, uint32_t nout)
{
	int ret;

	args->ctx = c->id;
	ret = qgpu_submit_syncs(c->fd, args, in, nin, out, nout, NULL);
	if (!ret)
		c->last = args->fence_value;
	return ret;
}
