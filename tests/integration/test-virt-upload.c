/*
 * vn_virt_volume_upload against a real daemon, for tests/integration/hosts.sh:
 *	test-virt-upload URI STATE_DIR POOL_DIR FILE [OVERLAY [delete]]
 * ensures the "vnuma" pool (at POOL_DIR when it has to be created), uploads
 * FILE and prints "pool created|reused POOL_PATH" then "uploaded|reused PATH".
 * With OVERLAY (a volume name), FILE being a qcow2 image: a qcow2 volume of
 * that name backed by the uploaded one is created ("overlay PATH"), as a
 * remote guest's disk would be; with "delete" it is deleted instead, twice
 * (the second time finds nothing, which is no error), "deleted".
 * Exit 0, or 3 with the error on stderr (2 for an input error). SIGINT aborts
 * an upload as Ctrl-C does in vnuma. With $VN_TEST_UPLOAD_STOP set it stops
 * itself (SIGSTOP) once connected, before the upload: a signal sent while it
 * is stopped then lands exactly there.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/interrupt.h"
#include "virt/storage.h"
#include "virt/virt-priv.h"

int main(int argc, char **argv)
{
	struct vn_error err = {0};
	struct vn_virt *v = NULL;
	char *path = NULL;
	bool uploaded;
	int rc;

	if (argc < 5 || argc > 7) {
		fprintf(stderr, "usage: %s URI STATE_DIR POOL_DIR FILE [OVERLAY [delete]]\n", argv[0]);
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
	fflush(stdout);
	if (getenv("VN_TEST_UPLOAD_STOP"))
		raise(SIGSTOP);
	if ((rc = vn_virt_volume_upload(v, argv[4], &path, &uploaded, &err)) < 0)
		goto fail;
	printf("%s %s\n", uploaded ? "uploaded" : "reused", path);
	if (argc == 7) {
		if ((rc = vn_virt_volume_delete(v, argv[5], &err)) < 0 ||
		    (rc = vn_virt_volume_delete(v, argv[5], &err)) < 0)
			goto fail;
		printf("deleted\n");
	} else if (argc == 6) {
		char *overlay = NULL;
		if ((rc = vn_virt_volume_create(v, argv[5], 64 << 20, "qcow2", path, &overlay, &err)) < 0)
			goto fail;
		printf("overlay %s\n", overlay);
		free(overlay);
	}
	free(path);
	vn_virt_close(v);
	return 0;
fail:
	fprintf(stderr, "test-virt-upload: %s\n", err.msg[0] ? err.msg : strerror(-rc));
	vn_virt_close(v);
	return err.kind == VN_ERR_INPUT ? 2 : 3;
}
