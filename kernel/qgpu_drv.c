// SPDX-License-Identifier: GPL-2.0
/*
 * qgpu: PCI probe/remove and the DRM driver.
 */
#include <linux/dma-resv.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/workqueue.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_ioctl.h>
#include <drm/drm_managed.h>
#include <drm/drm_print.h>

#include <qgpu/qgpu_regs.h>	/* PCI identity and BARs */

#include "qgpu_device.h"
#include "qgpu_hw.h"
#include "qgpu_ctx.h"
#include "qgpu_gem.h"
#include "qgpu_mm.h"
#include "qgpu_query.h"
#include "qgpu_submit.h"
#include "qgpu_debugfs.h"
#include "qgpu_vm.h"
#include "qgpu_mfence.h"
#include "qgpu_ping.h"

static int qgpu_open(struct drm_device *drm, struct drm_file *file)
{
	struct qgpu_file *qf;

	qf = kzalloc(sizeof(*qf), GFP_KERNEL);
	if (!qf)
		return -ENOMEM;
	qf->usage = kzalloc(sizeof(*qf->usage), GFP_KERNEL);
	if (!qf->usage) {
		kfree(qf);
		return -ENOMEM;
	}
	kref_init(&qf->usage->ref);
	init_waitqueue_head(&qf->usage->dma_wq);
	qf->qdev = to_qdev(drm);
	mutex_init(&qf->vm_lock);
	xa_init_flags(&qf->contexts, XA_FLAGS_ALLOC1);
	xa_init(&qf->locks);
	qgpu_mfence_file_init(&qf->mfences);
	qf->vidmem = qgpu_vidmem_new();
	if (!qf->vidmem) {
		qgpu_usage_put(qf->usage);
		kfree(qf);
		return -ENOMEM;
	}
	file->driver_priv = qf;
	return 0;
}

static void qgpu_postclose(struct drm_device *drm, struct drm_file *file)
{
	struct qgpu_file *qf = file->driver_priv;

	qgpu_ctx_file_fini(qf);
	qgpu_vm_file_fini(qf);
	qgpu_mfence_file_fini(&qf->mfences);
	xa_destroy(&qf->contexts);
	/* every handle went before; the Lock2s they held end here */
	qgpu_gem_file_locks_fini(qf);
	qgpu_usage_put(qf->usage);
	qgpu_vidmem_put(qf->vidmem);
	kfree(qf);
}

