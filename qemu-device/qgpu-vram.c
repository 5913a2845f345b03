/*
 * qgpu: VRAM's host memory -- giving it back, what is committed, and
 * zeroing that commits nothing.
 *
 * VRAM is a memfd. DISCARD punches holes in it (qgpu_vram_discard()),
 * which gives the pages back to the host; a hole reads as zero. Zeroing
 * VRAM (a FILL with pattern 0, how a driver clears a new allocation)
 * writes only the pages that hold data and skips the holes, which already
 * read as zero, so that clearing freed VRAM does not take the host's
 * memory back.
 * VRAM_COMMITTED reports the bytes the memfd holds (hw-spec section 19).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#ifdef CONFIG_LINUX
#include <linux/falloc.h>
#endif
#include "qgpu-state.h"
#include "qgpu-vram.h"

/* Bytes of VRAM backed by host memory (at most the VRAM size). */
uint64_t qgpu_vram_committed(QGPUState *s)
{
    struct stat st;

    if (s->vram_fd < 0 || fstat(s->vram_fd, &st) < 0) {
        return s->vram_size;
    }
    return MIN((uint64_t)st.st_blocks * 512, s->vram_size);
}

/*
 * DISCARD of the whole pages [@start, @start + @len) of VRAM (checked by
 * the caller): their host memory goes back to the host; they read zero.
 */
void qgpu_vram_discard(QGPUState *s, uint64_t start, uint64_t len)
{
#ifdef CONFIG_FALLOCATE_PUNCH_HOLE
    if (fallocate(s->vram_fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                  start, len) == 0) {
        return;
    }
#endif
    memset(s->vram + start, 0, len);
}

/*
 * Zero @len bytes of VRAM at host pointer @host. Returns false if @host is
 * not VRAM (the caller zeroes it itself).
 */
bool qgpu_vram_zero(QGPUState *s, uint8_t *host, uint64_t len)
{
    off_t pos, end, data, hole;

    if (!s->vram || host < s->vram || host >= s->vram + s->vram_size ||
        len > s->vram_size - (uint64_t)(host - s->vram)) {
        return false;
    }
    pos = host - s->vram;
    end = pos + len;
    while (pos < end) {
        data = lseek(s->vram_fd, pos, SEEK_DATA);
        if (data < 0) {
            if (errno == ENXIO) {
                break;          /* a hole up to the end of the file */
            }
            data = pos;         /* no hole information: write it all */
            hole = end;
        } else {
            hole = data < end ? lseek(s->vram_fd, data, SEEK_HOLE) : end;
            if (hole < 0) {
                hole = end;
            }
        }
        if (data >= end) {
            break;
        }
        data = MAX(data, pos);
        hole = MIN(hole, end);
        memset(s->vram + data, 0, hole - data);
        pos = hole;
    }
    return true;
}
