#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>

#include "util/cleanup.h"
#include "util/clock.h"
#include "util/file.h"
#include "util/name.h"
#include "util/parse.h"
#include "util/strbuf.h"
#include "util/strmap.h"
#include "util/paths.h"
#include "text-check.h"

#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

static void test_cpulist_ok(void **state)
{
	struct vn_cpuset s;
	struct vn_error err = {0};

	assert_int_equal(vn_cpulist_parse("0-3,8,10-11", &s, &err), 0);
	assert_int_equal(vn_cpuset_count(&s), 7);
	assert_true(vn_cpuset_has(&s, 0) && vn_cpuset_has(&s, 3) && vn_cpuset_has(&s, 8) && vn_cpuset_has(&s, 11));
	assert_false(vn_cpuset_has(&s, 4) || vn_cpuset_has(&s, 9));
	_cleanup_free_ char *f = vn_cpulist_format(&s);
	assert_string_equal(f, "0-3,8,10-11");

	assert_int_equal(vn_cpulist_parse("", &s, &err), 0);
	assert_int_equal(vn_cpuset_count(&s), 0);
	assert_int_equal(vn_cpuset_first(&s), -1);
	assert_int_equal(vn_cpulist_parse("5", &s, &err), 0);
	assert_int_equal(vn_cpuset_first(&s), 5);
	assert_int_equal(vn_cpuset_last(&s), 5);
}

static void test_cpulist_bad(void **state)
{
	static const char *const bad[] = {"3-1", "1,,2", "a", "1-", "-1", "1,1", "0-2,2", "4096", "1 2", "1,"};
	for (size_t i = 0; i < VN_ARRAY_SIZE(bad); i++) {
		struct vn_cpuset s;
		struct vn_error err = {0};
		assert_int_not_equal(vn_cpulist_parse(bad[i], &s, &err), 0);
		assert_int_equal(err.kind, VN_ERR_INPUT);
		assert_non_null(strstr(err.msg, bad[i]));
	}
}

static void test_size(void **state)
{
	uint64_t b;
	struct vn_error err = {0};
	char buf[32];

	assert_int_equal(vn_size_parse("512M", &b, &err), 0);
	assert_true(b == 512ull << 20);
	assert_int_equal(vn_size_parse("1G", &b, &err), 0);
	assert_true(b == 1ull << 30);
	assert_int_equal(vn_size_parse("64KiB", &b, &err), 0);
	assert_true(b == 64ull << 10);
	assert_int_equal(vn_size_parse("0", &b, &err), 0);
	assert_true(b == 0);
	assert_string_equal(vn_size_format(1536ull << 20, buf, sizeof(buf)), "1536M");
	assert_string_equal(vn_size_format(2ull << 30, buf, sizeof(buf)), "2G");

	static const char *const bad[] = {"-1M",          "12X",    "G", "", "1.5G", "99999999999999999999",
					  "17179869184G", "1M junk"};
	for (size_t i = 0; i < VN_ARRAY_SIZE(bad); i++) {
		struct vn_error e = {0};
		assert_int_not_equal(vn_size_parse(bad[i], &b, &e), 0);
		assert_int_equal(e.kind, VN_ERR_INPUT);
	}
}

static void test_duration(void **state)
{
	static const struct {
		const char *text;
		double s;
	} good[] = {{"30", 30},     {"0.5", 0.5}, {".5", 0.5},  {"5.", 5},    {"2e3", 2000},   {"1E-3", 0.001},
		    {"500ms", 0.5}, {"10s", 10},  {"10m", 600}, {"2h", 7200}, {"86400", 86400}};
	/* Each once accepted by atof: inf and nan (no limit, or an undefined conversion to an integer), and worse. */
	static const char *const bad[] = {"inf",   "nan", "-nan", "infinity", "1e300", "1e400", "-5",    "+5", " 5",
					  "5 ",    "0",   "0.0",  "1e-400",   "0x10",  "0x1p3", "5x",    "",   ".",
					  "1.2.3", "1e",  "e5",   "5mm",      "86401", "24.1h", "1441m", "5 s"};
	struct vn_error err = {0};
	double s;

	for (size_t i = 0; i < VN_ARRAY_SIZE(good); i++) {
		assert_int_equal(vn_duration_parse(good[i].text, 86400, &s, &err), 0);
		assert_true(s == good[i].s);
	}
	for (size_t i = 0; i < VN_ARRAY_SIZE(bad); i++) {
		struct vn_error e = {0};
		s = -1;
		assert_int_equal(vn_duration_parse(bad[i], 86400, &s, &e), -EINVAL);
		assert_int_equal(e.kind, VN_ERR_INPUT);
		assert_non_null(strstr(e.msg, "86400 s"));
		assert_true(s == -1);
	}
	assert_int_equal(vn_duration_ms(0.0001), 1);
	assert_int_equal(vn_duration_ms(1.5), 1500);
	assert_int_equal(vn_duration_ms(86400), 86400000);
}

