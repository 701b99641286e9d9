/* Where the running nodegate binary is, and the files it ships around it:
 * the synthetic GPU library, the stand-in fleet and scontrol, the
 * scenarios. A build keeps them beside the binary, an install in the tree
 * above its bin/, so an installed tree works wherever it is copied. */
#ifndef NODEGATE_FLOW_INSTALL_TREE_H
#define NODEGATE_FLOW_INSTALL_TREE_H

#include <stddef.h>

/* The nodegate binary this process runs (/proc/self/exe) and its directory.
 * 0, or -1 when it cannot be read or does not fit. */
int ng_self_path(char *self, size_t cap, char *dir, size_t dcap);
/* A file nodegate ships, found from where the running binary is: beside it
 * (a build tree: in_build, relative to its directory), else in the install
 * tree around it (in_install, relative to the directory above bin/). out
 * gets the first that exists; 0 found, -1 neither (out: the install path,
 * for messages). */
int ng_shipped_path(const char *in_build, const char *in_install, char *out, size_t cap);

#endif
