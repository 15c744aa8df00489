/*
 * Artifacts on a host without a shared file system: a "vnuma" dir pool there,
 * and volumes named by content, uploaded over a libvirt stream.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libxml/parser.h>
#include <libxml/xpath.h>

#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/dir.h"
#include "util/interrupt.h"
#include "util/sha256.h"
#include "util/strbuf.h"
#include "util/state.h"
#include "virt/storage.h"
#include "virt/virt-priv.h"

/* What one virStreamSend carries: libvirt's own messages hold 256 KiB of data. */
#define UPLOAD_CHUNK (256u << 10)

VN_DEFINE_CLEANUP(virStoragePoolPtr, virStoragePoolFree);
VN_DEFINE_CLEANUP(virStorageVolPtr, virStorageVolFree);
#define _cleanup_pool_ _cleanup_(virStoragePoolFreep)
#define _cleanup_vol_  _cleanup_(virStorageVolFreep)

static char *xml_escape(const char *s)
{
	struct vn_strbuf b = VN_STRBUF_INIT;

	for (; *s; s++) {
		switch (*s) {
		case '&': vn_strbuf_printf(&b, "&amp;"); break;
		case '<': vn_strbuf_printf(&b, "&lt;"); break;
		case '>': vn_strbuf_printf(&b, "&gt;"); break;
		case '\'': vn_strbuf_printf(&b, "&apos;"); break;
		case '"': vn_strbuf_printf(&b, "&quot;"); break;
		default: vn_strbuf_append(&b, s, 1);
		}
	}
	return vn_strbuf_steal(&b);
}

/* An XPath string (or a count, as text) of an XML text; NULL when it does not parse or is empty. */
static char *xpath_string(const char *xml, const char *expr)
{
	xmlDoc *doc = xmlReadMemory(xml, (int)strlen(xml), "libvirt.xml", NULL,
				    XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
	char *out = NULL;

	if (!doc)
		return NULL;
	xmlXPathContext *ctx = xmlXPathNewContext(doc);
	xmlXPathObject *o = ctx ? xmlXPathEvalExpression((const xmlChar *)expr, ctx) : NULL;
	xmlChar *s = o ? xmlXPathCastToString(o) : NULL;
	if (s && *s)
		out = vn_xstrdup((const char *)s);
	xmlFree(s);
	xmlXPathFreeObject(o);
	xmlXPathFreeContext(ctx);
	xmlFreeDoc(doc);
	return out;
}

/* A URI's path ("/system", "/session", "/default"), without its query; "" when it has none. */
static char *uri_path(const char *uri)
{
	const char *p = strstr(uri, "://");

	if (!p)
		return vn_xstrdup("");
	p += 3;
	p += strcspn(p, "/?");
	return vn_xstrndup(p, *p == '/' ? strcspn(p, "?") : 0);
}

/*
 * Volume names are ours (a digest and a suffix, a guest's disk): one file
 * name in the pool dir. '@' parts a guest's name (which never has one) from
 * its disk's, so one guest's volumes are never taken for another's.
 */
static int volume_name_check(const char *name, struct vn_error *err)
{
	size_t n = strlen(name);

	if (n == 0 || n > 200 || name[0] == '.' ||
	    strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			 "0123456789._-@") != n)
		return vn_input_error(err, "'%s' is not a volume name (1-200 of A-Z a-z 0-9 . _ - @, no leading dot)",
				      name);
	return 0;
}

static virStoragePoolPtr pool_lookup(struct vn_virt *v, struct vn_error *err)
{
	virStoragePoolPtr p = virStoragePoolLookupByName(v->conn, VN_POOL_NAME);

	if (!p) {
		if (virGetLastErrorCode() == VIR_ERR_NO_STORAGE_POOL)
			vn_infra_error(err, -ENOENT, "%s: no storage pool '%s' (vnuma hosts check creates it)", v->uri,
				       VN_POOL_NAME);
		else
			vn_virt_error(err, "%s: storage pool '%s'", v->uri, VN_POOL_NAME);
	}
	return p;
}

