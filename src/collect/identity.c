/* The node profile and the class key every probe record carries. */
#include "collect/identity.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <strings.h>
#include <unistd.h>

#include "collect/identity_parts.h"
#include "collect/identity_read.h"

int (*ng_identity_nvml_hook)(cJSON *gpu, ng_err *err);

/* Values vendors ship in place of a real serial or UUID: identical on every
 * board of a model, so never a node identity. */
static bool placeholder(const char *s)
{
	static const char *const junk[] = {
		"03000200-0400-0500-0006-000700080009", "Not Specified", "Not Applicable",
		"To be filled by O.E.M.", "To Be Filled By O.E.M.", "Default string", "None",
		"System Serial Number", "0123456789", "Unknown", "N/A",
	};
	for (size_t i = 0; i < sizeof junk / sizeof *junk; i++)
		if (strcasecmp(s, junk[i]) == 0)
			return true;
	/* All one digit or letter apart from dashes: 00000000-0000-..., FFFF... */
	char first = 0;
	size_t n = 0;
	for (const char *p = s; *p; p++) {
		if (*p == '-' || *p == ' ')
			continue;
		if (!first)
			first = (char)tolower((unsigned char)*p);
		else if (tolower((unsigned char)*p) != first)
			return false;
		n++;
	}
	return true; /* all the same character, or nothing but dashes */
}

static bool machine_id_ok(const char *s)
{
	size_t n = strlen(s);
	if (n != 32)
		return false; /* "uninitialized" on first boot, or a truncated file */
	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	return !placeholder(s);
}

struct id_source {
	const char *path, *name;
	bool machine_id; /* a systemd/dbus machine id rather than a DMI value */
};

static bool try_source(cJSON *prof, const char *root, const struct id_source *src)
{
	char *v = ng_id_read(root, src->path);
	if (!v)
		return false;
	bool ok = src->machine_id ? machine_id_ok(v) : !placeholder(v);
	if (ok) {
		/* UUIDs are case-insensitive: one spelling per node. */
		if (!src->machine_id)
			for (char *p = v; *p; p++)
				*p = (char)tolower((unsigned char)*p);
		cJSON_AddStringToObject(prof, "node_id", v);
		cJSON_AddStringToObject(prof, "node_id_source", src->name);
	}
	free(v);
	return ok;
}

void ng_id_node(cJSON *prof, const char *root, bool in_container)
{
	static const struct id_source host[] = {
		{"/etc/machine-id", "/etc/machine-id", true},
		{"/var/lib/dbus/machine-id", "/var/lib/dbus/machine-id", true},
		{"/sys/class/dmi/id/product_uuid", "dmi:product_uuid", false},
		{"/sys/class/dmi/id/board_serial", "dmi:board_serial", false},
		{"/sys/class/dmi/id/product_serial", "dmi:product_serial", false},
	};
	/* A container image often carries one machine-id for every node it runs
	 * on (or a fresh one per start), so there the hardware's id comes first. */
	static const struct id_source container[] = {
		{"/sys/class/dmi/id/product_uuid", "dmi:product_uuid", false},
		{"/sys/class/dmi/id/board_serial", "dmi:board_serial", false},
		{"/sys/class/dmi/id/product_serial", "dmi:product_serial", false},
		{"/etc/machine-id", "/etc/machine-id", true},
		{"/var/lib/dbus/machine-id", "/var/lib/dbus/machine-id", true},
	};
	const struct id_source *list = in_container ? container : host;
	for (size_t i = 0; i < sizeof host / sizeof *host; i++) {
		if (!try_source(prof, root, &list[i]))
			continue;
		if (in_container && list[i].machine_id)
			cJSON_AddStringToObject(prof, "node_id_note",
			                        "in a container without a readable DMI id: the machine-id "
			                        "may be the image's rather than the node's");
		return;
	}
	char *h = ng_id_read(root, "/proc/sys/kernel/hostname");
	if (h) {
		cJSON_AddStringToObject(prof, "node_id", h);
		cJSON_AddStringToObject(prof, "node_id_source", "hostname");
		cJSON_AddStringToObject(prof, "node_id_note",
		                        "no machine-id or DMI id was readable; the host name is not stable "
		                        "across renames or reinstalls");
		free(h);
	}
}

cJSON *ng_identity_profile(const ng_identity_opts *o, ng_err *err)
{
	const char *root = o && o->root ? o->root : "/";
	cJSON *prof = cJSON_CreateObject();
	if (!prof) {
		ng_fail(err, "out of memory collecting the node profile");
		return NULL;
	}
	cJSON_AddStringToObject(prof, "schema", "nodegate/profile/1");
	/* The container check comes first: it decides which node id to trust. */
	cJSON *probe = cJSON_CreateObject();
	bool in_container = probe && ng_id_container(probe, root);
	ng_id_node(prof, root, in_container);
	ng_id_add_file(prof, "hostname", root, "/proc/sys/kernel/hostname");
	ng_id_kernel(prof, root);
	ng_id_os(prof, root);
	ng_id_firmware(prof, root);
	ng_id_cpu(prof, root);
	ng_id_memory(prof, root);
	ng_id_numa(prof, root);
	ng_id_gpus(prof, root);
	ng_id_infiniband(prof, root);
	ng_id_nics(prof, root);
	ng_id_drives(prof, root);
	if (probe) {
		cJSON *c = cJSON_DetachItemFromObjectCaseSensitive(probe, "container");
		if (c)
			cJSON_AddItemToObject(prof, "container", c);
		cJSON_Delete(probe);
	}
	return prof;
}

