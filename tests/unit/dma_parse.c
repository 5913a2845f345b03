// SPDX-License-Identifier: MIT
/*
 * Host unit tests for kernel/qgpu_dma_parse.c: qgpu_dma_parse(), the
 * kernel's walk of a DMA buffer and its patch entries before anything runs.
 * Every rule the parser enforces has a case that breaks only it, and a
 * random sweep checks it against a reference walk (and, under ASan, that
 * it never reads past the buffer).
 *
 * unit-sources: kernel/qgpu_dma_parse.c */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "igt.h"
#include "qgpu_cmd.h"
#include "qgpu_dma_parse.h"

#define MAXDW	256

struct buf {
	unsigned int dw[MAXDW];
	unsigned int n;
	struct qgpu_parse_patch pe[MAXDW];
	unsigned int npe;
	unsigned int split;	/* split offset of the next BIND's patch */
};

static void emit(struct buf *b, unsigned int op, unsigned int len)
{
	unsigned int i;

	b->dw[b->n] = QGPU_CMD_HDR(op, 0, len);
	for (i = 1; i < len; i++)
		b->dw[b->n + i] = 0xdead0000 | i;
	b->n += len;
}

/* A BIND with its patch entry (split point at @split bytes). */
static void bind(struct buf *b)
{
	b->pe[b->npe].patch_offset = (b->n + QGPU_DMA_BIND_ADDR_DW) * 4;
	b->pe[b->npe].split_offset = b->split;
	b->npe++;
	emit(b, QGPU_DMA_BIND, QGPU_DMA_BIND_LEN);
}

static enum qgpu_parse_rule parse(const struct buf *b, unsigned int *at)
{
	unsigned int starts[QGPU_PARSE_STARTS_WORDS(MAXDW)];
	unsigned int *dw = malloc((b->n ? b->n : 1) * sizeof(*dw));
	enum qgpu_parse_rule r;

	/* a heap copy of exactly n dwords: ASan sees any read past it */
	igt_assert(dw);
	memcpy(dw, b->dw, b->n * sizeof(*dw));
	memset(starts, 0, sizeof(starts));
	r = qgpu_dma_parse(dw, b->n, b->pe, b->npe, starts, at, 0);
	free(dw);
	return r;
}

/* copy, fill, bind, copy: a valid buffer with a split point at the bind */
static void good(struct buf *b)
{
	memset(b, 0, sizeof(*b));
	bind(b);
	emit(b, QGPU_DMA_COPY, QGPU_DMA_COPY_LEN);
	emit(b, QGPU_DMA_FILL, QGPU_DMA_FILL_LEN);
	b->split = b->n * 4;
	bind(b);
	emit(b, QGPU_DMA_NOP, 3);
	emit(b, QGPU_DMA_CHECKSUM, QGPU_DMA_CHECKSUM_LEN);
}

/* The reference: the rules in docs/hw-spec.md and the UAPI, written plainly. */
static enum qgpu_parse_rule reference(const struct buf *b)
{
	unsigned char start[MAXDW] = { 0 };
	unsigned int i = 0, p, k;

	while (i < b->n) {
		unsigned int op = QGPU_CMD_OPCODE(b->dw[i]);
		unsigned int len = QGPU_CMD_LEN(b->dw[i]);
		unsigned int want;
		int known = op == QGPU_DMA_NOP ||
			    (op >= QGPU_DMA_BIND && op <= QGPU_DMA_TIMESTAMP);

		if (!known || QGPU_CMD_FLAGS(b->dw[i]))
			return QGPU_PARSE_BAD_COMMAND;
		want = op == QGPU_DMA_NOP ? 1 : qgpu_cmd_len(op);
		if (len < want || (op != QGPU_DMA_NOP && len != want) ||
		    i + len > b->n)
			return QGPU_PARSE_BAD_COMMAND;
		start[i] = 1;
		if (op == QGPU_DMA_BIND) {
			int found = 0;

			for (k = 0; k < b->npe; k++)
				if (b->pe[k].patch_offset ==
				    (i + QGPU_DMA_BIND_ADDR_DW) * 4)
					found = 1;
			if (!found)
				return QGPU_PARSE_UNPATCHED_BIND;
		}
		i += len;
	}
	for (p = 0; p < b->npe; p++) {
		unsigned int at = b->pe[p].patch_offset / 4 - QGPU_DMA_BIND_ADDR_DW;

		if (b->pe[p].patch_offset % 4 ||
		    b->pe[p].patch_offset / 4 < QGPU_DMA_BIND_ADDR_DW ||
		    at >= b->n || !start[at] ||
		    QGPU_CMD_OPCODE(b->dw[at]) != QGPU_DMA_BIND)
			return QGPU_PARSE_STRAY_PATCH;
	}
	for (p = 0; p < b->npe; p++)
		if (b->pe[p].split_offset / 4 >= b->n ||
		    !start[b->pe[p].split_offset / 4])
			return QGPU_PARSE_BAD_SPLIT;
	return QGPU_PARSE_OK;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static unsigned int rnd(unsigned int n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned int)(rng % n);
}

