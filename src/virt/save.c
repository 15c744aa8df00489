/* Booted snapshots: libvirt's save and restore of a local guest (virt/save.h). */
#include "virt/save.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/random.h>
#include <string.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/file.h"
#include "util/state.h"
#include "util/strbuf.h"
#include "virt/virt-priv.h"

int vn_virt_domain_save(struct vn_virt_domain *d, const char *path, struct vn_error *err)
{
	if (d->v->remote)
		return vn_input_error(err, "guest '%s' is on another host: its snapshot would be there", d->name);
	/* RUNNING: a restore resumes the guest rather than leaving it paused. */
	if (virDomainSaveFlags(d->dom, path, NULL, VIR_DOMAIN_SAVE_RUNNING) < 0)
		return vn_virt_error(err, "cannot save guest '%s' into %s", d->name, path);
	/* Saved is shut off but still defined: the name goes free for the guest restored from it. */
	if (virDomainIsPersistent(d->dom) == 1 && virDomainUndefine(d->dom) < 0)
		return vn_virt_error(err, "cannot undefine the saved guest '%s'", d->name);
	return 0;
}

/*
 * libvirt restores a save only into a domain of the saved one's name and
 * uuid (its ABI check compares them), and its API to change the saved XML
 * (virDomainSaveImageDefineXML) runs the same check. So the name and uuid
 * are changed the way that API changes the XML: in place, in the padding
 * libvirt leaves after it for that. The format is libvirt's
 * (src/qemu/qemu_saveimage.h): a header of magic, version 2, data_len,
 * was_running, format, cookieOffset and 14 unused words; data_len bytes of
 * the XML (NUL-terminated), the cookie at cookieOffset (NUL-terminated),
 * zeros; then QEMU's migration stream. Anything else is not a save of ours.
 */
#define SAVE_MAGIC      "LibvirtQemudSave"
#define SAVE_HEADER_LEN 92
#define SAVE_DATA_MAX   (16u << 20)

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The text of the first <TAG>...</TAG> of xml (as written, escaped), or NULL. */
static char *elem_text(const char *xml, const char *tag)
{
	_cleanup_free_ char *open = vn_xasprintf("<%s>", tag), *close = vn_xasprintf("</%s>", tag);
	const char *a = strstr(xml, open);
	const char *b = a ? strstr(a, close) : NULL;

	return b ? vn_xstrndup(a + strlen(open), (size_t)(b - a) - strlen(open)) : NULL;
}

/* xml with every from replaced by to. */
static char *replace_all(const char *xml, const char *from, const char *to)
{
	_cleanup_strbuf_ struct vn_strbuf b = VN_STRBUF_INIT;
	size_t n = strlen(from);

	for (const char *p; (p = strstr(xml, from)); xml = p + n)
		vn_strbuf_printf(&b, "%.*s%s", (int)(p - xml), xml, to);
	vn_strbuf_printf(&b, "%s", xml);
	return vn_strbuf_steal(&b);
}

/* The first <TAG>...</TAG> of xml with its text replaced by value (escaped); NULL when there is none. */
static char *replace_elem(const char *xml, const char *tag, const char *value)
{
	_cleanup_free_ char *open = vn_xasprintf("<%s>", tag), *close = vn_xasprintf("</%s>", tag);
	_cleanup_free_ char *esc = vn_xml_escape(value);
	const char *a = strstr(xml, open);
	const char *b = a ? strstr(a, close) : NULL;

	if (!b)
		return NULL;
	return vn_xasprintf("%.*s%s%s%s", (int)(a - xml), xml, open, esc, b);
}

/* xml with its <metadata>...</metadata> replaced by block; NULL when it has none. */
static char *replace_metadata(const char *xml, const char *block)
{
	const char *a = strstr(xml, "<metadata>");
	const char *b = a ? strstr(a, "</metadata>") : NULL;

	if (!b)
		return NULL;
	return vn_xasprintf("%.*s%s%s", (int)(a - xml), xml, block, b + strlen("</metadata>"));
}

/*
 * The saved guest's XML made the new one's: its name, a new uuid, its guest
 * dir's paths (agent socket, console FIFO, disks) moved to the new guest's
 * dir, and its metadata the new up's (the topology file it read, the kernel,
 * the guest dir), not the saving up's. Everything else stays as libvirt wrote
 * it: the live XML it checks the restore against (vCPU order, device
 * addresses) is the saved guest's.
 */