static void test_count(void **state)
{
	struct vn_error err = {0};
	uint64_t v;

	assert_int_equal(vn_count_parse("0", 0, 10, &v, &err), 0);
	assert_true(v == 0);
	assert_int_equal(vn_count_parse("007", 0, 10, &v, &err), 0);
	assert_true(v == 7);
	assert_int_equal(vn_count_parse("18446744073709551615", 0, UINT64_MAX, &v, &err), 0);
	assert_true(v == UINT64_MAX);

	static const struct {
		const char *text;
		uint64_t min, max;
	} bad[] = {{"", 0, 10},
		   {"-1", 0, 10},
		   {"+1", 0, 10},
		   {" 1", 0, 10},
		   {"1 ", 0, 10},
		   {"0x1", 0, 10},
		   {"1e3", 0, 10},
		   {"11", 0, 10},
		   {"0", 1, 10},
		   {"18446744073709551616", 0, UINT64_MAX},
		   {"99999999999999999999999", 1, 4096},
		   {"1.0", 0, 10}};
	for (size_t i = 0; i < VN_ARRAY_SIZE(bad); i++) {
		struct vn_error e = {0};
		v = 42;
		assert_int_equal(vn_count_parse(bad[i].text, bad[i].min, bad[i].max, &v, &e), -EINVAL);
		assert_int_equal(e.kind, VN_ERR_INPUT);
		assert_true(v == 42);
	}
}

static void test_size_range(void **state)
{
	struct vn_error err = {0};
	uint64_t b;

	assert_int_equal(vn_size_parse_range("1T", 1, UINT64_C(1) << 40, &b, &err), 0);
	assert_true(b == UINT64_C(1) << 40);
	static const char *const bad[] = {"0", "1025G", "2T", "-1M", "x"};
	for (size_t i = 0; i < VN_ARRAY_SIZE(bad); i++) {
		struct vn_error e = {0};
		b = 42;
		assert_int_equal(vn_size_parse_range(bad[i], 1, UINT64_C(1) << 40, &b, &e), -EINVAL);
		assert_int_equal(e.kind, VN_ERR_INPUT);
		assert_true(b == 42);
	}
	struct vn_error e = {0};
	vn_size_parse_range("2T", 1, UINT64_C(1) << 40, &b, &e);
	assert_string_equal(e.msg, "size '2T' is out of range 1..1T");
}

static void test_error_first_wins(void **state)
{
	struct vn_error err = {0};

	vn_input_error(&err, "first %d", 1);
	vn_infra_error(&err, -EIO, "second");
	assert_string_equal(err.msg, "first 1");
	vn_error_prefix(&err, "ctx");
	assert_string_equal(err.msg, "ctx: first 1");
	assert_int_equal(err.kind, VN_ERR_INPUT);
	vn_error_clear(&err);
}

static void touch(const char *dir, const char *name)
{
	char path[PATH_MAX * 2];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	assert_non_null(f = fopen(path, "w"));
	fclose(f);
}

static void mkdirs(const char *base, const char *rel)
{
	char path[PATH_MAX * 2];

	snprintf(path, sizeof(path), "%s/%s", base, rel);
	for (char *p = path + strlen(base) + 1; *p; p++) {
		if (*p == '/') {
			*p = '\0';
			mkdir(path, 0755);
			*p = '/';
		}
	}
	mkdir(path, 0755);
}

