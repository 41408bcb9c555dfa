/* forward/fw_json.h: reading values out of a JSON text in place
 * (fw_json.c).  A value is a pointer into the text, which ends at `end`;
 * NULL means absent or malformed, and every function takes NULL. */
#ifndef PW_FW_JSON_H
#define PW_FW_JSON_H

#include <stdbool.h>

/* Past the value at v. */
const char *fw_json_skip(const char *v, const char *end);
/* The value of member i of the object at obj, its key in *key (not
 * terminated, *key_len bytes). */
const char *fw_json_nth_member(const char *obj, const char *end, int i, const char **key,
                               int *key_len);
/* The value of `key` in the object at obj. */
const char *fw_json_member(const char *obj, const char *end, const char *key);
/* Element i of the array at arr, and the array's length. */
const char *fw_json_index(const char *arr, const char *end, int i);
int fw_json_length(const char *arr, const char *end);
/* Whether v is the string s. */
bool fw_json_is(const char *v, const char *end, const char *s);
/* v as an integer: a number, or a string holding one. */
bool fw_json_int(const char *v, const char *end, long long *out);
/* Whether v is `true`. */
bool fw_json_true(const char *v, const char *end);

#endif