int vn_virt_pool_ensure(struct vn_virt *v, const char *pool_dir, struct vn_error *err)
{
	_cleanup_pool_ virStoragePoolPtr p = NULL;
	_cleanup_free_ char *path = NULL;

	if (vn_virt_uri_is_embedded(v->uri))
		return -EOPNOTSUPP;
	/*
	 * Once per connection: volumes made since, by any vnuma, went through
	 * this daemon, which knows them without another refresh (a dir scan).
	 */
	if (v->pool_ready)
		return 0;
	p = virStoragePoolLookupByName(v->conn, VN_POOL_NAME);
	if (p) {
		int active = virStoragePoolIsActive(p);
		/* An inactive pool whose directory went away (a cleaned /tmp) is built again first. */
		if (active < 0 || (!active && virStoragePoolCreate(p, 0) < 0 &&
				   (virStoragePoolBuild(p, 0) < 0 || virStoragePoolCreate(p, 0) < 0)))
			return vn_virt_error(err, "%s: cannot start storage pool '%s'", v->uri, VN_POOL_NAME);
		/* Volumes another vnuma or a crash left are only seen after a refresh. */
		if (virStoragePoolRefresh(p, 0) < 0)
			return vn_virt_error(err, "%s: cannot refresh storage pool '%s'", v->uri, VN_POOL_NAME);
		v->pool_ready = true;
		return 0;
	}
	if (virGetLastErrorCode() != VIR_ERR_NO_STORAGE_POOL)
		return vn_virt_error(err, "%s: cannot look up storage pool '%s'", v->uri, VN_POOL_NAME);
	if (!pool_dir) {
		_cleanup_free_ char *upath = uri_path(v->uri);
		if (strcmp(upath, "/system") != 0)
			return vn_input_error(err,
					      "%s: not a privileged connection, so no default directory for its "
					      "storage pool: add pool=DIR (a directory that host's libvirt user may "
					      "write) to its hosts line",
					      v->uri);
		pool_dir = VN_POOL_DIR_SYSTEM;
	}
	path = xml_escape(pool_dir);
	_cleanup_free_ char *xml = vn_xasprintf("<pool type='dir'>\n  <name>%s</name>\n  <target>\n"
						"    <path>%s</path>\n  </target>\n</pool>\n",
						VN_POOL_NAME, path);
	p = virStoragePoolDefineXML(v->conn, xml, 0);
	if (!p)
		return vn_virt_error(err, "%s: cannot define storage pool '%s' at %s", v->uri, VN_POOL_NAME, pool_dir);
	/* Build makes the directory (and leaves one that exists alone); a pool that will not start is undone. */
	if (virStoragePoolBuild(p, 0) < 0 || virStoragePoolCreate(p, 0) < 0 || virStoragePoolSetAutostart(p, 1) < 0) {
		int rc =
			vn_virt_error(err, "%s: cannot set up storage pool '%s' at %s", v->uri, VN_POOL_NAME, pool_dir);
		if (virStoragePoolIsActive(p) == 1)
			virStoragePoolDestroy(p);
		virStoragePoolUndefine(p);
		return rc;
	}
	v->pool_ready = true;
	return 1;
}

