// SPDX-License-Identifier: MIT
/*
 * libqgpu: checksums, test patterns, size parsing, array growth.
 */
#include <ctype.h>
#include <stdlib.h>

#include "qgpu_priv.h"

/* The builders' arrays double from 64 elements (cb.c, vcb.c). */
int qgpu_grow_array(void **arr, uint32_t *cap, uint32_t need, size_t elem)
{
	uint32_t n = *cap ? *cap : 64;
	void *p;

	if (need <= *cap)
		return 0;
	while (n < need) {
		if (n > 0x7fffffffu)
			return -ENOMEM;
		n *= 2;
	}
	p = realloc(*arr, (size_t)n * elem);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = n;
	return 0;
}

uint32_t qgpu_csum_update(uint32_t h, const uint32_t *w, size_t nwords)
{
	size_t i;

	for (i = 0; i < nwords; i++) {
		h ^= w[i];
		h *= QGPU_CSUM_PRIME;
	}
	return h;
}

uint32_t qgpu_csum(const uint32_t *w, size_t nwords)
{
	return qgpu_csum_update(QGPU_CSUM_INIT, w, nwords);
}

void qgpu_pattern_fill(void *p, uint64_t size, uint32_t seed)
{
	uint32_t *w = p;
	uint64_t i;

	for (i = 0; i < size / 4; i++)
		w[i] = qgpu_pattern(seed, i);
}

int64_t qgpu_pattern_check(const void *p, uint64_t size, uint32_t seed)
{
	const volatile uint32_t *w = p;
	uint64_t i;

	for (i = 0; i < size / 4; i++)
		if (w[i] != qgpu_pattern(seed, i))
			return (int64_t)i;
	return -1;
}

int64_t qgpu_parse_size(const char *s)
{
	unsigned long long v;
	char *end;

	if (!s || !isdigit((unsigned char)*s))
		return -1;
	v = strtoull(s, &end, 0);
	switch (*end) {
	case 'k':
	case 'K':
		v <<= 10;
		end++;
		break;
	case 'm':
	case 'M':
		v <<= 20;
		end++;
		break;
	case 'g':
	case 'G':
		v <<= 30;
		end++;
		break;
	case 't':
	case 'T':
		v <<= 40;
		end++;
		break;
	default:
		break;
	}
	if (*end == 'i' || *end == 'I')
		end++;
	if (*end == 'b' || *end == 'B')
		end++;
	if (*end || v > (unsigned long long)INT64_MAX)
		return -1;
	return (int64_t)v;
}
