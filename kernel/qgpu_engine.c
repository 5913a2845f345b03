// SPDX-License-Identifier: GPL-2.0
/*
 * qgpu: engines (rings in system memory, doorbells) and the interrupt
 * handler.
 */
#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/interrupt.h>
#include <linux/list.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/xarray.h>
#include <drm/drm_managed.h>

#include "qgpu_device.h"
#include "qgpu_mmio.h"
#include "qgpu_ring_cmd.h"
#include "qgpu_ctx.h"
#include "qgpu_ping.h"
#include "qgpu_trace.h"

static const u32 qgpu_ring_sizes[QGPU_NUM_ENGINES] = {
	[QGPU_ENGINE_PAGING] = 256 * 1024,
	[QGPU_ENGINE_RENDER] = 64 * 1024,
};

static const char * const qgpu_engine_names[QGPU_NUM_ENGINES] = {
	[QGPU_ENGINE_PAGING] = "paging",
	[QGPU_ENGINE_RENDER] = "render",
};

static void qgpu_eng_wr(struct qgpu_engine *eng, u32 reg, u32 val)
{
	qgpu_wr(eng->qdev, QGPU_ENGINE_BASE(eng->id) + reg, val);
}

static u32 qgpu_eng_rd(struct qgpu_engine *eng, u32 reg)
{
	return qgpu_rd(eng->qdev, QGPU_ENGINE_BASE(eng->id) + reg);
}

static void qgpu_engine_program(struct qgpu_engine *eng)
{
	qgpu_eng_wr(eng, QGPU_ENG_CTRL, 0);
	qgpu_eng_wr(eng, QGPU_ENG_RING_BASE_LO, lower_32_bits(eng->ring_dma));
	qgpu_eng_wr(eng, QGPU_ENG_RING_BASE_HI, upper_32_bits(eng->ring_dma));
	qgpu_eng_wr(eng, QGPU_ENG_RING_SIZE, eng->ring_size);
	qgpu_eng_wr(eng, QGPU_ENG_CTRL, QGPU_ENG_CTRL_RESET);
	qgpu_eng_wr(eng, QGPU_ENG_CTRL, QGPU_ENG_CTRL_ENABLE);
	eng->tail = 0;
}

/*
 * The engines outlive their device. A job's scheduler fences name their
 * timeline through their scheduler (drm_sched_fence_get_timeline_name()
 * reads fence->sched->name in 6.12), and a fence may outlive the device
 * in a sync file or in another driver's reservation object; the schedulers
 * are the engines'. So a device's engines are allocated apart from it, and
 * when the device is freed they are retired, not freed: the module's exit
 * frees them.
 */
struct qgpu_engines {
	struct list_head retired;
	struct qgpu_engine e[QGPU_NUM_ENGINES];
};

static LIST_HEAD(qgpu_retired_engines);
static DEFINE_SPINLOCK(qgpu_retired_lock);

static void qgpu_engines_retire(struct drm_device *drm, void *data)
{
	struct qgpu_engines *e = data;

	spin_lock(&qgpu_retired_lock);
	list_add_tail(&e->retired, &qgpu_retired_engines);
	spin_unlock(&qgpu_retired_lock);
}

/**
 * qgpu_engines_alloc - the device's engines, kept after it is freed
 * @qdev: a device just allocated
 *
 * Return: 0 or -ENOMEM.
 */
int qgpu_engines_alloc(struct qgpu_device *qdev)
{
	struct qgpu_engines *e = kzalloc(sizeof(*e), GFP_KERNEL);

	if (!e)
		return -ENOMEM;
	qdev->engine = e->e;
	return drmm_add_action_or_reset(&qdev->drm, qgpu_engines_retire, e);
}

/**
 * qgpu_engines_free_retired - free the engines of every freed device
 *
 * From the module's exit, after every device is gone and every qgpu fence
 * with it (qgpu_fences_wait_all()). A job's finished fence holds its
 * hardware fence, so the exit waits for it too; only the fences of a job
 * that never reached the device, kept across the unload, are not waited
 * for.
 */
