/*
 * QTest for the qgpu virtual GPU (docs/hw-spec.md)
 *
 * Run from the QEMU build directory:
 *   QTEST_QEMU_BINARY=./qemu-system-x86_64 ./tests/qtest/qgpu-test --tap -k
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/units.h"
#include "qemu/bswap.h"
#include "libqtest.h"
#include "libqos/pci.h"
#include "libqos/pci-pc.h"
#include "hw/pci/pci_regs.h"
#include "hw/qgpu/qgpu_regs.h"

#define QGPU_DEVFN      QPCI_DEVFN(4, 0)

/* Guest-physical layout used by the tests (guest has 256 MiB) */
#define RING0           0x100000ull     /* 64 KiB */
#define RING1           0x120000ull     /* 64 KiB */
#define FENCE_MEM       0x180000ull
#define PAGELIST        0x190000ull
#define PAGELIST2       0x198000ull
#define SYSBUF          0x200000ull     /* 1 MiB */
#define SYSBUF2         0x300000ull     /* 1 MiB */
#define DMABUF          0x400000ull     /* DMA buffers, 1 MiB */
#define GART_TABLE      0x800000ull     /* 512 KiB for 256 MiB of GART */
#define GART_PAGES_MEM  0x900000ull
#define BIGBUF          0x4000000ull    /* 48 MiB */

#define RING_SIZE       0x10000u
#define SYS(a)          (QGPU_SYS_BIT | (a))

typedef struct QGPU {
    QTestState *qts;
    QPCIBus *bus;
    QPCIDevice *dev;
    QPCIBar bar0, bar2, bar4;
    uint64_t bar2_size, bar4_size;
    uint64_t ring[2];
    uint32_t ring_size[2];
    uint32_t tail[2];
} QGPU;

static char *qgpu_bios_dir(void)
{
    const char *bin = g_getenv("QTEST_QEMU_BINARY");
    g_autofree char *dir = NULL;
    g_autofree char *bios = NULL;
    char *pc;

    if (!bin) {
        return g_strdup("");
    }
    dir = g_path_get_dirname(bin);
    pc = g_build_filename(dir, "pc-bios", NULL);
    bios = g_build_filename(pc, "bios-256k.bin", NULL);
    if (g_file_test(bios, G_FILE_TEST_EXISTS)) {
        char *opt = g_strdup_printf("-L %s", pc);

        g_free(pc);
        return opt;
    }
    g_free(pc);
    return g_strdup("");
}

static void qgpu_ring_init(QGPU *g, int n, uint64_t base, uint32_t size);

/* @args: more QEMU options, or NULL */
static QGPU *qgpu_start_args(const char *machine, const char *props,
                             const char *args)
{
    QGPU *g = g_new0(QGPU, 1);
    g_autofree char *bios = qgpu_bios_dir();

    g->qts = qtest_initf("%s -machine %s -nodefaults -m 256M %s "
                         "-device qgpu,addr=04.0%s%s",
                         bios, machine, args ? args : "",
                         props ? "," : "", props ? props : "");
    g->bus = qpci_new_pc(g->qts, NULL);
    g->dev = qpci_device_find(g->bus, QGPU_DEVFN);
    g_assert(g->dev);
    qpci_device_enable(g->dev);
    g->bar0 = qpci_iomap(g->dev, QGPU_BAR_MMIO, NULL);
    g->bar2 = qpci_iomap(g->dev, QGPU_BAR_VRAM, &g->bar2_size);
    /* BAR4 exists only with a host aperture */
    qpci_config_writel(g->dev, PCI_BASE_ADDRESS_4, 0xffffffff);
    if (qpci_config_readl(g->dev, PCI_BASE_ADDRESS_4)) {
        g->bar4 = qpci_iomap(g->dev, QGPU_BAR_HAP, &g->bar4_size);
    }
    qgpu_ring_init(g, 0, RING0, RING_SIZE);
    qgpu_ring_init(g, 1, RING1, RING_SIZE);
    return g;
}

static QGPU *qgpu_start_machine(const char *machine, const char *props)
{
    return qgpu_start_args(machine, props, NULL);
}

static QGPU *qgpu_start(const char *props)
{
    return qgpu_start_machine("q35", props);
}

static void qgpu_stop(QGPU *g)
{
    g_free(g->dev);
    qpci_free_pc(g->bus);
    qtest_quit(g->qts);
    g_free(g);
}

static uint32_t rd(QGPU *g, uint32_t reg)
{
    return qpci_io_readl(g->dev, g->bar0, reg);
}

static void wr(QGPU *g, uint32_t reg, uint32_t val)
{
    qpci_io_writel(g->dev, g->bar0, reg, val);
}

static uint64_t rd64(QGPU *g, uint32_t reg)
{
    return rd(g, reg) | ((uint64_t)rd(g, reg + 4) << 32);
}

static uint32_t erd(QGPU *g, int n, uint32_t reg)
{
    return rd(g, QGPU_ENGINE_BASE(n) + reg);
}

static void ewr(QGPU *g, int n, uint32_t reg, uint32_t val)
{
    wr(g, QGPU_ENGINE_BASE(n) + reg, val);
}

static void qgpu_ring_init(QGPU *g, int n, uint64_t base, uint32_t size)
{
    ewr(g, n, QGPU_ENG_CTRL, 0);
    ewr(g, n, QGPU_ENG_RING_BASE_LO, base);
    ewr(g, n, QGPU_ENG_RING_BASE_HI, base >> 32);
    ewr(g, n, QGPU_ENG_RING_SIZE, size);
    ewr(g, n, QGPU_ENG_CTRL, QGPU_ENG_CTRL_ENABLE);
    g_assert_cmpuint(erd(g, n, QGPU_ENG_CTRL), ==, QGPU_ENG_CTRL_ENABLE);
    g->ring[n] = base;
    g->ring_size[n] = size;
    g->tail[n] = 0;
}

static void emit(QGPU *g, int n, const uint32_t *dw, unsigned cnt)
{
    unsigned i;

    for (i = 0; i < cnt; i++) {
        qtest_writel(g->qts, g->ring[n] + g->tail[n], dw[i]);
        g->tail[n] = (g->tail[n] + 4) & (g->ring_size[n] - 1);
    }
}

static void kick(QGPU *g, int n)
{
    ewr(g, n, QGPU_ENG_RING_TAIL, g->tail[n]);
}

/* Wait until engine n is not busy (bounded). */
static void wait_idle(QGPU *g, int n)
{
    int i;

    for (i = 0; i < 200000; i++) {
        if (!(erd(g, n, QGPU_ENG_STATUS) & QGPU_ENG_STATUS_BUSY)) {
            return;
        }
        if (i > 100) {
            g_usleep(100);
        }
    }
    g_assert_not_reached();
}

static void run(QGPU *g, int n)
{
    kick(g, n);
    wait_idle(g, n);
}

static void cmd_fence(QGPU *g, int n, uint64_t addr, uint64_t val, bool irq)
{
    uint32_t c[] = {
        QGPU_CMD_HDR(QGPU_CMD_FENCE, irq ? QGPU_FENCE_FLAG_IRQ : 0,
                     QGPU_CMD_FENCE_LEN),
        addr, addr >> 32, val, val >> 32,
    };
    emit(g, n, c, ARRAY_SIZE(c));
}

static void cmd_nop(QGPU *g, int n, unsigned len)
{
    uint32_t h = QGPU_CMD_HDR(QGPU_CMD_NOP, 0, len);
    unsigned i;

    emit(g, n, &h, 1);
    for (i = 1; i < len; i++) {
        uint32_t junk = 0xdeadbeef;
        emit(g, n, &junk, 1);
    }
}

static void cmd_transfer(QGPU *g, uint64_t size, uint64_t src, uint64_t dst,
                         uint32_t flags)
{
    uint32_t c[] = {
        QGPU_CMD_HDR(QGPU_CMD_TRANSFER, flags, QGPU_CMD_TRANSFER_LEN),
        size, size >> 32, src, src >> 32, dst, dst >> 32,
    };
    emit(g, 0, c, ARRAY_SIZE(c));
}

static void cmd_fill(QGPU *g, uint64_t size, uint64_t dst, uint32_t pattern,
                     uint32_t flags)
{
    uint32_t c[] = {
        QGPU_CMD_HDR(QGPU_CMD_FILL, flags, QGPU_CMD_FILL_LEN),
        size, size >> 32, dst, dst >> 32, pattern,
    };
    emit(g, 0, c, ARRAY_SIZE(c));
}

static void cmd_discard(QGPU *g, uint64_t size, uint64_t addr)
{
    uint32_t c[] = {
        QGPU_CMD_HDR(QGPU_CMD_DISCARD, 0, QGPU_CMD_DISCARD_LEN),
        size, size >> 32, addr, addr >> 32,
    };
    emit(g, 0, c, ARRAY_SIZE(c));
}

static void cmd_map_ap(QGPU *g, uint32_t first, uint32_t count, uint64_t list)
{
    uint32_t c[] = {
        QGPU_CMD_HDR(QGPU_CMD_MAP_APERTURE, 0, QGPU_CMD_MAP_APERTURE_LEN),
        first, count, list, list >> 32,
    };
    emit(g, 0, c, ARRAY_SIZE(c));
}

static void cmd_unmap_ap(QGPU *g, uint32_t first, uint32_t count)
{
    uint32_t c[] = {
        QGPU_CMD_HDR(QGPU_CMD_UNMAP_APERTURE, 0, QGPU_CMD_UNMAP_APERTURE_LEN),
        first, count,
    };
    emit(g, 0, c, ARRAY_SIZE(c));
}

static void cmd_exec(QGPU *g, uint32_t ctx, uint64_t buf, uint32_t start,
                     uint32_t end)
{
    uint32_t c[] = {
        QGPU_CMD_HDR(QGPU_CMD_EXEC, 0, QGPU_CMD_EXEC_LEN),
        ctx, buf, buf >> 32, start, end,
    };
    emit(g, 1, c, ARRAY_SIZE(c));
}

static void cmd_ctx_clear(QGPU *g, uint32_t ctx)
{
    uint32_t c[] = {
        QGPU_CMD_HDR(QGPU_CMD_CTX_CLEAR, 0, QGPU_CMD_CTX_CLEAR_LEN), ctx,
    };
    emit(g, 1, c, ARRAY_SIZE(c));
}

static void cmd_ctx_unbind(QGPU *g, int n, uint32_t ctx, uint32_t first,
                           uint32_t count)
{
    uint32_t c[] = {
        QGPU_CMD_HDR(QGPU_CMD_CTX_UNBIND, 0, QGPU_CMD_CTX_UNBIND_LEN),
        ctx, first, count,
    };
    emit(g, n, c, ARRAY_SIZE(c));
}

/* VRAM through BAR2 */
static uint32_t vram_rd(QGPU *g, uint64_t off)
{
    return qpci_io_readl(g->dev, g->bar2, off);
}

static void vram_wr(QGPU *g, uint64_t off, uint32_t v)
{
    qpci_io_writel(g->dev, g->bar2, off, v);
}

/* Fault queue: remove the oldest record */
static void fault_pop(QGPU *g)
{
    wr(g, QGPU_REG_FAULTQ_POP, 1);
}

/*
 * Pop every record but the newest, so that the fault registers show the
 * latest fault (what tests written for version 1.0 check).
 */
static void fault_latest(QGPU *g)
{
    int i;

    for (i = 0; i < QGPU_FAULTQ_DEPTH && rd(g, QGPU_REG_FAULTQ_COUNT) > 1;
         i++) {
        fault_pop(g);
    }
    g_assert_cmpuint(rd(g, QGPU_REG_FAULTQ_COUNT), <=, 1);
}

static bool ctx_faulted(QGPU *g, uint32_t ctx)
{
    wr(g, QGPU_REG_CTX_SEL, ctx);
    return rd(g, QGPU_REG_CTX_STATUS) & QGPU_CTX_STATUS_FAULTED;
}

/* The latest fault is @reason on engine @n, and @count were recorded. */
static void expect_fault(QGPU *g, int n, uint32_t reason, uint32_t count)
{
    fault_latest(g);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULTQ_COUNT), ==, 1);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_REASON), ==, reason);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_ENGINE), ==, n);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, count);
    g_assert_cmpuint(rd(g, QGPU_REG_INT_STATUS) & QGPU_INT_FAULT, ==,
                     QGPU_INT_FAULT);
}

static void engine_reset(QGPU *g, int n)
{
    ewr(g, n, QGPU_ENG_CTRL, QGPU_ENG_CTRL_RESET);
    g->tail[n] = 0;
    g_assert_cmpuint(erd(g, n, QGPU_ENG_RING_HEAD), ==, 0);
    g_assert_cmpuint(erd(g, n, QGPU_ENG_STATUS), ==, 0);
    g_assert_cmpuint(erd(g, n, QGPU_ENG_CTRL), ==, QGPU_ENG_CTRL_ENABLE);
    wr(g, QGPU_REG_INT_ACK, QGPU_INT_ALL);
}

/* ---- identity ---- */

static void check_identity(const char *props, uint64_t vram, uint64_t vis,
                           uint64_t hap, uint64_t gart, uint32_t slots,
                           uint32_t ctxs)
{
    QGPU *g = qgpu_start(props);
    uint32_t caps = rd(g, QGPU_REG_CAPS);

    g_assert_cmphex(qpci_config_readw(g->dev, PCI_VENDOR_ID), ==,
                    QGPU_PCI_VENDOR_ID);
    g_assert_cmphex(qpci_config_readw(g->dev, PCI_DEVICE_ID), ==,
                    QGPU_PCI_DEVICE_ID);
    g_assert_cmphex(qpci_config_readb(g->dev, PCI_REVISION_ID), ==,
                    QGPU_PCI_REVISION);
    g_assert_cmphex(qpci_config_readw(g->dev, PCI_CLASS_DEVICE), ==,
                    QGPU_PCI_CLASS);
    g_assert_cmphex(rd(g, QGPU_REG_ID), ==, QGPU_ID_MAGIC);
    g_assert_cmphex(rd(g, QGPU_REG_VERSION), ==,
                    (QGPU_VERSION_MAJOR << 16) | QGPU_VERSION_MINOR);
    g_assert_cmphex(caps & (QGPU_CAP_FENCE | QGPU_CAP_PAGING |
                            QGPU_CAP_RENDER | QGPU_CAP_CTX_SAVE), ==,
                    QGPU_CAP_FENCE | QGPU_CAP_PAGING | QGPU_CAP_RENDER |
                    QGPU_CAP_CTX_SAVE);
    g_assert_cmpuint(!!(caps & QGPU_CAP_HOST_APERTURE), ==, hap != 0);
    g_assert_cmpuint(!!(caps & QGPU_CAP_GART), ==, gart != 0);
    g_assert_cmpuint(rd64(g, QGPU_REG_VRAM_SIZE_LO), ==, vram);
    g_assert_cmpuint(rd64(g, QGPU_REG_VISIBLE_SIZE_LO), ==, vis);
    g_assert_cmpuint(rd64(g, QGPU_REG_HAP_SIZE_LO), ==, hap);
    g_assert_cmpuint(rd64(g, QGPU_REG_GART_SIZE_LO), ==, gart);
    g_assert_cmpuint(rd(g, QGPU_REG_NUM_ENGINES), ==, QGPU_NUM_ENGINES);
    g_assert_cmpuint(rd(g, QGPU_REG_MAX_SLOTS), ==, slots);
    g_assert_cmpuint(rd(g, QGPU_REG_MAX_CONTEXTS), ==, ctxs);
    g_assert_cmpuint(g->bar2_size, ==, vis);
    g_assert_cmpuint(g->bar4_size, ==, hap);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, 0);
    g_assert_cmpuint(rd(g, QGPU_REG_INT_STATUS), ==, 0);
    /* 1.4; 1.1: fault queue, empty */
    g_assert_cmphex(rd(g, QGPU_REG_VERSION), ==, 0x00010004);
    g_assert_cmphex(caps & QGPU_CAP_PING, ==, QGPU_CAP_PING);
    g_assert_cmphex(rd(g, QGPU_REG_PING_ACK), ==, 0);
    g_assert_cmphex(caps & QGPU_CAP_FAULT_QUEUE, ==, QGPU_CAP_FAULT_QUEUE);
    g_assert_cmphex(caps & QGPU_CAP_MMU, ==, QGPU_CAP_MMU);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULTQ_COUNT), ==, 0);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULTQ_LOST), ==, 0);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_REASON), ==, QGPU_FAULT_NONE);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_CONTEXT), ==, 0);
    g_assert_cmpuint(rd(g, QGPU_REG_CTX_SEL), ==, 0);
    g_assert_cmpuint(rd(g, QGPU_REG_CTX_STATUS), ==, 0);
    qgpu_stop(g);
}

static void test_identity(void)
{
    check_identity(NULL, 64 * MiB, 64 * MiB, 16 * MiB, 256 * MiB, 64, 64);
    check_identity("vram-size=32M,visible-vram-size=8M,host-aperture-size=0,"
                   "gart-size=1M,max-slots=16,max-contexts=8",
                   32 * MiB, 8 * MiB, 0, 1 * MiB, 16, 8);
    check_identity("vram-size=48M,host-aperture-size=1M,gart-size=0",
                   48 * MiB, 32 * MiB, 1 * MiB, 0, 64, 64);
}

/* Bad properties must be refused with an error, not an abort. */
static void test_bad_props(void)
{
    static const char *bad[] = {
        "vram-size=1000", "vram-size=2T", "visible-vram-size=3M",
        "visible-vram-size=128M", "host-aperture-size=3M",
        "host-aperture-size=1G", "gart-size=100", "max-slots=0",
        "max-contexts=100000", "max-slots=4096,max-contexts=4096",
        "doorbell-commands=257",
    };
    const char *bin = g_getenv("QTEST_QEMU_BINARY");
    g_autofree char *bios = qgpu_bios_dir();
    unsigned i;

    g_assert(bin);
    for (i = 0; i < ARRAY_SIZE(bad); i++) {
        g_autofree char *cmd = g_strdup_printf(
            "%s %s -machine none -nodefaults -display none "
            "-device qgpu,%s", bin, bios, bad[i]);
        g_autofree char *out = NULL, *err = NULL;
        int status;

        g_assert(g_spawn_command_line_sync(cmd, &out, &err, &status, NULL));
        g_assert_true(WIFEXITED(status));
        g_assert_cmpint(WEXITSTATUS(status), ==, 1);
        g_assert_nonnull(strstr(err, "qgpu"));
    }
}

/*
 * io-coherent (1.3): the property sets CAP_IO_COHERENT and nothing else.
 * The device reaches guest RAM the same way either way (hw-spec 16): a
 * FILL and a TRANSFER through system memory read back the same with the
 * bit clear.
 */
static void test_io_coherent(void)
{
    QGPU *on = qgpu_start(NULL);
    QGPU *off;
    uint32_t caps_on = rd(on, QGPU_REG_CAPS), caps_off;

    g_assert_cmphex(caps_on & QGPU_CAP_IO_COHERENT, ==, QGPU_CAP_IO_COHERENT);
    qgpu_stop(on);
    on = qgpu_start("io-coherent=on");
    g_assert_cmphex(rd(on, QGPU_REG_CAPS), ==, caps_on);
    qgpu_stop(on);

    off = qgpu_start("io-coherent=off");
    caps_off = rd(off, QGPU_REG_CAPS);
    g_assert_cmphex(caps_off, ==, caps_on & ~QGPU_CAP_IO_COHERENT);
    g_assert_cmphex(rd(off, QGPU_REG_VERSION) >> 16, ==, QGPU_VERSION_MAJOR);
    qtest_writel(off->qts, SYSBUF + 0x1000, 0x12345678);
    cmd_fill(off, 0x1000, SYS(SYSBUF), 0xc0c0c0c0, 0);
    cmd_transfer(off, 0x1000, SYS(SYSBUF), 0x2000, 0);
    run(off, 0);
    g_assert_cmphex(qtest_readl(off->qts, SYSBUF), ==, 0xc0c0c0c0);
    g_assert_cmphex(qtest_readl(off->qts, SYSBUF + 0xffc), ==, 0xc0c0c0c0);
    g_assert_cmphex(vram_rd(off, 0x2000), ==, 0xc0c0c0c0);
    g_assert_cmphex(vram_rd(off, 0x2ffc), ==, 0xc0c0c0c0);
    g_assert_cmphex(qtest_readl(off->qts, SYSBUF + 0x1000), ==, 0x12345678);
    g_assert_cmpuint(rd(off, QGPU_REG_FAULT_COUNT), ==, 0);
    qgpu_stop(off);
}

/* ---- registers ---- */

static void test_scratch(void)
{
    QGPU *g = qgpu_start(NULL);

    wr(g, QGPU_REG_SCRATCH, 0x12345678);
    g_assert_cmphex(rd(g, QGPU_REG_SCRATCH), ==, 0x12345678);
    wr(g, QGPU_REG_SCRATCH, 0xa5a5a5a5);
    g_assert_cmphex(rd(g, QGPU_REG_SCRATCH), ==, 0xa5a5a5a5);

    /* non-32-bit access: read 0, write ignored, BAD_REGISTER */
    g_assert_cmphex(qpci_io_readw(g->dev, g->bar0, QGPU_REG_SCRATCH), ==, 0);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_REASON), ==,
                     QGPU_FAULT_BAD_REGISTER);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_ENGINE), ==, 0xff);
    qpci_io_writeb(g->dev, g->bar0, QGPU_REG_SCRATCH, 0);
    g_assert_cmphex(rd(g, QGPU_REG_SCRATCH), ==, 0xa5a5a5a5);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, 2);
    /* write to a read-only register */
    wr(g, QGPU_REG_ID, 0);
    g_assert_cmphex(rd(g, QGPU_REG_ID), ==, QGPU_ID_MAGIC);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, 3);
    /* the queue holds all three, oldest first */
    g_assert_cmpuint(rd(g, QGPU_REG_FAULTQ_COUNT), ==, 3);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_ADDR_LO), ==, QGPU_REG_SCRATCH);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_OFFSET), ==, 2);
    fault_latest(g);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_ADDR_LO), ==, QGPU_REG_ID);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_OFFSET), ==, 4);
    g_assert_cmpuint(rd(g, QGPU_REG_INT_STATUS), ==, QGPU_INT_FAULT);
    /* unknown registers read 0 */
    g_assert_cmphex(rd(g, 0x800), ==, 0);
    g_assert_cmphex(rd(g, 0xfffc), ==, 0);

    /* reset clears scratch, status and the fault record, keeps count */
    wr(g, QGPU_REG_INT_MASK, QGPU_INT_ALL);
    g_assert_cmphex(rd(g, QGPU_REG_INT_MASK), ==, QGPU_INT_ALL);
    wr(g, QGPU_REG_RESET, 1);
    g_assert_cmphex(rd(g, QGPU_REG_SCRATCH), ==, 0);
    g_assert_cmphex(rd(g, QGPU_REG_INT_STATUS), ==, 0);
    g_assert_cmphex(rd(g, QGPU_REG_INT_MASK), ==, 0);
    g_assert_cmphex(rd(g, QGPU_REG_FAULT_REASON), ==, 0);
    g_assert_cmphex(rd(g, QGPU_REG_FAULT_ADDR_LO), ==, 0);
    g_assert_cmphex(rd(g, QGPU_REG_FAULTQ_COUNT), ==, 0);
    g_assert_cmphex(rd(g, QGPU_REG_FAULT_COUNT), ==, 3);
    g_assert_cmphex(erd(g, 0, QGPU_ENG_CTRL), ==, 0);
    g_assert_cmphex(erd(g, 0, QGPU_ENG_RING_SIZE), ==, 0);
    qgpu_stop(g);
}

/* ---- rings, fences, interrupts ---- */

/*
 * CTRL.STALL: an engine executes nothing while it is set (a hang, for the
 * driver's timeout to find), neither from the doorbell nor from the
 * device thread; clearing it resumes, and an engine reset clears it.
 */
static void test_engine_stall(void)
{
    QGPU *g = qgpu_start(NULL);
    uint32_t on = QGPU_ENG_CTRL_ENABLE | QGPU_ENG_CTRL_STALL;
    int n;

    for (n = 0; n < 2; n++) {
        uint64_t cmds = rd64(g, QGPU_ENGINE_BASE(n) + QGPU_ENG_CMDS_LO);

        qtest_writeq(g->qts, FENCE_MEM, 0);
        ewr(g, n, QGPU_ENG_CTRL, on);
        g_assert_cmphex(erd(g, n, QGPU_ENG_CTRL), ==, on);
        cmd_nop(g, n, 1);
        cmd_fence(g, n, SYS(FENCE_MEM), 7, false);
        kick(g, n);
        g_usleep(50 * 1000);
        g_assert_cmphex(erd(g, n, QGPU_ENG_STATUS), ==, QGPU_ENG_STATUS_BUSY);
        g_assert_cmpuint(erd(g, n, QGPU_ENG_RING_HEAD), ==, 0);
        g_assert_cmpuint(rd64(g, QGPU_ENGINE_BASE(n) + QGPU_ENG_CMDS_LO), ==,
                         cmds);
        g_assert_cmphex(qtest_readq(g->qts, FENCE_MEM), ==, 0);
        /* resumed */
        ewr(g, n, QGPU_ENG_CTRL, QGPU_ENG_CTRL_ENABLE);
        g_assert_cmphex(erd(g, n, QGPU_ENG_CTRL), ==, QGPU_ENG_CTRL_ENABLE);
        wait_idle(g, n);
        g_assert_cmphex(qtest_readq(g->qts, FENCE_MEM), ==, 7);
        g_assert_cmpuint(rd64(g, QGPU_ENGINE_BASE(n) + QGPU_ENG_CMDS_LO), ==,
                         cmds + 2);
        /* stalled with work pending, then reset: nothing of it runs */
        qtest_writeq(g->qts, FENCE_MEM, 0);
        ewr(g, n, QGPU_ENG_CTRL, on);
        cmd_fence(g, n, SYS(FENCE_MEM), 9, false);
        kick(g, n);
        engine_reset(g, n);
        g_usleep(20 * 1000);
        g_assert_cmphex(qtest_readq(g->qts, FENCE_MEM), ==, 0);
        g_assert_cmpuint(rd64(g, QGPU_ENGINE_BASE(n) + QGPU_ENG_CMDS_LO), ==,
                         cmds + 2);
    }
    g_assert_cmpuint(rd(g, QGPU_REG_FAULTQ_COUNT), ==, 0);
    qgpu_stop(g);
}

static void test_fence_irq(void)
{
    QGPU *g = qgpu_start(NULL);
    uint64_t cycles0 = rd64(g, QGPU_REG_CYCLES_LO);

    qtest_writeq(g->qts, FENCE_MEM, 0);
    cmd_nop(g, 0, 1);
    cmd_nop(g, 0, 4);
    cmd_fence(g, 0, SYS(FENCE_MEM), 0x1122334455667788ull, true);
    run(g, 0);
    g_assert_cmphex(qtest_readq(g->qts, FENCE_MEM), ==,
                    0x1122334455667788ull);
    g_assert_cmpuint(erd(g, 0, QGPU_ENG_RING_HEAD), ==, g->tail[0]);
    g_assert_cmpuint(rd64(g, QGPU_ENGINE_BASE(0) + QGPU_ENG_CMDS_LO), ==, 3);
    g_assert_cmpuint(rd64(g, QGPU_REG_CYCLES_LO), ==, cycles0 + 3);
    g_assert_cmphex(rd(g, QGPU_REG_INT_STATUS), ==, QGPU_INT_ENGINE(0));

    /* masked: no INTx; unmasked: INTx asserted; ack: deasserted */
    g_assert_false(qpci_config_readw(g->dev, PCI_STATUS) &
                   PCI_STATUS_INTERRUPT);
    wr(g, QGPU_REG_INT_MASK, QGPU_INT_ALL);
    g_assert_true(qpci_config_readw(g->dev, PCI_STATUS) &
                  PCI_STATUS_INTERRUPT);
    wr(g, QGPU_REG_INT_ACK, QGPU_INT_ENGINE(0));
    g_assert_cmphex(rd(g, QGPU_REG_INT_STATUS), ==, 0);
    g_assert_false(qpci_config_readw(g->dev, PCI_STATUS) &
                   PCI_STATUS_INTERRUPT);

    /* fence without IRQ flag on the render engine, then with */
    cmd_fence(g, 1, SYS(FENCE_MEM + 8), 7, false);
    run(g, 1);
    g_assert_cmpuint(qtest_readq(g->qts, FENCE_MEM + 8), ==, 7);
    g_assert_cmphex(rd(g, QGPU_REG_INT_STATUS), ==, 0);
    cmd_fence(g, 1, 0x1000, 8, true);        /* fence into VRAM */
    run(g, 1);
    g_assert_cmpuint(vram_rd(g, 0x1000), ==, 8);
    g_assert_cmphex(rd(g, QGPU_REG_INT_STATUS), ==, QGPU_INT_ENGINE(1));
    g_assert_true(qpci_config_readw(g->dev, PCI_STATUS) &
                  PCI_STATUS_INTERRUPT);
    wr(g, QGPU_REG_INT_ACK, 0xffffffff);
    g_assert_false(qpci_config_readw(g->dev, PCI_STATUS) &
                   PCI_STATUS_INTERRUPT);
    qgpu_stop(g);
}

/* MSI: a message (here: a write into guest RAM) per newly pending event */
static void test_msi(void)
{
    QGPU *g = qgpu_start(NULL);
    uint8_t cap = qpci_find_capability(g->dev, PCI_CAP_ID_MSI, 0);
    uint64_t msg = FENCE_MEM + 0x100;
    uint16_t ctrl;

    g_assert_cmpuint(cap, !=, 0);
    ctrl = qpci_config_readw(g->dev, cap + PCI_MSI_FLAGS);
    g_assert_true(ctrl & PCI_MSI_FLAGS_64BIT);
    qpci_config_writel(g->dev, cap + PCI_MSI_ADDRESS_LO, msg);
    qpci_config_writel(g->dev, cap + PCI_MSI_ADDRESS_HI, 0);
    qpci_config_writew(g->dev, cap + PCI_MSI_DATA_64, 0x4321);
    qpci_config_writew(g->dev, cap + PCI_MSI_FLAGS,
                       ctrl | PCI_MSI_FLAGS_ENABLE);

    qtest_writel(g->qts, msg, 0);
    wr(g, QGPU_REG_INT_MASK, QGPU_INT_ENGINE(0));
    cmd_fence(g, 0, SYS(FENCE_MEM), 1, true);
    run(g, 0);
    g_assert_cmphex(qtest_readl(g->qts, msg), ==, 0x4321);
    /* INTx stays deasserted with MSI */
    g_assert_false(qpci_config_readw(g->dev, PCI_STATUS) &
                   PCI_STATUS_INTERRUPT);
    /* still pending: no new message */
    qtest_writel(g->qts, msg, 0);
    cmd_fence(g, 0, SYS(FENCE_MEM), 2, true);
    run(g, 0);
    g_assert_cmphex(qtest_readl(g->qts, msg), ==, 0);
    /* masked event: no message; unmasking it sends one */
    cmd_fence(g, 1, SYS(FENCE_MEM), 3, true);
    run(g, 1);
    g_assert_cmphex(qtest_readl(g->qts, msg), ==, 0);
    wr(g, QGPU_REG_INT_MASK, QGPU_INT_ALL);
    g_assert_cmphex(qtest_readl(g->qts, msg), ==, 0x4321);
    /* acknowledged, then a new event: a new message */
    wr(g, QGPU_REG_INT_ACK, QGPU_INT_ALL);
    qtest_writel(g->qts, msg, 0);
    cmd_fence(g, 0, SYS(FENCE_MEM), 4, true);
    run(g, 0);
    g_assert_cmphex(qtest_readl(g->qts, msg), ==, 0x4321);

    /* a message aimed at the device's own registers is refused */
    wr(g, QGPU_REG_INT_ACK, QGPU_INT_ALL);
    qpci_config_writel(g->dev, cap + PCI_MSI_ADDRESS_LO,
                       g->bar0.addr + QGPU_REG_RESET);
    qpci_config_writew(g->dev, cap + PCI_MSI_DATA_64, 1);
    wr(g, QGPU_REG_SCRATCH, 5);
    cmd_fence(g, 0, SYS(FENCE_MEM), 5, true);
    run(g, 0);
    g_assert_cmphex(rd(g, QGPU_REG_SCRATCH), ==, 5);
    g_assert_cmphex(erd(g, 0, QGPU_ENG_CTRL), ==, QGPU_ENG_CTRL_ENABLE);
    qpci_config_writel(g->dev, cap + PCI_MSI_ADDRESS_LO,
                       g->bar0.addr + QGPU_REG_INT_MASK);
    qpci_config_writew(g->dev, cap + PCI_MSI_DATA_64, 0);
    wr(g, QGPU_REG_INT_ACK, QGPU_INT_ALL);
    wr(g, QGPU_REG_INT_MASK, 0);
    wr(g, QGPU_REG_INT_ACK, 0);
    cmd_fence(g, 0, SYS(FENCE_MEM), 6, true);
    run(g, 0);
    wr(g, QGPU_REG_INT_MASK, QGPU_INT_ALL);     /* from a register write */
    g_assert_cmphex(rd(g, QGPU_REG_INT_MASK), ==, QGPU_INT_ALL);
    g_assert_cmpuint(qtest_readq(g->qts, FENCE_MEM), ==, 6);
    qgpu_stop(g);
}

/*
 * PING (1.4): answered inside the write (no engine, no run()): PING_ACK
 * holds the value and INT_PING is latched, masked or not; the mask decides
 * INTx and MSI as for any event. PING reads 0, PING_ACK is read-only,
 * reset clears both.
 */
/*
 * A doorbell on an idle engine runs a small submission inside the register
 * write (hw-spec section 12): the FENCE is written and its interrupt
 * latched when the write returns. A large command is left to the device
 * thread, and a doorbell on a busy engine never runs ahead of the work in
 * progress: everything still completes in ring order.
 */
static void test_doorbell(void)
{
    QGPU *g = qgpu_start(NULL);
    int i;

    qtest_writeq(g->qts, FENCE_MEM, 0);
    cmd_nop(g, 1, 2);
    cmd_fence(g, 1, SYS(FENCE_MEM), 0xd00bu, true);
    kick(g, 1);
    /* no wait, no clock step */
    g_assert_cmphex(qtest_readq(g->qts, FENCE_MEM), ==, 0xd00bu);
    g_assert_cmpuint(erd(g, 1, QGPU_ENG_RING_HEAD), ==, g->tail[1]);
    g_assert_cmphex(rd(g, QGPU_REG_INT_STATUS) & QGPU_INT_ENGINE(1), ==,
                    QGPU_INT_ENGINE(1));
    wr(g, QGPU_REG_INT_ACK, 0xffffffff);

    /* 8 MiB to fill is beyond a doorbell's budget: the thread finishes */
    cmd_fill(g, 8 * MiB, 0, 0x12345678, 0);
    cmd_fence(g, 0, SYS(FENCE_MEM + 8), 1, true);
    kick(g, 0);
    /* busy: this doorbell leaves the new commands behind the fill */
    cmd_fill(g, 4096, 8 * MiB - 4096, 0x9abcdef0, 0);
    cmd_fence(g, 0, SYS(FENCE_MEM + 8), 2, true);
    kick(g, 0);
    wait_idle(g, 0);
    g_assert_cmpuint(qtest_readq(g->qts, FENCE_MEM + 8), ==, 2);
    g_assert_cmphex(vram_rd(g, 0), ==, 0x12345678);
    g_assert_cmphex(vram_rd(g, 4 * MiB), ==, 0x12345678);
    g_assert_cmphex(vram_rd(g, 8 * MiB - 4096), ==, 0x9abcdef0);
    g_assert_cmphex(vram_rd(g, 8 * MiB - 4), ==, 0x9abcdef0);
    g_assert_cmpuint(rd64(g, QGPU_ENGINE_BASE(0) + QGPU_ENG_CMDS_LO), ==, 4);

    /* many doorbells in a row, each on an idle engine */
    for (i = 1; i <= 100; i++) {
        cmd_fence(g, 1, SYS(FENCE_MEM + 16), i, false);
        kick(g, 1);
        g_assert_cmpuint(qtest_readq(g->qts, FENCE_MEM + 16), ==, i);
    }
    qgpu_stop(g);

    /* doorbell-commands=0: every doorbell goes to the thread, same result */
    g = qgpu_start("doorbell-commands=0");
    qtest_writeq(g->qts, FENCE_MEM, 0);
    cmd_nop(g, 1, 2);
    cmd_fence(g, 1, SYS(FENCE_MEM), 0xd00cu, true);
    run(g, 1);
    g_assert_cmphex(qtest_readq(g->qts, FENCE_MEM), ==, 0xd00cu);
    g_assert_cmpuint(rd64(g, QGPU_ENGINE_BASE(1) + QGPU_ENG_CMDS_LO), ==, 2);
    qgpu_stop(g);
}

/*
 * A hostile guest aims the commands a doorbell runs in the register write
 * at the device's own registers: a FENCE into RING_TAIL (either engine),
 * CTRL, RESET or PING. The device refuses the access (DMA_ERROR, the ring
 * halts at the FENCE); nothing recurses, nothing else changes, and the
 * engine works again after a reset.
 */
static void test_doorbell_reentry(void)
{
    static const uint32_t regs[] = {
        QGPU_ENGINE_BASE(0) + QGPU_ENG_RING_TAIL,
        QGPU_ENGINE_BASE(1) + QGPU_ENG_RING_TAIL,
        QGPU_ENGINE_BASE(1) + QGPU_ENG_CTRL,
        QGPU_REG_RESET,
        QGPU_REG_PING,
    };
    QGPU *g = qgpu_start(NULL);
    uint32_t faults = 0;
    unsigned i;
    int n;

    for (i = 0; i < ARRAY_SIZE(regs); i++) {
        for (n = 0; n < 2; n++) {
            uint64_t cmds = rd64(g, QGPU_ENGINE_BASE(n) + QGPU_ENG_CMDS_LO);
            /* RING_TAIL 0x40, CTRL: RESET, RESET: 1, PING: 0x40 */
            uint64_t v = regs[i] == QGPU_REG_RESET ? 1 :
                         (regs[i] & 0xff) == QGPU_ENG_CTRL ?
                         QGPU_ENG_CTRL_RESET : 0x40;

            qtest_writeq(g->qts, FENCE_MEM, 0);
            wr(g, QGPU_REG_SCRATCH, 0x5c5c);
            cmd_nop(g, n, 1);
            /* a fence is 8-byte aligned: the register in either half */
            cmd_fence(g, n, SYS(g->bar0.addr + (regs[i] & ~7u)),
                      v << (8 * (regs[i] & 7)), true);
            cmd_fence(g, n, SYS(FENCE_MEM), 7, false);
            kick(g, n);
            wait_idle(g, n);
            g_assert_cmphex(erd(g, n, QGPU_ENG_STATUS), ==,
                            QGPU_ENG_STATUS_HALTED);
            expect_fault(g, n, QGPU_FAULT_DMA_ERROR, ++faults);
            fault_pop(g);
            /* the NOP ran, the FENCE after the refused one did not */
            g_assert_cmpuint(rd64(g, QGPU_ENGINE_BASE(n) +
                                  QGPU_ENG_CMDS_LO), ==, cmds + 1);
            g_assert_cmpuint(qtest_readq(g->qts, FENCE_MEM), ==, 0);
            g_assert_cmphex(rd(g, QGPU_REG_SCRATCH), ==, 0x5c5c);
            g_assert_cmphex(rd(g, QGPU_REG_PING_ACK), ==, 0);
            g_assert_cmphex(erd(g, 0, QGPU_ENG_CTRL), ==,
                            QGPU_ENG_CTRL_ENABLE);
            g_assert_cmphex(erd(g, 1, QGPU_ENG_CTRL), ==,
                            QGPU_ENG_CTRL_ENABLE);
            g_assert_cmpuint(erd(g, !n, QGPU_ENG_RING_TAIL), ==, g->tail[!n]);
            g_assert_cmphex(rd(g, QGPU_REG_INT_STATUS) & QGPU_INT_ENGINE(n),
                            ==, 0);
            engine_reset(g, n);
            cmd_fence(g, n, SYS(FENCE_MEM), 8, true);
            kick(g, n);
            wait_idle(g, n);
            g_assert_cmpuint(qtest_readq(g->qts, FENCE_MEM), ==, 8);
            wr(g, QGPU_REG_INT_ACK, QGPU_INT_ALL);
        }
    }
    qgpu_stop(g);
}

static void test_ping(void)
{
    QGPU *g = qgpu_start(NULL);
    uint8_t cap = qpci_find_capability(g->dev, PCI_CAP_ID_MSI, 0);
    uint64_t msg = FENCE_MEM + 0x100;
    uint16_t ctrl;

    g_assert_cmphex(rd(g, QGPU_REG_CAPS) & QGPU_CAP_PING, ==, QGPU_CAP_PING);
    g_assert_cmphex(rd(g, QGPU_REG_PING_ACK), ==, 0);

    /* masked: latched, no INTx */
    wr(g, QGPU_REG_PING, 0x12345678);
    g_assert_cmphex(rd(g, QGPU_REG_PING_ACK), ==, 0x12345678);
    g_assert_cmphex(rd(g, QGPU_REG_INT_STATUS), ==, QGPU_INT_PING);
    g_assert_cmphex(rd(g, QGPU_REG_PING), ==, 0);       /* write-only */
    g_assert_false(qpci_config_readw(g->dev, PCI_STATUS) &
                   PCI_STATUS_INTERRUPT);
    /* unmasked: INTx asserted until acknowledged */
    wr(g, QGPU_REG_INT_MASK, QGPU_INT_PING);
    g_assert_cmphex(rd(g, QGPU_REG_INT_MASK), ==, QGPU_INT_PING);
    g_assert_true(qpci_config_readw(g->dev, PCI_STATUS) &
                  PCI_STATUS_INTERRUPT);
    wr(g, QGPU_REG_INT_ACK, QGPU_INT_PING);
    g_assert_cmphex(rd(g, QGPU_REG_INT_STATUS), ==, 0);
    g_assert_false(qpci_config_readw(g->dev, PCI_STATUS) &
                   PCI_STATUS_INTERRUPT);
    g_assert_cmphex(rd(g, QGPU_REG_PING_ACK), ==, 0x12345678);
    /* each write answered, 0 and ~0 included; only the last is kept */
    wr(g, QGPU_REG_PING, 0);
    g_assert_cmphex(rd(g, QGPU_REG_PING_ACK), ==, 0);
    g_assert_true(qpci_config_readw(g->dev, PCI_STATUS) &
                  PCI_STATUS_INTERRUPT);
    wr(g, QGPU_REG_PING, 0xffffffff);
    wr(g, QGPU_REG_PING, 7);
    g_assert_cmphex(rd(g, QGPU_REG_PING_ACK), ==, 7);
    wr(g, QGPU_REG_INT_ACK, QGPU_INT_ALL);
    /* the engines' and the fault's bits are not touched */
    wr(g, QGPU_REG_INT_MASK, QGPU_INT_ALL & ~QGPU_INT_PING);
    wr(g, QGPU_REG_PING, 8);
    g_assert_cmphex(rd(g, QGPU_REG_INT_STATUS), ==, QGPU_INT_PING);
    g_assert_false(qpci_config_readw(g->dev, PCI_STATUS) &
                   PCI_STATUS_INTERRUPT);
    wr(g, QGPU_REG_INT_ACK, QGPU_INT_ALL);

    /* MSI: one message per answer that was not pending, none masked */
    ctrl = qpci_config_readw(g->dev, cap + PCI_MSI_FLAGS);
    qpci_config_writel(g->dev, cap + PCI_MSI_ADDRESS_LO, msg);
    qpci_config_writel(g->dev, cap + PCI_MSI_ADDRESS_HI, 0);
    qpci_config_writew(g->dev, cap + PCI_MSI_DATA_64, 0x4321);
    qpci_config_writew(g->dev, cap + PCI_MSI_FLAGS,
                       ctrl | PCI_MSI_FLAGS_ENABLE);
    qtest_writel(g->qts, msg, 0);
    wr(g, QGPU_REG_INT_MASK, QGPU_INT_ALL & ~QGPU_INT_PING);
    wr(g, QGPU_REG_PING, 9);
    g_assert_cmphex(qtest_readl(g->qts, msg), ==, 0);
    wr(g, QGPU_REG_INT_ACK, QGPU_INT_PING);
    wr(g, QGPU_REG_INT_MASK, QGPU_INT_ALL);
    wr(g, QGPU_REG_PING, 10);
    g_assert_cmphex(qtest_readl(g->qts, msg), ==, 0x4321);
    qtest_writel(g->qts, msg, 0);
    wr(g, QGPU_REG_PING, 11);                   /* still pending */
    g_assert_cmphex(qtest_readl(g->qts, msg), ==, 0);
    wr(g, QGPU_REG_INT_ACK, QGPU_INT_PING);
    wr(g, QGPU_REG_PING, 12);
    g_assert_cmphex(qtest_readl(g->qts, msg), ==, 0x4321);
    g_assert_cmphex(rd(g, QGPU_REG_PING_ACK), ==, 12);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, 0);

    /* PING_ACK is read-only; a narrow PING is a bad access, unanswered */
    wr(g, QGPU_REG_INT_ACK, QGPU_INT_ALL);
    wr(g, QGPU_REG_PING_ACK, 5);
    g_assert_cmphex(rd(g, QGPU_REG_PING_ACK), ==, 12);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, 1);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_REASON), ==,
                     QGPU_FAULT_BAD_REGISTER);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_ADDR_LO), ==, QGPU_REG_PING_ACK);
    qpci_io_writew(g->dev, g->bar0, QGPU_REG_PING, 13);
    g_assert_cmphex(rd(g, QGPU_REG_PING_ACK), ==, 12);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, 2);
    g_assert_cmphex(rd(g, QGPU_REG_INT_STATUS) & QGPU_INT_PING, ==, 0);

    /* reset clears the answer */
    wr(g, QGPU_REG_RESET, 1);
    g_assert_cmphex(rd(g, QGPU_REG_PING_ACK), ==, 0);
    g_assert_cmphex(rd(g, QGPU_REG_INT_STATUS), ==, 0);
    qgpu_stop(g);
}

static void test_many_fences(void)
{
    QGPU *g = qgpu_start(NULL);
    uint64_t i;

    /* a 4 KiB ring: 1000 fences wrap around it several times */
    qgpu_ring_init(g, 1, RING1, 0x1000);
    for (i = 1; i <= 1000; i++) {
        cmd_fence(g, 1, SYS(FENCE_MEM), i, (i % 100) == 0);
        if (i % 100 == 0) {
            run(g, 1);
            g_assert_cmpuint(qtest_readq(g->qts, FENCE_MEM), ==, i);
        }
    }
    g_assert_cmpuint(rd64(g, QGPU_ENGINE_BASE(1) + QGPU_ENG_CMDS_LO), ==,
                     1000);
    g_assert_cmpuint(erd(g, 1, QGPU_ENG_RING_HEAD), ==, (1000 * 20) % 0x1000);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, 0);
    qgpu_stop(g);
}

static void test_ring_faults(void)
{
    QGPU *g = qgpu_start(NULL);
    uint32_t c[8];
    uint32_t faults = 0;
    uint32_t off;

    /* unknown opcode after a good fence */
    cmd_fence(g, 0, SYS(FENCE_MEM), 1, false);
    off = g->tail[0];
    c[0] = QGPU_CMD_HDR(0x77, 0, 1);
    emit(g, 0, c, 1);
    cmd_fence(g, 0, SYS(FENCE_MEM), 2, false);
    run(g, 0);
    expect_fault(g, 0, QGPU_FAULT_BAD_OPCODE, ++faults);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_OFFSET), ==, off);
    g_assert_cmpuint(erd(g, 0, QGPU_ENG_RING_HEAD), ==, off);
    g_assert_cmphex(erd(g, 0, QGPU_ENG_STATUS), ==, QGPU_ENG_STATUS_HALTED);
    g_assert_cmpuint(qtest_readq(g->qts, FENCE_MEM), ==, 1);
    /* halted: more doorbells do nothing */
    kick(g, 0);
    g_assert_cmpuint(erd(g, 0, QGPU_ENG_RING_HEAD), ==, off);
    engine_reset(g, 0);
    cmd_fence(g, 0, SYS(FENCE_MEM), 3, false);
    run(g, 0);
    g_assert_cmpuint(qtest_readq(g->qts, FENCE_MEM), ==, 3);

    /* bad lengths: 0, shorter than the command, beyond TAIL */
    c[0] = QGPU_CMD_HDR(QGPU_CMD_NOP, 0, 0);
    emit(g, 0, c, 1);
    run(g, 0);
    expect_fault(g, 0, QGPU_FAULT_BAD_LENGTH, ++faults);
    engine_reset(g, 0);
    c[0] = QGPU_CMD_HDR(QGPU_CMD_FENCE, 0, 3);
    c[1] = c[2] = 0;
    emit(g, 0, c, 3);
    run(g, 0);
    expect_fault(g, 0, QGPU_FAULT_BAD_LENGTH, ++faults);
    engine_reset(g, 0);
    c[0] = QGPU_CMD_HDR(QGPU_CMD_NOP, 0, 100);
    emit(g, 0, c, 1);
    run(g, 0);
    expect_fault(g, 0, QGPU_FAULT_BAD_LENGTH, ++faults);
    engine_reset(g, 0);
    c[0] = QGPU_CMD_HDR(QGPU_CMD_NOP, 0, 0xffff);
    emit(g, 0, c, 1);
    run(g, 0);
    expect_fault(g, 0, QGPU_FAULT_BAD_LENGTH, ++faults);
    engine_reset(g, 0);

    /* bad address: hole between VRAM and GART, and across VRAM's end */
    cmd_fence(g, 0, 0x10000000000ull - 8, 1, false);
    run(g, 0);
    expect_fault(g, 0, QGPU_FAULT_BAD_ADDRESS, ++faults);
    g_assert_cmphex(rd64(g, QGPU_REG_FAULT_ADDR_LO), ==,
                    0x10000000000ull - 8);
    engine_reset(g, 0);
    cmd_fence(g, 1, UINT64_MAX - 7, 1, false);     /* sys, last 8 bytes */
    run(g, 1);
    fault_latest(g);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_REASON), ==, QGPU_FAULT_DMA_ERROR);
    ++faults;
    engine_reset(g, 1);

    /* misaligned fence */
    cmd_fence(g, 1, SYS(FENCE_MEM + 4), 1, false);
    run(g, 1);
    expect_fault(g, 1, QGPU_FAULT_BAD_ALIGN, ++faults);
    g_assert_cmphex(erd(g, 1, QGPU_ENG_STATUS), ==, QGPU_ENG_STATUS_HALTED);
    engine_reset(g, 1);

    /* paging command on the render engine, EXEC on the paging engine */
    c[0] = QGPU_CMD_HDR(QGPU_CMD_UNMAP_APERTURE, 0, 3);
    c[1] = c[2] = 0;
    emit(g, 1, c, 3);
    run(g, 1);
    expect_fault(g, 1, QGPU_FAULT_BAD_OPCODE, ++faults);
    engine_reset(g, 1);
    c[0] = QGPU_CMD_HDR(QGPU_CMD_CTX_CLEAR, 0, 2);
    emit(g, 0, c, 2);
    run(g, 0);
    expect_fault(g, 0, QGPU_FAULT_BAD_OPCODE, ++faults);
    engine_reset(g, 0);

    /* bad ring config at enable: engine stays disabled */
    ewr(g, 0, QGPU_ENG_CTRL, 0);
    ewr(g, 0, QGPU_ENG_RING_BASE_LO, RING0 + 0x10);
    ewr(g, 0, QGPU_ENG_CTRL, QGPU_ENG_CTRL_ENABLE);
    expect_fault(g, 0, QGPU_FAULT_BAD_RING, ++faults);
    g_assert_cmpuint(erd(g, 0, QGPU_ENG_CTRL), ==, 0);
    ewr(g, 0, QGPU_ENG_RING_BASE_LO, RING0);
    ewr(g, 0, QGPU_ENG_RING_SIZE, 0x3000);
    ewr(g, 0, QGPU_ENG_CTRL, QGPU_ENG_CTRL_ENABLE);
    expect_fault(g, 0, QGPU_FAULT_BAD_RING, ++faults);
    g_assert_cmpuint(erd(g, 0, QGPU_ENG_CTRL), ==, 0);
    /* TAIL beyond the ring */
    qgpu_ring_init(g, 0, RING0, RING_SIZE);
    ewr(g, 0, QGPU_ENG_RING_TAIL, RING_SIZE);
    expect_fault(g, 0, QGPU_FAULT_BAD_RING, ++faults);
    g_assert_cmpuint(erd(g, 0, QGPU_ENG_RING_TAIL), ==, 0);

    /* and everything still works */
    wr(g, QGPU_REG_INT_ACK, QGPU_INT_ALL);
    cmd_fence(g, 0, SYS(FENCE_MEM), 99, true);
    run(g, 0);
    g_assert_cmpuint(qtest_readq(g->qts, FENCE_MEM), ==, 99);
    g_assert_cmphex(rd(g, QGPU_REG_INT_STATUS), ==, QGPU_INT_ENGINE(0));
    qgpu_stop(g);
}

/* ---- paging engine ---- */

static void fill_sys(QGPU *g, uint64_t addr, size_t len, uint32_t seed)
{
    g_autofree uint8_t *buf = g_malloc(len);
    size_t i;

    for (i = 0; i < len; i++) {
        buf[i] = (uint8_t)(i * 7 + seed + (i >> 8));
    }
    qtest_memwrite(g->qts, addr, buf, len);
}

static void check_sys(QGPU *g, uint64_t addr, size_t len, uint32_t seed)
{
    g_autofree uint8_t *buf = g_malloc(len);
    size_t i;

    qtest_memread(g->qts, addr, buf, len);
    for (i = 0; i < len; i++) {
        if (buf[i] != (uint8_t)(i * 7 + seed + (i >> 8))) {
            g_test_message("mismatch at %zu: %x", i, buf[i]);
            g_assert_not_reached();
        }
    }
}

static void check_vram(QGPU *g, uint64_t off, size_t len, uint32_t seed)
{
    g_autofree uint8_t *buf = g_malloc(len);
    size_t i;

    qpci_memread(g->dev, g->bar2, off, buf, len);
    for (i = 0; i < len; i++) {
        if (buf[i] != (uint8_t)(i * 7 + seed + (i >> 8))) {
            g_test_message("vram mismatch at %zu: %x", i, buf[i]);
            g_assert_not_reached();
        }
    }
}

static void test_transfer(void)
{
    QGPU *g = qgpu_start(NULL);
    uint64_t bytes0;
    int i;

    /* system -> VRAM, odd size and offsets */
    fill_sys(g, SYSBUF, 20000, 1);
    cmd_transfer(g, 20000, SYS(SYSBUF), 0x10003, 0);
    run(g, 0);
    check_vram(g, 0x10003, 20000, 1);
    g_assert_cmpuint(rd64(g, QGPU_ENGINE_BASE(0) + QGPU_ENG_BYTES_LO), ==,
                     20000);

    /* VRAM -> VRAM */
    cmd_transfer(g, 20000, 0x10003, 0x200001, 0);
    /* VRAM -> system */
    cmd_transfer(g, 20000, 0x200001, SYS(SYSBUF2 + 5), 0);
    run(g, 0);
    check_vram(g, 0x200001, 20000, 1);
    check_sys(g, SYSBUF2 + 5, 20000, 1);
    /* system -> system */
    qtest_memset(g->qts, SYSBUF2, 0, 0x8000);
    cmd_transfer(g, 20000, SYS(SYSBUF), SYS(SYSBUF2), 0);
    run(g, 0);
    check_sys(g, SYSBUF2, 20000, 1);

    /* page lists: scatter 4 system pages (reverse order) into VRAM pages */
    fill_sys(g, SYSBUF, 4 * 4096, 2);
    for (i = 0; i < 4; i++) {
        qtest_writeq(g->qts, PAGELIST + i * 8, SYS(SYSBUF + i * 4096));
        qtest_writeq(g->qts, PAGELIST2 + i * 8, 0x300000 + (3 - i) * 4096);
    }
    bytes0 = rd64(g, QGPU_ENGINE_BASE(0) + QGPU_ENG_BYTES_LO);
    cmd_transfer(g, 4 * 4096, SYS(PAGELIST), SYS(PAGELIST2),
                 QGPU_XFER_SRC_PAGELIST | QGPU_XFER_DST_PAGELIST);
    run(g, 0);
    for (i = 0; i < 4; i++) {
        g_autofree uint8_t *want = g_malloc(4096);
        g_autofree uint8_t *got = g_malloc(4096);

        qtest_memread(g->qts, SYSBUF + i * 4096, want, 4096);
        qpci_memread(g->dev, g->bar2, 0x300000 + (3 - i) * 4096, got, 4096);
        g_assert_cmpmem(want, 4096, got, 4096);
    }
    g_assert_cmpuint(rd64(g, QGPU_ENGINE_BASE(0) + QGPU_ENG_BYTES_LO), ==,
                     bytes0 + 4 * 4096);
    /* VRAM (linear) -> page list of system pages */
    qtest_memset(g->qts, SYSBUF2, 0, 4 * 4096);
    for (i = 0; i < 4; i++) {
        qtest_writeq(g->qts, PAGELIST + i * 8, SYS(SYSBUF2 + i * 4096));
    }
    cmd_transfer(g, 4 * 4096, 0x300000, SYS(PAGELIST),
                 QGPU_XFER_DST_PAGELIST);
    run(g, 0);
    {
        g_autofree uint8_t *want = g_malloc(4 * 4096);
        g_autofree uint8_t *got = g_malloc(4 * 4096);

        qpci_memread(g->dev, g->bar2, 0x300000, want, 4 * 4096);
        qtest_memread(g->qts, SYSBUF2, got, 4 * 4096);
        g_assert_cmpmem(want, 4 * 4096, got, 4 * 4096);
    }
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, 0);

    /* page-list faults: size not page multiple, misaligned entry */
    cmd_transfer(g, 4096 + 4, SYS(PAGELIST), 0, QGPU_XFER_SRC_PAGELIST);
    run(g, 0);
    expect_fault(g, 0, QGPU_FAULT_BAD_ALIGN, 1);
    engine_reset(g, 0);
    qtest_writeq(g->qts, PAGELIST, SYS(SYSBUF + 8));
    cmd_transfer(g, 4096, SYS(PAGELIST), 0, QGPU_XFER_SRC_PAGELIST);
    run(g, 0);
    expect_fault(g, 0, QGPU_FAULT_BAD_ALIGN, 2);
    engine_reset(g, 0);
    /* out of range: crossing VRAM end, size near 2^64 */
    cmd_transfer(g, 0x2000, SYS(SYSBUF), 64 * MiB - 0x1000, 0);
    run(g, 0);
    expect_fault(g, 0, QGPU_FAULT_BAD_ADDRESS, 3);
    g_assert_cmphex(rd64(g, QGPU_REG_FAULT_ADDR_LO), ==, 64 * MiB - 0x1000);
    engine_reset(g, 0);
    cmd_transfer(g, UINT64_MAX, SYS(SYSBUF), 0, 0);
    run(g, 0);
    expect_fault(g, 0, QGPU_FAULT_BAD_ADDRESS, 4);
    engine_reset(g, 0);
    cmd_transfer(g, UINT64_MAX & ~0xfffull, SYS(PAGELIST), 0,
                 QGPU_XFER_SRC_PAGELIST);
    run(g, 0);
    expect_fault(g, 0, QGPU_FAULT_BAD_ADDRESS, 5);
    engine_reset(g, 0);
    /* system address beyond guest RAM: DMA error */
    cmd_transfer(g, 4096, SYS(0x7000000000ull), 0, 0);
    run(g, 0);
    expect_fault(g, 0, QGPU_FAULT_DMA_ERROR, 6);
    engine_reset(g, 0);
    qgpu_stop(g);
}

static void test_bar2(void)
{
    QGPU *g = qgpu_start("vram-size=32M,visible-vram-size=16M");
    uint64_t i;

    /* CPU writes through BAR2, engine copies VRAM to system memory */
    for (i = 0; i < 64; i++) {
        vram_wr(g, 0x5000 + i * 4, 0xc0de0000 + i);
    }
    cmd_transfer(g, 256, 0x5000, SYS(SYSBUF), 0);
    run(g, 0);
    for (i = 0; i < 64; i++) {
        g_assert_cmphex(qtest_readl(g->qts, SYSBUF + i * 4), ==,
                        0xc0de0000 + i);
    }
    /* engine writes VRAM, CPU reads through BAR2 */
    cmd_fill(g, 64, 0x6000, 0xabcd1234, 0);
    run(g, 0);
    g_assert_cmphex(vram_rd(g, 0x6000), ==, 0xabcd1234);
    g_assert_cmphex(vram_rd(g, 0x603c), ==, 0xabcd1234);
    g_assert_cmphex(vram_rd(g, 0x6040), ==, 0);
    g_assert_cmphex(qpci_io_readq(g->dev, g->bar2, 0x6000), ==,
                    0xabcd1234abcd1234ull);
    /* non-visible VRAM is usable by the engines */
    cmd_transfer(g, 256, 0x5000, 20 * MiB, 0);
    cmd_transfer(g, 256, 20 * MiB, 0x7000, 0);
    run(g, 0);
    g_assert_cmphex(vram_rd(g, 0x7000 + 63 * 4), ==, 0xc0de0000 + 63);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, 0);
    qgpu_stop(g);
}

/*
 * Copies of at least 4 MiB stream (qgpu-copy.c): byte for byte at every
 * alignment, page-straddling, through page lists, both directions and
 * VRAM to VRAM, with the bytes around each destination untouched.
 */
static void stream_check_vram(QGPU *g, uint64_t off, const uint8_t *want,
                              uint64_t size)
{
    g_autofree uint8_t *got = g_malloc(size + 2);

    qpci_memread(g->dev, g->bar2, off - 1, got, size + 2);
    g_assert_cmphex(got[0], ==, 0xee);
    g_assert_cmphex(got[size + 1], ==, 0xee);
    g_assert(memcmp(got + 1, want, size) == 0);
}

static void test_stream_copy(void)
{
    QGPU *g = qgpu_start("vram-size=32M,visible-vram-size=32M");
    const uint64_t size = 5 * MiB + 4093, pl = 5 * MiB;
    g_autofree uint8_t *pat = g_malloc(size);
    g_autofree uint8_t *got = g_malloc(size + 2);
    uint64_t i;

    for (i = 0; i < size; i++) {
        pat[i] = (i * 2654435761u) >> 13;
    }
    qtest_memwrite(g->qts, BIGBUF + 3, pat, size);
    cmd_fill(g, 32 * MiB, 0, 0xeeeeeeee, 0);
    run(g, 0);
    /* system -> VRAM, source and destination at different odd offsets */
    cmd_transfer(g, size, SYS(BIGBUF + 3), 0x1007, 0);
    run(g, 0);
    stream_check_vram(g, 0x1007, pat, size);
    /* VRAM -> VRAM, another alignment */
    cmd_transfer(g, size, 0x1007, 8 * MiB + 0x22, 0);
    run(g, 0);
    stream_check_vram(g, 8 * MiB + 0x22, pat, size);
    /* VRAM -> system */
    qtest_memset(g->qts, BIGBUF + 16 * MiB, 0xee, size + 16);
    cmd_transfer(g, size, 8 * MiB + 0x22, SYS(BIGBUF + 16 * MiB + 5), 0);
    run(g, 0);
    qtest_memread(g->qts, BIGBUF + 16 * MiB + 4, got, size + 2);
    g_assert_cmphex(got[0], ==, 0xee);
    g_assert_cmphex(got[size + 1], ==, 0xee);
    g_assert(memcmp(got + 1, pat, size) == 0);
    /* a page list in reverse order: every piece one page, dst unaligned */
    qtest_memwrite(g->qts, BIGBUF + 24 * MiB, pat, pl);
    for (i = 0; i < pl / 4096; i++) {
        qtest_writeq(g->qts, BIGBUF + 40 * MiB + i * 8,
                     SYS(BIGBUF + 24 * MiB + (pl / 4096 - 1 - i) * 4096));
    }
    cmd_transfer(g, pl, SYS(BIGBUF + 40 * MiB), 16 * MiB + 0x9,
                 QGPU_XFER_SRC_PAGELIST);
    run(g, 0);
    qpci_memread(g->dev, g->bar2, 16 * MiB + 8, got, pl + 2);
    g_assert_cmphex(got[0], ==, 0xee);
    g_assert_cmphex(got[pl + 1], ==, 0xee);
    for (i = 0; i < pl / 4096; i++) {
        g_assert(memcmp(got + 1 + i * 4096,
                        pat + (pl / 4096 - 1 - i) * 4096, 4096) == 0);
    }
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, 0);
    qgpu_stop(g);
}

static void test_fill_discard(void)
{
    QGPU *g = qgpu_start(NULL);
    int i;

    /* fill VRAM at an odd offset: bytes follow the pattern's LE order */
    cmd_fill(g, 12, 0x1001, 0x44332211, 0);
    run(g, 0);
    g_assert_cmphex(vram_rd(g, 0x1000), ==, 0x33221100);
    g_assert_cmphex(vram_rd(g, 0x1004), ==, 0x33221144);
    g_assert_cmphex(vram_rd(g, 0x1008), ==, 0x33221144);
    g_assert_cmphex(vram_rd(g, 0x100c), ==, 0x00000044);
    /* fill system memory and a page list */
    cmd_fill(g, 0x3000, SYS(SYSBUF), 0xfeedf00d, 0);
    for (i = 0; i < 2; i++) {
        qtest_writeq(g->qts, PAGELIST + i * 8, 0x40000 + (1 - i) * 4096);
    }
    cmd_fill(g, 0x2000, SYS(PAGELIST), 0x5a5a0001, QGPU_XFER_DST_PAGELIST);
    run(g, 0);
    g_assert_cmphex(qtest_readl(g->qts, SYSBUF), ==, 0xfeedf00d);
    g_assert_cmphex(qtest_readl(g->qts, SYSBUF + 0x2ffc), ==, 0xfeedf00d);
    g_assert_cmphex(vram_rd(g, 0x40000), ==, 0x5a5a0001);
    g_assert_cmphex(vram_rd(g, 0x41ffc), ==, 0x5a5a0001);
    /* size not a multiple of 4 */
    cmd_fill(g, 6, 0, 0, 0);
    run(g, 0);
    expect_fault(g, 0, QGPU_FAULT_BAD_ALIGN, 1);
    engine_reset(g, 0);

    /* discard: whole pages read zero afterwards, partial pages kept */
    cmd_fill(g, 0x4000, 0x100000, 0x01010101, 0);
    cmd_discard(g, 0x2800, 0x100800);
    run(g, 0);
    g_assert_cmphex(vram_rd(g, 0x100000), ==, 0x01010101);
    g_assert_cmphex(vram_rd(g, 0x100ffc), ==, 0x01010101);
    g_assert_cmphex(vram_rd(g, 0x101000), ==, 0);
    g_assert_cmphex(vram_rd(g, 0x102ffc), ==, 0);
    g_assert_cmphex(vram_rd(g, 0x103000), ==, 0x01010101);
    /* VRAM is still writable after the discard */
    vram_wr(g, 0x101000, 0x77);
    g_assert_cmphex(vram_rd(g, 0x101000), ==, 0x77);
    /* discard of system memory: bounds-checked no-op */
    cmd_discard(g, 0x3000, SYS(SYSBUF));
    run(g, 0);
    g_assert_cmphex(qtest_readl(g->qts, SYSBUF), ==, 0xfeedf00d);
    cmd_discard(g, 0x2000, 64 * MiB - 0x1000);
    run(g, 0);
    expect_fault(g, 0, QGPU_FAULT_BAD_ADDRESS, 2);
    engine_reset(g, 0);
    qgpu_stop(g);
}

/*
 * VRAM_COMMITTED (1.4): the bytes of VRAM in host memory. Writing VRAM
 * commits it, DISCARD gives whole pages back, and a FILL of zero over
 * discarded pages commits nothing (they read zero already) while it still
 * zeroes every page that holds data, whatever the mix.
 */
static void test_vram_committed(void)
{
    QGPU *g = qgpu_start("vram-size=16M,visible-vram-size=8M");
    uint64_t base, c;
    int i;

    g_assert_cmphex(rd(g, QGPU_REG_CAPS) & QGPU_CAP_VRAM_COMMITTED, ==,
                    QGPU_CAP_VRAM_COMMITTED);
    base = rd64(g, QGPU_REG_VRAM_COMMITTED_LO);
    g_assert_cmpuint(base, <=, 16 * MiB);
    /* 1 MiB of data at 2 MiB commits 1 MiB */
    cmd_fill(g, MiB, 2 * MiB, 0xa5a5a5a5, 0);
    run(g, 0);
    c = rd64(g, QGPU_REG_VRAM_COMMITTED_LO);
    g_assert_cmpuint(c, >=, base + MiB);
    /* DISCARD gives it back */
    cmd_discard(g, MiB, 2 * MiB);
    run(g, 0);
    g_assert_cmpuint(rd64(g, QGPU_REG_VRAM_COMMITTED_LO), ==, c - MiB);
    /* zeroing discarded VRAM commits nothing and reads zero */
    c = rd64(g, QGPU_REG_VRAM_COMMITTED_LO);
    cmd_fill(g, MiB, 2 * MiB, 0, 0);
    run(g, 0);
    g_assert_cmpuint(rd64(g, QGPU_REG_VRAM_COMMITTED_LO), ==, c);
    g_assert_cmphex(vram_rd(g, 2 * MiB), ==, 0);
    g_assert_cmphex(vram_rd(g, 3 * MiB - 4), ==, 0);
    /*
     * A mix: data in every other page of 64 KiB at 5 MiB (written by the
     * CPU through BAR2 and by FILL), then a zero FILL over all of it at an
     * odd start and length: every byte in range zero, the bytes around
     * kept, only the data pages still committed.
     */
    for (i = 0; i < 16; i += 2) {
        vram_wr(g, 5 * MiB + i * 4096, 0x1000 + i);
        vram_wr(g, 5 * MiB + i * 4096 + 4092, 0x2000 + i);
    }
    cmd_fill(g, 4096, 5 * MiB + 6 * 4096, 0x5a5a5a5a, 0);
    vram_wr(g, 5 * MiB + 16 * 4096, 0x3333);
    run(g, 0);
    c = rd64(g, QGPU_REG_VRAM_COMMITTED_LO);
    cmd_fill(g, 16 * 4096 - 8, 5 * MiB + 4, 0, 0);
    run(g, 0);
    g_assert_cmpuint(rd64(g, QGPU_REG_VRAM_COMMITTED_LO), ==, c);
    g_assert_cmphex(vram_rd(g, 5 * MiB), ==, 0x1000);
    for (i = 0; i < 16; i++) {
        g_assert_cmphex(vram_rd(g, 5 * MiB + i * 4096 + (i ? 0 : 4)), ==, 0);
        g_assert_cmphex(vram_rd(g, 5 * MiB + i * 4096 + 2048), ==, 0);
        if (i < 15) {
            g_assert_cmphex(vram_rd(g, 5 * MiB + i * 4096 + 4092), ==, 0);
        }
    }
    g_assert_cmphex(vram_rd(g, 5 * MiB + 16 * 4096 - 4), ==, 0);
    g_assert_cmphex(vram_rd(g, 5 * MiB + 16 * 4096), ==, 0x3333);
    /* a zero FILL of data pages keeps them (they are not discarded) */
    g_assert_cmpuint(rd64(g, QGPU_REG_VRAM_COMMITTED_LO), >=, base + 8 * 4096);
    /* read-only: a write is a register fault, the value unchanged */
    c = rd64(g, QGPU_REG_VRAM_COMMITTED_LO);
    wr(g, QGPU_REG_VRAM_COMMITTED_LO, 0);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_REASON), ==,
                     QGPU_FAULT_BAD_REGISTER);
    g_assert_cmpuint(rd64(g, QGPU_REG_VRAM_COMMITTED_LO), ==, c);
    qgpu_stop(g);
}

static void test_gart(void)
{
    QGPU *g = qgpu_start(NULL);
    uint64_t gart_pages = 256 * MiB / 4096;
    int i;

    qtest_memset(g->qts, GART_TABLE, 0, gart_pages * 8);
    wr(g, QGPU_REG_GART_BASE_LO, GART_TABLE);
    wr(g, QGPU_REG_GART_BASE_HI, 0);
    g_assert_cmphex(rd(g, QGPU_REG_GART_BASE_LO), ==, GART_TABLE);

    /* MAP_APERTURE: GART pages 10..13 -> scattered system pages */
    for (i = 0; i < 4; i++) {
        qtest_writeq(g->qts, PAGELIST + i * 8,
                     GART_PAGES_MEM + (3 - i) * 0x2000);
    }
    cmd_map_ap(g, 10, 4, SYS(PAGELIST));
    run(g, 0);
    for (i = 0; i < 4; i++) {
        g_assert_cmphex(qtest_readq(g->qts, GART_TABLE + (10 + i) * 8), ==,
                        (GART_PAGES_MEM + (3 - i) * 0x2000) | 1);
    }
    g_assert_cmphex(qtest_readq(g->qts, GART_TABLE + 9 * 8), ==, 0);
    g_assert_cmphex(qtest_readq(g->qts, GART_TABLE + 14 * 8), ==, 0);

    /* GART disabled: GART_UNMAPPED */
    fill_sys(g, SYSBUF, 4 * 4096, 9);
    cmd_transfer(g, 4 * 4096, SYS(SYSBUF), QGPU_GART_BASE + 10 * 4096, 0);
    run(g, 0);
    expect_fault(g, 0, QGPU_FAULT_GART_UNMAPPED, 1);
    g_assert_cmphex(rd64(g, QGPU_REG_FAULT_ADDR_LO), ==,
                    QGPU_GART_BASE + 10 * 4096);
    engine_reset(g, 0);

    /* enabled: system -> GART, then GART -> VRAM at an odd offset */
    wr(g, QGPU_REG_GART_CTRL, QGPU_GART_CTRL_ENABLE);
    cmd_transfer(g, 4 * 4096, SYS(SYSBUF), QGPU_GART_BASE + 10 * 4096, 0);
    run(g, 0);
    for (i = 0; i < 4; i++) {
        g_autofree uint8_t *want = g_malloc(4096);
        g_autofree uint8_t *got = g_malloc(4096);

        qtest_memread(g->qts, SYSBUF + i * 4096, want, 4096);
        qtest_memread(g->qts, GART_PAGES_MEM + (3 - i) * 0x2000, got, 4096);
        g_assert_cmpmem(want, 4096, got, 4096);
    }
    cmd_transfer(g, 3 * 4096, QGPU_GART_BASE + 10 * 4096 + 100, 0x8000, 0);
    run(g, 0);
    {
        g_autofree uint8_t *want = g_malloc(4 * 4096);
        g_autofree uint8_t *got = g_malloc(3 * 4096);

        qtest_memread(g->qts, SYSBUF, want, 4 * 4096);
        qpci_memread(g->dev, g->bar2, 0x8000, got, 3 * 4096);
        g_assert_cmpmem(want + 100, 3 * 4096, got, 3 * 4096);
    }
    /* fence into GART */
    cmd_fence(g, 0, QGPU_GART_BASE + 11 * 4096 + 8, 0xabc, false);
    run(g, 0);
    g_assert_cmphex(qtest_readq(g->qts, GART_PAGES_MEM + 2 * 0x2000 + 8), ==,
                    0xabc);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, 1);

    /* unmapped GART page */
    cmd_transfer(g, 4096, 0, QGPU_GART_BASE + 14 * 4096, 0);
    run(g, 0);
    expect_fault(g, 0, QGPU_FAULT_GART_UNMAPPED, 2);
    engine_reset(g, 0);

    /* UNMAP_APERTURE clears entries; access faults */
    cmd_unmap_ap(g, 11, 2);
    run(g, 0);
    g_assert_cmphex(qtest_readq(g->qts, GART_TABLE + 10 * 8), !=, 0);
    g_assert_cmphex(qtest_readq(g->qts, GART_TABLE + 11 * 8), ==, 0);
    g_assert_cmphex(qtest_readq(g->qts, GART_TABLE + 12 * 8), ==, 0);
    g_assert_cmphex(qtest_readq(g->qts, GART_TABLE + 13 * 8), !=, 0);
    cmd_transfer(g, 4096, QGPU_GART_BASE + 11 * 4096, 0, 0);
    run(g, 0);
    expect_fault(g, 0, QGPU_FAULT_GART_UNMAPPED, 3);
    engine_reset(g, 0);

    /* range checks: first + count beyond the GART, overflow */
    cmd_map_ap(g, gart_pages - 1, 2, SYS(PAGELIST));
    run(g, 0);
    expect_fault(g, 0, QGPU_FAULT_BAD_ADDRESS, 4);
    engine_reset(g, 0);
    cmd_unmap_ap(g, 0xffffffff, 2);
    run(g, 0);
    expect_fault(g, 0, QGPU_FAULT_BAD_ADDRESS, 5);
    engine_reset(g, 0);
    cmd_transfer(g, 0x2000, 0, QGPU_GART_BASE + 256 * MiB - 0x1000, 0);
    run(g, 0);
    expect_fault(g, 0, QGPU_FAULT_BAD_ADDRESS, 6);
    engine_reset(g, 0);
    /* misaligned page in the list */
    qtest_writeq(g->qts, PAGELIST, GART_PAGES_MEM + 4);
    cmd_map_ap(g, 0, 1, SYS(PAGELIST));
    run(g, 0);
    expect_fault(g, 0, QGPU_FAULT_BAD_ALIGN, 7);
    engine_reset(g, 0);
    /* whole GART unmap (65536 entries, several BH runs) */
    cmd_unmap_ap(g, 0, gart_pages);
    run(g, 0);
    g_assert_cmphex(qtest_readq(g->qts, GART_TABLE + 10 * 8), ==, 0);
    g_assert_cmphex(qtest_readq(g->qts, GART_TABLE + 13 * 8), ==, 0);
    qgpu_stop(g);
}

/* ---- host aperture ---- */

static void test_hap(void)
{
    QGPU *g = qgpu_start("host-aperture-size=1M");
    uint32_t hf;
    int i;

    g_assert_cmpuint(g->bar4_size, ==, 1 * MiB);
    for (i = 0; i < 8; i++) {
        vram_wr(g, (100 + i) * 4096 + 16, 0xa0000000 + i);
    }
    /* everything unmapped: reads 0, writes dropped, counter counts */
    hf = rd(g, QGPU_REG_HAP_FAULT_COUNT);
    g_assert_cmphex(qpci_io_readl(g->dev, g->bar4, 16), ==, 0);
    qpci_io_writel(g->dev, g->bar4, 16, 0x1234);
    g_assert_cmphex(qpci_io_readl(g->dev, g->bar4, 16), ==, 0);
    g_assert_cmpuint(rd(g, QGPU_REG_HAP_FAULT_COUNT), ==, hf + 3);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, 0);

    /* map aperture pages 2..5 onto VRAM pages 100..103 */
    wr(g, QGPU_REG_HAP_INDEX, 2);
    wr(g, QGPU_REG_HAP_COUNT, 4);
    wr(g, QGPU_REG_HAP_VRAM_PAGE_LO, 100);
    wr(g, QGPU_REG_HAP_VRAM_PAGE_HI, 0);
    wr(g, QGPU_REG_HAP_CMD, QGPU_HAP_CMD_MAP);
    g_assert_cmpuint(rd(g, QGPU_REG_HAP_MAPPED), ==, 4);
    for (i = 0; i < 4; i++) {
        g_assert_cmphex(qpci_io_readl(g->dev, g->bar4, (2 + i) * 4096 + 16),
                        ==, 0xa0000000 + i);
    }
    /* CPU write through the aperture lands in VRAM */
    qpci_io_writel(g->dev, g->bar4, 3 * 4096 + 32, 0x5555aaaa);
    g_assert_cmphex(vram_rd(g, 101 * 4096 + 32), ==, 0x5555aaaa);
    /* and engine writes show up in the aperture */
    cmd_fill(g, 8, 102 * 4096 + 40, 0x600d600d, 0);
    run(g, 0);
    g_assert_cmphex(qpci_io_readl(g->dev, g->bar4, 4 * 4096 + 44), ==,
                    0x600d600d);
    hf = rd(g, QGPU_REG_HAP_FAULT_COUNT);
    g_assert_cmphex(qpci_io_readl(g->dev, g->bar4, 1 * 4096), ==, 0);
    g_assert_cmphex(qpci_io_readl(g->dev, g->bar4, 6 * 4096), ==, 0);
    g_assert_cmpuint(rd(g, QGPU_REG_HAP_FAULT_COUNT), ==, hf + 2);

    /* remap page 3 elsewhere (splits the run), then unmap page 4 */
    wr(g, QGPU_REG_HAP_INDEX, 3);
    wr(g, QGPU_REG_HAP_COUNT, 1);
    wr(g, QGPU_REG_HAP_VRAM_PAGE_LO, 107);
    wr(g, QGPU_REG_HAP_CMD, QGPU_HAP_CMD_MAP);
    g_assert_cmpuint(rd(g, QGPU_REG_HAP_MAPPED), ==, 4);
    g_assert_cmphex(qpci_io_readl(g->dev, g->bar4, 3 * 4096 + 16), ==,
                    0xa0000007);
    g_assert_cmphex(qpci_io_readl(g->dev, g->bar4, 2 * 4096 + 16), ==,
                    0xa0000000);
    wr(g, QGPU_REG_HAP_INDEX, 4);
    wr(g, QGPU_REG_HAP_CMD, QGPU_HAP_CMD_UNMAP);
    g_assert_cmpuint(rd(g, QGPU_REG_HAP_MAPPED), ==, 3);
    g_assert_cmphex(qpci_io_readl(g->dev, g->bar4, 4 * 4096 + 16), ==, 0);
    g_assert_cmphex(qpci_io_readl(g->dev, g->bar4, 5 * 4096 + 16), ==,
                    0xa0000003);

    /* range faults change nothing */
    wr(g, QGPU_REG_HAP_INDEX, 255);
    wr(g, QGPU_REG_HAP_COUNT, 2);
    wr(g, QGPU_REG_HAP_CMD, QGPU_HAP_CMD_MAP);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_REASON), ==, QGPU_FAULT_HAP_RANGE);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_ENGINE), ==, 0xff);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, 1);
    wr(g, QGPU_REG_HAP_INDEX, 0);
    wr(g, QGPU_REG_HAP_COUNT, 1);
    wr(g, QGPU_REG_HAP_VRAM_PAGE_LO, 16384);        /* == VRAM pages */
    wr(g, QGPU_REG_HAP_CMD, QGPU_HAP_CMD_MAP);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, 2);
    wr(g, QGPU_REG_HAP_VRAM_PAGE_LO, 0xffffffff);
    wr(g, QGPU_REG_HAP_VRAM_PAGE_HI, 0xffffffff);
    wr(g, QGPU_REG_HAP_COUNT, 0xffffffff);
    wr(g, QGPU_REG_HAP_CMD, QGPU_HAP_CMD_MAP);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, 3);
    wr(g, QGPU_REG_HAP_CMD, QGPU_HAP_CMD_UNMAP);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, 4);
    g_assert_cmpuint(rd(g, QGPU_REG_HAP_MAPPED), ==, 3);
    wr(g, QGPU_REG_HAP_CMD, 7);                     /* unknown command */
    fault_latest(g);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_REASON), ==,
                     QGPU_FAULT_BAD_REGISTER);

    /* map the whole aperture onto the end of VRAM, then reset */
    wr(g, QGPU_REG_HAP_INDEX, 0);
    wr(g, QGPU_REG_HAP_COUNT, 256);
    wr(g, QGPU_REG_HAP_VRAM_PAGE_LO, 16384 - 256);
    wr(g, QGPU_REG_HAP_VRAM_PAGE_HI, 0);
    wr(g, QGPU_REG_HAP_CMD, QGPU_HAP_CMD_MAP);
    g_assert_cmpuint(rd(g, QGPU_REG_HAP_MAPPED), ==, 256);
    vram_wr(g, 64 * MiB - 4, 0x1234abcd);
    g_assert_cmphex(qpci_io_readl(g->dev, g->bar4, 1 * MiB - 4), ==,
                    0x1234abcd);
    wr(g, QGPU_REG_RESET, 1);
    g_assert_cmpuint(rd(g, QGPU_REG_HAP_MAPPED), ==, 0);
    g_assert_cmphex(qpci_io_readl(g->dev, g->bar4, 1 * MiB - 4), ==, 0);
    /* VRAM content survives the reset */
    g_assert_cmphex(vram_rd(g, 64 * MiB - 4), ==, 0x1234abcd);
    qgpu_stop(g);
}

/*
 * Thousands of runs: QEMU's dispatch limit must not be reachable. Runs
 * beyond the device's alias budget are served by the slow path.
 */
static void test_hap_fragmented(void)
{
    QGPU *g = qgpu_start("host-aperture-size=16M");
    uint32_t pages = 4096, i, hf;

    for (i = 0; i < pages; i += 2) {
        /* every other page, each onto a non-consecutive VRAM page */
        wr(g, QGPU_REG_HAP_INDEX, i);
        wr(g, QGPU_REG_HAP_COUNT, 1);
        wr(g, QGPU_REG_HAP_VRAM_PAGE_LO, 3 * i);
        wr(g, QGPU_REG_HAP_CMD, QGPU_HAP_CMD_MAP);
    }
    g_assert_cmpuint(rd(g, QGPU_REG_HAP_MAPPED), ==, pages / 2);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, 0);
    for (i = 0; i < pages; i += 2 * 97) {
        vram_wr(g, 3 * i * 4096 + 8, 0x7000000 + i);
    }
    hf = rd(g, QGPU_REG_HAP_FAULT_COUNT);
    for (i = 0; i < pages; i += 2 * 97) {
        g_assert_cmphex(qpci_io_readl(g->dev, g->bar4, i * 4096 + 8), ==,
                        0x7000000 + i);
        g_assert_cmphex(qpci_io_readl(g->dev, g->bar4, (i + 1) * 4096 + 8),
                        ==, 0);
    }
    g_assert_cmpuint(rd(g, QGPU_REG_HAP_FAULT_COUNT), ==,
                     hf + (pages + 2 * 97 - 1) / (2 * 97));
    /* writes through a late (slow-path) page reach VRAM */
    qpci_io_writel(g->dev, g->bar4, 4000 * 4096 + 12, 0x51045104);
    g_assert_cmphex(vram_rd(g, 3 * 4000 * 4096 + 12), ==, 0x51045104);
    /* an unaligned access straddling mapped and unmapped pages */
    hf = rd(g, QGPU_REG_HAP_FAULT_COUNT);
    vram_wr(g, 3 * 4000 * 4096 + 4092, 0xaabbccdd);
    g_assert_cmphex(qpci_io_readl(g->dev, g->bar4, 4000 * 4096 + 4094), ==,
                    0xaabb);
    g_assert_cmpuint(rd(g, QGPU_REG_HAP_FAULT_COUNT), ==, hf + 1);
    /* one big contiguous mapping after that is fast and correct */
    wr(g, QGPU_REG_HAP_INDEX, 0);
    wr(g, QGPU_REG_HAP_COUNT, pages);
    wr(g, QGPU_REG_HAP_VRAM_PAGE_LO, 0);
    wr(g, QGPU_REG_HAP_CMD, QGPU_HAP_CMD_MAP);
    g_assert_cmpuint(rd(g, QGPU_REG_HAP_MAPPED), ==, pages);
    vram_wr(g, 4000 * 4096 + 12, 0x12121212);
    g_assert_cmphex(qpci_io_readl(g->dev, g->bar4, 4000 * 4096 + 12), ==,
                    0x12121212);
    g_assert_cmphex(vram_rd(g, 4095 * 4096), ==,
                    qpci_io_readl(g->dev, g->bar4, 4095 * 4096));
    qgpu_stop(g);
}

/* ---- big transfer ---- */

static void test_large_transfer(void)
{
    QGPU *g = qgpu_start(NULL);
    uint64_t size = 48 * MiB;
    uint64_t off;
    uint64_t cycles0 = rd64(g, QGPU_REG_CYCLES_LO);
    uint64_t bytes;

    qtest_memset(g->qts, BIGBUF + size - 4096, 0, 8192);
    cmd_fill(g, size, 0, 0x0badcafe, 0);
    cmd_transfer(g, size, 0, SYS(BIGBUF), 0);
    cmd_fence(g, 0, SYS(FENCE_MEM), 48, false);
    kick(g, 0);
    /* the device keeps answering while it works */
    g_assert_cmphex(rd(g, QGPU_REG_ID), ==, QGPU_ID_MAGIC);
    wait_idle(g, 0);
    g_assert_cmpuint(qtest_readq(g->qts, FENCE_MEM), ==, 48);
    for (off = 0; off < size; off += 3 * MiB + 4) {
        g_assert_cmphex(qtest_readl(g->qts, BIGBUF + off), ==, 0x0badcafe);
    }
    g_assert_cmphex(qtest_readl(g->qts, BIGBUF + size - 4), ==, 0x0badcafe);
    g_assert_cmphex(qtest_readl(g->qts, BIGBUF + size), ==, 0);
    bytes = rd64(g, QGPU_ENGINE_BASE(0) + QGPU_ENG_BYTES_LO);
    g_assert_cmpuint(bytes, ==, 2 * size);
    g_assert_cmpuint(rd64(g, QGPU_REG_CYCLES_LO) - cycles0, ==,
                     3 + 2 * size / 64);
    qgpu_stop(g);
}

/* ---- paging fast paths: host pointers, page-list runs ---- */

/*
 * Guest-physical areas of the fast-path tests (the guest has 256 MiB):
 * sources and destinations apart, the destination at the top of RAM so
 * that runs can cross RAM's end. GART pages 0..511 map the source's
 * guest pages, 512..1023 the destination's, the rest nothing.
 */
#define FP_SSRC         0x8000000ull    /* 128 MiB, 8 MiB */
#define FP_GSRC         0x9000000ull    /* 144 MiB, 2 MiB behind the GART */
#define FP_GDST         0x9200000ull    /* 146 MiB, 2 MiB behind the GART */
#define FP_LIST         0x9600000ull    /* 150 MiB, page lists, 1 MiB */
#define FP_LIST2        0x9700000ull
#define FP_GLIST        0x9800000ull    /* 152 MiB, a list behind the GART */
#define FP_SDST         0xf800000ull    /* 248 MiB, 8 MiB: RAM's last */
#define FP_RAM_END      0x10000000ull   /* 256 MiB */
#define FP_VSRC         0ull            /* VRAM, 8 MiB */
#define FP_VLIST        0x1000000ull    /* VRAM, page lists */
#define FP_VDST         0x3800000ull    /* VRAM, 8 MiB: VRAM's last */
#define FP_VRAM         0x4000000ull    /* the device's 64 MiB */
#define FP_GART_PAGES   1024
#define FP_GLIST_PAGE   2000            /* GART page of FP_GLIST */
#define FP_AREA         (8 * MiB)
#define FP_GAREA        (2 * MiB)

typedef struct FastPath {
    QGPU *g;
    GRand *r;
    uint64_t gart[2048];        /* GART page -> guest page, 0: none */
    uint32_t faults;
} FastPath;

static void fp_rand(GRand *r, uint8_t *b, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        b[i] = g_rand_int(r);
    }
}

/* Bytes at a GPU address that the test knows to be VRAM, RAM or GART */
static void fp_rw(FastPath *f, uint64_t addr, void *buf, size_t len,
                  bool write)
{
    uint8_t *p = buf;

    while (len) {
        uint64_t gpa, n;

        if (addr < FP_VRAM) {
            gpa = f->g->bar2.addr + addr;
            n = len;
        } else if (addr & QGPU_SYS_BIT) {
            gpa = addr & ~QGPU_SYS_BIT;
            n = len;
        } else {
            uint64_t page = (addr - QGPU_GART_BASE) / 4096;

            g_assert(page < ARRAY_SIZE(f->gart) && f->gart[page]);
            gpa = f->gart[page] + (addr & 4095);
            n = MIN(len, 4096 - (addr & 4095));
        }
        if (write) {
            qtest_bufwrite(f->g->qts, gpa, p, n);
        } else {
            qtest_bufread(f->g->qts, gpa, p, n);
        }
        p += n;
        addr += n;
        len -= n;
    }
}

/*
 * The GART over the areas: pages 0..511 onto FP_GSRC, 512..1023 onto
 * FP_GDST, contiguous in blocks of 1 to 64 pages, the blocks in a shuffled
 * order (so that some neighbours in the GART are neighbours in RAM and
 * some are not); FP_GLIST_PAGE.. onto FP_GLIST.
 */
static FastPath *fp_start(uint32_t seed)
{
    FastPath *f = g_new0(FastPath, 1);
    uint64_t table[FP_GART_PAGES];
    int half, i;

    f->g = qgpu_start(NULL);
    f->r = g_rand_new_with_seed(seed);
    qtest_memset(f->g->qts, GART_TABLE, 0, 256 * MiB / 4096 * 8);
    for (half = 0; half < 2; half++) {
        uint64_t base = half ? FP_GDST : FP_GSRC;
        uint32_t order[512], blocks = 0, start[512], len[512], p = 0;

        while (p < 512) {
            len[blocks] = MIN(512 - p, g_rand_int_range(f->r, 1, 65));
            start[blocks] = p;
            order[blocks] = blocks;
            p += len[blocks++];
        }
        for (i = blocks - 1; i > 0; i--) {
            uint32_t j = g_rand_int_range(f->r, 0, i + 1), t = order[i];

            order[i] = order[j];
            order[j] = t;
        }
        /* GART page q of block order[k] -> the k-th block's guest pages */
        p = 0;
        for (i = 0; i < blocks; i++) {
            uint32_t b = order[i], k;

            for (k = 0; k < len[b]; k++) {
                f->gart[half * 512 + start[b] + k] = base + (p + k) * 4096;
            }
            p += len[b];
        }
    }
    for (i = 0; i < FP_GART_PAGES; i++) {
        table[i] = f->gart[i] | QGPU_GART_ENTRY_VALID;
    }
    qtest_bufwrite(f->g->qts, GART_TABLE, table, sizeof(table));
    wr(f->g, QGPU_REG_GART_BASE_LO, GART_TABLE);
    wr(f->g, QGPU_REG_GART_BASE_HI, 0);
    wr(f->g, QGPU_REG_GART_CTRL, QGPU_GART_CTRL_ENABLE);
    return f;
}

static void fp_gart_map(FastPath *f, uint32_t page, uint64_t gpa)
{
    f->gart[page] = gpa;
    qtest_writeq(f->g->qts, GART_TABLE + page * 8,
                 gpa ? gpa | QGPU_GART_ENTRY_VALID : 0);
}

static void fp_stop(FastPath *f)
{
    g_rand_free(f->r);
    qgpu_stop(f->g);
    g_free(f);
}

/* Run the paging ring; expect no new fault */
static void fp_run_ok(FastPath *f)
{
    run(f->g, 0);
    g_assert_cmpuint(rd(f->g, QGPU_REG_FAULT_COUNT), ==, f->faults);
}

/* Run the paging ring; expect fault @reason at @addr, then reset */
static void fp_run_fault(FastPath *f, uint32_t reason, uint64_t addr)
{
    run(f->g, 0);
    expect_fault(f->g, 0, reason, ++f->faults);
    g_assert_cmphex(rd64(f->g, QGPU_REG_FAULT_ADDR_LO), ==, addr);
    g_assert_cmphex(erd(f->g, 0, QGPU_ENG_STATUS), ==, QGPU_ENG_STATUS_HALTED);
    engine_reset(f->g, 0);
}

/*
 * Linear TRANSFERs between every pair of VRAM, system memory and the
 * GART (whose pages are partly contiguous in RAM), at unaligned offsets
 * and sizes that straddle pages, the budget of a round, and the end of a
 * contiguous run: every byte checked, and the bytes around the
 * destination untouched.
 */
static void test_fast_linear(void)
{
    static const uint64_t sizes[] = { 1, 3, 4095, 4097, 3 * 4096 + 517,
                                      65 * 4096 + 7 };
    uint64_t base[3][2] = {
        { FP_VSRC, FP_VDST },
        { SYS(FP_SSRC), SYS(FP_SDST) },
        { QGPU_GART_BASE, QGPU_GART_BASE + 512 * 4096 },
    };
    FastPath *f = fp_start(0x5eed1);
    g_autofree uint8_t *src = g_malloc(5 * MiB + 64);
    g_autofree uint8_t *got = g_malloc(5 * MiB + 64);
    g_autofree uint8_t *before = g_malloc(5 * MiB + 64);
    int si, di, k;

    for (si = 0; si < 3; si++) {
        for (di = 0; di < 3; di++) {
            for (k = 0; k < ARRAY_SIZE(sizes) + 1; k++) {
                /* the GART areas are 2 MiB: 5 MiB only elsewhere */
                uint64_t n = k < ARRAY_SIZE(sizes) ? sizes[k]
                             : si != 2 && di != 2 ? 5 * MiB + 13 : 0;
                uint64_t room = si == 2 || di == 2 ? FP_GAREA : FP_AREA;
                uint64_t so, doff, s, d;

                if (!n) {
                    continue;
                }
                so = g_rand_int_range(f->r, 0, room - n - 32);
                doff = g_rand_int_range(f->r, 16, room - n - 16);
                s = base[si][0] + so;
                d = base[di][1] + doff;
                fp_rand(f->r, src, n);
                fp_rw(f, s, src, n, true);
                fp_rw(f, d - 16, before, n + 32, false);
                cmd_transfer(f->g, n, s, d, 0);
                fp_run_ok(f);
                fp_rw(f, d - 16, got, n + 32, false);
                g_assert_cmpmem(got + 16, n, src, n);
                g_assert_cmpmem(got, 16, before, 16);
                g_assert_cmpmem(got + 16 + n, 16, before + 16 + n, 16);
            }
        }
    }
    /* overlapping source and destination: no crash, the engine goes on */
    cmd_transfer(f->g, 3 * MiB, SYS(FP_SSRC), SYS(FP_SSRC + 4097), 0);
    cmd_transfer(f->g, 3 * MiB, FP_VSRC + 4097, FP_VSRC, 0);
    fp_run_ok(f);
    fp_stop(f);
}

/* A list of @n pages of @area in runs of 1 to @maxrun, in random order */
static void fp_list(FastPath *f, uint64_t *ent, uint32_t n, uint64_t area,
                    uint64_t area_size, uint32_t maxrun, bool distinct)
{
    uint32_t pages = area_size / 4096, i = 0, k;
    g_autofree bool *used = g_new0(bool, pages);

    g_assert(!distinct || n <= pages);
    while (i < n) {
        uint32_t run = MIN(n - i, g_rand_int_range(f->r, 1, maxrun + 1));
        uint32_t p = g_rand_int_range(f->r, 0, pages);

        for (k = 0; k < run; k++, i++) {
            /* distinct pages: the next free one from p on */
            while (distinct && used[(p + k) % pages]) {
                p++;
            }
            used[(p + k) % pages] = true;
            ent[i] = area + (uint64_t)((p + k) % pages) * 4096;
        }
    }
}

/* Check that page i of the list @dst holds page i of the list @src */
static void fp_check_pages(FastPath *f, const uint64_t *src,
                           const uint8_t *srcdata, const uint64_t *dst,
                           uint32_t n)
{
    g_autofree uint8_t *got = g_malloc(4096);
    uint32_t i;

    for (i = 0; i < n; i++) {
        fp_rw(f, dst[i], got, 4096, false);
        if (memcmp(got, srcdata + (uint64_t)i * 4096, 4096)) {
            g_test_message("page %u: dst 0x%" PRIx64 " src 0x%" PRIx64, i,
                           dst[i], src[i]);
            g_assert_not_reached();
        }
    }
}

/*
 * Page lists whose pages come in contiguous runs and out of order, across
 * the batches the device reads its lists in and across rounds: system
 * and GART pages into VRAM, VRAM into system pages, lists on both sides,
 * lists mixing regions and naming one source page twice, a list at an
 * unaligned address and one behind the GART; FILLs through page lists,
 * and linear ones at an unaligned address with any pattern. Byte by byte.
 */
static void test_fast_pagelist(void)
{
    FastPath *f = fp_start(0x5eed2);
    uint32_t n = 1300, i;
    g_autofree uint64_t *sl = g_new(uint64_t, n);
    g_autofree uint64_t *dl = g_new(uint64_t, n);
    g_autofree uint8_t *data = g_malloc((uint64_t)n * 4096);
    g_autofree uint8_t *got = g_malloc(5 * MiB);
    uint64_t lin;
    int round;

    for (round = 0; round < 8; round++) {
        uint64_t src_list = SYS(FP_LIST), dst_list = SYS(FP_LIST2);
        uint32_t flags = 0;

        switch (round) {
        case 0:         /* system pages in runs -> linear VRAM */
            fp_list(f, sl, n, SYS(FP_SSRC), FP_AREA, 70, false);
            for (i = 0; i < n; i++) {
                dl[i] = FP_VDST + i * 4096ull;
            }
            flags = QGPU_XFER_SRC_PAGELIST;
            break;
        case 1:         /* linear VRAM -> distinct system pages in runs */
            for (i = 0; i < n; i++) {
                sl[i] = FP_VSRC + i * 4096ull;
            }
            fp_list(f, dl, n, SYS(FP_SDST), FP_AREA, 70, true);
            flags = QGPU_XFER_DST_PAGELIST;
            break;
        case 2:         /* both lists, runs of different lengths */
            fp_list(f, sl, n, SYS(FP_SSRC), FP_AREA, 3, false);
            fp_list(f, dl, n, FP_VDST, FP_AREA, 200, true);
            flags = QGPU_XFER_SRC_PAGELIST | QGPU_XFER_DST_PAGELIST;
            break;
        case 3:         /* GART source pages (partly contiguous in RAM) */
            n = 500;
            fp_list(f, sl, n, QGPU_GART_BASE, FP_GAREA, 100, false);
            fp_list(f, dl, n, SYS(FP_SDST), FP_AREA, 100, true);
            flags = QGPU_XFER_SRC_PAGELIST | QGPU_XFER_DST_PAGELIST;
            break;
        case 4:         /* into GART pages, from VRAM and system runs */
            fp_list(f, sl, n, FP_VSRC, FP_AREA, 30, false);
            fp_list(f, sl + n / 2, n - n / 2, SYS(FP_SSRC), FP_AREA, 30,
                    false);
            sl[7] = sl[3];
            fp_list(f, dl, n, QGPU_GART_BASE + 512 * 4096, FP_GAREA, 100,
                    true);
            flags = QGPU_XFER_SRC_PAGELIST | QGPU_XFER_DST_PAGELIST;
            break;
        case 5:         /* a list at an unaligned address */
            n = 1300;
            src_list = SYS(FP_LIST + 3);
            fp_list(f, sl, n, SYS(FP_SSRC), FP_AREA, 40, false);
            fp_list(f, dl, n, FP_VDST, FP_AREA, 40, true);
            flags = QGPU_XFER_SRC_PAGELIST | QGPU_XFER_DST_PAGELIST;
            break;
        case 6:         /* a list behind the GART, a list in VRAM */
            n = 1024;
            for (i = 0; i < 3; i++) {
                fp_gart_map(f, FP_GLIST_PAGE + i, FP_GLIST + i * 4096);
            }
            src_list = QGPU_GART_BASE + FP_GLIST_PAGE * 4096ull + 8;
            dst_list = FP_VLIST;
            fp_list(f, sl, n, SYS(FP_SSRC), FP_AREA, 64, false);
            fp_list(f, dl, n, SYS(FP_SDST), FP_AREA, 64, true);
            flags = QGPU_XFER_SRC_PAGELIST | QGPU_XFER_DST_PAGELIST;
            break;
        default:        /* one page list the whole way: one run */
            n = 1300;
            for (i = 0; i < n; i++) {
                sl[i] = SYS(FP_SSRC) + i * 4096ull;
                dl[i] = FP_VDST + i * 4096ull;
            }
            flags = QGPU_XFER_SRC_PAGELIST | QGPU_XFER_DST_PAGELIST;
            break;
        }
        fp_rand(f->r, data, (uint64_t)n * 4096);
        for (i = 0; i < n; i++) {
            fp_rw(f, sl[i], data + i * 4096ull, 4096, true);
        }
        /* the source as it is now (a page named twice holds the last) */
        for (i = 0; i < n; i++) {
            fp_rw(f, sl[i], data + i * 4096ull, 4096, false);
        }
        fp_rw(f, src_list, sl, n * 8, true);
        fp_rw(f, dst_list, dl, n * 8, true);
        cmd_transfer(f->g, n * 4096ull,
                     flags & QGPU_XFER_SRC_PAGELIST ? src_list : sl[0],
                     flags & QGPU_XFER_DST_PAGELIST ? dst_list : dl[0],
                     flags);
        fp_run_ok(f);
        fp_check_pages(f, sl, data, dl, n);
    }

    /* FILL through a page list of runs: every page the pattern, phase 0 */
    n = 1300;
    fp_list(f, dl, n, SYS(FP_SDST), FP_AREA, 90, true);
    fp_rw(f, SYS(FP_LIST2), dl, n * 8, true);
    for (round = 0; round < 2; round++) {
        uint32_t pat = round ? 0x5a5a5a5a : 0x11223344;

        cmd_fill(f->g, n * 4096ull, SYS(FP_LIST2), pat, QGPU_XFER_DST_PAGELIST);
        fp_run_ok(f);
        for (i = 0; i < n; i++) {
            uint32_t k;

            fp_rw(f, dl[i], got, 4096, false);
            for (k = 0; k < 4096; k++) {
                g_assert_cmphex(got[k], ==, (uint8_t)(pat >> (8 * (k & 3))));
            }
        }
    }
    /* linear FILLs at an odd address: byte k gets pattern byte k % 4 */
    for (round = 0; round < 4; round++) {
        static const uint32_t pats[] = { 0xa1b2c3d4, 0, 0x01020304,
                                         0xffffffff };
        uint64_t at = round & 1 ? SYS(FP_SDST + 4093)
                                : QGPU_GART_BASE + 512 * 4096 + 4093;
        uint64_t sz = round & 1 ? 4 * MiB + 12 : FP_GAREA - 8192;
        uint8_t guard[8];

        fp_rw(f, at + sz, guard, 8, false);
        cmd_fill(f->g, sz, at, pats[round], 0);
        fp_run_ok(f);
        fp_rw(f, at, got, sz + 8, false);
        for (lin = 0; lin < sz; lin++) {
            if (got[lin] != (uint8_t)(pats[round] >> (8 * (lin & 3)))) {
                g_test_message("fill %d: byte %" PRIu64, round, lin);
                g_assert_not_reached();
            }
        }
        g_assert_cmpmem(got + sz, 8, guard, 8);
    }
    fp_stop(f);
}

/*
 * Malformed page lists fault at the entry where the copy reaches it, with
 * everything before it done and nothing after it, however the entries
 * around it run together: a run past VRAM's end, a misaligned entry in a
 * run, runs across the end of RAM (source, destination, FILL), a run into
 * an unmapped GART page, a list whose second page is not mapped, an entry
 * that straddles into an unmapped page, an entry at the top of the system
 * window; and a copy that overwrites its own list does not crash.
 */
static void test_fast_pagelist_faults(void)
{
    FastPath *f = fp_start(0x5eed3);
    uint64_t l[1100], e;
    g_autofree uint8_t *data = g_malloc(1100 * 4096);
    g_autofree uint8_t *got = g_malloc(4096);
    g_autofree uint8_t *zero = g_malloc0(4096);
    uint32_t i;

    /* (1) a VRAM run past VRAM's end: BAD_ADDRESS at its first page out */
    for (i = 0; i < 6; i++) {
        l[i] = FP_VRAM - 3 * 4096 + i * 4096ull;
    }
    fp_rand(f->r, data, 6 * 4096);
    fp_rw(f, l[0], data, 3 * 4096, true);
    qtest_memset(f->g->qts, FP_SDST, 0, 4 * 4096);
    fp_rw(f, SYS(FP_LIST), l, 6 * 8, true);
    cmd_transfer(f->g, 6 * 4096, SYS(FP_LIST), SYS(FP_SDST),
                 QGPU_XFER_SRC_PAGELIST);
    fp_run_fault(f, QGPU_FAULT_BAD_ADDRESS, FP_VRAM);
    fp_rw(f, SYS(FP_SDST), data + 3 * 4096, 4 * 4096, false);
    g_assert_cmpmem(data + 3 * 4096, 3 * 4096, data, 3 * 4096);
    g_assert_cmpmem(data + 6 * 4096, 4096, zero, 4096);

    /* (2) a misaligned entry inside a run: BAD_ALIGN at it */
    for (i = 0; i < 12; i++) {
        l[i] = SYS(FP_SDST) + i * 4096ull;
    }
    l[7] += 8;
    qtest_memset(f->g->qts, FP_SDST, 0, 12 * 4096);
    fp_rw(f, SYS(FP_LIST), l, 12 * 8, true);
    fp_rand(f->r, data, 12 * 4096);
    fp_rw(f, FP_VSRC, data, 12 * 4096, true);
    cmd_transfer(f->g, 12 * 4096, FP_VSRC, SYS(FP_LIST),
                 QGPU_XFER_DST_PAGELIST);
    fp_run_fault(f, QGPU_FAULT_BAD_ALIGN, l[7]);
    for (i = 0; i < 12; i++) {
        fp_rw(f, SYS(FP_SDST) + i * 4096ull, got, 4096, false);
        g_assert_cmpmem(got, 4096, i < 7 ? data + i * 4096 : zero, 4096);
    }

    /* (3) runs across the end of RAM: DMA_ERROR at RAM's end */
    for (i = 0; i < 5; i++) {
        l[i] = SYS(FP_RAM_END - 2 * 4096) + i * 4096ull;
    }
    fp_rw(f, SYS(FP_LIST), l, 5 * 8, true);
    fp_rand(f->r, data, 2 * 4096);
    fp_rw(f, l[0], data, 2 * 4096, true);
    cmd_transfer(f->g, 5 * 4096, SYS(FP_LIST), FP_VDST,
                 QGPU_XFER_SRC_PAGELIST);
    fp_run_fault(f, QGPU_FAULT_DMA_ERROR, SYS(FP_RAM_END));
    fp_rw(f, FP_VDST, data + 2 * 4096, 2 * 4096, false);
    g_assert_cmpmem(data + 2 * 4096, 2 * 4096, data, 2 * 4096);
    fp_rand(f->r, data, 5 * 4096);
    fp_rw(f, FP_VSRC, data, 5 * 4096, true);
    cmd_transfer(f->g, 5 * 4096, FP_VSRC, SYS(FP_LIST),
                 QGPU_XFER_DST_PAGELIST);
    fp_run_fault(f, QGPU_FAULT_DMA_ERROR, SYS(FP_RAM_END));
    fp_rw(f, l[0], data + 5 * 4096, 2 * 4096, false);
    g_assert_cmpmem(data + 5 * 4096, 2 * 4096, data, 2 * 4096);
    cmd_fill(f->g, 5 * 4096, SYS(FP_LIST), 0x77777777,
             QGPU_XFER_DST_PAGELIST);
    fp_run_fault(f, QGPU_FAULT_DMA_ERROR, SYS(FP_RAM_END));
    g_assert_cmphex(qtest_readl(f->g->qts, FP_RAM_END - 4), ==, 0x77777777);
    /* linear too: the RAM part moves, the fault is where RAM ends */
    qtest_memset(f->g->qts, FP_RAM_END - 2 * 4096, 0, 2 * 4096);
    cmd_transfer(f->g, 5 * 4096, FP_VSRC, SYS(FP_RAM_END - 2 * 4096), 0);
    fp_run_fault(f, QGPU_FAULT_DMA_ERROR, SYS(FP_RAM_END));
    fp_rw(f, SYS(FP_RAM_END - 2 * 4096), data + 5 * 4096, 2 * 4096, false);
    g_assert_cmpmem(data + 5 * 4096, 2 * 4096, data, 2 * 4096);

    /* (4) a run of GART pages into an unmapped one: GART_UNMAPPED there */
    for (i = 0; i < 4; i++) {
        l[i] = QGPU_GART_BASE + (FP_GART_PAGES - 2 + i) * 4096ull;
    }
    fp_rw(f, SYS(FP_LIST), l, 4 * 8, true);
    cmd_transfer(f->g, 4 * 4096, FP_VSRC, SYS(FP_LIST),
                 QGPU_XFER_DST_PAGELIST);
    fp_run_fault(f, QGPU_FAULT_GART_UNMAPPED, l[2]);
    fp_rw(f, l[1], got, 4096, false);
    g_assert_cmpmem(got, 4096, data + 4096, 4096);

    /* (5) a list whose second GART page is not mapped */
    fp_gart_map(f, FP_GLIST_PAGE, FP_GLIST);
    fp_gart_map(f, FP_GLIST_PAGE + 1, 0);
    for (i = 0; i < 1024; i++) {
        l[i] = FP_VDST + i * 4096ull;
    }
    qtest_bufwrite(f->g->qts, FP_GLIST, l, 4096);
    fp_rand(f->r, data, 1024 * 4096);
    qtest_bufwrite(f->g->qts, FP_SSRC, data, 1024 * 4096);
    cmd_transfer(f->g, 1024 * 4096, SYS(FP_SSRC),
                 QGPU_GART_BASE + FP_GLIST_PAGE * 4096ull,
                 QGPU_XFER_DST_PAGELIST);
    fp_run_fault(f, QGPU_FAULT_GART_UNMAPPED,
                 QGPU_GART_BASE + (FP_GLIST_PAGE + 1) * 4096ull);
    fp_rw(f, FP_VDST, data + 512 * 4096, 512 * 4096, false);
    g_assert_cmpmem(data + 512 * 4096, 512 * 4096, data, 512 * 4096);

    /* (6) an entry that straddles into the unmapped page */
    e = FP_VDST;
    qtest_bufwrite(f->g->qts, FP_GLIST + 4092, &e, 4);
    cmd_transfer(f->g, 2 * 4096, SYS(FP_SSRC),
                 QGPU_GART_BASE + FP_GLIST_PAGE * 4096ull + 4092,
                 QGPU_XFER_DST_PAGELIST);
    fp_run_fault(f, QGPU_FAULT_GART_UNMAPPED,
                 QGPU_GART_BASE + (FP_GLIST_PAGE + 1) * 4096ull);

    /* (7) the top of the system window: a page, then nothing after it */
    l[0] = SYS(FP_SDST);
    l[1] = UINT64_MAX & ~4095ull;
    l[2] = 0;
    fp_rw(f, SYS(FP_LIST), l, 3 * 8, true);
    cmd_transfer(f->g, 3 * 4096, SYS(FP_LIST), FP_VDST,
                 QGPU_XFER_SRC_PAGELIST);
    fp_run_fault(f, QGPU_FAULT_DMA_ERROR, l[1]);

    /*
     * (8) a copy that writes its own page list: any content, no crash
     * (what it copies is itself a list of harmless pages)
     */
    for (i = 0; i < 1100; i++) {
        l[i] = SYS(FP_SDST) + (i % 64) * 4096ull;
    }
    fp_rw(f, FP_VSRC, l, 1100 * 8, true);
    for (i = 0; i < 1100; i++) {
        l[i] = SYS(FP_LIST) + (i % 3) * 4096ull;
    }
    fp_rw(f, SYS(FP_LIST), l, 1100 * 8, true);
    cmd_transfer(f->g, 1100 * 4096, FP_VSRC, SYS(FP_LIST),
                 QGPU_XFER_DST_PAGELIST);
    run(f->g, 0);
    f->faults = rd(f->g, QGPU_REG_FAULT_COUNT);
    engine_reset(f->g, 0);
    cmd_fence(f->g, 0, SYS(FENCE_MEM), 0xfa57, false);
    fp_run_ok(f);
    g_assert_cmphex(qtest_readq(f->g->qts, FENCE_MEM), ==, 0xfa57);
    fp_stop(f);
}

/*
 * Random page lists against a model of the contract (every entry read
 * and checked when the copy reaches it, each page moved in order): runs
 * of random length in VRAM, system memory and the GART, mixed with
 * entries that are misaligned, in the hole after VRAM, past RAM's end,
 * in unmapped GART pages or at the top of the system window; lists in
 * RAM, at unaligned addresses, behind the GART with a missing last page.
 * The device must fault where the model does, with the same address, and
 * leave every destination page as the model says, byte for byte.
 */
#define FPZ_MAX         1200

typedef struct FpzSide {
    bool list;
    uint64_t base;              /* list address, or the linear range */
    uint64_t ent[FPZ_MAX];
    uint32_t readable;          /* list entries readable (behind the GART) */
} FpzSide;

/*
 * A run's first entry: mostly a page of the side's own areas (runs stay
 * clear of the other side's, and the destination's may run off the end
 * of VRAM, of RAM or of the mapped GART pages), sometimes a bad entry.
 */
static uint64_t fpz_start(FastPath *f, bool dst, bool bad, uint32_t *run)
{
    uint32_t kind = g_rand_int_range(f->r, bad ? 0 : 4, 24);

    *run = g_rand_int_range(f->r, 1, 81);
    switch (kind) {
    case 0:
        return SYS(FP_SSRC) + g_rand_int_range(f->r, 0, 2048) * 4096ull + 8;
    case 1:
        return FP_VRAM + g_rand_int_range(f->r, 0, 64) * 4096ull;
    case 2:
        return SYS(FP_RAM_END) + g_rand_int_range(f->r, 0, 4) * 4096ull;
    case 3:
        return (UINT64_MAX & ~4095ull) - g_rand_int_range(f->r, 0, 2) * 4096;
    case 4:
    case 5:
    case 6:
        return dst ? QGPU_GART_BASE +
                     g_rand_int_range(f->r, 512, 1024) * 4096ull
                   : QGPU_GART_BASE +
                     g_rand_int_range(f->r, 0, 512 - 80) * 4096ull;
    case 7:
    case 8:
    case 9:
    case 10:
        return (dst ? FP_VDST : FP_VSRC) +
               g_rand_int_range(f->r, 0, 2048) * 4096ull;
    default:
        return SYS(dst ? FP_SDST : FP_SSRC) +
               g_rand_int_range(f->r, 0, 2048) * 4096ull;
    }
}

/* The contract's verdict on entry @e: 0, or the fault it gets */
static uint32_t fpz_check(uint64_t e)
{
    if (e & 4095) {
        return QGPU_FAULT_BAD_ALIGN;
    }
    if (e < FP_VRAM ||
        (e >= QGPU_GART_BASE && e < QGPU_GART_BASE + 256 * MiB)) {
        return 0;
    }
    return e & QGPU_SYS_BIT ? 0 : QGPU_FAULT_BAD_ADDRESS;
}

/* ... on an access to the page of the (valid) entry @e */
static uint32_t fpz_data(FastPath *f, uint64_t e)
{
    uint64_t page;

    if (e < FP_VRAM) {
        return 0;
    }
    if (e & QGPU_SYS_BIT) {
        return (e & ~QGPU_SYS_BIT) + 4096 <= FP_RAM_END ? 0
               : QGPU_FAULT_DMA_ERROR;
    }
    page = (e - QGPU_GART_BASE) / 4096;
    return page < FP_GART_PAGES && f->gart[page] ? 0
           : QGPU_FAULT_GART_UNMAPPED;
}

static bool fpz_ok(FastPath *f, uint64_t e)
{
    return !fpz_check(e) && !fpz_data(f, e);
}

static void fpz_side(FastPath *f, FpzSide *x, uint32_t n, bool dst,
                     bool bad)
{
    uint32_t i = 0, k, run;

    x->list = g_rand_int_range(f->r, 0, 5) != 0;
    x->readable = n;
    if (!x->list) {
        /* a linear range in the side's own areas */
        uint64_t b = g_rand_boolean(f->r) ? (dst ? FP_VDST : FP_VSRC)
                                          : SYS(dst ? FP_SDST : FP_SSRC);

        b += g_rand_int_range(f->r, 0, 2048 - n) * 4096ull;
        for (i = 0; i < n; i++) {
            x->ent[i] = b + i * 4096ull;
        }
        x->base = b;
        return;
    }
    while (i < n) {
        uint64_t e = fpz_start(f, dst, bad, &run);

        for (k = 0; k < run && i < n; k++, i++) {
            x->ent[i] = e + k * 4096ull;
        }
    }
    switch (g_rand_int_range(f->r, 0, 4)) {
    case 0:
        x->base = dst ? SYS(FP_LIST2 + 5) : SYS(FP_LIST + 3);
        break;
    case 1:
        /* behind the GART, its third page not mapped: entries 1024.. */
        x->base = QGPU_GART_BASE + (FP_GLIST_PAGE + (dst ? 4 : 0)) * 4096ull;
        x->readable = MIN(n, 1024);
        break;
    default:
        x->base = dst ? SYS(FP_LIST2) : SYS(FP_LIST);
        break;
    }
}

/*
 * The model of one command: how many pages move before the fault it
 * stops at (*reason, *at; 0 if none). Per page, as the contract orders
 * them: the source's entry read and checked, the destination's, then the
 * two pages' GART translations, then their DMA.
 */
static uint32_t fpz_model(FastPath *f, FpzSide *src, FpzSide *dst,
                          uint32_t n, bool fill, uint32_t *reason,
                          uint64_t *at)
{
    uint32_t i;

    *reason = 0;
    for (i = 0; i < n; i++) {
        uint64_t a = src->ent[i], d = dst->ent[i];
        uint32_t fa = fill ? 0 : fpz_data(f, a), fd;

        if (!fill && src->list && i >= src->readable) {
            *reason = QGPU_FAULT_GART_UNMAPPED;
            *at = src->base + i * 8ull;
            return i;
        }
        *reason = fill ? 0 : fpz_check(a);
        if (*reason) {
            *at = a;
            return i;
        }
        if (dst->list && i >= dst->readable) {
            *reason = QGPU_FAULT_GART_UNMAPPED;
            *at = dst->base + i * 8ull;
            return i;
        }
        *reason = fpz_check(d);
        if (*reason) {
            *at = d;
            return i;
        }
        fd = fpz_data(f, d);
        if (fa == QGPU_FAULT_GART_UNMAPPED || fd == QGPU_FAULT_GART_UNMAPPED) {
            *reason = QGPU_FAULT_GART_UNMAPPED;
            *at = fa == QGPU_FAULT_GART_UNMAPPED ? a : d;
            return i;
        }
        if (fa || fd) {
            *reason = fa ? fa : fd;
            *at = fa ? a : d;
            return i;
        }
    }
    return n;
}

static void test_fast_pagelist_fuzz(void)
{
    const char *seed_env = g_getenv("QGPU_FUZZ_SEED");
    const char *iter_env = g_getenv("QGPU_FUZZ_ITERS");
    FastPath *f = fp_start(seed_env ? atoi(seed_env) : 0x5eed4);
    int iters = iter_env ? atoi(iter_env) / 100 + 1 : 40;
    g_autofree FpzSide *src = g_new0(FpzSide, 1);
    g_autofree FpzSide *dst = g_new0(FpzSide, 1);
    g_autofree uint8_t *expect = g_malloc(FPZ_MAX * 4096ull);
    g_autofree uint8_t *page = g_malloc(4096);
    uint32_t faulted = 0;
    int it, i;

    for (i = 0; i < 8; i++) {
        fp_gart_map(f, FP_GLIST_PAGE + i,
                    i % 4 == 2 ? 0 : FP_GLIST + i * 4096ull);
    }
    for (it = 0; it < iters; it++) {
        uint32_t n = g_rand_int_range(f->r, 1, FPZ_MAX + 1), reason, moved;
        bool fill = !g_rand_int_range(f->r, 0, 4);
        uint32_t pat = g_rand_boolean(f->r) ? g_rand_int(f->r) : 0x3c3c3c3c;
        /* a third of the commands without a bad entry */
        bool bad = g_rand_int_range(f->r, 0, 3) != 0;
        uint32_t flags = 0;
        uint64_t at = 0;

        fpz_side(f, src, n, false, bad);
        fpz_side(f, dst, n, true, bad);
        flags |= dst->list ? QGPU_XFER_DST_PAGELIST : 0;
        flags |= src->list && !fill ? QGPU_XFER_SRC_PAGELIST : 0;
        if (src->list && !fill) {
            fp_rw(f, src->base, src->ent, MIN(n, src->readable) * 8ull, true);
        }
        if (dst->list) {
            fp_rw(f, dst->base, dst->ent, MIN(n, dst->readable) * 8ull, true);
        }
        moved = fpz_model(f, src, dst, n, fill, &reason, &at);
        /* every page the destination names, as the model says it ends */
        for (i = 0; i < n; i++) {
            int k, last = -1;

            if (!fpz_ok(f, dst->ent[i])) {
                continue;
            }
            for (k = 0; k < moved; k++) {
                last = dst->ent[k] == dst->ent[i] ? k : last;
            }
            if (last < 0) {
                fp_rw(f, dst->ent[i], expect + i * 4096ull, 4096, false);
            } else if (fill) {
                for (k = 0; k < 4096; k++) {
                    expect[i * 4096ull + k] = pat >> (8 * (k & 3));
                }
            } else {
                fp_rw(f, src->ent[last], expect + i * 4096ull, 4096, false);
            }
        }
        if (fill) {
            cmd_fill(f->g, n * 4096ull, dst->base, pat, flags);
        } else {
            cmd_transfer(f->g, n * 4096ull, src->base, dst->base, flags);
        }
        if (reason) {
            fp_run_fault(f, reason, at);
            faulted++;
        } else {
            fp_run_ok(f);
        }
        for (i = 0; i < n; i++) {
            if (!fpz_ok(f, dst->ent[i])) {
                continue;
            }
            fp_rw(f, dst->ent[i], page, 4096, false);
            if (memcmp(page, expect + i * 4096ull, 4096)) {
                g_test_message("iteration %d: page %d (0x%" PRIx64 ") of %u"
                               ", %u moved", it, i, dst->ent[i], n, moved);
                g_assert_not_reached();
            }
        }
    }
    g_test_message("pagelist fuzz: %d commands, %u faulted", iters, faulted);
    fp_stop(f);
}

/* ---- render engine ---- */

typedef struct DmaBuf {
    uint32_t dw[4096];
    uint32_t n;
} DmaBuf;

static void dma(DmaBuf *b, uint32_t op, uint32_t flags, unsigned cnt, ...)
{
    va_list ap;
    unsigned i;

    b->dw[b->n++] = QGPU_CMD_HDR(op, flags, cnt + 1);
    va_start(ap, cnt);
    for (i = 0; i < cnt; i++) {
        b->dw[b->n++] = va_arg(ap, uint32_t);
    }
    va_end(ap);
}

static void dma_bind(DmaBuf *b, uint32_t slot, uint64_t addr, uint64_t size)
{
    dma(b, QGPU_DMA_BIND, 0, 5, slot, (uint32_t)addr, (uint32_t)(addr >> 32),
        (uint32_t)size, (uint32_t)(size >> 32));
}

static void dma_put(QGPU *g, uint64_t addr, DmaBuf *b)
{
    qtest_memwrite(g->qts, addr, b->dw, b->n * 4);
}

static uint32_t fnv(const uint32_t *w, unsigned n)
{
    uint32_t h = QGPU_CSUM_INIT;
    unsigned i;

    for (i = 0; i < n; i++) {
        h ^= w[i];
        h *= QGPU_CSUM_PRIME;
    }
    return h;
}

static void test_render_ops(void)
{
    QGPU *g = qgpu_start(NULL);
    DmaBuf *b = g_new0(DmaBuf, 1);
    uint32_t words[64];
    uint64_t ts;
    int i;

    for (i = 0; i < 64; i++) {
        words[i] = 0x01020304;
    }
    dma_bind(b, 0, 0x100000, 0x10000);
    dma_bind(b, 1, 0x200000, 0x10000);
    dma_bind(b, 2, 0x300000, 0x1000);
    dma(b, QGPU_DMA_NOP, 0, 2, 0, 0);
    dma(b, QGPU_DMA_FILL, 0, 4, 0, 0, 256, 0x01020304);
    dma(b, QGPU_DMA_FILL, 0, 4, 1, 0, 256, 5);
    dma(b, QGPU_DMA_ADD, 0, 7, 2, 0, 0, 0, 1, 0, 64);
    dma(b, QGPU_DMA_XOR, 0, 7, 2, 256, 0, 0, 1, 0, 64);
    dma(b, QGPU_DMA_COPY, 0, 5, 1, 0x1000, 0, 0, 256);
    dma(b, QGPU_DMA_CHECKSUM, 0, 5, 0, 0, 256, 2, 0x800);
    dma(b, QGPU_DMA_FENCE, QGPU_FENCE_FLAG_IRQ, 4, 2, 0x808, 0x55667788,
        0x11223344);
    dma(b, QGPU_DMA_TIMESTAMP, 0, 2, 2, 0x810);
    dma_put(g, DMABUF, b);
    qtest_clock_step(g->qts, 12345);
    cmd_exec(g, 3, SYS(DMABUF), 0, b->n * 4);
    cmd_fence(g, 1, SYS(FENCE_MEM), 1, false);
    run(g, 1);

    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, 0);
    g_assert_cmpuint(qtest_readq(g->qts, FENCE_MEM), ==, 1);
    g_assert_cmphex(vram_rd(g, 0x100000), ==, 0x01020304);
    g_assert_cmphex(vram_rd(g, 0x1000fc), ==, 0x01020304);
    g_assert_cmphex(vram_rd(g, 0x100100), ==, 0);
    g_assert_cmphex(vram_rd(g, 0x300000), ==, 0x01020309);
    g_assert_cmphex(vram_rd(g, 0x3000fc), ==, 0x01020309);
    g_assert_cmphex(vram_rd(g, 0x300100), ==, 0x01020301);
    g_assert_cmphex(vram_rd(g, 0x3001fc), ==, 0x01020301);
    g_assert_cmphex(vram_rd(g, 0x201000), ==, 0x01020304);
    g_assert_cmphex(vram_rd(g, 0x2010fc), ==, 0x01020304);
    g_assert_cmphex(vram_rd(g, 0x300800), ==, fnv(words, 64));
    g_assert_cmphex(qpci_io_readq(g->dev, g->bar2, 0x300808), ==,
                    0x1122334455667788ull);
    ts = qpci_io_readq(g->dev, g->bar2, 0x300810);
    g_assert_cmpuint(ts, >=, 12345);
    g_assert_cmphex(rd(g, QGPU_REG_INT_STATUS), ==, QGPU_INT_ENGINE(1));
    /* 2 ring commands + 12 DMA commands */
    g_assert_cmpuint(rd64(g, QGPU_ENGINE_BASE(1) + QGPU_ENG_CMDS_LO), ==, 14);

    /* a portion of the same buffer: slots persist in context 3 */
    b->n = 0;
    dma(b, QGPU_DMA_FILL, 0, 4, 2, 0x900, 8, 0xcafe0001);
    dma_put(g, DMABUF + 0x10000 + 64, b);
    b->n = 0;
    dma(b, QGPU_DMA_NOP, 0, 0);
    dma_put(g, DMABUF + 0x10000 + 60, b);
    cmd_exec(g, 3, SYS(DMABUF + 0x10000), 64, 64 + 5 * 4);
    /* empty portion is fine */
    cmd_exec(g, 3, SYS(DMABUF + 0x10000), 60, 60);
    run(g, 1);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, 0);
    g_assert_cmphex(vram_rd(g, 0x300904), ==, 0xcafe0001);

    /* DMA buffer in VRAM works too */
    b->n = 0;
    dma(b, QGPU_DMA_FILL, 0, 4, 2, 0x920, 4, 0xcafe0002);
    qpci_memwrite(g->dev, g->bar2, 0x50000, b->dw, b->n * 4);
    cmd_exec(g, 3, 0x50000, 0, b->n * 4);
    run(g, 1);
    g_assert_cmphex(vram_rd(g, 0x300920), ==, 0xcafe0002);
    g_free(b);
    qgpu_stop(g);
}

static void test_render_faults(void)
{
    QGPU *g = qgpu_start("max-slots=8,max-contexts=4");
    DmaBuf *b = g_new0(DmaBuf, 1);
    uint32_t faults = 0;
    uint32_t off;

    /* slot bounds: abandons the rest of the buffer, ring continues */
    dma_bind(b, 0, 0x100000, 0x100);
    dma(b, QGPU_DMA_FILL, 0, 4, 0, 0, 4, 0x11111111);
    off = b->n * 4;
    dma(b, QGPU_DMA_FILL, 0, 4, 0, 0xf0, 0x20, 0x22222222);
    dma(b, QGPU_DMA_FILL, 0, 4, 0, 8, 4, 0x33333333);
    dma_put(g, DMABUF, b);
    qtest_writeq(g->qts, FENCE_MEM, 0);
    cmd_exec(g, 2, SYS(DMABUF), 0, b->n * 4);
    cmd_fence(g, 1, SYS(FENCE_MEM), 5, true);
    run(g, 1);
    expect_fault(g, 1, QGPU_FAULT_SLOT_BOUNDS, ++faults);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_CONTEXT), ==, 2);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_OFFSET), ==, off);
    g_assert_cmphex(erd(g, 1, QGPU_ENG_STATUS), ==, 0);
    g_assert_cmpuint(qtest_readq(g->qts, FENCE_MEM), ==, 5);
    g_assert_cmphex(rd(g, QGPU_REG_INT_STATUS), ==,
                    QGPU_INT_FAULT | QGPU_INT_ENGINE(1));
    g_assert_cmphex(vram_rd(g, 0x100000), ==, 0x11111111);
    g_assert_cmphex(vram_rd(g, 0x1000f0), ==, 0);
    g_assert_cmphex(vram_rd(g, 0x100008), ==, 0);
    wr(g, QGPU_REG_INT_ACK, QGPU_INT_ALL);
    /* the fault invalidated context 2 */
    g_assert_true(ctx_faulted(g, 2));
    g_assert_false(ctx_faulted(g, 1));

    /*
     * DMA-buffer faults: each abandons its buffer, the ring goes on, and
     * the context is left faulted. Each case starts from a CTX_CLEAR and
     * binds slot 0 first.
     */
#define DMA_FAULT(reason_, ...) do {                                \
        b->n = 0;                                                   \
        dma_bind(b, 0, 0x100000, 0x100);                            \
        __VA_ARGS__;                                                \
        dma_put(g, DMABUF, b);                                      \
        cmd_ctx_clear(g, 2);                                        \
        cmd_exec(g, 2, SYS(DMABUF), 0, b->n * 4);                   \
        cmd_fence(g, 1, SYS(FENCE_MEM), faults + 100, false);       \
        run(g, 1);                                                  \
        expect_fault(g, 1, reason_, ++faults);                      \
        g_assert_cmpuint(qtest_readq(g->qts, FENCE_MEM), ==,        \
                         faults - 1 + 100);                         \
        g_assert_cmphex(erd(g, 1, QGPU_ENG_STATUS), ==, 0);         \
        g_assert_true(ctx_faulted(g, 2));                           \
    } while (0)

    DMA_FAULT(QGPU_FAULT_BAD_SLOT, dma(b, QGPU_DMA_FILL, 0, 4, 8, 0, 4, 0));
    DMA_FAULT(QGPU_FAULT_BAD_SLOT, dma(b, QGPU_DMA_FILL, 0, 4, 1, 0, 4, 0));
    DMA_FAULT(QGPU_FAULT_BAD_SLOT, dma_bind(b, 8, 0, 4096));
    DMA_FAULT(QGPU_FAULT_BAD_ADDRESS, dma_bind(b, 1, 64 * MiB - 4096, 8192));
    DMA_FAULT(QGPU_FAULT_BAD_ADDRESS, dma_bind(b, 1, SYS(SYSBUF), 4096));
    DMA_FAULT(QGPU_FAULT_BAD_ADDRESS,
              dma_bind(b, 1, QGPU_GART_BASE, UINT64_MAX));
    DMA_FAULT(QGPU_FAULT_BAD_OPCODE, dma(b, 0x7f, 0, 0));
    DMA_FAULT(QGPU_FAULT_BAD_LENGTH, dma(b, QGPU_DMA_FILL, 0, 2, 0, 0));
    DMA_FAULT(QGPU_FAULT_BAD_LENGTH,
              b->dw[b->n++] = QGPU_CMD_HDR(QGPU_DMA_NOP, 0, 0));
    DMA_FAULT(QGPU_FAULT_BAD_LENGTH,
              b->dw[b->n++] = QGPU_CMD_HDR(QGPU_DMA_NOP, 0, 2));
    DMA_FAULT(QGPU_FAULT_BAD_ALIGN, dma(b, QGPU_DMA_FILL, 0, 4, 0, 0, 3, 0));
    DMA_FAULT(QGPU_FAULT_BAD_ALIGN, dma(b, QGPU_DMA_FENCE, 0, 4, 0, 4, 1, 0));
    DMA_FAULT(QGPU_FAULT_SLOT_BOUNDS,
              dma(b, QGPU_DMA_TIMESTAMP, 0, 2, 0, 0xfc));
    DMA_FAULT(QGPU_FAULT_SLOT_BOUNDS,
              dma(b, QGPU_DMA_ADD, 0, 7, 0, 0, 0, 0, 0, 0, 0x40000001));
    DMA_FAULT(QGPU_FAULT_SLOT_BOUNDS,
              dma(b, QGPU_DMA_COPY, 0, 5, 0, 0xffffffff, 0, 0, 2));
    DMA_FAULT(QGPU_FAULT_SLOT_BOUNDS,
              dma(b, QGPU_DMA_CHECKSUM, 0, 5, 0, 0, 0x100, 0, 0xfe));
    /* GART slot with GART disabled: GART_UNMAPPED at execution */
    DMA_FAULT(QGPU_FAULT_GART_UNMAPPED,
              dma_bind(b, 3, QGPU_GART_BASE, 4096);
              dma(b, QGPU_DMA_FILL, 0, 4, 3, 0, 4, 0));
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_CONTEXT), ==, 2);

    /* ring-level EXEC faults halt the ring */
    wr(g, QGPU_REG_INT_ACK, QGPU_INT_ALL);
    cmd_exec(g, 4, SYS(DMABUF), 0, 4);
    run(g, 1);
    expect_fault(g, 1, QGPU_FAULT_BAD_CONTEXT, ++faults);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_CONTEXT), ==, 4);
    g_assert_cmphex(erd(g, 1, QGPU_ENG_STATUS), ==, QGPU_ENG_STATUS_HALTED);
    engine_reset(g, 1);
    cmd_ctx_clear(g, 0xffffffff);
    run(g, 1);
    expect_fault(g, 1, QGPU_FAULT_BAD_CONTEXT, ++faults);
    engine_reset(g, 1);
    /* bad EXEC parameters also leave the (valid) context faulted */
#define EXEC_FAULT(reason_, buf_, start_, end_) do {                \
        cmd_ctx_clear(g, 0);                                        \
        cmd_exec(g, 0, buf_, start_, end_);                         \
        run(g, 1);                                                  \
        expect_fault(g, 1, reason_, ++faults);                      \
        g_assert_cmpuint(rd(g, QGPU_REG_FAULT_CONTEXT), ==, 0);     \
        g_assert_cmphex(erd(g, 1, QGPU_ENG_STATUS), ==,             \
                        QGPU_ENG_STATUS_HALTED);                    \
        g_assert_true(ctx_faulted(g, 0));                           \
        engine_reset(g, 1);                                         \
    } while (0)

    EXEC_FAULT(QGPU_FAULT_BAD_ALIGN, SYS(DMABUF), 0, 2);
    EXEC_FAULT(QGPU_FAULT_BAD_LENGTH, SYS(DMABUF), 8, 4);
    EXEC_FAULT(QGPU_FAULT_BAD_LENGTH, SYS(DMABUF), 0, 2 * MiB);
    EXEC_FAULT(QGPU_FAULT_BAD_ADDRESS, 64 * MiB - 8, 0, 16);
    EXEC_FAULT(QGPU_FAULT_BAD_ADDRESS, UINT64_MAX - 3, 8, 16);
#undef EXEC_FAULT
    /* an EXEC of the faulted context is skipped, bad parameters or not */
    cmd_exec(g, 0, SYS(DMABUF), 0, 2);
    cmd_fence(g, 1, SYS(FENCE_MEM), 0x5ca1ab1e, false);
    run(g, 1);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, faults);
    g_assert_cmphex(erd(g, 1, QGPU_ENG_STATUS), ==, 0);
    g_assert_cmphex(qtest_readq(g->qts, FENCE_MEM), ==, 0x5ca1ab1e);
    g_free(b);
    qgpu_stop(g);
}

static void test_render_wait(void)
{
    QGPU *g = qgpu_start(NULL);
    DmaBuf *b = g_new0(DmaBuf, 1);
    int i;

    vram_wr(g, 0x10000, 0);
    vram_wr(g, 0x10004, 0);
    dma_bind(b, 0, 0x10000, 0x100);
    dma(b, QGPU_DMA_WAIT, 0, 4, 0, 0, 5, 0);
    dma(b, QGPU_DMA_FENCE, 0, 4, 0, 8, 42, 0);
    dma_put(g, DMABUF, b);
    cmd_exec(g, 1, SYS(DMABUF), 0, b->n * 4);
    cmd_fence(g, 1, SYS(FENCE_MEM), 77, false);
    kick(g, 1);
    for (i = 0; i < 5; i++) {
        qtest_clock_step(g->qts, 1000 * 1000);
    }
    g_assert_cmphex(erd(g, 1, QGPU_ENG_STATUS), ==, QGPU_ENG_STATUS_BUSY);
    g_assert_cmpuint(vram_rd(g, 0x10008), ==, 0);
    /* the paging engine is not blocked by the render engine's WAIT */
    cmd_fence(g, 0, SYS(FENCE_MEM + 8), 3, false);
    run(g, 0);
    g_assert_cmpuint(qtest_readq(g->qts, FENCE_MEM + 8), ==, 3);
    /* not yet: 4 < 5 */
    vram_wr(g, 0x10000, 4);
    qtest_clock_step(g->qts, 2 * 1000 * 1000);
    g_assert_cmpuint(vram_rd(g, 0x10008), ==, 0);
    /* a later write satisfies it (by the paging engine) */
    cmd_fence(g, 0, 0x10000, 6, false);
    run(g, 0);
    qtest_clock_step(g->qts, 2 * 1000 * 1000);
    wait_idle(g, 1);
    g_assert_cmpuint(vram_rd(g, 0x10008), ==, 42);
    g_assert_cmpuint(qtest_readq(g->qts, FENCE_MEM), ==, 77);

    /* CTRL.RESET abandons a blocked WAIT */
    vram_wr(g, 0x10000, 0);
    vram_wr(g, 0x10008, 0);
    cmd_exec(g, 1, SYS(DMABUF), 0, b->n * 4);
    kick(g, 1);
    qtest_clock_step(g->qts, 2 * 1000 * 1000);
    g_assert_cmphex(erd(g, 1, QGPU_ENG_STATUS), ==, QGPU_ENG_STATUS_BUSY);
    engine_reset(g, 1);
    vram_wr(g, 0x10000, 100);
    qtest_clock_step(g->qts, 2 * 1000 * 1000);
    g_assert_cmpuint(vram_rd(g, 0x10008), ==, 0);
    cmd_fence(g, 1, SYS(FENCE_MEM), 78, false);
    run(g, 1);
    g_assert_cmpuint(qtest_readq(g->qts, FENCE_MEM), ==, 78);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, 0);
    g_free(b);
    qgpu_stop(g);
}

static void test_render_contexts(void)
{
    QGPU *g = qgpu_start(NULL);
    DmaBuf *b = g_new0(DmaBuf, 1);
    uint64_t a_bind = DMABUF, b_bind = DMABUF + 0x100;
    uint64_t a_fill = DMABUF + 0x200, b_fill = DMABUF + 0x300;

    b->n = 0;
    dma_bind(b, 0, 0x20000, 0x1000);
    dma_put(g, a_bind, b);
    b->n = 0;
    dma_bind(b, 0, 0x30000, 0x1000);
    dma_put(g, b_bind, b);
    b->n = 0;
    dma(b, QGPU_DMA_FILL, 0, 4, 0, 0, 16, 0xaaaaaaaa);
    dma_put(g, a_fill, b);
    b->n = 0;
    dma(b, QGPU_DMA_FILL, 0, 4, 0, 4, 16, 0xbbbbbbbb);
    dma_put(g, b_fill, b);

    /* portions of two contexts interleave; each keeps its slot table */
    cmd_exec(g, 5, SYS(a_bind), 0, 24);
    cmd_exec(g, 6, SYS(b_bind), 0, 24);
    cmd_exec(g, 5, SYS(a_fill), 0, 20);
    cmd_exec(g, 6, SYS(b_fill), 0, 20);
    cmd_exec(g, 5, SYS(a_fill), 0, 20);
    run(g, 1);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, 0);
    g_assert_cmphex(vram_rd(g, 0x20000), ==, 0xaaaaaaaa);
    g_assert_cmphex(vram_rd(g, 0x2000c), ==, 0xaaaaaaaa);
    g_assert_cmphex(vram_rd(g, 0x20010), ==, 0);
    g_assert_cmphex(vram_rd(g, 0x30000), ==, 0);
    g_assert_cmphex(vram_rd(g, 0x30004), ==, 0xbbbbbbbb);
    g_assert_cmphex(vram_rd(g, 0x30010), ==, 0xbbbbbbbb);

    /* CTX_CLEAR unbinds context 5 only */
    cmd_ctx_clear(g, 5);
    cmd_exec(g, 5, SYS(a_fill), 0, 20);
    cmd_exec(g, 6, SYS(b_fill), 0, 20);
    run(g, 1);
    expect_fault(g, 1, QGPU_FAULT_BAD_SLOT, 1);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_CONTEXT), ==, 5);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_OFFSET), ==, 0);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, 1);

    /* device reset clears all slot tables */
    wr(g, QGPU_REG_RESET, 1);
    qgpu_ring_init(g, 1, RING1, RING_SIZE);
    cmd_exec(g, 6, SYS(b_fill), 0, 20);
    run(g, 1);
    expect_fault(g, 1, QGPU_FAULT_BAD_SLOT, 2);
    g_free(b);
    qgpu_stop(g);
}

/* A big COPY inside a DMA buffer through GART-bound slots. */
static void test_render_gart_copy(void)
{
    QGPU *g = qgpu_start(NULL);
    DmaBuf *b = g_new0(DmaBuf, 1);
    int i;

    qtest_memset(g->qts, GART_TABLE, 0, 64 * 8);
    wr(g, QGPU_REG_GART_BASE_LO, GART_TABLE);
    wr(g, QGPU_REG_GART_CTRL, QGPU_GART_CTRL_ENABLE);
    for (i = 0; i < 16; i++) {
        qtest_writeq(g->qts, PAGELIST + i * 8, SYSBUF + (15 - i) * 4096);
    }
    cmd_map_ap(g, 0, 16, SYS(PAGELIST));
    run(g, 0);
    fill_sys(g, SYSBUF, 16 * 4096, 3);

    dma_bind(b, 0, QGPU_GART_BASE, 16 * 4096);
    dma_bind(b, 1, 8 * MiB, 16 * MiB);
    for (i = 0; i < 16; i++) {
        dma(b, QGPU_DMA_COPY, 0, 5, 1, (15 - i) * 4096, 0, i * 4096, 4096);
    }
    dma(b, QGPU_DMA_COPY, 0, 5, 1, 8 * MiB, 1, 0, 8 * MiB);
    dma_put(g, DMABUF, b);
    cmd_exec(g, 0, SYS(DMABUF), 0, b->n * 4);
    run(g, 1);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, 0);
    check_vram(g, 8 * MiB, 16 * 4096, 3);
    check_vram(g, 16 * MiB, 16 * 4096, 3);
    g_free(b);
    qgpu_stop(g);
}

/* ---- fault queue and context invalidation (version 1.1) ---- */

#define NO_CONTEXT 0xffffffffu

/* Two faults before any is handled: both kept, in order; POP drains. */
static void test_fault_queue(void)
{
    QGPU *g = qgpu_start("max-slots=8,max-contexts=4");
    DmaBuf *b = g_new0(DmaBuf, 1);
    uint32_t reg, i;

    /* context 1: BAD_SLOT (slot 5) at offset 4; context 2: SLOT_BOUNDS */
    dma(b, QGPU_DMA_NOP, 0, 0);
    dma(b, QGPU_DMA_FILL, 0, 4, 5, 0, 4, 0);
    dma_put(g, DMABUF, b);
    cmd_exec(g, 1, SYS(DMABUF), 0, b->n * 4);
    b->n = 0;
    dma_bind(b, 0, 0x10000, 0x100);
    dma(b, QGPU_DMA_FILL, 0, 4, 0, 0xfc, 8, 0);
    dma_put(g, DMABUF + 0x1000, b);
    cmd_exec(g, 2, SYS(DMABUF + 0x1000), 0, b->n * 4);
    run(g, 1);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, 2);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULTQ_COUNT), ==, 2);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULTQ_LOST), ==, 0);
    g_assert_cmphex(rd(g, QGPU_REG_INT_STATUS), ==, QGPU_INT_FAULT);

    /* the oldest first: context 1's; reading does not pop */
    for (i = 0; i < 2; i++) {
        g_assert_cmpuint(rd(g, QGPU_REG_FAULT_REASON), ==,
                         QGPU_FAULT_BAD_SLOT);
        g_assert_cmpuint(rd(g, QGPU_REG_FAULT_ENGINE), ==, 1);
        g_assert_cmpuint(rd(g, QGPU_REG_FAULT_CONTEXT), ==, 1);
        g_assert_cmphex(rd64(g, QGPU_REG_FAULT_ADDR_LO), ==, 5);
        g_assert_cmpuint(rd(g, QGPU_REG_FAULT_OFFSET), ==, 4);
        g_assert_cmpuint(rd(g, QGPU_REG_FAULTQ_COUNT), ==, 2);
    }
    /* a driver acks INT_FAULT, then pops until the queue is empty */
    wr(g, QGPU_REG_INT_ACK, QGPU_INT_FAULT);
    fault_pop(g);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULTQ_COUNT), ==, 1);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_REASON), ==,
                     QGPU_FAULT_SLOT_BOUNDS);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_ENGINE), ==, 1);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_CONTEXT), ==, 2);
    g_assert_cmphex(rd64(g, QGPU_REG_FAULT_ADDR_LO), ==, 0xfc);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_OFFSET), ==, QGPU_DMA_BIND_LEN * 4);
    fault_pop(g);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULTQ_COUNT), ==, 0);
    for (reg = QGPU_REG_FAULT_REASON; reg <= QGPU_REG_FAULT_OFFSET;
         reg += 4) {
        g_assert_cmphex(rd(g, reg), ==, 0);
    }
    /* POP on an empty queue does nothing; POP reads 0 */
    fault_pop(g);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULTQ_COUNT), ==, 0);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, 2);
    g_assert_cmphex(rd(g, QGPU_REG_FAULTQ_POP), ==, 0);
    g_assert_cmphex(rd(g, QGPU_REG_INT_STATUS), ==, 0);
    g_assert_true(ctx_faulted(g, 1));
    g_assert_true(ctx_faulted(g, 2));
    g_assert_false(ctx_faulted(g, 0));
    g_assert_false(ctx_faulted(g, 3));

    /* POP with any other value: BAD_REGISTER, nothing removed */
    wr(g, QGPU_REG_FAULTQ_POP, 2);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, 3);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULTQ_COUNT), ==, 1);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_REASON), ==,
                     QGPU_FAULT_BAD_REGISTER);
    g_assert_cmphex(rd(g, QGPU_REG_FAULT_ENGINE), ==, QGPU_FAULT_ENGINE_MMIO);
    g_assert_cmphex(rd(g, QGPU_REG_FAULT_CONTEXT), ==, NO_CONTEXT);
    g_assert_cmphex(rd64(g, QGPU_REG_FAULT_ADDR_LO), ==, QGPU_REG_FAULTQ_POP);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_OFFSET), ==, 4);
    g_assert_cmphex(rd(g, QGPU_REG_INT_STATUS), ==, QGPU_INT_FAULT);
    wr(g, QGPU_REG_FAULTQ_POP, 0);
    wr(g, QGPU_REG_FAULTQ_POP, 0xffffffff);
    qpci_io_writeb(g->dev, g->bar0, QGPU_REG_FAULTQ_POP, 1);
    /* the read-only ones refuse writes */
    wr(g, QGPU_REG_FAULTQ_COUNT, 0);
    wr(g, QGPU_REG_FAULTQ_LOST, 5);
    wr(g, QGPU_REG_CTX_STATUS, 0);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, 9);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULTQ_COUNT), ==, 7);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULTQ_LOST), ==, 0);
    g_assert_true(ctx_faulted(g, 1));
    fault_latest(g);
    g_assert_cmphex(rd64(g, QGPU_REG_FAULT_ADDR_LO), ==, QGPU_REG_CTX_STATUS);
    fault_pop(g);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULTQ_COUNT), ==, 0);

    /* CTX_SEL reads back; out-of-range contexts read status 0 */
    wr(g, QGPU_REG_CTX_SEL, 0xffffffff);
    g_assert_cmphex(rd(g, QGPU_REG_CTX_SEL), ==, 0xffffffff);
    g_assert_cmphex(rd(g, QGPU_REG_CTX_STATUS), ==, 0);
    g_assert_false(ctx_faulted(g, 4));
    g_assert_cmphex(rd(g, QGPU_REG_CTX_SEL), ==, 4);

    /* device reset: queue, LOST and context state cleared, count kept */
    wr(g, QGPU_REG_FAULTQ_POP, 2);
    wr(g, QGPU_REG_CTX_SEL, 1);
    wr(g, QGPU_REG_RESET, 1);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULTQ_COUNT), ==, 0);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_REASON), ==, QGPU_FAULT_NONE);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, 10);
    g_assert_cmpuint(rd(g, QGPU_REG_CTX_SEL), ==, 0);
    for (i = 0; i < 4; i++) {
        g_assert_false(ctx_faulted(g, i));
    }
    g_free(b);
    qgpu_stop(g);
}

/* 70 faults into a queue of 64: 6 lost, but no context is. */
static void test_fault_overflow(void)
{
    QGPU *g = qgpu_start("max-contexts=80");
    DmaBuf *b = g_new0(DmaBuf, 1);
    uint32_t c, n;

    g_assert_cmpuint(QGPU_FAULTQ_DEPTH, ==, 64);
    dma(b, QGPU_DMA_NOP, 0, 0);
    dma(b, QGPU_DMA_FILL, 0, 4, 0, 0, 4, 0);        /* slot 0 unbound */
    dma_put(g, DMABUF, b);
    for (c = 0; c < 70; c++) {
        cmd_exec(g, c, SYS(DMABUF), 0, b->n * 4);
    }
    cmd_fence(g, 1, SYS(FENCE_MEM), 70, false);
    run(g, 1);
    g_assert_cmpuint(qtest_readq(g->qts, FENCE_MEM), ==, 70);
    g_assert_cmphex(erd(g, 1, QGPU_ENG_STATUS), ==, 0);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, 70);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULTQ_COUNT), ==, QGPU_FAULTQ_DEPTH);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULTQ_LOST), ==, 6);
    g_assert_cmphex(rd(g, QGPU_REG_INT_STATUS), ==, QGPU_INT_FAULT);
    /* every faulting context is marked, queued or not */
    for (c = 0; c < 80; c++) {
        g_assert_cmpuint(ctx_faulted(g, c), ==, c < 70);
    }
    /* the queue holds the first 64, in order */
    for (c = 0; c < QGPU_FAULTQ_DEPTH; c++) {
        g_assert_cmpuint(rd(g, QGPU_REG_FAULTQ_COUNT), ==,
                         QGPU_FAULTQ_DEPTH - c);
        g_assert_cmpuint(rd(g, QGPU_REG_FAULT_REASON), ==,
                         QGPU_FAULT_BAD_SLOT);
        g_assert_cmpuint(rd(g, QGPU_REG_FAULT_CONTEXT), ==, c);
        g_assert_cmpuint(rd(g, QGPU_REG_FAULT_OFFSET), ==, 4);
        fault_pop(g);
    }
    g_assert_cmpuint(rd(g, QGPU_REG_FAULTQ_COUNT), ==, 0);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULTQ_LOST), ==, 6);

    /* room again: the next fault is queued, LOST keeps its value */
    cmd_exec(g, 75, SYS(DMABUF), 0, b->n * 4);
    run(g, 1);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULTQ_COUNT), ==, 1);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULTQ_LOST), ==, 6);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, 71);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_CONTEXT), ==, 75);

    /* register faults overflow the same way; the queue wraps around */
    for (n = 1; n < QGPU_FAULTQ_DEPTH + 3; n++) {
        wr(g, QGPU_REG_ID, n);
    }
    g_assert_cmpuint(rd(g, QGPU_REG_FAULTQ_COUNT), ==, QGPU_FAULTQ_DEPTH);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULTQ_LOST), ==, 9);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, 71 + 66);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_CONTEXT), ==, 75);
    fault_pop(g);
    g_assert_cmphex(rd(g, QGPU_REG_FAULT_ENGINE), ==, QGPU_FAULT_ENGINE_MMIO);
    wr(g, QGPU_REG_ID, 0);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULTQ_COUNT), ==, QGPU_FAULTQ_DEPTH);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULTQ_LOST), ==, 9);

    /* reset clears the queue, LOST and every context's state */
    wr(g, QGPU_REG_RESET, 1);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULTQ_COUNT), ==, 0);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULTQ_LOST), ==, 0);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, 71 + 67);
    for (c = 0; c < 80; c++) {
        g_assert_false(ctx_faulted(g, c));
    }
    g_free(b);
    qgpu_stop(g);
}

/*
 * After a fault of context 3, every EXEC of it is skipped whole (nothing
 * runs, nothing faults) until CTX_CLEAR; other contexts are not affected.
 * No EXEC after the fault can use a slot bound before it.
 */
static void test_ctx_fault_skip(void)
{
    QGPU *g = qgpu_start("max-slots=8,max-contexts=8");
    DmaBuf *b = g_new0(DmaBuf, 1);
    uint64_t buf_a = DMABUF, buf_b = DMABUF + 0x100, buf_c = DMABUF + 0x200;
    uint64_t buf_d = DMABUF + 0x300, buf_e = DMABUF + 0x400;
    uint64_t buf_f = DMABUF + 0x500;
    uint32_t len_a, len_b, len_c, len_d, len_e, len_f, fault_at;
    uint64_t cmds0;

    /* A (context 3): bind slots 0 and 1, fill through slot 0 */
    dma_bind(b, 0, 0x10000, 0x1000);
    dma_bind(b, 1, 0x20000, 0x1000);
    dma(b, QGPU_DMA_FILL, 0, 4, 0, 0, 16, 0xa1a1a1a1);
    dma_put(g, buf_a, b);
    len_a = b->n * 4;
    /* B (context 3): a FILL that works, then one through unbound slot 6 */
    b->n = 0;
    dma(b, QGPU_DMA_FILL, 0, 4, 0, 16, 16, 0xb2b2b2b2);
    fault_at = b->n * 4;
    dma(b, QGPU_DMA_FILL, 0, 4, 6, 0, 4, 0);
    dma_put(g, buf_b, b);
    len_b = b->n * 4;
    /* C: fills through slots 1 and 0, then a command that would fault */
    b->n = 0;
    dma(b, QGPU_DMA_FILL, 0, 4, 1, 0, 16, 0xc3c3c3c3);
    dma(b, QGPU_DMA_FILL, 0, 4, 0, 32, 16, 0xc3c3c3c3);
    dma(b, QGPU_DMA_FILL, 0, 4, 7, 0, 4, 0);
    dma_put(g, buf_c, b);
    len_c = b->n * 4;
    /* D (context 4): bind slot 0 */
    b->n = 0;
    dma_bind(b, 0, 0x30000, 0x1000);
    dma_put(g, buf_d, b);
    len_d = b->n * 4;
    /* E: fill through slot 0 */
    b->n = 0;
    dma(b, QGPU_DMA_FILL, 0, 4, 0, 0, 16, 0xd4d4d4d4);
    dma_put(g, buf_e, b);
    len_e = b->n * 4;
    /* F: bind slot 1 anew, fill through it */
    b->n = 0;
    dma_bind(b, 1, 0x40000, 0x1000);
    dma(b, QGPU_DMA_FILL, 0, 4, 1, 0, 16, 0xf5f5f5f5);
    dma_put(g, buf_f, b);
    len_f = b->n * 4;

    cmds0 = rd64(g, QGPU_ENGINE_BASE(1) + QGPU_ENG_CMDS_LO);
    cmd_exec(g, 3, SYS(buf_a), 0, len_a);
    cmd_exec(g, 4, SYS(buf_d), 0, len_d);
    cmd_exec(g, 3, SYS(buf_b), 0, len_b);
    cmd_exec(g, 3, SYS(buf_c), 0, len_c);           /* skipped */
    cmd_exec(g, 3, SYS(buf_c), 2, len_c);           /* skipped, bad align */
    cmd_exec(g, 3, SYS(buf_f), 0, len_f);           /* skipped */
    cmd_exec(g, 4, SYS(buf_e), 0, len_e);
    cmd_fence(g, 1, SYS(FENCE_MEM), 7, false);
    run(g, 1);
    g_assert_cmpuint(qtest_readq(g->qts, FENCE_MEM), ==, 7);
    g_assert_cmphex(erd(g, 1, QGPU_ENG_STATUS), ==, 0);
    g_assert_cmpuint(erd(g, 1, QGPU_ENG_RING_HEAD), ==, g->tail[1]);
    /* one fault: B's; nothing of C or F ran */
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, 1);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULTQ_COUNT), ==, 1);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_REASON), ==, QGPU_FAULT_BAD_SLOT);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_CONTEXT), ==, 3);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_OFFSET), ==, fault_at);
    g_assert_cmphex(vram_rd(g, 0x10000), ==, 0xa1a1a1a1);
    g_assert_cmphex(vram_rd(g, 0x10010), ==, 0xb2b2b2b2);
    g_assert_cmphex(vram_rd(g, 0x10020), ==, 0);
    g_assert_cmphex(vram_rd(g, 0x20000), ==, 0);
    g_assert_cmphex(vram_rd(g, 0x40000), ==, 0);
    /* context 4 kept its binding */
    g_assert_cmphex(vram_rd(g, 0x30000), ==, 0xd4d4d4d4);
    g_assert_true(ctx_faulted(g, 3));
    g_assert_false(ctx_faulted(g, 4));
    /*
     * Commands: A 3 + 1, D 1 + 1, B 1 + 1 (an EXEC whose buffer faulted
     * still completes), C, C, F skipped: 1 each, E 1 + 1, FENCE 1.
     */
    g_assert_cmpuint(rd64(g, QGPU_ENGINE_BASE(1) + QGPU_ENG_CMDS_LO) - cmds0,
                     ==, 4 + 2 + 2 + 3 + 2 + 1);
    fault_pop(g);

    /* CTX_UNBIND does not end the faulted state */
    cmd_ctx_unbind(g, 1, 3, 0, 8);
    cmd_exec(g, 3, SYS(buf_f), 0, len_f);
    run(g, 1);
    g_assert_cmphex(vram_rd(g, 0x40000), ==, 0);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, 1);
    g_assert_true(ctx_faulted(g, 3));

    /* CTX_CLEAR does, with an empty table: slots 0 and 1 are unbound */
    cmd_ctx_clear(g, 3);
    cmd_exec(g, 3, SYS(buf_c), 0, len_c);
    run(g, 1);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, 2);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_REASON), ==, QGPU_FAULT_BAD_SLOT);
    g_assert_cmphex(rd64(g, QGPU_REG_FAULT_ADDR_LO), ==, 1);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_OFFSET), ==, 0);
    g_assert_cmphex(vram_rd(g, 0x20000), ==, 0);
    fault_pop(g);
    cmd_ctx_clear(g, 3);
    cmd_exec(g, 3, SYS(buf_e), 0, len_e);
    run(g, 1);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, 3);
    g_assert_cmphex(rd64(g, QGPU_REG_FAULT_ADDR_LO), ==, 0);
    g_assert_cmphex(vram_rd(g, 0x10000), ==, 0xa1a1a1a1);
    fault_pop(g);

    /* and work that binds its own slots runs again */
    cmd_ctx_clear(g, 3);
    cmd_exec(g, 3, SYS(buf_f), 0, len_f);
    run(g, 1);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, 3);
    g_assert_cmphex(vram_rd(g, 0x40000), ==, 0xf5f5f5f5);
    g_assert_cmphex(vram_rd(g, 0x4000c), ==, 0xf5f5f5f5);
    g_assert_false(ctx_faulted(g, 3));
    g_free(b);
    qgpu_stop(g);
}

/* Faults inside a chunked job and during a blocked WAIT invalidate too. */
static void test_ctx_fault_job_wait(void)
{
    QGPU *g = qgpu_start(NULL);
    DmaBuf *b = g_new0(DmaBuf, 1);
    uint32_t wait_at;

    /* GART page 0 -> SYSBUF; GART page 1 unmapped */
    qtest_memset(g->qts, GART_TABLE, 0, 64 * 8);
    wr(g, QGPU_REG_GART_BASE_LO, GART_TABLE);
    wr(g, QGPU_REG_GART_CTRL, QGPU_GART_CTRL_ENABLE);
    qtest_writeq(g->qts, PAGELIST, SYSBUF);
    cmd_map_ap(g, 0, 1, SYS(PAGELIST));
    run(g, 0);
    fill_sys(g, SYSBUF, 4096, 5);

    /* a COPY of two GART pages into VRAM faults on the second page */
    dma_bind(b, 0, QGPU_GART_BASE, 2 * 4096);
    dma_bind(b, 1, 0x100000, 2 * 4096);
    dma(b, QGPU_DMA_COPY, 0, 5, 1, 0, 0, 0, 2 * 4096);
    dma_put(g, DMABUF, b);
    cmd_exec(g, 6, SYS(DMABUF), 0, b->n * 4);
    run(g, 1);
    expect_fault(g, 1, QGPU_FAULT_GART_UNMAPPED, 1);
    g_assert_cmphex(rd64(g, QGPU_REG_FAULT_ADDR_LO), ==,
                    QGPU_GART_BASE + 4096);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_CONTEXT), ==, 6);
    check_vram(g, 0x100000, 4096, 5);
    g_assert_true(ctx_faulted(g, 6));
    fault_pop(g);

    /* a WAIT whose memory goes away while it is blocked */
    qtest_writeq(g->qts, SYSBUF, 0);
    b->n = 0;
    dma_bind(b, 0, QGPU_GART_BASE, 4096);
    dma_bind(b, 1, 0x100000, 4096);
    wait_at = b->n * 4;
    dma(b, QGPU_DMA_WAIT, 0, 4, 0, 0, 1, 0);
    dma(b, QGPU_DMA_FILL, 0, 4, 1, 0, 4, 0x77777777);
    dma_put(g, DMABUF, b);
    cmd_exec(g, 7, SYS(DMABUF), 0, b->n * 4);
    cmd_fence(g, 1, SYS(FENCE_MEM), 9, false);
    kick(g, 1);
    qtest_clock_step(g->qts, 2 * 1000 * 1000);
    g_assert_cmphex(erd(g, 1, QGPU_ENG_STATUS), ==, QGPU_ENG_STATUS_BUSY);
    g_assert_false(ctx_faulted(g, 7));
    wr(g, QGPU_REG_GART_CTRL, 0);
    qtest_clock_step(g->qts, 2 * 1000 * 1000);
    wait_idle(g, 1);
    expect_fault(g, 1, QGPU_FAULT_GART_UNMAPPED, 2);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_CONTEXT), ==, 7);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_OFFSET), ==, wait_at);
    g_assert_cmpuint(qtest_readq(g->qts, FENCE_MEM), ==, 9);
    g_assert_cmphex(vram_rd(g, 0x100000), !=, 0x77777777);
    g_assert_true(ctx_faulted(g, 7));
    g_free(b);
    qgpu_stop(g);
}

/* CTX_UNBIND clears exactly [first, first + count) of one context. */
static void test_ctx_unbind(void)
{
    QGPU *g = qgpu_start("max-slots=8,max-contexts=4");
    DmaBuf *b = g_new0(DmaBuf, 1);
    uint64_t bind = DMABUF, fills = DMABUF + 0x1000, one = DMABUF + 0x2000;
    uint32_t len_bind, len_fills, len_one, faults = 0, off, i;
    uint32_t c[6];

    /* bind: slot i -> 0x10000 + i * 0x1000 (4 KiB), slots 0..7 */
    for (i = 0; i < 8; i++) {
        dma_bind(b, i, 0x10000 + i * 0x1000, 0x1000);
    }
    dma_put(g, bind, b);
    len_bind = b->n * 4;
    /* fills: slot i gets 0x11111111 * (i + 1) at offset 0, in order */
    b->n = 0;
    for (i = 0; i < 8; i++) {
        dma(b, QGPU_DMA_FILL, 0, 4, i, 0, 4, 0x11111111 * (i + 1));
    }
    dma_put(g, fills, b);
    len_fills = b->n * 4;

#define SLOT_WORD(ctx_base, i) vram_rd(g, (ctx_base) + (i) * 0x1000)
    /* unbind slots 1 and 2 of context 1 */
    cmd_exec(g, 1, SYS(bind), 0, len_bind);
    cmd_ctx_unbind(g, 1, 1, 1, 2);
    /* slot 0 works, slot 1 faults */
    cmd_exec(g, 1, SYS(fills), 0, len_fills);
    run(g, 1);
    expect_fault(g, 1, QGPU_FAULT_BAD_SLOT, ++faults);
    g_assert_cmphex(rd64(g, QGPU_REG_FAULT_ADDR_LO), ==, 1);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_OFFSET), ==, 5 * 4);
    g_assert_cmphex(erd(g, 1, QGPU_ENG_STATUS), ==, 0);
    g_assert_cmphex(SLOT_WORD(0x10000, 0), ==, 0x11111111);
    g_assert_cmphex(SLOT_WORD(0x10000, 1), ==, 0);
    /* slot 2 is unbound too, slot 3 and on still work */
    for (i = 2; i < 8; i++) {
        b->n = 0;
        dma(b, QGPU_DMA_FILL, 0, 4, i, 0, 4, 0x11111111 * (i + 1));
        dma_put(g, one, b);
        len_one = b->n * 4;
        cmd_ctx_clear(g, 1);
        cmd_exec(g, 1, SYS(bind), 0, len_bind);
        cmd_ctx_unbind(g, 1, 1, 1, 2);
        cmd_exec(g, 1, SYS(one), 0, len_one);
        run(g, 1);
        if (i == 2) {
            expect_fault(g, 1, QGPU_FAULT_BAD_SLOT, ++faults);
            g_assert_cmphex(rd64(g, QGPU_REG_FAULT_ADDR_LO), ==, 2);
            g_assert_cmphex(SLOT_WORD(0x10000, 2), ==, 0);
        } else {
            g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, faults);
            g_assert_cmphex(SLOT_WORD(0x10000, i), ==, 0x11111111 * (i + 1));
        }
    }

    /* count 0 is a no-op, also at the end of the table */
    cmd_ctx_clear(g, 1);
    cmd_exec(g, 1, SYS(bind), 0, len_bind);
    cmd_ctx_unbind(g, 1, 1, 0, 0);
    cmd_ctx_unbind(g, 1, 1, 5, 0);
    cmd_ctx_unbind(g, 1, 1, 8, 0);
    /* another context's table is not touched */
    cmd_exec(g, 2, SYS(bind), 0, len_bind);
    cmd_ctx_unbind(g, 1, 3, 0, 8);
    cmd_exec(g, 1, SYS(fills), 0, len_fills);
    run(g, 1);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, faults);
    for (i = 0; i < 8; i++) {
        g_assert_cmphex(SLOT_WORD(0x10000, i), ==, 0x11111111 * (i + 1));
        vram_wr(g, 0x10000 + i * 0x1000, 0);
    }
    /* the last slots, up to exactly max_slots */
    cmd_ctx_unbind(g, 1, 2, 5, 3);
    cmd_exec(g, 2, SYS(fills), 0, len_fills);
    run(g, 1);
    expect_fault(g, 1, QGPU_FAULT_BAD_SLOT, ++faults);
    g_assert_cmphex(rd64(g, QGPU_REG_FAULT_ADDR_LO), ==, 5);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_CONTEXT), ==, 2);
    g_assert_cmphex(SLOT_WORD(0x10000, 4), ==, 0x55555555);
    g_assert_cmphex(SLOT_WORD(0x10000, 5), ==, 0);

    /* bad context: BAD_CONTEXT, ring halted at the command */
    cmd_ctx_clear(g, 1);
    cmd_exec(g, 1, SYS(bind), 0, len_bind);
    run(g, 1);
    off = g->tail[1];
    cmd_ctx_unbind(g, 1, 4, 0, 1);
    run(g, 1);
    expect_fault(g, 1, QGPU_FAULT_BAD_CONTEXT, ++faults);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_CONTEXT), ==, 4);
    g_assert_cmphex(rd64(g, QGPU_REG_FAULT_ADDR_LO), ==, 4);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_OFFSET), ==, off);
    g_assert_cmphex(erd(g, 1, QGPU_ENG_STATUS), ==, QGPU_ENG_STATUS_HALTED);
    g_assert_cmpuint(erd(g, 1, QGPU_ENG_RING_HEAD), ==, off);
    engine_reset(g, 1);
    cmd_ctx_unbind(g, 1, 0xffffffff, 0, 0);
    run(g, 1);
    expect_fault(g, 1, QGPU_FAULT_BAD_CONTEXT, ++faults);
    engine_reset(g, 1);

    /* range beyond max_slots, computed without wrapping: BAD_SLOT */
#define UNBIND_RANGE(first_, count_) do {                               \
        cmd_ctx_unbind(g, 1, 1, first_, count_);                        \
        run(g, 1);                                                      \
        expect_fault(g, 1, QGPU_FAULT_BAD_SLOT, ++faults);              \
        g_assert_cmpuint(rd(g, QGPU_REG_FAULT_CONTEXT), ==, 1);         \
        g_assert_cmphex(rd64(g, QGPU_REG_FAULT_ADDR_LO), ==, first_);   \
        g_assert_cmphex(erd(g, 1, QGPU_ENG_STATUS), ==,                 \
                        QGPU_ENG_STATUS_HALTED);                        \
        engine_reset(g, 1);                                             \
    } while (0)

    UNBIND_RANGE(0xffffffff, 2);
    UNBIND_RANGE(7, 2);
    UNBIND_RANGE(0, 9);
    UNBIND_RANGE(0, 0xffffffff);
    UNBIND_RANGE(9, 0);
#undef UNBIND_RANGE
    /* nothing was unbound, and the context is not faulted */
    g_assert_false(ctx_faulted(g, 1));
    cmd_exec(g, 1, SYS(fills), 0, len_fills);
    run(g, 1);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, faults);
    g_assert_cmphex(SLOT_WORD(0x10000, 7), ==, 0x88888888);

    /* on the paging engine: BAD_OPCODE */
    cmd_ctx_unbind(g, 0, 1, 0, 1);
    run(g, 0);
    expect_fault(g, 0, QGPU_FAULT_BAD_OPCODE, ++faults);
    g_assert_cmphex(erd(g, 0, QGPU_ENG_STATUS), ==, QGPU_ENG_STATUS_HALTED);
    engine_reset(g, 0);

    /* too short: BAD_LENGTH; longer: the extra dwords are ignored */
    c[0] = QGPU_CMD_HDR(QGPU_CMD_CTX_UNBIND, 0, 3);
    c[1] = 1;
    c[2] = 0;
    emit(g, 1, c, 3);
    run(g, 1);
    expect_fault(g, 1, QGPU_FAULT_BAD_LENGTH, ++faults);
    engine_reset(g, 1);
    c[0] = QGPU_CMD_HDR(QGPU_CMD_CTX_UNBIND, 0, 6);
    c[1] = 1;
    c[2] = 7;
    c[3] = 1;
    c[4] = c[5] = 0xdeadbeef;
    emit(g, 1, c, 6);
    cmd_exec(g, 1, SYS(fills), 0, len_fills);
    run(g, 1);
    expect_fault(g, 1, QGPU_FAULT_BAD_SLOT, ++faults);
    g_assert_cmphex(rd64(g, QGPU_REG_FAULT_ADDR_LO), ==, 7);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_OFFSET), ==, 7 * 5 * 4);
    g_assert_cmphex(erd(g, 1, QGPU_ENG_STATUS), ==, 0);
#undef SLOT_WORD
    g_free(b);
    qgpu_stop(g);
}

/* ---- GPU MMU (version 1.2, docs/hw-spec.md section 15) ---- */

#define PT_VRAM         0x3000000ull    /* page tables in VRAM */
#define PT_SYSMEM       0x8000000ull    /* page tables in guest memory */
#define SYSPAGES        0x9000000ull    /* system pages mapped by VAs */
#define VA_A            0x10000000ull   /* root index 0, level-1 index 128 */
#define VA_HIGH         (QGPU_MMU_VA_SIZE - 0x200000)   /* last indices */
#define RB_VA           0x60000000ull   /* readback page of the tests */
#define RB_PAGE         0x2ff0000ull
#define LO(x)           ((uint32_t)(x))
#define HI(x)           ((uint32_t)((uint64_t)(x) >> 32))
#define PTE_RW          QGPU_PTE_VALID
#define PTE_SYS         (QGPU_PTE_VALID | QGPU_PTE_SYSTEM)

/* Page tables the tests build, in VRAM (through BAR2) or guest memory */
typedef struct PT {
    QGPU *g;
    bool sys;
    uint64_t next;              /* where the next table goes */
    uint64_t root;              /* root descriptor */
} PT;

static uint64_t pt_flags(PT *p)
{
    return QGPU_PTE_VALID | (p->sys ? QGPU_PTE_SYSTEM : 0);
}

static void pt_wq(PT *p, uint64_t a, uint64_t v)
{
    if (p->sys) {
        qtest_writeq(p->g->qts, a, v);
    } else {
        qpci_io_writeq(p->g->dev, p->g->bar2, a, v);
    }
}

static uint64_t pt_rq(PT *p, uint64_t a)
{
    return p->sys ? qtest_readq(p->g->qts, a)
                  : qpci_io_readq(p->g->dev, p->g->bar2, a);
}

static uint64_t pt_table(PT *p)
{
    static const uint8_t zero[4096];
    uint64_t t = p->next;

    if (p->sys) {
        qtest_memset(p->g->qts, t, 0, sizeof(zero));
    } else {
        qpci_memwrite(p->g->dev, p->g->bar2, t, zero, sizeof(zero));
    }
    p->next += 4096;
    return t;
}

static void pt_init(PT *p, QGPU *g, bool sys, uint64_t base)
{
    p->g = g;
    p->sys = sys;
    p->next = base;
    p->root = qgpu_mmu_pte(pt_table(p), pt_flags(p));
}

/*
 * Address of @va's entry in its level-@level table; with @make, missing
 * tables on the way are created
 */
static uint64_t pt_entry(PT *p, uint64_t va, int level, bool make)
{
    uint64_t table = p->root & QGPU_PTE_ADDR_MASK;
    int l;

    for (l = QGPU_MMU_LEVELS - 1; l > level; l--) {
        uint64_t ea = table + qgpu_mmu_index(va, l) * 8;
        uint64_t e = pt_rq(p, ea);

        if (!(e & QGPU_PTE_VALID)) {
            g_assert_true(make);
            e = qgpu_mmu_pte(pt_table(p), pt_flags(p));
            pt_wq(p, ea, e);
        }
        table = e & QGPU_PTE_ADDR_MASK;
    }
    return table + qgpu_mmu_index(va, level) * 8;
}

/* The leaf entry of @va is @pte */
static void pt_map(PT *p, uint64_t va, uint64_t pte)
{
    pt_wq(p, pt_entry(p, va, 0, true), pte);
}

static void set_paging_root(QGPU *g, uint64_t root)
{
    wr(g, QGPU_REG_MMU_PAGING_ROOT_LO, root);
    wr(g, QGPU_REG_MMU_PAGING_ROOT_HI, root >> 32);
}

static void cmd_update_pt(QGPU *g, uint64_t dst, uint32_t count, uint64_t list,
                          uint32_t flags)
{
    uint32_t c[] = {
        QGPU_CMD_HDR(QGPU_CMD_UPDATE_PT, flags, QGPU_CMD_UPDATE_PT_LEN),
        dst, dst >> 32, count, list, list >> 32,
    };
    emit(g, 0, c, ARRAY_SIZE(c));
}

/* UPDATE_PT with @count entries inline; @len: the header's length */
static void cmd_update_pt_inline(QGPU *g, uint64_t dst, uint32_t flags,
                                 const uint64_t *ents, uint32_t count,
                                 uint32_t len)
{
    uint32_t c[] = {
        QGPU_CMD_HDR(QGPU_CMD_UPDATE_PT, flags | QGPU_PT_INLINE, len),
        dst, dst >> 32, count, 0xdead0000, 0xbeef,
    };
    uint32_t i;

    emit(g, 0, c, ARRAY_SIZE(c));
    for (i = 0; i < count; i++) {
        uint32_t e[] = { ents[i], ents[i] >> 32 };

        emit(g, 0, e, 2);
    }
}

static void cmd_flush_tlb(QGPU *g, uint64_t root, uint32_t flags)
{
    uint32_t c[] = {
        QGPU_CMD_HDR(QGPU_CMD_FLUSH_TLB, flags, QGPU_CMD_FLUSH_TLB_LEN),
        root, root >> 32,
    };
    emit(g, 0, c, ARRAY_SIZE(c));
}

static void cmd_vtransfer(QGPU *g, uint64_t size, uint64_t src, uint64_t dst)
{
    uint32_t c[] = {
        QGPU_CMD_HDR(QGPU_CMD_TRANSFER_VIRTUAL, 0,
                     QGPU_CMD_TRANSFER_VIRTUAL_LEN),
        size, size >> 32, src, src >> 32, dst, dst >> 32,
    };
    emit(g, 0, c, ARRAY_SIZE(c));
}

static void cmd_vfill(QGPU *g, uint64_t size, uint64_t dst, uint32_t pattern)
{
    uint32_t c[] = {
        QGPU_CMD_HDR(QGPU_CMD_FILL_VIRTUAL, 0, QGPU_CMD_FILL_VIRTUAL_LEN),
        size, size >> 32, dst, dst >> 32, pattern,
    };
    emit(g, 0, c, ARRAY_SIZE(c));
}

static void cmd_ctx_set_vm(QGPU *g, int n, uint32_t ctx, uint64_t root)
{
    uint32_t c[] = {
        QGPU_CMD_HDR(QGPU_CMD_CTX_SET_VM, 0, QGPU_CMD_CTX_SET_VM_LEN),
        ctx, root, root >> 32,
    };
    emit(g, n, c, ARRAY_SIZE(c));
}

/* The 32-bit word at @va of the paging space (copied to RB_VA) */
static uint32_t vread(QGPU *g, uint64_t va)
{
    vram_wr(g, RB_PAGE, 0xeeeeeeee);
    cmd_vtransfer(g, 4, va, RB_VA);
    run(g, 0);
    return vram_rd(g, RB_PAGE);
}

/* FILL_VIRTUAL of one word at @va (one TLB lookup) */
static void vpoke(QGPU *g, uint64_t va, uint32_t v)
{
    cmd_vfill(g, 4, va, v);
    run(g, 0);
}

static uint64_t tlb_hits(QGPU *g)
{
    return rd64(g, QGPU_REG_TLB_HITS_LO);
}

static uint64_t tlb_misses(QGPU *g)
{
    return rd64(g, QGPU_REG_TLB_MISSES_LO);
}

/*
 * The oldest fault record is a fault of a virtual access by engine @n:
 * @reason at @va, walk level @level, a write or not, in @root's space.
 * Pops it.
 */
static void expect_vfault(QGPU *g, int n, uint32_t reason, uint64_t va,
                          unsigned level, bool write, uint64_t root)
{
    g_assert_cmpuint(rd(g, QGPU_REG_FAULTQ_COUNT), >=, 1);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_REASON), ==, reason);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_ENGINE), ==, n);
    g_assert_cmphex(rd64(g, QGPU_REG_FAULT_ADDR_LO), ==, va);
    g_assert_cmphex(rd(g, QGPU_REG_FAULT_INFO), ==,
                    QGPU_FAULT_INFO_VIRTUAL |
                    (write ? QGPU_FAULT_INFO_WRITE : 0) |
                    level << QGPU_FAULT_INFO_LEVEL_SHIFT);
    g_assert_cmpuint(QGPU_FAULT_INFO_LEVEL(rd(g, QGPU_REG_FAULT_INFO)), ==,
                     level);
    g_assert_cmphex(rd64(g, QGPU_REG_FAULT_VM_LO), ==, root);
    fault_pop(g);
}

/* A paging command faults: @reason at @va; the engine is reset after */
#define PAGING_VFAULT(reason_, va_, level_, write_, root_) do {     \
        run(g, 0);                                                  \
        g_assert_cmphex(erd(g, 0, QGPU_ENG_STATUS), ==,             \
                        QGPU_ENG_STATUS_HALTED);                    \
        expect_vfault(g, 0, reason_, va_, level_, write_, root_);   \
        g_assert_cmpuint(rd(g, QGPU_REG_FAULTQ_COUNT), ==, 0);      \
        engine_reset(g, 0);                                         \
    } while (0)

static void test_mmu_caps(void)
{
    QGPU *g = qgpu_start(NULL);
    uint32_t faults = 0;

    /* the MMU is there from 1.2 on */
    g_assert_cmphex(rd(g, QGPU_REG_VERSION), >=, 0x00010002);
    g_assert_cmphex(rd(g, QGPU_REG_CAPS) & QGPU_CAP_MMU, ==, QGPU_CAP_MMU);
    g_assert_cmpuint(rd(g, QGPU_REG_MMU_VA_BITS), ==, 39);
    g_assert_cmpuint(rd(g, QGPU_REG_MMU_LEVELS), ==, 3);
    g_assert_cmphex(rd(g, QGPU_REG_MMU_PAGE_SIZES), ==, 0x11);
    g_assert_cmpuint(rd(g, QGPU_REG_MMU_PTE_SIZE), ==, 8);
    g_assert_cmpuint(rd(g, QGPU_REG_MMU_TLB_ENTRIES), ==, 64);
    g_assert_cmphex(rd64(g, QGPU_REG_MMU_PAGING_ROOT_LO), ==, 0);
    g_assert_cmphex(rd(g, QGPU_REG_FAULT_INFO), ==, 0);
    g_assert_cmphex(rd64(g, QGPU_REG_FAULT_VM_LO), ==, 0);
    g_assert_cmpuint(tlb_hits(g), ==, 0);
    g_assert_cmpuint(tlb_misses(g), ==, 0);
    g_assert_cmpuint(rd64(g, QGPU_REG_TLB_FLUSHES_LO), ==, 0);
    /* reserved offsets in the block read 0 */
    g_assert_cmphex(rd(g, 0x11c), ==, 0);
    g_assert_cmphex(rd(g, 0x12c), ==, 0);
    g_assert_cmphex(rd(g, 0x148), ==, 0);

    /* MMU_PAGING_ROOT is RW, both halves */
    set_paging_root(g, 0x123456789abcd003ull);
    g_assert_cmphex(rd64(g, QGPU_REG_MMU_PAGING_ROOT_LO), ==,
                    0x123456789abcd003ull);
    wr(g, QGPU_REG_MMU_PAGING_ROOT_HI, 0);
    g_assert_cmphex(rd64(g, QGPU_REG_MMU_PAGING_ROOT_LO), ==, 0x9abcd003ull);

    /* the others are read-only: BAD_REGISTER, value unchanged */
    wr(g, QGPU_REG_MMU_VA_BITS, 48);
    g_assert_cmpuint(rd(g, QGPU_REG_MMU_VA_BITS), ==, 39);
    expect_fault(g, 0xff, QGPU_FAULT_BAD_REGISTER, ++faults);
    g_assert_cmphex(rd64(g, QGPU_REG_FAULT_ADDR_LO), ==, QGPU_REG_MMU_VA_BITS);
    g_assert_cmphex(rd(g, QGPU_REG_FAULT_INFO), ==, 0);
    wr(g, QGPU_REG_MMU_TLB_ENTRIES, 1);
    expect_fault(g, 0xff, QGPU_FAULT_BAD_REGISTER, ++faults);
    wr(g, QGPU_REG_FAULT_INFO, 1);
    expect_fault(g, 0xff, QGPU_FAULT_BAD_REGISTER, ++faults);
    wr(g, QGPU_REG_FAULT_VM_HI, 1);
    expect_fault(g, 0xff, QGPU_FAULT_BAD_REGISTER, ++faults);
    wr(g, QGPU_REG_TLB_HITS_LO, 5);
    expect_fault(g, 0xff, QGPU_FAULT_BAD_REGISTER, ++faults);
    wr(g, QGPU_REG_TLB_FLUSHES_HI, 5);
    expect_fault(g, 0xff, QGPU_FAULT_BAD_REGISTER, ++faults);
    g_assert_cmpuint(rd64(g, QGPU_REG_TLB_HITS_LO), ==, 0);
    wr(g, 0x11c, 5);
    expect_fault(g, 0xff, QGPU_FAULT_BAD_REGISTER, ++faults);
    /* a 16-bit access to MMU_PAGING_ROOT: BAD_REGISTER, dropped */
    qpci_io_writew(g->dev, g->bar0, QGPU_REG_MMU_PAGING_ROOT_LO, 0x1111);
    expect_fault(g, 0xff, QGPU_FAULT_BAD_REGISTER, ++faults);
    g_assert_cmphex(rd64(g, QGPU_REG_MMU_PAGING_ROOT_LO), ==, 0x9abcd003ull);

    /* reset clears the paging root */
    wr(g, QGPU_REG_RESET, 1);
    g_assert_cmphex(rd64(g, QGPU_REG_MMU_PAGING_ROOT_LO), ==, 0);
    g_assert_cmpuint(rd(g, QGPU_REG_MMU_VA_BITS), ==, 39);
    qgpu_stop(g);
}

/* 4 KiB pages through tables in VRAM, then through tables in guest memory */
static void test_mmu_walk(void)
{
    int sys;

    for (sys = 0; sys < 2; sys++) {
        QGPU *g = qgpu_start(NULL);
        g_autofree uint8_t *src = g_malloc(4 * 4096);
        g_autofree uint8_t *got = g_malloc(4 * 4096);
        uint64_t srcpage[4] = {
            0x100000, SYS(SYSPAGES), 0x105000, SYS(SYSPAGES + 0x3000),
        };
        uint64_t m0, h0, bytes0;
        PT p;
        int i;

        pt_init(&p, g, sys, sys ? PT_SYSMEM : PT_VRAM);
        set_paging_root(g, p.root);
        /* source: VRAM and system pages, scattered; destination: 4 pages */
        for (i = 0; i < 4 * 4096; i++) {
            src[i] = i * 7 + (i >> 8) + 1;
        }
        for (i = 0; i < 4; i++) {
            bool s_page = srcpage[i] & QGPU_SYS_BIT;
            uint64_t pa = srcpage[i] & ~QGPU_SYS_BIT;

            pt_map(&p, VA_A + i * 4096, pa | (s_page ? PTE_SYS : PTE_RW));
            pt_map(&p, VA_HIGH + i * 4096, (0x200000 + i * 4096) | PTE_RW);
            if (s_page) {
                qtest_memwrite(g->qts, pa, src + i * 4096, 4096);
            } else {
                qpci_memwrite(g->dev, g->bar2, pa, src + i * 4096, 4096);
            }
        }
        pt_map(&p, RB_VA, RB_PAGE | PTE_RW);
        m0 = tlb_misses(g);
        h0 = tlb_hits(g);
        bytes0 = rd64(g, QGPU_ENGINE_BASE(0) + QGPU_ENG_BYTES_LO);
        cmd_vtransfer(g, 4 * 4096 - 8, VA_A + 3, VA_HIGH + 5);
        run(g, 0);
        g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, 0);
        qpci_memread(g->dev, g->bar2, 0x200000, got, 4 * 4096);
        g_assert_cmpmem(src + 3, 4 * 4096 - 8, got + 5, 4 * 4096 - 8);
        g_assert_cmpuint(got[4], ==, 0);
        g_assert_cmpuint(rd64(g, QGPU_ENGINE_BASE(0) + QGPU_ENG_BYTES_LO), ==,
                         bytes0 + 4 * 4096 - 8);
        /* one walk per page touched (4 + 4), the other pieces hit */
        g_assert_cmpuint(tlb_misses(g) - m0, ==, 8);
        g_assert_cmpuint(tlb_hits(g) - h0, >, 0);

        /* FILL_VIRTUAL across a VRAM and a system page */
        cmd_vfill(g, 0x1000, VA_A + 0x800, 0xa1b2c3d4);
        run(g, 0);
        g_assert_cmphex(vram_rd(g, 0x1007fc), ==, ldl_le_p(src + 0x7fc));
        g_assert_cmphex(vram_rd(g, 0x100800), ==, 0xa1b2c3d4);
        g_assert_cmphex(vram_rd(g, 0x100ffc), ==, 0xa1b2c3d4);
        g_assert_cmphex(qtest_readl(g->qts, SYSPAGES), ==, 0xa1b2c3d4);
        g_assert_cmphex(qtest_readl(g->qts, SYSPAGES + 0x7fc), ==,
                        0xa1b2c3d4);
        g_assert_cmphex(qtest_readl(g->qts, SYSPAGES + 0x800), ==,
                        ldl_le_p(src + 0x1800));
        /* reads through the walk */
        g_assert_cmphex(vread(g, VA_A + 0x1000), ==, 0xa1b2c3d4);
        g_assert_cmphex(vread(g, VA_A + 0x2ffc), ==, ldl_le_p(src + 0x2ffc));
        g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, 0);
        qgpu_stop(g);
    }
}

/* Each PTE bit, and the fault records of walks */
static void test_mmu_faults(void)
{
    QGPU *g = qgpu_start(NULL);
    PT p;

    pt_init(&p, g, false, PT_VRAM);
    set_paging_root(g, p.root);
    pt_map(&p, VA_A, 0x100000 | PTE_RW);
    pt_map(&p, VA_A + 0x1000, 0x101000 | PTE_RW | QGPU_PTE_READ_ONLY);
    pt_map(&p, RB_VA, RB_PAGE | PTE_RW);
    vram_wr(g, 0x101000, 0x5eed);

    /* READ_ONLY: reads allowed, a write faults (and writes nothing) */
    g_assert_cmphex(vread(g, VA_A + 0x1000), ==, 0x5eed);
    cmd_vfill(g, 8, VA_A + 0x1010, 0);
    PAGING_VFAULT(QGPU_FAULT_PAGE_READ_ONLY, VA_A + 0x1010, 0, true, p.root);
    g_assert_cmphex(vram_rd(g, 0x101010), ==, 0);
    /* ... also when the copy starts in a writable page: that part done */
    cmd_vfill(g, 0x1000, VA_A + 0x800, 0x77777777);
    PAGING_VFAULT(QGPU_FAULT_PAGE_READ_ONLY, VA_A + 0x1000, 0, true, p.root);
    g_assert_cmphex(vram_rd(g, 0x100ffc), ==, 0x77777777);
    g_assert_cmphex(vram_rd(g, 0x101000), ==, 0x5eed);

    /* not present: leaf entry, level-1 entry, root entry, root itself */
    cmd_vfill(g, 4, VA_A + 0x2000, 0);
    PAGING_VFAULT(QGPU_FAULT_PAGE_NOT_PRESENT, VA_A + 0x2000, 0, true,
                  p.root);
    cmd_vtransfer(g, 4, VA_A + 0x200000, RB_VA);
    PAGING_VFAULT(QGPU_FAULT_PAGE_NOT_PRESENT, VA_A + 0x200000, 1, false,
                  p.root);
    cmd_vtransfer(g, 4, RB_VA, 0x4000000000ull);
    PAGING_VFAULT(QGPU_FAULT_PAGE_NOT_PRESENT, 0x4000000000ull, 2, true,
                  p.root);
    set_paging_root(g, p.root & ~QGPU_PTE_VALID);
    cmd_vfill(g, 4, VA_A, 0);
    PAGING_VFAULT(QGPU_FAULT_PAGE_NOT_PRESENT, VA_A, 3, true,
                  p.root & ~QGPU_PTE_VALID);
    set_paging_root(g, 0);
    cmd_vfill(g, 4, VA_A, 0);
    PAGING_VFAULT(QGPU_FAULT_PAGE_NOT_PRESENT, VA_A, 3, true, 0);
    set_paging_root(g, p.root);

    /* VA range beyond 2^39: checked before anything moves */
    cmd_vfill(g, 8, QGPU_MMU_VA_SIZE - 4, 0);
    PAGING_VFAULT(QGPU_FAULT_BAD_ADDRESS, QGPU_MMU_VA_SIZE - 4, 0xf, true,
                  p.root);
    cmd_vtransfer(g, 4, UINT64_MAX - 3, RB_VA);
    PAGING_VFAULT(QGPU_FAULT_BAD_ADDRESS, UINT64_MAX - 3, 0xf, false, p.root);
    cmd_vtransfer(g, UINT64_MAX, VA_A, RB_VA);
    PAGING_VFAULT(QGPU_FAULT_BAD_ADDRESS, VA_A, 0xf, false, p.root);
    g_assert_cmphex(vram_rd(g, 0x100000), ==, 0);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, 10);
    qgpu_stop(g);
}

/* Tables and pages outside VRAM or guest memory; physical faults */
static void test_mmu_faults_tables(void)
{
    QGPU *g = qgpu_start(NULL);
    uint64_t e;
    PT p;

    pt_init(&p, g, false, PT_VRAM);
    set_paging_root(g, p.root);
    pt_map(&p, VA_A, 0x100000 | PTE_RW);
    vpoke(g, VA_A, 1);

    /* local table outside VRAM: BAD_ADDRESS at the table's level */
    e = pt_entry(&p, VA_A, 1, false);
    pt_wq(&p, e, (64 * MiB) | PTE_RW);
    cmd_flush_tlb(g, p.root, 0);        /* VA_A's translation is cached */
    cmd_vfill(g, 4, VA_A, 0);
    PAGING_VFAULT(QGPU_FAULT_BAD_ADDRESS, VA_A, 0, true, p.root);
    /* system table the platform rejects: DMA_ERROR at its level */
    pt_wq(&p, e, 0x7000000000ull | PTE_SYS);
    cmd_vfill(g, 4, VA_A, 0);
    PAGING_VFAULT(QGPU_FAULT_DMA_ERROR, VA_A, 0, true, p.root);
    e = pt_entry(&p, VA_A, 2, false);
    pt_wq(&p, e, 0xfffffffffffff000ull | PTE_RW);
    cmd_vfill(g, 4, VA_A, 0);
    PAGING_VFAULT(QGPU_FAULT_BAD_ADDRESS, VA_A, 1, true, p.root);
    set_paging_root(g, 0x7000000000ull | PTE_SYS);
    cmd_vfill(g, 4, VA_A, 0);
    PAGING_VFAULT(QGPU_FAULT_DMA_ERROR, VA_A, 2, true,
                  0x7000000000ull | PTE_SYS);
    set_paging_root(g, (64 * MiB) | PTE_RW);
    cmd_vfill(g, 4, VA_A, 0);
    PAGING_VFAULT(QGPU_FAULT_BAD_ADDRESS, VA_A, 2, true, (64 * MiB) | PTE_RW);

    /* pages: local page beyond VRAM, system page beyond guest memory */
    pt_init(&p, g, false, PT_VRAM + 0x100000);
    set_paging_root(g, p.root);
    pt_map(&p, VA_A, (64 * MiB - 0x1000) | PTE_RW);
    pt_map(&p, VA_A + 0x1000, (64 * MiB) | PTE_RW);
    pt_map(&p, VA_A + 0x2000, 0x7000000000ull | PTE_SYS);
    pt_map(&p, VA_A + 0x3000, (1ull << 63) | PTE_SYS);
    cmd_vfill(g, 0x2000, VA_A, 0x12345678);
    PAGING_VFAULT(QGPU_FAULT_BAD_ADDRESS, VA_A + 0x1000, 0, true, p.root);
    g_assert_cmphex(qpci_io_readl(g->dev, g->bar2, 64 * MiB - 4), ==,
                    0x12345678);
    cmd_vfill(g, 0x10, VA_A + 0x2000, 0);
    PAGING_VFAULT(QGPU_FAULT_DMA_ERROR, VA_A + 0x2000, 0, true, p.root);
    cmd_vfill(g, 0x10, VA_A + 0x3000, 0);
    PAGING_VFAULT(QGPU_FAULT_BAD_ADDRESS, VA_A + 0x3000, 0, true, p.root);

    /* a physical fault has FAULT_INFO and FAULT_VM 0 */
    cmd_fill(g, 8, 64 * MiB, 0, 0);
    run(g, 0);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_REASON), ==, QGPU_FAULT_BAD_ADDRESS);
    g_assert_cmphex(rd(g, QGPU_REG_FAULT_INFO), ==, 0);
    g_assert_cmphex(rd64(g, QGPU_REG_FAULT_VM_LO), ==, 0);
    fault_pop(g);
    engine_reset(g, 0);
    /* after all that, the device still works */
    cmd_fence(g, 0, SYS(FENCE_MEM), 0xf00d, false);
    run(g, 0);
    g_assert_cmphex(qtest_readq(g->qts, FENCE_MEM), ==, 0xf00d);
    qgpu_stop(g);
}

/* 64 KiB pages: the group-first entry's 64K bit, mixed with 4 KiB pages */
static void test_mmu_64k(void)
{
    QGPU *g = qgpu_start(NULL);
    uint64_t va = VA_A + 0x100000;      /* leaf index 256: a group start */
    g_autofree uint8_t *src = g_malloc(0x12000);
    g_autofree uint8_t *got = g_malloc(0x12000);
    uint64_t m0;
    PT p;
    int i;

    pt_init(&p, g, false, PT_VRAM);
    set_paging_root(g, p.root);
    /* group 0: one 64 KiB page at 0x400000 (address bits 15:12 ignored) */
    pt_map(&p, va, 0x403000 | PTE_RW | QGPU_PTE_64K);
    for (i = 1; i < 16; i++) {
        /* the other 15 entries are not read */
        pt_map(&p, va + i * 0x1000, (0x500000 + i * 0x1000) | PTE_RW);
    }
    /* group 1: 4 KiB pages; a 64K bit outside the group-first is ignored */
    pt_map(&p, va + 0x10000, 0x600000 | PTE_RW);
    pt_map(&p, va + 0x11000, 0x608000 | PTE_RW | QGPU_PTE_64K);
    /* group 2: group-first has 64K but not VALID: 4 KiB entries count */
    pt_map(&p, va + 0x20000, 0x700000 | QGPU_PTE_64K);
    pt_map(&p, va + 0x21000, 0x701000 | PTE_RW);
    pt_map(&p, RB_VA, RB_PAGE | PTE_RW);

    for (i = 0; i < 0x12000; i++) {
        src[i] = i * 13 + (i >> 9);
    }
    qpci_memwrite(g->dev, g->bar2, 0x1000000, src, 0x12000);
    cmd_flush_tlb(g, 0, QGPU_FLUSH_TLB_ALL);
    run(g, 0);
    m0 = tlb_misses(g);
    /* a 64 KiB page plus 8 KiB of 4 KiB pages, from a physical staging VA */
    for (i = 0; i < 0x12; i++) {
        pt_map(&p, 0x20000000 + i * 0x1000, (0x1000000 + i * 0x1000) | PTE_RW);
    }
    cmd_vtransfer(g, 0x12000, 0x20000000, va);
    run(g, 0);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, 0);
    /* 18 source pages, one 64 KiB and two 4 KiB destination pages */
    g_assert_cmpuint(tlb_misses(g) - m0, ==, 18 + 1 + 2);
    qpci_memread(g->dev, g->bar2, 0x400000, got, 0x10000);
    g_assert_cmpmem(src, 0x10000, got, 0x10000);
    qpci_memread(g->dev, g->bar2, 0x600000, got, 0x1000);
    g_assert_cmpmem(src + 0x10000, 0x1000, got, 0x1000);
    qpci_memread(g->dev, g->bar2, 0x608000, got, 0x1000);
    g_assert_cmpmem(src + 0x11000, 0x1000, got, 0x1000);
    g_assert_cmphex(vram_rd(g, 0x500000 + 0x5000), ==, 0);
    g_assert_cmphex(vram_rd(g, 0x610000), ==, 0);

    /* reads inside the 64 KiB page land at the page's offset */
    vram_wr(g, 0x40abc0, 0xabc0abc0);
    g_assert_cmphex(vread(g, va + 0xabc0), ==, 0xabc0abc0);
    /* group 2: entry 0 not valid (fault), entry 1 is a 4 KiB page */
    vram_wr(g, 0x701010, 0x701010);
    g_assert_cmphex(vread(g, va + 0x21010), ==, 0x701010);
    cmd_vfill(g, 4, va + 0x20000, 0);
    PAGING_VFAULT(QGPU_FAULT_PAGE_NOT_PRESENT, va + 0x20000, 0, true, p.root);
    /* an unaligned 64 KiB page would leave VRAM: BAD_ADDRESS */
    pt_map(&p, va + 0x30000, (64 * MiB + 0x8000) | PTE_RW | QGPU_PTE_64K);
    cmd_vfill(g, 4, va + 0x30000, 0);
    PAGING_VFAULT(QGPU_FAULT_BAD_ADDRESS, va + 0x30000, 0, true, p.root);

    /* a 64 KiB system page */
    pt_map(&p, va + 0x40000, SYSPAGES | PTE_SYS | QGPU_PTE_64K);
    qtest_memset(g->qts, SYSPAGES, 0, 0x10000);
    m0 = tlb_misses(g);
    cmd_vfill(g, 0x10000, va + 0x40000, 0x64646464);
    run(g, 0);
    g_assert_cmpuint(tlb_misses(g) - m0, ==, 1);
    g_assert_cmphex(qtest_readl(g->qts, SYSPAGES), ==, 0x64646464);
    g_assert_cmphex(qtest_readl(g->qts, SYSPAGES + 0xfffc), ==, 0x64646464);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, 2);
    qgpu_stop(g);
}

/* TLB: staleness without FLUSH_TLB, flushes, FIFO capacity, counters */
static void test_mmu_tlb(void)
{
    QGPU *g = qgpu_start(NULL);
    uint64_t m0, h0, f0, leaf;
    PT p, q;

    pt_init(&p, g, false, PT_VRAM);
    pt_init(&q, g, true, PT_SYSMEM);
    set_paging_root(g, p.root);
    pt_map(&p, VA_A, 0x100000 | PTE_RW);
    pt_map(&q, VA_A, 0x180000 | PTE_RW);
    leaf = pt_entry(&p, VA_A, 0, false);

    m0 = tlb_misses(g);
    h0 = tlb_hits(g);
    vpoke(g, VA_A, 1);
    vpoke(g, VA_A + 4, 2);
    g_assert_cmpuint(tlb_misses(g), ==, m0 + 1);
    g_assert_cmpuint(tlb_hits(g), ==, h0 + 1);
    g_assert_cmphex(vram_rd(g, 0x100004), ==, 2);

    /* change the PTE without a flush: the old translation is still used */
    pt_wq(&p, leaf, 0x200000 | PTE_RW);
    vpoke(g, VA_A + 8, 3);
    g_assert_cmphex(vram_rd(g, 0x100008), ==, 3);
    g_assert_cmphex(vram_rd(g, 0x200008), ==, 0);
    /* flushing another address space does not help */
    f0 = rd64(g, QGPU_REG_TLB_FLUSHES_LO);
    cmd_flush_tlb(g, q.root, 0);
    run(g, 0);
    g_assert_cmpuint(rd64(g, QGPU_REG_TLB_FLUSHES_LO), ==, f0 + 1);
    vpoke(g, VA_A + 12, 4);
    g_assert_cmphex(vram_rd(g, 0x10000c), ==, 4);
    /* FLUSH_TLB of the root: the new one; flags of the root do not matter */
    cmd_flush_tlb(g, (p.root & ~QGPU_PTE_VALID) | QGPU_PTE_READ_ONLY, 0);
    run(g, 0);
    g_assert_cmpuint(rd64(g, QGPU_REG_TLB_FLUSHES_LO), ==, f0 + 2);
    m0 = tlb_misses(g);
    vpoke(g, VA_A + 16, 5);
    g_assert_cmpuint(tlb_misses(g), ==, m0 + 1);
    g_assert_cmphex(vram_rd(g, 0x200010), ==, 5);
    g_assert_cmphex(vram_rd(g, 0x100010), ==, 0);
    /* FLUSH_ALL */
    pt_wq(&p, leaf, 0x300000 | PTE_RW);
    vpoke(g, VA_A + 20, 6);
    g_assert_cmphex(vram_rd(g, 0x200014), ==, 6);
    cmd_flush_tlb(g, 0x1000, QGPU_FLUSH_TLB_ALL);
    run(g, 0);
    vpoke(g, VA_A + 24, 7);
    g_assert_cmphex(vram_rd(g, 0x300018), ==, 7);
    g_assert_cmpuint(rd64(g, QGPU_REG_TLB_FLUSHES_LO), ==, f0 + 3);

    /* the same VA in another address space is another TLB entry */
    set_paging_root(g, q.root);
    vpoke(g, VA_A, 8);
    g_assert_cmphex(vram_rd(g, 0x180000), ==, 8);
    set_paging_root(g, p.root);
    vpoke(g, VA_A + 28, 9);
    g_assert_cmphex(vram_rd(g, 0x30001c), ==, 9);

    qgpu_stop(g);
}

/* TLB: FIFO replacement of 64 entries; the render engine's own TLB */
static void test_mmu_tlb_fifo(void)
{
    QGPU *g = qgpu_start(NULL);
    DmaBuf *b = g_new0(DmaBuf, 1);
    uint64_t m0, leaf;
    PT p;
    int i;

    pt_init(&p, g, false, PT_VRAM);
    set_paging_root(g, p.root);
    pt_map(&p, VA_A, 0x300000 | PTE_RW);
    leaf = pt_entry(&p, VA_A, 0, false);

    /* FIFO: VA_A's entry survives 63 other fills, not a 64th */
    for (i = 0; i < 64; i++) {
        pt_map(&p, 0x30000000 + i * 0x1000, (0x400000 + i * 0x1000) | PTE_RW);
    }
    cmd_flush_tlb(g, p.root, 0);
    run(g, 0);
    vpoke(g, VA_A, 10);                 /* fills VA_A's entry */
    pt_wq(&p, leaf, 0x500000 | PTE_RW);
    m0 = tlb_misses(g);
    for (i = 0; i < 63; i++) {
        vpoke(g, 0x30000000 + i * 0x1000, i);
    }
    g_assert_cmpuint(tlb_misses(g), ==, m0 + 63);
    vpoke(g, VA_A + 4, 11);             /* a hit: still the old page */
    g_assert_cmphex(vram_rd(g, 0x300004), ==, 11);
    g_assert_cmpuint(tlb_misses(g), ==, m0 + 63);
    vpoke(g, 0x30000000 + 63 * 0x1000, 63);     /* replaces VA_A's entry */
    vpoke(g, VA_A + 8, 12);
    g_assert_cmpuint(tlb_misses(g), ==, m0 + 65);
    g_assert_cmphex(vram_rd(g, 0x500008), ==, 12);
    g_assert_cmphex(vram_rd(g, 0x300008), ==, 0);
    for (i = 0; i < 64; i++) {
        g_assert_cmphex(vram_rd(g, 0x400000 + i * 0x1000), ==, i);
    }

    /* the render engine has its own TLB; FLUSH_TLB flushes it too */
    cmd_ctx_set_vm(g, 1, 2, p.root);
    dma(b, QGPU_DMA_VFILL, 0, 4, LO(VA_A + 0x40), HI(VA_A + 0x40), 4,
        0xaaaa);
    dma_put(g, DMABUF, b);
    cmd_exec(g, 2, SYS(DMABUF), 0, b->n * 4);
    run(g, 1);
    g_assert_cmphex(vram_rd(g, 0x500040), ==, 0xaaaa);
    pt_wq(&p, leaf, 0x600000 | PTE_RW);
    cmd_exec(g, 2, SYS(DMABUF), 0, b->n * 4);
    run(g, 1);
    vram_wr(g, 0x500040, 0);
    cmd_exec(g, 2, SYS(DMABUF), 0, b->n * 4);
    run(g, 1);
    g_assert_cmphex(vram_rd(g, 0x500040), ==, 0xaaaa);       /* stale */
    cmd_flush_tlb(g, p.root, 0);
    run(g, 0);
    cmd_exec(g, 2, SYS(DMABUF), 0, b->n * 4);
    run(g, 1);
    g_assert_cmphex(vram_rd(g, 0x600040), ==, 0xaaaa);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, 0);
    g_free(b);
    qgpu_stop(g);
}

/* UPDATE_PT: inline, from a list, to a virtual destination; its faults */
static void test_mmu_update_pt(void)
{
    QGPU *g = qgpu_start(NULL);
    uint64_t ents[4], leaf;
    uint64_t *list = g_new(uint64_t, 700);
    PT p;
    int i;

    pt_init(&p, g, false, PT_VRAM);
    set_paging_root(g, p.root);
    pt_map(&p, VA_A, 0x100000 | PTE_RW);        /* creates the leaf table */
    pt_map(&p, RB_VA, RB_PAGE | PTE_RW);
    leaf = pt_entry(&p, VA_A, 0, false);

    /* inline, to the leaf table in VRAM (physical destination) */
    for (i = 0; i < 3; i++) {
        ents[i] = (0x110000 + i * 0x1000) | PTE_RW;
    }
    cmd_update_pt_inline(g, leaf + 8, 0, ents, 3, QGPU_CMD_UPDATE_PT_LEN + 6);
    run(g, 0);
    for (i = 0; i < 3; i++) {
        g_assert_cmphex(qpci_io_readq(g->dev, g->bar2, leaf + 8 + i * 8), ==,
                        ents[i]);
    }
    g_assert_cmphex(qpci_io_readq(g->dev, g->bar2, leaf + 32), ==, 0);
    vram_wr(g, 0x112020, 0x2020);
    g_assert_cmphex(vread(g, VA_A + 0x3020), ==, 0x2020);

    /* from a list of 700 entries (two batches) to guest memory */
    for (i = 0; i < 700; i++) {
        list[i] = 0x1000000000ull * i + i;
    }
    qtest_memwrite(g->qts, PAGELIST, list, 700 * 8);
    qtest_memset(g->qts, SYSBUF, 0xff, 701 * 8);
    cmd_update_pt(g, SYS(SYSBUF), 700, SYS(PAGELIST), 0);
    run(g, 0);
    for (i = 0; i < 700; i++) {
        g_assert_cmphex(qtest_readq(g->qts, SYSBUF + i * 8), ==, list[i]);
    }
    g_assert_cmphex(qtest_readq(g->qts, SYSBUF + 700 * 8), ==, UINT64_MAX);
    /* count 0: no-op */
    cmd_update_pt(g, 0, 0, 0, 0);
    run(g, 0);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, 0);

    /* virtual destination: the paging space maps the leaf table itself */
    pt_map(&p, 0x50000000, (leaf & ~0xfffull) | PTE_RW);
    ents[0] = 0x120000 | PTE_RW;
    cmd_update_pt_inline(g, 0x50000000 + (leaf & 0xfff) + 4 * 8,
                         QGPU_PT_DST_VIRTUAL, ents, 1,
                         QGPU_CMD_UPDATE_PT_LEN + 2);
    cmd_flush_tlb(g, p.root, 0);
    run(g, 0);
    g_assert_cmphex(qpci_io_readq(g->dev, g->bar2, leaf + 32), ==, ents[0]);
    vram_wr(g, 0x120040, 0x4040);
    g_assert_cmphex(vread(g, VA_A + 0x4040), ==, 0x4040);
    /* a virtual destination from a list, straddling two pages */
    pt_map(&p, 0x50001000, 0x130000 | PTE_RW);
    qtest_writeq(g->qts, PAGELIST, 0x1111);
    qtest_writeq(g->qts, PAGELIST + 8, 0x2222);
    cmd_update_pt(g, 0x50000ff8, 2, SYS(PAGELIST), QGPU_PT_DST_VIRTUAL);
    run(g, 0);
    g_assert_cmphex(qpci_io_readq(g->dev, g->bar2,
                                  (leaf & ~0xfffull) + 0xff8), ==, 0x1111);
    g_assert_cmphex(qpci_io_readq(g->dev, g->bar2, 0x130000), ==, 0x2222);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, 0);

    /* inline entries that wrap around the end of the ring */
    engine_reset(g, 0);
    {
        uint32_t h = QGPU_CMD_HDR(QGPU_CMD_NOP, 0, (RING_SIZE - 28) / 4);

        emit(g, 0, &h, 1);
        g->tail[0] = RING_SIZE - 28;
        run(g, 0);
    }
    ents[0] = 0xa000 | PTE_RW;
    ents[1] = 0xb000 | PTE_RW;
    cmd_update_pt_inline(g, 0x140000, 0, ents, 2, QGPU_CMD_UPDATE_PT_LEN + 4);
    run(g, 0);
    g_assert_cmpuint(g->tail[0], <, 16);
    g_assert_cmphex(qpci_io_readq(g->dev, g->bar2, 0x140000), ==, ents[0]);
    g_assert_cmphex(qpci_io_readq(g->dev, g->bar2, 0x140008), ==, ents[1]);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, 0);
    g_free(list);
    qgpu_stop(g);
}

/* UPDATE_PT's faults, physical and virtual */
static void test_mmu_update_pt_faults(void)
{
    QGPU *g = qgpu_start(NULL);
    uint64_t ents[2] = { 0xa000 | PTE_RW, 0xb000 | PTE_RW };
    uint32_t faults = 0;
    PT p;

    pt_init(&p, g, false, PT_VRAM);
    set_paging_root(g, p.root);
    qtest_writeq(g->qts, PAGELIST, 0x1111);

    /* faults: inline entries beyond the command, misaligned dst, list */
    cmd_update_pt_inline(g, 0x140000, 0, ents, 2, QGPU_CMD_UPDATE_PT_LEN + 3);
    run(g, 0);
    expect_fault(g, 0, QGPU_FAULT_BAD_LENGTH, ++faults);
    engine_reset(g, 0);
    cmd_update_pt(g, 0x140004, 1, SYS(PAGELIST), 0);
    run(g, 0);
    expect_fault(g, 0, QGPU_FAULT_BAD_ALIGN, ++faults);
    g_assert_cmphex(rd64(g, QGPU_REG_FAULT_ADDR_LO), ==, 0x140004);
    engine_reset(g, 0);
    cmd_update_pt(g, 0x140000, 2, 64 * MiB - 8, 0);
    run(g, 0);
    expect_fault(g, 0, QGPU_FAULT_BAD_ADDRESS, ++faults);
    g_assert_cmphex(rd64(g, QGPU_REG_FAULT_ADDR_LO), ==, 64 * MiB - 8);
    engine_reset(g, 0);
    cmd_update_pt(g, 64 * MiB - 8, 2, SYS(PAGELIST), 0);
    run(g, 0);
    expect_fault(g, 0, QGPU_FAULT_BAD_ADDRESS, ++faults);
    g_assert_cmphex(rd64(g, QGPU_REG_FAULT_ADDR_LO), ==, 64 * MiB - 8);
    g_assert_cmphex(rd(g, QGPU_REG_FAULT_INFO), ==, 0);
    fault_pop(g);
    engine_reset(g, 0);
    /* virtual destination: read-only page, unmapped page */
    pt_map(&p, 0x50002000, 0x150000 | PTE_RW | QGPU_PTE_READ_ONLY);
    cmd_update_pt(g, 0x50002000, 1, SYS(PAGELIST), QGPU_PT_DST_VIRTUAL);
    PAGING_VFAULT(QGPU_FAULT_PAGE_READ_ONLY, 0x50002000, 0, true, p.root);
    cmd_update_pt(g, 0x50003000, 1, SYS(PAGELIST), QGPU_PT_DST_VIRTUAL);
    PAGING_VFAULT(QGPU_FAULT_PAGE_NOT_PRESENT, 0x50003000, 0, true, p.root);
    g_assert_cmphex(qpci_io_readq(g->dev, g->bar2, 0x150000), ==, 0);
    qgpu_stop(g);
}

/* TRANSFER_VIRTUAL: a fault mid-way leaves the earlier pages done */
static void test_mmu_transfer_partial(void)
{
    QGPU *g = qgpu_start(NULL);
    uint64_t bytes0;
    PT p;

    pt_init(&p, g, true, PT_SYSMEM);
    set_paging_root(g, p.root);
    pt_map(&p, VA_A, SYSBUF | PTE_SYS);
    pt_map(&p, VA_A + 0x1000, (SYSBUF + 0x1000) | PTE_SYS);
    pt_map(&p, VA_HIGH, 0x100000 | PTE_RW);
    pt_map(&p, VA_HIGH + 0x1000, 0x101000 | PTE_RW);
    pt_map(&p, VA_HIGH + 0x2000, 0x102000 | PTE_RW);
    fill_sys(g, SYSBUF, 0x2000, 5);
    bytes0 = rd64(g, QGPU_ENGINE_BASE(0) + QGPU_ENG_BYTES_LO);
    cmd_vtransfer(g, 0x3000, VA_A, VA_HIGH);
    PAGING_VFAULT(QGPU_FAULT_PAGE_NOT_PRESENT, VA_A + 0x2000, 0, false,
                  p.root);
    check_vram(g, 0x100000, 0x2000, 5);
    g_assert_cmphex(vram_rd(g, 0x102000), ==, 0);
    g_assert_cmpuint(rd64(g, QGPU_ENGINE_BASE(0) + QGPU_ENG_BYTES_LO), ==,
                     bytes0 + 0x2000);
    /* FILL_VIRTUAL size not a multiple of 4 */
    cmd_vfill(g, 6, VA_HIGH, 0);
    run(g, 0);
    expect_fault(g, 0, QGPU_FAULT_BAD_ALIGN, 2);
    g_assert_cmphex(rd(g, QGPU_REG_FAULT_INFO), ==, 0);
    engine_reset(g, 0);
    /* a large virtual copy runs in chunks: 4 MiB through 1024 pages */
    {
        int i;

        for (i = 0; i < 1024; i++) {
            pt_map(&p, 0x40000000 + i * 0x1000, (0x800000 + i * 0x1000) |
                   PTE_RW);
            pt_map(&p, 0x48000000 + i * 0x1000, (0x1800000 +
                   (1023 - i) * 0x1000) | PTE_RW);
        }
        cmd_fill(g, 4 * MiB, 0x800000, 0x3c3c3c3c, 0);
        cmd_vtransfer(g, 4 * MiB, 0x40000000, 0x48000000);
        cmd_vfill(g, 8, 0x40000000 + 4 * MiB - 8, 0x1234);
        run(g, 0);
        g_assert_cmphex(vram_rd(g, 0x1800000), ==, 0x3c3c3c3c);
        g_assert_cmphex(vram_rd(g, 0x1800000 + 4 * MiB - 4), ==, 0x3c3c3c3c);
        g_assert_cmphex(vram_rd(g, 0x800000 + 4 * MiB - 4), ==, 0x1234);
        g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, 2);
    }
    qgpu_stop(g);
}

/*
 * The render tests' address space, bound to context 2: VA_A + 0x1000 * i
 * (i < 4) is VRAM page 0x103000 - 0x1000 * i, VA_A + 0x4000 is SYSBUF
 */
static void render_vm(QGPU *g, PT *p)
{
    int i;

    pt_init(p, g, false, PT_VRAM);
    for (i = 0; i < 4; i++) {
        pt_map(p, VA_A + i * 0x1000, (0x100000 + (3 - i) * 0x1000) | PTE_RW);
    }
    pt_map(p, VA_A + 0x4000, SYSBUF | PTE_SYS);
    cmd_ctx_set_vm(g, 1, 2, p->root);
}

/* Render engine: CTX_SET_VM and the virtual DMA-buffer commands */
static void test_mmu_render(void)
{
    QGPU *g = qgpu_start("max-contexts=8");
    DmaBuf *b = g_new0(DmaBuf, 1);
    uint32_t words[64], sum[64];
    uint64_t src = VA_A, dst = VA_A + 0x3000, fence = VA_A + 0x2000;
    PT p;
    int i;

    render_vm(g, &p);
    for (i = 0; i < 64; i++) {
        words[i] = 0x01020304 + i;
        sum[i] = 0x01020304 + i + 0x10;
    }
    qpci_memwrite(g->dev, g->bar2, 0x103000 + 0xfc0, words, 64);
    qpci_memwrite(g->dev, g->bar2, 0x102000, words + 16, 192);
    /* words at src + 0xfc0 .. src + 0x1100 straddle a page boundary */
    dma(b, QGPU_DMA_VFILL, 0, 4, LO(dst), HI(dst), 256, 0x10);
    dma(b, QGPU_DMA_VADD, 0, 7, LO(dst + 0x100), HI(dst + 0x100),
        LO(src + 0xfc0), HI(src + 0xfc0), LO(dst), HI(dst), 64);
    dma(b, QGPU_DMA_VXOR, 0, 7, LO(dst + 0x200), HI(dst + 0x200),
        LO(dst + 0x100), HI(dst + 0x100), LO(dst), HI(dst), 64);
    dma(b, QGPU_DMA_VCOPY, 0, 5, LO(VA_A + 0x4000), HI(VA_A + 0x4000),
        LO(src + 0xfc0), HI(src + 0xfc0), 256);
    dma(b, QGPU_DMA_VCHECKSUM, 0, 5, LO(src + 0xfc0), HI(src + 0xfc0), 256,
        LO(dst + 0x300), HI(dst + 0x300));
    dma(b, QGPU_DMA_VWAIT, 0, 4, LO(fence), HI(fence), 0, 0);
    dma(b, QGPU_DMA_VTIMESTAMP, 0, 2, LO(fence + 16), HI(fence + 16));
    dma(b, QGPU_DMA_VFENCE, QGPU_FENCE_FLAG_IRQ, 4, LO(fence + 8),
        HI(fence + 8), 0x55667788, 0x11223344);
    dma(b, QGPU_DMA_NOP, 0, 0);
    dma_put(g, DMABUF, b);
    qtest_clock_step(g->qts, 5000);
    cmd_exec(g, 2, SYS(DMABUF), 0, b->n * 4);
    run(g, 1);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, 0);
    g_assert_cmphex(vram_rd(g, 0x100000), ==, 0x10);
    g_assert_cmphex(vram_rd(g, 0x1000fc), ==, 0x10);
    for (i = 0; i < 64; i++) {
        g_assert_cmphex(vram_rd(g, 0x100100 + i * 4), ==, sum[i]);
        g_assert_cmphex(vram_rd(g, 0x100200 + i * 4), ==, sum[i] ^ 0x10);
        g_assert_cmphex(qtest_readl(g->qts, SYSBUF + i * 4), ==, words[i]);
    }
    g_assert_cmphex(vram_rd(g, 0x100300), ==, fnv(words, 64));
    g_assert_cmphex(qpci_io_readq(g->dev, g->bar2, 0x101008), ==,
                    0x1122334455667788ull);
    g_assert_cmpuint(qpci_io_readq(g->dev, g->bar2, 0x101010), >=, 5000);
    g_assert_cmphex(rd(g, QGPU_REG_INT_STATUS), ==, QGPU_INT_ENGINE(1));
    /* 2 ring commands + 9 DMA commands */
    g_assert_cmpuint(rd64(g, QGPU_ENGINE_BASE(1) + QGPU_ENG_CMDS_LO), ==, 11);

    /* VWAIT blocks until the paging engine writes the value */
    b->n = 0;
    dma(b, QGPU_DMA_VWAIT, 0, 4, LO(fence), HI(fence), 3, 0);
    dma(b, QGPU_DMA_VFENCE, 0, 4, LO(fence + 24), HI(fence + 24), 42, 0);
    dma_put(g, DMABUF, b);
    cmd_exec(g, 2, SYS(DMABUF), 0, b->n * 4);
    kick(g, 1);
    qtest_clock_step(g->qts, 3 * 1000 * 1000);
    g_assert_cmphex(erd(g, 1, QGPU_ENG_STATUS), ==, QGPU_ENG_STATUS_BUSY);
    g_assert_cmpuint(vram_rd(g, 0x101018), ==, 0);
    cmd_fence(g, 0, 0x101000, 3, false);
    run(g, 0);
    qtest_clock_step(g->qts, 2 * 1000 * 1000);
    wait_idle(g, 1);
    g_assert_cmpuint(vram_rd(g, 0x101018), ==, 42);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, 0);
    g_free(b);
    qgpu_stop(g);
}

/* Virtual contexts: the wrong kind of command, faults, back to physical */
static void test_mmu_render_faults(void)
{
    QGPU *g = qgpu_start("max-contexts=8");
    DmaBuf *b = g_new0(DmaBuf, 1);
    uint64_t dst = VA_A + 0x3000;
    uint32_t off;
    PT p;

    render_vm(g, &p);
    vram_wr(g, 0x10000c, 0x10);
    /* slot commands in a bound context, virtual ones in a physical one */
    b->n = 0;
    dma(b, QGPU_DMA_NOP, 0, 0);
    dma_bind(b, 0, 0x100000, 0x1000);
    dma_put(g, DMABUF, b);
    cmd_exec(g, 2, SYS(DMABUF), 0, b->n * 4);
    run(g, 1);
    expect_fault(g, 1, QGPU_FAULT_BAD_OPCODE, 1);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_OFFSET), ==, 4);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_CONTEXT), ==, 2);
    g_assert_true(ctx_faulted(g, 2));
    fault_pop(g);
    b->n = 0;
    dma(b, QGPU_DMA_VFILL, 0, 4, LO(dst), HI(dst), 4, 0);
    dma_put(g, DMABUF + 0x1000, b);
    cmd_exec(g, 3, SYS(DMABUF + 0x1000), 0, b->n * 4);
    run(g, 1);
    expect_fault(g, 1, QGPU_FAULT_BAD_OPCODE, 2);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_CONTEXT), ==, 3);
    fault_pop(g);

    /* CTX_CLEAR keeps the binding; a virtual fault invalidates only ctx 2 */
    cmd_ctx_clear(g, 2);
    cmd_ctx_clear(g, 3);
    b->n = 0;
    dma(b, QGPU_DMA_VFILL, 0, 4, LO(dst + 8), HI(dst + 8), 4, 0x99);
    off = b->n * 4;
    dma(b, QGPU_DMA_VFILL, 0, 4, LO(VA_A + 0x5000), HI(VA_A + 0x5000), 4,
        0x98);
    dma(b, QGPU_DMA_VFILL, 0, 4, LO(dst + 12), HI(dst + 12), 4, 0x97);
    dma_put(g, DMABUF, b);
    cmd_exec(g, 2, SYS(DMABUF), 0, b->n * 4);
    b->n = 0;
    dma_bind(b, 0, 0x180000, 0x1000);
    dma(b, QGPU_DMA_FILL, 0, 4, 0, 0, 4, 0x96);
    dma_put(g, DMABUF + 0x1000, b);
    cmd_exec(g, 3, SYS(DMABUF + 0x1000), 0, b->n * 4);
    cmd_fence(g, 1, SYS(FENCE_MEM), 0x77, false);
    run(g, 1);
    g_assert_cmphex(vram_rd(g, 0x100008), ==, 0x99);
    g_assert_cmphex(vram_rd(g, 0x10000c), ==, 0x10);
    g_assert_cmphex(vram_rd(g, 0x180000), ==, 0x96);
    g_assert_cmpuint(qtest_readq(g->qts, FENCE_MEM), ==, 0x77);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_CONTEXT), ==, 2);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_OFFSET), ==, off);
    expect_vfault(g, 1, QGPU_FAULT_PAGE_NOT_PRESENT, VA_A + 0x5000, 0, true,
                  p.root);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULTQ_COUNT), ==, 0);
    g_assert_true(ctx_faulted(g, 2));
    g_assert_false(ctx_faulted(g, 3));
    g_assert_cmphex(erd(g, 1, QGPU_ENG_STATUS), ==, 0);

    /* back to physical mode: slot commands run again */
    cmd_ctx_set_vm(g, 1, 2, p.root & ~QGPU_PTE_VALID);
    cmd_ctx_clear(g, 2);
    b->n = 0;
    dma_bind(b, 0, 0x180000, 0x1000);
    dma(b, QGPU_DMA_FILL, 0, 4, 0, 4, 4, 0x95);
    dma_put(g, DMABUF, b);
    cmd_exec(g, 2, SYS(DMABUF), 0, b->n * 4);
    run(g, 1);
    g_assert_cmphex(vram_rd(g, 0x180004), ==, 0x95);
    g_assert_false(ctx_faulted(g, 2));
    /* CTX_SET_VM of a context the device does not have */
    wr(g, QGPU_REG_INT_ACK, QGPU_INT_ALL);
    cmd_ctx_set_vm(g, 1, 8, p.root);
    run(g, 1);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_REASON), ==, QGPU_FAULT_BAD_CONTEXT);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_CONTEXT), ==, 8);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_ADDR_LO), ==, 8);
    g_assert_cmphex(erd(g, 1, QGPU_ENG_STATUS), ==, QGPU_ENG_STATUS_HALTED);
    /* ... and on the paging engine it is BAD_OPCODE */
    fault_pop(g);
    cmd_ctx_set_vm(g, 0, 2, p.root);
    run(g, 0);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_REASON), ==, QGPU_FAULT_BAD_OPCODE);
    g_free(b);
    qgpu_stop(g);
}

/* Each virtual command's checks: FAULT_ADDR, FAULT_INFO and FAULT_VM */
static void test_mmu_render_checks(void)
{
    QGPU *g = qgpu_start(NULL);
    DmaBuf *b = g_new0(DmaBuf, 1);
    uint64_t src = VA_A, dst = VA_A + 0x3000;
    PT p;

    render_vm(g, &p);
    /* VA range, alignment faults of the virtual commands */
#define VDMA_FAULT(reason_, addr_, info_, ...) do {                 \
        b->n = 0;                                                   \
        __VA_ARGS__;                                                \
        dma_put(g, DMABUF, b);                                      \
        cmd_ctx_clear(g, 2);                                        \
        cmd_exec(g, 2, SYS(DMABUF), 0, b->n * 4);                   \
        run(g, 1);                                                  \
        g_assert_cmpuint(rd(g, QGPU_REG_FAULTQ_COUNT), ==, 1);      \
        g_assert_cmpuint(rd(g, QGPU_REG_FAULT_REASON), ==, reason_); \
        g_assert_cmphex(rd64(g, QGPU_REG_FAULT_ADDR_LO), ==, addr_); \
        g_assert_cmphex(rd(g, QGPU_REG_FAULT_INFO), ==, info_);     \
        g_assert_cmphex(rd64(g, QGPU_REG_FAULT_VM_LO), ==,          \
                        (info_) ? p.root : 0);                      \
        fault_pop(g);                                               \
        g_assert_true(ctx_faulted(g, 2));                           \
    } while (0)
#define VW (QGPU_FAULT_INFO_VIRTUAL | QGPU_FAULT_INFO_WRITE)
#define VR QGPU_FAULT_INFO_VIRTUAL
#define NOWALK (QGPU_FAULT_LEVEL_NONE << QGPU_FAULT_INFO_LEVEL_SHIFT)

    VDMA_FAULT(QGPU_FAULT_BAD_ALIGN, 6, 0,
               dma(b, QGPU_DMA_VFILL, 0, 4, LO(dst), HI(dst), 6, 0));
    VDMA_FAULT(QGPU_FAULT_BAD_ALIGN, dst + 4, 0,
               dma(b, QGPU_DMA_VFENCE, 0, 4, LO(dst + 4), HI(dst + 4), 0, 0));
    VDMA_FAULT(QGPU_FAULT_BAD_ADDRESS, QGPU_MMU_VA_SIZE - 4, VW | NOWALK,
               dma(b, QGPU_DMA_VFENCE, 0, 4, LO(QGPU_MMU_VA_SIZE - 4),
                   HI(QGPU_MMU_VA_SIZE - 4), 0, 0));
    VDMA_FAULT(QGPU_FAULT_BAD_ADDRESS, QGPU_MMU_VA_SIZE, VR | NOWALK,
               dma(b, QGPU_DMA_VCOPY, 0, 5, LO(dst), HI(dst),
                   LO(QGPU_MMU_VA_SIZE), HI(QGPU_MMU_VA_SIZE), 4));
    VDMA_FAULT(QGPU_FAULT_PAGE_NOT_PRESENT, VA_A + 0x5000, VW,
               dma(b, QGPU_DMA_VCHECKSUM, 0, 5, LO(src), HI(src), 8,
                   LO(VA_A + 0x5000), HI(VA_A + 0x5000)));
    VDMA_FAULT(QGPU_FAULT_PAGE_NOT_PRESENT, VA_A + 0x5000, VR,
               dma(b, QGPU_DMA_VWAIT, 0, 4, LO(VA_A + 0x5000),
                   HI(VA_A + 0x5000), 1, 0));
    VDMA_FAULT(QGPU_FAULT_PAGE_NOT_PRESENT, VA_A + 0x5000, VR,
               dma(b, QGPU_DMA_VADD, 0, 7, LO(dst), HI(dst), LO(src),
                   HI(src), LO(VA_A + 0x5000), HI(VA_A + 0x5000), 1));
#undef VW
#undef VR
#undef NOWALK
#undef VDMA_FAULT
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, 7);
    g_free(b);
    qgpu_stop(g);
}

/*
 * A hostile guest rings the idle paging engine while the device thread
 * moves a piece of a render VFILL without the BQL: UPDATE_PT unmaps the
 * fill's whole address space, FLUSH_TLB, then DISCARD of all of VRAM, the
 * reuse that 15.5 allows once the flush has run. No write of the fill may
 * land after the flush: once both engines are idle nothing of it is left
 * in VRAM (VRAM_COMMITTED 0; the page tables, rings and DMA buffer are in
 * guest memory). The fill writes fresh pages, so a piece in flight is
 * slow; the guest repeats its timing.
 */
#define INFLIGHT_PT     PT_SYSMEM
#define INFLIGHT_SIZE   (64 * MiB)

/* VA [0, 64 MiB) onto all of VRAM in 64 KiB pages; the root descriptor */
static uint64_t inflight_tables(QGPU *g)
{
    uint64_t l1 = INFLIGHT_PT + 0x1000, leaf = INFLIGHT_PT + 0x2000;
    g_autofree uint64_t *t = g_new0(uint64_t, 512);
    int i, j;

    for (i = 0; i < 32; i++) {
        memset(t, 0, 4096);
        for (j = 0; j < 32; j++) {
            t[j * 16] = cpu_to_le64(qgpu_mmu_pte(i * 2 * MiB + j * 64 * KiB,
                                                 PTE_RW | QGPU_PTE_64K));
        }
        qtest_memwrite(g->qts, leaf + i * 0x1000, t, 4096);
    }
    memset(t, 0, 4096);
    for (i = 0; i < 32; i++) {
        t[i] = cpu_to_le64(qgpu_mmu_pte(leaf + i * 0x1000, PTE_SYS));
    }
    qtest_memwrite(g->qts, l1, t, 4096);
    memset(t, 0, 4096);
    t[0] = cpu_to_le64(qgpu_mmu_pte(l1, PTE_SYS));
    qtest_memwrite(g->qts, INFLIGHT_PT, t, 4096);
    return qgpu_mmu_pte(INFLIGHT_PT, PTE_SYS);
}

static void test_mmu_doorbell_in_flight(void)
{
    QGPU *g = qgpu_start("max-contexts=8");
    DmaBuf *b = g_new0(DmaBuf, 1);
    uint64_t root = inflight_tables(g), l2e, zero = 0, bytes;
    int i, k, inline_runs = 0, faults = 0;

    l2e = qtest_readq(g->qts, INFLIGHT_PT);
    cmd_discard(g, INFLIGHT_SIZE, 0);
    run(g, 0);
    g_assert_cmpuint(rd64(g, QGPU_REG_VRAM_COMMITTED_LO), ==, 0);
    cmd_ctx_set_vm(g, 1, 2, root);
    run(g, 1);
    dma(b, QGPU_DMA_VFILL, 0, 4, 0, 0, INFLIGHT_SIZE, 0xa5a5a5a5);
    dma_put(g, DMABUF, b);
    for (i = 0; i < 12; i++) {
        qtest_writeq(g->qts, INFLIGHT_PT, l2e);
        qtest_writeq(g->qts, FENCE_MEM, 0);
        bytes = rd64(g, QGPU_ENGINE_BASE(1) + QGPU_ENG_BYTES_LO);
        cmd_ctx_clear(g, 2);
        cmd_exec(g, 2, SYS(DMABUF), 0, b->n * 4);
        kick(g, 1);
        /* well into the fill, on the thread */
        for (k = 0; k < 100000; k++) {
            if (rd64(g, QGPU_ENGINE_BASE(1) + QGPU_ENG_BYTES_LO) - bytes >=
                (4 + i) * MiB) {
                break;
            }
        }
        cmd_update_pt_inline(g, SYS(INFLIGHT_PT), 0, &zero, 1,
                             QGPU_CMD_UPDATE_PT_LEN + 2);
        cmd_flush_tlb(g, 0, QGPU_FLUSH_TLB_ALL);
        cmd_discard(g, INFLIGHT_SIZE, 0);
        cmd_fence(g, 0, SYS(FENCE_MEM), i + 1, false);
        kick(g, 0);
        inline_runs += qtest_readq(g->qts, FENCE_MEM) == i + 1;
        wait_idle(g, 0);
        wait_idle(g, 1);
        g_assert_cmpuint(qtest_readq(g->qts, FENCE_MEM), ==, i + 1);
        /* nothing of the fill landed after the flush */
        g_assert_cmpuint(rd64(g, QGPU_REG_VRAM_COMMITTED_LO), ==, 0);
        g_assert_cmphex(erd(g, 0, QGPU_ENG_STATUS), ==, 0);
        while (rd(g, QGPU_REG_FAULTQ_COUNT)) {
            g_assert_cmpuint(rd(g, QGPU_REG_FAULT_REASON), ==,
                             QGPU_FAULT_PAGE_NOT_PRESENT);
            g_assert_cmpuint(rd(g, QGPU_REG_FAULT_ENGINE), ==, 1);
            faults++;
            fault_pop(g);
        }
    }
    g_test_message("doorbell in flight: %d of %d paging runs in the "
                   "register write, %d fills stopped by the unmap",
                   inline_runs, i, faults);
    g_free(b);
    qgpu_stop(g);
}

/* Reset: paging root 0, TLBs empty, every context physical; counters kept */
static void test_mmu_reset(void)
{
    QGPU *g = qgpu_start(NULL);
    DmaBuf *b = g_new0(DmaBuf, 1);
    uint64_t hits, misses, flushes, leaf;
    PT p;

    pt_init(&p, g, false, PT_VRAM);
    pt_map(&p, VA_A, 0x100000 | PTE_RW);
    leaf = pt_entry(&p, VA_A, 0, false);
    set_paging_root(g, p.root);
    cmd_ctx_set_vm(g, 1, 1, p.root);
    run(g, 1);
    vpoke(g, VA_A, 1);
    vpoke(g, VA_A, 2);
    cmd_flush_tlb(g, 0, 0);
    run(g, 0);
    pt_wq(&p, leaf, 0x200000 | PTE_RW);         /* the TLB has the old one */
    hits = tlb_hits(g);
    misses = tlb_misses(g);
    flushes = rd64(g, QGPU_REG_TLB_FLUSHES_LO);
    g_assert_cmpuint(hits, ==, 1);
    g_assert_cmpuint(misses, ==, 1);
    g_assert_cmpuint(flushes, ==, 1);

    wr(g, QGPU_REG_RESET, 1);
    g_assert_cmphex(rd64(g, QGPU_REG_MMU_PAGING_ROOT_LO), ==, 0);
    g_assert_cmpuint(tlb_hits(g), ==, hits);
    g_assert_cmpuint(tlb_misses(g), ==, misses);
    g_assert_cmpuint(rd64(g, QGPU_REG_TLB_FLUSHES_LO), ==, flushes);
    qgpu_ring_init(g, 0, RING0, RING_SIZE);
    qgpu_ring_init(g, 1, RING1, RING_SIZE);
    /* TLB emptied: the new translation */
    set_paging_root(g, p.root);
    vpoke(g, VA_A + 4, 3);
    g_assert_cmphex(vram_rd(g, 0x200004), ==, 3);
    g_assert_cmphex(vram_rd(g, 0x100004), ==, 0);
    g_assert_cmpuint(tlb_misses(g), ==, misses + 1);
    /* context 1 is physical again: slot commands run, virtual ones not */
    dma_bind(b, 0, 0x180000, 0x1000);
    dma(b, QGPU_DMA_FILL, 0, 4, 0, 0, 4, 0x33);
    dma(b, QGPU_DMA_VFILL, 0, 4, LO(VA_A), HI(VA_A), 4, 0x44);
    dma_put(g, DMABUF, b);
    cmd_exec(g, 1, SYS(DMABUF), 0, b->n * 4);
    run(g, 1);
    g_assert_cmphex(vram_rd(g, 0x180000), ==, 0x33);
    g_assert_cmphex(vram_rd(g, 0x200000), ==, 0);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_REASON), ==, QGPU_FAULT_BAD_OPCODE);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_OFFSET), ==, 11 * 4);
    g_free(b);
    qgpu_stop(g);
}

/*
 * Random page tables (loops, pointers anywhere, garbage flags) and random
 * virtual commands on both engines: QEMU survives and stays responsive.
 */
static uint64_t fuzz_pte(GRand *r, uint64_t vram)
{
    static const uint64_t tables[] = {
        PT_VRAM, PT_VRAM + 0x1000, PT_VRAM + 0x2000, PT_VRAM + 0x3000,
        PT_VRAM + 0x4000, PT_VRAM + 0x5000, PT_VRAM + 0x6000,
        SYS(PT_SYSMEM), SYS(PT_SYSMEM + 0x1000),
    };
    uint64_t flags = g_rand_int_range(r, 0, 16);
    uint64_t a;

    switch (g_rand_int_range(r, 0, 8)) {
    case 0:
    case 1:
    case 2:
        a = tables[g_rand_int_range(r, 0, ARRAY_SIZE(tables))];
        flags |= QGPU_PTE_VALID;
        if (a & QGPU_SYS_BIT) {
            flags |= QGPU_PTE_SYSTEM;
        } else {
            flags &= ~QGPU_PTE_SYSTEM;
        }
        return (a & ~QGPU_SYS_BIT) | flags;
    case 3:
    case 4:
        return (g_rand_int_range(r, 0, vram / 4096) * 4096ull) | flags;
    case 5:
        return ((0x1000000 + g_rand_int_range(r, 0, 0x7000000)) & ~0xfffull) |
               flags | QGPU_PTE_SYSTEM;
    case 6:
        return (vram - g_rand_int_range(r, 0, 32) * 4096ull) | flags;
    default:
        return ((uint64_t)g_rand_int(r) << 32) | g_rand_int(r);
    }
}

static uint64_t fuzz_va(GRand *r)
{
    switch (g_rand_int_range(r, 0, 5)) {
    case 0:
        return QGPU_MMU_VA_SIZE - g_rand_int_range(r, 0, 0x20000);
    case 1:
        return ((uint64_t)g_rand_int(r) << 32) | g_rand_int(r);
    default:
        /* VAs whose walks go through the fuzzed tables */
        return ((uint64_t)g_rand_int_range(r, 0, 3) << 30) |
               ((uint64_t)g_rand_int_range(r, 0, 3) << 21) |
               ((uint64_t)g_rand_int_range(r, 0, 0x40) << 12) |
               g_rand_int_range(r, 0, 4096);
    }
}

static void fuzz_tables(QGPU *g, GRand *r, uint64_t vram)
{
    int i;

    for (i = 0; i < 16; i++) {
        int t = g_rand_int_range(r, 0, 9);
        uint32_t idx = g_rand_boolean(r) ? g_rand_int_range(r, 0, 0x48)
                                         : g_rand_int_range(r, 0, 512);
        uint64_t e = fuzz_pte(r, vram);

        if (t < 7) {
            qpci_io_writeq(g->dev, g->bar2, PT_VRAM + t * 0x1000 + idx * 8, e);
        } else {
            qtest_writeq(g->qts, PT_SYSMEM + (t - 7) * 0x1000 + idx * 8, e);
        }
    }
}

static void fuzz_vdma(QGPU *g, GRand *r, uint32_t *dbuf, unsigned n)
{
    static const uint32_t dops[] = {
        QGPU_DMA_NOP, QGPU_DMA_VCOPY, QGPU_DMA_VFILL, QGPU_DMA_VADD,
        QGPU_DMA_VXOR, QGPU_DMA_VCHECKSUM, QGPU_DMA_VFENCE, QGPU_DMA_VWAIT,
        QGPU_DMA_VTIMESTAMP, QGPU_DMA_FILL,
    };
    unsigned i, k;

    for (i = 0; i < n;) {
        uint32_t op = dops[g_rand_int_range(r, 0, ARRAY_SIZE(dops))];
        uint32_t len = qgpu_dma_cmd_len(op);

        if (g_rand_int_range(r, 0, 10) == 0) {
            len = g_rand_int_range(r, 1, 10);
        }
        if (i + len > n) {
            break;
        }
        dbuf[i] = QGPU_CMD_HDR(op, g_rand_int_range(r, 0, 2), len);
        for (k = 1; k + 1 < len; k += 2) {
            uint64_t va = fuzz_va(r);

            dbuf[i + k] = va;
            dbuf[i + k + 1] = va >> 32;
        }
        if (k < len) {
            dbuf[i + k] = g_rand_int_range(r, 0, 0x3000) & ~3u;
        }
        k = op == QGPU_DMA_VCOPY ? 5 : 3;       /* the size dword */
        if ((op == QGPU_DMA_VCOPY || op == QGPU_DMA_VFILL ||
             op == QGPU_DMA_VCHECKSUM) && k < len) {
            dbuf[i + k] = g_rand_int_range(r, 0, 0x6000) &
                          ~(g_rand_boolean(r) ? 3 : 0);
        }
        i += len;
    }
}

static void fuzz_vring(QGPU *g, GRand *r, uint64_t vram, uint64_t root0)
{
    int n = g_rand_int_range(r, 0, 2);
    uint32_t c[16] = { 0 };
    uint64_t a = fuzz_va(r), b = fuzz_va(r);
    uint64_t root = g_rand_boolean(r) ? root0 : fuzz_pte(r, vram);
    uint64_t s = g_rand_int_range(r, 0, 4) ? g_rand_int_range(r, 0, 0x9000)
                                          : ((uint64_t)g_rand_int(r) << 20);

    s &= g_rand_int_range(r, 0, 4) ? ~3ull : ~0ull;
    uint32_t len, op, k;

    if (!(erd(g, n, QGPU_ENG_CTRL) & QGPU_ENG_CTRL_ENABLE) ||
        erd(g, n, QGPU_ENG_STATUS) & QGPU_ENG_STATUS_HALTED ||
        g_rand_int_range(r, 0, 30) == 0) {
        wr(g, QGPU_REG_INT_ACK, 0xffffffff);
        qgpu_ring_init(g, n, n ? RING1 : RING0, RING_SIZE);
    }
    g->tail[n] = erd(g, n, QGPU_ENG_RING_TAIL);
    if (n == 0) {
        static const uint32_t ops[] = {
            QGPU_CMD_UPDATE_PT, QGPU_CMD_FLUSH_TLB, QGPU_CMD_TRANSFER_VIRTUAL,
            QGPU_CMD_FILL_VIRTUAL, QGPU_CMD_FILL_VIRTUAL, QGPU_CMD_UPDATE_PT,
        };
        op = ops[g_rand_int_range(r, 0, ARRAY_SIZE(ops))];
    } else {
        op = g_rand_boolean(r) ? QGPU_CMD_EXEC : QGPU_CMD_CTX_SET_VM;
    }
    len = qgpu_cmd_len(op);
    c[1] = s;
    c[2] = s >> 32;
    c[3] = a;
    c[4] = a >> 32;
    c[5] = b;
    c[6] = b >> 32;
    if (op == QGPU_CMD_UPDATE_PT) {
        uint32_t flags = g_rand_int_range(r, 0, 4);
        uint64_t dst = g_rand_boolean(r) ? a :
                       (g_rand_boolean(r) ? PT_VRAM + g_rand_int_range(r, 0,
                                                                       0x4000)
                                          : SYS(PT_SYSMEM) + 8 * (s & 0x3ff));

        c[1] = dst & ~(g_rand_int_range(r, 0, 8) ? 7ull : 0);
        c[2] = dst >> 32;
        c[3] = g_rand_int_range(r, 0, 5);
        c[4] = LO(SYS(PAGELIST));
        c[5] = HI(SYS(PAGELIST));
        for (k = 6; k < 16; k++) {
            c[k] = fuzz_pte(r, vram) >> (k & 1 ? 32 : 0);
        }
        if (flags & QGPU_PT_INLINE) {
            len = MIN(QGPU_CMD_UPDATE_PT_LEN + 2 * c[3] +
                      g_rand_int_range(r, -1, 1), 16);
        }
        c[0] = QGPU_CMD_HDR(op, flags, len);
    } else if (op == QGPU_CMD_EXEC || op == QGPU_CMD_CTX_SET_VM) {
        c[1] = g_rand_int_range(r, 0, 5);
        c[2] = op == QGPU_CMD_EXEC ? SYS(DMABUF) : root;
        c[3] = op == QGPU_CMD_EXEC ? SYS(DMABUF) >> 32 : root >> 32;
        c[4] = 0;
        c[5] = 1024;
        if (op == QGPU_CMD_EXEC) {
            uint32_t clr[] = {
                QGPU_CMD_HDR(QGPU_CMD_CTX_CLEAR, 0, QGPU_CMD_CTX_CLEAR_LEN),
                c[1],
            };
            emit(g, n, clr, ARRAY_SIZE(clr));
        }
        c[0] = QGPU_CMD_HDR(op, 0, len);
    } else {
        c[0] = QGPU_CMD_HDR(op, g_rand_int_range(r, 0, 2), len);
    }
    emit(g, n, c, QGPU_CMD_LEN(c[0]));
    kick(g, n);
    if (g_rand_int_range(r, 0, 4) == 0) {
        qtest_clock_step(g->qts, 1000 * 1000);
    }
}

static void test_mmu_fuzz(void)
{
    QGPU *g = qgpu_start_machine("pc", "max-slots=8,max-contexts=4");
    const char *seed_env = g_getenv("QGPU_FUZZ_SEED");
    const char *iter_env = g_getenv("QGPU_FUZZ_ITERS");
    GRand *r = g_rand_new_with_seed(seed_env ? atoi(seed_env) : 0x51475055);
    int iters = iter_env ? atoi(iter_env) : 3000;
    uint64_t vram = 64 * MiB;
    uint32_t dbuf[256];
    g_autofree uint8_t *tables = g_malloc(0x7000);
    int it, i;
    PT p;

    /* valid 4 KiB mappings to start from: 7 tables at PT_VRAM */
    pt_init(&p, g, false, PT_VRAM);
    set_paging_root(g, p.root);
    for (i = 0; i < 4 * 64; i++) {
        uint64_t va = ((uint64_t)(i >> 7) << 30) |
                      ((uint64_t)((i >> 6) & 1) << 21) | ((i & 63) << 12);

        pt_map(&p, va, i & 1 ? (0x1000000 + i * 0x1000) | PTE_RW
                             : (SYSPAGES + i * 0x1000) | PTE_SYS);
    }
    g_assert_cmphex(p.next, ==, PT_VRAM + 0x7000);
    qpci_memread(g->dev, g->bar2, PT_VRAM, tables, 0x7000);
    qtest_memset(g->qts, PT_SYSMEM, 0, 0x2000);
    for (it = 0; it < iters; it++) {
        int what = g_rand_int_range(r, 0, 20);

        if (what == 0) {
            fuzz_tables(g, r, vram);
        } else if (what == 1) {
            memset(dbuf, 0, sizeof(dbuf));
            fuzz_vdma(g, r, dbuf, ARRAY_SIZE(dbuf));
            qtest_memwrite(g->qts, DMABUF, dbuf, sizeof(dbuf));
        } else if (what == 2) {
            set_paging_root(g, g_rand_int_range(r, 0, 8) ? p.root
                                                         : fuzz_pte(r, vram));
        } else if (what == 3) {
            for (i = 0; i < 5; i++) {
                qtest_writeq(g->qts, PAGELIST + i * 8, fuzz_pte(r, vram));
            }
        } else if (what == 5) {
            /* the valid tables again (the TLBs may keep garbage) */
            qpci_memwrite(g->dev, g->bar2, PT_VRAM, tables, 0x7000);
        } else if (what == 4) {
            wr(g, QGPU_REG_RESET, g_rand_int_range(r, 0, 8) == 0);
            set_paging_root(g, p.root);
            (void)rd(g, QGPU_REG_FAULT_INFO);
            (void)rd64(g, QGPU_REG_FAULT_VM_LO);
            wr(g, QGPU_REG_FAULTQ_POP, 1);
        } else {
            fuzz_vring(g, r, vram, p.root);
        }
    }
    g_test_message("mmu fuzz: faults %u, cmds %" PRIu64 "/%" PRIu64
                   ", TLB hits %" PRIu64 " misses %" PRIu64 " flushes %"
                   PRIu64, rd(g, QGPU_REG_FAULT_COUNT),
                   rd64(g, QGPU_ENGINE_BASE(0) + QGPU_ENG_CMDS_LO),
                   rd64(g, QGPU_ENGINE_BASE(1) + QGPU_ENG_CMDS_LO),
                   tlb_hits(g), tlb_misses(g),
                   rd64(g, QGPU_REG_TLB_FLUSHES_LO));
    g_assert_cmpuint(tlb_misses(g), >, 0);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), >, 0);
    /* still alive: reset, clean tables, a virtual fill and fences */
    g_assert_cmphex(rd(g, QGPU_REG_ID), ==, QGPU_ID_MAGIC);
    wr(g, QGPU_REG_RESET, 1);
    qgpu_ring_init(g, 0, RING0, RING_SIZE);
    qgpu_ring_init(g, 1, RING1, RING_SIZE);
    pt_init(&p, g, false, PT_VRAM + 0x100000);
    pt_map(&p, VA_A, 0x100000 | PTE_RW);
    set_paging_root(g, p.root);
    vpoke(g, VA_A + 4, 0x600d);
    g_assert_cmphex(vram_rd(g, 0x100004), ==, 0x600d);
    cmd_fence(g, 0, SYS(FENCE_MEM), 0x600d, true);
    cmd_fence(g, 1, SYS(FENCE_MEM + 8), 0x600e, true);
    run(g, 0);
    run(g, 1);
    g_assert_cmphex(qtest_readq(g->qts, FENCE_MEM), ==, 0x600d);
    g_assert_cmphex(qtest_readq(g->qts, FENCE_MEM + 8), ==, 0x600e);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULTQ_COUNT), ==, 0);
    g_rand_free(r);
    qgpu_stop(g);
}

/* ---- tiled surfaces (version 1.3, docs/hw-spec.md section 17) ---- */

/*
 * The tiled layout written out from the spec's words, independently of
 * the device and of the header's helpers: pixel (x, y) of a surface @w
 * wide lies in tile (x / 8, y / 8), tiles row-major, ceil(w / 8) per row,
 * 256 bytes each, pixels row-major inside a tile.
 */
static uint64_t ref_tiled_off(uint32_t w, uint32_t x, uint32_t y)
{
    uint64_t cols = (w + 7) / 8;

    return ((y / 8) * cols + x / 8) * 256 + ((y % 8) * 8 + x % 8) * 4;
}

static uint64_t ref_tiled_size(uint32_t w, uint32_t h)
{
    return (uint64_t)((w + 7) / 8) * ((h + 7) / 8) * 256;
}

static uint64_t ref_span(uint32_t w, uint32_t h, uint32_t pitch)
{
    return w && h ? (uint64_t)(h - 1) * pitch + w * 4ull : 0;
}

/* The host's tiling of linear @lin into @t (padding 0) */
static void ref_tile(const uint8_t *lin, uint32_t w, uint32_t h,
                     uint32_t pitch, uint8_t *t)
{
    uint32_t x, y;

    memset(t, 0, ref_tiled_size(w, h));
    for (y = 0; y < h; y++) {
        for (x = 0; x < w; x++) {
            memcpy(t + ref_tiled_off(w, x, y), lin + (uint64_t)y * pitch +
                   x * 4, 4);
        }
    }
}

static void rand_bytes(GRand *r, uint8_t *p, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        p[i] = g_rand_int(r);
    }
}

static void dma_tile(DmaBuf *b, bool untile, uint32_t dslot, uint32_t doff,
                     uint32_t sslot, uint32_t soff, uint32_t w, uint32_t h,
                     uint32_t pitch)
{
    dma(b, QGPU_DMA_TILE, untile ? QGPU_TILE_UNTILE : 0, 7, dslot, doff,
        sslot, soff, w, h, pitch);
}

static void dma_vtile(DmaBuf *b, bool untile, uint64_t dst, uint64_t src,
                      uint32_t w, uint32_t h, uint32_t pitch)
{
    dma(b, QGPU_DMA_VTILE, untile ? QGPU_TILE_UNTILE : 0, 7, LO(dst),
        HI(dst), LO(src), HI(src), w, h, pitch);
}

/* The header's layout helpers agree with the spec's formulas */
static void test_tile_layout(void)
{
    static const uint32_t dims[] = { 0, 1, 7, 8, 9, 15, 16, 17, 100, 16384 };
    unsigned i, j;
    uint32_t bad;

    for (i = 0; i < ARRAY_SIZE(dims); i++) {
        for (j = 0; j < ARRAY_SIZE(dims); j++) {
            uint32_t w = dims[i], h = dims[j];

            g_assert_cmpuint(qgpu_tiled_size(w, h), ==, ref_tiled_size(w, h));
            g_assert_cmpuint(qgpu_linear_span(w, h, w * 4 + 8), ==,
                             ref_span(w, h, w * 4 + 8));
            if (w && h) {
                g_assert_cmpuint(qgpu_tiled_offset(w, w - 1, h - 1), ==,
                                 ref_tiled_off(w, w - 1, h - 1));
                g_assert_cmpuint(qgpu_tiled_offset(w, w / 2, h / 3), ==,
                                 ref_tiled_off(w, w / 2, h / 3));
            }
        }
    }
    /* hw-spec 17.1's example */
    g_assert_cmpuint(qgpu_tiled_size(20, 10), ==, 1536);
    g_assert_cmpuint(qgpu_tiled_offset(20, 9, 1), ==, 292);
    g_assert_cmpuint(qgpu_tiled_offset(20, 0, 8), ==, 768);
    g_assert_cmpuint(qgpu_tiled_offset(20, 16, 0), ==, 512);
    /* the geometry checks, in order */
    g_assert_cmpint(qgpu_tile_check(16384, 16384, 65536, &bad), ==,
                    QGPU_FAULT_NONE);
    g_assert_cmpint(qgpu_tile_check(16385, 16385, 3, &bad), ==,
                    QGPU_FAULT_BAD_LENGTH);
    g_assert_cmpuint(bad, ==, 16385);
    g_assert_cmpint(qgpu_tile_check(1, 16385, 3, &bad), ==,
                    QGPU_FAULT_BAD_LENGTH);
    g_assert_cmpint(qgpu_tile_check(8, 1, 30, &bad), ==,
                    QGPU_FAULT_BAD_ALIGN);
    g_assert_cmpuint(bad, ==, 30);
    g_assert_cmpint(qgpu_tile_check(8, 1, 28, &bad), ==,
                    QGPU_FAULT_BAD_LENGTH);
    g_assert_cmpuint(bad, ==, 28);
    g_assert_cmpint(qgpu_tile_check(0, 0, 0, &bad), ==, QGPU_FAULT_NONE);
}

#define TL_LIN          0x100000ull     /* linear source in VRAM */
#define TL_TILED        0x800000ull     /* tiled image in VRAM */
#define TL_OUT          0x1000000ull    /* linear result in VRAM */
#define TL_GUARD        512             /* bytes after a range kept */

/*
 * Tile @w x @h (pitch @pitch) from VRAM to VRAM and untile it back; the
 * tiled image must be the host's tiling, the result the source's pixels
 * with the bytes between rows and after the ranges untouched. Then untile
 * a random tiled image (random padding too) on its own.
 */
static void tile_roundtrip_one(QGPU *g, GRand *r, uint32_t w, uint32_t h,
                               uint32_t pitch)
{
    DmaBuf *b = g_new0(DmaBuf, 1);
    uint64_t span = ref_span(w, h, pitch), tsize = ref_tiled_size(w, h);
    uint64_t bytes0 = rd64(g, QGPU_ENGINE_BASE(1) + QGPU_ENG_BYTES_LO);
    g_autofree uint8_t *lin = g_malloc(span + TL_GUARD);
    g_autofree uint8_t *want = g_malloc(tsize + TL_GUARD);
    g_autofree uint8_t *got = g_malloc(MAX(span, tsize) + TL_GUARD);
    uint32_t x, y;
    uint64_t i;

    g_test_message("tile %ux%u pitch %u", w, h, pitch);
    rand_bytes(r, lin, span + TL_GUARD);
    qpci_memwrite(g->dev, g->bar2, TL_LIN, lin, span + TL_GUARD);
    memset(got, 0xaa, tsize + TL_GUARD);
    qpci_memwrite(g->dev, g->bar2, TL_TILED, got, tsize + TL_GUARD);
    memset(got, 0x55, span + TL_GUARD);
    qpci_memwrite(g->dev, g->bar2, TL_OUT, got, span + TL_GUARD);

    /* slots bound to exactly the ranges (a page for an empty one) */
    dma_bind(b, 0, TL_LIN, span ? span : 4096);
    dma_bind(b, 1, TL_TILED, tsize ? tsize : 4096);
    dma_bind(b, 2, TL_OUT, span ? span : 4096);
    dma_tile(b, false, 1, 0, 0, 0, w, h, pitch);
    dma_tile(b, true, 2, 0, 1, 0, w, h, pitch);
    dma_put(g, DMABUF, b);
    cmd_ctx_clear(g, 1);
    cmd_exec(g, 1, SYS(DMABUF), 0, b->n * 4);
    cmd_fence(g, 1, SYS(FENCE_MEM), 0x7e57, false);
    run(g, 1);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, 0);
    g_assert_cmpuint(qtest_readq(g->qts, FENCE_MEM), ==, 0x7e57);
    g_assert_cmpuint(rd64(g, QGPU_ENGINE_BASE(1) + QGPU_ENG_BYTES_LO), ==,
                     bytes0 + 2 * tsize);

    ref_tile(lin, w, h, pitch, want);
    memset(want + tsize, 0xaa, TL_GUARD);
    qpci_memread(g->dev, g->bar2, TL_TILED, got, tsize + TL_GUARD);
    for (i = 0; i < tsize + TL_GUARD; i++) {
        if (got[i] != want[i]) {
            g_error("%ux%u pitch %u: tiled byte %" PRIu64 " is 0x%02x, "
                    "not 0x%02x", w, h, pitch, i, got[i], want[i]);
        }
    }
    qpci_memread(g->dev, g->bar2, TL_OUT, got, span + TL_GUARD);
    for (i = 0; i < span + TL_GUARD; i++) {
        bool pixel = i < span && i % pitch < w * 4ull;

        if (got[i] != (pixel ? lin[i] : 0x55)) {
            g_error("%ux%u pitch %u: linear byte %" PRIu64 " is 0x%02x",
                    w, h, pitch, i, got[i]);
        }
    }

    /* untile alone: a random tiled image, padding included */
    rand_bytes(r, want, tsize);
    qpci_memwrite(g->dev, g->bar2, TL_TILED, want, tsize);
    memset(got, 0x55, span + TL_GUARD);
    qpci_memwrite(g->dev, g->bar2, TL_OUT, got, span + TL_GUARD);
    b->n = 0;
    dma_tile(b, true, 2, 0, 1, 0, w, h, pitch);
    dma_put(g, DMABUF, b);
    cmd_exec(g, 1, SYS(DMABUF), 0, b->n * 4);
    run(g, 1);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, 0);
    qpci_memread(g->dev, g->bar2, TL_OUT, got, span + TL_GUARD);
    for (y = 0; y < h; y++) {
        for (x = 0; x < w; x++) {
            g_assert_cmpmem(got + (uint64_t)y * pitch + x * 4, 4,
                            want + ref_tiled_off(w, x, y), 4);
        }
    }
    for (i = 0; i < span + TL_GUARD; i++) {
        if ((i >= span || i % pitch >= w * 4ull) && got[i] != 0x55) {
            g_error("%ux%u: untile wrote byte %" PRIu64, w, h, i);
        }
    }
    g_free(b);
}

static void test_tile_roundtrip(void)
{
    static const uint32_t sizes[][2] = {
        { 1, 1 }, { 8, 8 }, { 3, 5 }, { 13, 11 }, { 64, 17 }, { 100, 3 },
        { 9, 1 }, { 1, 9 }, { 16, 16 }, { 2100, 9 }, { 0, 5 }, { 5, 0 },
    };
    QGPU *g = qgpu_start(NULL);
    GRand *r = g_rand_new_with_seed(0x711e);
    unsigned i;

    g_assert_cmphex(rd(g, QGPU_REG_CAPS) & QGPU_CAP_TILING, ==,
                    QGPU_CAP_TILING);
    g_assert_cmphex(rd(g, QGPU_REG_VERSION) & 0xffff, >=, 3);
    for (i = 0; i < ARRAY_SIZE(sizes); i++) {
        uint32_t w = sizes[i][0], h = sizes[i][1];

        tile_roundtrip_one(g, r, w, h, w * 4);
        tile_roundtrip_one(g, r, w, h, w * 4 + 12);
        if (i % 3 == 0) {
            tile_roundtrip_one(g, r, w, h, w * 4 + 4096);
        }
    }
    g_rand_free(r);
    qgpu_stop(g);
}

/* A TILE whose tiled side is in the GART: system pages, page by page */
static void test_tile_gart(void)
{
    QGPU *g = qgpu_start(NULL);
    DmaBuf *b = g_new0(DmaBuf, 1);
    GRand *r = g_rand_new_with_seed(0x6a27);
    uint32_t w = 75, h = 40, pitch = 320, i;
    uint64_t span = ref_span(w, h, pitch), tsize = ref_tiled_size(w, h);
    g_autofree uint8_t *lin = g_malloc(span);
    g_autofree uint8_t *want = g_malloc(tsize);
    g_autofree uint8_t *got = g_malloc(tsize);

    /* GART pages 0..7 are system pages in reverse order */
    qtest_memset(g->qts, GART_TABLE, 0, 64 * 8);
    wr(g, QGPU_REG_GART_BASE_LO, GART_TABLE);
    wr(g, QGPU_REG_GART_CTRL, QGPU_GART_CTRL_ENABLE);
    for (i = 0; i < 8; i++) {
        qtest_writeq(g->qts, PAGELIST + i * 8, SYSBUF + (7 - i) * 4096);
    }
    cmd_map_ap(g, 0, 8, SYS(PAGELIST));
    run(g, 0);
    g_assert_cmpuint(tsize, <=, 8 * 4096);
    rand_bytes(r, lin, span);
    qpci_memwrite(g->dev, g->bar2, TL_LIN, lin, span);
    dma_bind(b, 0, TL_LIN, span);
    dma_bind(b, 1, QGPU_GART_BASE, 8 * 4096);
    dma_bind(b, 2, TL_OUT, span);
    dma_tile(b, false, 1, 0, 0, 0, w, h, pitch);
    dma_tile(b, true, 2, 0, 1, 0, w, h, pitch);
    dma_put(g, DMABUF, b);
    cmd_exec(g, 1, SYS(DMABUF), 0, b->n * 4);
    run(g, 1);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, 0);
    ref_tile(lin, w, h, pitch, want);
    for (i = 0; i < tsize; i += 4096) {
        qtest_memread(g->qts, SYSBUF + (7 - i / 4096) * 4096, got + i,
                      MIN(4096, tsize - i));
    }
    g_assert_cmpmem(got, tsize, want, tsize);
    qpci_memread(g->dev, g->bar2, TL_OUT, got, span);
    for (i = 0; i < span; i++) {
        if (i % pitch < w * 4) {
            g_assert_cmphex(got[i], ==, lin[i]);
        }
    }
    g_rand_free(r);
    g_free(b);
    qgpu_stop(g);
}

/* Every bound of TILE: each fault, its FAULT_ADDR, and the exact fits */
static void test_tile_faults(void)
{
    QGPU *g = qgpu_start("max-slots=8,max-contexts=4");
    DmaBuf *b = g_new0(DmaBuf, 1);
    uint32_t faults = 0, off = 0;
    uint64_t bytes0;

    /* slot 0: 4 KiB of linear at 0x100000; slot 1: 4 KiB at 0x200000 */
#define TILE_CASE(reason_, addr_, ...) do {                         \
        b->n = 0;                                                   \
        dma_bind(b, 0, 0x100000, 0x1000);                           \
        dma_bind(b, 1, 0x200000, 0x1000);                           \
        off = b->n * 4;                                             \
        __VA_ARGS__;                                                \
        dma(b, QGPU_DMA_FILL, 0, 4, 0, 0, 4, 0x0f0f0f0f);           \
        dma_put(g, DMABUF, b);                                      \
        vram_wr(g, 0x100000, 0);                                    \
        cmd_ctx_clear(g, 2);                                        \
        cmd_exec(g, 2, SYS(DMABUF), 0, b->n * 4);                   \
        cmd_fence(g, 1, SYS(FENCE_MEM), faults + 100, false);       \
        run(g, 1);                                                  \
        g_assert_cmpuint(qtest_readq(g->qts, FENCE_MEM), ==,        \
                         faults + 100);                             \
        if ((reason_) == QGPU_FAULT_NONE) {                         \
            g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, faults); \
            g_assert_false(ctx_faulted(g, 2));                      \
            g_assert_cmphex(vram_rd(g, 0x100000), ==, 0x0f0f0f0f);  \
            break;                                                  \
        }                                                           \
        expect_fault(g, 1, reason_, ++faults);                      \
        g_assert_cmphex(rd64(g, QGPU_REG_FAULT_ADDR_LO), ==, addr_); \
        g_assert_cmpuint(rd(g, QGPU_REG_FAULT_OFFSET), ==, off);    \
        g_assert_cmpuint(rd(g, QGPU_REG_FAULT_CONTEXT), ==, 2);     \
        g_assert_cmphex(rd(g, QGPU_REG_FAULT_INFO), ==, 0);         \
        g_assert_true(ctx_faulted(g, 2));                           \
        /* the rest of the buffer was abandoned */                  \
        g_assert_cmphex(vram_rd(g, 0x100000), ==, 0);               \
        fault_pop(g);                                               \
        wr(g, QGPU_REG_INT_ACK, QGPU_INT_ALL);                      \
    } while (0)

    /* geometry, in the order of hw-spec 17.3 */
    TILE_CASE(QGPU_FAULT_BAD_LENGTH, 16385,
              dma_tile(b, false, 1, 0, 0, 0, 16385, 16385, 3));
    TILE_CASE(QGPU_FAULT_BAD_LENGTH, 16385,
              dma_tile(b, true, 1, 0, 0, 0, 1, 16385, 3));
    TILE_CASE(QGPU_FAULT_BAD_LENGTH, 0xffffffff,
              dma_tile(b, false, 1, 0, 0, 0, 0xffffffff, 1, 4));
    TILE_CASE(QGPU_FAULT_BAD_ALIGN, 30,
              dma_tile(b, false, 1, 0, 0, 0, 7, 1, 30));
    TILE_CASE(QGPU_FAULT_BAD_LENGTH, 28,
              dma_tile(b, false, 1, 0, 0, 0, 8, 1, 28));
    TILE_CASE(QGPU_FAULT_BAD_LENGTH, 0,
              dma_tile(b, false, 9, 0, 9, 0, 8, 0, 0));
    /* slots: destination first */
    TILE_CASE(QGPU_FAULT_BAD_SLOT, 8,
              dma_tile(b, false, 8, 0, 9, 0, 8, 8, 32));
    TILE_CASE(QGPU_FAULT_BAD_SLOT, 3,
              dma_tile(b, false, 3, 0, 0, 0, 8, 8, 32));
    TILE_CASE(QGPU_FAULT_BAD_SLOT, 4,
              dma_tile(b, false, 1, 0, 4, 0, 8, 8, 32));
    TILE_CASE(QGPU_FAULT_BAD_SLOT, 0xffffffff,
              dma_tile(b, true, 0, 0, 0xffffffff, 0, 8, 8, 32));
    /* an empty surface still needs bound slots and offsets inside them */
    TILE_CASE(QGPU_FAULT_BAD_SLOT, 5,
              dma_tile(b, false, 5, 0, 0, 0, 0, 8, 0));
    TILE_CASE(QGPU_FAULT_SLOT_BOUNDS, 0x1004,
              dma_tile(b, false, 1, 0x1004, 0, 0, 8, 0, 32));
    TILE_CASE(QGPU_FAULT_NONE, 0,
              dma_tile(b, false, 1, 0x1000, 0, 0x1000, 0, 0, 0));
    /*
     * 16 x 16, pitch 64: tiled 1024 bytes, linear 1024 bytes. Tile:
     * destination slot 1 tiled, source slot 0 linear.
     */
    TILE_CASE(QGPU_FAULT_NONE, 0,
              dma_tile(b, false, 1, 0xc00, 0, 0xc00, 16, 16, 64));
    TILE_CASE(QGPU_FAULT_SLOT_BOUNDS, 0xc04,
              dma_tile(b, false, 1, 0xc04, 0, 0, 16, 16, 64));
    TILE_CASE(QGPU_FAULT_SLOT_BOUNDS, 0xc04,
              dma_tile(b, false, 1, 0, 0, 0xc04, 16, 16, 64));
    /* the last linear row needs no padding: pitch 128 spans 15*128+64 */
    TILE_CASE(QGPU_FAULT_NONE, 0,
              dma_tile(b, false, 1, 0, 0, 0x1000 - 15 * 128 - 64, 16, 16,
                       128));
    TILE_CASE(QGPU_FAULT_SLOT_BOUNDS, 0x1000 - 15 * 128 - 60,
              dma_tile(b, false, 1, 0, 0, 0x1000 - 15 * 128 - 60, 16, 16,
                       128));
    /* odd sizes round the tiled side up to whole tiles: 9 x 9 is 1 KiB */
    TILE_CASE(QGPU_FAULT_NONE, 0,
              dma_tile(b, false, 1, 0xc00, 0, 0, 9, 9, 36));
    TILE_CASE(QGPU_FAULT_SLOT_BOUNDS, 0xc04,
              dma_tile(b, false, 1, 0xc04, 0, 0, 9, 9, 36));
    /* untile: the destination is the linear side */
    TILE_CASE(QGPU_FAULT_NONE, 0,
              dma_tile(b, true, 0, 0xc00, 1, 0xc00, 16, 16, 64));
    TILE_CASE(QGPU_FAULT_SLOT_BOUNDS, 0xc04,
              dma_tile(b, true, 0, 0xc04, 1, 0, 16, 16, 64));
    TILE_CASE(QGPU_FAULT_SLOT_BOUNDS, 0xc04,
              dma_tile(b, true, 0, 0, 1, 0xc04, 16, 16, 64));
    /* no wrap: huge pitch, huge offsets */
    TILE_CASE(QGPU_FAULT_SLOT_BOUNDS, 0,
              dma_tile(b, false, 1, 0, 0, 0, 1, 16384, 0xfffffffc));
    TILE_CASE(QGPU_FAULT_SLOT_BOUNDS, 0x10,
              dma_tile(b, false, 1, 0, 0, 0x10, 1, 8, 0xfffffffc));
    TILE_CASE(QGPU_FAULT_SLOT_BOUNDS, 0xffffffff,
              dma_tile(b, false, 1, 0xffffffff, 0, 0, 1, 1, 4));
    TILE_CASE(QGPU_FAULT_SLOT_BOUNDS, 0xfffffffc,
              dma_tile(b, true, 1, 0, 0, 0xfffffffc, 1, 1, 4));
    TILE_CASE(QGPU_FAULT_SLOT_BOUNDS, 0,
              dma_tile(b, false, 1, 0, 0, 0, 16384, 16384, 65536));
    /* a command shorter than TILE's 8 dwords */
    TILE_CASE(QGPU_FAULT_BAD_LENGTH,
              QGPU_CMD_HDR(QGPU_DMA_TILE, 0, 7),
              dma(b, QGPU_DMA_TILE, 0, 6, 1, 0, 0, 0, 8, 8));
    /* longer is fine: the extra dwords are ignored */
    TILE_CASE(QGPU_FAULT_NONE, 0,
              dma(b, QGPU_DMA_TILE, 0, 8, 1, 0, 0, 0, 8, 8, 32, 0xbad));
    /* VTILE in a physical context */
    TILE_CASE(QGPU_FAULT_BAD_OPCODE, QGPU_CMD_HDR(QGPU_DMA_VTILE, 0, 8),
              dma_vtile(b, false, 0x1000, 0x2000, 8, 8, 32));

    /* GART slot with GART disabled: GART_UNMAPPED when the tile is written */
    TILE_CASE(QGPU_FAULT_GART_UNMAPPED, QGPU_GART_BASE,
              dma_bind(b, 3, QGPU_GART_BASE, 0x2000);
              off = b->n * 4;
              dma_tile(b, false, 3, 0, 0, 0, 16, 16, 64));
    TILE_CASE(QGPU_FAULT_GART_UNMAPPED, QGPU_GART_BASE + 0x100,
              dma_bind(b, 3, QGPU_GART_BASE, 0x2000);
              off = b->n * 4;
              dma_tile(b, true, 0, 0, 3, 0x100, 16, 16, 64));

    /*
     * A fault in the middle: 64 x 24 is 3 tile rows of 2 KiB; GART page 0
     * is mapped and page 1 is not, so the third tile row faults at page 1
     * and the first two stay written.
     */
    {
        g_autofree uint8_t *lin = g_malloc(64 * 4 * 24);
        g_autofree uint8_t *want = g_malloc(3 * 2048);
        g_autofree uint8_t *got = g_malloc(4096);
        uint32_t i;

        for (i = 0; i < 64 * 24; i++) {
            ((uint32_t *)lin)[i] = cpu_to_le32(0xc0de0000 + i);
        }
        qpci_memwrite(g->dev, g->bar2, 0x300000, lin, 64 * 4 * 24);
        ref_tile(lin, 64, 24, 256, want);
        qtest_memset(g->qts, GART_TABLE, 0, 64 * 8);
        qtest_writeq(g->qts, GART_TABLE, SYSBUF | QGPU_GART_ENTRY_VALID);
        qtest_memset(g->qts, SYSBUF, 0xee, 4096);
        wr(g, QGPU_REG_GART_BASE_LO, GART_TABLE);
        wr(g, QGPU_REG_GART_CTRL, QGPU_GART_CTRL_ENABLE);
        bytes0 = rd64(g, QGPU_ENGINE_BASE(1) + QGPU_ENG_BYTES_LO);
        TILE_CASE(QGPU_FAULT_GART_UNMAPPED, QGPU_GART_BASE + 0x1000,
                  dma_bind(b, 3, QGPU_GART_BASE, 0x2000);
                  dma_bind(b, 4, 0x300000, 64 * 4 * 24);
                  off = b->n * 4;
                  dma_tile(b, false, 3, 0, 4, 0, 64, 24, 256));
        qtest_memread(g->qts, SYSBUF, got, 4096);
        g_assert_cmpmem(got, 4096, want, 4096);
        /* BYTES counts the tiles done before the fault */
        g_assert_cmpuint(rd64(g, QGPU_ENGINE_BASE(1) + QGPU_ENG_BYTES_LO),
                         ==, bytes0 + 4096);
        wr(g, QGPU_REG_GART_CTRL, 0);
    }
#undef TILE_CASE
    /* the engine goes on */
    cmd_fence(g, 1, SYS(FENCE_MEM), 0x600d, false);
    run(g, 1);
    g_assert_cmpuint(qtest_readq(g->qts, FENCE_MEM), ==, 0x600d);
    g_assert_cmphex(erd(g, 1, QGPU_ENG_STATUS), ==, 0);
    g_free(b);
    qgpu_stop(g);
}

/*
 * The largest surface the device takes, 16384 x 16384 (1 GiB each side):
 * the tiled side in VRAM, the linear side a GART range whose pages all
 * alias one system page. It runs in chunks: the device answers and shows
 * progress while it works, and an engine reset abandons it.
 */
static void test_tile_huge(void)
{
    QGPU *g = qgpu_start("vram-size=1G,visible-vram-size=64M,gart-size=1G");
    DmaBuf *b = g_new0(DmaBuf, 1);
    uint64_t table = 2 * MiB, n, bytes, last = 0;
    int busy = 0, i;

    /* 262144 GART entries, all the same page, built by doubling copies */
    qtest_writeq(g->qts, BIGBUF, SYSBUF | QGPU_GART_ENTRY_VALID);
    for (n = 8; n < table; n *= 2) {
        cmd_transfer(g, n, SYS(BIGBUF), SYS(BIGBUF + n), 0);
    }
    run(g, 0);
    g_assert_cmphex(qtest_readq(g->qts, BIGBUF + table - 8), ==,
                    SYSBUF | QGPU_GART_ENTRY_VALID);
    wr(g, QGPU_REG_GART_BASE_LO, BIGBUF);
    wr(g, QGPU_REG_GART_CTRL, QGPU_GART_CTRL_ENABLE);
    qtest_memset(g->qts, SYSBUF, 0x5a, 4096);

    dma_bind(b, 0, QGPU_GART_BASE, 1 * GiB);
    dma_bind(b, 1, 0, 1 * GiB);
    /*
     * 8 times over, so that the register reads below still fall inside
     * the work when this process is starved for a while on a busy host
     */
    for (i = 0; i < 8; i++) {
        dma_tile(b, false, 1, 0, 0, 0, 16384, 16384, 65536);
    }
    dma_put(g, DMABUF, b);
    cmd_exec(g, 1, SYS(DMABUF), 0, b->n * 4);
    cmd_fence(g, 1, SYS(FENCE_MEM), 0x1a7e, false);
    kick(g, 1);
    for (i = 0; i < 10; i++) {
        g_assert_cmphex(rd(g, QGPU_REG_ID), ==, QGPU_ID_MAGIC);
        bytes = rd64(g, QGPU_ENGINE_BASE(1) + QGPU_ENG_BYTES_LO);
        g_assert_cmpuint(bytes, >=, last);
        last = bytes;
        busy += !!(erd(g, 1, QGPU_ENG_STATUS) & QGPU_ENG_STATUS_BUSY);
        /* the first reads answer while the work runs */
        if (i == 0) {
            g_assert_cmpint(busy, ==, 1);
            g_assert_cmpuint(last, <, 8 * GiB);
        }
    }
    /*
     * 16 GiB of work cannot be done between a few register reads, unless
     * this process was starved for seconds meanwhile (seen on a busy host):
     * then the work, and the fence behind it, may be done by now.
     */
    if (busy < 10) {
        g_test_message("reads starved: %d of 10 saw the engine busy", busy);
    }
    g_assert_cmphex(vram_rd(g, 0), ==, 0x5a5a5a5a);
    engine_reset(g, 1);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, 0);
    if (busy == 10) {
        g_assert_cmpuint(qtest_readq(g->qts, FENCE_MEM), ==, 0);
    } else {
        g_assert_true(qtest_readq(g->qts, FENCE_MEM) == 0 ||
                      qtest_readq(g->qts, FENCE_MEM) == 0x1a7e);
    }
    cmd_fence(g, 1, SYS(FENCE_MEM), 0x600d, false);
    run(g, 1);
    g_assert_cmpuint(qtest_readq(g->qts, FENCE_MEM), ==, 0x600d);

    /* a narrow, tall surface: 2048 one-tile strips, done in chunks too */
    b->n = 0;
    dma_bind(b, 0, 0x2000000, 16384 * 4);
    dma_bind(b, 1, 0x3000000, 2048 * 256);
    dma_tile(b, false, 1, 0, 0, 0, 1, 16384, 4);
    dma_tile(b, true, 0, 0, 1, 0, 1, 16384, 4);
    dma_put(g, DMABUF, b);
    for (i = 0; i < 16384; i += 1000) {
        vram_wr(g, 0x2000000 + i * 4, 0xd00d0000 + i);
    }
    bytes = rd64(g, QGPU_ENGINE_BASE(1) + QGPU_ENG_BYTES_LO);
    cmd_ctx_clear(g, 1);
    cmd_exec(g, 1, SYS(DMABUF), 0, b->n * 4);
    run(g, 1);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, 0);
    g_assert_cmpuint(rd64(g, QGPU_ENGINE_BASE(1) + QGPU_ENG_BYTES_LO), ==,
                     bytes + 2 * 2048 * 256);
    for (i = 0; i < 16384; i += 1000) {
        g_assert_cmphex(vram_rd(g, 0x3000000 + ref_tiled_off(1, 0, i)), ==,
                        0xd00d0000 + i);
        g_assert_cmphex(vram_rd(g, 0x2000000 + i * 4), ==, 0xd00d0000 + i);
    }
    g_assert_cmphex(vram_rd(g, 0x3000000 + 4), ==, 0);
    g_free(b);
    qgpu_stop(g);
}

/*
 * VTILE in a virtual context: the linear surface on VRAM pages in reverse
 * order, the tiled image on system pages, the result on VRAM again; every
 * access crosses pages. Then its faults.
 */
#define TV_LIN          0x20000000ull
#define TV_TILED        0x21000000ull
#define TV_OUT          0x22000000ull
#define TV_RO           0x23000000ull
#define TVW             (QGPU_FAULT_INFO_VIRTUAL | QGPU_FAULT_INFO_WRITE)
#define TVR             QGPU_FAULT_INFO_VIRTUAL
#define TVNOWALK        (QGPU_FAULT_LEVEL_NONE << QGPU_FAULT_INFO_LEVEL_SHIFT)

static void test_tile_virtual(void)
{
    QGPU *g = qgpu_start("max-contexts=8");
    DmaBuf *b = g_new0(DmaBuf, 1);
    GRand *r = g_rand_new_with_seed(0x7a11);
    uint32_t w = 150, h = 50, pitch = 640, x, y;
    uint64_t span = ref_span(w, h, pitch), tsize = ref_tiled_size(w, h), i;
    g_autofree uint8_t *lin = g_malloc(16 * 4096);
    g_autofree uint8_t *want = g_malloc(16 * 4096);
    g_autofree uint8_t *got = g_malloc(16 * 4096);
    uint32_t faults = 0, off;
    PT p;

    pt_init(&p, g, false, PT_VRAM);
    for (i = 0; i < 16; i++) {
        pt_map(&p, TV_LIN + i * 4096, (0x200000 + (15 - i) * 4096) | PTE_RW);
        pt_map(&p, TV_TILED + i * 4096, (SYSBUF + i * 4096) | PTE_SYS);
        pt_map(&p, TV_OUT + i * 4096, (0x400000 + i * 4096) | PTE_RW);
    }
    pt_map(&p, TV_RO, 0x500000 | PTE_RW | QGPU_PTE_READ_ONLY);
    cmd_ctx_set_vm(g, 1, 2, p.root);
    g_assert_cmpuint(span, <=, 16 * 4096);
    g_assert_cmpuint(tsize, <=, 16 * 4096);

    rand_bytes(r, lin, 16 * 4096);
    for (i = 0; i < 16; i++) {
        qpci_memwrite(g->dev, g->bar2, 0x200000 + (15 - i) * 4096,
                      lin + i * 4096, 4096);
    }
    qtest_memset(g->qts, SYSBUF, 0xaa, 16 * 4096);
    memset(got, 0x55, 16 * 4096);
    qpci_memwrite(g->dev, g->bar2, 0x400000, got, 16 * 4096);
    dma_vtile(b, false, TV_TILED, TV_LIN, w, h, pitch);
    dma_vtile(b, true, TV_OUT, TV_TILED, w, h, pitch);
    dma_put(g, DMABUF, b);
    cmd_exec(g, 2, SYS(DMABUF), 0, b->n * 4);
    run(g, 1);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, 0);
    ref_tile(lin, w, h, pitch, want);
    qtest_memread(g->qts, SYSBUF, got, 16 * 4096);
    g_assert_cmpmem(got, tsize, want, tsize);
    for (i = tsize; i < 16 * 4096; i++) {
        g_assert_cmphex(got[i], ==, 0xaa);
    }
    qpci_memread(g->dev, g->bar2, 0x400000, got, 16 * 4096);
    for (y = 0; y < h; y++) {
        g_assert_cmpmem(got + y * pitch, w * 4, lin + y * pitch, w * 4);
        if (y + 1 < h) {
            for (x = w * 4; x < pitch; x++) {
                g_assert_cmphex(got[y * pitch + x], ==, 0x55);
            }
        }
    }
    for (i = span; i < 16 * 4096; i++) {
        g_assert_cmphex(got[i], ==, 0x55);
    }

    /* faults: FAULT_ADDR the VA, FAULT_INFO and FAULT_VM as for VCOPY */
#define VTILE_FAULT(reason_, addr_, info_, ...) do {                \
        b->n = 0;                                                   \
        dma(b, QGPU_DMA_NOP, 0, 1, 0);                              \
        off = b->n * 4;                                             \
        __VA_ARGS__;                                                \
        dma_put(g, DMABUF, b);                                      \
        cmd_ctx_clear(g, 2);                                        \
        cmd_exec(g, 2, SYS(DMABUF), 0, b->n * 4);                   \
        run(g, 1);                                                  \
        g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, ++faults); \
        g_assert_cmpuint(rd(g, QGPU_REG_FAULTQ_COUNT), ==, 1);      \
        g_assert_cmpuint(rd(g, QGPU_REG_FAULT_REASON), ==, reason_); \
        g_assert_cmphex(rd64(g, QGPU_REG_FAULT_ADDR_LO), ==, addr_); \
        g_assert_cmphex(rd(g, QGPU_REG_FAULT_INFO), ==, info_);     \
        g_assert_cmphex(rd64(g, QGPU_REG_FAULT_VM_LO), ==,          \
                        (info_) ? p.root : 0);                      \
        g_assert_cmpuint(rd(g, QGPU_REG_FAULT_OFFSET), ==, off);    \
        g_assert_cmpuint(rd(g, QGPU_REG_FAULT_CONTEXT), ==, 2);     \
        fault_pop(g);                                               \
        g_assert_true(ctx_faulted(g, 2));                           \
    } while (0)

    VTILE_FAULT(QGPU_FAULT_BAD_LENGTH, 16385, 0,
                dma_vtile(b, false, TV_TILED, TV_LIN, 16385, 1, 65540));
    VTILE_FAULT(QGPU_FAULT_BAD_ALIGN, 2, 0,
                dma_vtile(b, false, TV_TILED, TV_LIN, 0, 1, 2));
    VTILE_FAULT(QGPU_FAULT_BAD_LENGTH, 4, 0,
                dma_vtile(b, true, TV_OUT, TV_TILED, 2, 1, 4));
    /* VA ranges: destination (written) first, then source (read) */
    VTILE_FAULT(QGPU_FAULT_BAD_ADDRESS, QGPU_MMU_VA_SIZE - 256, TVW | TVNOWALK,
                dma_vtile(b, false, QGPU_MMU_VA_SIZE - 256, TV_LIN, 9, 1,
                          36));
    VTILE_FAULT(QGPU_FAULT_BAD_ADDRESS, QGPU_MMU_VA_SIZE - 35, TVR | TVNOWALK,
                dma_vtile(b, false, TV_TILED, QGPU_MMU_VA_SIZE - 35, 9, 1,
                          36));
    VTILE_FAULT(QGPU_FAULT_BAD_ADDRESS, UINT64_MAX, TVW | TVNOWALK,
                dma_vtile(b, true, UINT64_MAX, TV_TILED, 1, 1, 4));
    /* walks: the tiled image runs off its 16 mapped pages */
    VTILE_FAULT(QGPU_FAULT_PAGE_NOT_PRESENT, TV_TILED + 16 * 4096, TVW,
                dma_vtile(b, false, TV_TILED + 8 * 4096, TV_LIN, 16, 520,
                          64));
    VTILE_FAULT(QGPU_FAULT_PAGE_NOT_PRESENT, TV_LIN + 16 * 4096, TVR,
                dma_vtile(b, false, TV_TILED, TV_LIN + 12 * 4096, 64, 20,
                          1024));
    VTILE_FAULT(QGPU_FAULT_PAGE_READ_ONLY, TV_RO, TVW,
                dma_vtile(b, true, TV_RO, TV_TILED, 8, 8, 32));
    VTILE_FAULT(QGPU_FAULT_BAD_OPCODE, QGPU_CMD_HDR(QGPU_DMA_TILE, 0, 8), 0,
                dma_tile(b, false, 0, 0, 1, 0, 8, 8, 32));
#undef VTILE_FAULT
    /* an empty surface at any in-range VA moves nothing */
    cmd_ctx_clear(g, 2);
    b->n = 0;
    dma_vtile(b, false, 0x7000000000ull, 0x7000001000ull, 0, 16384,
              0xfffffffc);
    dma_put(g, DMABUF, b);
    cmd_exec(g, 2, SYS(DMABUF), 0, b->n * 4);
    run(g, 1);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, faults);
    g_assert_false(ctx_faulted(g, 2));
    g_rand_free(r);
    g_free(b);
    qgpu_stop(g);
}

/* Random TILE/VTILE commands in both kinds of context: faults, no crash */
static void test_tile_fuzz(void)
{
    QGPU *g = qgpu_start("max-slots=8,max-contexts=4");
    GRand *r = g_rand_new_with_seed(0xf022);
    DmaBuf *b = g_new0(DmaBuf, 1);
    int it, k;
    PT p;

    pt_init(&p, g, false, PT_VRAM);
    for (k = 0; k < 32; k++) {
        pt_map(&p, VA_A + k * 4096, (0x100000 + k * 4096) | PTE_RW);
    }
    cmd_ctx_set_vm(g, 1, 3, p.root);
    for (it = 0; it < 400; it++) {
        static const uint32_t dims[] = { 0, 1, 7, 8, 9, 63, 64, 300, 16384,
                                         16385 };
        bool virt = g_rand_boolean(r);
        uint32_t w = g_rand_boolean(r) ? dims[g_rand_int_range(r, 0, 10)]
                                       : g_rand_int(r);
        uint32_t h = g_rand_boolean(r) ? dims[g_rand_int_range(r, 0, 10)]
                                       : g_rand_int(r);
        uint32_t pitch = g_rand_boolean(r) ? w * 4 + g_rand_int_range(r, 0, 9)
                                           : g_rand_int(r);
        uint32_t flags = g_rand_int_range(r, 0, 256);

        b->n = 0;
        if (virt) {
            uint64_t d = VA_A + g_rand_int_range(r, -4096, 40 * 4096);
            uint64_t s = g_rand_boolean(r) ? VA_A + g_rand_int(r) % 0x30000
                                           : ((uint64_t)g_rand_int(r) << 32 |
                                              g_rand_int(r));

            dma(b, QGPU_DMA_VTILE, flags, 7, LO(d), HI(d), LO(s), HI(s), w,
                h, pitch);
        } else {
            dma_bind(b, 0, 0x100000, g_rand_int_range(r, 1, 0x40000));
            dma_bind(b, 1, 0x200000, g_rand_int_range(r, 1, 0x40000));
            dma(b, QGPU_DMA_TILE, flags, 7, g_rand_int_range(r, 0, 3),
                g_rand_int_range(r, 0, 0x2000), g_rand_int_range(r, 0, 3),
                g_rand_boolean(r) ? g_rand_int(r) : 0, w, h, pitch);
        }
        dma_put(g, DMABUF, b);
        cmd_ctx_clear(g, virt ? 3 : 2);
        cmd_exec(g, virt ? 3 : 2, SYS(DMABUF), 0, b->n * 4);
        run(g, 1);
        while (rd(g, QGPU_REG_FAULTQ_COUNT)) {
            fault_pop(g);
        }
        g_assert_cmphex(erd(g, 1, QGPU_ENG_STATUS), ==, 0);
    }
    g_test_message("tile fuzz: %u faults", rd(g, QGPU_REG_FAULT_COUNT));
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), >, 0);
    cmd_fence(g, 1, SYS(FENCE_MEM), 0xf022, false);
    run(g, 1);
    g_assert_cmphex(qtest_readq(g->qts, FENCE_MEM), ==, 0xf022);
    g_rand_free(r);
    g_free(b);
    qgpu_stop(g);
}

/* ---- fuzz ---- */

static uint64_t fuzz_addr(GRand *r, uint64_t vram)
{
    switch (g_rand_int_range(r, 0, 6)) {
    case 0:
        return g_rand_int_range(r, 0, vram / 4096) * 4096ull +
               g_rand_int_range(r, -8, 8);
    case 1:
        return QGPU_GART_BASE + g_rand_int_range(r, 0, 0x10000) * 4096ull;
    case 2:
        /* guest RAM away from the rings and device state */
        return SYS(0x1000000 + g_rand_int_range(r, 0, 0x8000000));
    case 3:
        return ((uint64_t)g_rand_int(r) << 32) | g_rand_int(r);
    case 4:
        return UINT64_MAX - g_rand_int_range(r, 0, 64);
    default:
        return vram - g_rand_int_range(r, 0, 64);
    }
}

static uint32_t fuzz_len(GRand *r, uint32_t op, bool dma)
{
    static const uint8_t ring_len[256] = {
        [QGPU_CMD_NOP] = 1, [QGPU_CMD_FENCE] = 5, [QGPU_CMD_TRANSFER] = 7,
        [QGPU_CMD_FILL] = 6, [QGPU_CMD_DISCARD] = 5,
        [QGPU_CMD_MAP_APERTURE] = 5, [QGPU_CMD_UNMAP_APERTURE] = 3,
        [QGPU_CMD_EXEC] = 6, [QGPU_CMD_CTX_CLEAR] = 2,
        [QGPU_CMD_CTX_UNBIND] = 4,
    };
    static const uint8_t dma_len[256] = {
        [QGPU_DMA_NOP] = 1, [QGPU_DMA_BIND] = 6, [QGPU_DMA_COPY] = 6,
        [QGPU_DMA_FILL] = 5, [QGPU_DMA_ADD] = 8, [QGPU_DMA_XOR] = 8,
        [QGPU_DMA_CHECKSUM] = 6, [QGPU_DMA_FENCE] = 5, [QGPU_DMA_WAIT] = 5,
        [QGPU_DMA_TIMESTAMP] = 3,
    };
    uint32_t fixed = dma ? dma_len[op & 0xff] : ring_len[op & 0xff];

    if (fixed && g_rand_int_range(r, 0, 10) < 8) {
        return fixed;
    }
    return g_rand_int_range(r, 0, 10);
}

static uint64_t fuzz_size(GRand *r)
{
    switch (g_rand_int_range(r, 0, 7)) {
    case 5:
        return g_rand_int_range(r, 0, 1024) * 4;
    case 6:
        return g_rand_int_range(r, 1, 16) * 4096;
    case 0:
        return g_rand_int_range(r, 0, 64);
    case 1:
        return g_rand_int_range(r, 0, 0x10000) & ~3u;
    case 2:
        return g_rand_int_range(r, 1, 64) * 4096ull;
    case 3:
        return UINT64_MAX - g_rand_int_range(r, 0, 8192);
    default:
        return ((uint64_t)g_rand_int(r) << 32) | g_rand_int(r);
    }
}

static void test_fuzz(void)
{
    /* i440fx: no MMCONFIG, so random DMA cannot reprogram PCI config */
    QGPU *g = qgpu_start_machine("pc", "host-aperture-size=64K,"
                                 "max-slots=8,max-contexts=4");
    const char *seed_env = g_getenv("QGPU_FUZZ_SEED");
    const char *iter_env = g_getenv("QGPU_FUZZ_ITERS");
    GRand *r = g_rand_new_with_seed(seed_env ? atoi(seed_env) : 0x9e3779b9);
    int iters = iter_env ? atoi(iter_env) : 5000;
    static const uint32_t ops[] = {
        QGPU_CMD_NOP, QGPU_CMD_FENCE, QGPU_CMD_TRANSFER, QGPU_CMD_FILL,
        QGPU_CMD_DISCARD, QGPU_CMD_MAP_APERTURE, QGPU_CMD_UNMAP_APERTURE,
        QGPU_CMD_EXEC, QGPU_CMD_CTX_CLEAR, QGPU_CMD_CTX_UNBIND, 0x55,
    };
    static const uint32_t dops[] = {
        QGPU_DMA_NOP, QGPU_DMA_BIND, QGPU_DMA_COPY, QGPU_DMA_FILL,
        QGPU_DMA_ADD, QGPU_DMA_XOR, QGPU_DMA_CHECKSUM, QGPU_DMA_FENCE,
        QGPU_DMA_WAIT, QGPU_DMA_TIMESTAMP, 0x99,
    };
    uint64_t vram = 64 * MiB;
    uint32_t dbuf[256];
    int it, i;

    wr(g, QGPU_REG_GART_BASE_LO, GART_TABLE);
    wr(g, QGPU_REG_GART_CTRL, QGPU_GART_CTRL_ENABLE);
    for (it = 0; it < iters; it++) {
        int what = g_rand_int_range(r, 0, 10);

        if (what < 3) {
            /* random register write, random size and alignment */
            uint32_t reg = g_rand_int_range(r, 0, 0x1300);
            uint32_t val = g_rand_int(r);

            if (g_rand_boolean(r)) {
                reg &= ~3u;
            }
            if (reg == QGPU_REG_GART_BASE_LO || reg == QGPU_REG_GART_BASE_HI) {
                continue;       /* keep GART writes inside guest RAM */
            }
            if ((reg & ~0x1ff) == 0x1000 && (reg & 0xff) <= 4 &&
                g_rand_boolean(r)) {
                val &= 0x3fff000;     /* plausible ring base */
            }
            switch (g_rand_int_range(r, 0, 8)) {
            case 0:
                qpci_io_writeb(g->dev, g->bar0, reg, val);
                break;
            case 1:
                qpci_io_writew(g->dev, g->bar0, reg, val);
                break;
            case 2:
                qpci_io_writeq(g->dev, g->bar0, reg & ~7u,
                               ((uint64_t)val << 32) | g_rand_int(r));
                break;
            default:
                wr(g, reg & ~3u, val);
                break;
            }
        } else if (what == 3) {
            uint32_t reg = g_rand_int_range(r, 0, 0x10000);

            (void)qpci_io_readl(g->dev, g->bar0, reg & ~3u);
            (void)qpci_io_readb(g->dev, g->bar0, reg);
        } else if (what == 4) {
            /* random DMA buffer */
            for (i = 0; i < 256;) {
                uint32_t op = dops[g_rand_int_range(r, 0, ARRAY_SIZE(dops))];
                uint32_t len = MAX(fuzz_len(r, op, true), 1);
                uint64_t a = fuzz_addr(r, vram);
                uint64_t s = fuzz_size(r);
                int k;

                if (i + len > 256) {
                    break;
                }
                dbuf[i] = QGPU_CMD_HDR(op, g_rand_int_range(r, 0, 4), len);
                for (k = 1; k < len; k++) {
                    switch (g_rand_int_range(r, 0, 6)) {
                    case 0:
                    case 1:
                        dbuf[i + k] = g_rand_int_range(r, 0, 10);  /* slot */
                        break;
                    case 2:
                    case 3:
                        dbuf[i + k] = g_rand_int_range(r, 0, 0x3000) & ~3u;
                        break;
                    case 4:
                        dbuf[i + k] = s;
                        break;
                    default:
                        dbuf[i + k] = g_rand_int(r);
                        break;
                    }
                }
                if (op == QGPU_DMA_BIND && len >= QGPU_DMA_BIND_LEN) {
                    dbuf[i + 2] = a;
                    dbuf[i + 3] = a >> 32;
                    dbuf[i + 4] = g_rand_int_range(r, 0, 8) ?
                                  g_rand_int_range(r, 0, 0x4000) : s;
                    dbuf[i + 5] = g_rand_int_range(r, 0, 8) ? 0 : s >> 32;
                }
                i += len;
            }
            qtest_memwrite(g->qts, DMABUF, dbuf, sizeof(dbuf));
        } else {
            /* random ring commands on a random engine */
            int n = g_rand_int_range(r, 0, 2);
            uint32_t c[8];
            uint32_t op = ops[g_rand_int_range(r, 0, ARRAY_SIZE(ops))];
            uint32_t len = fuzz_len(r, op, false);
            uint64_t a = fuzz_addr(r, vram), b = fuzz_addr(r, vram);
            uint64_t s = fuzz_size(r);
            uint32_t ring_size = erd(g, n, QGPU_ENG_RING_SIZE);

            if (!(erd(g, n, QGPU_ENG_CTRL) & QGPU_ENG_CTRL_ENABLE) ||
                erd(g, n, QGPU_ENG_STATUS) & QGPU_ENG_STATUS_HALTED ||
                g_rand_int_range(r, 0, 20) == 0) {
                wr(g, QGPU_REG_INT_ACK, 0xffffffff);
                qgpu_ring_init(g, n, n ? RING1 : RING0, RING_SIZE);
                ring_size = RING_SIZE;
            }
            g->ring_size[n] = ring_size;
            g->tail[n] = erd(g, n, QGPU_ENG_RING_TAIL);
            c[0] = QGPU_CMD_HDR(op, g_rand_int_range(r, 0, 4), len);
            if (op == QGPU_CMD_EXEC && n == 1 && g_rand_boolean(r)) {
                /* a faulted context skips its EXECs: clear it first */
                uint32_t clr[] = {
                    QGPU_CMD_HDR(QGPU_CMD_CTX_CLEAR, 0,
                                 QGPU_CMD_CTX_CLEAR_LEN),
                    g_rand_int_range(r, 0, 5),
                };
                emit(g, n, clr, ARRAY_SIZE(clr));
            }
            if (op == QGPU_CMD_EXEC) {
                c[1] = g_rand_int_range(r, 0, 5);
                a = g_rand_boolean(r) ? SYS(DMABUF) : a;
                c[2] = a;
                c[3] = a >> 32;
                c[4] = g_rand_int_range(r, 0, 4) ? 0
                                                  : g_rand_int_range(r, 0, 64) * 4;
                c[5] = g_rand_int_range(r, 0, 8) ? 1024
                                                  : (uint32_t)g_rand_int(r);
                c[6] = c[7] = 0;
            } else if (op == QGPU_CMD_CTX_UNBIND) {
                c[1] = g_rand_int_range(r, 0, 5);
                c[2] = g_rand_boolean(r) ? g_rand_int_range(r, 0, 10)
                                         : g_rand_int(r);
                c[3] = g_rand_boolean(r) ? g_rand_int_range(r, 0, 10)
                                         : g_rand_int(r);
                c[4] = c[5] = c[6] = c[7] = 0;
            } else if (op == QGPU_CMD_MAP_APERTURE ||
                       op == QGPU_CMD_UNMAP_APERTURE) {
                c[1] = g_rand_int_range(r, 0, 0x10010);
                c[2] = g_rand_int_range(r, 0, 64);
                c[3] = a;
                c[4] = a >> 32;
                c[5] = c[6] = c[7] = 0;
            } else {
                c[1] = s;
                c[2] = s >> 32;
                c[3] = a;
                c[4] = a >> 32;
                c[5] = b;
                c[6] = b >> 32;
                c[7] = g_rand_int(r);
                if (op == QGPU_CMD_FENCE) {
                    a &= g_rand_boolean(r) ? ~7ull : ~0ull;
                    c[1] = a;
                    c[2] = a >> 32;
                }
            }
            emit(g, n, c, MIN(MAX(len, 1), 8));
            kick(g, n);
            if (g_rand_int_range(r, 0, 4) == 0) {
                qtest_clock_step(g->qts, 1000 * 1000);
            }
        }
        if (g_rand_int_range(r, 0, 10) == 0) {
            /* fault queue and context state */
            int pops = g_rand_int_range(r, 0, 8);

            for (i = 0; i < pops; i++) {
                (void)rd(g, QGPU_REG_FAULT_REASON);
                (void)rd64(g, QGPU_REG_FAULT_ADDR_LO);
                wr(g, QGPU_REG_FAULTQ_POP, g_rand_int_range(r, 0, 8) ? 1 : 3);
            }
            g_assert_cmpuint(rd(g, QGPU_REG_FAULTQ_COUNT), <=,
                             QGPU_FAULTQ_DEPTH);
            wr(g, QGPU_REG_CTX_SEL, g_rand_boolean(r) ? g_rand_int(r)
                                    : (uint32_t)g_rand_int_range(r, 0, 5));
            g_assert_cmpuint(rd(g, QGPU_REG_CTX_STATUS), <=,
                             QGPU_CTX_STATUS_FAULTED);
        }
        if (g_rand_int_range(r, 0, 50) == 0) {
            /* host aperture commands */
            wr(g, QGPU_REG_HAP_INDEX, g_rand_int_range(r, 0, 20));
            wr(g, QGPU_REG_HAP_COUNT, g_rand_int_range(r, 0, 20));
            wr(g, QGPU_REG_HAP_VRAM_PAGE_LO, g_rand_int(r) & 0x3fff);
            wr(g, QGPU_REG_HAP_CMD, g_rand_int_range(r, 1, 3));
            (void)qpci_io_readl(g->dev, g->bar4,
                                g_rand_int_range(r, 0, 16) * 4096);
        }
    }
    g_test_message("fuzz: faults %u (queued %u, lost %u), cmds %" PRIu64
                   "/%" PRIu64 ", cycles %" PRIu64 ", hap faults %u",
                   rd(g, QGPU_REG_FAULT_COUNT),
                   rd(g, QGPU_REG_FAULTQ_COUNT), rd(g, QGPU_REG_FAULTQ_LOST),
                   rd64(g, QGPU_ENGINE_BASE(0) + QGPU_ENG_CMDS_LO),
                   rd64(g, QGPU_ENGINE_BASE(1) + QGPU_ENG_CMDS_LO),
                   rd64(g, QGPU_REG_CYCLES_LO),
                   rd(g, QGPU_REG_HAP_FAULT_COUNT));
    /* still alive: reset and run a fence */
    g_assert_cmphex(rd(g, QGPU_REG_ID), ==, QGPU_ID_MAGIC);
    wr(g, QGPU_REG_RESET, 1);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULTQ_COUNT), ==, 0);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULTQ_LOST), ==, 0);
    qgpu_ring_init(g, 0, RING0, RING_SIZE);
    qgpu_ring_init(g, 1, RING1, RING_SIZE);
    cmd_fence(g, 0, SYS(FENCE_MEM), 0x600d, true);
    cmd_fence(g, 1, SYS(FENCE_MEM + 8), 0x600e, true);
    run(g, 0);
    run(g, 1);
    g_assert_cmphex(qtest_readq(g->qts, FENCE_MEM), ==, 0x600d);
    g_assert_cmphex(qtest_readq(g->qts, FENCE_MEM + 8), ==, 0x600e);
    g_assert_cmphex(rd(g, QGPU_REG_INT_STATUS), ==,
                    QGPU_INT_ENGINE(0) | QGPU_INT_ENGINE(1));
    g_rand_free(r);
    qgpu_stop(g);
}

/* ---- tracing and guest-error logging (docs/hw-spec.md 14.1) ---- */

/* @text has a line matching @re (a whole line, after any trace prefix) */
static void expect_log(const char *text, const char *re)
{
    g_autofree char *line_re = g_strdup_printf("^(\\d+@[\\d.]+:)?%s$", re);

    if (!g_regex_match_simple(line_re, text, G_REGEX_MULTILINE, 0)) {
        g_test_message("no line matches /%s/ in the QEMU log", re);
        g_test_message("%s", text);
        g_test_fail();
    }
}

/*
 * QEMU run with -trace 'qgpu_*' -d guest_errors: a ring command on each
 * engine, a TRANSFER, a GART and an aperture mapping, DMA-buffer commands
 * ending in a bad opcode, an unknown register read and a device reset each
 * leave their event or guest-error line in the log.
 */
static void test_trace(void)
{
    g_autofree char *path = NULL;
    g_autofree char *args = NULL;
    g_autofree char *text = NULL;
    DmaBuf *b = g_new0(DmaBuf, 1);
    QGPU *g;
    int fd;

    fd = g_file_open_tmp("qgpu-trace-XXXXXX.log", &path, NULL);
    g_assert_cmpint(fd, >=, 0);
    close(fd);
    args = g_strdup_printf("-trace 'qgpu_*' -d guest_errors -D %s", path);
    g = qgpu_start_args("q35", NULL, args);

    cmd_fence(g, 0, SYS(FENCE_MEM), 0x1234, true);
    run(g, 0);
    wr(g, QGPU_REG_INT_ACK, QGPU_INT_ENGINE(0));
    cmd_transfer(g, 0x2000, SYS(SYSBUF), 0x3000, 0);
    run(g, 0);

    qtest_memset(g->qts, GART_TABLE, 0, 16 * 8);
    wr(g, QGPU_REG_GART_BASE_LO, GART_TABLE);
    wr(g, QGPU_REG_GART_CTRL, QGPU_GART_CTRL_ENABLE);
    qtest_writeq(g->qts, PAGELIST, GART_PAGES_MEM);
    cmd_map_ap(g, 5, 1, SYS(PAGELIST));
    run(g, 0);

    wr(g, QGPU_REG_HAP_INDEX, 2);
    wr(g, QGPU_REG_HAP_COUNT, 3);
    wr(g, QGPU_REG_HAP_VRAM_PAGE_LO, 0x40);
    wr(g, QGPU_REG_HAP_CMD, QGPU_HAP_CMD_MAP);

    dma_bind(b, 0, 0x100000, 0x1000);
    dma(b, QGPU_DMA_FENCE, 0, 4, 0, 8, 7, 0);
    dma(b, 0x7f, 0, 0);
    dma_put(g, DMABUF, b);
    cmd_exec(g, 3, SYS(DMABUF), 0, b->n * 4);
    run(g, 1);
    expect_fault(g, 1, QGPU_FAULT_BAD_OPCODE, 1);

    /* GPU MMU: UPDATE_PT, a walk, a flush, a fault, CTX_SET_VM */
    {
        PT p;

        pt_init(&p, g, false, PT_VRAM);
        pt_map(&p, 0x1000, 0x5000 | PTE_RW);
        set_paging_root(g, p.root);
        qtest_writeq(g->qts, PAGELIST, 0);
        cmd_update_pt(g, 0x6000, 1, SYS(PAGELIST), 0);
        cmd_vfill(g, 4, 0x1000, 0x77);
        cmd_vtransfer(g, 4, 0x1000, 0x1000);
        cmd_flush_tlb(g, p.root, 0);
        run(g, 0);
        set_paging_root(g, 0);
        cmd_vfill(g, 4, 0x1000, 0x77);
        run(g, 0);
        expect_fault(g, 0, QGPU_FAULT_PAGE_NOT_PRESENT, 2);
        cmd_ctx_set_vm(g, 1, 3, p.root);
        run(g, 1);
    }

    g_assert_cmphex(rd(g, 0xffc), ==, 0);
    wr(g, QGPU_REG_RESET, 1);
    qgpu_stop(g);
    g_free(b);

    g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
    unlink(path);
    expect_log(text, "qgpu_ring_cmd engine 0 op 0x01 offset 0x0");
    expect_log(text, "qgpu_fence engine 0 \\[0x8000000000180000\\] = "
               "0x1234 irq 1");
    expect_log(text, "qgpu_irq_raise raise 0x1 status 0x1");
    expect_log(text, "qgpu_reg_write reg 0x0048 <- 0x00000001");
    expect_log(text, "qgpu_irq_ack ack 0x1 status 0x0");
    expect_log(text, "qgpu_ring_cmd engine 0 op 0x10 offset 0x14");
    expect_log(text, "qgpu_transfer engine 0 bytes 0x2000 "
               "src 0x8000000000200000 dst 0x3000 flags 0x0");
    expect_log(text, "qgpu_gart_map GART pages 5\\+1 from list "
               "0x8000000000190000");
    expect_log(text, "qgpu_hap_map aperture pages 2\\+3 -> VRAM page 0x40");
    expect_log(text, "qgpu_ring_cmd engine 1 op 0x20 offset 0x0");
    expect_log(text, "qgpu_exec ctx 3 buf 0x8000000000400000 "
               "\\[0x0, 0x30\\)");
    expect_log(text, "qgpu_dma_cmd ctx 3 op 0x40 offset 0x0");
    expect_log(text, "qgpu_context_bind ctx 3 slot 0 addr 0x100000 "
               "size 0x1000");
    expect_log(text, "qgpu_dma_cmd ctx 3 op 0x46 offset 0x18");
    expect_log(text, "qgpu_fence engine 1 \\[0x100008\\] = 0x7 irq 0");
    expect_log(text, "qgpu_dma_cmd ctx 3 op 0x7f offset 0x2c");
    expect_log(text, "qgpu_fault reason 1 engine 0x1 ctx 0x3 addr 0x1007f "
               "offset 0x2c");
    expect_log(text, "qgpu: fault bad-opcode: engine 0x1 context 0x3 "
               "addr 0x1007f offset 0x2c");
    expect_log(text, "qgpu_context_faulted ctx 3 .*");
    expect_log(text, "qgpu_update_pt 1 entries to 0x6000 from "
               "0x8000000000190000 flags 0x0");
    expect_log(text, "qgpu_vfill engine 0 bytes 0x4 dst va 0x1000 "
               "pattern 0x00000077 root 0x3000001");
    expect_log(text, "qgpu_mmu_walk engine 0 TLB miss: root 0x3000001 "
               "va 0x1000 -> page 0x5000 size 0x1000 system 0 read-only 0");
    expect_log(text, "qgpu_vtransfer engine 0 bytes 0x4 src va 0x1000 "
               "dst va 0x1000 root 0x3000001");
    expect_log(text, "qgpu_tlb_flush root 0x3000001 all 0: "
               "1 entries invalidated");
    expect_log(text, "qgpu_mmu_fault engine 0 reason 14 root 0x0 va 0x1000 "
               "info 0x33");
    expect_log(text, "qgpu_fault_vm info 0x33 vm 0x0");
    expect_log(text, "qgpu: fault page-not-present: virtual, write, "
               "level 3, root 0x0");
    expect_log(text, "qgpu_context_set_vm ctx 3 root 0x3000001");
    expect_log(text, "qgpu: read of unknown or write-only register 0xffc "
               "reads 0");
    expect_log(text, "qgpu_reset device reset");
    expect_log(text, "qgpu_engine_reset engine 1 ring reset");
}

/* Hot-plug and unplug (realize, unrealize, finalize paths) */
static void test_hotplug(void)
{
    g_autofree char *bios = qgpu_bios_dir();
    QTestState *qts = qtest_initf("%s -machine pc -nodefaults -m 128M", bios);
    int i;

    for (i = 0; i < 2; i++) {
        qtest_qmp_device_add(qts, "qgpu", "gpu1",
                             "{'addr': '0x06', 'vram-size': '8M', "
                             "'host-aperture-size': '64K'}");
        if (i == 1) {
            /* unplug while busy: aperture mapped, engine blocked in WAIT */
            QGPU g = { .qts = qts };
            DmaBuf *b = g_new0(DmaBuf, 1);

            g.bus = qpci_new_pc(qts, NULL);
            g.dev = qpci_device_find(g.bus, QPCI_DEVFN(6, 0));
            g_assert(g.dev);
            qpci_device_enable(g.dev);
            g.bar0 = qpci_iomap(g.dev, QGPU_BAR_MMIO, NULL);
            g.bar2 = qpci_iomap(g.dev, QGPU_BAR_VRAM, NULL);
            g.bar4 = qpci_iomap(g.dev, QGPU_BAR_HAP, NULL);
            qgpu_ring_init(&g, 1, RING1, RING_SIZE);
            wr(&g, QGPU_REG_HAP_COUNT, 4);
            wr(&g, QGPU_REG_HAP_CMD, QGPU_HAP_CMD_MAP);
            g_assert_cmpuint(rd(&g, QGPU_REG_HAP_MAPPED), ==, 4);
            vram_wr(&g, 0, 0);
            dma_bind(b, 0, 0, 0x1000);
            dma(b, QGPU_DMA_WAIT, 0, 4, 0, 0, 1, 0);
            dma_put(&g, DMABUF, b);
            cmd_exec(&g, 0, SYS(DMABUF), 0, b->n * 4);
            kick(&g, 1);
            qtest_clock_step(qts, 1000 * 1000);
            g_assert_cmphex(erd(&g, 1, QGPU_ENG_STATUS), ==,
                            QGPU_ENG_STATUS_BUSY);
            g_free(b);
            g_free(g.dev);
            qpci_free_pc(g.bus);
        }
        qpci_unplug_acpi_device_test(qts, "gpu1", 0x06);
        qtest_clock_step(qts, 5 * 1000 * 1000);
    }
    qtest_quit(qts);
}

/* ---- the device thread: work in flight ---- */

/*
 * Queue 1 GiB of VRAM fills (4 x 256 MiB; the first touch of VRAM alone
 * takes the host a good part of a second) and a fence; true when the
 * engine is still busy with them after the doorbell and a register read
 */
static bool thread_start_fills(QGPU *g)
{
    int i;

    qtest_writeq(g->qts, FENCE_MEM, 0);
    for (i = 0; i < 4; i++) {
        cmd_fill(g, 256 * MiB, 0, 0x11111111u * (i + 1), 0);
    }
    cmd_fence(g, 0, SYS(FENCE_MEM), 1, false);
    kick(g, 0);
    /* registers answer and tell the truth while the thread works */
    g_assert_cmphex(rd(g, QGPU_REG_ID), ==, QGPU_ID_MAGIC);
    return erd(g, 0, QGPU_ENG_STATUS) == QGPU_ENG_STATUS_BUSY;
}

/* Nothing of the abandoned fills lands later or is counted later */
static void thread_check_abandoned(QGPU *g)
{
    uint64_t bytes = rd64(g, QGPU_ENGINE_BASE(0) + QGPU_ENG_BYTES_LO);
    uint64_t cycles = rd64(g, QGPU_REG_CYCLES_LO);

    vram_wr(g, 0, 0xdeadbeef);
    vram_wr(g, 4 * MiB + 4, 0xdeadbeef);
    vram_wr(g, 64 * MiB - 4, 0xdeadbeef);
    g_usleep(100 * 1000);
    g_assert_cmphex(vram_rd(g, 0), ==, 0xdeadbeef);
    g_assert_cmphex(vram_rd(g, 4 * MiB + 4), ==, 0xdeadbeef);
    g_assert_cmphex(vram_rd(g, 64 * MiB - 4), ==, 0xdeadbeef);
    g_assert_cmpuint(rd64(g, QGPU_ENGINE_BASE(0) + QGPU_ENG_BYTES_LO), ==,
                     bytes);
    g_assert_cmpuint(rd64(g, QGPU_REG_CYCLES_LO), ==, cycles);
    g_assert_cmpuint(bytes % 4096, ==, 0);
    g_assert_cmpuint(bytes, <, 1 * GiB);
    g_assert_cmpuint(qtest_readq(g->qts, FENCE_MEM), ==, 0);
}

/* The engine still works: a small fill and a fence */
static void thread_check_usable(QGPU *g)
{
    vram_wr(g, 12288, 0x600d);
    cmd_fill(g, 8192, 4096, 0x5a5a5a5a, 0);
    cmd_fence(g, 0, SYS(FENCE_MEM), 2, false);
    run(g, 0);
    g_assert_cmpuint(qtest_readq(g->qts, FENCE_MEM), ==, 2);
    g_assert_cmphex(vram_rd(g, 4096), ==, 0x5a5a5a5a);
    g_assert_cmphex(vram_rd(g, 12284), ==, 0x5a5a5a5a);
    g_assert_cmphex(vram_rd(g, 12288), ==, 0x600d);
}

static void test_thread_in_flight(void)
{
    QGPU *g = qgpu_start("vram-size=256M,visible-vram-size=64M");
    uint32_t head;

    /* CTRL.RESET in the middle of a fill */
    g_assert_true(thread_start_fills(g));
    engine_reset(g, 0);
    thread_check_abandoned(g);
    thread_check_usable(g);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, 0);

    /* disable: HEAD stays at the fill, for inspection */
    engine_reset(g, 0);
    g_assert_true(thread_start_fills(g));
    ewr(g, 0, QGPU_ENG_CTRL, 0);
    head = erd(g, 0, QGPU_ENG_RING_HEAD);
    g_assert_cmpuint(head % (QGPU_CMD_FILL_LEN * 4), ==, 0);
    g_assert_cmpuint(head, <, 4 * QGPU_CMD_FILL_LEN * 4);
    g_assert_cmphex(erd(g, 0, QGPU_ENG_STATUS), ==, 0);
    thread_check_abandoned(g);
    ewr(g, 0, QGPU_ENG_CTRL, QGPU_ENG_CTRL_ENABLE);
    g->tail[0] = 0;
    thread_check_usable(g);

    /* device RESET: the rings are gone; set them up again */
    g_assert_true(thread_start_fills(g));
    wr(g, QGPU_REG_RESET, 1);
    g_assert_cmphex(erd(g, 0, QGPU_ENG_STATUS), ==, 0);
    g_assert_cmphex(erd(g, 0, QGPU_ENG_CTRL), ==, 0);
    thread_check_abandoned(g);
    qgpu_ring_init(g, 0, RING0, RING_SIZE);
    thread_check_usable(g);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, 0);
    qgpu_stop(g);
}

/* Unplug while the thread fills VRAM: no hang, no crash; plug in again */
static void test_thread_unplug(void)
{
    g_autofree char *bios = qgpu_bios_dir();
    QTestState *qts = qtest_initf("%s -machine pc -nodefaults -m 128M", bios);
    int i;

    for (i = 0; i < 3; i++) {
        QGPU g = { .qts = qts };

        qtest_qmp_device_add(qts, "qgpu", "gpu1",
                             "{'addr': '0x06', 'vram-size': '256M', "
                             "'visible-vram-size': '64M'}");
        g.bus = qpci_new_pc(qts, NULL);
        g.dev = qpci_device_find(g.bus, QPCI_DEVFN(6, 0));
        g_assert(g.dev);
        qpci_device_enable(g.dev);
        g.bar0 = qpci_iomap(g.dev, QGPU_BAR_MMIO, NULL);
        g.bar2 = qpci_iomap(g.dev, QGPU_BAR_VRAM, NULL);
        qgpu_ring_init(&g, 0, RING0, RING_SIZE);
        if (i < 2) {
            g_assert_true(thread_start_fills(&g));
        } else {
            thread_check_usable(&g);
        }
        g_free(g.dev);
        qpci_free_pc(g.bus);
        qpci_unplug_acpi_device_test(qts, "gpu1", 0x06);
        qtest_clock_step(qts, 5 * 1000 * 1000);
    }
    qtest_quit(qts);
}

/* ---- adversarial audit: the memory map changing mid-copy ---- */

/*
 * The source side of a copy as a page list of VRAM pages that are never
 * consecutive (page i ^ 1), so that every piece is one page and the device
 * thread moves them in batches, dropping the BQL for each: @pages entries
 * at guest address @list.
 */
static void scattered_list(QGPU *g, uint64_t list, uint32_t pages)
{
    g_autofree uint64_t *ent = g_new(uint64_t, pages);
    uint32_t i;

    for (i = 0; i < pages; i++) {
        ent[i] = cpu_to_le64((uint64_t)(i ^ 1) << 12);
    }
    qtest_memwrite(g->qts, list, ent, pages * 8ull);
}

/* Wait until engine @n has moved more than @bytes (bounded) */
static void wait_bytes(QGPU *g, int n, uint64_t bytes)
{
    int i;

    for (i = 0; i < 100000; i++) {
        if (rd(g, QGPU_ENGINE_BASE(n) + QGPU_ENG_BYTES_LO) > bytes) {
            return;
        }
        g_usleep(20);
    }
    g_test_message("bytes 0x%x status 0x%x faults %u reason %u addr 0x%x",
                   rd(g, QGPU_ENGINE_BASE(n) + QGPU_ENG_BYTES_LO),
                   erd(g, n, QGPU_ENG_STATUS), rd(g, QGPU_REG_FAULT_COUNT),
                   rd(g, QGPU_REG_FAULT_REASON), rd(g, QGPU_REG_FAULT_ADDR_LO));
    g_assert_not_reached();
}

/* Is [addr, addr + len) of guest memory all zero? */
static bool mem_zero(QGPU *g, uint64_t addr, size_t len)
{
    g_autofree uint8_t *buf = g_malloc(len);
    size_t i;

    qtest_bufread(g->qts, addr, buf, len);
    for (i = 0; i < len; i++) {
        if (buf[i]) {
            g_test_message("byte 0x%zx of 0x%" PRIx64 " is 0x%02x", i, addr,
                           buf[i]);
            return false;
        }
    }
    return true;
}

/*
 * hw-spec 7: a HAP_CMD takes effect before its register write completes.
 * The paging engine copies VRAM (a page list of single pages) into the
 * host aperture by DMA, many times over; meanwhile the aperture is mapped
 * onto other VRAM. Once the HAP_CMD write has completed, the old VRAM
 * behind the aperture is zeroed through BAR2: nothing of the copies may
 * land there afterwards, neither a piece that was in flight without the
 * BQL nor a later piece translated through a RAM cache made before the
 * mapping changed.
 */
static void test_hap_remap_during_transfer(void)
{
    QGPU *g = qgpu_start("vram-size=64M,host-aperture-size=16M");
    const uint64_t old_vram = 32 * MiB, new_vram = 48 * MiB;
    const uint32_t pages = 1024, copies = 48;
    uint32_t i;

    g_assert_cmpuint(g->bar4_size, ==, 16 * MiB);
    cmd_fill(g, 4 * MiB, 0, 0xa5a5a5a5, 0);
    run(g, 0);
    scattered_list(g, SYSBUF, pages);
    wr(g, QGPU_REG_HAP_INDEX, 0);
    wr(g, QGPU_REG_HAP_COUNT, pages);
    wr(g, QGPU_REG_HAP_VRAM_PAGE_LO, old_vram >> 12);
    wr(g, QGPU_REG_HAP_CMD, QGPU_HAP_CMD_MAP);
    g_assert_cmpuint(rd(g, QGPU_REG_HAP_MAPPED), ==, pages);

    for (i = 0; i < copies; i++) {
        cmd_transfer(g, 4 * MiB, SYS(SYSBUF), SYS(g->bar4.addr),
                     QGPU_XFER_SRC_PAGELIST);
    }
    kick(g, 0);
    wait_bytes(g, 0, 4 * MiB + 12 * MiB);
    wr(g, QGPU_REG_HAP_VRAM_PAGE_LO, new_vram >> 12);
    wr(g, QGPU_REG_HAP_CMD, QGPU_HAP_CMD_MAP);
    qtest_memset(g->qts, g->bar2.addr + old_vram, 0, 4 * MiB);
    /* the remap must have come while the copies ran */
    g_assert_cmpuint(erd(g, 0, QGPU_ENG_STATUS) & QGPU_ENG_STATUS_BUSY, ==,
                     QGPU_ENG_STATUS_BUSY);
    wait_idle(g, 0);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, 0);
    g_assert_true(mem_zero(g, g->bar2.addr + old_vram, 4 * MiB));
    /* the last copy went through the new mapping */
    g_assert_cmphex(vram_rd(g, new_vram + 4 * MiB - 4), ==, 0xa5a5a5a5);
    qgpu_stop(g);
}

/*
 * hw-spec 2: without Bus Master Enable every DMA fails. The paging engine
 * copies VRAM (single pages) into guest RAM; meanwhile the guest clears
 * Bus Master Enable and then zeroes the destination: nothing may land
 * there afterwards (no piece in flight, no piece written through a RAM
 * cache made while bus mastering was on), and the copy faults DMA_ERROR.
 */
static void test_thread_bus_master_off(void)
{
    QGPU *g = qgpu_start("vram-size=64M");
    const uint32_t pages = 1024, copies = 48;
    uint16_t cmd;
    uint32_t i;

    cmd_fill(g, 4 * MiB, 0, 0x5a5a5a5a, 0);
    run(g, 0);
    scattered_list(g, SYSBUF, pages);
    for (i = 0; i < copies; i++) {
        cmd_transfer(g, 4 * MiB, SYS(SYSBUF), SYS(BIGBUF),
                     QGPU_XFER_SRC_PAGELIST);
    }
    kick(g, 0);
    wait_bytes(g, 0, 4 * MiB + 12 * MiB);
    cmd = qpci_config_readw(g->dev, PCI_COMMAND);
    qpci_config_writew(g->dev, PCI_COMMAND, cmd & ~PCI_COMMAND_MASTER);
    qtest_memset(g->qts, BIGBUF, 0, 4 * MiB);
    wait_idle(g, 0);
    g_assert_true(mem_zero(g, BIGBUF, 4 * MiB));
    /* the copy in progress faulted on its next piece and halted the ring */
    g_assert_cmpuint(erd(g, 0, QGPU_ENG_STATUS), ==, QGPU_ENG_STATUS_HALTED);
    fault_latest(g);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_REASON), ==, QGPU_FAULT_DMA_ERROR);
    qgpu_stop(g);
}

/* ---- adversarial audit: registers, aperture, page tables, INTx ---- */

/* One access of @size bytes to BAR0 at @off: a read, or a write of ~0 */
static void bar0_access(QGPU *g, uint32_t off, unsigned size, bool write)
{
    switch (size) {
    case 1:
        if (write) {
            qpci_io_writeb(g->dev, g->bar0, off, 0xff);
        } else {
            g_assert_cmpuint(qpci_io_readb(g->dev, g->bar0, off), ==, 0);
        }
        break;
    case 2:
        if (write) {
            qpci_io_writew(g->dev, g->bar0, off, 0xffff);
        } else {
            g_assert_cmpuint(qpci_io_readw(g->dev, g->bar0, off), ==, 0);
        }
        break;
    case 4:
        if (write) {
            qpci_io_writel(g->dev, g->bar0, off, 0xffffffff);
        } else {
            g_assert_cmpuint(qpci_io_readl(g->dev, g->bar0, off), ==, 0);
        }
        break;
    default:
        if (write) {
            qpci_io_writeq(g->dev, g->bar0, off, ~0ull);
        } else {
            g_assert_cmpuint(qpci_io_readq(g->dev, g->bar0, off), ==, 0);
        }
        break;
    }
}

/* Is @off (a BAR0 offset) a register a 32-bit write may change? */
static bool reg_writable(uint32_t off)
{
    static const uint32_t regs[] = {
        QGPU_REG_SCRATCH, QGPU_REG_INT_MASK, QGPU_REG_INT_ACK,
        QGPU_REG_RESET, QGPU_REG_FAULTQ_POP, QGPU_REG_GART_BASE_LO,
        QGPU_REG_GART_BASE_HI, QGPU_REG_GART_CTRL, QGPU_REG_HAP_INDEX,
        QGPU_REG_HAP_COUNT, QGPU_REG_HAP_VRAM_PAGE_LO,
        QGPU_REG_HAP_VRAM_PAGE_HI, QGPU_REG_HAP_CMD, QGPU_REG_CTX_SEL,
        QGPU_REG_PING, QGPU_REG_MMU_PAGING_ROOT_LO,
        QGPU_REG_MMU_PAGING_ROOT_HI,
    };
    static const uint32_t eregs[] = {
        QGPU_ENG_RING_BASE_LO, QGPU_ENG_RING_BASE_HI, QGPU_ENG_RING_SIZE,
        QGPU_ENG_RING_TAIL, QGPU_ENG_CTRL,
    };
    unsigned i, n;

    for (i = 0; i < ARRAY_SIZE(regs); i++) {
        if (off == regs[i]) {
            return true;
        }
    }
    for (n = 0; n < QGPU_NUM_ENGINES; n++) {
        for (i = 0; i < ARRAY_SIZE(eregs); i++) {
            if (off == QGPU_ENGINE_BASE(n) + eregs[i]) {
                return true;
            }
        }
    }
    return false;
}

/*
 * hw-spec 4: every offset of BAR0 with every access width. A 32-bit
 * aligned read is never a fault; any other width or an unaligned access
 * reads 0, changes nothing and is one BAD_REGISTER (FAULT_ADDR the
 * offset, FAULT_OFFSET the size); a 32-bit write of ~0 to any offset that
 * is not a writable register is one BAD_REGISTER and changes nothing; the
 * accesses that run past the end of the BAR are served too.
 */
static void test_regs_every_offset(void)
{
    QGPU *g = qgpu_start("host-aperture-size=64K");
    static const unsigned sizes[] = { 1, 2, 4, 8 };
    uint32_t faults = 0, off;
    unsigned i, w;

    wr(g, QGPU_REG_SCRATCH, 0x5a5a5a5a);
    for (off = 0; off < QGPU_MMIO_SIZE; off += 4) {
        rd(g, off);
    }
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, 0);

    for (w = 0; w < 2; w++) {
        for (off = 0; off < QGPU_MMIO_SIZE - 8; off++) {
            bool block = off < 0x200 || (off >= 0x1000 && off < 0x1200) ||
                         off >= QGPU_MMIO_SIZE - 0x40;

            if (!block && (off & 0x3f)) {
                continue;
            }
            for (i = 0; i < ARRAY_SIZE(sizes); i++) {
                if (sizes[i] == 4 && !(off & 3)) {
                    continue;
                }
                bar0_access(g, off, sizes[i], w);
                faults++;
            }
        }
        g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, faults);
        /* the queue kept the first 64; the next one is queued alone */
        g_assert_cmpuint(rd(g, QGPU_REG_FAULTQ_COUNT), ==, QGPU_FAULTQ_DEPTH);
        for (i = 0; i < QGPU_FAULTQ_DEPTH; i++) {
            fault_pop(g);
        }
        bar0_access(g, 0x3e, 2, w);
        faults++;
        g_assert_cmpuint(rd(g, QGPU_REG_FAULTQ_COUNT), ==, 1);
        g_assert_cmpuint(rd(g, QGPU_REG_FAULT_REASON), ==,
                         QGPU_FAULT_BAD_REGISTER);
        g_assert_cmpuint(rd(g, QGPU_REG_FAULT_ENGINE), ==,
                         QGPU_FAULT_ENGINE_MMIO);
        g_assert_cmphex(rd64(g, QGPU_REG_FAULT_ADDR_LO), ==, 0x3e);
        g_assert_cmpuint(rd(g, QGPU_REG_FAULT_OFFSET), ==, 2);
        fault_pop(g);
        g_assert_cmphex(rd(g, QGPU_REG_SCRATCH), ==, 0x5a5a5a5a);
        g_assert_cmphex(erd(g, 0, QGPU_ENG_CTRL), ==, QGPU_ENG_CTRL_ENABLE);
    }

    /* 32-bit writes of ~0 everywhere but the writable registers */
    for (off = 0; off < QGPU_MMIO_SIZE; off += 4) {
        if (!reg_writable(off)) {
            wr(g, off, 0xffffffff);
            faults++;
        }
    }
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, faults);
    g_assert_cmphex(rd(g, QGPU_REG_ID), ==, QGPU_ID_MAGIC);
    g_assert_cmphex(rd(g, QGPU_REG_SCRATCH), ==, 0x5a5a5a5a);
    g_assert_cmpuint(rd64(g, QGPU_REG_VRAM_SIZE_LO), ==, 64 * MiB);
    g_assert_cmpuint(rd(g, QGPU_REG_HAP_MAPPED), ==, 0);
    g_assert_cmphex(erd(g, 0, QGPU_ENG_CTRL), ==, QGPU_ENG_CTRL_ENABLE);
    g_assert_cmphex(erd(g, 1, QGPU_ENG_CTRL), ==, QGPU_ENG_CTRL_ENABLE);

    /* accesses that run past the end of BAR0: served, the device lives */
    for (off = QGPU_MMIO_SIZE - 7; off < QGPU_MMIO_SIZE; off++) {
        for (i = 0; i < ARRAY_SIZE(sizes); i++) {
            bar0_access(g, off, sizes[i], false);
            bar0_access(g, off, sizes[i], true);
        }
    }
    g_assert_cmphex(rd(g, QGPU_REG_SCRATCH), ==, 0x5a5a5a5a);
    /* and the engines still work */
    wr(g, QGPU_REG_INT_ACK, QGPU_INT_ALL);
    qtest_writeq(g->qts, FENCE_MEM, 0);
    cmd_fence(g, 0, SYS(FENCE_MEM), 77, false);
    run(g, 0);
    g_assert_cmpuint(qtest_readq(g->qts, FENCE_MEM), ==, 77);
    qgpu_stop(g);
}

static void hap_cmd(QGPU *g, uint32_t cmd, uint32_t index, uint32_t count,
                    uint64_t vram_page)
{
    wr(g, QGPU_REG_HAP_INDEX, index);
    wr(g, QGPU_REG_HAP_COUNT, count);
    wr(g, QGPU_REG_HAP_VRAM_PAGE_LO, vram_page);
    wr(g, QGPU_REG_HAP_VRAM_PAGE_HI, vram_page >> 32);
    wr(g, QGPU_REG_HAP_CMD, cmd);
}

/* Aperture pages 2i map VRAM pages 1000 + 3i: @n runs, none consecutive */
static void hap_map_scattered(QGPU *g, uint32_t n)
{
    uint32_t i;

    for (i = 0; i < n; i++) {
        hap_cmd(g, QGPU_HAP_CMD_MAP, 2 * i, 1, 1000 + 3 * i);
    }
}

static void hap_check_scattered(QGPU *g, uint32_t n)
{
    uint32_t i;

    for (i = 0; i < n; i++) {
        g_assert_cmphex(qpci_io_readl(g->dev, g->bar4, 2 * i * 4096ull + 8),
                        ==, 0xc0de0000 + i);
    }
}

/*
 * hw-spec 7 and 11: more runs than the 256 the device serves at memory
 * speed, mapped twice over (every run rebuilt), a device reset while they
 * are mapped, then mapped again; a VRAM page discarded while the aperture
 * maps it; BAR4 moved while mapped. Each time the aperture shows exactly
 * the mapping, and unmapped pages read 0.
 */
static void test_hap_runs_reset_remap(void)
{
    QGPU *g = qgpu_start("vram-size=64M,host-aperture-size=4M");
    const uint32_t n = 400;
    uint32_t i, hf, cmd;
    uint64_t moved = 0xd0000000ull;

    for (i = 0; i < n; i++) {
        vram_wr(g, (1000 + 3 * i) * 4096ull + 8, 0xc0de0000 + i);
    }
    hap_map_scattered(g, n);
    hap_map_scattered(g, n);
    g_assert_cmpuint(rd(g, QGPU_REG_HAP_MAPPED), ==, n);
    hap_check_scattered(g, n);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, 0);

    wr(g, QGPU_REG_RESET, 1);
    g_assert_cmpuint(rd(g, QGPU_REG_HAP_MAPPED), ==, 0);
    hf = rd(g, QGPU_REG_HAP_FAULT_COUNT);
    for (i = 0; i < n; i += 37) {
        g_assert_cmphex(qpci_io_readl(g->dev, g->bar4, 2 * i * 4096ull + 8),
                        ==, 0);
    }
    g_assert_cmpuint(rd(g, QGPU_REG_HAP_FAULT_COUNT), ==, hf + 11);

    qgpu_ring_init(g, 0, RING0, RING_SIZE);
    hap_map_scattered(g, n);
    hap_check_scattered(g, n);

    /* VRAM page 1000 discarded under aperture page 0: reads 0, writable */
    cmd_discard(g, 4096, 1000 * 4096ull);
    run(g, 0);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, 0);
    g_assert_cmphex(qpci_io_readl(g->dev, g->bar4, 8), ==, 0);
    qpci_io_writel(g->dev, g->bar4, 8, 0xfeedf00d);
    g_assert_cmphex(vram_rd(g, 1000 * 4096ull + 8), ==, 0xfeedf00d);
    qpci_io_writel(g->dev, g->bar4, 8, 0xc0de0000);

    /* BAR4 moved while mapped, then mapped anew */
    cmd = qpci_config_readw(g->dev, PCI_COMMAND);
    qpci_config_writew(g->dev, PCI_COMMAND, cmd & ~PCI_COMMAND_MEMORY);
    qpci_config_writel(g->dev, PCI_BASE_ADDRESS_4,
                       moved | PCI_BASE_ADDRESS_MEM_TYPE_64 |
                       PCI_BASE_ADDRESS_MEM_PREFETCH);
    qpci_config_writel(g->dev, PCI_BASE_ADDRESS_5, 0);
    qpci_config_writew(g->dev, PCI_COMMAND, cmd);
    for (i = 0; i < n; i += 7) {
        g_assert_cmphex(qtest_readl(g->qts, moved + 2 * i * 4096ull + 8), ==,
                        0xc0de0000 + i);
    }
    hap_cmd(g, QGPU_HAP_CMD_UNMAP, 0, 1024, 0);
    g_assert_cmpuint(rd(g, QGPU_REG_HAP_MAPPED), ==, 0);
    g_assert_cmphex(qtest_readl(g->qts, moved + 8), ==, 0);
    hap_cmd(g, QGPU_HAP_CMD_MAP, 1023, 1, 1000);
    g_assert_cmphex(qtest_readl(g->qts, moved + 1023 * 4096ull + 8), ==,
                    0xc0de0000);
    /* an 8-byte access across the aperture's last page and its end */
    g_assert_cmphex(qtest_readl(g->qts, moved + 4 * MiB - 4), ==, 0);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, 0);
    qgpu_stop(g);
}

/*
 * hw-spec 7: bytes past the end of BAR4 belong to no aperture page. An
 * 8-byte access that starts in the last page and runs past the end reads
 * and writes that page's bytes; whether the page is one of the 256 runs
 * (a RAM alias) or served by the emulated path (a 257th run), it counts
 * HAP_FAULT_COUNT only when the page itself is unmapped.
 */
static void test_hap_end(void)
{
    QGPU *g = qgpu_start("host-aperture-size=4M");
    const uint64_t end = g->bar4.addr + 4 * MiB, last = 1023;
    uint32_t i, hf;

    g_assert_cmpuint(g->bar4_size, ==, 4 * MiB);
    vram_wr(g, 0x100ff8, 0x0badcafe);
    vram_wr(g, 0x100ffc, 0x12345678);
    for (i = 0; i < 2; i++) {
        /* first the last page as the only run, then as the 257th */
        hap_cmd(g, QGPU_HAP_CMD_MAP, last, 1, 0x100);
        if (i) {
            hap_map_scattered(g, 256);
        }
        g_assert_cmpuint(rd(g, QGPU_REG_HAP_MAPPED), ==, 1 + 256 * i);
        hf = rd(g, QGPU_REG_HAP_FAULT_COUNT);
        g_assert_cmphex(qtest_readq(g->qts, end - 8), ==,
                        0x123456780badcafeull);
        g_assert_cmphex((uint32_t)qtest_readq(g->qts, end - 4), ==,
                        0x12345678);
        qtest_writeq(g->qts, end - 2, 0xffffffffffff5aa5ull);
        g_assert_cmphex(vram_rd(g, 0x100ffc), ==, 0x5aa55678);
        g_assert_cmpuint(rd(g, QGPU_REG_HAP_FAULT_COUNT), ==, hf);
        vram_wr(g, 0x100ffc, 0x12345678);
        /* unmapped, the same accesses count once each */
        hap_cmd(g, QGPU_HAP_CMD_UNMAP, last, 1, 0);
        g_assert_cmphex((uint32_t)qtest_readq(g->qts, end - 4), ==, 0);
        qtest_writeq(g->qts, end - 2, 0xffffffffffff5aa5ull);
        g_assert_cmpuint(rd(g, QGPU_REG_HAP_FAULT_COUNT), ==, hf + 2);
        g_assert_cmphex(vram_rd(g, 0x100ffc), ==, 0x12345678);
    }
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, 0);
    qgpu_stop(g);
}

/* The 64-bit word at VRAM offset @off, by the paging engine (any VRAM) */
static void vram_wq_dev(QGPU *g, uint64_t off, uint64_t v)
{
    qtest_writeq(g->qts, SYSBUF2, v);
    cmd_transfer(g, 8, SYS(SYSBUF2), off, 0);
    run(g, 0);
}

static uint64_t vram_rq_dev(QGPU *g, uint64_t off)
{
    qtest_writeq(g->qts, SYSBUF2, 0);
    cmd_transfer(g, 8, off, SYS(SYSBUF2), 0);
    run(g, 0);
    return qtest_readq(g->qts, SYSBUF2);
}

/* FILL_VIRTUAL of @len bytes at @va through the paging root; run it */
static void vfill_run(QGPU *g, uint64_t va, uint64_t len, uint32_t pattern)
{
    cmd_vfill(g, len, va, pattern);
    run(g, 0);
}

/*
 * hw-spec 15.4: hostile page tables. A root whose entry 0 points at the
 * root itself is its own level-1 and leaf table and maps itself at VA 0
 * (4 KiB, then as a 64 KiB page): the walk has a fixed depth, so writes
 * through it rewrite the table and nothing loops. Tables and pages at the
 * edge of a VRAM that is not a multiple of 64 KiB, a 64 KiB page running
 * past its end, tables at the top of guest-physical memory and beyond:
 * each is the fault of section 15.7, and nothing outside VRAM is touched.
 */
static void test_mmu_hostile_tables(void)
{
    /* 1 MiB + 32 KiB of VRAM: the last 64 KiB group is cut short */
    QGPU *g = qgpu_start("vram-size=1056K,host-aperture-size=0");
    const uint64_t vram = 1056 * KiB, r = 0x10000, l1 = 0x20000;
    const uint64_t last = vram - 4096;
    uint64_t root = r | QGPU_PTE_VALID, bad;
    uint32_t faults = 0;

    qpci_io_writeq(g->dev, g->bar2, r, root);
    set_paging_root(g, root);
    vfill_run(g, 8, 8, 0x11111111);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, 0);
    g_assert_cmphex(qpci_io_readq(g->dev, g->bar2, r), ==, root);
    g_assert_cmphex(qpci_io_readq(g->dev, g->bar2, r + 8), ==,
                    0x1111111111111111ull);
    /* the table zeroes itself through its own (cached) translation */
    vfill_run(g, 0, 4096, 0);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, 0);
    g_assert_cmphex(qpci_io_readq(g->dev, g->bar2, r), ==, 0);
    cmd_flush_tlb(g, root, 0);
    cmd_vfill(g, 4, 0, 1);
    PAGING_VFAULT(QGPU_FAULT_PAGE_NOT_PRESENT, 0, 2, true, root);
    faults++;

    /* entry 0 as a 64 KiB page of the table's own group */
    qpci_io_writeq(g->dev, g->bar2, r, root | QGPU_PTE_64K);
    cmd_flush_tlb(g, 0, QGPU_FLUSH_TLB_ALL);
    vfill_run(g, 0x8000, 0x8000, 0x22222222);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, faults);
    g_assert_cmphex(vram_rd(g, r + 0xfffc), ==, 0x22222222);
    g_assert_cmphex(vram_rd(g, r + 0x10000), ==, 0);

    /* the last VRAM page as a table and as a page: fine */
    qpci_io_writeq(g->dev, g->bar2, r, qgpu_mmu_pte(l1, QGPU_PTE_VALID));
    qpci_io_writeq(g->dev, g->bar2, l1, qgpu_mmu_pte(last, QGPU_PTE_VALID));
    vram_wq_dev(g, last, qgpu_mmu_pte(last, QGPU_PTE_VALID));
    cmd_flush_tlb(g, 0, QGPU_FLUSH_TLB_ALL);
    vfill_run(g, 4088, 8, 0x33333333);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, faults);
    g_assert_cmphex(vram_rq_dev(g, vram - 8), ==, 0x3333333333333333ull);

    /* a 64 KiB page whose group runs past the end of VRAM */
    vram_wq_dev(g, last,
                qgpu_mmu_pte(vram - 0x8000, QGPU_PTE_VALID | QGPU_PTE_64K));
    cmd_flush_tlb(g, 0, QGPU_FLUSH_TLB_ALL);
    cmd_vfill(g, 4, 0x1000, 0x44444444);
    PAGING_VFAULT(QGPU_FAULT_BAD_ADDRESS, 0x1000, 0, true, root);
    faults++;
    /* a 4 KiB page one past the end; a table one past the end */
    vram_wq_dev(g, last, qgpu_mmu_pte(vram, QGPU_PTE_VALID));
    cmd_vfill(g, 4, 0, 0x44444444);
    PAGING_VFAULT(QGPU_FAULT_BAD_ADDRESS, 0, 0, true, root);
    faults++;
    qpci_io_writeq(g->dev, g->bar2, l1, qgpu_mmu_pte(vram, QGPU_PTE_VALID));
    cmd_vfill(g, 4, 0, 0x44444444);
    PAGING_VFAULT(QGPU_FAULT_BAD_ADDRESS, 0, 0, true, root);
    faults++;
    qpci_io_writeq(g->dev, g->bar2, r, qgpu_mmu_pte(vram, QGPU_PTE_VALID));
    cmd_vfill(g, 4, 0, 0x44444444);
    PAGING_VFAULT(QGPU_FAULT_BAD_ADDRESS, 0, 1, true, root);
    faults++;
    /* tables at the top of guest-physical memory and beyond it */
    bad = qgpu_mmu_pte(0x7ffffffffffff000ull,
                       QGPU_PTE_VALID | QGPU_PTE_SYSTEM);
    qpci_io_writeq(g->dev, g->bar2, r, bad);
    cmd_vfill(g, 4, 0, 0x44444444);
    PAGING_VFAULT(QGPU_FAULT_DMA_ERROR, 0, 1, true, root);
    faults++;
    bad = qgpu_mmu_pte(~0ull, QGPU_PTE_VALID | QGPU_PTE_SYSTEM);
    set_paging_root(g, bad);
    cmd_vfill(g, 4, QGPU_MMU_VA_SIZE - 4, 0x44444444);
    PAGING_VFAULT(QGPU_FAULT_DMA_ERROR, QGPU_MMU_VA_SIZE - 4, 2, true,
                  bad);
    faults++;
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, faults);
    g_assert_cmphex(vram_rq_dev(g, vram - 8), ==, 0x3333333333333333ull);
    qgpu_stop(g);
}

/*
 * hw-spec 5: with MSI disabled, INTx is asserted while an enabled event is
 * pending. An event that became pending while MSI was on (one message,
 * INTx deasserted) still drives INTx once the guest turns MSI off, and
 * turning MSI on again deasserts it.
 */
static void test_irq_intx_after_msi(void)
{
    QGPU *g = qgpu_start(NULL);
    uint8_t cap = qpci_find_capability(g->dev, PCI_CAP_ID_MSI, 0);
    uint64_t msg = FENCE_MEM + 0x100;
    uint16_t ctrl = qpci_config_readw(g->dev, cap + PCI_MSI_FLAGS);

    qpci_config_writel(g->dev, cap + PCI_MSI_ADDRESS_LO, msg);
    qpci_config_writel(g->dev, cap + PCI_MSI_ADDRESS_HI, 0);
    qpci_config_writew(g->dev, cap + PCI_MSI_DATA_64, 0x4321);
    qpci_config_writew(g->dev, cap + PCI_MSI_FLAGS,
                       ctrl | PCI_MSI_FLAGS_ENABLE);
    qtest_writel(g->qts, msg, 0);
    wr(g, QGPU_REG_INT_MASK, QGPU_INT_PING);
    wr(g, QGPU_REG_PING, 1);
    g_assert_cmphex(qtest_readl(g->qts, msg), ==, 0x4321);
    g_assert_false(qpci_config_readw(g->dev, PCI_STATUS) &
                   PCI_STATUS_INTERRUPT);

    qpci_config_writew(g->dev, cap + PCI_MSI_FLAGS,
                       ctrl & ~PCI_MSI_FLAGS_ENABLE);
    g_assert_true(qpci_config_readw(g->dev, PCI_STATUS) &
                  PCI_STATUS_INTERRUPT);
    qpci_config_writew(g->dev, cap + PCI_MSI_FLAGS,
                       ctrl | PCI_MSI_FLAGS_ENABLE);
    g_assert_false(qpci_config_readw(g->dev, PCI_STATUS) &
                   PCI_STATUS_INTERRUPT);
    qpci_config_writew(g->dev, cap + PCI_MSI_FLAGS,
                       ctrl & ~PCI_MSI_FLAGS_ENABLE);
    wr(g, QGPU_REG_INT_ACK, QGPU_INT_ALL);
    g_assert_false(qpci_config_readw(g->dev, PCI_STATUS) &
                   PCI_STATUS_INTERRUPT);
    qgpu_stop(g);
}

/*
 * hw-spec 6 and 7: engine DMA to the device's own BAR4 behaves like CPU
 * access to it, whoever runs the engine: the device thread, or a doorbell
 * on an idle engine inside the RING_TAIL write (the default). Aperture
 * pages that no RAM alias serves (unmapped pages, and mapped pages beyond
 * the 256 runs) are emulated; a paging command through them reads what
 * the page maps (0 when unmapped), writes it (or drops the write) and
 * counts HAP_FAULT_COUNT for unmapped pages, with no fault.
 */
static void check_hap_engine_dma(const char *props)
{
    QGPU *g = qgpu_start(props);
    const uint32_t runs = 301, slow = 2 * (runs - 1);
    const uint64_t vram_page = 0x2000, unmapped = slow + 1;
    uint64_t ap = g->bar4.addr;
    uint32_t i, hf;

    g_assert_cmpuint(g->bar4_size, >=, (unmapped + 1) * 4096);
    /* single pages that do not join into runs: the last ones are slow */
    for (i = 0; i < runs; i++) {
        wr(g, QGPU_REG_HAP_INDEX, 2 * i);
        wr(g, QGPU_REG_HAP_COUNT, 1);
        wr(g, QGPU_REG_HAP_VRAM_PAGE_LO, vram_page - 2 * i);
        wr(g, QGPU_REG_HAP_CMD, QGPU_HAP_CMD_MAP);
    }
    g_assert_cmpuint(rd(g, QGPU_REG_HAP_MAPPED), ==, runs);
    cmd_fill(g, 4096, (vram_page - slow) * 4096, 0x600dda7a, 0);
    cmd_fill(g, 3 * 4096, 0x10000, 0xeeeeeeee, 0);
    run(g, 0);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, 0);

    /* a mapped page served by the slow path, read and written */
    qtest_writeq(g->qts, PAGELIST, SYS(ap + slow * 4096));
    cmd_transfer(g, 4096, SYS(PAGELIST), 0x10000, QGPU_XFER_SRC_PAGELIST);
    run(g, 0);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, 0);
    g_assert_cmphex(vram_rd(g, 0x10000), ==, 0x600dda7a);
    g_assert_cmphex(vram_rd(g, 0x10ffc), ==, 0x600dda7a);
    cmd_fill(g, 8, SYS(ap + slow * 4096 + 8), 0x12345678, 0);
    run(g, 0);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, 0);
    g_assert_cmphex(vram_rd(g, (vram_page - slow) * 4096 + 8), ==,
                    0x12345678);

    /* an unmapped page: reads 0, writes dropped, counted, no fault */
    hf = rd(g, QGPU_REG_HAP_FAULT_COUNT);
    cmd_transfer(g, 4096, SYS(ap + unmapped * 4096), 0x11000, 0);
    cmd_transfer(g, 4096, 0x12000, SYS(ap + unmapped * 4096), 0);
    cmd_fence(g, 0, SYS(ap + unmapped * 4096), 1, false);
    run(g, 0);
    g_assert_cmpuint(rd(g, QGPU_REG_FAULT_COUNT), ==, 0);
    g_assert_cmpuint(erd(g, 0, QGPU_ENG_STATUS), ==, 0);
    g_assert_cmphex(vram_rd(g, 0x11000), ==, 0);
    g_assert_cmphex(vram_rd(g, 0x11ffc), ==, 0);
    g_assert_cmpuint(rd(g, QGPU_REG_HAP_FAULT_COUNT), >, hf);
    qgpu_stop(g);
}

static void test_hap_engine_dma(void)
{
    check_hap_engine_dma("host-aperture-size=4M");
    check_hap_engine_dma("host-aperture-size=4M,doorbell-commands=0");
}

/*
 * Engine DMA that unplugs the device: behind a PCIe root port, a FILL
 * into the MMCONFIG window writes the port's Slot Control with the slot
 * powered off, which unplugs (unrealizes) the device inside its own
 * command, on the device thread (doorbell-commands=0) or inside the
 * RING_TAIL write (the default). With @msi the write is the MSI message
 * of a FENCE's interrupt instead. QEMU goes on: the device is gone and
 * nothing after that command runs (the FENCE behind it never lands).
 */
#define MMCFG_BASE      0xb0000000ull
#define RP_DEVFN        QPCI_DEVFN(2, 0)
#define RP_SEC_BUS      1
#define RP_BAR0         0xe0000000ull

/* The GPU behind the root port: BAR0 at RP_BAR0, memory and bus master on */
static void qgpu_port_bar0(QGPU *g)
{
    qpci_config_writel(g->dev, PCI_BASE_ADDRESS_0, RP_BAR0);
    qpci_config_writew(g->dev, PCI_COMMAND,
                       PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER);
    g->bar0.addr = RP_BAR0;
    g->bar0.is_io = false;
    g_assert_cmphex(rd(g, QGPU_REG_ID), ==, QGPU_ID_MAGIC);
}

/*
 * q35 with MMCONFIG on at MMCFG_BASE and the GPU (@props) behind a PCIe
 * root port (RP_DEVFN, bus RP_SEC_BUS), ring 0 ready; @args: more QEMU
 * options, or NULL. Returns the port.
 */
static QPCIDevice *qgpu_start_port(QGPU *g, const char *props,
                                   const char *args)
{
    g_autofree char *bios = qgpu_bios_dir();
    QPCIDevice *rp, *host;

    g->qts = qtest_initf("%s -machine q35 -nodefaults -m 256M %s "
                         "-global ICH9-LPC.acpi-pci-hotplug-with-bridge-"
                         "support=off "
                         "-device pcie-root-port,id=rp0,addr=02.0,chassis=1,"
                         "slot=1 -device qgpu,id=gpu0,bus=rp0,addr=0.0,"
                         "vram-size=8M,host-aperture-size=0%s%s",
                         bios, args ? args : "", props ? "," : "",
                         props ? props : "");
    g->bus = qpci_new_pc(g->qts, NULL);
    /* MMCONFIG on at 0xb0000000, 256 MiB */
    host = qpci_device_find(g->bus, QPCI_DEVFN(0, 0));
    g_assert(host);
    qpci_config_writel(host, 0x64, MMCFG_BASE >> 32);
    qpci_config_writel(host, 0x60, MMCFG_BASE | 1);
    g_free(host);
    /* the root port: bus 1 behind it, a memory window for BAR0 */
    rp = qpci_device_find(g->bus, RP_DEVFN);
    g_assert(rp);
    qpci_config_writeb(rp, PCI_PRIMARY_BUS, 0);
    qpci_config_writeb(rp, PCI_SECONDARY_BUS, RP_SEC_BUS);
    qpci_config_writeb(rp, PCI_SUBORDINATE_BUS, RP_SEC_BUS);
    qpci_config_writew(rp, PCI_MEMORY_BASE, RP_BAR0 >> 16);
    qpci_config_writew(rp, PCI_MEMORY_LIMIT, RP_BAR0 >> 16);
    qpci_config_writew(rp, PCI_COMMAND,
                       PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER);

    /* the GPU on bus 1: BAR0 at the window, by hand */
    g->dev = qpci_device_find(g->bus, (RP_SEC_BUS << 8) | QPCI_DEVFN(0, 0));
    g_assert(g->dev);
    g_assert_cmphex(qpci_config_readw(g->dev, PCI_DEVICE_ID), ==,
                    QGPU_PCI_DEVICE_ID);
    qgpu_port_bar0(g);
    qgpu_ring_init(g, 0, RING0, RING_SIZE);
    return rp;
}

static void qgpu_stop_port(QGPU *g, QPCIDevice *rp)
{
    g_free(rp);
    g_free(g->dev);
    qpci_free_pc(g->bus);
    qtest_quit(g->qts);
}

static void check_dma_unplug(const char *props, bool msi)
{
    QGPU g = { 0 };
    QPCIDevice *rp;
    uint8_t exp, cap;
    uint64_t sltctl;
    uint16_t off = PCI_EXP_SLTCTL_PCC | PCI_EXP_SLTCTL_PWR_IND_OFF |
                   PCI_EXP_SLTCTL_ATTN_IND_OFF;
    uint32_t c[6];

    rp = qgpu_start_port(&g, props, NULL);
    exp = qpci_find_capability(rp, PCI_CAP_ID_EXP, 0);
    g_assert_cmpuint(exp, !=, 0);
    sltctl = MMCFG_BASE + (RP_DEVFN << 12) + exp + PCI_EXP_SLTCTL;
    g_assert_true(qpci_config_readw(rp, exp + PCI_EXP_SLTSTA) &
                  PCI_EXP_SLTSTA_PDS);

    /* the slot powered off (PCC), power indicator off: an unplug */
    qtest_writeq(g.qts, FENCE_MEM, 0);
    if (msi) {
        cap = qpci_find_capability(g.dev, PCI_CAP_ID_MSI, 0);
        g_assert_cmpuint(cap, !=, 0);
        qpci_config_writel(g.dev, cap + PCI_MSI_ADDRESS_LO, sltctl);
        qpci_config_writel(g.dev, cap + PCI_MSI_ADDRESS_HI, sltctl >> 32);
        qpci_config_writew(g.dev, cap + PCI_MSI_DATA_64, off);
        qpci_config_writew(g.dev, cap + PCI_MSI_FLAGS,
                           qpci_config_readw(g.dev, cap + PCI_MSI_FLAGS) |
                           PCI_MSI_FLAGS_ENABLE);
        wr(&g, QGPU_REG_INT_MASK, QGPU_INT_ENGINE(0));
        cmd_fence(&g, 0, SYS(FENCE_MEM + 8), 1, true);
    } else {
        c[0] = QGPU_CMD_HDR(QGPU_CMD_FILL, 0, QGPU_CMD_FILL_LEN);
        c[1] = 4;
        c[2] = 0;
        c[3] = sltctl;
        c[4] = QGPU_SYS_BIT >> 32;
        c[5] = off;
        emit(&g, 0, c, ARRAY_SIZE(c));
    }
    cmd_fence(&g, 0, SYS(FENCE_MEM), 1, true);
    kick(&g, 0);

    /* QEMU is alive, the device is gone, the fence never landed */
    g_usleep(200 * 1000);
    qtest_clock_step(g.qts, 10 * 1000 * 1000);
    g_assert_cmphex(qpci_config_readw(g.dev, PCI_VENDOR_ID), ==, 0xffff);
    g_assert_cmphex(qpci_config_readw(rp, PCI_VENDOR_ID), ==,
                    0x1b36);
    g_assert_cmpuint(qtest_readq(g.qts, FENCE_MEM), ==, 0);
    qgpu_stop_port(&g, rp);
}

static void test_dma_unplug(void)
{
    check_dma_unplug("doorbell-commands=0", false);
    check_dma_unplug("doorbell-commands=0", true);
    check_dma_unplug(NULL, false);
    check_dma_unplug(NULL, true);
}

/*
 * Engine DMA that resets the device: behind a PCIe root port, a write
 * through the MMCONFIG window to the port's Bridge Control with Secondary
 * Bus Reset set resets the GPU (hw-spec 11) inside its own command, on the
 * device thread (doorbell-commands=0) or inside the RING_TAIL write (the
 * default). The command is abandoned when that write completes (hw-spec 4
 * and 6): nothing of it, nor of the FENCE behind it, is written, counted,
 * latched or recorded after it. @how:
 * - DMA_RESET_FILL: a FILL of 64 KiB + 4 from the port's dword 0x3c (line,
 *   pin, Bridge Control), DMA by DMA (64 KiB each); its second DMA would
 *   write the INTERRUPT_LINE of the device at 04.0 (a second GPU);
 * - DMA_RESET_FENCE: a FENCE with the IRQ flag, whose value writes the
 *   port's dwords 0x38 and 0x3c: INT_ENGINE(0) is not latched after it;
 * - DMA_RESET_GART: a FILL of two GART pages, the first the port's
 *   configuration page, the second RAM: the GART is off after the reset,
 *   and no fault may be recorded for the second page.
 */
enum { DMA_RESET_FILL, DMA_RESET_FENCE, DMA_RESET_GART };

static void check_dma_reset(const char *props, int how)
{
    QGPU g = { 0 };
    QPCIDevice *rp, *wit;
    const uint64_t port_cfg = MMCFG_BASE + (RP_DEVFN << 12);
    const uint32_t pattern = 0x0040005a;        /* line 0x5a, SBR */
    uint64_t cmds, bytes;
    uint32_t faults;
    int i;

    rp = qgpu_start_port(&g, props, "-device qgpu,addr=04.0,vram-size=1M,"
                         "host-aperture-size=0,gart-size=0");
    wit = qpci_device_find(g.bus, QPCI_DEVFN(4, 0));
    g_assert(wit);
    qpci_config_writeb(wit, PCI_INTERRUPT_LINE, 0);
    qtest_writeq(g.qts, FENCE_MEM, 0);
    qtest_memset(g.qts, SYSBUF, 0, 2 * 4096);
    cmds = rd64(&g, QGPU_ENGINE_BASE(0) + QGPU_ENG_CMDS_LO);
    bytes = rd64(&g, QGPU_ENGINE_BASE(0) + QGPU_ENG_BYTES_LO);
    faults = rd(&g, QGPU_REG_FAULT_COUNT);

    switch (how) {
    case DMA_RESET_FILL:
        cmd_fill(&g, 64 * KiB + 4, SYS(port_cfg + PCI_INTERRUPT_LINE),
                 pattern, 0);
        break;
    case DMA_RESET_FENCE:
        cmd_fence(&g, 0, SYS(port_cfg + PCI_ROM_ADDRESS1),
                  (uint64_t)PCI_BRIDGE_CTL_BUS_RESET << 48, true);
        break;
    default:
        qtest_writeq(g.qts, GART_TABLE, port_cfg | QGPU_GART_ENTRY_VALID);
        qtest_writeq(g.qts, GART_TABLE + 8, SYSBUF | QGPU_GART_ENTRY_VALID);
        wr(&g, QGPU_REG_GART_BASE_LO, GART_TABLE);
        wr(&g, QGPU_REG_GART_BASE_HI, 0);
        wr(&g, QGPU_REG_GART_CTRL, 1);
        cmd_fill(&g, 2 * 4096 - PCI_INTERRUPT_LINE,
                 QGPU_GART_BASE + PCI_INTERRUPT_LINE, pattern, 0);
        break;
    }
    cmd_fence(&g, 0, SYS(FENCE_MEM), 1, true);
    kick(&g, 0);

    /* the reset came: the GPU's BAR0 is unassigned */
    for (i = 0; qpci_config_readl(g.dev, PCI_BASE_ADDRESS_0); i++) {
        g_assert_cmpint(i, <, 10000);
        g_usleep(1000);
    }
    g_usleep(50 * 1000);
    qtest_clock_step(g.qts, 10 * 1000 * 1000);
    qpci_config_writew(rp, PCI_BRIDGE_CONTROL, 0);
    qgpu_port_bar0(&g);

    g_test_message("after the reset: CMDS +%" PRIu64 ", BYTES +%" PRIu64
                   ", INT_STATUS 0x%x, FAULT_COUNT +%u, STATUS 0x%x, "
                   "line at 04.0 0x%x, fence %" PRIu64,
                   rd64(&g, QGPU_ENGINE_BASE(0) + QGPU_ENG_CMDS_LO) - cmds,
                   rd64(&g, QGPU_ENGINE_BASE(0) + QGPU_ENG_BYTES_LO) - bytes,
                   rd(&g, QGPU_REG_INT_STATUS),
                   rd(&g, QGPU_REG_FAULT_COUNT) - faults,
                   erd(&g, 0, QGPU_ENG_STATUS),
                   qpci_config_readb(wit, PCI_INTERRUPT_LINE),
                   qtest_readq(g.qts, FENCE_MEM));
    /* nothing after the write that reset it */
    g_assert_cmpuint(qpci_config_readb(wit, PCI_INTERRUPT_LINE), ==, 0);
    g_assert_cmphex(qtest_readl(g.qts, SYSBUF + 4096), ==, 0);
    g_assert_cmphex(rd(&g, QGPU_REG_INT_STATUS), ==, 0);
    g_assert_cmpuint(rd(&g, QGPU_REG_FAULT_COUNT), ==, faults);
    g_assert_cmpuint(rd(&g, QGPU_REG_FAULTQ_COUNT), ==, 0);
    g_assert_cmpuint(rd64(&g, QGPU_ENGINE_BASE(0) + QGPU_ENG_CMDS_LO), ==,
                     cmds);
    g_assert_cmpuint(rd64(&g, QGPU_ENGINE_BASE(0) + QGPU_ENG_BYTES_LO), ==,
                     bytes);
    g_assert_cmpuint(erd(&g, 0, QGPU_ENG_CTRL), ==, 0);
    g_assert_cmpuint(erd(&g, 0, QGPU_ENG_STATUS), ==, 0);
    g_assert_cmpuint(qtest_readq(g.qts, FENCE_MEM), ==, 0);

    /* and the device works on */
    qgpu_ring_init(&g, 0, RING0, RING_SIZE);
    cmd_fence(&g, 0, SYS(FENCE_MEM), 2, false);
    run(&g, 0);
    g_assert_cmpuint(qtest_readq(g.qts, FENCE_MEM), ==, 2);
    g_assert_cmpuint(rd64(&g, QGPU_ENGINE_BASE(0) + QGPU_ENG_CMDS_LO), ==,
                     cmds + 1);
    g_free(wit);
    qgpu_stop_port(&g, rp);
}

static void test_dma_reset(void)
{
    int how;

    for (how = DMA_RESET_FILL; how <= DMA_RESET_GART; how++) {
        check_dma_reset("doorbell-commands=0", how);
        check_dma_reset(NULL, how);
    }
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);

    qtest_add_func("/qgpu/identity", test_identity);
    qtest_add_func("/qgpu/bad-props", test_bad_props);
    qtest_add_func("/qgpu/io-coherent", test_io_coherent);
    qtest_add_func("/qgpu/hotplug", test_hotplug);
    qtest_add_func("/qgpu/scratch", test_scratch);
    qtest_add_func("/qgpu/fence-irq", test_fence_irq);
    qtest_add_func("/qgpu/msi", test_msi);
    qtest_add_func("/qgpu/ping", test_ping);
    qtest_add_func("/qgpu/paging/stream-copy", test_stream_copy);
    qtest_add_func("/qgpu/doorbell", test_doorbell);
    qtest_add_func("/qgpu/doorbell-reentry", test_doorbell_reentry);
    qtest_add_func("/qgpu/many-fences", test_many_fences);
    qtest_add_func("/qgpu/ring-faults", test_ring_faults);
    qtest_add_func("/qgpu/transfer", test_transfer);
    qtest_add_func("/qgpu/bar2", test_bar2);
    qtest_add_func("/qgpu/fill-discard", test_fill_discard);
    qtest_add_func("/qgpu/vram-committed", test_vram_committed);
    qtest_add_func("/qgpu/gart", test_gart);
    qtest_add_func("/qgpu/hap", test_hap);
    qtest_add_func("/qgpu/hap-fragmented", test_hap_fragmented);
    qtest_add_func("/qgpu/large-transfer", test_large_transfer);
    qtest_add_func("/qgpu/thread/in-flight", test_thread_in_flight);
    qtest_add_func("/qgpu/thread/unplug", test_thread_unplug);
    qtest_add_func("/qgpu/paging/fast-linear", test_fast_linear);
    qtest_add_func("/qgpu/paging/fast-pagelist", test_fast_pagelist);
    qtest_add_func("/qgpu/paging/pagelist-faults", test_fast_pagelist_faults);
    qtest_add_func("/qgpu/paging/pagelist-fuzz", test_fast_pagelist_fuzz);
    qtest_add_func("/qgpu/render/ops", test_render_ops);
    qtest_add_func("/qgpu/render/faults", test_render_faults);
    qtest_add_func("/qgpu/render/wait", test_render_wait);
    qtest_add_func("/qgpu/render/contexts", test_render_contexts);
    qtest_add_func("/qgpu/render/gart-copy", test_render_gart_copy);
    qtest_add_func("/qgpu/fault/queue", test_fault_queue);
    qtest_add_func("/qgpu/fault/overflow", test_fault_overflow);
    qtest_add_func("/qgpu/fault/ctx-skip", test_ctx_fault_skip);
    qtest_add_func("/qgpu/fault/job-wait", test_ctx_fault_job_wait);
    qtest_add_func("/qgpu/render/ctx-unbind", test_ctx_unbind);
    qtest_add_func("/qgpu/mmu/caps", test_mmu_caps);
    qtest_add_func("/qgpu/mmu/walk", test_mmu_walk);
    qtest_add_func("/qgpu/mmu/faults", test_mmu_faults);
    qtest_add_func("/qgpu/mmu/faults-tables", test_mmu_faults_tables);
    qtest_add_func("/qgpu/mmu/64k", test_mmu_64k);
    qtest_add_func("/qgpu/mmu/tlb", test_mmu_tlb);
    qtest_add_func("/qgpu/mmu/tlb-fifo", test_mmu_tlb_fifo);
    qtest_add_func("/qgpu/mmu/update-pt", test_mmu_update_pt);
    qtest_add_func("/qgpu/mmu/update-pt-faults", test_mmu_update_pt_faults);
    qtest_add_func("/qgpu/mmu/transfer-partial", test_mmu_transfer_partial);
    qtest_add_func("/qgpu/mmu/render", test_mmu_render);
    qtest_add_func("/qgpu/mmu/render-faults", test_mmu_render_faults);
    qtest_add_func("/qgpu/mmu/render-checks", test_mmu_render_checks);
    qtest_add_func("/qgpu/mmu/reset", test_mmu_reset);
    qtest_add_func("/qgpu/mmu/doorbell-in-flight",
                   test_mmu_doorbell_in_flight);
    qtest_add_func("/qgpu/mmu/fuzz", test_mmu_fuzz);
    qtest_add_func("/qgpu/tile/layout", test_tile_layout);
    qtest_add_func("/qgpu/tile/roundtrip", test_tile_roundtrip);
    qtest_add_func("/qgpu/tile/gart", test_tile_gart);
    qtest_add_func("/qgpu/tile/faults", test_tile_faults);
    qtest_add_func("/qgpu/tile/huge", test_tile_huge);
    qtest_add_func("/qgpu/tile/virtual", test_tile_virtual);
    qtest_add_func("/qgpu/tile/fuzz", test_tile_fuzz);
    qtest_add_func("/qgpu/engine/stall", test_engine_stall);
    qtest_add_func("/qgpu/fuzz", test_fuzz);
    qtest_add_func("/qgpu/trace", test_trace);
    qtest_add_func("/qgpu/hap/remap-during-transfer",
                   test_hap_remap_during_transfer);
    qtest_add_func("/qgpu/thread/bus-master-off", test_thread_bus_master_off);
    qtest_add_func("/qgpu/regs/every-offset", test_regs_every_offset);
    qtest_add_func("/qgpu/hap/runs-reset-remap", test_hap_runs_reset_remap);
    qtest_add_func("/qgpu/mmu/hostile-tables", test_mmu_hostile_tables);
    qtest_add_func("/qgpu/irq/intx-after-msi", test_irq_intx_after_msi);
    qtest_add_func("/qgpu/hap/engine-dma", test_hap_engine_dma);
    qtest_add_func("/qgpu/hap/end", test_hap_end);
    qtest_add_func("/qgpu/thread/dma-unplug", test_dma_unplug);
    qtest_add_func("/qgpu/thread/dma-reset", test_dma_reset);

    return g_test_run();
}
