/*
 * Which accelerator a guest runs on, decided by what the guest does rather
 * than by what the host claims. /dev/kvm can exist and still be useless:
 * QEMU refuses to start (`failed to set MSR`), or starts and the guest never
 * executes a kernel instruction (nested virtualization in cloud VMs). Only a
 * kernel line on the console proves KVM, and only proven verdicts are cached.
 *
 * The world (clock, libvirt, console log, cache file) sits behind
 * struct vn_accel_ops so that the decision can be unit-tested with fakes.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "util/interrupt.h"
#include "util/strbuf.h"
#include "virt/virt-priv.h"

/* Our own words for a KVM attempt QEMU refused; the summary recognises them in a cached detail too. */
#define START_FAILED "QEMU did not start under KVM: "
#define SUMMARY_MAX  100

void vn_accel_oneline(const char *s, char *out, size_t len)
{
	size_t o = 0;

	if (len == 0)
		return;
	for (; *s && o + 1 < len; s++) {
		if (*s != '\n' && *s != '\r') {
			out[o++] = *s;
			continue;
		}
		while (s[1] == '\n' || s[1] == '\r')
			s++;
		if (!s[1] || o == 0)
			continue;
		for (const char *sep = " | "; *sep && o + 1 < len; sep++)
			out[o++] = *sep;
	}
	out[o] = '\0';
}

static bool has_prefix(const char *b, const char *e, const char *prefix)
{
	size_t n = strlen(prefix);
	return (size_t)(e - b) >= n && memcmp(b, prefix, n) == 0;
}

/* The message of one of QEMU's lines: past libvirt's wrapper, the timestamp, the program and the option named. */
static const char *line_message(const char *b, const char *e)
{
	static const char *const wrappers[] = {"qemu unexpectedly closed the monitor: ",
					       "process exited while connecting to monitor: "};

	for (size_t i = 0; i < sizeof(wrappers) / sizeof(wrappers[0]); i++) {
		const char *w = memmem(b, (size_t)(e - b), wrappers[i], strlen(wrappers[i]));
		if (w)
			b = w + strlen(wrappers[i]);
	}
	while (b < e && *b == ' ')
		b++;
	/* 2026-12-02T04:29:57.950723Z */
	if (e - b > 20 && b[4] == '-' && b[10] == 'T') {
		const char *z = memchr(b, ' ', (size_t)(e - b));
		if (z && z[-1] == 'Z')
			b = z + 1;
	}
	if (has_prefix(b, e, "qemu-system-")) {
		const char *c = memmem(b, (size_t)(e - b), ": ", 2);
		if (c)
			b = c + 2;
	}
	if (b < e && *b == '-') { /* "-accel kvm: warning: ..." */
		const char *c = memmem(b, (size_t)(e - b), ": ", 2);
		if (c)
			b = c + 2;
	}
	return b;
}

/* Lines end at a newline or at the " | " that vn_accel_oneline put in its place. */
static const char *line_end(const char *b)
{
	const char *nl = strchr(b, '\n'), *bar = strstr(b, " | ");
	if (!nl || (bar && bar < nl))
		nl = bar;
	return nl ? nl : b + strlen(b);
}

static const char *next_line(const char *e)
{
	return *e == '\n' ? e + 1 : *e ? e + 3 : e;
}

/* QEMU's cause in a few words: its error line (not the warnings before it, nor the assertion after it). */
static void cause(const char *text, char *out, size_t len)
{
	const char *msr = strstr(text, "failed to set MSR 0x");
	char buf[SUMMARY_MAX + 4];

	if (msr) {
		const char *h = msr + strlen("failed to set MSR 0x");
		int n = (int)strspn(h, "0123456789abcdefABCDEF");
		snprintf(out, len, "failed to set MSR 0x%.*s; nested virtualization?", n > 16 ? 16 : n, h);
		return;
	}
	const char *pick = NULL, *pick_end = NULL, *first = NULL, *first_end = NULL;
	for (const char *b = text, *e; *b; b = next_line(e)) {
		e = line_end(b);
		const char *m = line_message(b, e);
		if (m >= e)
			continue;
		if (has_prefix(m, e, "error: ")) {
			pick = m + strlen("error: ");
			pick_end = e;
			break;
		}
		if (!pick && !has_prefix(m, e, "warning: ") && !memmem(m, (size_t)(e - m), "Assertion", 9)) {
			pick = m;
			pick_end = e;
		}
		if (!first) {
			first = m;
			first_end = e;
		}
	}
	if (!pick && first) {
		pick = first;
		pick_end = first_end;
	} else if (!pick) {
		pick = text;
		pick_end = text + strlen(text);
	}
	snprintf(out, len, "%s", vn_excerpt(pick, (size_t)(pick_end - pick), SUMMARY_MAX, buf));
}

