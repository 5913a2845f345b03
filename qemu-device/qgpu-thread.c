/*
 * qgpu: the device thread -- the engines run on a thread of their own, not
 * in QEMU's main loop, so that a large TRANSFER or FILL holds up neither
 * the vCPUs nor the monitor.
 *
 * The thread sleeps until a kick (a doorbell, CTRL.ENABLE, the WAIT poll
 * timer), then runs engine rounds (QGPUState.thread_round) while they
 * report work left. A round runs with the BQL held, like any device code:
 * it fetches and decodes commands, updates registers, raises interrupts
 * and records faults. Only the bulk of a copy or fill between host
 * pointers (VRAM, guest RAM) drops the BQL (qgpu_thread_unlock() and
 * qgpu_thread_relock()); whoever dropped it checks, once it holds it
 * again, that the engine was not reset meanwhile (QGPUEngine.gen) before
 * it records any progress. Between rounds the BQL is released too.
 *
 * An engine or device reset, or a disable, waits (qgpu_thread_quiesce())
 * until a piece in flight without the BQL has landed, so that nothing of
 * an abandoned command is written after the register write that
 * abandoned it; the piece is bounded (a batch closed at 1 MiB, whose last
 * run may add up to 4 MiB; a 4 MiB fill).
 *
 * This file knows nothing about engines: qgpu-engine.c gives it the round.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/main-loop.h"
#include "qemu/rcu.h"
#include "qgpu-state.h"
#include "qgpu-thread.h"

/* Sleep until kicked or told to quit; true to run a round */
static bool qgpu_thread_wait(QGPUState *s, bool more)
{
    bool quit;

    qemu_mutex_lock(&s->thread_lock);
    while (!more && !s->thread_kicked && !s->thread_quit) {
        qemu_cond_wait(&s->thread_cond, &s->thread_lock);
    }
    s->thread_kicked = false;
    quit = s->thread_quit;
    qemu_mutex_unlock(&s->thread_lock);
    return !quit;
}

static void qgpu_thread_destroy(QGPUState *s)
{
    qemu_cond_destroy(&s->thread_cond);
    qemu_cond_destroy(&s->thread_landed);
    qemu_mutex_destroy(&s->thread_lock);
}

/*
 * Join a stopped thread, then let the device go: a bottom half the thread
 * schedules as its very last act (below), so the join waits for nothing
 * the thread still has to do, and the BQL is kept (whoever runs it, the
 * main loop or a nested poll of another BQL holder, keeps its lock, and
 * the thread is never the one that runs it).
 */
static void qgpu_thread_reap(void *opaque)
{
    QGPUState *s = opaque;

    qemu_thread_join(&s->thread);
    qgpu_thread_destroy(s);
    object_unref(OBJECT(s));
}

static void *qgpu_thread_main(void *opaque)
{
    QGPUState *s = opaque;
    bool more = false;

    rcu_register_thread();
    while (qgpu_thread_wait(s, more)) {
        uint64_t unlocks;

        qemu_mutex_lock_iothread();
        if (s->thread_quit) {
            qemu_mutex_unlock_iothread();
            break;
        }
        unlocks = s->thread_unlocks;
        s->in_engine = true;
        more = s->thread_round(s);
        s->in_engine = false;
        qemu_mutex_unlock_iothread();
        if (more && unlocks == s->thread_unlocks) {
            /*
             * A round that held the BQL throughout (work that is not a
             * bulk copy): let whoever waits for the lock have it first.
             */
            g_usleep(1);
        }
    }
    rcu_unregister_thread();
    /*
     * Told to quit (qgpu_thread_stop()): the last act, so that whoever
     * runs the reap joins a thread that has nothing left to do.
     */
    aio_bh_schedule_oneshot(qemu_get_aio_context(), qgpu_thread_reap, s);
    return NULL;
}

void qgpu_thread_start(QGPUState *s, QGPUThreadRound *round)
{
    s->thread_round = round;
    s->thread_kicked = false;
    s->thread_quit = false;
    s->thread_in_flight = false;
    qemu_mutex_init(&s->thread_lock);
    qemu_cond_init(&s->thread_cond);
    qemu_cond_init(&s->thread_landed);
    qemu_thread_create(&s->thread, "qgpu", qgpu_thread_main, s,
                       QEMU_THREAD_JOINABLE);
    s->thread_started = true;
}


