/*
 * Memory allocation. vnuma's out-of-memory policy, in one place: an
 * allocation that fails aborts the process (after crun's xmalloc and
 * git's xmalloc). On Linux with overcommit a failed malloc means the machine
 * is already lost, and the hundred -ENOMEM paths this replaces were never
 * run by any test. So no function returns -ENOMEM for a failed allocation;
 * -ENOMEM still travels as an errno where the kernel returns it (mmap, fork).
 * This is the one exception to "library code never exits".
 */
#pragma once

#include <stddef.h>

/* Writes "vnuma: out of memory" to stderr and aborts. */
__attribute__((noreturn)) void vn_oom(void);

__attribute__((malloc, returns_nonnull)) void *vn_xmalloc(size_t n);
__attribute__((malloc, returns_nonnull)) void *vn_xcalloc(size_t n, size_t size);
/* n * size, checked for overflow; p may be NULL. */
__attribute__((returns_nonnull)) void *vn_xreallocarray(void *p, size_t n, size_t size);
__attribute__((returns_nonnull)) char *vn_xstrdup(const char *s);
__attribute__((returns_nonnull)) char *vn_xstrndup(const char *s, size_t n);
/* NULL stays NULL. */
char *vn_xstrdup_or_null(const char *s);
/* A copy of a NULL-terminated vector of strings (NULL: an empty one). */
__attribute__((returns_nonnull)) char **vn_strv_copy(char *const *v);
/* Appends a copy of s to the NULL-terminated *v of *n strings (*v NULL: a new one). */
void vn_strv_push(char ***v, size_t *n, const char *s);
__attribute__((format(printf, 1, 2), returns_nonnull)) char *vn_xasprintf(const char *fmt, ...);
