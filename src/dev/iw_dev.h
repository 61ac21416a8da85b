/* SPDX-License-Identifier: MIT */
/*
 * iw_dev.h - between iw_conn.c, which carries an iWARP device's TCP connections
 * (iw_conn.h is its face to the connection manager), and the rest of src/dev/: the
 * device's start and stop, the engine thread's sleep and the passes that read the
 * sockets before the engine runs and write them after.
 * Context: under the device lock, except init and fini (device.c, open_lock).
 */
#ifndef URNIC_DEV_IW_DEV_H
#define URNIC_DEV_IW_DEV_H

#include <stdbool.h>
#include <stdint.h>

struct urnic_dev;
struct urnic_qp;

/* The connection table and epoll set of an iWARP device, at its first open. Returns 0
 * or -errno. fini closes every connection left (no word to the sink) and frees them. */
int urnic_dev_iw_init(struct urnic_dev *d);
void urnic_dev_iw_fini(struct urnic_dev *d);

/* The epoll fd the engine thread's sleep watches (readable: a socket has bytes, room or
 * news), -1 without one. */
int urnic_dev_iw_fd(const struct urnic_dev *d);

/* Before the engine's pass: the ready sockets' bytes to their QPs (epoll_wait without
 * waiting, then reads until EAGAIN or a budget), ends of connections to the sink. True
 * if it read or ended anything. */
bool urnic_dev_iw_rx(struct urnic_dev *d, uint64_t now_ns);

/* After the engine's pass: what each QP with bytes or a close due has queued, written
 * in batches (urnic_iw_tx_ready); the FIN of a QP whose close is due once its bytes
 * went; a peer that did not close in time closed here. *deadline (0: none) is lowered
 * to the next such timeout. True if it wrote or ended anything. */
bool urnic_dev_iw_tx(struct urnic_dev *d, uint64_t now_ns, uint64_t *deadline);

/* The QP is reset or destroyed: its connection, if it has one, is closed at once, no
 * word to the sink (the QP's owner is the one ending it). */
void urnic_dev_iw_forget(struct urnic_dev *d, struct urnic_qp *qp);

#endif
