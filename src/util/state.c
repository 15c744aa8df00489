/* The state directory's layout (util/state.h has the whole map). */
#include "util/state.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/cleanup.h"

int vn_state_locate(const char *given, char **out, struct vn_error *err)
{
	const char *env = getenv("VNUMA_STATE_DIR");
	const char *xdg = getenv("XDG_STATE_HOME");
	const char *home = getenv("HOME");

	*out = NULL;
	if (given)
		*out = vn_xstrdup(given);
	else if (env && *env)
		*out = vn_xstrdup(env);
	else if (xdg && *xdg)
		*out = vn_xasprintf("%s/vnuma", xdg);
	else if (geteuid() == 0)
		*out = vn_xstrdup("/var/lib/vnuma");
	else if (home && *home)
		*out = vn_xasprintf("%s/.local/state/vnuma", home);
	else
		return vn_input_error(err, "no state directory: set VNUMA_STATE_DIR or HOME");
	return 0;
}

char *vn_state_guests_dir(const char *state)
{
	return vn_xasprintf("%s/guests", state);
}

char *vn_state_guest_dir(const char *state, const char *name)
{
	return vn_xasprintf("%s/guests/%s", state, name);
}

char *vn_state_guest_file(const char *state, const char *name, const char *file)
{
	return vn_xasprintf("%s/guests/%s/%s", state, name, file);
}

size_t vn_state_agent_sock_len(const char *state, const char *name)
{
	/* agent-I.sock: I one digit (VN_AGENT_NPORTS). */
	return strlen(state) + strlen("/guests/") + strlen(name) + strlen("/" VN_GUEST_AGENT_SOCK) + 2;
}

char *vn_state_agent_channel(const char *sock0, unsigned i)
{
	size_t len = strlen(sock0), suffix = strlen(".sock");

	if (!i)
		return vn_xstrdup(sock0);
	if (len >= suffix && !strcmp(sock0 + len - suffix, ".sock"))
		return vn_xasprintf("%.*s-%u.sock", (int)(len - suffix), sock0, i);
	return vn_xasprintf("%s-%u", sock0, i);
}

char *vn_state_agent_channel_lock(const char *sock0, unsigned i)
{
	_cleanup_free_ char *sock = vn_state_agent_channel(sock0, i);

	return vn_xasprintf("%s.lock", sock);
}

char *vn_guest_dir_file(const char *guest_dir, const char *file)
{
	return vn_xasprintf("%s/%s", guest_dir, file);
}

char *vn_guest_disk_path(const char *guest_dir, unsigned node, unsigned k)
{
	return vn_xasprintf("%s/disk-node%u-%u.img", guest_dir, node, k);
}

char *vn_guest_pmem_path(const char *guest_dir, unsigned node)
{
	/* disk-node*.img: a failure archive drops it with the disks. */
	return vn_xasprintf("%s/disk-node%u-pmem.img", guest_dir, node);
}

char *vn_state_failed_dir(const char *state)
{
	return vn_xasprintf("%s/failed", state);
}

char *vn_state_failed_entry(const char *state, const char *name, const char *stamp, int i)
{
	if (i == 1)
		return vn_xasprintf("%s/failed/%s-%s", state, name, stamp);
	return vn_xasprintf("%s/failed/%s-%s-%d", state, name, stamp, i);
}

char *vn_state_accel_cache(const char *state)
{
	return vn_xasprintf("%s/accel.cache", state);
}

char *vn_state_embed_root(const char *state)
{
	return vn_xasprintf("%s/libvirt", state);
}

char *vn_state_embed_pidfile(const char *state, const char *domain)
{
	return vn_xasprintf("%s/libvirt/run/qemu/%s.pid", state, domain);
}

char *vn_state_embed_qemu_log(const char *state, const char *domain)
{
	return vn_xasprintf("%s/libvirt/log/qemu/%s.log", state, domain);
}

char *vn_state_libvirt_log(const char *state)
{
	return vn_xasprintf("%s/libvirt.log", state);
}

char *vn_state_driver_queue(const char *state)
{
	return vn_xasprintf("%s/driver.queue", state);
}

char *vn_state_pool_lock(const char *state, const char *hex)
{
	return vn_xasprintf("%s/pool-%.16s.lock", state, hex);
}

char *vn_state_cache_dir(const char *state)
{
	return vn_xasprintf("%s/cache", state);
}

char *vn_state_kernels_dir(const char *state)
{
	return vn_xasprintf("%s/cache/kernels", state);
}

char *vn_state_images_dir(const char *state)
{
	return vn_xasprintf("%s/cache/images", state);
}

char *vn_state_uploads_dir(const char *state)
{
	return vn_xasprintf("%s/cache/uploads", state);
}

char *vn_state_upload_lock(const char *state, const char *hex)
{
	return vn_xasprintf("%s/cache/uploads/%s.lock", state, hex);
}

char *vn_cache_warm_dir(const char *cache)
{
	return vn_xasprintf("%s/warm", cache);
}

char *vn_cache_warm_file(const char *cache, const char *hex, const char *ext)
{
	return vn_xasprintf("%s/warm/%s.%s", cache, hex, ext);
}

char *vn_cache_warm_temp(const char *cache, const char *hex, long pid)
{
	return vn_xasprintf("%s/warm/.%s.save.%ld", cache, hex, pid);
}

char *vn_cache_vmlinux_dir(const char *cache)
{
	return vn_xasprintf("%s/vmlinux", cache);
}

char *vn_cache_digests_dir(const char *cache)
{
	return vn_xasprintf("%s/digests", cache);
}

char *vn_cache_initramfs(const char *cache, const char *hex)
{
	return vn_xasprintf("%s/initramfs-%s.cpio", cache, hex);
}

char *vn_cache_initramfs_temp(const char *cache, const char *hex)
{
	return vn_xasprintf("%s/.initramfs-%.16s.XXXXXX", cache, hex);
}
