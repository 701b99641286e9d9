/* The sections of the identity profile, one reader per part of the node.
 * Each adds what it could read under root to the profile and nothing else. */
#ifndef NODEGATE_COLLECT_IDENTITY_PARTS_H
#define NODEGATE_COLLECT_IDENTITY_PARTS_H

#include <cjson/cJSON.h>
#include <stdbool.h>

/* identity.c */
void ng_id_node(cJSON *prof, const char *root, bool in_container);
/* identity_host.c: kernel, OS release, firmware/BIOS (DMI), container */
void ng_id_kernel(cJSON *prof, const char *root);
void ng_id_os(cJSON *prof, const char *root);
void ng_id_firmware(cJSON *prof, const char *root);
/* Returns whether the node looks like a container. */
bool ng_id_container(cJSON *prof, const char *root);
/* identity_cpu.c: CPU, memory, NUMA */
void ng_id_cpu(cJSON *prof, const char *root);
void ng_id_memory(cJSON *prof, const char *root);
void ng_id_numa(cJSON *prof, const char *root);
/* identity_smbios.c: memory population from the SMBIOS memory devices */
void ng_id_dimms(cJSON *memory, const char *root);
/* identity_devices.c: drives, NICs, InfiniBand, GPUs */
void ng_id_drives(cJSON *prof, const char *root);
void ng_id_nics(cJSON *prof, const char *root);
void ng_id_infiniband(cJSON *prof, const char *root);
void ng_id_gpus(cJSON *prof, const char *root);

#endif
