/*
 * vnuma cp out of a guest that lies (guest/copy.h): a fake agent on a
 * socketpair claims a file of 2^40 bytes and serves zeros, or a tree over
 * the byte or file budget. The copy must stop before it reads what does not
 * fit, fail as an infrastructure error (exit 3), and leave nothing on the
 * host. Also the mode policy a guest's modes go through on the host.
 */
#include "guest/copy-priv.h"

#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/dir.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

/* What the fake agent says is there. */
struct entry {
	const char *path; /* absolute, in the "guest" */
	const char *type; /* "file" or "dir" */
	unsigned mode;
	uint64_t size;
};

/*
 * A guest whose files are all 2^40 bytes by its word, and a tree whose
 * files fit one by one but not together, and a wide tree of empty files.
 */
static const struct entry lies[] = {
	{"/big", "file", 0644, 1ull << 40}, {"/t", "dir", 0755, 4096},    {"/t/a", "file", 0644, 600 << 10},
	{"/t/b", "file", 0644, 600 << 10},  {"/wide", "dir", 0755, 4096}, {"/wide/0", "file", 0644, 0},
	{"/wide/1", "file", 0644, 0},       {"/wide/2", "file", 0644, 0}, {"/wide/3", "file", 0644, 0},
	{"/wide/4", "file", 0644, 0},
};

static char tmpdir[256];

static void send_line(int fd, struct json_object *o)
{
	size_t len;
	const char *s = json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN, &len);

	while (len) {
		ssize_t n = write(fd, s, len);
		if (n <= 0)
			_exit(0);
		s += n;
		len -= (size_t)n;
	}
	if (write(fd, "\n", 1) != 1)
		_exit(0);
	json_object_put(o);
}

static struct json_object *reply(struct json_object *req, bool ok)
{
	struct json_object *r = json_object_new_object(), *id;

	json_object_object_get_ex(req, "id", &id);
	json_object_object_add(r, "id", json_object_get(id));
	json_object_object_add(r, "ok", json_object_new_boolean(ok));
	return r;
}

static void add_stat(struct json_object *o, const struct entry *e)
{
	json_object_object_add(o, "type", json_object_new_string(e->type));
	json_object_object_add(o, "mode", json_object_new_int((int)e->mode));
	json_object_object_add(o, "size", json_object_new_int64((int64_t)e->size));
}

/* Answers from lies[]; every read with zeros, as much as asked for. Logs each op to log_fd. */
static void fake_agent(int fd, int log_fd)
{
	static char line[1 << 16];
	size_t n = 0;

	for (;;) {
		ssize_t r = read(fd, line + n, 1);
		if (r <= 0)
			_exit(0);
		if (line[n] != '\n' && ++n < sizeof(line) - 1)
			continue;
		line[n] = '\0';
		n = 0;
		struct json_object *req = json_tokener_parse(line), *v, *out;
		if (!req)
			continue;
		const char *op = json_object_object_get_ex(req, "op", &v) ? json_object_get_string(v) : "";
		const char *path = json_object_object_get_ex(req, "path", &v) ? json_object_get_string(v) : "";
		dprintf(log_fd, "%s %s\n", op, path);
		const struct entry *e = NULL;
		for (size_t i = 0; i < sizeof(lies) / sizeof(lies[0]); i++)
			if (!strcmp(lies[i].path, path))
				e = &lies[i];
		if (!strcmp(op, "hello")) {
			out = reply(req, true);
			json_object_object_add(out, "kernel", json_object_new_string("fake"));
		} else if (!e) {
			out = reply(req, false);
			json_object_object_add(out, "error", json_object_new_string("No such file or directory"));
			json_object_object_add(out, "errno", json_object_new_int(ENOENT));
		} else if (!strcmp(op, "stat")) {
			out = reply(req, true);
			add_stat(out, e);
		} else if (!strcmp(op, "readdir")) {
			struct json_object *list = json_object_new_array();
			size_t plen = strlen(path);
			for (size_t i = 0; i < sizeof(lies) / sizeof(lies[0]); i++) {
				const char *p = lies[i].path;
				if (strncmp(p, path, plen) || p[plen] != '/' || strchr(p + plen + 1, '/'))
					continue;
				struct json_object *ent = json_object_new_object();
				json_object_object_add(ent, "name", json_object_new_string(p + plen + 1));
				add_stat(ent, &lies[i]);
				json_object_array_add(list, ent);
			}
			out = reply(req, true);
			json_object_object_add(out, "entries", list);
		} else if (!strcmp(op, "read")) {
			/* Zeros are "AAAA" per three bytes. */
			int64_t len = json_object_object_get_ex(req, "length", &v) ? json_object_get_int64(v) : 0;
			size_t b64 = ((size_t)len + 2) / 3 * 4;
			char *data = vn_xmalloc(b64 + 1);
			memset(data, 'A', b64);
			if (len % 3)
				memset(data + b64 - (3 - (size_t)(len % 3)), '=', 3 - (size_t)(len % 3));
			data[b64] = '\0';
			out = reply(req, true);
			json_object_object_add(out, "data", json_object_new_string(data));
			json_object_object_add(out, "eof", json_object_new_boolean(0));
			free(data);
		} else {
			out = reply(req, false);
			json_object_object_add(out, "error", json_object_new_string("not in this fake"));
		}
		send_line(fd, out);
		json_object_put(req);
	}
}

