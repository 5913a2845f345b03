// SPDX-License-Identifier: GPL-2.0-only
/*
 * What the kernel's sw_sync.c and sync_debug.c need to stand as a module of
 * their own (built by scripts/sw-sync-module.sh; see Kbuild).
 *
 * sync_debug.c's late_initcall becomes the module's init; it has no exit:
 * its debugfs files are created with debugfs_create_file_unsafe() on the
 * understanding that they are never removed, so the module, once loaded,
 * stays (the kernel refuses to unload a module without an exit function).
 *
 * sync_debug.c prints the name of every sync_file on its debug list with
 * sync_file_get_name(), which the kernel does not export. In 6.12 nothing
 * puts a sync_file on that list (sync_file_debug_add() has no caller), so
 * the call is never reached; it must still link. Kbuild renames it to the
 * function below, which names a sync_file from exported state only.
 */
#include <linux/dma-fence.h>
#include <linux/module.h>
#include <linux/sync_file.h>

char *sw_sync_file_get_name(struct sync_file *sync_file, char *buf, int len);

char *sw_sync_file_get_name(struct sync_file *sync_file, char *buf, int len)
{
	struct dma_fence *fence = sync_file->fence;

	if (sync_file->user_name[0])
		strscpy(buf, sync_file->user_name, len);
	else if (fence)
		snprintf(buf, len, "%s-%s%llu-%lld",
			 fence->ops->get_driver_name(fence),
			 fence->ops->get_timeline_name(fence),
			 fence->context, fence->seqno);
	else
		strscpy(buf, "", len);
	return buf;
}

MODULE_DESCRIPTION("Sync File Validation Framework (sw_sync), out of tree");
MODULE_LICENSE("GPL");