char *vn_virt_save_xml_renamed(const char *state_dir, const char *xml, const struct vn_domain_opts *o, const char *uuid)
{
	_cleanup_free_ char *old = elem_text(xml, "name");

	if (!old || !strstr(xml, "<uuid>"))
		return NULL;
	_cleanup_free_ char *old_dir = vn_state_guest_dir(state_dir, old);
	_cleanup_free_ char *new_dir = vn_state_guest_dir(state_dir, o->name);
	_cleanup_free_ char *old_esc = vn_xml_escape(old_dir), *new_esc = vn_xml_escape(new_dir);
	_cleanup_free_ char *from_file = vn_xasprintf("%s/", old_esc), *to_file = vn_xasprintf("%s/", new_esc);
	_cleanup_free_ char *from_text = vn_xasprintf("%s<", old_esc), *to_text = vn_xasprintf("%s<", new_esc);
	_cleanup_free_ char *a = replace_all(xml, from_file, to_file);
	_cleanup_free_ char *b = replace_all(a, from_text, to_text);
	_cleanup_free_ char *meta = vn_domain_metadata_xml(o);
	_cleanup_free_ char *c = replace_metadata(b, meta);
	_cleanup_free_ char *d = c ? replace_elem(c, "name", o->name) : NULL;
	return d ? replace_elem(d, "uuid", uuid) : NULL;
}

static int save_image_rename(struct vn_virt *v, const char *path, const struct vn_domain_opts *o, const char *uuid,
			     struct vn_error *err)
{
	_cleanup_close_ int fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	unsigned char h[SAVE_HEADER_LEN];

	if (fd < 0)
		return vn_infra_error(err, -errno, "cannot open the snapshot %s: %s", path, strerror(errno));
	if (pread(fd, h, sizeof(h), 0) != (ssize_t)sizeof(h) || memcmp(h, SAVE_MAGIC, 16) != 0 || le32(h + 16) != 2 ||
	    le32(h + 28) != 0)
		return vn_infra_error(err, -EINVAL, "%s is not an uncompressed libvirt save (version 2)", path);
	uint32_t len = le32(h + 20), cookie = le32(h + 32);
	if (len == 0 || len > SAVE_DATA_MAX || cookie >= len)
		return vn_infra_error(err, -EINVAL, "%s: a save whose XML is %u bytes, its cookie at %u", path, len,
				      cookie);
	_cleanup_free_ char *data = vn_xcalloc(1, (size_t)len + 1);
	if (pread(fd, data, len, SAVE_HEADER_LEN) != (ssize_t)len || !memchr(data, '\0', len) ||
	    (cookie && !memchr(data + cookie, '\0', len - cookie)))
		return vn_infra_error(err, -EINVAL, "%s: its XML is cut short", path);
	_cleanup_free_ char *xml = vn_virt_save_xml_renamed(v->state_dir, data, o, uuid);
	if (!xml)
		return vn_infra_error(err, -EINVAL, "%s: its XML has no name, uuid or metadata", path);
	size_t xml_len = strlen(xml) + 1, cookie_len = cookie ? strlen(data + cookie) + 1 : 0;
	if (xml_len + cookie_len > len)
		return vn_infra_error(err, -E2BIG, "%s: no room for guest '%s''s name and metadata in its XML", path,
				      o->name);
	/* The same layout: XML, cookie right after it, zeros to the end of the data. */
	_cleanup_free_ char *out = vn_xcalloc(1, len);
	memcpy(out, xml, xml_len);
	if (cookie_len)
		memcpy(out + xml_len, data + cookie, cookie_len);
	unsigned char off[4] = {
		(unsigned char)(cookie_len ? xml_len : 0), (unsigned char)((cookie_len ? xml_len : 0) >> 8),
		(unsigned char)((cookie_len ? xml_len : 0) >> 16), (unsigned char)((cookie_len ? xml_len : 0) >> 24)};
	if (pwrite(fd, out, len, SAVE_HEADER_LEN) != (ssize_t)len || pwrite(fd, off, 4, 32) != 4)
		return vn_infra_error(err, -errno, "cannot rewrite %s: %s", path, strerror(errno));
	return 0;
}

/* A random (version 4) uuid for a restored guest: each one is a machine of its own. */
static int random_uuid(char uuid[37], struct vn_error *err)
{
	unsigned char u[16];

	if (getrandom(u, sizeof(u), 0) != (ssize_t)sizeof(u))
		return vn_infra_error(err, -EIO, "no random bytes for a uuid: %s", strerror(errno));
	u[6] = (unsigned char)((u[6] & 0x0f) | 0x40);
	u[8] = (unsigned char)((u[8] & 0x3f) | 0x80);
	snprintf(uuid, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2],
		 u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
	return 0;
}