char *vn_virt_volume_name(const char *local_path, const char *hex)
{
	const char *base = strrchr(local_path, '/');
	base = base ? base + 1 : local_path;
	const char *dot = strrchr(base, '.');
	const char *suffix = dot ? dot + 1 : base;

	/* A compressed file keeps what it compresses: initramfs-*.cpio.gz is a cpio.gz. */
	if (dot && dot > base && (!strcmp(suffix, "gz") || !strcmp(suffix, "xz") || !strcmp(suffix, "zst"))) {
		const char *prev = dot - 1;
		while (prev > base && *prev != '.')
			prev--;
		if (*prev == '.')
			suffix = prev + 1;
	}
	/* Only a word (qcow2, elf, bzImage, cpio.gz) names a kind; a version (vmlinuz-6.1.0-18) does not. */
	size_t n = strlen(suffix);
	bool word = n > 0 && n <= 16 &&
		    strspn(suffix, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.") == n &&
		    ((suffix[0] >= 'a' && suffix[0] <= 'z') || (suffix[0] >= 'A' && suffix[0] <= 'Z'));
	return vn_xasprintf("%s.%s", hex, word ? suffix : "bin");
}

static virStorageVolPtr vol_lookup(virStoragePoolPtr p, const char *name)
{
	return virStorageVolLookupByName(p, name);
}

/* Delete the volume name if it is there; 0 when it is gone. */
static int vol_delete(struct vn_virt *v, virStoragePoolPtr p, const char *name, struct vn_error *err)
{
	_cleanup_vol_ virStorageVolPtr vol = vol_lookup(p, name);

	if (!vol)
		return virGetLastErrorCode() == VIR_ERR_NO_STORAGE_VOL
			       ? 0
			       : vn_virt_error(err, "%s: cannot look up volume %s", v->uri, name);
	if (virStorageVolDelete(vol, 0) < 0)
		return vn_virt_error(err, "%s: cannot delete volume %s", v->uri, name);
	return 0;
}

static virStorageVolPtr vol_create(virStoragePoolPtr p, const char *name, uint64_t capacity, const char *format,
				   const char *backing)
{
	_cleanup_free_ char *bxml = NULL;

	if (backing) {
		_cleanup_free_ char *b = xml_escape(backing);
		size_t n = strlen(backing);
		bool qcow2 = n > 6 && strcmp(backing + n - 6, ".qcow2") == 0;
		bxml = vn_xasprintf("  <backingStore>\n    <path>%s</path>\n    <format type='%s'/>\n"
				    "  </backingStore>\n",
				    b, qcow2 ? "qcow2" : "raw");
	}
	_cleanup_free_ char *xml = vn_xasprintf("<volume>\n  <name>%s</name>\n  <capacity unit='bytes'>%" PRIu64
						"</capacity>\n  <target>\n    <format type='%s'/>\n  </target>\n"
						"%s</volume>\n",
						name, capacity, format, bxml ? bxml : "");
	return virStorageVolCreateXML(p, xml, 0);
}

/* Stream fd's size bytes into vol; on any failure the stream is aborted. */
static int send_file(struct vn_virt *v, virStorageVolPtr vol, int fd, uint64_t size, const char *local,
		     struct vn_error *err)
{
	_cleanup_stream_ virStreamPtr st = virStreamNew(v->conn, 0);
	_cleanup_free_ char *buf = vn_xmalloc(UPLOAD_CHUNK);
	uint64_t sent = 0;
	int rc = 0;

	if (!st)
		return vn_virt_error(err, "%s: cannot open a stream", v->uri);
	if (virStorageVolUpload(vol, st, 0, size, 0) < 0)
		return vn_virt_error(err, "%s: cannot upload %s", v->uri, local);
	while (sent < size) {
		if (vn_was_interrupted()) {
			rc = vn_infra_error(err, -EINTR, "%s: upload of %s interrupted", v->uri, local);
			break;
		}
		size_t want = size - sent < UPLOAD_CHUNK ? (size_t)(size - sent) : UPLOAD_CHUNK;
		ssize_t n = read(fd, buf, want);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = vn_infra_error(err, n < 0 ? -errno : -EIO, "%s: %s", local,
					    n < 0 ? strerror(errno) : "it shrank while being uploaded");
			break;
		}
		for (ssize_t off = 0; off < n && rc == 0;) {
			int w = virStreamSend(st, buf + off, (size_t)(n - off));
			if (w < 0)
				rc = vn_virt_error(err, "%s: upload of %s failed after %" PRIu64 " bytes", v->uri,
						   local, sent + (uint64_t)off);
			else
				off += w;
		}
		if (rc < 0)
			break;
		sent += (uint64_t)n;
	}
	if (rc < 0) {
		virStreamAbort(st);
		return rc;
	}
	if (virStreamFinish(st) < 0)
		return vn_virt_error(err, "%s: upload of %s did not finish", v->uri, local);
	return 0;
}

static int vol_path(struct vn_virt *v, virStorageVolPtr vol, const char *name, char **out, struct vn_error *err)
{
	char *path = virStorageVolGetPath(vol);

	if (!path)
		return vn_virt_error(err, "%s: no path for volume %s", v->uri, name);
	*out = path;
	return 0;
}

/*
 * Uploads of one volume to one host from this machine take turns (a lock in
 * STATE/cache/uploads named by host and volume), so that one vnuma process
 * never deletes as half-done a volume another is still sending. Ctrl-C ends
 * the wait. Returns the locked fd.
 */