void vn_accel_summarize(const char *detail, char *out, size_t len)
{
	char c[SUMMARY_MAX + 64];

	if (strncmp(detail, START_FAILED, strlen(START_FAILED)) == 0) {
		cause(detail + strlen(START_FAILED), c, sizeof(c));
		snprintf(out, len, "QEMU failed to start under KVM (%s)", c);
		return;
	}
	cause(detail, out, len);
}

/* Printed by every kernel early, whatever its log level: the version banner or a timestamped line. */
static bool kernel_line(const char *s, size_t n)
{
	static const char banner[] = "Linux version ";

	if (memmem(s, n, banner, sizeof(banner) - 1))
		return true;
	/* "[    0.000000] " as CONFIG_PRINTK_TIME prints it: digits '.' digits ']' at the start of a line. */
	for (size_t i = 0; i < n; i++) {
		if (s[i] != '[' || (i > 0 && s[i - 1] != '\n' && s[i - 1] != '\r'))
			continue;
		size_t j = i + 1, digits = 0;
		while (j < n && s[j] == ' ')
			j++;
		while (j < n && s[j] >= '0' && s[j] <= '9')
			j++, digits++;
		if (digits == 0 || j >= n || s[j] != '.')
			continue;
		size_t frac = 0;
		for (j++; j < n && s[j] >= '0' && s[j] <= '9'; j++)
			frac++;
		if (frac == 6 && j < n && s[j] == ']')
			return true;
	}
	return false;
}

bool vn_console_shows_kernel(const char *s, size_t n)
{
	/* A kernel booted with `quiet` prints no banner; our init's markers still prove it ran. */
	return kernel_line(s, n) || memmem(s, n, "vnuma-init:", 11) != NULL;
}

enum watch_outcome { WATCH_PROGRESS, WATCH_DIED, WATCH_SILENT, WATCH_INTERRUPTED };

/* Poll until the console shows a kernel, the guest stops, or limit_ms passes. */
static enum watch_outcome watch(const struct vn_accel_ops *ops, long limit_ms, long *elapsed_ms)
{
	long t0 = ops->now_ms(ops->data);

	for (;;) {
		long now = ops->now_ms(ops->data);
		*elapsed_ms = now - t0;
		if (ops->progressed(ops->data))
			return WATCH_PROGRESS;
		if (!ops->running(ops->data))
			return ops->progressed(ops->data) ? WATCH_PROGRESS : WATCH_DIED;
		if (vn_was_interrupted())
			return WATCH_INTERRUPTED;
		if (*elapsed_ms >= limit_ms)
			return WATCH_SILENT;
		ops->sleep_ms(ops->data, 50);
	}
}

static void notify(const struct vn_accel_ops *ops, const char *line)
{
	if (ops->notify)
		ops->notify(ops->data, line);
}

static int interrupted(const struct vn_accel_ops *ops, struct vn_error *err)
{
	ops->abandon(ops->data);
	return vn_infra_error(err, -EINTR, "interrupted while the guest was starting; destroyed it");
}

/* Forced: no fallback, but a silent KVM still fails fast instead of waiting out the agent. */
static int boot_forced(const struct vn_accel_ops *ops, const struct vn_accel_limits *lim, enum vn_accel accel,
		       struct vn_accel_verdict *out, struct vn_error *err)
{
	long ms = 0;
	int rc;

	out->accel = accel;
	snprintf(out->reason, sizeof(out->reason), "forced by VNUMA_ACCEL=%s", vn_accel_name(accel));
	if ((rc = ops->start(ops->data, accel, err)) < 0)
		return vn_error_prefix(err, "%s forced by VNUMA_ACCEL", accel == VN_ACCEL_KVM ? "KVM" : "TCG");
	if (accel != VN_ACCEL_KVM)
		return 0;
	switch (watch(ops, lim->kvm_proof_ms, &ms)) {
	case WATCH_PROGRESS:
		snprintf(out->reason, sizeof(out->reason),
			 "forced by VNUMA_ACCEL=kvm; kernel printed %.1f s after start", (double)ms / 1000);
		return 0;
	case WATCH_INTERRUPTED: return interrupted(ops, err);
	case WATCH_DIED:
		ops->abandon(ops->data);
		return vn_infra_error(err, -EIO, "KVM forced by VNUMA_ACCEL=kvm, but the guest died %.1f s after start",
				      (double)ms / 1000);
	case WATCH_SILENT: break;
	}
	ops->abandon(ops->data);
	return vn_infra_error(err, -ETIMEDOUT,
			      "KVM forced by VNUMA_ACCEL=kvm, but the guest made no progress in %.0f s "
			      "(nested virtualization?); unset VNUMA_ACCEL to fall back to TCG",
			      (double)lim->kvm_proof_ms / 1000);
}

/* One KVM attempt: 0 when proven, else -1 with why it failed in why (all of it: QEMU's error is several lines). */
static int try_kvm(const struct vn_accel_ops *ops, const struct vn_accel_limits *lim, long *ms, char *why, size_t len,
		   struct vn_error *err)
{
	struct vn_error e = {0};

