/* vnuma doctor: one line per check, and the fix for each that failed. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "testbed/doctor.h"
#include "testbed/testbed.h"

static void print_json(const struct vn_doctor *d)
{
	json_object *o = json_object_new_object(), *a = json_object_new_array();

	for (size_t i = 0; i < d->n; i++) {
		const struct vn_check *c = &d->checks[i];
		json_object *j = json_object_new_object();
		json_object_object_add(j, "name", json_object_new_string(c->name));
		json_object_object_add(j, "verdict", json_object_new_string(vn_check_verdict_name(c->verdict)));
		json_object_object_add(j, "detail", json_object_new_string(c->detail));
		json_object_object_add(j, "fix", c->fix[0] ? json_object_new_string(c->fix) : NULL);
		if (c->seconds > 0)
			json_object_object_add(j, "seconds", json_object_new_double(c->seconds));
		json_object_array_add(a, j);
	}
	json_object_object_add(o, "checks", a);
	json_object_object_add(o, "can_boot", json_object_new_boolean(d->can_boot));
	json_object_object_add(o, "accelerator", d->can_boot ? json_object_new_string(vn_accel_name(d->accel)) : NULL);
	json_object_object_add(o, "ok", json_object_new_boolean(vn_doctor_ok(d)));
	printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}

static int cmd_doctor(int argc, char **argv, struct vn_error *err)
{
	struct vn_cli_args a;
	struct vn_testbed_ctx ctx;
	struct vn_doctor d;
	bool json = false;
	int c, rc;

	vn_cli_args_init(&a, &vn_cmd_doctor, argc, argv);
	while ((c = vn_cli_next(&a, err)) > 0)
		json = c == 'j';
	if (c < 0 || vn_cli_operands(&a, 0, 0, err) < 0)
		return a.exit;
	if ((rc = vn_cli_ctx(&a, &ctx, err)) < 0)
		return rc;
	rc = vn_doctor_run(&ctx, &d, err);
	vn_testbed_ctx_clear(&ctx);
	if (rc < 0)
		return rc;
	if (json) {
		print_json(&d);
	} else {
		for (size_t i = 0; i < d.n; i++) {
			const struct vn_check *ch = &d.checks[i];
			printf("%-4s  %-12s %s\n", vn_check_verdict_name(ch->verdict), ch->name, ch->detail);
			if (ch->fix[0] && (ch->verdict == VN_CHECK_FAIL || ch->verdict == VN_CHECK_WARN))
				printf("      %-12s fix: %s\n", "", ch->fix);
		}
		printf("%s\n", vn_doctor_ok(&d) ? "vnuma can run on this host"
						: "vnuma cannot run on this host as it is: fix the FAIL lines above");
	}
	return vn_doctor_ok(&d) ? VN_EXIT_OK : VN_EXIT_INFRA;
}

static const struct vn_cli_opt doctor_opts[] = {
	{"json", 'j', false, NULL, VN_VAL_NONE,
	 "one JSON object: {checks: [{name, verdict, detail, fix, seconds}],\n"
	 "can_boot, accelerator, ok}"},
	VN_CLI_OPT_END,
};

const struct vn_cmd vn_cmd_doctor = {
	.name = "doctor",
	.fn = cmd_doctor,
	.summary = "can this host run vnuma (real KVM and TCG probe boots), and what to fix",
	.synopsis = "[--json]",
	.description = "One line per check, with a verdict (ok, warn, FAIL, skip) and, for a problem, its\n"
		       "fix: the state dir, the libvirt-qemu user, QEMU, busybox-static, numactl, the\n"
		       "stock kernel, memory, disk, libvirt and QEMU versions, /dev/kvm, and real KVM and\n"
		       "TCG probe boots timed to the kernel's first console line (a /dev/kvm that exists\n"
		       "proves nothing). Proven verdicts are cached for up and run. Exit 0 when nothing\n"
		       "failed and some accelerator boots a guest, 3 otherwise.",
	.opts = doctor_opts,
	.common = VN_CLI_GUEST,
};
