// SPDX-License-Identifier: MIT
/*
 * libqgpu: the user-mode driver's side of "Allocation Usage Tracking"
 * (WDK). The kernel does not need an allocation list to know what the GPU
 * still uses: for every allocation behind a resource, libqgpu records the
 * monitored fence value of the last submission that read it and of the
 * last one that wrote it, per context, and Lock2 decides from those:
 *
 *  - NO_OVERWRITE maps at once (the caller promises not to touch data in
 *    use);
 *  - DISCARD renames: when the current allocation is busy, the resource
 *    switches to a free allocation of its small ring (created on demand up
 *    to its maximum) and maps that; retired allocations are reused once
 *    their fences have passed;
 *  - otherwise the lock synchronises: with DO_NOT_WAIT it answers
 *    WasStillDrawing (-EAGAIN) at once while the GPU uses the allocation,
 *    else it sleeps in the kernel on the monitored fences until the GPU is
 *    done (no polling), then maps.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "qgpu_priv.h"

/* The value @access must wait for in use record @u (0: none). */
static uint64_t qgpu_use_need(const struct qgpu_use *u, bool write)
{
	if (write)
		return u->read > u->write ? u->read : u->write;
	return u->write;
}

static bool qgpu_use_pending(const struct qgpu_use *u, bool write)
{
	uint64_t need = qgpu_use_need(u, write);

	return need && qgpu_mfence_read(&u->ctx->fence) < need;
}

static bool qgpu_backing_busy(const struct qgpu_backing *b, bool write)
{
	uint32_t i;

	for (i = 0; i < b->nuse; i++)
		if (qgpu_use_pending(&b->use[i], write))
			return true;
	return false;
}

/* Sleep (in the kernel) until nothing @write cares about is pending. */
static int qgpu_backing_wait(int fd, const struct qgpu_backing *b,
			     bool write)
{
	uint32_t handles[QGPU_RES_MAX_CTX], n = 0, i;
	uint64_t values[QGPU_RES_MAX_CTX];
	int ret;

	for (i = 0; i < b->nuse; i++) {
		if (!qgpu_use_pending(&b->use[i], write))
			continue;
		handles[n] = b->use[i].ctx->fence.handle;
		values[n++] = qgpu_use_need(&b->use[i], write);
	}
	if (!n)
		return 0;
	do {
		ret = qgpu_mfence_wait_many(fd, handles, values, n, 0,
					    INT64_MAX, NULL);
	} while (ret == -EINTR);
	return ret;
}

static int qgpu_backing_new(struct qgpu_resource *r, struct qgpu_backing *b)
{
	memset(b, 0, sizeof(*b));
	return qgpu_bo_create(r->fd, r->size, r->segment_mask, r->flags,
			      r->preferred, &b->handle);
}

int qgpu_resource_create(int fd, uint64_t size, uint32_t segment_mask,
			 uint32_t flags, uint32_t preferred,
			 uint32_t max_backings, struct qgpu_resource *r)
{
	memset(r, 0, sizeof(*r));
	if (!max_backings || max_backings > QGPU_RES_MAX_BACKINGS)
		return -EINVAL;
	r->fd = fd;
	r->size = size;
	r->segment_mask = segment_mask;
	r->flags = flags | QGPU_GEM_CPU_ACCESS;
	r->preferred = preferred;
	r->max_backings = max_backings;
	r->nbackings = 1;
	return qgpu_backing_new(r, &r->b[0]);
}

void qgpu_resource_destroy(struct qgpu_resource *r)
{
	uint32_t i;

	if (r->map)
		qgpu_resource_unlock(r);
	/* the kernel defers the destruction behind the work queued so far */
	for (i = 0; i < r->nbackings; i++)
		qgpu_bo_destroy(r->fd, r->b[i].handle);
	memset(r, 0, sizeof(*r));
}

uint32_t qgpu_resource_handle(const struct qgpu_resource *r)
{
	return r->b[r->cur].handle;
}

int qgpu_resource_used(struct qgpu_resource *r, const struct qgpu_context *c,
		       bool write)
{
	struct qgpu_backing *b = &r->b[r->cur];
	struct qgpu_use *u = NULL;
	uint32_t i;

	for (i = 0; i < b->nuse && !u; i++)
		if (b->use[i].ctx == c)
			u = &b->use[i];
	if (!u) {
		if (b->nuse == QGPU_RES_MAX_CTX)
			return -ENOSPC;
		u = &b->use[b->nuse++];
		memset(u, 0, sizeof(*u));
		u->ctx = c;
	}
	if (write)
		u->write = c->last;
	else
		u->read = c->last;
	return 0;
}

bool qgpu_resource_busy(const struct qgpu_resource *r, bool write)
{
	return qgpu_backing_busy(&r->b[r->cur], write);
}

/*
 * DISCARD: the first allocation of the ring after the current one that
 * the GPU is done with; a new one while the ring may grow; else wait for
 * the oldest (the next in ring order).
 */
static int qgpu_resource_rename(struct qgpu_resource *r)
{
	uint32_t i, j;
	int ret;

	for (i = 1; i < r->nbackings; i++) {
		j = (r->cur + i) % r->nbackings;
		if (!qgpu_backing_busy(&r->b[j], true))
			goto found;
	}
	if (r->nbackings < r->max_backings) {
		j = r->nbackings;
		ret = qgpu_backing_new(r, &r->b[j]);
		if (ret)
			return ret;
		r->nbackings++;
		goto found;
	}
	j = (r->cur + 1) % r->nbackings;
	ret = qgpu_backing_wait(r->fd, &r->b[j], true);
	if (ret)
		return ret;
	r->waits++;
found:
	r->b[j].nuse = 0;	/* all of its uses are over */
	r->cur = j;
	r->renames++;
	return 0;
}

int qgpu_resource_lock(struct qgpu_resource *r, uint32_t flags, void **ptr)
{
	bool write = !(flags & QGPU_LOCK_READ_ONLY);
	int ret = 0;

	if (flags & ~QGPU_LOCK_FLAGS || r->map ||
	    (flags & QGPU_LOCK_DISCARD && flags & QGPU_LOCK_NO_OVERWRITE) ||
	    (flags & QGPU_LOCK_READ_ONLY &&
	     flags & (QGPU_LOCK_DISCARD | QGPU_LOCK_NO_OVERWRITE)))
		return -EINVAL;
	if (flags & QGPU_LOCK_NO_OVERWRITE) {
		/* the caller's promise: no wait */
	} else if (flags & QGPU_LOCK_DISCARD) {
		if (qgpu_resource_busy(r, true))
			ret = qgpu_resource_rename(r);
	} else if (qgpu_resource_busy(r, write)) {
		if (flags & QGPU_LOCK_DO_NOT_WAIT) {
			r->still_drawing++;
			return QGPU_WAS_STILL_DRAWING;
		}
		ret = qgpu_backing_wait(r->fd, &r->b[r->cur], write);
		r->waits++;
	}
	if (ret)
		return ret;
	ret = qgpu_bo_map(r->fd, qgpu_resource_handle(r), r->size, &r->map);
	if (ret) {
		r->map = NULL;
		return ret;
	}
	*ptr = r->map;
	return 0;
}

int qgpu_resource_unlock(struct qgpu_resource *r)
{
	int ret;

	if (!r->map)
		return -EINVAL;
	ret = qgpu_bo_unmap(r->fd, qgpu_resource_handle(r), r->map, r->size);
	r->map = NULL;
	return ret;
}