	if (ops->start(ops->data, VN_ACCEL_KVM, &e) < 0) {
		char flat[VN_ACCEL_DETAIL_MAX - sizeof(START_FAILED)];
		vn_accel_oneline(e.msg, flat, sizeof(flat));
		snprintf(why, len, START_FAILED "%s", flat);
		vn_error_clear(&e);
		return -1;
	}
	switch (watch(ops, lim->kvm_proof_ms, ms)) {
	case WATCH_PROGRESS: return 0;
	case WATCH_INTERRUPTED: return interrupted(ops, err);
	case WATCH_DIED: snprintf(why, len, "the KVM guest died %.1f s after start", (double)*ms / 1000); break;
	case WATCH_SILENT:
		snprintf(why, len,
			 "/dev/kvm is present but the guest made no progress in %.0f s (nested virtualization?)",
			 (double)lim->kvm_proof_ms / 1000);
		break;
	}
	ops->abandon(ops->data);
	return -1;
}

int vn_accel_boot(const struct vn_accel_ops *ops, const char *force, const struct vn_accel_limits *lim,
		  struct vn_accel_verdict *out, struct vn_error *err)
{
	char why[VN_ACCEL_DETAIL_MAX] = "", brief[VN_ACCEL_REASON_MAX - 32] = "";
	char cached_reason[VN_ACCEL_DETAIL_MAX] = "";
	enum vn_accel cached;
	long ms = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	if (force && *force) {
		if (strcmp(force, "tcg") == 0)
			return boot_forced(ops, lim, VN_ACCEL_TCG, out, err);
		if (strcmp(force, "kvm") == 0)
			return boot_forced(ops, lim, VN_ACCEL_KVM, out, err);
		return vn_input_error(err, "VNUMA_ACCEL must be tcg or kvm, not '%s'", force);
	}

	out->accel = VN_ACCEL_TCG;
	if (!ops->kvm_offered(ops->data, why, sizeof(why))) {
		vn_accel_summarize(why, brief, sizeof(brief));
		snprintf(out->reason, sizeof(out->reason), "no usable KVM: %s", brief);
		snprintf(out->detail, sizeof(out->detail), "%s", why);
		return ops->start(ops->data, VN_ACCEL_TCG, err);
	}
	bool have_cache = ops->cache_get(ops->data, &cached, cached_reason, sizeof(cached_reason)) == 0;
	if (have_cache && cached == VN_ACCEL_TCG) {
		if (!*cached_reason)
			snprintf(cached_reason, sizeof(cached_reason), "KVM did not work on this host");
		vn_accel_summarize(cached_reason, brief, sizeof(brief));
		snprintf(out->reason, sizeof(out->reason), "cached verdict: %s", brief);
		snprintf(out->detail, sizeof(out->detail), "%s", cached_reason);
		return ops->start(ops->data, VN_ACCEL_TCG, err);
	}

	/* A cached KVM verdict gets one more probe before it is given up: a loaded host can be slow once. */
	for (int attempt = 0; attempt < (have_cache ? 2 : 1); attempt++) {
		rc = try_kvm(ops, lim, &ms, why, sizeof(why), err);
		if (rc == 0) {
			out->accel = VN_ACCEL_KVM;
			snprintf(out->reason, sizeof(out->reason), "%s: kernel printed %.1f s after start",
				 have_cache && attempt == 0 ? "cached verdict re-proven" : "proven", (double)ms / 1000);
			snprintf(out->detail, sizeof(out->detail), "%s", out->reason);
			ops->cache_put(ops->data, VN_ACCEL_KVM, out->reason);
			return 0;
		}
		if (rc < -1)
			return rc;
		vn_accel_summarize(why, brief, sizeof(brief));
		if (have_cache && attempt == 0) {
			char line[VN_ACCEL_REASON_MAX + 64];
			snprintf(line, sizeof(line), "KVM (cached as working): %s; probing once more", brief);
			notify(ops, line);
		}
	}

	/* One short line for the terminal and the result; QEMU's whole text goes to the cache and doctor. */
	char line[VN_ACCEL_REASON_MAX + 32];
	snprintf(line, sizeof(line), "KVM: %s; using TCG", brief);
	notify(ops, line);
	snprintf(out->reason, sizeof(out->reason), "no usable KVM: %s", brief);
	snprintf(out->detail, sizeof(out->detail), "%s", why);
	if ((rc = ops->start(ops->data, VN_ACCEL_TCG, err)) < 0)
		return vn_error_prefix(err, "KVM failed (%s), and TCG", brief);
	/* Cache TCG only once TCG has shown a kernel: a kernel that prints nothing anywhere is not KVM's fault. */
	switch (watch(ops, lim->tcg_proof_ms, &ms)) {
	case WATCH_PROGRESS: ops->cache_put(ops->data, VN_ACCEL_TCG, why); break;
	case WATCH_INTERRUPTED: return interrupted(ops, err);
	case WATCH_DIED:
	case WATCH_SILENT: break; /* the caller's boot wait reports it with the console tail */
	}
	return 0;
}
