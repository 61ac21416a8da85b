/* SPDX-License-Identifier: MIT */
/*
 * export.h - marks the functions the drop-in verbs libraries export.
 *
 * src/verbs/ is built with -fvisibility=hidden; a symbol leaves the library only if it is
 * defined with URNIC_EXPORT and named in the version script (libibverbs.map). The linker
 * keeps the most constraining visibility of all definitions, so a weak stub and the real
 * function that overrides it must both be URNIC_EXPORT.
 */
#ifndef URNIC_VERBS_EXPORT_H
#define URNIC_VERBS_EXPORT_H

#define URNIC_EXPORT __attribute__((visibility("default")))

#endif /* URNIC_VERBS_EXPORT_H */
