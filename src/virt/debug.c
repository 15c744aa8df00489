/*
 * The gdbstub and memory dumps (debug.h). The stub is QEMU's own, asked
 * for through libvirt's monitor passthrough: libvirt 9.0 has no API for it,
 * and a hand-built command line would be a guest libvirt does not know.
 */
#include "virt/debug.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <libvirt/libvirt-qemu.h>

#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/strbuf.h"
#include "virt/virt-priv.h"

int vn_virt_gdbserver_reply(const char *reply, const char *dev, struct vn_error *err)
{
	char line[160];

	if (!reply)
		reply = "";
	if (strcmp(dev, "none") == 0 ? strncmp(reply, "Disabled gdbserver", 18) == 0
				     : strncmp(reply, "Waiting for gdb connection on device", 36) == 0)
		return 0;
	if (strncmp(reply, "Could not open gdbserver", 24) == 0)
		return vn_infra_error(err, -EADDRINUSE, "QEMU could not open its gdbstub on '%s'", dev);
	/* QEMU's words, relayed from a process the guest drives: one bounded line. */
	vn_excerpt(reply, strcspn(reply, "\n"), sizeof(line) - 4, line);
	return vn_infra_error(err, -EPROTO, "QEMU's monitor answered 'gdbserver %s' with '%s'", dev, line);
}

int vn_virt_domain_gdbstub(struct vn_virt_domain *d, unsigned port, struct vn_error *err)
{
	_cleanup_free_ char *dev = port ? vn_xasprintf("tcp:127.0.0.1:%u", port) : vn_xstrdup("none");
	_cleanup_free_ char *cmd = vn_xasprintf("gdbserver %s", dev), *out = NULL;

	if (port > 65535)
		return vn_input_error(err, "port %u is not a TCP port", port);
	if (virDomainQemuMonitorCommand(d->dom, cmd, &out, VIR_DOMAIN_QEMU_MONITOR_COMMAND_HMP) < 0)
		return vn_virt_error(err, "cannot ask QEMU's monitor '%s' of '%s'", cmd, d->name);
	int rc = vn_virt_gdbserver_reply(out, dev, err);
	return rc < 0 ? vn_error_prefix(err, "guest %s", d->name) : 0;
}

int vn_virt_free_port(unsigned *port, struct vn_error *err)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), rc = 0;

	if (fd < 0)
		return vn_infra_error(err, -errno, "socket: %s", strerror(errno));
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || getsockname(fd, (struct sockaddr *)&a, &len) < 0)
		rc = vn_infra_error(err, -errno, "no free port on 127.0.0.1: %s", strerror(errno));
	close(fd);
	*port = rc < 0 ? 0 : ntohs(a.sin_port);
	return rc;
}

static const char *const format_names[] = {[VN_DUMP_ELF] = "elf", [VN_DUMP_KDUMP_ZLIB] = "kdump-zlib"};

const char *vn_dump_format_name(enum vn_dump_format f)
{
	return (unsigned)f < sizeof(format_names) / sizeof(format_names[0]) ? format_names[f] : "?";
}

int vn_dump_format_parse(const char *s, enum vn_dump_format *out, struct vn_error *err)
{
	for (unsigned i = 0; i < sizeof(format_names) / sizeof(format_names[0]); i++)
		if (strcmp(s, format_names[i]) == 0) {
			*out = (enum vn_dump_format)i;
			return 0;
		}
	return vn_input_error(err, "dump format '%s' is neither 'elf' nor 'kdump-zlib'", s);
}

int vn_virt_domain_memory_bytes(struct vn_virt_domain *d, uint64_t *bytes, struct vn_error *err)
{
	virDomainInfo info;

	if (virDomainGetInfo(d->dom, &info) < 0)
		return vn_virt_error(err, "cannot get the memory size of '%s'", d->name);
	/* maxMem counts plugged DIMMs too; the balloon's "memory" may be less than what a dump holds. */
	*bytes = (uint64_t)info.maxMem * 1024;
	return 0;
}

int vn_virt_dom_state(virDomainPtr dom, const char **out)
{
	static const char *const names[] = {"nostate",  "running", "blocked", "paused",
					    "shutdown", "shutoff", "crashed", "pmsuspended"};
	int state = 0, reason = 0;

	if (virDomainGetState(dom, &state, &reason, 0) < 0)
		return -1;
	*out = state >= 0 && (size_t)state < sizeof(names) / sizeof(names[0]) ? names[state] : "unknown";
	if (state == VIR_DOMAIN_PAUSED && reason == VIR_DOMAIN_PAUSED_CRASHED)
		*out = "crashed";
	if (state != VIR_DOMAIN_RUNNING && state != VIR_DOMAIN_PAUSED)
		return 0;
	/*
	 * A panic while no process held the embedded driver reaches libvirt only
	 * when a connection's reconnect thread asks QEMU, which may be after our
	 * look: QEMU's own run state says it at once.
	 */
	_cleanup_free_ char *status = NULL;
	if (virDomainQemuMonitorCommand(dom, "info status", &status, VIR_DOMAIN_QEMU_MONITOR_COMMAND_HMP) == 0 &&
	    status && strstr(status, "(guest-panicked)"))
		*out = "crashed";
	return 0;
}

int vn_virt_domain_state_name(struct vn_virt_domain *d, const char **out, struct vn_error *err)
{
	if (vn_virt_dom_state(d->dom, out) < 0)
		return vn_virt_error(err, "cannot get the state of '%s'", d->name);
	return 0;
}

int vn_virt_domain_resume_paused(struct vn_virt_domain *d, bool *resumed, struct vn_error *err)
{
	int state = 0, reason = 0;

	*resumed = false;
	if (virDomainGetState(d->dom, &state, &reason, 0) < 0)
		return vn_virt_error(err, "cannot get the state of '%s'", d->name);
	/*
	 * QEMU's "debug" run state reaches libvirt 9.0 as a pause of unknown
	 * reason; a pause with a reason (a dump, a crash, a user) is not ours.
	 */
	if (state != VIR_DOMAIN_PAUSED || reason != VIR_DOMAIN_PAUSED_UNKNOWN)
		return 0;
	if (virDomainResume(d->dom) < 0)
		return vn_virt_error(err, "cannot resume '%s' after its debugger left", d->name);
	*resumed = true;
	return 0;
}

int vn_virt_domain_dump(struct vn_virt_domain *d, const char *path, enum vn_dump_format f, struct vn_error *err)
{
	unsigned fmt =
		f == VN_DUMP_KDUMP_ZLIB ? VIR_DOMAIN_CORE_DUMP_FORMAT_KDUMP_ZLIB : VIR_DOMAIN_CORE_DUMP_FORMAT_RAW;

	if (virDomainCoreDumpWithFormat(d->dom, path, fmt, VIR_DUMP_MEMORY_ONLY) < 0)
		return vn_virt_error(err, "cannot dump the memory of '%s' into %s", d->name, path);
	return 0;
}
