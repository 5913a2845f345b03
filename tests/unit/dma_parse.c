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
	memset(&b->pe[b->npe], 0, sizeof(b->pe[b->npe]));
	b->pe[b->npe].patch_offset = (b->n + QGPU_DMA_BIND_ADDR_DW) * 4;
	b->pe[b->npe].split_offset = b->split;
	b->npe++;
	emit(b, QGPU_DMA_BIND, QGPU_DMA_BIND_LEN);
}

/*
 * A BIND of @slot asking for @want bytes of an allocation that has
 * @avail from the entry's offset on (0: the NULL allocation), tiled or not
 */
static void bind_to(struct buf *b, unsigned int slot, unsigned long long want,
		    unsigned long long avail, unsigned int tiled)
{
	unsigned int at = b->n;

	bind(b);
	b->dw[at + 1] = slot;
	b->dw[at + 4] = (unsigned int)want;
	b->dw[at + 5] = (unsigned int)(want >> 32);
	b->pe[b->npe - 1].slot = slot;
	b->pe[b->npe - 1].avail = avail;
	b->pe[b->npe - 1].tiled = tiled;
}

static void tile(struct buf *b, unsigned int untile, unsigned int dslot,
		 unsigned int doff, unsigned int sslot, unsigned int soff,
		 unsigned int w, unsigned int h, unsigned int pitch)
{
	unsigned int *c = b->dw + b->n;

	emit(b, QGPU_DMA_TILE, QGPU_DMA_TILE_LEN);
	c[0] = QGPU_CMD_HDR(QGPU_DMA_TILE, untile ? QGPU_TILE_UNTILE : 0,
			    QGPU_DMA_TILE_LEN);
	c[1] = dslot;
	c[2] = doff;
	c[3] = sslot;
	c[4] = soff;
	c[5] = w;
	c[6] = h;
	c[7] = pitch;
}

#define NSLOTS	8

static enum qgpu_parse_rule parse_mode(const struct buf *b, unsigned int *at,
				       int virtual_ctx)
{
	unsigned int starts[QGPU_PARSE_STARTS_WORDS(MAXDW)];
	unsigned int *dw = malloc((b->n ? b->n : 1) * sizeof(*dw));
	struct qgpu_parse_slot *slots = calloc(NSLOTS, sizeof(*slots));
	enum qgpu_parse_rule r;

	/* heap copies of exactly their size: ASan sees any access past them */
	igt_assert(dw && slots);
	memcpy(dw, b->dw, b->n * sizeof(*dw));
	memset(starts, 0, sizeof(starts));
	r = qgpu_dma_parse(dw, b->n, b->pe, b->npe, starts, at, virtual_ctx,
			   virtual_ctx ? NULL : slots,
			   virtual_ctx ? 0 : NSLOTS);
	free(dw);
	free(slots);
	return r;
}

static enum qgpu_parse_rule parse(const struct buf *b, unsigned int *at)
{
	return parse_mode(b, at, 0);
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

		/* TILE has its own cases below: not in the random sweep */

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
	/*
	 * TILE against the bindings (hw-spec 17, UAPI drm_qgpu_submit): slot
	 * 0 linear, slot 1 tiled, each 4 KiB; 16 x 16 at pitch 64 spans 1 KiB
	 * on either side.
	 */
	igt_subtest("tile-valid") {
		memset(&b, 0, sizeof(b));
		bind_to(&b, 0, 0x1000, 0x1000, 0);
		bind_to(&b, 1, 0x1000, 0x1000, 1);
		tile(&b, 0, 1, 0xc00, 0, 0xc00, 16, 16, 64);
		tile(&b, 1, 0, 0xc00, 1, 0xc00, 16, 16, 64);
		/* empty surfaces: bound slots, offsets up to the size */
		tile(&b, 0, 1, 0x1000, 0, 0x1000, 0, 16, 0);
		/* odd sizes round up to whole tiles: 9 x 9 is 1 KiB tiled */
		tile(&b, 0, 1, 0xc00, 0, 0, 9, 9, 36);
		/* the last row needs no padding */
		tile(&b, 0, 1, 0, 0, 0x1000 - 15 * 128 - 64, 16, 16, 128);
		igt_assert_eq(parse(&b, &at), QGPU_PARSE_OK);
	}

	igt_subtest("tile-geometry") {
		static const unsigned int bad[][3] = {
			{ 16385, 1, 65540 }, { 1, 16385, 4 }, { 7, 1, 30 },
			{ 8, 1, 28 }, { 0xffffffff, 1, 4 }, { 8, 8, 0 },
		};
		unsigned int k;

		for (k = 0; k < ARRAY_SIZE(bad); k++) {
			memset(&b, 0, sizeof(b));
			bind_to(&b, 0, 1ull << 40, 1ull << 40, 0);
			bind_to(&b, 1, 1ull << 40, 1ull << 40, 1);
			tile(&b, k & 1, 1, 0, 0, 0, bad[k][0], bad[k][1],
			     bad[k][2]);
			igt_assert_eq(parse(&b, &at), QGPU_PARSE_TILE_GEOMETRY);
			igt_assert_eq(at, 2 * QGPU_DMA_BIND_LEN * 4);
		}
	}

