/* Work in a child process under a deadline (collect/bounded.h). */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/bounded.h"

#define REAP_WAIT_S 0.2 /* after SIGKILL: a child stuck in the driver may never die */

/* A fork, not a thread or a timer, is how a hang inside a library is
 * bounded: an NVML call that never returns (a GPU fallen off the bus, a
 * driver wedged in an ioctl) cannot be interrupted or cancelled from the
 * same process, and a thread stuck in it would keep the process alive and
 * its locks held. A child can be killed, with everything it started, and
 * the parent still answers in time. A child stuck in uninterruptible sleep
 * inside the driver may not die even on SIGKILL: it is not waited for past
 * a moment, and init reaps it when it finally ends. The store is written
 * the same way, so a locked SQLite file or an unreachable PostgreSQL server
 * cannot hold the node past the deadline either (Slurm would kill the hook,
 * and a killed Epilog drains the node). */

double ng_monotonic_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int ng_write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Waits at most wait_s for pid to end. The pipe's end usually comes a few
 * microseconds before the child can be reaped: the first naps are short. */
static bool reap(pid_t pid, double wait_s, int *status)
{
	double until = ng_monotonic_now() + wait_s;
	long nap_ns = 20 * 1000;
	for (;;) {
		pid_t r = waitpid(pid, status, WNOHANG);
		if (r == pid || (r < 0 && errno != EINTR))
			return r == pid;
		if (ng_monotonic_now() >= until)
			return false;
		struct timespec ts = {0, nap_ns};
		nanosleep(&ts, NULL);
		if (nap_ns < 5 * 1000 * 1000)
			nap_ns *= 2;
	}
}

/* Starts one child of its own process group running fn(wfd, arg); its
 * pipe's read end in *rfd. -1 (b->error) when it could not be started. */
static int start_child(ng_bounded_fn fn, const void *arg, pid_t *pid_out, int *rfd,
                       ng_bounded *b)
{
	int fds[2];
	if (pipe2(fds, O_CLOEXEC) < 0) {
		b->error = errno;
		return -1;
	}
	fflush(NULL);
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		b->error = errno;
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid == 0) {
		/* Never returns into the command: no atexit handlers, no stdio
		 * buffers of the parent's flushed twice. If the parent is killed
		 * (Slurm's own timeout), so is this. */
		setpgid(0, 0);
		close(fds[0]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(3);
		fn(fds[1], arg);
		_exit(0);
	}
	setpgid(pid, pid); /* both sides, so the group exists before either acts */
	close(fds[1]);
	*pid_out = pid;
	*rfd = fds[0];
	return 0;
}

/* Reads what is there on child i's pipe; false when its pipe is done with. */
static bool take(int fd, size_t max_bytes, ng_bounded *b)
{
	char chunk[65536];
	ssize_t n = read(fd, chunk, sizeof chunk);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return true;
	if (n <= 0) {
		b->finished = true;
		return false;
	}
	if (b->out.len + (size_t)n > max_bytes) {
		b->too_big = true;
		return false;
	}
	ng_strbuf_add(&b->out, chunk, (size_t)n);
	return true;
}

/* Makes sure the child is gone: reaped when it has ended in time, else
 * killed with its group and waited for a moment. */
static void end_child(pid_t pid, double t_end, ng_bounded *b)
{
	if (b->finished) {
		double left = t_end - ng_monotonic_now();
		b->reaped = reap(pid, left > 0 ? left : 0, &b->status);
	}
	if (!b->reaped) {
		kill(-pid, SIGKILL);
		kill(pid, SIGKILL);
		b->reaped = reap(pid, REAP_WAIT_S, &b->status);
		if (!b->reaped)
			b->stuck_pid = (int)pid;
	}
}

size_t ng_run_bounded_each(double t_end, size_t n, ng_bounded_fn fn, const void *const *args,
                           size_t max_bytes, ng_bounded *b)
{
	pid_t pid[NG_BOUNDED_MAX];
	struct pollfd p[NG_BOUNDED_MAX];
	size_t started = 0, open_pipes = 0;
	if (n > NG_BOUNDED_MAX)
		n = NG_BOUNDED_MAX;
	for (size_t i = 0; i < n; i++) {
		memset(&b[i], 0, sizeof b[i]);
		p[i] = (struct pollfd){.fd = -1, .events = POLLIN};
		pid[i] = -1;
		if (start_child(fn, args[i], &pid[i], &p[i].fd, &b[i]) == 0) {
			started++;
			open_pipes++;
		}
	}
	while (open_pipes) {
		double left = t_end - ng_monotonic_now();
		if (left <= 0)
			break;
		int r = poll(p, (nfds_t)n, (int)ceil(left * 1000));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		for (size_t i = 0; i < n; i++) {
			if (p[i].fd < 0 || !p[i].revents)
				continue;
			if (!take(p[i].fd, max_bytes, &b[i])) {
				close(p[i].fd);
				p[i].fd = -1;
				open_pipes--;
			}
		}
	}
	for (size_t i = 0; i < n; i++) {
		if (p[i].fd >= 0)
			close(p[i].fd);
		if (pid[i] > 0)
			end_child(pid[i], t_end, &b[i]);
	}
	return started;
}

int ng_run_bounded(double t_end, ng_bounded_fn fn, const void *arg, size_t max_bytes,
                   ng_bounded *b)
{
	return ng_run_bounded_each(t_end, 1, fn, &arg, max_bytes, b) == 1 ? 0 : -1;
}