#define QGPU_IOCTL(name, fn) \
	DRM_IOCTL_DEF_DRV(QGPU_##name, fn, DRM_AUTH | DRM_RENDER_ALLOW)

static const struct drm_ioctl_desc qgpu_ioctls[] = {
	QGPU_IOCTL(QUERY, qgpu_query_ioctl),
	QGPU_IOCTL(GEM_CREATE, qgpu_gem_create_ioctl),
	QGPU_IOCTL(GEM_LOCK, qgpu_gem_lock_ioctl),
	QGPU_IOCTL(GEM_UNLOCK, qgpu_gem_unlock_ioctl),
	QGPU_IOCTL(GEM_RESIDE, qgpu_gem_reside_ioctl),
	QGPU_IOCTL(GEM_INFO, qgpu_gem_info_ioctl),
	QGPU_IOCTL(SUBMIT, qgpu_submit_ioctl),
	QGPU_IOCTL(CTX_CREATE, qgpu_ctx_create_ioctl),
	QGPU_IOCTL(CTX_DESTROY, qgpu_ctx_destroy_ioctl),
	QGPU_IOCTL(VM_RESERVE, qgpu_vm_reserve_ioctl),
	QGPU_IOCTL(VM_FREE, qgpu_vm_free_ioctl),
	QGPU_IOCTL(VM_MAP, qgpu_vm_map_ioctl),
	QGPU_IOCTL(VM_UNMAP, qgpu_vm_unmap_ioctl),
	QGPU_IOCTL(MAKE_RESIDENT, qgpu_make_resident_ioctl),
	QGPU_IOCTL(INVALIDATE_CACHE, qgpu_invalidate_cache_ioctl),
	QGPU_IOCTL(MFENCE_CREATE, qgpu_mfence_create_ioctl),
	QGPU_IOCTL(MFENCE_DESTROY, qgpu_mfence_destroy_ioctl),
	QGPU_IOCTL(MFENCE_WAIT, qgpu_mfence_wait_ioctl),
	QGPU_IOCTL(MFENCE_EXPORT, qgpu_mfence_export_ioctl),
	QGPU_IOCTL(GEM_DESTROY, qgpu_gem_destroy_ioctl),
	QGPU_IOCTL(GEM_SET_PRIORITY, qgpu_gem_set_priority_ioctl),
	QGPU_IOCTL(GEM_OFFER, qgpu_gem_offer_ioctl),
	QGPU_IOCTL(GEM_RECLAIM, qgpu_gem_reclaim_ioctl),
	QGPU_IOCTL(PING, qgpu_ping_ioctl),
};

/* drm-total-memory, drm-resident-memory... in /proc/PID/fdinfo/FD */
/* fdinfo memory regions: where an allocation is now */
static const char *const qgpu_regions[] = { "system", "vram", "gart" };

static unsigned int qgpu_region(u32 seg)
{
	return seg == QGPU_SEG_APERTURE ? 2 : seg == QGPU_SEG_SYSTEM ? 0 : 1;
}

/*
 * DRM fdinfo (Documentation/gpu/drm-usage-stats.rst): DRM's own lines
 * (drm-driver, drm-client-id, drm-*-memory over all of the file's
 * allocations), the same per region (system memory, VRAM, the GART
 * aperture), and the render engine's busy time for the file's DMA
 * buffers. Called under no lock of ours: racy reads of where an
 * allocation is are fine.
 */
static void qgpu_show_fdinfo(struct drm_printer *p, struct drm_file *file)
{
	struct qgpu_file *qf = file->driver_priv;
	struct drm_memory_stats st[ARRAY_SIZE(qgpu_regions)] = {};
	struct drm_gem_object *obj;
	unsigned int r;
	int id;

	drm_show_memory_stats(p, file);
	spin_lock(&file->table_lock);
	idr_for_each_entry(&file->object_idr, obj, id) {
		u32 seg = READ_ONCE(to_qbo(obj)->seg);

		r = qgpu_region(seg);
		if (drm_gem_object_is_shared_for_memory_stats(obj))
			st[r].shared += obj->size;
		else
			st[r].private += obj->size;
		if (seg != QGPU_SEG_SYSTEM)
			st[r].resident += obj->size;
		if (!dma_resv_test_signaled(obj->resv, DMA_RESV_USAGE_BOOKKEEP))
			st[r].active += obj->size;
	}
	spin_unlock(&file->table_lock);
	for (r = 0; r < ARRAY_SIZE(qgpu_regions); r++)
		drm_print_memory_stats(p, &st[r], DRM_GEM_OBJECT_RESIDENT,
				       qgpu_regions[r]);
	drm_printf(p, "drm-engine-render:\t%llu ns\n",
		   (u64)atomic64_read(&qf->usage->busy_ns));
}

/* DEFINE_DRM_GEM_FOPS() plus fdinfo */
/*
 * GEM objects live at the DRM core's fake offsets; below them, a file's
 * monitored fence pages (qgpu_mfence_mmap()).
 */
static int qgpu_mmap(struct file *filp, struct vm_area_struct *vma)
{
	if (vma->vm_pgoff >= DRM_FILE_PAGE_OFFSET_START)
		return drm_gem_mmap(filp, vma);
	return qgpu_mfence_mmap(filp->private_data, vma);
}

/*
 * DRM core refuses an ioctl once the device is unplugged, but one that
 * passed that check goes on while qgpu_remove() tears the schedulers and
 * the memory manager down: it would queue paging on a scheduler already
 * freed, or give a context an entity on it. qgpu's own ioctls therefore run
 * inside drm_dev_enter(), and drm_dev_unplug() waits for those under way.
 * Not MFENCE_WAIT, which sleeps until the removal wakes it (after the
 * unplug) and touches no device state, nor PING, which enters only around
 * its doorbell for the same reason.
 */
static bool qgpu_ioctl_needs_device(unsigned int cmd)
{
	unsigned int nr = DRM_IOCTL_NR(cmd);

	return nr >= DRM_COMMAND_BASE && nr < DRM_COMMAND_END &&
	       nr != DRM_COMMAND_BASE + DRM_QGPU_MFENCE_WAIT &&
	       nr != DRM_COMMAND_BASE + DRM_QGPU_PING;
}

static long qgpu_ioctl_entered(struct file *filp, unsigned int cmd,
			       unsigned long arg,
			       long (*ioctl)(struct file *filp,
					     unsigned int cmd,
					     unsigned long arg))
{
	struct drm_file *file = filp->private_data;
	long ret;
	int idx;

	if (!qgpu_ioctl_needs_device(cmd))
		return ioctl(filp, cmd, arg);
	if (!drm_dev_enter(file->minor->dev, &idx))
		return -ENODEV;
	ret = ioctl(filp, cmd, arg);
	drm_dev_exit(idx);
	return ret;
}

static long qgpu_ioctl(struct file *filp, unsigned int cmd, unsigned long arg)
{
	return qgpu_ioctl_entered(filp, cmd, arg, drm_ioctl);
}

#ifdef CONFIG_COMPAT
static long qgpu_compat_ioctl(struct file *filp, unsigned int cmd,
			      unsigned long arg)
{
	return qgpu_ioctl_entered(filp, cmd, arg, drm_compat_ioctl);
}
#else
#define qgpu_compat_ioctl NULL
#endif

static const struct file_operations qgpu_fops = {
	.owner = THIS_MODULE,
	.open = drm_open,
	.release = drm_release,
	.unlocked_ioctl = qgpu_ioctl,
	.compat_ioctl = qgpu_compat_ioctl,
	.poll = drm_poll,
	.read = drm_read,
	.llseek = noop_llseek,
	.mmap = qgpu_mmap,
	.fop_flags = FOP_UNSIGNED_OFFSET,
	.show_fdinfo = drm_show_fdinfo,
};

static const struct drm_driver qgpu_driver = {
	.driver_features = DRIVER_GEM | DRIVER_RENDER | DRIVER_SYNCOBJ |
			   DRIVER_SYNCOBJ_TIMELINE | DRIVER_GEM_GPUVA,
	.open = qgpu_open,
	.postclose = qgpu_postclose,
	.ioctls = qgpu_ioctls,
	.num_ioctls = ARRAY_SIZE(qgpu_ioctls),
	.fops = &qgpu_fops,
	.show_fdinfo = qgpu_show_fdinfo,
	.gem_prime_import = qgpu_gem_prime_import,
	.gem_prime_import_sg_table = qgpu_gem_prime_import_sg_table,
	.dumb_create = qgpu_gem_dumb_create,
	.name = QGPU_DRIVER_NAME,
	.desc = "qgpu virtual GPU",
	.major = 1,
	.minor = 0,
};

static int qgpu_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct qgpu_device *qdev;
	int ret;

	ret = pcim_enable_device(pdev);
	if (ret)
		return ret;
	pci_set_master(pdev);
	ret = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(62));
	if (ret)
		return ret;

	qdev = devm_drm_dev_alloc(&pdev->dev, &qgpu_driver, struct qgpu_device,
				  drm);
	if (IS_ERR(qdev))
		return PTR_ERR(qdev);
	qdev->pdev = pdev;
	pci_set_drvdata(pdev, qdev);
	ret = qgpu_engines_alloc(qdev);
	if (ret)
		return ret;

	ret = pcim_iomap_regions(pdev, BIT(QGPU_BAR_MMIO), QGPU_DRIVER_NAME);
	if (ret)
		return ret;
	qdev->mmio = pcim_iomap_table(pdev)[QGPU_BAR_MMIO];

	ret = qgpu_hw_identify(qdev);
	if (ret)
		return ret;

	/* A clean device: engines stopped, interrupts masked. */
	qgpu_hw_reset(qdev);

	ret = pci_alloc_irq_vectors(pdev, 1, 1, PCI_IRQ_MSI | PCI_IRQ_INTX);
	if (ret < 0)
		return ret;

	mutex_init(&qdev->ctx_lock);
	xa_init_flags(&qdev->contexts, XA_FLAGS_ALLOC1);
	xa_init(&qdev->ctx_users);
	init_waitqueue_head(&qdev->mfence_wq);
	spin_lock_init(&qdev->mfence_lock);
	INIT_LIST_HEAD(&qdev->mfence_active);
	ret = qgpu_ping_init(qdev);
	if (ret)
		goto err_vectors;

	ret = qgpu_engine_init(qdev);
	if (ret)
		goto err_vectors;

	ret = request_irq(pci_irq_vector(pdev, 0), qgpu_irq_handler,
			  IRQF_SHARED, QGPU_DRIVER_NAME, qdev);
	if (ret)
		goto err_engine;
	qgpu_hw_irq_enable(qdev, true);

	ret = qgpu_sched_init(qdev);
	if (ret)
		goto err_irq;

	ret = qgpu_mm_init(qdev);
	if (ret)
		goto err_sched;

	ret = drm_dev_register(&qdev->drm, 0);
	if (ret)
		goto err_mm;

	qgpu_debugfs_init(qdev);
	drm_info(&qdev->drm,
		 "qgpu %u.%u: %llu MiB VRAM (%llu MiB visible), %llu MiB GART, %llu MiB host aperture, %u slots\n",
		 qdev->version >> 16, qdev->version & 0xffff,
		 qdev->vram_size >> 20, qdev->visible_size >> 20,
		 qdev->gart_size >> 20, qdev->hap_size >> 20, qdev->max_slots);
	return 0;