void qgpu_engines_free_retired(void)
{
	struct qgpu_engines *e, *next;

	list_for_each_entry_safe(e, next, &qgpu_retired_engines, retired)
		kfree(e);
}

int qgpu_engine_init(struct qgpu_device *qdev)
{
	struct device *dev = &qdev->pdev->dev;
	u64 *fence_page;
	dma_addr_t fence_dma;
	unsigned int i;

	fence_page = dmam_alloc_coherent(dev, PAGE_SIZE, &fence_dma,
					 GFP_KERNEL | __GFP_ZERO);
	if (!fence_page)
		return -ENOMEM;

	for (i = 0; i < QGPU_NUM_ENGINES; i++) {
		struct qgpu_engine *eng = &qdev->engine[i];

		eng->qdev = qdev;
		eng->id = i;
		eng->name = qgpu_engine_names[i];
		eng->ring_size = qgpu_ring_sizes[i];
		eng->ring = dmam_alloc_coherent(dev, eng->ring_size,
						&eng->ring_dma,
						GFP_KERNEL | __GFP_ZERO);
		if (!eng->ring)
			return -ENOMEM;
		mutex_init(&eng->ring_lock);
		spin_lock_init(&eng->fence_lock);
		INIT_LIST_HEAD(&eng->pending);
		eng->fence_context = dma_fence_context_alloc(1);
		eng->fence_val = &fence_page[i];
		eng->fence_dma = fence_dma + i * sizeof(u64);
		eng->next_seqno = 1;
		qgpu_engine_program(eng);
	}
	return 0;
}

/**
 * qgpu_engine_stop - disable @eng, then fail what it held with -ENODEV
 * @eng: the engine (the device is going away)
 *
 * Disabling waits for a piece of work in flight (docs/hw-spec.md), so no
 * fence says the work is done while the engine may still write.
 */
void qgpu_engine_stop(struct qgpu_engine *eng)
{
	qgpu_eng_wr(eng, QGPU_ENG_CTRL, 0);
	qgpu_fence_process(eng, -ENODEV);
}

void qgpu_engine_fini(struct qgpu_device *qdev)
{
	unsigned int i;

	for (i = 0; i < QGPU_NUM_ENGINES; i++) {
		struct qgpu_engine *eng = &qdev->engine[i];

		if (eng->qdev)
			qgpu_engine_stop(eng);
	}
}

/**
 * qgpu_engine_progress - a mark that changes whenever @eng does work
 * @eng: the engine
 *
 * The engine's CMDS and BYTES counters combined (docs/hw-spec.md section
 * 4.3): two reads that differ mean the engine completed a command or moved
 * a byte in between (the job timeout's test for a hang, qgpu_job.c).
 */
u64 qgpu_engine_progress(struct qgpu_engine *eng)
{
	u32 base = QGPU_ENGINE_BASE(eng->id);

	return qgpu_rd64(eng->qdev, base + QGPU_ENG_CMDS_LO) ^
	       qgpu_rd64(eng->qdev, base + QGPU_ENG_BYTES_LO);
}

/**
 * qgpu_engine_reset - reset a hung or halted engine
 * @eng: the engine; its scheduler must be stopped
 *
 * Everything on the ring is dropped; fences not yet completed are
 * signalled with -ECANCELED.
 */
void qgpu_engine_reset(struct qgpu_engine *eng)
{
	mutex_lock(&eng->ring_lock);
	qgpu_engine_program(eng);
	qgpu_fence_process(eng, -ECANCELED);
	mutex_unlock(&eng->ring_lock);
}

/**
 * qgpu_engine_stall - make an engine stop answering, or answer again
 * @eng: the engine, enabled
 * @stall: stall it (CTRL.STALL, docs/hw-spec.md section 4.3) or resume it
 *
 * A hang on demand, for tests of the job timeout and of what follows it
 * (debugfs qgpu_stall). An engine reset also ends a stall.
 */
