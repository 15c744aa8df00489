#include "kernel/kernel.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernel/recipe.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/strbuf.h"

void vn_kernel_free(struct vn_kernel *k)
{
	if (!k)
		return;
	vn_free_all(k->image, k->release, k->version, k->modules_dir, k->config, k->recipe, k->recipe_path);
	vn_strv_free_n(k->patches, k->npatches);
	vn_free_all(k->config_hash, k->build_key, k->source_id, k);
}

int vn_kernel_image_release(const char *image, char **release, char **version, struct vn_error *err)
{
	_cleanup_close_ int fd = open(image, O_RDONLY | O_CLOEXEC);
	unsigned char hdr[0x210];
	char buf[256];

	if (fd < 0)
		return vn_input_error(err, "%s: cannot open kernel image: %s", image, strerror(errno));
	/* Boot protocol: "HdrS" at 0x202; kernel_version (0x20e) points at a
	 * NUL-terminated string, offset by 0x200. */
	if (pread(fd, hdr, sizeof(hdr), 0) != (ssize_t)sizeof(hdr) || memcmp(hdr + 0x202, "HdrS", 4) != 0)
		return vn_input_error(err, "%s: not an x86 bzImage (no HdrS boot header)", image);
	unsigned off = (unsigned)hdr[0x20e] | (unsigned)hdr[0x20f] << 8;
	if (!off)
		return vn_input_error(err, "%s: bzImage carries no kernel_version string", image);
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, (off_t)off + 0x200);
	if (n <= 0)
		return vn_input_error(err, "%s: cannot read kernel_version string", image);
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	if (version)
		*version = vn_xstrdup(buf);
	buf[strcspn(buf, " ")] = '\0';
	*release = vn_xstrdup(buf);
	return 0;
}

/*
 * Debian installs /boot/vmlinuz-<release> (ppc64el: vmlinux-<release>, an
 * ELF); pick the highest version sort.
 */
static int find_stock_image(const char *root, char **out, struct vn_error *err)
{
	_cleanup_free_ char *boot = vn_xasprintf("%s/boot", root ? root : "");
	DIR *d = opendir(boot);
	char *best = NULL;

	if (d) {
		for (struct dirent *e; (e = readdir(d));) {
			if (strncmp(e->d_name, "vmlinuz-", 8) != 0 && strncmp(e->d_name, "vmlinux-", 8) != 0)
				continue;
			if (!best || strverscmp(e->d_name, best) > 0) {
				free(best);
				best = vn_xstrdup(e->d_name);
			}
		}
		closedir(d);
	}
	if (!best)
		return vn_input_error(err,
				      "no stock kernel: %s/vmlinuz-* not found (install the Debian package "
				      "linux-image-amd64, or pass --kernel PATH)",
				      boot);
	*out = vn_xasprintf("%s/%s", boot, best);
	free(best);
	return 0;
}

/* A source recipe: build (or find) it, and describe it the way results need. */
static int resolve_source(const struct vn_recipe *r, const struct vn_kernel_resolve_opts *o, struct vn_kernel *k,
			  struct vn_error *err)
{
	_cleanup_free_ char *cache = NULL;
	_cleanup_kernel_built_ struct vn_kernel_built *b = NULL;
	int rc;

	if (o && o->cache_dir)
		cache = vn_xstrdup(o->cache_dir);
	else if ((rc = vn_kernel_cache_dir_default(&cache, err)) < 0)
		return rc;
	struct vn_kernel_build_opts bo = {
		.cache_dir = cache,
		.jobs = o ? o->jobs : 0,
		.progress = o ? o->progress : NULL,
		.progress_data = o ? o->progress_data : NULL,
		.arch = o ? o->arch : VN_ARCH_X86_64,
	};
	if ((rc = vn_kernel_build(r, &bo, &b, err)) < 0)
		return rc;
	k->image = steal_pointer(&b->image);
	k->config = steal_pointer(&b->config);
	k->config_hash = steal_pointer(&b->config_hash);
	k->build_key = steal_pointer(&b->key);
	k->source_id = steal_pointer(&b->source_id);
	k->release = steal_pointer(&b->release);
	k->version = steal_pointer(&b->version);
	k->built_now = !b->cached;
	k->npatches = r->npatches;
	k->patches = vn_xcalloc(r->npatches + 1, sizeof(char *));
	for (size_t i = 0; i < r->npatches; i++)
		k->patches[i] = vn_xstrdup(r->patch_names[i]);
	return 0;
}

