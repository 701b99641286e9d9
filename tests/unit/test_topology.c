/* Slurm's topology.conf (parse/topology.c): leaves, parents, the lowest
 * common switch, and each kind of file Slurm would refuse. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "parse/topology.h"

static int parse(const char *text, ng_topology *t, ng_err *err)
{
	return ng_topology_parse(text, strlen(text), t, err);
}

static void test_tree(void **s)
{
	(void)s;
	ng_topology t;
	ng_err err = {0};
	const char *conf = "# a two-level tree\n"
	                   "SwitchName=leaf1 Nodes=gpu[001-004] LinkSpeed=400\n"
	                   "switchname=leaf2 nodes=gpu[005-006],spare1   # lower case, as Slurm allows\n"
	                   "SwitchName=leaf3 \\\n"
	                   "   Nodes=other[1-2]\n"
	                   "SwitchName=spine Switches=leaf[1-2]\n"
	                   "SwitchName=lonely Nodes=x9\n";
	assert_int_equal(parse(conf, &t, &err), 0);
	assert_int_equal(t.n_switches, 5);
	assert_int_equal(t.n_nodes, 10);
	assert_string_equal(ng_topology_leaf_name(&t, "gpu003"), "leaf1");
	assert_string_equal(ng_topology_leaf_name(&t, "gpu005"), "leaf2");
	assert_string_equal(ng_topology_leaf_name(&t, "spare1"), "leaf2");
	assert_string_equal(ng_topology_leaf_name(&t, "other2"), "leaf3"); /* the continued line */
	assert_null(ng_topology_leaf_name(&t, "gpu007"));
	assert_null(ng_topology_leaf_name(&t, "gpu00"));
	size_t l1 = ng_topology_leaf(&t, "gpu001"), l2 = ng_topology_leaf(&t, "gpu006");
	size_t l3 = ng_topology_leaf(&t, "other1");
	size_t top = ng_topology_common(&t, l1, l2);
	assert_int_not_equal(top, SIZE_MAX);
	assert_string_equal(t.switches[top].name, "spine");
	assert_int_equal(ng_topology_common(&t, l1, l1), l1);
	assert_int_equal(ng_topology_common(&t, l1, l3), SIZE_MAX); /* leaf3 is under no spine */
	assert_int_equal(ng_topology_common(&t, l1, SIZE_MAX), SIZE_MAX);
	ng_topology_free(&t);
}

static void test_empty_and_comments(void **s)
{
	(void)s;
	ng_topology t;
	ng_err err = {0};
	assert_int_equal(parse("", &t, &err), 0);
	assert_int_equal(t.n_switches, 0);
	assert_null(ng_topology_leaf_name(&t, "a"));
	ng_topology_free(&t);
	assert_int_equal(parse("# nothing\n\n   \t\n#SwitchName=x Nodes=y\n", &t, &err), 0);
	assert_int_equal(t.n_switches, 0);
	ng_topology_free(&t);
	/* No newline at the end, CRLF lines, a NUL inside. */
	const char crlf[] = "SwitchName=a Nodes=n1\r\nSwitchName=b Nodes=n2";
	assert_int_equal(ng_topology_parse(crlf, sizeof crlf - 1, &t, &err), 0);
	assert_string_equal(ng_topology_leaf_name(&t, "n2"), "b");
	ng_topology_free(&t);
}

static void refused(const char *conf, const char *words)
{
	ng_topology t;
	ng_err err = {0};
	assert_int_equal(parse(conf, &t, &err), -1);
	if (!strstr(err.msg, words))
		fail_msg("\"%s\" does not say \"%s\"", err.msg, words);
	assert_int_equal(err.code, NG_ERR_INPUT);
	assert_int_equal(t.n_switches, 0); /* nothing half-read is left */
	assert_null(t.switches);
}

static void test_refusals(void **s)
{
	(void)s;
	refused("Nodes=n[1-2]\n", "line 1: no SwitchName=");
	refused("SwitchName=a Nodes=n1\nSwitchName=a Nodes=n2\n", "switch a is defined twice");
	refused("SwitchName=a Nodes=n[1-3]\nSwitchName=b Nodes=n3\n", "node n3 is under two switches");
	refused("SwitchName=a Nodes=n1\nSwitchName=s Switches=a,b\n", "names b, which no line defines");
	refused("SwitchName=a Nodes=n1\nSwitchName=s1 Switches=a\nSwitchName=s2 Switches=a\n",
	        "already has a parent");
	refused("SwitchName=a Switches=b\nSwitchName=b Switches=a\n", "loop");
	refused("SwitchName=a Switches=a\n", "under itself");
	refused("SwitchName=a Nodes=n[1-\n", "cannot read the host list");
	refused("SwitchName=a Nodes=n[3-1]\n", "cannot read the host list");
	refused("\n\nSwitchName=a Nodes=n1,n1\n", "line 3: node n1 is listed twice");
	refused("Include /etc/slurm/topology-leaves.conf\n", "Include is not followed");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tree),
		cmocka_unit_test(test_empty_and_comments),
		cmocka_unit_test(test_refusals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