static bool lacks(const cJSON *rec, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(rec, key);
	return !v || cJSON_IsNull(v);
}

static void set_item(cJSON *rec, const char *key, cJSON *v)
{
	if (!v)
		return;
	if (cJSON_HasObjectItem(rec, key))
		cJSON_ReplaceItemInObjectCaseSensitive(rec, key, v);
	else
		cJSON_AddItemToObject(rec, key, v);
}

/* The profile's "tools" list nodegate's version; the probes know it (the
 * record's tool.version), the collect library does not. */
static void note_tool_version(cJSON *prof, const cJSON *rec)
{
	const cJSON *tool = cJSON_GetObjectItemCaseSensitive(rec, "tool");
	const cJSON *ver = cJSON_GetObjectItemCaseSensitive(tool, "version");
	cJSON *tools = cJSON_GetObjectItemCaseSensitive(prof, "tools");
	if (!cJSON_IsString(ver) || cJSON_HasObjectItem(tools, "nodegate"))
		return;
	if (!tools)
		tools = cJSON_AddObjectToObject(prof, "tools");
	cJSON_AddStringToObject(tools, "nodegate", ver->valuestring);
}

void ng_node_scheduler_name(const char *host, char *out, size_t cap)
{
	if (!cap)
		return;
	out[0] = '\0';
	const char *env = getenv("SLURMD_NODENAME");
	char buf[256];
	if (env && *env) {
		snprintf(out, cap, "%s", env);
		return;
	}
	if (!host) {
		if (gethostname(buf, sizeof buf - 1) != 0)
			return;
		buf[sizeof buf - 1] = '\0';
		host = buf;
	}
	size_t n = strcspn(host, ".\n");
	snprintf(out, cap, "%.*s", (int)n, host);
}

void ng_node_names(char *id, size_t id_cap, char *name, size_t name_cap)
{
	if (id_cap)
		id[0] = '\0';
	cJSON *prof = cJSON_CreateObject(), *probe = cJSON_CreateObject();
	if (prof && probe) {
		ng_id_node(prof, "/", ng_id_container(probe, "/"));
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(prof, "node_id");
		if (cJSON_IsString(v) && id_cap)
			snprintf(id, id_cap, "%s", v->valuestring);
	}
	cJSON_Delete(prof);
	cJSON_Delete(probe);
	ng_node_scheduler_name(NULL, name, name_cap);
	if (id_cap && !id[0])
		snprintf(id, id_cap, "%s", name[0] ? name : "localhost");
}

static void stamp_one(cJSON *rec, const cJSON *prof, const char *cls, const char *software,
                      const char *node_name)
{
	if (lacks(rec, "node_name") && lacks(rec, "node") && node_name && *node_name)
		set_item(rec, "node_name", cJSON_CreateString(node_name));
	if (lacks(rec, "software"))
		set_item(rec, "software", cJSON_CreateString(software));
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(prof, "node_id");
	if (lacks(rec, "node") && cJSON_IsString(id))
		set_item(rec, "node", cJSON_CreateString(id->valuestring));
	if (lacks(rec, "class") && cls)
		set_item(rec, "class", cJSON_CreateString(cls));
	if (lacks(rec, "profile"))
		set_item(rec, "profile", cJSON_Duplicate(prof, true));
}

int ng_identity_stamp(cJSON *records, const ng_policy *pol, const ng_identity_opts *o, ng_err *err)
{
	if (!cJSON_IsArray(records) && !cJSON_IsObject(records))
		return ng_fail(err, "identity: records must be a JSON array of records or one record");
	cJSON *prof = ng_identity_profile(o, err);
	if (!prof)
		return -1;
	bool one = cJSON_IsObject(records);
	for (cJSON *r = one ? records : records->child; r; r = one ? NULL : r->next)
		note_tool_version(prof, r);

	ng_policy def;
	if (!pol) {
		ng_policy_default(&def);
		pol = &def;
	}
	ng_strbuf cls = {0};
	ng_err cerr = {0};
	int rc = ng_identity_class(prof, pol->class_template, &cls, &cerr);
	ng_strbuf sw = {0};
	ng_identity_software(prof, &sw);
	/* The name the scheduler knows this host by, beside the stable id. */
	const cJSON *host = cJSON_GetObjectItemCaseSensitive(prof, "hostname");
	char node_name[128];
	ng_node_scheduler_name(cJSON_IsString(host) ? host->valuestring : NULL, node_name,
	                       sizeof node_name);
	/* A class the template cannot give still leaves node and profile on the
	 * records, so what was measured is kept; the caller hears why. */
	for (cJSON *r = one ? records : records->child; r; r = one ? NULL : r->next)
		if (cJSON_IsObject(r))
			stamp_one(r, prof, rc == 0 ? cls.s : NULL, sw.s, node_name);
	if (rc < 0)
		ng_fail(err, "%s", cerr.msg);
	ng_strbuf_free(&cls);
	ng_strbuf_free(&sw);
	cJSON_Delete(prof);
	return rc;
}
