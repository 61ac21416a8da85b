/* SPDX-License-Identifier: MIT */
/*
 * tcp.h - the TCP connections that carry an iWARP device's FPDUs (RFC 5044 over TCP),
 * non-blocking, in batches: a write hands the kernel every iovec the QP has queued (many
 * FPDUs per sendmsg), a read takes what the socket holds into the caller's buffer. No
 * system call per work request: the device (dev/iw_conn.c) calls these once per
 * connection and pass. Connection setup and MPA are the connection manager's.
 * Context: any thread; a connection's calls are serialized by its owner.
 */
#ifndef URNIC_TRANSPORT_TCP_H
#define URNIC_TRANSPORT_TCP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

/* The socket buffers a connection asks for (0: the kernel's autotuning, which setting
 * a size turns off, tcp(7)). */
struct urnic_tcp_opts {
	int sndbuf_bytes;
	int rcvbuf_bytes;
};

/* Makes a connected socket ready for FPDUs: non-blocking, close-on-exec, TCP_NODELAY
 * (an FPDU leaves when the engine has it, as siw turns Nagle off), the buffers of o
 * (NULL: the kernel's). *mss: the connection's TCP_MAXSEG, the largest FPDU that fits a
 * segment (RFC 5044 5: MULPDU from the EMSS). Returns 0 or -errno. */
int urnic_tcp_setup(int fd, const struct urnic_tcp_opts *o, uint32_t *mss);

/* One sendmsg of iov[0..n) without blocking or SIGPIPE. Returns the bytes the kernel
 * took (maybe fewer than offered), -EAGAIN when it took none for want of room, or
 * -errno (-EPIPE, -ECONNRESET: the connection is gone). */
ssize_t urnic_tcp_write(int fd, const struct iovec *iov, unsigned n);

/* One recv into buf[0..cap) without blocking. Returns the bytes read, 0 at the peer's
 * FIN, -EAGAIN when nothing is there, or -errno. */
ssize_t urnic_tcp_read(int fd, uint8_t *buf, size_t cap);

/* Sends FIN once the bytes written before have gone (shutdown SHUT_WR): the orderly
 * close of RFC 5040 6.2's LLP. Returns 0 or -errno. */
int urnic_tcp_shutdown(int fd);

#endif
