/*
 * qgpu: bulk copies between host pointers.
 *
 * A paging TRANSFER moves a page list's runs one by one, each a few KiB to
 * a few MiB. The C library's memmove uses ordinary stores for pieces of
 * that size: every destination line is first read into the cache, then
 * written back, about half again the memory traffic of the copy itself,
 * while one large memcpy streams (non-temporal stores straight to memory).
 * On the 2-core development host a 1 GiB move in 14 KiB pieces ran at
 * about half the speed of one 1 GiB memcpy (README, "Paging against the
 * host's memcpy"). A command that moves at least QGPU_COPY_STREAM_MIN
 * bytes streams every piece (qgpu_copy() with @stream), and
 * qgpu_copy_done() orders those stores before anything the device does
 * next (a fence write, an interrupt, the next command): streaming stores
 * are weakly ordered. Overlapping ranges keep memmove's semantics.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qgpu-copy.h"

#ifdef __SSE2__
#include <emmintrin.h>

/* Streaming copy of @n bytes; @dst and @src do not overlap. */
static void qgpu_copy_stream(uint8_t *dst, const uint8_t *src, size_t n)
{
    size_t head = -(uintptr_t)dst & 15;

    if (head) {
        head = MIN(head, n);
        memcpy(dst, src, head);
        dst += head;
        src += head;
        n -= head;
    }
    for (; n >= 64; n -= 64, dst += 64, src += 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)src);
        __m128i b = _mm_loadu_si128((const __m128i *)(src + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(src + 32));
        __m128i d = _mm_loadu_si128((const __m128i *)(src + 48));

        _mm_stream_si128((__m128i *)dst, a);
        _mm_stream_si128((__m128i *)(dst + 16), b);
        _mm_stream_si128((__m128i *)(dst + 32), c);
        _mm_stream_si128((__m128i *)(dst + 48), d);
    }
    memcpy(dst, src, n);
}

void qgpu_copy_done(bool stream)
{
    if (stream) {
        _mm_sfence();
    }
}
#else
static void qgpu_copy_stream(uint8_t *dst, const uint8_t *src, size_t n)
{
    memcpy(dst, src, n);
}

void qgpu_copy_done(bool stream)
{
}
#endif

/*
 * Copy @n bytes from @src to @dst as memmove() does; with @stream, with
 * streaming stores when the ranges do not overlap (qgpu_copy_done() must
 * follow before the data is announced).
 */
void qgpu_copy(void *dst, const void *src, size_t n, bool stream)
{
    uintptr_t d = (uintptr_t)dst, s = (uintptr_t)src;

    if (!stream || n < 256 || (d < s + n && s < d + n)) {
        memmove(dst, src, n);
        return;
    }
    qgpu_copy_stream(dst, src, n);
}
