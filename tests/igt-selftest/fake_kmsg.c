// SPDX-License-Identifier: MIT
/*
 * fake_kmsg: no subtests; writes a kernel-log line the harness must treat
 * as a kernel warning (through /dev/kmsg) and exits 0. Expected on both
 * sides: 1 pass for the exit status, 1 fail for the kernel log.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "libigt.h"

int main(int argc, char **argv)
{
	static const char line[] =
		"<4>WARNING: CPU: 0 PID: 1 at fake_kmsg (written on purpose by the igt self-test)\n";
	int fd;

	(void)argc;
	igt_fake_init(argv[0]);
	fd = open("/dev/kmsg", O_WRONLY);
	if (fd < 0 || write(fd, line, strlen(line)) != (ssize_t)strlen(line))
		return 98;
	close(fd);
	return 0;
}