int vn_kernel_resolve_with(const char *spec, const char *modules_dir, const struct vn_kernel_resolve_opts *o,
			   struct vn_kernel **out, struct vn_error *err)
{
	struct vn_kernel *k = vn_xcalloc(1, sizeof(*k));
	bool stock = !spec || strcmp(spec, "stock") == 0;
	bool no_modules = false;
	_cleanup_free_ char *recipe_path = NULL;
	_cleanup_recipe_ struct vn_recipe *r = NULL;
	_cleanup_strbuf_ struct vn_strbuf tried = VN_STRBUF_INIT;
	struct stat st;
	int rc = 0;

	/* A file named like a bzImage wins over a recipe of the same name. */
	if (!stock && !(stat(spec, &st) == 0 && S_ISREG(st.st_mode) && !strstr(spec, ".json")) &&
	    (rc = vn_recipe_find(spec, &recipe_path, &tried)) > 0)
		rc = vn_recipe_load(recipe_path, &r, err);
	if (rc < 0) {
		vn_kernel_free(k);
		return rc;
	}
	rc = 0;
	if (r) {
		k->recipe = vn_xstrdup(r->name);
		k->recipe_path = vn_xstrdup(r->path);
		stock = r->type == VN_RECIPE_STOCK;
	}
	const char *root = o ? o->root : NULL;
	if (root && !stock && !(r && r->type == VN_RECIPE_SOURCE))
		rc = vn_input_error(err,
				    "kernel '%s': on another architecture only the stock kernel and source recipes "
				    "boot (a bzImage, or a prebuilt recipe's image, is x86's)",
				    spec);
	else if (stock) {
		rc = find_stock_image(root, &k->image, err);
		if (!k->recipe)
			k->recipe = vn_xstrdup("stock");
	} else if (r && r->type == VN_RECIPE_PREBUILT) {
		k->image = vn_xstrdup(r->image);
		if (r->config)
			k->config = vn_xstrdup(r->config);
		if (!modules_dir && r->modules)
			modules_dir = r->modules;
	} else if (r) {
		rc = resolve_source(r, o, k, err);
		no_modules = true;
	} else {
		rc = stat(spec, &st) == 0 && S_ISREG(st.st_mode)
			     ? 0
			     : vn_input_error(err,
					      "kernel '%s': no such file or recipe (%s%s%sgive 'stock', a recipe name, "
					      "a recipe .json or a bzImage path)",
					      spec, tried.s ? "not in " : "", tried.s ? tried.s : "",
					      tried.s ? "; " : "");
		k->image = realpath(spec, NULL);
		k->recipe = vn_xstrdup("prebuilt");
	}
	/* A build has said what it is; a stock kernel of another architecture has only its file name. */
	if (rc == 0 && !k->release && root) {
		k->release = vn_xstrdup(strrchr(k->image, '/') + strlen("/vmlinuz-"));
		/* No header to read it from: what is known is the package it came from. */
		k->version = vn_xasprintf("linux-image-%s (Debian's package)", k->release);
	} else if (rc == 0 && !k->release)
		rc = vn_kernel_image_release(k->image, &k->release, &k->version, err);
	if (rc == 0) {
		char path[4096];
		if (modules_dir) {
			if (stat(modules_dir, &st) != 0 || !S_ISDIR(st.st_mode))
				rc = vn_input_error(err, "--modules %s: not a directory", modules_dir);
			else
				k->modules_dir = realpath(modules_dir, NULL);
		} else if (!no_modules) {
			/* Built kernels have CONFIG_MODULES off; a same-named stock release's modules would not load. */
			snprintf(path, sizeof(path), "%s/lib/modules/%s", root ? root : "", k->release);
			if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
				k->modules_dir = vn_xstrdup(path);
		}
		if (stock) {
			snprintf(path, sizeof(path), "%s/boot/config-%s", root ? root : "", k->release);
			if (access(path, R_OK) == 0)
				k->config = vn_xstrdup(path);
		}
	}
	if (rc < 0) {
		vn_kernel_free(k);
		return rc;
	}
	*out = k;
	return 0;
}
