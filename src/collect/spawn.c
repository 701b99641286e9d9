#include "collect/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define KILL_GRACE_S 2.0

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct sink {
	char *buf;
	size_t len, cap, max;
	bool truncated, oom;
};

static void sink_add(struct sink *s, const char *data, size_t n)
{
	if (s->len + n > s->max) {
		s->truncated = true;
		n = s->max > s->len ? s->max - s->len : 0;
	}
	if (n == 0 || s->oom)
		return;
	if (s->len + n + 1 > s->cap) {
		size_t cap = s->cap ? s->cap : 65536;
		while (cap < s->len + n + 1)
			cap *= 2;
		char *b = realloc(s->buf, cap);
		if (!b) {
			s->oom = true;
			return;
		}
		s->buf = b;
		s->cap = cap;
	}
	memcpy(s->buf + s->len, data, n);
	s->len += n;
}

/* Reads what is there; returns false once the stream has closed. */
static bool drain(int fd, struct sink *s)
{
	char chunk[65536];
	ssize_t n = read(fd, chunk, sizeof chunk);
	if (n > 0) {
		sink_add(s, chunk, (size_t)n);
		return true;
	}
	return n < 0 && (errno == EINTR || errno == EAGAIN);
}

static void drain_ready(int fd, bool open, struct sink *s)
{
	while (open) {
		struct pollfd p = {fd, POLLIN, 0};
		if (poll(&p, 1, 0) <= 0)
			break;
		open = drain(fd, s);
	}
}

static char *finish(struct sink *s, size_t *len)
{
	if (!s->buf)
		s->buf = malloc(1);
	if (s->buf)
		s->buf[s->len] = '\0';
	*len = s->len;
	return s->buf;
}

int ng_spawn_capture(char *const argv[], double timeout_s, size_t max_output,
                     ng_spawn_result *r, char *errbuf, size_t errlen)
{
	return ng_spawn_capture_stdin(argv, -1, timeout_s, max_output, r, errbuf, errlen);
}

int ng_spawn_capture_stdin(char *const argv[], int stdin_fd, double timeout_s, size_t max_output,
                           ng_spawn_result *r, char *errbuf, size_t errlen)
{
	return ng_spawn_capture_until(argv, stdin_fd, timeout_s + KILL_GRACE_S, KILL_GRACE_S,
	                              max_output, r, errbuf, errlen);
}

int ng_spawn_capture_until(char *const argv[], int stdin_fd, double timeout_s, double grace_s,
                           size_t max_output, ng_spawn_result *r, char *errbuf, size_t errlen)
{
	*r = (ng_spawn_result){.exit_status = -1};
	if (!(grace_s >= 0))
		grace_s = 0;
	if (grace_s > timeout_s)
		grace_s = timeout_s > 0 ? timeout_s : 0;
	int out_pipe[2], err_pipe[2];
	if (pipe2(out_pipe, O_CLOEXEC) < 0) {
		snprintf(errbuf, errlen, "cannot create a pipe: %s", strerror(errno));
		return -1;
	}
	if (pipe2(err_pipe, O_CLOEXEC) < 0) {
		snprintf(errbuf, errlen, "cannot create a pipe: %s", strerror(errno));
		close(out_pipe[0]);
		close(out_pipe[1]);
		return -1;
	}
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	posix_spawn_file_actions_init(&fa);
	if (stdin_fd >= 0)
		posix_spawn_file_actions_adddup2(&fa, stdin_fd, 0);
	else
		posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, out_pipe[1], 1);
	posix_spawn_file_actions_adddup2(&fa, err_pipe[1], 2);
	posix_spawnattr_init(&attr);
	/* Its own process group, so a timeout ends launchers and their children
	 * too; default signal handling, whatever nodegate ignores. */
	sigset_t none, all;
	sigemptyset(&none);
	sigfillset(&all);
	posix_spawnattr_setpgroup(&attr, 0);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setsigdefault(&attr, &all);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
	                                    POSIX_SPAWN_SETSIGDEF);
	pid_t pid;
	double start = now_s();
	int rc = posix_spawnp(&pid, argv[0], &fa, &attr, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	close(out_pipe[1]);
	close(err_pipe[1]);
	if (rc != 0) {
		close(out_pipe[0]);
		close(err_pipe[0]);
		r->spawn_errno = rc;
		r->out = calloc(1, 1);
		r->err = calloc(1, 1);
		return 0;
	}
	r->spawned = true;

	struct sink out = {.max = max_output}, err = {.max = max_output};
	struct pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
	double deadline = start + timeout_s - grace_s, kill_at = 0;
	bool open_out = true, open_err = true;
	int status = 0;
	bool reaped = false;
	while (!reaped) {
		double t = now_s();
		if (!r->timed_out && t >= deadline) {
			r->timed_out = true;
			kill(-pid, grace_s > 0 ? SIGTERM : SIGKILL);
			kill_at = grace_s > 0 ? deadline + grace_s : 0;
		} else if (r->timed_out && kill_at && t >= kill_at) {
			kill(-pid, SIGKILL);
			kill_at = 0;
		}
		if (open_out || open_err) {
			double until = r->timed_out ? (kill_at ? kill_at : t + 0.1) : deadline;
			int wait_ms = (int)((until - t) * 1000) + 1;
			if (wait_ms > 200)
				wait_ms = 200;
			fds[0].fd = open_out ? out_pipe[0] : -1;
			fds[1].fd = open_err ? err_pipe[0] : -1;
			int n = poll(fds, 2, wait_ms);
			if (n > 0) {
				if (open_out && fds[0].revents)
					open_out = drain(out_pipe[0], &out);
				if (open_err && fds[1].revents)
					open_err = drain(err_pipe[0], &err);
			}
		} else {
			usleep(10000);
		}
		/* Both streams closed is not the end: a daemonised child may hold
		 * them. The process's exit is. */
		pid_t w = waitpid(pid, &status, WNOHANG);
		if (w == pid)
			reaped = true;
	}
	/* Whatever is still buffered in the pipes after exit; never block, since
	 * a child the program left behind may hold a pipe open. */
	drain_ready(out_pipe[0], open_out, &out);
	drain_ready(err_pipe[0], open_err, &err);
	close(out_pipe[0]);
	close(err_pipe[0]);
	/* Leave no stragglers of the group behind. */
	kill(-pid, SIGKILL);
	r->seconds = now_s() - start;
	if (WIFEXITED(status))
		r->exit_status = WEXITSTATUS(status);
	else if (WIFSIGNALED(status))
		r->signal = WTERMSIG(status);
	r->truncated = out.truncated || err.truncated;
	r->out = finish(&out, &r->out_len);
	r->err = finish(&err, &r->err_len);
	if (out.oom || err.oom || !r->out || !r->err) {
		snprintf(errbuf, errlen, "out of memory capturing the output of %s", argv[0]);
		ng_spawn_result_free(r);
		return -1;
	}
	return 0;
}

void ng_spawn_result_free(ng_spawn_result *r)
{
	free(r->out);
	free(r->err);
	r->out = r->err = NULL;
}

void ng_spawn_describe(const ng_spawn_result *r, char *buf, size_t len)
{
	if (!r->spawned)
		snprintf(buf, len, "could not be started: %s", strerror(r->spawn_errno));
	else if (r->timed_out)
		snprintf(buf, len, "timed out after %.1f s and was killed", r->seconds);
	else if (r->signal)
		snprintf(buf, len, "was killed by signal %d (%s)", r->signal, strsignal(r->signal));
	else
		snprintf(buf, len, "exited with status %d", r->exit_status);
}
