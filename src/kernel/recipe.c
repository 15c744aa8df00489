/*
 * Recipe files. json-c keeps no line numbers for values, so errors name the
 * JSON path ("kernels/x.json: $.config.fragments[1]: ...") like the scenario
 * schema does.
 */
#include "kernel/recipe.h"

#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/dir.h"
#include "util/json.h"
#include "util/paths.h"
#include "util/file.h"

/* Every string a recipe names (a path, a make target) must be non-empty. */
#define STR_REQUIRED (VN_JSON_REQUIRED | VN_JSON_NONEMPTY)

/* A string array (absent: empty) of non-empty strings, always allocated and NULL-terminated. */
static int get_strv(const struct vn_json_reader *c, struct json_object *o, const char *parent, const char *key,
		    char ***out, size_t *n)
{
	char path[VN_JSON_PATH_MAX];
	struct json_object *v = vn_json_get(o, key);

	*n = 0;
	*out = vn_xcalloc(1, sizeof(char *));
	if (!v)
		return 0;
	return vn_json_strv_append(c, v, vn_json_path_key(path, parent, key), VN_JSON_NONEMPTY, out, n);
}

/* A path as written in the recipe: absolute, or relative to the recipe's own folder. */
static char *beside(const struct vn_recipe *r, const char *p)
{
	if (p[0] == '/')
		return vn_xstrdup(p);
	return vn_xasprintf("%s/%s", r->dir, p);
}

/* Like beside(), for paths that name the recipe's neighbours (image, tree). */
static char *near_recipe(const struct vn_recipe *r, const char *p)
{
	if (p[0] == '/')
		return vn_xstrdup(p);
	_cleanup_free_ char *d = vn_xstrdup(r->path);
	*strrchr(d, '/') = '\0';
	return vn_xasprintf("%s/%s", d, p);
}

/* A git checkout: a directory with .git in it (a dir, or a worktree's file). */
static bool is_git_checkout(const char *dir)
{
	char git[PATH_MAX];
	snprintf(git, sizeof(git), "%s/.git", dir);
	return vn_is_dir(dir) && access(git, F_OK) == 0;
}

static int parse_tree(const struct vn_json_reader *c, struct vn_recipe *r)
{
	char buf[PATH_MAX];

	_cleanup_free_ char *p = near_recipe(r, r->tree);
	/* "linux-source-6.1" names Debian's package, which installs the tarball. */
	if (!strchr(r->tree, '/') && access(p, F_OK) != 0) {
		snprintf(buf, sizeof(buf), "/usr/src/%s.tar.xz", r->tree);
		if (!vn_is_file(buf))
			return vn_json_bad(c, "$.tree", "%s not found (install the Debian package %s)", buf, r->tree);
		r->tree_kind = VN_TREE_TARBALL;
		r->tree_path = vn_xstrdup(buf);
		return 0;
	}
	if (is_git_checkout(p)) {
		r->tree_kind = VN_TREE_GIT;
		r->tree_path = realpath(p, NULL);
		return r->tree_path ? 0 : vn_json_bad(c, "$.tree", "%s: %s", p, strerror(errno));
	}
	if (vn_is_file(p) && strstr(p, ".tar")) {
		r->tree_kind = VN_TREE_TARBALL;
		r->tree_path = realpath(p, NULL);
		return r->tree_path ? 0 : vn_json_bad(c, "$.tree", "%s: %s", p, strerror(errno));
	}
	return vn_json_bad(c, "$.tree", "%s is neither a git checkout nor a kernel source tarball", p);
}

