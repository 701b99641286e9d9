/* Which network NCCL actually used, read from its NCCL_DEBUG=INFO lines.
 *
 * A cross-node all-reduce measures the intended fabric only if NCCL put its
 * channels on that fabric: a run that fell back to sockets, or that picked
 * other HCAs than the class has, prints a bandwidth all the same. The lines
 * read (whatever prefix a launcher or NCCL puts before "NCCL INFO"):
 *
 *   NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB ib0:10.0.0.1<0>
 *   NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>
 *   NCCL INFO NET/IB : No device found.
 *   NCCL INFO Using network IB              (IBext, IBext_v8: a plugin over IB)
 *   NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/IB/0/GDRDMA
 *   NCCL INFO NET/IB : GPU Direct RDMA Enabled for HCA 0 'mlx5_0'
 *
 * Pure: no I/O, no allocation but the JSON summary. */
#ifndef NODEGATE_PARSE_NCCL_TRANSPORT_H
#define NODEGATE_PARSE_NCCL_TRANSPORT_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#define NG_NT_MAX_DEVICES 32
#define NG_NT_NAME 48

typedef struct {
	unsigned info_lines;         /* lines carrying "NCCL INFO" */
	char network[NG_NT_NAME];    /* "Using network X": "" when not printed */
	bool network_conflict;       /* two ranks named different networks */
	size_t n_ib, n_socket;       /* devices listed by NET/IB and NET/Socket "Using" lines */
	char ib[NG_NT_MAX_DEVICES][NG_NT_NAME];     /* "mlx5_0:1" */
	char socket[NG_NT_MAX_DEVICES][NG_NT_NAME]; /* "eth0" */
	bool ib_no_device;           /* "NET/IB : No device found" */
	unsigned via_ib, via_socket, via_other, via_gdr; /* channel lines "via NET/..." */
	unsigned via_p2p;            /* channel lines inside the node (P2P, SHM, CollNet...) */
	int gdr_said;                /* -1 not said, 0 "Disabled", 1 "Enabled" */
} ng_nccl_transport;

/* Reads every NCCL INFO line of text (NUL at text[len]; may hold NULs). */
void ng_nccl_transport_read(const char *text, size_t len, ng_nccl_transport *out);

/* "ib", "socket", "other" or "unseen": the network the channels went over
 * (channel lines first, then "Using network"). */
const char *ng_nccl_transport_kind(const ng_nccl_transport *t);

/* The summary kept in a record's detail (conditions.transport). NULL: out of memory. */
cJSON *ng_nccl_transport_json(const ng_nccl_transport *t);

#endif
