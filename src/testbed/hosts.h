/*
 * The hosts a matrix spreads over (`--hosts FILE`, `--connect URI`): one
 * libvirt URI per line, optionally a capacity and where its storage pool
 * lives. Parsing only; nothing here connects (remote.h and hosts-check.h
 * do). The one host type: `hosts check` checks these, a matrix spreads over
 * them (scenario/runner.h).
 *
 *	# URI                                   [CAPACITY|auto] [pool=DIR] [timeout=SECONDS]
 *	qemu+ssh://vnuma@big1/system            8
 *	qemu+tcp://127.0.0.1:16599/session      auto pool=/tmp/vnuma-pool timeout=5
 */
#pragma once

#include <stddef.h>

#include "util/error.h"
#include "util/strmap.h"

/* timeout= (how long its connection may take to open): up to an hour, in seconds. */
#define VN_HOST_TIMEOUT_MAX_S 3600
/* The hosts file is small text; anything bigger is a mistake. */
#define VN_HOSTS_FILE_MAX (1u << 20)

struct vn_host {
	char *uri;
	unsigned capacity; /* 0: auto (vn_virt_host_capacity) */
	char *pool_dir;    /* NULL: default */
	int timeout_ms;    /* timeout=: its connection's open deadline; 0: VN_VIRT_CONNECT_TIMEOUT_MS */
	char *file;        /* where it was given; NULL for --connect */
	unsigned line;
};

struct vn_hosts {
	struct vn_host *v;
	size_t n, cap;
	struct vn_strmap index; /* URI to position in v: the duplicate check, not a scan per line */
};

/*
 * Appends every host of the file at path to out (which may already hold
 * hosts: a duplicate URI is an error). Every bad line is an input error
 * "FILE:LINE: ..." naming the value; a file with no host is one too. On
 * an error out keeps the hosts of the lines before: vn_testbed_hosts_clear() it.
 */
int vn_testbed_hosts_load(const char *path, struct vn_hosts *out, struct vn_error *err);
/* One host from `--connect URI`: capacity auto, default pool. */
int vn_testbed_hosts_add(struct vn_hosts *h, const char *uri, struct vn_error *err);
void vn_testbed_hosts_clear(struct vn_hosts *h);