struct fake {
	struct vn_agent *a;
	pid_t pid;
	char log[PATH_MAX];
};

static int setup(void **state)
{
	struct fake *f = vn_xcalloc(1, sizeof(*f));
	struct vn_error err = {0};
	int sv[2];

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/vn-test-copy-XXXXXX");
	assert_non_null(mkdtemp(tmpdir));
	snprintf(f->log, sizeof(f->log), "%s/ops.log", tmpdir);
	int log_fd = open(f->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	assert_true(log_fd >= 0);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	f->pid = fork();
	assert_true(f->pid >= 0);
	if (f->pid == 0) {
		close(sv[0]);
		fake_agent(sv[1], log_fd);
	}
	close(sv[1]);
	close(log_fd);
	assert_int_equal(vn_agent_from_fd(sv[0], &f->a, &err), 0);
	vn_agent_set_guest(f->a, "fake");
	assert_int_equal(vn_agent_hello(f->a, 5000, NULL, &err), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fake *f = *state;

	vn_agent_close(f->a);
	kill(f->pid, SIGKILL);
	waitpid(f->pid, NULL, 0);
	free(f);
	return vn_rm_rf(tmpdir);
}

/* How many requests of op the fake saw. */
static int ops(const struct fake *f, const char *op)
{
	_cleanup_free_ char *cmd = vn_xasprintf("grep -c '^%s ' %s", op, f->log);
	FILE *p = popen(cmd, "r");
	int n = -1;

	assert_non_null(p);
	assert_int_equal(fscanf(p, "%d", &n), 1);
	pclose(p);
	return n;
}

/* The host directory holds exactly the ops log: no copy, no temporary name. */
static void assert_nothing_left(void)
{
	_cleanup_free_ char *cmd = vn_xasprintf("test \"$(ls -A %s)\" = ops.log", tmpdir);

	assert_int_equal(system(cmd), 0);
}

static void copy_out(struct fake *f, const char *src, const struct vn_copy_opts *o, int want, const char *says)
{
	_cleanup_free_ char *dst = vn_xasprintf("%s/copy", tmpdir);
	struct vn_error err = {0};
	struct vn_copy_stats st;
	const char *srcs[] = {src};

	assert_int_equal(vn_copy_out(f->a, srcs, 1, dst, o, &st, &err), want);
	assert_int_equal(err.kind, VN_ERR_INFRA);
	if (!strstr(err.msg, says))
		fail_msg("%s: \"%s\" does not say \"%s\"", src, err.msg, says);
	assert_non_null(strstr(err.msg, "guest fake"));
	assert_nothing_left();
}

/* 2^40 bytes of zeros by the guest's word: refused before the first chunk, by the budget or the free space. */
static void test_claimed_size_over_budget(void **state)
{
	struct vn_copy_opts o = {0};

	copy_out(*state, "/big", &o, -EFBIG, "--max-bytes");
	assert_int_equal(ops(*state, "read"), 0);
}

static void test_claimed_size_over_free_space(void **state)
{
	struct vn_copy_opts o = {.max_bytes = 1ull << 50};

	copy_out(*state, "/big", &o, -ENOSPC, "free");
	assert_int_equal(ops(*state, "read"), 0);
}

/* Each file fits, both do not: the first is read, the second is not, and the half-copied tree goes. */
static void test_tree_over_budget(void **state)
{
	struct vn_copy_opts o = {.recursive = true, .max_bytes = 1 << 20};

	copy_out(*state, "/t", &o, -EFBIG, "--max-bytes");
	assert_int_equal(ops(*state, "read"), 1);
}

/* Files and directories are counted as the listings arrive. */
static void test_tree_over_file_count(void **state)
{
	struct vn_copy_opts o = {.recursive = true, .max_files = 3};

	copy_out(*state, "/wide", &o, -EFBIG, "--max-files");
}

static void test_host_mode(void **state)
{
	(void)state;
	/* By default as cp and tar for a non-owner: through the umask; never setuid or setgid. */
	assert_int_equal(vn_copy_host_mode(0777, false, false, 022), 0755);
	assert_int_equal(vn_copy_host_mode(0666, false, false, 022), 0644);
	assert_int_equal(vn_copy_host_mode(01777, true, false, 022), 01755);
	assert_int_equal(vn_copy_host_mode(06755, false, false, 022), 0755);
	assert_int_equal(vn_copy_host_mode(0777, true, false, 077), 0700);
	/* The sticky bit only on a directory: on a file it means nothing. */
	assert_int_equal(vn_copy_host_mode(01644, false, false, 022), 0644);
	/* --preserve-mode: the permission bits as they are, the sticky bit too, still no setuid or setgid. */
	assert_int_equal(vn_copy_host_mode(0777, false, true, 022), 0777);
	assert_int_equal(vn_copy_host_mode(01777, true, true, 022), 01777);
	assert_int_equal(vn_copy_host_mode(0666, false, true, 077), 0666);
	assert_int_equal(vn_copy_host_mode(04755, false, true, 022), 0755);
	assert_int_equal(vn_copy_host_mode(02775, true, true, 022), 0775);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_host_mode),
		cmocka_unit_test_setup_teardown(test_claimed_size_over_budget, setup, teardown),
		cmocka_unit_test_setup_teardown(test_claimed_size_over_free_space, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tree_over_budget, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tree_over_file_count, setup, teardown),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
