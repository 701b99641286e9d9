/* File readers for the identity profile: root-relative, absent on any doubt. */
#include "collect/identity_read.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define READ_MAX (1 << 20)

static int join(char *buf, size_t n, const char *root, const char *path)
{
	if (!root || !root[0])
		root = "/";
	size_t rl = strlen(root);
	/* "/" + "/proc/x" must read /proc/x, and "/tmp/t" + "/proc/x" /tmp/t/proc/x. */
	while (rl > 0 && root[rl - 1] == '/')
		rl--;
	while (*path == '/')
		path++;
	int w = snprintf(buf, n, "%.*s/%s", (int)rl, root, path);
	return w < 0 || (size_t)w >= n ? -1 : 0;
}

char *ng_id_read_bytes(const char *root, const char *path, size_t *lenp)
{
	char full[PATH_MAX];
	if (join(full, sizeof full, root, path) < 0)
		return NULL;
	int fd = open(full, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return NULL;
	size_t cap = 4096, len = 0;
	char *s = malloc(cap);
	while (s) {
		if (len + 1 >= cap) {
			if (cap >= READ_MAX)
				break;
			char *t = realloc(s, cap * 2);
			if (!t) {
				free(s);
				s = NULL;
				break;
			}
			s = t;
			cap *= 2;
		}
		ssize_t r = read(fd, s + len, cap - 1 - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			/* A read error (EIO on a sysfs attribute, EACCES) is no value. */
			if (r < 0) {
				free(s);
				s = NULL;
			}
			break;
		}
		len += (size_t)r;
	}
	close(fd);
	if (!s)
		return NULL;
	s[len] = '\0';
	*lenp = len;
	return s;
}

char *ng_id_read(const char *root, const char *path)
{
	size_t len;
	char *s = ng_id_read_bytes(root, path, &len);
	if (!s)
		return NULL;
	while (len > 0 && isspace((unsigned char)s[len - 1]))
		len--;
	s[len] = '\0';
	if (len == 0 || strlen(s) != len) {
		/* Empty, or binary where text was expected: no value. */
		free(s);
		return NULL;
	}
	return s;
}

char *ng_id_readf(const char *root, const char *fmt, ...)
{
	char path[PATH_MAX];
	va_list ap;
	va_start(ap, fmt);
	int w = vsnprintf(path, sizeof path, fmt, ap);
	va_end(ap);
	if (w < 0 || (size_t)w >= sizeof path)
		return NULL;
	return ng_id_read(root, path);
}

bool ng_id_add_file(cJSON *obj, const char *key, const char *root, const char *path)
{
	char *s = ng_id_read(root, path);
	if (!s)
		return false;
	cJSON_AddStringToObject(obj, key, s);
	free(s);
	return true;
}

bool ng_id_read_int(const char *root, const char *path, long long *v)
{
	char *s = ng_id_read(root, path);
	if (!s)
		return false;
	char *end;
	errno = 0;
	long long x = strtoll(s, &end, 0);
	bool ok = errno == 0 && end != s && *end == '\0';
	free(s);
	if (ok)
		*v = x;
	return ok;
}

bool ng_id_add_file_int(cJSON *obj, const char *key, const char *root, const char *path)
{
	long long v;
	if (!ng_id_read_int(root, path, &v))
		return false;
	cJSON_AddNumberToObject(obj, key, (double)v);
	return true;
}

char *ng_id_link_name(const char *root, const char *path)
{
	char full[PATH_MAX], target[PATH_MAX];
	if (join(full, sizeof full, root, path) < 0)
		return NULL;
	ssize_t n = readlink(full, target, sizeof target - 1);
	if (n <= 0)
		return NULL;
	target[n] = '\0';
	const char *slash = strrchr(target, '/');
	return strdup(slash ? slash + 1 : target);
}

bool ng_id_exists(const char *root, const char *path)
{
	char full[PATH_MAX];
	struct stat st;
	return join(full, sizeof full, root, path) == 0 && stat(full, &st) == 0;
}

static bool hex_letter(char c)
{
	return (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* node2 before node10 and nvme2n1 before nvme10n1, but PCI addresses such
 * as 0000:3b:00.0 (hex, fixed width) in plain byte order. */
static int by_name(const void *pa, const void *pb)
{
	const char *a = *(char *const *)pa, *b = *(char *const *)pb;
	size_t i = 0;
	while (a[i] && a[i] == b[i])
		i++;
	while (i > 0 && isdigit((unsigned char)a[i - 1]))
		i--;
	size_t na = strspn(a + i, "0123456789"), nb = strspn(b + i, "0123456789");
	if (na && nb && !hex_letter(a[i + na]) && !hex_letter(b[i + nb])) {
		unsigned long long x = strtoull(a + i, NULL, 10), y = strtoull(b + i, NULL, 10);
		if (x != y)
			return x < y ? -1 : 1;
	}
	return strcmp(a, b);
}

size_t ng_id_list(const char *root, const char *dir, const char *prefix, char ***names)
{
	char full[PATH_MAX];
	*names = NULL;
	if (join(full, sizeof full, root, dir) < 0)
		return 0;
	DIR *d = opendir(full);
	if (!d)
		return 0;
	size_t n = 0, cap = 0;
	char **v = NULL;
	for (struct dirent *e; (e = readdir(d));) {
		if (e->d_name[0] == '.' || (prefix && strncmp(e->d_name, prefix, strlen(prefix)) != 0))
			continue;
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 16;
			char **t = realloc(v, nc * sizeof *t);
			if (!t)
				break;
			v = t;
			cap = nc;
		}
		if (!(v[n] = strdup(e->d_name)))
			break;
		n++;
	}
	closedir(d);
	/* Version order (node2 before node10) so the profile reads the same on every run. */
	if (n)
		qsort(v, n, sizeof *v, by_name);
	*names = v;
	return n;
}

void ng_id_free_list(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

const char *ng_id_field(const char *text, const char *key, char sep, char *buf, size_t n)
{
	size_t kl = strlen(key);
	for (const char *line = text; line && *line;) {
		const char *eol = strchr(line, '\n');
		size_t ll = eol ? (size_t)(eol - line) : strlen(line);
		if (ll > kl && strncmp(line, key, kl) == 0) {
			const char *p = line + kl;
			while (p < line + ll && (*p == ' ' || *p == '\t'))
				p++;
			if (p < line + ll && *p == sep) {
				p++;
				while (p < line + ll && isspace((unsigned char)*p))
					p++;
				size_t vl = (size_t)(line + ll - p);
				while (vl > 0 && isspace((unsigned char)p[vl - 1]))
					vl--;
				if (vl == 0 || vl >= n)
					return NULL;
				memcpy(buf, p, vl);
				buf[vl] = '\0';
				return buf;
			}
		}
		line = eol ? eol + 1 : NULL;
	}
	return NULL;
}