err_mm:
	qgpu_mm_fini(qdev);
err_sched:
	qgpu_sched_fini(qdev);
err_irq:
	qgpu_hw_irq_enable(qdev, false);
	free_irq(pci_irq_vector(pdev, 0), qdev);
err_engine:
	qgpu_engine_fini(qdev);
err_vectors:
	pci_free_irq_vectors(pdev);
	return ret;
}

static void qgpu_remove(struct pci_dev *pdev)
{
	struct qgpu_device *qdev = pci_get_drvdata(pdev);

	drm_dev_unplug(&qdev->drm);
	qgpu_ping_fini(qdev);
	/* No CPU mapping may outlive the BARs. */
	unmap_mapping_range(qdev->drm.anon_inode->i_mapping, 0, 0, 1);
	qgpu_ctx_device_fini(qdev);
	/*
	 * Stop the device before its fences signal (qgpu_sched_fini() ends
	 * what the engines hold with -ENODEV): a fence signalled while the
	 * device still runs the job lets the memory it may write be freed.
	 * A reset waits for a piece in flight (docs/hw-spec.md).
	 */
	qgpu_hw_reset(qdev);
	qgpu_sched_fini(qdev);
	qgpu_mfence_device_fini(qdev);
	qgpu_sched_free_pending(qdev);
	free_irq(pci_irq_vector(pdev, 0), qdev);
	qgpu_mm_fini(qdev);
	qgpu_engine_fini(qdev);
	pci_free_irq_vectors(pdev);
}

