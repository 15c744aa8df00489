#include "util/alloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void vn_oom(void)
{
	static const char msg[] = "vnuma: out of memory\n";
	/* No stdio: it may want to allocate. */
	ssize_t n = write(STDERR_FILENO, msg, sizeof(msg) - 1);
	(void)n;
	abort();
}

void *vn_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		vn_oom();
	return p;
}

void *vn_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		vn_oom();
	return p;
}

void *vn_xreallocarray(void *p, size_t n, size_t size)
{
	if (size && n > (size_t)-1 / size)
		vn_oom();
	size_t bytes = n * size;
	p = realloc(p, bytes ? bytes : 1);
	if (!p)
		vn_oom();
	return p;
}

char *vn_xstrdup(const char *s)
{
	char *d = strdup(s);
	if (!d)
		vn_oom();
	return d;
}

char *vn_xstrndup(const char *s, size_t n)
{
	char *d = strndup(s, n);
	if (!d)
		vn_oom();
	return d;
}

char *vn_xstrdup_or_null(const char *s)
{
	return s ? vn_xstrdup(s) : NULL;
}

char *vn_xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	int n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		vn_oom();
	return s;
}

char **vn_strv_copy(char *const *v)
{
	size_t n = 0;

	while (v && v[n])
		n++;
	char **c = vn_xcalloc(n + 1, sizeof(*c));
	for (size_t i = 0; i < n; i++)
		c[i] = vn_xstrdup(v[i]);
	return c;
}

void vn_strv_push(char ***v, size_t *n, const char *s)
{
	*v = vn_xreallocarray(*v, *n + 2, sizeof(char *));
	(*v)[(*n)++] = vn_xstrdup(s);
	(*v)[*n] = NULL;
}
