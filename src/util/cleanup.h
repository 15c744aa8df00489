/* Scope-bound ownership, after systemd's _cleanup_ idiom. */
#pragma once

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))

/*
 * FUNCp(TYPE *p): FUNC(*p) unless *p is NULL, for _cleanup_(FUNCp) (after
 * systemd's DEFINE_TRIVIAL_CLEANUP_FUNC): one definition of the null check
 * for every library's free function and our own.
 */
#define VN_DEFINE_CLEANUP(type, func)       \
	static inline void func##p(type *p) \
	{                                   \
		if (*p)                     \
			func(*p);           \
	}                                   \
	struct vn_cleanup_semicolon_##func

static inline void vn_freep(void *p)
{
	free(*(void **)p);
}

static inline void vn_fclosep(FILE **f)
{
	if (*f)
		fclose(*f);
}

static inline void vn_closep(int *fd)
{
	if (*fd >= 0)
		close(*fd);
}

/* A NULL-terminated vector of strings and the strings; NULL is fine. */
static inline void vn_strv_free(char **v)
{
	for (char **p = v; p && *p; p++)
		free(*p);
	free(v);
}

/* The same for a vector of n entries, any of which may be NULL. */
static inline void vn_strv_free_n(char **v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}

/*
 * Frees each of n pointers, any of which may be NULL (after systemd's
 * free_many_charp): the owned strings of a struct in one statement, so
 * every destructor is not a column of free() calls.
 */
static inline void vn_free_many(void *const *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(p[i]);
}

#define vn_free_all(...) \
	vn_free_many((void *const[]){__VA_ARGS__}, sizeof((void *const[]){__VA_ARGS__}) / sizeof(void *))

static inline void vn_strvfreep(char ***v)
{
	vn_strv_free(*v);
}

#define _cleanup_free_   _cleanup_(vn_freep)
#define _cleanup_fclose_ _cleanup_(vn_fclosep)
#define _cleanup_close_  _cleanup_(vn_closep)
#define _cleanup_strv_   _cleanup_(vn_strvfreep)

/* Hand ownership out of a _cleanup_ scope. */
#define steal_pointer(pp)                        \
	({                                       \
		__typeof__(*(pp)) _tmp_ = *(pp); \
		*(pp) = NULL;                    \
		_tmp_;                           \
	})

#define steal_fd(fdp)              \
	({                         \
		int _fd_ = *(fdp); \
		*(fdp) = -1;       \
		_fd_;              \
	})

#define VN_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
