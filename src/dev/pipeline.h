/* SPDX-License-Identifier: MIT */
/*
 * pipeline.h - between the files of src/dev/: a pass of the NIC pipeline (pipeline.c),
 * the engine thread that asks for them (engine_thread.c), and the device's start and
 * stop (device.c). The verbs use device.h only.
 */
#ifndef URNIC_DEV_PIPELINE_H
#define URNIC_DEV_PIPELINE_H

#include "dev/device.h"
#include "dev/handover.h"

/*
 * A thread wants a pass (handover.h, urnic_handover_claim): engine, it is the engine
 * thread; must, the pass has to run (here or in the thread in a pass). RUN when this
 * thread ran it, and then any more asked for meanwhile (those read the socket, and the
 * clock); rx: the first one reads the socket too; now_ns: the caller's clock reading, 0:
 * none. *did is set if a pass did anything; *alone (the engine thread passes NULL) when
 * one left the application's answer to come without it (pipeline.c, progress). Each
 * pass leaves its timer deadline and urnic_engine_app_awaits() in d->last_deadline,
 * last_kick_deadline and last_awaits.
 */
enum urnic_pipe_claim urnic_dev_pass(struct urnic_dev *d, bool engine, bool must, bool rx,
				     bool *did, bool *alone, uint64_t now_ns);

/* Whether the calling engine thread runs on the CPU the application called from within
 * the last APP_RECENT_NS (pipeline.c): it does not poll on there. */
bool urnic_dev_beside_app(uint64_t now);

/* The engine's send callback: the batch a pass produced goes out through the address's
 * socket. */
void urnic_dev_flush_tx(struct urnic_engine *e);
/* The engine's direct placement hook (core.h): through the lane to qp's peer. */
int urnic_dev_direct_write(struct urnic_engine *e, const struct urnic_qp *qp,
			   const struct urnic_direct_note *note, const uint8_t *src, uint32_t len);
int urnic_dev_direct_read(struct urnic_engine *e, const struct urnic_qp *qp,
			  const struct urnic_direct_note *note, const struct urnic_direct_seg *to,
			  uint32_t nto, bool by_lane);
bool urnic_dev_direct_ready(struct urnic_engine *e, const struct urnic_qp *qp);

/* Copies the device's counters into its counters file (counters_file.c), as every pass
 * that did something does. Context: the device lock. */
void urnic_dev_publish_counters(struct urnic_dev *d);

/* The connection manager's part of a pass (cm.c), under the lock: its timers due at
 * now_ns, its MADs into the tx batch, its events to the sink; its next timer lowers
 * *deadline (0: none). Nothing when no CM is open. */
void urnic_dev_cm_pass(struct urnic_dev *d, uint64_t now_ns, uint64_t *deadline);

/* At process exit (device.c): the connections this process's CM still holds are
 * destroyed, and what that sends leaves now (a DREQ for an established one), as the
 * kernel's rdma_cm does when a process dies with its ids. */
void urnic_dev_cm_exit(struct urnic_dev *d);

/* The engine thread's body (engine_thread.c). arg: the device. */
void *urnic_dev_engine_thread(void *arg);

#endif
