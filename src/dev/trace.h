/* SPDX-License-Identifier: MIT */
/*
 * trace.h - URNIC_PCAP for a device (README "Capturing packets"): from its first QP to
 * its close, the device records what it sends and receives in a capture file
 * (transport/pcap.h). The path's %p is the process id, %d the device's name, %% a %;
 * devices of one process whose paths are the same file share it, each an interface
 * of its own. A file is created at its first device's start and stays open until the
 * process ends, so a device that closes and starts again adds to it rather than
 * truncating it. Between trace.c and device.c, pipeline.c.
 */
#ifndef URNIC_DEV_TRACE_H
#define URNIC_DEV_TRACE_H

#include "dev/device.h"

/* Opens (or finds) d's capture file and points d->udp's capture at d's interface in
 * it. Returns 0 or -errno, said on stderr with the path. Context: the open lock, after
 * urnic_udp_open, before the engine thread starts. */
int urnic_dev_trace_start(struct urnic_dev *d, const char *tmpl);

/* d's transport stops recording and its file is written out. Context: the open lock,
 * the engine thread joined, before urnic_udp_close. */
void urnic_dev_trace_stop(struct urnic_dev *d);

/* Writes out every capture file (at exit). */
void urnic_dev_trace_flush_all(void);

/* The transport's sink for a traced device (transport/udp.h), ctx the device: each
 * packet goes to the engine, then to the capture with the names of the drop counters
 * (drop_*) its receive moved as the frame's comment, and the IPv4 ID its ICRC was
 * found right for. */
void urnic_dev_trace_rx(void *ctx, const struct urnic_rx_meta *m, const uint8_t *buf, size_t len);

#endif
