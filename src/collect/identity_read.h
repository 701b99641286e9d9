/* Reading the node's files under a root directory, for the identity profile.
 *
 * Every reader answers "absent" (NULL, false, nothing added) for a file that
 * is missing, unreadable or empty, so the profile never holds a guess. */
#ifndef NODEGATE_COLLECT_IDENTITY_READ_H
#define NODEGATE_COLLECT_IDENTITY_READ_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

/* The file's text with trailing white space removed, or NULL. Reads at most
 * 1 MiB: sysfs and procfs files that matter here are small. */
char *ng_id_read(const char *root, const char *path);
/* The file's bytes as they are (NUL-terminated beyond *len), or NULL. */
char *ng_id_read_bytes(const char *root, const char *path, size_t *len);
/* Like ng_id_read, with the path built from a format. */
char *ng_id_readf(const char *root, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* obj[key] = the file's text, when it has any. Returns whether it did. */
bool ng_id_add_file(cJSON *obj, const char *key, const char *root, const char *path);
/* obj[key] = the file's text as a whole number (decimal or 0x hex). */
bool ng_id_add_file_int(cJSON *obj, const char *key, const char *root, const char *path);
/* The file's text as a whole number. */
bool ng_id_read_int(const char *root, const char *path, long long *v);
/* The last path component of the symbolic link root/path, or NULL. */
char *ng_id_link_name(const char *root, const char *path);
bool ng_id_exists(const char *root, const char *path);

/* Sorted entry names of root/dir that start with prefix (any when NULL),
 * without "." and "..". Returns the count; *names is NULL when none. */
size_t ng_id_list(const char *root, const char *dir, const char *prefix, char ***names);
void ng_id_free_list(char **names, size_t n);

/* "key : value" lines (cpuinfo) and "Key: value kB" lines (meminfo): the
 * value for key within text, trimmed, or NULL. Copies into buf. */
const char *ng_id_field(const char *text, const char *key, char sep, char *buf, size_t n);

#endif