int vn_recipe_use_repo(struct vn_recipe *r, const char *repo, struct vn_error *err)
{
	if (r->type != VN_RECIPE_SOURCE)
		return vn_input_error(err, "%s: a source recipe is needed (its config and patches), not a %s one (%s)",
				      r->name, r->type == VN_RECIPE_STOCK ? "stock" : "prebuilt", r->path);
	char *real = realpath(repo, NULL);
	if (!real)
		return vn_input_error(err, "--repo %s: %s", repo, strerror(errno));
	if (!is_git_checkout(real)) {
		free(real);
		return vn_input_error(err, "--repo %s: not a git tree (no .git in it)", repo);
	}
	free(r->tree);
	free(r->tree_path);
	r->tree = vn_xstrdup(repo);
	r->tree_path = real;
	r->tree_kind = VN_TREE_GIT;
	return 0;
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

/*
 * A selftest folder under tools/testing/selftests: "vm", "net/forwarding".
 * Joined to the tree's path at build time, so nothing that climbs out of it.
 */
static bool valid_selftest_dir(const char *s)
{
	if (!*s || *s == '/' || s[strlen(s) - 1] == '/' || strstr(s, "//"))
		return false;
	for (const char *p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		      strchr("._-/", *p)))
			return false;
	/* "." and ".." as whole components; "a.b" is a name. */
	for (const char *p = s; p; p = strchr(p, '/') ? strchr(p, '/') + 1 : NULL)
		if (!strncmp(p, "./", 2) || !strcmp(p, ".") || !strncmp(p, "../", 3) || !strcmp(p, ".."))
			return false;
	return true;
}

/* config's base, fragments and require (jp: its JSON path) into cf; base may be absent when dflt_base is given. */
static int parse_config(const struct vn_json_reader *c, struct json_object *cfg, const char *jp, const char *dflt_base,
			const struct vn_recipe *r, struct vn_recipe_config *cf)
{
	char p[VN_JSON_PATH_MAX];
	int rc;

	if ((rc = vn_json_get_str(c, cfg, jp, "base", dflt_base ? VN_JSON_NONEMPTY : STR_REQUIRED, &cf->base)) < 0 ||
	    (rc = get_strv(c, cfg, jp, "fragments", &cf->fragment_names, &cf->nfragments)) < 0 ||
	    (rc = get_strv(c, cfg, jp, "selftests", &cf->selftests, &cf->nselftests)) < 0 ||
	    (rc = get_strv(c, cfg, jp, "require", &cf->require, &cf->nrequire)) < 0)
		return rc;
	if (!cf->base)
		cf->base = vn_xstrdup(dflt_base);
	/* The base is a make target; keep it to the names make defines for configs. */
	if (strpbrk(cf->base, "/ \t") || !strstr(cf->base, "config"))
		return vn_json_bad(c, vn_json_path_key(p, jp, "base"),
				   "\"%s\" is not a config target (tinyconfig, defconfig, x86_64_defconfig, ...)",
				   cf->base);
	cf->fragments = vn_xcalloc(cf->nfragments + 1, sizeof(char *));
	for (size_t i = 0; i < cf->nfragments; i++) {
		_cleanup_free_ char *f = beside(r, cf->fragment_names[i]);
		if (vn_is_file(f))
			cf->fragments[i] = steal_pointer(&f);
		else if (strchr(cf->fragment_names[i], '/')) {
			snprintf(p, sizeof(p), "%s.fragments[%zu]", jp, i);
			return vn_json_bad(c, p, "%s: no such file", f);
		}
	}
	for (size_t i = 0; i < cf->nselftests; i++) {
		if (!valid_selftest_dir(cf->selftests[i])) {
			snprintf(p, sizeof(p), "%s.selftests[%zu]", jp, i);
			return vn_json_bad(c, p, "\"%s\" is not a folder of tools/testing/selftests (vm, mm, ...)",
					   cf->selftests[i]);
		}
	}
	for (size_t i = 0; i < cf->nrequire; i++) {
		if (!valid_option(cf->require[i])) {
			snprintf(p, sizeof(p), "%s.require[%zu]", jp, i);
			return vn_json_bad(c, p, "\"%s\" is not a CONFIG_ option name", cf->require[i]);
		}
	}
	return 0;
}

/* $.config.arch: {"arm64": {...}, "ppc64le": {...}}, each a config of its own (base defaults to the recipe's). */
static int parse_arch_configs(const struct vn_json_reader *c, struct json_object *arch, struct vn_recipe *r)
{
	static const char *const keys[] = {"base", "fragments", "selftests", "require", NULL};
	int rc;

	if ((rc = vn_json_check_type(c, arch, json_type_object, "$.config.arch")) < 0)
		return rc;
	json_object_object_foreach(arch, name, v)
	{
		char jp[VN_JSON_PATH_MAX];
		enum vn_arch a;
		vn_json_path_key(jp, "$.config.arch", name);
		if (vn_arch_parse(name, jp, &a, NULL) < 0)
			return vn_json_bad(c, jp, "\"%s\" is not an architecture (x86_64, arm64, ppc64le)", name);
		if (r->arch_config[a].base)
			return vn_json_bad(c, jp, "%s's config is given twice", vn_arch_name(a));
		if ((rc = vn_json_check_type(c, v, json_type_object, jp)) < 0 ||
		    (rc = vn_json_check_keys(c, v, jp, keys)) < 0 ||
		    (rc = parse_config(c, v, jp, r->kconfig.base, r, &r->arch_config[a])) < 0)
			return rc;
	}
	return 0;
}