/* The build tree and an installed prefix, told apart by CMakeCache.txt beside the binary. */
static void test_paths_locate(void **state)
{
	char tmp[] = "/tmp/vn-paths.XXXXXX", exe[PATH_MAX], want[PATH_MAX], real[PATH_MAX];
	struct vn_paths p;

	unsetenv("VNUMA_HELPER_DIR");
	assert_non_null(mkdtemp(tmp));
	mkdirs(tmp, "build");
	touch(tmp, "build/CMakeCache.txt");
	snprintf(exe, sizeof(exe), "%s/build/vnuma", tmp);
	vn_paths_locate(exe, &p);
	assert_true(p.build_tree);
	assert_non_null(getenv("VN_SOURCE_DIR"));
	assert_string_equal(p.data_dir, getenv("VN_SOURCE_DIR"));
	assert_int_equal(p.nhelper_dirs, 2);
	snprintf(want, sizeof(want), "%s/build/src/agent", tmp);
	assert_string_equal(p.helper_dirs[0], want);

	mkdirs(tmp, "pfx/bin");
	mkdirs(tmp, "pfx/share/vnuma");
	mkdirs(tmp, "pfx/libexec/vnuma");
	snprintf(exe, sizeof(exe), "%s/pfx/bin/vnuma", tmp);
	vn_paths_locate(exe, &p);
	assert_false(p.build_tree);
	snprintf(want, sizeof(want), "%s/pfx/share/vnuma", tmp);
	assert_non_null(realpath(want, real));
	assert_string_equal(p.data_dir, real);
	assert_int_equal(p.nhelper_dirs, 1);
	snprintf(want, sizeof(want), "%s/pfx/libexec/vnuma", tmp);
	assert_non_null(realpath(want, real));
	assert_string_equal(p.helper_dirs[0], real);

	setenv("VNUMA_HELPER_DIR", "/opt/helpers", 1);
	vn_paths_locate(exe, &p);
	assert_int_equal(p.nhelper_dirs, 1);
	assert_string_equal(p.helper_dirs[0], "/opt/helpers");
	unsetenv("VNUMA_HELPER_DIR");

	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
	assert_int_equal(system(cmd), 0);
}

/* Names are looked up in first_dir, then ./SUBDIR; not found names what was searched. */
static void test_paths_search(void **state)
{
	char tmp[] = "/tmp/vn-paths.XXXXXX", old[PATH_MAX], want[PATH_MAX * 2];
	struct vn_error err = {0};
	char *path = NULL;

	assert_non_null(mkdtemp(tmp));
	assert_non_null(getcwd(old, sizeof(old)));
	mkdirs(tmp, "topologies");
	mkdirs(tmp, "near");
	touch(tmp, "topologies/a.xml");
	touch(tmp, "topologies/b.xml");
	touch(tmp, "topologies/notes.txt");
	touch(tmp, "near/b.xml");
	mkdirs(tmp, "topologies/c.xml"); /* a directory is no topology */
	assert_int_equal(chdir(tmp), 0);

	snprintf(want, sizeof(want), "%s/topologies/a.xml", tmp);
	assert_int_equal(vn_paths_search("a", "topologies", ".xml", NULL, &path, NULL), 1);
	assert_string_equal(path, want);
	free(path);
	assert_int_equal(vn_paths_search("a.xml", "topologies", ".xml", NULL, &path, NULL), 1);
	assert_string_equal(path, want);
	free(path);
	snprintf(want, sizeof(want), "%s/near/b.xml", tmp);
	assert_int_equal(vn_paths_search("b", "topologies", ".xml", "near", &path, NULL), 1);
	assert_string_equal(path, want);
	free(path);
	assert_int_equal(vn_paths_search("c", "topologies", ".xml", NULL, &path, NULL), 0);
	assert_int_equal(vn_paths_search("topologies/a", "topologies", ".xml", NULL, &path, NULL), 0);
	assert_null(path);

	struct vn_strbuf tried = VN_STRBUF_INIT;
	assert_int_equal(vn_paths_search("zz", "topologies", ".xml", NULL, &path, &tried), 0);
	assert_non_null(strstr(tried.s, "./topologies"));
	vn_strbuf_free(&tried);

	/* find: a file as given wins; a miss is an input error naming the name and the dirs. */
	assert_int_equal(vn_paths_find("topologies/b.xml", "topology", "topologies", ".xml", NULL, &path, &err), 0);
	assert_non_null(strstr(path, "/topologies/b.xml"));
	free(path);
	assert_int_not_equal(vn_paths_find("zz", "topology", "topologies", ".xml", NULL, &path, &err), 0);
	assert_int_equal(err.kind, VN_ERR_INPUT);
	assert_non_null(strstr(err.msg, "zz: no such topology"));
	assert_non_null(strstr(err.msg, "zz.xml"));
	assert_non_null(strstr(err.msg, "./topologies"));
	vn_error_clear(&err);
	assert_int_not_equal(vn_paths_find("no/such.xml", "topology", "topologies", ".xml", NULL, &path, &err), 0);
	assert_string_equal(err.msg, "no/such.xml: no such topology file");
	vn_error_clear(&err);

	_cleanup_strv_ char **names = NULL;
	assert_int_equal(vn_paths_list("topologies", ".xml", &names), 2);
	assert_string_equal(names[0], "a");
	assert_string_equal(names[1], "b");
	assert_null(names[2]);

	assert_int_equal(chdir(old), 0);
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
	assert_int_equal(system(cmd), 0);
}

