// SPDX-License-Identifier: MIT
/*
 * libqgpu: GPU virtual addressing ("GpuMmu Example Scenarios", WDK): the
 * MMU and address-space queries, reserving, mapping and unmapping ranges of
 * the file's address space, MakeResident/Evict and the paging fence,
 * virtual contexts.
 */
#include <stdlib.h>
#include <string.h>

#include "qgpu_priv.h"

int qgpu_query_mmu(int fd, struct drm_qgpu_mmu_info *mmu)
{
	uint32_t size = sizeof(*mmu);

	memset(mmu, 0, sizeof(*mmu));
	return qgpu_query(fd, QGPU_QUERY_MMU, 0, mmu, &size, NULL);
}

int qgpu_query_vm_info(int fd, struct drm_qgpu_vm_info *vm)
{
	uint32_t size = sizeof(*vm);

	memset(vm, 0, sizeof(*vm));
	return qgpu_query(fd, QGPU_QUERY_VM_INFO, 0, vm, &size, NULL);
}

int qgpu_query_vm_layout(int fd, struct drm_qgpu_vm_layout_entry **entries,
			 unsigned int *count)
{
	return qgpu_query_array(fd, QGPU_QUERY_VM_LAYOUT, (void **)entries,
				count);
}

int qgpu_vm_reserve(int fd, uint64_t addr, uint64_t size, uint32_t flags,
		    uint64_t *out_addr)
{
	struct drm_qgpu_vm_reserve a = {
		.addr = addr,
		.size = size,
		.flags = flags,
	};
	int ret = qgpu_ioctl(fd, DRM_IOCTL_QGPU_VM_RESERVE, &a);

	if (!ret && out_addr)
		*out_addr = a.addr;
	return ret;
}

int qgpu_vm_free(int fd, uint64_t addr, uint64_t size)
{
	struct drm_qgpu_vm_range a = { .addr = addr, .size = size };

	return qgpu_ioctl(fd, DRM_IOCTL_QGPU_VM_FREE, &a);
}

int qgpu_vm_map(int fd, uint32_t handle, uint64_t addr, uint64_t offset,
		uint64_t size, uint32_t flags)
{
	struct drm_qgpu_vm_map a = {
		.handle = handle,
		.flags = flags,
		.addr = addr,
		.offset = offset,
		.size = size,
	};

	return qgpu_ioctl(fd, DRM_IOCTL_QGPU_VM_MAP, &a);
}

int qgpu_vm_unmap(int fd, uint64_t addr, uint64_t size)
{
	struct drm_qgpu_vm_range a = { .addr = addr, .size = size };

	return qgpu_ioctl(fd, DRM_IOCTL_QGPU_VM_UNMAP, &a);
}

static int qgpu_residency(int fd, const uint32_t *handles, uint32_t count,
			  uint32_t flags, uint64_t *paging_fence)
{
	struct drm_qgpu_make_resident a = {
		.handles = (uintptr_t)handles,
		.count = count,
		.flags = flags,
	};
	int ret = qgpu_ioctl(fd, DRM_IOCTL_QGPU_MAKE_RESIDENT, &a);

	if (!ret && paging_fence)
		*paging_fence = a.paging_fence;
	return ret;
}

int qgpu_make_resident(int fd, const uint32_t *handles, uint32_t count,
		       uint64_t *paging_fence)
{
	return qgpu_residency(fd, handles, count, 0, paging_fence);
}

int qgpu_evict(int fd, const uint32_t *handles, uint32_t count,
	       uint64_t *paging_fence)
{
	return qgpu_residency(fd, handles, count, QGPU_MAKE_RESIDENT_EVICT,
			      paging_fence);
}

int qgpu_paging_fence_wait(int fd, uint64_t value, int64_t timeout_ns)
{
	struct drm_qgpu_vm_info vm;
	int ret;

	/* 0 is no paging at all: nothing to wait for */
	if (!value)
		return 0;
	ret = qgpu_query_vm_info(fd, &vm);
	if (ret)
		return ret;
	return qgpu_syncobj_wait(fd, vm.paging_fence_syncobj, value,
				 timeout_ns);
}

int qgpu_ctx_create_flags(int fd, uint32_t flags, uint32_t *ctx)
{
	struct drm_qgpu_ctx_create a = { .flags = flags };
	int ret = qgpu_ioctl(fd, DRM_IOCTL_QGPU_CTX_CREATE, &a);

	if (!ret)
		*ctx = a.ctx;
	return ret;
}

int qgpu_ctx_create_virtual(int fd, uint32_t *ctx)
{
	return qgpu_ctx_create_flags(fd, QGPU_CTX_CREATE_VIRTUAL, ctx);
}

const char *qgpu_vm_layout_kind_name(uint32_t kind)
{
	switch (kind) {
	case QGPU_VM_LAYOUT_RESERVED:
		return "reserved";
	case QGPU_VM_LAYOUT_MAPPING:
		return "mapping";
	default:
		return "?";
	}
}