static int parse_source(const struct vn_json_reader *c, struct json_object *root, struct vn_recipe *r)
{
	static const char *const cfg_keys[] = {"base", "fragments", "selftests", "require", "arch", NULL};
	struct json_object *cfg, *arch, *debug;
	int rc;

	if (json_object_object_get_ex(root, "debug", &debug)) {
		if ((rc = vn_json_check_type(c, debug, json_type_boolean, "$.debug")) < 0)
			return rc;
		r->debug = json_object_get_boolean(debug);
	}
	if ((rc = vn_json_get_str(c, root, "$", "tree", STR_REQUIRED, &r->tree)) < 0 || (rc = parse_tree(c, r)) < 0)
		return rc;
	if ((rc = get_strv(c, root, "$", "patches", &r->patch_names, &r->npatches)) < 0)
		return rc;
	r->patches = vn_xcalloc(r->npatches + 1, sizeof(char *));
	for (size_t i = 0; i < r->npatches; i++) {
		r->patches[i] = beside(r, r->patch_names[i]);
		if (!vn_is_file(r->patches[i])) {
			char p[64];
			snprintf(p, sizeof(p), "$.patches[%zu]", i);
			return vn_json_bad(c, p, "%s: no such file (patches live beside the recipe, in %s/)",
					   r->patches[i], r->dir);
		}
	}
	if (!json_object_object_get_ex(root, "config", &cfg))
		return vn_json_bad(c, "$",
				   "missing \"config\" (a source build needs {\"base\": ..., \"fragments\": [...]})");
	if ((rc = vn_json_check_type(c, cfg, json_type_object, "$.config")) < 0 ||
	    (rc = vn_json_check_keys(c, cfg, "$.config", cfg_keys)) < 0 ||
	    (rc = parse_config(c, cfg, "$.config", NULL, r, &r->kconfig)) < 0)
		return rc;
	if (json_object_object_get_ex(cfg, "arch", &arch) && (rc = parse_arch_configs(c, arch, r)) < 0)
		return rc;
	return 0;
}

const struct vn_recipe_config *vn_recipe_config_for(const struct vn_recipe *r, enum vn_arch arch)
{
	if (arch < VN_ARCH_COUNT && r->arch_config[arch].base)
		return &r->arch_config[arch];
	return &r->kconfig;
}