static char *tmpdir_new(void)
{
	char *d = strdup("/tmp/vn-test-util.XXXXXX");

	assert_non_null(mkdtemp(d));
	return d;
}

static void rm_rf(const char *d)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d);
	assert_int_equal(system(cmd), 0);
}

static void test_file_read_refuses_fifo(void **state)
{
	_cleanup_free_ char *d = tmpdir_new(), *fifo = NULL, *reg = NULL, *data = NULL;
	struct vn_error err = {0};
	size_t len;

	assert_true(asprintf(&fifo, "%s/fifo", d) > 0 && asprintf(&reg, "%s/reg", d) > 0);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	/* Without O_NONBLOCK + fstat this would block forever: no writer ever comes. */
	alarm(5);
	assert_int_equal(vn_file_read(fifo, 1024, &data, &len, &err), -EINVAL);
	alarm(0);
	assert_int_equal(err.kind, VN_ERR_INPUT);
	assert_non_null(strstr(err.msg, "is a FIFO, not a regular file"));
	vn_error_clear(&err);
	assert_int_equal(vn_file_read(d, 1024, &data, &len, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "a directory"));
	vn_error_clear(&err);

	assert_int_equal(vn_file_write_text(reg, "hello\n", &err), 0);
	assert_int_equal(vn_file_read(reg, 1024, &data, &len, &err), 0);
	assert_string_equal(data, "hello\n");
	assert_int_equal(len, 6);
	free(steal_pointer(&data));
	assert_int_equal(vn_file_read(reg, 5, &data, &len, &err), -EFBIG);
	vn_error_clear(&err);
	rm_rf(d);
}

