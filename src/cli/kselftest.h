/* kselftest built for a run's kernel: `vnuma kernel selftests`, and run's --kselftest. */
#pragma once

#include "kernel/selftests.h"
#include "util/arch.h"
#include "util/error.h"

/*
 * The selftests of kernel ("stock" or NULL: Debian's linux-source-6.1; else
 * a source recipe's name or file) for arch, built or found in state_dir's
 * kernel cache, with progress on stderr. tests: comma-separated, NULL: the default.
 */
int vn_cli_kselftest(const char *state_dir, const char *kernel, enum vn_arch arch, const char *tests, int jobs,
		     struct vn_selftests **out, struct vn_error *err);