	igt_subtest("tile-slots") {
		/* a slot no BIND bound, beyond the table, or bound to NULL */
		memset(&b, 0, sizeof(b));
		bind_to(&b, 1, 0x1000, 0x1000, 1);
		tile(&b, 0, 1, 0, 0, 0, 8, 8, 32);
		igt_assert_eq(parse(&b, &at), QGPU_PARSE_TILE_SLOT);
		memset(&b, 0, sizeof(b));
		bind_to(&b, 0, 0x1000, 0x1000, 0);
		tile(&b, 0, NSLOTS, 0, 0, 0, 8, 8, 32);
		igt_assert_eq(parse(&b, &at), QGPU_PARSE_TILE_SLOT);
		memset(&b, 0, sizeof(b));
		bind_to(&b, 0, 0x1000, 0x1000, 0);
		bind_to(&b, 1, 0x1000, 0, 0);
		tile(&b, 0, 1, 0, 0, 0, 8, 8, 32);
		igt_assert_eq(parse(&b, &at), QGPU_PARSE_TILE_SLOT);
		/* a BIND of size 0 unbinds; a later BIND of the slot counts */
		memset(&b, 0, sizeof(b));
		bind_to(&b, 0, 0x1000, 0x1000, 0);
		bind_to(&b, 1, 0x1000, 0x1000, 1);
		bind_to(&b, 1, 0, 0x1000, 1);
		tile(&b, 0, 1, 0, 0, 0, 8, 8, 32);
		igt_assert_eq(parse(&b, &at), QGPU_PARSE_TILE_SLOT);
		memset(&b, 0, sizeof(b));
		bind_to(&b, 0, 0x1000, 0x1000, 0);
		tile(&b, 0, 1, 0, 0, 0, 8, 8, 32);
		bind_to(&b, 1, 0x1000, 0x1000, 1);
		igt_assert_eq(parse(&b, &at), QGPU_PARSE_TILE_SLOT);
		/* even an empty surface needs its slots */
		memset(&b, 0, sizeof(b));
		bind_to(&b, 1, 0x1000, 0x1000, 1);
		tile(&b, 0, 1, 0, 0, 0, 0, 0, 0);
		igt_assert_eq(parse(&b, &at), QGPU_PARSE_TILE_SLOT);
	}

	igt_subtest("tile-ranges") {
		static const unsigned int cases[][8] = {
			/* untile, doff, soff, w, h, pitch, ok */
			{ 0, 0xc04, 0, 16, 16, 64, 0 },
			{ 0, 0, 0xc04, 16, 16, 64, 0 },
			{ 1, 0xc04, 0, 16, 16, 64, 0 },
			{ 1, 0, 0xc04, 16, 16, 64, 0 },
			{ 0, 0, 0x1000 - 15 * 128 - 60, 16, 16, 128, 0 },
			{ 0, 0x1004, 0, 0, 0, 0, 0 },
			{ 0, 0xffffffff, 0, 1, 1, 4, 0 },
			{ 1, 0, 0xfffffffc, 1, 1, 4, 0 },
			{ 0, 0, 0x10, 1, 8, 0xfffffffc, 0 },
			{ 0, 0, 0, 16384, 16384, 65536, 0 },
			{ 0, 0xc00, 0xc00, 16, 16, 64, 1 },
			{ 1, 0xc00, 0xc00, 16, 16, 64, 1 },
		};
		unsigned int k;

		for (k = 0; k < ARRAY_SIZE(cases); k++) {
			const unsigned int *c = cases[k];

			memset(&b, 0, sizeof(b));
			bind_to(&b, 0, 0x1000, 0x1000, 0);
			bind_to(&b, 1, 0x1000, 0x1000, 1);
			if (c[0])
				tile(&b, 1, 0, c[1], 1, c[2], c[3], c[4], c[5]);
			else
				tile(&b, 0, 1, c[1], 0, c[2], c[3], c[4], c[5]);
			igt_assert_eq(parse(&b, &at), c[6] ? QGPU_PARSE_OK :
				      QGPU_PARSE_TILE_RANGE);
		}
		/* the bound size is the BIND's, cut to the allocation */
		memset(&b, 0, sizeof(b));
		bind_to(&b, 0, 0x1000, 0x1000, 0);
		bind_to(&b, 1, 0x10000, 0x400, 1);
		tile(&b, 0, 1, 4, 0, 0, 16, 16, 64);
		igt_assert_eq(parse(&b, &at), QGPU_PARSE_TILE_RANGE);
		memset(&b, 0, sizeof(b));
		bind_to(&b, 0, 0x1000, 0x1000, 0);
		bind_to(&b, 1, 0x3fc, 0x10000, 1);
		tile(&b, 0, 1, 0, 0, 0, 16, 16, 64);
		igt_assert_eq(parse(&b, &at), QGPU_PARSE_TILE_RANGE);
		/* a BIND size above 4 GiB is cut too */
		memset(&b, 0, sizeof(b));
		bind_to(&b, 0, 0x1000, 0x1000, 0);
		bind_to(&b, 1, (1ull << 32) | 0x400, 0x400, 1);
		tile(&b, 0, 1, 0, 0, 0, 16, 16, 64);
		igt_assert_eq(parse(&b, &at), QGPU_PARSE_OK);
	}