int vn_recipe_load(const char *path, struct vn_recipe **out, struct vn_error *err)
{
	static const char *const keys[] = {"type", "description", "image", "modules", "config",
					   "tree", "patches",     "debug", NULL};
	static const char *const source_keys[] = {"type", "description", "tree", "patches", "config", "debug", NULL};
	static const char *const prebuilt_keys[] = {"type", "description", "image", "modules", "config", NULL};
	static const char *const stock_keys[] = {"type", "description", NULL};
	const struct vn_json_reader c = {.file = path, .err = err};
	_cleanup_free_ char *type = NULL;
	_cleanup_json_ struct json_object *root = NULL;
	_cleanup_recipe_ struct vn_recipe *r = NULL;
	int rc;

	/* A regular file only (util/file.h): a FIFO named as a recipe must not block. */
	_cleanup_free_ char *text = NULL;
	size_t len;
	enum json_tokener_error jerr = json_tokener_success;
	if ((rc = vn_file_read(path, 1u << 20, &text, &len, err)) < 0)
		return vn_error_prefix(err, "kernel recipe");
	if (!(root = json_tokener_parse_verbose(text, &jerr)))
		return vn_input_error(err, "%s: not valid JSON: %s", path, json_tokener_error_desc(jerr));
	r = vn_xcalloc(1, sizeof(*r));
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	r->name = vn_xstrndup(base,
			      strlen(base) - (strlen(base) > 5 && !strcmp(base + strlen(base) - 5, ".json") ? 5 : 0));
	/* The file was just read, so realpath fails only on a race: report it as unreadable. */
	if (!(r->path = realpath(path, NULL)))
		return vn_input_error(err, "%s: cannot read kernel recipe: %s", path, strerror(errno));
	*strrchr(r->path, '/') = '\0';
	r->dir = vn_xasprintf("%s/%s", r->path, r->name);
	r->path[strlen(r->path)] = '/';

	if ((rc = vn_json_check_type(&c, root, json_type_object, "$")) < 0 ||
	    (rc = vn_json_check_keys(&c, root, "$", keys)) < 0 ||
	    (rc = vn_json_get_str(&c, root, "$", "type", STR_REQUIRED, &type)) < 0 ||
	    (rc = vn_json_get_str(&c, root, "$", "description", VN_JSON_NONEMPTY, &r->description)) < 0)
		return rc;
	if (strcmp(type, "stock") == 0) {
		r->type = VN_RECIPE_STOCK;
		rc = vn_json_check_keys(&c, root, "$", stock_keys);
	} else if (strcmp(type, "prebuilt") == 0) {
		_cleanup_free_ char *img = NULL, *mods = NULL, *cfg = NULL;
		r->type = VN_RECIPE_PREBUILT;
		if ((rc = vn_json_check_keys(&c, root, "$", prebuilt_keys)) < 0 ||
		    (rc = vn_json_get_str(&c, root, "$", "image", STR_REQUIRED, &img)) < 0 ||
		    (rc = vn_json_get_str(&c, root, "$", "modules", VN_JSON_NONEMPTY, &mods)) < 0 ||
		    (rc = vn_json_get_str(&c, root, "$", "config", VN_JSON_NONEMPTY, &cfg)) < 0)
			return rc;
		r->image = near_recipe(r, img);
		r->modules = mods ? near_recipe(r, mods) : NULL;
		r->config = cfg ? near_recipe(r, cfg) : NULL;
		if (!vn_is_file(r->image))
			rc = vn_json_bad(&c, "$.image", "%s: no such file", r->image);
		else if (r->modules && !vn_is_dir(r->modules))
			rc = vn_json_bad(&c, "$.modules", "%s: not a directory", r->modules);
		else if (r->config && !vn_is_file(r->config))
			rc = vn_json_bad(&c, "$.config", "%s: no such file", r->config);
	} else if (strcmp(type, "source") == 0) {
		r->type = VN_RECIPE_SOURCE;
		if ((rc = vn_json_check_keys(&c, root, "$", source_keys)) == 0)
			rc = parse_source(&c, root, r);
	} else {
		rc = vn_json_bad(&c, "$.type", "\"%s\" is not one of stock, prebuilt, source", type);
	}
	if (rc < 0)
		return rc;
	*out = steal_pointer(&r);
	return 0;
}

int vn_recipe_find(const char *spec, char **path, struct vn_strbuf *tried)
{
	size_t n = strlen(spec);

	*path = NULL;
	if (n > 5 && strcmp(spec + n - 5, ".json") == 0 && (strchr(spec, '/') || vn_is_file(spec))) {
		*path = vn_xstrdup(spec);
		return 1;
	}
	const char *env = getenv("VNUMA_KERNELS_DIR");
	return vn_paths_search(spec, "kernels", ".json", env && *env ? env : NULL, path, tried);
}

static void config_free(struct vn_recipe_config *cf)
{
	free(cf->base);
	vn_strv_free_n(cf->fragments, cf->nfragments);
	vn_strv_free_n(cf->fragment_names, cf->nfragments);
	vn_strv_free_n(cf->selftests, cf->nselftests);
	vn_strv_free_n(cf->require, cf->nrequire);
}

void vn_recipe_free(struct vn_recipe *r)
{
	if (!r)
		return;
	vn_free_all(r->path, r->name, r->dir, r->description, r->image, r->modules, r->config, r->tree, r->tree_path);
	vn_strv_free_n(r->patches, r->npatches);
	vn_strv_free_n(r->patch_names, r->npatches);
	config_free(&r->kconfig);
	for (int a = 0; a < VN_ARCH_COUNT; a++)
		config_free(&r->arch_config[a]);
	free(r);
}