/* The new guest's own paths, where vn_virt_domain_create() puts them. */
struct restore_paths {
	char *dir, *log, *sock, *fifo;
};

static void restore_paths_clear(struct restore_paths *p)
{
	vn_free_all(p->dir, p->log, p->sock, p->fifo);
}

static int restore_paths_fill(struct vn_virt *v, struct vn_domain_opts *o, struct restore_paths *p,
			      struct vn_error *err)
{
	int rc;

	if ((rc = vn_virt_guest_dir(v, o->name, &p->dir, err)) < 0)
		return rc;
	if (!o->console_log)
		o->console_log = p->log = vn_guest_dir_file(p->dir, VN_GUEST_CONSOLE_LOG);
	if (!o->agent_socket)
		o->agent_socket = p->sock = vn_guest_dir_file(p->dir, VN_GUEST_AGENT_SOCK);
	if (!o->console_pipe)
		o->console_pipe = p->fifo = vn_guest_dir_file(p->dir, VN_GUEST_CONSOLE_PIPE);
	o->meta.guest_dir = p->dir;
	if (!o->disk_dir)
		o->disk_dir = p->dir;
	o->streams = false;
	return 0;
}

/* The restored guest, transient until now, defined with the same XML: later processes find it after it stops. */
static int restore_define(struct vn_virt *v, const char *xml, const char *name, struct vn_error *err)
{
	virDomainPtr dom = virDomainDefineXMLFlags(v->conn, xml, 0);

	if (!dom)
		return vn_virt_error(err, "cannot define the restored guest '%s'", name);
	virDomainFree(dom);
	return 0;
}

int vn_virt_domain_restore(struct vn_virt *v, const struct vn_domain_opts *o, const char *path,
			   struct vn_virt_domain **out, struct vn_error *err)
{
	_cleanup_free_ char *xml = NULL, *xml_path = NULL;
	_cleanup_close_ int keeper = -1;
	struct vn_domain_opts opts = *o;
	struct restore_paths p = {0};
	uint64_t log_max;
	char uuid[37];
	int rc;

	if (v->remote)
		return vn_input_error(err, "restoring a snapshot on another host is not supported");
	if ((rc = restore_paths_fill(v, &opts, &p, err)) < 0)
		return rc;
	if ((rc = random_uuid(uuid, err)) < 0 || (rc = save_image_rename(v, path, &opts, uuid, err)) < 0 ||
	    (rc = vn_console_log_max(&log_max, err)) < 0 ||
	    (rc = vn_console_keeper_start(opts.console_pipe, opts.console_log, log_max, true, &keeper, err)) < 0)
		goto cleanup;
	/* No new XML: the file's own, renamed above, is the machine libvirt checks against. */
	if (virDomainRestoreFlags(v->conn, path, NULL, VIR_DOMAIN_SAVE_RUNNING) < 0) {
		rc = vn_virt_error(err, "cannot restore guest '%s' from %s", o->name, path);
		goto cleanup;
	}
	virDomainPtr dom = virDomainLookupByName(v->conn, o->name);
	if (!dom) {
		rc = vn_virt_error(err, "the restored guest '%s' is gone", o->name);
		goto cleanup;
	}
	struct vn_virt_domain *d = vn_virt_domain_new(v, dom, o->name);
	d->accel = o->accel;
	snprintf(d->accel_reason, sizeof(d->accel_reason), "%s, as the snapshot was booted",
		 o->accel == VN_ACCEL_KVM ? "KVM" : "TCG");
	free(d->console_log);
	d->console_log = vn_xstrdup(opts.console_log);
	xml = virDomainGetXMLDesc(dom, VIR_DOMAIN_XML_INACTIVE);
	xml_path = vn_guest_dir_file(p.dir, VN_GUEST_DOMAIN_XML);
	if (!xml)
		rc = vn_virt_error(err, "cannot read the restored guest '%s''s XML", o->name);
	else if ((rc = vn_file_write_atomic(xml_path, xml, strlen(xml), 0600, err)) == 0)
		rc = restore_define(v, xml, o->name, err);
	if (rc < 0) {
		virDomainDestroy(dom);
		vn_virt_domain_free(d);
		goto cleanup;
	}
	*out = d;
cleanup:
	restore_paths_clear(&p);
	return rc;
}

int vn_virt_hypervisor_version(struct vn_virt *v, unsigned long *version, struct vn_error *err)
{
	if (virConnectGetVersion(v->conn, version) < 0)
		return vn_virt_error(err, "cannot read the hypervisor's version");
	return 0;
}
