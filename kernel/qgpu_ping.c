// SPDX-License-Identifier: GPL-2.0
/*
 * qgpu: the PING doorbell (device 1.4, docs/hw-spec.md section 18). The
 * device answers a write of PING at once with PING_ACK and an interrupt,
 * without an engine, a ring or a fence: a caller of DRM_IOCTL_QGPU_PING
 * writes a sequence number and sleeps until the interrupt handler has seen
 * it answered. That round trip (register write, interrupt, handler,
 * wake-up) is the floor of every submit-to-signal round trip, what the
 * submission latency is measured against.
 *
 * PING_ACK holds only the last value written, so writes are made in
 * sequence order under a spinlock and a waiter is done once the answer
 * has reached its number (compared modulo 2^32): one interrupt wakes every
 * caller it answers.
 */
#include <linux/jiffies.h>
#include <linux/wait.h>
#include <drm/drm_drv.h>
#include <drm/drm_managed.h>

#include "qgpu_mmio.h"
#include "qgpu_ping.h"

/* The device answers inside the write; this only bounds a broken one. */
#define QGPU_PING_TIMEOUT_MS	1000

/**
 * struct qgpu_ping - the PING doorbell's state
 * @lock: orders the doorbell writes with @next
 * @next: under @lock: the last sequence number written
 * @acked: the last answer the interrupt handler read (PING_ACK)
 * @dead: the device is gone: waiters return -ENODEV
 * @wq: callers waiting for their answer
 */
struct qgpu_ping {
	spinlock_t lock;	/* doorbell writes in sequence order */
	u32 next;
	u32 acked;
	bool dead;
	wait_queue_head_t wq;
};

int qgpu_ping_init(struct qgpu_device *qdev)
{
	struct qgpu_ping *ping;

	ping = drmm_kzalloc(&qdev->drm, sizeof(*ping), GFP_KERNEL);
	if (!ping)
		return -ENOMEM;
	spin_lock_init(&ping->lock);
	init_waitqueue_head(&ping->wq);
	qdev->ping = ping;
	return 0;
}

/* From the interrupt handler, after INT_PING was acknowledged. */
void qgpu_ping_irq(struct qgpu_device *qdev)
{
	struct qgpu_ping *ping = qdev->ping;

	WRITE_ONCE(ping->acked, qgpu_rd(qdev, QGPU_REG_PING_ACK));
	wake_up_all(&ping->wq);
}

/* Unplug: nobody waits for a device that is gone. */
void qgpu_ping_fini(struct qgpu_device *qdev)
{
	struct qgpu_ping *ping = qdev->ping;

	WRITE_ONCE(ping->dead, true);
	wake_up_all(&ping->wq);
}

static bool qgpu_ping_done(struct qgpu_ping *ping, u32 seq)
{
	return READ_ONCE(ping->dead) || (s32)(READ_ONCE(ping->acked) - seq) >= 0;
}

int qgpu_ping_ioctl(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct qgpu_device *qdev = to_qdev(drm);
	struct qgpu_ping *ping = qdev->ping;
	struct drm_qgpu_ping *args = data;
	long left;
	u32 seq;
	int idx;

	if (QGPU_IOCTL_DBG(qdev, args->flags) ||
	    QGPU_IOCTL_DBG(qdev, args->pad))
		return -EINVAL;
	if (QGPU_IOCTL_DBG(qdev, !(qdev->caps & QGPU_CAP_PING)))
		return -EOPNOTSUPP;
	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;
	spin_lock(&ping->lock);
	seq = ++ping->next;
	qgpu_wr(qdev, QGPU_REG_PING, seq);
	spin_unlock(&ping->lock);
	drm_dev_exit(idx);

	left = wait_event_interruptible_timeout(ping->wq,
						qgpu_ping_done(ping, seq),
						msecs_to_jiffies(QGPU_PING_TIMEOUT_MS));
	if (left < 0)
		return left;
	if (READ_ONCE(ping->dead))
		return -ENODEV;
	if (!left)
		return -ETIMEDOUT;
	args->seqno = seq;
	return 0;
}