static int upload_lock(struct vn_virt *v, const char *name, struct vn_error *err)
{
	uint8_t d[VN_SHA256_LEN];
	char hex[VN_SHA256_HEX_LEN + 1];
	struct vn_sha256 c;
	int rc;

	vn_sha256_init(&c);
	vn_sha256_update(&c, v->uri, strlen(v->uri) + 1);
	vn_sha256_update(&c, name, strlen(name));
	vn_sha256_final(&c, d);
	_cleanup_free_ char *dir = vn_state_uploads_dir(v->state_dir);
	if ((rc = vn_mkdir_p(dir, 0700, err)) < 0)
		return rc;
	_cleanup_free_ char *path = vn_state_upload_lock(v->state_dir, vn_sha256_hex(d, hex));
	_cleanup_close_ int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return vn_infra_error(err, -errno, "cannot open %s: %s", path, strerror(errno));
	while (flock(fd, LOCK_EX) < 0) {
		if (errno != EINTR)
			return vn_infra_error(err, -errno, "cannot lock %s: %s", path, strerror(errno));
		if (vn_was_interrupted())
			return vn_infra_error(err, -EINTR, "interrupted while waiting for another upload of %s to %s",
					      name, v->uri);
	}
	return steal_fd(&fd);
}

/* A volume that is complete: its marker exists and its size is the file's. */
static bool vol_complete(virStoragePoolPtr p, virStorageVolPtr vol, const char *marker, uint64_t size)
{
	_cleanup_vol_ virStorageVolPtr m = vol_lookup(p, marker);
	virStorageVolInfo info;

	return m && virStorageVolGetInfo(vol, &info) == 0 && info.capacity == size;
}

int vn_virt_volume_upload(struct vn_virt *v, const char *local_path, char **remote_path, bool *uploaded,
			  struct vn_error *err)
{
	_cleanup_pool_ virStoragePoolPtr p = NULL;
	_cleanup_vol_ virStorageVolPtr vol = NULL;
	_cleanup_vol_ virStorageVolPtr done = NULL;
	_cleanup_close_ int fd = -1;
	uint8_t digest[VN_SHA256_LEN];
	char hex[VN_SHA256_HEX_LEN + 1];
	struct stat st;
	int rc;

