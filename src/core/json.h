/* JSON helpers over cJSON that read a document the way the reference rule
 * (Python's json module and dict semantics) reads it:
 *   - a repeated key means its last value, as a Python dict keeps it;
 *   - keys are case sensitive;
 *   - truthiness is Python's: null, false, 0, "", [] and {} are false;
 *   - equality is Python's: 1 == 1.0 == true, objects compare by key set,
 *     an integer literal by its exact value (10**22 == 1e22 != 10**22 + 1).
 * Pure: text in, values out. */
#ifndef NODEGATE_CORE_JSON_H
#define NODEGATE_CORE_JSON_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "core/strbuf.h"

/* Parses exactly one JSON value from text[0..len), nothing after it but
 * white space. Accepts exactly what Python's json module accepts (RFC 8259:
 * no leading zeros, no "1." or ".5", no white space but space, tab, CR and LF,
 * no raw control characters in strings, no byte order mark), except what
 * cannot be represented faithfully: a \u0000 escape (C strings would end
 * there, so "a\u0000b" would compare equal to "a"), NaN and Infinity, and
 * lone UTF-16 surrogates. Python's own limits are not copied: it refuses
 * integers of more than 4300 digits and bytes that are not UTF-8, and gives up
 * on nesting a few levels short of cJSON's 1000. On failure returns NULL with
 * the reason and byte offset in err. */
cJSON *ng_json_parse(const char *text, size_t len, ng_err *err);

/* For a number parsed by ng_json_parse and written as an integer literal of 16
 * digits or more, the literal (sign and digits), which a double may not hold
 * exactly: Python keeps such an int exactly, so 10**400 is finite to it and
 * 2**53 + 1 is not 2**53. NULL for any other item. The text is kept as the
 * item's valuestring, which cJSON leaves unused for numbers. */
const char *ng_json_big_integer(const cJSON *item);

/* The value of key in obj, last occurrence winning; NULL if absent or if obj
 * is not an object. */
const cJSON *ng_json_get(const cJSON *obj, const char *key);

bool ng_json_truthy(const cJSON *v); /* NULL (absent) is false */
bool ng_json_equal(const cJSON *a, const cJSON *b); /* NULL (absent) equals null */
/* Whether the array a (NULL: none) holds the string s. */
bool ng_json_has_string(const cJSON *a, const char *s);

/* A canonical text for v such that two values have the same text exactly
 * when ng_json_equal says they are equal. */
void ng_json_canonical(const cJSON *v, ng_strbuf *out);

/* Whether the number item was written as an integer literal (no '.', 'e' or
 * 'E'), which Python reads as int rather than float. root is the document
 * text was parsed into. Walks the document: meant for rare questions. */
bool ng_json_is_integer_literal(const char *text, size_t len, const cJSON *root,
                                const cJSON *item);

/* Calls fn for each member of obj whose key does not occur again later in
 * obj: the members a Python dict built from this object would hold. */
void ng_json_each_member(const cJSON *obj, void (*fn)(const cJSON *member, void *ctx), void *ctx);

/* A key given twice in one object, anywhere in v: true, with its path
 * ("gate.block", "samples[2].x") in path. The reference rule's reader keeps
 * the last value; nodegate's own files (records, policies) refuse a repeat,
 * which is a mistake whichever value was meant. Large objects are sorted,
 * so a hostile object costs n log n. */
bool ng_json_find_duplicate(const cJSON *v, ng_strbuf *path);

/* A double for JSON output: null when not finite. */
void ng_json_add_number(cJSON *obj, const char *key, double v);
/* obj[key] = t as unix seconds, or null for 0 (never). */
void ng_json_add_time(cJSON *obj, const char *key, int64_t t);

#endif
