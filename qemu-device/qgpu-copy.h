/*
 * qgpu: bulk copies between host pointers -- streaming stores for moves
 * larger than the host's caches
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_QGPU_COPY_H
#define HW_QGPU_COPY_H

/*
 * A copy or fill command moving at least this many bytes in all streams its
 * pieces: the data would not stay in the host's caches anyway.
 */
#define QGPU_COPY_STREAM_MIN    (4 * MiB)

void qgpu_copy(void *dst, const void *src, size_t n, bool stream);
void qgpu_copy_done(bool stream);

#endif /* HW_QGPU_COPY_H */