static void test_file_write_atomic_no_follow(void **state)
{
	_cleanup_free_ char *d = tmpdir_new(), *victim = NULL, *res = NULL, *data = NULL, *stream = NULL;
	struct vn_error err = {0};
	struct stat st;
	size_t len;

	assert_true(asprintf(&victim, "%s/victim", d) > 0 && asprintf(&res, "%s/result.json", d) > 0 &&
		    asprintf(&stream, "%s/samples.jsonl", d) > 0);
	assert_int_equal(vn_file_write_text(victim, "precious\n", &err), 0);
	assert_int_equal(symlink(victim, res), 0);
	assert_int_equal(symlink(victim, stream), 0);

	assert_int_equal(vn_file_write_text(res, "{}\n", &err), 0);
	assert_int_equal(lstat(res, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(vn_file_read(victim, 1024, &data, &len, &err), 0);
	assert_string_equal(data, "precious\n");
	free(steal_pointer(&data));

	FILE *f = NULL;
	assert_int_equal(vn_file_create_stream(stream, &f, &err), 0);
	fputs("{\"t\":1}\n", f);
	fclose(f);
	assert_int_equal(lstat(stream, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(vn_file_read(victim, 1024, &data, &len, &err), 0);
	assert_string_equal(data, "precious\n");
	free(steal_pointer(&data));

	/* Copy, and no temp file left behind by any of it. */
	_cleanup_free_ char *copy = NULL;
	assert_true(asprintf(&copy, "%s/copy", d) > 0);
	assert_int_equal(vn_file_copy_atomic(victim, copy, &err), 0);
	assert_int_equal(vn_file_read(copy, 1024, &data, &len, &err), 0);
	assert_string_equal(data, "precious\n");
	assert_int_equal(vn_dir_nonempty(d), 1);
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "ls '%s' | grep -q tmp", d);
	assert_int_not_equal(system(cmd), 0);

	/* A failed write leaves the old file and no temp file. */
	_cleanup_free_ char *sub = NULL, *in_missing = NULL;
	assert_true(asprintf(&in_missing, "%s/no/such/dir/x", d) > 0);
	assert_true(vn_file_write_text(in_missing, "x", &err) < 0);
	assert_int_equal(err.kind, VN_ERR_INFRA);
	assert_non_null(strstr(err.msg, in_missing));
	vn_error_clear(&err);

	assert_true(asprintf(&sub, "%s/empty", d) > 0);
	assert_int_equal(mkdir(sub, 0700), 0);
	assert_int_equal(vn_dir_nonempty(sub), 0);
	assert_int_equal(vn_dir_nonempty(in_missing), 0);
	rm_rf(d);
}

static void test_guest_name_rule(void **state)
{
	static const char *const good[] = {"a", "4node-amd", "4node-amd-2", "scn-memfollow-2node", "x.y_z", NULL};
	static const char *const bad[] = {"", ".", "..", "../x", "a/b", "-x", ".hidden", "a b", "a'b", "é", NULL};
	struct vn_error err = {0};
	char longname[VN_GUEST_NAME_MAX + 2];

	for (const char *const *p = good; *p; p++)
		assert_true(vn_guest_name_valid(*p));
	for (const char *const *p = bad; *p; p++)
		assert_false(vn_guest_name_valid(*p));
	assert_false(vn_guest_name_valid(NULL));
	memset(longname, 'a', sizeof(longname));
	longname[VN_GUEST_NAME_MAX] = '\0';
	assert_true(vn_guest_name_valid(longname));
	longname[VN_GUEST_NAME_MAX] = 'a';
	longname[VN_GUEST_NAME_MAX + 1] = '\0';
	assert_false(vn_guest_name_valid(longname));
	assert_int_equal(vn_guest_name_check("..", &err), -EINVAL);
	assert_int_equal(err.kind, VN_ERR_INPUT);
	assert_non_null(strstr(err.msg, "bad guest name '..'"));
	vn_error_clear(&err);
}

/* Guest text in a message: printable ASCII only, bounded, and marked when cut. */
static void test_excerpt(void **state)
{
	char out[16 + 4];

	assert_string_equal(vn_excerpt("plain", 5, 16, out), "plain");
	assert_string_equal(vn_excerpt("a\x1b[2Jb\nc\xff", 9, 16, out), "a?[2Jb?c?");
	assert_string_equal(vn_excerpt("0123456789abcdefXYZ", 19, 16, out), "0123456789abcdef...");
	assert_string_equal(vn_excerpt("", 0, 16, out), "");
}

#define CLEAN(in, max, flags) vn_text_clean((in), sizeof(in) - 1, (max), (flags), out)

/* The one sanitizer of guest text: what a patched kernel may print, and what comes out. */
static void test_text_clean(void **state)
{
	char out[64 + 4];

	/* Escape sequences: OSC (a window title) ended by BEL, CSI (clear screen). */
	assert_string_equal(CLEAN("panic: \x1b]0;PWNED\x07\x1b[2J", 64, 0), "panic: ?]0;PWNED??[2J");
	assert_string_equal(CLEAN("\a\b\x7f\r", 64, 0), "????");
	/* C1 controls, as UTF-8 (U+009B is CSI to a terminal, U+0085 NEL) and as raw bytes (invalid UTF-8). */
	assert_string_equal(CLEAN("a\xc2\x9b"
				  "2Jb\xc2\x85"
				  "c",
				  64, 0),
			    "a?2Jb?c");
	assert_string_equal(CLEAN("\x9b"
				  "2J\x90",
				  64, 0),
			    "?2J?");
	/* Valid UTF-8 stays as it is, up to four bytes a character. */
	assert_string_equal(CLEAN("Gr\xc3\xbc\xc3\x9f"
				  "e \xe2\x82\xac \xf0\x9d\x84\x9e",
				  64, 0),
			    "Gr\xc3\xbc\xc3\x9f"
			    "e \xe2\x82\xac \xf0\x9d\x84\x9e");
	/* Invalid UTF-8: stray continuation bytes, bytes no UTF-8 has, a lead byte without its tail. */
	assert_string_equal(CLEAN("\x80\xbf\xff\xfe\xc3x", 64, 0), "?????x");
	/* Overlong forms of '/' and of NUL. */
	assert_string_equal(CLEAN("\xc0\xaf|\xe0\x80\xaf|\xf0\x80\x80\xaf|\xc0\x80|\xc1\xbf", 64, 0),
			    "??|???|????|??|??");
	/* Surrogates (U+D800, U+DFFF) and past U+10FFFF. */
	assert_string_equal(CLEAN("\xed\xa0\x80|\xed\xbf\xbf|\xf4\x90\x80\x80|\xf5\x80\x80\x80", 64, 0),
			    "???|???|????|????");
	/* Not XML characters (U+FFFE, U+FFFF) and the bidirectional overrides (U+202E, U+2066). */
	assert_string_equal(CLEAN("\xef\xbf\xbe\xef\xbf\xbf|\xe2\x80\xae|\xe2\x81\xa6", 64, 0), "??|?|?");
	/* NUL inside the text. */
	assert_string_equal(CLEAN("a\0b", 64, 0), "a?b");
	/* Cut inside a character: the whole character goes, never half of it. */
	assert_string_equal(CLEAN("ab\xe2\x82\xac", 4, 0), "ab...");
	assert_string_equal(CLEAN("ab\xe2\x82\xac", 3, 0), "ab...");
	assert_string_equal(CLEAN("ab\xe2\x82\xac", 5, 0), "ab\xe2\x82\xac");
	assert_string_equal(CLEAN("ab\xf0\x9d\x84\x9e"
				  "c",
				  5, 0),
			    "ab...");
	/* Text that ends inside a character (cut before it got here). */
	assert_string_equal(CLEAN("ab\xe2\x82", 64, 0), "ab??");
	/* Lines: \n and \t kept for a console tail, \r and the rest not. */
	assert_string_equal(CLEAN("a\nb\tc\rd\x1b", 64, VN_TEXT_LINES), "a\nb\tc?d?");
	assert_string_equal(CLEAN("a\nb\tc", 64, 0), "a?b?c");

	char *d = vn_text_dup("\x1b[31mred\xff", 6, 0);
	assert_string_equal(d, "?[31mr...");
	free(d);

	/* Whatever comes in: valid UTF-8 out, no control character, within max + 3 bytes. */
	srand(7);
	for (int round = 0; round < 20000; round++) {
		char in[64];
		size_t len = (size_t)(rand() % 64), max = (size_t)(rand() % 65);
		for (size_t i = 0; i < len; i++)
			in[i] = (char)(round % 3 ? rand() : 0x80 | rand() % 0x50); /* a third: lead and tail bytes */
		vn_text_clean(in, len, max, round & 1 ? VN_TEXT_LINES : 0, out);
		unsigned controls;
		assert_true(strlen(out) <= max + 3);
		assert_true(text_check(out, strlen(out), &controls));
		assert_int_equal(controls, 0);
		if (!(round & 1))
			assert_null(strpbrk(out, "\n\t"));
	}
}

/* Every message that leaves util/error.c went through the sanitizer, whatever a caller quoted. */
static void test_error_clean(void **state)
{
	struct vn_error err = {0};

	vn_infra_error(&err, -EIO, "guest g: agent exec: %s", "\x1b]0;PWNED\x07\xff\xc0\xaf");
	assert_string_equal(err.msg, "guest g: agent exec: ?]0;PWNED????");
	vn_error_prefix(&err, "run %s", "\x1b[2J");
	assert_string_equal(err.msg, "run ?[2J: guest g: agent exec: ?]0;PWNED????");
	vn_error_set_detail(&err, "--- last lines ---\nKernel panic\x1b[2J\r\n\xed\xa0\x80\n");
	assert_string_equal(err.detail, "--- last lines ---\nKernel panic?[2J?\n???\n");
	vn_error_clear(&err);

	/* A message cut by its size mid-character ends in '?', not in half a character. */
	char big[VN_ERROR_MSG_MAX + 8];
	memset(big, 'x', sizeof(big));
	memcpy(big + VN_ERROR_MSG_MAX - 2, "\xe2\x82\xac", 3);
	big[sizeof(big) - 1] = '\0';
	vn_infra_error(&err, -EIO, "%s", big);
	unsigned controls;
	assert_true(text_check(err.msg, strlen(err.msg), &controls));
	assert_int_equal(strlen(err.msg), VN_ERROR_MSG_MAX - 1);
	assert_int_equal(err.msg[VN_ERROR_MSG_MAX - 2], '?');
	vn_error_clear(&err);
}

static void test_strmap(void **state)
{
	(void)state;
	struct vn_strmap m = {0};
	char(*keys)[16] = calloc(20000, sizeof(*keys));
	size_t v;

	assert_false(vn_strmap_get(&m, "x", &v)); /* empty, never grown */
	for (size_t i = 0; i < 20000; i++) {
		snprintf(keys[i], sizeof(keys[i]), "k%zu", i);
		assert_true(vn_strmap_put(&m, keys[i], i));
	}
	assert_int_equal(m.n, 20000);
	assert_true(2 * m.n <= m.cap);
	for (size_t i = 0; i < 20000; i += 7) {
		assert_true(vn_strmap_get(&m, keys[i], &v));
		assert_int_equal(v, i);
	}
	/* A key already there keeps its first value: how a duplicate is told. */
	assert_false(vn_strmap_put(&m, "k42", 7));
	assert_true(vn_strmap_get(&m, "k42", &v));
	assert_int_equal(v, 42);
	assert_true(vn_strmap_get(&m, "k0", NULL));
	assert_false(vn_strmap_get(&m, "k20000", &v));
	assert_false(vn_strmap_get(&m, "", &v));
	vn_strmap_free(&m);
	assert_int_equal(m.n, 0);
	free(keys);
}

/* A sliced wait with nobody signalling ends each slice by itself, and a passed deadline ends it at once. */
static void test_cond_wait_slice(void **state)
{
	pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t cond;
	(void)state;

	vn_cond_init_monotonic(&cond);
	pthread_mutex_lock(&lock);
	int64_t t0 = vn_now_ms(), deadline = t0 + 250;
	int slices = 0;
	while (vn_now_ms() < deadline && slices < 1000) {
		vn_cond_wait_slice(&cond, &lock, deadline);
		slices++;
	}
	int64_t waited = vn_now_ms() - t0;
	assert_true(waited >= 250 && waited < 5000);
	assert_true(slices >= 3); /* 100 ms at most each */
	t0 = vn_now_ms();
	vn_cond_wait_slice(&cond, &lock, t0 - 1);
	assert_true(vn_now_ms() - t0 < 50);
	pthread_mutex_unlock(&lock);
	pthread_cond_destroy(&cond);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cond_wait_slice),
		cmocka_unit_test(test_cpulist_ok),
		cmocka_unit_test(test_excerpt),
		cmocka_unit_test(test_text_clean),
		cmocka_unit_test(test_error_clean),
		cmocka_unit_test(test_cpulist_bad),
		cmocka_unit_test(test_size),
		cmocka_unit_test(test_duration),
		cmocka_unit_test(test_count),
		cmocka_unit_test(test_size_range),
		cmocka_unit_test(test_error_first_wins),
		cmocka_unit_test(test_paths_locate),
		cmocka_unit_test(test_paths_search),
		cmocka_unit_test(test_file_read_refuses_fifo),
		cmocka_unit_test(test_file_write_atomic_no_follow),
		cmocka_unit_test(test_guest_name_rule),
		cmocka_unit_test(test_strmap),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
