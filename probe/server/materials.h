/* The answer of GET /api/<variant>/materials: what dtbgen's STATS files (one JSON object a line,
 * a material each; docs/FORMAT.md) say of every material of a variant, for the web page's table
 * of materials (probe/web/material.html), in the manner of syzygy-tables.info. Read once when the
 * server starts; nothing here prints. */
#ifndef DTB_SERVER_MATERIALS_H
#define DTB_SERVER_MATERIALS_H

#include "answer.h" /* dtb_text */

/* Appends {"variant": name, "materials": [{"material", "pieces", "positions", "wins", "draws",
 * "losses", "captures", "longest_win", "longest_win_fen"}, ...]} for the STATS files of
 * <dir>/<variant>/ (or <dir>/ itself) of each of the ndirs directories: the first line found of
 * each material, in the order of the files. Only those fields are kept (the build's times and
 * memory are the operator's business), and only lines whose texts are plain (letters, digits,
 * ':', ',', '.', '-'). A directory without STATS adds nothing. */
void dtb_materials_json(dtb_text *t, const char *const *dirs, int ndirs, const char *variant);

#endif
