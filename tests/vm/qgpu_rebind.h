/* SPDX-License-Identifier: MIT */
/*
 * Helpers of the in-VM tests that take the device away and bring it back
 * (qgpu_unplug, qgpu_lost): the PCI address behind a node, sysfs writes,
 * waiting for the node to come back, and touching a mapping that may fault.
 * Root only.
 */
#ifndef QGPU_REBIND_H
#define QGPU_REBIND_H

#include <setjmp.h>
#include <signal.h>

#include "qgpu_test.h"

static sigjmp_buf fault_jmp;
static volatile sig_atomic_t fault_sig;

static void on_fault(int sig)
{
	fault_sig = sig;
	siglongjmp(fault_jmp, 1);
}

/* Read and write a word of an old mapping; returns the signal (0: none). */
static int poke(volatile uint32_t *p)
{
	struct sigaction sa, obus, osegv;
	int sig;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_fault;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, &obus);
	sigaction(SIGSEGV, &sa, &osegv);
	fault_sig = 0;
	if (!sigsetjmp(fault_jmp, 1)) {
		uint32_t v = p[0];

		p[1] = v + 1;
	}
	sig = fault_sig;
	sigaction(SIGBUS, &obus, NULL);
	sigaction(SIGSEGV, &osegv, NULL);
	return sig;
}

static bool sysfs_write(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY);
	bool ok;

	if (fd < 0)
		return false;
	ok = write(fd, val, strlen(val)) == (ssize_t)strlen(val);
	close(fd);
	return ok;
}

/* PCI address (0000:00:02.0) of the device behind a DRM node path */
static void pci_addr(const char *node, char *out, size_t len)
{
	char link[256], target[256];
	const char *name = strrchr(node, '/') + 1;
	ssize_t n;
	char *slash;

	snprintf(link, sizeof(link), "/sys/class/drm/%s/device", name);
	n = readlink(link, target, sizeof(target) - 1);
	igt_assert_f(n > 0, "readlink %s: %s\n", link, strerror(errno));
	target[n] = 0;
	slash = strrchr(target, '/');
	snprintf(out, len, "%s", slash ? slash + 1 : target);
}

/* Wait for a qgpu render node to (re)appear and open it. */
static void wait_device(struct qgpu_dev *dev)
{
	int i, ret = -ENODEV;

	for (i = 0; i < 100; i++) {
		ret = qgpu_open(dev, QGPU_NODE_RENDER);
		if (!ret)
			return;
		usleep(100000);
	}
	igt_assert_f(0, "no qgpu render node 10 s after binding: %s\n",
		     strerror(-ret));
}

/* The PCI address of the device behind the qgpu render node */
static void device_addr(char *out, size_t len)
{
	struct qgpu_dev dev;

	qt_open(&dev, QGPU_NODE_RENDER);
	pci_addr(dev.path, out, len);
	qgpu_close(&dev);
}

#endif /* QGPU_REBIND_H */
