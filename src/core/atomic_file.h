/* The one way nodegate writes a file: so that a crash leaves either the old
 * file or the whole new one, and so that nobody else who can write the
 * directory can make it write anywhere else.
 *
 * The new content goes to a temporary of a random name in the target's own
 * directory, created O_EXCL|O_NOFOLLOW (a name planted in advance, link or
 * FIFO, is never opened: another name is drawn), then fsync, rename over the
 * target, fsync of the directory. The rename replaces a name; it never
 * writes through one. Before that it refuses, with a message that says how
 * to fix it:
 *   - a directory every user, or another group, can write, unless it has
 *     the sticky bit (as /tmp has): they could swap names in it between any
 *     check and any use; and a directory that is a link another user made;
 *   - a target that is a symbolic link, a FIFO, a device, a socket or a
 *     directory: nodegate replaces regular files only.
 * The directory is opened once and every step is relative to that handle,
 * so the directory checked is the directory written. */
#ifndef NODEGATE_CORE_ATOMIC_FILE_H
#define NODEGATE_CORE_ATOMIC_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "core/error.h"

/* The file is created mode 0644 (less the umask): reports, metrics and
 * records are read by others (a node exporter, a web server). */
int ng_write_file_atomic(const char *path, const void *data, size_t len, ng_err *err);
/* The same, with the mode given (0600 for what only its owner should read). */
int ng_write_file_atomic_mode(const char *path, const void *data, size_t len, mode_t mode,
                              ng_err *err);

/* A file being written, for content that is produced in pieces (a stream
 * too large to hold in memory). ng_atomic_begin checks and opens as
 * above; write to fd; ng_atomic_commit puts it in place (and closes it),
 * ng_atomic_abort throws it away. Exactly one of the two must follow a
 * begin that returned 0. */
typedef struct {
	int fd;
	int dir_fd;
	char *path;           /* as given, for messages */
	char *name;           /* the target's name inside the directory */
	char tmp[288];        /* the temporary's name inside the directory */
} ng_atomic_file;

int ng_atomic_begin(ng_atomic_file *f, const char *path, mode_t mode, ng_err *err);
int ng_atomic_commit(ng_atomic_file *f, ng_err *err);
void ng_atomic_abort(ng_atomic_file *f);

/* The same as a stdio stream: ng_atomic_fopen begins and returns a FILE
 * to write to (NULL with err set); ng_atomic_fclose flushes and closes it
 * and, when every write succeeded and commit is true, puts the file in
 * place; otherwise it throws it away. */
FILE *ng_atomic_fopen(ng_atomic_file *f, const char *path, mode_t mode, ng_err *err);
int ng_atomic_fclose(ng_atomic_file *f, FILE *fp, bool commit, ng_err *err);

/* The strict directory check, on an open directory (dir names it in the
 * message): 0 when only this user or root can change names in it (its
 * owner included), or it is sticky; -1 with err saying who else can and
 * what to do. For files another program opens by name in a directory
 * nodegate names (SQLite opens the store's -wal and -shm so, and truncates
 * the -shm through whatever stands there). */
int ng_atomic_check_dir(int dir_fd, const char *dir, ng_err *err);

/* A lock file at a name every nodegate on the host agrees on (so it cannot
 * be a random temporary): opened or made 0600, never through a link, a FIFO
 * never blocks the open, and only a regular file of one link that this user
 * owns is taken, so a name planted there (a link, a hard link to someone
 * else's file) is refused rather than written through. The fd, or -1 with
 * err naming the path. */
int ng_open_lock_file(const char *path, ng_err *err);

/* A random 64-bit value from the kernel, for names nobody can predict.
 * -1 when the kernel has none to give. */
int ng_random_u64(unsigned long long *out);

#endif
