// SPDX-License-Identifier: MIT
/*
 * libqgpu: the virtual-mode DMA-buffer builder. A virtual context's DMA
 * buffer names GPU virtual addresses of the file's address space directly
 * (the QGPU_DMA_V* commands): no allocation list, no patch-location list,
 * never split ("GpuMmu Example Scenarios"). Lengths come from the one
 * table in qgpu_cmd.h.
 */
#include <stdlib.h>
#include <string.h>

#include "qgpu_priv.h"

int qgpu_vcb_init(struct qgpu_vcb *vcb)
{
	memset(vcb, 0, sizeof(*vcb));
	return 0;
}

void qgpu_vcb_reset(struct qgpu_vcb *vcb)
{
	vcb->ndw = 0;
	vcb->error = 0;
}

void qgpu_vcb_fini(struct qgpu_vcb *vcb)
{
	free(vcb->dw);
	memset(vcb, 0, sizeof(*vcb));
}

static int qgpu_vcb_fail(struct qgpu_vcb *vcb, int err)
{
	if (!vcb->error)
		vcb->error = err;
	errno = -err;
	return err;
}

/* Room for n more dwords; returns a pointer to them or NULL (sticky error). */
static uint32_t *qgpu_vcb_reserve(struct qgpu_vcb *vcb, uint32_t n)
{
	uint32_t *p;
	int ret;

	if (vcb->error)
		return NULL;
	if (vcb->ndw + n < vcb->ndw) {
		qgpu_vcb_fail(vcb, -E2BIG);
		return NULL;
	}
	ret = qgpu_grow_array((void **)&vcb->dw, &vcb->cap_dw, vcb->ndw + n,
			      sizeof(uint32_t));
	if (ret) {
		qgpu_vcb_fail(vcb, ret);
		return NULL;
	}
	p = vcb->dw + vcb->ndw;
	vcb->ndw += n;
	return p;
}

/* A virtual command of the length the one table gives it, header written. */
static uint32_t *qgpu_vcb_cmd(struct qgpu_vcb *vcb, uint32_t op)
{
	uint32_t len = qgpu_dma_cmd_len(op);
	uint32_t *p = qgpu_vcb_reserve(vcb, len);

	if (!p)
		return NULL;
	p[0] = QGPU_CMD_HDR(op, 0, len);
	return p;
}

static void qgpu_vcb_put64(uint32_t *p, uint64_t v)
{
	p[0] = (uint32_t)v;
	p[1] = (uint32_t)(v >> 32);
}

int qgpu_vcb_emit_raw(struct qgpu_vcb *vcb, const uint32_t *dw, uint32_t n)
{
	uint32_t *p = qgpu_vcb_reserve(vcb, n);

	if (!p)
		return vcb->error;
	memcpy(p, dw, (size_t)n * 4);
	return 0;
}

int qgpu_vcb_nop(struct qgpu_vcb *vcb, uint32_t ndw)
{
	uint32_t *p;

	if (!ndw || ndw > 0xffff)
		return qgpu_vcb_fail(vcb, -EINVAL);
	p = qgpu_vcb_reserve(vcb, ndw);
	if (!p)
		return vcb->error;
	p[0] = QGPU_CMD_HDR(QGPU_DMA_NOP, 0, ndw);
	memset(p + 1, 0, (size_t)(ndw - 1) * 4);
	return 0;
}

int qgpu_vcb_copy(struct qgpu_vcb *vcb, uint64_t dst, uint64_t src,
		  uint32_t size)
{
	uint32_t *p = qgpu_vcb_cmd(vcb, QGPU_DMA_VCOPY);

	if (!p)
		return vcb->error;
	qgpu_vcb_put64(p + 1, dst);
	qgpu_vcb_put64(p + 3, src);
	p[5] = size;
	return 0;
}

int qgpu_vcb_fill(struct qgpu_vcb *vcb, uint64_t dst, uint32_t size,
		  uint32_t pattern)
{
	uint32_t *p = qgpu_vcb_cmd(vcb, QGPU_DMA_VFILL);

	if (!p)
		return vcb->error;
	qgpu_vcb_put64(p + 1, dst);
	p[3] = size;
	p[4] = pattern;
	return 0;
}

