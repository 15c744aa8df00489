#include "util/interrupt.h"

#include <string.h>

volatile sig_atomic_t vn_interrupted;

static void on_signal(int sig)
{
	vn_interrupted = sig;
}

void vn_interrupt_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	/* No SA_RESTART: a blocking poll() must return EINTR so loops see the flag. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}