void qgpu_engine_stall(struct qgpu_engine *eng, bool stall)
{
	mutex_lock(&eng->ring_lock);
	qgpu_eng_wr(eng, QGPU_ENG_CTRL, QGPU_ENG_CTRL_ENABLE |
		    (stall ? QGPU_ENG_CTRL_STALL : 0));
	mutex_unlock(&eng->ring_lock);
}

/* Whether @eng is stalled (qgpu_engine_stall()) */
bool qgpu_engine_stalled(struct qgpu_engine *eng)
{
	return qgpu_eng_rd(eng, QGPU_ENG_CTRL) & QGPU_ENG_CTRL_STALL;
}

static u32 qgpu_ring_space(struct qgpu_engine *eng)
{
	u32 head = qgpu_eng_rd(eng, QGPU_ENG_RING_HEAD) & (eng->ring_size - 1);

	return (head - eng->tail - 4) & (eng->ring_size - 1);
}

static void qgpu_ring_put(struct qgpu_engine *eng, u32 dw)
{
	u32 *ring = eng->ring;

	ring[eng->tail / 4] = dw;
	eng->tail = (eng->tail + 4) & (eng->ring_size - 1);
}

/**
 * qgpu_engine_emit - write commands plus a fence to an engine's ring
 * @eng: the engine
 * @cmds: command dwords (already validated)
 * @ndw: number of dwords
 * @fence_mem: the fence's memory (qgpu_fence_prealloc(); taken), or
 *	pointing at NULL to allocate it here
 * @fence_out: returns the hardware fence signalled after the commands
 *
 * Return: 0, -EINVAL when the commands can never fit, -ETIMEDOUT when the
 * ring does not drain, -ENOMEM, -ENODEV when the device is gone.
 */
int qgpu_engine_emit(struct qgpu_engine *eng, const u32 *cmds, u32 ndw,
		     void **fence_mem, struct dma_fence **fence_out)
{
	u32 need = (ndw + qgpu_enc_fence(NULL, 0, 0)) * 4;
	u64 fence_addr = QGPU_SYS_BIT | eng->fence_dma;
	u32 fence_cmd[QGPU_CMD_MAX_FIXED_LEN];
	struct dma_fence *fence;
	unsigned int tries = 0;
	u64 seqno;
	u32 i, n;

	if (need >= eng->ring_size)
		return -EINVAL;

	mutex_lock(&eng->ring_lock);
	while (qgpu_ring_space(eng) < need) {
		if (qgpu_eng_rd(eng, QGPU_ENG_STATUS) & QGPU_ENG_STATUS_HALTED ||
		    ++tries > 2000) {
			mutex_unlock(&eng->ring_lock);
			return -ETIMEDOUT;
		}
		usleep_range(500, 1000);
	}
	seqno = eng->next_seqno++;
	fence = qgpu_fence_create(eng, seqno, fence_mem);
	if (!fence) {
		mutex_unlock(&eng->ring_lock);
		return -ENOMEM;
	}
	for (i = 0; i < ndw; i++)
		qgpu_ring_put(eng, cmds[i]);
	n = qgpu_enc_fence(fence_cmd, fence_addr, seqno);
	for (i = 0; i < n; i++)
		qgpu_ring_put(eng, fence_cmd[i]);
	/* Commands must be visible in memory before the doorbell. */
	wmb();
	qgpu_eng_wr(eng, QGPU_ENG_RING_TAIL, eng->tail);
	mutex_unlock(&eng->ring_lock);
	*fence_out = fence;
	return 0;
}

/* At most this many fault records are handled per interrupt. */
#define QGPU_FAULTQ_DRAIN_MAX	(4 * QGPU_FAULTQ_DEPTH)