static const struct pci_device_id qgpu_pci_ids[] = {
	{ PCI_DEVICE(QGPU_PCI_VENDOR_ID, QGPU_PCI_DEVICE_ID) },
	{ }
};
MODULE_DEVICE_TABLE(pci, qgpu_pci_ids);

static struct pci_driver qgpu_pci_driver = {
	.name = QGPU_DRIVER_NAME,
	.id_table = qgpu_pci_ids,
	.probe = qgpu_probe,
	.remove = qgpu_remove,
};

/*
 * Deferred destruction (allocations, address spaces, contexts) outlives
 * the device that queued it: a file closed after unplug leaves its work
 * there, and that work may hold the last reference to the DRM device.
 * Destroyed at module exit, once no file, mapping or dma-buf is left.
 */
struct workqueue_struct *qgpu_reap_wq;

static int __init qgpu_init(void)
{
	int ret;

	qgpu_reap_wq = alloc_workqueue("qgpu-reap", WQ_UNBOUND, 0);
	if (!qgpu_reap_wq)
		return -ENOMEM;
	ret = pci_register_driver(&qgpu_pci_driver);
	if (ret)
		destroy_workqueue(qgpu_reap_wq);
	return ret;
}
module_init(qgpu_init);

static void __exit qgpu_exit(void)
{
	pci_unregister_driver(&qgpu_pci_driver);
	/* fences in sync files may outlive the devices: not their code */
	qgpu_fences_wait_all();
	destroy_workqueue(qgpu_reap_wq);
	qgpu_engines_free_retired();
}
module_exit(qgpu_exit);

MODULE_DESCRIPTION("qgpu virtual GPU: WDDM-style video memory manager on DRM");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(DMA_BUF);
