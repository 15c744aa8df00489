/*
 * What a dynamically linked ELF program needs at run time, read through
 * libelf (elfutils) from its program headers (PT_INTERP, PT_DYNAMIC:
 * DT_NEEDED, DT_RUNPATH/DT_RPATH), the way ld.so would find them. Internal
 * to the guest layer (initramfs).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "util/error.h"

#if defined(__x86_64__)
#define VN_ELF_MULTIARCH "x86_64-linux-gnu"
#elif defined(__aarch64__)
#define VN_ELF_MULTIARCH "aarch64-linux-gnu"
#else
#define VN_ELF_MULTIARCH "unknown-linux-gnu"
#endif

/* The first of the library directories searched, for messages. */
#define VN_ELF_LIB_DIR "/lib/" VN_ELF_MULTIARCH

struct vn_elf_deps {
	bool is_elf;
	int elf_class; /* ELFCLASS32 or ELFCLASS64 */
	int machine;   /* e_machine: EM_X86_64, EM_AARCH64, ... */
	char *interp;  /* PT_INTERP, or NULL (static) */
	char **needed; /* DT_NEEDED names, NULL-terminated (NULL when none) */
	size_t n_needed;
	char *runpath; /* DT_RUNPATH or DT_RPATH, or NULL */
};

/*
 * Read path's dependencies. A file that is not ELF (a script, data) gives
 * is_elf false and no error; ELF of either class and byte order is read.
 */
int vn_elf_read_deps(const char *path, struct vn_elf_deps *d, struct vn_error *err);
void vn_elf_deps_free(struct vn_elf_deps *d);

/*
 * Where ld.so would find library name for the program of: a path as is,
 * else of's runpath (with $ORIGIN = origin, the program's folder), else the
 * multiarch and plain lib directories; as ld.so does, a file of another ELF
 * class or machine than of's is passed over. Returns a malloc'd path, or
 * NULL when it is nowhere. of may be NULL: no runpath, any file. sysroot (NULL:
 * /) is where another architecture's files are: every path but origin is
 * looked up beneath it, and the path returned starts with it.
 */
char *vn_elf_find_lib(const char *name, const struct vn_elf_deps *of, const char *origin, const char *sysroot);
