/*
 * Helpers shared by the unit tests and the C integration tests (which do
 * not use cmocka, so nothing here asserts): read a file whole, and the
 * small topologies the virt tests boot or render.
 */
#pragma once

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "topology/topology.h"
#include "util/cleanup.h"
#include "util/parse.h"

/*
 * The agent binary at path started on one end of a socketpair (its --fd 3),
 * as the guest's init starts it on the virtio-serial port. Returns its pid
 * and our end in *fd, or -1.
 */
static inline pid_t vn_test_agent_spawn(const char *path, int *fd)
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		/* fd 3 without CLOEXEC is the agent's channel. */
		if (dup2(sv[1], 3) < 0)
			_exit(126);
		execl(path, "vnuma-agent", "--fd", "3", (char *)NULL);
		_exit(127);
	}
	close(sv[1]);
	if (pid < 0) {
		close(sv[0]);
		return -1;
	}
	*fd = sv[0];
	return pid;
}

/* The file's text, or NULL if it cannot be opened. */
static inline char *vn_test_read_all(const char *path)
{
	_cleanup_fclose_ FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	char *s = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&s, &len);
	char buf[4096];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		fwrite(buf, 1, n, m);
	fclose(m);
	return s;
}

/* Node i holds CPU i and mib[i] MiB; distances 10 local, 21 remote. */
static inline struct vn_topology *vn_test_two_nodes(const uint64_t mib[2])
{
	struct vn_topology *t = calloc(1, sizeof(*t));
	struct vn_error err = {0};

	t->nnodes = 2;
	t->ncpus_total = 2;
	for (unsigned i = 0; i < 2; i++) {
		t->nodes[i].id = i;
		vn_cpulist_parse(i ? "1" : "0", &t->nodes[i].cpus, &err);
		t->nodes[i].ncpus = 1;
		t->nodes[i].memory = mib[i] << 20;
		for (unsigned j = 0; j < 2; j++)
			t->distance[i][j] = i == j ? 10 : 21;
	}
	return t;
}

/*
 * Node 0 reaches node 2 (CPU-less, as CXL memory is) at 250 ns and
 * 5000 MB/s against its own 80 ns and 20000 MB/s.
 */
static inline void vn_test_cxl_hmat(struct vn_topology *t)
{
	const struct vn_hmat_entry h[] = {
		{.initiator = 0, .target = 0, .type = VN_HMAT_LATENCY, .value = 80},
		{.initiator = 0, .target = 2, .type = VN_HMAT_LATENCY, .value = 250},
		{.initiator = 0, .target = 0, .type = VN_HMAT_BANDWIDTH, .value = 20000},
		{.initiator = 0, .target = 2, .type = VN_HMAT_BANDWIDTH, .value = 5000},
	};

	t->hmat = malloc(sizeof(h));
	memcpy(t->hmat, h, sizeof(h));
	t->nhmat = sizeof(h) / sizeof(h[0]);
}
