/*
 * vn_virt_volume_upload against a real daemon, for tests/integration/hosts.sh:
 *	test-virt-upload URI STATE_DIR POOL_DIR FILE
 * ensures the "vnuma" pool (at POOL_DIR when it has to be created), uploads
 * FILE and prints "created|reused POOL_PATH" then "uploaded|reused PATH".
 * Exit 0, or 3 with the error on stderr (2 for an input error). SIGINT aborts
 * an upload as Ctrl-C does in vnuma.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/interrupt.h"
#include "virt/storage.h"

int main(int argc, char **argv)
{
	struct vn_error err = {0};
	struct vn_virt *v = NULL;
	char *path = NULL;
	bool uploaded;
	int rc;

	if (argc != 5) {
		fprintf(stderr, "usage: %s URI STATE_DIR POOL_DIR FILE\n", argv[0]);
		return 2;
	}
	vn_interrupt_install();
	if ((rc = vn_virt_open(argv[1], argv[2], 10000, &v, &err)) < 0)
		goto fail;
	if ((rc = vn_virt_pool_ensure(v, argv[3], &err)) < 0)
		goto fail;
	struct vn_virt_host_info hi;
	if (vn_virt_host_info(v, &hi, &err) < 0)
		goto fail;
	printf("pool %s %s\n", rc ? "created" : "reused", hi.pool.path ? hi.pool.path : "?");
	vn_virt_host_info_clear(&hi);
	if ((rc = vn_virt_volume_upload(v, argv[4], &path, &uploaded, &err)) < 0)
		goto fail;
	printf("%s %s\n", uploaded ? "uploaded" : "reused", path);
	free(path);
	vn_virt_close(v);
	return 0;
fail:
	fprintf(stderr, "test-virt-upload: %s\n", err.msg[0] ? err.msg : strerror(-rc));
	vn_virt_close(v);
	return err.kind == VN_ERR_INPUT ? 2 : 3;
}
