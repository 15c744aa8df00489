/* Guest image recipes: guest-images/NAME.json into struct vn_image_recipe. */
#include "guest/image-recipe.h"

#include <ctype.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/file.h"
#include "util/json.h"
#include "util/parse.h"
#include "util/paths.h"
#include "util/sha256.h"

const char *vn_image_kind_name(enum vn_image_kind k)
{
	return k == VN_IMAGE_DISK ? "disk" : "initramfs";
}

void vn_image_recipe_free(struct vn_image_recipe *r)
{
	if (!r)
		return;
	vn_free_all(r->path, r->name, r->description, r->suite, r->mirror, r->sha256);
	vn_strv_free(r->with);
	vn_strv_free(r->packages);
	free(r);
}

/* Debian's rule for package names: what dpkg-query and debootstrap are handed, never an option. */
static bool debian_name_ok(const char *s)
{
	return isalnum((unsigned char)s[0]) && strlen(s) >= 2 &&
	       strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789+.-") == strlen(s);
}

/* A package list (absent: empty), each a Debian package name, at most VN_IMAGE_PACKAGES_MAX. */
static int get_packages(const struct vn_json_reader *c, struct json_object *o, const char *key, char ***out, size_t *n)
{
	char path[VN_JSON_PATH_MAX], ip[VN_JSON_PATH_MAX];
	struct json_object *v = vn_json_get(o, key);
	int rc;

	*n = 0;
	*out = vn_xcalloc(1, sizeof(char *));
	if (!v)
		return 0;
	vn_json_path_key(path, "$", key);
	if ((rc = vn_json_strv_append(c, v, path, VN_JSON_NONEMPTY, out, n)) < 0)
		return rc;
	if (*n > VN_IMAGE_PACKAGES_MAX)
		return vn_json_bad(c, path, "%zu packages; at most %d", *n, VN_IMAGE_PACKAGES_MAX);
	for (size_t i = 0; i < *n; i++) {
		if (!debian_name_ok((*out)[i]))
			return vn_json_bad(c, vn_json_path_idx(ip, path, i), "\"%s\" is not a Debian package name",
					   (*out)[i]);
		for (size_t j = 0; j < i; j++)
			if (strcmp((*out)[i], (*out)[j]) == 0)
				return vn_json_bad(c, vn_json_path_idx(ip, path, i), "\"%s\" is listed twice",
						   (*out)[i]);
	}
	return 0;
}

static int parse_disk(const struct vn_json_reader *c, struct json_object *root, struct vn_image_recipe *r)
{
	static const char *const roots[] = {"busybox", "debootstrap", NULL};
	static const char *const busybox_keys[] = {"kind", "description", "root", "size", "with", NULL};
	static const char *const deb_keys[] = {"kind",   "description", "root", "size", "suite",
					       "mirror", "packages",    "with", NULL};
	_cleanup_free_ char *size = NULL;
	struct json_object *v;
	int root_kind, rc;

	if (!(v = vn_json_get(root, "root")))
		return vn_json_missing(c, "$", "root");
	if ((rc = vn_json_one_of(c, v, "$.root", roots, &root_kind)) < 0)
		return rc;
	r->root = root_kind == 1 ? VN_IMAGE_ROOT_DEBOOTSTRAP : VN_IMAGE_ROOT_BUSYBOX;
	if ((rc = vn_json_check_keys(c, root, "$", r->root == VN_IMAGE_ROOT_BUSYBOX ? busybox_keys : deb_keys)) < 0 ||
	    (rc = vn_json_get_str(c, root, "$", "size", VN_JSON_REQUIRED | VN_JSON_NONEMPTY, &size)) < 0)
		return rc;
	struct vn_error e = {0};
	if (vn_size_parse(size, &r->size, &e) < 0) {
		vn_error_clear(&e);
		return vn_json_bad(c, "$.size", "\"%s\" is not a size (128M, 4G)", size);
	}
	if (r->size < VN_IMAGE_SIZE_MIN || r->size > VN_IMAGE_SIZE_MAX || r->size % (1 << 20))
		return vn_json_bad(c, "$.size", "\"%s\": expected whole MiB from 32M to 64G", size);
	if (r->root == VN_IMAGE_ROOT_DEBOOTSTRAP) {
		if ((rc = vn_json_get_str(c, root, "$", "suite", VN_JSON_REQUIRED | VN_JSON_NAME, &r->suite)) < 0 ||
		    (rc = vn_json_get_str(c, root, "$", "mirror", VN_JSON_NONEMPTY, &r->mirror)) < 0 ||
		    (rc = get_packages(c, root, "packages", &r->packages, &r->npackages)) < 0)
			return rc;
		if (!r->mirror)
			r->mirror = vn_xstrdup("http://deb.debian.org/debian");
		if ((strncmp(r->mirror, "http://", 7) != 0 && strncmp(r->mirror, "https://", 8) != 0) ||
		    strpbrk(r->mirror, " \t\n'\"\\"))
			return vn_json_bad(c, "$.mirror", "\"%s\" is not an http(s) URL", r->mirror);
	}
	return 0;
}