	*uploaded = false;
	if (vn_virt_uri_is_embedded(v->uri))
		return -EOPNOTSUPP;
	fd = open(local_path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 || fstat(fd, &st) < 0)
		return vn_infra_error(err, -errno, "cannot open %s: %s", local_path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return vn_infra_error(err, -EINVAL, "%s: not a regular file", local_path);
	_cleanup_free_ char *memo = vn_state_cache_dir(v->state_dir);
	if ((rc = vn_sha256_file_memo(local_path, memo, digest, err)) < 0)
		return rc;
	_cleanup_free_ char *name = vn_virt_volume_name(local_path, vn_sha256_hex(digest, hex));
	_cleanup_free_ char *marker = vn_xasprintf("%s%s", name, VN_VOLUME_DONE_SUFFIX);
	if (!(p = pool_lookup(v, err)))
		return -ENOENT;
	_cleanup_close_ int lock = upload_lock(v, name, err);
	if (lock < 0)
		return lock;

	vol = vol_lookup(p, name);
	if (vol && vol_complete(p, vol, marker, (uint64_t)st.st_size))
		return vol_path(v, vol, name, remote_path, err);
	/* Half an upload (or a marker without its volume): neither is kept. */
	if ((rc = vol_delete(v, p, marker, err)) < 0 || (rc = vol_delete(v, p, name, err)) < 0)
		return rc;
	if (vol)
		virStorageVolFree(steal_pointer(&vol));
	if (!(vol = vol_create(p, name, (uint64_t)st.st_size, "raw", NULL)))
		return vn_virt_error(err, "%s: cannot create volume %s for %s", v->uri, name, local_path);
	if ((rc = send_file(v, vol, fd, (uint64_t)st.st_size, local_path, err)) < 0 ||
	    !(done = vol_create(p, marker, 0, "raw", NULL))) {
		if (rc == 0)
			rc = vn_virt_error(err, "%s: cannot create volume %s", v->uri, marker);
		/* A dead host keeps its half: the missing marker makes the next upload redo it. */
		virStorageVolDelete(vol, 0);
		return rc;
	}
	*uploaded = true;
	return vol_path(v, vol, name, remote_path, err);
}

/* The pool that holds our volume name: -EOPNOTSUPP where the embedded driver keeps no pools. */
static int volume_pool(struct vn_virt *v, const char *name, virStoragePoolPtr *p, struct vn_error *err)
{
	int rc;

	if (vn_virt_uri_is_embedded(v->uri))
		return -EOPNOTSUPP;
	if ((rc = volume_name_check(name, err)) < 0)
		return rc;
	if (!(*p = pool_lookup(v, err)))
		return -ENOENT;
	return 0;
}

int vn_virt_volume_create(struct vn_virt *v, const char *name, uint64_t capacity, const char *format,
			  const char *backing_path, char **remote_path, struct vn_error *err)
{
	_cleanup_pool_ virStoragePoolPtr p = NULL;
	_cleanup_vol_ virStorageVolPtr vol = NULL;
	int rc;

	if ((rc = volume_pool(v, name, &p, err)) < 0)
		return rc;
	if (strcmp(format, "raw") != 0 && strcmp(format, "qcow2") != 0)
		return vn_input_error(err, "volume %s: format '%s' is neither raw nor qcow2", name, format);
	/* A guest's disk left by a run that died is stale, never reused. */
	if ((rc = vol_delete(v, p, name, err)) < 0)
		return rc;
	if (!(vol = vol_create(p, name, capacity, format, backing_path)))
		return vn_virt_error(err, "%s: cannot create volume %s", v->uri, name);
	return vol_path(v, vol, name, remote_path, err);
}

int vn_virt_volume_delete(struct vn_virt *v, const char *name, struct vn_error *err)
{
	_cleanup_pool_ virStoragePoolPtr p = NULL;
	int rc;

	if ((rc = volume_pool(v, name, &p, err)) < 0)
		return rc;
	return vol_delete(v, p, name, err);
}

unsigned vn_virt_host_cpus(struct vn_virt *v)
{
	virNodeInfo ni;

	return virNodeGetInfo(v->conn, &ni) < 0 ? 0 : ni.cpus;
}

int vn_virt_host_info(struct vn_virt *v, struct vn_virt_host_info *out, struct vn_error *err)
{
	virNodeInfo ni;

	*out = (struct vn_virt_host_info){0};
	if (virNodeGetInfo(v->conn, &ni) < 0)
		return vn_virt_error(err, "%s: cannot read the host's CPUs and memory", v->uri);
	out->cpus = ni.cpus;
	out->memory = (uint64_t)ni.memory << 10;
	vn_virt_versions(v, &out->libvirt_version, &out->hypervisor_version);
	out->hostname = virConnectGetHostname(v->conn);
	_cleanup_free_ char *caps = virConnectGetCapabilities(v->conn);
	if (!caps)
		return vn_virt_error(err, "%s: cannot read the host's capabilities", v->uri);
	_cleanup_free_ char *kvm =
		xpath_string(caps, "count(/capabilities/guest[arch/@name='x86_64']/arch/domain[@type='kvm'])");
	out->kvm_offered = kvm && strcmp(kvm, "0") != 0;

	if (vn_virt_uri_is_embedded(v->uri))
		return 0;
	_cleanup_pool_ virStoragePoolPtr p = virStoragePoolLookupByName(v->conn, VN_POOL_NAME);
	if (!p) {
		if (virGetLastErrorCode() == VIR_ERR_NO_STORAGE_POOL)
			return 0;
		return vn_virt_error(err, "%s: cannot look up storage pool '%s'", v->uri, VN_POOL_NAME);
	}
	virStoragePoolInfo pi;
	_cleanup_free_ char *xml = virStoragePoolGetXMLDesc(p, 0);
	if (virStoragePoolGetInfo(p, &pi) < 0 || !xml)
		return vn_virt_error(err, "%s: cannot read storage pool '%s'", v->uri, VN_POOL_NAME);
	out->pool.exists = true;
	out->pool.active = pi.state == VIR_STORAGE_POOL_RUNNING;
	out->pool.capacity = pi.capacity;
	out->pool.available = pi.available;
	out->pool.path = xpath_string(xml, "string(/pool/target/path)");
	return 0;
}

void vn_virt_host_info_clear(struct vn_virt_host_info *h)
{
	vn_free_all(h->hostname, h->pool.path);
	*h = (struct vn_virt_host_info){0};
}

unsigned vn_virt_host_capacity(const struct vn_virt_host_info *h, unsigned guest_vcpus, uint64_t guest_memory)
{
	uint64_t by_cpus = guest_vcpus ? h->cpus / guest_vcpus : h->cpus;
	uint64_t by_mem = guest_memory ? h->memory / 4 * 3 / guest_memory : by_cpus;
	uint64_t n = by_cpus < by_mem ? by_cpus : by_mem;

	return n < 1 ? 1 : n > VN_VIRT_HOST_CAPACITY_MAX ? VN_VIRT_HOST_CAPACITY_MAX : (unsigned)n;
}
