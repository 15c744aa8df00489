/*
 * Recipe files. json-c keeps no line numbers for values, so errors name the
 * JSON path ("kernels/x.json: $.config.fragments[1]: ...") like the scenario
 * schema does.
 */
#include "kernel/recipe.h"

#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/file.h"

struct ctx {
	const char *file;
	struct vn_error *err;
};

static int bad(struct ctx *c, const char *path, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int bad(struct ctx *c, const char *path, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return vn_input_error(c->err, "%s: %s: %s", c->file, path, msg);
}

static const char *type_name(struct json_object *v)
{
	return v ? json_type_to_name(json_object_get_type(v)) : "null";
}

static int check_keys(struct ctx *c, struct json_object *o, const char *path, const char *const *known)
{
	json_object_object_foreach(o, key, val)
	{
		(void)val;
		bool ok = false;
		for (const char *const *k = known; *k && !ok; k++)
			ok = strcmp(*k, key) == 0;
		if (!ok) {
			char buf[256] = "";
			for (const char *const *k = known; *k; k++)
				snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%s%s", k == known ? "" : ", ", *k);
			return bad(c, path, "unknown key \"%s\" (known: %s)", key, buf);
		}
	}
	return 0;
}

static int get_str(struct ctx *c, struct json_object *o, const char *parent, const char *key, bool required,
		   char **out)
{
	struct json_object *v;
	char path[256];

	snprintf(path, sizeof(path), "%s.%s", parent, key);
	if (!json_object_object_get_ex(o, key, &v)) {
		if (required)
			return bad(c, parent, "missing \"%s\"", key);
		return 0;
	}
	if (!json_object_is_type(v, json_type_string))
		return bad(c, path, "expected a string, got %s", type_name(v));
	if (!*json_object_get_string(v))
		return bad(c, path, "must not be empty");
	*out = strdup(json_object_get_string(v));
	return *out ? 0 : -ENOMEM;
}

static int get_str_array(struct ctx *c, struct json_object *o, const char *parent, const char *key, char ***out,
			 size_t *n)
{
	struct json_object *v;
	char path[256];

	*n = 0;
	*out = calloc(1, sizeof(char *));
	if (!*out)
		return -ENOMEM;
	snprintf(path, sizeof(path), "%s.%s", parent, key);
	if (!json_object_object_get_ex(o, key, &v))
		return 0;
	if (!json_object_is_type(v, json_type_array))
		return bad(c, path, "expected an array of strings, got %s", type_name(v));
	size_t len = json_object_array_length(v);
	char **a = realloc(*out, (len + 1) * sizeof(char *));
	if (!a)
		return -ENOMEM;
	*out = a;
	for (size_t i = 0; i < len; i++) {
		struct json_object *e = json_object_array_get_idx(v, i);
		a[i] = NULL;
		if (!json_object_is_type(e, json_type_string) || !*json_object_get_string(e)) {
			char ep[300];
			snprintf(ep, sizeof(ep), "%s[%zu]", path, i);
			return bad(c, ep, "expected a non-empty string, got %s", type_name(e));
		}
		if (!(a[i] = strdup(json_object_get_string(e))))
			return -ENOMEM;
		a[i + 1] = NULL;
		*n = i + 1;
	}
	return 0;
}

/* A path as written in the recipe: absolute, or relative to the recipe's own folder. */
static char *beside(const struct vn_recipe *r, const char *p)
{
	char *s = NULL;
	if (p[0] == '/')
		return strdup(p);
	if (asprintf(&s, "%s/%s", r->dir, p) < 0)
		return NULL;
	return s;
}

/* Like beside(), for paths that name the recipe's neighbours (image, tree). */
static char *near_recipe(const struct vn_recipe *r, const char *p)
{
	_cleanup_free_ char *d = strdup(r->path);
	char *s = NULL;
	if (p[0] == '/' || !d)
		return strdup(p);
	*strrchr(d, '/') = '\0';
	if (asprintf(&s, "%s/%s", d, p) < 0)
		return NULL;
	return s;
}

static bool is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool is_file(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int parse_tree(struct ctx *c, struct vn_recipe *r)
{
	char buf[PATH_MAX];

	_cleanup_free_ char *p = near_recipe(r, r->tree);
	if (!p)
		return -ENOMEM;
	/* "linux-source-6.1" names Debian's package, which installs the tarball. */
	if (!strchr(r->tree, '/') && access(p, F_OK) != 0) {
		snprintf(buf, sizeof(buf), "/usr/src/%s.tar.xz", r->tree);
		if (!is_file(buf))
			return bad(c, "$.tree", "%s not found (install the Debian package %s)", buf, r->tree);
		r->tree_kind = VN_TREE_TARBALL;
		r->tree_path = strdup(buf);
		return r->tree_path ? 0 : -ENOMEM;
	}
	snprintf(buf, sizeof(buf), "%s/.git", p);
	if (is_dir(p) && access(buf, F_OK) == 0) {
		r->tree_kind = VN_TREE_GIT;
		r->tree_path = realpath(p, NULL);
		return r->tree_path ? 0 : -ENOMEM;
	}
	if (is_file(p) && strstr(p, ".tar")) {
		r->tree_kind = VN_TREE_TARBALL;
		r->tree_path = realpath(p, NULL);
		return r->tree_path ? 0 : -ENOMEM;
	}
	return bad(c, "$.tree", "%s is neither a git checkout nor a kernel source tarball", p);
}

static bool valid_option(const char *s)
{
	if (strncmp(s, "CONFIG_", 7) != 0 || !s[7])
		return false;
	for (const char *p = s + 7; *p; p++)
		if (!((*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_'))
			return false;
	return true;
}

static int parse_source(struct ctx *c, struct json_object *root, struct vn_recipe *r)
{
	static const char *const cfg_keys[] = {"base", "fragments", "require", NULL};
	struct json_object *cfg;
	int rc;

	if ((rc = get_str(c, root, "$", "tree", true, &r->tree)) < 0 || (rc = parse_tree(c, r)) < 0)
		return rc;
	if ((rc = get_str_array(c, root, "$", "patches", &r->patch_names, &r->npatches)) < 0)
		return rc;
	if (!(r->patches = calloc(r->npatches + 1, sizeof(char *))))
		return -ENOMEM;
	for (size_t i = 0; i < r->npatches; i++) {
		if (!(r->patches[i] = beside(r, r->patch_names[i])))
			return -ENOMEM;
		if (!is_file(r->patches[i])) {
			char p[64];
			snprintf(p, sizeof(p), "$.patches[%zu]", i);
			return bad(c, p, "%s: no such file (patches live beside the recipe, in %s/)", r->patches[i],
				   r->dir);
		}
	}
	if (!json_object_object_get_ex(root, "config", &cfg))
		return bad(c, "$", "missing \"config\" (a source build needs {\"base\": ..., \"fragments\": [...]})");
	if (!json_object_is_type(cfg, json_type_object))
		return bad(c, "$.config", "expected an object, got %s", type_name(cfg));
	if ((rc = check_keys(c, cfg, "$.config", cfg_keys)) < 0 ||
	    (rc = get_str(c, cfg, "$.config", "base", true, &r->config_base)) < 0 ||
	    (rc = get_str_array(c, cfg, "$.config", "fragments", &r->fragment_names, &r->nfragments)) < 0 ||
	    (rc = get_str_array(c, cfg, "$.config", "require", &r->require, &r->nrequire)) < 0)
		return rc;
	/* The base is a make target; keep it to the names make defines for configs. */
	if (strpbrk(r->config_base, "/ \t") || !strstr(r->config_base, "config"))
		return bad(c, "$.config.base", "\"%s\" is not a config target (tinyconfig, defconfig, x86_64_defconfig, ...)",
			   r->config_base);
	if (!(r->fragments = calloc(r->nfragments + 1, sizeof(char *))))
		return -ENOMEM;
	for (size_t i = 0; i < r->nfragments; i++) {
		_cleanup_free_ char *p = beside(r, r->fragment_names[i]);
		if (!p)
			return -ENOMEM;
		if (is_file(p))
			r->fragments[i] = steal_pointer(&p);
		else if (strchr(r->fragment_names[i], '/')) {
			char jp[64];
			snprintf(jp, sizeof(jp), "$.config.fragments[%zu]", i);
			return bad(c, jp, "%s: no such file", p);
		}
	}
	for (size_t i = 0; i < r->nrequire; i++) {
		if (!valid_option(r->require[i])) {
			char jp[64];
			snprintf(jp, sizeof(jp), "$.config.require[%zu]", i);
			return bad(c, jp, "\"%s\" is not a CONFIG_ option name", r->require[i]);
		}
	}
	return 0;
}

int vn_recipe_load(const char *path, struct vn_recipe **out, struct vn_error *err)
{
	static const char *const keys[] = {"type", "description", "image", "modules", "config", "tree", "patches", NULL};
	static const char *const source_keys[] = {"type", "description", "tree", "patches", "config", NULL};
	static const char *const prebuilt_keys[] = {"type", "description", "image", "modules", "config", NULL};
	static const char *const stock_keys[] = {"type", "description", NULL};
	struct ctx c = {.file = path, .err = err};
	_cleanup_free_ char *type = NULL;
	struct json_object *root;
	struct vn_recipe *r;
	int rc;

	/* A regular file only (util/file.h): a FIFO named as a recipe must not block. */
	_cleanup_free_ char *text = NULL;
	size_t len;
	enum json_tokener_error jerr = json_tokener_success;
	if ((rc = vn_file_read(path, 1u << 20, &text, &len, err)) < 0)
		return vn_error_prefix(err, "kernel recipe");
	if (!(root = json_tokener_parse_verbose(text, &jerr)))
		return vn_input_error(err, "%s: not valid JSON: %s", path, json_tokener_error_desc(jerr));
	if (!(r = calloc(1, sizeof(*r)))) {
		json_object_put(root);
		return -ENOMEM;
	}
	r->path = realpath(path, NULL);
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	r->name = strndup(base, strlen(base) - (strlen(base) > 5 && !strcmp(base + strlen(base) - 5, ".json") ? 5 : 0));
	if (!r->path || !r->name) {
		rc = -ENOMEM;
		goto cleanup;
	}
	*strrchr(r->path, '/') = '\0';
	rc = asprintf(&r->dir, "%s/%s", r->path, r->name) < 0 ? -ENOMEM : 0;
	r->path[strlen(r->path)] = '/';
	if (rc < 0)
		goto cleanup;

	if (!json_object_is_type(root, json_type_object)) {
		rc = bad(&c, "$", "expected an object, got %s", type_name(root));
		goto cleanup;
	}
	if ((rc = check_keys(&c, root, "$", keys)) < 0 || (rc = get_str(&c, root, "$", "type", true, &type)) < 0 ||
	    (rc = get_str(&c, root, "$", "description", false, &r->description)) < 0)
		goto cleanup;
	if (strcmp(type, "stock") == 0) {
		r->type = VN_RECIPE_STOCK;
		rc = check_keys(&c, root, "$", stock_keys);
	} else if (strcmp(type, "prebuilt") == 0) {
		_cleanup_free_ char *img = NULL, *mods = NULL, *cfg = NULL;
		r->type = VN_RECIPE_PREBUILT;
		if ((rc = check_keys(&c, root, "$", prebuilt_keys)) < 0 ||
		    (rc = get_str(&c, root, "$", "image", true, &img)) < 0 ||
		    (rc = get_str(&c, root, "$", "modules", false, &mods)) < 0 ||
		    (rc = get_str(&c, root, "$", "config", false, &cfg)) < 0)
			goto cleanup;
		r->image = near_recipe(r, img);
		r->modules = mods ? near_recipe(r, mods) : NULL;
		r->config = cfg ? near_recipe(r, cfg) : NULL;
		if (!is_file(r->image))
			rc = bad(&c, "$.image", "%s: no such file", r->image);
		else if (r->modules && !is_dir(r->modules))
			rc = bad(&c, "$.modules", "%s: not a directory", r->modules);
		else if (r->config && !is_file(r->config))
			rc = bad(&c, "$.config", "%s: no such file", r->config);
	} else if (strcmp(type, "source") == 0) {
		r->type = VN_RECIPE_SOURCE;
		if ((rc = check_keys(&c, root, "$", source_keys)) == 0)
			rc = parse_source(&c, root, r);
	} else {
		rc = bad(&c, "$.type", "\"%s\" is not one of stock, prebuilt, source", type);
	}
cleanup:
	json_object_put(root);
	if (rc < 0) {
		vn_recipe_free(r);
		return rc;
	}
	*out = r;
	return 0;
}

int vn_recipe_find(const char *spec, char **path)
{
	size_t n = strlen(spec);
	const char *dirs[] = {getenv("VNUMA_KERNELS_DIR"), "kernels", NULL};

	*path = NULL;
	if (n > 5 && strcmp(spec + n - 5, ".json") == 0) {
		*path = strdup(spec);
		return *path ? 1 : -ENOMEM;
	}
	if (strchr(spec, '/') || !*spec)
		return 0;
	for (size_t i = 0; i < VN_ARRAY_SIZE(dirs); i++) {
		char buf[PATH_MAX];
		if (!dirs[i] || !*dirs[i])
			continue;
		snprintf(buf, sizeof(buf), "%s/%s.json", dirs[i], spec);
		if (is_file(buf)) {
			*path = strdup(buf);
			return *path ? 1 : -ENOMEM;
		}
	}
	return 0;
}

static void strv_free(char **v, size_t n)
{
	if (!v)
		return;
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void vn_recipe_free(struct vn_recipe *r)
{
	if (!r)
		return;
	free(r->path);
	free(r->name);
	free(r->dir);
	free(r->description);
	free(r->image);
	free(r->modules);
	free(r->config);
	free(r->tree);
	free(r->tree_path);
	strv_free(r->patches, r->npatches);
	strv_free(r->patch_names, r->npatches);
	free(r->config_base);
	strv_free(r->fragments, r->nfragments);
	strv_free(r->fragment_names, r->nfragments);
	strv_free(r->require, r->nrequire);
	free(r);
}