static int qgpu_vcb_alu(struct qgpu_vcb *vcb, uint32_t op, uint64_t d,
			uint64_t a, uint64_t b, uint32_t n)
{
	uint32_t *p = qgpu_vcb_cmd(vcb, op);

	if (!p)
		return vcb->error;
	qgpu_vcb_put64(p + 1, d);
	qgpu_vcb_put64(p + 3, a);
	qgpu_vcb_put64(p + 5, b);
	p[7] = n;
	return 0;
}

int qgpu_vcb_add(struct qgpu_vcb *vcb, uint64_t d, uint64_t a, uint64_t b,
		 uint32_t n)
{
	return qgpu_vcb_alu(vcb, QGPU_DMA_VADD, d, a, b, n);
}

int qgpu_vcb_xor(struct qgpu_vcb *vcb, uint64_t d, uint64_t a, uint64_t b,
		 uint32_t n)
{
	return qgpu_vcb_alu(vcb, QGPU_DMA_VXOR, d, a, b, n);
}

int qgpu_vcb_checksum(struct qgpu_vcb *vcb, uint64_t src, uint32_t size,
		      uint64_t dst)
{
	uint32_t *p = qgpu_vcb_cmd(vcb, QGPU_DMA_VCHECKSUM);

	if (!p)
		return vcb->error;
	qgpu_vcb_put64(p + 1, src);
	p[3] = size;
	qgpu_vcb_put64(p + 4, dst);
	return 0;
}

static int qgpu_vcb_value(struct qgpu_vcb *vcb, uint32_t op, uint64_t addr,
			  uint64_t value)
{
	uint32_t *p = qgpu_vcb_cmd(vcb, op);

	if (!p)
		return vcb->error;
	qgpu_vcb_put64(p + 1, addr);
	qgpu_vcb_put64(p + 3, value);
	return 0;
}

int qgpu_vcb_fence(struct qgpu_vcb *vcb, uint64_t addr, uint64_t value)
{
	return qgpu_vcb_value(vcb, QGPU_DMA_VFENCE, addr, value);
}

int qgpu_vcb_wait(struct qgpu_vcb *vcb, uint64_t addr, uint64_t value)
{
	return qgpu_vcb_value(vcb, QGPU_DMA_VWAIT, addr, value);
}

int qgpu_vcb_timestamp(struct qgpu_vcb *vcb, uint64_t addr)
{
	uint32_t *p = qgpu_vcb_cmd(vcb, QGPU_DMA_VTIMESTAMP);

	if (!p)
		return vcb->error;
	qgpu_vcb_put64(p + 1, addr);
	return 0;
}

int qgpu_vcb_tile(struct qgpu_vcb *vcb, bool untile, uint64_t dst,
		  uint64_t src, uint32_t width, uint32_t height,
		  uint32_t pitch)
{
	uint32_t *p = qgpu_vcb_cmd(vcb, QGPU_DMA_VTILE);

	if (!p)
		return vcb->error;
	p[0] |= QGPU_CMD_HDR(0, untile ? QGPU_TILE_UNTILE : 0, 0);
	qgpu_vcb_put64(p + 1, dst);
	qgpu_vcb_put64(p + 3, src);
	p[5] = width;
	p[6] = height;
	p[7] = pitch;
	return 0;
}

/* ------------------------------------------------------------------------ */

void qgpu_vcb_to_submit(const struct qgpu_vcb *vcb, uint32_t ctx,
			struct drm_qgpu_submit *args)
{
	memset(args, 0, sizeof(*args));
	args->dma = (uintptr_t)vcb->dw;
	args->dma_size = vcb->ndw * 4;
	args->ctx = ctx;
}

int qgpu_vcb_submit(int fd, uint32_t ctx, const struct qgpu_vcb *vcb,
		    const struct drm_qgpu_sync_entry *in, uint32_t nin,
		    const struct drm_qgpu_sync_entry *out, uint32_t nout)
{
	struct drm_qgpu_submit args;

	if (vcb->error) {
		errno = -vcb->error;
		return vcb->error;
	}
	qgpu_vcb_to_submit(vcb, ctx, &args);
	return qgpu_submit_syncs(fd, &args, in, nin, out, nout, NULL);
}

int qgpu_vcb_submit_wait(int fd, uint32_t ctx, const struct qgpu_vcb *vcb,
			 int64_t timeout_ns)
{
	struct drm_qgpu_submit args;

	if (vcb->error) {
		errno = -vcb->error;
		return vcb->error;
	}
	qgpu_vcb_to_submit(vcb, ctx, &args);
	return qgpu_submit_args_wait(fd, &args, timeout_ns, NULL);
}