igt_main
{
	struct buf b;
	unsigned int at;

	igt_subtest("valid-buffer") {
		good(&b);
		igt_assert_eq(parse(&b, &at), QGPU_PARSE_OK);
	}

	igt_subtest("empty-buffer") {
		memset(&b, 0, sizeof(b));
		igt_assert_eq(parse(&b, &at), QGPU_PARSE_OK);
	}

	igt_subtest("unknown-opcode") {
		good(&b);
		b.dw[QGPU_DMA_BIND_LEN] = QGPU_CMD_HDR(0x3f, 0, 6);
		igt_assert_eq(parse(&b, &at), QGPU_PARSE_BAD_COMMAND);
		igt_assert_eq(at, QGPU_DMA_BIND_LEN * 4);
	}

	igt_subtest("ring-command-in-dma-buffer") {
		good(&b);
		b.dw[QGPU_DMA_BIND_LEN] = QGPU_CMD_HDR(QGPU_CMD_EXEC, 0,
						       QGPU_CMD_EXEC_LEN);
		igt_assert_eq(parse(&b, &at), QGPU_PARSE_BAD_COMMAND);
	}

	igt_subtest("flags-set") {
		good(&b);
		b.dw[QGPU_DMA_BIND_LEN] |= 1u << 8;
		igt_assert_eq(parse(&b, &at), QGPU_PARSE_BAD_COMMAND);
	}

	igt_subtest("length-too-short-or-long") {
		good(&b);
		b.dw[QGPU_DMA_BIND_LEN] = QGPU_CMD_HDR(QGPU_DMA_COPY, 0,
						       QGPU_DMA_COPY_LEN - 1);
		igt_assert_eq(parse(&b, &at), QGPU_PARSE_BAD_COMMAND);
		b.dw[QGPU_DMA_BIND_LEN] = QGPU_CMD_HDR(QGPU_DMA_COPY, 0,
						       QGPU_DMA_COPY_LEN + 1);
		igt_assert_eq(parse(&b, &at), QGPU_PARSE_BAD_COMMAND);
	}

	igt_subtest("zero-length-header") {
		good(&b);
		b.dw[QGPU_DMA_BIND_LEN] = QGPU_CMD_HDR(QGPU_DMA_NOP, 0, 0);
		igt_assert_eq(parse(&b, &at), QGPU_PARSE_BAD_COMMAND);
	}

	igt_subtest("command-past-the-end") {
		good(&b);
		b.n--;	/* the last CHECKSUM loses its last operand */
		igt_assert_eq(parse(&b, &at), QGPU_PARSE_BAD_COMMAND);
		good(&b);
		b.dw[b.n - QGPU_DMA_CHECKSUM_LEN] =
			QGPU_CMD_HDR(QGPU_DMA_NOP, 0, QGPU_DMA_CHECKSUM_LEN + 1);
		igt_assert_eq(parse(&b, &at), QGPU_PARSE_BAD_COMMAND);
	}

	igt_subtest("unpatched-bind") {
		good(&b);
		b.npe--;	/* the second BIND's entry */
		igt_assert_eq(parse(&b, &at), QGPU_PARSE_UNPATCHED_BIND);
	}

	igt_subtest("patch-entry-off-the-address") {
		good(&b);
		b.pe[1].patch_offset += 4;	/* the size, not the address */
		igt_assert_eq(parse(&b, &at), QGPU_PARSE_UNPATCHED_BIND);
	}

	igt_subtest("bind-hidden-in-a-nop-payload") {
		/* a NOP whose payload is a BIND with a patch entry */
		memset(&b, 0, sizeof(b));
		bind(&b);
		b.dw[b.n++] = QGPU_CMD_HDR(QGPU_DMA_NOP, 0,
					   1 + QGPU_DMA_BIND_LEN);
		b.pe[b.npe].patch_offset = (b.n + QGPU_DMA_BIND_ADDR_DW) * 4;
		b.pe[b.npe].split_offset = 0;
		b.npe++;
		emit(&b, QGPU_DMA_BIND, QGPU_DMA_BIND_LEN);
		igt_assert_eq(parse(&b, &at), QGPU_PARSE_STRAY_PATCH);
		igt_assert_eq(reference(&b), QGPU_PARSE_STRAY_PATCH);
	}

	igt_subtest("split-offset-inside-a-command") {
		good(&b);
		b.pe[1].split_offset += 4;
		igt_assert_eq(parse(&b, &at), QGPU_PARSE_BAD_SPLIT);
		igt_assert_eq(at, b.pe[1].split_offset);
	}

	igt_subtest("split-offset-past-the-end") {
		good(&b);
		b.pe[1].split_offset = b.n * 4;
		igt_assert_eq(parse(&b, &at), QGPU_PARSE_BAD_SPLIT);
	}

	igt_subtest("every-split-offset") {
		unsigned int off, want_ok = 0, got_ok = 0;

		good(&b);
		for (off = 0; off < b.n * 4 + 8; off += 4) {
			b.pe[1].split_offset = off;
			if (reference(&b) == QGPU_PARSE_OK)
				want_ok++;
			if (parse(&b, &at) == QGPU_PARSE_OK)
				got_ok++;
			igt_assert_eq(parse(&b, &at), reference(&b));
		}
		/* exactly the command starts: 6 commands */
		igt_assert_eq(want_ok, 6);
		igt_assert_eq(got_ok, 6);
	}

	igt_subtest("random-against-reference") {
		unsigned int round, ok = 0;
		static const unsigned int ops[] = {
			QGPU_DMA_NOP, QGPU_DMA_BIND, QGPU_DMA_COPY,
			QGPU_DMA_FILL, QGPU_DMA_ADD, QGPU_DMA_XOR,
			QGPU_DMA_CHECKSUM, QGPU_DMA_FENCE, QGPU_DMA_WAIT,
			QGPU_DMA_TIMESTAMP, 0x3f, QGPU_CMD_FENCE,
		};

		for (round = 0; round < 20000; round++) {
			unsigned int i, n = 1 + rnd(12);
			enum qgpu_parse_rule want, got;

			memset(&b, 0, sizeof(b));
			for (i = 0; i < n && b.n < MAXDW - 16; i++) {
				unsigned int op = ops[rnd(ARRAY_SIZE(ops))];
				unsigned int len = op == QGPU_DMA_NOP ?
						   1 + rnd(8) : qgpu_cmd_len(op);

				if (!len)
					len = 1 + rnd(8);
				if (rnd(10) == 0)
					len = rnd(10);	/* a wrong length */
				if (op == QGPU_DMA_BIND && len == QGPU_DMA_BIND_LEN &&
				    rnd(8)) {
					b.split = rnd(4) ? b.n * 4 : rnd(b.n * 4 + 8);
					bind(&b);
					continue;
				}
				if (!len)
					len = 1;
				emit(&b, op, len);
				if (rnd(20) == 0)
					b.dw[b.n - len] |= 1u << (8 + rnd(8));
			}
			if (rnd(10) == 0 && b.n)
				b.n -= 1 + rnd(b.n);	/* truncated */
			if (rnd(10) == 0 && b.npe) {
				b.pe[b.npe].patch_offset =
					b.pe[b.npe - 1].patch_offset + 4 + 4 * rnd(8);
				b.pe[b.npe].split_offset = b.pe[b.npe - 1].split_offset;
				b.npe++;
			}
			want = reference(&b);
			got = parse(&b, &at);
			/* several rules may break at once: only OK must agree */
			igt_assert_f((want == QGPU_PARSE_OK) ==
				     (got == QGPU_PARSE_OK),
				     "round %u: reference %d, parser %d\n",
				     round, want, got);
			ok += got == QGPU_PARSE_OK;
		}
		/* the sweep must reach both outcomes */
		igt_assert_lt(100, ok);
		igt_assert_lt(ok, 19900);
	}
}
