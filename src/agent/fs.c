/*
 * The file-system requests vnuma cp needs beyond read and write: stat,
 * readdir, mkdir, chmod, rename, remove. Each is one system call or close
 * to it; the host decides what a copy means. Nothing here follows a symlink
 * unless asked to ("follow" on stat, for the path the user named).
 */
#define _XOPEN_SOURCE 700
#include "agent/agent-priv.h"
#include "agent/protocol.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *type_name(mode_t m)
{
	if (S_ISREG(m))
		return "file";
	if (S_ISDIR(m))
		return "dir";
	if (S_ISLNK(m))
		return "link";
	return "other";
}

static void add_stat(struct json_object *o, const struct stat *st)
{
	json_object_object_add(o, "type", json_object_new_string(type_name(st->st_mode)));
	json_object_object_add(o, "mode", json_object_new_int((int)(st->st_mode & 07777)));
	json_object_object_add(o, "size", json_object_new_int64((int64_t)st->st_size));
}

static void reply_errno(struct vn_agentd *d, struct json_object *id, const char *path)
{
	int e = errno;

	vn_agentd_reply_error(d, id, e, "%s: %s", path, strerror(e));
}

void vn_agentd_op_stat(struct vn_agentd *d, struct json_object *id, struct json_object *req)
{
	const char *path = vn_agentd_get_path(d, id, req, "path", "stat");
	struct json_object *v, *r;
	struct stat st;
	bool follow = json_object_object_get_ex(req, "follow", &v) && json_object_get_boolean(v);

	if (!path)
		return;
	if ((follow ? stat(path, &st) : lstat(path, &st)) < 0) {
		reply_errno(d, id, path);
		return;
	}
	r = vn_agentd_reply_new(id, true);
	add_stat(r, &st);
	vn_agentd_send(d, r);
}

void vn_agentd_op_readdir(struct vn_agentd *d, struct json_object *id, struct json_object *req)
{
	const char *path = vn_agentd_get_path(d, id, req, "path", "readdir");
	struct json_object *r, *list;
	struct dirent *de;
	size_t n = 0;
	DIR *dir;

	if (!path)
		return;
	dir = opendir(path);
	if (!dir) {
		reply_errno(d, id, path);
		return;
	}
	list = json_object_new_array();
	errno = 0;
	while ((de = readdir(dir))) {
		struct json_object *e;
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (++n > VN_AGENT_READDIR_MAX) {
			vn_agentd_reply_error(d, id, EFBIG, "%s: more than %u entries", path, VN_AGENT_READDIR_MAX);
			goto cleanup;
		}
		/* Gone since readdir saw it: not an error, just not there. */
		if (fstatat(dirfd(dir), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		e = json_object_new_object();
		json_object_object_add(e, "name", json_object_new_string(de->d_name));
		add_stat(e, &st);
		json_object_array_add(list, e);
		errno = 0;
	}
	if (errno) {
		reply_errno(d, id, path);
		goto cleanup;
	}
	r = vn_agentd_reply_new(id, true);
	json_object_object_add(r, "entries", json_object_get(list));
	vn_agentd_send(d, r);
cleanup:
	json_object_put(list);
	closedir(dir);
}

/* Sets exactly mode, whatever the umask did at creation. */
static void set_mode(struct vn_agentd *d, struct json_object *id, struct json_object *req, const char *path,
		     mode_t mode)
{
	vn_agentd_get_mode(req, &mode);
	if (chmod(path, mode) < 0) {
		reply_errno(d, id, path);
		return;
	}
	vn_agentd_send(d, vn_agentd_reply_new(id, true));
}

void vn_agentd_op_mkdir(struct vn_agentd *d, struct json_object *id, struct json_object *req)
{
	const char *path = vn_agentd_get_path(d, id, req, "path", "mkdir");

	if (!path)
		return;
	if (mkdir(path, 0700) < 0) {
		reply_errno(d, id, path);
		return;
	}
	set_mode(d, id, req, path, 0755);
}

void vn_agentd_op_chmod(struct vn_agentd *d, struct json_object *id, struct json_object *req)
{
	const char *path = vn_agentd_get_path(d, id, req, "path", "chmod");
	mode_t mode;

	if (!path)
		return;
	if (!vn_agentd_get_mode(req, &mode)) {
		vn_agentd_reply_error(d, id, EINVAL, "chmod: \"mode\" is required");
		return;
	}
	set_mode(d, id, req, path, mode);
}

void vn_agentd_op_rename(struct vn_agentd *d, struct json_object *id, struct json_object *req)
{
	const char *from = vn_agentd_get_path(d, id, req, "path", "rename");
	const char *to = from ? vn_agentd_get_path(d, id, req, "to", "rename") : NULL;

	if (!to)
		return;
	if (rename(from, to) < 0) {
		reply_errno(d, id, to);
		return;
	}
	vn_agentd_send(d, vn_agentd_reply_new(id, true));
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return (flag == FTW_DP ? rmdir(path) : unlink(path)) < 0 && errno != ENOENT ? -1 : 0;
}

void vn_agentd_op_remove(struct vn_agentd *d, struct json_object *id, struct json_object *req)
{
	const char *path = vn_agentd_get_path(d, id, req, "path", "remove");
	struct json_object *v;
	bool recursive = json_object_object_get_ex(req, "recursive", &v) && json_object_get_boolean(v);
	struct stat st;
	int r;

	if (!path)
		return;
	if (lstat(path, &st) < 0) {
		reply_errno(d, id, path);
		return;
	}
	if (!S_ISDIR(st.st_mode))
		r = unlink(path);
	else if (recursive) /* FTW_PHYS: a symlink inside the tree is removed, never followed. */
		r = nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS);
	else
		r = rmdir(path);
	if (r < 0) {
		reply_errno(d, id, path);
		return;
	}
	vn_agentd_send(d, vn_agentd_reply_new(id, true));
}
