/*
 * pause: the sandbox ("infra") process of sergeant's test pods.
 *
 * It holds the pod's namespaces open and does nothing else:
 *   - SIGTERM / SIGINT  -> exit 0
 *   - SIGCHLD           -> reap every exited child (it is PID 1 of the pod's
 *                          PID namespace when the pod shares one)
 *
 * The signals are blocked and taken synchronously with sigwaitinfo(), so no
 * handler runs asynchronously.  A blocked signal is never "ignored" by the
 * kernel, so this works as PID 1 of a PID namespace too, where signals with the
 * default disposition would be dropped.
 *
 * Built with: gcc -static -Os -s -o pause pause.c
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void reap_children(void)
{
	for (;;) {
		pid_t pid = waitpid(-1, NULL, WNOHANG);
		if (pid > 0)
			continue;
		if (pid < 0 && errno == EINTR)
			continue;
		return; /* 0: children left but none exited; -1/ECHILD: none left */
	}
}

int main(int argc, char **argv)
{
	sigset_t set;

	if (argc > 1 && (strcmp(argv[1], "-v") == 0 || strcmp(argv[1], "--version") == 0)) {
		puts("sergeant-pause 1.0");
		return 0;
	}

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &set, NULL) != 0) {
		perror("pause: sigprocmask");
		return 1;
	}

	if (getpid() != 1)
		fputs("pause: warning: not running as PID 1\n", stderr);

	for (;;) {
		siginfo_t info;
		int sig = sigwaitinfo(&set, &info);

		if (sig < 0) {
			if (errno == EINTR)
				continue;
			perror("pause: sigwaitinfo");
			return 1;
		}
		switch (sig) {
		case SIGTERM:
		case SIGINT:
			reap_children();
			return 0;
		case SIGCHLD:
			reap_children();
			break;
		default:
			break;
		}
	}
}