/* Handle and remove the oldest record of the device's fault queue. */
static void qgpu_fault_pop(struct qgpu_device *qdev)
{
	u32 reason = qgpu_rd(qdev, QGPU_REG_FAULT_REASON);
	u32 engine = qgpu_rd(qdev, QGPU_REG_FAULT_ENGINE);
	u32 ctx = qgpu_rd(qdev, QGPU_REG_FAULT_CONTEXT);
	u32 offset = qgpu_rd(qdev, QGPU_REG_FAULT_OFFSET);
	u64 addr = qgpu_rd64(qdev, QGPU_REG_FAULT_ADDR_LO);

	qgpu_wr(qdev, QGPU_REG_FAULTQ_POP, 1);
	atomic64_inc(&qdev->stats.c[QGPU_STAT(faults)]);
	trace_qgpu_fault(reason, engine, ctx, addr, offset);
	dev_info_ratelimited(qdev->drm.dev,
			     "device fault: reason %u engine %u ctx %u offset %#x addr %#llx\n",
			     reason, engine, ctx, offset, addr);
	if (engine == QGPU_ENGINE_RENDER)
		qgpu_ctx_hw_fault(qdev, ctx, reason, offset, addr);
}

/*
 * @lost faults found the queue full and have no record. The device still
 * marked every context they hit as faulted: find those among the live
 * contexts. The contexts are only looked up by id, under RCU (see
 * qgpu_ctx_hw_fault()).
 */
static void qgpu_fault_lost(struct qgpu_device *qdev, u32 lost)
{
	struct qgpu_ctx *ctx;
	unsigned long id;

	atomic64_add(lost, &qdev->stats.c[QGPU_STAT(faults)]);
	dev_info_ratelimited(qdev->drm.dev,
			     "device fault queue full: %u faults without a record\n",
			     lost);
	rcu_read_lock();
	xa_for_each(&qdev->contexts, id, ctx) {
		qgpu_wr(qdev, QGPU_REG_CTX_SEL, id);
		if (qgpu_rd(qdev, QGPU_REG_CTX_STATUS) & QGPU_CTX_STATUS_FAULTED)
			qgpu_ctx_hw_fault(qdev, id, QGPU_FAULT_NONE, 0, 0);
	}
	rcu_read_unlock();
}

/*
 * Called from the interrupt handler after INT_FAULT was acknowledged, so a
 * fault recorded from now on raises the interrupt again. Drains the fault
 * queue, then accounts for faults the device could not queue;
 * qdev->faults_seen is the FAULTQ_LOST value seen last time.
 */
static void qgpu_handle_fault(struct qgpu_device *qdev)
{
	unsigned int i;
	u32 n, lost;

	for (i = 0; i < QGPU_FAULTQ_DRAIN_MAX; i++) {
		n = qgpu_rd(qdev, QGPU_REG_FAULTQ_COUNT);
		if (n == ~0u)
			return;		/* the device is gone */
		if (!n || n > QGPU_FAULTQ_DEPTH)
			break;
		qgpu_fault_pop(qdev);
	}
	lost = qgpu_rd(qdev, QGPU_REG_FAULTQ_LOST);
	if (lost != qdev->faults_seen && lost != ~0u) {
		qgpu_fault_lost(qdev, lost - qdev->faults_seen);
		qdev->faults_seen = lost;
	}
}

irqreturn_t qgpu_irq_handler(int irq, void *arg)
{
	struct qgpu_device *qdev = arg;
	u32 status = qgpu_rd(qdev, QGPU_REG_INT_STATUS) &
		     qgpu_rd(qdev, QGPU_REG_INT_MASK);
	unsigned int i;

	if (!status || status == ~0u)
		return IRQ_NONE;
	qgpu_wr(qdev, QGPU_REG_INT_ACK, status);
	if (status & QGPU_INT_PING)
		qgpu_ping_irq(qdev);
	if (status & QGPU_INT_FAULT)
		qgpu_handle_fault(qdev);
	for (i = 0; i < QGPU_NUM_ENGINES; i++)
		if (status & QGPU_INT_ENGINE(i))
			qgpu_fence_process(&qdev->engine[i], 0);
	if (status & QGPU_INT_ENGINE(QGPU_ENGINE_RENDER))
		qgpu_mfence_irq(qdev);
	return IRQ_HANDLED;
}