int vn_image_recipe_parse(const char *text, size_t len, const char *path, struct vn_image_recipe **out,
			  struct vn_error *err)
{
	static const char *const kinds[] = {"initramfs", "disk", NULL};
	static const char *const initramfs_keys[] = {"kind", "description", "with", NULL};
	const struct vn_json_reader c = {.file = path, .err = err};
	_cleanup_json_ struct json_object *root = NULL;
	struct json_object *v;
	int kind, rc;

	if ((rc = vn_json_parse(text, path, &root, err)) < 0)
		return rc;
	struct vn_image_recipe *r = vn_xcalloc(1, sizeof(*r));
	r->path = vn_xstrdup(path);
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	size_t bl = strlen(base);
	r->name = vn_xstrndup(base, bl - (bl > 5 && strcmp(base + bl - 5, ".json") == 0 ? 5 : 0));
	uint8_t d[VN_SHA256_LEN];
	char hex[VN_SHA256_HEX_LEN + 1];
	struct vn_sha256 h;
	vn_sha256_init(&h);
	vn_sha256_update(&h, text, len);
	vn_sha256_final(&h, d);
	r->sha256 = vn_xstrdup(vn_sha256_hex(d, hex));

	if (!vn_json_name_ok(r->name)) {
		rc = vn_input_error(err,
				    "%s: the file name gives the image its name, and '%s' is not one (letters, "
				    "digits, '-', '_', '.')",
				    path, r->name);
		goto cleanup;
	}
	if ((rc = vn_json_check_type(&c, root, json_type_object, "$")) < 0)
		goto cleanup;
	if (!(v = vn_json_get(root, "kind"))) {
		rc = vn_json_missing(&c, "$", "kind");
		goto cleanup;
	}
	if ((rc = vn_json_one_of(&c, v, "$.kind", kinds, &kind)) < 0 ||
	    (rc = vn_json_get_str(&c, root, "$", "description", VN_JSON_NONEMPTY, &r->description)) < 0)
		goto cleanup;
	r->kind = kind == 1 ? VN_IMAGE_DISK : VN_IMAGE_INITRAMFS;
	if ((rc = get_packages(&c, root, "with", &r->with, &r->nwith)) < 0)
		goto cleanup;
	rc = r->kind == VN_IMAGE_INITRAMFS ? vn_json_check_keys(&c, root, "$", initramfs_keys)
					   : parse_disk(&c, root, r);
	if (!r->packages)
		r->packages = vn_xcalloc(1, sizeof(char *));
cleanup:
	if (rc < 0) {
		vn_image_recipe_free(r);
		return rc;
	}
	*out = r;
	return 0;
}

int vn_image_recipe_load(const char *path, struct vn_image_recipe **out, struct vn_error *err)
{
	_cleanup_free_ char *text = NULL;
	size_t len;
	int rc;

	if ((rc = vn_file_read(path, 1u << 20, &text, &len, err)) < 0)
		return vn_error_prefix(err, "guest image recipe");
	return vn_image_recipe_parse(text, len, path, out, err);
}

int vn_image_recipe_find(const char *arg, char **path, struct vn_error *err)
{
	return vn_paths_find(arg, "guest image recipe", "guest-images", ".json", NULL, path, err);
}