	igt_subtest("tile-layout") {
		unsigned int untile;

		for (untile = 0; untile < 2; untile++) {
			/* the tiled side on a linear allocation */
			memset(&b, 0, sizeof(b));
			bind_to(&b, 0, 0x1000, 0x1000, 0);
			bind_to(&b, 1, 0x1000, 0x1000, 0);
			tile(&b, untile, 1, 0, 0, 0, 8, 8, 32);
			igt_assert_eq(parse(&b, &at), QGPU_PARSE_TILE_LAYOUT);
			/* the linear side on a tiled one */
			memset(&b, 0, sizeof(b));
			bind_to(&b, 0, 0x1000, 0x1000, 1);
			bind_to(&b, 1, 0x1000, 0x1000, 1);
			tile(&b, untile, 1, 0, 0, 0, 8, 8, 32);
			igt_assert_eq(parse(&b, &at), QGPU_PARSE_TILE_LAYOUT);
			/* both sides swapped */
			memset(&b, 0, sizeof(b));
			bind_to(&b, 0, 0x1000, 0x1000, 0);
			bind_to(&b, 1, 0x1000, 0x1000, 1);
			tile(&b, untile, untile ? 1 : 0, 0, untile ? 0 : 1, 0,
			     8, 8, 32);
			igt_assert_eq(parse(&b, &at), QGPU_PARSE_TILE_LAYOUT);
			/* a slot rebound to the other layout counts from there */
			memset(&b, 0, sizeof(b));
			bind_to(&b, 0, 0x1000, 0x1000, 0);
			bind_to(&b, 1, 0x1000, 0x1000, 1);
			tile(&b, untile, untile ? 0 : 1, 0, untile ? 1 : 0, 0,
			     8, 8, 32);
			bind_to(&b, 1, 0x1000, 0x1000, 0);
			tile(&b, untile, untile ? 0 : 1, 0, untile ? 1 : 0, 0,
			     8, 8, 32);
			igt_assert_eq(parse(&b, &at), QGPU_PARSE_TILE_LAYOUT);
			igt_assert_eq(at, (3 * QGPU_DMA_BIND_LEN +
					   QGPU_DMA_TILE_LEN) * 4);
		}
	}

	igt_subtest("tile-flags-and-modes") {
		/* flags other than UNTILE; TILE of the wrong length or mode */
		memset(&b, 0, sizeof(b));
		bind_to(&b, 0, 0x1000, 0x1000, 0);
		bind_to(&b, 1, 0x1000, 0x1000, 1);
		tile(&b, 0, 1, 0, 0, 0, 8, 8, 32);
		igt_assert_eq(parse(&b, &at), QGPU_PARSE_OK);
		b.dw[b.n - QGPU_DMA_TILE_LEN] |= 0x02u << 8;
		igt_assert_eq(parse(&b, &at), QGPU_PARSE_BAD_COMMAND);
		b.dw[b.n - QGPU_DMA_TILE_LEN] =
			QGPU_CMD_HDR(QGPU_DMA_TILE, 0, QGPU_DMA_TILE_LEN + 1);
		b.dw[b.n++] = 0;
		igt_assert_eq(parse(&b, &at), QGPU_PARSE_BAD_COMMAND);
		igt_assert_eq(parse_mode(&b, &at, 1), QGPU_PARSE_BAD_COMMAND);
		/* VTILE: its flags and geometry; not in a physical context */
		memset(&b, 0, sizeof(b));
		emit(&b, QGPU_DMA_VTILE, QGPU_DMA_VTILE_LEN);
		b.dw[0] = QGPU_CMD_HDR(QGPU_DMA_VTILE, QGPU_TILE_UNTILE,
				       QGPU_DMA_VTILE_LEN);
		b.dw[5] = 100;
		b.dw[6] = 3;
		b.dw[7] = 400;
		igt_assert_eq(parse_mode(&b, &at, 1), QGPU_PARSE_OK);
		igt_assert_eq(parse(&b, &at), QGPU_PARSE_BAD_COMMAND);
		b.dw[7] = 396;
		igt_assert_eq(parse_mode(&b, &at, 1), QGPU_PARSE_TILE_GEOMETRY);
		b.dw[7] = 400;
		b.dw[0] |= 0x80u << 8;
		igt_assert_eq(parse_mode(&b, &at, 1), QGPU_PARSE_BAD_COMMAND);
		igt_assert(strcmp(qgpu_parse_rule_name(QGPU_PARSE_TILE_LAYOUT),
				  "?"));
	}
}