/*
 * Stop the thread; the caller holds the BQL and keeps it. The thread is
 * joined later, by the main loop, and the device object stays until then.
 *
 * The BQL is never dropped here: this runs inside the unrealize of an
 * unplug (a guest's eject, possibly from the device's own DMA, from a
 * doorbell's commands or from the thread's round), and while it was
 * dropped other vCPUs reached the half-unrealized device (a config write
 * remapping BARs already taken out of their containers aborts QEMU; a
 * second eject unparents it twice).
 */
void qgpu_thread_stop(QGPUState *s)
{
    if (!s->thread_started) {
        return;
    }
    qemu_mutex_lock(&s->thread_lock);
    s->thread_quit = true;
    qemu_cond_signal(&s->thread_cond);
    qemu_mutex_unlock(&s->thread_lock);
    /*
     * A piece in flight without the BQL lands first (it needs no BQL);
     * then the thread touches nothing of the device's any more: it stops
     * at its next check of thread_quit, which it makes before anything
     * else once it has the BQL (a round's start, qgpu_thread_relock()),
     * and within a round of its own (the device's own DMA unplugged it)
     * touches no PCI state (s->gone).
     */
    qgpu_thread_quiesce(s);
    s->thread_started = false;
    /* until the reap the thread schedules on its way out */
    object_ref(OBJECT(s));
}

/* Make the thread run a round (any thread, BQL held or not) */
void qgpu_thread_kick(QGPUState *s)
{
    if (!s->thread_started) {
        return;
    }
    qemu_mutex_lock(&s->thread_lock);
    s->thread_kicked = true;
    qemu_cond_signal(&s->thread_cond);
    qemu_mutex_unlock(&s->thread_lock);
}

/*
 * Drop the BQL for bulk work, on the device thread only; true if it was
 * dropped (then qgpu_thread_relock() must follow). Nothing of the device's
 * state may be touched until then.
 */
bool qgpu_thread_unlock(QGPUState *s)
{
    if (!s->thread_started || !qemu_thread_is_self(&s->thread) ||
        !qemu_mutex_iothread_locked()) {
        return false;
    }
    s->thread_unlocks++;
    s->in_engine = false;
    qemu_mutex_lock(&s->thread_lock);
    s->thread_in_flight = true;
    qemu_mutex_unlock(&s->thread_lock);
    qemu_mutex_unlock_iothread();
    return true;
}

/*
 * Take the BQL again after qgpu_thread_unlock(); false if the device is
 * going away (stop now, touching nothing but what the caller owns).
 */
bool qgpu_thread_relock(QGPUState *s)
{
    qemu_mutex_lock(&s->thread_lock);
    s->thread_in_flight = false;
    qemu_cond_broadcast(&s->thread_landed);
    qemu_mutex_unlock(&s->thread_lock);
    qemu_mutex_lock_iothread();
    s->in_engine = true;
    return !s->thread_quit;
}

/*
 * Wait until the piece the thread moves without the BQL, if any, has
 * landed (the caller holds the BQL and is about to abandon work). The
 * thread does not need the BQL to finish the piece.
 */
void qgpu_thread_quiesce(QGPUState *s)
{
    if (!s->thread_started || qemu_thread_is_self(&s->thread)) {
        return;
    }
    qemu_mutex_lock(&s->thread_lock);
    while (s->thread_in_flight) {
        qemu_cond_wait(&s->thread_landed, &s->thread_lock);
    }
    qemu_mutex_unlock(&s->thread_lock);
}

/*
 * Is a piece in flight without the BQL now (the caller holds the BQL)? The
 * thread starts a piece only with the BQL held, so "no" stays true until
 * the caller drops it; "yes" may turn into "no" at any time.
 */
bool qgpu_thread_in_flight(QGPUState *s)
{
    bool busy;

    if (!s->thread_started || qemu_thread_is_self(&s->thread)) {
        return false;
    }
    qemu_mutex_lock(&s->thread_lock);
    busy = s->thread_in_flight;
    qemu_mutex_unlock(&s->thread_lock);
    return busy;
}
